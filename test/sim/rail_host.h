// The 8-rail node of issue 27's boot-path scenario, for the simulator's users
// (//bench:parallel_apply, //test/integration:parallel_apply_test): the HGX
// H100 trees' eight ConnectX-7 rail PFs, and the same host with the rails
// in InfiniBand mode (what an 8-rail NDR fabric runs; VF GUIDs need it).
#ifndef PROVISIONER_TEST_SIM_RAIL_HOST_H_
#define PROVISIONER_TEST_SIM_RAIL_HOST_H_

#include <string>
#include <vector>

#include "test/support/host_tree.h"

namespace provisioner::testing {

// The rail PFs (ConnectX-7, 15b3:1021) of the hgx-h100 presets, by address.
const std::vector<std::string>& HgxRailPfs();

// hgx-h100-pcie (config space, the cards' mstconfig captures) with every
// rail port in InfiniBand: IPoIB netdev `ibp<bus>s0` (type 32, the 20-byte
// address of QPN + GID, MTU 2044: a 2K IB MTU), RDMA port link layer
// InfiniBand with LID and SM LID, GID 0 from the node GUID, and the capture's
// LINK_TYPE_P1 IB(1) (current and next boot), ib_ipoib loaded.
HostSpec IbRailHost();

// host.yaml for the rails of these hosts: one nics entry `rails` selecting
// the ConnectX-7 PFs (15b3:1021) by vendor and device, with `rail_settings`
// (the entry's further keys, indented 6 spaces, one a line), then `sections`
// (further spec sections, indented 2 spaces).
std::string HgxRailsYaml(const std::string& rail_settings, const std::string& sections = "");

// numVfs 8, trust on every VF and MTU 4200 on every rail: what a driver
// reload takes away (the agent's benchmark and tests, the parallel apply).
extern const char kRailVfsTrustMtu[];

// A fresh directory in memory (/dev/shm) when there is one, else in the
// test's temporary directory: sysfs is in memory, and on a disk the
// simulator's file creation (about 40 files a VF) would be what a timing
// measures, not the kernel's waits. The caller removes it.
std::string MemoryTempDir(const std::string& prefix);

// Builds `spec` into a fresh MemoryTempDir and enables `initial_vfs` VFs
// (netdevs and RDMA devices present) on each of HgxRailPfs(). Returns the
// root, or "" with `error` set.
std::string BuildRailTree(const HostSpec& spec, int initial_vfs, std::string* error);

}  // namespace provisioner::testing

#endif  // PROVISIONER_TEST_SIM_RAIL_HOST_H_
