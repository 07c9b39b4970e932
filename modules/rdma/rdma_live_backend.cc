// The live root's rdma backends (rdma_backend.h): RDMA netlink for the netns
// mode, getifaddrs for addresses (stored for `snapshot`).
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>

#include <cerrno>
#include <utility>

#include "modules/rdma/rdma_backend.h"
#include "modules/rdma/rdma_sysfs.h"
#include "spdlog/spdlog.h"

namespace provisioner::rdma {
namespace {

class NetlinkNetnsBackend final : public NetnsBackend {
 public:
  explicit NetlinkNetnsBackend(std::unique_ptr<NetnsModeClient> client)
      : client_(std::move(client)) {}
  StatusOr<std::string> Get() override { return client_->Get(); }
  std::string Source() const override { return "RDMA netlink (RDMA_NLDEV_CMD_SYS_GET)"; }
  Status Set(const std::string& mode, bool* refused) override {
    Status s = client_->Set(mode);
    *refused = s.err() == EBUSY || s.err() == EOPNOTSUPP || s.err() == EPROTONOSUPPORT ||
               s.err() == ENOENT;
    return s;
  }
  bool RetryWhenBusy() const override { return true; }

 private:
  std::unique_ptr<NetnsModeClient> client_;
};

// The addresses in provisioner's own network namespace (no host path:
// getifaddrs asks the kernel over netlink).
class GetifaddrsAddressBackend final : public AddressBackend {
 public:
  explicit GetifaddrsAddressBackend(const HostFs& fs) : fs_(fs) {}
  void Read(RdmaFacts& facts) override {
    ifaddrs* list = nullptr;
    if (getifaddrs(&list) != 0) {
      spdlog::debug("getifaddrs: {}", ErrnoToStatus(errno, "getifaddrs").message());
      return;
    }
    facts.addresses_known = true;
    std::vector<std::pair<std::string, std::string>> answered;
    for (ifaddrs* a = list; a != nullptr; a = a->ifa_next) {
      if (a->ifa_addr == nullptr || a->ifa_name == nullptr) continue;
      char buf[INET6_ADDRSTRLEN] = {};
      if (a->ifa_addr->sa_family == AF_INET) {
        inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(a->ifa_addr)->sin_addr, buf,
                  sizeof buf);
        facts.addresses[a->ifa_name].ipv4.push_back(buf);
      } else if (a->ifa_addr->sa_family == AF_INET6) {
        inet_ntop(AF_INET6, &reinterpret_cast<sockaddr_in6*>(a->ifa_addr)->sin6_addr, buf,
                  sizeof buf);
        facts.addresses[a->ifa_name].ipv6.push_back(buf);
      } else {
        continue;
      }
      answered.emplace_back(a->ifa_name, buf);
    }
    freeifaddrs(list);
    // What a tree root (a snapshot of this host) replays.
    fs_.NoteCapture(kAddressCapture, RenderAddressCapture(answered));
  }

 private:
  const HostFs& fs_;
};

}  // namespace

std::unique_ptr<NetnsBackend> NewNetlinkNetnsBackend(std::unique_ptr<NetnsModeClient> client) {
  return std::make_unique<NetlinkNetnsBackend>(std::move(client));
}

std::unique_ptr<AddressBackend> NewGetifaddrsAddressBackend(const HostFs& fs) {
  return std::make_unique<GetifaddrsAddressBackend>(fs);
}

}  // namespace provisioner::rdma
