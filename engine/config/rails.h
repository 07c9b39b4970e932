// spec.rails: one block for the AI-cluster rail layout (one NIC per GPU, each
// with its IP pool and multus config), expanded into spec.nics, spec.ipPools
// and spec.multusConfigs before the schema and the semantic rules run, so
// expanded items are checked like written ones:
//
//   rails:
//     count: 8                 # 1-64, or allGpus (= the GPUs of the host)
//     nic:                     # a spec.nics[] item; nicSelector.nearGpu = n-1
//       name: "gpu{n}-nic"
//       nicSelector: { vendor: "15b3", deviceID: "1021" }
//       numVfs: 12
//       resourceName: "gpu{n}sriov"
//     ipPool:                  # optional, a spec.ipPools[] item
//       name: "gpu{n}-net{10+n}"
//       subnet: "172.16.{10+n}.0/24"
//     multus:                  # optional, a spec.multusConfigs[] item;
//       name: "gpu{n}-sriov"   # nic and ippools are this rail's
//       cniType: sriov
//
// Templates, in every string of nic/ipPool/multus: {n} = the 1-based rail
// number, {A+n} / {n+A} / {n-A} = that arithmetic (A a decimal integer),
// {host} = spec.rails.hostIndex (this host's number in the rails' subnets).
// rails.routes are appended to every rail's nic.routing.routes.
// Names default to "rail{n}". Expanded items are appended after the written
// ones; their source marks point at the rails fields they came from, and
// diagnostics about them name the rails field ("spec.rails.nic.numVfs:
// rail 3 (spec.nics[2]): ...").
#ifndef PROVISIONER_ENGINE_CONFIG_RAILS_H_
#define PROVISIONER_ENGINE_CONFIG_RAILS_H_

#include <optional>
#include <string>
#include <vector>

#include "engine/config/yaml_document.h"
#include "engine/model/desired.h"
#include "engine/model/source_mark.h"

namespace provisioner::config {

inline constexpr int kMaxRails = 64;
inline constexpr const char* kAllGpus = "allGpus";

// Where an expanded item came from.
using RailItem = RailOrigin;

struct RailsExpansion {
  bool present = false;   // spec.rails is in the file
  bool all_gpus = false;  // count: allGpus
  bool deferred = false;  // allGpus without a GPU count: nothing expanded
  int count = 0;          // rails expanded
  std::vector<RailItem> items;
};

// Expands doc->root's spec.rails in place (rails itself stays, for the
// schema) and adds marks for the new paths. `gpu_count` is the host's GPU
// count for count: allGpus (nullopt: defer). Template errors go to `diags`.
// A rails block of the wrong shape is left to the schema check.
RailsExpansion ExpandRails(YamlDocument* doc, std::optional<int> gpu_count,
                           std::vector<Diagnostic>* diags);

// Rewrites diagnostics about expanded items to name the rails field they
// came from (spec.rails.count for a rail's nearGpu), keeping the first of
// identical ones (a bad template field fails in every rail).
std::vector<Diagnostic> AttributeToRails(const RailsExpansion& rails,
                                         std::vector<Diagnostic> diags);
// The same for diagnostics found later (plan time), from the state's origins.
std::vector<Diagnostic> AttributeToRails(const std::vector<RailOrigin>& items,
                                         std::vector<Diagnostic> diags);

// Substitutes the templates of `text` for rail `n`; nullopt and `error` set
// when a {...} is not one of the forms above.
// {host} is `host` (spec.rails.hostIndex); without one it is an error.
std::optional<std::string> ExpandRailTemplate(const std::string& text, int n, std::string* error,
                                              std::optional<long> host = std::nullopt);

}  // namespace provisioner::config

#endif  // PROVISIONER_ENGINE_CONFIG_RAILS_H_
