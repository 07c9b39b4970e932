// apply's question (terraform's apply): asked whenever a person typed the
// command, decided on stdin and the controlling terminal, never on stdout,
// so `apply host.yaml | tee apply.log` and `apply -o json > result.json`
// still show the plan and ask.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <iostream>
#include <string>

#include "engine/cli/commands.h"

namespace provisioner::cli {

bool Interactive() {
  if (::isatty(STDIN_FILENO) != 1) return false;
  // A controlling terminal: /dev/tty opens (a daemon handed a pty as stdin
  // has none, and nobody would answer).
  const int fd = ::open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return false;
  ::close(fd);
  return true;
}

std::FILE* PromptStream(const CommonOptions& opt) {
  if (opt.output == "table" && ::isatty(STDOUT_FILENO) == 1) return stdout;
  if (::isatty(STDERR_FILENO) == 1) return stderr;
  // Both redirected (`apply f.yaml > out 2> err`): the terminal itself.
  static std::FILE* tty = std::fopen("/dev/tty", "we");
  return tty != nullptr ? tty : stderr;
}

bool Confirm(std::FILE* out, const std::string& question) {
  std::fprintf(out, "%s [y/N] ", question.c_str());
  std::fflush(out);
  std::string answer;
  if (!std::getline(std::cin, answer)) {
    std::fprintf(out, "\n");
    return false;
  }
  while (!answer.empty() && std::isspace(static_cast<unsigned char>(answer.back())))
    answer.pop_back();
  size_t start = 0;
  while (start < answer.size() && std::isspace(static_cast<unsigned char>(answer[start]))) ++start;
  answer = answer.substr(start);
  std::transform(answer.begin(), answer.end(), answer.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  return answer == "y" || answer == "yes";
}

}  // namespace provisioner::cli
