#include "engine/netlink/netlink_socket.h"

#include <netlink/errno.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <cerrno>

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

}  // namespace provisioner
