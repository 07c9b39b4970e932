#include "engine/base/temp_dir.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace provisioner {

ScopedTempDir::~ScopedTempDir() {
  std::error_code ec;
  if (!path_.empty()) std::filesystem::remove_all(path_, ec);  // links, not their targets
}

std::string ScopedTempDir::Create(std::string_view prefix) {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/" +
                        std::string(prefix) + "-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) return "mkdtemp " + pattern + ": " + std::strerror(errno);
  path_ = pattern;
  return "";
}

}  // namespace provisioner
