// Where per-VF trust, spoof check and IB GUIDs are read and set, chosen once
// per root by NewVfSettingsBackend (vf_backend_factory.cc, the one place the
// module asks whether the root is the live one):
// - live root: rtnetlink on the PF's netdev (VfNetlink: IFLA_VFINFO_LIST,
//   IFLA_VF_TRUST / SPOOFCHK / IB_NODE_GUID / IB_PORT_GUID). What the dump
//   answered for trust and spoof check is handed to `snapshot` as the files
//   below, so a snapshot of the host replays it.
// - tree root: no sysfs file holds trust or spoof check in the real kernel,
//   so a tree keeps them in the capture files
//   kVfStateCapturePrefix<PF>/<vf>/{trust,spoofchk,link_state,rate,vlan,mac} ("0"/"1", link_state
//   "auto"/"enable"/"disable", rate "<min> <max>", vlan "<id> <qos> <proto>", mac
//   "aa:bb:cc:dd:ee:ff"; absent = unknown), which a set rewrites. IB GUIDs under a tree go to the
//   MLNX_OFED files (vf_host.h, OfedGuidPath) as on an OFED host.
#ifndef PROVISIONER_MODULES_VF_VF_BACKEND_H_
#define PROVISIONER_MODULES_VF_VF_BACKEND_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "engine/base/status.h"
#include "engine/host/host_fs.h"
#include "modules/vf/vf_netlink.h"

namespace provisioner {

// The capture layout of the tree backend: "<prefix><PF>/<vf>/trust".
inline constexpr char kVfStateCapturePrefix[] = "/run/provisioner/vf/";
// "/run/provisioner/vf/<pf>/<vf>/<name>" (name: trust | spoofchk).
std::string VfStateCapturePath(const std::string& pf, int vf, const std::string& name);

class VfSettingsBackend {
 public:
  virtual ~VfSettingsBackend() = default;
  // True when reading and setting go through the PF's netdev (a PF without
  // one cannot be changed).
  virtual bool NeedsPfNetdev() const = 0;
  // The state of the PF's VFs by index (`pf` its PCI address, `pf_netdev`
  // its first netdev, "" when none). Unreadable: empty, logged.
  virtual std::map<int, VfLinkState> Read(const std::string& pf, const std::string& pf_netdev) = 0;
  // `name`: "trust" | "spoofchk".
  virtual Status SetFlag(const std::string& pf, const std::string& pf_netdev, int vf,
                         const std::string& name, bool on) = 0;
  // IFLA_VF_LINK_STATE_* of VF `vf`; the tree keeps the name
  // ("auto\n" | "enable\n" | "disable\n") in the capture file `link_state`.
  virtual Status SetLinkState(const std::string& pf, const std::string& pf_netdev, int vf,
                              int state) = 0;
  // IFLA_VF_RATE of VF `vf` (Mbps); the tree keeps "<min> <max>\n" in the
  // capture file `rate`.
  virtual Status SetRate(const std::string& pf, const std::string& pf_netdev, int vf, uint32_t min,
                         uint32_t max) = 0;
  // The VF's port VLAN (IFLA_VF_VLAN / IFLA_VF_VLAN_LIST, vf_netlink.h); the
  // tree keeps "<id> <qos> <proto>\n" ("100 3 802.1Q") in the capture file `vlan`.
  virtual Status SetVlan(const std::string& pf, const std::string& pf_netdev, int vf, uint32_t id,
                         uint32_t qos, uint16_t proto) = 0;
  // The VF's MAC in the PF's table (IFLA_VF_MAC, "aa:bb:cc:dd:ee:ff"); the
  // tree keeps "<mac>\n" in the capture file `mac`, which the kernel
  // simulator gives the VF's netdev when the VF driver binds again.
  virtual Status SetMac(const std::string& pf, const std::string& pf_netdev, int vf,
                        const std::string& mac) = 0;
  // Sets both IB GUIDs of VF `vf` (node, then port: two messages). OK(false)
  // when this backend does not set GUIDs and the caller writes the MLNX_OFED
  // files instead.
  virtual StatusOr<bool> SetGuids(const std::string& pf, const std::string& pf_netdev, int vf,
                                  uint64_t guid) = 0;
};

// Live: over `nl` (not owned); `notes` hears the captures for `snapshot`.
std::unique_ptr<VfSettingsBackend> NewNetlinkVfSettings(VfNetlink* nl, const HostFs& notes);
// Tree: the capture files above, through `fs`.
std::unique_ptr<VfSettingsBackend> NewTreeVfSettings(HostFs& fs);
// The one factory: netlink (`netlink()` makes the client, called for the live
// root only) for the live root, the tree backend otherwise.
std::unique_ptr<VfSettingsBackend> NewVfSettingsBackend(HostFs& fs,
                                                        const std::function<VfNetlink*()>& netlink);

}  // namespace provisioner

#endif  // PROVISIONER_MODULES_VF_VF_BACKEND_H_
