// A planned change and the plan: what apply will do, in order.
#ifndef PROVISIONER_ENGINE_PLAN_CHANGE_H_
#define PROVISIONER_ENGINE_PLAN_CHANGE_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/base/status.h"
#include "engine/model/source_mark.h"
#include "nlohmann/json.hpp"

namespace provisioner {

enum class Disruption { kLive, kReboot, kFirmwareReset };
const char* DisruptionName(Disruption d);  // "live" | "reboot" | "firmware-reset"
Disruption DisruptionFromName(const std::string& name);
// A live change that takes the port's link down and up while it is made
// (mlx5 toggles the port on every PFC change): shown and counted as its own
// disruption, "link-flap", so that an operator gating on disruption sees it.
// It needs no reboot: apply makes it now, verifies it, and exits 0.
inline constexpr char kLinkFlapName[] = "link-flap";

// The apply order across modules, in one place. BuildPlan sorts changes by
// phase (stable: within a phase, in module then desired-state order), so a
// module only says which phase a change belongs to. Each phase needs what the
// ones before it set up (kernel-facts.md):
//  1. firmware (LINK_TYPE_P<n>, SRIOV_EN, NUM_OF_VFS): decides port types and
//     how many VFs can exist at all; it takes effect only after a reboot, so
//     it runs first and everything after it works with the running values.
//  2. kernel modules (and their modprobe.d options): drivers the later steps
//     bind to (vfio_pci, mlx5_ib) must be loaded first.
//  3. RDMA netns mode (ib_core, loaded by step 2): how RDMA devices are shared
//     between network namespaces; set before the VFs' RDMA devices appear.
//  4. sriov_drivers_autoprobe: applies only to VFs created afterwards.
//  4b. E-Switch mode of drivers that change it only without VFs (ice):
//     before numVfs creates them.
//  5. numVfs (0 first between non-zero counts): creates the VFs; waits for
//     their netdevs. Writing 0 destroys every VF with its settings.
//  5b. E-Switch mode (devlink) of mlx5 PFs: after numVfs, with the VFs
//     unbound around it (the change rebinds them), before their settings.
//  6. per-VF settings (MAC, trust, spoof check, IB GUIDs in two messages,
//     then an unbind/rebind for mlx5 to pick the GUIDs up): need the VFs,
//     and are lost if numVfs runs after them.
//  7. VF driver binding (vfio-pci or back to the PF's VF driver): after the
//     settings, which need the netdev the network driver provides.
//  8. links (PF mtu and up, VF netdevs up): on the netdevs that the
//     steps before created or rebound (a rebind makes a new netdev).
//  8b. RoCE QoS (DCB trust and PFC, ECN per priority) of the PF netdevs:
//     live settings of netdevs that exist by now; before PCIe so the phases
//     stay in the order of the network stack.
//  8c. rails (addresses, IPv4 conf sysctls, policy-routing tables and
//     rules of the PF netdevs): on netdevs that are up, by their current names.
//  9. PCIe config space (ACS Control of switch ports, PF Max_Read_Request_Size):
//     live register writes that none of the steps above needs; last, so a
//     failed earlier step leaves them untouched.
// 10. persistent names (udev rules, then the PF netdev and RDMA device
//     renamed live): after every change that addresses a netdev or RDMA
//     device by the name it has now.
enum ApplyPhase : int {
  kPhaseFirmware = 10,
  kPhaseKernelModules = 20,
  kPhaseRdmaNetns = 30,
  kPhaseSriovAutoprobe = 40,
  kPhaseEswitchBeforeVfs = 45,
  kPhaseNumVfs = 50,
  kPhaseEswitch = 55,
  kPhaseVfSettings = 60,
  kPhaseVfBinding = 70,
  kPhaseLinks = 80,
  kPhaseRoce = 85,
  kPhaseRails = 87,
  kPhasePcie = 90,
  kPhaseNames = 95,
};

struct Change {
  std::string id;         // "sriov/0000:af:00.0/numVfs"
  std::string module;     // "sriov"
  std::string target;     // "0000:af:00.0"
  std::string attribute;  // "numVfs"
  nlohmann::json before;  // current value (null when absent)
  nlohmann::json after;   // desired value (null = remove)
  Disruption disruption = Disruption::kLive;
  // With kLive only: the change flaps the link (kLinkFlapName). Kept apart
  // from `disruption`, which says when a change takes effect (now, or after
  // a reboot), so that everything deciding reboots reads that alone.
  bool link_flap = false;
  std::string reason;      // "nic gpu1-nic wants 12 VFs"
  int phase = 0;           // ApplyPhase; not shown to users
  std::string field_path;  // desired-state path behind it ("spec.nics[0].numVfs")
  nlohmann::json detail;   // module-private data apply needs (paths, ...)
  // The dependency graph (BuildPlanGraph). The one thing this change acts on,
  // as "<kind>:<name>" (ResourceKinds()): "pf:0000:af:00.0" (a PF, its VFs,
  // their settings, drivers and netdevs), "card:0000:af:00.0" (a card's
  // firmware), "pci:0000:ae:00.0" (a bridge's config space), "file:<path>".
  // "" is the whole host: a barrier that follows every change before it and
  // that every change after it follows (a kernel module load, the RDMA netns
  // mode, and any change whose module names no resource).
  std::string resource;
  // Resources whose changes planned before this one must be verified before
  // it starts (beyond its own resource's, which always are).
  std::vector<std::string> depends_on;
};

// A change with the id every change has, "<module>/<target>/<attribute>",
// and an empty `detail` object for the module to fill.
Change MakeChange(std::string_view module, const std::string& target, const std::string& attribute,
                  nlohmann::json before, nlohmann::json after, Disruption disruption, int phase,
                  std::string reason, std::string field_path);

// The disruption as plans show it: DisruptionName, or "link-flap" for a
// live change that flaps the link.
std::string DisruptionLabel(const Change& c);

// Every field, for the journal and saved plan files (not the user-facing
// shape, which is engine/output's ChangeToJson).
nlohmann::json ChangeToRecord(const Change& c);
// Reads one back: a record of the wrong shape (a hand-edited or truncated
// journal or plan file) is an error naming the field, never an exception.
StatusOr<Change> ParseChangeRecord(const nlohmann::json& j);

// A saved plan (plan --out): the changes and what they were planned from.
struct SavedPlan {
  std::string root;
  std::string desired_file;    // absolute path of the host.yaml
  std::string desired_digest;  // Digest() of its bytes
  std::string facts_digest;    // digest of the discovered facts
  std::vector<Change> changes;
};
inline constexpr const char* kSavedPlanKind = "ProvisionerPlan";
// The formatVersion of the saved plans this binary writes and reads
// (engine/output/render.h kFormatVersion).
inline constexpr int kSavedPlanFormatVersion = 1;
// nullopt: `text` is not a saved plan (not JSON of kind ProvisionerPlan);
// an error: it claims to be one but is malformed.
StatusOr<std::optional<SavedPlan>> ParseSavedPlan(std::string_view text);

// The kinds a resource may name ("pf", "card", "pci", "netdev", "kmod", "file").
const std::vector<std::string>& ResourceKinds();

// The plan as a dependency graph over plan order: change i follows the
// last earlier change on its resource, the last earlier barrier (resource
// ""), every earlier change on a resource in its `depends_on`, and a barrier
// follows every earlier change. Edges only go forward in plan order, so plan
// order is a topological order and apply at parallelism 1 is today's order.
struct PlanGraph {
  std::vector<std::vector<size_t>> preds;  // per change, ascending
  std::vector<std::vector<size_t>> succs;  // per change, ascending
  // The longest chain, in changes (the critical path when every change takes
  // the same time).
  size_t longest_chain = 0;
};
// An error names the change (index and id): a resource of no known kind, or
// a `depends_on` a resource that has a change planned after this one (the
// declared order contradicts the plan's: a cycle).
StatusOr<PlanGraph> BuildPlanGraph(const std::vector<Change>& changes);

// FNV-1a 64 as 16 hex digits: change detection for saved plans, not security.
std::string Digest(const std::string& bytes);

struct Plan {
  std::vector<Change> changes;
  std::vector<std::string> warnings;
  // Ids of planned changes that an earlier apply made and the kernel
  // deferred to the next boot (run/provisioner/pending-reboot, gone with
  // /run at the reboot): planned again until then, shown as pending.
  std::vector<std::string> pending_reboot;
  // PFs with VFs (sriov numVfs > 0) that no nic of the desired state selects:
  // left as they are, said with "matches the desired state" so that a plan
  // without changes does not read as "every VF is managed". Counted by the
  // module that knows selection (sriov), through PlanSink.
  int unmanaged_pfs_with_vfs = 0;
  // Values already set for the next boot that the running host does not
  // have yet (firmware: mstconfig's Next Boot column reads the desired
  // value, Current does not): nothing to change, a reboot pending. Shown
  // and counted with pending_reboot; not in `changes` (apply has nothing
  // to write for them).
  std::vector<Change> set_for_next_boot;
  bool RebootRequired() const;
  int LinkFlaps() const;  // changes whose DisruptionLabel is "link-flap"
};

// Collects what modules plan: changes, and problems tied to field paths.
class PlanSink {
 public:
  void AddChange(Change c) { changes_.push_back(std::move(c)); }
  void Error(std::string path, std::string message) {
    diagnostics_.push_back({Severity::kError, std::move(path), std::move(message)});
  }
  void Warning(std::string path, std::string message) {
    diagnostics_.push_back({Severity::kWarning, std::move(path), std::move(message)});
  }
  // Plan::unmanaged_pfs_with_vfs: added up over the modules that count them.
  void UnmanagedPfsWithVfs(int n) { unmanaged_pfs_with_vfs_ += n; }
  // Plan::set_for_next_boot: `c` (current -> desired) is set, pending a reboot.
  void SetForNextBoot(Change c) { set_for_next_boot_.push_back(std::move(c)); }
  std::vector<Change>& set_for_next_boot() { return set_for_next_boot_; }
  std::vector<Change>& changes() { return changes_; }
  const std::vector<Diagnostic>& diagnostics() const { return diagnostics_; }
  int unmanaged_pfs_with_vfs() const { return unmanaged_pfs_with_vfs_; }

 private:
  std::vector<Change> changes_;
  std::vector<Diagnostic> diagnostics_;
  int unmanaged_pfs_with_vfs_ = 0;
  std::vector<Change> set_for_next_boot_;
};

}  // namespace provisioner

#endif  // PROVISIONER_ENGINE_PLAN_CHANGE_H_
