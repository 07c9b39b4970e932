#include "modules/firmware/command.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

extern char** environ;

namespace provisioner {
namespace {

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

std::string FindInPath(const std::string& name) {
  if (name.find('/') != std::string::npos) return ::access(name.c_str(), X_OK) == 0 ? name : "";
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t colon = dirs.find(':', start);
    if (colon == std::string::npos) colon = dirs.size();
    std::string dir = dirs.substr(start, colon - start);
    if (dir.empty()) dir = ".";
    std::string full = dir + "/" + name;
    if (::access(full.c_str(), X_OK) == 0) return full;
    start = colon + 1;
  }
  return "";
}

StatusOr<CommandResult> RunCommand(const std::vector<std::string>& argv,
                                   std::chrono::milliseconds timeout, size_t max_output) {
  if (argv.empty()) return InvalidArgumentError("RunCommand: empty argv");
  const std::string& what = argv[0];
  const std::string exe = FindInPath(argv[0]);
  if (exe.empty()) {
    return Status(StatusCode::kNotFound, what + ": ENOENT: not found in PATH", ENOENT);
  }
  int out_pipe[2], err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) return ErrnoToStatus(errno, "pipe for " + what);
  Fd out_r{out_pipe[0]}, out_w{out_pipe[1]};
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) return ErrnoToStatus(errno, "pipe for " + what);
  Fd err_r{err_pipe[0]}, err_w{err_pipe[1]};

  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, out_w.fd, 1);
  posix_spawn_file_actions_adddup2(&fa, err_w.fd, 2);
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, exe.c_str(), &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return ErrnoToStatus(rc, "spawn " + exe);
  ::close(out_w.fd);
  out_w.fd = -1;
  ::close(err_w.fd);
  err_w.fd = -1;

  CommandResult result;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  bool timed_out = false;
  int too_much = -1;  // the stream (1 stdout, 2 stderr) that passed max_output
  pollfd fds[2] = {{out_r.fd, POLLIN, 0}, {err_r.fd, POLLIN, 0}};
  int open_fds = 2;
  char buf[4096];
  while (open_fds > 0 && too_much < 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    int n = ::poll(fds, 2, static_cast<int>(left.count()));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    for (int k = 0; k < 2; ++k) {
      if (fds[k].fd < 0 || fds[k].revents == 0) continue;
      ssize_t r = ::read(fds[k].fd, buf, sizeof buf);
      if (r > 0) {
        std::string& into = k == 0 ? result.out : result.err;
        into.append(buf, static_cast<size_t>(r));
        if (into.size() > max_output) {
          into.resize(max_output);
          too_much = k + 1;
        }
      } else if (r == 0 || (r < 0 && errno != EINTR && errno != EAGAIN)) {
        fds[k].fd = -1;  // closed; Fd closes it
        --open_fds;
      }
    }
  }
  if (timed_out || too_much > 0) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) {
    return Status(StatusCode::kDeadlineExceeded,
                  what + ": killed after " + std::to_string(timeout.count()) + " ms", ETIMEDOUT);
  }
  if (too_much > 0) {
    return Status(StatusCode::kFailedPrecondition,
                  what + ": killed after printing more than " + std::to_string(max_output) +
                      " bytes on " + (too_much == 1 ? "stdout" : "stderr"),
                  EFBIG);
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

}  // namespace provisioner
