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

// What modprobe.d(5) files say, kind by kind, in the order read.
struct ModprobeConf {
  std::vector<ModprobeEntry> options;
  std::vector<std::string> blacklist;
  std::vector<ModprobeEntry> install;
  std::vector<ModprobeEntry> remove;
  std::vector<ModprobeEntry> softdeps;  // value as libkmod's iterator gives it
  std::vector<ModprobeEntry> aliases;   // module: the alias pattern, value: the module
};

// Appends what one modprobe.d file says to `conf`, as libkmod 30 reads it
// (libkmod-config.c kmod_config_parse, shared/util.c freadline_wrapped and
// underscores; checked against libkmod itself in kmod_host_test): a
// backslash-newline joins lines (another backslash is dropped), a line
// starting with '#' is a comment, fields split at spaces and tabs; module
// names get '-' as '_' outside [...]; `options`/`install`/`remove`/`softdep`
// take the rest of the line after the one separator that follows the module
// name (tabs in options as spaces); a malformed line and `include`/`config`
// are ignored, as libkmod does. Only the files: never the kernel command
// line, which libkmod's kmod_new() adds from the running machine's
// /proc/cmdline (issue 26, item 14).
void ParseModprobeConf(std::string_view text, ModprobeConf* conf);

// Module name of a modules.dep path: "kernel/a/mlx5-ib.ko.zst" -> "mlx5_ib".
std::string ModuleNameOfPath(std::string_view path);

}  // namespace provisioner

#endif  // PROVISIONER_MODULES_KMOD_KMOD_PARSE_H_
