// Renderers shared by every command: JSON documents (contract keys), tables
// for people, YAML for discover.
#ifndef PROVISIONER_ENGINE_OUTPUT_RENDER_H_
#define PROVISIONER_ENGINE_OUTPUT_RENDER_H_

#include <string>

#include "engine/model/host_model.h"
#include "engine/plan/change.h"
#include "nlohmann/json.hpp"

namespace provisioner {

constexpr int kFormatVersion = 1;

nlohmann::json FactsToJson(const HostFacts& facts);
nlohmann::json ChangeToJson(const Change& c);
nlohmann::json PlanToJson(const Plan& plan, const std::string& root);

// Terraform-like: "+" create/enable, "~" update, "-" remove/disable.
char ChangeSymbol(const Change& c);
std::string RenderPlanTable(const Plan& plan, bool color);
std::string RenderFactsTable(const HostFacts& facts);
// Block-style YAML of a JSON document.
std::string JsonToYaml(const nlohmann::json& doc);

// GPUs: display/3D controllers (class 0x0300/0x0302) of GPU vendors.
bool IsGpu(const PciFunction& f);

}  // namespace provisioner

#endif  // PROVISIONER_ENGINE_OUTPUT_RENDER_H_
