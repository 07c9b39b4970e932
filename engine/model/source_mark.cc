#include "engine/model/source_mark.h"

namespace provisioner {

SourceMark MarkIndex::Find(const std::string& path) const {
  std::string p = path;
  for (;;) {
    auto it = marks_.find(p);
    if (it != marks_.end()) return it->second;
    size_t cut = p.find_last_of(".[");
    if (cut == std::string::npos || cut == 0) break;
    p.resize(cut);
  }
  auto it = marks_.find("");
  return it != marks_.end() ? it->second : SourceMark{};
}

std::string FormatDiagnostic(const std::string& file, const MarkIndex& marks,
                             const Diagnostic& d) {
  std::string out = file;
  SourceMark m = marks.Find(d.path);
  if (m.line > 0) {
    out += ":" + std::to_string(m.line) + ":" + std::to_string(m.column);
  }
  out += ": ";
  if (d.severity == Severity::kWarning) out += "warning: ";
  if (!d.path.empty()) out += d.path + ": ";
  out += d.message;
  return out;
}

bool HasErrors(const std::vector<Diagnostic>& diags) {
  for (const auto& d : diags) {
    if (d.severity == Severity::kError) return true;
  }
  return false;
}

}  // namespace provisioner
