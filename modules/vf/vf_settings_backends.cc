// The two VfSettingsBackends (vf_backend.h): rtnetlink for the live root, the
// capture files for a tree root.
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <optional>

#include "engine/base/strings.h"
#include "modules/vf/vf_backend.h"
#include "nlohmann/json.hpp"
#include "spdlog/spdlog.h"

namespace provisioner {
namespace {

std::string FlagText(const std::optional<bool>& v) { return *v ? "1\n" : "0\n"; }

// The capture file `vlan`: "100 3 802.1Q\n".
std::string VlanText(uint32_t id, uint32_t qos, uint16_t proto) {
  return std::to_string(id) + " " + std::to_string(qos) + " " + VfVlanProtoName(proto) + "\n";
}

class NetlinkVfSettings final : public VfSettingsBackend {
 public:
  NetlinkVfSettings(VfNetlink* nl, const HostFs& notes) : nl_(nl), notes_(notes) {}

  bool NeedsPfNetdev() const override { return true; }

  std::map<int, VfLinkState> Read(const std::string& pf, const std::string& pf_netdev) override {
    std::map<int, VfLinkState> out;
    if (nl_ == nullptr || pf_netdev.empty()) return out;
    auto vfs = nl_->ReadVfs(pf_netdev);
    if (!vfs.ok()) {
      spdlog::debug("{}", vfs.status().message());  // a missing fact, not an error
      return out;
    }
    for (const VfLinkState& s : *vfs) {
      out[s.vf] = s;
      // What the tree backend reads under a snapshot of this host.
      if (notes_.IsRecording()) {
        if (s.trust) notes_.NoteCapture(VfStateCapturePath(pf, s.vf, "trust"), FlagText(s.trust));
        if (s.spoof_chk) {
          notes_.NoteCapture(VfStateCapturePath(pf, s.vf, "spoofchk"), FlagText(s.spoof_chk));
        }
        if (s.min_tx_rate && s.max_tx_rate) {
          notes_.NoteCapture(
              VfStateCapturePath(pf, s.vf, "rate"),
              std::to_string(*s.min_tx_rate) + " " + std::to_string(*s.max_tx_rate) + "\n");
        }
        if (s.vlan && s.vlan_qos && s.vlan_proto && !VfVlanProtoName(*s.vlan_proto).empty()) {
          notes_.NoteCapture(VfStateCapturePath(pf, s.vf, "vlan"),
                             VlanText(*s.vlan, *s.vlan_qos, *s.vlan_proto));
        }
        if (s.mac) notes_.NoteCapture(VfStateCapturePath(pf, s.vf, "mac"), *s.mac + "\n");
        if (s.link_state && !VfLinkStateName(*s.link_state).empty()) {
          notes_.NoteCapture(VfStateCapturePath(pf, s.vf, "link_state"),
                             VfLinkStateName(*s.link_state) + "\n");
        }
      }
    }
    return out;
  }

  Status SetFlag(const std::string& pf, const std::string& pf_netdev, int vf,
                 const std::string& name, bool on) override {
    (void)pf;
    if (nl_ == nullptr) return InternalError("vf: no netlink client");
    return name == "trust" ? nl_->SetTrust(pf_netdev, vf, on) : nl_->SetSpoofChk(pf_netdev, vf, on);
  }

  Status SetLinkState(const std::string& pf, const std::string& pf_netdev, int vf,
                      int state) override {
    (void)pf;
    if (nl_ == nullptr) return InternalError("vf: no netlink client");
    return nl_->SetLinkState(pf_netdev, vf, state);
  }

  Status SetRate(const std::string& pf, const std::string& pf_netdev, int vf, uint32_t min,
                 uint32_t max) override {
    (void)pf;
    if (nl_ == nullptr) return InternalError("vf: no netlink client");
    return nl_->SetRate(pf_netdev, vf, min, max);
  }

  Status SetVlan(const std::string& pf, const std::string& pf_netdev, int vf, uint32_t id,
                 uint32_t qos, uint16_t proto) override {
    (void)pf;
    if (nl_ == nullptr) return InternalError("vf: no netlink client");
    return nl_->SetVlan(pf_netdev, vf, id, qos, proto);
  }

  Status SetMac(const std::string& pf, const std::string& pf_netdev, int vf,
                const std::string& mac) override {
    (void)pf;
    if (nl_ == nullptr) return InternalError("vf: no netlink client");
    return nl_->SetMac(pf_netdev, vf, mac);
  }

  StatusOr<bool> SetGuids(const std::string& pf, const std::string& pf_netdev, int vf,
                          uint64_t guid) override {
    (void)pf;
    if (nl_ == nullptr) return false;
    // Two messages: in one, the kernel applies only the node GUID.
    Status s = nl_->SetNodeGuid(pf_netdev, vf, guid);
    if (s.ok()) s = nl_->SetPortGuid(pf_netdev, vf, guid);
    if (!s.ok()) return s;
    return true;
  }

 private:
  VfNetlink* nl_;
  const HostFs& notes_;
};

class TreeVfSettings final : public VfSettingsBackend {
 public:
  explicit TreeVfSettings(HostFs& fs) : fs_(fs) {}

  bool NeedsPfNetdev() const override { return false; }

  std::map<int, VfLinkState> Read(const std::string& pf, const std::string& pf_netdev) override {
    (void)pf_netdev;
    std::map<int, VfLinkState> out;
    for (const std::string& e : ListDirIfPresent(fs_, kVfStateCapturePrefix + pf)) {
      if (e.empty() || e.find_first_not_of("0123456789") != std::string::npos) continue;
      const int n = std::atoi(e.c_str());
      VfLinkState s;
      s.vf = n;
      s.trust = Flag(pf, n, "trust");
      s.spoof_chk = Flag(pf, n, "spoofchk");
      if (auto v = fs_.ReadAttr(VfStateCapturePath(pf, n, "link_state")); v.ok()) {
        s.link_state = ParseVfLinkState(*v);
      }
      if (auto v = fs_.ReadAttr(VfStateCapturePath(pf, n, "rate")); v.ok()) {
        unsigned long min = 0, max = 0;
        char extra = 0;
        if (std::sscanf(v->c_str(), "%lu %lu %c", &min, &max, &extra) == 2 && min <= 0xffffffffUL &&
            max <= 0xffffffffUL) {
          s.min_tx_rate = static_cast<uint32_t>(min);
          s.max_tx_rate = static_cast<uint32_t>(max);
        }
      }
      if (auto v = fs_.ReadAttr(VfStateCapturePath(pf, n, "vlan")); v.ok()) {
        unsigned id = 0, qos = 0;
        char proto[16] = {0};
        char extra = 0;
        if (std::sscanf(v->c_str(), "%u %u %15s %c", &id, &qos, proto, &extra) == 3 && id <= 4095 &&
            qos <= 7) {
          if (const std::optional<uint16_t> p = ParseVfVlanProto(proto)) {
            s.vlan = id;
            s.vlan_qos = qos;
            s.vlan_proto = *p;
          }
        }
      }
      if (auto v = fs_.ReadAttr(VfStateCapturePath(pf, n, "mac")); v.ok()) {
        if (const auto bytes = ParseMacAddress(*v)) s.mac = FormatMacAddress(bytes->data());
      }
      out[n] = s;
    }
    return out;
  }

  Status SetFlag(const std::string& pf, const std::string& pf_netdev, int vf,
                 const std::string& name, bool on) override {
    (void)pf_netdev;
    if (name == "spoofchk") RETURN_IF_ERROR(NeedsLegacyEswitch(pf, vf, "spoofchk"));
    return fs_.WriteFileAtomic(VfStateCapturePath(pf, vf, name), on ? "1\n" : "0\n", 0644);
  }

  Status SetLinkState(const std::string& pf, const std::string& pf_netdev, int vf,
                      int state) override {
    (void)pf_netdev;
    const std::string name = VfLinkStateName(state);
    if (name.empty()) return InvalidArgumentError("not a VF link state: " + std::to_string(state));
    RETURN_IF_ERROR(NeedsLegacyEswitch(pf, vf, "state " + name));
    return fs_.WriteFileAtomic(VfStateCapturePath(pf, vf, "link_state"), name + "\n", 0644);
  }

  Status SetRate(const std::string& pf, const std::string& pf_netdev, int vf, uint32_t min,
                 uint32_t max) override {
    (void)pf_netdev;
    return fs_.WriteFileAtomic(VfStateCapturePath(pf, vf, "rate"),
                               std::to_string(min) + " " + std::to_string(max) + "\n", 0644);
  }

  Status SetVlan(const std::string& pf, const std::string& pf_netdev, int vf, uint32_t id,
                 uint32_t qos, uint16_t proto) override {
    (void)pf_netdev;
    const std::string what = "vlan " + std::to_string(id) + " qos " + std::to_string(qos) +
                             " proto " + VfVlanProtoName(proto);
    // mlx5e_set_vf_vlan: anything but 802.1Q is EPROTONOSUPPORT, before the
    // E-Switch is asked; in switchdev VLAN 0 is accepted and ignored.
    if (IsMlx5(pf) && VfVlanProtoName(proto) != "802.1Q") {
      return ErrnoToStatus(EPROTONOSUPPORT, "ip link set <pf> vf " + std::to_string(vf) + " " +
                                                what + " (mlx5_core: 802.1Q only)");
    }
    if (id == 0 && IsMlx5(pf) && Switchdev(pf)) return OkStatus();
    RETURN_IF_ERROR(NeedsLegacyEswitch(pf, vf, what));
    return fs_.WriteFileAtomic(VfStateCapturePath(pf, vf, "vlan"), VlanText(id, qos, proto), 0644);
  }

  Status SetMac(const std::string& pf, const std::string& pf_netdev, int vf,
                const std::string& mac) override {
    (void)pf_netdev;
    const std::optional<std::array<uint8_t, 6>> bytes = ParseMacAddress(mac);
    if (!bytes) return InvalidArgumentError("not a MAC address: " + Quote(mac));
    // mlx5_eswitch_set_vport_mac: zero or unicast, a multicast MAC is EINVAL.
    if ((*bytes)[0] & 0x01) {
      return ErrnoToStatus(EINVAL, "VF " + std::to_string(vf) + " mac " + mac + ": multicast");
    }
    return fs_.WriteFileAtomic(VfStateCapturePath(pf, vf, "mac"),
                               FormatMacAddress(bytes->data()) + "\n", 0644);
  }

  StatusOr<bool> SetGuids(const std::string&, const std::string&, int, uint64_t) override {
    return false;  // the MLNX_OFED files, as the caller writes them
  }

 private:
  // What mlx5 refuses (issue 35.3), as the kernel answers it: the PF's
  // driver from its sysfs `driver` link, its E-Switch mode from the eswitch
  // module's devlink capture (/run/provisioner/devlink/<PF>, {"mode": ...}).
  bool IsMlx5(const std::string& pf) const {
    return LinkBasenameIfPresent(fs_, "/sys/bus/pci/devices/" + pf + "/driver") == "mlx5_core";
  }
  bool Switchdev(const std::string& pf) const {
    auto text = fs_.ReadFile("/run/provisioner/devlink/" + pf);
    if (!text.ok()) return false;
    const nlohmann::json j = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
    return j.is_object() && j.value("mode", "") == "switchdev";
  }
  // esw/legacy.c mlx5_eswitch_set_vport_{vlan,state,spoofchk}: EOPNOTSUPP
  // unless the E-Switch is in legacy mode.
  Status NeedsLegacyEswitch(const std::string& pf, int vf, const std::string& what) const {
    if (!IsMlx5(pf) || !Switchdev(pf)) return OkStatus();
    return ErrnoToStatus(EOPNOTSUPP, "ip link set <pf> vf " + std::to_string(vf) + " " + what +
                                         " (mlx5_core E-Switch of " + pf +
                                         " in switchdev mode: legacy only)");
  }

  std::optional<bool> Flag(const std::string& pf, int vf, const std::string& name) const {
    auto v = fs_.ReadAttr(VfStateCapturePath(pf, vf, name));
    if (!v.ok()) return std::nullopt;
    if (*v == "1") return true;
    if (*v == "0") return false;
    return std::nullopt;
  }

  HostFs& fs_;
};

}  // namespace

std::string VfStateCapturePath(const std::string& pf, int vf, const std::string& name) {
  return kVfStateCapturePrefix + pf + "/" + std::to_string(vf) + "/" + name;
}

std::unique_ptr<VfSettingsBackend> NewNetlinkVfSettings(VfNetlink* nl, const HostFs& notes) {
  return std::make_unique<NetlinkVfSettings>(nl, notes);
}

std::unique_ptr<VfSettingsBackend> NewTreeVfSettings(HostFs& fs) {
  return std::make_unique<TreeVfSettings>(fs);
}

}  // namespace provisioner
