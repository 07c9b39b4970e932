// apply -o json after a failure tells the truth (issue 38 item 3): every
// planned change once with its status at exit (applied, rolled-back,
// rollback-failed, failed, not-attempted) and a summary of the host at exit.
// It said `summary.applied: 1` for a change it had rolled back, listed it as
// "applied", and left out the changes it never attempted. The real binary
// with the kernel simulator daemon, refusing one PF's sriov_numvfs.
#include <string>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "test/integration/harness.h"

namespace provisioner::testing {
namespace {

using nlohmann::json;

const std::string kTwoPfs = TwoPfsYaml();

// apply at parallelism 1 (plan order: PF0, then PF1) with `faulty`'s count
// refused (EBUSY); its JSON document.
json ApplyWithRefusedPf(const std::string& faulty) {
  std::string root = ExtractHost("cx5-roce");
  KernelSimDaemon sim(root, /*netdev_delay_ms=*/20, {"--fault", faulty + "=EBUSY"});
  EXPECT_TRUE(sim.ready());
  RunResult r = Provisioner({"apply", WriteTempFile("host.yaml", kTwoPfs), "--root", root,
                             "--parallelism", "1", "-o", "json"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  json doc = json::parse(r.out, nullptr, false);
  EXPECT_TRUE(doc.is_object()) << r.out << r.err;
  for (const char* pf : {"0000:af:00.0", "0000:af:00.1"}) {
    EXPECT_EQ(ReadFile(root + "/sys/bus/pci/devices/" + pf + "/sriov_numvfs"), "0\n") << pf;
  }
  return doc.is_object() ? doc : json::object();
}

std::vector<std::string> Statuses(const json& doc) {
  std::vector<std::string> out;
  for (const json& c : doc.value("changes", json::array())) {
    out.push_back(c.value("id", "") + " " + c.value("status", ""));
  }
  return out;
}

TEST(ApplyJsonTest, AChangeUndoneIsRolledBackAndNotCountedApplied) {
  json doc = ApplyWithRefusedPf("0000:af:00.1");
  EXPECT_EQ(Statuses(doc), (std::vector<std::string>{"sriov/0000:af:00.0/numVfs rolled-back",
                                                     "sriov/0000:af:00.1/numVfs failed"}))
      << doc.dump(2);
  const json& s = doc["summary"];
  EXPECT_EQ(s.value("applied", -1), 0) << s.dump();
  EXPECT_EQ(s.value("rolledBack", -1), 1) << s.dump();
  EXPECT_EQ(s.value("failed", -1), 1) << s.dump();
  EXPECT_EQ(s.value("notAttempted", -1), 0) << s.dump();
  EXPECT_EQ(s.value("rollbackFailed", -1), 0) << s.dump();
  EXPECT_EQ(doc["rolledBack"].size(), 2u) << doc.dump(2);  // the inverse changes run
}

TEST(ApplyJsonTest, AChangeNeverStartedIsNotAttempted) {
  json doc = ApplyWithRefusedPf("0000:af:00.0");
  EXPECT_EQ(Statuses(doc), (std::vector<std::string>{"sriov/0000:af:00.0/numVfs failed",
                                                     "sriov/0000:af:00.1/numVfs not-attempted"}))
      << doc.dump(2);
  EXPECT_EQ(doc["summary"].value("applied", -1), 0);
  EXPECT_EQ(doc["summary"].value("notAttempted", -1), 1);
  EXPECT_EQ(doc["summary"].value("changes", -1), 2);
}

// Issue 36 item 8: durations are finite and at most 24 h. `nan` and `1e30`
// passed the old check (nan > 0 is false, so "not <= 0") and overflowed the
// milliseconds to 0 or below: a settle wait that failed at once.
TEST(ApplyDurationsTest, NonFiniteOrHugeDurationsAreRefusedWithTheRange) {
  std::string root = ExtractHost("cx5-roce");
  std::string yaml = WriteTempFile("host.yaml", kTwoPfs);
  for (const char* opt : {"--settle-timeout", "--lock-timeout"}) {
    for (const char* bad : {"nan", "inf", "1e30", "86401", "-1"}) {
      SCOPED_TRACE(std::string(opt) + " " + bad);
      RunResult r = Provisioner({"apply", yaml, "--root", root, "--dry-run", opt, bad});
      EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
      EXPECT_NE(r.err.find("up to 86400 (24 h)"), std::string::npos) << r.err;
    }
  }
  RunResult ok = Provisioner(
      {"apply", yaml, "--root", root, "--dry-run", "--settle-timeout", "86400", "-o", "json"});
  EXPECT_EQ(ok.exit_code, 0) << ok.out << ok.err;
}

}  // namespace
}  // namespace provisioner::testing
