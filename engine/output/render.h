// Renderers of plans (JSON with the contract keys, tables for people) and
// YAML of any JSON document. discover's facts are the modules' own
// (Module::RenderFactsJson/RenderFactsTable, session.h FactsToJson).
#ifndef PROVISIONER_ENGINE_OUTPUT_RENDER_H_
#define PROVISIONER_ENGINE_OUTPUT_RENDER_H_

#include <string>

#include "engine/plan/change.h"
#include "nlohmann/json.hpp"

namespace provisioner {

constexpr int kFormatVersion = 1;

nlohmann::json ChangeToJson(const Change& c);
nlohmann::json PlanToJson(const Plan& plan, const std::string& root);

// Terraform-like: "+" create/enable, "~" update, "-" remove/disable.
char ChangeSymbol(const Change& c);
std::string RenderPlanTable(const Plan& plan, bool color);
// Block-style YAML of a JSON document.
std::string JsonToYaml(const nlohmann::json& doc);

}  // namespace provisioner

#endif  // PROVISIONER_ENGINE_OUTPUT_RENDER_H_
