// Extraction of ttar archives (the plain-text archive format of
// prometheus/procfs fixtures; this repository keeps its host trees in it,
// see test/hosts/README.md). Shared by the tests' host trees and by
// `--root FILE.ttar` (engine/cli), which reads a bundled tree without
// Bazel: the archive is a file a user names, so extraction refuses what
// would leave the destination (absolute paths, "..", a path through a
// symlink the archive made) and archives over 512 MiB.
//
// Format (one entry per block, blocks separated by "# ttar - - -" lines):
//   Directory: sys/bus/pci          Path: sys/bus/pci/devices/0000:af:00.0
//   Mode: 755                       SymlinkTo: ../../../devices/pci0000:af/...
//
//   Path: sys/.../vendor
//   Lines: 1
//   0x15b3
//   Mode: 444
// Content lines escape "EOF" as "\EOF", "NULLBYTE" as "\NULLBYTE" and a NUL
// byte as "NULLBYTE"; a file whose last line has no newline ends that line
// with "EOF"; an empty file is "Lines: 0". Lines starting with '#' outside
// content are comments.
#ifndef PROVISIONER_ENGINE_BASE_TTAR_EXTRACT_H_
#define PROVISIONER_ENGINE_BASE_TTAR_EXTRACT_H_

#include <cstddef>
#include <string>

#include "engine/base/status.h"

namespace provisioner {

inline constexpr size_t kMaxTtarBytes = size_t{512} << 20;

// Extracts a ttar archive into dest_dir (created if missing). Paths in the
// archive are taken relative to the archive's common top directory stripped by
// `strip` components (0 = none): with strip 1, "fixtures/sys/x" lands in
// dest_dir/sys/x and the entry "fixtures" itself is skipped. Absolute paths,
// ".." components and paths through a symlink are refused, naming
// archive:line. Directory modes are applied last, so a 0555 directory can
// still be filled.
Status ExtractTtar(const std::string& ttar_path, const std::string& dest_dir, int strip = 0);

}  // namespace provisioner

#endif  // PROVISIONER_ENGINE_BASE_TTAR_EXTRACT_H_
