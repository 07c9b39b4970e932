#include "engine/plan/change.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <set>

#include "engine/base/enum_names.h"

namespace provisioner {

namespace {

constexpr EnumName<Disruption> kDisruptionNames[] = {
    {Disruption::kLive, "live"},
    {Disruption::kReboot, "reboot"},
    {Disruption::kFirmwareReset, "firmware-reset"},
};

}  // namespace

const char* DisruptionName(Disruption d) { return NameOf(kDisruptionNames, d, "live"); }

Disruption DisruptionFromName(const std::string& name) {
  return ValueOf(kDisruptionNames, name).value_or(Disruption::kLive);
}

std::string DisruptionLabel(const Change& c) {
  if (c.disruption == Disruption::kLive && c.link_flap) return kLinkFlapName;
  return DisruptionName(c.disruption);
}

Change MakeChange(std::string_view module, const std::string& target, const std::string& attribute,
                  nlohmann::json before, nlohmann::json after, Disruption disruption, int phase,
                  std::string reason, std::string field_path) {
  Change c;
  c.module = std::string(module);
  c.target = target;
  c.attribute = attribute;
  c.id = c.module + "/" + target + "/" + attribute;
  c.before = std::move(before);
  c.after = std::move(after);
  c.disruption = disruption;
  c.reason = std::move(reason);
  c.phase = phase;
  c.field_path = std::move(field_path);
  c.detail = nlohmann::json::object();
  return c;
}

nlohmann::json ChangeToRecord(const Change& c) {
  return {{"id", c.id},
          {"module", c.module},
          {"target", c.target},
          {"attribute", c.attribute},
          {"before", c.before},
          {"after", c.after},
          {"disruption", DisruptionLabel(c)},
          {"reason", c.reason},
          {"phase", c.phase},
          {"fieldPath", c.field_path},
          {"detail", c.detail},
          {"resource", c.resource},
          {"dependsOn", c.depends_on}};
}

namespace {

// Reads `key` of `j` into `out` when present; an error naming the key when
// it has another type.
template <typename T>
Status Field(const nlohmann::json& j, const char* key, bool (nlohmann::json::*is)() const noexcept,
             const char* want, T* out, bool required = false) {
  auto it = j.find(key);
  if (it == j.end() || (it->is_null() && !required)) {
    if (required) return InvalidArgumentError(std::string(key) + ": missing");
    return OkStatus();
  }
  if (!((*it).*is)()) return InvalidArgumentError(std::string(key) + ": want " + want);
  *out = it->get<T>();
  return OkStatus();
}

}  // namespace

StatusOr<Change> ParseChangeRecord(const nlohmann::json& j) {
  if (!j.is_object()) return InvalidArgumentError("change record: want an object");
  Change c;
  using J = nlohmann::json;
  RETURN_IF_ERROR(Field(j, "id", &J::is_string, "a string", &c.id, true));
  RETURN_IF_ERROR(Field(j, "module", &J::is_string, "a string", &c.module, true));
  RETURN_IF_ERROR(Field(j, "target", &J::is_string, "a string", &c.target));
  RETURN_IF_ERROR(Field(j, "attribute", &J::is_string, "a string", &c.attribute));
  RETURN_IF_ERROR(Field(j, "reason", &J::is_string, "a string", &c.reason));
  RETURN_IF_ERROR(Field(j, "fieldPath", &J::is_string, "a string", &c.field_path));
  RETURN_IF_ERROR(Field(j, "phase", &J::is_number_integer, "an integer", &c.phase));
  std::string disruption = "live";
  RETURN_IF_ERROR(Field(j, "disruption", &J::is_string, "a string", &disruption));
  if (disruption != "live" && disruption != "reboot" && disruption != "firmware-reset" &&
      disruption != kLinkFlapName) {
    return InvalidArgumentError("disruption: " + disruption +
                                " is not live, link-flap, reboot or firmware-reset");
  }
  c.disruption = DisruptionFromName(disruption);
  c.link_flap = disruption == kLinkFlapName;
  if (auto it = j.find("before"); it != j.end()) c.before = *it;
  if (auto it = j.find("after"); it != j.end()) c.after = *it;
  c.detail = nlohmann::json::object();
  if (auto it = j.find("detail"); it != j.end() && it->is_null()) {
    c.detail = nullptr;  // as written: a module's change may have no detail
  } else {
    RETURN_IF_ERROR(Field(j, "detail", &J::is_object, "an object", &c.detail));
  }
  if (c.id.empty() || c.module.empty())
    return InvalidArgumentError("id and module must not be empty");
  // Records written before the plan was a graph have neither: a barrier.
  RETURN_IF_ERROR(Field(j, "resource", &J::is_string, "a string", &c.resource));
  if (auto it = j.find("dependsOn"); it != j.end() && !it->is_null()) {
    if (!it->is_array()) return InvalidArgumentError("dependsOn: want a list of strings");
    for (const auto& r : *it) {
      if (!r.is_string()) return InvalidArgumentError("dependsOn: want a list of strings");
      c.depends_on.push_back(r.get<std::string>());
    }
  }
  return c;
}

StatusOr<std::optional<SavedPlan>> ParseSavedPlan(std::string_view text) {
  nlohmann::json j = nlohmann::json::parse(text.begin(), text.end(), nullptr,
                                           /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    // Not JSON: a host.yaml, unless it looks like JSON (`{` then `"`, as
    // plan --out writes it; a YAML flow mapping has no quoted first key as a
    // rule). Then its JSON error, with line and column, not the YAML
    // parser's view of it.
    const size_t open = text.find_first_not_of(" \t\r\n");
    const size_t key =
        open == std::string_view::npos ? open : text.find_first_not_of(" \t\r\n", open + 1);
    if (open == std::string_view::npos || text[open] != '{' || key == std::string_view::npos ||
        text[key] != '"') {
      return std::optional<SavedPlan>();
    }
    try {
      const nlohmann::json reparsed = nlohmann::json::parse(text.begin(), text.end());
      (void)reparsed;
    } catch (const nlohmann::json::exception& e) {
      // parse_error, or out_of_range for a number too large (1e400).
      std::string what = e.what();
      if (size_t at = what.find("] ");
          what.rfind("[json.exception", 0) == 0 && at != std::string::npos) {
        what = what.substr(at + 2);
      }
      return InvalidArgumentError("not valid JSON: " + what);
    }
    return std::optional<SavedPlan>();
  }
  if (!j.is_object()) return std::optional<SavedPlan>();
  auto kind = j.find("kind");
  if (kind == j.end() || !kind->is_string() || kind->get<std::string>() != kSavedPlanKind) {
    return std::optional<SavedPlan>();
  }
  using J = nlohmann::json;
  auto version = j.find("formatVersion");
  if (version == j.end() || !version->is_number_integer() ||
      version->get<long long>() != kSavedPlanFormatVersion) {
    return InvalidArgumentError(
        "formatVersion: " + (version == j.end() ? std::string("missing") : version->dump()) +
        ", this provisioner reads saved plans of formatVersion " +
        std::to_string(kSavedPlanFormatVersion) + " only; run plan again with this provisioner");
  }
  SavedPlan p;
  p.root = "/";
  RETURN_IF_ERROR(Field(j, "root", &J::is_string, "a string", &p.root));
  RETURN_IF_ERROR(Field(j, "desiredFile", &J::is_string, "a string", &p.desired_file, true));
  auto digests = j.find("digests");
  if (digests == j.end() || !digests->is_object()) return InvalidArgumentError("digests: missing");
  RETURN_IF_ERROR(Field(*digests, "desired", &J::is_string, "a string", &p.desired_digest, true)
                      .WithContext("digests"));
  RETURN_IF_ERROR(Field(*digests, "facts", &J::is_string, "a string", &p.facts_digest, true)
                      .WithContext("digests"));
  auto changes = j.find("changes");
  if (changes == j.end() || !changes->is_array())
    return InvalidArgumentError("changes: want a list");
  for (size_t i = 0; i < changes->size(); ++i) {
    auto c = ParseChangeRecord((*changes)[i]);
    if (!c.ok()) return c.status().WithContext("changes[" + std::to_string(i) + "]");
    p.changes.push_back(std::move(c).value());
  }
  return std::optional<SavedPlan>(std::move(p));
}

const std::vector<std::string>& ResourceKinds() {
  static const std::vector<std::string> kinds = {"pf", "card", "pci", "netdev", "kmod", "file"};
  return kinds;
}

namespace {

bool KnownResource(const std::string& r) {
  const size_t colon = r.find(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == r.size()) return false;
  const std::string kind = r.substr(0, colon);
  for (const auto& k : ResourceKinds()) {
    if (k == kind) return true;
  }
  return false;
}

}  // namespace

StatusOr<PlanGraph> BuildPlanGraph(const std::vector<Change>& changes) {
  const size_t n = changes.size();
  PlanGraph g;
  g.preds.resize(n);
  g.succs.resize(n);
  auto where = [&](size_t i) {
    return "change " + std::to_string(i + 1) + " of the plan (" + changes[i].id + ")";
  };
  // The last change on each resource, in plan order; the last barrier.
  std::map<std::string, size_t> last;
  std::optional<size_t> barrier;
  std::vector<size_t> since_barrier;  // changes after the last barrier
  for (size_t i = 0; i < n; ++i) {
    const Change& c = changes[i];
    std::set<size_t> preds;
    if (c.resource.empty()) {
      for (size_t j : since_barrier) preds.insert(j);
      if (barrier) preds.insert(*barrier);
      barrier = i;
      since_barrier.clear();
      last.clear();  // every earlier change comes before the barrier already
    } else {
      if (!KnownResource(c.resource)) {
        return InvalidArgumentError(where(i) + ": resource \"" + c.resource +
                                    "\" is not <kind>:<name> of a known kind");
      }
      if (barrier) preds.insert(*barrier);
      if (auto it = last.find(c.resource); it != last.end()) preds.insert(it->second);
      for (const auto& r : c.depends_on) {
        if (!KnownResource(r)) {
          return InvalidArgumentError(where(i) + ": dependsOn \"" + r +
                                      "\" is not <kind>:<name> of a known kind");
        }
        if (auto it = last.find(r); it != last.end()) preds.insert(it->second);
        for (size_t j = i + 1; j < n; ++j) {
          if (changes[j].resource == r) {
            return InvalidArgumentError(where(i) + " must follow the changes of " + r + ", but " +
                                        where(j) + " is planned after it (a dependency cycle)");
          }
        }
      }
      since_barrier.push_back(i);
      last[c.resource] = i;
    }
    // Another resource's last change before this one is not enough when
    // `depends_on` names it: every earlier change on it came before that last one
    // (same-resource changes are a chain), so the last one suffices.
    g.preds[i].assign(preds.begin(), preds.end());
    for (size_t j : g.preds[i]) g.succs[j].push_back(i);
  }
  std::vector<size_t> depth(n, 1);
  for (size_t i = 0; i < n; ++i) {
    for (size_t j : g.preds[i]) depth[i] = std::max(depth[i], depth[j] + 1);
    g.longest_chain = std::max(g.longest_chain, depth[i]);
  }
  return g;
}

std::string Digest(const std::string& bytes) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char ch : bytes) {
    h ^= ch;
    h *= 1099511628211ULL;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

int Plan::LinkFlaps() const {
  int n = 0;
  for (const auto& c : changes) n += DisruptionLabel(c) == kLinkFlapName;
  return n;
}

bool Plan::RebootRequired() const {
  for (const auto& c : changes) {
    // firmware-reset: made live by a firmware reset (apply falls back to a
    // reboot, exit 3, only when the reset fails).
    if (c.disruption == Disruption::kReboot) return true;
  }
  return false;
}

}  // namespace provisioner
