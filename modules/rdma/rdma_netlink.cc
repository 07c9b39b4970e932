#include "modules/rdma/rdma_netlink.h"

#include <netlink/attr.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <optional>
#include <utility>

#include "engine/netlink/netlink_socket.h"

namespace provisioner::rdma {
namespace {

// Attributes beyond this are ignored when parsing (the mode is 66).
constexpr int kMaxAttr = 128;

using MsgPtr = NlMsg;

std::optional<uint8_t> ModeValue(const std::string& mode) {
  if (mode == "shared") return 1;
  if (mode == "exclusive") return 0;
  return std::nullopt;
}

// Requests are acked so that a refused SET reports its errno.
MsgPtr NewRequest(int op) {
  return MsgPtr(nlmsg_alloc_simple(NldevMsgType(op), NLM_F_REQUEST | NLM_F_ACK));
}

MsgPtr NewSetRequest(const std::string& mode) {
  MsgPtr m = NewRequest(kNldevCmdSysSet);
  auto v = ModeValue(mode);
  if (!v || (m && nla_put_u8(m.get(), kNldevSysAttrNetnsMode, *v) < 0)) m.reset();
  return m;
}

StatusOr<std::string> ModeFromHeader(nlmsghdr* h) {
  if (h->nlmsg_type == NLMSG_ERROR) {
    auto* e = static_cast<nlmsgerr*>(nlmsg_data(h));
    if (nlmsg_datalen(h) < static_cast<int>(sizeof(nlmsgerr))) {
      return InvalidArgumentError("RDMA netlink: truncated error message");
    }
    return ErrnoToStatus(-e->error, "RDMA netlink SYS_GET");
  }
  if (h->nlmsg_type != NldevMsgType(kNldevCmdSysGet)) {
    return InvalidArgumentError("RDMA netlink: reply of type " + std::to_string(h->nlmsg_type) +
                                ", expected SYS_GET " +
                                std::to_string(NldevMsgType(kNldevCmdSysGet)));
  }
  nlattr* tb[kMaxAttr + 1] = {};
  if (int r = nlmsg_parse(h, 0, tb, kMaxAttr, nullptr); r < 0) {
    return InvalidArgumentError(std::string("RDMA netlink: bad attributes: ") + nl_geterror(r));
  }
  nlattr* a = tb[kNldevSysAttrNetnsMode];
  if (a == nullptr) {
    return NotFoundError("RDMA netlink SYS_GET reply has no RDMA_NLDEV_SYS_ATTR_NETNS_MODE");
  }
  if (nla_len(a) < 1) return InvalidArgumentError("RDMA netlink: empty NETNS_MODE attribute");
  return std::string(nla_get_u8(a) ? "shared" : "exclusive");
}

// What a request/response exchange saw.
class NetlinkClient : public NetnsModeClient {
 public:
  StatusOr<std::string> Get() override {
    std::optional<StatusOr<std::string>> mode;  // the SYS_GET reply
    MsgPtr m = NewRequest(kNldevCmdSysGet);
    RETURN_IF_ERROR(Run(m.get(), "SYS_GET", [&](const nlmsghdr* h) {
      if (h->nlmsg_type == NldevMsgType(kNldevCmdSysGet)) {
        mode = ModeFromHeader(const_cast<nlmsghdr*>(h));
      }
    }));
    if (!mode) return NotFoundError("RDMA netlink SYS_GET: the kernel sent no reply");
    return *mode;
  }

  Status Set(const std::string& mode) override {
    if (!ModeValue(mode))
      return InvalidArgumentError("netns mode must be shared or exclusive, not " + mode);
    MsgPtr m = NewSetRequest(mode);
    return Run(m.get(), "SYS_SET netns_mode " + mode, [](const nlmsghdr*) {});
  }

 private:
  static Status Run(nl_msg* msg, const std::string& what,
                    const std::function<void(const nlmsghdr*)>& on_reply) {
    Status s = NetlinkTransact(kNetlinkRdma, "NETLINK_RDMA", msg, "RDMA netlink " + what, on_reply,
                               /*max_receives=*/16);
    if (s.err() == EPROTONOSUPPORT) {
      return Status(StatusCode::kFailedPrecondition,
                    s.message() + ": no RDMA netlink in this kernel (ib_core not loaded)", s.err());
    }
    if (s.err() == EBUSY) {
      return Status(s.code(),
                    s.message() +
                        ": the kernel switches the netns mode only while no network "
                        "namespace other than the initial one exists",
                    EBUSY);
    }
    return s;
  }
};

}  // namespace

std::vector<uint8_t> BuildSysGetRequest(uint32_t seq) {
  MsgPtr m = NewRequest(kNldevCmdSysGet);
  return NetlinkMessageBytes(m.get(), seq);
}

std::vector<uint8_t> BuildSysSetRequest(uint32_t seq, const std::string& mode) {
  MsgPtr m = NewSetRequest(mode);
  return NetlinkMessageBytes(m.get(), seq);
}

StatusOr<std::string> ParseSysGetReply(const std::vector<uint8_t>& msg) {
  ASSIGN_OR_RETURN(nlmsghdr * h, NetlinkHeader(msg, "RDMA netlink"));
  return ModeFromHeader(h);
}

std::unique_ptr<NetnsModeClient> NewNetlinkNetnsModeClient() {
  return std::make_unique<NetlinkClient>();
}

}  // namespace provisioner::rdma
