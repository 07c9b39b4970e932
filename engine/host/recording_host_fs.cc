#include "engine/host/recording_host_fs.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <optional>
#include <utility>
#include <vector>

#include "engine/base/fd_io.h"

namespace provisioner {
namespace {

class RecordingHostFs final : public HostFs {
 public:
  RecordingHostFs(HostFs* inner, HostFsRecord* record) : inner_(inner), record_(record) {}

  const std::string& root() const override { return inner_->root(); }

  StatusOr<std::string> ReadFile(std::string_view path) const override {
    auto r = inner_->ReadFile(path);
    Note(path, r.status());
    return r;
  }
  std::vector<StatusOr<std::string>> ReadFilesIn(
      std::string_view dir, const std::vector<std::string>& names) const override {
    auto out = inner_->ReadFilesIn(dir, names);
    for (size_t i = 0; i < out.size() && i < names.size(); ++i) {
      Note(JoinPath(dir, names[i]), out[i].status());
    }
    return out;
  }
  StatusOr<std::vector<std::string>> ListDir(std::string_view path) const override {
    auto r = inner_->ListDir(path);
    if (r.ok()) record_->dirs.emplace(path);
    return r;
  }
  StatusOr<std::string> ReadLink(std::string_view path) const override {
    auto r = inner_->ReadLink(path);
    if (r.ok()) record_->links.emplace(path);
    return r;
  }
  StatusOr<std::string> Resolve(std::string_view path) const override {
    auto r = inner_->Resolve(path);
    if (r.ok() && inner_->Exists(path)) record_->lookups.emplace(path);
    return r;
  }
  bool Exists(std::string_view path) const override {
    bool r = inner_->Exists(path);
    if (r) record_->lookups.emplace(path);
    return r;
  }
  bool IsDir(std::string_view path) const override {
    bool r = inner_->IsDir(path);
    if (r) record_->lookups.emplace(path);
    return r;
  }
  bool IsSymlink(std::string_view path) const override {
    bool r = inner_->IsSymlink(path);
    // A "no" matters too when the path exists (a directory, not a link).
    if (r) {
      record_->links.emplace(path);
    } else if (inner_->Exists(path)) {
      record_->lookups.emplace(path);
    }
    return r;
  }
  Status WriteAttr(std::string_view path, std::string_view) override { return Refuse(path); }
  Status WriteFileAtomic(std::string_view path, std::string_view, int) override {
    return Refuse(path);
  }
  Status WriteAt(std::string_view path, uint64_t, std::string_view) override {
    return Refuse(path);
  }
  Status RemoveFile(std::string_view path) override { return Refuse(path); }
  Status MakeDir(std::string_view path) override { return Refuse(path); }
  Status RemoveDir(std::string_view path) override { return Refuse(path); }
  std::string FsPath(std::string_view path) const override { return inner_->FsPath(path); }
  const HostFsStats& stats() const override { return inner_->stats(); }

  bool IsRecording() const override { return true; }
  void NoteExternalRead(std::string_view path) const override { record_->files.emplace(path); }
  void NoteExternalList(std::string_view dir) const override { record_->dirs.emplace(dir); }
  void NoteCapture(std::string_view path, std::string_view content) const override {
    record_->captures[std::string(path)] = std::string(content);
  }

 private:
  void Note(std::string_view path, const Status& s) const {
    if (s.ok()) {
      record_->files.emplace(path);
    } else if (s.err() != 0 && s.err() != ENOENT) {
      record_->unreadable.emplace(path);
    }
  }
  static Status Refuse(std::string_view path) {
    return FailedPreconditionError("write " + std::string(path) +
                                   ": refused while recording discovery (snapshot)");
  }
  HostFs* inner_;
  HostFsRecord* record_;
};

// The copy into the output tree (our own directory, not a host path).
class Copier {
 public:
  Copier(const HostFs& src, std::string out) : src_(src), out_(std::move(out)) {}

  // Walks `path` like the kernel, through the source: every symlink met is
  // recreated with its text; returns the resolved host path (no links).
  StatusOr<std::string> Walk(std::string_view path, bool follow_last) {
    std::vector<std::string> todo;
    Split(path, &todo);
    std::string done = "/";
    int links = 0;
    while (!todo.empty()) {
      std::string comp = std::move(todo.back());
      todo.pop_back();
      if (comp == ".") continue;
      if (comp == "..") {
        done = std::string(Dirname(done));
        continue;
      }
      std::string cand = JoinPath(done, comp);
      if (todo.empty() && !follow_last) return cand;
      if (src_.IsSymlink(cand)) {
        if (++links > 40) return ErrnoToStatus(ELOOP, "snapshot: resolve " + std::string(path));
        ASSIGN_OR_RETURN(std::string text, src_.ReadLink(cand));
        RETURN_IF_ERROR(MakeLink(cand, text));
        if (!text.empty() && text[0] == '/') done = "/";
        Split(text, &todo);
        continue;
      }
      if (!todo.empty()) RETURN_IF_ERROR(MakeDirs(cand));
      done = cand;
    }
    return done;
  }

  Status CopyFile(const std::string& path, std::optional<std::string> content = std::nullopt) {
    ASSIGN_OR_RETURN(std::string real, Walk(path, true));
    if (copied_.count(real)) return OkStatus();
    if (!content) {
      auto r = src_.ReadFile(real);
      // A dangling link (a *.conf in modprobe.d pointing nowhere): Walk has
      // recreated the link; the snapshot holds it as the host does.
      if (!r.ok() && r.status().err() == ENOENT && src_.IsSymlink(std::string(path))) {
        return OkStatus();
      }
      if (!r.ok()) return r.status().WithContext("snapshot");
      content = *r;
    }
    RETURN_IF_ERROR(MakeDirs(std::string(Dirname(real))));
    RETURN_IF_ERROR(WriteOut(real, *content, O_TRUNC));
    copied_.insert(real);
    ++stats_.files;
    return OkStatus();
  }

  // Host paths (resolved) whose reads failed: no placeholder for them.
  std::set<std::string> skip;

  Status CopyDir(const std::string& path) {
    ASSIGN_OR_RETURN(std::string real, Walk(path, true));
    RETURN_IF_ERROR(MakeDirs(real));
    ASSIGN_OR_RETURN(std::vector<std::string> names, src_.ListDir(real));
    for (const std::string& n : names) {
      std::string p = JoinPath(real, n);
      if (src_.IsSymlink(p)) {
        ASSIGN_OR_RETURN(std::string text, src_.ReadLink(p));
        RETURN_IF_ERROR(MakeLink(p, text));
      } else if (src_.IsDir(p)) {
        RETURN_IF_ERROR(MakeDirs(p));
      } else if (!copied_.count(p) && !skip.count(p)) {
        // Listed, not read (yet): present, empty. A later real copy overwrites it.
        Status s = WriteOut(p, "", O_EXCL);
        if (s.ok())
          ++stats_.placeholders;
        else if (s.err() != EEXIST)
          return s;
      }
    }
    return OkStatus();
  }

  // The link itself (its parent directories walked), not what it points to.
  Status CopyLink(const std::string& path) {
    ASSIGN_OR_RETURN(std::string at, Walk(path, false));
    if (!src_.IsSymlink(at)) return OkStatus();
    ASSIGN_OR_RETURN(std::string text, src_.ReadLink(at));
    return MakeLink(at, text);
  }

  Status CopyLookup(const std::string& path) {
    ASSIGN_OR_RETURN(std::string real, Walk(path, true));
    if (src_.IsDir(real)) return MakeDirs(real);
    if (copied_.count(real)) return OkStatus();
    auto r = src_.ReadFile(real);  // existence mattered; keep the bytes when readable
    RETURN_IF_ERROR(MakeDirs(std::string(Dirname(real))));
    RETURN_IF_ERROR(WriteOut(real, r.ok() ? *r : std::string(), O_TRUNC));
    copied_.insert(real);
    ++stats_.files;
    return OkStatus();
  }

  const SnapshotStats& stats() const { return stats_; }

 private:
  static void Split(std::string_view path, std::vector<std::string>* stack) {
    std::vector<std::string> parts;
    size_t i = 0;
    while (i < path.size()) {
      while (i < path.size() && path[i] == '/') ++i;
      size_t j = path.find('/', i);
      if (j == std::string_view::npos) j = path.size();
      if (j > i) parts.emplace_back(path.substr(i, j - i));
      i = j;
    }
    for (auto it = parts.rbegin(); it != parts.rend(); ++it) stack->push_back(*it);
  }

  std::string Out(std::string_view host_path) const { return JoinPath(out_, host_path); }

  Status MakeDirs(const std::string& host_path) {
    if (host_path == "/" || host_path.empty() || dirs_.count(host_path)) return OkStatus();
    RETURN_IF_ERROR(MakeDirs(std::string(Dirname(host_path))));
    std::string p = Out(host_path);
    if (::mkdir(p.c_str(), 0755) != 0 && errno != EEXIST) {
      return ErrnoToStatus(errno, "snapshot: mkdir " + p);
    }
    if (dirs_.insert(host_path).second) ++stats_.dirs;
    return OkStatus();
  }

  Status MakeLink(const std::string& host_path, const std::string& text) {
    if (links_.count(host_path)) return OkStatus();
    RETURN_IF_ERROR(MakeDirs(std::string(Dirname(host_path))));
    std::string p = Out(host_path);
    if (::symlink(text.c_str(), p.c_str()) != 0 && errno != EEXIST) {
      return ErrnoToStatus(errno, "snapshot: symlink " + p + " -> " + text);
    }
    links_.insert(host_path);
    ++stats_.links;
    return OkStatus();
  }

  Status WriteOut(const std::string& host_path, std::string_view content, int extra_flags) {
    std::string p = Out(host_path);
    const char* step = "";
    if (int e = WriteFile(p, O_NOFOLLOW | extra_flags, content, &step); e != 0) {
      return ErrnoToStatus(e, "snapshot: write " + p);
    }
    return OkStatus();
  }

  const HostFs& src_;
  std::string out_;
  std::set<std::string> dirs_, links_, copied_;
  SnapshotStats stats_;
};

}  // namespace

std::unique_ptr<HostFs> NewRecordingHostFs(HostFs* inner, HostFsRecord* record) {
  return std::make_unique<RecordingHostFs>(inner, record);
}

StatusOr<SnapshotStats> WriteSnapshot(const HostFs& source, const HostFsRecord& record,
                                      const std::string& out_dir) {
  Copier c(source, out_dir);
  for (const auto& p : record.unreadable) {
    auto real = source.Resolve(p);
    c.skip.insert(real.ok() ? *real : p);
  }
  // Files first, so that listings only add placeholders for what was not read.
  for (const auto& p : record.files) RETURN_IF_ERROR(c.CopyFile(p));
  for (const auto& [p, content] : record.captures) {
    RETURN_IF_ERROR(c.CopyFile(p, content));
  }
  for (const auto& p : record.links) RETURN_IF_ERROR(c.CopyLink(p));
  for (const auto& p : record.lookups) RETURN_IF_ERROR(c.CopyLookup(p));
  for (const auto& p : record.dirs) RETURN_IF_ERROR(c.CopyDir(p));
  return c.stats();
}

}  // namespace provisioner
