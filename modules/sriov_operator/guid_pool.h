// Module "sriov-operator": what the sriov-network-operator's config daemon
// reads from this host. With `externallyManaged: true` policies (what
// `provisioner manifests` emits) the daemon still sets every InfiniBand VF's
// node and port GUID, to random ones unless /etc/sriov-operator/infiniband/guids
// lists them; it would then undo the GUIDs the vf module sets on each sync.
// This module writes that pool, one entry per IB PF with VFs, holding the
// GUIDs the vf module derives (DeriveVfGuid): both set the same ones.
//
// The file is a JSON array of {"pciAddress" | "pfGuid", "guids" |
// "guidsRange": {"start", "end"}} (the operator's ib_guid_config.go, read
// from sriov-network-operator v1.4.0 on; v1.3 sets random GUIDs); VF i gets
// guids[i]. Entries for other PFs are kept as they are; newer daemons fail
// on an IB PF that the file does not list, so every IB PF with VFs is listed.
//
// Change: sriov-operator/<PF>/ibGuidPool, before [GUID per VF | null] after
// [GUID per VF | null], GUIDs as "02:0d:9a:03:00:01:bc:de".
#ifndef PROVISIONER_MODULES_SRIOV_OPERATOR_GUID_POOL_H_
#define PROVISIONER_MODULES_SRIOV_OPERATOR_GUID_POOL_H_

#include <optional>
#include <string>

#include "engine/base/status.h"
#include "engine/model/desired.h"
#include "engine/model/host_model.h"
#include "engine/plan/change.h"
#include "nlohmann/json.hpp"

namespace provisioner {

inline constexpr char kSriovOperatorModule[] = "sriov-operator";
inline constexpr char kIbGuidPoolPath[] = "/etc/sriov-operator/infiniband/guids";
inline constexpr char kIbGuidPoolAttribute[] = "ibGuidPool";

// The pool file's entries; an empty array for an absent file. A file that is
// not a JSON array of objects is an error naming the path (the operator's
// daemon refuses it too).
StatusOr<nlohmann::json> ParseGuidPool(const std::optional<std::string>& text);

// The GUID list of `pci_address` (or of an entry keyed by `pf_guid`, as
// "aa:bb:..."): null when the pool has none.
nlohmann::json PoolEntryGuids(const nlohmann::json& pool, const std::string& pci_address,
                              const std::string& pf_guid);

// `pool` with the entry of `pci_address` (or `pf_guid`) set to `guids`, or
// removed when `guids` is null; a new entry goes last.
nlohmann::json SetPoolEntry(nlohmann::json pool, const std::string& pci_address,
                            const std::string& pf_guid, const nlohmann::json& guids);

// The file's text for `pool` (2-space JSON and a newline).
std::string RenderGuidPool(const nlohmann::json& pool);

// Pure: one change per IB PF with VFs whose pool entry is not the vf
// module's GUIDs.
void PlanGuidPool(const DesiredState& desired, const HostFacts& facts, PlanSink& sink);

}  // namespace provisioner

#endif  // PROVISIONER_MODULES_SRIOV_OPERATOR_GUID_POOL_H_
