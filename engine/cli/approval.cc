// apply's question (terraform's apply): asked whenever a person typed the
// command, decided on stdin and the controlling terminal, never on stdout,
// so `apply host.yaml | tee apply.log` and `apply -o json > result.json`
// still show the plan and ask.
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <optional>
#include <string>

#include "engine/base/interrupt.h"
#include "engine/cli/commands.h"

namespace provisioner::cli {

bool Interactive() {
  if (::isatty(STDIN_FILENO) != 1) return false;
  // A controlling terminal: /dev/tty opens (a daemon handed a pty as stdin
  // has none, and nobody would answer).
  const int fd = ::open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return false;
  ::close(fd);
  return true;
}

std::FILE* PromptStream(const CommonOptions& opt) {
  if (opt.output == "table" && ::isatty(STDOUT_FILENO) == 1) return stdout;
  if (::isatty(STDERR_FILENO) == 1) return stderr;
  // Both redirected (`apply f.yaml > out 2> err`): the terminal itself.
  static std::FILE* tty = std::fopen("/dev/tty", "we");
  return tty != nullptr ? tty : stderr;
}

namespace {

// The answer typed at the prompt, one line from stdin; nullopt at the end of
// the input or when a signal came (Ctrl-C at the prompt cancels at once:
// the wait is a poll on stdin and InterruptGuard's self-pipe, not a
// restarted read).
std::optional<std::string> ReadAnswer() {
  std::string line;
  for (;;) {
    if (InterruptGuard::signal().load() != 0) return std::nullopt;
    struct pollfd fds[2] = {{STDIN_FILENO, POLLIN, 0}, {InterruptFd(), POLLIN, 0}};
    const int r = ::poll(fds, InterruptFd() >= 0 ? 2 : 1, -1);
    if (r < 0 && errno != EINTR) return std::nullopt;
    if (r <= 0 || InterruptGuard::signal().load() != 0) continue;  // checked above
    char ch = 0;
    const ssize_t n = ::read(STDIN_FILENO, &ch, 1);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) return line.empty() ? std::nullopt : std::optional<std::string>(line);
    if (ch == '\n') return line;
    line += ch;
  }
}

}  // namespace

bool Confirm(std::FILE* out, const std::string& question) {
  std::fprintf(out, "%s [y/N] ", question.c_str());
  std::fflush(out);
  std::optional<std::string> read = ReadAnswer();
  if (!read) {
    std::fprintf(out, "\n");
    return false;
  }
  std::string answer = *read;
  while (!answer.empty() && std::isspace(static_cast<unsigned char>(answer.back())))
    answer.pop_back();
  size_t start = 0;
  while (start < answer.size() && std::isspace(static_cast<unsigned char>(answer[start]))) ++start;
  answer = answer.substr(start);
  std::transform(answer.begin(), answer.end(), answer.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  return answer == "y" || answer == "yes";
}

}  // namespace provisioner::cli
