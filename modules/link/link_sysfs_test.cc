// The link module under a tree root: /sys/class/net/<if>/{mtu,flags} read and
// written through HostFs, with the real pci and sriov modules discovering the
// host trees.
#include <fstream>
#include <sstream>

#include "engine/core/engine.h"
#include "engine/host/host_fs.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "modules/link/link_backend.h"
#include "modules/link/link_module.h"
#include "modules/pci/pci_module.h"
#include "modules/sriov/sriov_module.h"
#include "test/support/backend_by_root.h"
#include "test/support/files.h"
#include "test/support/planned_changes.h"

namespace provisioner {
namespace {

using testing::Changed;
using ::testing::ElementsAre;

class LinkSysfsTest : public ::testing::Test {
 protected:
  void Open(const std::string& tree) {
    root_ = testing::ExtractedHostTree(tree);
    fs_ = NewLocalHostFs(root_);
    ctx_.fs = fs_.get();
    modules_.push_back(std::make_unique<PciModule>());
    modules_.push_back(std::make_unique<SriovModule>());
    modules_.push_back(std::make_unique<LinkModule>());
  }
  std::string Attr(const std::string& ifname, const std::string& attr) {
    return fs_->ReadAttr("/sys/class/net/" + ifname + "/" + attr).value_or("<missing>");
  }
  PlanResult PlanFor(const DesiredState& want) {
    auto facts = Discover(modules_, ctx_);
    EXPECT_TRUE(facts.ok()) << facts.status().message();
    return BuildPlan(modules_, want, facts.ok() ? *facts : HostFacts{});
  }

  std::string root_;
  std::unique_ptr<HostFs> fs_;
  HostContext ctx_;
  std::vector<std::unique_ptr<Module>> modules_;
};

DesiredState Nic(const std::string& pf, std::optional<int> mtu,
                 std::optional<std::string> device_type = std::nullopt) {
  DesiredState d;
  NicSpec n;
  n.name = "gpu1-nic";
  n.selector.pf_names = {pf};
  n.mtu = mtu;
  n.device_type = device_type;
  d.nics.push_back(n);
  return d;
}

TEST_F(LinkSysfsTest, PfMtuAndUpAppliedThroughSysfs) {
  Open("cx5-roce");
  ASSERT_TRUE(fs_->WriteAttr("/sys/class/net/ens6f0np0/flags", "0x1002").ok());  // admin down
  DesiredState want = Nic("ens6f0np0", 9000);
  PlanResult plan = PlanFor(want);
  ASSERT_TRUE(plan.diagnostics.empty()) << plan.diagnostics[0].message;
  ASSERT_THAT(plan.plan.changes,
              ElementsAre(Changed("link/ens6f0np0/mtu", 1500, 9000), Changed("link/ens6f0np0/up")));
  ApplyReport report = ApplyPlan(modules_, plan.plan, want, ctx_);
  ASSERT_TRUE(report.status.ok()) << report.status.message();
  EXPECT_EQ(Attr("ens6f0np0", "mtu"), "9000");
  EXPECT_EQ(Attr("ens6f0np0", "flags"), "0x1003");
  EXPECT_TRUE(PlanFor(want).plan.changes.empty());
  // The other port and eno1 are not touched.
  EXPECT_EQ(Attr("ens6f1np1", "mtu"), "1500");
}

TEST_F(LinkSysfsTest, NetdeviceVfsBroughtUp) {
  Open("cx5-roce-vfs");
  std::vector<std::string> down = {"ens6f0v1", "ens6f0v3"};
  for (const auto& n : down)
    ASSERT_TRUE(fs_->WriteAttr("/sys/class/net/" + n + "/flags", "0x1002").ok());
  DesiredState want = Nic("ens6f0np0", std::nullopt, "netdevice");
  PlanResult plan = PlanFor(want);
  ASSERT_EQ(plan.plan.changes.size(), 1u);
  EXPECT_EQ(plan.plan.changes[0].id, "link/0000:af:00.0/vfsUp");
  EXPECT_EQ(plan.plan.changes[0].before, false);
  ApplyReport report = ApplyPlan(modules_, plan.plan, want, ctx_);
  ASSERT_TRUE(report.status.ok()) << report.status.message();
  for (const auto& n : down) EXPECT_EQ(Attr(n, "flags"), "0x1003") << n;
  EXPECT_TRUE(PlanFor(want).plan.changes.empty());
}

TEST_F(LinkSysfsTest, UnreadableMtuIsAMissingFactNotACrash) {
  Open("cx5-roce");
  ASSERT_TRUE(fs_->WriteAttr("/sys/class/net/ens6f0np0/mtu", "jumbo").ok());
  PlanResult plan = PlanFor(Nic("ens6f0np0", 9000));
  EXPECT_TRUE(plan.plan.changes.empty());
  ASSERT_EQ(plan.diagnostics.size(), 1u);
  EXPECT_NE(plan.diagnostics[0].message.find("ens6f0np0"), std::string::npos);
}

// Plans may come from a file: a target that is no interface name (a path)
// or a value of the wrong type is refused before anything is written.
TEST_F(LinkSysfsTest, HandEditedChangesAreRefused) {
  Open("cx5-roce");
  LinkModule m;
  Change c =
      MakeChange("link", "../../etc", "mtu", 1500, 9000, Disruption::kLive, kPhaseLinks, "", "");
  EXPECT_EQ(m.Apply(c, ctx_).code(), StatusCode::kInvalidArgument);
  c.target = "ens6f0np0";
  c.after = "9000";
  EXPECT_EQ(m.Apply(c, ctx_).code(), StatusCode::kInvalidArgument);
  c.attribute = "vfsUp";
  c.target = "0000:af:00.0/../..";
  c.after = true;
  EXPECT_EQ(m.Apply(c, ctx_).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Attr("ens6f0np0", "mtu"), "1500");
}

TEST(LinkBackend, InterfaceNames) {
  EXPECT_TRUE(IsValidIfname("ens6f0np0"));
  EXPECT_TRUE(IsValidIfname("veth-a"));
  EXPECT_FALSE(IsValidIfname(""));
  EXPECT_FALSE(IsValidIfname(".."));
  EXPECT_FALSE(IsValidIfname("a/b"));
  EXPECT_FALSE(IsValidIfname("abcdefghijklmnop"));  // 16 bytes
  EXPECT_FALSE(IsValidIfname("a b"));
}

// The factory picks by root: netlink (this process's namespace) for "/"
// only; a tree's links are its sysfs files, never this machine's.
TEST(LinkBackendFactory, NetlinkForTheLiveRootOnly) {
  testing::ExpectBackendByRoot([](HostFs& fs) { return NewLinkBackend(fs)->Name(); }, "netlink",
                               "sysfs");
}

}  // namespace
}  // namespace provisioner
