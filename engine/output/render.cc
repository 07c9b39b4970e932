#include "engine/output/render.h"

#include <algorithm>
#include <sstream>

#include "engine/model/topology.h"
#include "engine/output/render_rdma.h"
#include "yaml-cpp/yaml.h"

namespace provisioner {
namespace {

using nlohmann::json;

json StringList(const std::vector<std::string>& v) {
  json a = json::array();
  for (const auto& s : v) a.push_back(s);
  return a;
}

bool IsOff(const json& v) {
  return v.is_null() || (v.is_number() && v.get<double>() == 0) ||
         (v.is_boolean() && !v.get<bool>()) || (v.is_string() && v.get<std::string>().empty());
}

std::string Show(const json& v) {
  if (v.is_null()) return "(none)";
  if (v.is_string()) return v.get<std::string>();
  return v.dump();
}

std::string Pad(std::string s, size_t w) {
  if (s.size() < w) s.append(w - s.size(), ' ');
  return s;
}

// A simple aligned table: first row is the header.
std::string Table(const std::vector<std::vector<std::string>>& rows) {
  if (rows.empty()) return "";
  std::vector<size_t> w(rows[0].size(), 0);
  for (const auto& r : rows) {
    for (size_t i = 0; i < r.size() && i < w.size(); ++i) w[i] = std::max(w[i], r[i].size());
  }
  std::string out;
  for (const auto& r : rows) {
    std::string line;
    for (size_t i = 0; i < r.size(); ++i) line += (i + 1 < r.size() ? Pad(r[i], w[i] + 2) : r[i]);
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

// The GPU x NIC matrix of `nvidia-smi topo -m`, with legends.
std::string RenderTopologyMatrix(const HostFacts& facts) {
  const TopologyFacts& t = facts.topology;
  if (t.gpus.empty()) return "";
  std::vector<std::string> nics;
  for (const GpuNicLink& l : t.links) {
    if (std::find(nics.begin(), nics.end(), l.nic) == nics.end()) nics.push_back(l.nic);
  }
  std::ostringstream out;
  out << "\nGPU x NIC PCIe topology (levels of nvidia-smi topo -m):\n";
  if (nics.empty()) return out.str() + "  (no NICs)\n";
  std::vector<std::vector<std::string>> rows(1, std::vector<std::string>{""});
  for (size_t n = 0; n < nics.size(); ++n) rows[0].push_back("NIC" + std::to_string(n));
  for (size_t g = 0; g < t.gpus.size(); ++g) {
    std::vector<std::string> row = {"GPU" + std::to_string(g)};
    for (const auto& nic : nics) {
      std::string level = "-";
      for (const GpuNicLink& l : t.links) {
        if (l.gpu == t.gpus[g].pci_address && l.nic == nic) level = PcieLevelName(l.level);
      }
      row.push_back(level);
    }
    rows.push_back(row);
  }
  out << Table(rows) << "\n";
  for (size_t g = 0; g < t.gpus.size(); ++g) {
    out << "  GPU" << g << ": " << t.gpus[g].pci_address << " (" << t.gpus[g].vendor << ":"
        << t.gpus[g].device_id << ", NUMA " << t.gpus[g].numa_node << ")\n";
  }
  for (size_t n = 0; n < nics.size(); ++n) {
    out << "  NIC" << n << ": " << nics[n];
    if (const PciFunction* f = facts.FindPci(nics[n])) {
      std::string names;
      for (const auto& d : f->netdevs) names += (names.empty() ? "" : ",") + d;
      for (const auto& d : f->rdma_devices) names += (names.empty() ? "" : ",") + d;
      out << " (" << f->vendor << ":" << f->device_id << (names.empty() ? "" : " " + names) << ")";
    }
    out << "\n";
  }
  out << "  PIX = at most one PCIe switch; PXB = several switches, no host bridge; PHB = through "
         "a\n"
         "  PCIe host bridge; NODE = between host bridges of one NUMA node; SYS = across NUMA "
         "nodes\n";
  return out.str();
}

void EmitYaml(YAML::Emitter& e, const json& v) {
  if (v.is_object()) {
    e << YAML::BeginMap;
    for (auto it = v.begin(); it != v.end(); ++it) {
      e << YAML::Key << it.key() << YAML::Value;
      EmitYaml(e, it.value());
    }
    e << YAML::EndMap;
  } else if (v.is_array()) {
    e << YAML::BeginSeq;
    for (const auto& x : v) EmitYaml(e, x);
    e << YAML::EndSeq;
  } else if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    // Multi-line text ending in one newline (a ConfigMap's config.json) reads
    // best as a literal block; "|" keeps exactly one final newline.
    bool block = s.find('\n') != std::string::npos && s.back() == '\n' &&
                 s.find_first_of("\t\r") == std::string::npos &&
                 (s.size() < 2 || s[s.size() - 2] != '\n') && s.front() != ' ';
    if (block) {
      e << YAML::Literal << s;
    } else {
      e << YAML::DoubleQuoted << s;
    }
  } else if (v.is_null()) {
    e << YAML::Null;
  } else {
    e << v.dump();
  }
}

}  // namespace

// The GPU rule lives with the topology model (engine/model/topology.h).
bool IsGpu(const PciFunction& f) { return IsGpuFunction(f); }

json FactsToJson(const HostFacts& facts) {
  json doc;
  doc["formatVersion"] = kFormatVersion;
  doc["root"] = facts.root;
  doc["kernel"] = {{"release", facts.kernel.release}};
  doc["rdma"] = RdmaSystemToJson(facts);
  json nics = json::array();
  for (const PciFunction* f : facts.Nics()) {
    json n;
    n["pciAddress"] = f->pci_address;
    n["vendor"] = f->vendor;
    n["deviceID"] = f->device_id;
    n["vendorName"] = f->vendor_name;
    n["deviceName"] = f->device_name;
    n["class"] = [&] {
      char buf[16];
      std::snprintf(buf, sizeof buf, "%06x", f->class_code);
      return std::string(buf);
    }();
    n["driver"] = f->driver;
    n["numaNode"] = f->numa_node;
    n["netdevs"] = StringList(f->netdevs);
    if (f->sriov) {
      json s;
      s["totalVfs"] = f->sriov->total_vfs;
      s["numVfs"] = f->sriov->num_vfs;
      if (f->sriov->offset) s["offset"] = *f->sriov->offset;
      if (f->sriov->stride) s["stride"] = *f->sriov->stride;
      s["vfDevice"] = f->sriov->vf_device;
      json vfs = json::array();
      for (const VfInfo& vf : f->sriov->vfs) {
        json v = {{"pciAddress", vf.pci_address},
                  {"vfIndex", vf.vf_index},
                  {"driver", vf.driver},
                  {"netdevs", StringList(vf.netdevs)},
                  {"rdmaDevices", StringList(vf.rdma_devices)}};
        // vf module facts, when known.
        if (!vf.driver_override.empty()) v["driverOverride"] = vf.driver_override;
        if (!vf.ib_node_guid.empty()) v["nodeGuid"] = vf.ib_node_guid;
        if (!vf.ib_port_guid.empty()) v["portGuid"] = vf.ib_port_guid;
        if (vf.trust) v["trust"] = *vf.trust;
        if (vf.spoof_chk) v["spoofChk"] = *vf.spoof_chk;
        vfs.push_back(std::move(v));
      }
      s["vfs"] = vfs;
      n["sriov"] = s;
    } else {
      n["sriov"] = nullptr;
    }
    n["rdmaDevices"] = StringList(f->rdma_devices);
    // link module: the PF netdevs' mtu and admin state.
    json links = json::array();
    for (const auto& nd : f->netdevs) {
      auto it = facts.links.find(nd);
      if (it == facts.links.end()) continue;
      json l = {{"name", nd},
                {"mtu", it->second.mtu},
                {"adminUp", it->second.admin_up},
                {"operState", it->second.operstate}};
      if (it->second.min_mtu) l["minMtu"] = *it->second.min_mtu;
      if (it->second.max_mtu) l["maxMtu"] = *it->second.max_mtu;
      links.push_back(std::move(l));
    }
    if (!links.empty()) n["links"] = links;
    // firmware module: this PF's port type and the card's SR-IOV limits.
    if (auto fw = facts.firmware.find(FirmwareDevice(f->pci_address)); fw != facts.firmware.end()) {
      json j = {{"device", fw->first}, {"source", fw->second.source}};
      if (!fw->second.error.empty()) j["error"] = fw->second.error;
      if (!fw->second.device_type.empty()) j["deviceType"] = fw->second.device_type;
      const std::string port = "LINK_TYPE_P" + std::to_string(FirmwarePort(f->pci_address));
      for (const std::string& name : {port, std::string("SRIOV_EN"), std::string("NUM_OF_VFS")}) {
        auto p = fw->second.params.find(name);
        if (p == fw->second.params.end()) continue;
        json v = {{"nextBoot", p->second.next_boot}};
        if (p->second.current) v["current"] = *p->second.current;
        j["parameters"][name] = v;
      }
      n["firmware"] = j;
    }
    nics.push_back(n);
  }
  doc["nics"] = nics;
  doc["rdmaDevices"] = RdmaDevicesToJson(facts);
  doc["kernelModules"] = {{"loaded", StringList(facts.loaded_modules)}};
  if (facts.kmod.discovered) {  // kmod module: parameters and modprobe.d
    json& km = doc["kernelModules"];
    km["parameters"] = facts.kmod.parameters;
    auto entries = [](const std::vector<ModprobeEntry>& v) {
      json a = json::array();
      for (const auto& e : v) a.push_back({{"module", e.module}, {"value", e.value}});
      return a;
    };
    km["modprobe"] = {{"options", entries(facts.kmod.options)},
                      {"blacklist", StringList(facts.kmod.blacklist)},
                      {"install", entries(facts.kmod.install)},
                      {"remove", entries(facts.kmod.remove)},
                      {"softdeps", entries(facts.kmod.softdeps)}};
    km["modulesDir"] = facts.kmod.modules_dir;
    km["modulesDepFound"] = facts.kmod.modules_dep_found;
    km["persisted"] = facts.kmod.persisted ? json(*facts.kmod.persisted) : json(nullptr);
  }
  json gpus = json::array();
  for (const auto& f : facts.pci) {
    if (!IsGpu(f)) continue;
    gpus.push_back({{"pciAddress", f.pci_address},
                    {"vendor", f.vendor},
                    {"deviceID", f.device_id},
                    {"numaNode", f.numa_node}});
  }
  doc["gpus"] = gpus;
  // Every GPU x NIC pair with its nvidia-smi topo level (topology module).
  json topology = json::array();
  for (const GpuNicLink& l : facts.topology.links) {
    topology.push_back({{"gpu", l.gpu}, {"nic", l.nic}, {"level", PcieLevelName(l.level)}});
  }
  doc["topology"] = topology;
  return doc;
}

json ChangeToJson(const Change& c) {
  return {{"id", c.id},
          {"module", c.module},
          {"target", c.target},
          {"attribute", c.attribute},
          {"before", c.before},
          {"after", c.after},
          {"disruption", DisruptionName(c.disruption)},
          {"reason", c.reason}};
}

json PlanToJson(const Plan& plan, const std::string& root) {
  json doc;
  doc["formatVersion"] = kFormatVersion;
  doc["root"] = root;
  json changes = json::array();
  for (const auto& c : plan.changes) changes.push_back(ChangeToJson(c));
  doc["changes"] = changes;
  doc["summary"] = {{"changes", plan.changes.size()}, {"rebootRequired", plan.RebootRequired()}};
  doc["warnings"] = StringList(plan.warnings);
  return doc;
}

char ChangeSymbol(const Change& c) {
  if (IsOff(c.before) && !IsOff(c.after)) return '+';
  if (!IsOff(c.before) && IsOff(c.after)) return '-';
  return '~';
}

std::string RenderPlanTable(const Plan& plan, bool color) {
  std::ostringstream out;
  if (plan.changes.empty()) {
    out << "No changes. The host matches the desired state.\n";
  } else {
    out << "provisioner will make these changes, in this order:\n\n";
    int add = 0, change = 0, remove = 0, reboot = 0;
    for (const auto& c : plan.changes) {
      char sym = ChangeSymbol(c);
      add += sym == '+';
      change += sym == '~';
      remove += sym == '-';
      reboot += c.disruption != Disruption::kLive;
      const char* col = sym == '+' ? "\033[32m" : sym == '-' ? "\033[31m" : "\033[33m";
      out << "  " << (color ? col : "") << sym << (color ? "\033[0m" : "") << " " << c.module
          << " " << c.target << " " << c.attribute << ": " << Show(c.before) << " -> "
          << Show(c.after);
      if (c.disruption != Disruption::kLive) out << "  (" << DisruptionName(c.disruption) << ")";
      out << "\n";
      if (!c.reason.empty()) out << "      # " << c.reason << "\n";
    }
    out << "\nPlan: " << add << " to add, " << change << " to change, " << remove
        << " to remove";
    if (reboot) out << "; " << reboot << " take effect after a reboot";
    out << ".\n";
  }
  for (const auto& w : plan.warnings) out << "Warning: " << w << "\n";
  return out.str();
}

std::string RenderFactsTable(const HostFacts& facts) {
  std::ostringstream out;
  out << "Kernel: " << (facts.kernel.release.empty() ? "(unknown)" : facts.kernel.release)
      << "    RDMA netns mode: " << facts.rdma_netns_mode.value_or("(unknown)") << "\n\n";
  std::vector<std::vector<std::string>> rows = {
      {"PCI", "ID", "DRIVER", "NUMA", "NETDEVS", "VFS", "RDMA", "NAME"}};
  for (const PciFunction* f : facts.Nics()) {
    std::string netdevs, rdma;
    for (const auto& n : f->netdevs) netdevs += (netdevs.empty() ? "" : ",") + n;
    for (const auto& r : f->rdma_devices) rdma += (rdma.empty() ? "" : ",") + r;
    std::string vfs = f->sriov ? std::to_string(f->sriov->num_vfs) + "/" +
                                     std::to_string(f->sriov->total_vfs)
                               : "-";
    rows.push_back({f->pci_address, f->vendor + ":" + f->device_id,
                    f->driver.empty() ? "-" : f->driver, std::to_string(f->numa_node),
                    netdevs.empty() ? "-" : netdevs, vfs, rdma.empty() ? "-" : rdma,
                    f->device_name});
    if (f->sriov) {
      for (const VfInfo& vf : f->sriov->vfs) {
        std::string vnet, vrdma;
        for (const auto& n : vf.netdevs) vnet += (vnet.empty() ? "" : ",") + n;
        for (const auto& r : vf.rdma_devices) vrdma += (vrdma.empty() ? "" : ",") + r;
        rows.push_back({"  " + vf.pci_address, "vf " + std::to_string(vf.vf_index),
                        vf.driver.empty() ? "-" : vf.driver, "", vnet.empty() ? "-" : vnet, "",
                        vrdma.empty() ? "-" : vrdma, ""});
      }
    }
  }
  out << "NICs (SR-IOV or RDMA capable network functions):\n";
  if (rows.size() == 1) {
    out << "  (none)\n";
  } else {
    out << Table(rows);
  }
  std::vector<std::vector<std::string>> gpus = {{"PCI", "ID", "NUMA"}};
  for (const auto& f : facts.pci) {
    if (IsGpu(f)) gpus.push_back({f.pci_address, f.vendor + ":" + f.device_id, std::to_string(f.numa_node)});
  }
  if (gpus.size() > 1) out << "\nGPUs:\n" << Table(gpus);
  out << RenderTopologyMatrix(facts);
  out << RenderRdmaTable(facts);
  return out.str();
}

std::string JsonToYaml(const json& doc) {
  YAML::Emitter e;
  EmitYaml(e, doc);
  return std::string(e.c_str()) + "\n";
}

}  // namespace provisioner
