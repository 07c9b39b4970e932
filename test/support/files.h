// Reading a test's files: whole contents and existence, without Status
// plumbing (a missing file reads as "", which the assertions then show).
#ifndef PROVISIONER_TEST_SUPPORT_FILES_H_
#define PROVISIONER_TEST_SUPPORT_FILES_H_

#include <string>

namespace provisioner::testing {

// A file's whole contents, bytes as they are ("" when it cannot be read).
std::string ReadFile(const std::string& path);
// True when `path` exists (a dangling symlink counts: lstat).
bool Exists(const std::string& path);

}  // namespace provisioner::testing

#endif  // PROVISIONER_TEST_SUPPORT_FILES_H_
