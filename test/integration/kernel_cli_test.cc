// spec.kernel.cmdline (modules/kernel) with the real binary on the bundled
// HGX H100 tree (Debian 12: /etc/os-release, /etc/default/grub; booted with
// "ro quiet intel_iommu=on"): plan shows the GRUB drop-in, apply writes it,
// reports update-grub (not run under --root) and exits 3; the drop-in sourced
// by /bin/sh as grub-mkconfig does gives the arguments; the next plan is
// empty (reboot pending), and stays empty once /proc/cmdline has them. The
// same tree as a RHEL-like host plans grubby; with neither, plan fails naming
// what it looked for.
#include <sys/stat.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "test/integration/harness.h"
#include "test/support/files.h"
#include "test/support/ttar.h"

namespace provisioner::testing {
namespace {

using nlohmann::json;

const std::string kHostYaml = HostYaml(R"(  kernel:
    cmdline: [intel_iommu=on, iommu=pt]
    cmdlineRemove: [quiet]
)",
                                       "hgx");

constexpr char kDropIn[] = "/etc/default/grub.d/99-provisioner.cfg";

std::string Tree() {
  const std::string root = MakeTempDir("kernel");
  Status s = ExtractTtar(HostTreePath("hgx-h100-pcie"), root);
  EXPECT_TRUE(s.ok()) << s.message();
  return root;
}

json PlanJson(const std::string& yaml, const std::string& root, int* exit_code = nullptr) {
  RunResult p = Provisioner({"plan", yaml, "--root", root, "-o", "json"});
  if (exit_code != nullptr) *exit_code = p.exit_code;
  EXPECT_EQ(p.exit_code, 0) << p.err;
  return json::parse(p.out.empty() ? "{}" : p.out);
}

// GRUB_CMDLINE_LINUX|GRUB_CMDLINE_LINUX_DEFAULT after /bin/sh sources the
// tree's /etc/default/grub and then the drop-in, as grub-mkconfig does.
std::string GrubSees(const std::string& root) {
  const std::string cmd = "/bin/sh -c '. \"" + root + "/etc/default/grub\"; . \"" + root + kDropIn +
                          "\"; printf \"%s|%s\" \"$GRUB_CMDLINE_LINUX\" "
                          "\"$GRUB_CMDLINE_LINUX_DEFAULT\"' 2>/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return "";
  std::string out;
  char buf[256];
  while (fgets(buf, sizeof buf, p) != nullptr) out += buf;
  pclose(p);
  return out;
}

void Put(const std::string& root, const std::string& path, const std::string& content) {
  std::filesystem::create_directories(std::filesystem::path(root + path).parent_path());
  std::ofstream(root + path, std::ios::trunc | std::ios::binary) << content;
}

// The hgx tree as a Debian host that boots with systemd-boot: its ESP at
// /boot/efi, kernel-install and /etc/kernel/cmdline, one installed kernel,
// and /etc/default/grub left over from GRUB (no grub.cfg).
std::string SystemdBootTree() {
  const std::string root = Tree();
  Put(root, "/boot/efi/EFI/systemd/systemd-bootx64.efi", "");
  Put(root, "/boot/efi/loader/loader.conf", "timeout 3\n");
  Put(root, "/boot/efi/loader/entries/f00d-6.1.0-18-amd64.conf",
      "title Debian\nversion 6.1.0-18-amd64\noptions root=UUID=6f1c0a43 ro quiet "
      "intel_iommu=on\nlinux /f00d/6.1.0-18-amd64/linux\n");
  Put(root, "/etc/kernel/cmdline", "root=UUID=6f1c0a43  ro quiet intel_iommu=on\n");
  Put(root, "/usr/bin/kernel-install", "");
  Put(root, "/lib/modules/6.1.0-18-amd64/modules.dep", "");
  Put(root, "/boot/vmlinuz-6.1.0-18-amd64", "");
  return root;
}

// Issue 35 item 5: /etc/kernel/cmdline and /etc/default/grub both there,
// systemd-boot on the ESP: the kernel-install path, not the GRUB drop-in.
TEST(KernelCliTest, SystemdBootHostWithDefaultGrubPlansKernelInstall) {
  const std::string root = SystemdBootTree();
  const std::string yaml = WriteTempFile("host.yaml", kHostYaml);
  json plan = PlanJson(yaml, root);
  ASSERT_EQ(plan["changes"].size(), 1u) << plan.dump(2);
  const json& c = plan["changes"][0];
  EXPECT_EQ(c["before"], json({"quiet", "intel_iommu=on"}));
  const std::string reason = c["reason"].get<std::string>();
  EXPECT_NE(reason.find("write /etc/kernel/cmdline and run kernel-install add 6.1.0-18-amd64 "
                        "/boot/vmlinuz-6.1.0-18-amd64"),
            std::string::npos)
      << reason;
  EXPECT_NE(reason.find("systemd-boot is on the ESP /boot/efi"), std::string::npos) << reason;

  RunResult a = Provisioner({"apply", yaml, "--root", root});
  EXPECT_EQ(a.exit_code, 3) << a.out << a.err;
  EXPECT_NE(a.err.find("not running `kernel-install add 6.1.0-18-amd64 "
                       "/boot/vmlinuz-6.1.0-18-amd64`"),
            std::string::npos)
      << a.err;
  EXPECT_EQ(ReadFile(root + "/etc/kernel/cmdline"),
            "root=UUID=6f1c0a43 ro intel_iommu=on iommu=pt\n");
  EXPECT_FALSE(Exists(root + kDropIn));
  RunResult pending = Provisioner({"plan", yaml, "--root", root, "--detailed-exitcode"});
  EXPECT_EQ(pending.exit_code, 0) << pending.out << pending.err;
  EXPECT_NE((pending.out + pending.err).find("reboot to apply it"), std::string::npos)
      << pending.out << pending.err;
}

// The LoaderInfo EFI variable decides when GRUB's config is there too.
TEST(KernelCliTest, LoaderInfoSaysSystemdBootBootedIt) {
  const std::string root = SystemdBootTree();
  Put(root, "/boot/grub/grub.cfg", "# grub\n");
  std::string var("\x06\x00\x00\x00", 4);
  for (char ch : std::string("systemd-boot 252.22")) var += std::string(1, ch) + '\0';
  var += std::string("\0\0", 2);
  Put(root, "/sys/firmware/efi/efivars/LoaderInfo-4a67b082-0a4c-41cf-b6c7-440b29bb8c4f", var);
  json plan = PlanJson(WriteTempFile("host.yaml", kHostYaml), root);
  ASSERT_EQ(plan["changes"].size(), 1u) << plan.dump(2);
  EXPECT_NE(plan["changes"][0]["reason"].get<std::string>().find(
                "LoaderInfo EFI variable says systemd-boot 252.22"),
            std::string::npos)
      << plan.dump(2);
}

// systemd-boot on the ESP and a GRUB config, nothing saying which booted:
// a plan error that says what it found.
TEST(KernelCliTest, UndecidableBootLoaderIsAPlanErrorSayingWhatItFound) {
  const std::string root = SystemdBootTree();
  Put(root, "/boot/grub/grub.cfg", "# grub\n");
  RunResult p = Provisioner({"plan", WriteTempFile("host.yaml", kHostYaml), "--root", root});
  EXPECT_EQ(p.exit_code, 1) << p.out;
  EXPECT_NE(p.err.find("cannot tell which boot loader boots this host: systemd-boot is on "
                       "/boot/efi and GRUB has /boot/grub/grub.cfg"),
            std::string::npos)
      << p.err;
  EXPECT_NE(p.err.find("/etc/kernel/cmdline present"), std::string::npos) << p.err;
}

// RHEL 8: BLS entries say `options $kernelopts`, the value in grubenv. The
// plan's "before" is what the entries really hold.
TEST(KernelCliTest, Rhel8KerneloptsShowTheirRealBefore) {
  const std::string root = Tree();
  Put(root, "/etc/os-release",
      "NAME=\"Red Hat Enterprise Linux\"\nID=\"rhel\"\nID_LIKE=\"fedora\"\nVERSION_ID=\"8.9\"\n");
  Put(root, "/etc/default/grub",
      "GRUB_TIMEOUT=5\nGRUB_CMDLINE_LINUX=\"crashkernel=auto\"\nGRUB_ENABLE_BLSCFG=true\n");
  Put(root, "/usr/sbin/grubby", "");
  Put(root, "/boot/grub2/grub.cfg", "# grub\n");
  Put(root, "/boot/grub2/grubenv",
      "# GRUB Environment Block\nsaved_entry=abc-4.18.0-513.el8.x86_64\n"
      "kernelopts=root=/dev/mapper/rhel-root ro crashkernel=auto quiet intel_iommu=on\n");
  Put(root, "/boot/loader/entries/abc-4.18.0-513.el8.x86_64.conf",
      "title Red Hat Enterprise Linux (4.18.0-513.el8.x86_64) 8.9\nversion "
      "4.18.0-513.el8.x86_64\nlinux /vmlinuz-4.18.0-513.el8.x86_64\n"
      "options $kernelopts $tuned_params\n");
  json plan = PlanJson(WriteTempFile("host.yaml", kHostYaml), root);
  ASSERT_EQ(plan["changes"].size(), 1u) << plan.dump(2);
  EXPECT_EQ(plan["changes"][0]["before"], json({"quiet", "intel_iommu=on"})) << plan.dump(2);
  EXPECT_NE(plan["changes"][0]["reason"].get<std::string>().find(
                "/usr/sbin/grubby --update-kernel=ALL --args=intel_iommu=on iommu=pt "
                "--remove-args=quiet"),
            std::string::npos)
      << plan.dump(2);
}

// Issue 36 item 4: a drop-in that is someone else's is taken over, with a
// warning.
TEST(KernelCliTest, SomeoneElsesDropInIsTakenOverWithAWarning) {
  const std::string root = Tree();
  Put(root, kDropIn, "# site policy\nGRUB_TIMEOUT=1\n");
  RunResult p = Provisioner({"plan", WriteTempFile("host.yaml", kHostYaml), "--root", root});
  EXPECT_EQ(p.exit_code, 0) << p.err;
  EXPECT_NE((p.out + p.err).find("was not written by provisioner: taken over"), std::string::npos)
      << p.out << p.err;
}

// Issue 36 item 7: the boot facts are in the saved plan's facts digest, so a
// host whose kernel command line changed after `plan --out` is refused as a
// changed host, not as an edited plan file.
TEST(KernelCliTest, SavedPlanRefusedBecauseTheBootConfigurationChanged) {
  const std::string yaml = WriteTempFile("host.yaml", kHostYaml);
  {  // /proc/cmdline (rebooted with other arguments)
    const std::string root = Tree();
    const std::string saved = MakeTempDir("plan") + "/plan.json";
    RunResult p = Provisioner({"plan", yaml, "--root", root, "--out", saved});
    ASSERT_EQ(p.exit_code, 0) << p.err;
    KernelWrite(root + "/proc/cmdline",
                "BOOT_IMAGE=/boot/vmlinuz-6.1.0-18-amd64 root=UUID=6f1c0a43 ro intel_iommu=on\n");
    RunResult a = Provisioner({"apply", saved, "--root", root});
    EXPECT_EQ(a.exit_code, 1) << a.out << a.err;
    EXPECT_NE(a.err.find("changed since the plan was made"), std::string::npos) << a.err;
    EXPECT_EQ(a.err.find("the plan file was edited"), std::string::npos) << a.err;
    EXPECT_FALSE(Exists(root + kDropIn));
  }
  {  // the boot loader's file
    const std::string root = SystemdBootTree();
    const std::string saved = MakeTempDir("plan") + "/plan.json";
    RunResult p = Provisioner({"plan", yaml, "--root", root, "--out", saved});
    ASSERT_EQ(p.exit_code, 0) << p.err;
    Put(root, "/etc/kernel/cmdline", "root=UUID=6f1c0a43 ro intel_iommu=on nosmt\n");
    RunResult a = Provisioner({"apply", saved, "--root", root});
    EXPECT_EQ(a.exit_code, 1) << a.out << a.err;
    EXPECT_NE(a.err.find("changed since the plan was made"), std::string::npos) << a.err;
    EXPECT_EQ(ReadFile(root + "/etc/kernel/cmdline"),
              "root=UUID=6f1c0a43 ro intel_iommu=on nosmt\n");
  }
}

TEST(KernelCliTest, DebianDropInAppliesExitsThreeAndConvergesAfterReboot) {
  const std::string root = Tree();
  const std::string yaml = WriteTempFile("host.yaml", kHostYaml);

  json plan = PlanJson(yaml, root);
  ASSERT_EQ(plan["changes"].size(), 1u) << plan.dump(2);
  const json& c = plan["changes"][0];
  EXPECT_EQ(c["id"], "kernel/boot/cmdline");
  EXPECT_EQ(c["disruption"], "reboot");
  EXPECT_EQ(c["before"], nullptr);
  EXPECT_EQ(c["after"], json({"intel_iommu=on", "iommu=pt", "-quiet"}));
  EXPECT_NE(c["reason"].get<std::string>().find("lacks iommu=pt, has quiet"), std::string::npos)
      << c["reason"];
  EXPECT_EQ(plan["summary"]["rebootRequired"], true);

  RunResult a = Provisioner({"apply", yaml, "--root", root});
  EXPECT_EQ(a.exit_code, 3) << a.out << a.err;
  EXPECT_NE(a.err.find("not running `update-grub`"), std::string::npos) << a.err;
  EXPECT_TRUE(Exists(root + "/run/reboot-required"));
  const std::string dropin = ReadFile(root + kDropIn);
  EXPECT_NE(dropin.find("# provisioner-args: intel_iommu=on iommu=pt -quiet\n"), std::string::npos)
      << dropin;
  // The Debian default's intel_iommu=on replaced by ours, quiet gone.
  EXPECT_EQ(GrubSees(root), "intel_iommu=on iommu=pt|");
  // Nothing else under /etc/default written.
  EXPECT_EQ(ReadFile(root + "/etc/default/grub").find("provisioner"), std::string::npos);

  // Not rebooted yet: the drop-in has them, /proc/cmdline does not. No
  // change (a warning says the reboot is pending), and a second apply writes
  // nothing.
  struct stat before_st {};
  ASSERT_EQ(stat((root + kDropIn).c_str(), &before_st), 0);
  RunResult pending = Provisioner({"plan", yaml, "--root", root, "--detailed-exitcode"});
  EXPECT_EQ(pending.exit_code, 0) << pending.out << pending.err;
  EXPECT_NE((pending.out + pending.err).find("reboot to apply it"), std::string::npos)
      << pending.out << pending.err;
  RunResult again = Provisioner({"apply", yaml, "--root", root});
  EXPECT_EQ(again.exit_code, 0) << again.out << again.err;
  struct stat after_st {};
  ASSERT_EQ(stat((root + kDropIn).c_str(), &after_st), 0);
  EXPECT_EQ(before_st.st_ino, after_st.st_ino) << "the drop-in was rewritten";

  // Doctor with host.yaml: the reboot is pending.
  auto doctor_verdict = [&]() {
    RunResult d = Provisioner({"doctor", yaml, "--root", root, "-o", "json"});
    const json doc = json::parse(d.out);
    for (const auto& c : doc["checks"]) {
      if (c["id"] == "kernel.cmdline") return c["verdict"].get<std::string>();
    }
    return std::string("absent");
  };
  EXPECT_EQ(doctor_verdict(), "warn");

  // Rebooted: /proc/cmdline has them. Converged, no warning.
  KernelWrite(root + "/proc/cmdline",
              "BOOT_IMAGE=/boot/vmlinuz-6.1.0-18-amd64 root=UUID=6f1c0a43 ro intel_iommu=on "
              "iommu=pt\n");
  json done = PlanJson(yaml, root);
  EXPECT_TRUE(done["changes"].empty()) << done.dump(2);
  EXPECT_TRUE(done["warnings"].empty()) << done.dump(2);
  RunResult exit0 = Provisioner({"plan", yaml, "--root", root, "--detailed-exitcode"});
  EXPECT_EQ(exit0.exit_code, 0) << exit0.out;
  EXPECT_EQ(doctor_verdict(), "ok");
}

TEST(KernelCliTest, RhelLikeHostPlansGrubbyAndReportsItUnderRoot) {
  const std::string root = Tree();
  std::filesystem::remove(root + "/etc/default/grub");
  std::ofstream(root + "/etc/os-release", std::ios::trunc)
      << "NAME=\"Rocky Linux\"\nVERSION=\"9.4 (Blue Onyx)\"\nID=\"rocky\"\n"
         "ID_LIKE=\"rhel centos fedora\"\nVERSION_ID=\"9.4\"\n";
  std::filesystem::create_directories(root + "/usr/sbin");
  std::ofstream(root + "/usr/sbin/grubby") << "";
  const std::string yaml = WriteTempFile("host.yaml", kHostYaml);

  json plan = PlanJson(yaml, root);
  ASSERT_EQ(plan["changes"].size(), 1u) << plan.dump(2);
  const json& c = plan["changes"][0];
  EXPECT_EQ(c["before"], json({"quiet", "intel_iommu=on"}));
  EXPECT_NE(c["reason"].get<std::string>().find(
                "/usr/sbin/grubby --update-kernel=ALL --args=intel_iommu=on iommu=pt "
                "--remove-args=quiet"),
            std::string::npos)
      << c["reason"];

  RunResult a = Provisioner({"apply", yaml, "--root", root});
  EXPECT_EQ(a.exit_code, 3) << a.out << a.err;
  EXPECT_NE(a.err.find("not running `/usr/sbin/grubby --update-kernel=ALL "
                       "--args=intel_iommu=on iommu=pt --remove-args=quiet`"),
            std::string::npos)
      << a.err;
  EXPECT_FALSE(Exists(root + kDropIn));
}

TEST(KernelCliTest, HostWithNeitherIsAPlanErrorNamingWhatWasLookedFor) {
  const std::string root = Tree();
  std::filesystem::remove(root + "/etc/default/grub");
  const std::string yaml = WriteTempFile("host.yaml", kHostYaml);
  RunResult p = Provisioner({"plan", yaml, "--root", root});
  EXPECT_EQ(p.exit_code, 1) << p.out;
  EXPECT_NE(p.err.find("host.yaml:7:"), std::string::npos) << p.err;
  EXPECT_NE(p.err.find("spec.kernel.cmdline"), std::string::npos) << p.err;
  EXPECT_NE(p.err.find("/etc/default/grub: absent"), std::string::npos) << p.err;
  EXPECT_NE(p.err.find("grubby in /usr/sbin, /sbin or /usr/bin: absent"), std::string::npos)
      << p.err;
  RunResult a = Provisioner({"apply", yaml, "--root", root});
  EXPECT_EQ(a.exit_code, 1);
  EXPECT_FALSE(Exists(root + kDropIn));
}

// Doctor's IOMMU advice names the field that sets the command line.
TEST(KernelCliTest, DoctorIommuAdvicePointsAtSpecKernelCmdline) {
  RunResult d = Provisioner({"doctor", "--root", Tree(), "-o", "json"});
  ASSERT_NE(d.exit_code, -1) << d.err;
  bool seen = false;
  const json doc = json::parse(d.out);
  for (const auto& c : doc["checks"]) {
    if (c["id"] != "pcie.iommu-passthrough") continue;
    seen = true;
    EXPECT_EQ(c["verdict"], "warn");  // intel_iommu=on, no iommu=pt
    EXPECT_NE(c["fix"].get<std::string>().find("spec.kernel.cmdline: [intel_iommu=on, iommu=pt]"),
              std::string::npos)
        << c["fix"];
  }
  EXPECT_TRUE(seen) << d.out;
}

TEST(KernelCliTest, ValidateRejectsShellCharactersAndContradictions) {
  const std::string bad = WriteTempFile("bad.yaml", HostYaml(R"(  kernel:
    cmdline: ["iommu=pt; reboot"]
)",
                                                             "hgx"));
  RunResult v = Provisioner({"validate", bad});
  EXPECT_EQ(v.exit_code, 1);
  EXPECT_NE(v.err.find("bad.yaml:7:"), std::string::npos) << v.err;
  EXPECT_NE(v.err.find("one kernel command line argument"), std::string::npos) << v.err;

  const std::string both = WriteTempFile("both.yaml", HostYaml(R"(  kernel:
    cmdline: [iommu=pt]
    cmdlineRemove: [iommu]
)",
                                                               "hgx"));
  RunResult p = Provisioner({"plan", both, "--root", Tree()});
  EXPECT_EQ(p.exit_code, 1);
  EXPECT_NE(p.err.find("removes iommu=pt, which spec.kernel.cmdline asks for"), std::string::npos)
      << p.err;
}

}  // namespace
}  // namespace provisioner::testing
