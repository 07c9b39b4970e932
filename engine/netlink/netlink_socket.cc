#include "engine/netlink/netlink_socket.h"

#include <linux/genetlink.h>
#include <netlink/attr.h>
#include <netlink/errno.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <cerrno>
#include <cstring>
#include <optional>

namespace provisioner {

void NlSockDeleter::operator()(nl_sock* s) const { nl_socket_free(s); }
void NlMsgDeleter::operator()(nl_msg* m) const { nlmsg_free(m); }

int ErrnoOfNle(int nle) {
  switch (nle < 0 ? -nle : nle) {
    case NLE_INVAL:
      return EINVAL;
    case NLE_PERM:
      return EPERM;
    case NLE_NOACCESS:
      return EACCES;
    case NLE_BUSY:
      return EBUSY;
    case NLE_RANGE:
      return ERANGE;
    case NLE_OPNOTSUPP:
      return EOPNOTSUPP;
    case NLE_NODEV:
    case NLE_OBJ_NOTFOUND:
      return ENODEV;
    case NLE_NOMEM:
      return ENOMEM;
    case NLE_AGAIN:
      return EAGAIN;
    case NLE_EXIST:
      return EEXIST;
    case NLE_PROTO_MISMATCH:
      return EPROTONOSUPPORT;
    default:
      return EIO;
  }
}

Status NlError(int nle, const std::string& what) {
  Status s = ErrnoToStatus(ErrnoOfNle(nle), what);
  return Status(s.code(), s.message() + " (libnl: " + nl_geterror(nle) + ")", s.err());
}

StatusOr<NlSocket> ConnectNetlink(int protocol, const std::string& name) {
  NlSocket sk(nl_socket_alloc());
  if (!sk) return InternalError("netlink: nl_socket_alloc failed");
  errno = 0;
  if (int r = nl_connect(sk.get(), protocol); r < 0) {
    // The socket's errno is exact; libnl's code is the fallback.
    const int err = errno != 0 ? errno : ErrnoOfNle(r);
    return ErrnoToStatus(err, "open " + name + " socket");
  }
  timeval tv{5, 0};
  setsockopt(nl_socket_get_fd(sk.get()), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  return sk;
}

namespace {

struct Exchange {
  const std::function<void(const nlmsghdr*)>* on_reply;
  int kernel_errno = 0;  // from an NLMSG_ERROR with error != 0
  bool done = false;     // ACK, or a dump's NLMSG_DONE
};

int OnValid(nl_msg* msg, void* arg) {
  (*static_cast<Exchange*>(arg)->on_reply)(nlmsg_hdr(msg));
  return NL_OK;
}

int OnError(sockaddr_nl*, nlmsgerr* e, void* arg) {
  static_cast<Exchange*>(arg)->kernel_errno = -e->error;
  return NL_STOP;
}

int OnDone(nl_msg*, void* arg) {
  static_cast<Exchange*>(arg)->done = true;
  return NL_STOP;
}

}  // namespace

Status NetlinkTransact(int protocol, const std::string& name, nl_msg* msg, const std::string& what,
                       const std::function<void(const nlmsghdr*)>& on_reply, int max_receives,
                       const std::function<bool()>& reply_complete) {
  if (msg == nullptr) return InternalError(what + ": cannot build the message");
  ASSIGN_OR_RETURN(NlSocket sk, ConnectNetlink(protocol, name));
  Exchange ex{&on_reply};
  nl_socket_modify_cb(sk.get(), NL_CB_VALID, NL_CB_CUSTOM, OnValid, &ex);
  nl_socket_modify_cb(sk.get(), NL_CB_ACK, NL_CB_CUSTOM, OnDone, &ex);
  nl_socket_modify_cb(sk.get(), NL_CB_FINISH, NL_CB_CUSTOM, OnDone, &ex);
  nl_socket_modify_err_cb(sk.get(), NL_CB_CUSTOM, OnError, &ex);
  errno = 0;
  if (int r = nl_send_auto(sk.get(), msg); r < 0) {
    return ErrnoToStatus(errno != 0 ? errno : ErrnoOfNle(r), what + ": send");
  }
  auto complete = [&] { return ex.done || (reply_complete && reply_complete()); };
  for (int i = 0; i < max_receives && !complete() && ex.kernel_errno == 0; ++i) {
    int r = nl_recvmsgs_default(sk.get());
    if (ex.kernel_errno != 0) break;
    if (r < 0) return Status(StatusCode::kUnavailable, what + ": receive: " + nl_geterror(r));
  }
  if (ex.kernel_errno != 0) return ErrnoToStatus(ex.kernel_errno, what);
  if (!complete()) return UnavailableError(what + ": no acknowledgement");
  return OkStatus();
}

NlMsg NewGenlMessage(uint16_t family, uint8_t cmd, uint8_t version, int flags) {
  NlMsg m(nlmsg_alloc_simple(family, NLM_F_REQUEST | flags));
  if (!m) return m;
  genlmsghdr g{};
  g.cmd = cmd;
  g.version = version;
  if (nlmsg_append(m.get(), &g, sizeof g, NLMSG_ALIGNTO) < 0) m.reset();
  return m;
}

Status ParseGenlAttributes(nlmsghdr* h, nlattr** tb, int max, const std::string& label,
                           const std::string& what) {
  if (nlmsg_datalen(h) < static_cast<int>(GENL_HDRLEN)) {
    return InvalidArgumentError(label + ": truncated " + what);
  }
  if (int r = nlmsg_parse(h, GENL_HDRLEN, tb, max, nullptr); r < 0) {
    return InvalidArgumentError(label + ": bad attributes in " + what + ": " + nl_geterror(r));
  }
  return OkStatus();
}

namespace {

// CTRL_CMD_GETFAMILY { CTRL_ATTR_FAMILY_NAME } to the controller, no ACK
// asked: the kernel answers CTRL_CMD_NEWFAMILY (net/netlink/genetlink.c
// ctrl_getfamily) or an NLMSG_ERROR.
NlMsg NewFamilyRequest(const std::string& name) {
  NlMsg m = NewGenlMessage(GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 1, 0);
  if (m && nla_put_string(m.get(), CTRL_ATTR_FAMILY_NAME, name.c_str()) < 0) m.reset();
  return m;
}

StatusOr<GenlFamily> ParseFamily(nlmsghdr* h, const std::string& name) {
  RETURN_IF_ERROR(NetlinkErrorOf(h, "genetlink", "genetlink CTRL_CMD_GETFAMILY " + name));
  if (h->nlmsg_type != GENL_ID_CTRL) {
    return InvalidArgumentError("genetlink: reply of type " + std::to_string(h->nlmsg_type) +
                                " to CTRL_CMD_GETFAMILY");
  }
  nlattr* tb[CTRL_ATTR_MAX + 1] = {};
  RETURN_IF_ERROR(ParseGenlAttributes(h, tb, CTRL_ATTR_MAX, "genetlink", "CTRL_CMD_NEWFAMILY"));
  if (tb[CTRL_ATTR_FAMILY_ID] == nullptr || nla_len(tb[CTRL_ATTR_FAMILY_ID]) < 2) {
    return InvalidArgumentError("genetlink: CTRL_CMD_NEWFAMILY without CTRL_ATTR_FAMILY_ID");
  }
  GenlFamily family;
  family.id = nla_get_u16(tb[CTRL_ATTR_FAMILY_ID]);
  // CTRL_ATTR_MCAST_GROUPS: a nest of nests { CTRL_ATTR_MCAST_GRP_NAME,
  // CTRL_ATTR_MCAST_GRP_ID } (net/netlink/genetlink.c ctrl_fill_info).
  if (nlattr* groups = tb[CTRL_ATTR_MCAST_GROUPS]; groups != nullptr) {
    nlattr* group;
    int rem;
    nla_for_each_nested(group, groups, rem) {
      nlattr* g[CTRL_ATTR_MCAST_GRP_MAX + 1] = {};
      if (nla_parse_nested(g, CTRL_ATTR_MCAST_GRP_MAX, group, nullptr) < 0 ||
          g[CTRL_ATTR_MCAST_GRP_NAME] == nullptr || g[CTRL_ATTR_MCAST_GRP_ID] == nullptr ||
          nla_len(g[CTRL_ATTR_MCAST_GRP_ID]) < 4 || nla_len(g[CTRL_ATTR_MCAST_GRP_NAME]) < 1) {
        return InvalidArgumentError("genetlink: " + name + ": bad CTRL_ATTR_MCAST_GROUPS entry");
      }
      const char* gname = static_cast<const char*>(nla_data(g[CTRL_ATTR_MCAST_GRP_NAME]));
      family.mcast_groups[std::string(
          gname, ::strnlen(gname, static_cast<size_t>(nla_len(g[CTRL_ATTR_MCAST_GRP_NAME]))))] =
          nla_get_u32(g[CTRL_ATTR_MCAST_GRP_ID]);
    }
  }
  return family;
}

}  // namespace

StatusOr<GenlFamily> ResolveGenlFamily(const std::string& name) {
  NlMsg m = NewFamilyRequest(name);
  const std::string what = "genetlink CTRL_CMD_GETFAMILY " + name;
  std::optional<StatusOr<GenlFamily>> family;
  Status s = NetlinkTransact(
      NETLINK_GENERIC, "NETLINK_GENERIC", m.get(), what,
      [&](const nlmsghdr* h) {
        if (h->nlmsg_type == GENL_ID_CTRL) family = ParseFamily(const_cast<nlmsghdr*>(h), name);
      },
      16, [&] { return family.has_value(); });
  if (!s.ok()) {
    if (s.err() == ENOENT) {
      return Status(StatusCode::kFailedPrecondition,
                    s.message() + ": the kernel has no " + name + " generic netlink family",
                    ENOENT);
    }
    return s;
  }
  if (!family) return UnavailableError(what + ": no reply");
  return *family;
}

StatusOr<uint16_t> GenlFamilyId(const std::string& name) {
  ASSIGN_OR_RETURN(GenlFamily family, ResolveGenlFamily(name));
  return family.id;
}

std::vector<uint8_t> BuildGenlFamilyRequest(const std::string& name, uint32_t seq) {
  NlMsg m = NewFamilyRequest(name);
  return NetlinkMessageBytes(m.get(), seq);
}

StatusOr<uint16_t> ParseGenlFamilyReply(const std::vector<uint8_t>& msg, const std::string& name) {
  ASSIGN_OR_RETURN(GenlFamily family, ParseGenlFamilyAnswer(msg, name));
  return family.id;
}

StatusOr<GenlFamily> ParseGenlFamilyAnswer(const std::vector<uint8_t>& msg,
                                           const std::string& name) {
  ASSIGN_OR_RETURN(nlmsghdr * h, NetlinkHeader(msg, "genetlink"));
  return ParseFamily(h, name);
}

std::vector<uint8_t> NetlinkMessageBytes(nl_msg* m, uint32_t seq) {
  if (m == nullptr) return {};
  nlmsghdr* h = nlmsg_hdr(m);
  h->nlmsg_seq = seq;
  const auto* p = reinterpret_cast<const uint8_t*>(h);
  return std::vector<uint8_t>(p, p + h->nlmsg_len);
}

StatusOr<nlmsghdr*> NetlinkHeader(const std::vector<uint8_t>& msg, const std::string& label) {
  if (msg.size() < NLMSG_HDRLEN) return InvalidArgumentError(label + ": truncated message");
  auto* h = reinterpret_cast<nlmsghdr*>(const_cast<uint8_t*>(msg.data()));
  if (h->nlmsg_len < NLMSG_HDRLEN || h->nlmsg_len > msg.size()) {
    return InvalidArgumentError(label + ": message length " + std::to_string(h->nlmsg_len) +
                                " does not fit its " + std::to_string(msg.size()) + " bytes");
  }
  return h;
}

Status NetlinkErrorOf(nlmsghdr* h, const std::string& label, const std::string& what) {
  if (h->nlmsg_type != NLMSG_ERROR) return OkStatus();
  if (nlmsg_datalen(h) < static_cast<int>(sizeof(nlmsgerr))) {
    return InvalidArgumentError(label + ": truncated error message");
  }
  const int err = -static_cast<nlmsgerr*>(nlmsg_data(h))->error;
  return err == 0 ? OkStatus() : ErrnoToStatus(err, what);
}

}  // namespace provisioner
