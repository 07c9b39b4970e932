// PCI facts for modules' tests: network PFs as discovery reports them, and
// the pci module's test double for modules that only need such PFs in the
// facts (roce, link): it discovers exactly the functions it is given and
// plans nothing.
#ifndef PROVISIONER_TEST_SUPPORT_FAKE_PCI_MODULE_H_
#define PROVISIONER_TEST_SUPPORT_FAKE_PCI_MODULE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/model/desired.h"
#include "engine/model/host_model.h"
#include "engine/module/module.h"

namespace provisioner::testing {

constexpr uint32_t kEthernetClass = 0x020000;
constexpr uint32_t kInfinibandClass = 0x020700;

// A network PF as discovery reports it: at `bdf`, a ConnectX-5 (15b3:1017)
// unless told otherwise, Ethernet unless told otherwise, with the netdev
// `netdev` (none when empty). Tests add what else they need (driver, SR-IOV).
inline PciFunction NetworkPf(std::string bdf, std::string netdev, std::string vendor = "15b3",
                             std::string device_id = "1017",
                             uint32_t class_code = kEthernetClass) {
  PciFunction f;
  f.pci_address = std::move(bdf);
  f.vendor = std::move(vendor);
  f.device_id = std::move(device_id);
  f.class_code = class_code;
  if (!netdev.empty()) f.netdevs = {std::move(netdev)};
  return f;
}

// host.yaml's side of such a PF: a nic `name` selecting it by its address
// (rootDevices), and a desired state of that one nic.
inline NicSpec NicAt(std::string name, std::string bdf) {
  NicSpec n;
  n.name = std::move(name);
  n.selector.root_devices = {std::move(bdf)};
  return n;
}
inline DesiredState Wanting(NicSpec nic) {
  DesiredState d;
  d.nics.push_back(std::move(nic));
  return d;
}

class FakePciModule final : public Module {
 public:
  explicit FakePciModule(std::vector<PciFunction> functions) : functions_(std::move(functions)) {}
  std::string_view name() const override { return "pci"; }
  Status Discover(HostContext&, HostFacts& facts) override {
    facts.pci.insert(facts.pci.end(), functions_.begin(), functions_.end());
    return OkStatus();
  }
  void Plan(const DesiredState&, const HostFacts&, PlanSink&) const override {}
  Status Apply(const Change&, HostContext&) override { return InternalError("no changes"); }
  Status Verify(const Change&, HostContext&) override { return OkStatus(); }

 private:
  std::vector<PciFunction> functions_;
};

}  // namespace provisioner::testing

#endif  // PROVISIONER_TEST_SUPPORT_FAKE_PCI_MODULE_H_
