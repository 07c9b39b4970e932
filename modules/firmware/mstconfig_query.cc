#include "modules/firmware/mstconfig_query.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <functional>
#include <sstream>
#include <utility>
#include <vector>

#include "engine/base/strings.h"
#include "nlohmann/json.hpp"

namespace provisioner {
namespace {

std::vector<std::string> Lines(std::string_view text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) nl = text.size();
    std::string line(text.substr(start, nl - start));
    if (!line.empty() && line.back() == '\r') line.pop_back();
    out.push_back(std::move(line));
    start = nl + 1;
  }
  return out;
}

std::vector<std::string> Tokens(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream in(line);
  for (std::string t; in >> t;) out.push_back(t);
  return out;
}

bool IsParamName(const std::string& t) {
  if (t.empty()) return false;
  for (char c : t) {
    if (!(std::isupper(static_cast<unsigned char>(c)) ||
          std::isdigit(static_cast<unsigned char>(c)) || c == '_' || c == '[' || c == ']' ||
          std::islower(static_cast<unsigned char>(c)))) {
      return false;
    }
  }
  return std::isalpha(static_cast<unsigned char>(t[0])) || t[0] == '_';
}

std::string LineRef(size_t i) { return "mstconfig query output line " + std::to_string(i + 1); }

// The word for `value` of parameter `name`, given the value printed before
// ("IB(1)" -> LINK_TYPE words; "False(0)" -> True/False).
std::optional<std::string> FormatValue(const std::string& name, const std::string& old,
                                       long value) {
  const bool worded = old.find('(') != std::string::npos && old.back() == ')';
  if (!worded) return std::to_string(value);
  if (name.rfind("LINK_TYPE_P", 0) == 0) {
    if (value == 1) return std::string("IB(1)");
    if (value == 2) return std::string("ETH(2)");
    if (value == 3) return std::string("VPI(3)");
    return std::nullopt;
  }
  if (old.rfind("True(", 0) == 0 || old.rfind("False(", 0) == 0) {
    if (value == 0) return std::string("False(0)");
    if (value == 1) return std::string("True(1)");
  }
  return std::nullopt;
}

// " RO     NUM_OF_PF ..." / "*RO     ...": the read-only column of
// mstflint >= 4.25, columns 1-2 after the diff mark.
bool IsReadOnlyMark(const std::string& line) {
  return line.size() > 3 && (line[0] == ' ' || line[0] == '*') && line.compare(1, 2, "RO") == 0 &&
         (line[3] == ' ' || line[3] == '\t');
}

// The words of a parameter line (the name, then its values) after its marks:
// mstflint >= 4.25 prints "%s%s     %-44s": the '*' (or a space), then "RO"
// (or two spaces) for a read-only parameter, then the name. Empty for a line
// that is no parameter line (not indented by a space, a tab or the '*').
std::vector<std::string> ParamLineWords(const std::string& line) {
  if (line.empty() || (line[0] != ' ' && line[0] != '*' && line[0] != '\t')) return {};
  return Tokens(IsReadOnlyMark(line) ? line.substr(3) : line[0] == '*' ? line.substr(1) : line);
}

// The text query with each parameter line of its table (below
// "Configurations:") passed to `rewrite` with its words; the other lines,
// and the line ends, as they were.
StatusOr<std::string> RewriteParamLines(
    std::string_view text,
    const std::function<Status(std::string& line, const std::vector<std::string>& words)>&
        rewrite) {
  std::vector<std::string> lines = Lines(text);
  bool in_table = false;
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string line = lines[i];
    if (Trim(line).rfind("Configurations:", 0) == 0) in_table = true;
    const std::vector<std::string> words = ParamLineWords(line);
    if (in_table && !words.empty()) RETURN_IF_ERROR(rewrite(line, words));
    out += line;
    if (i + 1 < lines.size()) out += '\n';
  }
  return out;
}

// `mstconfig -j FILE query` (mstflint >= 4.31) writes JSON; the text output
// never starts with '{'.
bool IsJsonQuery(std::string_view text) {
  size_t i = text.find_first_not_of(" \t\r\n");
  return i != std::string_view::npos && text[i] == '{';
}

// "line L column C" of byte offset `at` (0-based) in `text`.
std::string TextPosition(std::string_view text, size_t at) {
  size_t line = 1, column = 1;
  for (size_t i = 0; i < at && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return "line " + std::to_string(line) + " column " + std::to_string(column);
}

// The one device of a JSON query: {"Device #1": {...}}.
StatusOr<std::pair<std::string, nlohmann::json*>> JsonDevice(nlohmann::json& doc) {
  if (!doc.is_object() || doc.size() != 1 || !doc.begin()->is_object()) {
    return InvalidArgumentError(
        "mstconfig JSON query: want one object {\"Device #1\": {...}} for the one device queried");
  }
  return std::make_pair(doc.begin().key(), &doc.begin().value());
}

// A value as the text output prints it: 8 -> "8"; strings ("ETH(2)", "N/A",
// "Array[0..7]") as they are.
std::optional<std::string> JsonPrinted(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_unsigned()) return std::to_string(v.get<unsigned long long>());
  if (v.is_number_integer()) return std::to_string(v.get<long long>());
  return std::nullopt;
}

// Finds where JSON stops parsing, without exceptions: a SAX pass that
// accepts every event and keeps the byte position of the error.
struct ErrorPosition : nlohmann::json_sax<nlohmann::json> {
  size_t at = 0;
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return true; }
  bool key(string_t&) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t position, const std::string&,
                   const nlohmann::detail::exception&) override {
    at = position;
    return false;
  }
};

StatusOr<nlohmann::json> ParseJsonDoc(std::string_view text) {
  nlohmann::json doc = nlohmann::json::parse(text.begin(), text.end(), nullptr, false);
  if (doc.is_discarded()) {
    ErrorPosition where;
    nlohmann::json::sax_parse(text.begin(), text.end(), &where);
    return InvalidArgumentError("mstconfig JSON query: not JSON at " +
                                TextPosition(text, where.at == 0 ? 0 : where.at - 1));
  }
  return doc;
}

StatusOr<MstconfigQuery> ParseJsonQuery(std::string_view text) {
  ASSIGN_OR_RETURN(nlohmann::json doc, ParseJsonDoc(text));
  ASSIGN_OR_RETURN(auto device, JsonDevice(doc));
  const std::string where = "mstconfig JSON query: \"" + Printable(device.first) + "\"";
  const nlohmann::json& d = *device.second;
  MstconfigQuery q;
  auto text_of = [&d](const char* key) {
    auto it = d.find(key);
    return it != d.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  q.device_type = text_of("device_type");
  q.name = text_of("name");
  q.device = text_of("device");
  if (q.name == "N/A") q.name.clear();
  auto tlvs = d.find("tlv_configuration");
  if (tlvs == d.end() || !tlvs->is_object()) {
    return InvalidArgumentError(where + " has no \"tlv_configuration\" object");
  }
  bool first = true;
  for (auto it = tlvs->begin(); it != tlvs->end(); ++it) {
    const std::string at = where + ".tlv_configuration." + Printable(it.key());
    if (!IsParamName(it.key())) {
      return InvalidArgumentError(at + ": " + Quote(it.key()) + " is not a parameter name");
    }
    if (!it->is_object()) return InvalidArgumentError(at + ": want an object");
    FirmwareParam p;
    auto next = it->find("next_value");
    std::optional<std::string> printed;
    if (next != it->end()) printed = JsonPrinted(*next);
    if (!printed) return InvalidArgumentError(at + ".next_value: want a number or a string");
    p.next_boot = *printed;
    if (auto ro = it->find("read_only"); ro != it->end()) {
      if (!ro->is_boolean()) return InvalidArgumentError(at + ".read_only: want true or false");
      p.read_only = ro->get<bool>();
    }
    // mstconfig writes default_value/current_value for every parameter or
    // for none (-e, and what the firmware supports).
    auto column = [&](const char* key, std::optional<std::string>& out, bool& has) -> Status {
      auto v = it->find(key);
      if (first) has = v != it->end();
      if ((v != it->end()) != has) {
        return InvalidArgumentError(at + ": " + key + (has ? " missing" : " given") +
                                    ", unlike the first parameter");
      }
      if (v == it->end()) return OkStatus();
      out = JsonPrinted(*v);
      if (!out) return InvalidArgumentError(at + "." + key + ": want a number or a string");
      return OkStatus();
    };
    RETURN_IF_ERROR(column("default_value", p.default_value, q.has_default));
    RETURN_IF_ERROR(column("current_value", p.current, q.has_current));
    first = false;
    q.params[it.key()] = std::move(p);
  }
  if (q.params.empty()) return InvalidArgumentError(where + " lists no parameter");
  return q;
}

}  // namespace

std::optional<long> MstconfigValueNumber(std::string_view value) {
  std::string v(value);
  size_t open = v.rfind('(');
  if (open != std::string::npos && !v.empty() && v.back() == ')') {
    v = v.substr(open + 1, v.size() - open - 2);
  }
  if (v.empty()) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  long n = std::strtol(v.c_str(), &end, 0);
  if (end == v.c_str() || *end != '\0' || errno != 0) return std::nullopt;
  return n;
}

namespace {

std::string LowerCase(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// "ETH(2)" -> "eth"; "8" -> "8".
std::string PrintedName(std::string_view printed) {
  size_t open = printed.rfind('(');
  if (open != std::string_view::npos && !printed.empty() && printed.back() == ')') {
    return LowerCase(printed.substr(0, open));
  }
  return LowerCase(printed);
}

std::optional<long> WordNumber(std::string_view wanted) {
  const std::string w = LowerCase(wanted);
  if (w == "true") return 1;
  if (w == "false") return 0;
  return MstconfigValueNumber(wanted);  // "8", "0x8"; nullopt for a name
}

}  // namespace

bool MstconfigValueMatches(std::string_view printed, std::string_view wanted) {
  if (wanted.empty()) return false;
  if (PrintedName(printed) == LowerCase(wanted)) return true;
  auto want = WordNumber(wanted);
  auto have = MstconfigValueNumber(printed);
  return want && have && *want == *have;
}

std::optional<long> ResolveMstconfigValue(std::string_view name, std::string_view printed,
                                          std::string_view wanted) {
  if (auto n = WordNumber(wanted)) return n;
  if (PrintedName(printed) == LowerCase(wanted)) return MstconfigValueNumber(printed);
  if (name.rfind("LINK_TYPE_P", 0) == 0) {
    const std::string w = LowerCase(wanted);
    if (w == "vpi") return 3;
    if (auto v = LinkTypeValue(w)) return *v;
  }
  return std::nullopt;
}

std::optional<std::string> HiddenPciParamDefault(std::string_view name) {
  if (name == "MAX_ACC_OUT_READ") return std::string("0");
  if (name == "FORCE_ETH_PCI_SUBCLASS" || name == "IBM_CAPI_EN") return std::string("False(0)");
  return std::nullopt;
}

std::optional<int> LinkTypeValue(std::string_view link_type) {
  if (link_type == "ib") return 1;
  if (link_type == "eth") return 2;
  return std::nullopt;
}

std::string LinkTypeName(long value) {
  switch (value) {
    case 1:
      return "ib";
    case 2:
      return "eth";
    case 3:
      return "vpi";
    default:
      return "unknown(" + std::to_string(value) + ")";
  }
}

StatusOr<MstconfigQuery> ParseMstconfigQuery(std::string_view text) {
  if (IsJsonQuery(text)) return ParseJsonQuery(text);
  MstconfigQuery q;
  std::vector<std::string> lines = Lines(text);
  size_t i = 0;
  // Header block, up to "Configurations:".
  for (; i < lines.size(); ++i) {
    const std::string t = Trim(lines[i]);
    if (t.rfind("-E-", 0) == 0)
      return FailedPreconditionError("mstconfig: " + Printable(Trim(t.substr(3))));
    if (t.rfind("Configurations:", 0) == 0) break;
    size_t colon = t.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = t.substr(0, colon);
    const std::string val = Trim(t.substr(colon + 1));
    if (key == "Device type") q.device_type = val;
    if (key == "Name") q.name = val;
    if (key == "Device") q.device = val;
  }
  if (i == lines.size()) {
    return InvalidArgumentError("mstconfig query output has no \"Configurations:\" line");
  }
  const std::string header = lines[i];
  if (header.find("Next Boot") == std::string::npos) {
    return InvalidArgumentError(LineRef(i) + ": no \"Next Boot\" column in " + Quote(Trim(header)));
  }
  q.has_default = header.find("Default") != std::string::npos;
  q.has_current = header.find("Current") != std::string::npos;
  const size_t columns = 1 + (q.has_default ? 1 : 0) + (q.has_current ? 1 : 0);
  for (++i; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    if (Trim(line).empty()) continue;
    if (line[0] != ' ' && line[0] != '*' && line[0] != '\t') {
      const std::string t = Trim(line);
      if (t.rfind("-E-", 0) == 0)
        return FailedPreconditionError("mstconfig: " + Printable(Trim(t.substr(3))));
      continue;  // footnotes ("The '*' shows ...", "Device Firmware does not support ...")
    }
    const bool read_only = IsReadOnlyMark(line);
    std::vector<std::string> tok = ParamLineWords(line);
    if (tok.empty()) continue;
    if (!IsParamName(tok[0])) {
      return InvalidArgumentError(LineRef(i) + ": " + Quote(tok[0]) + " is not a parameter name");
    }
    if (tok.size() != columns + 1) {
      return InvalidArgumentError(LineRef(i) + ": " + tok[0] + " has " +
                                  std::to_string(tok.size() - 1) + " values, the header " +
                                  std::to_string(columns));
    }
    if (q.params.count(tok[0]) != 0) {  // mstconfig prints each parameter once
      return InvalidArgumentError(LineRef(i) + ": " + tok[0] + " is listed twice");
    }
    FirmwareParam p;
    p.read_only = read_only;
    size_t k = 1;
    if (q.has_default) p.default_value = tok[k++];
    if (q.has_current) p.current = tok[k++];
    p.next_boot = tok[k];
    q.params[tok[0]] = std::move(p);
  }
  if (q.params.empty()) return InvalidArgumentError("mstconfig query output lists no parameter");
  return q;
}

namespace {

// SetNextBootValues of a JSON query: next_value as the value was written
// before (a number stays a number, "ETH(2)" a worded value), "modified" as
// mstconfig computes it.
StatusOr<std::string> SetJsonNextBootValues(std::string_view text,
                                            const std::map<std::string, long>& params) {
  ASSIGN_OR_RETURN(MstconfigQuery q, ParseJsonQuery(text));
  ASSIGN_OR_RETURN(nlohmann::json doc, ParseJsonDoc(text));
  ASSIGN_OR_RETURN(auto device, JsonDevice(doc));
  nlohmann::json& tlvs = (*device.second)["tlv_configuration"];
  for (const auto& [name, value] : params) {
    auto p = q.params.find(name);
    if (p == q.params.end())
      return NotFoundError("mstconfig query output has no parameter " + name);
    nlohmann::json& t = tlvs[name];
    if (t["next_value"].is_number()) {
      t["next_value"] = value;
    } else {
      auto word = FormatValue(name, p->second.next_boot, value);
      if (!word) {
        return InvalidArgumentError("cannot write " + std::to_string(value) + " to " + name +
                                    " (printed as " + p->second.next_boot + ")");
      }
      t["next_value"] = *word;
    }
    if (t.contains("modified")) {
      t["modified"] =
          (p->second.current && MstconfigValueNumber(*p->second.current) != value) ||
          (p->second.default_value && MstconfigValueNumber(*p->second.default_value) != value);
    }
  }
  return doc.dump(1, '\t') + "\n";
}

}  // namespace

StatusOr<std::string> SetNextBootValues(std::string_view text,
                                        const std::map<std::string, long>& params) {
  if (IsJsonQuery(text)) return SetJsonNextBootValues(text, params);
  ASSIGN_OR_RETURN(MstconfigQuery q, ParseMstconfigQuery(text));
  for (const auto& [name, value] : params) {
    if (!q.params.count(name)) {
      return NotFoundError("mstconfig query output has no parameter " + name);
    }
  }
  return RewriteParamLines(
      text, [&](std::string& line, const std::vector<std::string>& tok) -> Status {
        if (params.count(tok[0]) == 0) return OkStatus();
        const long value = params.at(tok[0]);
        const FirmwareParam& p = q.params.at(tok[0]);
        auto word = FormatValue(tok[0], p.next_boot, value);
        if (!word) {
          return InvalidArgumentError("cannot write " + std::to_string(value) + " to " + tok[0] +
                                      " (printed as " + p.next_boot + ")");
        }
        size_t at = line.rfind(p.next_boot);
        std::string rest = *word;
        if (rest.size() < 16) rest.resize(16, ' ');
        line = line.substr(0, at) + rest;
        bool differs = (p.current && MstconfigValueNumber(*p.current) != value) ||
                       (p.default_value && MstconfigValueNumber(*p.default_value) != value);
        if (line[0] == ' ' || line[0] == '*') line[0] = differs ? '*' : ' ';
        if (tok[0] == kAdvancedPciSettings && value == 1) {
          // The parameters it reveals, in its line's layout, at their value.
          for (const char* name : {"MAX_ACC_OUT_READ", "FORCE_ETH_PCI_SUBCLASS", "IBM_CAPI_EN"}) {
            if (q.params.count(name) != 0) continue;
            std::string revealed = std::string(line.find(tok[0]), ' ') + name;
            const std::string printed = *HiddenPciParamDefault(name);
            const size_t columns = 1 + (q.has_default ? 1 : 0) + (q.has_current ? 1 : 0);
            revealed += std::string(revealed.size() < 52 ? 52 - revealed.size() : 1, ' ');
            for (size_t c = 0; c < columns; ++c) {
              std::string v = printed;
              if (c + 1 < columns && v.size() < 20) v.resize(20, ' ');
              revealed += (c == 0 ? "" : " ") + v;
            }
            line += "\n" + revealed;
          }
        }
        return OkStatus();
      });
}

namespace {

// Which columns change: the value a parameter gets in each.
using ColumnRewrite = std::function<void(FirmwareParam&)>;

// The JSON form: current_value / next_value rewritten, "modified" recomputed.
StatusOr<std::string> RewriteJsonColumns(std::string_view text, const ColumnRewrite& rewrite) {
  ASSIGN_OR_RETURN(MstconfigQuery q, ParseJsonQuery(text));
  ASSIGN_OR_RETURN(nlohmann::json doc, ParseJsonDoc(text));
  ASSIGN_OR_RETURN(auto device, JsonDevice(doc));
  nlohmann::json& tlvs = (*device.second)["tlv_configuration"];
  for (auto& [name, p] : q.params) {
    FirmwareParam after = p;
    rewrite(after);
    nlohmann::json& t = tlvs[name];
    auto as_json = [&t](const char* key, const std::string& printed) {
      auto n = MstconfigValueNumber(printed);
      // A number stays a number, a worded value its word.
      t[key] = t[key].is_number() && n && printed == std::to_string(*n) ? nlohmann::json(*n)
                                                                        : nlohmann::json(printed);
    };
    if (after.current && t.contains("current_value")) as_json("current_value", *after.current);
    as_json("next_value", after.next_boot);
    if (t.contains("modified")) {
      t["modified"] = (after.current && *after.current != after.next_boot) ||
                      (after.default_value && *after.default_value != after.next_boot);
    }
  }
  return doc.dump(1, '\t') + "\n";
}

// The text form: each parameter line made anew in the capture's layout (the
// name where it was, values from column 52, 20 wide), the '*' mark where the
// next boot differs from default or current.
StatusOr<std::string> RewriteColumns(std::string_view text, const ColumnRewrite& rewrite) {
  if (IsJsonQuery(text)) return RewriteJsonColumns(text, rewrite);
  ASSIGN_OR_RETURN(MstconfigQuery q, ParseMstconfigQuery(text));
  return RewriteParamLines(
      text, [&](std::string& line, const std::vector<std::string>& tok) -> Status {
        const bool ro = IsReadOnlyMark(line);
        if (q.params.count(tok[0]) == 0) return OkStatus();
        FirmwareParam p = q.params.at(tok[0]);
        rewrite(p);
        // Where each value column starts in this line (the capture's widths).
        const size_t name_at = line.find(tok[0], ro ? 3 : 1);
        std::vector<size_t> starts;
        size_t at = name_at + tok[0].size();
        for (;;) {
          size_t v = line.find_first_not_of(" \t", at);
          if (v == std::string::npos) break;
          starts.push_back(v);
          at = line.find_first_of(" \t", v);
          if (at == std::string::npos) break;
        }
        std::vector<std::string> values;
        if (q.has_default) values.push_back(p.default_value.value_or("N/A"));
        if (q.has_current) values.push_back(p.current.value_or("N/A"));
        values.push_back(p.next_boot);
        std::string made = line.substr(0, starts.empty() ? line.size() : starts[0]);
        for (size_t c = 0; c < values.size(); ++c) {
          // Each value where its column was, padded to the next one (or to
          // the width mstconfig pads to, 16, after the last).
          size_t width = c + 1 < starts.size() ? starts[c + 1] - starts[c] : 16;
          std::string v = values[c];
          if (v.size() < width) {
            v.resize(width, ' ');
          } else if (c + 1 < values.size()) {
            v += ' ';
          }
          made += v;
        }
        const bool differs = (p.current && !SamePrintedValue(*p.current, p.next_boot)) ||
                             (p.default_value && !SamePrintedValue(*p.default_value, p.next_boot));
        if (made[0] == ' ' || made[0] == '*') made[0] = differs ? '*' : ' ';
        line = made;
        return OkStatus();
      });
}

}  // namespace

bool SamePrintedValue(std::string_view a, std::string_view b) {
  auto na = MstconfigValueNumber(a);
  auto nb = MstconfigValueNumber(b);
  if (na && nb) return *na == *nb;
  return a == b;
}

StatusOr<std::string> ActivateNextBootValues(std::string_view text) {
  return RewriteColumns(text, [](FirmwareParam& p) {
    if (p.current) p.current = p.next_boot;
  });
}

StatusOr<std::string> ResetNextBootToDefaults(std::string_view text) {
  ASSIGN_OR_RETURN(MstconfigQuery q, ParseMstconfigQuery(text));
  if (!q.has_default) {
    return FailedPreconditionError(
        "the mstconfig query has no Default column (query with -e): the defaults a reset "
        "restores are unknown");
  }
  return RewriteColumns(text, [](FirmwareParam& p) {
    if (p.default_value && *p.default_value != "N/A") p.next_boot = *p.default_value;
  });
}

}  // namespace provisioner
