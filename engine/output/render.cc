#include "engine/output/render.h"

#include <algorithm>
#include <sstream>

#include "yaml-cpp/yaml.h"

namespace provisioner {
namespace {

using nlohmann::json;

bool IsOff(const json& v) {
  return v.is_null() || (v.is_number() && v.get<double>() == 0) ||
         (v.is_boolean() && !v.get<bool>()) || (v.is_string() && v.get<std::string>().empty());
}

std::string Show(const json& v) {
  if (v.is_null()) return "(none)";
  if (v.is_string()) return v.get<std::string>();
  return v.dump();
}

void EmitYaml(YAML::Emitter& e, const json& v) {
  if (v.is_object()) {
    e << YAML::BeginMap;
    for (auto it = v.begin(); it != v.end(); ++it) {
      e << YAML::Key << it.key() << YAML::Value;
      EmitYaml(e, it.value());
    }
    e << YAML::EndMap;
  } else if (v.is_array()) {
    e << YAML::BeginSeq;
    for (const auto& x : v) EmitYaml(e, x);
    e << YAML::EndSeq;
  } else if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    // Multi-line text ending in one newline (a ConfigMap's config.json) reads
    // best as a literal block; "|" keeps exactly one final newline.
    bool block = s.find('\n') != std::string::npos && s.back() == '\n' &&
                 s.find_first_of("\t\r") == std::string::npos &&
                 (s.size() < 2 || s[s.size() - 2] != '\n') && s.front() != ' ';
    if (block) {
      e << YAML::Literal << s;
    } else {
      e << YAML::DoubleQuoted << s;
    }
  } else if (v.is_null()) {
    e << YAML::Null;
  } else {
    e << v.dump();
  }
}

}  // namespace

json ChangeToJson(const Change& c) {
  // The contract's keys: the saved record's, without what only apply uses.
  json j = ChangeToRecord(c);
  for (const char* key : {"phase", "fieldPath", "detail", "resource", "dependsOn"}) j.erase(key);
  return j;
}

json PlanToJson(const Plan& plan, const std::string& root) {
  json doc;
  doc["formatVersion"] = kFormatVersion;
  doc["root"] = root;
  json changes = json::array();
  for (const auto& c : plan.changes) changes.push_back(ChangeToJson(c));
  doc["changes"] = changes;
  doc["summary"] = {{"changes", plan.changes.size()}, {"rebootRequired", plan.RebootRequired()}};
  doc["warnings"] = json(plan.warnings);
  return doc;
}

char ChangeSymbol(const Change& c) {
  if (IsOff(c.before) && !IsOff(c.after)) return '+';
  if (!IsOff(c.before) && IsOff(c.after)) return '-';
  return '~';
}

std::string RenderPlanTable(const Plan& plan, bool color) {
  std::ostringstream out;
  if (plan.changes.empty()) {
    out << "No changes. The host matches the desired state.\n";
  } else {
    out << "provisioner will make these changes, in this order:\n\n";
    int add = 0, change = 0, remove = 0, reboot = 0;
    for (const auto& c : plan.changes) {
      char sym = ChangeSymbol(c);
      add += sym == '+';
      change += sym == '~';
      remove += sym == '-';
      reboot += c.disruption != Disruption::kLive;
      const char* col = sym == '+' ? "\033[32m" : sym == '-' ? "\033[31m" : "\033[33m";
      out << "  " << (color ? col : "") << sym << (color ? "\033[0m" : "") << " " << c.module
          << " " << c.target << " " << c.attribute << ": " << Show(c.before) << " -> "
          << Show(c.after);
      if (c.disruption != Disruption::kLive) out << "  (" << DisruptionName(c.disruption) << ")";
      out << "\n";
      if (!c.reason.empty()) out << "      # " << c.reason << "\n";
    }
    out << "\nPlan: " << add << " to add, " << change << " to change, " << remove
        << " to remove";
    if (reboot) out << "; " << reboot << " take effect after a reboot";
    out << ".\n";
  }
  for (const auto& w : plan.warnings) out << "Warning: " << w << "\n";
  return out.str();
}

std::string JsonToYaml(const json& doc) {
  YAML::Emitter e;
  EmitYaml(e, doc);
  return std::string(e.c_str()) + "\n";
}

}  // namespace provisioner
