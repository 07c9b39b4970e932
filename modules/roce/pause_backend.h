// Global (IEEE 802.3x) pause frames of a netdev, rx and tx: what `ethtool
// -a` shows and `ethtool -A <if> rx off tx off` sets, turned off while PFC is
// on (NVIDIA's RoCE guides, nic-configuration-operator's pauseFrames).
// Autoneg is neither read into the plan nor sent: mlx5 has no pause autoneg
// (mlx5e_ethtool_set_pauseparam answers EINVAL to autoneg on), and an
// ETHTOOL_MSG_PAUSE_SET without ETHTOOL_A_PAUSE_AUTONEG leaves it as it is.
// Two backends, one per root (NewPauseBackend):
//  - live root: ethtool netlink (generic netlink family "ethtool",
//    ETHTOOL_MSG_PAUSE_GET / ETHTOOL_MSG_PAUSE_SET; kernel
//    net/ethtool/pause.c), pause_netlink.cc;
//  - tree root: the capture file run/provisioner/pause/<ifname>, JSON
//    {"rx":true,"tx":true}, which `snapshot` writes from the live answer and
//    apply under --root rewrites.
#ifndef PROVISIONER_MODULES_ROCE_PAUSE_BACKEND_H_
#define PROVISIONER_MODULES_ROCE_PAUSE_BACKEND_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/base/status.h"
#include "engine/host/host_fs.h"

namespace provisioner {

struct PauseState {
  bool rx = false;
  bool tx = false;
};

class PauseBackend {
 public:
  virtual ~PauseBackend() = default;
  virtual std::string Name() const = 0;  // "ethtool-netlink" | "capture"
  // NOT_FOUND (ENODEV) without such a netdev; EOPNOTSUPP when its driver
  // has no pause parameters (get_pauseparam), e.g. veth.
  virtual StatusOr<PauseState> Read(const std::string& ifname) = 0;
  virtual Status Set(const std::string& ifname, const PauseState& want) = 0;
};

std::string PauseCapturePath(const std::string& ifname);
std::string RenderPauseCapture(const PauseState& s);
StatusOr<PauseState> ParsePauseCapture(const std::string& text);

std::unique_ptr<PauseBackend> NewNetlinkPauseBackend(const HostFs* notes = nullptr);
std::unique_ptr<PauseBackend> NewTreePauseBackend(HostFs& fs);
std::unique_ptr<PauseBackend> NewPauseBackend(HostFs& fs);

namespace ethnl {

// Wire bytes of the requests, for a resolved family id: the generic netlink
// header (cmd, version 1), ETHTOOL_A_PAUSE_HEADER { ETHTOOL_A_HEADER_DEV_NAME },
// and for SET the u8 ETHTOOL_A_PAUSE_RX / ETHTOOL_A_PAUSE_TX.
std::vector<uint8_t> BuildFamilyRequest(uint32_t seq);  // CTRL_CMD_GETFAMILY "ethtool"
std::vector<uint8_t> BuildPauseGet(uint16_t family, uint32_t seq, const std::string& ifname);
std::vector<uint8_t> BuildPauseSet(uint16_t family, uint32_t seq, const std::string& ifname,
                                   const PauseState& want);
// The family id of a CTRL_CMD_NEWFAMILY reply; ETHTOOL_MSG_PAUSE_GET_REPLY's
// rx/tx; an NLMSG_ERROR becomes the kernel's errno.
StatusOr<uint16_t> ParseFamilyReply(const std::vector<uint8_t>& msg);
StatusOr<PauseState> ParsePauseGetReply(const std::vector<uint8_t>& msg);

}  // namespace ethnl

}  // namespace provisioner

#endif  // PROVISIONER_MODULES_ROCE_PAUSE_BACKEND_H_
