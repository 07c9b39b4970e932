// Parsing `mstconfig -d <BDF> [-e] query` (mstflint 4.x) text output. Pure: takes
// a string. The format (mlxconfig/mlxcfg_ui.cpp): a header block
// ("Device type:", "Name:", "Description:", "Device:"), then a
// "Configurations:" line naming the value columns — "Next Boot" alone, or
// "Current  Next Boot", or "Default  Current  Next Boot" (with -e) — then one
// line per parameter: a '*' marker when the next-boot value differs from
// default/current, the name, one value per column ("ETH(2)", "True(1)", "8",
// "Array[0..7]", "N/A"). Column widths changed between releases and long
// values overflow their column, so values are split on whitespace, never cut
// at fixed offsets.
#ifndef PROVISIONER_MODULES_FIRMWARE_MSTCONFIG_QUERY_H_
#define PROVISIONER_MODULES_FIRMWARE_MSTCONFIG_QUERY_H_

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "engine/base/status.h"
#include "engine/model/link_facts.h"

namespace provisioner {

struct MstconfigQuery {
  std::string device_type;  // "ConnectX5"
  std::string name;         // "MCX556A-ECA_Ax" ("" when absent)
  std::string device;       // as given with -d
  bool has_default = false;
  bool has_current = false;
  std::map<std::string, FirmwareParam> params;
};

// Errors (invalid argument) name the line number and what is wrong; a "-E-"
// line (mstconfig's error output) becomes its message.
StatusOr<MstconfigQuery> ParseMstconfigQuery(std::string_view text);

// The number in "ETH(2)" / "True(1)" / "8"; nullopt for "N/A", "Array[..]".
std::optional<long> MstconfigValueNumber(std::string_view value);

// Whether a printed value ("True(1)", "ETH(2)", "8") is `wanted` as host.yaml
// gives it ("true", "1", "ETH", "eth", "8", "0x8"), the way mstconfig itself
// reads a set (and nic-configuration-operator compares): the name before the
// parentheses, case-insensitively, or the number (true = 1, false = 0).
bool MstconfigValueMatches(std::string_view printed, std::string_view wanted);

// The number mstconfig would store for `wanted` in parameter `name`, known
// from the text alone or from the value printed now: "8" -> 8, "true" -> 1,
// "ETH" -> 2 when `printed` is "ETH(2)" or `name` is LINK_TYPE_P<n>;
// nullopt for another value's name (only the card knows it).
std::optional<long> ResolveMstconfigValue(std::string_view name, std::string_view printed,
                                          std::string_view wanted);

// Parameters mstconfig lists only once ADVANCED_PCI_SETTINGS is 1 (their
// dependency in mstflint's mlxconfig_dbs/mlxconfig_host.db names
// nv_pci_conf.advanced_pci_settings), with the value the card uses while
// they are hidden, as query prints it: MAX_ACC_OUT_READ "0" (device
// default), FORCE_ETH_PCI_SUBCLASS and IBM_CAPI_EN "False(0)". nullopt for
// any other name.
inline constexpr char kAdvancedPciSettings[] = "ADVANCED_PCI_SETTINGS";
std::optional<std::string> HiddenPciParamDefault(std::string_view name);

// Link types as host.yaml spells them and LINK_TYPE_P<n> values (ConnectX-4
// and later: 1 IB, 2 ETH; 3 VPI on older cards).
std::optional<int> LinkTypeValue(std::string_view link_type);  // "ib" -> 1, "eth" -> 2
std::string LinkTypeName(long value);                          // 1 -> "ib", 2 -> "eth", 3 -> "vpi"

// Rewrites the "Next Boot" values of `params` (name -> number) in a query
// output, keeping its layout, marking changed lines with '*', the way the
// card reports a set that is pending until reboot. For the tree-root
// stand-in of `mstconfig set`. A parameter missing from `text` is an error.
// Setting ADVANCED_PCI_SETTINGS to 1 in a text query adds the parameters it
// reveals (HiddenPciParamDefault) after its line, as the card's next query
// lists them.
StatusOr<std::string> SetNextBootValues(std::string_view text,
                                        const std::map<std::string, long>& params);

// Whether two printed values are one: "ETH(2)" and "2" by number, else as
// written ("N/A", "Array[0..7]").
bool SamePrintedValue(std::string_view a, std::string_view b);

// The card's answer after a firmware reset (mstfwreset level 3) or a boot:
// every Current value becomes the Next Boot value, and the '*' marks what
// still differs from Default. A query without a Current column (no -e) is
// returned as it is. For the tree-root stand-in of `mstfwreset reset`.
StatusOr<std::string> ActivateNextBootValues(std::string_view text);

// The card's answer after `mstconfig -d <BDF> -y reset`: every Next Boot
// value becomes the Default value (read-only ones too: they already are).
// Needs the Default column (`-e`): an error naming the first line without
// one. For the tree-root stand-in of `mstconfig reset`.
StatusOr<std::string> ResetNextBootToDefaults(std::string_view text);

}  // namespace provisioner

#endif  // PROVISIONER_MODULES_FIRMWARE_MSTCONFIG_QUERY_H_
