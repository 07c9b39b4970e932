#include "test/manifests/crd_checker.h"

#include <cstdlib>

#include "yaml-cpp/yaml.h"

namespace provisioner::testing {
namespace {

using nlohmann::json;

json NodeToJson(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Map: {
      json j = json::object();
      for (const auto& kv : n) j[kv.first.as<std::string>()] = NodeToJson(kv.second);
      return j;
    }
    case YAML::NodeType::Sequence: {
      json j = json::array();
      for (const auto& x : n) j.push_back(NodeToJson(x));
      return j;
    }
    case YAML::NodeType::Scalar: {
      std::string s = n.Scalar();
      if (n.Tag() == "!") return s;  // quoted
      if (s == "true" || s == "True") return true;
      if (s == "false" || s == "False") return false;
      char* end = nullptr;
      long long v = std::strtoll(s.c_str(), &end, 10);
      if (!s.empty() && *end == '\0') return v;
      return s;
    }
    default:
      return nullptr;
  }
}

std::string TypeOf(const json& v) {
  if (v.is_object()) return "object";
  if (v.is_array()) return "array";
  if (v.is_string()) return "string";
  if (v.is_boolean()) return "boolean";
  if (v.is_number_integer()) return "integer";
  if (v.is_number()) return "number";
  return "null";
}

void Walk(const json& schema, const json& v, const std::string& path,
          std::vector<std::string>* errors) {
  const bool preserve = schema.value("x-kubernetes-preserve-unknown-fields", false);
  if (schema.value("x-kubernetes-int-or-string", false)) {
    if (!v.is_string() && !v.is_number_integer()) errors->push_back(path + ": want int or string");
    return;
  }
  if (schema.contains("type")) {
    std::string want = schema["type"];
    std::string got = TypeOf(v);
    bool ok = want == got || (want == "number" && got == "integer");
    if (!ok) {
      errors->push_back(path + ": want " + want + ", got " + got);
      return;
    }
  }
  if (schema.contains("enum")) {
    bool found = false;
    for (const auto& e : schema["enum"]) found = found || e == v;
    if (!found) errors->push_back(path + ": " + v.dump() + " not in enum " + schema["enum"].dump());
  }
  if (v.is_object()) {
    for (const auto& r : schema.value("required", json::array())) {
      if (!v.contains(r.get<std::string>())) {
        errors->push_back(path + "." + r.get<std::string>() + ": required");
      }
    }
    const json props = schema.value("properties", json::object());
    const json addl = schema.value("additionalProperties", json());
    for (auto it = v.begin(); it != v.end(); ++it) {
      std::string p = path.empty() ? it.key() : path + "." + it.key();
      if (props.contains(it.key())) {
        Walk(props[it.key()], it.value(), p, errors);
      } else if (addl.is_object()) {
        Walk(addl, it.value(), p, errors);
      } else if (!preserve && !(addl.is_boolean() && addl.get<bool>())) {
        errors->push_back(p + ": unknown field");
      }
    }
  }
  if (v.is_array() && schema.contains("items")) {
    for (size_t i = 0; i < v.size(); ++i) {
      Walk(schema["items"], v[i], path + "[" + std::to_string(i) + "]", errors);
    }
  }
}

// ObjectMeta is not in a CRD's schema; check the fields manifests use.
void CheckMetadata(const json& meta, std::vector<std::string>* errors) {
  json schema = {
      {"type", "object"},
      {"required", {"name"}},
      {"properties",
       {{"name", {{"type", "string"}}},
        {"namespace", {{"type", "string"}}},
        {"labels", {{"type", "object"}, {"additionalProperties", {{"type", "string"}}}}},
        {"annotations", {{"type", "object"}, {"additionalProperties", {{"type", "string"}}}}}}}};
  Walk(schema, meta, "metadata", errors);
}

}  // namespace

json YamlFileToJson(const std::string& path) { return NodeToJson(YAML::LoadFile(path)); }

bool CrdChecker::AddCrdFile(const std::string& path, std::string* error) {
  // A file may hold several CRDs ("---" between them: NFD's nfd-api-crds.yaml).
  std::vector<json> docs;
  try {
    for (const YAML::Node& n : YAML::LoadAllFromFile(path)) {
      if (!n.IsNull()) docs.push_back(NodeToJson(n));
    }
  } catch (const std::exception& e) {
    *error = path + ": " + e.what();
    return false;
  }
  if (docs.empty()) {
    *error = path + ": no document";
    return false;
  }
  for (const json& crd : docs) {
    if (crd.value("kind", "") != "CustomResourceDefinition") {
      *error = path + ": not a CustomResourceDefinition";
      return false;
    }
    Crd c;
    c.group = crd["spec"]["group"];
    c.kind = crd["spec"]["names"]["kind"];
    for (const auto& v : crd["spec"]["versions"]) {
      c.versions.emplace_back(v["name"].get<std::string>(), v["schema"]["openAPIV3Schema"]);
    }
    crds_.push_back(std::move(c));
  }
  return true;
}

std::vector<std::string> CrdChecker::Check(const json& doc) const {
  std::vector<std::string> errors;
  std::string api = doc.value("apiVersion", "");
  std::string kind = doc.value("kind", "");
  size_t slash = api.find('/');
  std::string group = slash == std::string::npos ? "" : api.substr(0, slash);
  std::string version = api.substr(slash + 1);
  for (const Crd& c : crds_) {
    if (c.group != group || c.kind != kind) continue;
    for (const auto& [name, schema] : c.versions) {
      if (name != version) continue;
      if (doc.contains("metadata")) CheckMetadata(doc["metadata"], &errors);
      // TypeMeta and ObjectMeta are the API server's, not every CRD's schema.
      json rest = doc;
      json top = schema;
      for (const char* k : {"apiVersion", "kind", "metadata"}) {
        rest.erase(k);
        if (top.contains("properties")) top["properties"].erase(k);
      }
      Walk(top, rest, "", &errors);
      return errors;
    }
    errors.push_back(api + " " + kind + ": the CRD has no version " + version);
    return errors;
  }
  errors.push_back(api + " " + kind + ": no CRD loaded for it");
  return errors;
}

}  // namespace provisioner::testing
