#include "test/support/host_yaml.h"

namespace provisioner::testing {

std::string HostYaml(const std::string& spec, const std::string& name) {
  return "apiVersion: provisioner/v1alpha1\nkind: HostConfig\nmetadata:\n  name: " + name +
         "\nspec:\n" + spec;
}

std::string PfNic(const std::string& name, const std::string& pci, int num_vfs,
                  const std::string& extra) {
  return "    - name: " + name + "\n      nicSelector: { rootDevices: [\"" + pci +
         "\"] }\n      numVfs: " + std::to_string(num_vfs) + "\n" + extra;
}

std::string Pf0Yaml(int num_vfs, const std::string& extra) {
  return HostYaml("  nics:\n" + PfNic("pf0", "0000:af:00.0", num_vfs, extra));
}

std::string TwoPfsYaml() {
  return HostYaml("  nics:\n" + PfNic("pf0", "0000:af:00.0", 4) + PfNic("pf1", "0000:af:00.1", 4));
}

std::string HgxPcieYaml() {
  return HostYaml(R"(  pcie:
    disableAcs: gpuNicPaths
  nics:
    - name: rails
      nicSelector: { vendor: "15b3", deviceID: "1021" }
      pcie: { maxReadRequest: 4096 }
)",
                  "hgx");
}

std::string RailsYaml(const std::string& nic_extra) {
  return HostYaml(R"(  rails:
    count: 8
    hostIndex: 7
    routes: ["172.16.0.0/16"]
    nic:
      name: "gpu{n}-nic"
      nicSelector: { vendor: "15b3", deviceID: "1021" }
      linkType: eth
      addresses: ["172.16.{n}.{host}/24"]
      routing: { gateway: "172.16.{n}.254" }
)" + nic_extra,
                  "gpu-worker7");
}

}  // namespace provisioner::testing
