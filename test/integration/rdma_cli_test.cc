// End-to-end: RDMA discovery, the netns mode plan/apply, and doctor, with the
// real binary against host trees.
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "test/integration/harness.h"
#include "test/support/ttar.h"

namespace provisioner::testing {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

void WriteTempFileAt(const std::string& path, const std::string& content) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << content;
}

const json* Named(const json& arr, const std::string& key, const std::string& value) {
  for (const auto& x : arr) {
    if (x.contains(key) && x[key] == value) return &x;
  }
  return nullptr;
}

std::string NetnsModeYaml(const std::string& mode, bool persist = true) {
  return WriteTempFile("host-" + mode + ".yaml",
                       HostYaml("  rdma:\n    netnsMode: " + mode +
                                "\n    persist: " + (persist ? "true" : "false") + "\n"));
}

TEST(RdmaCliTest, DiscoverRoceTree) {
  std::string root = ExtractHost("cx5-roce");
  RunResult r = Provisioner({"discover", "--root", root, "-o", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = ParseJson(r);
  EXPECT_EQ(j["rdma"]["netnsMode"], "shared");
  const json* dev = Named(j["rdmaDevices"], "name", "mlx5_0");
  ASSERT_NE(dev, nullptr) << j["rdmaDevices"].dump(2);
  EXPECT_EQ((*dev)["pciAddress"], "0000:af:00.0");
  EXPECT_EQ((*dev)["function"], "PF");
  EXPECT_EQ((*dev)["nodeGuid"], "0c42:a103:005b:7c2e");
  EXPECT_EQ((*dev)["fwVer"], "16.35.2000");
  ASSERT_EQ((*dev)["ports"].size(), 1u);
  const json& port = (*dev)["ports"][0];
  EXPECT_EQ(port["port"], 1);
  EXPECT_EQ(port["linkLayer"], "Ethernet");
  EXPECT_EQ(port["state"], "ACTIVE");
  EXPECT_EQ(port["physState"], "LinkUp");
  EXPECT_EQ(port["netdev"], "ens6f0np0");
  EXPECT_EQ(port["rate"], "100 Gb/sec (4X EDR)");
  const json* gid3 = Named(port["gids"], "gid", "0000:0000:0000:0000:0000:ffff:ac51:0077");
  ASSERT_NE(gid3, nullptr);
  const json* v2 = Named(port["roceV2GidIndex"], "address", "172.81.0.119");
  ASSERT_NE(v2, nullptr) << port.dump(2);
  EXPECT_EQ((*v2)["gidIndex"], 3);
  EXPECT_EQ((*v2)["family"], "ipv4");
  EXPECT_EQ((*v2)["netdev"], "ens6f0np0");
  bool has_v2_slot = false;
  for (const auto& g : port["gids"]) {
    has_v2_slot =
        has_v2_slot || (g["index"] == 3 && g["type"] == "RoCE v2" && g["netdev"] == "ens6f0np0");
  }
  EXPECT_TRUE(has_v2_slot);

  RunResult t = Provisioner({"discover", "--root", root});
  ASSERT_EQ(t.exit_code, 0) << t.err;
  EXPECT_THAT(t.out, HasSubstr("RDMA devices:"));
  EXPECT_THAT(t.out, ::testing::ContainsRegex("mlx5_0 +0000:af:00.0 +PF +1 +Ethernet +ACTIVE"));
  EXPECT_THAT(t.out,
              ::testing::ContainsRegex(
                  "mlx5_0 +1 +3 +0000:0000:0000:0000:0000:ffff:ac51:0077 +172.81.0.119 +RoCE v2"));
}

TEST(RdmaCliTest, DiscoverIbTree) {
  std::string root = ExtractHost("cx5-ib");
  RunResult r = Provisioner({"discover", "--root", root, "-o", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = ParseJson(r);
  const json* dev = Named(j["rdmaDevices"], "name", "mlx5_0");
  ASSERT_NE(dev, nullptr);
  EXPECT_EQ((*dev)["pciAddress"], "0000:86:00.0");
  const json& port = (*dev)["ports"][0];
  EXPECT_EQ(port["linkLayer"], "InfiniBand");
  EXPECT_EQ(port["lid"], 5);
  EXPECT_EQ(port["smLid"], 1);
  EXPECT_EQ(port["netdev"], "ibs5f0");
  EXPECT_TRUE(port["roceV2GidIndex"].empty());
  EXPECT_EQ(port["gids"][0]["netdev"], nullptr);  // no ndevs on InfiniBand
  RunResult t = Provisioner({"discover", "--root", root});
  EXPECT_THAT(t.out, ::testing::ContainsRegex("InfiniBand +ACTIVE +LinkUp +0x5 +0x1"));
}

TEST(RdmaCliTest, PlanExclusiveOnSharedHostIsLiveAndPersistent) {
  std::string root = ExtractHost("cx5-roce");
  RunResult r = Provisioner(
      {"plan", NetnsModeYaml("exclusive"), "--root", root, "-o", "json", "--detailed-exitcode"});
  ASSERT_EQ(r.exit_code, 2) << r.err;
  json j = ParseJson(r);
  ASSERT_EQ(j["changes"].size(), 2u) << j.dump(2);
  EXPECT_EQ(j["changes"][0]["id"], "rdma/system/netnsMode");
  EXPECT_EQ(j["changes"][0]["before"], "shared");
  EXPECT_EQ(j["changes"][0]["after"], "exclusive");
  EXPECT_EQ(j["changes"][0]["disruption"], "live");
  EXPECT_EQ(j["changes"][1]["id"], "rdma/modprobe.d/netnsMode");
  EXPECT_EQ(j["changes"][1]["before"], nullptr);
  EXPECT_EQ(j["changes"][1]["after"], "exclusive");
  EXPECT_EQ(j["summary"]["rebootRequired"], false);
  RunResult shared =
      Provisioner({"plan", NetnsModeYaml("shared"), "--root", root, "--detailed-exitcode"});
  EXPECT_EQ(shared.exit_code, 0) << shared.out << shared.err;
}

// Issue 25 item 7: ib_core loads from the initramfs, whose modprobe.d
// copy was taken when it was built: the persistent mode needs it rebuilt.
// The plan says so and names the command, from the module lists the image
// is built from (initramfs-tools, dracut) or a capture of its file list.
TEST(RdmaCliTest, IbCoreInTheInitramfsNamesTheRebuild) {
  std::string root = ExtractHost("cx5-roce");
  const std::string release = ReadFile(root + "/proc/sys/kernel/osrelease");
  const std::string rel = release.substr(0, release.find_last_not_of("\n") + 1);
  ASSERT_FALSE(rel.empty());
  auto warnings = [&]() {
    RunResult r = Provisioner({"plan", NetnsModeYaml("exclusive"), "--root", root, "-o", "json"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return ParseJson(r)["warnings"].dump();
  };
  EXPECT_EQ(warnings().find("initramfs"), std::string::npos);  // no evidence: nothing said

  std::filesystem::create_directories(root + "/etc/initramfs-tools");
  WriteTempFileAt(root + "/etc/initramfs-tools/modules", "# modules\nmlx5_core\nmlx5_ib\n");
  std::string w = warnings();
  EXPECT_THAT(w, HasSubstr("ib_core loads from the initramfs (/etc/initramfs-tools/modules lists "
                           "mlx5_ib)"));
  EXPECT_THAT(w, HasSubstr("`update-initramfs -u -k " + rel + "`"));

  // A capture of lsinitramfs's list decides over the module lists.
  std::filesystem::create_directories(root + "/run/provisioner/initramfs");
  WriteTempFileAt(root + "/run/provisioner/initramfs/" + rel + ".list",
                  "usr/lib/modules/" + rel +
                      "/kernel/drivers/net/ethernet/mellanox/mlx5/core/"
                      "mlx5_core.ko\n");
  EXPECT_EQ(warnings().find("initramfs"), std::string::npos);
  WriteTempFileAt(root + "/run/provisioner/initramfs/" + rel + ".list",
                  "usr/lib/modules/" + rel + "/kernel/drivers/infiniband/core/ib_core.ko.xz\n");
  EXPECT_THAT(warnings(), HasSubstr("/run/provisioner/initramfs/" + rel + ".list lists"));

  // dracut (no initramfs-tools): its add_drivers, and its rebuild command.
  std::filesystem::remove_all(root + "/run/provisioner/initramfs");
  std::filesystem::remove_all(root + "/etc/initramfs-tools");
  std::filesystem::create_directories(root + "/etc/dracut.conf.d");
  WriteTempFileAt(root + "/etc/dracut.conf.d/rdma.conf", "add_drivers+=\" ib_core mlx5_ib \"\n");
  w = warnings();
  EXPECT_THAT(w, HasSubstr("/etc/dracut.conf.d/rdma.conf: add_drivers has ib_core"));
  EXPECT_THAT(w, HasSubstr("`dracut -f --kver " + rel + "`"));
}

TEST(RdmaCliTest, ApplyWritesModprobeConfKeepingLinesAndSecondApplyWritesNothing) {
  std::string root = ExtractHost("cx5-roce");
  const std::string conf = root + "/etc/modprobe.d/ib_core.conf";
  const std::string seed =
      "# site settings\noptions ib_core recv_queue_size=512\ninstall foo /bin/true\n";
  std::ofstream(conf) << seed;
  std::string yaml = NetnsModeYaml("exclusive");
  RunResult a = Provisioner({"apply", yaml, "--root", root, "-o", "json"});
  ASSERT_EQ(a.exit_code, 0) << a.out << a.err;
  json j = ParseJson(a);
  ASSERT_EQ(j["changes"].size(), 2u);
  for (const auto& c : j["changes"]) EXPECT_EQ(c["status"], "applied") << c.dump();
  EXPECT_EQ(ReadFile(conf), seed + "options ib_core netns_mode=0\n");
  EXPECT_EQ(ReadFile(root + "/sys/module/ib_core/parameters/netns_mode"), "N\n");
  EXPECT_FALSE(Exists(root + "/run/reboot-required"));

  std::string before = MakeTempDir("before") + "/tree.ttar";
  ASSERT_TRUE(WriteTtar(root, before).ok());
  RunResult a2 = Provisioner({"apply", yaml, "--root", root});
  EXPECT_EQ(a2.exit_code, 0) << a2.err;
  EXPECT_THAT(a2.out, HasSubstr("No changes."));
  std::string after = MakeTempDir("after") + "/tree.ttar";
  ASSERT_TRUE(WriteTtar(root, after).ok());
  EXPECT_TRUE(ReadFile(before) == ReadFile(after)) << "second apply changed the tree";

  // Back to shared: the option goes, the site's lines stay.
  RunResult s = Provisioner({"apply", NetnsModeYaml("shared"), "--root", root});
  ASSERT_EQ(s.exit_code, 0) << s.err;
  EXPECT_EQ(ReadFile(conf), seed);
  EXPECT_EQ(ReadFile(root + "/sys/module/ib_core/parameters/netns_mode"), "Y\n");
}

// Without ib_core (no RDMA netlink, no parameter) the live switch cannot
// happen: the mode is set persistently, takes effect at boot, exit 3.
TEST(RdmaCliTest, WithoutIbCoreTheModeTakesEffectAtReboot) {
  std::string root = ExtractHost("cx5-roce");
  ASSERT_EQ(std::system(("rm -rf '" + root + "/sys/module/ib_core/parameters'").c_str()), 0);
  std::string yaml = NetnsModeYaml("exclusive");
  json j = PlanJson(yaml, root);
  ASSERT_EQ(j["changes"].size(), 1u);
  EXPECT_EQ(j["changes"][0]["disruption"], "reboot");
  EXPECT_EQ(j["summary"]["rebootRequired"], true);
  ASSERT_EQ(j["warnings"].size(), 1u);
  EXPECT_THAT(j["warnings"][0].get<std::string>(), HasSubstr("ib_core not loaded"));
  RunResult a = Provisioner({"apply", yaml, "--root", root});
  EXPECT_EQ(a.exit_code, 3) << a.out << a.err;
  EXPECT_THAT(a.out, HasSubstr("A reboot is required"));
  EXPECT_TRUE(Exists(root + "/run/reboot-required"));
  EXPECT_EQ(ReadFile(root + "/etc/modprobe.d/ib_core.conf"), "options ib_core netns_mode=0\n");
}

// The kernel refuses the switch while other network namespaces exist (the
// tree stand-in: entries in run/netns): reported, persisted, exit 3.
TEST(RdmaCliTest, RefusedLiveSwitchIsReportedAndTakesEffectAtReboot) {
  std::string root = ExtractHostWithNetns("cx5-roce", "blue");
  std::string yaml = NetnsModeYaml("exclusive");
  RunResult a = Provisioner({"apply", yaml, "--root", root, "-o", "json"});
  EXPECT_EQ(a.exit_code, 3) << a.out << a.err;
  json j = ParseJson(a);
  ASSERT_EQ(j["changes"].size(), 2u);
  EXPECT_EQ(j["changes"][0]["id"], "rdma/system/netnsMode");
  EXPECT_EQ(j["changes"][0]["status"], "deferred-to-reboot");
  EXPECT_THAT(j["changes"][0]["note"].get<std::string>(), HasSubstr("EBUSY"));
  EXPECT_THAT(j["changes"][0]["note"].get<std::string>(), HasSubstr("/run/netns/blue"));
  EXPECT_EQ(j["changes"][1]["status"], "applied");
  EXPECT_EQ(j["summary"]["rebootRequired"], true);
  EXPECT_THAT(a.err, HasSubstr("takes effect at the next reboot"));
  EXPECT_THAT(a.err, HasSubstr("network namespaces exist (/run/netns/blue)"));  // said at plan
  EXPECT_EQ(ReadFile(root + "/sys/module/ib_core/parameters/netns_mode"), "Y\n");
  EXPECT_EQ(ReadFile(root + "/etc/modprobe.d/ib_core.conf"), "options ib_core netns_mode=0\n");
  EXPECT_TRUE(Exists(root + "/run/reboot-required"));

  RunResult t = Provisioner({"apply", yaml, "--root", root});
  EXPECT_EQ(t.exit_code, 3) << t.out << t.err;
  EXPECT_THAT(t.out, HasSubstr("~ rdma system netnsMode: shared -> exclusive  done, takes "
                               "effect at the next reboot"));

  // persist: false cannot wait for a reboot: an error naming the errno.
  RunResult e =
      Provisioner({"apply", NetnsModeYaml("exclusive", /*persist=*/false), "--root", root});
  EXPECT_EQ(e.exit_code, 1) << e.out;
  EXPECT_THAT(e.err, HasSubstr("EBUSY"));
  EXPECT_THAT(e.err, HasSubstr("persist is false"));
}

TEST(RdmaCliTest, DoctorFailsOnRdmaDeviceWithoutNetdev) {
  std::string root = ExtractHost("cx5-roce");
  RunResult healthy = Provisioner({"doctor", "--root", root, "-o", "json"});
  ASSERT_EQ(healthy.exit_code, 0) << healthy.out << healthy.err;
  json h = ParseJson(healthy);
  EXPECT_EQ(h["summary"]["fail"], 0);
  EXPECT_GT(h["summary"]["ok"].get<int>(), 0);

  // A container's view: the RDMA device without its netdev.
  ASSERT_EQ(
      std::system(("rm -rf '" + root + "/sys/devices/pci0000:ae/0000:ae:00.0/0000:af:00.0/net' '" +
                   root + "/sys/class/net/ens6f0np0'")
                      .c_str()),
      0);
  RunResult t = Provisioner({"doctor", "--root", root});
  EXPECT_EQ(t.exit_code, 1) << t.out << t.err;
  EXPECT_THAT(t.out, HasSubstr("FAIL  rdma.port-netdev  mlx5_0 port 1"));
  EXPECT_THAT(t.out, HasSubstr("ibv_modify_qp failed: No such device"));
  EXPECT_THAT(t.out, HasSubstr("fix: "));
  EXPECT_THAT(t.out, HasSubstr("Doctor: 1 failed"));

  RunResult r = Provisioner({"doctor", "--root", root, "-o", "json"});
  EXPECT_EQ(r.exit_code, 1);
  json j = ParseJson(r);
  EXPECT_EQ(j["summary"]["fail"], 1);
  const json& first = j["checks"][0];  // failures first
  EXPECT_EQ(first["verdict"], "fail");
  EXPECT_EQ(first["id"], "rdma.port-netdev");
  EXPECT_EQ(first["target"], "mlx5_0 port 1");
  EXPECT_FALSE(first["evidence"].empty());
  EXPECT_THAT(first["fix"].get<std::string>(), HasSubstr("macvlan"));
}

TEST(RdmaCliTest, DoctorComparesWithHostYaml) {
  std::string root = ExtractHost("cx5-roce");
  std::string yaml = NetnsModeYaml("exclusive");
  RunResult before = Provisioner({"doctor", yaml, "--root", root, "-o", "json"});
  EXPECT_EQ(before.exit_code, 1) << before.err;
  json j = ParseJson(before);
  const json* mode = Named(j["checks"], "id", "rdma.netns-mode");
  ASSERT_NE(mode, nullptr);
  EXPECT_EQ((*mode)["verdict"], "fail");
  ASSERT_EQ(Provisioner({"apply", yaml, "--root", root}).exit_code, 0);
  RunResult after = Provisioner({"doctor", yaml, "--root", root});
  EXPECT_EQ(after.exit_code, 0) << after.out;
  EXPECT_THAT(after.out, HasSubstr("RDMA netns mode is exclusive as host.yaml wants"));
}

TEST(RdmaCliTest, DoctorErrors) {
  RunResult r = Provisioner({"doctor", "--root", "/nonexistent/root"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("--root /nonexistent/root"));
  EXPECT_THAT(r.err, HasSubstr("ENOENT"));
  std::string bad = WriteTempFile("bad.yaml",
                                  "apiVersion: provisioner/v1alpha1\nkind: HostConfig\nspec:\n  "
                                  "rdma:\n    netnsMode: sometimes\n");
  RunResult b = Provisioner({"doctor", bad, "--root", ExtractHost("cx5-roce")});
  EXPECT_EQ(b.exit_code, 1);
  EXPECT_THAT(b.err, HasSubstr("bad.yaml:"));
}

}  // namespace
}  // namespace provisioner::testing
