// A private network namespace for netlink tests (the real kernel; root or
// CAP_SYS_ADMIN): unshare(CLONE_NEWNET), then a veth pair veth-a/veth-b and,
// when asked, a macvlan mv0 on veth-a (veth and macvlan exist in this
// kernel; RDMA devices and netdevsim do not).
#ifndef PROVISIONER_TEST_SUPPORT_NETNS_H_
#define PROVISIONER_TEST_SUPPORT_NETNS_H_

#include <memory>
#include <string>
#include <vector>

#include "engine/host/host_fs.h"
#include "engine/module/module.h"
#include "gtest/gtest.h"

namespace provisioner::testing {

// Moves this process into a new network namespace with the links above.
// "" on success, else why not (the step and the errno or libnl error).
std::string EnterTestNetns(bool with_macvlan);

// The same once for the whole test binary, failing the run when it cannot:
//   ::testing::AddGlobalTestEnvironment(new NetnsEnvironment(true));
class NetnsEnvironment : public ::testing::Environment {
 public:
  explicit NetnsEnvironment(bool with_macvlan) : with_macvlan_(with_macvlan) {}
  void SetUp() override { ASSERT_EQ(EnterTestNetns(with_macvlan_), "") << "(run as root)"; }

 private:
  bool with_macvlan_;
};

// A test of the live root "/" (in the test's namespace, with the
// environment above): fs_ is its host layer, ctx_ reads and writes through
// it, modules_ are the test's to fill.
class LiveRootTest : public ::testing::Test {
 protected:
  LiveRootTest() : fs_(NewLocalHostFs("/")) { ctx_.fs = fs_.get(); }

  std::unique_ptr<HostFs> fs_;
  HostContext ctx_;
  std::vector<std::unique_ptr<Module>> modules_;
};

}  // namespace provisioner::testing

#endif  // PROVISIONER_TEST_SUPPORT_NETNS_H_
