// Where a value of host.yaml came from, for "file:line:column: path: message".
#ifndef PROVISIONER_ENGINE_MODEL_SOURCE_MARK_H_
#define PROVISIONER_ENGINE_MODEL_SOURCE_MARK_H_

#include <map>
#include <string>
#include <vector>

namespace provisioner {

struct SourceMark {
  int line = 0;    // 1-based; 0 = unknown
  int column = 0;  // 1-based
};

// Field path ("spec.nics[0].numVfs") -> mark of that key's value.
class MarkIndex {
 public:
  void Set(const std::string& path, SourceMark mark) { marks_[path] = mark; }
  // The mark of `path`, or of its nearest ancestor that has one.
  SourceMark Find(const std::string& path) const;

 private:
  std::map<std::string, SourceMark> marks_;
};

enum class Severity { kError, kWarning };

// One problem found in the input or against the host, tied to a field path.
struct Diagnostic {
  Severity severity = Severity::kError;
  std::string path;     // "spec.nics[0].numVfs"; empty for file-level problems
  std::string message;  // "300 exceeds sriov_totalvfs 127 of 0000:af:00.0"
};

// "host.yaml:14:7: spec.nics[0].numVfs: 300 exceeds ..."
std::string FormatDiagnostic(const std::string& file, const MarkIndex& marks,
                             const Diagnostic& d);

bool HasErrors(const std::vector<Diagnostic>& diags);

}  // namespace provisioner

#endif  // PROVISIONER_ENGINE_MODEL_SOURCE_MARK_H_
