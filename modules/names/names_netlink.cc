// The live backend of names_backend.h: rtnetlink (libnl-route-3) for the
// netdev, RDMA netlink (NETLINK_RDMA, the RDMA_NL_NLDEV client) for the RDMA
// device. The only code of the names module that includes libnl headers.
//
// Checked against Linux 6.1: net/core/dev.c dev_change_name (EBUSY while
// IFF_UP without IFF_LIVE_RENAME_OK, EEXIST for a name in use, EINVAL for an
// invalid one), drivers/infiniband/core/nldev.c nldev_set_doit (DEV_INDEX
// required, DEV_NAME copied with nla_strscpy into IB_DEVICE_NAME_MAX bytes,
// empty: EINVAL) and device.c ib_device_rename (same name: 0, in use:
// EEXIST); and against iproute2 6.1 rdma/dev.c dev_set_name and rdma-core 44
// kernel-boot/rdma_rename.c, which send the same SET message.
#include <linux/if_link.h>
#include <net/if.h>
#include <netlink/attr.h>
#include <netlink/errno.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/route/link.h>
#include <netlink/route/rtnl.h>
#include <netlink/socket.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <optional>

#include "engine/netlink/netlink_socket.h"
#include "engine/netlink/rtnl_link.h"
#include "modules/names/names_backend.h"

namespace provisioner {
namespace {

// Our own copy of the uAPI numbers (include/uapi/rdma/rdma_netlink.h), as
// rdma-core keeps one: distribution headers lag the kernel. The netns test
// checks them against the installed header.
constexpr int kNetlinkRdma = 20;
constexpr int kRdmaNlNldev = 5;
constexpr int kNldevCmdGet = 1;
constexpr int kNldevCmdSet = 2;
constexpr int kNldevAttrDevIndex = 1;  // u32
constexpr int kNldevAttrDevName = 2;   // NUL-terminated string
constexpr size_t kIbDeviceNameMax = 64;
constexpr int kMaxAttr = 128;

constexpr uint16_t NldevType(int op) { return static_cast<uint16_t>((kRdmaNlNldev << 10) + op); }

NlMsg NewDumpRequest() {
  return NlMsg(nlmsg_alloc_simple(NldevType(kNldevCmdGet), NLM_F_REQUEST | NLM_F_DUMP));
}

NlMsg NewRenameRequest(uint32_t index, const std::string& name) {
  NlMsg m(nlmsg_alloc_simple(NldevType(kNldevCmdSet), NLM_F_REQUEST | NLM_F_ACK));
  if (m && (nla_put_u32(m.get(), kNldevAttrDevIndex, index) < 0 ||
            nla_put_string(m.get(), kNldevAttrDevName, name.c_str()) < 0)) {
    m.reset();
  }
  return m;
}

StatusOr<RdmaDevEntry> EntryFromHeader(nlmsghdr* h) {
  if (h->nlmsg_type == NLMSG_ERROR) {
    if (nlmsg_datalen(h) < static_cast<int>(sizeof(nlmsgerr))) {
      return InvalidArgumentError("RDMA netlink: truncated error message");
    }
    auto* e = static_cast<nlmsgerr*>(nlmsg_data(h));
    return ErrnoToStatus(-e->error, "RDMA netlink GET");
  }
  if (h->nlmsg_type != NldevType(kNldevCmdGet)) {
    return InvalidArgumentError("RDMA netlink: reply of type " + std::to_string(h->nlmsg_type) +
                                ", expected GET " + std::to_string(NldevType(kNldevCmdGet)));
  }
  nlattr* tb[kMaxAttr + 1] = {};
  if (int r = nlmsg_parse(h, 0, tb, kMaxAttr, nullptr); r < 0) {
    return InvalidArgumentError(std::string("RDMA netlink: bad attributes: ") + nl_geterror(r));
  }
  if (tb[kNldevAttrDevIndex] == nullptr || tb[kNldevAttrDevName] == nullptr) {
    return InvalidArgumentError("RDMA netlink GET reply without DEV_INDEX or DEV_NAME");
  }
  if (nla_len(tb[kNldevAttrDevIndex]) < 4) {
    return InvalidArgumentError("RDMA netlink: short DEV_INDEX attribute");
  }
  RdmaDevEntry e;
  e.index = nla_get_u32(tb[kNldevAttrDevIndex]);
  const char* name = static_cast<const char*>(nla_data(tb[kNldevAttrDevName]));
  e.name.assign(name, strnlen(name, static_cast<size_t>(nla_len(tb[kNldevAttrDevName]))));
  return e;
}

class Netlink : public NamesBackend {
 public:
  std::string Name() const override { return "netlink"; }

  Status RenameNetdev(const std::string& from, const std::string& to) override {
    ASSIGN_OR_RETURN(NlSocket sk, ConnectNetlink(NETLINK_ROUTE, "NETLINK_ROUTE"));
    ASSIGN_OR_RETURN(RtnlLinkPtr orig, GetRtnlLink(sk.get(), from));
    const bool was_up = (rtnl_link_get_flags(orig.get()) & IFF_UP) != 0;
    if (was_up) {
      RETURN_IF_ERROR(ChangeRtnlLink(sk.get(), orig.get(), from, "down",
                                     [](rtnl_link* c) { rtnl_link_unset_flags(c, IFF_UP); }));
    }
    Status renamed = ChangeRtnlLink(sk.get(), orig.get(), from, "name " + to,
                                    [&to](rtnl_link* c) { rtnl_link_set_name(c, to.c_str()); });
    if (!renamed.ok()) {
      if (was_up) {
        (void)ChangeRtnlLink(sk.get(), orig.get(), from, "up",
                             [](rtnl_link* c) { rtnl_link_set_flags(c, IFF_UP); });
      }
      return renamed;
    }
    if (!was_up) return OkStatus();
    ASSIGN_OR_RETURN(RtnlLinkPtr now, GetRtnlLink(sk.get(), to));
    return ChangeRtnlLink(sk.get(), now.get(), to, "up (after the rename)",
                          [](rtnl_link* c) { rtnl_link_set_flags(c, IFF_UP); });
  }

  Status RenameRdma(const std::string& from, const std::string& to) override {
    if (to.empty() || to.size() >= kIbDeviceNameMax) {
      return InvalidArgumentError("RDMA device name " + to + ": 1 to 63 bytes");
    }
    std::vector<RdmaDevEntry> devices;
    NlMsg d = NewDumpRequest();
    RETURN_IF_ERROR(Run(d.get(), "GET (dump)", [&](const nlmsghdr* h) {
      if (h->nlmsg_type != NldevType(kNldevCmdGet)) return;
      auto e = EntryFromHeader(const_cast<nlmsghdr*>(h));
      if (e.ok()) devices.push_back(std::move(*e));
    }));
    std::optional<uint32_t> index;
    for (const RdmaDevEntry& e : devices) {
      if (e.name == from) index = e.index;
    }
    if (!index) {
      return Status(StatusCode::kNotFound, "RDMA netlink: no RDMA device " + from, ENODEV);
    }
    NlMsg m = NewRenameRequest(*index, to);
    return Run(m.get(), "SET " + from + " name " + to, [](const nlmsghdr*) {});
  }

 private:
  static Status Run(nl_msg* msg, const std::string& what,
                    const std::function<void(const nlmsghdr*)>& on_reply) {
    Status s = NetlinkTransact(kNetlinkRdma, "NETLINK_RDMA", msg, "RDMA netlink " + what, on_reply);
    if (s.err() == EPROTONOSUPPORT) {
      return Status(StatusCode::kFailedPrecondition,
                    s.message() + ": no RDMA netlink in this kernel (ib_core not loaded)", s.err());
    }
    if (s.err() == EEXIST) {
      return Status(s.code(), s.message() + ": another RDMA device has that name", EEXIST);
    }
    return s;
  }
};

}  // namespace

std::vector<uint8_t> BuildRdmaDevDumpRequest(uint32_t seq) {
  NlMsg m = NewDumpRequest();
  return NetlinkMessageBytes(m.get(), seq);
}

std::vector<uint8_t> BuildRdmaRenameRequest(uint32_t seq, uint32_t index, const std::string& name) {
  NlMsg m = NewRenameRequest(index, name);
  return NetlinkMessageBytes(m.get(), seq);
}

StatusOr<RdmaDevEntry> ParseRdmaDevReply(const std::vector<uint8_t>& msg) {
  ASSIGN_OR_RETURN(nlmsghdr * h, NetlinkHeader(msg, "RDMA netlink"));
  return EntryFromHeader(h);
}

std::unique_ptr<NamesBackend> NewNetlinkNamesBackend() { return std::make_unique<Netlink>(); }

}  // namespace provisioner
