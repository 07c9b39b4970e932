#include "test/support/files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "gtest/gtest.h"
#include "test/support/ttar.h"

namespace provisioner::testing {

std::string ExtractedHostTree(const std::string& name) {
  std::string dir = MakeTempDir(name);
  Status s = ExtractTtar(HostTreePath(name), dir);
  EXPECT_TRUE(s.ok()) << s.message();
  return dir;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool Exists(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

void KernelWrite(const std::string& path, const std::string& value) {
  int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  ASSERT_GE(fd, 0) << path;
  ASSERT_EQ(::write(fd, value.data(), value.size()), static_cast<ssize_t>(value.size()));
  ASSERT_EQ(::close(fd), 0);
}

bool WaitFor(const std::function<bool()>& cond, int ms) {
  auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (std::chrono::steady_clock::now() < end) {
    if (cond()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return cond();
}

}  // namespace provisioner::testing
