// What a nicSelector that matches nothing could have meant (issue 38 item
// 8): suggestions only among the functions that satisfy the selector's
// other fields; when a field (vendor, deviceID) excludes every function
// here, that field is named with what the host has instead.
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "engine/base/strings.h"
#include "engine/cli/commands.h"

namespace provisioner::cli {
namespace {

using NicHere = PlanOutcome::NicHere;

std::string VendorOf(const NicHere& n) { return n.id.substr(0, n.id.find(':')); }
std::string DeviceOf(const NicHere& n) {
  const size_t colon = n.id.find(':');
  return colon == std::string::npos ? "" : n.id.substr(colon + 1);
}

bool Has(const std::vector<std::string>& list, const std::string& x) {
  for (const auto& e : list) {
    if (e == x) return true;
  }
  return false;
}

// "1021 x8, 101d x2": the values of a field over the functions here.
std::string Census(const std::vector<NicHere>& nics, std::string (*field)(const NicHere&)) {
  std::map<std::string, int> count;
  for (const auto& n : nics) ++count[field(n)];
  std::string out;
  for (const auto& [value, n] : count) {
    out += (out.empty() ? "" : ", ") + value + (n > 1 ? " \u00d7" + std::to_string(n) : "");
  }
  return out;
}

// The hint for one selector, "" when there is nothing to say.
std::string Hint(const NicSelector& sel, const std::vector<NicHere>& here) {
  if (here.empty()) return "no network PF here at all";
  // A vendor or device ID that no function has: that field excludes them.
  if (sel.vendor) {
    bool any = false;
    for (const auto& n : here) any = any || VendorOf(n) == *sel.vendor;
    if (!any) {
      return "no function has vendor " + *sel.vendor + " here; vendors here: " +
             Census(here, VendorOf);
    }
  }
  std::vector<NicHere> of_vendor;
  for (const auto& n : here) {
    if (!sel.vendor || VendorOf(n) == *sel.vendor) of_vendor.push_back(n);
  }
  if (sel.device_id) {
    bool any = false;
    for (const auto& n : of_vendor) any = any || DeviceOf(n) == *sel.device_id;
    if (!any) {
      return "no function has deviceID " + *sel.device_id + " here" +
             (sel.vendor ? " (vendor " + *sel.vendor + ")" : "") +
             "; deviceIDs here: " + Census(of_vendor, DeviceOf);
    }
  }
  // The functions the other fields allow: suggestions come from these only.
  std::vector<NicHere> allowed;
  for (const auto& n : of_vendor) {
    if (sel.device_id && DeviceOf(n) != *sel.device_id) continue;
    allowed.push_back(n);
  }
  std::string listed;
  std::vector<std::string> names;
  for (const auto& n : allowed) {
    // Filtered by the other name field too: rootDevices and pfNames both given.
    if (!sel.root_devices.empty() && !sel.pf_names.empty()) {
      bool name_ok = false;
      for (const auto& nd : n.netdevs) name_ok = name_ok || Has(sel.pf_names, nd);
      const bool address_ok = Has(sel.root_devices, n.pci_address);
      if (!name_ok && !address_ok) continue;
    }
    listed += (listed.empty() ? "" : ", ") + n.pci_address;
    for (const auto& nd : n.netdevs) listed += " " + nd;
    listed += " " + n.id;
    if (!sel.root_devices.empty()) names.push_back(n.pci_address);
    if (!sel.pf_names.empty()) names.insert(names.end(), n.netdevs.begin(), n.netdevs.end());
  }
  if (listed.empty()) {
    return "rootDevices and pfNames name different functions: no function has both";
  }
  std::string hint = "could match: " + listed;
  std::vector<std::string> asked = sel.pf_names;
  asked.insert(asked.end(), sel.root_devices.begin(), sel.root_devices.end());
  // Listed as people sort names: ens6f2 before ens6f10.
  auto natural = [](const std::string& a, const std::string& b) { return NaturalLess(a, b); };
  std::set<std::string, decltype(natural)> guesses(natural);
  for (const auto& want : asked) {
    std::string best;
    size_t best_d = std::max<size_t>(2, want.size() / 3) + 1;
    for (const auto& have : names) {
      const size_t d = EditDistance(want, have);
      if (d > 0 && d < best_d) {
        best = have;
        best_d = d;
      }
    }
    if (!best.empty()) guesses.insert(best);
  }
  if (!guesses.empty()) {
    hint += "; did you mean";
    bool first = true;
    for (const auto& g : guesses) {
      hint += (first ? " " : " or ") + g;
      first = false;
    }
    hint += "?";
  }
  return hint;
}

}  // namespace

void PrintSelectorHint(const std::string& file, const PlanOutcome& p, const FileDiagnostics& batch,
                       const Diagnostic& d, std::set<std::string>* done) {
  if (d.severity != Severity::kError ||
      d.message.find("selects no PCI function") == std::string::npos ||
      d.path.rfind("spec.nics[", 0) != 0 || !done->insert(d.path).second) {
    return;
  }
  const size_t index = std::strtoul(d.path.c_str() + 10, nullptr, 10);
  if (index >= p.desired.nics.size()) return;
  const std::string hint = Hint(p.desired.nics[index].selector, p.nics_here);
  if (hint.empty()) return;
  // Under its error, at the same place.
  const SourceMark m = batch.marks.Find(d.path);
  std::string where = file;
  if (m.line > 0) where += ":" + std::to_string(m.line) + ":" + std::to_string(m.column);
  std::fprintf(stderr, "%s: note: %s: %s\n", where.c_str(), d.path.c_str(), hint.c_str());
}

}  // namespace provisioner::cli
