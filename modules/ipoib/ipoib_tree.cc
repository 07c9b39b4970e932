// The tree backend of ipoib_backend.h, and the capture format both share.
#include <algorithm>
#include <cerrno>
#include <sstream>

#include "engine/config/ip.h"
#include "modules/ipoib/ipoib_backend.h"
#include "modules/link/link_backend.h"

namespace provisioner {

std::optional<std::string> CanonicalCidr(const std::string& text) {
  if (text.find('/') == std::string::npos) return std::nullopt;
  auto p = config::ParseCidr(text);
  if (!p) return std::nullopt;
  return config::FormatIp(p->address) + "/" + std::to_string(p->length);
}

std::string RenderIpoibAddresses(const std::map<std::string, std::vector<std::string>>& by_if) {
  std::string out;
  for (const auto& [ifname, list] : by_if) {
    for (const std::string& a : list) out += ifname + " " + a + "\n";
  }
  return out;
}

std::map<std::string, std::vector<std::string>> ParseIpoibAddresses(const std::string& text) {
  std::map<std::string, std::vector<std::string>> out;
  std::istringstream in(text);
  std::string ifname, cidr;
  while (in >> ifname >> cidr) {
    if (auto c = CanonicalCidr(cidr)) out[ifname].push_back(*c);
  }
  for (auto& [ifname, list] : out) std::sort(list.begin(), list.end());
  return out;
}

namespace {

class Tree : public IpoibAddressBackend {
 public:
  explicit Tree(HostFs& fs) : fs_(fs) {}
  std::string Name() const override { return "tree"; }

  StatusOr<std::vector<std::string>> Read(const std::string& ifname) override {
    RETURN_IF_ERROR(CheckNetdev(ifname));
    ASSIGN_OR_RETURN(auto all, Load());
    return all[ifname];
  }

  Status Add(const std::string& ifname, const std::string& cidr) override {
    return Edit(ifname, cidr, true);
  }
  Status Remove(const std::string& ifname, const std::string& cidr) override {
    return Edit(ifname, cidr, false);
  }

 private:
  Status CheckNetdev(const std::string& ifname) const {
    if (!IsValidIfname(ifname)) return InvalidArgumentError("bad interface name " + ifname);
    if (!fs_.Exists("/sys/class/net/" + ifname)) {
      return Status(StatusCode::kNotFound, "/sys/class/net/" + ifname + ": ENODEV: no such netdev",
                    ENODEV);
    }
    return OkStatus();
  }

  StatusOr<std::map<std::string, std::vector<std::string>>> Load() const {
    auto text = fs_.ReadFile(kIpoibAddressCapture);
    if (!text.ok()) {
      if (text.status().err() == ENOENT) return std::map<std::string, std::vector<std::string>>{};
      return text.status();
    }
    return ParseIpoibAddresses(*text);
  }

  // As the kernel: adding an address there is EEXIST, removing one that is
  // not there EADDRNOTAVAIL.
  Status Edit(const std::string& ifname, const std::string& cidr, bool add) {
    RETURN_IF_ERROR(CheckNetdev(ifname));
    auto canonical = CanonicalCidr(cidr);
    if (!canonical) return InvalidArgumentError(cidr + " is no address with a prefix length");
    ASSIGN_OR_RETURN(auto all, Load());
    std::vector<std::string>& list = all[ifname];
    auto it = std::find(list.begin(), list.end(), *canonical);
    const std::string what = std::string(add ? "add " : "remove ") + *canonical + " on " + ifname;
    if (add && it != list.end()) return ErrnoToStatus(EEXIST, what);
    if (!add && it == list.end()) return ErrnoToStatus(EADDRNOTAVAIL, what);
    if (add) {
      list.push_back(*canonical);
      std::sort(list.begin(), list.end());
    } else {
      list.erase(it);
    }
    if (list.empty()) all.erase(ifname);
    if (all.empty()) return fs_.RemoveFile(kIpoibAddressCapture).WithContext(what);
    return fs_.WriteFileAtomic(kIpoibAddressCapture, RenderIpoibAddresses(all)).WithContext(what);
  }

  HostFs& fs_;
};

}  // namespace

std::unique_ptr<IpoibAddressBackend> NewTreeIpoibAddressBackend(HostFs& fs) {
  return std::make_unique<Tree>(fs);
}

}  // namespace provisioner
