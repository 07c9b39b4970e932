// ethtool netlink's pause messages over libnl's core (no libnl-genl: the
// generic netlink header is appended by hand), the capture format, the tree
// backend and the factory of pause_backend.h.
//
// Kernel side (net/ethtool/pause.c, netlink.c; checked against Linux 6.1
// and 6.18 include/uapi/linux/ethtool_netlink.h): the family "ethtool"
// (version 1) is resolved with CTRL_CMD_GETFAMILY (GenlFamilyId,
// engine/netlink); ETHTOOL_MSG_PAUSE_GET
// answers ETHTOOL_MSG_PAUSE_GET_REPLY with u8 ETHTOOL_A_PAUSE_AUTONEG/RX/TX;
// ETHTOOL_MSG_PAUSE_SET takes the attributes to change (absent ones kept)
// and is acknowledged. Errors as NLMSG_ERROR: ENODEV (no such netdev),
// EOPNOTSUPP (no get_pauseparam / set_pauseparam, e.g. veth), EPERM (SET
// without CAP_NET_ADMIN), and the driver's own (mlx5: EOPNOTSUPP on a
// function that is no vport group manager, a VF).
#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>
#include <netlink/attr.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <optional>

#include "engine/host/capture_file.h"
#include "engine/netlink/netlink_socket.h"
#include "modules/link/link_backend.h"
#include "modules/roce/pause_backend.h"
#include "nlohmann/json.hpp"

namespace provisioner {
namespace ethnl {
namespace {

NlMsg NewPause(uint16_t family, const std::string& ifname, const PauseState* set) {
  NlMsg m = NewGenlMessage(family, set ? ETHTOOL_MSG_PAUSE_SET : ETHTOOL_MSG_PAUSE_GET,
                    ETHTOOL_GENL_VERSION, set ? NLM_F_ACK : 0);
  if (!m) return m;
  nlattr* hdr = nla_nest_start(m.get(), ETHTOOL_A_PAUSE_HEADER);
  if (hdr == nullptr || nla_put_string(m.get(), ETHTOOL_A_HEADER_DEV_NAME, ifname.c_str()) < 0) {
    m.reset();
    return m;
  }
  nla_nest_end(m.get(), hdr);
  if (set != nullptr && (nla_put_u8(m.get(), ETHTOOL_A_PAUSE_RX, set->rx ? 1 : 0) < 0 ||
                         nla_put_u8(m.get(), ETHTOOL_A_PAUSE_TX, set->tx ? 1 : 0) < 0)) {
    m.reset();
  }
  return m;
}

StatusOr<nlmsghdr*> Header(const std::vector<uint8_t>& msg) {
  return NetlinkHeader(msg, "ethtool netlink");
}

Status ErrorOf(nlmsghdr* h, const std::string& what) {
  return NetlinkErrorOf(h, "ethtool netlink", what);
}


StatusOr<PauseState> ParsePause(nlmsghdr* h) {
  RETURN_IF_ERROR(ErrorOf(h, "ethtool netlink ETHTOOL_MSG_PAUSE_GET"));
  nlattr* tb[ETHTOOL_A_PAUSE_MAX + 1] = {};
  RETURN_IF_ERROR(ParseGenlAttributes(h, tb, ETHTOOL_A_PAUSE_MAX, "ethtool netlink",
                                      "ETHTOOL_MSG_PAUSE_GET_REPLY"));
  const uint8_t cmd = static_cast<genlmsghdr*>(nlmsg_data(h))->cmd;
  if (cmd != ETHTOOL_MSG_PAUSE_GET_REPLY) {
    return InvalidArgumentError("ethtool netlink: reply command " + std::to_string(cmd) +
                                ", expected ETHTOOL_MSG_PAUSE_GET_REPLY");
  }
  if (tb[ETHTOOL_A_PAUSE_RX] == nullptr || tb[ETHTOOL_A_PAUSE_TX] == nullptr ||
      nla_len(tb[ETHTOOL_A_PAUSE_RX]) < 1 || nla_len(tb[ETHTOOL_A_PAUSE_TX]) < 1) {
    return InvalidArgumentError(
        "ethtool netlink: ETHTOOL_MSG_PAUSE_GET_REPLY without ETHTOOL_A_PAUSE_RX/TX");
  }
  return PauseState{nla_get_u8(tb[ETHTOOL_A_PAUSE_RX]) != 0,
                    nla_get_u8(tb[ETHTOOL_A_PAUSE_TX]) != 0};
}

class NetlinkPause final : public PauseBackend {
 public:
  explicit NetlinkPause(const HostFs* notes) : notes_(notes) {}
  std::string Name() const override { return "ethtool-netlink"; }

  StatusOr<PauseState> Read(const std::string& ifname) override {
    if (!IsValidIfname(ifname)) return InvalidArgumentError("bad interface name " + ifname);
    ASSIGN_OR_RETURN(uint16_t family, Family());
    NlMsg m = NewPause(family, ifname, nullptr);
    std::optional<StatusOr<PauseState>> pause;
    RETURN_IF_ERROR(Run(
        m.get(), ifname, "ETHTOOL_MSG_PAUSE_GET",
        [&](const nlmsghdr* h) {
          if (h->nlmsg_type == family) pause = ParsePause(const_cast<nlmsghdr*>(h));
        },
        [&] { return pause.has_value(); }));
    if (!pause) {
      return UnavailableError("ethtool netlink ETHTOOL_MSG_PAUSE_GET " + ifname + ": no reply");
    }
    if (!pause->ok()) return pause->status().WithContext(ifname);
    if (notes_ != nullptr) notes_->NoteCapture(PauseCapturePath(ifname), RenderPauseCapture(**pause));
    return **pause;
  }

  Status Set(const std::string& ifname, const PauseState& want) override {
    if (!IsValidIfname(ifname)) return InvalidArgumentError("bad interface name " + ifname);
    ASSIGN_OR_RETURN(uint16_t family, Family());
    NlMsg m = NewPause(family, ifname, &want);
    // Acknowledged (NLM_F_ACK): no ACK is "no acknowledgement".
    return Run(m.get(), ifname, "ETHTOOL_MSG_PAUSE_SET", [](const nlmsghdr*) {}, nullptr);
  }

 private:
  StatusOr<uint16_t> Family() {
    if (family_ != 0) return family_;
    auto id = GenlFamilyId(ETHTOOL_GENL_NAME);
    if (!id.ok()) {
      if (id.status().err() != ENOENT) return id.status();
      return Status(StatusCode::kFailedPrecondition,
                    id.status().message() + ": no ethtool netlink (Linux 5.6 or later)", ENOENT);
    }
    family_ = *id;
    return family_;
  }

  // One exchange (NetlinkTransact): a GET ends at its reply, a SET at
  // its ACK; the kernel's errno explained.
  Status Run(nl_msg* msg, const std::string& ifname, const std::string& what,
             const std::function<void(const nlmsghdr*)>& on_reply,
             const std::function<bool()>& reply_complete) {
    const std::string label = "ethtool netlink " + what + " " + ifname;
    Status s = NetlinkTransact(NETLINK_GENERIC, "NETLINK_GENERIC", msg, label, on_reply, 16,
                               reply_complete);
    if (s.ok() || s.err() == 0) return s;
    if (s.err() == ENODEV) {
      return Status(StatusCode::kNotFound, s.message() + ": no such netdev", ENODEV);
    }
    if (s.err() == EOPNOTSUPP) {
      return Status(StatusCode::kFailedPrecondition,
                    s.message() + ": the driver of " + ifname + " has no pause frame settings",
                    EOPNOTSUPP);
    }
    return s;
  }

  const HostFs* notes_;
  uint16_t family_ = 0;
};

}  // namespace

std::vector<uint8_t> BuildFamilyRequest(uint32_t seq) {
  return BuildGenlFamilyRequest(ETHTOOL_GENL_NAME, seq);
}

std::vector<uint8_t> BuildPauseGet(uint16_t family, uint32_t seq, const std::string& ifname) {
  NlMsg m = NewPause(family, ifname, nullptr);
  return NetlinkMessageBytes(m.get(), seq);
}

std::vector<uint8_t> BuildPauseSet(uint16_t family, uint32_t seq, const std::string& ifname,
                                   const PauseState& want) {
  NlMsg m = NewPause(family, ifname, &want);
  return NetlinkMessageBytes(m.get(), seq);
}

StatusOr<uint16_t> ParseFamilyReply(const std::vector<uint8_t>& msg) {
  return ParseGenlFamilyReply(msg, ETHTOOL_GENL_NAME);
}

StatusOr<PauseState> ParsePauseGetReply(const std::vector<uint8_t>& msg) {
  ASSIGN_OR_RETURN(nlmsghdr * h, Header(msg));
  return ParsePause(h);
}

}  // namespace ethnl

namespace {

using nlohmann::json;

class TreePause final : public PauseBackend {
 public:
  explicit TreePause(HostFs& fs) : fs_(fs) {}
  std::string Name() const override { return "capture"; }

  StatusOr<PauseState> Read(const std::string& ifname) override {
    RETURN_IF_ERROR(CheckNetdevInTree(fs_, ifname));
    return ReadParsedCapture(fs_, PauseCapturePath(ifname), "pause frame settings of " + ifname,
                             "provisioner snapshot writes them from ethtool netlink",
                             ParsePauseCapture);
  }

  Status Set(const std::string& ifname, const PauseState& want) override {
    RETURN_IF_ERROR(Read(ifname).status());
    return fs_.WriteFileAtomic(PauseCapturePath(ifname), RenderPauseCapture(want))
        .WithContext("set pause frames of " + ifname);
  }

 private:
  HostFs& fs_;
};

}  // namespace

std::string PauseCapturePath(const std::string& ifname) {
  return "/run/provisioner/pause/" + ifname;
}

std::string RenderPauseCapture(const PauseState& s) {
  return json{{"rx", s.rx}, {"tx", s.tx}}.dump() + "\n";
}

StatusOr<PauseState> ParsePauseCapture(const std::string& text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object() || j.size() != 2 || !j.contains("rx") ||
      !j.contains("tx") || !j["rx"].is_boolean() || !j["tx"].is_boolean()) {
    return InvalidArgumentError(
        "not a pause capture: expected {\"rx\":true|false,\"tx\":true|false}");
  }
  return PauseState{j["rx"].get<bool>(), j["tx"].get<bool>()};
}

std::unique_ptr<PauseBackend> NewNetlinkPauseBackend(const HostFs* notes) {
  return std::make_unique<ethnl::NetlinkPause>(notes);
}

std::unique_ptr<PauseBackend> NewTreePauseBackend(HostFs& fs) {
  return std::make_unique<TreePause>(fs);
}

}  // namespace provisioner
