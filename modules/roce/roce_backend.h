// DCB (IEEE 802.1Qaz/Qbb) state of a netdev: the trust state and the
// PFC-enabled priorities. Two backends, chosen once per root by
// NewDcbBackend (dcb_backend_factory.cc):
//  - live root: dcbnl, the kernel's DCB netlink (rtnetlink RTM_GETDCB /
//    RTM_SETDCB, what iproute2's `dcb` and `mlnx_qos` use), dcb_netlink.cc;
//  - tree root: the capture file run/provisioner/dcb/<ifname>, JSON
//    {"trust":"dscp","pfc":[3]}, which `snapshot` writes from the live
//    answer and apply under --root rewrites (dcb_tree.cc).
// ECN is not here: it is a sysfs file on both roots (roce_ecn.h).
#ifndef PROVISIONER_MODULES_ROCE_ROCE_BACKEND_H_
#define PROVISIONER_MODULES_ROCE_ROCE_BACKEND_H_

#include <memory>
#include <string>
#include <vector>

#include "engine/base/status.h"
#include "engine/host/host_fs.h"

namespace provisioner {

inline constexpr char kTrustDscp[] = "dscp";
inline constexpr char kTrustPcp[] = "pcp";

struct DcbState {
  std::string trust = kTrustPcp;  // "dscp" | "pcp"
  std::vector<int> pfc;           // PFC-enabled priorities 0..7, ascending
};

class DcbBackend {
 public:
  virtual ~DcbBackend() = default;
  virtual std::string Name() const = 0;  // "dcbnl" | "capture"
  // NOT_FOUND (ENODEV) without such a netdev; EOPNOTSUPP when its driver
  // has no DCB support.
  virtual StatusOr<DcbState> Read(const std::string& ifname) = 0;
  virtual Status SetTrust(const std::string& ifname, const std::string& trust) = 0;
  virtual Status SetPfc(const std::string& ifname, const std::vector<int>& priorities) = 0;
};

// The capture file of `ifname` under a tree root.
std::string DcbCapturePath(const std::string& ifname);
// {"trust":"dscp","pfc":[3]} with a newline; Parse is its inverse and
// refuses anything else (an error naming what is wrong).
std::string RenderDcbCapture(const DcbState& s);
StatusOr<DcbState> ParseDcbCapture(const std::string& text);

// dcbnl in the calling process's network namespace; each read is noted to
// `notes` (when given) as its capture file, so that `snapshot` writes it.
std::unique_ptr<DcbBackend> NewNetlinkDcbBackend(const HostFs* notes = nullptr);
// The capture files through `fs`.
std::unique_ptr<DcbBackend> NewTreeDcbBackend(HostFs& fs);
// The one factory: dcbnl for the live root (noting to `fs`), the capture
// files under a tree root.
std::unique_ptr<DcbBackend> NewDcbBackend(HostFs& fs);

// The priorities of a bitmap (bit p = priority p), ascending, and back.
std::vector<int> PrioritiesOfBitmap(unsigned bitmap);
unsigned BitmapOfPriorities(const std::vector<int>& priorities);

}  // namespace provisioner

#endif  // PROVISIONER_MODULES_ROCE_ROCE_BACKEND_H_
