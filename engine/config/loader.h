// Loads host.yaml: YAML syntax, the JSON Schema (schemas/host.schema.json,
// compiled in), then the semantic rules, reporting every problem at once with
// the field path and source mark of each:
//   host.yaml:14:7: spec.nics[0].numVfs: 3000 exceeds the maximum 2048
// Never throws; bad input of any kind ends up as diagnostics.
#ifndef PROVISIONER_ENGINE_CONFIG_LOADER_H_
#define PROVISIONER_ENGINE_CONFIG_LOADER_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/model/desired.h"
#include "engine/model/source_mark.h"

namespace provisioner {

namespace config {
struct YamlDocument;  // engine/config/yaml_document.h
}  // namespace config

struct LoadResult {
  std::optional<DesiredState> state;    // set only when there are no errors
  std::vector<Diagnostic> diagnostics;  // errors and warnings, in file order
  MarkIndex marks;                      // also copied into state->marks
  // The document as JSON after spec.rails expansion, without spec.rails
  // (validate --show-expanded); "" when the YAML did not parse.
  std::string expanded_json;
};

struct LoadOptions {
  // The host's GPU count, for spec.rails.count: allGpus (engine/config/rails.h).
  // nullopt: such a rails block stays unexpanded (state->rails_need_gpu_count)
  // and its templates are checked on one rail.
  std::optional<int> gpu_count;
};

// `file_name` goes into state->file; diagnostics are formatted by the caller
// with FormatDiagnostic(file_name, result.marks, d).
LoadResult LoadDesiredStateFromString(std::string_view yaml, const std::string& file_name);
LoadResult LoadDesiredStateFromString(std::string_view yaml, const std::string& file_name,
                                      const LoadOptions& options);

// The same from a parsed document (the string's first step): a rails
// expansion once the GPU count is known loads DesiredState::unexpanded.
LoadResult LoadDesiredStateFromDocument(const config::YamlDocument& doc,
                                        const std::string& file_name, const LoadOptions& options);

// Diagnostics in the order a person reads them: file order (line, then
// column, of each one's field; those without a mark first), a knock-on
// error after the one it follows from (a rail's nearGpu error, attributed
// to spec.rails.count, after its nicSelector's). Loads sort theirs; plan and
// validate --root sort the ones they add with it.
void SortDiagnostics(const MarkIndex& marks, std::vector<Diagnostic>* diags);

// host.yaml as a saved plan's digest covers it: the parsed document as
// canonical JSON (comments, blank lines, quoting style and key order do not
// count; a value or its type does), or the bytes as they are when they do
// not parse.
std::string CanonicalDesiredText(std::string_view yaml);

// The largest host.yaml read (it is a few KiB).
inline constexpr size_t kMaxHostYamlBytes = size_t{4} << 20;

// An I/O error gives one diagnostic naming the path and the errno.
LoadResult LoadDesiredStateFromFile(const std::string& path);
LoadResult LoadDesiredStateFromFile(const std::string& path, const LoadOptions& options);

}  // namespace provisioner

#endif  // PROVISIONER_ENGINE_CONFIG_LOADER_H_
