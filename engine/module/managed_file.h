// Managed files: the configuration files apply writes (the GRUB drop-in,
// /etc/kernel/cmdline, modules-load.d, modprobe.d, udev rules, the
// sriov-network-operator's GUID pool) and how a rollback gives back exactly
// the file that was there before.
//
// A change names the one file it writes in its detail ("managedFile"). Before
// the change runs, the engine captures that file (CaptureManagedFile: absent,
// or its bytes, permission bits, owner and group) into the journal entry of
// the change, so that the capture survives a kill -9. The inverse of the
// change (an in-process rollback, or `apply --rollback` from the journal)
// carries the capture ("restoreFile"), and the module's write restores it
// byte for byte, mode and owner included, or removes the file when there was
// none: never a re-rendering of `before`, which would lose someone else's
// file, comments and blank lines.
//
// A file written whole (ours) has a header with "written by provisioner";
// one that exists without it was someone else's: planned over, it is "taken
// over", with a warning (DeclareManagedFile). A shared file that apply edits
// in place (ib_core.conf, /etc/kernel/cmdline) is declared with
// DeclareEditedFile: captured and restored the same way, no warning.
#ifndef PROVISIONER_ENGINE_MODULE_MANAGED_FILE_H_
#define PROVISIONER_ENGINE_MODULE_MANAGED_FILE_H_

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "engine/base/status.h"
#include "engine/host/host_fs.h"
#include "engine/plan/change.h"
#include "nlohmann/json.hpp"

namespace provisioner {

inline constexpr char kManagedFileKey[] = "managedFile";
inline constexpr char kRestoreFileKey[] = "restoreFile";
// A file larger than this is not captured: the change fails before it runs.
inline constexpr size_t kMaxManagedFileBytes = size_t{1} << 20;

// True when a comment line of the file's leading comment block says
// "written by provisioner" (any case): our header.
bool WrittenByProvisioner(std::string_view content);

// Plan: `c` writes `path` whole. `current` is the file as discovered
// (nullopt: absent); one without our header gets the warning, at `field`,
// that apply takes it over and a rollback restores it.
void DeclareManagedFile(Change& c, const std::string& path,
                        const std::optional<std::string>& current, const std::string& field,
                        PlanSink& sink);
// Plan: `c` edits the shared file `path` in place.
void DeclareEditedFile(Change& c, const std::string& path);

// Engine, before the change runs: the state of the file it declares
// ({"path", "exists", "content" or "contentHex", "mode", "uid", "gid"}), or
// null when it declares none. An error (unreadable, too large) fails the
// change before anything is written.
StatusOr<nlohmann::json> CaptureManagedFile(const HostFs& fs, const Change& c);
// Engine: the inverse of a change carries what its capture found.
void AttachRestore(Change& inverse, const nlohmann::json& capture);

// The change restores `path` (it is a rollback with a capture of it).
bool RestoresManagedFile(const Change& c, std::string_view path);
// Module apply: the restoration when RestoresManagedFile, else `content`
// written with `mode` (nullopt: the file removed). A capture of another path
// than the module's own is refused.
Status WriteManagedFile(HostFs& fs, const Change& c, const std::string& path,
                        const std::optional<std::string>& content, int mode = 0644);
// Module verify of a restoration: the file is as captured (absent, or the
// same bytes, mode and owner).
Status VerifyManagedFileRestored(const HostFs& fs, const Change& c, const std::string& path);
// Module verify of a change to `path`: a restoration as
// VerifyManagedFileRestored; a removal (`after` null) holds while the file
// is absent; a write holds when `mismatch` of the file's text is nullopt,
// else its answer ("lists [..], desired [..]") ends the error
// "<field path, else id>: <path> <answer>".
using ManagedFileMismatch = std::function<std::optional<std::string>(const std::string& text)>;
Status VerifyManagedFile(const HostFs& fs, const Change& c, const std::string& path,
                         const ManagedFileMismatch& mismatch);

}  // namespace provisioner

#endif  // PROVISIONER_ENGINE_MODULE_MANAGED_FILE_H_
