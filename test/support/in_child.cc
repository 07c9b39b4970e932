#include "test/support/in_child.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "gtest/gtest.h"
#include "test/support/netns.h"

namespace provisioner::testing {

std::string RunInChild(const std::function<std::string()>& body) {
  int pipefd[2];
  if (::pipe(pipefd) != 0) {
    ADD_FAILURE() << "pipe: " << std::strerror(errno);
    return "";
  }
  const pid_t pid = ::fork();
  if (pid < 0) {
    ADD_FAILURE() << "fork: " << std::strerror(errno);
    return "";
  }
  if (pid == 0) {
    ::close(pipefd[0]);
    const std::string out = body();
    (void)!::write(pipefd[1], out.data(), out.size());
    ::_exit(0);
  }
  ::close(pipefd[1]);
  std::string out;
  char buf[1024];
  for (ssize_t n; (n = ::read(pipefd[0], buf, sizeof buf)) > 0;) {
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(pipefd[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status)) << "the child ended by signal " << WTERMSIG(status) << "\n" << out;
  return out;
}

std::string RunInTestNetns(bool with_macvlan, const std::function<std::string()>& body) {
  return RunInChild([&]() -> std::string {
    if (std::string why = EnterTestNetns(with_macvlan); !why.empty()) return "SKIP " + why;
    return body();
  });
}

}  // namespace provisioner::testing
