#include "engine/config/yaml_document.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace provisioner::config {
namespace {

using ::testing::HasSubstr;
using namespace std::string_literals;

// The one diagnostic of a fatal document, as "line:column: path: message".
std::string OnlyProblem(const std::string& text) {
  YamlDocument doc = ParseYamlDocument(text);
  EXPECT_FALSE(doc.ok) << text;
  if (doc.diagnostics.size() != 1) {
    ADD_FAILURE() << "expected one diagnostic, got " << doc.diagnostics.size();
    return "";
  }
  const Diagnostic& d = doc.diagnostics[0];
  SourceMark m = doc.marks.Find(d.path);
  return std::to_string(m.line) + ":" + std::to_string(m.column) + ": " +
         (d.path.empty() ? "" : d.path + ": ") + d.message;
}

TEST(YamlDocumentTest, ScalarsGetCoreSchemaTypes) {
  YamlDocument doc = ParseYamlDocument(
      "int: 12\n"
      "quoted: \"12\"\n"
      "single: '12'\n"
      "hex: 0x1F\n"
      "octal: 0o17\n"
      "negative: -3\n"
      "float: 1.5e3\n"
      "bool: true\n"
      "yes_is_a_string: yes\n"
      "tilde: ~\n"
      "empty:\n"
      "tagged: !!str 12\n"
      "block: |\n"
      "  text\n"
      "hexword: 15b3\n");
  ASSERT_TRUE(doc.ok);
  const auto& r = doc.root;
  EXPECT_TRUE(r["int"].is_number_integer());
  EXPECT_EQ(r["int"], 12);
  EXPECT_EQ(r["quoted"], "12");
  EXPECT_EQ(r["single"], "12");
  EXPECT_EQ(r["hex"], 31);
  EXPECT_EQ(r["octal"], 15);
  EXPECT_EQ(r["negative"], -3);
  EXPECT_TRUE(r["float"].is_number_float());
  EXPECT_EQ(r["bool"], true);
  EXPECT_EQ(r["yes_is_a_string"], "yes");
  EXPECT_TRUE(r["tilde"].is_null());
  EXPECT_TRUE(r["empty"].is_null());
  EXPECT_EQ(r["tagged"], "12");
  EXPECT_EQ(r["block"], "text\n");
  EXPECT_EQ(r["hexword"], "15b3");
  // Non-string scalars keep their text for messages.
  EXPECT_EQ(doc.scalar_text["hex"], "0x1F");
}

TEST(YamlDocumentTest, MarksValuesAndKeysOneBased) {
  YamlDocument doc = ParseYamlDocument(
      "spec:\n"
      "  nics:\n"
      "    - name: a\n"
      "      numVfs: 12\n"
      "      mtu:\n"
      "  kubernetes:\n"
      "    nodeSelector: { kubernetes.io/os: linux }\n");
  ASSERT_TRUE(doc.ok);
  auto at = [&](const std::string& path) {
    SourceMark m = doc.marks.Find(path);
    return std::to_string(m.line) + ":" + std::to_string(m.column);
  };
  EXPECT_EQ(at(""), "1:1");
  EXPECT_EQ(at("spec.nics[0]"), "3:7");
  EXPECT_EQ(at("spec.nics[0].name"), "3:13");
  EXPECT_EQ(at("spec.nics[0].numVfs"), "4:15");
  EXPECT_EQ(at("spec.nics[0].mtu"), "5:7");  // no value: the key's mark
  EXPECT_EQ(at("spec.kubernetes.nodeSelector.kubernetes.io/os"), "7:39");
  EXPECT_EQ(doc.key_marks["spec.nics[0].numVfs"].column, 7);
}

TEST(YamlDocumentTest, SyntaxErrorsCarryLineAndColumn) {
  EXPECT_EQ(
      OnlyProblem("a:\n\tb: 1\n"),
      "2:3: invalid YAML: a \": \" where no key can start here (quote a value that contains "
      "\": \", or check the indentation) (tabs are not allowed in YAML indentation; use spaces)");
  EXPECT_EQ(OnlyProblem("a: [1, 2\n"),
            "2:1: invalid YAML: a [ list is not closed: a ] is missing before here");
  EXPECT_EQ(OnlyProblem("a: {b: 1\n"),
            "2:1: invalid YAML: a { mapping is not closed: a } is missing before here");
  EXPECT_EQ(OnlyProblem("a: b: c\n"),
            "1:5: invalid YAML: a \": \" where no key can start here (quote a value that contains "
            "\": \", or check the indentation)");
}

// Indentation mistakes in plain words (issue 31 item 10), not yaml-cpp's
// "end of sequence not found".
TEST(YamlDocumentTest, IndentationErrorsInPlainWords) {
  const std::string head = "spec:\n  nics:\n    - name: pf0\n      numVfs: 8\n";
  // A list item one space left of its sibling.
  EXPECT_EQ(
      OnlyProblem(head + "   - name: pf1\n"),
      "5:4: invalid YAML: the indentation of line 5 (3 spaces) does not match its siblings at "
      "line 3 (4 spaces) nor its parent at line 2 (2 spaces)");
  // A key between the item's keys and the item.
  EXPECT_EQ(
      OnlyProblem(head + "     mtu: 9000\n"),
      "5:6: invalid YAML: the indentation of line 5 (5 spaces) does not match its siblings at "
      "line 4 (6 spaces) nor its parent at line 3 (4 spaces)");
  // A key deeper than a sibling that has its value.
  EXPECT_EQ(
      OnlyProblem(head + "       mtu: 9000\n"),
      "5:11: invalid YAML: the indentation of line 5 (7 spaces) is deeper than line 4 (6 "
      "spaces), which already has its value: indent it like its siblings, or move the value of "
      "line 4 to its own lines");
}

// Issue 38 item 7: a key with a flow mapping or list but no colon is
// reported on its line, just after the key; not as the indentation error
// yaml-cpp stumbles over later, nor read as a key "nicSelector {vendor".
TEST(YamlDocumentTest, MissingColonBeforeAFlowCollection) {
  const std::string head = "spec:\n  nics:\n    - name: pf0\n";
  EXPECT_EQ(OnlyProblem(head + "      nicSelector { vendor: \"15b3\" }\n      numVfs: 4\n"),
            "4:18: invalid YAML: missing ':' after nicSelector: write \"nicSelector: { vendor: "
            "\"15b3\" }\"");
  EXPECT_EQ(OnlyProblem(head + "      nicSelector {vendor: 15b3}\n"),
            "4:18: invalid YAML: missing ':' after nicSelector: write \"nicSelector: {vendor: "
            "15b3}\"");
  EXPECT_EQ(OnlyProblem(head + "      rootDevices [\"0000:af:00.0\"]  # PF\n"),
            "4:18: invalid YAML: missing ':' after rootDevices: write \"rootDevices: "
            "[\"0000:af:00.0\"]\"");
  // Text: a block scalar's lines, a comment, a value after its colon.
  YamlDocument text = ParseYamlDocument(
      "a: |\n  key {x}\n  list [1]\nb: >-\n  c [d]\n# e {f}\ng: h {i}\nl:\n  - {m: n}\n");
  EXPECT_TRUE(text.ok);
  EXPECT_TRUE(text.diagnostics.empty());
}

TEST(YamlDocumentTest, UnterminatedQuotesAreErrors) {
  // yaml-cpp itself accepts these, reading to the end of the file.
  EXPECT_EQ(OnlyProblem("apiVersion: \"abc\nkind: x\n"),
            "1:13: apiVersion: unterminated quoted string: no closing \"");
  EXPECT_EQ(OnlyProblem("a: 'it''s\n"), "1:4: a: unterminated quoted string: no closing '");
  EXPECT_TRUE(ParseYamlDocument("a: \"x\\\"y\"\nb: 'it''s'\n").ok);
}

TEST(YamlDocumentTest, DuplicateAndComplexKeys) {
  EXPECT_EQ(OnlyProblem("a: 1\nb: 2\na: 3\n"), "3:1: a: duplicate key \"a\" (first at line 1)");
  EXPECT_EQ(OnlyProblem("spec:\n  nics:\n    - name: x\n      name: y\n"),
            "4:7: spec.nics[0].name: duplicate key \"name\" (first at line 3)");
  EXPECT_EQ(OnlyProblem("? [a]\n: b\n"), "1:3: keys must be plain strings, found a list");
}

TEST(YamlDocumentTest, TopLevelMustBeOneMapping) {
  EXPECT_EQ(OnlyProblem(""),
            "1:1: the file is empty: expected a HostConfig mapping (apiVersion, kind, metadata, "
            "spec)");
  EXPECT_EQ(OnlyProblem("# just a comment\n"),
            "1:1: the file is empty: expected a HostConfig mapping (apiVersion, kind, metadata, "
            "spec)");
  EXPECT_EQ(OnlyProblem("- a\n- b\n"),
            "1:1: expected a mapping (apiVersion, kind, metadata, spec) at the top level, found "
            "a list");
  EXPECT_EQ(OnlyProblem("hello\n"),
            "1:1: expected a mapping (apiVersion, kind, metadata, spec) at the top level, found "
            "a scalar");
  EXPECT_EQ(OnlyProblem("a: 1\n---\nb: 2\n"),
            "3:1: expected one YAML document, found 2 (remove the extra \"---\" documents)");
  EXPECT_TRUE(ParseYamlDocument("---\na: 1\n---\n").ok);  // a trailing empty document is fine
}

TEST(YamlDocumentTest, HostileInputStaysCheap) {
  std::string deep = "a: " + std::string(80, '[') + std::string(80, ']') + "\n";
  EXPECT_THAT(OnlyProblem(deep), HasSubstr("nested more than 64 levels deep"));

  std::string very_deep = std::string(100000, '[');
  EXPECT_THAT(OnlyProblem(very_deep), HasSubstr("invalid YAML"));

  std::string bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
  for (char c = 'b'; c <= 'h'; ++c) {
    std::string prev(1, static_cast<char>(c - 1));
    bomb += std::string(1, c) + ": &" + c + " [";
    for (int i = 0; i < 10; ++i) bomb += (i ? ", *" : "*") + prev;
    bomb += "]\n";
  }
  EXPECT_THAT(OnlyProblem(bomb), HasSubstr("the document is too large"));
}

TEST(YamlDocumentTest, BadScalarsAreErrorsButNotFatal) {
  YamlDocument doc = ParseYamlDocument(
      "big: 99999999999999999999\n"
      "long: " +
      std::string(2000, 'x') +
      "\n"
      "bin: \"\\xff\"\n"
      "raw: \xff\xfe\n"
      "tag: !!int abc\n");
  EXPECT_TRUE(doc.ok);
  ASSERT_EQ(doc.diagnostics.size(), 4u);
  EXPECT_EQ(doc.diagnostics[0].path, "big");
  EXPECT_EQ(doc.diagnostics[0].message, "integer 99999999999999999999 is out of range");
  EXPECT_EQ(doc.diagnostics[1].path, "long");
  EXPECT_EQ(doc.diagnostics[1].message, "value is longer than 1024 bytes");
  EXPECT_EQ(doc.diagnostics[2].path, "raw");
  EXPECT_EQ(doc.diagnostics[2].message, "value \"\\xff\\xfe\" is not valid UTF-8");
  EXPECT_EQ(doc.diagnostics[3].path, "tag");
  EXPECT_THAT(doc.diagnostics[3].message, HasSubstr("does not fit its tag"));
  EXPECT_EQ(doc.root["bin"], "\xc3\xbf");  // the escape \xff is U+00FF
}

TEST(YamlDocumentTest, BinaryGarbageNeverThrows) {
  std::string garbage;
  unsigned int x = 12345;
  for (int i = 0; i < 4096; ++i) {
    x = x * 1103515245u + 12345u;
    garbage += static_cast<char>(x >> 16);
  }
  YamlDocument doc = ParseYamlDocument(garbage);
  EXPECT_FALSE(doc.ok);
  ASSERT_FALSE(doc.diagnostics.empty());
  EXPECT_GT(doc.marks.Find(doc.diagnostics[0].path).line, 0);
  EXPECT_FALSE(ParseYamlDocument("\0\0\0"s).ok);
}

}  // namespace
}  // namespace provisioner::config
