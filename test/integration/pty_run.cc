#include "test/integration/pty_run.h"

#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>

#include "gtest/gtest.h"

namespace provisioner::testing {

PtyResult RunInPty(const std::vector<std::string>& argv, const std::string& wait_for,
                   const std::string& answer, const std::map<std::string, std::string>& env,
                   int columns) {
  PtyResult r;
  int master = -1;
  struct winsize size = {};
  size.ws_row = 24;
  size.ws_col = static_cast<unsigned short>(columns);
  pid_t pid = ::forkpty(&master, nullptr, nullptr, columns > 0 ? &size : nullptr);
  if (pid < 0) return r;
  if (pid == 0) {
    ::unsetenv("NO_COLOR");
    for (const auto& [k, v] : env) ::setenv(k.c_str(), v.c_str(), 1);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  char buf[4096];
  while (std::chrono::steady_clock::now() < deadline) {
    struct pollfd p = {master, POLLIN, 0};
    int n = ::poll(&p, 1, 200);
    if (n > 0) {
      ssize_t got = ::read(master, buf, sizeof(buf));
      if (got <= 0) break;  // EIO: every slave fd is closed, the child is gone
      r.out.append(buf, static_cast<size_t>(got));
      if (!r.answered && !wait_for.empty() && !answer.empty() &&
          r.out.find(wait_for) != std::string::npos) {
        EXPECT_EQ(::write(master, answer.data(), answer.size()),
                  static_cast<ssize_t>(answer.size()));
        r.answered = true;
      }
    }
  }
  int status = 0;
  pid_t done = 0;
  while ((done = ::waitpid(pid, &status, WNOHANG)) == 0 &&
         std::chrono::steady_clock::now() < deadline) {
    ::usleep(20000);
  }
  if (done == 0) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
    ::close(master);
    return r;
  }
  ::close(master);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

}  // namespace provisioner::testing
