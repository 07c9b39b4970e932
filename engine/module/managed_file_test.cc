#include "engine/module/managed_file.h"

#include <stdlib.h>

#include <cerrno>
#include <optional>
#include <string>

#include "gtest/gtest.h"
#include "test/support/ttar.h"

namespace provisioner {
namespace {

TEST(ManagedFileTest, OurHeaderIsInTheLeadingCommentBlock) {
  EXPECT_TRUE(WrittenByProvisioner("# Written by provisioner from host.yaml\nx\n"));
  EXPECT_TRUE(WrittenByProvisioner("\n# Persistent names, written by provisioner (names)\n"));
  EXPECT_FALSE(WrittenByProvisioner("# site defaults\nGRUB_TIMEOUT=1\n"));
  // Below the first non-comment line it is content, not a header.
  EXPECT_FALSE(WrittenByProvisioner("options x y\n# written by provisioner\n"));
}

TEST(ManagedFileTest, PlanWarnsThatSomeoneElsesFileIsTakenOver) {
  PlanSink sink;
  Change c = MakeChange("m", "t", "a", nullptr, 1, Disruption::kLive, 1, "", "spec.x");
  DeclareManagedFile(c, "/etc/modprobe.d/x.conf", std::string("options foo bar=1\n"), "spec.x",
                     sink);
  ASSERT_EQ(sink.diagnostics().size(), 1u);
  EXPECT_EQ(sink.diagnostics()[0].severity, Severity::kWarning);
  EXPECT_NE(sink.diagnostics()[0].message.find("taken over"), std::string::npos);
  EXPECT_EQ(c.detail[kManagedFileKey], "/etc/modprobe.d/x.conf");
  PlanSink ours;
  DeclareManagedFile(c, "/etc/modprobe.d/x.conf", std::string("# Written by provisioner\n"),
                     "spec.x", ours);
  EXPECT_TRUE(ours.diagnostics().empty());
}

TEST(ManagedFileTest, BytesThatAreNotUtf8AreRecordedAndRestored) {
  auto fs = NewLocalHostFs(testing::MakeTempDir("mf"));
  const std::string bytes("a\xff\xfe\0b\n", 6);
  ASSERT_TRUE(fs->WriteFileAtomic("/etc/x.conf", bytes, 0640).ok());
  Change c = MakeChange("m", "t", "a", nullptr, "y", Disruption::kLive, 1, "", "");
  DeclareEditedFile(c, "/etc/x.conf");
  auto cap = CaptureManagedFile(*fs, c);
  ASSERT_TRUE(cap.ok()) << cap.status().message();
  EXPECT_TRUE(cap->contains("contentHex"));
  EXPECT_EQ((*cap)["mode"], 0640);
  (void)cap->dump();  // a journal holds it
  ASSERT_TRUE(WriteManagedFile(*fs, c, "/etc/x.conf", std::string("y\n")).ok());
  Change inv = c;
  AttachRestore(inv, *cap);
  ASSERT_TRUE(WriteManagedFile(*fs, inv, "/etc/x.conf", std::string("y\n")).ok());
  EXPECT_EQ(*fs->ReadFile("/etc/x.conf"), bytes);
  EXPECT_TRUE(VerifyManagedFileRestored(*fs, inv, "/etc/x.conf").ok());
  auto own = fs->StatFile("/etc/x.conf");
  ASSERT_TRUE(own.ok());
  EXPECT_EQ(own->mode, 0640u);
}

TEST(ManagedFileTest, VerifyOfAWriteARemovalAndARestoration) {
  auto fs = NewLocalHostFs(testing::MakeTempDir("mfv"));
  auto holds_y = [](const std::string& text) -> std::optional<std::string> {
    if (text == "y\n") return std::nullopt;
    return "holds " + text;
  };
  Change write = MakeChange("m", "t", "a", nullptr, "y", Disruption::kLive, 1, "", "spec.x");
  // Not written yet: the read error, with the field path.
  Status missing = VerifyManagedFile(*fs, write, "/etc/x.conf", holds_y);
  EXPECT_EQ(missing.err(), ENOENT) << missing.message();
  EXPECT_EQ(missing.message().rfind("spec.x <- ", 0), 0u) << missing.message();
  ASSERT_TRUE(fs->WriteFileAtomic("/etc/x.conf", "z\n", 0644).ok());
  EXPECT_EQ(VerifyManagedFile(*fs, write, "/etc/x.conf", holds_y).message(),
            "spec.x: /etc/x.conf holds z\n");
  ASSERT_TRUE(fs->WriteFileAtomic("/etc/x.conf", "y\n", 0644).ok());
  EXPECT_TRUE(VerifyManagedFile(*fs, write, "/etc/x.conf", holds_y).ok());
  // A removal (after null) holds only while the file is absent; without a
  // field path the change's id names it.
  Change remove = MakeChange("m", "t", "a", "y", nullptr, Disruption::kLive, 1, "", "");
  EXPECT_EQ(VerifyManagedFile(*fs, remove, "/etc/x.conf", holds_y).message(),
            "m/t/a: /etc/x.conf still exists");
  ASSERT_TRUE(fs->RemoveFile("/etc/x.conf").ok());
  EXPECT_TRUE(VerifyManagedFile(*fs, remove, "/etc/x.conf", holds_y).ok());
  // A restoration is VerifyManagedFileRestored's: the captured bytes, not
  // what `mismatch` would accept.
  ASSERT_TRUE(fs->WriteFileAtomic("/etc/x.conf", "old\n", 0644).ok());
  DeclareEditedFile(write, "/etc/x.conf");
  auto cap = CaptureManagedFile(*fs, write);
  ASSERT_TRUE(cap.ok()) << cap.status().message();
  Change inv = write;
  AttachRestore(inv, *cap);
  ASSERT_TRUE(fs->WriteFileAtomic("/etc/x.conf", "y\n", 0644).ok());
  EXPECT_NE(VerifyManagedFile(*fs, inv, "/etc/x.conf", holds_y).message().find("earlier bytes"),
            std::string::npos);
  ASSERT_TRUE(fs->WriteFileAtomic("/etc/x.conf", "old\n", 0644).ok());
  EXPECT_TRUE(VerifyManagedFile(*fs, inv, "/etc/x.conf", holds_y).ok());
}

}  // namespace
}  // namespace provisioner
