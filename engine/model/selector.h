// Selector matching: which PFs does a NicSpec select? Pure (no host access).
#ifndef PROVISIONER_ENGINE_MODEL_SELECTOR_H_
#define PROVISIONER_ENGINE_MODEL_SELECTOR_H_

#include <string>
#include <utility>
#include <vector>

#include "engine/model/desired.h"
#include "engine/model/host_model.h"

namespace provisioner {

// "AF:00.0" -> "0000:af:00.0" (lower case, with the domain), as selectors
// compare PCI addresses: the ToString of PciAddress::Parse, or of
// ParseSysfsName (a VMD domain); the text itself when it is no address.
std::string CanonicalPciAddress(const std::string& address);

// True when every field given in `sel` matches `pf` (a PF, not a VF).
// vendor/deviceID compare case-insensitively; rootDevices by PCI address
// (a short "af:00.0" means domain 0000); pfNames by any netdev of the PF.
bool SelectorMatches(const NicSelector& sel, const PciFunction& pf);

// All PFs (network class, not VFs) matched by `nic`, in address order.
// With nicSelector.nearGpu: the one PF nearest to that GPU (topology.h), or
// none when the GPU does not exist or its nearest NIC is at NODE/SYS level
// without allowRemote.
std::vector<const PciFunction*> SelectPfs(const NicSpec& nic, const HostFacts& facts);

// "vendor 15b3, deviceID 1017, rootDevices [0000:af:00.0]": the given fields.
std::string DescribeSelector(const NicSelector& sel);

// One (path, message) per nic whose selector matches no PF on this host,
// whatever the nic asks for (CONTRACT §3: "selectors matching nothing on
// the host (at plan time)" are errors): ("spec.nics[1].nicSelector",
// "selects no PCI function on this host (vendor 15b3, deviceID 101d)").
// nearGpu selectors are left to CheckNearGpu (topology.h), which says why.
std::vector<std::pair<std::string, std::string>> CheckUnmatchedSelectors(
    const DesiredState& desired, const HostFacts& facts);

// Two nics that select the same PF on this host, one (path, message) per
// later nic: "spec.nics[1].nicSelector: selects 0000:af:00.0, also selected
// by spec.nics[0] (rail0)...". Pairs of nearGpu nics are left to
// CheckNearGpu (topology.h), which says which GPUs share the NIC.
std::vector<std::pair<std::string, std::string>> CheckNicOverlaps(const DesiredState& desired,
                                                                  const HostFacts& facts);

}  // namespace provisioner

#endif  // PROVISIONER_ENGINE_MODEL_SELECTOR_H_
