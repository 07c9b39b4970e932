// Field paths of host.yaml as diagnostics print them:
//   spec.nics[0].numVfs, spec.kubernetes.nodeSelector.kubernetes.io/os
#ifndef PROVISIONER_ENGINE_CONFIG_FIELD_PATH_H_
#define PROVISIONER_ENGINE_CONFIG_FIELD_PATH_H_

#include <cstddef>
#include <string>

namespace provisioner::config {

// A map key as a path component: as written, or, when it holds a control
// byte (ESC, newline, NUL: a host.yaml key reaches stderr in every message
// about it), quoted with those bytes as \xNN, as values are quoted.
inline std::string FieldKey(const std::string& key) {
  bool plain = true;
  for (unsigned char c : key) plain = plain && c >= 0x20 && c != 0x7f;
  if (plain) return key;
  static const char kHex[] = "0123456789abcdef";
  std::string out = "\"";
  for (unsigned char c : key) {
    if (c < 0x20 || c == 0x7f) {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

inline std::string JoinField(const std::string& parent, const std::string& key) {
  return parent.empty() ? FieldKey(key) : parent + "." + FieldKey(key);
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
