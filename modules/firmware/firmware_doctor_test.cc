// FirmwareModule::Check: "ATS off with GPUDirect" over hand-built facts.
#include "gtest/gtest.h"
#include "modules/firmware/firmware_module.h"
#include "modules/firmware/mstconfig_query.h"

namespace provisioner {
namespace {

constexpr char kQuery[] =
    "Device type:    ConnectX7\n"
    "Device:         0000:18:00.0\n"
    "\n"
    "Configurations:                              Default         Current         Next Boot\n"
    "         ATS_ENABLED                         False(0)        False(0)        False(0)\n"
    "         NUM_OF_VFS                          8               8               8\n";

// `type`: the NIC group's /sys/kernel/iommu_groups/<n>/type ("" = not read).
HostFacts GpuHost(const std::string& query, const std::string& iommu_group,
                  const std::string& type = "DMA") {
  HostFacts f;
  if (!iommu_group.empty() && !type.empty()) f.pcie.iommu_group_types[iommu_group] = type;
  f.pcie.cmdline = "BOOT_IMAGE=/boot/vmlinuz ro intel_iommu=on";
  PciFunction gpu;
  gpu.pci_address = "0000:19:00.0";
  gpu.vendor = "10de";
  gpu.class_code = 0x030200;
  PciFunction nic;
  nic.pci_address = "0000:18:00.0";
  nic.vendor = "15b3";
  nic.class_code = 0x020700;
  nic.iommu_group = iommu_group;
  f.pci = {nic, gpu};
  RdmaDevice d;
  d.name = "mlx5_0";
  d.pci_address = "0000:18:00.0";
  f.rdma.devices = {d};
  FirmwareFacts fw;
  fw.source = "/run/provisioner/mstconfig/0000:18:00.0.query";
  fw.raw_query = query;
  auto q = ParseMstconfigQuery(query);
  EXPECT_TRUE(q.ok()) << q.status().message();
  if (q.ok()) fw.params = q->params;
  f.firmware["0000:18:00.0"] = fw;
  return f;
}

std::vector<CheckResult> Checks(const HostFacts& f) {
  CheckSink sink;
  FirmwareModule().Check(nullptr, f, sink);
  return sink.results();
}

TEST(FirmwareDoctor, AtsOffWithGpuDirectBehindAnIommuWarns) {
  auto r = Checks(GpuHost(kQuery, "17"));
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].id, "firmware.ats-gpudirect");
  EXPECT_EQ(r[0].target, "0000:18:00.0");
  EXPECT_EQ(r[0].verdict, Verdict::kWarn);
  EXPECT_NE(r[0].summary.find("ATS off (next boot and now)"), std::string::npos) << r[0].summary;
  ASSERT_FALSE(r[0].evidence.empty());
  EXPECT_EQ(r[0].evidence[0].first, "/run/provisioner/mstconfig/0000:18:00.0.query");
  EXPECT_EQ(r[0].evidence[0].second,
            "         ATS_ENABLED                         False(0)        False(0)        "
            "False(0)");
  EXPECT_NE(r[0].fix.find("firmware: { ATS_ENABLED: true }"), std::string::npos) << r[0].fix;
  EXPECT_NE(r[0].fix.find("mstconfig -d 0000:18:00.0 -y set ATS_ENABLED=1"), std::string::npos)
      << r[0].fix;
  // Recommended with the translating-IOMMU ACS setting, and why.
  EXPECT_NE(r[0].fix.find("disableAcs: gpuNicPaths"), std::string::npos) << r[0].fix;
  EXPECT_NE(r[0].fix.find("Direct Translated P2P"), std::string::npos) << r[0].fix;
  EXPECT_NE(r[0].summary.find("translating IOMMU (intel_iommu=on without iommu=pt; iommu_group "
                              "17 of type DMA)"),
            std::string::npos)
      << r[0].summary;
}

// Issue 25 item 3: a PF with an IOMMU group in passthrough (identity, or
// iommu=pt) is bare metal for ATS: off is right (nic-configuration-operator's
// gpuDirectOptimized), on is the one to question. Main warned "ATS off"
// for every PF with a group.
TEST(FirmwareDoctor, AtsUnderPassthroughIsTheBareMetalCase) {
  auto identity = Checks(GpuHost(kQuery, "17", "identity"));
  ASSERT_EQ(identity.size(), 1u);
  EXPECT_EQ(identity[0].verdict, Verdict::kOk) << identity[0].summary;
  EXPECT_NE(identity[0].summary.find("gpuDirectOptimized"), std::string::npos);
  HostFacts pt = GpuHost(kQuery, "17", "");
  pt.pcie.iommu_groups = 30;
  pt.pcie.cmdline = "ro intel_iommu=on iommu=pt";
  auto r = Checks(pt);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].verdict, Verdict::kOk) << r[0].summary;
  EXPECT_NE(r[0].summary.find("passthrough: iommu=pt on /proc/cmdline"), std::string::npos)
      << r[0].summary;

  std::string on(kQuery);
  on.replace(on.rfind("False(0)"), 8, "True(1) ");
  on.replace(on.rfind("False(0)"), 8, "True(1) ");
  auto enabled = Checks(GpuHost(on, "17", "identity"));
  ASSERT_EQ(enabled.size(), 1u);
  EXPECT_EQ(enabled[0].verdict, Verdict::kWarn) << enabled[0].summary;
  EXPECT_NE(enabled[0].fix.find("ATS_ENABLED: false"), std::string::npos) << enabled[0].fix;
}

TEST(FirmwareDoctor, AtsOnOrNoIommuOrNoGpuIsNoWarning) {
  std::string on(kQuery);
  on.replace(on.rfind("False(0)"), 8, "True(1) ");
  on.replace(on.rfind("False(0)"), 8, "True(1) ");
  auto enabled = Checks(GpuHost(on, "17"));
  ASSERT_EQ(enabled.size(), 1u);
  EXPECT_EQ(enabled[0].verdict, Verdict::kOk) << enabled[0].summary;
  // Set for the next boot but not running yet: still a warning (reboot).
  std::string pending(kQuery);
  pending.replace(pending.rfind("False(0)"), 8, "True(1) ");
  auto p = Checks(GpuHost(pending, "17"));
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].verdict, Verdict::kWarn);
  EXPECT_NE(p[0].summary.find("ATS off (now)"), std::string::npos) << p[0].summary;
  // No IOMMU: nothing to translate, ATS off is the bare-metal setting.
  auto bare = Checks(GpuHost(kQuery, ""));
  ASSERT_EQ(bare.size(), 1u);
  EXPECT_EQ(bare[0].verdict, Verdict::kOk);
  EXPECT_NE(bare[0].summary.find("gpuDirectOptimized"), std::string::npos) << bare[0].summary;
  // No GPU: no GPUDirect, no check.
  HostFacts no_gpu = GpuHost(kQuery, "17");
  no_gpu.pci.pop_back();
  EXPECT_TRUE(Checks(no_gpu).empty());
  // Firmware unread: nothing to say.
  HostFacts unread = GpuHost(kQuery, "17");
  unread.firmware["0000:18:00.0"].error = "mstconfig (mstflint) is not installed";
  EXPECT_TRUE(Checks(unread).empty());
}

// Two ConnectX-7 rail cards (one device ID) on other firmware: a FAIL naming
// the odd one; the same version: ok.
TEST(FirmwareDoctor, RailCardsOnDifferentFirmwareFail) {
  HostFacts f;
  for (const char* bdf : {"0000:1a:00.0", "0000:3c:00.0", "0000:4d:00.0"}) {
    PciFunction nic;
    nic.pci_address = bdf;
    nic.vendor = "15b3";
    nic.device_id = "1021";
    nic.class_code = 0x020700;
    f.pci.push_back(nic);
    RdmaDevice d;
    d.name = std::string("mlx5_") + bdf[6];
    d.pci_address = bdf;
    d.fw_ver = "28.39.1002";
    f.rdma.devices.push_back(d);
  }
  f.rdma.devices[2].fw_ver = "28.36.1010";
  std::vector<CheckResult> r;
  for (const CheckResult& c : Checks(f)) {
    if (c.id == "firmware.rail-versions") r.push_back(c);
  }
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].verdict, Verdict::kFail);
  EXPECT_EQ(r[0].target, "ConnectX 15b3:1021");
  EXPECT_EQ(r[0].summary,
            "the cards of ConnectX 15b3:1021 run 2 firmware versions: 28.39.1002 on 2 of 3, "
            "but 0000:4d:00.0 28.36.1010");
  EXPECT_EQ(r[0].evidence.size(), 3u);
  EXPECT_NE(r[0].fix.find("mstflint -d <card> -i <image> -y burn"), std::string::npos);

  f.rdma.devices[2].fw_ver = "28.39.1002";
  r.clear();
  for (const CheckResult& c : Checks(f)) {
    if (c.id == "firmware.rail-versions") r.push_back(c);
  }
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].verdict, Verdict::kOk);
}

}  // namespace
}  // namespace provisioner
