// A test's file access without Status plumbing: whole contents and
// existence (a missing file reads as "", which the assertions then show), a
// write as the engine makes it to sysfs, and polling for what a simulator
// does asynchronously.
#ifndef PROVISIONER_TEST_SUPPORT_FILES_H_
#define PROVISIONER_TEST_SUPPORT_FILES_H_

#include <functional>
#include <string>

namespace provisioner::testing {

// A fresh copy of the host tree `name` (test/hosts/<name>.ttar) in a temp
// dir of that name; a failed extraction fails the test.
std::string ExtractedHostTree(const std::string& name);
// A file's whole contents, bytes as they are ("" when it cannot be read).
std::string ReadFile(const std::string& path);
// True when `path` exists (a dangling symlink counts: lstat).
bool Exists(const std::string& path);

// Like a sysfs write of the engine: open O_WRONLY|O_TRUNC, one write(),
// close; each step is a gtest assertion.
void KernelWrite(const std::string& path, const std::string& value);
// Polls `cond` every 5 ms for up to `ms`; its last value.
bool WaitFor(const std::function<bool()>& cond, int ms = 10000);

}  // namespace provisioner::testing

#endif  // PROVISIONER_TEST_SUPPORT_FILES_H_
