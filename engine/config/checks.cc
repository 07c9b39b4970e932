#include "engine/config/checks.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <utility>

#include "engine/config/field_path.h"
#include "engine/config/ip.h"
#include "engine/config/pkey.h"
#include "engine/config/text.h"
#include "engine/model/ipoib_facts.h"
#include "engine/model/selector.h"

namespace provisioner::config {
namespace {

constexpr const char* kNotLabelValue =
    "is not a valid Kubernetes label value (at most 63 letters, digits, '-', '_' or '.', "
    "beginning and ending with a letter or digit)";

bool IsAlnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

bool IsQualifiedName(std::string_view s) {
  if (s.empty() || s.size() > 63) return false;
  if (!IsAlnum(s.front()) || !IsAlnum(s.back())) return false;
  for (char c : s) {
    if (!IsAlnum(c) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

std::string Join(const std::vector<std::string>& items, const char* sep) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : sep) + i;
  return out;
}

std::string IpVersionName(int version) { return version == 4 ? "IPv4" : "IPv6"; }

// One pass over a DesiredState; each rule appends to diags_.
class Checker {
 public:
  Checker(const DesiredState& s, const std::set<std::string>& tainted) : s_(s), tainted_(tainted) {}

  std::vector<Diagnostic> Run() {
    CheckNics();
    CheckNames();
    CheckDuplicates();
    CheckKernelModules();
    CheckPools();
    CheckMultusConfigs();
    CheckKubernetes();
    return std::move(diags_);
  }

 private:
  void Error(std::string path, std::string message) {
    diags_.push_back(Diagnostic{Severity::kError, std::move(path), std::move(message)});
  }
  void Warning(std::string path, std::string message) {
    diags_.push_back(Diagnostic{Severity::kWarning, std::move(path), std::move(message)});
  }

  // True when `path` or a path above it has already been reported.
  bool Tainted(const std::string& path) const {
    for (const auto& t : tainted_) {
      if (IsSelfOrAncestor(t, path)) return true;
    }
    return false;
  }

  // True when `path`, a path above it or a path below it has been reported:
  // for rules that read a whole subtree.
  bool TaintedWithin(const std::string& path) const {
    for (const auto& t : tainted_) {
      if (IsSelfOrAncestor(t, path) || IsSelfOrAncestor(path, t)) return true;
    }
    return false;
  }

  // "spec.nics[0], line 7"
  std::string Where(const std::string& path) const {
    SourceMark m = s_.marks.Find(path);
    return m.line > 0 ? path + ", line " + std::to_string(m.line) : path;
  }

  static std::string NicPath(size_t i) { return DesiredState::NicPath(i); }
  static std::string PoolPath(size_t i) { return JoinIndex("spec.ipPools", i); }
  static std::string MultusPath(size_t i) { return JoinIndex("spec.multusConfigs", i); }

  // -- spec.nics ------------------------------------------------------------

  void CheckNics() {
    for (size_t i = 0; i < s_.nics.size(); ++i) {
      const NicSpec& nic = s_.nics[i];
      std::string path = NicPath(i);
      std::string sel_path = JoinField(path, "nicSelector");
      const NicSelector& sel = nic.selector;
      if (!TaintedWithin(sel_path) && !sel.vendor && !sel.device_id && sel.root_devices.empty() &&
          sel.pf_names.empty() && !sel.near_gpu) {
        Error(sel_path,
              "selects nothing: set at least one of vendor, deviceID, rootDevices, pfNames, "
              "nearGpu");
      }
      for (size_t k = 0; k < sel.pf_names.size(); ++k) {
        std::string pf_path = JoinIndex(JoinField(sel_path, "pfNames"), k);
        if (Tainted(pf_path)) continue;
        if (auto why = InterfaceNameProblem(sel.pf_names[k])) {
          Error(pf_path, Quote(sel.pf_names[k]) + " is not a valid Linux interface name: " + *why);
        }
      }
      if (nic.device_type == "vfio-pci" && nic.is_rdma == true && !Tainted(path + ".isRdma") &&
          !Tainted(path + ".deviceType")) {
        Error(path + ".isRdma",
              "isRdma needs deviceType netdevice: VFs bound to vfio-pci have no RDMA device");
      }
      // RoCE QoS (DCB, mlx5's ECN) is Ethernet's: an InfiniBand port has
      // neither (PFC and ECN are the lossless Ethernet stand-ins for IB's
      // credit-based flow control).
      if (nic.roce && nic.link_type == "ib" && !Tainted(path + ".roce") &&
          !Tainted(path + ".linkType")) {
        Error(path + ".roce", "roce (DSCP trust, PFC, ECN) is for RoCE, an Ethernet link, but " +
                                  Quote(nic.name) + " has linkType ib (" +
                                  Where(path + ".linkType") + ")");
      }
      // switchdev (issue 28 item 5): representors and TC offload are
      // Ethernet's; mlx5 refuses switchdev on an InfiniBand port.
      if (nic.eswitch_mode == "switchdev" && nic.link_type == "ib" &&
          !Tainted(path + ".eswitchMode") && !Tainted(path + ".linkType")) {
        Error(path + ".eswitchMode",
              "eswitchMode switchdev (VF representors, TC offload) is for an Ethernet link, "
              "but " +
                  Quote(nic.name) + " has linkType ib (" + Where(path + ".linkType") + ")");
      }
      if (nic.roce) {
        for (const std::string& key : nic.roce->dscp_map_bad_keys) {
          Error(JoinField(JoinField(JoinField(path, "roce"), "dscpMap"), key),
                Quote(key) + " is not a DSCP (0..63): dscpMap maps DSCP values to priorities");
        }
        // mlx5 refuses a lossless buffer (one a PFC priority lands in) of
        // size 0 (mlx5e_port_manual_buffer_config: EINVAL): knowable here
        // when pfc, prio2buffer and sizes are all given.
        const NicRoceSpec& r = *nic.roce;
        const std::string sizes_path = JoinField(JoinField(path, "roce"), "buffers.sizes");
        if (r.pfc && r.buffers && r.buffers->prio2buffer && r.buffers->sizes &&
            r.buffers->prio2buffer->size() == 8 && !Tainted(sizes_path)) {
          for (int prio : *r.pfc) {
            if (prio < 0 || prio > 7) continue;
            const int b = (*r.buffers->prio2buffer)[static_cast<size_t>(prio)];
            const long long size = static_cast<size_t>(b) < r.buffers->sizes->size()
                                       ? (*r.buffers->sizes)[static_cast<size_t>(b)]
                                       : 0;
            if (size == 0) {
              Error(sizes_path, "buffer " + std::to_string(b) + " holds PFC priority " +
                                    std::to_string(prio) +
                                    " (prio2buffer), so it is lossless and its size cannot be 0 "
                                    "(mlx5 refuses it: EINVAL)");
              break;
            }
          }
        }
      }
      // The schema cannot report keys (valijson's propertyNames fails
      // without an error): firmware parameter names are checked here.
      for (const auto& [name, setting] : nic.firmware) {
        if (!IsFirmwareParamName(name)) {
          Error(JoinField(JoinField(path, "firmware"), name),
                Quote(name) +
                    " is not an mstconfig parameter name (upper-case letters, digits and '_', "
                    "as `mstconfig query` prints it: ATS_ENABLED, LINK_TYPE_P1; an array "
                    "element as NAME[5] or NAME[3..7])");
        }
      }
      CheckFirmwareVsNumVfs(nic, path);
      if (nic.roce) CheckRoceCellsAndPause(*nic.roce, JoinField(path, "roce"));
      CheckVfMtu(nic.vf_mtu, nic.device_type, JoinField(path, "vfMtu"),
                 JoinField(path, "deviceType"), nic.mtu, JoinField(path, "mtu"));
      CheckVfRate(nic.vf_rate, JoinField(path, "vfRate"));
      CheckVfVlan(nic.vf_vlan, JoinField(path, "vfVlan"));
      CheckVfMac(nic.vf_mac, nic, path, JoinField(path, "vfMac"));
      CheckSwitchdevVfSettings(nic, path);
      if (nic.ipoib) CheckIpoib(nic, path);
      if (!nic.vf_groups.empty()) CheckVfGroups(nic, path);
    }
  }

  // eswitchMode switchdev (issue 35.3): mlx5 sets a VF's VLAN, link state
  // and spoof check only in legacy mode (esw/legacy.c
  // mlx5_eswitch_set_vport_vlan, _state, _spoofchk: `esw->mode !=
  // MLX5_ESWITCH_LEGACY` answers EOPNOTSUPP; VLAN 0 alone is accepted and
  // ignored "for libvirt", so vfVlan {id: 0, qos: 0} passes). Each field
  // that asks, the nic's or a vfGroup's, is an error where it is written.
  void CheckSwitchdevVfSettings(const NicSpec& nic, const std::string& path) {
    if (nic.eswitch_mode != "switchdev" || Tainted(path + ".eswitchMode")) return;
    const std::string why =
        " (mlx5 answers EOPNOTSUPP: a VF's VLAN, link state and spoof "
        "check are set only in legacy E-Switch mode; in switchdev they are "
        "the representor's TC rules), but nic " +
        Quote(nic.name) + " has eswitchMode switchdev (" + Where(path + ".eswitchMode") + ")";
    auto check = [&](const std::string& at, const std::optional<std::string>& link_state,
                     const std::optional<VfVlanSpec>& vlan, const std::optional<bool>& spoof) {
      if (link_state && !Tainted(at + ".vfLinkState")) {
        Error(at + ".vfLinkState", "vfLinkState needs the legacy E-Switch" + why);
      }
      if (vlan && (vlan->id != 0 || vlan->qos != 0) && !Tainted(at + ".vfVlan")) {
        Error(at + ".vfVlan", "vfVlan needs the legacy E-Switch" + why);
      }
      if (spoof && !Tainted(at + ".vfSpoofChk")) {
        Error(at + ".vfSpoofChk", "vfSpoofChk needs the legacy E-Switch" + why);
      }
    };
    check(path, nic.vf_link_state, nic.vf_vlan, nic.vf_spoof_chk);
    for (size_t k = 0; k < nic.vf_groups.size(); ++k) {
      const VfGroupSpec& g = nic.vf_groups[k];
      check(JoinIndex(JoinField(path, "vfGroups"), k), g.vf_link_state, g.vf_vlan, std::nullopt);
    }
  }

  // spec.nics[].vfGroups: ranges inside 0..numVfs-1 and apart (the
  // operator's webhook refuses overlapping pfNames ranges on a PF), each
  // group's fields (with the nic's filled in) checked as a nic's, and one
  // resource per group: the operator merges a PF's groups by resourceName and
  // keeps only one of two that share it.
  void CheckVfGroups(const NicSpec& nic, const std::string& nic_path) {
    const std::string list_path = JoinField(nic_path, "vfGroups");
    if (Tainted(list_path)) return;
    const bool count_known = nic.num_vfs.has_value() && !Tainted(nic_path + ".numVfs");
    if (!nic.num_vfs || *nic.num_vfs <= 0) {
      if (count_known || !nic.num_vfs) {
        Error(list_path, "vfGroups split the nic's VFs by index, but nic " + Quote(nic.name) +
                             " sets no numVfs > 0");
      }
      return;
    }
    std::vector<size_t> good;  // groups whose range parsed and fits
    std::map<std::string, size_t> resources;
    for (size_t k = 0; k < nic.vf_groups.size(); ++k) {
      const VfGroupSpec& g = nic.vf_groups[k];
      const std::string path = JoinIndex(list_path, k);
      const std::string range_path = path + ".range";
      if (!Tainted(range_path) && !g.range.empty()) {
        if (g.last < g.first) {
          Error(range_path, Quote(g.range) + ": the range's first index is above its last");
        } else if (count_known && g.last >= *nic.num_vfs) {
          Error(range_path, Quote(g.range) + " is outside the nic's VFs 0-" +
                                std::to_string(*nic.num_vfs - 1) + " (numVfs " +
                                std::to_string(*nic.num_vfs) + ", " + Where(nic_path + ".numVfs") +
                                ")");
        } else {
          for (size_t other : good) {
            const VfGroupSpec& o = nic.vf_groups[other];
            if (g.first <= o.last && o.first <= g.last) {
              Error(range_path, "VFs " + Quote(g.range) + " overlap " + Quote(o.range) + " of " +
                                    Where(JoinIndex(list_path, other)) +
                                    ": a VF belongs to one group");
              break;
            }
          }
          good.push_back(k);
        }
      }
      const VfGroupSpec e = EffectiveVfGroup(nic, g);
      if (e.device_type == "vfio-pci" && e.is_rdma == true && !Tainted(path + ".isRdma") &&
          !Tainted(path + ".deviceType") && !Tainted(nic_path + ".isRdma") &&
          !Tainted(nic_path + ".deviceType")) {
        const bool own = g.is_rdma.has_value();
        Error(own ? path + ".isRdma" : path + ".deviceType",
              std::string(own ? "isRdma" : "deviceType vfio-pci with the nic's isRdma") +
                  " needs deviceType netdevice: VFs bound to vfio-pci have no RDMA device");
      }
      // The group's own per-VF settings, checked as a nic's (the nic's own
      // were, where it sets them). An own vfMtu meets the group's deviceType
      // (its own, else the nic's); an inherited one is for netdevice groups
      // only and is not applied to a vfio-pci group's VFs.
      if (g.vf_mtu) {
        CheckVfMtu(
            g.vf_mtu, e.device_type, JoinField(path, "vfMtu"),
            g.device_type ? JoinField(path, "deviceType") : JoinField(nic_path, "deviceType"),
            nic.mtu, JoinField(nic_path, "mtu"));
      }
      CheckVfRate(g.vf_rate, JoinField(path, "vfRate"));
      CheckVfVlan(g.vf_vlan, JoinField(path, "vfVlan"));
      CheckVfMac(g.vf_mac, nic, nic_path, JoinField(path, "vfMac"));
      if (e.resource_name && !Tainted(path + ".resourceName") &&
          !Tainted(nic_path + ".resourceName")) {
        auto [it, fresh] = resources.emplace(*e.resource_name, k);
        if (!fresh) {
          Error(g.resource_name ? path + ".resourceName" : path,
                "resourceName " + Quote(*e.resource_name) +
                    (g.resource_name ? "" : " (the nic's)") + " is also " +
                    Where(JoinIndex(list_path, it->second)) +
                    "'s: each group is its own device-plugin resource (the "
                    "sriov-network-operator keeps one group per resource on a PF)");
        }
      }
    }
  }

  // A vfMtu (of a nic, or of a VF group: its own vfMtu and deviceType, the
  // nic's mtu): the VFs need a netdev to carry it, and the PF's MTU bounds
  // it (sriov-network-operator refuses a policy's spec.mtu above the PF's
  // on an externallyManaged PF, and mlx5 VFs cannot send above it). The
  // PF's current MTU is plan's to compare (modules/link PlanVfMtu).
  void CheckVfMtu(std::optional<int> vf_mtu, const std::optional<std::string>& device_type,
                  const std::string& path, const std::string& device_type_path,
                  std::optional<int> pf_mtu, const std::string& pf_mtu_path) {
    if (!vf_mtu || Tainted(path)) return;
    if (device_type == "vfio-pci" && !Tainted(device_type_path)) {
      Error(path, "vfMtu sets the VF netdevs' MTU, but deviceType vfio-pci (" +
                      Where(device_type_path) +
                      ") leaves the VFs without a netdev: the VM or DPDK application sets it");
    }
    if (pf_mtu && *vf_mtu > *pf_mtu && !Tainted(pf_mtu_path)) {
      Error(path, std::to_string(*vf_mtu) + " is above the PF's mtu " + std::to_string(*pf_mtu) +
                      " (" + Where(pf_mtu_path) +
                      "): a VF cannot carry frames its PF's port does not; raise mtu to " +
                      std::to_string(*vf_mtu) + " or more");
    }
  }

  // A vfVlan: id 0 is "no port VLAN", so there is no tag to carry the
  // priority (qos is the tag's PCP).
  void CheckVfVlan(const std::optional<VfVlanSpec>& vlan, const std::string& path) {
    if (!vlan || Tainted(path)) return;
    if (vlan->id == 0 && vlan->qos != 0) {
      Error(JoinField(path, "qos"), "qos " + std::to_string(vlan->qos) +
                                        " needs a VLAN: id 0 means no VLAN (give id 1..4095 "
                                        "or leave qos out)");
    }
  }

  // A vfMac: the MAC table is Ethernet's; an InfiniBand VF is addressed by
  // its GUIDs (ib-sriov derives them).
  // `vf_mac` is the nic's or one group's, at `path`.
  void CheckVfMac(const std::optional<std::string>& vf_mac, const NicSpec& nic,
                  const std::string& nic_path, const std::string& path) {
    if (!vf_mac || Tainted(path)) return;
    if (nic.link_type == "ib" && !Tainted(nic_path + ".linkType")) {
      Error(path, "vfMac sets the VFs' Ethernet MACs, but nic " + Quote(nic.name) +
                      " has linkType ib (" + Where(nic_path + ".linkType") +
                      "): an InfiniBand VF has GUIDs instead (a cniType ib-sriov multus config "
                      "derives them)");
    }
  }

  // A vfRate (of a nic or a VF group): the kernel refuses a limit below the
  // guarantee (ndo_set_vf_rate: mlx5 and ice EINVAL when max < min).
  void CheckVfRate(const std::optional<VfRateSpec>& rate, const std::string& path) {
    if (!rate || Tainted(path)) return;
    if (rate->max != 0 && rate->min > rate->max) {
      Error(JoinField(path, "max"), std::to_string(rate->max) + " Mbps is below min " +
                                        std::to_string(rate->min) +
                                        " Mbps: the limit cannot be below the guarantee "
                                        "(0 = no limit)");
    }
  }

  // spec.nics[].ipoib: an InfiniBand NIC's IPoIB interface (module ipoib).
  void CheckIpoib(const NicSpec& nic, const std::string& nic_path) {
    const IpoibSpec& ib = *nic.ipoib;
    const std::string path = JoinField(nic_path, "ipoib");
    if (nic.link_type == "eth" && !Tainted(nic_path + ".linkType") && !Tainted(path)) {
      Error(path, "ipoib needs an InfiniBand NIC, but nic " + Quote(nic.name) +
                      " has linkType eth (" + Where(nic_path + ".linkType") +
                      "): an Ethernet port has no IPoIB interface");
    }
    const std::string mtu_path = path + ".mtu";
    if (ib.mtu && !Tainted(mtu_path)) {
      if (ib.mode == "datagram" && *ib.mtu > kIpoibDatagramMaxMtu) {
        Error(mtu_path, std::to_string(*ib.mtu) + " is above datagram mode's largest MTU " +
                            std::to_string(kIpoibDatagramMaxMtu) +
                            " (a 4K IB MTU less the 4-byte IPoIB header); use mode connected "
                            "for up to " +
                            std::to_string(kIpoibConnectedMaxMtu));
      }
      if (nic.mtu && !Tainted(nic_path + ".mtu")) {
        Error(mtu_path, "set the MTU of an IPoIB NIC once, here: the nic's mtu (" +
                            Where(nic_path + ".mtu") + ") sets the same netdev");
      }
    }
    if (ib.addresses) {
      std::map<std::string, size_t> seen;
      for (size_t k = 0; k < ib.addresses->size(); ++k) {
        const std::string a_path = JoinIndex(path + ".addresses", k);
        const std::string& text = (*ib.addresses)[k];
        if (Tainted(a_path)) continue;
        auto cidr = ParseCidr(text);
        if (!cidr || text.find('/') == std::string::npos) {
          Error(a_path, Quote(text) +
                            " is not an address with its prefix length, like 172.16.0.10/16 or "
                            "fd00::10/64");
          continue;
        }
        const std::string key = FormatIp(cidr->address) + "/" + std::to_string(cidr->length);
        auto [it, inserted] = seen.emplace(key, k);
        if (!inserted) {
          Error(a_path, Quote(text) + " is listed twice (first at " +
                            Where(JoinIndex(path + ".addresses", it->second)) + ")");
        }
      }
    }
    std::map<int, size_t> partitions;
    for (size_t k = 0; k < ib.pkeys.size(); ++k) {
      const std::string p_path = JoinIndex(path + ".pkeys", k);
      if (Tainted(p_path)) continue;
      auto pkey = ParsePkey(ib.pkeys[k]);
      if (!pkey) continue;  // the schema reports it
      const int partition = *pkey & ~kPkeyFullMember;
      if (!IsChildPkey(*pkey)) {
        Error(p_path, Quote(ib.pkeys[k]) +
                          (partition == 0 ? " is no partition (0x0001..0x7fff, with or without "
                                            "the full-membership bit 0x8000)"
                                          : " is the default partition, the PF's own interface: "
                                            "list only the other partitions"));
        continue;
      }
      auto [it, inserted] = partitions.emplace(partition, k);
      if (!inserted) {
        Error(p_path, Quote(ib.pkeys[k]) + " is the same partition as " +
                          Quote(ib.pkeys[it->second]) + " (" +
                          Where(JoinIndex(path + ".pkeys", it->second)) +
                          "): one child interface per partition");
      }
    }
  }

  // NAME, NAME[i] or NAME[i..j]: NAME is [A-Z0-9_]+ starting with a letter,
  // as mstconfig prints names; the index selects elements of an array
  // parameter (`mstconfig set HOST_CHAINING_DESCRIPTORS[3..7]=3`).
  static bool IsFirmwareParamName(const std::string& s) {
    const size_t open = s.find('[');
    const std::string base = s.substr(0, open);
    if (base.empty() || base[0] < 'A' || base[0] > 'Z') return false;
    for (char c : base) {
      if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return false;
    }
    if (open == std::string::npos) return true;
    const std::string index = s.substr(open + 1);
    if (index.size() < 2 || index.back() != ']') return false;
    const std::string range = index.substr(0, index.size() - 1);
    const size_t dots = range.find("..");
    auto number = [](const std::string& n) {
      return !n.empty() && n.size() <= 5 &&
             std::all_of(n.begin(), n.end(), [](char c) { return c >= '0' && c <= '9'; });
    };
    if (dots == std::string::npos) return number(range);
    const std::string lo = range.substr(0, dots), hi = range.substr(dots + 2);
    return number(lo) && number(hi) && std::stoi(lo) <= std::stoi(hi);
  }

  // "host.yaml:12:15" of `path`, for a message about two fields.
  std::string At(const std::string& path) const {
    SourceMark m = s_.marks.Find(path);
    if (m.line <= 0) return path;
    return (s_.file.empty() ? std::string("host.yaml") : s_.file) + ":" + std::to_string(m.line) +
           ":" + std::to_string(m.column);
  }

  // firmware: { SRIOV_EN: false } or { NUM_OF_VFS: n < numVfs } beside
  // numVfs on the same nic: the firmware would enable fewer VFs than the nic
  // asks for after the reboot that applies it (the firmware planner raises
  // them only when firmware: does not say otherwise).
  void CheckFirmwareVsNumVfs(const NicSpec& nic, const std::string& path) {
    const std::string vfs_path = JoinField(path, "numVfs");
    if (!nic.num_vfs || *nic.num_vfs <= 0 || Tainted(vfs_path)) return;
    const std::string want = std::to_string(*nic.num_vfs);
    const std::string fw_path = JoinField(path, "firmware");
    if (auto en = nic.firmware.find("SRIOV_EN"); en != nic.firmware.end()) {
      const std::string field = JoinField(fw_path, "SRIOV_EN");
      std::string v = en->second.text;
      std::transform(v.begin(), v.end(), v.begin(),
                     [](unsigned char c) { return std::tolower(c); });
      if ((v == "false" || v == "0") && !Tainted(field)) {
        Error(field, "SRIOV_EN " + en->second.text + " (" + At(field) +
                         ") turns SR-IOV off in the firmware of nic " + Quote(nic.name) +
                         ", but numVfs " + want + " (" + At(vfs_path) +
                         ") asks for VFs on it: drop SRIOV_EN (the plan turns it on when the "
                         "card has it off) or set numVfs: 0");
      }
    }
    if (auto n = nic.firmware.find("NUM_OF_VFS"); n != nic.firmware.end()) {
      const std::string field = JoinField(fw_path, "NUM_OF_VFS");
      const std::string& v = n->second.text;
      const bool digits =
          !v.empty() && v.size() <= 9 &&
          std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; });
      if (digits && std::stoi(v) < *nic.num_vfs && !Tainted(field)) {
        Error(field, "NUM_OF_VFS " + v + " (" + At(field) + ") lets the firmware of nic " +
                         Quote(nic.name) + " enable at most " + v + " VFs, but numVfs " + want +
                         " (" + At(vfs_path) + ") asks for " + want +
                         ": set NUM_OF_VFS to at "
                         "least " +
                         want +
                         ", or drop it (the plan raises it when the card "
                         "has fewer)");
      }
    }
  }

  // roce.buffers.sizes in whole 128-byte cells, and PFC or global pause.
  // mlx5 keeps a buffer's size in cells of port_buff_cell_sz bytes (128 on
  // every ConnectX: en/port_buffer.c, port_set_buffer divides and drops the
  // rest), so 65500 reads back as 65408 and verify never holds. IEEE 802.1Qbb
  // (PFC) and 802.3x (global pause) are not both on one link: with pause on
  // mlx5 treats every buffer as lossless (fill_pfc_en) and the switch sees
  // both kinds of frames.
  void CheckRoceCellsAndPause(const NicRoceSpec& r, const std::string& roce_path) {
    constexpr long long kCell = 128;
    const std::string sizes_path = JoinField(JoinField(roce_path, "buffers"), "sizes");
    if (r.buffers && r.buffers->sizes && !Tainted(sizes_path)) {
      for (size_t b = 0; b < r.buffers->sizes->size(); ++b) {
        const long long z = (*r.buffers->sizes)[b];
        if (z % kCell == 0) continue;
        const long long down = z / kCell * kCell;
        Error(JoinIndex(sizes_path, b),
              std::to_string(z) + " is not a whole number of mlx5's 128-byte buffer cells (" +
                  "the driver would keep " + std::to_string(down) + "): use " +
                  std::to_string(down) + " or " + std::to_string(down + kCell));
      }
    }
    const std::string pause_path = JoinField(roce_path, "pause");
    const std::string pfc_path = JoinField(roce_path, "pfc");
    if (r.pause && *r.pause && r.pfc && !r.pfc->empty() && !Tainted(pause_path) &&
        !Tainted(pfc_path)) {
      Error(pause_path, "pause: true (IEEE 802.3x global pause) beside pfc (IEEE 802.1Qbb, " +
                            Where(pfc_path) +
                            "): a link runs one or the other; set pfc: [] to move to global "
                            "pause, or pause: false to keep PFC");
    }
  }

  // -- names ----------------------------------------------------------------

  template <typename T, typename KeyFn>
  void CheckUnique(const std::vector<T>& items, const std::string& list_path, const char* what,
                   KeyFn key) {
    std::map<std::string, size_t> first;
    for (size_t i = 0; i < items.size(); ++i) {
      std::string name_path = JoinField(JoinIndex(list_path, i), "name");
      std::string k = key(items[i]);
      if (items[i].name.empty() || Tainted(name_path)) continue;
      auto [it, inserted] = first.emplace(k, i);
      if (!inserted) {
        Error(name_path, "duplicate " + std::string(what) + " " + Quote(k) + " (first at " +
                             Where(JoinField(JoinIndex(list_path, it->second), "name")) + ")");
      }
    }
  }

  // Two nics naming the same PF (rootDevices) or PF netdev (pfNames) would
  // both configure it and both publish it as a device-plugin resource.
  // Overlaps that only discovery shows (a rootDevice whose netdev another nic
  // names, vendor/deviceID selectors) are plan/manifests errors
  // (CheckNicOverlaps in engine/model/selector.h).
  void CheckNicOverlaps() {
    std::map<std::string, size_t> roots, names;  // canonical address / netdev -> nic
    auto claim = [&](std::map<std::string, size_t>& seen, const std::string& key, size_t i,
                     const std::string& field, size_t k, const std::string& shown) {
      std::string path = JoinIndex(JoinField(JoinField(NicPath(i), "nicSelector"), field), k);
      if (Tainted(path)) return;
      auto [it, inserted] = seen.emplace(key, i);
      if (inserted || it->second == i) return;
      const size_t first = it->second;
      Error(path, Quote(shown) + " is also selected by " + Where(NicPath(first)) + " (" +
                      s_.nics[first].name + "): two nics cannot share a PF (each would set " +
                      "its VFs and publish it as its own resource)");
    };
    for (size_t i = 0; i < s_.nics.size(); ++i) {
      const NicSelector& sel = s_.nics[i].selector;
      for (size_t k = 0; k < sel.root_devices.size(); ++k) {
        claim(roots, CanonicalPciAddress(sel.root_devices[k]), i, "rootDevices", k,
              sel.root_devices[k]);
      }
      for (size_t k = 0; k < sel.pf_names.size(); ++k) {
        claim(names, sel.pf_names[k], i, "pfNames", k, sel.pf_names[k]);
      }
    }
  }

  // spec.nics[].names: names the kernel takes (dev_valid_name for a netdev;
  // for an RDMA device nldev_set_doit's IB_DEVICE_NAME_MAX and no '%', the
  // format character ib_register_device expands), each used once, and no
  // pfNames selector (it would stop matching once the PF is renamed).
  void CheckNames() {
    std::map<std::string, std::string> netdevs, rdmas;  // name -> its path
    for (size_t i = 0; i < s_.nics.size(); ++i) {
      const NicSpec& nic = s_.nics[i];
      if (!nic.names) continue;
      const std::string path = JoinField(NicPath(i), "names");
      if (Tainted(path)) continue;
      auto claim = [&](std::map<std::string, std::string>& seen, const std::string& name,
                       const std::string& field) {
        auto [it, inserted] = seen.emplace(name, field);
        if (!inserted) {
          Error(field, Quote(name) + " is also the name of " + Where(it->second) +
                           ": two devices cannot have one name");
        }
      };
      if (nic.names->netdev) {
        const std::string field = JoinField(path, "netdev");
        const std::string& n = *nic.names->netdev;
        if (auto why = InterfaceNameProblem(n)) {
          Error(field, Quote(n) + " is not a valid Linux interface name: " + *why);
        } else if (n.find_first_of("%$\"\\") != std::string::npos) {
          Error(field, Quote(n) + " contains one of % $ \" \\ (the kernel reads '%' as a " +
                           "name template, udev's NAME= substitutes '%' and '$')");
        } else {
          claim(netdevs, n, field);
        }
        if (!nic.selector.pf_names.empty()) {
          Error(field, "nic " + Quote(nic.name) +
                           " selects its PF by pfNames, which no longer match once it is "
                           "renamed: select it by rootDevices, vendor/deviceID or nearGpu");
        }
      }
      if (nic.names->rdma) {
        const std::string field = JoinField(path, "rdma");
        const std::string& n = *nic.names->rdma;
        std::optional<std::string> why;
        if (n.empty()) why = "it is empty";
        if (n.size() > 63) why = "it is longer than 63 characters";
        if (n == "." || n == "..") why = "\".\" and \"..\" are reserved";
        for (char c : n) {
          if (c == '/') why = "it contains '/'";
          if (c == '%' || c == '$' || c == '"' || c == '\\') {
            why = "it contains one of % $ \" \\ (udev rules substitute '%' and '$')";
          }
          if (std::isspace(static_cast<unsigned char>(c)) || c == '\0') {
            why = "it contains whitespace";
          }
        }
        if (why) {
          Error(field, Quote(n) + " is not a valid RDMA device name: " + *why);
        } else {
          claim(rdmas, n, field);
        }
      }
    }
  }

  void CheckDuplicates() {
    CheckNicOverlaps();
    CheckUnique(s_.nics, "spec.nics", "nic name", [](const NicSpec& n) { return n.name; });
    CheckUnique(s_.ip_pools, "spec.ipPools", "ipPool name",
                [](const IpPoolSpec& p) { return p.name; });
    CheckUnique(s_.multus_configs, "spec.multusConfigs", "multus config",
                [](const MultusConfigSpec& m) { return m.namespace_name + "/" + m.name; });
  }

  void CheckKernelModules() {
    std::map<std::string, size_t> first;
    for (size_t i = 0; i < s_.kernel_modules.size(); ++i) {
      std::string path = JoinIndex("spec.kernelModules", i);
      const std::string& name = s_.kernel_modules[i].name;
      if (name.empty() || Tainted(path)) continue;
      // kmod treats '-' and '_' in module names as the same character.
      std::string key = name;
      std::replace(key.begin(), key.end(), '-', '_');
      auto [it, inserted] = first.emplace(key, i);
      if (!inserted) {
        Error(path, "kernel module " + Quote(name) + " is listed twice (first at " +
                        Where(JoinIndex("spec.kernelModules", it->second)) + ")");
      }
    }
  }

  // -- spec.ipPools ---------------------------------------------------------

  // Parsed subnets by pool index (nullopt: missing, invalid or tainted).
  std::vector<std::optional<IpPrefix>> subnets_;

  void CheckPools() {
    subnets_.assign(s_.ip_pools.size(), std::nullopt);
    for (size_t i = 0; i < s_.ip_pools.size(); ++i) {
      const IpPoolSpec& pool = s_.ip_pools[i];
      std::string path = PoolPath(i);
      std::string subnet_path = path + ".subnet";
      if (pool.subnet.empty() || Tainted(subnet_path)) continue;
      auto subnet = ParseCidr(pool.subnet);
      if (!subnet) {
        Error(subnet_path, Quote(pool.subnet) +
                               " is not a subnet in CIDR notation, like 172.16.11.0/24 or "
                               "fd00:11::/64");
        continue;
      }
      subnets_[i] = subnet;
      if (subnet->HasHostBits()) {
        Warning(subnet_path,
                Quote(pool.subnet) + " has host bits set; the subnet is " + subnet->ToString());
      }
      CheckAddresses(pool.ips, path + ".ips", *subnet);
      CheckAddresses(pool.exclude_ips, path + ".excludeIPs", *subnet);
      if (pool.gateway && !Tainted(path + ".gateway")) {
        std::string gw_path = path + ".gateway";
        auto gw = ParseIp(*pool.gateway);
        if (!gw) {
          Error(gw_path, Quote(*pool.gateway) + " is not an IP address");
        } else if (gw->version != subnet->address.version) {
          Error(gw_path, "gateway " + FormatIp(*gw) + " is " + IpVersionName(gw->version) +
                             " but subnet " + subnet->ToString() + " is " +
                             IpVersionName(subnet->address.version));
        } else if (!subnet->Contains(*gw)) {
          Error(gw_path, "gateway " + FormatIp(*gw) + " is outside subnet " + subnet->ToString());
        }
      }
    }
  }

  void CheckAddresses(const std::vector<std::string>& entries, const std::string& list_path,
                      const IpPrefix& subnet) {
    for (size_t k = 0; k < entries.size(); ++k) {
      std::string path = JoinIndex(list_path, k);
      const std::string& text = entries[k];
      if (text.empty() || Tainted(path)) continue;
      auto range = ParseIpRange(text);
      if (!range) {
        Error(path,
              Quote(text) + " is not an IP address or a range \"first-last\" of one IP version");
        continue;
      }
      if (range->first.version != subnet.address.version) {
        Error(path, Quote(text) + " is " + IpVersionName(range->first.version) + " but subnet " +
                        subnet.ToString() + " is " + IpVersionName(subnet.address.version));
        continue;
      }
      if (CompareIp(range->first, range->last) > 0) {
        Error(path, "range " + Quote(text) + " starts after it ends");
        continue;
      }
      bool single = CompareIp(range->first, range->last) == 0;
      for (const IpAddress* end : {&range->first, &range->last}) {
        if (subnet.Contains(*end)) continue;
        std::string which = single ? "" : (end == &range->first ? "range start " : "range end ");
        Error(path, which + FormatIp(*end) + " is outside subnet " + subnet.ToString());
        break;
      }
    }
  }

  // -- spec.multusConfigs ---------------------------------------------------

  const NicSpec* FindNic(const std::string& name, size_t* index) const {
    for (size_t i = 0; i < s_.nics.size(); ++i) {
      if (s_.nics[i].name == name) {
        *index = i;
        return &s_.nics[i];
      }
    }
    return nullptr;
  }

  // A reference can be called dangling only if every name it could have
  // matched was read cleanly.
  bool NamesTainted(const std::string& list_path, size_t count) const {
    if (Tainted(list_path)) return true;
    for (size_t i = 0; i < count; ++i) {
      if (Tainted(JoinField(JoinIndex(list_path, i), "name"))) return true;
    }
    return false;
  }

  static std::string NameList(const std::vector<std::string>& names) {
    std::string out;
    for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
    return out.empty() ? "none defined" : "defined: " + out;
  }

  // As ib-kubernetes takes it (pkg/utils ParsePKey, the UFM plugin's
  // IsPKeyValid): a 15-bit partition; it adds the pod's GUID as a full member
  // itself, and refuses the full-membership bit. The value is normalized
  // ("0x1000") by the time it gets here.
  void CheckMultusPkey(const std::string& path, const std::string& text) {
    auto v = ParsePkeySpelling(text);
    if (!v) return;  // the schema reports it
    const int partition = *v & ~kPkeyFullMember;
    if (partition == 0) {
      Error(path, Quote(text) + " is no partition (the partition bits 0x7fff are 0)");
    } else if (*v & kPkeyFullMember) {
      Error(path, Quote(text) +
                      " has the full-membership bit 0x8000, which ib-kubernetes "
                      "refuses (it makes the pod's GUID a full member itself): write " +
                      Quote(PkeyText(partition)));
    }
  }

  void CheckMultusConfigs() {
    std::vector<std::string> nic_names, pool_names;
    for (const auto& n : s_.nics) nic_names.push_back(n.name);
    for (const auto& p : s_.ip_pools) pool_names.push_back(p.name);
    bool nics_clean = !NamesTainted("spec.nics", s_.nics.size());
    bool pools_clean = !NamesTainted("spec.ipPools", s_.ip_pools.size());
    std::string netns = s_.rdma && s_.rdma->netns_mode ? *s_.rdma->netns_mode : "";
    bool netns_clean = !Tainted("spec.rdma.netnsMode");

    for (size_t i = 0; i < s_.multus_configs.size(); ++i) {
      const MultusConfigSpec& m = s_.multus_configs[i];
      std::string path = MultusPath(i);
      std::string cni_path = path + ".cniType";
      std::string nic_path = path + ".nic";
      const std::string& cni = m.cni_type;
      bool cni_clean = !cni.empty() && !Tainted(cni_path);

      // The Spiderpool multus config and its pods carry it as a label
      // value (engine/manifests): the API server refuses anything else.
      if (m.rdma_resource_inject && !Tainted(path + ".rdmaResourceInject") &&
          !IsLabelValue(*m.rdma_resource_inject)) {
        Error(path + ".rdmaResourceInject", Quote(*m.rdma_resource_inject) + " " + kNotLabelValue);
      }
      // pkey is an InfiniBand partition: ib-sriov only.
      if (m.pkey && cni_clean && cni != "ib-sriov" && !Tainted(path + ".pkey")) {
        Error(path + ".pkey", "pkey is only for cniType ib-sriov, not " + cni);
      }
      if (m.pkey && !Tainted(path + ".pkey")) CheckMultusPkey(path + ".pkey", *m.pkey);
      // resourceName picks a VF resource: sriov/ib-sriov only.
      if (m.resource_name && cni_clean && cni != "sriov" && cni != "ib-sriov" &&
          !Tainted(path + ".resourceName")) {
        Error(path + ".resourceName",
              "resourceName picks one of the nic's VF resources: only for cniType sriov and "
              "ib-sriov, not " +
                  cni);
      }
      if (m.vlan && cni_clean && (cni == "ib-sriov" || cni == "ipoib") &&
          !Tainted(path + ".vlan")) {
        Error(path + ".vlan", "vlan is Ethernet only; cniType " + cni + " has no VLANs (use pkey)");
      }
      // macvlan/ipvlan share one RDMA device between pods: shared mode only.
      if (cni_clean && netns_clean && netns == "exclusive" &&
          (cni == "macvlan" || cni == "ipvlan")) {
        Error(cni_path, "cniType " + cni +
                            " shares the NIC's RDMA device between pods, which needs "
                            "spec.rdma.netnsMode shared, but it is exclusive (" +
                            Where("spec.rdma.netnsMode") + ")");
      }

      // nic:
      size_t nic_index = 0;
      const NicSpec* nic = nullptr;
      if (!m.nic.empty() && !Tainted(nic_path)) {
        nic = FindNic(m.nic, &nic_index);
        if (nic == nullptr && nics_clean) {
          Error(nic_path,
                "nic " + Quote(m.nic) + " names no NIC in spec.nics (" + NameList(nic_names) + ")");
        }
      }
      if (nic != nullptr && cni_clean) CheckNicFitsCni(m, path, *nic, nic_index, netns);

      // ippools:
      CheckPoolRefs(m.ippools.ipv4, path + ".ippools.ipv4", 4, pools_clean, pool_names);
      CheckPoolRefs(m.ippools.ipv6, path + ".ippools.ipv6", 6, pools_clean, pool_names);
    }
  }

  void CheckNicFitsCni(const MultusConfigSpec& m, const std::string& path, const NicSpec& nic,
                       size_t nic_index, const std::string& netns) {
    const std::string& cni = m.cni_type;
    std::string nic_path = NicPath(nic_index);
    std::string cni_path = path + ".cniType";
    if (nic.link_type && !Tainted(nic_path + ".linkType")) {
      const std::string& link = *nic.link_type;
      std::string where = " (" + Where(nic_path + ".linkType") + ")";
      if (link == "ib" && cni == "sriov") {
        Error(cni_path, "cniType sriov needs an Ethernet NIC (RoCE), but nic " + Quote(nic.name) +
                            " has linkType ib" + where + "; use ib-sriov for InfiniBand");
      } else if (link == "ib" && cni == "macvlan") {
        Error(cni_path, "cniType macvlan needs an Ethernet NIC, but nic " + Quote(nic.name) +
                            " has linkType ib" + where + "; use ipoib for InfiniBand");
      } else if (link == "eth" && (cni == "ib-sriov" || cni == "ipoib")) {
        Error(cni_path, "cniType " + cni + " needs an InfiniBand NIC, but nic " + Quote(nic.name) +
                            " has linkType eth" + where);
      }
    }
    if (cni == "sriov" || cni == "ib-sriov") {
      std::string ref_path = path + ".nic";
      if (!Tainted(nic_path + ".numVfs") && !(nic.num_vfs && *nic.num_vfs > 0)) {
        Error(ref_path, "cniType " + cni + " needs VFs, but nic " + Quote(nic.name) +
                            " sets no numVfs > 0 (" + Where(nic_path) + ")");
      }
      if (!nic.vf_groups.empty()) {
        CheckGroupResourceRef(m, path, nic, nic_index);
      } else if (m.resource_name && nic.resource_name && *m.resource_name != *nic.resource_name &&
                 !Tainted(path + ".resourceName") && !Tainted(nic_path + ".resourceName")) {
        Error(path + ".resourceName", Quote(*m.resource_name) + " is not nic " + Quote(nic.name) +
                                          "'s resourceName " + Quote(*nic.resource_name) + " (" +
                                          Where(nic_path + ".resourceName") + ")");
      } else if (!Tainted(nic_path + ".resourceName") && !nic.resource_name) {
        Error(ref_path, "cniType " + cni + " needs nic " + Quote(nic.name) +
                            " to set resourceName, the device-plugin resource of its VFs (" +
                            Where(nic_path) + ")");
      }
      if (netns == "shared" && nic.is_rdma == true && !Tainted("spec.rdma.netnsMode")) {
        Warning(cni_path, "the RDMA devices of nic " + Quote(nic.name) +
                              "'s VFs are visible in every pod with spec.rdma.netnsMode "
                              "shared; the RDMA CNI isolates them only in exclusive mode");
      }
    }
  }

  // A sriov/ib-sriov config on a nic with vfGroups: its resourceName names
  // one of the groups' resources, or the nic has exactly one.
  void CheckGroupResourceRef(const MultusConfigSpec& m, const std::string& path, const NicSpec& nic,
                             size_t nic_index) {
    const std::string groups_path = JoinField(NicPath(nic_index), "vfGroups");
    if (TaintedWithin(groups_path) || Tainted(path + ".resourceName")) return;
    std::vector<std::string> names;
    for (const VfGroupSpec& g : nic.vf_groups) {
      const VfGroupSpec e = EffectiveVfGroup(nic, g);
      if (e.resource_name &&
          std::find(names.begin(), names.end(), *e.resource_name) == names.end()) {
        names.push_back(*e.resource_name);
      }
    }
    if (m.resource_name) {
      if (std::find(names.begin(), names.end(), *m.resource_name) == names.end()) {
        Error(path + ".resourceName", Quote(*m.resource_name) + " is none of nic " +
                                          Quote(nic.name) + "'s vfGroups resources (" +
                                          Join(names, ", ") + "; " + Where(groups_path) + ")");
      }
    } else if (names.size() != 1) {
      Error(path + ".nic", "nic " + Quote(nic.name) + " has vfGroups with " +
                               (names.empty() ? std::string("no resourceName")
                                              : "several resources (" + Join(names, ", ") + ")") +
                               ": set resourceName here to say which one the pods get (" +
                               Where(groups_path) + ")");
    }
  }

  void CheckPoolRefs(const std::vector<std::string>& refs, const std::string& list_path,
                     int version, bool pools_clean, const std::vector<std::string>& pool_names) {
    for (size_t k = 0; k < refs.size(); ++k) {
      std::string path = JoinIndex(list_path, k);
      if (refs[k].empty() || Tainted(path)) continue;
      auto it = std::find(pool_names.begin(), pool_names.end(), refs[k]);
      if (it == pool_names.end()) {
        if (pools_clean) {
          Error(path, "ippool " + Quote(refs[k]) + " names no pool in spec.ipPools (" +
                          NameList(pool_names) + ")");
        }
        continue;
      }
      size_t pool = static_cast<size_t>(it - pool_names.begin());
      const auto& subnet = subnets_[pool];
      if (subnet && subnet->address.version != version) {
        Error(path, "ippool " + Quote(refs[k]) + " is " + IpVersionName(subnet->address.version) +
                        " (subnet " + subnet->ToString() + ") but is listed under " +
                        (version == 4 ? "ipv4" : "ipv6"));
      }
    }
  }

  // -- spec.kubernetes ------------------------------------------------------

  void CheckKubernetes() {
    if (!s_.kubernetes) return;
    const KubernetesSpec& k = *s_.kubernetes;
    bool selector_clean = !Tainted("spec.kubernetes.nodeSelector");
    for (const auto& [key, value] : k.node_selector) {
      if (!selector_clean) break;
      // The key is checked even when its value is bad: the schema cannot
      // report keys (valijson's propertyNames fails without an error).
      std::string path = "spec.kubernetes.nodeSelector." + key;
      if (!IsLabelKey(key)) {
        Error(path, Quote(key) +
                        " is not a valid label key ([prefix/]name: name up to 63 letters, "
                        "digits, '-', '_' or '.', prefix a DNS subdomain)");
      } else if (!IsLabelValue(value) && !Tainted(path)) {
        Error(path, Quote(value) + " " + kNotLabelValue);
      }
    }
    if (k.rdma_shared_device_plugin && s_.rdma && s_.rdma->netns_mode == "exclusive" &&
        !Tainted("spec.rdma.netnsMode")) {
      Warning("spec.kubernetes.rdmaSharedDevicePlugin",
              "the RDMA shared device plugin shares RDMA devices between pods, which needs "
              "spec.rdma.netnsMode shared, but it is exclusive (" +
                  Where("spec.rdma.netnsMode") + ")");
    }
  }

  const DesiredState& s_;
  const std::set<std::string>& tainted_;
  std::vector<Diagnostic> diags_;
};

}  // namespace

bool IsLabelValue(std::string_view s) {
  // k8s.io/apimachinery validation.IsValidLabelValue: empty, or at most 63
  // characters, alphanumeric at both ends, '-', '_' or '.' between.
  if (s.empty()) return true;
  if (s.size() > 63) return false;
  auto alnum = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
  };
  for (char c : s) {
    if (!alnum(c) && c != '-' && c != '_' && c != '.') return false;
  }
  return alnum(s.front()) && alnum(s.back());
}

bool IsDnsLabel(std::string_view s) {
  if (s.empty() || s.size() > 63) return false;
  for (char c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
  }
  return s.front() != '-' && s.back() != '-';
}

bool IsDnsSubdomain(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  size_t start = 0;
  while (true) {
    size_t dot = s.find('.', start);
    if (!IsDnsLabel(s.substr(start, dot == std::string_view::npos ? dot : dot - start))) {
      return false;
    }
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

std::optional<std::string> InterfaceNameProblem(std::string_view name) {
  if (name.empty()) return "it is empty";
  if (name.size() > 15) return "it is longer than 15 characters";
  if (name == "." || name == "..") return "\".\" and \"..\" are reserved";
  for (char c : name) {
    if (c == '/') return "it contains '/'";
    if (c == ':') return "it contains ':'";
    if (std::isspace(static_cast<unsigned char>(c)) || c == '\0') {
      return "it contains whitespace";
    }
  }
  return std::nullopt;
}

bool IsLabelKey(std::string_view key) {
  size_t slash = key.find('/');
  if (slash == std::string_view::npos) return IsQualifiedName(key);
  return IsDnsSubdomain(key.substr(0, slash)) && IsQualifiedName(key.substr(slash + 1));
}

std::vector<Diagnostic> CheckDesiredState(const DesiredState& state,
                                          const std::set<std::string>& tainted) {
  return Checker(state, tainted).Run();
}

}  // namespace provisioner::config
