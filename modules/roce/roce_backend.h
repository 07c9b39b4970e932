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

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/base/status.h"
#include "engine/host/host_fs.h"

namespace provisioner {

inline constexpr char kTrustDscp[] = "dscp";
inline constexpr char kTrustPcp[] = "pcp";
// DCBX modes: the host runs it (DCB_CAP_DCBX_HOST, IEEE, not willing), the
// NIC's firmware does (no DCB_CAP_DCBX_HOST: it may take the switch's
// settings), or an LLDP agent such as lldpad (DCB_CAP_DCBX_LLD_MANAGED).
inline constexpr char kDcbxHost[] = "host";
inline constexpr char kDcbxFirmware[] = "firmware";
inline constexpr char kDcbxLld[] = "lld";

// The port receive buffers (struct dcbnl_buffer): the buffer of each
// priority, each buffer's size in bytes and the port's total (read-only).
struct DcbBuffer {
  std::vector<int> prio2buffer = std::vector<int>(8, 0);
  std::vector<long long> sizes = std::vector<long long>(8, 0);
  long long total = 0;
  // mlx5's internal buffers (PBMC buffers 8, 9): part of `total`, not in
  // dcbnl (0 live); a tree capture may hold it ("internal").
  long long internal = 0;
  bool operator==(const DcbBuffer& o) const {
    return prio2buffer == o.prio2buffer && sizes == o.sizes && total == o.total &&
           internal == o.internal;
  }
};

struct DcbState {
  std::string trust = kTrustPcp;  // "dscp" | "pcp"
  std::vector<int> pfc;           // PFC-enabled priorities 0..7, ascending
  // DSCP -> priority of the APP table's DSCP entries (empty with trust pcp).
  std::map<int, int> dscp_map = {};
  // nullopt: the driver has no getdcbx (or the capture does not say).
  std::optional<std::string> dcbx = std::nullopt;
  // ieee_pfc.delay, the cable length in meters mlx5 sizes xoff with;
  // nullopt when the driver reports none (0: mlx5 without port buffer
  // support, other drivers).
  std::optional<int> cable_length = std::nullopt;
  // nullopt: the driver has no dcbnl_getbuffer (or the capture does not say).
  std::optional<DcbBuffer> buffer = std::nullopt;
  // What dcbnl cannot show, kept by a tree capture to model mlx5: whether
  // the driver is in manual buffer mode (priv->dcbx.manual_buffer: set by a
  // buffer write that changes something, cleared at every driver load; only
  // then does a cable length reach the buffers), and the cable length the
  // lossless buffers' xoff thresholds are sized for (nullopt: unknown, as
  // on the live root).
  bool manual_buffer = false;
  std::optional<int> xoff_cable_length = std::nullopt;
};

// mlx5's port_buff_cell_sz: buffer sizes are kept in cells of 128 bytes.
inline constexpr long long kBufferCellBytes = 128;

// priority = DSCP >> 3: the map trust dscp installs, which dscpMap overrides.
inline int DefaultDscpPriority(int dscp) { return (dscp >> 3) & 7; }

class DcbBackend {
 public:
  virtual ~DcbBackend() = default;
  virtual std::string Name() const = 0;  // "dcbnl" | "capture"
  // NOT_FOUND (ENODEV) without such a netdev; EOPNOTSUPP when its driver
  // has no DCB support.
  virtual StatusOr<DcbState> Read(const std::string& ifname) = 0;
  virtual Status SetTrust(const std::string& ifname, const std::string& trust) = 0;
  virtual Status SetPfc(const std::string& ifname, const std::vector<int>& priorities) = 0;
  // DSCP -> priority APP entries to install (nullopt: delete that DSCP's
  // entry); entries not named are left as they are.
  virtual Status SetDscpMap(const std::string& ifname,
                            const std::map<int, std::optional<int>>& entries) = 0;
  // kDcbxHost or kDcbxFirmware.
  virtual Status SetDcbx(const std::string& ifname, const std::string& mode) = 0;
  // ieee_pfc.delay (DCB_CMD_IEEE_SET PFC with pfc_en as it is).
  virtual Status SetCableLength(const std::string& ifname, int meters) = 0;
  // DCB_ATTR_DCB_BUFFER: prio2buffer and sizes (8 each; total is ignored).
  virtual Status SetBuffer(const std::string& ifname, const DcbBuffer& buffer) = 0;
};

// The capture file of `ifname` under a tree root.
std::string DcbCapturePath(const std::string& ifname);
// {"trust":"dscp","pfc":[3]} with a newline, plus "dcbx" when known,
// "dscpMap" ({"26":5}: the entries that differ from DSCP >> 3; trust dscp
// without it is the default map), "cableLength" (meters) and "buffer"
// ({"prio2buffer":[8],"sizes":[8],"total":n}, "internal":n in it when a
// capture knows mlx5's internal buffers) when the driver reports them, and
// "manualBuffer" / "xoffCableLength" (DcbState) where the tree models them;
// Parse is its inverse (captures without the later keys still parse) and
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
