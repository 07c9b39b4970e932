// The module against a host tree: discover reads the pool, apply writes our
// entry next to the others, verify re-reads it, the inverse change (rollback)
// restores the tree exactly, an unreadable pool fails discovery.
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>

#include "engine/host/host_fs.h"
#include "engine/module/clock.h"
#include "engine/module/registry.h"
#include "gtest/gtest.h"
#include "modules/sriov_operator/guid_pool.h"

namespace provisioner {
namespace {

using nlohmann::json;

class NoProgress final : public Progress {
 public:
  void Step(std::string_view) override {}
};

class SriovOperatorModuleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = std::string(std::getenv("TEST_TMPDIR")) + "/" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name();
    ASSERT_EQ(::mkdir(root_.c_str(), 0755), 0);
    fs_ = NewLocalHostFs(root_);
    ctx_.fs = fs_.get();
    ctx_.clock = &RealClock();
    ctx_.progress = &progress_;
    for (auto& m : ModuleRegistry::CreateAll()) {
      if (m->name() == kSriovOperatorModule) module_ = std::move(m);
    }
    ASSERT_NE(module_, nullptr);
  }

  std::string Pool() const {
    std::ifstream in(root_ + kIbGuidPoolPath);
    std::stringstream ss;
    ss << in.rdbuf();
    return in ? ss.str() : "<absent>";
  }

  Change Entry(json before, json after) const {
    Change c;
    c.module = kSriovOperatorModule;
    c.target = "0000:86:00.0";
    c.attribute = kIbGuidPoolAttribute;
    c.id = "sriov-operator/0000:86:00.0/ibGuidPool";
    c.before = std::move(before);
    c.after = std::move(after);
    c.detail = {{"pfGuid", "0c:42:a1:03:00:5b:7c:2e"}};
    return c;
  }

  std::string root_;
  std::unique_ptr<HostFs> fs_;
  NoProgress progress_;
  HostContext ctx_;
  std::unique_ptr<Module> module_;
};

TEST_F(SriovOperatorModuleTest, ApplyVerifyAndInverseRestoreTheFile) {
  const json guids = {"0e:42:a1:00:01:5b:7c:2e", "0e:42:a1:00:02:5b:7c:2e"};
  HostFacts facts;
  ASSERT_TRUE(module_->Discover(ctx_, facts).ok());
  EXPECT_FALSE(facts.sriov_operator_ib_guid_pool.has_value());

  Change add = Entry(nullptr, guids);
  ASSERT_TRUE(module_->Apply(add, ctx_).ok());
  ASSERT_TRUE(module_->Verify(add, ctx_).ok());
  EXPECT_EQ(json::parse(Pool()),
            json::parse(R"([{"pciAddress":"0000:86:00.0","guids":["0e:42:a1:00:01:5b:7c:2e","0e:42:a1:00:02:5b:7c:2e"]}])"));
  ASSERT_TRUE(module_->Discover(ctx_, facts).ok());
  EXPECT_EQ(facts.sriov_operator_ib_guid_pool, Pool());

  // Rollback: the inverse change removes the entry and, with it the last
  // one, the file.
  Change undo = Entry(guids, nullptr);
  ASSERT_TRUE(module_->Apply(undo, ctx_).ok());
  ASSERT_TRUE(module_->Verify(undo, ctx_).ok());
  EXPECT_EQ(Pool(), "<absent>");

  // Another PF's entry stays, in place.
  const std::string other =
      "[\n  {\n    \"guids\": [\n      \"00:01:02:03:04:05:06:07\"\n    ],\n    \"pciAddress\": "
      "\"0000:3b:00.0\"\n  }\n]\n";
  ASSERT_TRUE(fs_->WriteFileAtomic(kIbGuidPoolPath, other).ok());
  ASSERT_TRUE(module_->Apply(add, ctx_).ok());
  json both = json::parse(Pool());
  ASSERT_EQ(both.size(), 2u);
  EXPECT_EQ(both[0]["pciAddress"], "0000:3b:00.0");
  ASSERT_TRUE(module_->Apply(undo, ctx_).ok());
  EXPECT_EQ(Pool(), other);  // byte for byte

  // Verify sees a pool that does not hold the entry.
  Status v = module_->Verify(add, ctx_);
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.message().find("/etc/sriov-operator/infiniband/guids"), std::string::npos);
}

TEST_F(SriovOperatorModuleTest, MalformedPoolIsNeverWrittenOver) {
  ASSERT_TRUE(fs_->WriteFileAtomic(kIbGuidPoolPath, "{not json").ok());
  Status s = module_->Apply(Entry(nullptr, json{"0e:42:a1:00:01:5b:7c:2e"}), ctx_);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(Pool(), "{not json");
}

}  // namespace
}  // namespace provisioner
