// The names planner: persistent names of the PFs of nics with `names`
// (spec.nics[].names: { netdev, rdma }). Pure: a function of the desired
// state and the facts (the pci module's netdevs and RDMA devices of each PF,
// the names module's rules file and phys_port_name).
//
//   names/<rules file>/rules     before [rule lines now] | null  after [rule lines] | null
//   names/<PF BDF>/netdev        before "ens6f0np0"          after "rail1"
//   names/<PF BDF>/rdma          before "mlx5_0"             after "mlx5_rail1"
//
// The rules file holds, per PF in address order, a net rule naming the PF's
// netdev at its `add` event and two infiniband rules: rdma-core's own
// `PROGRAM="rdma_rename %k NAME_FIXED <name>"`, then iproute2's `rdma dev set`
// for a host without it, both PROGRAM so they run before rdma-core's
// 60-rdma-persistent-naming.rules renames the device (RenderNameRules). It
// is the module's own file: with no nic naming anything it is removed.
// The renames run last (kPhaseNames), after every change that addresses
// the netdev or RDMA device by its name now; each takes the link down and
// back, so it is shown as a link flap. A rename's inverse is the rename
// back (before and after swapped); apply finds the device under the PF's
// sysfs directory by either name.
#ifndef PROVISIONER_MODULES_NAMES_NAMES_PLANNER_H_
#define PROVISIONER_MODULES_NAMES_NAMES_PLANNER_H_

#include <string>
#include <vector>

#include "engine/model/desired.h"
#include "engine/model/host_model.h"
#include "engine/plan/change.h"

namespace provisioner {

inline constexpr char kNamesModule[] = "names";
inline constexpr char kRulesAttribute[] = "rules";
inline constexpr char kNetdevAttribute[] = "netdev";
inline constexpr char kRdmaAttribute[] = "rdma";
// Where iproute2 installs `rdma` (Debian/Ubuntu /sbin merged into
// /usr/sbin, RHEL /usr/sbin).
inline constexpr char kRdmaTool[] = "/usr/sbin/rdma";
// rdma-core's renamer, as its own rules call it: udev runs a PROGRAM without
// a path from its library directory (/usr/lib/udev, /lib/udev), where
// rdma-core installs it (kernel-boot/CMakeLists.txt, rdma_udev_executable).
inline constexpr char kRdmaRenameProgram[] = "rdma_rename";

// One PF's names as the rules say them.
struct PfNames {
  std::string pci_address;
  std::string netdev;          // "" = not named
  std::string rdma;            // "" = not named
  std::string phys_port_name;  // the PF netdev's ("p0"), "" when it has none
};

// The rule lines for `pfs`, in PCI address order.
std::vector<std::string> RenderNameRules(std::vector<PfNames> pfs);
// The file apply writes: a comment header, then the lines.
std::string NameRulesFileText(const std::vector<std::string>& lines);
// The rule lines of a rules file as read (comments and blank lines left out).
std::vector<std::string> ParseNameRules(const std::string& text);

void PlanNames(const DesiredState& desired, const HostFacts& facts, PlanSink& sink);

// The PF's own netdev ("" when none): a switchdev representor (phys_port_name
// pf0vf0) sits in the PF's net/ too.
std::string PfNetdevOf(const PciFunction& pf, const HostFacts& facts);

}  // namespace provisioner

#endif  // PROVISIONER_MODULES_NAMES_NAMES_PLANNER_H_
