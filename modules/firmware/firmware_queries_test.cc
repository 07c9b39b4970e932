// Which cards the firmware module queries, how often and how: `mstconfig
// query` takes about a second per card, and plan/apply run at boot. A plan
// queries only the cards its nics ask something of the firmware, each card
// once per process, all at once; discover queries every card, all at once.
// On a generated 10-card host (BenchHost: ten single-port ConnectX-5 cards,
// sriov_totalvfs 127) with live-root stand-ins for mstconfig: a counting
// FirmwareTool, and a stand-in `mstconfig` program on PATH run by the real
// command backend.
#include <stdlib.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "engine/core/engine.h"
#include "engine/host/host_fs.h"
#include "gtest/gtest.h"
#include "modules/firmware/firmware_module.h"
#include "modules/firmware/firmware_tool.h"
#include "modules/firmware/mstconfig_query.h"
#include "modules/pci/pci_module.h"
#include "modules/sriov/sriov_module.h"
#include "test/support/call_log.h"
#include "test/support/files.h"
#include "test/support/host_presets.h"
#include "test/support/host_tree.h"
#include "test/support/ttar.h"

namespace provisioner {
namespace {

using Clock = std::chrono::steady_clock;
using provisioner::testing::ReadFile;

constexpr int kCards = 10;

std::string CardQuery() { return ReadFile("modules/firmware/testdata/cx5-vpi-ib.query"); }

// What the cards were asked, shared by every tool the module makes.
struct Cards {
  std::mutex mu;
  std::map<std::string, std::string> answers;  // by card: its query text
  std::map<std::string, int> queries;          // by card
  std::vector<std::pair<Clock::time_point, Clock::time_point>> spans;  // of each query
  int sets = 0;
  int flint = 0;  // mstflint -d <card> query runs

  int total() {
    std::lock_guard<std::mutex> lock(mu);
    int n = 0;
    for (const auto& [dev, k] : queries) n += k;
    return n;
  }
};

// A live-root stand-in: each query takes `delay`, a set rewrites the card's
// Next Boot column as the card would report it.
class CountingTool : public FirmwareTool {
 public:
  CountingTool(std::shared_ptr<Cards> cards, std::chrono::milliseconds delay)
      : cards_(std::move(cards)), delay_(delay) {}
  std::string Source(const std::string&) const override { return "mstconfig"; }
  bool Available() const override { return true; }
  StatusOr<std::string> Query(const std::string& device) override {
    const auto start = Clock::now();
    std::this_thread::sleep_for(delay_);
    std::lock_guard<std::mutex> lock(cards_->mu);
    cards_->spans.emplace_back(start, Clock::now());
    ++cards_->queries[device];
    auto it = cards_->answers.emplace(device, CardQuery()).first;
    return it->second;
  }
  // mstflint installed: every run is counted (issue 35.9: discover and a
  // policy validate read sysfs instead).
  bool FlintAvailable() const override { return true; }
  StatusOr<std::string> FlintQuery(const std::string&) override {
    std::this_thread::sleep_for(delay_);
    std::lock_guard<std::mutex> lock(cards_->mu);
    ++cards_->flint;
    return std::string("FW Version:            16.35.2000\nPSID:                  MT_0000000008\n");
  }
  Status Set(const std::string& device,
             const std::map<std::string, std::string>& params) override {
    std::lock_guard<std::mutex> lock(cards_->mu);
    ++cards_->sets;
    std::map<std::string, long> numbers;
    for (const auto& [name, value] : params) numbers[name] = std::stol(value);
    auto it = cards_->answers.emplace(device, CardQuery()).first;
    auto updated = SetNextBootValues(it->second, numbers);
    if (!updated.ok()) return updated.status();
    it->second = *updated;
    return OkStatus();
  }

 private:
  std::shared_ptr<Cards> cards_;
  std::chrono::milliseconds delay_;
};

class FirmwareQueriesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = testing::MakeTempDir("fw-queries");
    ASSERT_TRUE(testing::BuildHostTree(testing::BenchHost(kCards, 0), root_).ok());
    fs_ = NewLocalHostFs(root_);
    ctx_.fs = fs_.get();
  }

  // pci, sriov and firmware (with `tool` for every root), in registry order.
  std::vector<std::unique_ptr<Module>> Modules(
      std::function<std::unique_ptr<FirmwareTool>(HostFs&)> tool) {
    std::vector<std::unique_ptr<Module>> m;
    m.push_back(std::make_unique<PciModule>());
    FirmwareModuleOptions o;
    o.tool = std::move(tool);
    m.push_back(std::make_unique<FirmwareModule>(std::move(o)));
    m.push_back(std::make_unique<SriovModule>());
    return m;
  }
  std::vector<std::unique_ptr<Module>> Counted(std::chrono::milliseconds delay) {
    return Modules([c = cards_, delay](HostFs&) { return std::make_unique<CountingTool>(c, delay); });
  }

  std::string root_;
  std::unique_ptr<HostFs> fs_;
  HostContext ctx_;
  std::shared_ptr<Cards> cards_ = std::make_shared<Cards>();
};

// Every ConnectX PF (vendor 15b3) with `numVfs` and maybe a link type.
DesiredState EveryCard(int num_vfs, std::optional<std::string> link_type = std::nullopt) {
  DesiredState d;
  NicSpec n;
  n.name = "all";
  n.selector.vendor = "15b3";
  n.num_vfs = num_vfs;
  n.link_type = std::move(link_type);
  d.nics.push_back(n);
  return d;
}

std::string Errors(const PlanResult& r) {
  std::string s;
  for (const auto& d : r.diagnostics) {
    if (d.severity == Severity::kError) s += d.path + ": " + d.message + "\n";
  }
  return s;
}

// True when every span started before the first one ended: they ran at once.
bool AllAtOnce(const std::vector<std::pair<Clock::time_point, Clock::time_point>>& spans) {
  if (spans.empty()) return false;
  Clock::time_point last_start = spans.front().first, first_end = spans.front().second;
  for (const auto& [start, end] : spans) {
    last_start = std::max(last_start, start);
    first_end = std::min(first_end, end);
  }
  return last_start < first_end;
}

TEST_F(FirmwareQueriesTest, PlanWithoutFirmwareFieldsQueriesNoCard) {
  auto modules = Counted(std::chrono::milliseconds(0));
  DesiredState want = EveryCard(8);  // within sriov_totalvfs 127
  auto facts = Discover(modules, ctx_, want);
  ASSERT_TRUE(facts.ok()) << facts.status().message();
  EXPECT_EQ(cards_->total(), 0);
  ASSERT_EQ(facts->firmware.size(), static_cast<size_t>(kCards));
  for (const auto& [dev, fw] : facts->firmware) {
    EXPECT_TRUE(fw.unread) << dev;
    EXPECT_TRUE(fw.params.empty()) << dev;
  }
  PlanResult plan = BuildPlan(modules, want, *facts);
  EXPECT_EQ(Errors(plan), "");
  EXPECT_EQ(plan.plan.changes.size(), static_cast<size_t>(kCards));  // numVfs 0 -> 8 each
  EXPECT_EQ(cards_->total(), 0);
}

TEST_F(FirmwareQueriesTest, LinkTypeOnEveryCardQueriesEachOnceAllAtOnce) {
  auto modules = Counted(std::chrono::milliseconds(300));
  DesiredState want = EveryCard(0, "eth");
  auto facts = Discover(modules, ctx_, want);
  ASSERT_TRUE(facts.ok()) << facts.status().message();
  {
    std::lock_guard<std::mutex> lock(cards_->mu);
    ASSERT_EQ(cards_->queries.size(), static_cast<size_t>(kCards));
    for (const auto& [dev, n] : cards_->queries) EXPECT_EQ(n, 1) << dev;
    EXPECT_TRUE(AllAtOnce(cards_->spans)) << "the queries ran one after the other";
  }
  PlanResult plan = BuildPlan(modules, want, *facts);
  ASSERT_EQ(Errors(plan), "");
  ASSERT_EQ(plan.plan.changes.size(), static_cast<size_t>(kCards));  // LINK_TYPE_P1 ib -> eth

  // Apply: a set per card, its verify asks the card again (it changed); the
  // re-discovery after apply and any later one in this process ask nothing.
  cards_->spans.clear();
  ApplyReport report = ApplyPlan(modules, plan.plan, want, ctx_);
  ASSERT_TRUE(report.status.ok()) << report.status.message();
  EXPECT_TRUE(report.reboot_required);
  EXPECT_EQ(cards_->sets, kCards);
  EXPECT_EQ(cards_->total(), 2 * kCards);
  auto again = Discover(modules, ctx_, want);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(cards_->total(), 2 * kCards);
  PlanResult second = BuildPlan(modules, want, *again);
  EXPECT_TRUE(second.plan.changes.empty()) << Errors(second);
  // Several asks of one card (nics on its ports, discover after plan) hit
  // the same answer.
  auto all = Discover(modules, ctx_);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(cards_->total(), 2 * kCards);
}

TEST_F(FirmwareQueriesTest, NumVfsAboveTheKernelLimitQueriesThatCardOnly) {
  auto modules = Counted(std::chrono::milliseconds(0));
  auto listed = Discover(modules, ctx_, EveryCard(0));
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(cards_->total(), 0);
  const std::string card = listed->firmware.begin()->first;
  DesiredState want;
  NicSpec big;
  big.name = "big";
  big.selector.root_devices = {card};
  big.num_vfs = 200;  // sriov_totalvfs 127: the firmware's NUM_OF_VFS may raise it
  want.nics.push_back(big);
  NicSpec small = EveryCard(8).nics[0];
  small.selector.vendor.reset();
  for (const auto& [dev, fw] : listed->firmware) {
    if (dev != card) small.selector.root_devices.push_back(dev);
  }
  want.nics.push_back(small);
  auto facts = Discover(modules, ctx_, want);
  ASSERT_TRUE(facts.ok());
  std::lock_guard<std::mutex> lock(cards_->mu);
  EXPECT_EQ(cards_->queries, (std::map<std::string, int>{{card, 1}}));
  EXPECT_FALSE(facts->firmware.at(card).unread);
  EXPECT_FALSE(facts->firmware.at(card).params.empty());
}

TEST_F(FirmwareQueriesTest, DiscoverQueriesEveryCardAllAtOnce) {
  auto modules = Counted(std::chrono::milliseconds(300));
  auto facts = Discover(modules, ctx_);
  ASSERT_TRUE(facts.ok());
  std::lock_guard<std::mutex> lock(cards_->mu);
  ASSERT_EQ(cards_->queries.size(), static_cast<size_t>(kCards));
  for (const auto& [dev, n] : cards_->queries) EXPECT_EQ(n, 1) << dev;
  EXPECT_TRUE(AllAtOnce(cards_->spans)) << "the queries ran one after the other";
  for (const auto& [dev, fw] : facts->firmware) {
    EXPECT_FALSE(fw.unread) << dev;
    EXPECT_EQ(fw.device_type, "ConnectX5") << dev;
  }
}

// Issue 35.9: the running version and PSID come from each card's RDMA device
// (fw_ver, board_id): discover runs no `mstflint query`, and neither does a
// plan whose nics pin a version with policy validate; policy update does.
TEST_F(FirmwareQueriesTest, VersionsComeFromSysfsWithoutMstflint) {
  auto modules = Counted(std::chrono::milliseconds(0));
  auto facts = Discover(modules, ctx_);
  ASSERT_TRUE(facts.ok());
  EXPECT_EQ(cards_->flint, 0);
  ASSERT_EQ(facts->firmware.size(), static_cast<size_t>(kCards));
  for (const auto& [dev, fw] : facts->firmware) {
    EXPECT_EQ(fw.fw_version, "16.35.2000") << dev;
    EXPECT_EQ(fw.psid, "MT_0000000012") << dev;  // board_id
    EXPECT_EQ(fw.flint_source.rfind("/sys/class/infiniband/", 0), 0u) << fw.flint_source;
    EXPECT_EQ(fw.flint_error, "") << dev;
  }
  DesiredState validate = EveryCard(0);
  validate.nics[0].firmware_version = FirmwareVersionSpec{"16.35.2000", std::nullopt, "validate"};
  auto plan_facts = Discover(modules, ctx_, validate);
  ASSERT_TRUE(plan_facts.ok());
  PlanResult plan = BuildPlan(modules, validate, *plan_facts);
  EXPECT_EQ(Errors(plan), "");
  EXPECT_EQ(cards_->flint, 0);
  // Another pin: the plan error names the version sysfs reports.
  validate.nics[0].firmware_version->version = "16.35.3006";
  plan = BuildPlan(modules, validate, *plan_facts);
  EXPECT_NE(Errors(plan).find("runs firmware 16.35.2000, but nic all pins 16.35.3006"),
            std::string::npos)
      << Errors(plan);
  // policy update needs what the flash holds: mstflint, once per card.
  DesiredState update = EveryCard(0);
  update.nics[0].firmware_version =
      FirmwareVersionSpec{"16.35.2000", std::string("/opt/fw.bin"), "update"};
  ASSERT_TRUE(Discover(modules, ctx_, update).ok());
  EXPECT_EQ(cards_->flint, kCards);
}

// The real command backend with a stand-in `mstconfig` on PATH that logs when
// each query starts and ends ("start <device> <ns>", "end <device> <ns>").
class StandInMstconfigTest : public FirmwareQueriesTest {
 protected:
  void SetUp() override {
    FirmwareQueriesTest::SetUp();
    bin_ = testing::MakeTempDir("fw-bin");
    log_ = bin_ + "/queries.log";
    const std::string answer = bin_ + "/answer.query";
    std::ofstream(answer) << CardQuery();
    std::ofstream script(bin_ + "/mstconfig");
    script << "#!/bin/sh\n"
              "# mstconfig -e -d <device> query\n"
              "echo \"start $3 $(date +%s%N)\" >> " << log_ << "\n"
              "sleep 0.5\n"
              "cat " << answer << "\n"
              "echo \"end $3 $(date +%s%N)\" >> " << log_ << "\n";
    script.close();
    ASSERT_EQ(::chmod((bin_ + "/mstconfig").c_str(), 0755), 0);
    const char* path = ::getenv("PATH");
    old_path_ = path != nullptr ? path : "/usr/bin:/bin";
    ::setenv("PATH", (bin_ + ":" + old_path_).c_str(), 1);
  }
  void TearDown() override { ::setenv("PATH", old_path_.c_str(), 1); }

  // The module as on the live root: the mstconfig backend, found in PATH.
  std::vector<std::unique_ptr<Module>> Live() {
    return Modules([](HostFs&) { return NewMstconfigTool(); });
  }

  std::string bin_, log_, old_path_;
};

TEST_F(StandInMstconfigTest, PlanRunsNoQueryWithoutFirmwareFields) {
  auto modules = Live();
  DesiredState want = EveryCard(8);
  auto facts = Discover(modules, ctx_, want);
  ASSERT_TRUE(facts.ok());
  EXPECT_EQ(Errors(BuildPlan(modules, want, *facts)), "");
  EXPECT_FALSE(testing::Exists(log_)) << ReadFile(log_);
}

TEST_F(StandInMstconfigTest, LinkTypeRunsOneQueryPerCardInParallel) {
  auto modules = Live();
  DesiredState want = EveryCard(0, "eth");
  auto facts = Discover(modules, ctx_, want);
  ASSERT_TRUE(facts.ok());
  auto again = Discover(modules, ctx_, want);  // the same process asks again
  ASSERT_TRUE(again.ok());
  PlanResult plan = BuildPlan(modules, want, *again);
  EXPECT_EQ(Errors(plan), "");
  EXPECT_EQ(plan.plan.changes.size(), static_cast<size_t>(kCards));
  testing::ExpectOnceEachAtOnce(ReadFile(log_), static_cast<size_t>(kCards));
}

}  // namespace
}  // namespace provisioner
