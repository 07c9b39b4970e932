// Selector matching: which PFs does a NicSpec select? Pure (no host access).
#ifndef PROVISIONER_ENGINE_MODEL_SELECTOR_H_
#define PROVISIONER_ENGINE_MODEL_SELECTOR_H_

#include <vector>

#include "engine/model/desired.h"
#include "engine/model/host_model.h"

namespace provisioner {

// True when every field given in `sel` matches `pf` (a PF, not a VF).
// vendor/deviceID compare case-insensitively; rootDevices by PCI address
// (a short "af:00.0" means domain 0000); pfNames by any netdev of the PF.
bool SelectorMatches(const NicSelector& sel, const PciFunction& pf);

// All PFs (network class, not VFs) matched by `nic`, in address order.
// With nicSelector.nearGpu: the one PF nearest to that GPU (topology.h), or
// none when the GPU does not exist or its nearest NIC is at NODE/SYS level
// without allowRemote.
std::vector<const PciFunction*> SelectPfs(const NicSpec& nic, const HostFacts& facts);

}  // namespace provisioner

#endif  // PROVISIONER_ENGINE_MODEL_SELECTOR_H_
