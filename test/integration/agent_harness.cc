#include "test/integration/agent_harness.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <thread>

#include "test/integration/harness.h"

extern char** environ;

namespace provisioner::testing {

bool WaitUntil(const std::function<bool()>& done, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (done()) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

AgentProcess::AgentProcess(const std::string& file, const std::string& root,
                           const std::vector<std::string>& args)
    : root_(root), log_(WriteTempFile("agent.log", "")) {
  std::vector<std::string> argv = {
      ProvisionerBinary(), "--no-color", "-v", "agent", file, "--root", root,
      "--metrics-address", "127.0.0.1:0"};
  argv.insert(argv.end(), args.begin(), args.end());
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, log_.c_str(), O_WRONLY | O_APPEND, 0);
  std::vector<char*> c;
  for (const auto& a : argv) c.push_back(const_cast<char*>(a.c_str()));
  c.push_back(nullptr);
  if (posix_spawn(&pid_, c[0], &fa, nullptr, c.data(), environ) != 0) pid_ = -1;
  posix_spawn_file_actions_destroy(&fa);
}

AgentProcess::~AgentProcess() {
  if (pid_ > 0) Stop();
}

bool AgentProcess::Running() {
  if (pid_ <= 0) return false;
  int status = 0;
  return ::waitpid(pid_, &status, WNOHANG) == 0;
}

int AgentProcess::Stop() {
  if (pid_ <= 0) return -1;
  ::kill(pid_, SIGTERM);
  int status = 0;
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string AgentProcess::Log() const { return ReadFile(log_); }

nlohmann::json AgentProcess::Status() const {
  return nlohmann::json::parse(ReadFile(root_ + "/run/provisioner/status.json"), nullptr, false);
}

bool AgentProcess::WaitReconciled(std::chrono::milliseconds timeout) {
  return WaitUntil(
      [&] {
        nlohmann::json s = Status();
        return s.is_object() && s["lastReconcile"].is_object();
      },
      timeout);
}

std::string ScrapeMetrics(const std::string& address) {
  const int port = std::atoi(address.substr(address.rfind(':') + 1).c_str());
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in sa = {};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<uint16_t>(port));
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string out;
  if (::connect(fd, reinterpret_cast<struct sockaddr*>(&sa), sizeof sa) == 0) {
    const std::string req = "GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
    if (::write(fd, req.data(), req.size()) == static_cast<ssize_t>(req.size())) {
      char buf[65536];
      for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;)
        out.append(buf, static_cast<size_t>(n));
    }
  }
  ::close(fd);
  return out;
}

std::string AgentProcess::Scrape() const {
  nlohmann::json s = Status();
  if (!s.is_object() || !s["metricsAddress"].is_string()) return "";
  return ScrapeMetrics(s["metricsAddress"].get<std::string>());
}

double MetricValue(const std::string& page, const std::string& sample) {
  const std::string needle = "\n" + sample + " ";
  const size_t at = page.find(needle);
  if (at == std::string::npos) return -1;
  return std::strtod(page.c_str() + at + needle.size(), nullptr);
}

}  // namespace provisioner::testing
