// Activating firmware changes without a reboot: mstflint's `mstfwreset`
// (small_utils/mstfwreset.py, mlxfwresetlib/cmd_reg_mfrl.py, checked at tag
// v4.36.0-1) and the BlueField DPU-mode check. Pure: takes strings and facts.
//
// `mstfwreset -d <BDF> query` prints (CmdRegMfrl.query_text):
//   Reset-levels:
//   0: Driver, PCI link, network link will remain up ("live-Patch")      -Supported     (default)
//   3: Driver restart and PCI reset                                      -Supported
//   4: Warm Reboot                                                       -Supported
// "{level}: {description:<62}-{Supported|Not Supported:<14}{(default)}",
// then "Reset-types ..." and "Reset-sync ..." blocks in the same layout; on
// newer firmware (MROQ) a first line "The following query is relevant only
// for reset-type N:". Errors are "-E- <message>." with exit 1.
#ifndef PROVISIONER_MODULES_FIRMWARE_FIRMWARE_RESET_H_
#define PROVISIONER_MODULES_FIRMWARE_FIRMWARE_RESET_H_

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/base/status.h"
#include "engine/model/link_facts.h"

namespace provisioner {

// The level provisioner resets with: "Driver restart and PCI reset", what
// sriov-network-operator's mellanox plugin runs (`mstfwreset -d <pci>
// --skip_driver -l 3 -y reset`).
inline constexpr int kFirmwareResetLevel = 3;

// Under a tree root, `mstfwreset -d <BDF> query` output is read from
// <root>/run/provisioner/mstfwreset/<BDF>.query; a file <BDF>.refuse there
// makes the stand-in's reset fail with its text (a card that refuses).
inline constexpr char kMstfwresetCapturePrefix[] = "/run/provisioner/mstfwreset/";

// The owners of the reset synchronisation (mstfwreset.py SyncOwner):
// `--sync 0` the tool stops and starts the driver, `--sync 1` the driver
// (mlx5_core) unloads and reloads itself around the reset.
inline constexpr int kResetSyncTool = 0;
inline constexpr int kResetSyncDriver = 1;

struct MstfwresetQuery {
  // Reset level -> supported, from the "Reset-levels:" block.
  std::map<int, bool> levels;
  std::optional<int> default_level;
  // "Reset-types (relevant only for reset-levels 1,3,4):".
  std::map<int, bool> types;
  std::optional<int> default_type;
  // The reset-sync owners: "Reset-sync (relevant only for reset-level 3):"
  // (v4.16 to v4.36, 0 tool and 1 driver), or "Reset sync (...)" on
  // firmware with MROQ (v4.32 and later: 0 tool, 1 NIC driver, 2 FW).
  // Before v4.16 there is no such block (has_sync false): the tool's only.
  bool has_sync = false;
  std::map<int, bool> sync;
  std::optional<int> default_sync;
};

// Errors (invalid argument) name the line; a "-E-" line becomes the message.
// Reads the layouts of v4.14.0-1 (no sync block), v4.16.0-1 to v4.36.0-1
// (MCAM: "Reset-sync"), and v4.32.0-1 to v4.36.0-1 with MROQ (a first line
// "The following query is relevant only for reset-type N:", "Reset sync",
// "Reset request method"): testdata/mstfwreset-*.query.
StatusOr<MstfwresetQuery> ParseMstfwresetQuery(std::string_view text);

// Whether `owner` (kResetSyncTool, kResetSyncDriver) is listed as Supported.
bool ResetSyncSupported(const MstfwresetQuery& q, int owner);

// How a card's level 3 reset is run with its driver bound (issue 35.1:
// `--skip_driver` alone resets the PCIe link under a live mlx5_core):
//   kDriverSync       `--sync 1`: mlx5_core takes the reset (supported, and
//                     every bound PF on mlx5_core)
//   kToolStopsDriver  no --skip_driver: mstfwreset unbinds and binds the
//                     card's functions itself (tool-owned sync; only the
//                     drivers it knows: mlx5_core, rshim_pcie, nvme, pcieport)
//   kUnbindFirst      tool-owned sync with another driver bound: provisioner
//                     unbinds the PFs, runs `--skip_driver`, binds them again
//   kNone             no reset: `why` says why (the reboot activates)
struct FirmwareResetMethod {
  enum Kind { kNone, kDriverSync, kToolStopsDriver, kUnbindFirst };
  Kind kind = kNone;
  std::optional<int> sync;                    // --sync N, none before v4.16
  std::map<std::string, std::string> unbind;  // kUnbindFirst: PF -> its driver
  std::string why;
};

// `pf_drivers`: each PF of the card -> the driver bound to it ("" unbound).
FirmwareResetMethod ChooseFirmwareReset(const MstfwresetQuery& q,
                                        const std::map<std::string, std::string>& pf_drivers);
// {binary, "-d", device, "-y", "-l", "3", ["--sync", N], ["--skip_driver"], "reset"}
std::vector<std::string> FirmwareResetArgv(const std::string& binary, const std::string& device,
                                           const FirmwareResetMethod& m);
// The plan's words: the exact command, with the unbind and bind around it.
std::string FirmwareResetCommand(const std::string& device, const FirmwareResetMethod& m);
// "driver-sync", "tool-stops-driver", "unbind-first", "none" (change detail).
const char* FirmwareResetMethodName(FirmwareResetMethod::Kind k);

// Why the card must not be reset from the host ("" when it may): a
// BlueField in DPU mode, as mstfwreset and the operators read it:
// INTERNAL_CPU_OFFLOAD_ENGINE ENABLED(0) (nic-configuration-operator's
// BF3OperationModeParam, mstfwreset's isBluefieldNicMode), or without it
// INTERNAL_CPU_MODEL EMBEDDED_CPU with INTERNAL_CPU_PAGE_SUPPLIER and
// INTERNAL_CPU_ESWITCH_MANAGER ECPF (sriov-network-operator's
// GetMellanoxBlueFieldMode). The Current column when there is one.
std::string BlueFieldDpuMode(const FirmwareFacts& fw);

// Why a level 3 reset cannot be done on a card whose query reads `q`
// ("" when it can).
std::string ResetLevelRefusal(const MstfwresetQuery& q);

// The parameters whose running (Current) value differs from Next Boot:
// what a reset would activate. Empty without a Current column.
std::map<std::string, std::pair<std::string, std::string>> PendingParams(const FirmwareFacts& fw);

// `mstflint -d <BDF> query` (flint/subcommands.cpp QueryCommand, checked at
// tag v4.36.0-1): "FW Version:            28.39.1002", while a burned image
// waits for a reset also "FW Version(Running):   28.36.1010", and
// "PSID:                  MT_0000000838". Under a tree root the output is
// read from <root>/run/provisioner/mstflint/<BDF>.query.
inline constexpr char kMstflintCapturePrefix[] = "/run/provisioner/mstflint/";
struct FlintQuery {
  std::string fw_version;  // on the flash (the next boot's)
  std::string running;     // "" when it runs fw_version
  std::string psid;
};
// Errors name what is missing; a "-E-" line becomes the message. Reads
// `mstflint -i <image> query` too (printImageInfo: "Image type:", "FW
// Version:", ..., "PSID:", never "FW Version(Running):"), in the layouts of
// v4.14.0-1 to v4.36.0-1 (testdata/README.md).
StatusOr<FlintQuery> ParseFlintQuery(std::string_view text);

// `mstflint -d <BDF> query` text with "FW Version:" reading `flashed` and,
// when `running` differs, "FW Version(Running):" reading `running` right
// after it (none when they are equal), the other lines as they were: the
// tree's stand-in for a burn (running stays) and for a reset (running =
// flashed).
std::string SetFlashedVersion(std::string_view text, const std::string& flashed,
                              const std::string& running);

}  // namespace provisioner

#endif  // PROVISIONER_MODULES_FIRMWARE_FIRMWARE_RESET_H_
