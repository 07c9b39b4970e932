#include "modules/ipoib/ipoib_module.h"

#include <algorithm>
#include <cerrno>
#include <string>
#include <vector>

#include "engine/base/strings.h"
#include "engine/module/clock.h"
#include "engine/module/registry.h"
#include "engine/output/facts_output.h"
#include "engine/plan/resource.h"
#include "modules/ipoib/ipoib_checks.h"
#include "modules/ipoib/ipoib_planner.h"
#include "spdlog/spdlog.h"

namespace provisioner {
namespace {

std::string NetDir(const std::string& ifname) { return "/sys/class/net/" + ifname; }

std::optional<int> ReadInt(const HostFs& fs, const std::string& path) {
  auto text = fs.ReadAttr(path);
  if (!text.ok()) return std::nullopt;
  try {
    size_t used = 0;
    int v = std::stoi(*text, &used, 0);
    if (used != text->size()) return std::nullopt;
    return v;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// IPOIB_CM_SUPPORTED: the RC flag in the first byte of the hardware address.
bool CmSupported(const std::string& address) {
  if (address.size() < 2) return false;
  try {
    return (std::stoi(address.substr(0, 2), nullptr, 16) & 0x80) != 0;
  } catch (const std::exception&) {
    return false;
  }
}

Status CheckChangeShape(const Change& c) {
  if (c.module != kIpoibModule) return InvalidArgumentError("module ipoib cannot apply " + c.id);
  if (!IsValidIfname(c.target)) return InvalidArgumentError(c.id + ": bad interface name");
  const nlohmann::json& a = c.after;
  if (c.attribute == kIpoibMode) {
    if (a.is_null() || a == "datagram" || a == "connected") return OkStatus();
    return InvalidArgumentError(c.id + ": mode must be datagram or connected, not " + a.dump());
  }
  if (c.attribute == kIpoibChild) {
    if (!a.is_boolean()) return InvalidArgumentError(c.id + ": child must be true or false");
    const nlohmann::json& d = c.detail;
    if (!d.is_object() || !d.contains("parent") || !d["parent"].is_string() ||
        !IsValidIfname(d["parent"].get<std::string>()) || !d.contains("pkey") ||
        !d["pkey"].is_string() || !ParsePkey(d["pkey"].get<std::string>()) ||
        !IsChildPkey(*ParsePkey(d["pkey"].get<std::string>()))) {
      return InvalidArgumentError(c.id + ": a child needs detail.parent and detail.pkey");
    }
    return OkStatus();
  }
  if (c.attribute == kIpoibMtu) {
    if (a.is_null()) return OkStatus();
    if (a.is_number_integer() && a.get<long long>() >= kIpoibMinMtu &&
        a.get<long long>() <= kIpoibConnectedMaxMtu) {
      return OkStatus();
    }
    return InvalidArgumentError(c.id + ": mtu must be 72..65520, not " + a.dump());
  }
  if (c.attribute == kIpoibAddresses) {
    if (a.is_null()) return OkStatus();
    if (!a.is_array()) return InvalidArgumentError(c.id + ": addresses must be a list");
    for (const auto& e : a) {
      if (!e.is_string() || !CanonicalCidr(e.get<std::string>())) {
        return InvalidArgumentError(c.id + ": " + e.dump() + " is no address with a prefix");
      }
    }
    return OkStatus();
  }
  if (c.attribute == kIpoibUp) {
    if (a.is_null() || a.is_boolean()) return OkStatus();
    return InvalidArgumentError(c.id + ": up must be true or false");
  }
  return InvalidArgumentError("module ipoib has no attribute " + c.attribute + " (" + c.id + ")");
}

std::vector<std::string> Strings(const nlohmann::json& list) {
  std::vector<std::string> out;
  for (const auto& e : list) out.push_back(*CanonicalCidr(e.get<std::string>()));
  std::sort(out.begin(), out.end());
  return out;
}

// Waits (bounded by the settle timeout) until the child netdev exists or is
// gone: the kernel registers it before create_child returns, a simulator
// may take longer.
Status WaitChild(HostContext& ctx, const std::string& child, bool present) {
  Clock& clock = ctx.clock != nullptr ? *ctx.clock : RealClock();
  const auto deadline = clock.Now() + ctx.settle_timeout;
  while (ctx.fs->Exists(NetDir(child)) != present) {
    if (clock.Now() >= deadline) {
      return UnavailableError(NetDir(child) + (present ? " did not appear" : " did not go away") +
                              " within the settle timeout");
    }
    clock.SleepFor(std::chrono::milliseconds(20));
  }
  return OkStatus();
}

std::string Show(const nlohmann::json& v) {
  return v.is_string() ? v.get<std::string>() : v.dump();
}

}  // namespace

Status IpoibModule::Discover(HostContext& ctx, HostFacts& facts) {
  facts.ipoib = IpoibFacts();
  facts.ipoib.discovered = true;
  if (ctx.plan_for != nullptr && !WantsIpoib(*ctx.plan_for)) return OkStatus();
  HostFs& fs = *ctx.fs;
  std::unique_ptr<LinkBackend> link = options_.link(fs);
  std::unique_ptr<IpoibAddressBackend> addresses = options_.addresses(fs);
  for (const PciFunction& f : facts.pci) {
    if (f.IsVf() || !f.IsNetwork()) continue;
    for (const std::string& n : f.netdevs) {
      const std::string dir = NetDir(n);
      std::optional<int> type = ReadInt(fs, dir + "/type");
      if (!type) continue;
      if (*type != kArphrdInfiniband) {
        facts.ipoib.not_ipoib[n] = *type;
        continue;
      }
      IpoibInterface x;
      x.name = n;
      if (auto p = fs.ReadAttr(dir + "/parent"); p.ok()) x.parent = *p;
      if (auto m = fs.ReadAttr(dir + "/mode"); m.ok()) x.mode = *m;
      if (auto k = fs.ReadAttr(dir + "/pkey"); k.ok()) x.pkey = ParsePkey(*k);
      if (auto a = fs.ReadAttr(dir + "/address"); a.ok()) x.address = *a;
      x.cm_supported = CmSupported(x.address);
      if (auto l = link->Read(n); l.ok()) {
        x.mtu = l->mtu;
        x.admin_up = l->admin_up;
      } else {
        spdlog::debug("ipoib {}: {}", n, l.status().message());
      }
      if (auto a = addresses->Read(n); a.ok()) {
        x.addresses = *a;
      } else {
        spdlog::debug("ipoib {} addresses: {}", n, a.status().message());
      }
      if (x.parent.empty() && !f.rdma_devices.empty()) {
        IpoibPort port;
        port.rdma_device = f.rdma_devices.front();
        for (const RdmaDevice& d : facts.rdma.devices) {
          if (d.name != port.rdma_device || d.ports.empty()) continue;
          const RdmaPort* p = &d.ports.front();
          for (const RdmaPort& q : d.ports) {
            if (q.netdev == n) p = &q;
          }
          port.port = p->port;
          port.link_layer = p->link_layer;
          // The P_Key table as the rdma module read it (once per discovery;
          // discover and doctor, the only readers, read the RDMA devices).
          if (p->pkeys) {
            port.pkeys_read = true;
            for (const std::string& text : *p->pkeys) {
              if (auto pk = ParsePkey(text)) port.pkeys.push_back(*pk);
            }
          }
        }
        facts.ipoib.ports[n] = port;
      }
      facts.ipoib.interfaces[n] = std::move(x);
    }
  }
  for (auto& [name, x] : facts.ipoib.interfaces) {
    if (x.parent.empty()) continue;
    auto p = facts.ipoib.interfaces.find(x.parent);
    if (p != facts.ipoib.interfaces.end()) p->second.children.push_back(name);
  }
  return OkStatus();
}

void IpoibModule::Plan(const DesiredState& desired, const HostFacts& facts, PlanSink& sink) const {
  PlanByPciResource(PlanIpoib, desired, facts, sink);
}

Status IpoibModule::Apply(const Change& change, HostContext& ctx) {
  RETURN_IF_ERROR(CheckChange(change));
  HostFs& fs = *ctx.fs;
  const std::string& target = change.target;
  const nlohmann::json& after = change.after;
  if (change.attribute == kIpoibChild) {
    const std::string parent = change.detail["parent"].get<std::string>();
    const std::string pkey = change.detail["pkey"].get<std::string>();
    const bool want = after.get<bool>();
    if (fs.Exists(NetDir(target)) == want) return OkStatus();
    const std::string file = NetDir(parent) + (want ? "/create_child" : "/delete_child");
    if (ctx.progress) ctx.progress->Step(file + " <- " + pkey);
    RETURN_IF_ERROR(fs.WriteAttr(file, pkey + "\n")
                        .WithContext(std::string(want ? "create" : "delete") + " child " + target));
    return WaitChild(ctx, target, want);
  }
  if (after.is_null()) return OkStatus();  // undoing a change on a child made by the plan
  if (change.attribute == kIpoibMode) {
    auto now = fs.ReadAttr(NetDir(target) + "/mode");
    if (now.ok() && *now == after.get<std::string>()) return OkStatus();
    // With the newline: ipoib_set_mode compares with "connected\n".
    return fs.WriteAttr(NetDir(target) + "/mode", after.get<std::string>() + "\n")
        .WithContext("set IPoIB mode " + after.get<std::string>() + " on " + target);
  }
  if (change.attribute == kIpoibAddresses) {
    return SetAddresses(*options_.addresses(fs), target, Strings(after));
  }
  std::unique_ptr<LinkBackend> link = options_.link(fs);
  ASSIGN_OR_RETURN(LinkFacts now, link->Read(target));
  if (change.attribute == kIpoibMtu) {
    const int want = static_cast<int>(after.get<long long>());
    if (now.mtu == want) return OkStatus();
    return link->SetMtu(target, want);
  }
  if (now.admin_up == after.get<bool>()) return OkStatus();
  return link->SetUp(target, after.get<bool>());
}

Status IpoibModule::CheckChange(const Change& change) const { return CheckChangeShape(change); }

Status IpoibModule::Verify(const Change& change, HostContext& ctx) {
  RETURN_IF_ERROR(CheckChange(change));
  HostFs& fs = *ctx.fs;
  const std::string& target = change.target;
  const nlohmann::json& after = change.after;
  const std::string label =
      (change.field_path.empty() ? change.id : change.field_path) + " (" + target + ")";
  auto mismatch = [&](const std::string& now) {
    return FailedPreconditionError(label + ": desired " + Show(after) + ", current " + now);
  };
  if (change.attribute == kIpoibChild) {
    const bool there = fs.Exists(NetDir(target));
    if (there != after.get<bool>()) return mismatch(there ? "present" : "absent");
    return OkStatus();
  }
  if (after.is_null()) return OkStatus();
  if (change.attribute == kIpoibMode) {
    ASSIGN_OR_RETURN(std::string now, fs.ReadAttr(NetDir(target) + "/mode"));
    if (now != after.get<std::string>()) return mismatch(now);
    return OkStatus();
  }
  if (change.attribute == kIpoibAddresses) {
    ASSIGN_OR_RETURN(std::vector<std::string> now, options_.addresses(fs)->Read(target));
    if (now != Strings(after)) return mismatch(nlohmann::json(now).dump());
    return OkStatus();
  }
  ASSIGN_OR_RETURN(LinkFacts now, options_.link(fs)->Read(target));
  if (change.attribute == kIpoibMtu) {
    if (now.mtu != after.get<long long>()) {
      return mismatch(std::to_string(now.mtu) +
                      " (in datagram mode the kernel caps it at the broadcast group's MTU - 4)");
    }
    return OkStatus();
  }
  if (now.admin_up != after.get<bool>()) return mismatch(now.admin_up ? "up" : "down");
  return OkStatus();
}

void IpoibModule::Check(const DesiredState* desired, const HostFacts& facts,
                        CheckSink& sink) const {
  CheckIpoib(desired, facts, sink);
}

// discover -o json: "ipoib": {"<netdev>": {mode, pkey, mtu, up, connectedMode,
// addresses, children, parent, port: {rdmaDevice, port, pkeys}}}.
void IpoibModule::RenderFactsJson(const HostFacts& facts, FactsJson& out) const {
  if (!facts.ipoib.discovered || facts.ipoib.interfaces.empty()) return;
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [name, x] : facts.ipoib.interfaces) {
    nlohmann::json e = nlohmann::json::object();
    if (!x.parent.empty()) e["parent"] = x.parent;
    if (!x.mode.empty()) e["mode"] = x.mode;
    if (x.pkey) e["pkey"] = PkeyText(*x.pkey);
    if (x.mtu) e["mtu"] = *x.mtu;
    if (x.admin_up) e["up"] = *x.admin_up;
    e["connectedModeSupported"] = x.cm_supported;
    if (x.addresses) e["addresses"] = *x.addresses;
    if (!x.children.empty()) e["children"] = x.children;
    auto p = facts.ipoib.ports.find(name);
    if (p != facts.ipoib.ports.end()) {
      nlohmann::json port = {{"rdmaDevice", p->second.rdma_device}, {"port", p->second.port}};
      if (p->second.pkeys_read) {
        std::vector<std::string> keys;
        for (int k : p->second.pkeys) keys.push_back(PkeyText(k));
        port["pkeys"] = keys;
      }
      e["port"] = port;
    }
    j[name] = e;
  }
  out.doc()["ipoib"] = j;
}

// discover (table): one row per IPoIB netdev, children under their parent.
std::string IpoibModule::RenderFactsTable(const HostFacts& facts) const {
  if (!facts.ipoib.discovered || facts.ipoib.interfaces.empty()) return "";
  std::vector<std::vector<std::string>> rows = {
      {"NETDEV", "PARENT", "PKEY", "MODE", "MTU", "UP", "ADDRESSES", "PORT P_KEYS"}};
  for (const auto& [name, x] : facts.ipoib.interfaces) {
    std::string table = "-";
    auto p = facts.ipoib.ports.find(name);
    if (p != facts.ipoib.ports.end() && p->second.pkeys_read) {
      std::vector<std::string> keys;
      for (int k : p->second.pkeys) keys.push_back(PkeyText(k));
      table = p->second.rdma_device + "/" + std::to_string(p->second.port) + ": " +
              JoinNames(keys, "none");
    }
    rows.push_back({name, x.parent.empty() ? "-" : x.parent, x.pkey ? PkeyText(*x.pkey) : "-",
                    x.mode.empty() ? "-" : x.mode, x.mtu ? std::to_string(*x.mtu) : "-",
                    x.admin_up ? (*x.admin_up ? "yes" : "no") : "-",
                    x.addresses ? JoinNames(*x.addresses, "-") : "?", table});
  }
  return "\nIPoIB interfaces:\n" + TextTable(rows, "  ");
}

// After link (and rdma, for the ports): its changes follow the link module's.
PROVISIONER_REGISTER_MODULE("ipoib", IpoibModule, "link", "rdma")

}  // namespace provisioner
