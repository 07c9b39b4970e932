// The tree backend of address_backend.h, and the capture format both share.
#include <algorithm>
#include <cerrno>
#include <utility>
#include <sstream>

#include "engine/config/ip.h"
#include "modules/link/address_backend.h"
#include "modules/link/link_backend.h"

namespace provisioner {

std::optional<std::string> CanonicalCidr(const std::string& text) {
  if (text.find('/') == std::string::npos) return std::nullopt;
  auto p = config::ParseCidr(text);
  if (!p) return std::nullopt;
  return config::FormatIp(p->address) + "/" + std::to_string(p->length);
}

std::string RenderAddressCapture(const std::map<std::string, std::vector<std::string>>& by_if) {
  std::string out;
  for (const auto& [ifname, list] : by_if) {
    for (const std::string& a : list) out += ifname + " " + a + "\n";
  }
  return out;
}

std::map<std::string, std::vector<std::string>> ParseAddressCapture(const std::string& text) {
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

class Tree : public NetdevAddressBackend {
 public:
  Tree(HostFs& fs, std::string capture) : fs_(fs), capture_(std::move(capture)) {}
  std::string Name() const override { return "tree"; }

  StatusOr<std::vector<std::string>> Read(const std::string& ifname) override {
    RETURN_IF_ERROR(CheckNetdevInTree(fs_, ifname));
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
  StatusOr<std::map<std::string, std::vector<std::string>>> Load() const {
    auto text = fs_.ReadFile(capture_);
    if (!text.ok()) {
      if (text.status().err() == ENOENT) return std::map<std::string, std::vector<std::string>>{};
      return text.status();
    }
    return ParseAddressCapture(*text);
  }

  // As the kernel: adding an address there is EEXIST, removing one that is
  // not there EADDRNOTAVAIL.
  Status Edit(const std::string& ifname, const std::string& cidr, bool add) {
    RETURN_IF_ERROR(CheckNetdevInTree(fs_, ifname));
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
    if (all.empty()) return fs_.RemoveFile(capture_).WithContext(what);
    return fs_.WriteFileAtomic(capture_, RenderAddressCapture(all)).WithContext(what);
  }

  HostFs& fs_;
  std::string capture_;
};

}  // namespace

std::unique_ptr<NetdevAddressBackend> NewTreeNetdevAddressBackend(HostFs& fs, const std::string& capture) {
  return std::make_unique<Tree>(fs, capture);
}

}  // namespace provisioner
