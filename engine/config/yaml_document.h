// host.yaml parsed by yaml-cpp and converted to JSON, keeping the source mark
// of every value. Scalars get YAML 1.2 core-schema types (plain 12 is an
// integer, "12" a string, true a boolean, ~ null), so the schema can check
// types strictly, as Kubernetes does. yaml-cpp exceptions stop here.
#ifndef PROVISIONER_ENGINE_CONFIG_YAML_DOCUMENT_H_
#define PROVISIONER_ENGINE_CONFIG_YAML_DOCUMENT_H_

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "engine/model/source_mark.h"
#include "nlohmann/json.hpp"

namespace provisioner::config {

// Limits that keep hostile input cheap: host.yaml files are small.
inline constexpr int kMaxNestingDepth = 64;
inline constexpr size_t kMaxNodes = 100000;  // after alias expansion
inline constexpr size_t kMaxScalarBytes = 1024;

struct YamlDocument {
  // False after a problem that leaves no usable tree: a syntax error,
  // duplicate or non-string keys, an empty file, more than one document, a
  // top level that is not a mapping. `diagnostics` says which.
  bool ok = false;
  nlohmann::json root;
  MarkIndex marks;                               // field path -> mark of its value
  std::map<std::string, SourceMark> key_marks;   // field path -> mark of its key
  std::map<std::string, std::string> scalar_text;  // field path -> non-string scalar as written
  // Problems found while converting (fatal or not), in the order found.
  std::vector<Diagnostic> diagnostics;
};

YamlDocument ParseYamlDocument(std::string_view text);

}  // namespace provisioner::config

#endif  // PROVISIONER_ENGINE_CONFIG_YAML_DOCUMENT_H_
