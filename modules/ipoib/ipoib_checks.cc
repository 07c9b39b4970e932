#include "modules/ipoib/ipoib_checks.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "engine/model/selector.h"

namespace provisioner {
namespace {

constexpr char kModule[] = "ipoib";

std::string Net(const std::string& ifname, const char* attr) {
  return "/sys/class/net/" + ifname + "/" + attr;
}

// The PF IPoIB netdevs doctor looks at, each with the nic asking for it (or null).
std::vector<std::pair<const IpoibInterface*, const NicSpec*>> Targets(const DesiredState* desired,
                                                                      const HostFacts& facts) {
  std::vector<std::pair<const IpoibInterface*, const NicSpec*>> out;
  if (desired != nullptr) {
    for (const NicSpec& nic : desired->nics) {
      if (!nic.ipoib) continue;
      for (const PciFunction* pf : SelectPfs(nic, facts)) {
        for (const std::string& n : pf->netdevs) {
          auto it = facts.ipoib.interfaces.find(n);
          if (it != facts.ipoib.interfaces.end() && it->second.parent.empty()) {
            out.emplace_back(&it->second, &nic);
          }
        }
      }
    }
    if (!out.empty()) return out;
  }
  for (const auto& [name, x] : facts.ipoib.interfaces) {
    if (x.parent.empty()) out.emplace_back(&x, nullptr);
  }
  return out;
}

void CheckModeMtu(const IpoibInterface& x, const NicSpec* nic, CheckSink& sink) {
  CheckResult r;
  r.module = kModule;
  r.id = "ipoib.mode-mtu";
  r.target = x.name;
  const std::string mtu_text = x.mtu ? std::to_string(*x.mtu) : std::string("not read");
  r.evidence.push_back({Net(x.name, "mode"), x.mode.empty() ? "not read" : x.mode});
  r.evidence.push_back({Net(x.name, "mtu"), mtu_text});
  r.evidence.push_back({Net(x.name, "address"),
                        x.address.substr(0, 11) + (x.cm_supported ? " (RC flag: connected mode "
                                                                    "possible)"
                                                                  : " (no RC flag)")});
  const std::optional<IpoibSpec> spec = nic != nullptr ? nic->ipoib : std::nullopt;
  const std::string mode = spec && spec->mode ? *spec->mode : x.mode;
  // 0: host.yaml asks no mtu (a plain int: gcc -O2 warns on the optional copy).
  const int want_mtu = spec && spec->mtu ? *spec->mtu : 0;
  if (mode == "connected" && !x.cm_supported) {
    r.verdict = Verdict::kFail;
    r.summary = x.name +
                " is asked for connected mode, which it cannot run: no RC flag in its "
                "hardware address (mlx5 enhanced IPoIB); writing \"connected\" fails EINVAL";
    r.fix =
        "use mode: datagram (mtu <= 4092), or load ib_ipoib with ipoib_enhanced=0 "
        "(options ib_ipoib ipoib_enhanced=0 in /etc/modprobe.d) for connected mode";
  } else if (x.mode == "datagram" && x.mtu && *x.mtu > kIpoibDatagramMaxMtu) {
    r.verdict = Verdict::kFail;
    r.summary = "datagram mode with mtu " + mtu_text +
                ": a UD datagram carries at most the IB "
                "MTU - 4 (4092)";
    r.fix = "set nics[].ipoib.mtu to 4092 or less, or mode: connected";
  } else if (want_mtu > 0 && mode == "datagram" && want_mtu > kIpoibDatagramMaxMtu) {
    r.verdict = Verdict::kFail;
    r.summary = "host.yaml asks mtu " + std::to_string(want_mtu) +
                " in datagram mode, above "
                "its largest MTU 4092";
    r.fix = "set nics[].ipoib.mode: connected, or mtu: 4092 or less";
  } else if (want_mtu > 0 && x.mode == "datagram" && mode == "datagram" && x.mtu &&
             *x.mtu < want_mtu) {
    r.verdict = Verdict::kWarn;
    r.summary = "mtu reads " + mtu_text + ", below the " + std::to_string(want_mtu) +
                " host.yaml asks: in datagram mode the kernel caps it at the broadcast "
                "group's MTU - 4, which the subnet manager sets";
    r.fix =
        "provisioner apply; if it stays lower, raise the IPoIB broadcast group's MTU in the "
        "subnet manager (opensm partitions.conf: mtu=5 is 4K) or ask for " +
        mtu_text;
  } else {
    r.verdict = Verdict::kOk;
    r.summary =
        (x.mode.empty() ? std::string("unknown") : x.mode) + " mode, mtu " + mtu_text +
        (x.mode == "connected" ? " (connected mode: up to 65520)" : " (datagram: up to 4092)");
  }
  sink.Add(std::move(r));
}

void CheckPkey(const IpoibPort* port, const std::string& parent, const std::string& child, int pkey,
               CheckSink& sink) {
  CheckResult r;
  r.module = kModule;
  r.id = "ipoib.pkey";
  r.target = child + " (P_Key " + PkeyText(pkey) + ")";
  if (port == nullptr || !port->pkeys_read) {
    r.verdict = Verdict::kWarn;
    r.summary = "the P_Key table of " + parent + "'s port could not be read";
    r.evidence.push_back({"RDMA port of " + parent, port == nullptr ? "none found" : "not read"});
    r.fix = "load mlx5_ib (the port's pkeys/ appear with its RDMA device), or snapshot them";
    sink.Add(std::move(r));
    return;
  }
  const std::string dir = "/sys/class/infiniband/" + port->rdma_device + "/ports/" +
                          std::to_string(port->port) + "/pkeys";
  std::string table;
  bool found = false;
  for (int k : port->pkeys) {
    table += (table.empty() ? "" : " ") + PkeyText(k);
    if ((k & ~kPkeyFullMember) == (pkey & ~kPkeyFullMember)) found = true;
  }
  r.evidence.push_back({dir + "/*", table.empty() ? "no entries" : table});
  if (found) {
    r.verdict = Verdict::kOk;
    r.summary = "partition " + PkeyText(pkey & ~kPkeyFullMember) + " is in " + port->rdma_device +
                " port " + std::to_string(port->port) + "'s P_Key table";
  } else {
    r.verdict = Verdict::kFail;
    r.summary = "P_Key " + PkeyText(pkey) + " is not in " + port->rdma_device + " port " +
                std::to_string(port->port) +
                "'s P_Key table: the subnet manager has not put this port in the partition, so " +
                child + " carries no traffic";
    r.fix = "add the port's GUID to partition " + PkeyText(pkey & ~kPkeyFullMember) +
            " in the subnet manager (opensm partitions.conf, or UFM), then re-check";
  }
  sink.Add(std::move(r));
}

}  // namespace

void CheckIpoib(const DesiredState* desired, const HostFacts& facts, CheckSink& sink) {
  for (const auto& [x, nic] : Targets(desired, facts)) {
    CheckModeMtu(*x, nic, sink);
    auto p = facts.ipoib.ports.find(x->name);
    const IpoibPort* port = p == facts.ipoib.ports.end() ? nullptr : &p->second;
    std::vector<int> seen;
    for (const std::string& c : x->children) {
      auto it = facts.ipoib.interfaces.find(c);
      if (it == facts.ipoib.interfaces.end() || !it->second.pkey) continue;
      seen.push_back(*it->second.pkey);
      CheckPkey(port, x->name, c, *it->second.pkey, sink);
    }
    if (nic == nullptr) continue;
    for (const std::string& text : nic->ipoib->pkeys) {
      auto pkey = ParsePkey(text);
      if (!pkey || !IsChildPkey(*pkey)) continue;
      if (std::find(seen.begin(), seen.end(), *pkey) != seen.end()) continue;
      CheckPkey(port, x->name, IpoibChildName(x->name, *pkey), *pkey, sink);
    }
  }
}

}  // namespace provisioner
