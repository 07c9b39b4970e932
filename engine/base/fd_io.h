// Whole reads and writes on a file descriptor: read(2) and write(2) may
// return less than asked, or fail with EINTR when a signal arrives, and
// every caller would otherwise loop on that itself. Errors come back as the
// errno, so that each caller words its own message (and closes, unlinks or
// counts what it must) as before.
#ifndef PROVISIONER_ENGINE_BASE_FD_IO_H_
#define PROVISIONER_ENGINE_BASE_FD_IO_H_

#include <cstddef>
#include <limits>
#include <string>
#include <string_view>

namespace provisioner {

// Reads `fd` from its offset to end of file, appending to `*out`; retries a
// read interrupted by a signal. Returns 0, or the errno of the read that
// failed (`*out` then has what came before it), or EFBIG as soon as more
// than `max_bytes` were read (a bound for files a user names). Does not
// close `fd`. With `short_read_is_eof` (for a regular file, whose read
// returns less than asked only at its end), a short read ends the loop
// without the read that would return 0.
int ReadAll(int fd, std::string* out, size_t max_bytes = std::numeric_limits<size_t>::max(),
            bool short_read_is_eof = false);

// Writes all of `data` to `fd`, however many write(2) calls that takes;
// retries a write interrupted by a signal. Returns 0 or the errno of the
// write that failed. Does not close `fd`.
int WriteAll(int fd, std::string_view data);

// Opens `path` O_WRONLY|O_CREAT|O_CLOEXEC|`flags` (mode 0644), writes all of
// `data` and closes it. Returns 0, or the errno of the step that failed, which
// `*step` names: "create", "write" or "close".
int WriteFile(const std::string& path, int flags, std::string_view data, const char** step);

// Reads the file at `path` (a file a user names: host.yaml, a saved plan)
// whole into `*out`, at most `max_bytes`. Opened O_NONBLOCK, so that a FIFO
// without a writer opens at once instead of waiting for one (forever), then
// checked on the descriptor. A directory is EISDIR. Anything else but a
// regular file is refused (-1, `*not_regular` naming its type: "a FIFO"),
// unless `streams_ok`: then a FIFO or character device is read to its end,
// bounded (a pipe from `<(...)`; a FIFO with no writer reads as empty).
// Returns 0; the errno of the failed open or read; EFBIG past `max_bytes`;
// or -1.
int ReadRegularFile(const std::string& path, size_t max_bytes, std::string* out,
                    const char** not_regular, bool streams_ok = false);

}  // namespace provisioner

#endif  // PROVISIONER_ENGINE_BASE_FD_IO_H_
