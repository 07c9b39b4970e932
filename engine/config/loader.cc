#include "engine/config/loader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <map>
#include <memory>
#include <cerrno>
#include <set>
#include <tuple>
#include <utility>

#include "engine/base/fd_io.h"
#include "engine/base/status.h"
#include "engine/config/build.h"
#include "engine/config/checks.h"
#include "engine/config/field_path.h"
#include "engine/config/pkey.h"
#include "engine/config/rails.h"
#include "engine/config/schema_check.h"
#include "engine/config/yaml_document.h"

namespace provisioner {
namespace {

constexpr off_t kMaxFileBytes = kMaxHostYamlBytes;

// Where a diagnostic sorts: the field it is about, or, for one that follows
// from another field's problem (a knock-on), that field. A rail's nearGpu is
// written nowhere, so its errors are attributed to spec.rails.count (above
// the nic template in the file); they follow from the template's
// nicSelector, which chose among the NICs: "no NIC matching the selector's
// other fields is connected to GPU 3" after "spec.rails.nic.nicSelector:
// selects no PCI function", not before it.
const std::string& Anchor(const Diagnostic& d) {
  static const std::string kRailSelector = "spec.rails.nic.nicSelector";
  if (d.path == "spec.rails.count" &&
      d.message.find(".nicSelector.nearGpu): ") != std::string::npos) {
    return kRailSelector;
  }
  return d.path;
}

}  // namespace

void SortDiagnostics(const MarkIndex& marks, std::vector<Diagnostic>* diags) {
  // File order of the anchors (by line, then column; no mark first); at the
  // same place, the field's own diagnostics before those that follow from it.
  auto key = [&](const Diagnostic& d) {
    const std::string& anchor = Anchor(d);
    const SourceMark m = marks.Find(anchor);
    return std::make_tuple(m.line, m.column, &anchor != &d.path);
  };
  std::stable_sort(diags->begin(), diags->end(),
                   [&](const Diagnostic& a, const Diagnostic& b) { return key(a) < key(b); });
}

namespace {

// `v` with each mapping's keys in host.yaml's order (by the marks of the
// keys; keys without one, after, in name order), for --show-expanded.
nlohmann::ordered_json InInputOrder(const nlohmann::json& v, const std::string& path,
                                    const std::map<std::string, SourceMark>& key_marks) {
  if (v.is_array()) {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (size_t i = 0; i < v.size(); ++i) {
      out.push_back(InInputOrder(v[i], path + "[" + std::to_string(i) + "]", key_marks));
    }
    return out;
  }
  if (!v.is_object()) return nlohmann::ordered_json(v);
  std::vector<std::pair<std::pair<int, int>, std::string>> keys;
  for (auto it = v.begin(); it != v.end(); ++it) {
    const std::string child = path.empty() ? it.key() : path + "." + it.key();
    // Its key's mark; for a key spec.rails made (spec.nics), the first of
    // the marks under it (the rails template's).
    std::pair<int, int> at{INT_MAX, INT_MAX};
    auto mark = [&](const SourceMark& m) {
      if (m.line > 0) at = std::min(at, std::make_pair(m.line, m.column));
    };
    if (auto m = key_marks.find(child); m != key_marks.end()) {
      mark(m->second);
    } else {
      for (const char* sep : {".", "["}) {
        const std::string prefix = child + sep;
        for (auto m = key_marks.lower_bound(prefix);
             m != key_marks.end() && m->first.compare(0, prefix.size(), prefix) == 0; ++m) {
          mark(m->second);
        }
      }
    }
    keys.emplace_back(at, it.key());
  }
  std::stable_sort(keys.begin(), keys.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (const auto& [at, key] : keys) {
    out[key] = InInputOrder(v.at(key), path.empty() ? key : path + "." + key, key_marks);
  }
  return out;
}

}  // namespace

std::string CanonicalDesiredText(std::string_view yaml) {
  config::YamlDocument doc = config::ParseYamlDocument(yaml);
  if (!doc.ok) return std::string(yaml);
  return doc.root.dump();
}

LoadResult LoadDesiredStateFromString(std::string_view yaml, const std::string& file_name) {
  return LoadDesiredStateFromString(yaml, file_name, LoadOptions{});
}

LoadResult LoadDesiredStateFromString(std::string_view yaml, const std::string& file_name,
                                      const LoadOptions& options) {
  return LoadDesiredStateFromDocument(config::ParseYamlDocument(yaml), file_name, options);
}

LoadResult LoadDesiredStateFromDocument(const config::YamlDocument& parsed,
                                        const std::string& file_name, const LoadOptions& options) {
  LoadResult result;
  config::YamlDocument doc = parsed;  // expanded and normalized in place below
  if (!doc.ok) {
    result.diagnostics = std::move(doc.diagnostics);
    result.marks = std::move(doc.marks);
    SortDiagnostics(result.marks, &result.diagnostics);
    return result;
  }

  // Conversion problems (bad scalars) and schema errors: one per field.
  std::vector<Diagnostic> diags = std::move(doc.diagnostics);
  // spec.rails becomes ordinary items first, so they get every check below.
  config::RailsExpansion rails = config::ExpandRails(&doc, options.gpu_count, &diags);
  // `pkey: 1000` is a P_Key's hex digits, not the integer one thousand.
  config::PkeyScalarsAsText(&doc);
  if (rails.deferred) {
    // count: allGpus without a host: check the templates on one rail.
    LoadResult probe = LoadDesiredStateFromDocument(parsed, file_name, LoadOptions{1});
    for (auto& d : probe.diagnostics) {
      if (config::IsSelfOrAncestor("spec.rails", d.path)) diags.push_back(std::move(d));
    }
  }
  {
    nlohmann::json expanded = doc.root;
    if (rails.present && !rails.deferred && expanded.contains("spec") &&
        expanded["spec"].is_object()) {
      expanded["spec"].erase("rails");
    }
    result.expanded_json = InInputOrder(expanded, "", doc.key_marks).dump();
  }
  std::set<std::string> tainted;
  for (const auto& d : diags) tainted.insert(d.path);
  config::SchemaCheckResult schema = config::CheckAgainstSchema(&doc);
  for (auto& d : schema.diagnostics) {
    if (tainted.count(d.path) > 0) continue;  // already reported while converting
    diags.push_back(std::move(d));
  }
  tainted.insert(schema.tainted.begin(), schema.tainted.end());

  // The typed state and the semantic rules; rules skip what is tainted.
  DesiredState state = config::BuildDesiredState(doc.root);
  state.file = file_name;
  state.marks = doc.marks;
  state.rails_need_gpu_count = rails.deferred;
  if (rails.deferred) state.unexpanded = std::make_shared<const config::YamlDocument>(parsed);
  state.rail_origins = rails.items;
  for (auto& d : config::CheckDesiredState(state, tainted)) diags.push_back(std::move(d));
  diags = config::AttributeToRails(rails, std::move(diags));

  result.marks = std::move(doc.marks);
  SortDiagnostics(result.marks, &diags);
  result.diagnostics = std::move(diags);
  if (!HasErrors(result.diagnostics)) result.state = std::move(state);
  return result;
}

LoadResult LoadDesiredStateFromFile(const std::string& path) {
  return LoadDesiredStateFromFile(path, LoadOptions{});
}

LoadResult LoadDesiredStateFromFile(const std::string& path, const LoadOptions& options) {
  auto fail = [&](int err, const std::string& what) {
    LoadResult r;
    r.diagnostics.push_back(
        Diagnostic{Severity::kError, "", ErrnoToStatus(err, what + " " + path).message()});
    return r;
  };
  // A regular file, or a stream (`validate <(...)`, /dev/stdin) read to its
  // end: opened non-blocking, so that a FIFO without a writer reads as empty
  // instead of blocking open(2) forever; EFBIG past the limit (/dev/zero).
  std::string text;
  const char* not_regular = nullptr;
  if (int err = ReadRegularFile(path, static_cast<size_t>(kMaxFileBytes), &text, &not_regular,
                                /*streams_ok=*/true);
      err != 0) {
    if (err < 0) {
      LoadResult r;
      r.diagnostics.push_back(Diagnostic{Severity::kError, "",
                                         "cannot read " + path + ": " + not_regular +
                                             ", not a regular file: refused"});
      return r;
    }
    return fail(err, err == ENOENT || err == EACCES ? "cannot open" : "cannot read");
  }
  return LoadDesiredStateFromString(text, path, options);
}

}  // namespace provisioner
