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

struct MstfwresetQuery {
  // Reset level -> supported, from the "Reset-levels:" block.
  std::map<int, bool> levels;
  std::optional<int> default_level;
};

// Errors (invalid argument) name the line; a "-E-" line becomes the message.
StatusOr<MstfwresetQuery> ParseMstfwresetQuery(std::string_view text);

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
