#include "test/sim/rail_host.h"

#include <stdlib.h>

#include <algorithm>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "test/sim/sriov_sim.h"
#include "test/support/host_presets.h"
#include "test/support/ttar.h"

namespace provisioner::testing {
namespace {

// "966d:aeff:fe1a:0000" -> "96:6d:ae:ff:fe:1a:00:00".
std::string GuidBytes(const std::string& guid) {
  std::string hex;
  for (char c : guid) {
    if (c != ':') hex += c;
  }
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    if (!out.empty()) out += ':';
    out += hex.substr(i, 2);
  }
  return out;
}

// The capture's LINK_TYPE_P1 line with IB(1) now and at the next boot (the
// factory default, so no '*'), columns kept.
std::string IbLinkTypeCapture(const std::string& text) {
  std::string out;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string::npos) nl = text.size() - 1;
    std::string line = text.substr(start, nl - start + 1);
    if (line.find("LINK_TYPE_P1") != std::string::npos) {
      if (!line.empty() && line[0] == '*') line[0] = ' ';
      for (size_t p; (p = line.find("ETH(2)")) != std::string::npos;) line.replace(p, 6, "IB(1) ");
    }
    out += line;
    start = nl + 1;
  }
  return out;
}

}  // namespace

const std::vector<std::string>& HgxRailPfs() {
  static const std::vector<std::string> kPfs = {"0000:1a:00.0", "0000:3c:00.0", "0000:4d:00.0",
                                                "0000:5e:00.0", "0000:9c:00.0", "0000:bc:00.0",
                                                "0000:cc:00.0", "0000:dc:00.0"};
  return kPfs;
}

HostSpec IbRailHost() {
  HostSpec h;
  PresetByName("hgx-h100-pcie", &h);
  h.hostname = "hgx-h100-ib";
  const std::set<std::string> rails(HgxRailPfs().begin(), HgxRailPfs().end());
  if (std::none_of(h.modules.begin(), h.modules.end(),
                   [](const ModuleSpec& m) { return m.name == "ib_ipoib"; })) {
    ModuleSpec ipoib;
    ipoib.name = "ib_ipoib";
    ipoib.size = 139264;
    h.modules.push_back(ipoib);
  }
  int lid = 0x10;
  for (RdmaDeviceSpec& r : h.rdma) {
    if (rails.count(r.pci) == 0) continue;
    for (RdmaPortSpec& p : r.ports) {
      p.link_layer = "InfiniBand";
      char buf[16];
      std::snprintf(buf, sizeof buf, "0x%x", lid++);
      p.lid = buf;
      p.sm_lid = "0x1";
      p.cap_mask = "0xa651e848";
      p.pkey_table_size = 16;
      p.gids = {{0, IbGidFromGuid(r.node_guid), "IB/RoCE v1", ""}};
    }
    for (NetdevSpec& n : h.netdevs) {
      if (n.pci != r.pci) continue;
      n.name = "ibp" + std::to_string(std::strtol(r.pci.substr(5, 2).c_str(), nullptr, 16)) + "s0";
      n.type = 32;
      n.mac = "00:00:10:87:fe:80:00:00:00:00:00:00:" + GuidBytes(r.node_guid);
      n.mtu = 2044;
      n.phys_port_name.clear();
      n.ecn_enabled.reset();
    }
  }
  for (auto& [path, content] : h.files) {
    for (const std::string& pf : rails) {
      if (path == "/run/provisioner/mstconfig/" + pf + ".query")
        content = IbLinkTypeCapture(content);
    }
  }
  return h;
}

const char kRailVfsTrustMtu[] = "      numVfs: 8\n      vfTrust: true\n      mtu: 4200\n";

std::string HgxRailsYaml(const std::string& rail_settings, const std::string& sections) {
  return "apiVersion: provisioner/v1alpha1\nkind: HostConfig\nmetadata:\n  name: hgx\nspec:\n"
         "  nics:\n    - name: rails\n      nicSelector: { vendor: \"15b3\", deviceID: \"1021\" "
         "}\n" +
         rail_settings + sections;
}

std::string MemoryTempDir(const std::string& prefix) {
  std::string tmpl = "/dev/shm/provisioner-" + prefix + ".XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data()) != nullptr) return buf.data();
  return MakeTempDir(prefix);
}

std::string BuildRailTree(const HostSpec& spec, int initial_vfs, std::string* error) {
  std::string dir = MemoryTempDir("rails");
  Status s = BuildHostTree(spec, dir);
  if (!s.ok()) {
    *error = "build the tree in " + dir + ": " + s.message();
    return "";
  }
  if (initial_vfs > 0) {
    SriovSim sim(dir);
    for (const std::string& pf : HgxRailPfs()) {
      if (int err = sim.WriteNumVfs("/sys/bus/pci/devices/" + pf, std::to_string(initial_vfs));
          err != 0) {
        *error =
            "enable " + std::to_string(initial_vfs) + " VFs on " + pf + ": " + sim.last_error();
        return "";
      }
    }
    s = sim.Flush();
    if (!s.ok()) {
      *error = s.message();
      return "";
    }
  }
  return dir;
}

}  // namespace provisioner::testing
