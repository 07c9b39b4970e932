// spec.kernel.cmdline, pure: matching /proc/cmdline, the GRUB drop-in (also
// sourced by the real /bin/sh after a Debian /etc/default/grub, as
// grub-mkconfig does), grubby's argv and the plan on each kind of host.
#include "modules/kernel/kernel_cmdline.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace provisioner::kernel {
namespace {

using Args = std::vector<std::string>;

TEST(KernelCmdlineTest, SatisfiesMatchesWholeArguments) {
  const Args running = SplitCmdline(
      "BOOT_IMAGE=/boot/vmlinuz-6.1.0-18-amd64 root=UUID=1 ro quiet intel_iommu=on iommu=pt\n");
  EXPECT_TRUE(CmdlineSatisfies(running, {"iommu=pt", "intel_iommu=on"}));
  EXPECT_FALSE(CmdlineSatisfies(running, {"iommu=off"}));
  EXPECT_FALSE(CmdlineSatisfies(running, {"pt"}));  // a whole argument, not a substring
  EXPECT_FALSE(CmdlineSatisfies(running, {"-quiet"}));
  EXPECT_FALSE(CmdlineSatisfies(running, {"-iommu"}));     // a bare key: every value
  EXPECT_TRUE(CmdlineSatisfies(running, {"-iommu=off"}));  // exactly that value
  EXPECT_TRUE(CmdlineSatisfies(running, {"-splash", "ro"}));
}

// Sources `grub_default` then the drop-in with /bin/sh, as grub-mkconfig
// does, and returns "LINUX|DEFAULT".
std::string Sourced(const std::string& grub_default, const std::string& dropin) {
  const std::string dir = ::testing::TempDir();
  const std::string a = dir + "/grub", b = dir + "/99-provisioner.cfg";
  std::ofstream(a) << grub_default;
  std::ofstream(b) << dropin;
  const std::string cmd = "/bin/sh -c '. " + a + "; . " + b +
                          "; printf \"%s|%s\" \"$GRUB_CMDLINE_LINUX\" "
                          "\"$GRUB_CMDLINE_LINUX_DEFAULT\"'";
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return "popen failed";
  std::string out;
  char buf[256];
  while (fgets(buf, sizeof buf, p) != nullptr) out += buf;
  EXPECT_EQ(pclose(p), 0) << dropin;
  return out;
}

constexpr char kDebianDefault[] =
    "GRUB_DEFAULT=0\nGRUB_TIMEOUT=5\nGRUB_DISTRIBUTOR=`lsb_release -i -s 2> /dev/null || echo "
    "Debian`\nGRUB_CMDLINE_LINUX_DEFAULT=\"quiet iommu=off\"\nGRUB_CMDLINE_LINUX=\"\"\n";

TEST(KernelCmdlineTest, DropInSourcedByShAddsAndRemoves) {
  const Args args = {"iommu=pt", "intel_iommu=on", "-quiet"};
  const std::string dropin = RenderDropIn(args);
  EXPECT_EQ(ParseDropIn(dropin), args);
  // iommu=off (another value of iommu) and quiet go; ours come last.
  EXPECT_EQ(Sourced(kDebianDefault, dropin), "iommu=pt intel_iommu=on|");
  // Only additions, on a GRUB_CMDLINE_LINUX that already has some.
  EXPECT_EQ(Sourced("GRUB_CMDLINE_LINUX=\"console=ttyS0 iommu=pt\"\n", RenderDropIn({"iommu=pt"})),
            "console=ttyS0 iommu=pt|");
  EXPECT_EQ(Sourced("GRUB_CMDLINE_LINUX_DEFAULT=\"quiet splash\"\n", RenderDropIn({"-splash"})),
            "|quiet");
  EXPECT_EQ(ParseDropIn("GRUB_CMDLINE_LINUX=\"x\"\n"), std::nullopt);
}

TEST(KernelCmdlineTest, GrubbyArgvAddsRemovesAndUndoes) {
  EXPECT_EQ(
      GrubbyArgv("/usr/sbin/grubby", {"quiet"}, {"iommu=pt", "-quiet"}),
      (Args{"/usr/sbin/grubby", "--update-kernel=ALL", "--args=iommu=pt", "--remove-args=quiet"}));
  // The inverse (before and after swapped): quiet back, iommu=pt gone.
  EXPECT_EQ(
      GrubbyArgv("/usr/sbin/grubby", {"iommu=pt", "-quiet"}, {"quiet"}),
      (Args{"/usr/sbin/grubby", "--update-kernel=ALL", "--args=quiet", "--remove-args=iommu=pt"}));
}

DesiredState Wants(Args cmdline, Args remove = {}) {
  DesiredState d;
  d.kernel = KernelSpec{std::move(cmdline), std::move(remove)};
  return d;
}

HostFacts Debian(const std::string& cmdline) {
  HostFacts f;
  f.boot.discovered = true;
  f.boot.cmdline = cmdline;
  f.boot.os_release = true;
  f.boot.os_id = "debian";
  f.boot.default_grub = true;
  return f;
}

TEST(KernelCmdlinePlanTest, DebianPlansTheDropInUntilProcCmdlineHasThem) {
  HostFacts f = Debian("BOOT_IMAGE=/vmlinuz ro quiet");
  PlanSink sink;
  PlanKernelCmdline(Wants({"iommu=pt", "intel_iommu=on"}), f, sink);
  ASSERT_EQ(sink.changes().size(), 1u);
  const Change& c = sink.changes()[0];
  EXPECT_EQ(c.id, "kernel/boot/cmdline");
  EXPECT_EQ(c.disruption, Disruption::kReboot);
  EXPECT_TRUE(c.before.is_null());
  EXPECT_EQ(c.after, nlohmann::json({"iommu=pt", "intel_iommu=on"}));
  EXPECT_EQ(c.detail["path"], kDropInPath);
  EXPECT_NE(c.reason.find("update-grub"), std::string::npos);
  EXPECT_TRUE(CheckCmdlineChange(c).ok());

  // Drop-in written, not rebooted: pending, a warning and no change.
  f.boot.dropin = RenderDropIn({"iommu=pt", "intel_iommu=on"});
  PlanSink pending;
  PlanKernelCmdline(Wants({"iommu=pt", "intel_iommu=on"}), f, pending);
  EXPECT_TRUE(pending.changes().empty());
  ASSERT_EQ(pending.diagnostics().size(), 1u);
  EXPECT_NE(pending.diagnostics()[0].message.find("reboot"), std::string::npos);

  // Booted with them: converged.
  PlanSink done;
  PlanKernelCmdline(Wants({"iommu=pt", "intel_iommu=on"}),
                    Debian("BOOT_IMAGE=/vmlinuz ro quiet intel_iommu=on iommu=pt"), done);
  EXPECT_TRUE(done.changes().empty());
  EXPECT_TRUE(done.diagnostics().empty());
}

TEST(KernelCmdlinePlanTest, UbuntuByIdLikeAndRhelByGrubby) {
  HostFacts f = Debian("ro");
  f.boot.os_id = "ubuntu";
  f.boot.os_id_like = "debian";
  PlanSink u;
  PlanKernelCmdline(Wants({"pci=realloc"}), f, u);
  ASSERT_EQ(u.changes().size(), 1u);
  EXPECT_EQ(u.changes()[0].detail["method"], kMethodGrubDropIn);

  HostFacts r;
  r.boot.discovered = true;
  r.boot.cmdline = "BOOT_IMAGE=(hd0,gpt2)/vmlinuz-5.14.0 root=/dev/sda ro rhgb quiet";
  r.boot.os_release = true;
  r.boot.os_id = "rocky";
  r.boot.os_id_like = "rhel centos fedora";
  r.boot.grubby = "/usr/sbin/grubby";
  r.boot.bls_options = {"root=/dev/sda ro rhgb quiet"};
  PlanSink rh;
  PlanKernelCmdline(Wants({"iommu=pt"}, {"rhgb"}), r, rh);
  ASSERT_EQ(rh.changes().size(), 1u);
  const Change& c = rh.changes()[0];
  EXPECT_EQ(c.detail["method"], kMethodGrubby);
  EXPECT_EQ(c.before, nlohmann::json({"rhgb"}));
  EXPECT_EQ(c.after, nlohmann::json({"iommu=pt", "-rhgb"}));
  EXPECT_NE(c.reason.find("/usr/sbin/grubby --update-kernel=ALL --args=iommu=pt "
                          "--remove-args=rhgb"),
            std::string::npos)
      << c.reason;
  // grubby ran (every entry has them), not rebooted: pending.
  r.boot.bls_options = {"root=/dev/sda ro quiet iommu=pt"};
  PlanSink pending;
  PlanKernelCmdline(Wants({"iommu=pt"}, {"rhgb"}), r, pending);
  EXPECT_TRUE(pending.changes().empty());
}

TEST(KernelCmdlinePlanTest, NeitherIsAnErrorNamingWhatWasLookedFor) {
  HostFacts f = Debian("ro");
  f.boot.default_grub = false;
  PlanSink sink;
  PlanKernelCmdline(Wants({"iommu=pt"}), f, sink);
  EXPECT_TRUE(sink.changes().empty());
  ASSERT_EQ(sink.diagnostics().size(), 1u);
  const Diagnostic& d = sink.diagnostics()[0];
  EXPECT_EQ(d.severity, Severity::kError);
  EXPECT_EQ(d.path, "spec.kernel.cmdline");
  for (const char* what : {"ID=debian", "/etc/default/grub: absent", "grubby", "/usr/sbin"}) {
    EXPECT_NE(d.message.find(what), std::string::npos) << what << " in " << d.message;
  }
}

TEST(KernelCmdlinePlanTest, ContradictionsAreErrors) {
  PlanSink sink;
  PlanKernelCmdline(Wants({"iommu=pt", "iommu=off"}, {"iommu"}), Debian("ro"), sink);
  EXPECT_TRUE(sink.changes().empty());
  ASSERT_EQ(sink.diagnostics().size(), 3u);
  EXPECT_EQ(sink.diagnostics()[0].path, "spec.kernel.cmdline[1]");
  EXPECT_EQ(sink.diagnostics()[1].path, "spec.kernel.cmdlineRemove[0]");
}

TEST(KernelCmdlineDoctorTest, FailPendingOk) {
  const DesiredState want = Wants({"iommu=pt"}, {"quiet"});
  auto verdict = [&](const HostFacts& f) {
    CheckSink sink;
    CheckKernelCmdline(&want, f, sink);
    EXPECT_EQ(sink.results().size(), 1u);
    return sink.results().empty() ? Verdict::kOk : sink.results()[0].verdict;
  };
  HostFacts f = Debian("ro quiet");
  EXPECT_EQ(verdict(f), Verdict::kFail);
  f.boot.dropin = RenderDropIn({"iommu=pt", "-quiet"});
  EXPECT_EQ(verdict(f), Verdict::kWarn);  // reboot pending
  EXPECT_EQ(verdict(Debian("ro iommu=pt")), Verdict::kOk);
  CheckSink none;
  CheckKernelCmdline(nullptr, f, none);  // no host.yaml: nothing to compare
  EXPECT_TRUE(none.results().empty());
}

TEST(KernelCmdlinePlanTest, RefusesChangesOfTheWrongShape) {
  Change c = MakeChange(kModuleName, "boot", "cmdline", nullptr, {"iommu=pt"}, Disruption::kReboot,
                        15, "", "");
  c.detail["method"] = kMethodGrubby;
  c.detail["grubby"] = "/tmp/evil";
  EXPECT_FALSE(CheckCmdlineChange(c).ok());
  c.detail["method"] = kMethodGrubDropIn;
  EXPECT_TRUE(CheckCmdlineChange(c).ok());
  c.after = {"iommu=pt\"; reboot; \""};
  EXPECT_FALSE(CheckCmdlineChange(c).ok());
  c.after = {"--"};
  EXPECT_FALSE(CheckCmdlineChange(c).ok());
}

TEST(KernelCmdlinePlanTest, EditCmdlineKeepsTheRestOfTheLine) {
  const Args line = SplitCmdline("root=UUID=1 ro quiet iommu=off splash");
  EXPECT_EQ(EditCmdline(line, {"quiet"}, {"iommu=pt", "-quiet"}),
            Args({"root=UUID=1", "ro", "splash", "iommu=pt"}));
  // Back (a rollback without a recorded file): iommu=pt goes, quiet is back.
  EXPECT_EQ(EditCmdline(SplitCmdline("root=UUID=1 ro splash iommu=pt"), {"iommu=pt", "-quiet"},
                        {"quiet"}),
            Args({"root=UUID=1", "ro", "splash", "quiet"}));
}

TEST(KernelCmdlinePlanTest, KernelInstallChangesNameOnlyPlainKernels) {
  Change c = MakeChange(kModuleName, "boot", "cmdline", Args{}, Args{"iommu=pt"},
                        Disruption::kReboot, 15, "", "");
  c.detail["method"] = kMethodKernelInstall;
  c.detail["path"] = kKernelCmdlinePath;
  c.detail["kernels"] = nlohmann::json::array(
      {nlohmann::json::array({"6.1.0-18-amd64", "/boot/vmlinuz-6.1.0-18-amd64"})});
  EXPECT_TRUE(CheckCmdlineChange(c).ok());
  c.detail["kernels"] =
      nlohmann::json::array({nlohmann::json::array({"6.1.0-18-amd64", "/tmp/evil"})});
  EXPECT_FALSE(CheckCmdlineChange(c).ok());
  c.detail["kernels"] =
      nlohmann::json::array({nlohmann::json::array({"../../x", "/boot/vmlinuz-../../x"})});
  EXPECT_FALSE(CheckCmdlineChange(c).ok());
  c.detail["kernels"] = nlohmann::json::array(
      {nlohmann::json::array({"6.1.0-18-amd64", "/boot/vmlinuz-6.1.0-18-amd64"})});
  c.detail["path"] = "/etc/shadow";
  EXPECT_FALSE(CheckCmdlineChange(c).ok());
}

TEST(BootLoaderTest, DecodesLoaderInfoAndChoosesInTheDocumentedOrder) {
  std::string var("\x07\0\0\0", 4);
  for (char ch : std::string("systemd-boot 255")) var += std::string(1, ch) + '\0';
  var += std::string(2, '\0');
  EXPECT_EQ(DecodeLoaderInfo(var), "systemd-boot 255");
  BootFacts b;
  b.default_grub = true;
  b.os_id = "debian";
  b.kernel_cmdline = "root=x ro\n";
  b.kernel_install = true;
  b.grub_cfg = "/boot/grub/grub.cfg";
  EXPECT_EQ(ChooseBootLoader(b).method, kMethodGrubDropIn);  // GRUB boots it
  b.systemd_boot_esp = "/efi";
  EXPECT_EQ(ChooseBootLoader(b).method, "");  // both: undecidable
  b.loader_info = "systemd-boot 255";
  EXPECT_EQ(ChooseBootLoader(b).method, kMethodKernelInstall);
  b.loader_info.clear();
  b.grub_cfg.clear();
  EXPECT_EQ(ChooseBootLoader(b).method, kMethodKernelInstall);
  BootFacts proc;
  proc.cmdline = "BOOT_IMAGE=/vmlinuz-6 root=x initrd=/i ro";
  EXPECT_EQ(KernelInstallBase(proc), Args({"root=x", "ro"}));
}

}  // namespace
}  // namespace provisioner::kernel
