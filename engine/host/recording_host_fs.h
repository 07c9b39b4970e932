// Recording what discovery reads, and copying exactly that into a tree
// (`provisioner snapshot`). The recorder is a HostFs decorator: every
// successful read, listing, link lookup and existence check through it is
// noted as the host path asked for; libraries that read the host themselves
// (libpci, libkmod) report theirs with HostFs::NoteExternalRead. The copy
// then walks each noted path component by component through the source
// HostFs, so the tree gets the same shape: every symlink on the way with its
// link text as on the host, the directories it traverses, the files' bytes.
#ifndef PROVISIONER_ENGINE_HOST_RECORDING_HOST_FS_H_
#define PROVISIONER_ENGINE_HOST_RECORDING_HOST_FS_H_

#include <map>
#include <memory>
#include <set>
#include <string>

#include "engine/base/status.h"
#include "engine/host/host_fs.h"

namespace provisioner {

// What was read, by host path as asked (links not resolved).
struct HostFsRecord {
  std::set<std::string> files;    // read (ReadFile, ReadAttr, ReadFilesIn, NoteExternalRead)
  std::set<std::string> dirs;     // listed (ListDir, NoteExternalList)
  std::set<std::string> links;    // the link itself mattered (ReadLink, IsSymlink true)
  std::set<std::string> lookups;  // existence mattered (Exists/IsDir true, Resolve)
  std::map<std::string, std::string> captures;  // NoteCapture: host path -> content
  // Reads that failed other than ENOENT (sysfs answers EINVAL for some
  // attributes): left out of the copy, so that they fail there too.
  std::set<std::string> unreadable;
};

// Reads through `inner` (not owned, must outlive it) and notes into `record`.
// Writes are refused: recording is for discovery only.
std::unique_ptr<HostFs> NewRecordingHostFs(HostFs* inner, HostFsRecord* record);

struct SnapshotStats {
  size_t files = 0;
  size_t links = 0;
  size_t dirs = 0;
  size_t placeholders = 0;  // listed entries never read: created empty
  // What the copy holds only in part, one sentence each (config space read
  // without root: 64 bytes of each function's `config`).
  std::vector<std::string> partial;
};

// Copies the recorded paths of `source` into the directory `out_dir` (must
// exist): files with their bytes, symlinks with their link text, directories;
// the entries of a listed directory that were not read themselves become
// empty files (or empty directories, or their links), so listings match;
// entries whose read failed are left out (a read fails there too).
StatusOr<SnapshotStats> WriteSnapshot(const HostFs& source, const HostFsRecord& record,
                                      const std::string& out_dir);

}  // namespace provisioner

#endif  // PROVISIONER_ENGINE_HOST_RECORDING_HOST_FS_H_
