// host.yaml rules of spec.nics[] itself: the selector, isRdma against
// deviceType, roce and eswitchMode against linkType, roce's dscpMap and
// buffers, firmware parameter names and firmware against numVfs, ipoib.
// The per-VF settings and vfGroups are vf_checks.cc's.
#include <algorithm>
#include <cctype>
#include <map>

#include "engine/config/checks.h"
#include "engine/config/check_context.h"
#include "engine/config/field_path.h"
#include "engine/config/text.h"
#include "engine/config/ip.h"
#include "engine/config/pkey.h"
#include "engine/model/ipoib_facts.h"

namespace provisioner::config {
namespace {

class NicChecks : private CheckContext {
 public:
  explicit NicChecks(const CheckContext& c) : CheckContext(c) {}

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
      CheckNicVfSettings(*this, nic, path);
      if (nic.ipoib) CheckIpoib(nic, path);
      if (!nic.vf_groups.empty()) CheckVfGroups(*this, nic, path);
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
                            "for up to " + std::to_string(kIpoibConnectedMaxMtu));
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
};

}  // namespace

void CheckNics(const CheckContext& c) { NicChecks(c).CheckNics(); }

}  // namespace provisioner::config
