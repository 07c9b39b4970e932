// The syscall floor: opens and reads exactly the files (and lists exactly the
// directories) that a traced discovery run opened, nothing else. The list is
// made beforehand (bench/run traces discovery with strace); only the loop is
// timed here.
//   floor LIST        LIST: lines "F <path>" (file) or "D <path>" (directory)
// Prints one JSON object: {"seconds": ..., "files": N, "dirs": N, "bytes": N}.
#include <dirent.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: floor LIST\n");
    return 1;
  }
  std::ifstream in(argv[1]);
  if (!in) {
    std::perror(argv[1]);
    return 1;
  }
  std::vector<std::pair<bool, std::string>> entries;  // (is_dir, path)
  std::string line;
  while (std::getline(in, line)) {
    if (line.size() < 3 || line[1] != ' ') continue;
    entries.emplace_back(line[0] == 'D', line.substr(2));
  }
  static char buf[1 << 16];
  unsigned long long bytes = 0, files = 0, dirs = 0;
  const auto start = std::chrono::steady_clock::now();
  for (const auto& [is_dir, path] : entries) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | (is_dir ? O_DIRECTORY : 0));
    if (fd < 0) continue;
    if (is_dir) {
      // What readdir does: getdents64 until it returns 0.
      while (::syscall(SYS_getdents64, fd, buf, sizeof buf) > 0) {
      }
      ++dirs;
    } else {
      for (;;) {
        ssize_t n = ::read(fd, buf, sizeof buf);
        if (n <= 0) break;
        bytes += static_cast<unsigned long long>(n);
      }
      ++files;
    }
    ::close(fd);
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("{\"seconds\": %.6f, \"files\": %llu, \"dirs\": %llu, \"bytes\": %llu}\n", seconds,
              files, dirs, bytes);
  return 0;
}
