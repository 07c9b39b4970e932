// Link and firmware facts (modules link and firmware), kept apart from
// host_model.h so that each stays small.
#ifndef PROVISIONER_ENGINE_MODEL_LINK_FACTS_H_
#define PROVISIONER_ENGINE_MODEL_LINK_FACTS_H_

#include <map>
#include <optional>
#include <string>

namespace provisioner {

// One netdev as the link module read it: rtnetlink on the live root,
// /sys/class/net/<if>/{mtu,flags,operstate} under a tree root.
struct LinkFacts {
  std::string name;
  int mtu = 0;
  std::optional<int> min_mtu;  // IFLA_MIN_MTU (netlink only)
  std::optional<int> max_mtu;  // IFLA_MAX_MTU
  bool admin_up = false;       // IFF_UP
  std::string operstate;       // "up", "down", "unknown", ...
};

// One firmware parameter of `mstconfig query`, as printed ("ETH(2)", "True(1)",
// "8"). `current`/`default_value` only when the query showed those columns.
// `read_only`: the firmware does not let it be set (mstflint >= 4.25 prints
// "RO" before the name, `-j` JSON has "read_only": true).
struct FirmwareParam {
  std::optional<std::string> default_value;
  std::optional<std::string> current;
  std::string next_boot;
  bool read_only = false;
};

// The firmware configuration of one card (queried on function .0).
struct FirmwareFacts {
  // Where it came from: "mstconfig" (live) or the captured file's host path.
  std::string source;
  // The mstconfig query output as read (a snapshot writes it to
  // kMstconfigCapturePrefix/<BDF>.query under its output tree).
  std::string raw_query;
  std::string device_type;  // "ConnectX5"
  std::map<std::string, FirmwareParam> params;
  // Non-empty when the configuration could not be read: why (tool missing,
  // query failed, unparsable output). Plan turns it into an error when a
  // change needs the firmware.
  std::string error;
  bool tool_missing = false;  // mstconfig not installed (live root)
  // True when the configuration was left unread: discover and doctor read
  // every card, plan and apply only the cards whose nics ask something of
  // the firmware (FirmwareCardsToRead): `mstconfig query` takes about a
  // second per card, on the boot path.
  bool unread = false;
  // The port types running now, from the PFs' netdev `type` (1 Ethernet ->
  // "eth", 32 InfiniBand -> "ib"), by port number: what plan trusts when the
  // firmware cannot be read and nothing needs changing.
  std::map<int, std::string> running_link_types;
  // spec.firmware.activation: reset only (read for the cards a plan changes):
  // `mstfwreset -d <BDF> query` as printed, and why the card cannot take a
  // level 3 reset ("" when it can, or when not read).
  bool reset_read = false;
  std::string reset_query;
  std::string reset_refused;
  // nics[].firmwareVersion only: `mstflint -d <BDF> query` (FW Version, FW
  // Version(Running) while a burned image waits for a reset, PSID), or why
  // it could not be read.
  bool flint_read = false;
  std::string fw_version;
  std::string fw_running;
  std::string psid;
  std::string flint_error;
  // Where the version came from: "mstflint" (live) or the capture's host
  // path, or the sysfs file it was read from; "" when not read.
  std::string flint_source;
  // The running version and PSID as the driver reports them, read for every
  // card at discovery (no tool): the card's RDMA device's `fw_ver` and
  // `board_id` (/sys/class/infiniband/<dev>/), and that fw_ver file's host
  // path; empty without an RDMA device (mlx5_ib not loaded). What discover,
  // doctor and policy validate use instead of `mstflint query`.
  std::string sysfs_fw_ver;
  std::string sysfs_board_id;
  std::string sysfs_fw_source;
  // nics[].firmwareVersion policy update: `mstflint -i <image> query` of the
  // images the card's nics name, by image path (read for a plan only).
  struct Image {
    std::string fw_version;
    std::string psid;
    std::string error;  // names the host path (and errno) when unreadable
  };
  std::map<std::string, Image> images;
};

// Under a tree root, `mstconfig -d <BDF> query` output is read from
// <root>/run/provisioner/mstconfig/<BDF>.query (BDF of function .0).
inline constexpr char kMstconfigCapturePrefix[] = "/run/provisioner/mstconfig/";

// The card's configuring function ("0000:86:00.1" -> "0000:86:00.0") and the
// port number of a PF on it (function + 1: LINK_TYPE_P<n>).
inline std::string FirmwareDevice(const std::string& bdf) {
  if (bdf.size() < 2 || bdf[bdf.size() - 2] != '.') return bdf;
  return bdf.substr(0, bdf.size() - 1) + "0";
}
inline int FirmwarePort(const std::string& bdf) {
  if (bdf.size() < 2 || bdf[bdf.size() - 2] != '.') return 1;
  const char f = bdf.back();
  return (f >= '0' && f <= '7') ? f - '0' + 1 : 1;
}

}  // namespace provisioner

#endif  // PROVISIONER_ENGINE_MODEL_LINK_FACTS_H_
