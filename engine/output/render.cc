#include "engine/output/render.h"

#include <algorithm>
#include <cctype>
#include <sstream>
#include <utility>

#include "engine/base/enum_names.h"
#include "engine/plan/change_text.h"
#include "yaml-cpp/yaml.h"

namespace provisioner {
namespace {

using nlohmann::json;

bool IsOff(const json& v) {
  return v.is_null() || (v.is_number() && v.get<double>() == 0) ||
         (v.is_boolean() && !v.get<bool>()) || (v.is_string() && v.get<std::string>().empty());
}

// True when `s` reads back as this same string in plain style under both
// YAML 1.1 (PyYAML, Ansible: 0000:17:01.0 is the base-60 float 1021.0, `on`
// and `y` are booleans, `<<` merges, `=` is a value) and YAML 1.2 core
// resolvers. Deliberately narrow: a letter or `_` first, then letters,
// digits and `_-./`, and not a boolean or null word.
bool PlainIsSafe(const std::string& s) {
  if (s.empty()) return false;
  const unsigned char first = static_cast<unsigned char>(s[0]);
  if (!std::isalpha(first) && first != '_') return false;
  for (char ch : s) {
    const unsigned char u = static_cast<unsigned char>(ch);
    if (!std::isalnum(u) && ch != '_' && ch != '-' && ch != '.' && ch != '/') return false;
  }
  std::string lower = s;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  for (const char* word : {"y", "n", "yes", "no", "on", "off", "true", "false", "null"}) {
    if (lower == word) return false;
  }
  return true;
}

// A JSON number as a YAML scalar of the same type: YAML 1.1 floats need a
// dot ("1e+20" would read back as a string), so one is added.
std::string NumberText(const json& v) {
  std::string text = v.dump();
  if (v.is_number_float() && text.find('.') == std::string::npos) {
    size_t exp = text.find_first_of("eE");
    if (exp == std::string::npos) {
      text += ".0";
    } else {
      text.insert(exp, ".0");
    }
  }
  return text;
}

// Text that a literal block ("|") keeps byte for byte: printable, one final
// newline, no leading space or tab, no trailing blank line.
bool FitsLiteralBlock(const std::string& s) {
  if (s.find('\n') == std::string::npos || s.back() != '\n') return false;
  if (s.front() == ' ' || (s.size() >= 2 && s[s.size() - 2] == '\n')) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char u = static_cast<unsigned char>(s[i]);
    if (u == '\n') {
      // A line of only spaces would read back as an empty line: keep any
      // space before a newline out of the block.
      if (i > 0 && s[i - 1] == ' ') return false;
      continue;
    }
    if (u < 0x20 || u == 0x7f) return false;
    // U+0085, U+2028, U+2029 are line breaks to a YAML reader.
    if (u == 0xc2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) == 0x85) return false;
    if (u == 0xe2 && i + 2 < s.size() && static_cast<unsigned char>(s[i + 1]) == 0x80 &&
        (static_cast<unsigned char>(s[i + 2]) == 0xa8 ||
         static_cast<unsigned char>(s[i + 2]) == 0xa9)) {
      return false;
    }
  }
  return true;
}

// json, or ordered_json (validate --show-expanded: host.yaml's key order).
template <typename Json>
void EmitYaml(YAML::Emitter& e, const Json& v) {
  if (v.is_object()) {
    e << YAML::BeginMap;
    for (auto it = v.begin(); it != v.end(); ++it) {
      e << YAML::Key;
      if (PlainIsSafe(it.key())) {
        e << it.key();
      } else {
        e << YAML::DoubleQuoted << it.key();
      }
      e << YAML::Value;
      EmitYaml(e, it.value());
    }
    e << YAML::EndMap;
  } else if (v.is_array()) {
    e << YAML::BeginSeq;
    for (const auto& x : v) EmitYaml(e, x);
    e << YAML::EndSeq;
  } else if (v.is_string()) {
    const std::string& s = v.template get_ref<const std::string&>();
    // Multi-line text ending in one newline (a ConfigMap's config.json) reads
    // best as a literal block; "|" keeps exactly one final newline.
    if (FitsLiteralBlock(s)) {
      e << YAML::Literal << s;
    } else {
      e << YAML::DoubleQuoted << s;
    }
  } else if (v.is_null()) {
    e << YAML::Null;
  } else {
    e << NumberText(json(v));
  }
}

}  // namespace

json ChangeToJson(const Change& c) {
  // The contract's keys: the saved record's, without what only apply uses.
  json j = ChangeToRecord(c);
  for (const char* key : {"phase", "fieldPath", "detail", "resource", "dependsOn"}) j.erase(key);
  j["action"] = ActionName(ChangeAction(c));
  return j;
}

Action ChangeAction(const Change& c) {
  // A device reset. A live change that takes the port's link down and up
  // (a rename, PFC) changes the thing in place: "~ ... (link flap)".
  if (c.disruption != Disruption::kLive && c.disruption != Disruption::kReboot) {
    return Action::kReplace;
  }
  if (c.attribute == "numVfs" && c.before.is_number() && c.after.is_number() &&
      c.before.get<double>() != 0 && c.after.get<double>() != 0 && c.before != c.after) {
    return Action::kReplace;
  }
  if (c.link_flap) return Action::kChange;
  // A boolean that flips is a value that changes, not a thing created.
  if (c.before.is_boolean() && c.after.is_boolean()) return Action::kChange;
  if (IsOff(c.before) && !IsOff(c.after)) return Action::kAdd;
  if (!IsOff(c.before) && IsOff(c.after)) return Action::kRemove;
  return Action::kChange;
}

const char* ActionName(Action a) {
  static constexpr EnumName<Action> kNames[] = {
      {Action::kAdd, "add"},
      {Action::kChange, "change"},
      {Action::kRemove, "remove"},
      {Action::kReplace, "replace"},
  };
  return NameOf(kNames, a, "change");
}

const char* ChangeSymbol(const Change& c) {
  static constexpr EnumName<Action> kSymbols[] = {
      {Action::kAdd, "+"}, {Action::kRemove, "-"}, {Action::kReplace, "-/+"}};
  return NameOf(kSymbols, ChangeAction(c), "~");
}

std::string ReplacementNote(const Change& c) {
  if (ChangeAction(c) != Action::kReplace) return "";
  std::string note;
  if (c.attribute == "numVfs" && c.before.is_number() && c.after.is_number()) {
    note = "destroys " + ShowValue(c.before) + " VFs, creates " + ShowValue(c.after);
  }
  if (c.disruption != Disruption::kLive) {
    note += std::string(note.empty() ? "" : "; ") + DisruptionName(c.disruption);
  }
  return note;
}

PlanCounts CountActions(const std::vector<Change>& changes) {
  // The count each action adds to.
  static constexpr std::pair<Action, int PlanCounts::*> kCounts[] = {
      {Action::kAdd, &PlanCounts::add},
      {Action::kChange, &PlanCounts::change},
      {Action::kRemove, &PlanCounts::remove},
      {Action::kReplace, &PlanCounts::replace},
  };
  PlanCounts n;
  for (const auto& c : changes) {
    const Action action = ChangeAction(c);
    for (const auto& [a, count] : kCounts) n.*count += a == action;
    n.reboot += c.disruption == Disruption::kReboot;
  }
  return n;
}

json PlanToJson(const Plan& plan, const std::string& root) {
  json doc;
  doc["formatVersion"] = kFormatVersion;
  doc["root"] = root;
  json changes = json::array();
  for (const auto& c : plan.changes) changes.push_back(ChangeToJson(c));
  doc["changes"] = changes;
  const PlanCounts n = CountActions(plan.changes);
  doc["summary"] = {{"changes", plan.changes.size()},
                    {"rebootRequired", plan.RebootRequired()},
                    {"add", n.add},
                    {"change", n.change},
                    {"remove", n.remove},
                    {"replace", n.replace}};
  if (int flaps = plan.LinkFlaps()) doc["summary"]["linkFlaps"] = flaps;
  if (plan.unmanaged_pfs_with_vfs > 0)
    doc["summary"]["unmanagedPfsWithVfs"] = plan.unmanaged_pfs_with_vfs;
  if (!plan.pending_reboot.empty() || !plan.set_for_next_boot.empty()) {
    json ids = plan.pending_reboot;
    for (const auto& c : plan.set_for_next_boot) ids.push_back(c.id);
    doc["summary"]["pendingReboot"] = ids.size();
    doc["pendingReboot"] = ids;
  }
  doc["warnings"] = json(plan.warnings);
  return doc;
}

std::string RenderChangeLine(const Change& c, bool color) {
  const Action a = ChangeAction(c);
  const char* col = a == Action::kAdd       ? "\033[32m"
                    : a == Action::kRemove  ? "\033[31m"
                    : a == Action::kReplace ? "\033[1;31m"
                                            : "\033[33m";
  return std::string(color ? col : "") + ChangeSymbol(c) + (color ? "\033[0m" : "") + " " +
         ChangeText(c);
}

std::string RenderPlanTable(const Plan& plan, bool color, bool dry_run) {
  std::ostringstream out;
  // Set for the next boot already (firmware): listed, nothing to do.
  auto next_boot = [&] {
    for (const auto& c : plan.set_for_next_boot) {
      out << "  " << RenderChangeLine(c, color)
          << "  (pending reboot: set for the next boot, not running yet)\n";
      if (!c.reason.empty()) out << "      # " << c.reason << "\n";
    }
  };
  const size_t set = plan.set_for_next_boot.size();
  if (plan.changes.empty() && set > 0) {
    // Not "No changes": the host differs until it reboots.
    out << "Nothing to apply; " << set << (set == 1 ? " change" : " changes")
        << " pending reboot (reboot, or mstfwreset for firmware, to make "
        << (set == 1 ? "it" : "them") << " take effect):\n\n";
    next_boot();
  } else if (plan.changes.empty()) {
    out << "No changes. The host matches the desired state";
    if (const int n = plan.unmanaged_pfs_with_vfs; n == 1) {
      out << " (1 PF with VFs is not in host.yaml)";
    } else if (n > 1) {
      out << " (" << n << " PFs with VFs are not in host.yaml)";
    }
    out << ".\n";
  } else {
    out << "provisioner " << (dry_run ? "would" : "will")
        << " make these changes, in this order:\n\n";
    for (const auto& c : plan.changes) {
      const Action a = ChangeAction(c);
      out << "  " << RenderChangeLine(c, color);
      if (a == Action::kReplace) {
        out << "  (forces replacement: " << ReplacementNote(c) << ")";
      } else if (c.link_flap) {
        out << "  (link flap)";
      } else if (c.disruption != Disruption::kLive) {
        out << "  (" << DisruptionLabel(c) << ")";
      }
      if (std::find(plan.pending_reboot.begin(), plan.pending_reboot.end(), c.id) !=
          plan.pending_reboot.end()) {
        out << "  (pending reboot: applied, takes effect at the next boot)";
      }
      out << "\n";
      if (!c.reason.empty()) out << "      # " << c.reason << "\n";
    }
    next_boot();
    const PlanCounts n = CountActions(plan.changes);
    out << "\nPlan: " << n.add << " to add, " << n.change << " to change, ";
    if (n.replace) out << n.replace << " to replace, ";
    out << n.remove << " to remove";
    if (n.reboot)
      out << "; " << n.reboot << (n.reboot == 1 ? " takes" : " take") << " effect after a reboot";
    if (int flaps = plan.LinkFlaps()) out << "; " << flaps << " flap a link (down and up) now";
    if (const size_t p = plan.pending_reboot.size() + set) {
      out << "; " << p << (p == 1 ? " change" : " changes") << " pending reboot";
    }
    out << ".\n";
  }
  for (const auto& w : plan.warnings) out << "warning: " << w << "\n";
  return out.str();
}

std::string JsonToYaml(const json& doc) {
  YAML::Emitter e;
  EmitYaml(e, doc);
  return std::string(e.c_str()) + "\n";
}

std::string OrderedJsonToYaml(const nlohmann::ordered_json& doc) {
  YAML::Emitter e;
  EmitYaml(e, doc);
  return std::string(e.c_str()) + "\n";
}

}  // namespace provisioner
