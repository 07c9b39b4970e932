#include "modules/health/health_checks.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "engine/model/pci_address.h"
#include "engine/model/selector.h"
#include "engine/model/topology.h"

namespace provisioner::health {
namespace {

std::string DevDir(const std::string& bdf) { return "/sys/bus/pci/devices/" + bdf + "/"; }

std::string Join(const std::vector<std::string>& v, const char* sep = ", ") {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

CheckResult Result(const char* id, std::string target) {
  CheckResult r;
  r.module = kModuleName;
  r.id = id;
  r.target = std::move(target);
  return r;
}

// "%g" without trailing zeros: 2.5, 16, 53.125.
std::string Number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// Leading decimal number of `text` followed by `unit` ("16.0 GT/s").
std::optional<double> LeadingNumber(std::string_view text, std::string_view unit) {
  const std::string s(text);
  const char* begin = s.c_str();
  char* end = nullptr;
  if (s.empty() || !(std::isdigit(static_cast<unsigned char>(s[0])) != 0)) return std::nullopt;
  const double v = std::strtod(begin, &end);
  if (end == begin || v <= 0) return std::nullopt;
  std::string_view rest(end);
  if (rest.substr(0, unit.size()) != unit) return std::nullopt;
  return v;
}

// The NIC PFs doctor gates: those host.yaml selects, else every NIC.
std::vector<const PciFunction*> GatedNics(const DesiredState* desired, const HostFacts& facts) {
  if (desired != nullptr && !desired->nics.empty()) {
    std::set<std::string> seen;
    std::vector<const PciFunction*> out;
    for (const NicSpec& nic : desired->nics) {
      for (const PciFunction* pf : SelectPfs(nic, facts)) {
        if (seen.insert(pf->pci_address).second) out.push_back(pf);
      }
    }
    if (!out.empty()) {
      std::sort(out.begin(), out.end(), [](const PciFunction* a, const PciFunction* b) {
        return a->pci_address < b->pci_address;
      });
      return out;
    }
  }
  return facts.Nics();
}

// The BDFs of the sysfs device path, host bridge side first:
// "/sys/devices/pci0000:16/0000:16:01.0/0000:17:00.0" -> {16:01.0, 17:00.0}.
std::vector<std::string> ChainOf(const std::string& sysfs_path) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos <= sysfs_path.size()) {
    size_t next = sysfs_path.find('/', pos);
    if (next == std::string::npos) next = sysfs_path.size();
    const std::string part = sysfs_path.substr(pos, next - pos);
    if (PciAddress::ParseSysfsName(part)) out.push_back(part);
    pos = next + 1;
  }
  return out;
}

// One link as the check sees it: the upstream end (a root or downstream
// port; "" when the function sits on the host bridge) and the function below.
struct LinkView {
  std::string port;
  std::string device;
  std::optional<double> speed, cap_speed, device_max_speed;
  std::optional<int> width, cap_width, device_max_width;
  std::string current_text;  // "16.0 GT/s PCIe x8"
  std::string cap_text;      // "32.0 GT/s x16"
  bool attrs = false;        // the device has link attributes at all
};

std::string LinkText(const std::string& speed, std::optional<int> width) {
  std::string s = speed.empty() ? "(no speed)" : speed;
  return width ? s + " x" + std::to_string(*width) : s + " (no width)";
}

template <typename T>
std::optional<T> Min(std::optional<T> a, std::optional<T> b) {
  if (a && b) return std::min(*a, *b);
  return a ? a : b;
}

std::string MaxText(const HealthFacts& h, const std::string& bdf) {
  auto it = h.pcie_links.find(bdf);
  if (it == h.pcie_links.end() || !it->second.Any()) return "(absent)";
  return LinkText(it->second.max_speed, it->second.max_width);
}

LinkView ViewLink(const HealthFacts& h, const std::string& port, const std::string& device) {
  LinkView v;
  v.port = port;
  v.device = device;
  auto it = h.pcie_links.find(device);
  if (it == h.pcie_links.end() || !it->second.Any()) return v;
  const PcieLinkAttrs& d = it->second;
  v.attrs = true;
  v.speed = ParseLinkSpeed(d.current_speed);
  v.width = d.current_width;
  v.device_max_speed = ParseLinkSpeed(d.max_speed);
  v.device_max_width = d.max_width;
  v.cap_speed = v.device_max_speed;
  v.cap_width = v.device_max_width;
  if (!port.empty()) {
    auto p = h.pcie_links.find(port);
    if (p != h.pcie_links.end()) {
      v.cap_speed = Min(v.cap_speed, ParseLinkSpeed(p->second.max_speed));
      if (p->second.max_width && *p->second.max_width > 0) {
        v.cap_width = Min(v.cap_width, p->second.max_width);
      }
    }
  }
  if (v.cap_width && *v.cap_width <= 0) v.cap_width.reset();
  v.current_text = LinkText(d.current_speed, d.current_width);
  v.cap_text = (v.cap_speed ? Number(*v.cap_speed) + " GT/s" : std::string("(unknown speed)")) +
               (v.cap_width ? " x" + std::to_string(*v.cap_width) : std::string());
  return v;
}

std::string LinkName(const LinkView& v) {
  return v.port.empty() ? v.device : v.port + " -> " + v.device;
}

enum class LinkVerdict { kOk, kSlotLimited, kDegraded, kDown, kUnknown };

LinkVerdict Judge(const LinkView& v) {
  if (!v.attrs) return LinkVerdict::kUnknown;
  if (!v.cap_speed && !v.cap_width) return LinkVerdict::kUnknown;  // "Unknown" both ends
  if (!v.speed || v.width.value_or(0) == 0) return LinkVerdict::kDown;
  if ((v.cap_speed && *v.speed < *v.cap_speed) || (v.cap_width && *v.width < *v.cap_width)) {
    return LinkVerdict::kDegraded;
  }
  if ((v.device_max_speed && *v.speed < *v.device_max_speed) ||
      (v.device_max_width && *v.width < *v.device_max_width)) {
    return LinkVerdict::kSlotLimited;
  }
  return LinkVerdict::kOk;
}

void CheckPcieLink(const std::string& target, const PciFunction& f, const HostFacts& facts,
                   CheckSink& sink) {
  CheckResult r = Result("health.pcie-link", target);
  const std::vector<std::string> chain = ChainOf(f.sysfs_path);
  // From the device up to the link below the root port.
  std::vector<LinkView> links;
  for (size_t i = chain.size(); i-- > 0;) {
    if (i == 0 && chain.size() > 1) break;  // a root port's own link is its child's
    links.push_back(ViewLink(facts.health, i > 0 ? chain[i - 1] : "", chain[i]));
  }
  std::vector<std::string> degraded, down, limited;
  bool device_attrs = false;
  for (const LinkView& v : links) {
    const std::string dir = DevDir(v.device);
    if (v.device == f.pci_address) device_attrs = v.attrs;
    if (!v.attrs) {
      r.evidence.push_back({dir + "current_link_speed", "(absent)"});
      continue;
    }
    r.evidence.push_back({dir + "current_link_{speed,width}", v.current_text});
    r.evidence.push_back({dir + "max_link_{speed,width}", MaxText(facts.health, v.device)});
    const std::string line = LinkName(v) + " at " + v.current_text + ", capable of " + v.cap_text;
    switch (Judge(v)) {
      case LinkVerdict::kDegraded:
        degraded.push_back(line);
        break;
      case LinkVerdict::kDown:
        down.push_back(LinkName(v) + " reads " + v.current_text);
        break;
      case LinkVerdict::kSlotLimited:
        limited.push_back(LinkName(v) + " at " + v.current_text + ": " + v.device +
                          " could do more than " + (v.port.empty() ? "its slot" : v.port) +
                          " offers");
        break;
      case LinkVerdict::kOk:
      case LinkVerdict::kUnknown:
        break;
    }
  }
  // The root port's own maximum (the other ports are listed as devices).
  if (!links.empty() && !links.back().port.empty()) {
    r.evidence.push_back({DevDir(links.back().port) + "max_link_{speed,width}",
                          MaxText(facts.health, links.back().port)});
  }
  const std::string retrain_port = [&] {
    for (const LinkView& v : links) {
      if (Judge(v) == LinkVerdict::kDegraded || Judge(v) == LinkVerdict::kDown) return v.port;
    }
    return std::string();
  }();
  if (!down.empty() || !degraded.empty()) {
    r.verdict = Verdict::kFail;
    std::vector<std::string> all = down;
    all.insert(all.end(), degraded.begin(), degraded.end());
    r.summary = "PCIe link trained below its maximum: " + Join(all, "; ");
    r.fix = "retrain the link from the port above (" +
            std::string(retrain_port.empty() ? "<port>" : retrain_port) + ": setpci -s " +
            (retrain_port.empty() ? "<port>" : retrain_port) +
            " CAP_EXP+10.w=0020:0020, then re-run doctor); if it stays degraded, reseat the card "
            "and its riser/cable, check the slot's speed and bifurcation settings in the BIOS, and "
            "the kernel log (dmesg | grep -i 'PCIe bandwidth')";
  } else if (!limited.empty()) {
    r.verdict = Verdict::kWarn;
    r.summary = "PCIe link limited by the slot: " + Join(limited, "; ");
    r.fix =
        "move the card to a slot (or behind a switch port) that supports its full speed and "
        "width, if the platform has one";
  } else if (!device_attrs) {
    r.verdict = Verdict::kWarn;
    r.summary = "no PCIe link attributes for " + f.pci_address +
                " (not a PCI Express function, or not captured)";
    r.fix = "run doctor on the host, or snapshot it with the PCI functions' *_link_* files";
  } else {
    r.verdict = Verdict::kOk;
    const LinkView& own = links.front();
    r.summary = "PCIe link at " + own.current_text +
                (links.size() > 1 ? ", and every link above it at its maximum" : ", its maximum");
  }
  sink.Add(std::move(r));
}

void CheckPcieLinks(const std::vector<const PciFunction*>& nics, const HostFacts& facts,
                    CheckSink& sink) {
  for (const PciFunction* pf : nics) {
    std::string target = "NIC " + pf->pci_address;
    if (!pf->rdma_devices.empty())
      target += " (" + pf->rdma_devices[0] + ")";
    else if (!pf->netdevs.empty())
      target += " (" + pf->netdevs[0] + ")";
    CheckPcieLink(target, *pf, facts, sink);
  }
  for (const PciFunction& f : facts.pci) {
    if (!f.IsVf() && IsGpuFunction(f)) CheckPcieLink("GPU " + f.pci_address, f, facts, sink);
  }
}

struct PortRef {
  const RdmaDevice* dev;
  const RdmaPort* port;
  const PciFunction* pf;
};

std::string PortDir(const PortRef& p) {
  return "/sys/class/infiniband/" + p.dev->name + "/ports/" + std::to_string(p.port->port) + "/";
}
std::string PortName(const PortRef& p) {
  return p.dev->name + " port " + std::to_string(p.port->port);
}

std::vector<PortRef> PfPorts(const std::vector<const PciFunction*>& nics, const HostFacts& facts) {
  std::vector<PortRef> out;
  for (const RdmaDevice& d : facts.rdma.devices) {
    if (d.is_vf || d.pci_address.empty()) continue;
    auto pf = std::find_if(nics.begin(), nics.end(),
                           [&](const PciFunction* f) { return f->pci_address == d.pci_address; });
    if (pf == nics.end()) continue;
    for (const RdmaPort& p : d.ports) out.push_back({&d, &p, *pf});
  }
  return out;
}

void CheckPortStates(const std::vector<PortRef>& ports, CheckSink& sink) {
  for (const PortRef& p : ports) {
    if (p.port->link_layer != "Ethernet") continue;  // InfiniBand: rdma.ib-port
    CheckResult r = Result(
        "health.port-state",
        PortName(p) + (p.port->netdev.empty() ? std::string() : " (" + p.port->netdev + ")"));
    r.evidence = {{PortDir(p) + "state", p.port->state.empty() ? "(unreadable)" : p.port->state},
                  {PortDir(p) + "phys_state",
                   p.port->phys_state.empty() ? "(unreadable)" : p.port->phys_state}};
    if (p.port->state.empty() || p.port->phys_state.empty()) {
      r.verdict = Verdict::kWarn;
      r.summary = "RoCE port state not captured";
      r.fix = "run doctor on the host, or snapshot /sys/class/infiniband with ports/*/state";
    } else if (p.port->state != "ACTIVE" || p.port->phys_state != "LinkUp") {
      r.verdict = Verdict::kFail;
      r.summary = "RoCE port is " + p.port->state + " (" + p.port->phys_state +
                  "), not ACTIVE (LinkUp): no RDMA traffic on this rail";
      const std::string nd = p.port->netdev.empty() ? "<netdev>" : p.port->netdev;
      r.fix = p.port->phys_state == "LinkUp"
                  ? "bring " + nd + " up (ip link set " + nd + " up, or spec.nics[].mtu/links)"
                  : "check the cable, transceiver and switch port: ethtool " + nd +
                        " (Link detected, Speed), ethtool -m " + nd +
                        "; bring it up with ip link set " + nd + " up";
    } else {
      r.verdict = Verdict::kOk;
      r.summary = "RoCE port ACTIVE (LinkUp)";
    }
    sink.Add(std::move(r));
  }
}

void CheckPortRates(const std::vector<PortRef>& ports, CheckSink& sink) {
  // Rail peers: ACTIVE ports of one link layer on PFs of one PCI device ID.
  std::map<std::pair<std::string, std::string>, std::vector<const PortRef*>> groups;
  for (const PortRef& p : ports) {
    if (p.port->state != "ACTIVE" || !ParsePortRate(p.port->rate)) continue;
    groups[{p.port->link_layer, p.pf->vendor + ":" + p.pf->device_id}].push_back(&p);
  }
  for (const auto& [key, peers] : groups) {
    if (peers.size() < 2) continue;
    double best = 0;
    for (const PortRef* p : peers) best = std::max(best, *ParsePortRate(p->port->rate));
    for (const PortRef* p : peers) {
      const double rate = *ParsePortRate(p->port->rate);
      CheckResult r = Result("health.port-rate", PortName(*p));
      std::vector<std::string> faster;
      for (const PortRef* q : peers) {
        r.evidence.push_back({PortDir(*q) + "rate", q->port->rate});
        if (*ParsePortRate(q->port->rate) > rate) faster.push_back(PortName(*q));
      }
      const std::string layer = key.first == "Ethernet" ? "RoCE" : key.first;
      if (rate < best) {
        r.verdict = Verdict::kFail;
        r.summary = layer + " port at " + p->port->rate + ", below its " +
                    std::to_string(peers.size() - 1) + " rail peer(s) (" + key.second + ", " +
                    layer + ") at up to " + Number(best) + " Gb/sec: " + Join(faster);
        const std::string nd = p->port->netdev.empty() ? "<netdev>" : p->port->netdev;
        r.fix = key.first == "Ethernet"
                    ? "check the cable/transceiver and the switch port speed (ethtool " + nd +
                          ", ethtool -m " + nd +
                          "); auto-negotiation to the peers' speed: "
                          "ethtool -s " +
                          nd + " autoneg on"
                    : "check the cable and the switch port (ibportstate, iblinkinfo): a port "
                      "that trains at a lower width or speed";
      } else {
        r.verdict = Verdict::kOk;
        r.summary = layer + " port at " + p->port->rate + ", as fast as its " +
                    std::to_string(peers.size() - 1) + " rail peer(s)";
      }
      sink.Add(std::move(r));
    }
  }
}

bool Loaded(const HostFacts& facts, const std::string& m) {
  return std::find(facts.loaded_modules.begin(), facts.loaded_modules.end(), m) !=
         facts.loaded_modules.end();
}

void CheckGpuDirect(const std::vector<const PciFunction*>& nics, const HostFacts& facts,
                    CheckSink& sink) {
  std::vector<std::string> gpus;
  for (const PciFunction& f : facts.pci) {
    if (!f.IsVf() && IsGpuFunction(f) && f.vendor == "10de") gpus.push_back(f.pci_address);
  }
  const bool rdma = std::any_of(nics.begin(), nics.end(),
                                [](const PciFunction* f) { return !f->rdma_devices.empty(); });
  if (gpus.empty() || !rdma) return;
  CheckResult r = Result("health.gpudirect-rdma", "GPUDirect RDMA");
  r.evidence.push_back({"NVIDIA GPUs", Join(gpus)});
  std::string peermem;
  for (const char* m : {"nvidia_peermem", "nv_peer_mem"}) {
    if (Loaded(facts, m)) peermem = m;
  }
  // Without /proc/modules a module missing from the (inferred) list may be
  // loaded all the same: not checked, as rdma.gpudirect says of gdrdrv.
  const bool modules_unknown =
      facts.loaded_modules.empty() || facts.kmod.loaded_source == kInferredLoadedSource;
  r.evidence.push_back({"/proc/modules", !peermem.empty()  ? peermem + " loaded"
                                         : modules_unknown ? "(not captured)"
                                                           : "no nvidia_peermem, no nv_peer_mem"});
  r.evidence.push_back({"/proc/sys/kernel/osrelease",
                        facts.kernel.release.empty() ? "(unknown)" : facts.kernel.release});
  r.evidence.push_back(
      {"/proc/driver/nvidia/version", facts.health.nvidia_version.value_or("(absent)")});
  const std::string dmabuf =
      DmaBufUnavailableReason(facts.kernel.release, facts.health.nvidia_version);
  if (!peermem.empty()) {
    r.verdict = Verdict::kOk;
    r.summary =
        "peer memory through " + peermem + (dmabuf.empty() ? " (dma-buf also available)" : "");
  } else if (dmabuf.empty()) {
    r.verdict = Verdict::kOk;
    r.summary = "peer memory through dma-buf (NVIDIA open kernel module, kernel " +
                facts.kernel.release + "); nvidia_peermem not needed";
  } else if (modules_unknown || (!facts.health.nvidia_version && Loaded(facts, "nvidia"))) {
    // A live host with nvidia loaded always has /proc/driver/nvidia/version:
    // a tree without it (or without /proc/modules) did not capture it.
    r.verdict = Verdict::kWarn;
    r.summary = modules_unknown
                    ? "GPUDirect RDMA not checked: /proc/modules not captured"
                    : "nvidia_peermem is not loaded and the dma-buf path is not captured "
                      "(/proc/driver/nvidia/version absent while nvidia is loaded)";
    r.fix =
        "load nvidia_peermem (spec.kernelModules), or run doctor on the host (or snapshot it "
        "with /proc/driver/nvidia/version) to check the dma-buf path";
  } else {
    r.verdict = Verdict::kFail;
    r.summary =
        "no GPUDirect RDMA: nvidia_peermem is not loaded and the dma-buf path is not "
        "available (" +
        dmabuf + "); NCCL stages GPU traffic through host memory";
    r.fix =
        "load nvidia_peermem (list it in spec.kernelModules so it loads at boot; it ships "
        "with the NVIDIA driver), or use NVIDIA's open kernel modules (R515 or later) on "
        "Linux 5.12 or later, whose dma-buf path NCCL uses without a peer memory module";
  }
  sink.Add(std::move(r));
}

// "6.1.0-18-amd64" -> (6, 1); nullopt when it does not start with two numbers.
std::optional<std::pair<int, int>> KernelVersion(const std::string& release) {
  int major = 0, minor = 0;
  if (std::sscanf(release.c_str(), "%d.%d", &major, &minor) != 2) return std::nullopt;
  return std::make_pair(major, minor);
}

}  // namespace

std::optional<double> ParseLinkSpeed(std::string_view text) { return LeadingNumber(text, " GT/s"); }

std::optional<double> ParsePortRate(std::string_view text) {
  return LeadingNumber(text, " Gb/sec");
}

std::string DmaBufUnavailableReason(const std::string& kernel_release,
                                    const std::optional<std::string>& nvidia_version) {
  const auto kv = KernelVersion(kernel_release);
  if (!kv) return "kernel release unknown";
  if (*kv < std::make_pair(5, 12)) {
    return "kernel " + kernel_release + " is older than 5.12";
  }
  if (!nvidia_version) return "no /proc/driver/nvidia/version: the nvidia module is not loaded";
  if (nvidia_version->find("Open Kernel Module") == std::string::npos) {
    return "the NVIDIA driver is the proprietary kernel module, dma-buf needs the open one";
  }
  // "... Open Kernel Module for x86_64  550.54.15  Release Build ...": the
  // first number with a dot after "Module".
  const size_t at = nvidia_version->find("Module");
  int branch = 0;
  for (size_t i = at; i < nvidia_version->size(); ++i) {
    if (std::isdigit(static_cast<unsigned char>((*nvidia_version)[i])) != 0 &&
        (*nvidia_version)[i - 1] == ' ') {
      const char* s = nvidia_version->c_str() + i;
      char* end = nullptr;
      const long v = std::strtol(s, &end, 10);
      if (end != s && *end == '.') {
        branch = static_cast<int>(v);
        break;
      }
    }
  }
  if (branch > 0 && branch < 515) {
    return "NVIDIA driver " + std::to_string(branch) + " is older than R515";
  }
  return "";
}

void CheckHealth(const DesiredState* desired, const HostFacts& facts, CheckSink& sink) {
  if (!facts.health.discovered) return;
  const std::vector<const PciFunction*> nics = GatedNics(desired, facts);
  CheckPcieLinks(nics, facts, sink);
  const std::vector<PortRef> ports = PfPorts(nics, facts);
  CheckPortStates(ports, sink);
  CheckPortRates(ports, sink);
  CheckGpuDirect(nics, facts, sink);
}

}  // namespace provisioner::health
