#include "engine/config/schema_check.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <exception>
#include <map>
#include <memory>
#include <regex>
#include <string>
#include <string_view>
#include <utility>

#include "engine/config/field_path.h"
#include "engine/config/text.h"
#include "schemas/host_schema.h"
#include "valijson/adapters/nlohmann_json_adapter.hpp"
#include "valijson/schema.hpp"
#include "valijson/schema_parser.hpp"
#include "valijson/validation_results.hpp"
#include "valijson/validator.hpp"

namespace provisioner::config {
namespace {

// " (the function is 0-7, not 9)" for a PCI address whose only fault is a
// function above 7 or a device above 1f; "" otherwise.
std::string PciAddressHint(const std::string& text) {
  const size_t dot = text.rfind('.');
  const size_t colon = text.rfind(':');
  if (dot == std::string::npos || colon == std::string::npos || colon > dot ||
      dot + 2 != text.size()) {
    return "";
  }
  const std::string device = text.substr(colon + 1, dot - colon - 1);
  const char function = text[dot + 1];
  if (device.size() != 2 || !std::isxdigit(static_cast<unsigned char>(device[0])) ||
      !std::isxdigit(static_cast<unsigned char>(device[1])) ||
      !std::isxdigit(static_cast<unsigned char>(function))) {
    return "";
  }
  if (std::stoi(device, nullptr, 16) > 0x1f) {
    return " (the device is 00\u20131f, not " + device + ")";
  }
  if (function > '7') return std::string(" (the function is 0\u20137, not ") + function + ")";
  return "";
}

using nlohmann::json;

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// valijson's messages from a parent whose child failed.
bool IsCascade(std::string_view description) {
  for (std::string_view prefix : {
           "Failed to validate against schema associated with property name",
           "Failed to validate against schema associated with pattern",
           "Failed to validate against additional properties schema",
           "Failed to validate item #",
           "Cannot validate item #",
           "Failed to validate against child schema",
           "Failed to validate against any",
           "Failed to validate against exactly one",
       }) {
    if (StartsWith(description, prefix)) return true;
  }
  return false;
}

// The compiled-in schema, parsed once.
class CompiledSchema {
 public:
  CompiledSchema() {
    doc_ = json::parse(HostSchemaJson(), nullptr, /*allow_exceptions=*/false);
    if (doc_.is_discarded() || !doc_.is_object()) {
      error_ = "the built-in host.yaml schema is not valid JSON";
      return;
    }
    try {
      valijson::SchemaParser parser(valijson::SchemaParser::kDraft7);
      valijson::adapters::NlohmannJsonAdapter adapter(doc_);
      parser.populateSchema(adapter, schema_);
      ok_ = true;
    } catch (const std::exception& e) {
      error_ = std::string("the built-in host.yaml schema does not load: ") + e.what();
    }
  }

  static const CompiledSchema& Get() {
    static const CompiledSchema* schema = new CompiledSchema();  // never destroyed
    return *schema;
  }

  bool ok() const { return ok_; }
  const std::string& error() const { return error_; }
  const json& doc() const { return doc_; }
  const valijson::Schema& schema() const { return schema_; }

  // Follows "$ref": a JSON pointer into this document, "#/definitions/<name>"
  // or deeper ("#/definitions/nic/properties/vfMtu": a vfGroup's fields are
  // the nic's).
  const json* Resolve(const json* s) const {
    for (int hops = 0; s != nullptr && hops < 16; ++hops) {
      if (!s->is_object()) return nullptr;
      auto ref = s->find("$ref");
      if (ref == s->end()) return s;
      if (!ref->is_string()) return nullptr;
      const std::string& target = ref->get_ref<const std::string&>();
      if (!StartsWith(target, "#/")) return nullptr;
      json::json_pointer pointer;
      try {
        pointer = json::json_pointer(target.substr(1));
      } catch (const json::exception&) {
        return nullptr;  // not a JSON pointer: valijson refused the schema already
      }
      s = doc_.contains(pointer) ? &doc_.at(pointer) : nullptr;
    }
    return nullptr;
  }

  // The schema of `key` inside an object (properties, then additionalProperties).
  const json* PropertySchema(const json* s, const std::string& key) const {
    s = Resolve(s);
    if (s == nullptr) return nullptr;
    auto props = s->find("properties");
    if (props != s->end() && props->is_object()) {
      auto p = props->find(key);
      if (p != props->end()) return &*p;
    }
    auto addl = s->find("additionalProperties");
    if (addl != s->end() && addl->is_object()) return &*addl;
    return nullptr;
  }

  const json* ItemSchema(const json* s) const {
    s = Resolve(s);
    if (s == nullptr) return nullptr;
    auto items = s->find("items");
    return items != s->end() && items->is_object() ? &*items : nullptr;
  }

 private:
  bool ok_ = false;
  std::string error_;
  json doc_;
  valijson::Schema schema_;
};

// What a valijson error context points at.
struct Location {
  std::string path;
  const json* value = nullptr;   // nullptr when the context leaves the document
  const json* schema = nullptr;  // resolved; nullptr when unknown
};

class SchemaChecker {
 public:
  SchemaChecker(const CompiledSchema& schema, YamlDocument* doc) : schema_(schema), doc_(doc) {}

  SchemaCheckResult Run() {
    if (!schema_.ok()) {
      Add("", schema_.error(), "", 0);
      return Finish();
    }
    FindUnknownFields(doc_->root, &schema_.doc(), "");
    valijson::ValidationResults results;
    bool valid = false;
    try {
      valijson::Validator validator(valijson::Validator::kStrongTypes);
      valijson::adapters::NlohmannJsonAdapter target(doc_->root);
      valid = validator.validate(schema_.schema(), target, &results);
    } catch (const std::exception& e) {
      Add("", std::string("schema validation failed: ") + Printable(e.what()), "", 0);
      return Finish();
    }
    std::vector<std::pair<std::string, std::string>> unmapped;
    valijson::ValidationResults::Error error;
    while (results.popError(error)) {
      if (!MapError(error.context, error.description)) {
        unmapped.emplace_back(Locate(error.context).path, error.description);
      }
    }
    // Should the schema reject something no rule above explains, say so
    // rather than accept the file. Parents reporting a failed child are
    // cascades; the one failure valijson reports only that way is a bad
    // nodeSelector key (propertyNames), which CheckDesiredState reports.
    if (!valid && found_.empty()) {
      for (const auto& [path, description] : unmapped) {
        if (IsCascade(description)) continue;
        Add(path, "does not match the schema: " + Printable(description), path, 1);
      }
    }
    return Finish();
  }

 private:
  struct Found {
    std::string path;
    std::string message;
    std::string taint;
    int priority;  // per path only the lowest is kept: 0 type, 1 value, 2 pattern
  };

  void Add(std::string path, std::string message, std::string taint, int priority) {
    found_.push_back(Found{std::move(path), std::move(message), std::move(taint), priority});
  }

  SchemaCheckResult Finish() {
    std::map<std::string, int> best;
    for (const auto& f : found_) {
      auto it = best.find(f.path);
      if (it == best.end() || f.priority < it->second) best[f.path] = f.priority;
    }
    SchemaCheckResult out;
    std::set<std::pair<std::string, std::string>> seen;
    for (const auto& f : found_) {
      if (f.priority != best[f.path]) continue;
      if (!seen.insert({f.path, f.message}).second) continue;
      out.diagnostics.push_back(Diagnostic{Severity::kError, f.path, f.message});
      out.tainted.insert(f.taint);
    }
    return out;
  }

  // -- unknown fields -------------------------------------------------------

  void FindUnknownFields(const json& value, const json* schema, const std::string& path) {
    schema = schema_.Resolve(schema);
    if (schema == nullptr) return;
    if (value.is_object()) {
      auto props = schema->find("properties");
      bool has_props = props != schema->end() && props->is_object();
      auto addl = schema->find("additionalProperties");
      bool closed = addl != schema->end() && addl->is_boolean() && !addl->get<bool>();
      for (const auto& [key, child] : value.items()) {
        std::string child_path = JoinField(path, key);
        if (has_props && props->contains(key)) {
          FindUnknownFields(child, &(*props)[key], child_path);
        } else if (closed) {
          ReportUnknown(child_path, key, has_props ? &*props : nullptr);
        } else if (addl != schema->end() && addl->is_object()) {
          FindUnknownFields(child, &*addl, child_path);
        }
      }
    } else if (value.is_array()) {
      const json* items = schema_.ItemSchema(schema);
      if (items == nullptr) return;
      for (size_t i = 0; i < value.size(); ++i) {
        FindUnknownFields(value[i], items, JoinIndex(path, i));
      }
    }
  }

  void ReportUnknown(const std::string& path, const std::string& key, const json* props) {
    std::string message = "unknown field " + Quote(key);
    if (props != nullptr && !props->empty()) {
      std::string best;
      size_t best_distance = 3;  // suggest only close matches
      std::string all;
      for (const auto& [name, unused] : props->items()) {
        size_t d = EditDistance(key, name);
        if (d < best_distance && d < name.size()) {
          best_distance = d;
          best = name;
        }
        all += (all.empty() ? "" : ", ") + name;
      }
      message += best.empty() ? "; expected one of: " + all : " (did you mean \"" + best + "\"?)";
    } else {
      message += "; this mapping takes no fields";
    }
    auto key_mark = doc_->key_marks.find(path);
    if (key_mark != doc_->key_marks.end()) doc_->marks.Set(path, key_mark->second);
    Add(path, message, path, 0);
  }

  // -- valijson errors ------------------------------------------------------

  Location Locate(const std::vector<std::string>& context) {
    Location loc;
    loc.value = &doc_->root;
    loc.schema = schema_.Resolve(&schema_.doc());
    for (size_t i = 0; i < context.size(); ++i) {
      const std::string& token = context[i];
      if (i == 0 && token == "<root>") continue;
      std::string name = token;
      if (name.size() >= 2 && name.front() == '[' && name.back() == ']') {
        name = name.substr(1, name.size() - 2);
      }
      if (loc.value != nullptr && loc.value->is_array()) {
        size_t index = 0;
        bool numeric = !name.empty() && name.size() < 10;
        for (char c : name) {
          numeric = numeric && c >= '0' && c <= '9';
          if (numeric) index = index * 10 + static_cast<size_t>(c - '0');
        }
        loc.path = numeric ? JoinIndex(loc.path, index) : JoinField(loc.path, name);
        loc.value = numeric && index < loc.value->size() ? &(*loc.value)[index] : nullptr;
        loc.schema = schema_.Resolve(schema_.ItemSchema(loc.schema));
      } else {
        loc.path = JoinField(loc.path, name);
        if (loc.value != nullptr && loc.value->is_object()) {
          auto it = loc.value->find(name);
          loc.value = it == loc.value->end() ? nullptr : &*it;
        } else {
          loc.value = nullptr;
        }
        loc.schema = schema_.Resolve(schema_.PropertySchema(loc.schema, name));
      }
    }
    return loc;
  }

  // Adds the diagnostic for one valijson error; false when it is a cascade
  // (a parent reporting that a child failed) or otherwise not understood.
  bool MapError(const std::vector<std::string>& context, const std::string& description) {
    if (StartsWith(description, "Object contains a property that could not be validated")) {
      return true;  // FindUnknownFields reports every unknown field
    }
    Location loc = Locate(context);
    const json* s = loc.schema;
    if (StartsWith(description, "Missing required property '")) {
      std::string field = description.substr(27);
      size_t q = field.find('\'');
      if (q != std::string::npos) field.resize(q);
      Add(loc.path, "missing required field " + Quote(field), JoinField(loc.path, field), 1);
      return true;
    }
    if (loc.value == nullptr) return false;
    const json& v = *loc.value;
    std::string shown = Shown(v, loc.path);
    if (StartsWith(description, "Value type not permitted")) {
      Add(loc.path, TypeMessage(v, loc.path, s), loc.path, 0);
      return true;
    }
    if (StartsWith(description, "Failed to match against any enum values")) {
      std::string allowed;
      if (s != nullptr && s->contains("enum") && (*s)["enum"].is_array()) {
        for (const auto& e : (*s)["enum"]) {
          allowed += (allowed.empty() ? "" : ", ") + Plain(e);
        }
      }
      std::string message = shown + " is not one of: " + allowed;
      // The nearest allowed value: a case slip (Exclusive) or a typo.
      if (v.is_string() && s != nullptr && s->contains("enum") && (*s)["enum"].is_array()) {
        const std::string& text = v.get_ref<const std::string&>();
        std::string best;
        size_t best_d = std::max<size_t>(2, text.size() / 3) + 1;
        for (const auto& e : (*s)["enum"]) {
          if (!e.is_string()) continue;
          const size_t d = EditDistance(text, e.get<std::string>());
          if (d < best_d) {
            best = e.get<std::string>();
            best_d = d;
          }
        }
        if (!best.empty()) message += " (did you mean " + Quote(best) + "?)";
      }
      Add(loc.path, message, loc.path, 1);
      return true;
    }
    if (StartsWith(description, "Failed to match expected value set by 'const'")) {
      std::string want = s != nullptr && s->contains("const") ? Shown((*s)["const"], "") : "?";
      Add(loc.path, "must be " + want + ", got " + shown, loc.path, 1);
      return true;
    }
    if (StartsWith(description, "Failed to match regex")) {
      std::string what;
      if (s != nullptr && s->contains("patternMessage") && (*s)["patternMessage"].is_string()) {
        what = "is not " + (*s)["patternMessage"].get<std::string>();
      } else if (s != nullptr && s->contains("pattern") && (*s)["pattern"].is_string()) {
        what = "does not match " + (*s)["pattern"].get<std::string>();
      } else {
        what = "has the wrong format";
      }
      if (v.is_string()) what += PciAddressHint(v.get_ref<const std::string&>());
      Add(loc.path, shown + " " + what, loc.path, 2);  // after a length error
      return true;
    }
    if (StartsWith(description, "Expected number")) {
      Add(loc.path, RangeMessage(v, shown, s), loc.path, 1);
      return true;
    }
    if (StartsWith(description, "String should be no more than")) {
      int64_t max = Limit(s, "maxLength");
      Add(loc.path, shown + " is longer than " + std::to_string(max) + " characters", loc.path, 1);
      return true;
    }
    // A lower bound on a string's or a list's length ("must not be empty" for 1).
    struct MinLength {
      const char* said;     // valijson's description starts so
      const char* keyword;  // the schema keyword holding the bound
      const char* before;   // the message around the bound
      const char* after;
    };
    static constexpr MinLength kMinLengths[] = {
        {"String should be no fewer than", "minLength", "must be at least ", " characters long"},
        {"Array should contain no fewer than", "minItems", "must list at least ", " items"},
    };
    for (const MinLength& m : kMinLengths) {
      if (!StartsWith(description, m.said)) continue;
      const int64_t min = Limit(s, m.keyword);
      Add(loc.path,
          min <= 1 ? std::string("must not be empty") : m.before + std::to_string(min) + m.after,
          loc.path, 1);
      return true;
    }
    if (StartsWith(description, "Object should have no fewer than")) {
      std::string fields;
      if (s != nullptr && s->contains("properties") && (*s)["properties"].is_object()) {
        for (const auto& [name, prop] : (*s)["properties"].items()) {
          const json* p = schema_.Resolve(&prop);
          if (p != nullptr && p->value("type", "") == "boolean") continue;  // modifiers
          fields += (fields.empty() ? "" : ", ") + name;
        }
      }
      Add(loc.path, "must not be empty: set at least one of " + fields, loc.path, 1);
      return true;
    }
    return false;
  }

  // The value as written: scalars from the source text, strings quoted.
  std::string Shown(const json& v, const std::string& path) const {
    if (v.is_string()) return Quote(v.get_ref<const std::string&>());
    auto text = doc_->scalar_text.find(path);
    if (text != doc_->scalar_text.end()) return text->second;
    if (v.is_object()) return "a mapping";
    if (v.is_array()) return "a list";
    if (v.is_null()) return "null";
    return v.dump(-1, ' ', false, json::error_handler_t::replace);
  }

  // Enum members and the like, unquoted.
  static std::string Plain(const json& v) {
    if (v.is_string()) return v.get<std::string>();
    return v.dump(-1, ' ', false, json::error_handler_t::replace);
  }

  static int64_t Limit(const json* s, const char* keyword) {
    if (s == nullptr) return 0;
    auto it = s->find(keyword);
    return it != s->end() && it->is_number_integer() ? it->get<int64_t>() : 0;
  }

  std::string TypeMessage(const json& v, const std::string& path, const json* s) const {
    static const std::map<std::string, std::string> kNames = {
        {"string", "a string"},  {"integer", "an integer"},
        {"number", "a number"},  {"boolean", "a boolean (true or false)"},
        {"object", "a mapping"}, {"array", "a list"},
        {"null", "null"},
    };
    std::vector<std::string> types;
    if (s != nullptr && s->contains("type")) {
      const json& t = (*s)["type"];
      if (t.is_string()) types.push_back(t.get<std::string>());
      if (t.is_array()) {
        for (const auto& e : t) {
          if (e.is_string()) types.push_back(e.get<std::string>());
        }
      }
    }
    std::string expected;
    bool wants_string = false;
    for (const auto& t : types) {
      auto it = kNames.find(t);
      expected += (expected.empty() ? "" : " or ") + (it == kNames.end() ? t : it->second);
      wants_string = wants_string || t == "string";
    }
    if (expected.empty()) expected = "another type";

    std::string got;
    if (v.is_null()) {
      got = "no value";
    } else if (v.is_boolean()) {
      got = "boolean " + Shown(v, path);
    } else if (v.is_number_integer()) {
      got = "integer " + Shown(v, path);
    } else if (v.is_number()) {
      got = "number " + Shown(v, path);
    } else if (v.is_string()) {
      got = "string " + Shown(v, path);
    } else {
      got = Shown(v, path);
    }
    std::string message = "expected " + expected + ", got " + got;
    // Quoting is the fix only when the quoted text is itself accepted: never
    // suggest what the next run refuses (deviceID: 10170, pkey: true).
    if (wants_string && (v.is_boolean() || v.is_number()) && QuotedPasses(Shown(v, path), s)) {
      message += " (quote it: " + Quote(Shown(v, path)) + ")";
    }
    // numVfs: "12": the number in quotes.
    const bool wants_number = expected.find("an integer") != std::string::npos ||
                              expected.find("a number") != std::string::npos;
    if (wants_number && !wants_string && v.is_string()) {
      const json number = json::parse(v.get_ref<const std::string&>(), nullptr, false);
      if (number.is_number() &&
          (number.is_number_integer() || expected.find("a number") != std::string::npos)) {
        message += " (remove the quotes: " + number.dump() + ")";
      }
    }
    return message;
  }

  // `text` as a string against the schema's pattern and length limits.
  static bool QuotedPasses(const std::string& text, const json* s) {
    if (s == nullptr) return true;
    if (s->contains("maxLength") && static_cast<int64_t>(text.size()) > Limit(s, "maxLength")) {
      return false;
    }
    if (s->contains("minLength") && static_cast<int64_t>(text.size()) < Limit(s, "minLength")) {
      return false;
    }
    auto p = s->find("pattern");
    if (p == s->end() || !p->is_string()) return true;
    try {
      return std::regex_search(text, std::regex(p->get<std::string>()));
    } catch (const std::regex_error&) {
      return false;
    }
  }

  static std::string RangeMessage(const json& v, const std::string& shown, const json* s) {
    double x = v.is_number() ? v.get<double>() : 0;
    if (s != nullptr && s->contains("maximum") && (*s)["maximum"].is_number() &&
        x > (*s)["maximum"].get<double>()) {
      return shown + " exceeds the maximum " + Plain((*s)["maximum"]);
    }
    if (s != nullptr && s->contains("minimum") && (*s)["minimum"].is_number() &&
        (std::isnan(x) || x < (*s)["minimum"].get<double>())) {
      return shown + " is below the minimum " + Plain((*s)["minimum"]);
    }
    return shown + " is out of range";
  }

  const CompiledSchema& schema_;
  YamlDocument* doc_;
  std::vector<Found> found_;
};

}  // namespace

SchemaCheckResult CheckAgainstSchema(YamlDocument* doc) {
  SchemaChecker checker(CompiledSchema::Get(), doc);
  return checker.Run();
}

}  // namespace provisioner::config
