// Renderers of plans (JSON with the contract keys, tables for people) and
// YAML of any JSON document. discover's facts are the modules' own
// (Module::RenderFactsJson/RenderFactsTable, session.h FactsToJson).
#ifndef PROVISIONER_ENGINE_OUTPUT_RENDER_H_
#define PROVISIONER_ENGINE_OUTPUT_RENDER_H_

#include <string>
#include <vector>

#include "engine/plan/change.h"
#include "nlohmann/json.hpp"

namespace provisioner {

constexpr int kFormatVersion = 1;

nlohmann::json ChangeToJson(const Change& c);
nlohmann::json PlanToJson(const Plan& plan, const std::string& root);

// What a change does to the thing it targets, as terraform says it:
//  add      something that was not there (a value from absent/0/empty);
//  remove   something goes away (to absent/0/empty);
//  change   a value changes in place (false -> true is a change);
//  replace  the thing is destroyed and made anew: numVfs between two
//           non-zero counts (apply writes 0 first: every VF and every pod
//           using one goes away), and any change whose disruption takes a
//           link down or resets a device (every kind but live and reboot).
enum class Action { kAdd, kChange, kRemove, kReplace };
Action ChangeAction(const Change& c);
const char* ActionName(Action a);  // "add" | "change" | "remove" | "replace"
// Terraform-like: "+" add, "~" change, "-" remove, "-/+" replace.
const char* ChangeSymbol(const Change& c);
// Why a replacement is one ("destroys 16 VFs, creates 4"; "firmware-reset");
// "" for other actions.
std::string ReplacementNote(const Change& c);
struct PlanCounts {
  int add = 0, change = 0, remove = 0, replace = 0;
  int reboot = 0;  // take effect after a reboot or firmware reset
};
PlanCounts CountActions(const std::vector<Change>& changes);
// The change's symbol (coloured like the plan with `color`) and ChangeText:
// "-/+ sriov 0000:af:00.0 numVfs: 4 -> 8", wherever a change is listed.
std::string RenderChangeLine(const Change& c, bool color);
// `dry_run`: "provisioner would make these changes" (apply --dry-run).
std::string RenderPlanTable(const Plan& plan, bool color, bool dry_run = false);
// Block-style YAML of a JSON document.
std::string JsonToYaml(const nlohmann::json& doc);
// The same with the document's own key order.
std::string OrderedJsonToYaml(const nlohmann::ordered_json& doc);

}  // namespace provisioner

#endif  // PROVISIONER_ENGINE_OUTPUT_RENDER_H_
