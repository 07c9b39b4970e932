// A file we did not write is not ours to delete (issue 36 item 4): for every
// kind of file apply manages, a pre-existing foreign file (its own bytes,
// comments and blank lines, mode 0600) that a change replaces comes back
// byte-identical with its mode and owner after (1) the in-process rollback of
// a later failure and (2) `apply --rollback` from the journal a kill -9
// leaves; a file that was absent is removed again.
#include <stdlib.h>
#include <sys/stat.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/core/engine.h"
#include "engine/core/journal.h"
#include "engine/module/managed_file.h"
#include "gtest/gtest.h"
#include "test/support/ttar.h"

namespace provisioner {
namespace {

// Writes change.after (a string; null removes) to change.target, through the
// managed-file mechanism; the change "fail/x" fails, after copying the
// journal aside as a kill -9 at that moment would leave it.
class FilesModule final : public Module {
 public:
  std::string_view name() const override { return "files"; }
  Status Discover(HostContext&, HostFacts&) override { return OkStatus(); }
  void Plan(const DesiredState&, const HostFacts&, PlanSink&) const override {}
  Status Apply(const Change& c, HostContext& ctx) override {
    if (c.attribute == "fail") {
      if (c.after != 1) return OkStatus();  // its own rollback
      auto j = ctx.fs->ReadFile(kJournalPath);
      if (j.ok()) journal_at_kill = *j;
      return FailedPreconditionError("injected failure");
    }
    std::optional<std::string> text;
    if (c.after.is_string()) text = c.after.get<std::string>();
    return WriteManagedFile(*ctx.fs, c, c.target, text, 0644);
  }
  Status Verify(const Change& c, HostContext& ctx) override {
    if (c.attribute == "fail") return OkStatus();
    if (RestoresManagedFile(c, c.target)) return VerifyManagedFileRestored(*ctx.fs, c, c.target);
    auto now = ctx.fs->ReadFile(c.target);
    if (c.after.is_null()) return now.ok() ? InternalError("still there") : OkStatus();
    if (!now.ok() || *now != c.after.get<std::string>()) return InternalError("not written");
    return OkStatus();
  }
  std::string journal_at_kill;
};

const char* const kKinds[] = {
    "/etc/default/grub.d/99-provisioner.cfg",
    "/etc/modprobe.d/ib_core.conf",
    "/etc/modules-load.d/provisioner.conf",
    "/etc/udev/rules.d/10-provisioner-names.rules",
    "/etc/sysctl.d/90-provisioner.conf",
    "/etc/iproute2/rt_tables.d/provisioner.conf",
    "/etc/kernel/cmdline",
};

constexpr char kForeign[] =
    "# someone else's file\n\n# with comments and blank lines\n"
    "SUBSYSTEM==\"net\", ACTION==\"add\", NAME=\"keep\"\n\n";

struct Fixture {
  std::string root = testing::MakeTempDir("managed");
  std::unique_ptr<HostFs> fs = NewLocalHostFs(root);
  HostContext ctx;
  std::vector<std::unique_ptr<Module>> modules;
  FilesModule* files = nullptr;
  Fixture() {
    ctx.fs = fs.get();
    auto m = std::make_unique<FilesModule>();
    files = m.get();
    modules.push_back(std::move(m));
  }
  // Write `path` (the forward change), then fail.
  Plan WriteThenFail(const std::string& path) {
    Plan p;
    Change w = MakeChange("files", path, "content", nullptr, "# Written by provisioner\nours\n",
                          Disruption::kLive, 10, "write", "spec.x");
    w.resource = "file:" + path;
    DeclareEditedFile(w, path);
    Change f = MakeChange("files", "x", "fail", 0, 1, Disruption::kLive, 20, "fail", "spec.y");
    p.changes = {w, f};
    return p;
  }
};

struct stat StatOf(const std::string& p) {
  struct stat st {};
  EXPECT_EQ(::stat(p.c_str(), &st), 0) << p;
  return st;
}

TEST(ManagedFileRollbackTest, ForeignFileOfEveryKindComesBackByteIdenticalWithModeAndOwner) {
  for (const char* path : kKinds) {
    SCOPED_TRACE(path);
    Fixture fx;
    ASSERT_TRUE(fx.fs->WriteFileAtomic(path, kForeign, 0600).ok());
    const struct stat before = StatOf(fx.root + path);
    JournalWriter journal(fx.fs.get());
    ApplyOptions o;
    o.journal = &journal;
    o.check_converged = false;
    ApplyReport r = ApplyPlan(fx.modules, fx.WriteThenFail(path), DesiredState(), fx.ctx, o);
    ASSERT_FALSE(r.status.ok());
    ASSERT_EQ(r.rolled_back.size(), 2u);
    for (const auto& rb : r.rolled_back) EXPECT_TRUE(rb.status.ok()) << rb.status.message();
    auto now = fx.fs->ReadFile(path);
    ASSERT_TRUE(now.ok());
    EXPECT_EQ(*now, kForeign);
    const struct stat after = StatOf(fx.root + path);
    EXPECT_EQ(after.st_mode & 07777, 0600u);
    EXPECT_EQ(after.st_uid, before.st_uid);
    EXPECT_EQ(after.st_gid, before.st_gid);

    // kill -9 during the failing change: its journal, the file as the
    // forward change left it, then `apply --rollback`.
    ASSERT_FALSE(fx.files->journal_at_kill.empty());
    ASSERT_NE(fx.files->journal_at_kill.find("\"priorFile\""), std::string::npos);
    ASSERT_TRUE(fx.fs->WriteFileAtomic(kJournalPath, fx.files->journal_at_kill, 0600).ok());
    ASSERT_TRUE(fx.fs->WriteFileAtomic(path, "# Written by provisioner\nours\n", 0644).ok());
    auto j = ReadJournal(*fx.fs);
    ASSERT_TRUE(j.ok() && j->has_value());
    Plan back;
    back.changes = (*j)->RollbackChanges();
    ASSERT_EQ(back.changes.size(), 2u);  // the failing change was "applying" too
    ApplyReport rb = ApplyPlan(fx.modules, back, DesiredState(), fx.ctx, o);
    ASSERT_TRUE(rb.status.ok()) << rb.status.message();
    auto again = fx.fs->ReadFile(path);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(*again, kForeign);
    EXPECT_EQ(StatOf(fx.root + path).st_mode & 07777, 0600u);
  }
}

TEST(ManagedFileRollbackTest, AFileThatWasAbsentIsRemovedAgain) {
  Fixture fx;
  const std::string path = "/etc/modules-load.d/provisioner.conf";
  ApplyOptions o;
  o.check_converged = false;
  ApplyReport r = ApplyPlan(fx.modules, fx.WriteThenFail(path), DesiredState(), fx.ctx, o);
  ASSERT_FALSE(r.status.ok());
  ASSERT_EQ(r.rolled_back.size(), 2u);
  for (const auto& rb : r.rolled_back) EXPECT_TRUE(rb.status.ok()) << rb.status.message();
  EXPECT_FALSE(fx.fs->Exists(path));
}

// A hand-edited journal cannot make a rollback write another path.
TEST(ManagedFileRollbackTest, ACaptureOfAnotherPathIsRefused) {
  Fixture fx;
  Change c = MakeChange("files", "/etc/modprobe.d/ib_core.conf", "content", nullptr, "x",
                        Disruption::kLive, 10, "", "");
  c.detail[kRestoreFileKey] = {{"path", "/etc/shadow"}, {"exists", true}, {"content", "x"}};
  EXPECT_FALSE(WriteManagedFile(*fx.fs, c, c.target, std::string("x")).ok());
  EXPECT_FALSE(fx.fs->Exists("/etc/shadow"));
}

}  // namespace
}  // namespace provisioner
