// --root FILE.ttar: a bundled host tree (examples/hosts/*.ttar, shipped in
// /usr/share/doc/provisioner/examples/hosts) read as it is, without Bazel's
// ttar tool: extracted into a private temporary directory that is removed
// at exit. Read-only use: apply (and plan --out, whose saved plan would name
// that directory) is refused; extract the archive to change a tree.
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "engine/base/ttar_extract.h"
#include "engine/cli/commands.h"
#include "spdlog/spdlog.h"

namespace provisioner::cli {

bool IsArchiveRoot(const std::string& root) {
  struct stat st;
  return ::stat(root.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

ArchiveRoot::~ArchiveRoot() {
  if (dir_.path().empty()) return;
  // A 0555 directory of the archive would keep its entries from removal.
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir_.path(), ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_directory(ec) && !it->is_symlink(ec)) {
      std::filesystem::permissions(it->path(), std::filesystem::perms::owner_all,
                                   std::filesystem::perm_options::add, ec);
    }
  }
}

std::string ArchiveRoot::Extract(const std::string& archive) {
  if (std::string err = dir_.Create("provisioner-root"); !err.empty()) {
    return "--root " + archive + ": " + err;
  }
  Status s = ExtractTtar(archive, dir_.path());
  if (!s.ok()) {
    return "--root " + archive +
           " is a file, read as a ttar archive (a bundled host tree): " + s.message();
  }
  spdlog::info("--root {}: ttar archive extracted into {} (read-only use, removed at exit)",
               archive, dir_.path());
  return "";
}

}  // namespace provisioner::cli
