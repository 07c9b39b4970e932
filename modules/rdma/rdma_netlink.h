// RDMA netlink (NETLINK_RDMA, the RDMA_NL_NLDEV client), through libnl: the
// system netns mode, read (RDMA_NLDEV_CMD_SYS_GET) and set
// (RDMA_NLDEV_CMD_SYS_SET), as `rdma system show|set netns` does. The only
// code that includes the libnl headers for RDMA.
#ifndef PROVISIONER_MODULES_RDMA_RDMA_NETLINK_H_
#define PROVISIONER_MODULES_RDMA_RDMA_NETLINK_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/base/status.h"

namespace provisioner::rdma {

// Our own copy of the uAPI numbers (rdma-core does the same: distribution
// headers lag the kernel). include/uapi/rdma/rdma_netlink.h.
inline constexpr int kNetlinkRdma = 20;
inline constexpr int kRdmaNlNldev = 5;
inline constexpr int kNldevCmdSysGet = 6;
inline constexpr int kNldevCmdSysSet = 7;
inline constexpr int kNldevSysAttrNetnsMode = 66;  // u8: 1 shared, 0 exclusive
inline constexpr uint16_t NldevMsgType(int op) {
  return static_cast<uint16_t>((kRdmaNlNldev << 10) + op);
}

// The wire bytes of a request (nlmsghdr + attributes), as sent.
std::vector<uint8_t> BuildSysGetRequest(uint32_t seq);
std::vector<uint8_t> BuildSysSetRequest(uint32_t seq, const std::string& mode);
// The mode ("shared"/"exclusive") of a SYS_GET reply; an NLMSG_ERROR reply
// becomes the kernel's errno; anything else is an error naming what is wrong.
StatusOr<std::string> ParseSysGetReply(const std::vector<uint8_t>& msg);

// The live netns mode of the running kernel.
class NetnsModeClient {
 public:
  virtual ~NetnsModeClient() = default;
  virtual StatusOr<std::string> Get() = 0;
  // Fails with the kernel's errno (EBUSY while other network namespaces
  // exist, EPERM without CAP_NET_ADMIN, EPROTONOSUPPORT without ib_core).
  virtual Status Set(const std::string& mode) = 0;
};

// The real client: a raw NETLINK_RDMA socket per call.
std::unique_ptr<NetnsModeClient> NewNetlinkNetnsModeClient();

}  // namespace provisioner::rdma

#endif  // PROVISIONER_MODULES_RDMA_RDMA_NETLINK_H_
