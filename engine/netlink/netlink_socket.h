// libnl sockets and errors, shared by every netlink backend (the link, vf,
// rdma and names modules): one RAII socket and message type, one connect with
// a receive timeout, one request/answer exchange, and one map from libnl's
// error codes back to the errno the kernel sent, so messages and retries see
// EBUSY, EOPNOTSUPP, ...
#ifndef PROVISIONER_ENGINE_NETLINK_NETLINK_SOCKET_H_
#define PROVISIONER_ENGINE_NETLINK_NETLINK_SOCKET_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/base/status.h"

struct nl_sock;
struct nl_msg;
struct nlmsghdr;
struct nlattr;

namespace provisioner {

struct NlSockDeleter {
  void operator()(nl_sock* s) const;
};
using NlSocket = std::unique_ptr<nl_sock, NlSockDeleter>;

struct NlMsgDeleter {
  void operator()(nl_msg* m) const;
};
using NlMsg = std::unique_ptr<nl_msg, NlMsgDeleter>;

// The errno for a libnl error code (negative or not): libnl folds the
// kernel's errno into its own codes. EIO for codes with no errno.
int ErrnoOfNle(int nle);
// ErrnoToStatus(ErrnoOfNle(nle), what) with libnl's text appended.
Status NlError(int nle, const std::string& what);

// A socket connected to netlink `protocol` (NETLINK_ROUTE, NETLINK_RDMA, ...)
// in the calling process's network namespace, with a 5 s receive timeout
// (never hang on a kernel that does not answer). A failure carries the
// socket's errno (EPROTONOSUPPORT: the kernel has no such netlink family).
StatusOr<NlSocket> ConnectNetlink(int protocol, const std::string& name);

// One request and its answer on a fresh socket of `protocol` (named `name`
// in errors): `msg` is sent, each reply message goes to `on_reply`, and the
// exchange ends at the kernel's ACK, a dump's NLMSG_DONE, or, for a request
// answered by a reply alone (dcbnl's GETs, a generic netlink GET without
// NLM_F_ACK), as soon as `reply_complete` (when given) says the replies so
// far complete it. An NLMSG_ERROR
// comes back as ErrnoToStatus(its errno, what), so callers can add what that
// errno means for their request; no ACK after `max_receives` reads (or a read
// error) is kUnavailable. Connecting fails with the socket's errno
// (EPROTONOSUPPORT: no such netlink family in this kernel).
Status NetlinkTransact(int protocol, const std::string& name, nl_msg* msg, const std::string& what,
                       const std::function<void(const nlmsghdr*)>& on_reply, int max_receives = 64,
                       const std::function<bool()>& reply_complete = nullptr);

// The id of the generic netlink family `name` ("ethtool", "devlink"), asked
// of the controller (CTRL_CMD_GETFAMILY; built on libnl's core, no
// libnl-genl). A kernel without the family answers ENOENT: kFailedPrecondition
// "genetlink CTRL_CMD_GETFAMILY <name>: ENOENT ...: the kernel has no <name>
// generic netlink family", to which callers add what provides it.
StatusOr<uint16_t> GenlFamilyId(const std::string& name);
// The same question, with the family's multicast groups by name ("config"
// of "devlink"): what a socket joins (NETLINK_ADD_MEMBERSHIP) to hear the
// family's notifications.
struct GenlFamily {
  uint16_t id = 0;
  std::map<std::string, uint32_t> mcast_groups;
};
StatusOr<GenlFamily> ResolveGenlFamily(const std::string& name);
// A generic netlink message: the netlink header of type `family` and the
// genlmsghdr (`cmd`, `version`); null when it cannot be built.
NlMsg NewGenlMessage(uint16_t family, uint8_t cmd, uint8_t version, int flags);
// GenlFamilyId's request and the parse of its answer, for message tests.
std::vector<uint8_t> BuildGenlFamilyRequest(const std::string& name, uint32_t seq);
StatusOr<uint16_t> ParseGenlFamilyReply(const std::vector<uint8_t>& msg, const std::string& name);
StatusOr<GenlFamily> ParseGenlFamilyAnswer(const std::vector<uint8_t>& msg,
                                           const std::string& name);
// The attributes after a generic netlink message's genlmsghdr into `tb`
// (0..max); kInvalidArgument "<label>: truncated <what>" or bad attributes.
Status ParseGenlAttributes(nlmsghdr* h, nlattr** tb, int max, const std::string& label,
                           const std::string& what);

// The bytes of `m` as sent with sequence number `seq` (what message tests
// compare with the kernel's structures); empty for no message.
std::vector<uint8_t> NetlinkMessageBytes(nl_msg* m, uint32_t seq);

// The header of the received message `msg` when its length fields are sane;
// `label` names the protocol in errors ("dcbnl", "ethtool netlink").
StatusOr<nlmsghdr*> NetlinkHeader(const std::vector<uint8_t>& msg, const std::string& label);

// OK unless `h` is an NLMSG_ERROR carrying an errno: ErrnoToStatus(errno,
// what). A truncated error message is kInvalidArgument naming `label`.
Status NetlinkErrorOf(nlmsghdr* h, const std::string& label, const std::string& what);

}  // namespace provisioner

#endif  // PROVISIONER_ENGINE_NETLINK_NETLINK_SOCKET_H_
