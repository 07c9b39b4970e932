// The log a stand-in tool writes in tests ("start <device> <ns>" and
// "end <device> <ns>" a line, from a shell script in PATH), and what tests
// ask of it: which devices it was called for, and whether the calls ran at
// once.
#ifndef PROVISIONER_TEST_SUPPORT_CALL_LOG_H_
#define PROVISIONER_TEST_SUPPORT_CALL_LOG_H_

#include <algorithm>
#include <cstddef>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace provisioner::testing {

// Device -> (start ns, end ns) of each call, in log order.
using CallSpans = std::map<std::string, std::vector<std::pair<long long, long long>>>;

inline CallSpans ReadCallLog(const std::string& log) {
  CallSpans out;
  std::istringstream in(log);
  std::string what, dev;
  long long ns = 0;
  while (in >> what >> dev >> ns) {
    if (what == "start") out[dev].emplace_back(ns, 0);
    if (what == "end" && !out[dev].empty()) out[dev].back().second = ns;
  }
  return out;
}

// `devices` devices called once each, all calls at once (each started
// before any ended).
inline void ExpectOnceEachAtOnce(const std::string& log, size_t devices) {
  const CallSpans calls = ReadCallLog(log);
  ASSERT_EQ(calls.size(), devices) << log;
  long long last_start = 0, first_end = -1;
  for (const auto& [dev, runs] : calls) {
    ASSERT_EQ(runs.size(), 1u) << dev << " queried more than once:\n" << log;
    last_start = std::max(last_start, runs[0].first);
    first_end = first_end < 0 ? runs[0].second : std::min(first_end, runs[0].second);
  }
  EXPECT_LT(last_start, first_end) << "queries ran one after the other:\n" << log;
}

}  // namespace provisioner::testing

#endif  // PROVISIONER_TEST_SUPPORT_CALL_LOG_H_
