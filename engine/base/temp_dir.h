// A scratch directory of our own (not a host path), removed with everything
// in it on destruction: libpci and libkmod read files themselves, and where
// a tree must be shown to them confined, they get a view built in here.
#ifndef PROVISIONER_ENGINE_BASE_TEMP_DIR_H_
#define PROVISIONER_ENGINE_BASE_TEMP_DIR_H_

#include <string>
#include <string_view>

namespace provisioner {

class ScopedTempDir {
 public:
  ScopedTempDir() = default;
  ~ScopedTempDir();
  ScopedTempDir(const ScopedTempDir&) = delete;
  ScopedTempDir& operator=(const ScopedTempDir&) = delete;

  // Makes $TMPDIR (else /tmp)/<prefix>-XXXXXX; "" on success, else why not.
  std::string Create(std::string_view prefix);
  // "" until Create succeeded.
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace provisioner

#endif  // PROVISIONER_ENGINE_BASE_TEMP_DIR_H_
