#include "modules/firmware/firmware_reset.h"

#include <cctype>
#include <utility>

#include "engine/base/strings.h"
#include "modules/firmware/mstconfig_query.h"

namespace provisioner {

StatusOr<MstfwresetQuery> ParseMstfwresetQuery(std::string_view text) {
  MstfwresetQuery q;
  bool in_levels = false;
  bool seen_levels = false;
  size_t start = 0;
  for (size_t n = 1; start <= text.size(); ++n) {
    size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) nl = text.size();
    const std::string line = TrimRight(text.substr(start, nl - start), " \r\t");
    start = nl + 1;
    if (line.rfind("-E-", 0) == 0) return InvalidArgumentError("mstfwreset: " + Trim(line));
    if (line == "Reset-levels:") {
      in_levels = seen_levels = true;
      continue;
    }
    if (!in_levels) continue;
    if (Trim(line).empty()) {
      in_levels = false;
      continue;
    }
    // "3: Driver restart and PCI reset        -Supported     (default)"
    size_t colon = line.find(':');
    size_t dash = line.rfind('-');
    if (colon == 0 || colon == std::string::npos || dash == std::string::npos || dash < colon) {
      return InvalidArgumentError(
          "mstfwreset query output line " + std::to_string(n) +
          ": not \"<level>: <description> -Supported|Not Supported\": " + Quote(line));
    }
    int level = 0;
    for (size_t i = 0; i < colon; ++i) {
      if (!std::isdigit(static_cast<unsigned char>(line[i])) || level > 100) {
        return InvalidArgumentError("mstfwreset query output line " + std::to_string(n) +
                                    ": the level is not a number: " + Quote(line));
      }
      level = level * 10 + (line[i] - '0');
    }
    const std::string status = Trim(line.substr(dash + 1));
    q.levels[level] = status.rfind("Supported", 0) == 0;
    if (status.find("(default)") != std::string::npos) q.default_level = level;
  }
  if (!seen_levels) {
    return InvalidArgumentError("mstfwreset query output has no \"Reset-levels:\" block");
  }
  return q;
}

std::string ResetLevelRefusal(const MstfwresetQuery& q) {
  auto it = q.levels.find(kFirmwareResetLevel);
  if (it == q.levels.end()) {
    return "mstfwreset query lists no reset level " + std::to_string(kFirmwareResetLevel);
  }
  if (!it->second) {
    return "mstfwreset query says reset level " + std::to_string(kFirmwareResetLevel) +
           " (Driver restart and PCI reset) is Not Supported in the current state of the device";
  }
  return "";
}

namespace {

// The running value of a parameter (Current, else Next Boot), "" if absent.
std::string Running(const FirmwareFacts& fw, const char* name) {
  auto it = fw.params.find(name);
  if (it == fw.params.end()) return "";
  return it->second.current.value_or(it->second.next_boot);
}

}  // namespace

std::string BlueFieldDpuMode(const FirmwareFacts& fw) {
  const std::string engine = Running(fw, "INTERNAL_CPU_OFFLOAD_ENGINE");
  if (!engine.empty()) {
    if (MstconfigValueMatches(engine, "ENABLED") || MstconfigValueMatches(engine, "0")) {
      return "a BlueField in DPU mode (INTERNAL_CPU_OFFLOAD_ENGINE " + engine +
             "): its Arm cores own the firmware; reset it from the DPU (or power-cycle the host)";
    }
    return "";
  }
  const std::string model = Running(fw, "INTERNAL_CPU_MODEL");
  const std::string pages = Running(fw, "INTERNAL_CPU_PAGE_SUPPLIER");
  const std::string eswitch = Running(fw, "INTERNAL_CPU_ESWITCH_MANAGER");
  if (MstconfigValueMatches(model, "EMBEDDED_CPU") && MstconfigValueMatches(pages, "ECPF") &&
      MstconfigValueMatches(eswitch, "ECPF")) {
    return "a BlueField in DPU mode (INTERNAL_CPU_MODEL " + model +
           ", INTERNAL_CPU_PAGE_SUPPLIER " + pages +
           "): its Arm cores own the firmware; reset it from the DPU (or power-cycle the host)";
  }
  return "";
}

std::map<std::string, std::pair<std::string, std::string>> PendingParams(const FirmwareFacts& fw) {
  std::map<std::string, std::pair<std::string, std::string>> out;
  for (const auto& [name, p] : fw.params) {
    if (p.current && !SamePrintedValue(*p.current, p.next_boot)) {
      out[name] = {*p.current, p.next_boot};
    }
  }
  return out;
}

StatusOr<FlintQuery> ParseFlintQuery(std::string_view text) {
  FlintQuery q;
  size_t start = 0;
  while (start <= text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) nl = text.size();
    const std::string line = TrimRight(text.substr(start, nl - start), " \r\t");
    start = nl + 1;
    if (line.rfind("-E-", 0) == 0) return InvalidArgumentError("mstflint: " + Trim(line));
    auto value = [&line](std::string_view key) -> std::optional<std::string> {
      if (line.rfind(key, 0) != 0) return std::nullopt;
      return Trim(line.substr(key.size()));
    };
    if (auto v = value("FW Version(Running):")) {
      q.running = *v;
    } else if (auto v2 = value("FW Version:")) {
      if (q.fw_version.empty()) q.fw_version = *v2;
    } else if (auto v3 = value("PSID:")) {
      q.psid = *v3;
    }
  }
  if (q.fw_version.empty()) {
    return InvalidArgumentError("mstflint query output has no \"FW Version:\" line");
  }
  return q;
}

std::string SetFlashedVersion(std::string_view text, const std::string& flashed,
                              const std::string& running) {
  std::string out;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) nl = text.size();
    const std::string_view line = text.substr(start, nl - start);
    start = nl + 1;
    if (line.rfind("FW Version(Running):", 0) == 0) continue;
    if (line.rfind("FW Version:", 0) == 0) {
      out += "FW Version:            " + flashed + "\n";
      if (running != flashed) out += "FW Version(Running):   " + running + "\n";
      continue;
    }
    out.append(line);
    out += '\n';
  }
  return out;
}

}  // namespace provisioner
