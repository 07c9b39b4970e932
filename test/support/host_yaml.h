// host.yaml texts for tests: the HostConfig envelope (apiVersion, kind,
// metadata.name) around the spec a test is about, and the SR-IOV specs of
// the cx5-roce tree that many tests apply, so each test writes only what it
// is about.
#ifndef PROVISIONER_TEST_SUPPORT_HOST_YAML_H_
#define PROVISIONER_TEST_SUPPORT_HOST_YAML_H_

#include <string>

namespace provisioner::testing {

// "apiVersion: provisioner/v1alpha1\nkind: HostConfig\nmetadata:\n  name:
// <name>\nspec:\n" followed by `spec` (its lines indented by two spaces, as
// under `spec:`).
std::string HostYaml(const std::string& spec, const std::string& name = "worker1");

// The spec lines of one nics entry `name` selecting the PF `pci` by its
// address with `num_vfs` VFs, then `extra` (lines indented by six spaces,
// e.g. "      mtu: 9000\n").
std::string PfNic(const std::string& name, const std::string& pci, int num_vfs,
                  const std::string& extra = "");

// cx5-roce's first PF (pf0, 0000:af:00.0) with `num_vfs` VFs and `extra`.
std::string Pf0Yaml(int num_vfs, const std::string& extra = "");
// cx5-roce's two PFs (pf0 0000:af:00.0, pf1 0000:af:00.1) with 4 VFs each.
std::string TwoPfsYaml();
// host "hgx" (the hgx-h100-pcie tree): ACS off on the GPU-NIC paths and
// MaxReadReq 4096 on the rail NICs, the eight ConnectX-7 (15b3:1021; not
// the ConnectX-6 Dx beside GPUs 0 and 4).
std::string HgxPcieYaml();
// host "gpu-worker7" (the hgx-h100 tree): spec.rails over its eight ConnectX-7
// (count 8, hostIndex 7, remote route 172.16.0.0/16), each rail nic Ethernet
// with the address 172.16.{n}.{host}/24 and the gateway 172.16.{n}.254, then
// `nic_extra` (more fields of the rail nic, lines indented by six spaces).
std::string RailsYaml(const std::string& nic_extra = "");

}  // namespace provisioner::testing

#endif  // PROVISIONER_TEST_SUPPORT_HOST_YAML_H_
