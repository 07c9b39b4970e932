#include "engine/manifests/fleet.h"

#include <algorithm>
#include <optional>
#include <set>
#include <unordered_map>
#include <utility>

namespace provisioner::manifests {
namespace {

using nlohmann::json;

std::string Shown(const json& v) {
  std::string s = v.dump();
  if (s.size() > 80) s = s.substr(0, 77) + "...";
  return s;
}

std::string Join(const std::string& path, const std::string& key) {
  const bool plain = !key.empty() && key.find_first_of(".[]\" ") == std::string::npos;
  const std::string k = plain ? key : "\"" + key + "\"";
  return path.empty() ? k : path + "." + k;
}

// A string that parses as a JSON object or array (config.json, spec.config).
std::optional<json> EmbeddedJson(const json& v) {
  if (!v.is_string()) return std::nullopt;
  const std::string& s = v.get_ref<const std::string&>();
  if (s.empty() || (s.front() != '{' && s.front() != '[')) return std::nullopt;
  json parsed = json::parse(s, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) return std::nullopt;
  return parsed;
}

std::string Diff(const json& a, const json& b, const std::string& path) {
  if (a == b) return "";
  if (a.is_object() && b.is_object()) {
    std::set<std::string> keys;
    for (const auto& [k, v] : a.items()) keys.insert(k);
    for (const auto& [k, v] : b.items()) keys.insert(k);
    for (const auto& k : keys) {
      const std::string p = Join(path, k);
      if (!a.contains(k)) return p + ": absent vs " + Shown(b[k]);
      if (!b.contains(k)) return p + ": " + Shown(a[k]) + " vs absent";
      std::string d = Diff(a[k], b[k], p);
      if (!d.empty()) return d;
    }
    return "";
  }
  if (a.is_array() && b.is_array()) {
    const size_t n = std::min(a.size(), b.size());
    for (size_t i = 0; i < n; ++i) {
      std::string d = Diff(a[i], b[i], path + "[" + std::to_string(i) + "]");
      if (!d.empty()) return d;
    }
    return path + ": " + std::to_string(a.size()) + " items vs " + std::to_string(b.size());
  }
  auto ja = EmbeddedJson(a), jb = EmbeddedJson(b);
  if (ja && jb) {
    std::string d = Diff(*ja, *jb, path);
    if (!d.empty()) return d;
  }
  return (path.empty() ? std::string("value") : path) + ": " + Shown(a) + " vs " + Shown(b);
}

std::string ObjectKey(const Manifest& m) {
  std::string api = m.doc.contains("apiVersion") && m.doc["apiVersion"].is_string()
                        ? m.doc["apiVersion"].get<std::string>()
                        : "";
  return api + "|" + m.kind + "|" + m.Namespace() + "|" + m.name;
}

std::string ObjectName(const Manifest& m) {
  const std::string ns = m.Namespace();
  return m.kind + " " + (ns.empty() ? "" : ns + "/") + m.name;
}

}  // namespace

std::string FirstDifference(const json& a, const json& b) { return Diff(a, b, ""); }

StatusOr<HostManifests> MergeHosts(std::vector<HostRender> hosts) {
  HostManifests merged;
  struct Seen {
    size_t index;  // in merged.manifests
    size_t host;   // first host that emitted it
  };
  std::unordered_map<std::string, Seen> seen;
  std::set<std::string> warnings;
  size_t values_host = 0;
  bool have_values = false;
  for (size_t h = 0; h < hosts.size(); ++h) {
    HostManifests& out = hosts[h].out;
    for (auto& m : out.manifests) {
      std::string key = ObjectKey(m);
      auto it = seen.find(key);
      if (it == seen.end()) {
        seen.emplace(std::move(key), Seen{merged.manifests.size(), h});
        merged.manifests.push_back(std::move(m));
        continue;
      }
      const Manifest& first = merged.manifests[it->second.index];
      if (first.doc == m.doc) continue;
      return InvalidArgumentError(ObjectName(m) + " differs between hosts " +
                                  hosts[it->second.host].host + " and " + hosts[h].host + " at " +
                                  FirstDifference(first.doc, m.doc) +
                                  ": one object in the cluster cannot hold both (give the hosts "
                                  "the same settings, or render them as different pools)");
    }
    if (!out.helm_values.empty()) {
      if (!have_values) {
        merged.helm_values = out.helm_values;
        merged.release_namespace = out.release_namespace;
        values_host = h;
        have_values = true;
      } else if (merged.helm_values != out.helm_values) {
        return InvalidArgumentError("the Spiderpool chart values differ between hosts " +
                                    hosts[values_host].host + " and " + hosts[h].host + " at " +
                                    FirstDifference(merged.helm_values, out.helm_values) +
                                    ": one release serves the whole cluster");
      } else if (merged.release_namespace != out.release_namespace) {
        return InvalidArgumentError(
            "spec.kubernetes.sriovOperatorNamespace differs between hosts " +
            hosts[values_host].host + " (" + merged.release_namespace + ") and " + hosts[h].host +
            " (" + out.release_namespace + "): one Spiderpool release serves the whole cluster");
      }
    }
    for (auto& w : out.warnings) {
      if (warnings.insert(w).second) merged.warnings.push_back(std::move(w));
    }
  }
  return merged;
}

}  // namespace provisioner::manifests
