#include "engine/base/fd_io.h"

#include <fcntl.h>
#include <sys/stat.h>
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

int ReadRegularFile(const std::string& path, size_t max_bytes, std::string* out,
                    const char** not_regular, bool streams_ok) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return errno;
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    const int e = errno;
    ::close(fd);
    return e;
  }
  if (S_ISDIR(st.st_mode)) {
    ::close(fd);
    return EISDIR;
  }
  const bool stream = S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode);
  if (!S_ISREG(st.st_mode) && !(streams_ok && stream)) {
    ::close(fd);
    *not_regular = S_ISFIFO(st.st_mode)   ? "a FIFO"
                   : S_ISCHR(st.st_mode)  ? "a character device"
                   : S_ISBLK(st.st_mode)  ? "a block device"
                   : S_ISSOCK(st.st_mode) ? "a socket"
                   : S_ISDIR(st.st_mode)  ? "a directory"
                                          : "of an unknown type";
    return -1;
  }
  if (S_ISREG(st.st_mode) && static_cast<unsigned long long>(st.st_size) > max_bytes) {
    ::close(fd);
    return EFBIG;
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  const int e = ReadAll(fd, out, max_bytes);
  ::close(fd);
  return e;
}

int WriteFile(const std::string& path, int flags, std::string_view data, const char** step) {
  *step = "create";
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | flags, 0644);
  if (fd < 0) return errno;
  *step = "write";
  if (int e = WriteAll(fd, data); e != 0) {
    ::close(fd);
    return e;
  }
  *step = "close";
  return ::close(fd) != 0 ? errno : 0;
}

}  // namespace provisioner
