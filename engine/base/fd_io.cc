#include "engine/base/fd_io.h"

#include <unistd.h>

#include <cerrno>

namespace provisioner {

int ReadAll(int fd, std::string* out, size_t max_bytes, bool short_read_is_eof) {
  char buf[64 * 1024];
  size_t total = 0;
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (n == 0) return 0;
    out->append(buf, static_cast<size_t>(n));
    total += static_cast<size_t>(n);
    if (total > max_bytes) return EFBIG;
    if (short_read_is_eof && static_cast<size_t>(n) < sizeof buf) return 0;
  }
}

int WriteAll(int fd, std::string_view data) {
  size_t off = 0;
  while (off < data.size()) {
    const ssize_t n = ::write(fd, data.data() + off, data.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    off += static_cast<size_t>(n);
  }
  return 0;
}

}  // namespace provisioner
