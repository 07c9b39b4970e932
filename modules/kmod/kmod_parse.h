// Parsers of the kernel module text formats (strings in, no host access):
// /proc/modules, modules.dep, and our modules-load.d file.
#ifndef PROVISIONER_MODULES_KMOD_KMOD_PARSE_H_
#define PROVISIONER_MODULES_KMOD_KMOD_PARSE_H_

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "engine/base/status.h"
#include "engine/model/kmod_facts.h"

namespace provisioner {

// /proc/modules: "name size refcount used_by state address" per line, e.g.
// "ib_core 450560 7 rdma_cm,iw_cm, Live 0x0000000000000000" (used_by "-" when
// none). An unparsable line is an error naming its line number.
StatusOr<std::vector<LoadedModule>> ParseProcModules(std::string_view text);
// Renders lines back in the kernel's format (address 0, as unprivileged reads show).
std::string RenderProcModules(const std::vector<LoadedModule>& modules);

// modules.dep: "kernel/drivers/.../mlx5_ib.ko.xz: kernel/.../ib_uverbs.ko ..."
// -> {"mlx5_ib": {"ib_uverbs", ...}} (names normalized: '-' -> '_', no
// directory, no .ko[.xz|.zst|.gz]). Lines without ':' are an error.
StatusOr<std::map<std::string, std::vector<std::string>>> ParseModulesDep(std::string_view text);

// modules-load.d(5): one module name per line, '#' and ';' start comments.
std::vector<std::string> ParseModulesLoad(std::string_view text);
// Our file: a header comment, then one module per line.
std::string RenderModulesLoad(const std::vector<std::string>& modules);

// Module name of a modules.dep path: "kernel/a/mlx5-ib.ko.zst" -> "mlx5_ib".
std::string ModuleNameOfPath(std::string_view path);

}  // namespace provisioner

#endif  // PROVISIONER_MODULES_KMOD_KMOD_PARSE_H_
