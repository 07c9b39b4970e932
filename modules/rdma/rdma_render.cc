// discover output of the rdma module: `rdma` (the netns mode and where it
// comes from), `rdmaDevices` (every device with its ports and GIDs) and the
// "RDMA devices:" / GID tables.
#include <algorithm>
#include <cstdio>
#include <sstream>
#include <utility>
#include <vector>

#include "engine/base/strings.h"
#include "engine/output/facts_output.h"
#include "modules/rdma/rdma_module.h"

namespace provisioner::rdma {
namespace {

using nlohmann::json;

json OptInt(const std::optional<int>& v) { return v ? json(*v) : json(); }
json OptStr(const std::optional<std::string>& v) { return v ? json(*v) : json(); }
// A string attribute that was missing or unreadable: null, as a missing
// number is (not "").
json StrOrNull(const std::string& v) { return v.empty() ? json() : json(v); }

std::string Hex(const std::optional<int>& v) {
  if (!v) return "-";
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%x", *v);
  return buf;
}

// Contract "rdmaDevices". Before the rdma module ran (facts.rdma.discovered
// false), the devices PCI discovery saw, by name and PCI address only.
json RdmaDevicesJson(const HostFacts& facts) {
  json out = json::array();
  if (!facts.rdma.discovered) {
    std::vector<std::pair<std::string, std::string>> rdma;
    for (const auto& f : facts.pci) {
      for (const auto& r : f.rdma_devices) rdma.emplace_back(r, f.pci_address);
    }
    std::sort(rdma.begin(), rdma.end(), [](const auto& a, const auto& b) {
      return NaturalLess(a.first, b.first);  // mlx5_10 after mlx5_9
    });
    for (const auto& [name, pci] : rdma) out.push_back({{"name", name}, {"pciAddress", pci}});
    return out;
  }
  for (const RdmaDevice& d : facts.rdma.devices) {
    json dev;
    dev["name"] = d.name;
    dev["pciAddress"] = d.pci_address.empty() ? json() : json(d.pci_address);
    dev["function"] = d.pci_address.empty() ? "none" : (d.is_vf ? "VF" : "PF");
    dev["nodeGuid"] = StrOrNull(d.node_guid);
    dev["fwVer"] = StrOrNull(d.fw_ver);
    dev["hcaType"] = StrOrNull(d.hca_type);
    json ports = json::array();
    for (const RdmaPort& p : d.ports) {
      json port;
      port["port"] = p.port;
      port["linkLayer"] = StrOrNull(p.link_layer);
      port["state"] = StrOrNull(p.state);
      port["physState"] = StrOrNull(p.phys_state);
      port["lid"] = OptInt(p.lid);
      port["smLid"] = OptInt(p.sm_lid);
      port["pkeys"] = p.pkeys ? json(*p.pkeys) : json();
      port["rate"] = StrOrNull(p.rate);
      port["netdev"] = p.netdev.empty() ? json() : json(p.netdev);
      json gids = json::array();
      for (const RdmaGid& g : p.gids) {
        gids.push_back({{"index", g.index},
                        {"gid", g.gid},
                        {"type", g.type.empty() ? json() : json(g.type)},
                        {"netdev", g.netdev.empty() ? json() : json(g.netdev)}});
      }
      port["gids"] = gids;
      json v2 = json::array();
      for (const RoceAddress& a : p.roce_v2) {
        v2.push_back({{"netdev", a.netdev},
                      {"address", a.address},
                      {"family", a.family == 4 ? "ipv4" : "ipv6"},
                      {"gidIndex", a.gid_index}});
      }
      // What show_gids prints and NCCL_IB_GID_INDEX needs, per address.
      port["roceV2GidIndex"] = v2;
      ports.push_back(port);
    }
    dev["ports"] = ports;
    out.push_back(dev);
  }
  return out;
}

// Contract "rdma": { netnsMode, ... }.
json RdmaSystemJson(const HostFacts& facts) {
  json r;
  r["netnsMode"] = OptStr(facts.rdma_netns_mode);
  if (!facts.rdma.discovered) return r;
  r["netnsModeSource"] = facts.rdma.netns_mode_source;
  r["persistentNetnsMode"] = OptStr(facts.rdma.persistent_netns_mode);
  r["persistentNetnsModeSource"] = facts.rdma.persistent_netns_source.empty()
                                       ? json()
                                       : json(facts.rdma.persistent_netns_source);
  r["mlnxOfed"] = facts.rdma.ofed
                      ? json(facts.rdma.ofed_version.empty() ? "unknown" : facts.rdma.ofed_version)
                      : json();
  if (facts.rdma.dev_files) {
    json files = json::array();
    for (const auto& f : *facts.rdma.dev_files) files.push_back(f);
    r["devFiles"] = files;
  } else {
    r["devFiles"] = nullptr;
  }
  return r;
}

}  // namespace

std::string RdmaModule::RenderFactsTable(const HostFacts& facts) const {
  if (!facts.rdma.discovered || facts.rdma.devices.empty()) return "";
  std::ostringstream out;
  std::vector<std::vector<std::string>> rows = {{"DEVICE", "PCI", "FN", "PORT", "LINK", "STATE",
                                                 "PHYS", "LID", "SM_LID", "RATE", "NETDEV", "FW",
                                                 "GUID"}};
  std::vector<std::vector<std::string>> gids = {
      {"DEVICE", "PORT", "INDEX", "GID", "IPV4/IPV6", "TYPE", "NETDEV"}};
  for (const RdmaDevice& d : facts.rdma.devices) {
    std::string fn = d.pci_address.empty() ? "-" : (d.is_vf ? "VF" : "PF");
    if (d.ports.empty()) {
      rows.push_back({d.name, d.pci_address.empty() ? "-" : d.pci_address, fn, "-", "-", "-", "-",
                      "-", "-", "-", "-", d.fw_ver, d.node_guid});
    }
    for (const RdmaPort& p : d.ports) {
      const bool ib = p.link_layer == "InfiniBand";
      rows.push_back({d.name, d.pci_address.empty() ? "-" : d.pci_address, fn,
                      std::to_string(p.port), p.link_layer, p.state, p.phys_state,
                      ib ? Hex(p.lid) : "-", ib ? Hex(p.sm_lid) : "-", p.rate,
                      p.netdev.empty() ? "-" : p.netdev, d.fw_ver, d.node_guid});
      for (const RdmaGid& g : p.gids) {
        std::string addr = "-";
        for (const RoceAddress& a : p.roce_v2) {
          if (a.gid_index == g.index) addr = a.address;
        }
        if (addr == "-") {
          // RoCE v1 slots carry the same addresses as their v2 twins.
          for (const RoceAddress& a : p.roce_v2) {
            if (a.netdev == g.netdev && !g.netdev.empty()) {
              for (const RdmaGid& t : p.gids) {
                if (t.index == a.gid_index && t.gid == g.gid) addr = a.address;
              }
            }
          }
        }
        gids.push_back({d.name, std::to_string(p.port), std::to_string(g.index), g.gid, addr,
                        g.type.empty() ? "-" : g.type, g.netdev.empty() ? "-" : g.netdev});
      }
    }
  }
  out << "\nRDMA devices:\n" << TextTable(rows, "  ");
  if (gids.size() > 1)
    out << "\nGIDs (NCCL_IB_GID_INDEX = the RoCE v2 index of the address):\n"
        << TextTable(gids, "  ");
  return out.str();
}

void RdmaModule::RenderFactsJson(const HostFacts& facts, FactsJson& out) const {
  out.doc()["rdma"] = RdmaSystemJson(facts);
  out.doc()["rdmaDevices"] = RdmaDevicesJson(facts);
}

}  // namespace provisioner::rdma
