// The live event source against the real kernel in a private network
// namespace (test/support/netns.h): a veth pair and macvlans added, deleted,
// their MTU and state changed, each reaching the source as an rtnetlink
// RTNLGRP_LINK message. Waits on the source's fd (poll), never on time.
#include <net/if.h>
#include <netlink/netlink.h>
#include <netlink/route/link.h>
#include <netlink/route/link/macvlan.h>
#include <netlink/route/link/veth.h>
#include <poll.h>

#include <chrono>
#include <string>
#include <vector>

#include "engine/agent/event_source.h"
#include "gtest/gtest.h"
#include "test/support/netns.h"

namespace provisioner::agent {
namespace {

class LiveEventSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    sk_ = nl_socket_alloc();
    ASSERT_EQ(nl_connect(sk_, NETLINK_ROUTE), 0);
    auto source = NewLiveEventSource();
    ASSERT_TRUE(source.ok()) << source.status().message();
    source_ = std::move(source).value();
    EXPECT_EQ(source_->kind().rfind("netlink+udev", 0), 0u) << source_->kind();
  }
  void TearDown() override { nl_socket_free(sk_); }

  // Reads events until one contains `want` (up to 10 s of poll on the fd).
  bool WaitFor(const std::string& want) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < deadline) {
      struct pollfd p = {source_->fd(), POLLIN, 0};
      if (::poll(&p, 1, 1000) <= 0) continue;
      std::vector<std::string> events;
      EXPECT_TRUE(source_->Read(&events).ok());
      for (const std::string& e : events) {
        seen_.push_back(e);
        if (e.find(want) != std::string::npos) return true;
      }
    }
    return false;
  }
  std::string Seen() const {
    std::string out;
    for (const auto& e : seen_) out += e + "\n";
    return out;
  }
  // Changes `name` with `change` filled by `fill`.
  int Change(const char* name, void (*fill)(rtnl_link*)) {
    rtnl_link* orig = nullptr;
    int r = rtnl_link_get_kernel(sk_, 0, name, &orig);
    if (r != 0) return r;
    rtnl_link* change = rtnl_link_alloc();
    fill(change);
    r = rtnl_link_change(sk_, orig, change, 0);
    rtnl_link_put(change);
    rtnl_link_put(orig);
    return r;
  }

  nl_sock* sk_ = nullptr;
  std::unique_ptr<EventSource> source_;
  std::vector<std::string> seen_;
};

TEST_F(LiveEventSourceTest, LinkAddMtuStateAndDeleteReachTheLoop) {
  rtnl_link* mv = rtnl_link_macvlan_alloc();
  rtnl_link_set_name(mv, "mvtest0");
  rtnl_link_set_link(mv, static_cast<int>(::if_nametoindex("veth-a")));
  ASSERT_EQ(rtnl_link_add(sk_, mv, NLM_F_CREATE | NLM_F_EXCL), 0);
  rtnl_link_put(mv);
  EXPECT_TRUE(WaitFor("link mvtest0 ")) << Seen();

  ASSERT_EQ(Change("mvtest0", [](rtnl_link* l) { rtnl_link_set_mtu(l, 1400); }), 0);
  EXPECT_TRUE(WaitFor("link mvtest0 (index ")) << Seen();
  EXPECT_NE(Seen().find("mtu 1400"), std::string::npos) << Seen();
  ASSERT_EQ(Change("veth-b", [](rtnl_link* l) { rtnl_link_set_flags(l, IFF_UP); }), 0);
  EXPECT_TRUE(WaitFor("link veth-b (index " )) << Seen();
  ASSERT_EQ(Change("veth-a", [](rtnl_link* l) { rtnl_link_set_flags(l, IFF_UP); }), 0);
  EXPECT_TRUE(WaitFor(", up)")) << Seen();
  ASSERT_EQ(Change("veth-a", [](rtnl_link* l) { rtnl_link_unset_flags(l, IFF_UP); }), 0);
  EXPECT_TRUE(WaitFor("link veth-a (index")) << Seen();

  rtnl_link* del = rtnl_link_alloc();
  rtnl_link_set_name(del, "mvtest0");
  ASSERT_EQ(rtnl_link_delete(sk_, del), 0);
  rtnl_link_put(del);
  EXPECT_TRUE(WaitFor("link removed mvtest0")) << Seen();

  ASSERT_EQ(rtnl_link_veth_add(sk_, "veth-c", "veth-d", ::getpid()), 0);
  EXPECT_TRUE(WaitFor("link veth-d")) << Seen();
}

}  // namespace
}  // namespace provisioner::agent

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new provisioner::testing::NetnsEnvironment(false));
  return RUN_ALL_TESTS();
}
