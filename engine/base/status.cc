#include "engine/base/status.h"

#include <cerrno>
#include <cstring>

namespace provisioner {

Status Status::WithContext(std::string_view context) const {
  if (ok()) return *this;
  std::string msg(context);
  msg += " <- ";
  msg += message_;
  return Status(code_, std::move(msg), errno_);
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  return message_;
}

Status InvalidArgumentError(std::string m) { return Status(StatusCode::kInvalidArgument, std::move(m)); }
Status FailedPreconditionError(std::string m) { return Status(StatusCode::kFailedPrecondition, std::move(m)); }
Status NotFoundError(std::string m) { return Status(StatusCode::kNotFound, std::move(m)); }
Status InternalError(std::string m) { return Status(StatusCode::kInternal, std::move(m)); }
Status UnimplementedError(std::string m) { return Status(StatusCode::kUnimplemented, std::move(m)); }
Status DeadlineExceededError(std::string m) { return Status(StatusCode::kDeadlineExceeded, std::move(m)); }
Status UnavailableError(std::string m) { return Status(StatusCode::kUnavailable, std::move(m)); }

std::string ErrnoName(int err) {
  switch (err) {
#define PROV_E(x) case x: return #x;
    PROV_E(EPERM) PROV_E(ENOENT) PROV_E(EIO) PROV_E(ENXIO) PROV_E(E2BIG)
    PROV_E(EBADF) PROV_E(EAGAIN) PROV_E(ENOMEM) PROV_E(EACCES) PROV_E(EFAULT)
    PROV_E(EBUSY) PROV_E(EEXIST) PROV_E(ENODEV) PROV_E(ENOTDIR) PROV_E(EISDIR)
    PROV_E(EINVAL) PROV_E(ENFILE) PROV_E(EMFILE) PROV_E(ENOSPC) PROV_E(EROFS)
    PROV_E(ERANGE) PROV_E(ENAMETOOLONG) PROV_E(ELOOP) PROV_E(EOPNOTSUPP)
    PROV_E(EPROTONOSUPPORT) PROV_E(ETIMEDOUT) PROV_E(EXDEV) PROV_E(ENOTEMPTY)
    PROV_E(ESRCH) PROV_E(EINTR)
#undef PROV_E
    default: return "errno " + std::to_string(err);
  }
}

Status ErrnoToStatus(int err, std::string_view what) {
  StatusCode code = StatusCode::kInternal;
  switch (err) {
    case ENOENT: case ENODEV: case ENXIO: code = StatusCode::kNotFound; break;
    case EPERM: case EACCES: case EROFS: code = StatusCode::kPermissionDenied; break;
    case EINVAL: case ERANGE: case E2BIG: code = StatusCode::kInvalidArgument; break;
    case EBUSY: case EAGAIN: case EINTR: code = StatusCode::kUnavailable; break;
    case EEXIST: code = StatusCode::kAlreadyExists; break;
    case ETIMEDOUT: code = StatusCode::kDeadlineExceeded; break;
    case EOPNOTSUPP: case EPROTONOSUPPORT: code = StatusCode::kFailedPrecondition; break;
    default: break;
  }
  std::string msg(what);
  msg += ": ";
  msg += ErrnoName(err);
  msg += " (";
  msg += std::strerror(err);
  msg += ")";
  return Status(code, std::move(msg), err);
}

}  // namespace provisioner
