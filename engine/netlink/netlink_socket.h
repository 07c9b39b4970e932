// libnl sockets and errors, shared by every netlink backend (the link, vf
// and rdma modules): one RAII socket and message type, one connect with a
// receive timeout, and one map from libnl's error codes back to the errno
// the kernel sent, so messages and retries see EBUSY, EOPNOTSUPP, ...
#ifndef PROVISIONER_ENGINE_NETLINK_NETLINK_SOCKET_H_
#define PROVISIONER_ENGINE_NETLINK_NETLINK_SOCKET_H_

#include <memory>
#include <string>

#include "engine/base/status.h"

struct nl_sock;
struct nl_msg;

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

}  // namespace provisioner

#endif  // PROVISIONER_ENGINE_NETLINK_NETLINK_SOCKET_H_
