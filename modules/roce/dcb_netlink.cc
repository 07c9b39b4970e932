// dcbnl over libnl (dcb_netlink.h) and the live DcbBackend.
#include "modules/roce/dcb_netlink.h"

#include <linux/dcbnl.h>
#include <linux/rtnetlink.h>
#include <netlink/attr.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <optional>
#include <utility>

#include "engine/netlink/netlink_socket.h"
#include "modules/link/link_backend.h"

namespace provisioner::dcb {
namespace {

const char* CmdName(uint8_t cmd) {
  switch (cmd) {
    case DCB_CMD_IEEE_GET:
      return "DCB_CMD_IEEE_GET";
    case DCB_CMD_IEEE_SET:
      return "DCB_CMD_IEEE_SET";
    case DCB_CMD_IEEE_DEL:
      return "DCB_CMD_IEEE_DEL";
    case DCB_CMD_GDCBX:
      return "DCB_CMD_GDCBX";
    case DCB_CMD_SDCBX:
      return "DCB_CMD_SDCBX";
    default:
      return "DCB_CMD_?";
  }
}

// nlmsghdr + dcbmsg + DCB_ATTR_IFNAME; null when it cannot be built.
NlMsg NewRequest(int type, uint8_t cmd, const std::string& ifname, int flags) {
  NlMsg m(nlmsg_alloc_simple(type, NLM_F_REQUEST | flags));
  if (!m) return m;
  dcbmsg d{};
  d.dcb_family = AF_UNSPEC;
  d.cmd = cmd;
  if (nlmsg_append(m.get(), &d, sizeof d, NLMSG_ALIGNTO) < 0 ||
      nla_put_string(m.get(), DCB_ATTR_IFNAME, ifname.c_str()) < 0) {
    m.reset();
  }
  return m;
}

NlMsg NewPfcSet(const std::string& ifname, const std::vector<uint8_t>& pfc, unsigned pfc_en,
                std::optional<uint16_t> delay = std::nullopt) {
  NlMsg m = NewRequest(RTM_SETDCB, DCB_CMD_IEEE_SET, ifname, NLM_F_ACK);
  if (!m) return m;
  ieee_pfc p{};
  // The fields the read gave (delay, counters), when there was one; an empty
  // vector has no data() to copy from.
  if (!pfc.empty()) std::memcpy(&p, pfc.data(), std::min(pfc.size(), sizeof p));
  p.pfc_en = static_cast<uint8_t>(pfc_en);
  if (delay) p.delay = *delay;
  nlattr* ieee = nla_nest_start(m.get(), DCB_ATTR_IEEE);
  if (ieee == nullptr || nla_put(m.get(), DCB_ATTR_IEEE_PFC, sizeof p, &p) < 0) {
    m.reset();
    return m;
  }
  nla_nest_end(m.get(), ieee);
  return m;
}

// DCB_CMD_IEEE_SET, DCB_ATTR_IEEE { DCB_ATTR_DCB_BUFFER (struct dcbnl_buffer) }.
NlMsg NewBufferSet(const std::string& ifname, const DcbBuffer& b) {
  NlMsg m = NewRequest(RTM_SETDCB, DCB_CMD_IEEE_SET, ifname, NLM_F_ACK);
  if (!m) return m;
  dcbnl_buffer buf{};
  for (size_t i = 0; i < IEEE_8021Q_MAX_PRIORITIES && i < b.prio2buffer.size(); ++i) {
    buf.prio2buffer[i] = static_cast<uint8_t>(b.prio2buffer[i]);
  }
  for (size_t i = 0; i < DCBX_MAX_BUFFERS && i < b.sizes.size(); ++i) {
    buf.buffer_size[i] = static_cast<uint32_t>(b.sizes[i]);
  }
  buf.total_size = static_cast<uint32_t>(b.total);
  nlattr* ieee = nla_nest_start(m.get(), DCB_ATTR_IEEE);
  if (ieee == nullptr || nla_put(m.get(), DCB_ATTR_DCB_BUFFER, sizeof buf, &buf) < 0) {
    m.reset();
    return m;
  }
  nla_nest_end(m.get(), ieee);
  return m;
}

NlMsg NewApp(const std::string& ifname, bool add, const std::vector<AppEntry>& apps) {
  NlMsg m = NewRequest(RTM_SETDCB, add ? DCB_CMD_IEEE_SET : DCB_CMD_IEEE_DEL, ifname, NLM_F_ACK);
  if (!m) return m;
  nlattr* ieee = nla_nest_start(m.get(), DCB_ATTR_IEEE);
  nlattr* table = ieee == nullptr ? nullptr : nla_nest_start(m.get(), DCB_ATTR_IEEE_APP_TABLE);
  if (table == nullptr) {
    m.reset();
    return m;
  }
  for (const AppEntry& a : apps) {
    dcb_app app{};
    app.selector = a.selector;
    app.priority = a.priority;
    app.protocol = a.protocol;
    if (nla_put(m.get(), DCB_ATTR_IEEE_APP, sizeof app, &app) < 0) {
      m.reset();
      return m;
    }
  }
  nla_nest_end(m.get(), table);
  nla_nest_end(m.get(), ieee);
  return m;
}

NlMsg NewDcbx(const std::string& ifname, std::optional<uint8_t> set) {
  NlMsg m = set ? NewRequest(RTM_SETDCB, DCB_CMD_SDCBX, ifname, NLM_F_ACK)
                : NewRequest(RTM_GETDCB, DCB_CMD_GDCBX, ifname, 0);
  if (m && set && nla_put_u8(m.get(), DCB_ATTR_DCBX, *set) < 0) m.reset();
  return m;
}

StatusOr<nlmsghdr*> Header(const std::vector<uint8_t>& msg) { return NetlinkHeader(msg, "dcbnl"); }

// OK, or the errno of an NLMSG_ERROR.
Status ErrorOf(nlmsghdr* h, const std::string& what) {
  return NetlinkErrorOf(h, "dcbnl", "dcbnl " + what);
}

StatusOr<IeeeState> ParseGet(nlmsghdr* h) {
  RETURN_IF_ERROR(ErrorOf(h, "DCB_CMD_IEEE_GET"));
  if (h->nlmsg_type != RTM_GETDCB) {
    return InvalidArgumentError("dcbnl: reply of type " + std::to_string(h->nlmsg_type) +
                                ", expected RTM_GETDCB");
  }
  nlattr* tb[DCB_ATTR_MAX + 1] = {};
  if (int r = nlmsg_parse(h, sizeof(dcbmsg), tb, DCB_ATTR_MAX, nullptr); r < 0) {
    return InvalidArgumentError(std::string("dcbnl: bad attributes: ") + nl_geterror(r));
  }
  IeeeState s;
  if (tb[DCB_ATTR_IEEE] == nullptr) return s;  // a driver with no IEEE DCB
  nlattr* ieee[DCB_ATTR_IEEE_MAX + 1] = {};
  if (int r = nla_parse_nested(ieee, DCB_ATTR_IEEE_MAX, tb[DCB_ATTR_IEEE], nullptr); r < 0) {
    return InvalidArgumentError(std::string("dcbnl: bad DCB_ATTR_IEEE: ") + nl_geterror(r));
  }
  if (nlattr* pfc = ieee[DCB_ATTR_IEEE_PFC]; pfc != nullptr) {
    if (nla_len(pfc) < 2) return InvalidArgumentError("dcbnl: short DCB_ATTR_IEEE_PFC");
    const auto* p = static_cast<const uint8_t*>(nla_data(pfc));
    s.pfc = std::vector<uint8_t>(p, p + nla_len(pfc));
  }
  // dcbnl_ieee_fill puts it in DCB_ATTR_IEEE when the driver has
  // dcbnl_getbuffer and it answered 0.
  if (nlattr* buf = ieee[DCB_ATTR_DCB_BUFFER]; buf != nullptr) {
    if (nla_len(buf) < static_cast<int>(sizeof(dcbnl_buffer))) {
      return InvalidArgumentError("dcbnl: short DCB_ATTR_DCB_BUFFER");
    }
    dcbnl_buffer b{};
    std::memcpy(&b, nla_data(buf), sizeof b);
    DcbBuffer out;
    for (size_t i = 0; i < 8; ++i) {
      out.prio2buffer[i] = b.prio2buffer[i];
      out.sizes[i] = b.buffer_size[i];
    }
    out.total = b.total_size;
    s.buffer = out;
  }
  if (nlattr* table = ieee[DCB_ATTR_IEEE_APP_TABLE]; table != nullptr) {
    nlattr* a = nullptr;
    int rem = 0;
    nla_for_each_nested(a, table, rem) {
      if (nla_type(a) != DCB_ATTR_IEEE_APP) continue;
      if (nla_len(a) < static_cast<int>(sizeof(dcb_app))) {
        return InvalidArgumentError("dcbnl: short DCB_ATTR_IEEE_APP");
      }
      dcb_app app{};
      std::memcpy(&app, nla_data(a), sizeof app);
      s.apps.push_back({app.selector, app.priority, app.protocol});
    }
  }
  return s;
}

// The dcbmsg command and DCB_ATTR_DCBX of a GDCBX/SDCBX reply.
StatusOr<std::pair<uint8_t, uint8_t>> DcbxAttr(nlmsghdr* h, int want_type, const char* what) {
  RETURN_IF_ERROR(ErrorOf(h, what));
  if (h->nlmsg_type != want_type) {
    return InvalidArgumentError("dcbnl: reply of type " + std::to_string(h->nlmsg_type) + " to " +
                                what);
  }
  if (nlmsg_datalen(h) < static_cast<int>(sizeof(dcbmsg))) {
    return InvalidArgumentError(std::string("dcbnl: truncated reply to ") + what);
  }
  const uint8_t cmd = static_cast<dcbmsg*>(nlmsg_data(h))->cmd;
  nlattr* tb[DCB_ATTR_MAX + 1] = {};
  if (int r = nlmsg_parse(h, sizeof(dcbmsg), tb, DCB_ATTR_MAX, nullptr); r < 0) {
    return InvalidArgumentError(std::string("dcbnl: bad attributes: ") + nl_geterror(r));
  }
  if (tb[DCB_ATTR_DCBX] == nullptr || nla_len(tb[DCB_ATTR_DCBX]) < 1) {
    return InvalidArgumentError(std::string("dcbnl: reply to ") + what + " without DCB_ATTR_DCBX");
  }
  return std::make_pair(cmd, nla_get_u8(tb[DCB_ATTR_DCBX]));
}

StatusOr<uint8_t> ParseGetDcbx(nlmsghdr* h) {
  ASSIGN_OR_RETURN(auto v, DcbxAttr(h, RTM_GETDCB, "DCB_CMD_GDCBX"));
  return v.second;
}

Status ParseSetDcbx(nlmsghdr* h) {
  ASSIGN_OR_RETURN(auto v, DcbxAttr(h, RTM_SETDCB, "DCB_CMD_SDCBX"));
  if (v.second == 0) return OkStatus();
  // setdcbx returns a u8, not an errno: 1 is "refused" (mlx5e_dcbnl_setdcbx).
  return Status(StatusCode::kFailedPrecondition,
                "dcbnl DCB_CMD_SDCBX: the driver refused the DCBX mode (it answered " +
                    std::to_string(v.second) + ")",
                EINVAL);
}

Status ParseSet(nlmsghdr* h) {
  RETURN_IF_ERROR(ErrorOf(h, "DCB_CMD_IEEE_SET"));
  if (h->nlmsg_type != RTM_SETDCB) {
    return InvalidArgumentError("dcbnl: reply of type " + std::to_string(h->nlmsg_type) +
                                ", expected RTM_SETDCB");
  }
  if (nlmsg_datalen(h) < static_cast<int>(sizeof(dcbmsg))) {
    return InvalidArgumentError("dcbnl: truncated RTM_SETDCB reply");
  }
  const uint8_t cmd = static_cast<dcbmsg*>(nlmsg_data(h))->cmd;
  nlattr* tb[DCB_ATTR_MAX + 1] = {};
  if (int r = nlmsg_parse(h, sizeof(dcbmsg), tb, DCB_ATTR_MAX, nullptr); r < 0) {
    return InvalidArgumentError(std::string("dcbnl: bad attributes: ") + nl_geterror(r));
  }
  if (tb[DCB_ATTR_IEEE] == nullptr || nla_len(tb[DCB_ATTR_IEEE]) < 1) {
    return InvalidArgumentError("dcbnl: RTM_SETDCB reply without its DCB_ATTR_IEEE result");
  }
  // The driver's return value, a negative errno kept in a u8 (an errno
  // above 255, the kernel-internal ENOTSUPP 524, cannot be told apart).
  const uint8_t v = nla_get_u8(tb[DCB_ATTR_IEEE]);
  if (v == 0) return OkStatus();
  return ErrnoToStatus(256 - v, std::string("dcbnl ") + CmdName(cmd) + ": the driver refused");
}

// One request and its replies.
struct Exchange {
  std::optional<StatusOr<IeeeState>> got;
  std::optional<Status> set;
  std::optional<StatusOr<uint8_t>> dcbx;
};

void OnReply(Exchange* ex, nlmsghdr* h) {
  uint8_t cmd = 0;
  if (nlmsg_datalen(h) >= static_cast<int>(sizeof(dcbmsg))) {
    cmd = static_cast<dcbmsg*>(nlmsg_data(h))->cmd;
  }
  if (h->nlmsg_type == RTM_GETDCB && cmd == DCB_CMD_GDCBX) {
    ex->dcbx = ParseGetDcbx(h);
  } else if (h->nlmsg_type == RTM_SETDCB && cmd == DCB_CMD_SDCBX) {
    ex->set = ParseSetDcbx(h);
  } else if (h->nlmsg_type == RTM_GETDCB) {
    ex->got = ParseGet(h);
  } else if (h->nlmsg_type == RTM_SETDCB) {
    ex->set = ParseSet(h);
  }
}

class NetlinkDcb final : public DcbBackend {
 public:
  explicit NetlinkDcb(const HostFs* notes) : notes_(notes) {}
  std::string Name() const override { return "dcbnl"; }

  StatusOr<DcbState> Read(const std::string& ifname) override {
    ASSIGN_OR_RETURN(IeeeState s, Get(ifname));
    DcbState state = s.ToState();
    // A driver without getdcbx answers EOPNOTSUPP: DCBX unknown, not an error.
    auto dcbx = GetDcbx(ifname);
    if (dcbx.ok()) {
      state.dcbx = DcbxModeName(*dcbx);
    } else if (dcbx.status().err() != EOPNOTSUPP) {
      return dcbx.status();
    }
    // What the tree backend reads under a snapshot of this host.
    if (notes_ != nullptr) notes_->NoteCapture(DcbCapturePath(ifname), RenderDcbCapture(state));
    return state;
  }

  Status SetTrust(const std::string& ifname, const std::string& trust) override {
    if (trust != kTrustDscp && trust != kTrustPcp) {
      return InvalidArgumentError("trust must be dscp or pcp, not " + trust);
    }
    ASSIGN_OR_RETURN(IeeeState s, Get(ifname));
    if (trust == kTrustDscp) {
      NlMsg m = NewApp(ifname, true, DefaultDscpMap());
      return Run(m.get(), ifname, "DCB_CMD_IEEE_SET APP (64 DSCP entries: trust dscp)", nullptr);
    }
    std::vector<AppEntry> dscp;
    for (const AppEntry& a : s.apps) {
      if (a.selector == kSelectorDscp) dscp.push_back(a);
    }
    if (dscp.empty()) return OkStatus();
    NlMsg m = NewApp(ifname, false, dscp);
    return Run(m.get(), ifname, "DCB_CMD_IEEE_DEL APP (the DSCP entries: trust pcp)", nullptr);
  }

  Status SetPfc(const std::string& ifname, const std::vector<int>& priorities) override {
    ASSIGN_OR_RETURN(IeeeState s, Get(ifname));
    NlMsg m =
        NewPfcSet(ifname, s.pfc.value_or(std::vector<uint8_t>()), BitmapOfPriorities(priorities));
    return Run(m.get(), ifname, "DCB_CMD_IEEE_SET PFC", nullptr);
  }

  // The PFC struct as read, pfc_en unchanged, delay replaced (what `dcb pfc
  // set delay` sends).
  Status SetCableLength(const std::string& ifname, int meters) override {
    if (meters < 1 || meters > 0xffff) {
      return InvalidArgumentError("cable length must be 1..65535 m, not " + std::to_string(meters));
    }
    ASSIGN_OR_RETURN(IeeeState s, Get(ifname));
    if (!s.pfc) {
      return Status(
          StatusCode::kFailedPrecondition,
          "dcbnl DCB_CMD_IEEE_GET " + ifname +
              ": no DCB_ATTR_IEEE_PFC, so the cable length (ieee_pfc.delay) cannot be set",
          EOPNOTSUPP);
    }
    NlMsg m = NewPfcSet(ifname, *s.pfc, s.PfcEnabled(), static_cast<uint16_t>(meters));
    return Run(m.get(), ifname, "DCB_CMD_IEEE_SET PFC delay", nullptr);
  }

  Status SetBuffer(const std::string& ifname, const DcbBuffer& buffer) override {
    if (!IsValidIfname(ifname)) return InvalidArgumentError("bad interface name " + ifname);
    NlMsg m = NewBufferSet(ifname, buffer);
    return Run(m.get(), ifname, "DCB_CMD_IEEE_SET DCB_ATTR_DCB_BUFFER", nullptr);
  }

  Status SetDscpMap(const std::string& ifname,
                    const std::map<int, std::optional<int>>& entries) override {
    ASSIGN_OR_RETURN(IeeeState s, Get(ifname));
    const DcbState now = s.ToState();
    std::vector<AppEntry> add, del;
    for (const auto& [d, p] : entries) {
      if (d < 0 || d > 63 || (p && (*p < 0 || *p > 7))) {
        return InvalidArgumentError("DSCP " + std::to_string(d) + " -> priority out of range");
      }
      auto it = now.dscp_map.find(d);
      if (p && (it == now.dscp_map.end() || it->second != *p)) {
        add.push_back({kSelectorDscp, static_cast<uint8_t>(*p), static_cast<uint16_t>(d)});
      } else if (!p && it != now.dscp_map.end()) {
        del.push_back({kSelectorDscp, static_cast<uint8_t>(it->second), static_cast<uint16_t>(d)});
      }
    }
    if (!add.empty()) {
      NlMsg m = NewApp(ifname, true, add);
      RETURN_IF_ERROR(Run(m.get(), ifname, "DCB_CMD_IEEE_SET APP (DSCP map)", nullptr));
    }
    if (!del.empty()) {
      NlMsg m = NewApp(ifname, false, del);
      RETURN_IF_ERROR(Run(m.get(), ifname, "DCB_CMD_IEEE_DEL APP (DSCP map)", nullptr));
    }
    return OkStatus();
  }

  Status SetDcbx(const std::string& ifname, const std::string& mode) override {
    if (mode != kDcbxHost && mode != kDcbxFirmware) {
      return InvalidArgumentError("dcbx must be host or firmware, not " + mode);
    }
    if (!IsValidIfname(ifname)) return InvalidArgumentError("bad interface name " + ifname);
    NlMsg m = NewDcbx(ifname, DcbxModeBits(mode));
    return Run(m.get(), ifname, "DCB_CMD_SDCBX", nullptr);
  }

 private:
  StatusOr<uint8_t> GetDcbx(const std::string& ifname) {
    NlMsg m = NewDcbx(ifname, std::nullopt);
    Exchange ex;
    RETURN_IF_ERROR(Run(m.get(), ifname, "DCB_CMD_GDCBX", &ex));
    if (!ex.dcbx) return UnavailableError("dcbnl DCB_CMD_GDCBX " + ifname + ": no reply");
    return *ex.dcbx;
  }

  StatusOr<IeeeState> Get(const std::string& ifname) {
    if (!IsValidIfname(ifname)) return InvalidArgumentError("bad interface name " + ifname);
    NlMsg m = NewRequest(RTM_GETDCB, DCB_CMD_IEEE_GET, ifname, 0);
    Exchange ex;
    RETURN_IF_ERROR(Run(m.get(), ifname, "DCB_CMD_IEEE_GET", &ex));
    if (!ex.got) return UnavailableError("dcbnl DCB_CMD_IEEE_GET " + ifname + ": no reply");
    return *ex.got;
  }

  // Sends `msg` (NetlinkTransact): a GET ends at its reply, a SET at its ACK.
  Status Run(nl_msg* msg, const std::string& ifname, const std::string& what, Exchange* out) {
    Exchange local;
    Exchange& ex = out != nullptr ? *out : local;
    const bool is_get = msg != nullptr && nlmsg_hdr(msg)->nlmsg_type == RTM_GETDCB;
    Status s = NetlinkTransact(
        NETLINK_ROUTE, "NETLINK_ROUTE", msg, "dcbnl " + what + " " + ifname,
        [&](const nlmsghdr* h) { OnReply(&ex, const_cast<nlmsghdr*>(h)); }, 16,
        [&] { return is_get && (ex.got || ex.dcbx); });
    if (!s.ok()) return s.err() != 0 ? Explain(s, ifname) : s;
    if (ex.set && !ex.set->ok()) return ex.set->WithContext(ifname);
    if (ex.dcbx && !ex.dcbx->ok()) return ex.dcbx->status().WithContext(ifname);
    return OkStatus();
  }

  static Status Explain(const Status& s, const std::string& ifname) {
    const int err = s.err();
    if (err == ENODEV) return Status(StatusCode::kNotFound, s.message() + ": no such netdev", err);
    if (err == EOPNOTSUPP) {
      return Status(StatusCode::kFailedPrecondition,
                    s.message() + ": the driver of " + ifname +
                        " has no DCB support (dcbnl_ops), so neither trust nor PFC can be set",
                    err);
    }
    return s;
  }

  const HostFs* notes_;
};

}  // namespace

unsigned IeeeState::PfcEnabled() const {
  if (!pfc || pfc->size() < 2) return 0;
  return (*pfc)[offsetof(ieee_pfc, pfc_en)];
}

DcbState IeeeState::ToState() const {
  DcbState s;
  s.trust = kTrustPcp;
  for (const AppEntry& a : apps) {
    if (a.selector != kSelectorDscp || a.protocol > 63) continue;
    s.trust = kTrustDscp;
    s.dscp_map[a.protocol] = a.priority & 7;  // a later entry wins, as in mlx5's dscp2prio
  }
  s.pfc = PrioritiesOfBitmap(PfcEnabled());
  if (pfc && pfc->size() >= sizeof(ieee_pfc)) {
    ieee_pfc p{};
    std::memcpy(&p, pfc->data(), sizeof p);
    if (p.delay != 0) s.cable_length = p.delay;
  }
  s.buffer = buffer;
  return s;
}

std::vector<AppEntry> DefaultDscpMap() {
  std::vector<AppEntry> out;
  for (uint16_t d = 0; d < 64; ++d) out.push_back({kSelectorDscp, static_cast<uint8_t>(d >> 3), d});
  return out;
}

std::vector<uint8_t> BuildIeeeGetRequest(uint32_t seq, const std::string& ifname) {
  NlMsg m = NewRequest(RTM_GETDCB, DCB_CMD_IEEE_GET, ifname, 0);
  return NetlinkMessageBytes(m.get(), seq);
}

std::vector<uint8_t> BuildPfcSetRequest(uint32_t seq, const std::string& ifname,
                                        const std::vector<uint8_t>& pfc, unsigned pfc_en) {
  NlMsg m = NewPfcSet(ifname, pfc, pfc_en);
  return NetlinkMessageBytes(m.get(), seq);
}

std::vector<uint8_t> BuildCableLengthRequest(uint32_t seq, const std::string& ifname,
                                             const std::vector<uint8_t>& pfc, uint16_t meters) {
  NlMsg m = NewPfcSet(ifname, pfc, IeeeState{pfc, {}, std::nullopt}.PfcEnabled(), meters);
  return NetlinkMessageBytes(m.get(), seq);
}

std::vector<uint8_t> BuildBufferSetRequest(uint32_t seq, const std::string& ifname,
                                           const DcbBuffer& buffer) {
  NlMsg m = NewBufferSet(ifname, buffer);
  return NetlinkMessageBytes(m.get(), seq);
}

std::vector<uint8_t> BuildAppRequest(uint32_t seq, const std::string& ifname, bool add,
                                     const std::vector<AppEntry>& apps) {
  NlMsg m = NewApp(ifname, add, apps);
  return NetlinkMessageBytes(m.get(), seq);
}

uint8_t DcbxModeBits(const std::string& mode) {
  if (mode == kDcbxHost) return DCB_CAP_DCBX_HOST | DCB_CAP_DCBX_VER_IEEE;
  return 0;
}

std::string DcbxModeName(uint8_t bits) {
  if (bits & DCB_CAP_DCBX_LLD_MANAGED) return kDcbxLld;
  if (bits & DCB_CAP_DCBX_HOST) return kDcbxHost;
  return kDcbxFirmware;
}

std::vector<uint8_t> BuildGetDcbxRequest(uint32_t seq, const std::string& ifname) {
  NlMsg m = NewDcbx(ifname, std::nullopt);
  return NetlinkMessageBytes(m.get(), seq);
}

std::vector<uint8_t> BuildSetDcbxRequest(uint32_t seq, const std::string& ifname, uint8_t bits) {
  NlMsg m = NewDcbx(ifname, bits);
  return NetlinkMessageBytes(m.get(), seq);
}

StatusOr<uint8_t> ParseGetDcbxReply(const std::vector<uint8_t>& msg) {
  ASSIGN_OR_RETURN(nlmsghdr * h, Header(msg));
  return ParseGetDcbx(h);
}

Status ParseSetDcbxReply(const std::vector<uint8_t>& msg) {
  ASSIGN_OR_RETURN(nlmsghdr * h, Header(msg));
  return ParseSetDcbx(h);
}

StatusOr<IeeeState> ParseIeeeGetReply(const std::vector<uint8_t>& msg) {
  ASSIGN_OR_RETURN(nlmsghdr * h, Header(msg));
  return ParseGet(h);
}

Status ParseSetReply(const std::vector<uint8_t>& msg) {
  ASSIGN_OR_RETURN(nlmsghdr * h, Header(msg));
  return ParseSet(h);
}

}  // namespace provisioner::dcb

namespace provisioner {

std::unique_ptr<DcbBackend> NewNetlinkDcbBackend(const HostFs* notes) {
  return std::make_unique<dcb::NetlinkDcb>(notes);
}

}  // namespace provisioner
