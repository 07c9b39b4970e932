// The user-space walk of a host path under a captured tree's root: symlinks
// followed as the kernel would, but with the root as "/" (an absolute link is
// re-rooted, ".." never leaves the root). LocalHostFs (local_host_fs.cc) uses
// it where openat2(RESOLVE_BENEATH) is not to be had or refuses a path.
#ifndef PROVISIONER_ENGINE_HOST_ROOT_WALK_H_
#define PROVISIONER_ENGINE_HOST_ROOT_WALK_H_

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/base/status.h"

namespace provisioner {

// "/a//b/" -> {"a", "b"}
std::vector<std::string> SplitComponents(std::string_view path);

// The host path `path` (absolute) resolves to under `root` ("/" for the live
// root), following the last component's link when `follow_last`. Missing
// components are kept as they are (the caller's open() reports ENOENT).
// EXDEV when ".." would leave the root, ELOOP after 40 links. `on_step` is
// called once per lstat (the stats' resolve_steps).
StatusOr<std::string> WalkBeneathRoot(const std::string& root, std::string_view path,
                                      bool follow_last, const std::function<void()>& on_step);

}  // namespace provisioner

#endif  // PROVISIONER_ENGINE_HOST_ROOT_WALK_H_
