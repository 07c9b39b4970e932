#include "engine/output/render.h"

#include <algorithm>
#include <sstream>

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

bool IsGpu(const PciFunction& f) {
  uint32_t cls = f.class_code >> 8;
  if (cls != 0x0300 && cls != 0x0302) return false;
  return f.vendor == "10de" || f.vendor == "1002" || f.vendor == "8086";
}

json FactsToJson(const HostFacts& facts) {
  json doc;
  doc["formatVersion"] = kFormatVersion;
  doc["root"] = facts.root;
  doc["kernel"] = {{"release", facts.kernel.release}};
  doc["rdma"] = {{"netnsMode", facts.rdma_netns_mode ? json(*facts.rdma_netns_mode) : json()}};
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
        vfs.push_back({{"pciAddress", vf.pci_address},
                       {"vfIndex", vf.vf_index},
                       {"driver", vf.driver},
                       {"netdevs", StringList(vf.netdevs)},
                       {"rdmaDevices", StringList(vf.rdma_devices)}});
      }
      s["vfs"] = vfs;
      n["sriov"] = s;
    } else {
      n["sriov"] = nullptr;
    }
    n["rdmaDevices"] = StringList(f->rdma_devices);
    nics.push_back(n);
  }
  doc["nics"] = nics;
  // Name and PCI function of every RDMA device PCI discovery saw; ports and
  // GIDs are added by the rdma module's facts.
  std::vector<std::pair<std::string, std::string>> rdma;
  for (const auto& f : facts.pci) {
    for (const auto& r : f.rdma_devices) rdma.emplace_back(r, f.pci_address);
  }
  std::sort(rdma.begin(), rdma.end());
  json rdma_devices = json::array();
  for (const auto& [name, pci] : rdma) rdma_devices.push_back({{"name", name}, {"pciAddress", pci}});
  doc["rdmaDevices"] = rdma_devices;
  doc["kernelModules"] = {{"loaded", StringList(facts.loaded_modules)}};
  json gpus = json::array();
  for (const auto& f : facts.pci) {
    if (!IsGpu(f)) continue;
    gpus.push_back({{"pciAddress", f.pci_address},
                    {"vendor", f.vendor},
                    {"deviceID", f.device_id},
                    {"numaNode", f.numa_node}});
  }
  doc["gpus"] = gpus;
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
  return out.str();
}

std::string JsonToYaml(const json& doc) {
  YAML::Emitter e;
  EmitYaml(e, doc);
  return std::string(e.c_str()) + "\n";
}

}  // namespace provisioner
