#include "engine/output/check_order.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace provisioner {
namespace {

CheckResult R(const std::string& id, const std::string& target, Verdict v = Verdict::kOk) {
  CheckResult r;
  r.module = id.substr(0, id.find('.'));
  r.id = id;
  r.target = target;
  r.verdict = v;
  return r;
}

std::vector<std::string> Targets(const std::vector<CheckResult>& results) {
  std::vector<std::string> out;
  for (const auto& r : results) out.push_back(r.target);
  return out;
}

// Issue 38 item 12: eth2 before eth10, mlx5_2 before mlx5_10, rail2 before
// rail10 in doctor's lists (a std::set<std::string> of netdevs gave eth10 first).
TEST(CheckOrderTest, TargetsOfOneCheckInNaturalOrder) {
  std::vector<CheckResult> results = {
      R("roce.pfc", "eth10"),           R("roce.pfc", "eth2"),
      R("rdma.port", "mlx5_10 port 1"), R("rdma.port", "mlx5_2 port 1"),
      R("rdma.port", "mlx5_1 port 1"),  R("names.netdev", "rail10"),
      R("names.netdev", "rail2"),
  };
  OrderTargetsNaturally(&results);
  EXPECT_EQ(Targets(results),
            (std::vector<std::string>{"eth2", "eth10", "mlx5_1 port 1", "mlx5_2 port 1",
                                      "mlx5_10 port 1", "rail2", "rail10"}));
}

// Only within a run of one check and verdict: failures stay first, and
// module order between checks is kept.
TEST(CheckOrderTest, RunsStayWhereTheyAre) {
  std::vector<CheckResult> results = {
      R("roce.pfc", "eth10", Verdict::kFail),
      R("rdma.port", "mlx5_0", Verdict::kFail),
      R("roce.pfc", "eth2", Verdict::kOk),
      R("roce.pfc", "eth1", Verdict::kOk),
  };
  OrderTargetsNaturally(&results);
  EXPECT_EQ(Targets(results), (std::vector<std::string>{"eth10", "mlx5_0", "eth1", "eth2"}));
}

}  // namespace
}  // namespace provisioner
