#include "modules/names/names_module.h"

#include <algorithm>
#include <cerrno>
#include <string>
#include <vector>

#include "engine/model/pci_address.h"
#include "engine/model/selector.h"
#include "engine/module/managed_file.h"
#include "engine/module/registry.h"
#include "modules/names/names_planner.h"
#include "spdlog/spdlog.h"

namespace provisioner {
namespace {

// A name as the planner writes it: what a saved plan or journal may hold
// is checked again before anything is written.
bool SafeName(const nlohmann::json& v, size_t max) {
  if (!v.is_string()) return false;
  const std::string s = v.get<std::string>();
  if (s.empty() || s.size() > max || s == "." || s == "..") return false;
  for (char c : s) {
    if (c == '/' || c == '%' || c == '"' || c == '\\' || c <= ' ' || c == 0x7f) return false;
  }
  return true;
}

Status CheckShape(const Change& c) {
  if (c.module != kNamesModule) return InvalidArgumentError("module names cannot apply " + c.id);
  if (c.attribute == kRulesAttribute) {
    if (c.target != kNamesRulesFile) {
      return InvalidArgumentError(c.id + ": module names writes only " +
                                  std::string(kNamesRulesFile));
    }
    for (const nlohmann::json* v : {&c.before, &c.after}) {
      if (v->is_null()) continue;
      if (!v->is_array()) return InvalidArgumentError(c.id + ": rules must be a list of lines");
      for (const auto& l : *v) {
        if (!l.is_string() || l.get<std::string>().find('\n') != std::string::npos) {
          return InvalidArgumentError(c.id + ": a rule must be one line of text");
        }
      }
    }
    return OkStatus();
  }
  if (c.attribute == kNetdevAttribute || c.attribute == kRdmaAttribute) {
    if (!PciAddress::ParseFull(c.target)) return InvalidArgumentError(c.id + ": bad PCI address");
    const size_t max = c.attribute == kNetdevAttribute ? 15 : 63;
    if (!SafeName(c.before, max) || !SafeName(c.after, max)) {
      return InvalidArgumentError(c.id + ": before and after must be valid " + c.attribute +
                                  " names");
    }
    return OkStatus();
  }
  return InvalidArgumentError("module names has no attribute " + c.attribute + " (" + c.id + ")");
}

// The PF's devices of a class now: /sys/bus/pci/devices/<pf>/{net,infiniband}.
std::vector<std::string> Devices(const HostFs& fs, const std::string& pf, bool rdma) {
  auto l = fs.ListDir("/sys/bus/pci/devices/" + pf + (rdma ? "/infiniband" : "/net"));
  return l.ok() ? *l : std::vector<std::string>();
}

bool Has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// doctor: per PF of a nic with names, check "names.persistent": ok when the
// PF's netdev and RDMA device have their names now and the rules file names
// them at the next boot; warn (fix: provisioner apply) otherwise.
void CheckNamesNow(const DesiredState& desired, const HostFacts& facts, CheckSink& sink) {
  const std::vector<std::string> rules =
      facts.names.rules ? ParseNameRules(*facts.names.rules) : std::vector<std::string>();
  for (const NicSpec& nic : desired.nics) {
    if (!nic.names || (!nic.names->netdev && !nic.names->rdma)) continue;
    std::vector<const PciFunction*> pfs = SelectPfs(nic, facts);
    if (pfs.size() != 1) continue;  // plan says why
    const PciFunction& pf = *pfs.front();
    PfNames want;
    want.pci_address = pf.pci_address;
    want.netdev = nic.names->netdev.value_or("");
    want.rdma = nic.names->rdma.value_or("");
    CheckResult r;
    r.module = kNamesModule;
    r.id = "names.persistent";
    r.target = pf.pci_address + " (nic " + nic.name + ")";
    std::vector<std::string> wrong;
    const std::string netdev = PfNetdevOf(pf, facts);
    if (!want.netdev.empty()) {
      auto ppn = facts.names.phys_port_names.find(netdev);
      if (ppn != facts.names.phys_port_names.end()) want.phys_port_name = ppn->second;
      r.evidence.push_back({"/sys/bus/pci/devices/" + pf.pci_address + "/net", netdev});
      if (netdev != want.netdev) wrong.push_back("netdev " + netdev + ", not " + want.netdev);
    }
    if (!want.rdma.empty()) {
      const std::string now = pf.rdma_devices.empty() ? "" : pf.rdma_devices.front();
      r.evidence.push_back({"/sys/bus/pci/devices/" + pf.pci_address + "/infiniband", now});
      if (now != want.rdma) wrong.push_back("RDMA device " + now + ", not " + want.rdma);
    }
    for (const std::string& line : RenderNameRules({want})) {
      if (std::find(rules.begin(), rules.end(), line) == rules.end()) {
        wrong.push_back(std::string(kNamesRulesFile) + " lacks its rule");
        break;
      }
    }
    r.evidence.push_back({kNamesRulesFile, facts.names.rules ? "present" : "absent"});
    if (wrong.empty()) {
      r.summary = "named as host.yaml says, now and at the next boot";
    } else {
      r.verdict = Verdict::kWarn;
      r.summary = "";
      for (const std::string& w : wrong) r.summary += (r.summary.empty() ? "" : "; ") + w;
      r.fix = "provisioner apply (renames it now and writes the udev rule for every boot)";
    }
    sink.Add(std::move(r));
  }
}

}  // namespace

Status NamesModule::Discover(HostContext& ctx, HostFacts& facts) {
  if (ctx.fs->Exists(kNamesRulesFile)) {
    ASSIGN_OR_RETURN(std::string text, ctx.fs->ReadFile(kNamesRulesFile));
    facts.names.rules = std::move(text);
  }
  for (const PciFunction& f : facts.pci) {
    if (f.IsVf() || !f.IsNetwork()) continue;
    for (const std::string& n : f.netdevs) {
      // EOPNOTSUPP from a driver without a devlink port: none.
      auto v = ctx.fs->ReadAttr("/sys/class/net/" + n + "/phys_port_name");
      if (v.ok() && !v->empty()) facts.names.phys_port_names[n] = *v;
    }
  }
  return OkStatus();
}

void NamesModule::Plan(const DesiredState& desired, const HostFacts& facts, PlanSink& sink) const {
  PlanNames(desired, facts, sink);
}

Status NamesModule::CheckChange(const Change& change) const { return CheckShape(change); }

void NamesModule::Check(const DesiredState* desired, const HostFacts& facts,
                        CheckSink& sink) const {
  if (desired != nullptr) CheckNamesNow(*desired, facts, sink);
}

Status NamesModule::Apply(const Change& change, HostContext& ctx) {
  RETURN_IF_ERROR(CheckChange(change));
  if (change.attribute == kRulesAttribute) {
    std::optional<std::string> text;
    if (!change.after.is_null() && !RestoresManagedFile(change, kNamesRulesFile)) {
      text = NameRulesFileText(change.after.get<std::vector<std::string>>());
      auto now = ctx.fs->ReadFile(kNamesRulesFile);
      if (now.ok() && *now == *text) return OkStatus();
    }
    return WriteManagedFile(*ctx.fs, change, kNamesRulesFile, text, 0644);
  }
  const bool rdma = change.attribute == kRdmaAttribute;
  const std::string from = change.before.get<std::string>();
  const std::string to = change.after.get<std::string>();
  const std::vector<std::string> now = Devices(*ctx.fs, change.target, rdma);
  if (Has(now, to)) return OkStatus();  // a re-run, or the rollback of a refused rename
  if (!Has(now, from)) {
    return Status(StatusCode::kFailedPrecondition,
                  change.target + " has no " + (rdma ? "RDMA device " : "netdev ") + from +
                      " to rename to " + to + " (it has: " +
                      (now.empty() ? std::string("none") : [&] {
                        std::string s;
                        for (const auto& n : now) s += (s.empty() ? "" : ", ") + n;
                        return s;
                      }()) + ")",
                  ENODEV);
  }
  if (ctx.progress)
    ctx.progress->Step((rdma ? "rename RDMA device " : "rename ") + from + " to " + to);
  std::unique_ptr<NamesBackend> backend = options_.backend(*ctx.fs);
  spdlog::debug("names: {} {} -> {} ({})", change.target, from, to, backend->Name());
  Status s = rdma ? backend->RenameRdma(from, to) : backend->RenameNetdev(from, to);
  return s.WithContext("apply " + change.id);
}

Status NamesModule::Verify(const Change& change, HostContext& ctx) {
  RETURN_IF_ERROR(CheckChange(change));
  const std::string label = change.field_path.empty() ? change.id : change.field_path;
  if (change.attribute == kRulesAttribute) {
    return VerifyManagedFile(
        *ctx.fs, change, kNamesRulesFile,
        [&](const std::string& text) -> std::optional<std::string> {
          if (text == NameRulesFileText(change.after.get<std::vector<std::string>>())) {
            return std::nullopt;
          }
          return "does not hold the rules written";
        });
  }
  const bool rdma = change.attribute == kRdmaAttribute;
  const std::string to = change.after.get<std::string>();
  const std::vector<std::string> now = Devices(*ctx.fs, change.target, rdma);
  if (!Has(now, to)) {
    std::string have;
    for (const auto& n : now) have += (have.empty() ? "" : ", ") + n;
    return FailedPreconditionError(label + " (" + change.target + "): desired " + to +
                                   ", current " + (have.empty() ? "none" : have));
  }
  return OkStatus();
}

PROVISIONER_REGISTER_MODULE("names", NamesModule, "pci", "link", "rdma")

}  // namespace provisioner
