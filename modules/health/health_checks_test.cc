// The link health gates over hand-built facts: the sysfs formats of the
// kernel (drivers/pci/pci-sysfs.c, drivers/infiniband/core/sysfs.c) and the
// verdicts. The real binary on host trees: test/integration/health_cli_test.
#include "modules/health/health_checks.h"

#include <map>
#include <string>

#include "gtest/gtest.h"
#include "test/support/check_results.h"

namespace provisioner::health {
namespace {

TEST(HealthParseTest, LinkSpeedFormatsOfEveryKernel) {
  EXPECT_EQ(ParseLinkSpeed("2.5 GT/s PCIe"), 2.5);
  EXPECT_EQ(ParseLinkSpeed("16.0 GT/s PCIe"), 16.0);
  EXPECT_EQ(ParseLinkSpeed("64.0 GT/s PCIe"), 64.0);
  EXPECT_EQ(ParseLinkSpeed("8 GT/s"), 8.0);  // before pci_speed_string
  EXPECT_EQ(ParseLinkSpeed("Unknown"), std::nullopt);
  EXPECT_EQ(ParseLinkSpeed("Unknown speed"), std::nullopt);
  EXPECT_EQ(ParseLinkSpeed(""), std::nullopt);
  EXPECT_EQ(ParseLinkSpeed("16.0"), std::nullopt);
  EXPECT_EQ(ParseLinkSpeed("-8 GT/s"), std::nullopt);
}

TEST(HealthParseTest, PortRates) {
  EXPECT_EQ(ParsePortRate("400 Gb/sec (4X NDR)"), 400.0);
  EXPECT_EQ(ParsePortRate("2.5 Gb/sec (1X SDR)"), 2.5);
  EXPECT_EQ(ParsePortRate("53.125 Gb/sec (1X HDR)"), 53.125);
  EXPECT_EQ(ParsePortRate("Invalid argument"), std::nullopt);
  EXPECT_EQ(ParsePortRate(""), std::nullopt);
}

TEST(HealthParseTest, DmaBufNeedsKernel512AndOpenModuleR515) {
  const std::string open =
      "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.54.15  Release Build  "
      "(dvs-builder@U16-I3-B03-4-3)  Tue Mar  5 22:15:33 UTC 2024";
  const std::string proprietary =
      "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.154.05  Thu Dec 28 15:37:48 UTC 2023";
  EXPECT_EQ(DmaBufUnavailableReason("6.1.0-18-amd64", open), "");
  EXPECT_NE(DmaBufUnavailableReason("5.10.0-28-amd64", open).find("older than 5.12"),
            std::string::npos);
  EXPECT_NE(DmaBufUnavailableReason("6.1.0", proprietary).find("proprietary"), std::string::npos);
  EXPECT_NE(DmaBufUnavailableReason("6.1.0", std::nullopt).find("not loaded"), std::string::npos);
  EXPECT_NE(DmaBufUnavailableReason(
                "6.1.0", "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  510.47.03  x")
                .find("R515"),
            std::string::npos);
  EXPECT_NE(DmaBufUnavailableReason("", open), "");
}

// A PCI function at `sysfs_path` (its address the last element), bound to
// `driver`.
PciFunction Function(const std::string& sysfs_path, const std::string& vendor,
                     const std::string& device_id, uint32_t class_code, const std::string& driver) {
  PciFunction f;
  f.pci_address = sysfs_path.substr(sysfs_path.rfind('/') + 1);
  f.sysfs_path = sysfs_path;
  f.vendor = vendor;
  f.device_id = device_id;
  f.class_code = class_code;
  f.driver = driver;
  return f;
}

// Root port 16:01.0 -> switch 17:00.0 -> 18:02.0 -> NIC 1a:00.0 (Gen5 x16).
HostFacts NicBehindSwitch() {
  HostFacts facts;
  facts.health.discovered = true;
  PciFunction nic =
      Function("/sys/devices/pci0000:16/0000:16:01.0/0000:17:00.0/0000:18:02.0/0000:1a:00.0",
               "15b3", "1021", 0x020000, "mlx5_core");
  nic.rdma_devices = {"mlx5_0"};
  facts.pci.push_back(nic);
  for (const char* bdf : {"0000:16:01.0", "0000:17:00.0", "0000:18:02.0", "0000:1a:00.0"}) {
    facts.health.pcie_links[bdf] = {"32.0 GT/s PCIe", "32.0 GT/s PCIe", 16, 16};
  }
  return facts;
}

std::map<std::string, CheckResult> Checks(const HostFacts& facts) {
  CheckSink sink;
  CheckHealth(nullptr, facts, sink);
  return testing::ResultsByIdAndTarget(sink);
}

TEST(HealthPcieLinkTest, FullLinkIsOk) {
  auto r = Checks(NicBehindSwitch());
  ASSERT_EQ(r.count("health.pcie-link NIC 0000:1a:00.0 (mlx5_0)"), 1u);
  EXPECT_EQ(r["health.pcie-link NIC 0000:1a:00.0 (mlx5_0)"].verdict, Verdict::kOk);
}

TEST(HealthPcieLinkTest, X8OfX16FailsAndNamesTheLink) {
  HostFacts facts = NicBehindSwitch();
  facts.health.pcie_links["0000:1a:00.0"].current_width = 8;
  auto r = Checks(facts);
  const CheckResult& c = r["health.pcie-link NIC 0000:1a:00.0 (mlx5_0)"];
  EXPECT_EQ(c.verdict, Verdict::kFail);
  EXPECT_NE(c.summary.find("0000:18:02.0 -> 0000:1a:00.0 at 32.0 GT/s PCIe x8, capable of 32 "
                           "GT/s x16"),
            std::string::npos)
      << c.summary;
  EXPECT_NE(c.fix.find("setpci -s 0000:18:02.0 CAP_EXP+10.w=0020:0020"), std::string::npos)
      << c.fix;
}

TEST(HealthPcieLinkTest, DegradedSwitchUplinkFailsTheNicBelow) {
  HostFacts facts = NicBehindSwitch();
  facts.health.pcie_links["0000:17:00.0"].current_speed = "16.0 GT/s PCIe";
  const CheckResult c = Checks(facts)["health.pcie-link NIC 0000:1a:00.0 (mlx5_0)"];
  EXPECT_EQ(c.verdict, Verdict::kFail);
  EXPECT_NE(c.summary.find("0000:16:01.0 -> 0000:17:00.0 at 16.0 GT/s PCIe x16"), std::string::npos)
      << c.summary;
}

TEST(HealthPcieLinkTest, LinkDownFails) {
  HostFacts facts = NicBehindSwitch();
  facts.health.pcie_links["0000:1a:00.0"].current_speed = "Unknown";
  facts.health.pcie_links["0000:1a:00.0"].current_width = 0;
  EXPECT_EQ(Checks(facts)["health.pcie-link NIC 0000:1a:00.0 (mlx5_0)"].verdict, Verdict::kFail);
}

TEST(HealthPcieLinkTest, Gen5CardInGen4SlotOnlyWarns) {
  HostFacts facts = NicBehindSwitch();
  facts.health.pcie_links["0000:18:02.0"] = {"16.0 GT/s PCIe", "16.0 GT/s PCIe", 16, 16};
  facts.health.pcie_links["0000:1a:00.0"].current_speed = "16.0 GT/s PCIe";
  facts.health.pcie_links["0000:17:00.0"] = {"16.0 GT/s PCIe", "16.0 GT/s PCIe", 16, 16};
  facts.health.pcie_links["0000:16:01.0"] = {"16.0 GT/s PCIe", "16.0 GT/s PCIe", 16, 16};
  const CheckResult c = Checks(facts)["health.pcie-link NIC 0000:1a:00.0 (mlx5_0)"];
  EXPECT_EQ(c.verdict, Verdict::kWarn) << c.summary;
  EXPECT_NE(c.summary.find("limited by the slot"), std::string::npos);
}

TEST(HealthPcieLinkTest, NoAttributesWarns) {
  HostFacts facts = NicBehindSwitch();
  facts.health.pcie_links.clear();
  const CheckResult c = Checks(facts)["health.pcie-link NIC 0000:1a:00.0 (mlx5_0)"];
  EXPECT_EQ(c.verdict, Verdict::kWarn);
  EXPECT_NE(c.summary.find("not captured"), std::string::npos);
}

TEST(HealthPcieLinkTest, NothingWithoutDiscovery) {
  HostFacts facts = NicBehindSwitch();
  facts.health.discovered = false;  // plan: the module skips its reads
  EXPECT_TRUE(Checks(facts).empty());
}

HostFacts TwoRocePorts(const std::string& rate1, const std::string& state1) {
  HostFacts facts = NicBehindSwitch();
  PciFunction second = facts.pci[0];
  second.pci_address = "0000:1a:00.1";
  second.sysfs_path = facts.pci[0].sysfs_path.substr(0, facts.pci[0].sysfs_path.size() - 1) + "1";
  second.rdma_devices = {"mlx5_1"};
  facts.pci.push_back(second);
  for (int i = 0; i < 2; ++i) {
    RdmaDevice d;
    d.name = "mlx5_" + std::to_string(i);
    d.pci_address = facts.pci[i].pci_address;
    RdmaPort p;
    p.link_layer = "Ethernet";
    p.state = i == 1 ? state1 : "ACTIVE";
    p.phys_state = p.state == "ACTIVE" ? "LinkUp" : "Disabled";
    p.rate = i == 1 ? rate1 : "400 Gb/sec (4X NDR)";
    p.netdev = "ens" + std::to_string(i);
    d.ports.push_back(p);
    facts.rdma.devices.push_back(d);
  }
  return facts;
}

TEST(HealthPortTest, RocePortDownFails) {
  auto r = Checks(TwoRocePorts("400 Gb/sec (4X NDR)", "DOWN"));
  EXPECT_EQ(r["health.port-state mlx5_0 port 1 (ens0)"].verdict, Verdict::kOk);
  const CheckResult& c = r["health.port-state mlx5_1 port 1 (ens1)"];
  EXPECT_EQ(c.verdict, Verdict::kFail);
  EXPECT_NE(c.fix.find("ethtool ens1"), std::string::npos);
  // A DOWN port has no rate to compare: one ACTIVE peer, no rate check.
  EXPECT_EQ(r.count("health.port-rate mlx5_0 port 1"), 0u);
}

TEST(HealthPortTest, SlowerRailPeerFails) {
  auto r = Checks(TwoRocePorts("200 Gb/sec (4X HDR)", "ACTIVE"));
  EXPECT_EQ(r["health.port-rate mlx5_0 port 1"].verdict, Verdict::kOk);
  const CheckResult& c = r["health.port-rate mlx5_1 port 1"];
  EXPECT_EQ(c.verdict, Verdict::kFail);
  EXPECT_NE(c.summary.find("mlx5_0 port 1"), std::string::npos) << c.summary;
  EXPECT_NE(c.summary.find("400 Gb/sec"), std::string::npos) << c.summary;
}

TEST(HealthPortTest, InfinibandStateIsLeftToRdmaIbPort) {
  HostFacts facts = TwoRocePorts("400 Gb/sec (4X NDR)", "DOWN");
  for (auto& d : facts.rdma.devices) d.ports[0].link_layer = "InfiniBand";
  for (const auto& [key, c] : Checks(facts)) EXPECT_NE(c.id, "health.port-state") << key;
}

HostFacts GpuAndNic() {
  HostFacts facts = NicBehindSwitch();
  facts.pci.push_back(
      Function("/sys/devices/pci0000:16/0000:16:01.0/0000:17:00.0/0000:18:01.0/0000:19:00.0",
               "10de", "2330", 0x030200, "nvidia"));
  facts.health.pcie_links["0000:18:01.0"] = {"32.0 GT/s PCIe", "32.0 GT/s PCIe", 16, 16};
  facts.health.pcie_links["0000:19:00.0"] = {"32.0 GT/s PCIe", "32.0 GT/s PCIe", 16, 16};
  facts.kernel.release = "6.1.0-18-amd64";
  facts.loaded_modules = {"nvidia", "mlx5_ib"};
  return facts;
}

TEST(HealthGpuDirectTest, PeermemOrDmaBufElseFail) {
  HostFacts facts = GpuAndNic();
  EXPECT_EQ(Checks(facts)["health.pcie-link GPU 0000:19:00.0"].verdict, Verdict::kOk);
  // nvidia loaded without its /proc/driver/nvidia/version: not captured.
  CheckResult c = Checks(facts)["health.gpudirect-rdma GPUDirect RDMA"];
  EXPECT_EQ(c.verdict, Verdict::kWarn);
  EXPECT_NE(c.summary.find("not captured"), std::string::npos) << c.summary;
  // The proprietary module: no dma-buf, no peermem.
  facts.health.nvidia_version =
      "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.154.05  Thu Dec 28 15:37:48 UTC 2023";
  c = Checks(facts)["health.gpudirect-rdma GPUDirect RDMA"];
  EXPECT_EQ(c.verdict, Verdict::kFail);
  EXPECT_NE(c.summary.find("proprietary"), std::string::npos) << c.summary;
  // No GPU driver at all.
  facts.health.nvidia_version.reset();
  facts.loaded_modules = {"mlx5_ib"};
  c = Checks(facts)["health.gpudirect-rdma GPUDirect RDMA"];
  EXPECT_EQ(c.verdict, Verdict::kFail);
  EXPECT_NE(c.summary.find("not loaded"), std::string::npos) << c.summary;
  EXPECT_NE(c.fix.find("spec.kernelModules"), std::string::npos);

  facts.loaded_modules = {"nvidia", "mlx5_ib", "nvidia_peermem"};
  EXPECT_EQ(Checks(facts)["health.gpudirect-rdma GPUDirect RDMA"].verdict, Verdict::kOk);

  facts.loaded_modules = {"nvidia", "mlx5_ib"};
  facts.health.nvidia_version =
      "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.54.15  Release Build";
  c = Checks(facts)["health.gpudirect-rdma GPUDirect RDMA"];
  EXPECT_EQ(c.verdict, Verdict::kOk);
  EXPECT_NE(c.summary.find("dma-buf"), std::string::npos);
}

}  // namespace
}  // namespace provisioner::health
