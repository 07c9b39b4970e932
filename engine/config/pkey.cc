#include "engine/config/pkey.h"

#include <string>

#include "engine/base/strings.h"
#include "engine/config/field_path.h"

namespace provisioner::config {
namespace {

// An integer (or, with `floats`, any number) at `path` in `value` becomes
// its source text.
void AsText(YamlDocument* doc, nlohmann::json* value, const std::string& path,
            bool floats = false) {
  if (!value->is_number_integer() && !(floats && value->is_number())) return;
  auto text = doc->scalar_text.find(path);
  *value = text != doc->scalar_text.end() ? text->second : value->dump();
  doc->scalar_text.erase(path);
}

}  // namespace

std::optional<int> ParsePkeySpelling(std::string_view text) {
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    text.remove_prefix(2);
  }
  if (text.empty() || text.size() > 16) return std::nullopt;
  int v = 0;
  for (char c : text) {
    const int d = HexDigitValue(c);
    if (d < 0) return std::nullopt;
    v = v * 16 + d;
    if (v > 0xffff) return std::nullopt;
  }
  return v;
}

void PkeyScalarsAsText(YamlDocument* doc) {
  auto spec = doc->root.find("spec");
  if (spec == doc->root.end() || !spec->is_object()) return;
  if (auto mcs = spec->find("multusConfigs"); mcs != spec->end() && mcs->is_array()) {
    for (size_t i = 0; i < mcs->size(); ++i) {
      nlohmann::json& mc = (*mcs)[i];
      if (!mc.is_object() || !mc.contains("pkey")) continue;
      AsText(doc, &mc["pkey"], JoinField(JoinIndex("spec.multusConfigs", i), "pkey"));
    }
  }
  // spiderpool.version: 0.9 or 1.10 unquoted is a release, not a number.
  if (auto k8s = spec->find("kubernetes"); k8s != spec->end() && k8s->is_object()) {
    if (auto sp = k8s->find("spiderpool"); sp != k8s->end() && sp->is_object()) {
      if (auto v = sp->find("version"); v != sp->end()) {
        AsText(doc, &*v, "spec.kubernetes.spiderpool.version", /*floats=*/true);
      }
    }
  }
  if (auto nics = spec->find("nics"); nics != spec->end() && nics->is_array()) {
    for (size_t i = 0; i < nics->size(); ++i) {
      nlohmann::json& nic = (*nics)[i];
      if (!nic.is_object() || !nic.contains("ipoib") || !nic["ipoib"].is_object()) continue;
      nlohmann::json& ib = nic["ipoib"];
      if (!ib.contains("pkeys") || !ib["pkeys"].is_array()) continue;
      const std::string base = JoinField(JoinField(JoinIndex("spec.nics", i), "ipoib"), "pkeys");
      for (size_t k = 0; k < ib["pkeys"].size(); ++k) {
        AsText(doc, &ib["pkeys"][k], JoinIndex(base, k));
      }
    }
  }
}

}  // namespace provisioner::config
