// devlink over generic netlink (devlink_netlink.h) and the live
// DevlinkBackend; hw-tc-offload over ethtool netlink.
//
// Kernel side, checked against Linux 6.1 (net/core/devlink.c) and 6.18
// (net/devlink/{netlink.c,dev.c,param.c}, include/uapi/linux/devlink.h):
// every command names its device by DEVLINK_ATTR_BUS_NAME "pci" and
// DEVLINK_ATTR_DEV_NAME "<bdf>"; without them EINVAL, no such device ENODEV
// (devlink_get_from_attrs). ESWITCH_GET/SET and PARAM_SET need
// CAP_NET_ADMIN (GENL_ADMIN_PERM: EPERM). ESWITCH_GET answers
// DEVLINK_ATTR_ESWITCH_MODE u16 when the driver has eswitch_mode_get, else
// EOPNOTSUPP. ESWITCH_SET of DEVLINK_ATTR_ESWITCH_MODE calls the driver's
// eswitch_mode_set: mlx5 (eswitch_offloads.c mlx5_devlink_eswitch_mode_set)
// EINVAL for a mode it does not know, EPERM when the uplink netdev left the
// devlink's network namespace, EBUSY while a firmware reset runs or the
// E-Switch is in use ("Can't change mode, E-Switch is busy": TC rules, a
// LAG change); ice (ice_eswitch.c ice_eswitch_mode_set) EOPNOTSUPP while
// the PF has VFs ("Changing eswitch mode is allowed only if there is no VFs
// created"). PARAM_GET of an unknown name: EINVAL; PARAM_SET takes
// DEVLINK_ATTR_PARAM_NAME, _TYPE (NLA_STRING), _VALUE_CMODE (runtime) and
// _VALUE_DATA; mlx5's flow_steering_mode refuses a change in switchdev
// (mlx5_devlink_fs_mode_validate: EOPNOTSUPP), so smfs goes first.
//
// hw-tc-offload: ethtool netlink ETHTOOL_MSG_FEATURES_SET with the feature
// by name in ETHTOOL_A_FEATURES_WANTED (a bitset list without NOMASK changes
// only the bits it names), not the SIOCETHTOOL ioctl, which would need the
// feature's bit index from ETHTOOL_GSSET_INFO / ETHTOOL_GSTRINGS first.
#include "modules/eswitch/devlink_netlink.h"

#include <linux/devlink.h>
#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>
#include <netlink/attr.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>

#include <cerrno>
#include <optional>

#include "engine/model/pci_address.h"
#include "engine/netlink/netlink_socket.h"
#include "modules/eswitch/eswitch_backend.h"

namespace provisioner {
namespace devlink {
namespace {

constexpr char kLabel[] = "devlink";

NlMsg NewCmd(uint16_t family, uint8_t cmd, const std::string& bdf, int flags) {
  NlMsg m(nlmsg_alloc());
  if (!m) return m;
  if (genlmsg_put(m.get(), NL_AUTO_PORT, NL_AUTO_SEQ, family, 0, NLM_F_REQUEST | flags, cmd,
                  DEVLINK_GENL_VERSION) == nullptr ||
      nla_put_string(m.get(), DEVLINK_ATTR_BUS_NAME, "pci") < 0 ||
      nla_put_string(m.get(), DEVLINK_ATTR_DEV_NAME, bdf.c_str()) < 0) {
    m.reset();
  }
  return m;
}

NlMsg NewEswitch(uint16_t family, const std::string& bdf, std::optional<uint16_t> set) {
  NlMsg m = NewCmd(family, set ? DEVLINK_CMD_ESWITCH_SET : DEVLINK_CMD_ESWITCH_GET, bdf, NLM_F_ACK);
  if (m && set && nla_put_u16(m.get(), DEVLINK_ATTR_ESWITCH_MODE, *set) < 0) m.reset();
  return m;
}

NlMsg NewParam(uint16_t family, const std::string& bdf, const std::string& name,
               const std::string* value) {
  NlMsg m = NewCmd(family, value ? DEVLINK_CMD_PARAM_SET : DEVLINK_CMD_PARAM_GET, bdf, NLM_F_ACK);
  if (!m) return m;
  if (nla_put_string(m.get(), DEVLINK_ATTR_PARAM_NAME, name.c_str()) < 0) {
    m.reset();
    return m;
  }
  if (value != nullptr &&
      (nla_put_u8(m.get(), DEVLINK_ATTR_PARAM_TYPE, kParamTypeString) < 0 ||
       nla_put_u8(m.get(), DEVLINK_ATTR_PARAM_VALUE_CMODE, DEVLINK_PARAM_CMODE_RUNTIME) < 0 ||
       nla_put_string(m.get(), DEVLINK_ATTR_PARAM_VALUE_DATA, value->c_str()) < 0)) {
    m.reset();
  }
  return m;
}

Status ParseGenl(const nlmsghdr* h, nlattr** tb, int max, const char* what) {
  auto* hh = const_cast<nlmsghdr*>(h);
  if (nlmsg_datalen(hh) < static_cast<int>(GENL_HDRLEN)) {
    return InvalidArgumentError(std::string("devlink: truncated ") + what);
  }
  if (int r = nlmsg_parse(hh, GENL_HDRLEN, tb, max, nullptr); r < 0) {
    return InvalidArgumentError(std::string("devlink: bad attributes in ") + what + ": " +
                                nl_geterror(r));
  }
  return OkStatus();
}

uint8_t GenlCmd(const nlmsghdr* h) {
  return static_cast<const genlmsghdr*>(nlmsg_data(const_cast<nlmsghdr*>(h)))->cmd;
}

StatusOr<std::string> ParseEswitch(const nlmsghdr* h) {
  RETURN_IF_ERROR(NetlinkErrorOf(const_cast<nlmsghdr*>(h), kLabel, "devlink ESWITCH_GET"));
  nlattr* tb[DEVLINK_ATTR_MAX + 1] = {};
  RETURN_IF_ERROR(ParseGenl(h, tb, DEVLINK_ATTR_MAX, "ESWITCH_GET reply"));
  if (GenlCmd(h) != DEVLINK_CMD_ESWITCH_GET) {
    return InvalidArgumentError("devlink: reply command " + std::to_string(GenlCmd(h)) +
                                ", expected DEVLINK_CMD_ESWITCH_GET");
  }
  nlattr* a = tb[DEVLINK_ATTR_ESWITCH_MODE];
  if (a == nullptr || nla_len(a) < 2) {
    return InvalidArgumentError("devlink: ESWITCH_GET reply without DEVLINK_ATTR_ESWITCH_MODE");
  }
  const uint16_t mode = nla_get_u16(a);
  auto name = ModeName(mode);
  if (!name) return InvalidArgumentError("devlink: unknown E-Switch mode " + std::to_string(mode));
  return *name;
}

StatusOr<std::string> ParseParam(const nlmsghdr* h) {
  RETURN_IF_ERROR(NetlinkErrorOf(const_cast<nlmsghdr*>(h), kLabel, "devlink PARAM_GET"));
  nlattr* tb[DEVLINK_ATTR_MAX + 1] = {};
  RETURN_IF_ERROR(ParseGenl(h, tb, DEVLINK_ATTR_MAX, "PARAM_GET reply"));
  nlattr* param[DEVLINK_ATTR_MAX + 1] = {};
  if (tb[DEVLINK_ATTR_PARAM] == nullptr ||
      nla_parse_nested(param, DEVLINK_ATTR_MAX, tb[DEVLINK_ATTR_PARAM], nullptr) < 0 ||
      param[DEVLINK_ATTR_PARAM_VALUES_LIST] == nullptr) {
    return InvalidArgumentError("devlink: PARAM_GET reply without DEVLINK_ATTR_PARAM values");
  }
  nlattr* v = nullptr;
  int rem = 0;
  nla_for_each_nested(v, param[DEVLINK_ATTR_PARAM_VALUES_LIST], rem) {
    if (nla_type(v) != DEVLINK_ATTR_PARAM_VALUE) continue;
    nlattr* val[DEVLINK_ATTR_MAX + 1] = {};
    if (nla_parse_nested(val, DEVLINK_ATTR_MAX, v, nullptr) < 0) continue;
    nlattr* cmode = val[DEVLINK_ATTR_PARAM_VALUE_CMODE];
    nlattr* data = val[DEVLINK_ATTR_PARAM_VALUE_DATA];
    if (cmode == nullptr || data == nullptr || nla_len(cmode) < 1 ||
        nla_get_u8(cmode) != DEVLINK_PARAM_CMODE_RUNTIME) {
      continue;
    }
    const char* s = static_cast<const char*>(nla_data(data));
    return std::string(s, strnlen(s, static_cast<size_t>(nla_len(data))));
  }
  return InvalidArgumentError("devlink: PARAM_GET reply without a runtime value");
}

}  // namespace

std::optional<std::string> ModeName(uint16_t mode) {
  if (mode == DEVLINK_ESWITCH_MODE_LEGACY) return std::string(kEswitchLegacy);
  if (mode == DEVLINK_ESWITCH_MODE_SWITCHDEV) return std::string(kEswitchSwitchdev);
  return std::nullopt;
}

std::optional<uint16_t> ModeValue(const std::string& name) {
  if (name == kEswitchLegacy) return DEVLINK_ESWITCH_MODE_LEGACY;
  if (name == kEswitchSwitchdev) return DEVLINK_ESWITCH_MODE_SWITCHDEV;
  return std::nullopt;
}

std::vector<uint8_t> BuildEswitchGet(uint16_t family, uint32_t seq, const std::string& bdf) {
  NlMsg m = NewEswitch(family, bdf, std::nullopt);
  return NetlinkMessageBytes(m.get(), seq);
}

std::vector<uint8_t> BuildEswitchSet(uint16_t family, uint32_t seq, const std::string& bdf,
                                     uint16_t mode) {
  NlMsg m = NewEswitch(family, bdf, mode);
  return NetlinkMessageBytes(m.get(), seq);
}

std::vector<uint8_t> BuildParamGet(uint16_t family, uint32_t seq, const std::string& bdf,
                                   const std::string& name) {
  NlMsg m = NewParam(family, bdf, name, nullptr);
  return NetlinkMessageBytes(m.get(), seq);
}

std::vector<uint8_t> BuildParamSet(uint16_t family, uint32_t seq, const std::string& bdf,
                                   const std::string& name, const std::string& value) {
  NlMsg m = NewParam(family, bdf, name, &value);
  return NetlinkMessageBytes(m.get(), seq);
}

StatusOr<std::string> ParseEswitchGetReply(const std::vector<uint8_t>& msg) {
  ASSIGN_OR_RETURN(nlmsghdr * h, NetlinkHeader(msg, kLabel));
  return ParseEswitch(h);
}

StatusOr<std::string> ParseParamGetReply(const std::vector<uint8_t>& msg) {
  ASSIGN_OR_RETURN(nlmsghdr * h, NetlinkHeader(msg, kLabel));
  return ParseParam(h);
}

namespace {

class NetlinkDevlink final : public DevlinkBackend {
 public:
  explicit NetlinkDevlink(const HostFs* notes) : notes_(notes) {}
  std::string Name() const override { return "devlink"; }

  StatusOr<DevlinkState> Read(const std::string& bdf) override {
    if (!PciAddress::ParseFull(bdf)) return InvalidArgumentError("bad PCI address " + bdf);
    ASSIGN_OR_RETURN(uint16_t family, Family(DEVLINK_GENL_NAME, &devlink_family_));
    NlMsg m = NewEswitch(family, bdf, std::nullopt);
    std::optional<StatusOr<std::string>> mode;
    RETURN_IF_ERROR(Transact(m.get(), bdf, "DEVLINK_CMD_ESWITCH_GET",
                             [&](const nlmsghdr* h) { mode = ParseEswitch(h); }));
    if (!mode) return UnavailableError("devlink ESWITCH_GET pci/" + bdf + ": no reply");
    if (!mode->ok()) return mode->status().WithContext("pci/" + bdf);
    DevlinkState s;
    s.mode = **mode;
    // flow_steering_mode: mlx5 only; any other device answers EINVAL.
    NlMsg p = NewParam(family, bdf, kFlowSteeringParam, nullptr);
    std::optional<StatusOr<std::string>> value;
    Status ps = Transact(p.get(), bdf, "DEVLINK_CMD_PARAM_GET flow_steering_mode",
                         [&](const nlmsghdr* h) { value = ParseParam(h); });
    if (ps.ok() && value && value->ok()) s.flow_steering_mode = **value;
    if (notes_ != nullptr) notes_->NoteCapture(DevlinkCapturePath(bdf), RenderDevlinkCapture(s));
    return s;
  }

  Status SetMode(const std::string& bdf, const std::string& mode) override {
    if (!PciAddress::ParseFull(bdf)) return InvalidArgumentError("bad PCI address " + bdf);
    auto value = ModeValue(mode);
    if (!value)
      return InvalidArgumentError("E-Switch mode must be legacy or switchdev, not " + mode);
    ASSIGN_OR_RETURN(uint16_t family, Family(DEVLINK_GENL_NAME, &devlink_family_));
    NlMsg m = NewEswitch(family, bdf, *value);
    return Transact(m.get(), bdf, "DEVLINK_CMD_ESWITCH_SET mode " + mode, nullptr);
  }

  Status SetParam(const std::string& bdf, const std::string& name,
                  const std::string& value) override {
    if (!PciAddress::ParseFull(bdf)) return InvalidArgumentError("bad PCI address " + bdf);
    ASSIGN_OR_RETURN(uint16_t family, Family(DEVLINK_GENL_NAME, &devlink_family_));
    NlMsg m = NewParam(family, bdf, name, &value);
    return Transact(m.get(), bdf, "DEVLINK_CMD_PARAM_SET " + name + " " + value, nullptr);
  }

  Status SetHwTcOffload(const std::string& bdf, const std::string& ifname) override {
    ASSIGN_OR_RETURN(uint16_t family, Family(ETHTOOL_GENL_NAME, &ethtool_family_));
    NlMsg m(nlmsg_alloc());
    bool ok =
        m && genlmsg_put(m.get(), NL_AUTO_PORT, NL_AUTO_SEQ, family, 0, NLM_F_REQUEST | NLM_F_ACK,
                         ETHTOOL_MSG_FEATURES_SET, ETHTOOL_GENL_VERSION) != nullptr;
    if (ok) {
      nlattr* hdr = nla_nest_start(m.get(), ETHTOOL_A_FEATURES_HEADER);
      ok =
          hdr != nullptr && nla_put_string(m.get(), ETHTOOL_A_HEADER_DEV_NAME, ifname.c_str()) >= 0;
      if (ok) nla_nest_end(m.get(), hdr);
    }
    if (ok) {
      nlattr* wanted = nla_nest_start(m.get(), ETHTOOL_A_FEATURES_WANTED);
      nlattr* bits = wanted ? nla_nest_start(m.get(), ETHTOOL_A_BITSET_BITS) : nullptr;
      nlattr* bit = bits ? nla_nest_start(m.get(), ETHTOOL_A_BITSET_BITS_BIT) : nullptr;
      ok = bit != nullptr &&
           nla_put_string(m.get(), ETHTOOL_A_BITSET_BIT_NAME, "hw-tc-offload") >= 0 &&
           nla_put_flag(m.get(), ETHTOOL_A_BITSET_BIT_VALUE) >= 0;
      if (ok) {
        nla_nest_end(m.get(), bit);
        nla_nest_end(m.get(), bits);
        nla_nest_end(m.get(), wanted);
      }
    }
    if (!ok) return InternalError("ethtool netlink FEATURES_SET " + ifname + ": cannot build");
    Status s = NetlinkTransact(NETLINK_GENERIC, "NETLINK_GENERIC", m.get(),
                               "ethtool netlink ETHTOOL_MSG_FEATURES_SET " + ifname +
                                   " hw-tc-offload on (PF of " + bdf + ")",
                               [](const nlmsghdr*) {});
    return s;
  }

 private:
  // The id of a generic netlink family (GenlFamilyId), once.
  StatusOr<uint16_t> Family(const char* name, uint16_t* cache) {
    if (*cache != 0) return *cache;
    auto id = GenlFamilyId(name);
    if (!id.ok()) {
      if (id.status().err() != ENOENT || std::string(name) != DEVLINK_GENL_NAME) {
        return id.status();
      }
      return Status(StatusCode::kFailedPrecondition,
                    id.status().message() + " (CONFIG_NET_DEVLINK)", ENOENT);
    }
    *cache = *id;
    return *cache;
  }

  Status Transact(nl_msg* msg, const std::string& bdf, const std::string& what,
                  const std::function<void(const nlmsghdr*)>& on_reply) {
    const std::string label = "devlink " + what + " pci/" + bdf;
    Status s = NetlinkTransact(
        NETLINK_GENERIC, "NETLINK_GENERIC", msg, label,
        on_reply ? on_reply : [](const nlmsghdr*) {});
    if (s.ok()) return s;
    if (s.err() == ENODEV) {
      return Status(StatusCode::kNotFound, s.message() + ": no such devlink device", ENODEV);
    }
    if (s.err() == EOPNOTSUPP) {
      return Status(StatusCode::kFailedPrecondition,
                    s.message() + ": the driver of " + bdf + " cannot do this (no E-Switch " +
                        "support, or ice with VFs present)",
                    EOPNOTSUPP);
    }
    if (s.err() == EBUSY) {
      return Status(StatusCode::kUnavailable,
                    s.message() + ": the E-Switch is busy (TC rules offloaded, a LAG change or " +
                        "a firmware reset in progress)",
                    EBUSY);
    }
    return s;
  }

  const HostFs* notes_;
  uint16_t devlink_family_ = 0;
  uint16_t ethtool_family_ = 0;
};

}  // namespace
}  // namespace devlink

std::unique_ptr<DevlinkBackend> NewNetlinkDevlinkBackend(const HostFs* notes) {
  return std::make_unique<devlink::NetlinkDevlink>(notes);
}

}  // namespace provisioner
