// Checks a converted host.yaml against schemas/host.schema.json (compiled in)
// with valijson, strict types. Every unknown field is reported (valijson
// names only the first per object), cascades from parents are dropped, and
// messages are rewritten from the schema and the value:
//   spec.nics[0].numVfs: expected an integer, got string "abc"
//   spec.nics[0].numVF: unknown field "numVF" (did you mean "numVfs"?)
#ifndef PROVISIONER_ENGINE_CONFIG_SCHEMA_CHECK_H_
#define PROVISIONER_ENGINE_CONFIG_SCHEMA_CHECK_H_

#include <set>
#include <string>
#include <vector>

#include "engine/config/yaml_document.h"
#include "engine/model/source_mark.h"

namespace provisioner::config {

struct SchemaCheckResult {
  std::vector<Diagnostic> diagnostics;
  // Field paths whose value is unusable (wrong, missing or unknown), so that
  // later checks skip rules that read them instead of piling up cascades.
  std::set<std::string> tainted;
};

// Sets the mark of each unknown field to its key's mark in doc->marks.
SchemaCheckResult CheckAgainstSchema(YamlDocument* doc);

}  // namespace provisioner::config

#endif  // PROVISIONER_ENGINE_CONFIG_SCHEMA_CHECK_H_
