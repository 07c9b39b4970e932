// Runs a piece of a test in a forked child, so what it changes about its
// process (the network or mount namespace it enters) stays the child's.
#ifndef PROVISIONER_TEST_SUPPORT_IN_CHILD_H_
#define PROVISIONER_TEST_SUPPORT_IN_CHILD_H_

#include <functional>
#include <string>

namespace provisioner::testing {

// What `body` returned in the child, sent back through a pipe. A child that
// does not exit normally fails the test (the output so far is returned).
std::string RunInChild(const std::function<std::string()>& body);

// RunInChild with the child first moved into a fresh network namespace
// with the test links (EnterTestNetns in test/support/netns.h): "SKIP <why>"
// when it cannot make one.
std::string RunInTestNetns(bool with_macvlan, const std::function<std::string()>& body);

}  // namespace provisioner::testing

#endif  // PROVISIONER_TEST_SUPPORT_IN_CHILD_H_
