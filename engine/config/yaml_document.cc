#include "engine/config/yaml_document.h"

#include <charconv>
#include <cstdint>
#include <exception>
#include <limits>
#include <optional>
#include <sstream>
#include <utility>

#include "engine/config/field_path.h"
#include "engine/config/text.h"
#include "engine/config/yaml_syntax_message.h"
#include "yaml-cpp/depthguard.h"
#include "yaml-cpp/eventhandler.h"
#include "yaml-cpp/parser.h"
#include "yaml-cpp/yaml.h"

namespace provisioner::config {
namespace {

using nlohmann::json;

constexpr const char* kTagStr = "tag:yaml.org,2002:str";
constexpr const char* kTagInt = "tag:yaml.org,2002:int";
constexpr const char* kTagFloat = "tag:yaml.org,2002:float";
constexpr const char* kTagBool = "tag:yaml.org,2002:bool";
constexpr const char* kTagNull = "tag:yaml.org,2002:null";

// yaml-cpp marks are 0-based, -1 when unknown.
SourceMark ToMark(const YAML::Mark& m) {
  if (m.line < 0 || m.column < 0) return SourceMark{};
  return SourceMark{m.line + 1, m.column + 1};
}

bool IsDigits(std::string_view s, bool (*ok)(char)) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!ok(c)) return false;
  }
  return true;
}
bool IsDec(char c) { return c >= '0' && c <= '9'; }
bool IsOct(char c) { return c >= '0' && c <= '7'; }
bool IsHex(char c) { return IsDec(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

bool IsNullText(std::string_view s) {
  return s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL";
}

std::optional<bool> BoolText(std::string_view s) {
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  return std::nullopt;
}

// YAML 1.2 core schema float: [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?
bool IsFloatText(std::string_view s) {
  size_t i = 0;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
  std::string_view body = s.substr(i);
  if (body == ".inf" || body == ".Inf" || body == ".INF") return true;
  if (i == 0 && (s == ".nan" || s == ".NaN" || s == ".NAN")) return true;
  size_t int_digits = 0, frac_digits = 0;
  while (i < s.size() && IsDec(s[i])) ++i, ++int_digits;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && IsDec(s[i])) ++i, ++frac_digits;
    if (int_digits == 0 && frac_digits == 0) return false;
  } else if (int_digits == 0) {
    return false;
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
    if (!IsDigits(s.substr(i), IsDec)) return false;
    return true;
  }
  return i == s.size();
}

enum class IntParse { kNotInt, kOk, kOverflow };

// YAML 1.2 core schema int: [-+]?[0-9]+ | 0o[0-7]+ | 0x[0-9a-fA-F]+
IntParse ParseIntText(std::string_view s, int64_t* out) {
  int base = 10;
  std::string_view digits = s;
  bool negative = false;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'o')) {
    base = s[1] == 'x' ? 16 : 8;
    digits = s.substr(2);
    if (!IsDigits(digits, base == 16 ? IsHex : IsOct)) return IntParse::kNotInt;
  } else {
    if (!digits.empty() && (digits[0] == '-' || digits[0] == '+')) {
      negative = digits[0] == '-';
      digits.remove_prefix(1);
    }
    if (!IsDigits(digits, IsDec)) return IntParse::kNotInt;
  }
  uint64_t magnitude = 0;
  auto r = std::from_chars(digits.data(), digits.data() + digits.size(), magnitude, base);
  if (r.ec != std::errc() || r.ptr != digits.data() + digits.size()) return IntParse::kOverflow;
  if (negative) {
    if (magnitude > static_cast<uint64_t>(INT64_MAX) + 1) return IntParse::kOverflow;
    *out = magnitude == static_cast<uint64_t>(INT64_MAX) + 1 ? INT64_MIN
                                                             : -static_cast<int64_t>(magnitude);
  } else {
    if (magnitude > static_cast<uint64_t>(INT64_MAX)) return IntParse::kOverflow;
    *out = static_cast<int64_t>(magnitude);
  }
  return IntParse::kOk;
}

double ParseFloatText(std::string_view s) {
  std::string_view body = s;
  bool negative = false;
  if (!body.empty() && (body[0] == '-' || body[0] == '+')) {
    negative = body[0] == '-';
    body.remove_prefix(1);
  }
  double v = 0;
  if (body.size() == 4 && body[0] == '.' && (body[1] == 'i' || body[1] == 'I')) {
    v = std::numeric_limits<double>::infinity();
  } else if (body.size() == 4 && body[0] == '.' && (body[1] == 'n' || body[1] == 'N')) {
    v = std::numeric_limits<double>::quiet_NaN();
  } else {
    std::from_chars(body.data(), body.data() + body.size(), v);
  }
  return negative ? -v : v;
}

const char* KindName(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Map:
      return "a mapping";
    case YAML::NodeType::Scalar:
      return "a scalar";
    default:
      return "nothing";
  }
}

class Converter {
 public:
  Converter(std::string_view text, YamlDocument* doc) : text_(text), doc_(doc) {}

  bool failed() const { return fatal_; }

  json Convert(const YAML::Node& node, const std::string& path, int depth) {
    if (stop_) return nullptr;
    if (++nodes_ > kMaxNodes) {
      Fatal(path, node.Mark(),
            "the document is too large (more than " + std::to_string(kMaxNodes) +
                " values after expanding aliases)");
      stop_ = true;
      return nullptr;
    }
    if (depth > kMaxNestingDepth) {
      Fatal(path, node.Mark(),
            "values are nested more than " + std::to_string(kMaxNestingDepth) + " levels deep");
      stop_ = true;
      return nullptr;
    }
    switch (node.Type()) {
      case YAML::NodeType::Scalar:
        return ConvertScalar(node, path);
      case YAML::NodeType::Sequence: {
        json out = json::array();
        size_t i = 0;
        for (const auto& item : node) {
          std::string child = JoinIndex(path, i++);
          doc_->marks.Set(child, ToMark(item.Mark()));
          out.push_back(Convert(item, child, depth + 1));
          if (stop_) break;
        }
        return out;
      }
      case YAML::NodeType::Map:
        return ConvertMap(node, path, depth);
      default:  // Null, Undefined
        return nullptr;
    }
  }

  void Fatal(const std::string& path, const YAML::Mark& mark, std::string message) {
    Fatal(path, ToMark(mark), std::move(message));
  }

  void Fatal(const std::string& path, SourceMark mark, std::string message) {
    fatal_ = true;
    if (mark.line > 0) doc_->marks.Set(path, mark);
    doc_->diagnostics.push_back(Diagnostic{Severity::kError, path, std::move(message)});
  }

 private:
  json ConvertMap(const YAML::Node& node, const std::string& path, int depth) {
    json out = json::object();
    for (auto it = node.begin(); it != node.end(); ++it) {
      // Copies: the iterator hands out a temporary pair of handles.
      const YAML::Node key = it->first;
      const YAML::Node value = it->second;
      if (!key.IsScalar()) {
        Fatal(path, key.Mark(),
              std::string("keys must be plain strings, found ") +
                  (key.IsNull() ? "an empty key" : KindName(key)));
        continue;
      }
      const std::string& name = key.Scalar();
      std::string child = JoinField(path, name);
      if (!IsValidUtf8(name) || name.size() > kMaxScalarBytes) {
        Fatal(path, key.Mark(), "key " + Quote(name) + " is not valid UTF-8 or is too long");
        continue;
      }
      if (key.Tag() == "!") CheckQuoteClosed(child, key.Mark());
      if (out.contains(name)) {
        auto first = doc_->key_marks.find(child);
        std::string where = first == doc_->key_marks.end()
                                ? ""
                                : " (first at line " + std::to_string(first->second.line) + ")";
        Fatal(child, key.Mark(), "duplicate key " + Quote(name) + where);
        continue;
      }
      SourceMark key_mark = ToMark(key.Mark());
      SourceMark value_mark = ToMark(value.Mark());
      // An empty value ("numVfs:") has no mark of its own on that line.
      if (value.IsNull() && (value_mark.line == 0 || value_mark.line != key_mark.line)) {
        value_mark = key_mark;
      }
      doc_->key_marks[child] = key_mark;
      doc_->marks.Set(child, value_mark);
      out[name] = Convert(value, child, depth + 1);
      if (stop_) break;
    }
    return out;
  }

  json ConvertScalar(const YAML::Node& node, const std::string& path) {
    const std::string& s = node.Scalar();
    const std::string& tag = node.Tag();
    if (s.size() > kMaxScalarBytes) {
      Error(path, "value is longer than " + std::to_string(kMaxScalarBytes) + " bytes");
      return "";
    }
    if (!IsValidUtf8(s)) {
      Error(path, "value " + Quote(s) + " is not valid UTF-8");
      return "";
    }
    if (tag == "!") {  // quoted or block scalar: always a string
      CheckQuoteClosed(path, node.Mark());
      return s;
    }
    if (tag == kTagStr) return s;
    bool plain = tag == "?";
    if (plain || tag == kTagNull) {
      if (IsNullText(s)) return nullptr;
    }
    if (plain || tag == kTagBool) {
      if (auto b = BoolText(s)) {
        doc_->scalar_text[path] = s;
        return *b;
      }
    }
    if (plain || tag == kTagInt) {
      int64_t v = 0;
      switch (ParseIntText(s, &v)) {
        case IntParse::kOk:
          doc_->scalar_text[path] = s;
          return v;
        case IntParse::kOverflow:
          Error(path, "integer " + s + " is out of range");
          return nullptr;
        case IntParse::kNotInt:
          break;
      }
    }
    if (plain || tag == kTagFloat) {
      if (IsFloatText(s)) {
        doc_->scalar_text[path] = s;
        return ParseFloatText(s);
      }
    }
    if (plain) return s;
    Error(path, "value " + Quote(s) + " does not fit its tag " + Quote(tag) +
                    " (supported tags: !!str, !!int, !!float, !!bool, !!null)");
    return s;
  }

  void Error(const std::string& path, std::string message) {
    doc_->diagnostics.push_back(Diagnostic{Severity::kError, path, std::move(message)});
  }

  // yaml-cpp accepts a quoted scalar that runs to the end of the file; YAML
  // does not. Scan from the opening quote for its closing quote.
  void CheckQuoteClosed(const std::string& path, const YAML::Mark& mark) {
    if (mark.pos < 0 || static_cast<size_t>(mark.pos) >= text_.size()) return;
    size_t pos = static_cast<size_t>(mark.pos);
    char q = text_[pos];
    if (q != '"' && q != '\'') return;
    for (size_t i = pos + 1; i < text_.size(); ++i) {
      char c = text_[i];
      if (q == '"' && c == '\\') {
        ++i;
        continue;
      }
      if (c != q) continue;
      if (q == '\'' && i + 1 < text_.size() && text_[i + 1] == '\'') {
        ++i;
        continue;
      }
      return;
    }
    Fatal(path, mark, std::string("unterminated quoted string: no closing ") + q);
  }

  std::string_view text_;
  YamlDocument* doc_;
  bool fatal_ = false;
  bool stop_ = false;
  size_t nodes_ = 0;
};

void FileLevelError(YamlDocument* doc, SourceMark mark, std::string message) {
  doc->ok = false;
  doc->marks.Set("", mark);
  doc->diagnostics.push_back(Diagnostic{Severity::kError, "", std::move(message)});
}

// Where each document of the stream starts and whether it holds anything.
// yaml-cpp's LoadAll never returns on a stray ',' at document level (each
// call yields another empty document without consuming input), so documents
// are counted with a capped event pass instead.
class DocumentScanner final : public YAML::EventHandler {
 public:
  struct Document {
    SourceMark mark;
    bool empty = true;
  };
  static constexpr size_t kMaxDocuments = 64;

  // Throws yaml-cpp's ParserException on a syntax error.
  void Scan(const std::string& text) {
    std::istringstream in(text);
    YAML::Parser parser(in);
    while (docs_.size() < kMaxDocuments && parser.HandleNextDocument(*this)) {
    }
    stuck_ = docs_.size() >= kMaxDocuments;
  }

  const std::vector<Document>& docs() const { return docs_; }
  bool stuck() const { return stuck_; }

  void OnDocumentStart(const YAML::Mark& mark) override {
    docs_.push_back(Document{ToMark(mark), true});
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t) override { Top(mark, false); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override { Top(mark, true); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                const std::string&) override {
    Top(mark, true);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    Top(mark, true);
    ++depth_;
  }
  void OnSequenceEnd() override { --depth_; }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    Top(mark, true);
    ++depth_;
  }
  void OnMapEnd() override { --depth_; }

 private:
  // The top-level node of the current document: its mark is the document's.
  void Top(const YAML::Mark& mark, bool content) {
    if (depth_ != 0 || docs_.empty()) return;
    docs_.back().mark = ToMark(mark);
    docs_.back().empty = !content;
  }

  std::vector<Document> docs_;
  int depth_ = 0;
  bool stuck_ = false;
};

}  // namespace

YamlDocument ParseYamlDocument(std::string_view original) {
  YamlDocument doc;
  // A lone CR is a line break in YAML (old Mac line endings); yaml-cpp reads
  // a file of only those as one empty line ("the file is empty"). As LF, the
  // lines and columns stay where they were.
  std::string input(original);
  for (size_t i = 0; i < input.size(); ++i) {
    if (input[i] == '\r' && (i + 1 == input.size() || input[i + 1] != '\n')) input[i] = '\n';
  }
  const std::string_view text = input;
  // YAML's printable set has no C0 control byte but tab, LF and CR, and no
  // DEL: yaml-cpp reads a raw NUL as the start of an escape (NUL then "n"
  // became a newline in a plain scalar and passed validation). Refused where
  // it stands; in a double-quoted string, "\0" or "\x1b" say the same.
  {
    int line = 1, column = 1;
    for (unsigned char c : input) {
      if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f) {
        static const char kHex[] = "0123456789abcdef";
        FileLevelError(&doc, SourceMark{line, column},
                       std::string("invalid YAML: a raw control byte \\x") + kHex[c >> 4] +
                           kHex[c & 15] +
                           " (YAML allows only tab and line breaks; in a double-quoted string, "
                           "write it as an escape)");
        return doc;
      }
      if (c == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
  }
  // "nicSelector { vendor: 15b3 }": where it is, before yaml-cpp misreads it.
  if (auto colon = MissingColonBeforeFlow(text)) {
    FileLevelError(&doc, SourceMark{colon->line, colon->column},
                   "invalid YAML: " + Printable(colon->message));
    return doc;
  }
  YAML::Node root;
  try {
    DocumentScanner scanner;
    scanner.Scan(input);
    std::vector<DocumentScanner::Document> docs = scanner.docs();
    if (scanner.stuck()) {
      SourceMark at = docs.empty() ? SourceMark{1, 1} : docs.back().mark;
      if (at.line == 0) at = SourceMark{1, 1};
      FileLevelError(&doc, at, "invalid YAML: unexpected text where a document should start");
      return doc;
    }
    // Trailing empty documents ("---" at the end) are harmless.
    while (docs.size() > 1 && docs.back().empty) docs.pop_back();
    if (docs.size() > 1) {
      FileLevelError(&doc, docs[1].mark,
                     "expected one YAML document, found " + std::to_string(docs.size()) +
                         " (remove the extra \"---\" documents)");
      return doc;
    }
    root = YAML::Load(input);
  } catch (const YAML::DeepRecursion& e) {
    FileLevelError(
        &doc, ToMark(e.mark),
        "invalid YAML: values are nested too deeply (" + std::to_string(e.depth()) + " levels)");
    return doc;
  } catch (const YAML::ParserException& e) {
    // A key typed without its colon ("- name pf0"): reported on its own
    // line, not on the next line that yaml-cpp stumbles over.
    if (auto colon = MissingColon(text, e.mark, e.msg)) {
      FileLevelError(&doc, SourceMark{colon->line, colon->column},
                     "invalid YAML: " + Printable(colon->message));
      return doc;
    }
    FileLevelError(&doc, ToMark(e.mark),
                   "invalid YAML: " + Printable(PlainSyntaxMessage(text, e.mark, e.msg)) +
                       TabHint(text, e.mark));
    return doc;
  } catch (const YAML::Exception& e) {
    FileLevelError(&doc, ToMark(e.mark), "invalid YAML: " + Printable(e.msg));
    return doc;
  } catch (const std::exception& e) {
    FileLevelError(&doc, SourceMark{1, 1},
                   std::string("cannot parse YAML: ") + Printable(e.what()));
    return doc;
  }

  if (!root.IsDefined() || root.IsNull()) {
    FileLevelError(
        &doc, SourceMark{1, 1},
        "the file is empty: expected a HostConfig mapping (apiVersion, kind, metadata, spec)");
    return doc;
  }
  if (!root.IsMap()) {
    FileLevelError(&doc, ToMark(root.Mark()),
                   std::string("expected a mapping (apiVersion, kind, metadata, spec) at the top "
                               "level, found ") +
                       (root.IsSequence() ? "a list" : "a scalar"));
    return doc;
  }
  doc.marks.Set("", ToMark(root.Mark()));
  Converter converter(text, &doc);
  try {
    doc.root = converter.Convert(root, "", 0);
  } catch (const std::exception& e) {
    converter.Fatal("", SourceMark{1, 1}, std::string("cannot read YAML: ") + Printable(e.what()));
  }
  doc.ok = !converter.failed();
  return doc;
}

}  // namespace provisioner::config
