#include "modules/sriov_operator/guid_pool.h"

#include <set>

#include "engine/base/strings.h"
#include "engine/model/selector.h"
#include "modules/vf/vf_planner.h"

namespace provisioner {
namespace {

using nlohmann::json;

// "02:0D:..." and "020d:..." as the operator's net.ParseMAC would read them,
// in our spelling; the text itself when it is no GUID.
std::string Canonical(const std::string& guid) {
  auto g = ParseGuid(guid);
  return g ? FormatGuidBytes(*g) : guid;
}

bool EntryIs(const json& e, const std::string& pci_address, const std::string& pf_guid) {
  if (!e.is_object()) return false;
  if (e.contains("pciAddress") && e["pciAddress"].is_string()) {
    return CanonicalPciAddress(e["pciAddress"].get<std::string>()) ==
           CanonicalPciAddress(pci_address);
  }
  if (!pf_guid.empty() && e.contains("pfGuid") && e["pfGuid"].is_string()) {
    return Canonical(e["pfGuid"].get<std::string>()) == Canonical(pf_guid);
  }
  return false;
}

std::string Str(const json& e, const char* key) {
  auto it = e.find(key);
  return it != e.end() && it->is_string() ? it->get<std::string>() : "";
}

// What the operator's daemon (v1.4.0 and later, ib_guid_config.go) refuses in
// one entry: not exactly one of pciAddress/pfGuid, not exactly one of a
// non-empty guids list and guidsRange {start, end}, a GUID net.ParseMAC does
// not read, a range that ends before it starts. "" when it takes the entry.
std::string EntryProblem(const json& e) {
  const bool pci = !Str(e, "pciAddress").empty(), pf = !Str(e, "pfGuid").empty();
  if (pci == pf) return "give either pciAddress or pfGuid";
  if (e.contains("rangeStart") || e.contains("rangeEnd")) {
    return "rangeStart/rangeEnd are not read; a range is \"guidsRange\": {\"start\": ..., "
           "\"end\": ...}";
  }
  const bool list = e.contains("guids") && e["guids"].is_array() && !e["guids"].empty();
  const bool range = e.contains("guidsRange") && e["guidsRange"].is_object();
  if (list == range) return "give either a non-empty guids list or guidsRange {start, end}";
  if (list) {
    for (const auto& g : e["guids"]) {
      if (!g.is_string() || !ParseGuid(g.get<std::string>())) {
        return "guid " + Quote(g.dump()) + " is not a GUID";
      }
    }
    return "";
  }
  auto start = ParseGuid(Str(e["guidsRange"], "start"));
  auto end = ParseGuid(Str(e["guidsRange"], "end"));
  if (!start || !end) return "guidsRange needs a start and an end GUID";
  if (*end < *start) return "guidsRange ends before it starts";
  return "";
}

}  // namespace

StatusOr<json> ParseGuidPool(const std::optional<std::string>& text) {
  if (!text) return json::array();
  json pool = json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (pool.is_discarded() || !pool.is_array()) {
    return InvalidArgumentError(std::string(kIbGuidPoolPath) +
                                ": not a JSON array of {pciAddress|pfGuid, guids|guidsRange: "
                                "{start, end}} entries (the sriov-network-operator's config daemon "
                                "refuses it too); fix or remove it");
  }
  for (size_t i = 0; i < pool.size(); ++i) {
    const json& e = pool[i];
    if (!e.is_object()) {
      return InvalidArgumentError(std::string(kIbGuidPoolPath) + ": entry " + Quote(e.dump()) +
                                  " is not an object");
    }
    // The config daemon refuses the whole file for one bad entry
    // (ib_guid_config.go getIbGUIDConfig): say which, before it does.
    if (std::string why = EntryProblem(e); !why.empty()) {
      return InvalidArgumentError(std::string(kIbGuidPoolPath) + ": entry " + std::to_string(i) +
                                  " " + Quote(e.dump()) + ": " + why +
                                  " (the sriov-network-operator's config daemon refuses the "
                                  "file for it); fix or remove it");
    }
  }
  return pool;
}

json PoolEntryGuids(const json& pool, const std::string& pci_address, const std::string& pf_guid) {
  for (const auto& e : pool) {
    if (!EntryIs(e, pci_address, pf_guid)) continue;
    if (!e.contains("guids") || !e["guids"].is_array()) return e;  // a range: not ours
    json out = json::array();
    for (const auto& g : e["guids"]) {
      out.push_back(g.is_string() ? json(Canonical(g.get<std::string>())) : g);
    }
    return out;
  }
  return nullptr;
}

json SetPoolEntry(json pool, const std::string& pci_address, const std::string& pf_guid,
                  const json& guids) {
  json out = json::array();
  bool placed = false;
  for (auto& e : pool) {
    if (!EntryIs(e, pci_address, pf_guid)) {
      out.push_back(std::move(e));
      continue;
    }
    if (!placed && !guids.is_null()) out.push_back({{"pciAddress", pci_address}, {"guids", guids}});
    placed = true;
  }
  if (!placed && !guids.is_null()) out.push_back({{"pciAddress", pci_address}, {"guids", guids}});
  return out;
}

std::string RenderGuidPool(const json& pool) { return pool.dump(2) + "\n"; }

void PlanGuidPool(const DesiredState& desired, const HostFacts& facts, PlanSink& sink) {
  auto pool = ParseGuidPool(facts.sriov_operator_ib_guid_pool);
  bool reported = false;
  std::set<std::string> planned;
  for (size_t i = 0; i < desired.nics.size(); ++i) {
    const NicSpec& nic = desired.nics[i];
    if (nic.num_vfs.value_or(0) <= 0) continue;  // no policy, no operator here
    for (const PciFunction* pf : SelectPfs(nic, facts)) {
      if (!pf->sriov || pf->sriov->ib_node_guid.empty()) continue;  // not InfiniBand now
      if (*nic.num_vfs > pf->sriov->total_vfs) continue;            // the sriov module's error
      auto pf_guid = ParseGuid(pf->sriov->ib_node_guid);
      if (!pf_guid || !planned.insert(pf->pci_address).second) continue;
      if (!pool.ok()) {
        if (!reported) sink.Error(DesiredState::NicPath(i) + ".numVfs", pool.status().message());
        reported = true;
        continue;
      }
      json after = json::array();
      for (int n = 0; n < *nic.num_vfs; ++n) {
        after.push_back(FormatGuidBytes(DeriveVfGuid(*pf_guid, n)));
      }
      json before = PoolEntryGuids(*pool, pf->pci_address, FormatGuidBytes(*pf_guid));
      if (before == after) continue;
      Change c =
          MakeChange(kSriovOperatorModule, pf->pci_address, kIbGuidPoolAttribute, std::move(before),
                     std::move(after), Disruption::kLive, kPhaseVfSettings,
                     "the sriov-network-operator sets IB VF GUIDs even for externallyManaged "
                     "policies; from " +
                         std::string(kIbGuidPoolPath) + " it sets the ones provisioner sets",
                     DesiredState::NicPath(i) + ".numVfs");
      c.detail = {{"pfGuid", FormatGuidBytes(*pf_guid)}};
      sink.AddChange(std::move(c));
    }
  }
}

}  // namespace provisioner
