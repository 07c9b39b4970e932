// The rtnetlink backends of the railnet module against a real veth pair in a
// private network namespace of this test process (unshare(CLONE_NEWNET),
// root): addresses, a table's routes, a rule, read back, and the route
// lookup doctor makes; what the live backends read replays under a tree.
#include <memory>

#include "engine/host/host_fs.h"
#include "engine/host/recording_host_fs.h"
#include "gtest/gtest.h"
#include "modules/link/address_backend.h"
#include "modules/link/link_backend.h"
#include "modules/railnet/policy_routing.h"
#include "test/support/netns.h"

namespace provisioner {
namespace {

[[maybe_unused]] ::testing::Environment* const kNetns =
    ::testing::AddGlobalTestEnvironment(new testing::NetnsEnvironment(/*with_macvlan=*/false));

TEST(RailnetNetnsTest, AddressTableRuleLookupAndReplay) {
  std::unique_ptr<HostFs> live = NewLocalHostFs("/");
  HostFsRecord record;
  auto recording = NewRecordingHostFs(live.get(), &record);
  auto addresses = NewNetdevAddressBackend(*recording, kRailAddressCapture);
  auto routing = NewPolicyRoutingBackend(*recording);
  ASSERT_EQ(routing->Name(), "netlink");
  // A route's nexthop on a down link is refused (fib_check_nh: ENETDOWN).
  std::unique_ptr<LinkBackend> link = NewNetlinkLinkBackend();
  ASSERT_TRUE(link->SetUp("veth-a", true).ok());
  ASSERT_TRUE(link->SetUp("veth-b", true).ok());

  ASSERT_TRUE(SetAddresses(*addresses, "veth-a", {"172.16.1.7/24"}).ok());
  ASSERT_TRUE(SetAddresses(*addresses, "veth-b", {"172.16.2.7/24"}).ok());
  const std::vector<std::string> routes = {"172.16.1.0/24 dev veth-a scope link src 172.16.1.7",
                                           "default via 172.16.1.254 dev veth-a"};
  Status s = SetTableRoutes(*routing, 101, routes);
  ASSERT_TRUE(s.ok()) << s.message();
  s = SetTableRules(*routing, 101, {"pref 1000 from 172.16.1.7 lookup 101"});
  ASSERT_TRUE(s.ok()) << s.message();

  auto read = routing->Routes(101);
  ASSERT_TRUE(read.ok()) << read.status().message();
  EXPECT_EQ(*read, (std::vector<std::string>{"172.16.1.0/24 dev veth-a scope link src 172.16.1.7",
                                             "default via 172.16.1.254 dev veth-a"}));
  auto rules = routing->Rules();
  ASSERT_TRUE(rules.ok()) << rules.status().message();
  EXPECT_EQ(*rules, (std::vector<std::string>{"pref 1000 from 172.16.1.7 lookup 101"}));

  // From the rail's address a remote host leaves by the rail (the table's
  // default route); from the other address there is no route at all.
  auto dev = routing->Lookup("10.9.9.9", "172.16.1.7");
  ASSERT_TRUE(dev.ok()) << dev.status().message();
  EXPECT_EQ(*dev, "veth-a");
  auto none = routing->Lookup("10.9.9.9", "172.16.2.7");
  ASSERT_TRUE(none.ok()) << none.status().message();
  EXPECT_EQ(*none, "");

  // Idempotent: the whole set again changes nothing (no EEXIST).
  EXPECT_TRUE(SetTableRoutes(*routing, 101, routes).ok());
  EXPECT_TRUE(SetTableRules(*routing, 101, {"pref 1000 from 172.16.1.7 lookup 101"}).ok());

  // What snapshot keeps replays under a tree.
  EXPECT_EQ(record.captures[kRuleCapture], "pref 1000 from 172.16.1.7 lookup 101\n");
  EXPECT_EQ(record.captures[kRouteCapture],
            "table 101 172.16.1.0/24 dev veth-a scope link src 172.16.1.7\n"
            "table 101 default via 172.16.1.254 dev veth-a\n");

  // Rolled back: the table emptied, the rule and addresses gone.
  EXPECT_TRUE(SetTableRules(*routing, 101, {}).ok());
  EXPECT_TRUE(SetTableRoutes(*routing, 101, {}).ok());
  EXPECT_TRUE(SetAddresses(*addresses, "veth-a", {}).ok());
  EXPECT_TRUE(SetAddresses(*addresses, "veth-b", {}).ok());
  EXPECT_EQ(*routing->Rules(), std::vector<std::string>{});
  EXPECT_EQ(*routing->Routes(101), std::vector<std::string>{});
}

}  // namespace
}  // namespace provisioner
