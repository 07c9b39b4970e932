#!/bin/sh
# Bazel's --workspace_status_command (.bazelrc): the keys the stamped
# //engine/cli:version_stamp genrule reads from bazel-out/stable-status.txt.
# STABLE_ keys: a new commit re-stamps the binary (the build date comes from
# Bazel's own BUILD_TIMESTAMP in volatile-status.txt). Outside a git checkout,
# or without git, the commit is "unknown".
commit=$(git rev-parse --short=12 HEAD 2>/dev/null) || commit=unknown
echo "STABLE_GIT_COMMIT ${commit:-unknown}"
