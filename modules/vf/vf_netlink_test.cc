// The libnl VfNetlink against a real kernel, in a private network namespace
// (no SR-IOV hardware here: the answers are the kernel's for a netdev
// without VFs, which proves the message building, parsing and errno path).
#include "modules/vf/vf_netlink.h"

#include <arpa/inet.h>
#include <linux/if_arp.h>
#include <linux/if_ether.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <netlink/attr.h>
#include <netlink/msg.h>
#include <sched.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <vector>

#include "gtest/gtest.h"

namespace provisioner {
namespace {

// What the kernel sends in an RTM_NEWLINK for PF `ifname` (ifi_type
// `arp_type`) with `count` VFs, parsed: each IFLA_VF_INFO holds IFLA_VF_MAC
// (zero unless `mac(vf, bytes)` fills it) and then what `put(msg, vf)` adds.
std::vector<VfLinkState> ParseVfs(uint32_t count, unsigned short arp_type,
                                  const std::function<void(uint32_t, uint8_t*)>& mac,
                                  const std::function<void(nl_msg*, uint32_t)>& put) {
  struct nl_msg* msg = nlmsg_alloc_simple(RTM_NEWLINK, 0);
  EXPECT_NE(msg, nullptr);
  if (msg == nullptr) return {};
  struct ifinfomsg ifi;
  std::memset(&ifi, 0, sizeof ifi);
  ifi.ifi_type = arp_type;
  EXPECT_GE(nlmsg_append(msg, &ifi, sizeof ifi, NLMSG_ALIGNTO), 0);
  EXPECT_GE(nla_put_string(msg, IFLA_IFNAME, "pf0"), 0);
  struct nlattr* list = nla_nest_start(msg, IFLA_VFINFO_LIST);
  for (uint32_t i = 0; i < count; ++i) {
    struct nlattr* info = nla_nest_start(msg, IFLA_VF_INFO);
    struct ifla_vf_mac m;
    std::memset(&m, 0, sizeof m);
    m.vf = i;
    if (mac) mac(i, m.mac);
    EXPECT_GE(nla_put(msg, IFLA_VF_MAC, sizeof m, &m), 0);
    if (put) put(msg, i);
    nla_nest_end(msg, info);
  }
  nla_nest_end(msg, list);
  std::vector<VfLinkState> vfs = ParseVfInfoList(nlmsg_hdr(msg));
  nlmsg_free(msg);
  return vfs;
}

// A PF with two IB VFs.
TEST(ParseVfInfoListTest, ReadsIndexTrustSpoofCheckAndGuids) {
  std::vector<VfLinkState> vfs = ParseVfs(2, 0, nullptr, [](nl_msg* msg, uint32_t i) {
    if (i != 1) return;  // VF 0 reports no trust/spoofchk/GUIDs/state (older kernel, other driver)
    struct ifla_vf_link_state ls = {i, IFLA_VF_LINK_STATE_DISABLE};
    ASSERT_GE(nla_put(msg, IFLA_VF_LINK_STATE, sizeof ls, &ls), 0);
    struct ifla_vf_rate rate = {i, 1000, 25000};
    ASSERT_GE(nla_put(msg, IFLA_VF_RATE, sizeof rate, &rate), 0);
    struct ifla_vf_trust t = {i, 1};
    struct ifla_vf_spoofchk sc = {i, 0};
    struct ifla_vf_guid node = {i, 0xee0d9a00028abcdeULL};
    struct ifla_vf_guid port = {i, 0xee0d9a00028abcdfULL};
    ASSERT_GE(nla_put(msg, IFLA_VF_TRUST, sizeof t, &t), 0);
    ASSERT_GE(nla_put(msg, IFLA_VF_SPOOFCHK, sizeof sc, &sc), 0);
    ASSERT_GE(nla_put(msg, IFLA_VF_IB_NODE_GUID, sizeof node, &node), 0);
    ASSERT_GE(nla_put(msg, IFLA_VF_IB_PORT_GUID, sizeof port, &port), 0);
  });
  ASSERT_EQ(vfs.size(), 2u);
  EXPECT_EQ(vfs[0].vf, 0);
  EXPECT_FALSE(vfs[0].trust.has_value());
  EXPECT_FALSE(vfs[0].node_guid.has_value());
  EXPECT_EQ(vfs[1].vf, 1);
  EXPECT_EQ(vfs[1].trust, true);
  EXPECT_EQ(vfs[1].spoof_chk, false);
  EXPECT_EQ(vfs[1].node_guid, 0xee0d9a00028abcdeULL);
  EXPECT_EQ(vfs[1].port_guid, 0xee0d9a00028abcdfULL);
  EXPECT_FALSE(vfs[0].link_state.has_value());
  ASSERT_EQ(vfs[1].link_state, IFLA_VF_LINK_STATE_DISABLE);
  EXPECT_EQ(VfLinkStateName(*vfs[1].link_state), "disable");
  EXPECT_FALSE(vfs[0].max_tx_rate.has_value());
  EXPECT_EQ(vfs[1].min_tx_rate, 1000u);
  EXPECT_EQ(vfs[1].max_tx_rate, 25000u);
}

// The kernel's reply carries IFLA_VF_VLAN and IFLA_VF_VLAN_LIST (protocol in
// network byte order); an older kernel only IFLA_VF_VLAN, which is 802.1Q.
TEST(ParseVfInfoListTest, ReadsTheVlanFromTheListElseTheLegacyAttribute) {
  std::vector<VfLinkState> vfs = ParseVfs(3, 0, nullptr, [](nl_msg* msg, uint32_t i) {
    if (i > 0) {  // VF 0: no VLAN attribute at all
      struct ifla_vf_vlan legacy = {i, 7, 2};
      ASSERT_GE(nla_put(msg, IFLA_VF_VLAN, sizeof legacy, &legacy), 0);
    }
    if (i == 2) {
      struct nlattr* vlans = nla_nest_start(msg, IFLA_VF_VLAN_LIST);
      struct ifla_vf_vlan_info vi = {i, 7, 2, htons(ETH_P_8021AD)};
      ASSERT_GE(nla_put(msg, IFLA_VF_VLAN_INFO, sizeof vi, &vi), 0);
      nla_nest_end(msg, vlans);
    }
  });
  ASSERT_EQ(vfs.size(), 3u);
  EXPECT_FALSE(vfs[0].vlan.has_value());
  EXPECT_EQ(vfs[1].vlan, 7u);
  EXPECT_EQ(vfs[1].vlan_qos, 2u);
  EXPECT_EQ(vfs[1].vlan_proto, ETH_P_8021Q);
  EXPECT_EQ(vfs[2].vlan, 7u);
  EXPECT_EQ(vfs[2].vlan_proto, ETH_P_8021AD);
  EXPECT_EQ(VfVlanProtoName(*vfs[2].vlan_proto), "802.1ad");
}

// IFLA_VF_MAC is in every VF entry (rtnl_fill_vfinfo): the table MAC of an
// Ethernet PF's VF, all zero until set; an IB PF's VFs' are not MACs.
TEST(ParseVfInfoListTest, ReadsTheTableMacOfAnEthernetPfOnly) {
  for (unsigned short type : {ARPHRD_ETHER, ARPHRD_INFINIBAND}) {
    std::vector<VfLinkState> vfs = ParseVfs(
        2, type,
        [](uint32_t i, uint8_t* mac) {
          if (i != 1) return;
          const uint8_t m[6] = {0x0e, 0x00, 0x02, 0x5b, 0x7c, 0x2e};
          std::memcpy(mac, m, sizeof m);
        },
        nullptr);
    ASSERT_EQ(vfs.size(), 2u);
    if (type == ARPHRD_INFINIBAND) {
      EXPECT_FALSE(vfs[0].mac.has_value());
      EXPECT_FALSE(vfs[1].mac.has_value());
    } else {
      EXPECT_EQ(vfs[0].mac, "00:00:00:00:00:00");
      EXPECT_EQ(vfs[1].mac, "0e:00:02:5b:7c:2e");
    }
  }
}

// The attributes of the first IFLA_VF_INFO in the IFLA_VFINFO_LIST of an
// RTM_SETLINK `msg` (after its ifinfomsg), as do_setvfinfo reads them.
::testing::AssertionResult FirstVfInfo(nl_msg* msg, struct nlattr* vf[IFLA_VF_MAX + 1]) {
  struct nlattr* tb[IFLA_MAX + 1];
  if (nlmsg_parse(nlmsg_hdr(msg), sizeof(ifinfomsg), tb, IFLA_MAX, nullptr) < 0) {
    return ::testing::AssertionFailure() << "not an ifinfomsg message";
  }
  if (tb[IFLA_VFINFO_LIST] == nullptr)
    return ::testing::AssertionFailure() << "no IFLA_VFINFO_LIST";
  struct nlattr* info = static_cast<struct nlattr*>(nla_data(tb[IFLA_VFINFO_LIST]));
  if (nla_type(info) != IFLA_VF_INFO) {
    return ::testing::AssertionFailure() << "first in the list is type " << nla_type(info);
  }
  if (nla_parse_nested(vf, IFLA_VF_MAX, info, nullptr) < 0) {
    return ::testing::AssertionFailure() << "IFLA_VF_INFO does not parse";
  }
  return ::testing::AssertionSuccess();
}

TEST(PutVfMacTest, OneIflaVfMacWithTheSixBytesFirst) {
  struct nl_msg* msg = nlmsg_alloc_simple(RTM_SETLINK, 0);
  ASSERT_NE(msg, nullptr);
  struct ifinfomsg ifi;
  std::memset(&ifi, 0, sizeof ifi);
  ifi.ifi_type = ARPHRD_ETHER;
  ASSERT_GE(nlmsg_append(msg, &ifi, sizeof ifi, NLMSG_ALIGNTO), 0);
  ASSERT_EQ(PutVfMac(msg, 6, *ParseMacAddress("0e:00:07:5b:7c:2e")), 0);
  struct nlattr* vf[IFLA_VF_MAX + 1];
  ASSERT_TRUE(FirstVfInfo(msg, vf));
  ASSERT_NE(vf[IFLA_VF_MAC], nullptr);
  ASSERT_EQ(nla_len(vf[IFLA_VF_MAC]), static_cast<int>(sizeof(struct ifla_vf_mac)));
  struct ifla_vf_mac m;
  std::memcpy(&m, nla_data(vf[IFLA_VF_MAC]), sizeof m);
  EXPECT_EQ(m.vf, 6u);
  const uint8_t want[6] = {0x0e, 0x00, 0x07, 0x5b, 0x7c, 0x2e};
  EXPECT_EQ(std::memcmp(m.mac, want, sizeof want), 0);
  for (size_t i = 6; i < sizeof m.mac; ++i) EXPECT_EQ(m.mac[i], 0) << i;
  std::vector<VfLinkState> back = ParseVfInfoList(nlmsg_hdr(msg));
  nlmsg_free(msg);
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].vf, 6);
  EXPECT_EQ(back[0].mac, "0e:00:07:5b:7c:2e");
}

// What PutVfVlan sends, parsed as the kernel's do_setvfinfo reads it:
// 802.1Q as the legacy IFLA_VF_VLAN, 802.1ad as IFLA_VF_VLAN_LIST with the
// protocol in network byte order.
TEST(PutVfVlanTest, LegacyAttributeFor8021QListFor8021ad) {
  for (uint16_t proto : {static_cast<uint16_t>(ETH_P_8021Q), static_cast<uint16_t>(ETH_P_8021AD)}) {
    struct nl_msg* msg = nlmsg_alloc_simple(RTM_SETLINK, 0);
    ASSERT_NE(msg, nullptr);
    struct ifinfomsg ifi;
    std::memset(&ifi, 0, sizeof ifi);
    ASSERT_GE(nlmsg_append(msg, &ifi, sizeof ifi, NLMSG_ALIGNTO), 0);
    ASSERT_EQ(PutVfVlan(msg, 5, 4095, 7, proto), 0);
    struct nlattr* vf[IFLA_VF_MAX + 1];
    ASSERT_TRUE(FirstVfInfo(msg, vf));
    if (proto == ETH_P_8021Q) {
      ASSERT_NE(vf[IFLA_VF_VLAN], nullptr);
      EXPECT_EQ(vf[IFLA_VF_VLAN_LIST], nullptr);
      struct ifla_vf_vlan v;
      std::memcpy(&v, nla_data(vf[IFLA_VF_VLAN]), sizeof v);
      EXPECT_EQ(v.vf, 5u);
      EXPECT_EQ(v.vlan, 4095u);
      EXPECT_EQ(v.qos, 7u);
    } else {
      EXPECT_EQ(vf[IFLA_VF_VLAN], nullptr);
      ASSERT_NE(vf[IFLA_VF_VLAN_LIST], nullptr);
      struct nlattr* e = static_cast<struct nlattr*>(nla_data(vf[IFLA_VF_VLAN_LIST]));
      ASSERT_EQ(nla_type(e), IFLA_VF_VLAN_INFO);
      ASSERT_EQ(nla_len(e), static_cast<int>(sizeof(struct ifla_vf_vlan_info)));
      struct ifla_vf_vlan_info v;
      std::memcpy(&v, nla_data(e), sizeof v);
      EXPECT_EQ(v.vf, 5u);
      EXPECT_EQ(v.vlan, 4095u);
      EXPECT_EQ(v.qos, 7u);
      EXPECT_EQ(v.vlan_proto, htons(ETH_P_8021AD));
    }
    nlmsg_free(msg);
  }
  EXPECT_EQ(ParseVfVlanProto("802.1Q"), ETH_P_8021Q);
  EXPECT_EQ(ParseVfVlanProto("802.1ad"), ETH_P_8021AD);
  EXPECT_EQ(ParseVfVlanProto("802.1q"), std::nullopt);
}

TEST(VfLinkStateNameTest, AsIpLinkSpellsThem) {
  for (const char* name : {"auto", "enable", "disable"}) {
    auto v = ParseVfLinkState(name);
    ASSERT_TRUE(v.has_value()) << name;
    EXPECT_EQ(VfLinkStateName(*v), name);
  }
  EXPECT_EQ(ParseVfLinkState("up"), std::nullopt);
  EXPECT_EQ(VfLinkStateName(3), "");
}

class VfNetlinkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::unshare(CLONE_NEWNET) != 0) {
      GTEST_SKIP() << "cannot create a network namespace: " << std::strerror(errno);
    }
  }
};

TEST_F(VfNetlinkTest, ReadsNoVfsOnLoopback) {
  auto nl = NewLibnlVfNetlink();
  auto vfs = nl->ReadVfs("lo");
  ASSERT_TRUE(vfs.ok()) << vfs.status().message();
  EXPECT_TRUE(vfs->empty());
}

TEST_F(VfNetlinkTest, MissingNetdevIsENODEV) {
  auto nl = NewLibnlVfNetlink();
  auto vfs = nl->ReadVfs("nosuch0");
  ASSERT_FALSE(vfs.ok());
  EXPECT_EQ(vfs.status().err(), ENODEV) << vfs.status().message();
  Status s = nl->SetTrust("nosuch0", 0, true);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.err(), ENODEV) << s.message();
  EXPECT_NE(s.message().find("ip link set nosuch0 vf 0 trust on"), std::string::npos)
      << s.message();
  s = nl->SetLinkState("nosuch0", 1, IFLA_VF_LINK_STATE_DISABLE);
  EXPECT_EQ(s.err(), ENODEV) << s.message();
  EXPECT_NE(s.message().find("ip link set nosuch0 vf 1 state disable"), std::string::npos)
      << s.message();
  s = nl->SetVlan("nosuch0", 3, 100, 3, ETH_P_8021AD);
  EXPECT_EQ(s.err(), ENODEV) << s.message();
  EXPECT_NE(s.message().find("ip link set nosuch0 vf 3 vlan 100 qos 3 proto 802.1ad"),
            std::string::npos)
      << s.message();
  s = nl->SetMac("nosuch0", 4, "0e:00:05:5b:7c:2e");
  EXPECT_EQ(s.err(), ENODEV) << s.message();
  EXPECT_NE(s.message().find("ip link set nosuch0 vf 4 mac 0e:00:05:5b:7c:2e"), std::string::npos)
      << s.message();
  s = nl->SetMac("nosuch0", 4, "0e:00:05:5b:7c");  // refused before anything is sent
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.message();
  s = nl->SetRate("nosuch0", 2, 0, 10000);
  EXPECT_EQ(s.err(), ENODEV) << s.message();
  EXPECT_NE(s.message().find("ip link set nosuch0 vf 2 min_tx_rate 0 max_tx_rate 10000"),
            std::string::npos)
      << s.message();
}

TEST_F(VfNetlinkTest, VfSettingsOnANetdevWithoutVfsAreRefusedWithTheKernelsErrno) {
  auto nl = NewLibnlVfNetlink();
  for (Status s :
       {nl->SetTrust("lo", 0, true), nl->SetSpoofChk("lo", 0, false),
        nl->SetNodeGuid("lo", 0, 0xee0d9a00018abcdeULL),
        nl->SetPortGuid("lo", 0, 0xee0d9a00018abcdeULL),
        nl->SetLinkState("lo", 0, IFLA_VF_LINK_STATE_ENABLE), nl->SetRate("lo", 0, 1000, 25000),
        nl->SetVlan("lo", 0, 100, 3, ETH_P_8021Q), nl->SetVlan("lo", 0, 100, 3, ETH_P_8021AD),
        nl->SetMac("lo", 0, "0e:00:01:5b:7c:2e")}) {
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.err(), EOPNOTSUPP) << s.message();
    EXPECT_NE(s.message().find("netlink: ip link set lo vf 0"), std::string::npos) << s.message();
  }
}

}  // namespace
}  // namespace provisioner
