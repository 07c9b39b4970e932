// ttar: the plain-text archive format of prometheus/procfs fixtures, used to
// check host trees (sysfs-shaped, with ':' in names and relative symlinks)
// into the repository as single text files.
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
//
// Convention for this repository's host trees: paths start at the tree root
// ("sys/...", "proc/...", "etc/..."), no top directory; extract with strip 0.
#ifndef PROVISIONER_TEST_SUPPORT_TTAR_H_
#define PROVISIONER_TEST_SUPPORT_TTAR_H_

#include <string>

#include "engine/base/status.h"
#include "engine/base/ttar_extract.h"

namespace provisioner::testing {

// ExtractTtar(archive, dest_dir, strip): engine/base/ttar_extract.h.
using provisioner::ExtractTtar;

// Writes a tree back as ttar (sorted, deterministic), for snapshot/golden
// tests. Paths are relative to src_dir (src_dir itself is not an entry);
// entries are depth-first, directory children in byte order. Regular files,
// directories and symlinks only (anything else is an error).
Status WriteTtar(const std::string& src_dir, const std::string& ttar_path);

// The archive text WriteTtar would write.
StatusOr<std::string> TreeToTtar(const std::string& src_dir);

// Runfiles path of a data file: $TEST_SRCDIR/provisioner/<rel> (falls back to
// $RUNFILES_DIR, then to <rel> relative to the working directory).
std::string RunfilePath(const std::string& rel);

// Runfiles path of the host tree `name`: test/hosts/<name>.ttar, or
// examples/hosts/<name>.ttar for a tree kept only there (hgx-h100).
std::string HostTreePath(const std::string& name);

// A fresh temp dir under $TEST_TMPDIR (or $TMPDIR, or /tmp), named
// <prefix>.XXXXXX. Returns "" if it cannot be created.
std::string MakeTempDir(const std::string& prefix);

}  // namespace provisioner::testing

#endif  // PROVISIONER_TEST_SUPPORT_TTAR_H_
