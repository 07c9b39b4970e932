#include "modules/names/names_planner.h"

#include <algorithm>
#include <map>
#include <utility>

#include "engine/base/config_value.h"
#include "engine/base/strings.h"
#include "engine/model/selector.h"
#include "engine/module/managed_file.h"
#include "nlohmann/json.hpp"

namespace provisioner {
namespace {

// The PF's own netdev: a switchdev representor ("pf0vf0", "pf0sf1",
// "c1pf0vf0") has its parent in the PF's net/ too.
std::string PfNetdev(const PciFunction& pf, const HostFacts& facts) {
  for (const std::string& n : pf.netdevs) {
    auto it = facts.names.phys_port_names.find(n);
    if (it != facts.names.phys_port_names.end() && it->second.find("pf") != std::string::npos) {
      continue;
    }
    return n;
  }
  return "";
}

// Who has `name` now among the netdevs (or RDMA devices) the facts know.
std::string Holder(const HostFacts& facts, const std::string& name, bool rdma) {
  for (const PciFunction& f : facts.pci) {
    const auto& names = rdma ? f.rdma_devices : f.netdevs;
    if (std::find(names.begin(), names.end(), name) != names.end()) return f.pci_address;
  }
  if (!rdma && facts.links.count(name) > 0) return name;
  return "";
}

}  // namespace

std::string NameRulesFileText(const std::vector<std::string>& lines) {
  std::string out =
      "# Persistent names of the rails' PFs, written by provisioner (module names)\n"
      "# from host.yaml's nics[].names; provisioner apply rewrites this file.\n"
      "# KERNELS matches the PF's PCI address up the device path. A VF is a PCI\n"
      "# function of its own (not below its PF) and cannot match; a switchdev\n"
      "# representor (phys_port_name pf0vf0) and an IPoIB child (a `parent` file)\n"
      "# are below their PF, and are told apart by phys_port_name and TEST.\n";
  for (const std::string& l : lines) out += l + "\n";
  return out;
}

std::vector<std::string> ParseNameRules(const std::string& text) {
  std::vector<std::string> out;
  for (std::string& line : SplitLines(text)) {
    const size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#') continue;
    out.push_back(std::move(line));
  }
  return out;
}

std::vector<std::string> RenderNameRules(std::vector<PfNames> pfs) {
  std::sort(pfs.begin(), pfs.end(),
            [](const PfNames& a, const PfNames& b) { return a.pci_address < b.pci_address; });
  std::vector<std::string> out;
  for (const PfNames& p : pfs) {
    if (!p.netdev.empty()) {
      std::string l = "SUBSYSTEM==\"net\", ACTION==\"add\", KERNELS==\"" + p.pci_address + "\"";
      if (!p.phys_port_name.empty()) {
        l += ", ATTR{phys_port_name}==\"" + p.phys_port_name + "\"";
      }
      out.push_back(l + ", TEST!=\"parent\", NAME=\"" + p.netdev + "\"");
    }
    if (!p.rdma.empty()) {
      // PROGRAM runs when udev reaches the rule, RUN only after every rule
      // of the event: rdma-core's 60-rdma-persistent-naming.rules renames
      // the device with its own PROGRAM first, and a RUN of ours would then
      // name a device that no longer exists. Ours (10-) runs before it;
      // rdma_rename looks the device up by the name %k had at the event, so
      // rdma-core's rule finds none and leaves ours (v55+ also skips a
      // user-assigned name). The second line is for a host whose
      // rdma_rename lacks NAME_FIXED (rdma-core < 36) or is not installed:
      // after a rename by the first, `rdma dev set %k` finds no %k and fails
      // without effect.
      const std::string head =
          "ACTION==\"add\", SUBSYSTEM==\"infiniband\", KERNELS==\"" + p.pci_address + "\", ";
      out.push_back(head + "PROGRAM=\"" + std::string(kRdmaRenameProgram) + " %k NAME_FIXED " +
                    p.rdma + "\"");
      out.push_back(head + "PROGRAM=\"" + std::string(kRdmaTool) + " dev set %k name " + p.rdma +
                    "\"");
    }
  }
  return out;
}

void PlanNames(const DesiredState& desired, const HostFacts& facts, PlanSink& sink) {
  std::vector<PfNames> rules;
  std::vector<Change> renames;
  const std::string file_resource = std::string("file:") + kNamesRulesFile;
  bool any = false;
  std::string first_path;
  for (size_t i = 0; i < desired.nics.size(); ++i) {
    const NicSpec& nic = desired.nics[i];
    if (!nic.names || (!nic.names->netdev && !nic.names->rdma)) continue;
    any = true;
    const std::string path = DesiredState::NicPath(i) + ".names";
    if (first_path.empty()) first_path = path;
    std::vector<const PciFunction*> pfs = SelectPfs(nic, facts);
    if (pfs.empty()) continue;  // reported once, by the pci module
    if (pfs.size() > 1) {
      std::string list;
      for (const PciFunction* pf : pfs) list += (list.empty() ? "" : ", ") + pf->pci_address;
      sink.Error(path, "nic " + nic.name + " selects " + std::to_string(pfs.size()) + " PFs (" +
                           list +
                           ") and one name cannot go to each: select one PF per nic "
                           "(spec.rails makes one nic per rail)");
      continue;
    }
    const PciFunction& pf = *pfs.front();
    PfNames p;
    p.pci_address = pf.pci_address;
    // Every value the rules file quotes is data: the tree's PCI address and
    // phys_port_name as much as host.yaml's names (issue 36.6).
    auto bad_value = [&](const std::string& field, const std::string& what,
                         const std::string& value) {
      auto problem = ConfigValueProblem(ConfigSyntax::kUdevRuleValue, value);
      if (problem) {
        sink.Error(field, what + " " + Quote(value) + " cannot go into a udev rule (" +
                              kNamesRulesFile + "): it " + *problem);
      }
      return problem.has_value();
    };
    if (bad_value(path, "the PCI address of " + nic.name + "'s PF", pf.pci_address)) continue;
    auto rename = [&](const std::string& attribute, const std::string& now, const std::string& want,
                      const std::string& field) {
      if (now.empty() || now == want) return;
      const bool rdma = attribute == kRdmaAttribute;
      const std::string holder = Holder(facts, want, rdma);
      if (!holder.empty()) {
        sink.Error(field, std::string(rdma ? "RDMA device" : "netdev") + " name " + want +
                              " is in use (" + holder +
                              "): the kernel refuses the rename "
                              "(EEXIST)");
        return;
      }
      Change c = MakeChange(kNamesModule, pf.pci_address, attribute, now, want, Disruption::kLive,
                            kPhaseNames,
                            "nic " + nic.name + " renames its PF's " +
                                (rdma ? "RDMA device " : "netdev ") + now + " to " + want,
                            field);
      c.link_flap = !rdma;  // the netdev goes down for the rename, then back
      c.detail["nic"] = nic.name;
      c.resource = "pf:" + pf.pci_address;
      c.depends_on = {file_resource};
      renames.push_back(std::move(c));
    };
    if (nic.names->netdev) {
      p.netdev = *nic.names->netdev;
      const std::string now = PfNetdev(pf, facts);
      auto ppn = facts.names.phys_port_names.find(now);
      if (ppn != facts.names.phys_port_names.end()) p.phys_port_name = ppn->second;
      if ((!p.phys_port_name.empty() &&
           bad_value(path + ".netdev",
                     "/sys/class/net/" + now + "/phys_port_name of " + pf.pci_address,
                     p.phys_port_name)) ||
          bad_value(path + ".netdev", "netdev name", p.netdev)) {
        continue;
      }
      if (now.empty()) {
        sink.Warning(path + ".netdev", pf.pci_address +
                                           " has no netdev now: its udev rule names it when "
                                           "its driver creates it");
      }
      rename(kNetdevAttribute, now, p.netdev, path + ".netdev");
    }
    if (nic.names->rdma) {
      p.rdma = *nic.names->rdma;
      if (bad_value(path + ".rdma", "RDMA device name", p.rdma)) continue;
      const std::string now = pf.rdma_devices.empty() ? "" : pf.rdma_devices.front();
      if (now.empty()) {
        sink.Warning(path + ".rdma", pf.pci_address +
                                         " has no RDMA device now: its udev rule names it "
                                         "when mlx5_ib (or its RDMA driver) creates it");
      }
      rename(kRdmaAttribute, now, p.rdma, path + ".rdma");
    }
    rules.push_back(std::move(p));
  }
  nlohmann::json before =
      facts.names.rules ? nlohmann::json(ParseNameRules(*facts.names.rules)) : nlohmann::json();
  nlohmann::json after = any ? nlohmann::json(RenderNameRules(rules)) : nlohmann::json();
  // Someone else's file at our name, and no names asked: not ours to delete.
  const bool foreign = facts.names.rules && !WrittenByProvisioner(*facts.names.rules);
  if (before != after && !(foreign && !any)) {
    Change c = MakeChange(kNamesModule, kNamesRulesFile, kRulesAttribute, before, after,
                          Disruption::kLive, kPhaseNames,
                          any ? "persistent names of the nics' PFs at every boot (udev)"
                              : "no nic has names: the module's udev rules go",
                          any ? first_path : "spec.nics");
    c.resource = file_resource;
    DeclareManagedFile(c, kNamesRulesFile, facts.names.rules, c.field_path, sink);
    sink.AddChange(std::move(c));
  }
  for (Change& c : renames) sink.AddChange(std::move(c));
}

std::string PfNetdevOf(const PciFunction& pf, const HostFacts& facts) {
  return PfNetdev(pf, facts);
}

}  // namespace provisioner
