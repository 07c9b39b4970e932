// Doctor's results in the order a person reads a list: the targets of one
// check in natural order (eth2 before eth10, mlx5_2 before mlx5_10, rail2
// before rail10), whatever order the module found them in (a std::set of
// names, a directory listing).
#ifndef PROVISIONER_ENGINE_OUTPUT_CHECK_ORDER_H_
#define PROVISIONER_ENGINE_OUTPUT_CHECK_ORDER_H_

#include <vector>

#include "engine/module/check.h"

namespace provisioner {

// Within each run of adjacent results of the same check (module, id and
// verdict), the results by NaturalLess of their targets (engine/base/strings.h);
// the runs themselves stay where they are (verdict, then module order).
void OrderTargetsNaturally(std::vector<CheckResult>* results);

}  // namespace provisioner

#endif  // PROVISIONER_ENGINE_OUTPUT_CHECK_ORDER_H_
