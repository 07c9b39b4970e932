// A HostFs that passes every call on to another: the base of decorators
// (tests' fault injectors, a tree posing as the live root), which override
// only what they change. ReadFilesIn and ReadAttr are not forwarded: they go
// through this object's ReadFile, so an override of ReadFile sees every read.
#ifndef PROVISIONER_ENGINE_HOST_FORWARDING_HOST_FS_H_
#define PROVISIONER_ENGINE_HOST_FORWARDING_HOST_FS_H_

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/host/host_fs.h"

namespace provisioner {

class ForwardingHostFs : public HostFs {
 public:
  explicit ForwardingHostFs(HostFs* inner) : inner_(inner) {}
  explicit ForwardingHostFs(std::unique_ptr<HostFs> owned)
      : owned_(std::move(owned)), inner_(owned_.get()) {}

  const std::string& root() const override { return inner_->root(); }
  StatusOr<std::string> ReadFile(std::string_view p) const override { return inner_->ReadFile(p); }
  StatusOr<std::vector<std::string>> ListDir(std::string_view p) const override {
    return inner_->ListDir(p);
  }
  StatusOr<std::string> ReadLink(std::string_view p) const override { return inner_->ReadLink(p); }
  StatusOr<std::string> Resolve(std::string_view p) const override { return inner_->Resolve(p); }
  bool Exists(std::string_view p) const override { return inner_->Exists(p); }
  bool IsDir(std::string_view p) const override { return inner_->IsDir(p); }
  bool IsSymlink(std::string_view p) const override { return inner_->IsSymlink(p); }
  Status WriteAttr(std::string_view p, std::string_view v) override {
    return inner_->WriteAttr(p, v);
  }
  Status WriteAt(std::string_view p, uint64_t offset, std::string_view b) override {
    return inner_->WriteAt(p, offset, b);
  }
  Status WriteFileAtomic(std::string_view p, std::string_view c, int mode) override {
    return inner_->WriteFileAtomic(p, c, mode);
  }
  Status RemoveFile(std::string_view p) override { return inner_->RemoveFile(p); }
  StatusOr<FileOwnership> StatFile(std::string_view p) const override {
    return inner_->StatFile(p);
  }
  Status SetOwner(std::string_view p, uint32_t uid, uint32_t gid) override {
    return inner_->SetOwner(p, uid, gid);
  }
  Status MakeDir(std::string_view p) override { return inner_->MakeDir(p); }
  Status RemoveDir(std::string_view p) override { return inner_->RemoveDir(p); }
  std::string FsPath(std::string_view p) const override { return inner_->FsPath(p); }
  const HostFsStats& stats() const override { return inner_->stats(); }
  // Not forwarded: a decorator's own state is not known to be thread-safe.
  bool ConcurrentReadsSafe() const override { return false; }

 protected:
  HostFs* inner() const { return inner_; }

 private:
  std::unique_ptr<HostFs> owned_;
  HostFs* inner_;
};

}  // namespace provisioner

#endif  // PROVISIONER_ENGINE_HOST_FORWARDING_HOST_FS_H_
