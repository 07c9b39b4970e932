// Runs one command and measures it: wall time from fork to wait4, and the
// child's peak RSS from wait4's rusage. A small exec'd process of its own, so
// that the child's RSS high-water mark starts from this program's few
// hundred KiB, not from the (Python) runner's: Linux carries the mark of the
// forking process's memory across exec.
//   spawn OUT ERR PROGRAM [ARG...]
// Prints {"seconds": S, "maxRssKiB": N, "exit": CODE} (CODE -1: killed).
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: spawn OUT ERR PROGRAM [ARG...]\n");
    return 2;
  }
  int out = ::open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  int err = ::open(argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (out < 0 || err < 0) {
    std::perror("spawn: open");
    return 2;
  }
  const auto start = std::chrono::steady_clock::now();
  pid_t pid = ::fork();
  if (pid < 0) {
    std::perror("spawn: fork");
    return 2;
  }
  if (pid == 0) {
    ::dup2(out, 1);
    ::dup2(err, 2);
    ::execv(argv[3], argv + 3);
    std::perror(argv[3]);
    ::_exit(127);
  }
  int status = 0;
  struct rusage ru {};
  if (::wait4(pid, &status, 0, &ru) < 0) {
    std::perror("spawn: wait4");
    return 2;
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::printf("{\"seconds\": %.6f, \"maxRssKiB\": %ld, \"exit\": %d}\n", seconds, ru.ru_maxrss,
              code);
  return 0;
}
