// dcbnl messages (include/uapi/linux/dcbnl.h, net/dcb/dcbnl.c), built and
// parsed with libnl: the only code of the roce module that includes netlink
// headers. Exposed for the message tests; the backend is roce_backend.h's
// NewNetlinkDcbBackend.
//
// What is sent, per operation (NETLINK_ROUTE, struct dcbmsg after the
// header, then DCB_ATTR_IFNAME):
//  - read:  RTM_GETDCB DCB_CMD_IEEE_GET. The reply (RTM_GETDCB) nests in
//           DCB_ATTR_IEEE: DCB_ATTR_IEEE_PFC (struct ieee_pfc; bit p of
//           pfc_en = PFC on priority p) and DCB_ATTR_IEEE_APP_TABLE (struct
//           dcb_app entries, DCB_ATTR_IEEE_APP).
//  - PFC:   RTM_SETDCB DCB_CMD_IEEE_SET, DCB_ATTR_IEEE { DCB_ATTR_IEEE_PFC }
//           with the struct as read and pfc_en replaced (what `dcb pfc set
//           prio-pfc` and `mlnx_qos --pfc` send).
//  - trust: mlx5 keeps no separate trust attribute (it implements neither
//           dcbnl_setapptrust nor DCB_ATTR_DCB_APP_TRUST_TABLE): its trust
//           state is DSCP while the APP table holds DSCP entries (selector
//           IEEE_8021QAZ_APP_SEL_DSCP) and PCP once the last one is deleted
//           (mlx5e_dcbnl_ieee_setapp/delapp). So trust dscp = DCB_CMD_IEEE_SET
//           of the 64 entries DSCP d -> priority d >> 3 (the map mlx5 shows
//           after `mlnx_qos --trust dscp`); trust pcp = DCB_CMD_IEEE_DEL of
//           the DSCP entries the table holds. Read back the same way: trust
//           is dscp when the table has a DSCP entry.
//  - dscpMap: DCB_CMD_IEEE_SET of the DSCP entries that differ (mlx5
//           replaces a DSCP's entry: mlx5e_dcbnl_ieee_setapp deletes the old
//           one from the kernel's list), DCB_CMD_IEEE_DEL of those to remove.
//  - cable length: DCB_CMD_IEEE_SET, DCB_ATTR_IEEE { DCB_ATTR_IEEE_PFC }
//           with the struct as read (pfc_en kept) and `delay` replaced: mlx5
//           takes delay as the cable length in meters (1..999; 0 and
//           >= MLX5E_MAX_CABLE_LENGTH are ignored without an error) and
//           reports it back in the GET's ieee_pfc.delay while the port has
//           buffer support (mlx5e_dcbnl_ieee_getpfc/setpfc; `dcb pfc set
//           delay`, `mlnx_qos --cable_len`).
//  - buffers: DCB_CMD_IEEE_SET, DCB_ATTR_IEEE { DCB_ATTR_DCB_BUFFER, a
//           struct dcbnl_buffer {prio2buffer[8], buffer_size[8] (bytes),
//           total_size (read-only)} } (dcbnl_ieee_set: EINVAL for a buffer
//           >= DCBX_MAX_BUFFERS, then the driver's dcbnl_setbuffer; mlx5:
//           EOPNOTSUPP without port buffer support, EINVAL for a lossless
//           buffer of size 0 or more than the port buffer, ENOMEM for a
//           lossless buffer below its xoff threshold). The GET reply nests
//           it in DCB_ATTR_IEEE when the driver has dcbnl_getbuffer.
//  - DCBX:  DCB_CMD_GDCBX / DCB_CMD_SDCBX, a u8 DCB_ATTR_DCBX of
//           DCB_CAP_DCBX_* bits (dcbnl_getdcbx/setdcbx); host = HOST |
//           VER_IEEE (what `mlnx_qos --dcbx os` and lldpad's "not willing"
//           host mode mean), firmware = 0 (mlx5e_dcbnl_setdcbx: back to the
//           firmware's auto mode). The SDCBX reply's DCB_ATTR_DCBX is the
//           driver's u8 result (0 = ok; mlx5 answers 1 for a refused mode).
// A SET/DEL is answered by an RTM_SETDCB whose DCB_ATTR_IEEE is a u8 holding
// the driver's error (negative errno truncated to 8 bits, 0 = ok), then the
// ack; errors before the driver runs (no such netdev: ENODEV; a netdev
// without DCB ops, e.g. veth: EOPNOTSUPP; no CAP_NET_ADMIN: EPERM) come as
// NLMSG_ERROR.
#ifndef PROVISIONER_MODULES_ROCE_DCB_NETLINK_H_
#define PROVISIONER_MODULES_ROCE_DCB_NETLINK_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/base/status.h"
#include "modules/roce/roce_backend.h"

namespace provisioner::dcb {

// One APP table entry (struct dcb_app).
struct AppEntry {
  uint8_t selector = 0;
  uint8_t priority = 0;
  uint16_t protocol = 0;
};

// IEEE_8021QAZ_APP_SEL_DSCP.
inline constexpr uint8_t kSelectorDscp = 5;

// What a DCB_CMD_IEEE_GET reply says that we use.
struct IeeeState {
  std::optional<std::vector<uint8_t>> pfc;  // struct ieee_pfc as sent
  std::vector<AppEntry> apps;
  // DCB_ATTR_DCB_BUFFER (struct dcbnl_buffer), when the driver has
  // dcbnl_getbuffer (mlx5 with port buffer support).
  std::optional<DcbBuffer> buffer = std::nullopt;
  // pfc_en of `pfc` (0 without it).
  unsigned PfcEnabled() const;
  DcbState ToState() const;
};

// DCB_CAP_DCBX_* of a mode name and back.
uint8_t DcbxModeBits(const std::string& mode);
std::string DcbxModeName(uint8_t bits);

// The 64 DSCP entries of trust dscp: DSCP d -> priority d >> 3.
std::vector<AppEntry> DefaultDscpMap();

// Wire bytes (nlmsghdr, dcbmsg, attributes) of each request, with `seq`.
std::vector<uint8_t> BuildIeeeGetRequest(uint32_t seq, const std::string& ifname);
// `pfc` is the ieee_pfc of the last read (its other fields are kept).
std::vector<uint8_t> BuildPfcSetRequest(uint32_t seq, const std::string& ifname,
                                        const std::vector<uint8_t>& pfc, unsigned pfc_en);
// DCB_CMD_IEEE_SET PFC with `pfc` as read (pfc_en kept) and delay = `meters`.
std::vector<uint8_t> BuildCableLengthRequest(uint32_t seq, const std::string& ifname,
                                             const std::vector<uint8_t>& pfc, uint16_t meters);
// DCB_CMD_IEEE_SET, DCB_ATTR_IEEE { DCB_ATTR_DCB_BUFFER }.
std::vector<uint8_t> BuildBufferSetRequest(uint32_t seq, const std::string& ifname,
                                           const DcbBuffer& buffer);
// DCB_CMD_IEEE_SET (add) or DCB_CMD_IEEE_DEL (remove) of APP entries.
std::vector<uint8_t> BuildAppRequest(uint32_t seq, const std::string& ifname, bool add,
                                     const std::vector<AppEntry>& apps);

// DCB_CMD_GDCBX, and DCB_CMD_SDCBX with DCB_ATTR_DCBX = `bits`.
std::vector<uint8_t> BuildGetDcbxRequest(uint32_t seq, const std::string& ifname);
std::vector<uint8_t> BuildSetDcbxRequest(uint32_t seq, const std::string& ifname, uint8_t bits);
// A GDCBX reply: the DCB_CAP_DCBX_* bits; an SDCBX reply: OK or why not.
StatusOr<uint8_t> ParseGetDcbxReply(const std::vector<uint8_t>& msg);
Status ParseSetDcbxReply(const std::vector<uint8_t>& msg);

// A DCB_CMD_IEEE_GET reply; an NLMSG_ERROR becomes the kernel's errno.
StatusOr<IeeeState> ParseIeeeGetReply(const std::vector<uint8_t>& msg);
// A SET/DEL reply: OK, or the driver's / the kernel's errno.
Status ParseSetReply(const std::vector<uint8_t>& msg);

}  // namespace provisioner::dcb

#endif  // PROVISIONER_MODULES_ROCE_DCB_NETLINK_H_
