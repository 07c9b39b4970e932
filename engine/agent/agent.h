// `provisioner agent FILE`: keeps a host converged after boot. Applies as
// `apply -y` does at start, then sleeps until an event (event_source.h), a
// debounce quiet period, the slow resync, a backoff retry or the watchdog
// wakes it; reconciles (reconcile.h); writes status.json, the NFD local
// source and the metrics. docs/agent.md.
#ifndef PROVISIONER_ENGINE_AGENT_AGENT_H_
#define PROVISIONER_ENGINE_AGENT_AGENT_H_

#include <chrono>
#include <functional>
#include <string>

namespace provisioner::agent {

struct AgentOptions {
  std::string file;  // host.yaml
  std::string root = "/";
  std::chrono::milliseconds debounce{2000};
  std::chrono::milliseconds resync{600000};
  std::chrono::milliseconds settle_timeout{300000};
  std::chrono::milliseconds backoff_base{5000};
  std::chrono::milliseconds backoff_cap{600000};
  std::string metrics_address = "127.0.0.1:9814";  // "" or "off": no endpoint
  bool metrics_address_given = false;              // a non-loopback one is allowed
};

// Runs until SIGTERM/SIGINT (exit 0 after the apply in flight ends) or a
// start-up error (exit 1, said on stderr).
int RunAgent(const AgentOptions& options);

}  // namespace provisioner::agent

#endif  // PROVISIONER_ENGINE_AGENT_AGENT_H_
