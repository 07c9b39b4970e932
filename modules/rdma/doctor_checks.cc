#include "modules/rdma/doctor_checks.h"

#include <algorithm>
#include <string>
#include <vector>

#include "engine/model/ipoib_facts.h"
#include "engine/model/selector.h"
#include "modules/rdma/netns_plan.h"

namespace provisioner::rdma {
namespace {

std::string Dev(const RdmaDevice& d) { return "/sys/class/infiniband/" + d.name; }
std::string PortDir(const RdmaDevice& d, const RdmaPort& p) {
  return Dev(d) + "/ports/" + std::to_string(p.port);
}
std::string PortName(const RdmaDevice& d, const RdmaPort& p) {
  return d.name + " port " + std::to_string(p.port);
}

std::string Join(const std::vector<std::string>& v, const char* sep = ", ") {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
  return s.empty() ? "(none)" : s;
}

CheckResult Result(const char* id, std::string target, Verdict v, std::string summary) {
  CheckResult r;
  r.module = kModuleName;
  r.id = id;
  r.target = std::move(target);
  r.verdict = v;
  r.summary = std::move(summary);
  return r;
}

bool IsNvidiaGpu(const PciFunction& f) {
  return (f.class_code >> 16) == 0x03 && f.vendor == "10de";
}

bool Loaded(const HostFacts& facts, const std::string& m) {
  return std::find(facts.loaded_modules.begin(), facts.loaded_modules.end(), m) !=
         facts.loaded_modules.end();
}

std::vector<const RdmaDevice*> DevicesOn(const HostFacts& facts, const std::string& pci) {
  std::vector<const RdmaDevice*> out;
  for (const auto& d : facts.rdma.devices) {
    if (d.pci_address == pci) out.push_back(&d);
  }
  return out;
}

size_t CountPrefix(const std::vector<std::string>& names, const std::string& prefix) {
  return std::count_if(names.begin(), names.end(),
                       [&](const std::string& n) { return n.rfind(prefix, 0) == 0; });
}

}  // namespace

void CheckPortNetdevs(const HostFacts& facts, CheckSink& sink) {
  for (const auto& d : facts.rdma.devices) {
    for (const auto& p : d.ports) {
      if (p.link_layer != "Ethernet") continue;
      if (!p.gids_captured || !d.device_captured) {
        // A partial capture (gpud's copy of /sys/class/infiniband): the
        // evidence is missing, which is not the host's fault.
        const std::string missing =
            !d.device_captured ? Dev(d) + "/device" : PortDir(d, p) + "/gids";
        CheckResult r = Result("rdma.port-netdev", PortName(d, p), Verdict::kWarn,
                               "not captured: " + missing + " is not in this tree; " +
                                   PortName(d, p) + "'s netdev and GIDs not checked");
        r.evidence = {{missing, "(not captured)"}};
        r.fix = "capture the whole /sys/class/infiniband tree (links and gids/) to check it";
        sink.Add(std::move(r));
        continue;
      }
      std::vector<std::string> gid_netdevs;
      for (const auto& g : p.gids) {
        if (!g.netdev.empty()) gid_netdevs.push_back(std::to_string(g.index) + "=" + g.netdev);
      }
      if (p.netdev.empty()) {
        CheckResult r = Result("rdma.port-netdev", PortName(d, p), Verdict::kFail,
                               PortName(d, p) +
                                   " (RoCE) has no netdev in this network namespace, so no usable "
                                   "RoCE GID: verbs fail with \"ibv_modify_qp failed: No such "
                                   "device\" / \"Failed to modify QP to RTR\"");
        r.evidence = {{Dev(d) + "/device/net", "(no netdev here)"},
                      {PortDir(d, p) + "/gid_attrs/ndevs", Join(gid_netdevs)}};
        r.fix =
            "give this namespace the port's netdev: in exclusive mode move the RDMA device with "
            "its netdev (RDMA CNI / `rdma dev set " +
            d.name +
            " netns <ns>` plus the netdev); in "
            "shared mode attach a macvlan/ipvlan interface on its PF";
        sink.Add(std::move(r));
        continue;
      }
      bool has_gid = std::any_of(p.gids.begin(), p.gids.end(),
                                 [&](const RdmaGid& g) { return g.netdev == p.netdev; });
      CheckResult r =
          Result("rdma.port-netdev", PortName(d, p), has_gid ? Verdict::kOk : Verdict::kFail,
                 has_gid ? PortName(d, p) + " has netdev " + p.netdev + " with GIDs"
                         : PortName(d, p) + " netdev " + p.netdev + " has no GID in the table");
      r.evidence = {{Dev(d) + "/device/net", p.netdev},
                    {PortDir(d, p) + "/gid_attrs/ndevs", Join(gid_netdevs)}};
      if (!has_gid)
        r.fix =
            "bring " + p.netdev + " up (ip link set " + p.netdev + " up); the kernel adds its GIDs";
      sink.Add(std::move(r));
    }
  }
}

void CheckRoceV2Gids(const HostFacts& facts, CheckSink& sink) {
  for (const auto& d : facts.rdma.devices) {
    for (const auto& p : d.ports) {
      if (p.link_layer != "Ethernet" || p.netdev.empty() || !p.gids_captured) continue;
      std::vector<std::string> v4;
      auto it = facts.rdma.addresses.find(p.netdev);
      const bool known = facts.rdma.addresses_known;
      if (known && it != facts.rdma.addresses.end()) v4 = it->second.ipv4;
      if (!known) {
        // Without address facts, the table's own IPv4 GIDs are the addresses.
        for (const auto& a : p.roce_v2) {
          if (a.family == 4 && a.netdev == p.netdev) v4.push_back(a.address);
        }
      }
      if (v4.empty()) {
        CheckResult r =
            Result("rdma.roce-v2-gid", PortName(d, p) + " " + p.netdev, Verdict::kWarn,
                   p.netdev + " has no IPv4 address, so " + PortName(d, p) +
                       " has no IPv4 RoCE v2 GID (NCCL_IB_GID_INDEX has nothing to point at)");
        r.evidence = {{PortDir(d, p) + "/gids", std::to_string(p.gids.size()) + " used slots"}};
        r.fix = "assign the RoCE subnet's address to " + p.netdev;
        sink.Add(std::move(r));
        continue;
      }
      for (const auto& addr : v4) {
        const RoceAddress* hit = nullptr;
        for (const auto& a : p.roce_v2) {
          if (a.family == 4 && a.address == addr && a.netdev == p.netdev) hit = &a;
        }
        if (hit != nullptr) {
          CheckResult r = Result("rdma.roce-v2-gid", PortName(d, p) + " " + addr, Verdict::kOk,
                                 p.netdev + " " + addr + " is RoCE v2 GID index " +
                                     std::to_string(hit->gid_index) +
                                     ": NCCL_IB_GID_INDEX=" + std::to_string(hit->gid_index));
          r.evidence = {
              {PortDir(d, p) + "/gid_attrs/types/" + std::to_string(hit->gid_index), "RoCE v2"}};
          sink.Add(std::move(r));
          continue;
        }
        CheckResult r = Result("rdma.roce-v2-gid", PortName(d, p) + " " + addr, Verdict::kFail,
                               p.netdev + " has IPv4 " + addr + " but " + PortName(d, p) +
                                   " has no RoCE v2 GID for it");
        std::vector<std::string> have;
        for (const auto& a : p.roce_v2)
          have.push_back(std::to_string(a.gid_index) + "=" + a.address);
        r.evidence = {{"address of " + p.netdev, addr},
                      {PortDir(d, p) + " RoCE v2 GIDs", Join(have)}};
        r.fix =
            "check that RoCE v2 is enabled (cma_roce_mode / `echo RoCE v2 > "
            "/sys/kernel/config/rdma_cm/" +
            d.name + "/ports/" + std::to_string(p.port) +
            "/default_roce_mode`) and the address is on " + p.netdev +
            " itself (not a bridge or a VLAN on top); then set NCCL_IB_GID_INDEX to its slot";
        sink.Add(std::move(r));
      }
    }
  }
}

void CheckNetnsMode(const DesiredState* desired, const HostFacts& facts, CheckSink& sink) {
  if (facts.rdma.devices.empty() && !facts.rdma_netns_mode) return;
  const std::string live = facts.rdma_netns_mode.value_or("");
  const std::string persistent = facts.rdma.persistent_netns_mode.value_or("shared");
  const std::string psrc = facts.rdma.persistent_netns_mode
                               ? facts.rdma.persistent_netns_source
                               : "(not set in modprobe.d: kernel default shared)";
  if (desired != nullptr && desired->rdma && desired->rdma->netns_mode) {
    const std::string& want = *desired->rdma->netns_mode;
    bool ok = live == want;
    CheckResult r =
        Result("rdma.netns-mode", "system", ok ? Verdict::kOk : Verdict::kFail,
               ok ? "RDMA netns mode is " + live + " as host.yaml wants"
                  : "RDMA netns mode is " + (live.empty() ? std::string("unknown") : live) +
                        ", host.yaml wants " + want);
    r.evidence = {
        {facts.rdma.netns_mode_source.empty() ? "netns mode" : facts.rdma.netns_mode_source, live},
        {"spec.rdma.netnsMode", want}};
    if (!ok)
      r.fix = "provisioner apply (rdma system set netns " + want +
              "; needs no other network namespace)";
    sink.Add(std::move(r));
    if (desired->rdma->persist && persistent != want) {
      CheckResult p = Result("rdma.netns-mode-persistent", "modprobe.d", Verdict::kFail,
                             "after a reboot the RDMA netns mode would be " + persistent +
                                 ", host.yaml wants " + want);
      p.evidence = {{psrc, persistent}};
      p.fix = "provisioner apply (writes options ib_core netns_mode=" +
              std::string(want == "exclusive" ? "0" : "1") + " to /etc/modprobe.d/ib_core.conf)";
      sink.Add(std::move(p));
    }
    return;
  }
  if (!live.empty() && persistent != live) {
    CheckResult p =
        Result("rdma.netns-mode-persistent", "modprobe.d", Verdict::kWarn,
               "RDMA netns mode is " + live + " now but " + persistent + " after a reboot");
    p.evidence = {{facts.rdma.netns_mode_source, live}, {psrc, persistent}};
    p.fix = "set spec.rdma.netnsMode and apply, or edit " +
            std::string(facts.rdma.persistent_netns_mode ? psrc : "/etc/modprobe.d/ib_core.conf");
    sink.Add(std::move(p));
  }
}

void CheckDevFiles(const HostFacts& facts, CheckSink& sink) {
  if (facts.rdma.devices.empty()) return;
  size_t ports = 0, ib_ports = 0;
  for (const auto& d : facts.rdma.devices) {
    ports += d.ports.size();
    for (const auto& p : d.ports) ib_ports += p.link_layer == "InfiniBand";
  }
  if (!facts.rdma.dev_files && !facts.rdma.dev_captured) {
    CheckResult r = Result("rdma.dev-files", "/dev/infiniband", Verdict::kWarn,
                           "not captured: this host tree has no device files (/dev/infiniband, "
                           "/dev/null): rdma-core device files not checked");
    r.evidence = {{"/dev", "(not captured)"}};
    r.fix = "capture /dev/infiniband with the tree to check it";
    sink.Add(std::move(r));
    return;
  }
  if (!facts.rdma.dev_files) {
    CheckResult r = Result("rdma.dev-files", "/dev/infiniband", Verdict::kFail,
                           "/dev/infiniband is missing: rdma-core finds no device "
                           "(\"No IB devices found\") although the kernel has " +
                               std::to_string(facts.rdma.devices.size()));
    r.evidence = {{"/dev/infiniband", "(missing)"}};
    r.fix =
        "load ib_uverbs (and rdma_ucm, ib_umad); in a container, mount /dev/infiniband "
        "(the RDMA device plugin does it for pods)";
    sink.Add(std::move(r));
    return;
  }
  const auto& f = *facts.rdma.dev_files;
  size_t uverbs = CountPrefix(f, "uverbs"), umad = CountPrefix(f, "umad"),
         issm = CountPrefix(f, "issm");
  bool rdma_cm = std::find(f.begin(), f.end(), "rdma_cm") != f.end();
  std::vector<std::pair<std::string, std::string>> ev = {
      {"/dev/infiniband", Join(f, " ")},
      {"devices/ports", std::to_string(facts.rdma.devices.size()) + "/" + std::to_string(ports)}};
  if (uverbs < facts.rdma.devices.size()) {
    CheckResult r = Result("rdma.dev-files", "/dev/infiniband/uverbs*", Verdict::kFail,
                           std::to_string(uverbs) + " uverbs device files for " +
                               std::to_string(facts.rdma.devices.size()) + " RDMA devices");
    r.evidence = ev;
    r.fix =
        "modprobe ib_uverbs; in a container, mount every /dev/infiniband/uverbsN of its devices";
    sink.Add(std::move(r));
  } else {
    CheckResult r = Result("rdma.dev-files", "/dev/infiniband/uverbs*", Verdict::kOk,
                           std::to_string(uverbs) + " uverbs device files");
    r.evidence = ev;
    sink.Add(std::move(r));
  }
  if (umad < ports || issm < ports) {
    // Needed by IB management tools and subnet managers; verbs work without.
    CheckResult r = Result("rdma.dev-files", "/dev/infiniband/umad*,issm*",
                           ib_ports > 0 ? Verdict::kFail : Verdict::kWarn,
                           std::to_string(umad) + " umad / " + std::to_string(issm) +
                               " issm files for " + std::to_string(ports) + " ports");
    r.evidence = ev;
    r.fix = "modprobe ib_umad (ibstat, ibv_devinfo -v, opensm and UCX on InfiniBand need umad)";
    sink.Add(std::move(r));
  }
  if (!rdma_cm) {
    CheckResult r = Result("rdma.dev-files", "/dev/infiniband/rdma_cm", Verdict::kWarn,
                           "/dev/infiniband/rdma_cm is missing: RDMA CM (rdma_cm, NCCL's "
                           "connection setup over RoCE with some plugins, ib_write_bw -R) fails");
    r.evidence = ev;
    r.fix = "modprobe rdma_ucm";
    sink.Add(std::move(r));
  }
}

void CheckIbPorts(const HostFacts& facts, CheckSink& sink) {
  for (const auto& d : facts.rdma.devices) {
    for (const auto& p : d.ports) {
      if (p.link_layer != "InfiniBand") continue;
      const bool active = p.state == "ACTIVE";
      // An unreadable sm_lid (a partial capture) says nothing about the SM.
      const bool sm = p.sm_lid.value_or(1) != 0;
      Verdict v = active && sm ? Verdict::kOk : Verdict::kFail;
      std::string summary;
      if (!sm) {
        summary = PortName(d, p) + " sees no subnet manager (sm_lid 0); port state " +
                  (p.state.empty() ? std::string("unknown") : p.state);
      } else if (!active) {
        summary = PortName(d, p) + " is " + p.state + " (" + p.phys_state + "), not ACTIVE";
      } else if (p.sm_lid) {
        summary = PortName(d, p) + " is ACTIVE, subnet manager at LID " + std::to_string(*p.sm_lid);
      } else {
        summary = PortName(d, p) + " is ACTIVE (sm_lid not readable)";
      }
      CheckResult r = Result("rdma.ib-port", PortName(d, p), v, summary);
      r.evidence = {
          {PortDir(d, p) + "/state", p.state},
          {PortDir(d, p) + "/phys_state", p.phys_state},
          {PortDir(d, p) + "/sm_lid", p.sm_lid ? std::to_string(*p.sm_lid) : "(unreadable)"},
          {PortDir(d, p) + "/lid", p.lid ? std::to_string(*p.lid) : "(unreadable)"}};
      if (!sm) {
        r.fix = "run a subnet manager on the fabric (opensm on one host, or the switch's SM)";
      } else if (!active) {
        r.fix = p.phys_state == "LinkUp"
                    ? "wait for the SM to configure the port, or check its partition/pkey"
                    : "check cable and switch port (phys_state " + p.phys_state + ")";
      }
      sink.Add(std::move(r));
    }
  }
}

void CheckDevicePluginSelectors(const DesiredState& desired, const HostFacts& facts,
                                CheckSink& sink) {
  for (size_t i = 0; i < desired.nics.size(); ++i) {
    const NicSpec& nic = desired.nics[i];
    if (!nic.resource_name) continue;
    std::vector<const PciFunction*> pfs = SelectPfs(nic, facts);
    std::vector<std::string> devices;
    const bool vfs = nic.num_vfs.value_or(0) > 0;
    for (const PciFunction* pf : pfs) {
      if (vfs) {
        if (pf->sriov) {
          for (const auto& vf : pf->sriov->vfs) devices.push_back(vf.pci_address);
        }
      } else {
        devices.push_back(pf->pci_address);
      }
    }
    std::string target = "resource " + *nic.resource_name;
    std::string sel = "vendor " + nic.selector.vendor.value_or("*") + " deviceID " +
                      nic.selector.device_id.value_or("*");
    if (devices.empty()) {
      CheckResult r =
          Result("rdma.device-plugin", target, Verdict::kFail,
                 "nics[" + nic.name + "] (" + sel + ") matches no " + (vfs ? "VF" : "device") +
                     ": the device plugin reports \"resource count is 0\"");
      r.evidence = {{DesiredState::NicPath(i) + ".nicSelector", sel},
                    {"matched PFs", std::to_string(pfs.size())}};
      r.fix =
          pfs.empty()
              ? "fix the nicSelector (provisioner discover shows vendor/deviceID of each NIC)"
              : "provisioner apply to create the VFs (numVfs " + std::to_string(*nic.num_vfs) + ")";
      sink.Add(std::move(r));
    } else {
      CheckResult r = Result("rdma.device-plugin", target, Verdict::kOk,
                             "nics[" + nic.name + "] gives " + std::to_string(devices.size()) +
                                 (vfs ? " VFs" : " devices") + " to " + *nic.resource_name);
      r.evidence = {{DesiredState::NicPath(i) + ".nicSelector", sel}, {"devices", Join(devices)}};
      sink.Add(std::move(r));
    }
  }
  if (desired.kubernetes && desired.kubernetes->rdma_shared_device_plugin) {
    size_t rdma_pfs = 0;
    for (const auto& nic : desired.nics) {
      for (const PciFunction* pf : SelectPfs(nic, facts)) rdma_pfs += !pf->rdma_devices.empty();
    }
    const std::string& name = desired.kubernetes->rdma_shared_device_plugin->resource_name;
    CheckResult r = Result(
        "rdma.device-plugin", "resource " + name, rdma_pfs > 0 ? Verdict::kOk : Verdict::kFail,
        rdma_pfs > 0
            ? std::to_string(rdma_pfs) + " PFs with RDMA devices for the shared device plugin"
            : "the RDMA shared device plugin's selectors match no PF with an RDMA "
              "device: \"resource count is 0\"");
    r.evidence = {{"spec.kubernetes.rdmaSharedDevicePlugin.resourceName", name}};
    if (rdma_pfs == 0) r.fix = "load mlx5_ib (RDMA devices) and check the nics' selectors";
    sink.Add(std::move(r));
  }
}

void CheckLinkLayer(const DesiredState& desired, const HostFacts& facts, CheckSink& sink) {
  for (size_t i = 0; i < desired.nics.size(); ++i) {
    const NicSpec& nic = desired.nics[i];
    if (!nic.link_type) continue;
    const std::string want = *nic.link_type == "ib" ? "InfiniBand" : "Ethernet";
    for (const PciFunction* pf : SelectPfs(nic, facts)) {
      for (const RdmaDevice* d : DevicesOn(facts, pf->pci_address)) {
        for (const auto& p : d->ports) {
          bool ok = p.link_layer == want;
          CheckResult r =
              Result("rdma.link-layer", PortName(*d, p), ok ? Verdict::kOk : Verdict::kFail,
                     PortName(*d, p) + " link layer is " + p.link_layer +
                         (ok ? "" : ", nics[" + nic.name + "].linkType wants " + *nic.link_type));
          r.evidence = {{PortDir(*d, p) + "/link_layer", p.link_layer},
                        {DesiredState::NicPath(i) + ".linkType", *nic.link_type}};
          if (!ok) {
            r.fix = "mstconfig -d " + pf->pci_address + " set LINK_TYPE_P" +
                    std::to_string(p.port) + "=" + (*nic.link_type == "ib" ? "1" : "2") +
                    ", then reboot or mstfwreset";
          }
          sink.Add(std::move(r));
        }
      }
    }
  }
}

void CheckVfRdma(const DesiredState& desired, const HostFacts& facts, CheckSink& sink) {
  for (size_t i = 0; i < desired.nics.size(); ++i) {
    const NicSpec& nic = desired.nics[i];
    // isRdma per VF: its vfGroup's (issue 28 item 3), else the nic's.
    auto wants_rdma = [&nic](int vf_index) {
      for (const VfGroupSpec& g : nic.vf_groups) {
        if (g.Contains(vf_index)) return EffectiveVfGroup(nic, g).is_rdma.value_or(false);
      }
      return nic.is_rdma.value_or(false);
    };
    bool any = nic.is_rdma.value_or(false);
    for (const VfGroupSpec& g : nic.vf_groups) {
      any = any || EffectiveVfGroup(nic, g).is_rdma.value_or(false);
    }
    if (!any || nic.num_vfs.value_or(0) == 0) continue;
    for (const PciFunction* pf : SelectPfs(nic, facts)) {
      if (!pf->sriov || pf->sriov->vfs.empty()) continue;
      std::vector<std::string> missing;
      size_t wanted = 0;
      for (const auto& vf : pf->sriov->vfs) {
        if (!wants_rdma(vf.vf_index)) continue;
        ++wanted;
        if (vf.rdma_devices.empty()) missing.push_back(vf.pci_address);
      }
      if (wanted == 0) continue;
      CheckResult r =
          Result("rdma.vf-rdma", pf->pci_address, missing.empty() ? Verdict::kOk : Verdict::kFail,
                 missing.empty() ? "every VF of " + pf->pci_address + " has an RDMA device"
                                 : std::to_string(missing.size()) + " of " +
                                       std::to_string(wanted) + " VFs of " + pf->pci_address +
                                       " have no RDMA device, nics[" + nic.name + "] wants isRdma");
      r.evidence = {{"VFs without /sys/bus/pci/devices/<vf>/infiniband", Join(missing)},
                    {DesiredState::NicPath(i) + ".isRdma", "true"}};
      if (!missing.empty()) {
        r.fix =
            "load mlx5_ib; bind the VFs to mlx5_core (not vfio-pci); check that RoCE is enabled on "
            "the VFs (devlink port function set ... roce enable)";
      }
      sink.Add(std::move(r));
    }
  }
}

void CheckGpuDirect(const HostFacts& facts, CheckSink& sink) {
  std::vector<std::string> gpus;
  for (const auto& f : facts.pci) {
    if (IsNvidiaGpu(f)) gpus.push_back(f.pci_address);
  }
  if (gpus.empty() || facts.rdma.devices.empty()) return;
  // Without /proc/modules a module missing from the (inferred) list may be
  // loaded all the same: not checked, as health.gpudirect-rdma says too.
  const bool unknown =
      facts.loaded_modules.empty() || facts.kmod.loaded_source == kInferredLoadedSource;
  if (unknown && !Loaded(facts, "gdrdrv")) {
    CheckResult r = Result("rdma.gpudirect", "gdrdrv", Verdict::kWarn,
                           "gdrdrv not checked: /proc/modules not captured");
    r.evidence = {{"GPUs (class 03xx, vendor 10de)", Join(gpus)},
                  {"/proc/modules", "(not captured)"}};
    r.fix =
        "run doctor on the host (or snapshot it with /proc/modules); there: lsmod | grep gdrdrv";
    sink.Add(std::move(r));
    return;
  }
  struct Want {
    const char* module;
    const char* alias;  // the older out-of-tree name
    const char* what;
  };
  for (const Want& w :
       // GPUDirect RDMA itself (nvidia_peermem, or the dma-buf path that
       // makes it unnecessary) is health.gpudirect-rdma's gate.
       {Want{"gdrdrv", "", "GDRCopy (CPU copies to GPU memory)"}}) {
    bool loaded = Loaded(facts, w.module) || (*w.alias && Loaded(facts, w.alias));
    // Missing means slower (staging through host memory), not broken.
    CheckResult r = Result(
        "rdma.gpudirect", w.module, loaded ? Verdict::kOk : Verdict::kWarn,
        std::string(w.module) + (loaded ? " is loaded: " : " is not loaded: no ") + w.what +
            " for " + std::to_string(gpus.size()) + " NVIDIA GPU" + (gpus.size() == 1 ? "" : "s"));
    r.evidence = {{"GPUs (class 03xx, vendor 10de)", Join(gpus)},
                  {"/proc/modules", loaded ? std::string(w.module) + " loaded"
                                            : std::string("no ") + w.module}};
    if (!loaded) {
      r.fix = std::string("modprobe ") + w.module +
              " (add it to spec.kernelModules with required: false)";
    }
    sink.Add(std::move(r));
  }
}

void CheckMultusPkeys(const DesiredState& desired, const HostFacts& facts, CheckSink& sink) {
  for (const MultusConfigSpec& mc : desired.multus_configs) {
    if (!mc.pkey) continue;
    auto want = ParsePkey(*mc.pkey);
    if (!want) continue;  // validation reports it
    const NicSpec* nic = nullptr;
    for (const NicSpec& n : desired.nics) nic = n.name == mc.nic ? &n : nic;
    if (nic == nullptr) continue;
    for (const PciFunction* pf : SelectPfs(*nic, facts)) {
      for (const RdmaDevice* d : DevicesOn(facts, pf->pci_address)) {
        for (const RdmaPort& p : d->ports) {
          if (p.link_layer != "InfiniBand") continue;
          const std::string target =
              "multusConfig " + mc.name + " pkey " + *mc.pkey + " on " + PortName(*d, p);
          if (!p.pkeys) {
            CheckResult r = Result("rdma.multus-pkey", target, Verdict::kWarn,
                                   "not captured: " + PortDir(*d, p) +
                                       "/pkeys is not there; the P_Key table was not checked");
            r.evidence = {{PortDir(*d, p) + "/pkeys", "(not captured)"}};
            sink.Add(std::move(r));
            continue;
          }
          // A partition is one P_Key with or without the full-membership bit.
          const bool in_table =
              std::any_of(p.pkeys->begin(), p.pkeys->end(), [&](const std::string& k) {
                auto have = ParsePkey(k);
                return have && (*have & ~kPkeyFullMember) == (*want & ~kPkeyFullMember);
              });
          CheckResult r =
              Result("rdma.multus-pkey", target, in_table ? Verdict::kOk : Verdict::kFail,
                     in_table ? PortName(*d, p) + " is in partition " + *mc.pkey
                              : "partition " + *mc.pkey + " of multusConfig " + mc.name +
                                    " is not in the P_Key table of " + PortName(*d, p) +
                                    ": the subnet manager has not put the port in it, so pods of " +
                                    mc.name + " get VFs that cannot reach the partition");
          r.evidence = {{PortDir(*d, p) + "/pkeys", Join(*p.pkeys, " ")}};
          if (!in_table) {
            r.fix = "add the port's GUID to partition " + *mc.pkey +
                    " in the subnet manager (opensm partitions.conf, or UFM), or use a pkey "
                    "the port has";
          }
          sink.Add(std::move(r));
        }
      }
    }
  }
}

void RunRdmaChecks(const DesiredState* desired, const HostFacts& facts, CheckSink& sink) {
  CheckPortNetdevs(facts, sink);
  CheckRoceV2Gids(facts, sink);
  CheckNetnsMode(desired, facts, sink);
  CheckDevFiles(facts, sink);
  CheckIbPorts(facts, sink);
  if (desired != nullptr) {
    CheckDevicePluginSelectors(*desired, facts, sink);
    CheckLinkLayer(*desired, facts, sink);
    CheckVfRdma(*desired, facts, sink);
    CheckMultusPkeys(*desired, facts, sink);
  }
  CheckGpuDirect(facts, sink);
}

}  // namespace provisioner::rdma
