// devlink state of a PF for the eswitch module: the E-Switch mode and, on
// mlx5, the flow steering mode a switchdev E-Switch wants. Two backends,
// chosen once per root by NewDevlinkBackend:
//  - live root: devlink over generic netlink (libnl-genl resolves the family
//    "devlink"; DEVLINK_CMD_ESWITCH_GET/SET, DEVLINK_CMD_PARAM_GET/SET with
//    bus "pci" and dev "<bdf>", what `devlink dev eswitch` and `devlink dev
//    param` send), devlink_netlink.cc; hw-tc-offload over ethtool netlink;
//  - tree root: the capture file run/provisioner/devlink/<bdf>, JSON
//    {"mode":"legacy","flowSteeringMode":"dmfs","hwTcOffload":false}, which
//    `snapshot` writes from the live answers and apply under --root rewrites
//    (eswitch_tree.cc; the kernel simulator reacts to it as mlx5/ice do).
#ifndef PROVISIONER_MODULES_ESWITCH_ESWITCH_BACKEND_H_
#define PROVISIONER_MODULES_ESWITCH_ESWITCH_BACKEND_H_

#include <memory>
#include <optional>
#include <string>

#include "engine/base/status.h"
#include "engine/host/host_fs.h"

namespace provisioner {

inline constexpr char kEswitchLegacy[] = "legacy";
inline constexpr char kEswitchSwitchdev[] = "switchdev";
// mlx5's devlink param (Documentation/networking/devlink/mlx5.rst): "dmfs"
// (device managed, the default) or "smfs" (software managed, what a
// switchdev E-Switch with many TC rules needs); runtime cmode.
inline constexpr char kFlowSteeringParam[] = "flow_steering_mode";
inline constexpr char kFlowSteeringSmfs[] = "smfs";

struct DevlinkState {
  std::string mode = kEswitchLegacy;  // legacy | switchdev
  // nullopt: the device has no such param (not mlx5), or not read.
  std::optional<std::string> flow_steering_mode = std::nullopt;
  // The PF netdev's hw-tc-offload feature; nullopt: not known (the live
  // backend does not read it; a capture may say).
  std::optional<bool> hw_tc_offload = std::nullopt;
};

class DevlinkBackend {
 public:
  virtual ~DevlinkBackend() = default;
  virtual std::string Name() const = 0;  // "devlink" | "capture"
  // NOT_FOUND (ENODEV) without such a devlink device; FAILED_PRECONDITION
  // (EOPNOTSUPP) when its driver has no E-Switch; (ENOENT) when the kernel
  // has no devlink at all.
  virtual StatusOr<DevlinkState> Read(const std::string& bdf) = 0;
  virtual Status SetMode(const std::string& bdf, const std::string& mode) = 0;
  // A string devlink param, runtime cmode.
  virtual Status SetParam(const std::string& bdf, const std::string& name,
                          const std::string& value) = 0;
  // The PF netdev's hw-tc-offload feature on (`ethtool -K <if> hw-tc-offload on`).
  virtual Status SetHwTcOffload(const std::string& bdf, const std::string& ifname) = 0;
};

// The capture file of a PF under a tree root.
std::string DevlinkCapturePath(const std::string& bdf);
// {"mode":"legacy"} plus "flowSteeringMode" / "hwTcOffload" when known, with
// a newline; Parse is its inverse and refuses anything else (an error naming
// what is wrong).
std::string RenderDevlinkCapture(const DevlinkState& s);
StatusOr<DevlinkState> ParseDevlinkCapture(const std::string& text);

// devlink in the calling process's network namespace; each read is noted to
// `notes` (when given) as its capture file, so that `snapshot` writes it.
std::unique_ptr<DevlinkBackend> NewNetlinkDevlinkBackend(const HostFs* notes = nullptr);
// The capture files through `fs`.
std::unique_ptr<DevlinkBackend> NewTreeDevlinkBackend(HostFs& fs);
// devlink for the live root (noting to `fs`), the capture files under a tree.
std::unique_ptr<DevlinkBackend> NewDevlinkBackend(HostFs& fs);

}  // namespace provisioner

#endif  // PROVISIONER_MODULES_ESWITCH_ESWITCH_BACKEND_H_
