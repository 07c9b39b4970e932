#include "engine/model/iommu_mode.h"

#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "engine/base/enum_names.h"

namespace provisioner {
namespace {

// What the kernel command line says about the IOMMU, each word parsed as
// the kernel does (a later word overrides an earlier one).
struct CmdlineIommu {
  std::optional<bool> passthrough;  // iommu=pt / iommu=nopt / iommu.passthrough=
  std::string passthrough_word;
  bool off = false;  // iommu=off, intel_iommu=off, amd_iommu=off
  std::string off_word;
  bool on = false;  // intel_iommu=on, amd_iommu=on
  std::string on_word;
};

std::vector<std::string> SplitComma(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string part;
  while (std::getline(in, part, ',')) out.push_back(part);
  return out;
}

// kstrtobool's spellings.
std::optional<bool> ParseKernelBool(const std::string& v) {
  if (v == "1" || v == "y" || v == "Y" || v == "on") return true;
  if (v == "0" || v == "n" || v == "N" || v == "off") return false;
  return std::nullopt;
}

CmdlineIommu ParseCmdline(const std::string& cmdline) {
  CmdlineIommu c;
  std::stringstream in(cmdline);
  std::string word;
  while (in >> word) {
    const size_t eq = word.find('=');
    if (eq == std::string::npos) continue;
    const std::string key = word.substr(0, eq);
    const std::string value = word.substr(eq + 1);
    if (key == "iommu") {
      // arch/x86/kernel/pci-dma.c iommu_setup: a comma-separated list.
      for (const std::string& v : SplitComma(value)) {
        if (v == "pt" || v == "nopt") {
          c.passthrough = v == "pt";
          c.passthrough_word = word;
        } else if (v == "off") {
          c.off = true;
          c.off_word = word;
        }
      }
    } else if (key == "iommu.passthrough") {
      if (auto b = ParseKernelBool(value)) {
        c.passthrough = *b;
        c.passthrough_word = word;
      }
    } else if (key == "intel_iommu" || key == "amd_iommu") {
      for (const std::string& v : SplitComma(value)) {
        if (v == "off") {
          c.off = true;
          c.on = false;
          c.off_word = word;
        } else if (v == "on") {
          c.on = true;
          c.off = false;
          c.on_word = word;
        }
      }
    }
  }
  return c;
}

std::string Join(const std::vector<std::string>& v) {
  std::string out;
  for (const std::string& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

}  // namespace

const char* IommuModeName(IommuMode mode) {
  static constexpr EnumName<IommuMode> kNames[] = {
      {IommuMode::kOff, "off"},
      {IommuMode::kPassthrough, "passthrough"},
      {IommuMode::kTranslating, "translating"},
  };
  return NameOf(kNames, mode, "unknown");
}

IommuDecision DecideIommuMode(const PcieFacts& facts, const std::vector<std::string>& groups) {
  IommuDecision d;
  const CmdlineIommu cmd = facts.cmdline ? ParseCmdline(*facts.cmdline) : CmdlineIommu();
  // The types that count, by type: "DMA" -> {"4", "6"}.
  std::map<std::string, std::vector<std::string>> by_type;
  const std::set<std::string> wanted(groups.begin(), groups.end());
  for (const auto& [group, type] : facts.iommu_group_types) {
    if (wanted.empty() || wanted.count(group)) by_type[type].push_back(group);
  }
  std::vector<std::string> translating;  // "iommu_groups 4, 6 of type DMA"
  for (const auto& [type, gs] : by_type) {
    if (type == "identity") continue;
    if (gs.size() == 1) {
      translating.push_back("iommu_group " + gs[0] + " of type " + type);
    } else if (gs.size() <= 3) {
      translating.push_back("iommu_groups " + Join(gs) + " of type " + type);
    } else {
      translating.push_back(std::to_string(gs.size()) + " iommu_groups of type " + type);
    }
  }
  auto cmdline_says = [&](const std::string& w) { return w + " on /proc/cmdline"; };

  if (cmd.passthrough.value_or(false)) {
    d.mode = IommuMode::kPassthrough;
    d.why = cmdline_says(cmd.passthrough_word);
    for (const std::string& t : translating) {
      d.conflicts.push_back(t + " although /proc/cmdline has " + cmd.passthrough_word +
                            " (switched at runtime, or an inconsistent capture): planned for " +
                            cmd.passthrough_word);
    }
    return d;
  }
  if (!by_type.empty()) {
    if (!translating.empty()) {
      d.mode = IommuMode::kTranslating;
      d.why = Join(translating);
      if (!cmd.on_word.empty()) d.why = cmd.on_word + " without iommu=pt; " + d.why;
    } else {
      d.mode = IommuMode::kPassthrough;
      d.why = "the IOMMU groups are of type identity";
    }
    return d;
  }
  if (facts.iommu_groups_absent || (facts.iommu_groups && *facts.iommu_groups == 0)) {
    d.mode = IommuMode::kOff;
    d.why = "no IOMMU groups";
    if (cmd.off) d.why += " (" + cmdline_says(cmd.off_word) + ")";
    return d;
  }
  if (facts.iommu_groups && facts.cmdline) {
    d.mode = IommuMode::kTranslating;
    d.why = std::to_string(*facts.iommu_groups) + " IOMMU groups and no iommu=pt on /proc/cmdline" +
            (cmd.on ? " (" + cmd.on_word + ")" : "") + ": the kernel's default DMA domain";
    return d;
  }
  if (facts.cmdline && cmd.off) {
    d.mode = IommuMode::kOff;
    d.why = cmdline_says(cmd.off_word);
    return d;
  }
  if (facts.cmdline && cmd.on) {
    d.mode = IommuMode::kTranslating;
    d.why = cmd.on_word + " without iommu=pt on /proc/cmdline";
    return d;
  }
  // Say which of the two is missing: the groups without their types, the
  // command line, or both.
  if (facts.cmdline) {
    d.why = "IOMMU groups not captured and /proc/cmdline names no IOMMU mode";
  } else if (facts.iommu_groups) {
    d.why = "/sys/kernel/iommu_groups captured (" + std::to_string(*facts.iommu_groups) +
            " groups, their type files not) but /proc/cmdline not captured";
  } else {
    d.why = "neither /sys/kernel/iommu_groups nor /proc/cmdline captured";
  }
  return d;
}

}  // namespace provisioner
