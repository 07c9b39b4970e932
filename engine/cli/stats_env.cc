// PROVISIONER_STATS=<file>: at exit, the host layer's counters as one JSON
// object (benchmarks, and tests of "a no-op apply opens no file for
// writing"). Off when the variable is unset or empty. The file is output, like
// plan --out, not a host path.
#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "engine/cli/commands.h"
#include "engine/host/host_fs.h"

namespace provisioner::cli {
namespace {

// rchar and syscr of /proc/self/io: every read(2) of the process, the ones
// libpci and the loader make included (the host layer counts only its own).
// -1 when the file cannot be read.
void ProcessReads(long long& calls, long long& bytes) {
  calls = bytes = -1;
  std::FILE* io = std::fopen("/proc/self/io", "r");
  if (io == nullptr) return;
  char key[32];
  long long v = 0;
  while (std::fscanf(io, "%31[^:]: %lld\n", key, &v) == 2) {
    if (std::string(key) == "rchar") bytes = v;
    if (std::string(key) == "syscr") calls = v;
  }
  std::fclose(io);
}

void WriteStats() {
  const char* path = std::getenv("PROVISIONER_STATS");
  if (path == nullptr || *path == '\0') return;
  HostFsStats s = ProcessHostFsStats();
  struct rusage ru {};
  ::getrusage(RUSAGE_SELF, &ru);
  long long read_calls = 0, read_bytes = 0;
  ProcessReads(read_calls, read_bytes);
  std::FILE* f = std::fopen(path, "w");
  if (f == nullptr) {
    std::perror(("provisioner: PROVISIONER_STATS " + std::string(path)).c_str());
    return;
  }
  std::fprintf(f,
               "{\"filesRead\": %llu, \"bytesRead\": %llu, \"dirsListed\": %llu, "
               "\"filesOpenedForWrite\": %llu, \"failedOpens\": %llu, \"lookups\": %llu, "
               "\"resolveSteps\": %llu, \"maxRssKiB\": %ld, \"processReadCalls\": %lld, "
               "\"processBytesRead\": %lld}\n",
               static_cast<unsigned long long>(s.files_read),
               static_cast<unsigned long long>(s.bytes_read),
               static_cast<unsigned long long>(s.dirs_listed),
               static_cast<unsigned long long>(s.files_opened_for_write),
               static_cast<unsigned long long>(s.failed_opens),
               static_cast<unsigned long long>(s.lookups),
               static_cast<unsigned long long>(s.resolve_steps), ru.ru_maxrss, read_calls,
               read_bytes);
  std::fclose(f);
}

}  // namespace

void WriteStatsAtExitIfAsked() {
  const char* path = std::getenv("PROVISIONER_STATS");
  if (path != nullptr && *path != '\0') std::atexit(WriteStats);
}

}  // namespace provisioner::cli
