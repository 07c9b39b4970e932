// Looking up a check sink's results in tests.
#ifndef PROVISIONER_TEST_SUPPORT_CHECK_RESULTS_H_
#define PROVISIONER_TEST_SUPPORT_CHECK_RESULTS_H_

#include <map>
#include <string>

#include "engine/module/check.h"

namespace provisioner::testing {

// The results of `sink` keyed "<id> <target>" (a later one of the same key
// replaces an earlier).
inline std::map<std::string, CheckResult> ResultsByIdAndTarget(const CheckSink& sink) {
  std::map<std::string, CheckResult> out;
  for (const CheckResult& r : sink.results()) out[r.id + " " + r.target] = r;
  return out;
}

}  // namespace provisioner::testing

#endif  // PROVISIONER_TEST_SUPPORT_CHECK_RESULTS_H_
