#include "engine/config/yaml_syntax_message.h"

#include <cctype>
#include <utility>
#include <vector>

#include "engine/config/text.h"

namespace provisioner::config {
namespace {

// Leading spaces of a line, or -1 for a blank or comment-only line.
int IndentOf(std::string_view line) {
  size_t n = line.find_first_not_of(' ');
  if (n == std::string_view::npos || line[n] == '#' || line[n] == '\r') return -1;
  return static_cast<int>(n);
}

std::string Spaces(int n) { return std::to_string(n) + (n == 1 ? " space" : " spaces"); }

std::vector<std::string_view> Lines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

}  // namespace

// Points at the line of a parse error; yaml-cpp's "illegal map value" for a
// tab-indented line does not say tabs are the problem.
std::string TabHint(std::string_view text, const YAML::Mark& mark) {
  if (mark.line < 0) return "";
  size_t start = 0;
  for (int line = 0; line < mark.line; ++line) {
    start = text.find('\n', start);
    if (start == std::string_view::npos) return "";
    ++start;
  }
  size_t end = text.find('\n', start);
  std::string_view line = text.substr(start, end == std::string_view::npos ? end : end - start);
  size_t indent_end = line.find_first_not_of(" \t");
  std::string_view indent = line.substr(0, indent_end);
  if (indent.find('\t') != std::string_view::npos) {
    return " (tabs are not allowed in YAML indentation; use spaces)";
  }
  return "";
}

// yaml-cpp's parser messages in plain words. For the block-structure ones,
// which mean "this line is not where its indentation puts it", the line is
// compared with the lines above it: the enclosing chain (each line above
// with less indentation than the one after it) gives the indentations the
// line could have had.
std::string PlainSyntaxMessage(std::string_view text, const YAML::Mark& mark,
                               const std::string& msg) {
  const bool block = msg == "end of map not found" || msg == "end of sequence not found" ||
                     msg == "illegal map value" ||
                     msg == "block sequence entries are not allowed in this context";
  if (block && mark.line >= 0) {
    const std::vector<std::string_view> lines = Lines(text);
    const int at = mark.line;
    const int indent =
        at < static_cast<int>(lines.size()) ? IndentOf(lines[static_cast<size_t>(at)]) : -1;
    if (indent >= 0) {
      // (line number, indentation) of the lines enclosing `at`, nearest first.
      std::vector<std::pair<int, int>> chain;
      for (int i = at - 1; i >= 0; --i) {
        int n = IndentOf(lines[static_cast<size_t>(i)]);
        if (n < 0) continue;
        if (chain.empty() || n < chain.back().second) chain.emplace_back(i + 1, n);
      }
      const std::string here = "line " + std::to_string(at + 1) + " (" + Spaces(indent) + ")";
      if (!chain.empty() && indent > chain.front().second) {
        return "the indentation of " + here + " is deeper than line " +
               std::to_string(chain.front().first) + " (" + Spaces(chain.front().second) +
               "), which already has its value: indent it like its siblings, or move the value of "
               "line " +
               std::to_string(chain.front().first) + " to its own lines";
      }
      bool matches = false;
      for (const auto& c : chain) matches = matches || c.second == indent;
      if (!chain.empty() && !matches) {
        const std::pair<int, int>* deeper = nullptr;
        const std::pair<int, int>* shallower = nullptr;
        for (const auto& c : chain) {
          if (c.second > indent) deeper = &c;
          if (c.second < indent && shallower == nullptr) shallower = &c;
        }
        std::string out = "the indentation of " + here + " does not match its siblings";
        if (deeper != nullptr) {
          out += " at line " + std::to_string(deeper->first) + " (" + Spaces(deeper->second) + ")";
        }
        if (shallower != nullptr) {
          out += std::string(deeper != nullptr ? " nor" : "") + " its parent at line " +
                 std::to_string(shallower->first) + " (" + Spaces(shallower->second) + ")";
        }
        return out;
      }
    }
  }
  if (msg == "end of sequence flow not found")
    return "a [ list is not closed: a ] is missing before here";
  if (msg == "end of map flow not found")
    return "a { mapping is not closed: a } is missing before here";
  if (msg == "illegal map value") {
    return "a \": \" where no key can start here (quote a value that contains \": \", or check the "
           "indentation)";
  }
  if (msg == "end of map not found")
    return "this line does not continue the mapping above it (check its indentation)";
  if (msg == "end of sequence not found")
    return "this line does not continue the list above it (check its indentation)";
  return Printable(msg);
}

std::optional<LocatedMessage> MissingColon(std::string_view text, const YAML::Mark& mark,
                                           const std::string& msg) {
  const bool block = msg == "end of map not found" || msg == "end of sequence not found" ||
                     msg == "illegal map value" ||
                     msg == "block sequence entries are not allowed in this context";
  if (!block || mark.line <= 0) return std::nullopt;
  const std::vector<std::string_view> lines = Lines(text);
  if (static_cast<size_t>(mark.line) >= lines.size()) return std::nullopt;
  const int indent = IndentOf(lines[static_cast<size_t>(mark.line)]);
  // The nearest line above with content.
  int above = mark.line - 1;
  while (above >= 0 && IndentOf(lines[static_cast<size_t>(above)]) < 0) --above;
  if (above < 0 || indent < 0) return std::nullopt;
  std::string_view line = lines[static_cast<size_t>(above)];
  size_t at = static_cast<size_t>(IndentOf(line));
  if (line.substr(at, 2) == "- ") at = line.find_first_not_of(' ', at + 1);
  if (at == std::string_view::npos || indent <= static_cast<int>(at) - 2) return std::nullopt;
  std::string_view entry = line.substr(at);
  const size_t comment = entry.find(" #");
  if (comment != std::string_view::npos) entry = entry.substr(0, comment);
  while (!entry.empty() && (entry.back() == ' ' || entry.back() == '\r')) entry.remove_suffix(1);
  // "name pf0": a key (letters, digits, _ -), a space, a value; no colon.
  const size_t space = entry.find(' ');
  if (space == std::string_view::npos || space == 0 || entry.find(':') != std::string_view::npos) {
    return std::nullopt;
  }
  for (char ch : entry.substr(0, space)) {
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '_' && ch != '-')
      return std::nullopt;
  }
  const std::string key(entry.substr(0, space));
  std::string_view value = entry.substr(space);
  value.remove_prefix(value.find_first_not_of(' '));
  return LocatedMessage{above + 1, static_cast<int>(at + space) + 1,
                        "\"" + std::string(entry) + "\" has no colon after its key: write \"" +
                            key + ": " + std::string(value) + "\""};
}

std::optional<LocatedMessage> MissingColonBeforeFlow(std::string_view text) {
  const std::vector<std::string_view> lines = Lines(text);
  int scalar_indent = -1;  // inside a block scalar ("|", ">") of the line at this indentation
  for (size_t n = 0; n < lines.size(); ++n) {
    std::string_view line = lines[n];
    while (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const int indent = IndentOf(line);
    if (indent < 0) continue;  // blank or a comment: also inside a block scalar
    if (scalar_indent >= 0 && indent > scalar_indent) continue;
    scalar_indent = -1;
    size_t at = static_cast<size_t>(indent);
    while (at < line.size() && line.substr(at, 2) == "- ") {
      at = line.find_first_not_of(' ', at + 1);
    }
    if (at == std::string_view::npos) continue;
    std::string_view rest = line.substr(at);
    // Where a block scalar starts ("key: |", "- >-"), its lines are text.
    std::string_view code = rest.substr(0, rest.find(" #"));
    while (!code.empty() && code.back() == ' ') code.remove_suffix(1);
    const size_t last = code.find_last_of("|>");
    if (last != std::string_view::npos &&
        code.find_first_not_of("+-0123456789", last + 1) == std::string_view::npos &&
        (last == 0 || code[last - 1] == ' ')) {
      scalar_indent = indent;
      continue;
    }
    // A key (letters, digits, _ -), spaces or none, then '{' or '[': the
    // colon is missing ("nicSelector { vendor: 15b3 }"), which yaml-cpp
    // reads as one odd key or reports lines later.
    size_t k = 0;
    while (k < rest.size() && (std::isalnum(static_cast<unsigned char>(rest[k])) ||
                               rest[k] == '_' || rest[k] == '-')) {
      ++k;
    }
    if (k == 0 || !std::isalpha(static_cast<unsigned char>(rest[0]))) continue;
    const size_t open = rest.find_first_not_of(' ', k);
    if (open == std::string_view::npos || (rest[open] != '{' && rest[open] != '[')) continue;
    const std::string key(rest.substr(0, k));
    return LocatedMessage{static_cast<int>(n) + 1, static_cast<int>(at + k) + 1,
                          "missing ':' after " + key + ": write \"" + key + ": " +
                              std::string(code.substr(open)) + "\""};
  }
  return std::nullopt;
}

}  // namespace provisioner::config
