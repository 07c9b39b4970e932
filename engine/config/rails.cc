#include "engine/config/rails.h"

#include <cctype>
#include <map>
#include <set>
#include <utility>

#include "engine/config/field_path.h"

namespace provisioner::config {
namespace {

using nlohmann::json;

std::optional<long> ParseSmallInt(const std::string& s) {
  if (s.empty() || s.size() > 6) return std::nullopt;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
  }
  return std::stol(s);
}

// Substitutes every string below `v`; the first error per field goes to
// `errors` as (path, message).
void Substitute(json& v, int n, const std::string& path,
                std::vector<std::pair<std::string, std::string>>* errors,
                std::optional<long> host = std::nullopt) {
  if (v.is_string()) {
    std::string error;
    auto s = ExpandRailTemplate(v.get<std::string>(), n, &error, host);
    if (s) {
      v = *s;
    } else {
      errors->emplace_back(path, error);
    }
  } else if (v.is_object()) {
    for (auto& [key, child] : v.items()) {
      Substitute(child, n, JoinField(path, key), errors, host);
    }
  } else if (v.is_array()) {
    for (size_t i = 0; i < v.size(); ++i) Substitute(v[i], n, JoinIndex(path, i), errors, host);
  }
}

// Marks of an expanded value: those of the rails field it came from (a
// defaulted field has none and falls back to its nearest written ancestor).
void CopyMarks(YamlDocument* doc, const json& v, const std::string& gen, const std::string& src) {
  doc->marks.Set(gen, doc->marks.Find(src));
  if (auto k = doc->key_marks.find(src); k != doc->key_marks.end()) {
    doc->key_marks[gen] = k->second;
  }
  if (auto t = doc->scalar_text.find(src); t != doc->scalar_text.end()) {
    doc->scalar_text[gen] = t->second;
  }
  if (v.is_object()) {
    for (const auto& [key, child] : v.items()) {
      CopyMarks(doc, child, JoinField(gen, key), JoinField(src, key));
    }
  } else if (v.is_array()) {
    for (size_t i = 0; i < v.size(); ++i)
      CopyMarks(doc, v[i], JoinIndex(gen, i), JoinIndex(src, i));
  }
}

// Appends rail `n`'s `item` to the list spec.`list` (made when absent), with
// the marks of the rails field `src` it came from; returns its path.
std::string AppendRailItem(YamlDocument* doc, json& spec, const std::string& list, json item,
                           const std::string& src, int n, RailsExpansion* r) {
  json& items = spec[list];
  if (items.is_null()) items = json::array();
  const std::string path = JoinIndex("spec." + list, items.size());
  CopyMarks(doc, item, path, src);
  r->items.push_back({path, src, n});
  items.push_back(std::move(item));
  return path;
}

size_t CountNodes(const json& v) {
  size_t n = 1;
  if (v.is_structured()) {
    for (const auto& child : v) n += CountNodes(child);
  }
  return n;
}

Diagnostic Error(std::string path, std::string message) {
  return Diagnostic{Severity::kError, std::move(path), std::move(message)};
}

}  // namespace

std::optional<std::string> ExpandRailTemplate(const std::string& text, int n, std::string* error,
                                              std::optional<long> host) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '}') {
      *error = "'}' without '{' in \"" + text + "\"";
      return std::nullopt;
    }
    if (c != '{') {
      out += c;
      continue;
    }
    const size_t close = text.find('}', i);
    if (close == std::string::npos) {
      *error = "'{' without '}' in \"" + text + "\"";
      return std::nullopt;
    }
    std::string expr;
    for (size_t k = i + 1; k < close; ++k) {
      if (text[k] != ' ') expr += text[k];
    }
    std::optional<long> value;
    if (expr == "n") {
      value = n;
    } else if (expr == "host") {
      if (!host) {
        *error = "{host} in \"" + text + "\" needs spec.rails.hostIndex (this host's number)";
        return std::nullopt;
      }
      value = *host;
    } else if (expr.size() > 2 && expr.compare(0, 2, "n+") == 0) {
      if (auto a = ParseSmallInt(expr.substr(2))) value = n + *a;
    } else if (expr.size() > 2 && expr.compare(0, 2, "n-") == 0) {
      if (auto a = ParseSmallInt(expr.substr(2))) value = n - *a;
    } else if (expr.size() > 2 && expr.compare(expr.size() - 2, 2, "+n") == 0) {
      if (auto a = ParseSmallInt(expr.substr(0, expr.size() - 2))) value = *a + n;
    }
    if (!value) {
      *error = "unknown template {" + text.substr(i + 1, close - i - 1) + "} in \"" + text +
               "\": use {n} (1-based rail number), {A+n}, {n+A}, {n-A} or {host}";
      return std::nullopt;
    }
    out += std::to_string(*value);
    i = close;
  }
  return out;
}

RailsExpansion ExpandRails(YamlDocument* doc, std::optional<int> gpu_count,
                           std::vector<Diagnostic>* diags) {
  RailsExpansion r;
  json& root = doc->root;
  if (!root.is_object() || !root.contains("spec") || !root["spec"].is_object()) return r;
  json& spec = root["spec"];
  if (!spec.contains("rails")) return r;
  r.present = true;
  const json rails = spec["rails"];
  if (!rails.is_object() || !rails.contains("count")) return r;  // the schema says why
  const json& count = rails["count"];
  if (count.is_number_integer()) {
    const long long c = count.get<long long>();
    if (c < 1 || c > kMaxRails) return r;
    r.count = static_cast<int>(c);
  } else if (count.is_string() && count.get<std::string>() == kAllGpus) {
    r.all_gpus = true;
    if (!gpu_count) {
      r.deferred = true;
      return r;
    }
    if (*gpu_count < 1 || *gpu_count > kMaxRails) {
      diags->push_back(Error("spec.rails.count", std::string(kAllGpus) + ": this host has " +
                                                     std::to_string(*gpu_count) +
                                                     " GPUs; rails need 1 to " +
                                                     std::to_string(kMaxRails)));
      return r;
    }
    r.count = *gpu_count;
  } else {
    return r;
  }
  auto object_or_absent = [&](const char* key) {
    return !rails.contains(key) || rails[key].is_object();
  };
  if (!rails.contains("nic") || !object_or_absent("nic") || !object_or_absent("ipPool") ||
      !object_or_absent("multus")) {
    return r;
  }
  for (const char* list : {"nics", "ipPools", "multusConfigs"}) {
    if (spec.contains(list) && !spec[list].is_array()) return r;
  }

  // rails.hostIndex ({host}) and rails.routes (each rail's routing.routes).
  std::optional<long> host;
  if (rails.contains("hostIndex") && rails["hostIndex"].is_number_integer()) {
    host = rails["hostIndex"].get<long>();
  }
  json nic_template = rails["nic"];
  if (rails.contains("routes") && rails["routes"].is_array()) {
    json& routing = nic_template["routing"];
    if (routing.is_null()) routing = json::object();
    if (routing.is_object()) {
      json& routes = routing["routes"];
      if (routes.is_null()) routes = json::array();
      if (routes.is_array()) {
        for (const json& r : rails["routes"]) routes.push_back(r);
      }
    }
  }

  // Fields rails sets itself.
  bool bad = false;
  const json& nic_t = nic_template;
  if (nic_t.contains("nicSelector") && nic_t["nicSelector"].is_object() &&
      nic_t["nicSelector"].contains("nearGpu")) {
    diags->push_back(Error("spec.rails.nic.nicSelector.nearGpu",
                           "set by rails: rail n uses the NIC nearest to GPU n-1; remove it"));
    bad = true;
  }
  if (rails.contains("multus")) {
    for (const char* key : {"nic", "ippools"}) {
      if (rails["multus"].contains(key)) {
        diags->push_back(Error(std::string("spec.rails.multus.") + key,
                               std::string("set by rails: each rail's multus config uses that "
                                           "rail's ") +
                                   (std::string(key) == "nic" ? "NIC" : "IP pool") +
                                   "; remove it"));
        bad = true;
      }
    }
  }
  // Templates: checked once, on rail 1 (a bad one is bad in every rail).
  std::vector<std::pair<std::string, std::string>> errors;
  for (const char* key : {"nic", "ipPool", "multus"}) {
    if (!rails.contains(key)) continue;
    json probe = std::string(key) == "nic" ? nic_template : rails[key];
    Substitute(probe, 1, std::string("spec.rails.") + key, &errors, host);
  }
  for (auto& [path, message] : errors) diags->push_back(Error(path, message));
  if (bad || !errors.empty()) return r;

  // Hostile input stays cheap: the expansion obeys the parser's node limit.
  size_t per_rail = 0;
  for (const char* key : {"nic", "ipPool", "multus"}) {
    if (rails.contains(key)) per_rail += CountNodes(rails[key]) + 4;  // + defaulted fields
  }
  if (per_rail * static_cast<size_t>(r.count) > kMaxNodes) {
    diags->push_back(Error("spec.rails", std::to_string(r.count) + " rails of " +
                                             std::to_string(per_rail) + " values each exceed " +
                                             std::to_string(kMaxNodes) + " values"));
    return r;
  }
  const SourceMark count_mark = doc->marks.Find("spec.rails.count");
  for (int n = 1; n <= r.count; ++n) {
    const std::string rail_name = "rail" + std::to_string(n);
    json nic = nic_template;
    Substitute(nic, n, "", &errors, host);
    if (!nic.contains("name")) nic["name"] = rail_name;
    if (!nic.contains("nicSelector")) nic["nicSelector"] = json::object();
    if (nic["nicSelector"].is_object()) nic["nicSelector"]["nearGpu"] = n - 1;
    const json nic_name = nic["name"];
    const std::string nic_path =
        AppendRailItem(doc, spec, "nics", std::move(nic), "spec.rails.nic", n, &r);
    doc->marks.Set(nic_path + ".nicSelector.nearGpu", count_mark);

    json pool_name;
    bool ipv6 = false;
    if (rails.contains("ipPool")) {
      json pool = rails["ipPool"];
      Substitute(pool, n, "", &errors, host);
      if (!pool.contains("name")) pool["name"] = rail_name;
      pool_name = pool["name"];
      ipv6 = pool.contains("subnet") && pool["subnet"].is_string() &&
             pool["subnet"].get<std::string>().find(':') != std::string::npos;
      AppendRailItem(doc, spec, "ipPools", std::move(pool), "spec.rails.ipPool", n, &r);
    }
    if (rails.contains("multus")) {
      json m = rails["multus"];
      Substitute(m, n, "", &errors, host);
      if (!m.contains("name")) m["name"] = rail_name;
      m["nic"] = nic_name;
      if (!pool_name.is_null()) m["ippools"] = {{ipv6 ? "ipv6" : "ipv4", json::array({pool_name})}};
      AppendRailItem(doc, spec, "multusConfigs", std::move(m), "spec.rails.multus", n, &r);
    }
  }
  return r;
}

std::vector<Diagnostic> AttributeToRails(const RailsExpansion& rails,
                                         std::vector<Diagnostic> diags) {
  return AttributeToRails(rails.items, std::move(diags));
}

std::vector<Diagnostic> AttributeToRails(const std::vector<RailOrigin>& items,
                                         std::vector<Diagnostic> diags) {
  if (items.empty()) return diags;
  std::vector<Diagnostic> out;
  std::set<std::pair<std::string, std::string>> seen;
  for (auto& d : diags) {
    const RailItem* from = nullptr;
    for (const RailItem& item : items) {
      if (IsSelfOrAncestor(item.path, d.path)) from = &item;
    }
    if (from == nullptr) {
      out.push_back(std::move(d));
      continue;
    }
    std::string path = from->source_path + d.path.substr(from->path.size());
    // A rail's nearGpu is not written anywhere: it comes from the count.
    if (path == "spec.rails.nic.nicSelector.nearGpu") path = "spec.rails.count";
    if (!seen.insert({path, d.message}).second) continue;
    d.message = "rail " + std::to_string(from->rail) + " (" + d.path + "): " + d.message;
    d.path = std::move(path);
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace provisioner::config
