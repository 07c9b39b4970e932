#include "engine/config/check_context.h"

#include <utility>

#include "engine/config/field_path.h"

namespace provisioner::config {

const char kNotLabelValue[] =
    "is not a valid Kubernetes label value (at most 63 letters, digits, '-', '_' or '.', "
    "beginning and ending with a letter or digit)";

void CheckContext::Error(std::string path, std::string message) const {
  diags_->push_back(Diagnostic{Severity::kError, std::move(path), std::move(message)});
}

void CheckContext::Warning(std::string path, std::string message) const {
  diags_->push_back(Diagnostic{Severity::kWarning, std::move(path), std::move(message)});
}

bool CheckContext::Tainted(const std::string& path) const {
  for (const auto& t : tainted_) {
    if (IsSelfOrAncestor(t, path)) return true;
  }
  return false;
}

bool CheckContext::TaintedWithin(const std::string& path) const {
  for (const auto& t : tainted_) {
    if (IsSelfOrAncestor(t, path) || IsSelfOrAncestor(path, t)) return true;
  }
  return false;
}

std::string CheckContext::Where(const std::string& path) const {
  SourceMark m = s_.marks.Find(path);
  return m.line > 0 ? path + ", line " + std::to_string(m.line) : path;
}

std::string CheckContext::At(const std::string& path) const {
  SourceMark m = s_.marks.Find(path);
  if (m.line <= 0) return path;
  return (s_.file.empty() ? std::string("host.yaml") : s_.file) + ":" + std::to_string(m.line) +
         ":" + std::to_string(m.column);
}

std::string CheckContext::NicPath(size_t i) { return DesiredState::NicPath(i); }
std::string CheckContext::PoolPath(size_t i) { return JoinIndex("spec.ipPools", i); }
std::string CheckContext::MultusPath(size_t i) { return JoinIndex("spec.multusConfigs", i); }

std::string Join(const std::vector<std::string>& items, const char* sep) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : sep) + i;
  return out;
}

std::string IpVersionName(int version) { return version == 4 ? "IPv4" : "IPv6"; }

}  // namespace provisioner::config
