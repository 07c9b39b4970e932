// Field paths of host.yaml as diagnostics print them:
//   spec.nics[0].numVfs, spec.kubernetes.nodeSelector.kubernetes.io/os
#ifndef PROVISIONER_ENGINE_CONFIG_FIELD_PATH_H_
#define PROVISIONER_ENGINE_CONFIG_FIELD_PATH_H_

#include <cstddef>
#include <string>

namespace provisioner::config {

inline std::string JoinField(const std::string& parent, const std::string& key) {
  return parent.empty() ? key : parent + "." + key;
}

inline std::string JoinIndex(const std::string& parent, size_t index) {
  return parent + "[" + std::to_string(index) + "]";
}

// True when `ancestor` is `path` itself or a path above it ("" is above all).
inline bool IsSelfOrAncestor(const std::string& ancestor, const std::string& path) {
  if (ancestor.empty()) return true;
  if (path.compare(0, ancestor.size(), ancestor) != 0) return false;
  if (path.size() == ancestor.size()) return true;
  char next = path[ancestor.size()];
  return next == '.' || next == '[';
}

}  // namespace provisioner::config

#endif  // PROVISIONER_ENGINE_CONFIG_FIELD_PATH_H_
