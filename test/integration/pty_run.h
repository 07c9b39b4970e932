// Runs a command on a new pseudo-terminal (forkpty(3)): stdin, stdout and
// stderr are its slave side and it is the controlling terminal, as under
// ssh or a terminal emulator.
#ifndef PROVISIONER_TEST_INTEGRATION_PTY_RUN_H_
#define PROVISIONER_TEST_INTEGRATION_PTY_RUN_H_

#include <map>
#include <string>
#include <vector>

namespace provisioner::testing {

struct PtyResult {
  int exit_code = -1;  // -1: killed, or still running at the deadline
  std::string out;     // everything the terminal showed (echoed input too)
  bool answered = false;
};

// Runs argv on a new pseudo-terminal (`columns` wide; 0: the default) with
// `env` added to the environment. When the output first contains
// `wait_for`, types `answer` (empty: never types). Gives up after 60 s.
PtyResult RunInPty(const std::vector<std::string>& argv, const std::string& wait_for = "",
                   const std::string& answer = "",
                   const std::map<std::string, std::string>& env = {}, int columns = 0);

}  // namespace provisioner::testing

#endif  // PROVISIONER_TEST_INTEGRATION_PTY_RUN_H_
