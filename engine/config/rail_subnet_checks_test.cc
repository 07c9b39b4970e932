// Overlapping subnets of the pools of different rails (issue 39 item 7): a
// validate warning naming both pools and the rails.
#include <string>

#include "engine/config/test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace provisioner::config {
namespace {

using namespace testing;  // NOLINT: test_util.h's vocabulary

// Two Ethernet rails, each with a macvlan config on the pool given.
std::string Rails(const std::string& subnet1, const std::string& subnet2,
                  const std::string& nic2 = "rail2") {
  return WithHeader(
      "spec:\n"
      "  nics:\n"
      "    - {name: rail1, nicSelector: {pfNames: [eth1]}, linkType: eth}\n"
      "    - {name: rail2, nicSelector: {pfNames: [eth2]}, linkType: eth}\n"
      "  ipPools:\n"
      "    - {name: p1, subnet: " +
      subnet1 +
      "}\n"
      "    - {name: p2, subnet: " +
      subnet2 +
      "}\n"
      "  multusConfigs:\n"
      "    - {name: m1, cniType: macvlan, nic: rail1, ippools: {ipv4: [p1]}}\n"
      "    - {name: m2, cniType: macvlan, nic: " +
      nic2 + ", ippools: {ipv4: [p2]}}\n");
}

TEST(RailSubnetChecks, SeparateSubnetsAreClean) {
  EXPECT_THAT(Diagnose(Rails("172.16.11.0/24", "172.16.12.0/24")), IsEmpty());
}

TEST(RailSubnetChecks, OverlappingRailSubnetsWarn) {
  EXPECT_THAT(
      Diagnose(Rails("172.16.0.0/16", "172.16.12.0/24")),
      ElementsAre("host.yaml:11:26: warning: spec.ipPools[1].subnet: 172.16.12.0/24 overlaps "
                  "spec.ipPools[0].subnet 172.16.0.0/16: the rails of nics rail1, rail2 share one "
                  "subnet in every pod, so only the Spiderpool coordinator's per-rail policy "
                  "routes keep each rail's traffic on its own NIC (bound sockets only); give each "
                  "rail its own subnet unless that layout is meant"));
}

TEST(RailSubnetChecks, TheGuidesEightSlash16sAreOneSubnet) {
  // 172.16.11.0/16 and 172.16.12.0/16: host bits (a warning each) and one
  // subnet.
  const auto d = Diagnose(Rails("172.16.11.0/16", "172.16.12.0/16"));
  ASSERT_EQ(d.size(), 3u);
  EXPECT_NE(d[2].find("172.16.0.0/16 overlaps spec.ipPools[0].subnet 172.16.0.0/16"),
            std::string::npos)
      << d[2];
}

TEST(RailSubnetChecks, PoolsOfOneRailMayOverlap) {
  EXPECT_THAT(Diagnose(Rails("172.16.0.0/16", "172.16.12.0/24", "rail1")), IsEmpty());
}

}  // namespace
}  // namespace provisioner::config
