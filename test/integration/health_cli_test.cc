// Doctor's link health gates (modules/health) with the real binary on a
// generated HGX H100 tree (per GPU a PEX switch holding the H100 and a
// ConnectX-7 400G, every link at 32 GT/s x16): a healthy node passes the gate
// (exit 0); a NIC trained at x8 of x16, a degraded switch uplink, a RoCE port
// down or slower than its rail peers, and no GPUDirect peer memory each FAIL
// it (exit 1) with the link or port named, the evidence and a fix.
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "test/integration/harness.h"
#include "test/support/host_presets.h"
#include "test/support/host_tree.h"
#include "test/support/ttar.h"

namespace provisioner::testing {
namespace {

using nlohmann::json;

constexpr char kOpenModule[] =
    "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.54.15  Release Build  "
    "(dvs-builder@U16-I3-B03-4-3)  Tue Mar  5 22:15:33 UTC 2024\n"
    "GCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n";
constexpr char kProprietaryModule[] =
    "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.154.05  Thu Dec 28 15:37:48 UTC 2023\n"
    "GCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n";

// The HGX H100 node with NVIDIA's open kernel module loaded (dma-buf path).
std::string BuildTree(const std::string& nvidia_version = kOpenModule) {
  HostSpec spec = HgxH100Host();
  spec.files.push_back({"/proc/driver/nvidia/version", nvidia_version});
  std::string dir = MakeTempDir("health");
  Status s = BuildHostTree(spec, dir);
  EXPECT_TRUE(s.ok()) << s.message();
  return dir;
}

struct Doctor {
  int exit_code = -1;
  json doc;
  std::string table;
  // id -> target -> check
  std::map<std::string, std::map<std::string, json>> by_id;
};

Doctor RunDoctor(const std::string& root) {
  Doctor d;
  RunResult j = Provisioner({"doctor", "--root", root, "-o", "json"});
  d.exit_code = j.exit_code;
  d.doc = json::parse(j.out);
  for (const auto& c : d.doc["checks"]) d.by_id[c["id"]][c["target"]] = c;
  RunResult t = Provisioner({"--no-color", "doctor", "--root", root});
  EXPECT_EQ(t.exit_code, j.exit_code) << "table and json disagree on the gate";
  d.table = t.out;
  return d;
}

std::string Attr(const std::string& root, const std::string& bdf, const std::string& name) {
  return root + "/sys/bus/pci/devices/" + bdf + "/" + name;
}

// The RDMA device of a PCI function in the tree.
std::string RdmaOf(const std::string& root, const std::string& bdf) {
  for (const auto& e :
       std::filesystem::directory_iterator(root + "/sys/bus/pci/devices/" + bdf + "/infiniband")) {
    return e.path().filename().string();
  }
  return "";
}

bool Contains(const json& s, const std::string& what) {
  return s.get<std::string>().find(what) != std::string::npos;
}

TEST(HealthCliTest, HealthyNodePassesTheGate) {
  const std::string root = BuildTree();
  Doctor d = RunDoctor(root);
  EXPECT_EQ(d.exit_code, 0) << d.table;
  EXPECT_EQ(d.doc["summary"]["fail"], 0) << d.table;
  // 8 ConnectX-7 + 4 ConnectX-6 Dx ports, 8 GPUs.
  EXPECT_EQ(d.by_id["health.pcie-link"].size(), 20u);
  for (const auto& [target, c] : d.by_id["health.pcie-link"])
    EXPECT_EQ(c["verdict"], "ok") << target;
  const json& gd = d.by_id["health.gpudirect-rdma"]["GPUDirect RDMA"];
  EXPECT_EQ(gd["verdict"], "ok");
  EXPECT_TRUE(Contains(gd["summary"], "dma-buf")) << gd;
  EXPECT_TRUE(Contains(gd["summary"], "nvidia_peermem not needed")) << gd;
  // With the dma-buf path, no other check asks for nvidia_peermem (rdma.gpudirect
  // used to warn that it is not loaded, contradicting the gate above).
  for (const auto& c : d.doc["checks"]) {
    if (c["verdict"] == "ok") continue;
    EXPECT_FALSE(Contains(c["summary"], "nvidia_peermem")) << c;
  }
}

// The "done when": a NIC trained at x8 of x16 fails doctor, which
// names the link.
TEST(HealthCliTest, NicTrainedAtX8OfX16FailsAndNamesTheLink) {
  const std::string root = BuildTree();
  ASSERT_EQ(RunDoctor(root).exit_code, 0);
  KernelWrite(Attr(root, "0000:1a:00.0", "current_link_width"), "8\n");
  Doctor d = RunDoctor(root);
  EXPECT_EQ(d.exit_code, 1) << d.table;
  EXPECT_EQ(d.doc["summary"]["fail"], 1) << d.table;
  const std::string target = "NIC 0000:1a:00.0 (" + RdmaOf(root, "0000:1a:00.0") + ")";
  const json& c = d.by_id["health.pcie-link"][target];
  EXPECT_EQ(c["verdict"], "fail") << c;
  EXPECT_TRUE(Contains(c["summary"],
                       "0000:17:02.0 -> 0000:1a:00.0 at 32.0 GT/s PCIe x8, capable of 32 GT/s x16"))
      << c["summary"];
  EXPECT_TRUE(Contains(c["fix"], "setpci -s 0000:17:02.0 CAP_EXP+10.w=0020:0020")) << c["fix"];
  bool evidence = false;
  for (const auto& e : c["evidence"]) {
    evidence = evidence ||
               (e["source"] == "/sys/bus/pci/devices/0000:1a:00.0/current_link_{speed,width}" &&
                e["value"] == "32.0 GT/s PCIe x8");
  }
  EXPECT_TRUE(evidence) << c["evidence"];
  // Failures first, in the table too.
  EXPECT_EQ(d.doc["checks"][0]["id"], "health.pcie-link");
  EXPECT_NE(d.table.find("FAIL  health.pcie-link  " + target), std::string::npos) << d.table;
  // The GPU beside it on the same switch is fine.
  EXPECT_EQ(d.by_id["health.pcie-link"]["GPU 0000:19:00.0"]["verdict"], "ok");
}

TEST(HealthCliTest, DegradedSwitchUplinkFailsEveryDeviceBelowIt) {
  const std::string root = BuildTree();
  // The PEX switch's upstream port 16:00.0 trained at Gen4 below root port 15:01.0.
  KernelWrite(Attr(root, "0000:16:00.0", "current_link_speed"), "16.0 GT/s PCIe\n");
  Doctor d = RunDoctor(root);
  EXPECT_EQ(d.exit_code, 1);
  int failed = 0;
  for (const auto& [target, c] : d.by_id["health.pcie-link"]) {
    if (c["verdict"] != "fail") continue;
    ++failed;
    EXPECT_TRUE(Contains(c["summary"], "0000:15:01.0 -> 0000:16:00.0 at 16.0 GT/s PCIe x16"))
        << target << ": " << c["summary"];
  }
  // Behind switch 15: the GPU 19, the ConnectX-7 1a and the ConnectX-6 Dx 1b.0/1b.1.
  EXPECT_EQ(failed, 4) << d.table;
  EXPECT_EQ(d.by_id["health.pcie-link"]["GPU 0000:19:00.0"]["verdict"], "fail");
  EXPECT_EQ(d.by_id["health.pcie-link"]["GPU 0000:3b:00.0"]["verdict"], "ok");
}

TEST(HealthCliTest, RocePortDownOrSlowerThanItsRailPeersFails) {
  const std::string root = BuildTree();
  const std::string slow = RdmaOf(root, "0000:3c:00.0");
  const std::string down = RdmaOf(root, "0000:4d:00.0");
  ASSERT_FALSE(slow.empty());
  KernelWrite(root + "/sys/class/infiniband/" + slow + "/ports/1/rate", "200 Gb/sec (4X HDR)\n");
  KernelWrite(root + "/sys/class/infiniband/" + down + "/ports/1/state", "1: DOWN\n");
  KernelWrite(root + "/sys/class/infiniband/" + down + "/ports/1/phys_state", "3: Disabled\n");
  Doctor d = RunDoctor(root);
  EXPECT_EQ(d.exit_code, 1);
  EXPECT_EQ(d.doc["summary"]["fail"], 2) << d.table;
  const json& rate = d.by_id["health.port-rate"][slow + " port 1"];
  EXPECT_EQ(rate["verdict"], "fail") << rate;
  EXPECT_TRUE(Contains(rate["summary"], "200 Gb/sec (4X HDR), below its 6 rail peer(s)"))
      << rate["summary"];
  EXPECT_TRUE(Contains(rate["summary"], "400 Gb/sec")) << rate["summary"];
  EXPECT_TRUE(Contains(rate["fix"], "ethtool")) << rate["fix"];
  bool state_failed = false;
  for (const auto& [target, c] : d.by_id["health.port-state"]) {
    if (target.rfind(down + " port 1", 0) == 0) {
      state_failed = c["verdict"] == "fail";
      EXPECT_TRUE(Contains(c["summary"], "DOWN (Disabled)")) << c;
    } else {
      EXPECT_EQ(c["verdict"], "ok") << target;
    }
  }
  EXPECT_TRUE(state_failed) << d.table;
}

TEST(HealthCliTest, NoGpuDirectPeerMemoryFails) {
  // The proprietary kernel module has no dma-buf path; nvidia_peermem not loaded.
  const std::string root = BuildTree(kProprietaryModule);
  Doctor d = RunDoctor(root);
  EXPECT_EQ(d.exit_code, 1);
  const json& gd = d.by_id["health.gpudirect-rdma"]["GPUDirect RDMA"];
  EXPECT_EQ(gd["verdict"], "fail") << gd;
  EXPECT_TRUE(Contains(gd["summary"], "nvidia_peermem is not loaded")) << gd;
  EXPECT_TRUE(Contains(gd["fix"], "spec.kernelModules")) << gd;

  // nvidia_peermem loaded (a line of /proc/modules): the gate passes.
  std::string modules = ReadFile(root + "/proc/modules");
  modules = "nvidia_peermem 16384 0 - Live 0x0000000000000000\n" + modules;
  KernelWrite(root + "/proc/modules", modules);
  Doctor after = RunDoctor(root);
  EXPECT_EQ(after.exit_code, 0) << after.table;
  EXPECT_TRUE(Contains(after.by_id["health.gpudirect-rdma"]["GPUDirect RDMA"]["summary"],
                       "nvidia_peermem"));
}

}  // namespace
}  // namespace provisioner::testing
