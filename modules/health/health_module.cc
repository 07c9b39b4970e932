// Module "health": doctor's link health gates (health_checks.h). Discovery
// reads what no other module reads: the PCIe link attributes of the NIC
// PFs, the GPUs and every function on their sysfs paths, and the NVIDIA
// driver's version line. Plans nothing; skipped while planning.
#include <cerrno>
#include <cstdlib>
#include <set>
#include <string>

#include "engine/model/pci_address.h"
#include "engine/model/topology.h"
#include "engine/module/module.h"
#include "engine/module/registry.h"
#include "modules/health/health_checks.h"

namespace provisioner {
namespace {

std::optional<int> ParseWidth(const std::string& text) {
  char* end = nullptr;
  const long w = std::strtol(text.c_str(), &end, 10);
  if (end == text.c_str() || *end != '\0' || w < 0 || w > 32) return std::nullopt;
  return static_cast<int>(w);
}

// The four attributes (drivers/pci/pci-sysfs.c, visible on PCI Express
// functions only); an absent or unreadable one stays empty.
PcieLinkAttrs ReadLinkAttrs(const HostFs& fs, const std::string& bdf) {
  const std::string dir = "/sys/bus/pci/devices/" + bdf + "/";
  PcieLinkAttrs a;
  if (auto s = fs.ReadAttr(dir + "current_link_speed"); s.ok()) a.current_speed = *s;
  if (auto s = fs.ReadAttr(dir + "max_link_speed"); s.ok()) a.max_speed = *s;
  if (auto s = fs.ReadAttr(dir + "current_link_width"); s.ok()) a.current_width = ParseWidth(*s);
  if (auto s = fs.ReadAttr(dir + "max_link_width"); s.ok()) a.max_width = ParseWidth(*s);
  return a;
}

// The BDF components of a sysfs device path.
std::vector<std::string> PathBdfs(const std::string& sysfs_path) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < sysfs_path.size()) {
    size_t next = sysfs_path.find('/', pos);
    if (next == std::string::npos) next = sysfs_path.size();
    std::string part = sysfs_path.substr(pos, next - pos);
    if (PciAddress::ParseSysfsName(part)) out.push_back(std::move(part));
    pos = next + 1;
  }
  return out;
}

class HealthModule final : public DiscoveryModule {
 public:
  std::string_view name() const override { return health::kModuleName; }

  Status Discover(HostContext& ctx, HostFacts& facts) override {
    facts.health = HealthFacts();
    if (ctx.plan_for != nullptr) return OkStatus();  // nothing plans from these
    facts.health.discovered = true;
    const HostFs& fs = *ctx.fs;
    std::set<std::string> wanted;
    bool gpus = false;
    auto add = [&](const PciFunction& f) {
      for (std::string& bdf : PathBdfs(f.sysfs_path)) wanted.insert(std::move(bdf));
      wanted.insert(f.pci_address);
    };
    for (const PciFunction* nic : facts.Nics()) add(*nic);
    for (const PciFunction& f : facts.pci) {
      if (f.IsVf() || !IsGpuFunction(f)) continue;
      add(f);
      gpus = gpus || f.vendor == "10de";
    }
    for (const std::string& bdf : wanted) {
      PcieLinkAttrs a = ReadLinkAttrs(fs, bdf);
      if (a.Any()) facts.health.pcie_links[bdf] = std::move(a);
    }
    if (gpus) {
      auto version = fs.ReadFile("/proc/driver/nvidia/version");
      if (version.ok()) {
        std::string line = version->substr(0, version->find('\n'));
        facts.health.nvidia_version = std::move(line);
      } else if (version.status().err() != ENOENT && version.status().err() != ENOTDIR) {
        facts.warnings.push_back("/proc/driver/nvidia/version: " + version.status().message());
      }
    }
    return OkStatus();
  }

  void Check(const DesiredState* desired, const HostFacts& facts, CheckSink& sink) const override {
    health::CheckHealth(desired, facts, sink);
  }
};

}  // namespace

// After pci (functions, sysfs paths, kernel release), kmod (loaded modules),
// rdma (ports) and topology (after every module that completes the NICs).
PROVISIONER_REGISTER_MODULE("health", HealthModule, "pci", "kmod", "rdma", "topology")

}  // namespace provisioner
