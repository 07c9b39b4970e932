#include "test/support/ttar.h"

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "test/support/files.h"
#include "test/support/tree_diff.h"

namespace provisioner::testing {
namespace {

void Spit(const std::string& path, const std::string& content) {
  std::ofstream(path, std::ios::binary) << content;
}

std::string LinkTarget(const std::string& path) {
  char buf[4096];
  ssize_t n = ::readlink(path.c_str(), buf, sizeof buf);
  return n < 0 ? "" : std::string(buf, static_cast<size_t>(n));
}

// A tree with every kind of entry and content the format has to carry.
std::string MakeSampleTree() {
  std::string d = MakeTempDir("sample");
  EXPECT_FALSE(d.empty());
  ::mkdir((d + "/sys").c_str(), 0755);
  ::mkdir((d + "/sys/devices").c_str(), 0755);
  ::mkdir((d + "/sys/devices/pci0000:af").c_str(), 0755);
  ::mkdir((d + "/sys/devices/pci0000:af/0000:af:00.0").c_str(), 0755);
  ::mkdir((d + "/sys/bus").c_str(), 0755);
  ::mkdir((d + "/sys/bus/pci").c_str(), 0755);
  ::mkdir((d + "/sys/bus/pci/devices").c_str(), 0755);
  ::mkdir((d + "/empty-dir").c_str(), 0700);
  std::string fn = d + "/sys/devices/pci0000:af/0000:af:00.0";
  Spit(fn + "/vendor", "0x15b3\n");
  Spit(fn + "/empty", "");
  Spit(fn + "/no_newline", "0a7f:bc12:45ef:d23b");
  Spit(fn + "/two_lines_no_newline", "a\nb");
  Spit(fn + "/blank_lines", "\n\n\n");
  Spit(fn + "/keywords", "EOF\nNULLBYTE\nPath: x\nLines: 3\n# ttar - - -\nx\\EOF\\NULLBYTE\nEOF");
  Spit(fn + "/binary", std::string("\x00\x01\xff"
                                   "abc\x00\x00\n\x7f",
                                   9));
  Spit(fn + "/crlf", "dos\r\nline\r\n");
  ::chmod((fn + "/vendor").c_str(), 0444);
  ::symlink("../../../devices/pci0000:af/0000:af:00.0",
            (d + "/sys/bus/pci/devices/0000:af:00.0").c_str());
  ::symlink("/absolute/dangling", (d + "/dangling").c_str());
  return d;
}

TEST(TtarTest, RoundTripIsExact) {
  std::string src = MakeSampleTree();
  std::string archive = MakeTempDir("arch") + "/t.ttar";
  ASSERT_TRUE(WriteTtar(src, archive).ok());
  std::string dst = MakeTempDir("dst");
  Status s = ExtractTtar(archive, dst);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(DiffTreesText(src, dst), "");
  // And writing the extracted tree gives the same archive, byte for byte.
  std::string archive2 = MakeTempDir("arch") + "/t.ttar";
  ASSERT_TRUE(WriteTtar(dst, archive2).ok());
  EXPECT_EQ(ReadFile(archive), ReadFile(archive2));
}

TEST(TtarTest, SymlinksArePreservedNotFollowed) {
  std::string src = MakeSampleTree();
  std::string archive = MakeTempDir("arch") + "/t.ttar";
  ASSERT_TRUE(WriteTtar(src, archive).ok());
  std::string text = ReadFile(archive);
  EXPECT_NE(text.find("Path: sys/bus/pci/devices/0000:af:00.0\n"
                      "SymlinkTo: ../../../devices/pci0000:af/0000:af:00.0\n"),
            std::string::npos)
      << text;
  std::string dst = MakeTempDir("dst");
  ASSERT_TRUE(ExtractTtar(archive, dst).ok());
  struct stat st;
  ASSERT_EQ(::lstat((dst + "/sys/bus/pci/devices/0000:af:00.0").c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  EXPECT_EQ(ReadFile(dst + "/sys/bus/pci/devices/0000:af:00.0/vendor"), "0x15b3\n");
  EXPECT_EQ(LinkTarget(dst + "/dangling"), "/absolute/dangling");
}

TEST(TtarTest, FormatMatchesTtarConventions) {
  std::string src = MakeSampleTree();
  auto text = TreeToTtar(src);
  ASSERT_TRUE(text.ok());
  const std::string fn = "sys/devices/pci0000:af/0000:af:00.0/";
  EXPECT_NE(text->find("Path: " + fn + "empty\nLines: 0\nMode: 644\n"), std::string::npos);
  EXPECT_NE(text->find("Path: " + fn + "no_newline\nLines: 1\n0a7f:bc12:45ef:d23bEOF\n"),
            std::string::npos);
  EXPECT_NE(text->find("Path: " + fn + "vendor\nLines: 1\n0x15b3\nMode: 444\n"), std::string::npos);
  EXPECT_NE(text->find("Path: " + fn + "keywords\nLines: 7\n\\EOF\n\\NULLBYTE\n"),
            std::string::npos);
  EXPECT_NE(text->find("Directory: empty-dir\nMode: 700\n# ttar - - -"), std::string::npos);
  // Depth-first, children in byte order: "dangling" < "empty-dir" < "sys".
  EXPECT_LT(text->find("Path: dangling"), text->find("Directory: empty-dir"));
  EXPECT_LT(text->find("Directory: empty-dir"), text->find("Directory: sys\n"));
}

TEST(TtarTest, ExtractsTheUpstreamProcfsFixtureWithStrip) {
  std::string archive = RunfilePath("test/support/testdata/fixtures-sys-subset.ttar");
  std::string dst = MakeTempDir("procfs");
  Status s = ExtractTtar(archive, dst, /*strip=*/1);
  ASSERT_TRUE(s.ok()) << s.ToString();
  std::string dev = dst + "/sys/bus/pci/devices/0000:a2:00.0";
  EXPECT_EQ(ReadFile(dev + "/vendor"), "0x8086\n");
  EXPECT_EQ(ReadFile(dev + "/sriov_totalvfs"), "128\n");
  EXPECT_EQ(ReadFile(dst + "/sys/class/infiniband/mlx5_0/node_guid"), "0a7f:bc12:45ef:d23b");
  std::string config = ReadFile(dst + "/sys/devices/pci0000:00/0000:00:02.1/config");
  ASSERT_GE(config.size(), 8u);
  EXPECT_EQ(config.substr(0, 7), std::string("\x22\x10\x34\x16\x07\x04\x10", 7));
  EXPECT_EQ(config[7], '\0');  // NULLBYTE decoded
  EXPECT_EQ(config.find("NULLBYTE"), std::string::npos);
  EXPECT_NE(config.back(), '\n');  // the line ended with the EOF marker
  struct stat st;
  EXPECT_NE(::lstat((dst + "/fixtures").c_str(), &st), 0) << "top dir must be stripped";

  // Re-archiving the extracted tree and extracting again is lossless.
  std::string again = MakeTempDir("arch") + "/procfs.ttar";
  ASSERT_TRUE(WriteTtar(dst, again).ok());
  std::string dst2 = MakeTempDir("procfs2");
  ASSERT_TRUE(ExtractTtar(again, dst2).ok());
  EXPECT_EQ(DiffTreesText(dst, dst2), "");
}

TEST(TtarTest, WithoutStripKeepsTopDirectory) {
  std::string archive = RunfilePath("test/support/testdata/fixtures-sys-subset.ttar");
  std::string dst = MakeTempDir("procfs");
  ASSERT_TRUE(ExtractTtar(archive, dst).ok());
  EXPECT_EQ(ReadFile(dst + "/fixtures/sys/bus/pci/devices/0000:a2:00.0/vendor"), "0x8086\n");
}

TEST(TtarTest, RejectsEscapingAndMalformedArchives) {
  std::string dir = MakeTempDir("bad");
  struct Case {
    const char* name;
    const char* text;
  };
  const Case cases[] = {
      {"dotdot", "Path: ../evil\nLines: 1\nx\n"}, {"absolute", "Path: /etc/evil\nLines: 1\nx\n"},
      {"truncated", "Path: a\nLines: 3\nx\n"},    {"keyword", "Frobnicate: a\n"},
      {"badcount", "Path: a\nLines: many\n"},     {"lines-without-path", "Lines: 1\nx\n"},
  };
  for (const auto& c : cases) {
    std::string archive = dir + "/" + c.name + ".ttar";
    Spit(archive, c.text);
    std::string dst = MakeTempDir(c.name);
    Status s = ExtractTtar(archive, dst);
    EXPECT_FALSE(s.ok()) << c.name;
  }
  EXPECT_FALSE(ExtractTtar(dir + "/missing.ttar", MakeTempDir("x")).ok());
}

TEST(TtarTest, ReExtractReplacesFilesAndLinks) {
  std::string src = MakeSampleTree();
  std::string archive = MakeTempDir("arch") + "/t.ttar";
  ASSERT_TRUE(WriteTtar(src, archive).ok());
  std::string dst = MakeTempDir("dst");
  ASSERT_TRUE(ExtractTtar(archive, dst).ok());
  Spit(dst + "/sys/devices/pci0000:af/0000:af:00.0/empty", "changed\n");
  ASSERT_TRUE(ExtractTtar(archive, dst).ok());
  EXPECT_EQ(DiffTreesText(src, dst), "");
}

TEST(TreeDiffTest, ReportsEveryKindOfDifference) {
  std::string a = MakeSampleTree();
  std::string b = MakeSampleTree();
  EXPECT_TRUE(DiffTrees(a, b).empty());
  std::string fn = "/sys/devices/pci0000:af/0000:af:00.0";
  Spit(b + fn + "/vendor2", "x");
  ::unlink((b + fn + "/empty").c_str());
  Spit(b + fn + "/crlf", "other");
  ::chmod((b + fn + "/binary").c_str(), 0600);
  ::unlink((b + "/dangling").c_str());
  ::symlink("elsewhere", (b + "/dangling").c_str());
  std::vector<std::string> d = DiffTrees(a, b);
  ASSERT_EQ(d.size(), 5u) << DiffTreesText(a, b);
  EXPECT_EQ(d[0], "link differs: dangling: /absolute/dangling vs elsewhere");
  EXPECT_EQ(d[1], "mode differs: sys/devices/pci0000:af/0000:af:00.0/binary: 644 vs 600");
  EXPECT_EQ(d[2],
            "content differs: sys/devices/pci0000:af/0000:af:00.0/crlf: "
            "\"dos\\x0d\\nline\\x0d\\n\" vs \"other\"");
  EXPECT_EQ(d[3], "only in a: sys/devices/pci0000:af/0000:af:00.0/empty");
  EXPECT_EQ(d[4], "only in b: sys/devices/pci0000:af/0000:af:00.0/vendor2");
  TreeDiffOptions o;
  o.ignore = {"sys/devices", "dangling"};
  EXPECT_TRUE(DiffTrees(a, b, o).empty()) << DiffTreesText(a, b, o);
}

}  // namespace
}  // namespace provisioner::testing
