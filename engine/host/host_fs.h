// The host layer: every read and write of a host path goes through a HostFs.
// Paths are host paths ("/sys/bus/pci/devices/0000:af:00.0/vendor"); they are
// resolved under the root (--root, default "/"). Symlinks are followed inside
// the root only: an absolute link target is re-rooted, and a link or ".." that
// would leave the root is an error (EXDEV), never a read of the real host.
#ifndef PROVISIONER_ENGINE_HOST_HOST_FS_H_
#define PROVISIONER_ENGINE_HOST_HOST_FS_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/base/status.h"

namespace provisioner {

// Counters for benchmarks and for "a no-op apply opens no file for writing".
struct HostFsStats {
  uint64_t files_read = 0;
  uint64_t bytes_read = 0;
  uint64_t dirs_listed = 0;
  uint64_t files_opened_for_write = 0;
  // Reads and listings that failed (a missing optional attribute: ENOENT).
  uint64_t failed_opens = 0;
  // Exists / IsDir / IsSymlink / ReadLink / Resolve calls.
  uint64_t lookups = 0;
  // lstat+readlink steps of the user-space symlink walk (trees only; the
  // kernel resolves most paths with openat2(RESOLVE_BENEATH) instead).
  uint64_t resolve_steps = 0;
};

class HostFs {
 public:
  virtual ~HostFs() = default;

  // The root directory as given ("/" on the live host).
  virtual const std::string& root() const = 0;
  // For the backend factories only (modules/*/..._backend_factory.cc).
  bool IsLiveRoot() const { return root() == "/"; }
  // Is what is missing under the directory `dir` absent from the host, or
  // just not captured? The live root holds everything: always true. A tree
  // holds what its capture took: true when it holds `dir` itself (a tree
  // with /dev captured has no /dev/infiniband because the host had none).
  // Modules ask this, never which root they run on.
  bool Captured(std::string_view dir) const { return IsLiveRoot() || Exists(dir); }

  // Whole file contents. Only a regular file is read (a FIFO, device node or
  // socket where a file is expected is refused, naming the path), and at
  // most kMaxSysfsRead bytes under /sys/, kMaxFileRead elsewhere.
  virtual StatusOr<std::string> ReadFile(std::string_view path) const = 0;
  static constexpr size_t kMaxSysfsRead = size_t{64} * 1024;
  static constexpr size_t kMaxFileRead = size_t{16} * 1024 * 1024;
  // A sysfs attribute: contents with trailing whitespace/newline removed.
  StatusOr<std::string> ReadAttr(std::string_view path) const;
  // The files `names` (single path components) of the directory `dir`, each
  // as ReadFile(dir + "/" + name) would give it, with `dir` resolved once:
  // for tables of many small files (a GID table is 256 per port).
  virtual std::vector<StatusOr<std::string>> ReadFilesIn(
      std::string_view dir, const std::vector<std::string>& names) const;
  // The same for files known to be small (counters: a number and a newline),
  // read faster: the first `max_bytes` (at most kMaxSmallRead) of each in
  // one read(2), without ReadFile's fstat. A file that is not regular is
  // not refused by name; it never blocks or fills memory either (opened
  // non-blocking, one bounded read), and gives whatever that read gives.
  virtual std::vector<StatusOr<std::string>> ReadSmallFilesIn(std::string_view dir,
                                                              const std::vector<std::string>& names,
                                                              size_t max_bytes) const;
  static constexpr size_t kMaxSmallRead = 256;
  // Entry names (no "." or ".."), in natural order (NaturalLess,
  // engine/base/strings.h: eth2 before eth10, virtfn2 before virtfn10).
  virtual StatusOr<std::vector<std::string>> ListDir(std::string_view path) const = 0;
  // The raw target of a symlink (as readlink(2) gives it).
  virtual StatusOr<std::string> ReadLink(std::string_view path) const = 0;
  // The canonical host path (inside the root) that `path` designates, all
  // links followed. Fails EXDEV when a link escapes the root.
  virtual StatusOr<std::string> Resolve(std::string_view path) const = 0;
  // Last component of the link's resolved target ("mlx5_core" for .../driver).
  StatusOr<std::string> LinkBasename(std::string_view path) const;
  virtual bool Exists(std::string_view path) const = 0;
  virtual bool IsDir(std::string_view path) const = 0;
  virtual bool IsSymlink(std::string_view path) const = 0;

  // A sysfs-style write: open for writing, write `value` in one write(2),
  // report the errno the kernel returns. No temp file, no rename.
  virtual Status WriteAttr(std::string_view path, std::string_view value) = 0;
  // A positioned write into an existing file: one pwrite(2) of `bytes` at
  // `offset`, the rest of the file untouched (no truncation, no temp file).
  // For sysfs binary attributes: PCI `config` space, written as setpci and
  // libpci's sysfs method write it (the kernel's pci_write_config on the
  // live root; the captured file under a tree root).
  virtual Status WriteAt(std::string_view path, uint64_t offset, std::string_view bytes) = 0;
  // A config file write: temp file in the same directory + fsync + rename,
  // creating missing parent directories.
  virtual Status WriteFileAtomic(std::string_view path, std::string_view content,
                                 int mode = 0644) = 0;
  virtual Status RemoveFile(std::string_view path) = 0;
  // Permission bits, owner and group of a file (links followed inside the
  // root), and setting its owner and group: what a rollback restores of a
  // file it replaced (engine/module/managed_file.h). The defaults answer
  // ENOTSUP, for decorators and fakes that hold no such thing.
  struct FileOwnership {
    uint32_t mode = 0;  // permission bits (07777)
    uint32_t uid = 0;
    uint32_t gid = 0;
  };
  virtual StatusOr<FileOwnership> StatFile(std::string_view path) const;
  virtual Status SetOwner(std::string_view path, uint32_t uid, uint32_t gid);
  // One directory: mkdir(2) (mode 0755, the parent must exist; EEXIST when
  // it does) and rmdir(2), both confined to the root like every write. For
  // configfs groups (/sys/kernel/config/rdma_cm/<dev>), where a mkdir asks
  // the kernel to make the group and its files. Host layers that cannot
  // (the snapshot recorder) refuse.
  virtual Status MakeDir(std::string_view path);
  virtual Status RemoveDir(std::string_view path);

  // The filesystem path of a host path, for libraries that take a directory
  // (libpci's sysfs.path, libkmod's dirname). Not resolved.
  virtual std::string FsPath(std::string_view path) const = 0;

  virtual const HostFsStats& stats() const = 0;

  // For `snapshot` (engine/host/recording_host_fs.h): a library that reads
  // the host itself (libpci, libkmod) reports each host path it read, and a
  // module whose facts come from a command (not a file) the host path and
  // content a tree would hold instead. No-ops unless recording.
  virtual void NoteExternalRead(std::string_view path) const { (void)path; }
  virtual void NoteExternalList(std::string_view dir) const { (void)dir; }
  virtual void NoteCapture(std::string_view path, std::string_view content) const {
    (void)path;
    (void)content;
  }
  // True while recording: callers skip the lookups that only serve the notes
  // above (the pci module's per-function Exists of libpci's files: 11 x 2048
  // lookups on a 16 PF x 127 VF host).
  virtual bool IsRecording() const { return false; }
  // True when the const read calls (ReadFile, ReadFilesIn, ListDir, ReadLink,
  // Resolve, Exists, ...) may run from several threads at once. The local
  // implementation is; decorators (the snapshot recorder, test wrappers) are
  // not unless they say so. Discovery reads in parallel only then.
  virtual bool ConcurrentReadsSafe() const { return false; }
};

// The real implementation over the local filesystem.
std::unique_ptr<HostFs> NewLocalHostFs(std::string root);

// The sum of the stats of every local HostFs of this process so far, also the
// ones already destroyed (PROVISIONER_STATS, benchmarks; see docs/BENCHMARKS.md).
HostFsStats ProcessHostFsStats();

// Joins host path components: JoinPath("/sys/class", "net") == "/sys/class/net".
std::string JoinPath(std::string_view a, std::string_view b);
// Last path component.
std::string_view Basename(std::string_view path);
// Parent host path ("/a/b" -> "/a", "/a" -> "/").
std::string_view Dirname(std::string_view path);

// The entries of a directory; none when it is not one (a device without
// net/ or infiniband/) or cannot be listed.
std::vector<std::string> ListDirIfPresent(const HostFs& fs, const std::string& path);

// The basename of a link's target (driver, physfn, virtfnN); "" when `path`
// is no link or cannot be read.
std::string LinkBasenameIfPresent(const HostFs& fs, const std::string& path);

// The netdevs of a device (<device_dir>/net/*) that /sys/class/net lists:
// registered ones. A netdev's directory under its device appears before its
// class link (device_add() makes the one, then the other), and whatever runs
// next (links, RDMA, Multus) finds it by name under /sys/class/net.
std::vector<std::string> RegisteredNetdevs(const HostFs& fs, const std::string& device_dir);

// 16 hex digits from getrandom(2): the name of a temporary file nobody can
// guess and plant first (a pid can be: `sh -c '...; exec provisioner'`).
std::string RandomFileSuffix();

}  // namespace provisioner

#endif  // PROVISIONER_ENGINE_HOST_HOST_FS_H_
