#include "engine/output/check_order.h"

#include <algorithm>

#include "engine/base/strings.h"

namespace provisioner {

void OrderTargetsNaturally(std::vector<CheckResult>* results) {
  auto same_check = [](const CheckResult& a, const CheckResult& b) {
    return a.module == b.module && a.id == b.id && a.verdict == b.verdict;
  };
  for (auto run = results->begin(); run != results->end();) {
    auto end = run + 1;
    while (end != results->end() && same_check(*run, *end)) ++end;
    std::stable_sort(run, end, [](const CheckResult& a, const CheckResult& b) {
      return NaturalLess(a.target, b.target);
    });
    run = end;
  }
}

}  // namespace provisioner
