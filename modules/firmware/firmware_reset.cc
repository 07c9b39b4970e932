#include "modules/firmware/firmware_reset.h"

#include <cctype>
#include <utility>

#include "engine/base/strings.h"
#include "modules/firmware/mstconfig_query.h"

namespace provisioner {

namespace {

// The section a heading line opens ("" for none: the line is no heading).
// v4.16 to v4.36 (CmdRegMcam.reset_sync_query_text): "Reset-sync (relevant
// only for reset-level 3):"; v4.32 and later on firmware with MROQ
// (CmdRegMroq.print_query_text): "Reset sync (relevant only for
// reset-level 3):" and "Reset request method (...)".
std::string SectionOf(const std::string& line) {
  if (line == "Reset-levels:") return "levels";
  if (line.rfind("Reset-types", 0) == 0 && line.back() == ':') return "types";
  if ((line.rfind("Reset-sync", 0) == 0 || line.rfind("Reset sync", 0) == 0) &&
      line.back() == ':') {
    return "sync";
  }
  if (line.rfind("Reset request method", 0) == 0 && line.back() == ':') return "method";
  return "";
}

}  // namespace

StatusOr<MstfwresetQuery> ParseMstfwresetQuery(std::string_view text) {
  MstfwresetQuery q;
  std::string section;  // the block the lines belong to, "" outside one
  bool seen_levels = false;
  size_t start = 0;
  for (size_t n = 1; start <= text.size(); ++n) {
    size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) nl = text.size();
    const std::string line = TrimRight(text.substr(start, nl - start), " \r\t");
    start = nl + 1;
    if (line.rfind("-E-", 0) == 0) return InvalidArgumentError("mstfwreset: " + Trim(line));
    if (std::string s = SectionOf(line); !s.empty()) {
      section = s;
      seen_levels = seen_levels || s == "levels";
      if (s == "sync") q.has_sync = true;
      continue;
    }
    if (section.empty()) continue;  // "The following query is relevant only for reset-type 0:"
    if (Trim(line).empty()) {
      section.clear();
      continue;
    }
    // "3: Driver restart and PCI reset        -Supported     (default)"
    size_t colon = line.find(':');
    size_t dash = line.rfind('-');
    if (colon == 0 || colon == std::string::npos || dash == std::string::npos || dash < colon) {
      return InvalidArgumentError(
          "mstfwreset query output line " + std::to_string(n) +
          ": not \"<number>: <description> -Supported|Not Supported\": " + Quote(line));
    }
    int number = 0;
    for (size_t i = 0; i < colon; ++i) {
      if (!std::isdigit(static_cast<unsigned char>(line[i])) || number > 100) {
        return InvalidArgumentError("mstfwreset query output line " + std::to_string(n) +
                                    ": not a number before the colon: " + Quote(line));
      }
      number = number * 10 + (line[i] - '0');
    }
    const std::string status = Trim(line.substr(dash + 1));
    // "Supported", "Not Supported" (levels, types, MROQ sync), "Not supported" (MCAM sync).
    const bool supported = status.rfind("Supported", 0) == 0;
    const bool is_default = status.find("(default)") != std::string::npos;
    if (section == "levels") {
      q.levels[number] = supported;
      if (is_default) q.default_level = number;
    } else if (section == "types") {
      q.types[number] = supported;
      if (is_default) q.default_type = number;
    } else if (section == "sync") {
      q.sync[number] = supported;
      if (is_default) q.default_sync = number;
    }
  }
  if (!seen_levels) {
    return InvalidArgumentError("mstfwreset query output has no \"Reset-levels:\" block");
  }
  return q;
}

bool ResetSyncSupported(const MstfwresetQuery& q, int owner) {
  if (!q.has_sync) return owner == kResetSyncTool;  // before v4.16: the tool's sync only
  auto it = q.sync.find(owner);
  return it != q.sync.end() && it->second;
}

namespace {

// The drivers mstfwreset stops and starts itself (mlxfwreset_mlnxdriver.py
// MlnxDriverLinux: mlx5_drivers and white_list_drivers, v4.36.0-1); another
// driver bound to a function of the card makes it refuse ("mlxfwreset
// doesn't support 3rd party driver ... resume operation with --skip_driver").
bool ToolStopsDriver(const std::string& driver) {
  return driver == "mlx5_core" || driver == "rshim_pcie" || driver == "nvme" ||
         driver == "pcieport";
}

std::string Join(const std::vector<std::string>& v, const char* sep) {
  std::string s;
  for (const auto& e : v) s += (s.empty() ? "" : sep) + e;
  return s;
}

}  // namespace

std::vector<std::string> FirmwareResetArgv(const std::string& binary, const std::string& device,
                                           const FirmwareResetMethod& m) {
  std::vector<std::string> argv = {binary, "-d", device, "-y", "-l",
                                   std::to_string(kFirmwareResetLevel)};
  if (m.sync) {
    argv.push_back("--sync");
    argv.push_back(std::to_string(*m.sync));
  }
  if (m.kind == FirmwareResetMethod::kUnbindFirst) argv.push_back("--skip_driver");
  argv.push_back("reset");
  return argv;
}

std::string FirmwareResetCommand(const std::string& device, const FirmwareResetMethod& m) {
  std::string cmd = Join(FirmwareResetArgv("mstfwreset", device, m), " ");
  if (m.kind != FirmwareResetMethod::kUnbindFirst) return cmd;
  std::vector<std::string> pfs;
  for (const auto& [pf, driver] : m.unbind) pfs.push_back(pf + " (" + driver + ")");
  return "unbind " + Join(pfs, ", ") + "; " + cmd + "; bind them again";
}

const char* FirmwareResetMethodName(FirmwareResetMethod::Kind k) {
  switch (k) {
    case FirmwareResetMethod::kDriverSync:
      return "driver-sync";
    case FirmwareResetMethod::kToolStopsDriver:
      return "tool-stops-driver";
    case FirmwareResetMethod::kUnbindFirst:
      return "unbind-first";
    case FirmwareResetMethod::kNone:
      break;
  }
  return "none";
}

FirmwareResetMethod ChooseFirmwareReset(const MstfwresetQuery& q,
                                        const std::map<std::string, std::string>& pf_drivers) {
  FirmwareResetMethod m;
  if (std::string why = ResetLevelRefusal(q); !why.empty()) {
    m.why = why;
    return m;
  }
  bool bound = false, all_mlx5 = true, tool_stops = true;
  for (const auto& [pf, driver] : pf_drivers) {
    if (driver.empty()) continue;
    bound = true;
    all_mlx5 = all_mlx5 && driver == "mlx5_core";
    tool_stops = tool_stops && ToolStopsDriver(driver);
  }
  const bool sync_driver = ResetSyncSupported(q, kResetSyncDriver);
  const bool sync_tool = ResetSyncSupported(q, kResetSyncTool);
  // Driver-owned sync: mlx5_core unloads and reloads itself around the
  // reset (mlx5 fw_reset.c); it needs mlx5_core bound to answer.
  if (sync_driver && bound && all_mlx5) {
    m.kind = FirmwareResetMethod::kDriverSync;
    m.sync = kResetSyncDriver;
    return m;
  }
  if (sync_tool) {
    // A query without a Reset-sync block (before v4.16) has no --sync.
    if (q.has_sync) m.sync = kResetSyncTool;
    if (tool_stops) {
      m.kind = FirmwareResetMethod::kToolStopsDriver;
    } else {
      m.kind = FirmwareResetMethod::kUnbindFirst;
      for (const auto& [pf, driver] : pf_drivers) {
        if (!driver.empty()) m.unbind[pf] = driver;
      }
    }
    return m;
  }
  if (sync_driver) {
    m.why = "mstfwreset query lists only the driver as the reset-sync owner (sync 1), and no PF "
            "of the card is bound to mlx5_core to take it";
    if (bound) {
      std::vector<std::string> other;
      for (const auto& [pf, driver] : pf_drivers) {
        if (!driver.empty() && driver != "mlx5_core") other.push_back(pf + " to " + driver);
      }
      m.why = "mstfwreset query lists only the driver as the reset-sync owner (sync 1), which "
              "needs mlx5_core, but " + Join(other, ", ") + " is bound";
    }
    return m;
  }
  m.why = "mstfwreset query supports neither the tool (sync 0) nor the driver (sync 1) as the "
          "reset-sync owner";
  return m;
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
