#include "modules/topology/topology_module.h"

#include "gtest/gtest.h"

namespace provisioner {
namespace {

PciFunction Fn(const std::string& bdf, const std::string& dsp, uint32_t cls, int numa) {
  PciFunction f;
  f.pci_address = bdf;
  f.sysfs_path = "/sys/devices/pci0000:15/0000:15:01.0/0000:16:00.0/" + dsp + "/" + bdf;
  f.class_code = cls;
  f.vendor = cls == 0x020000 ? "15b3" : "10de";
  f.numa_node = numa;
  if (cls == 0x020000) f.sriov = SriovInfo{};
  return f;
}

// Two GPUs share one switch with one NIC.
HostFacts SharedSwitch() {
  HostFacts h;
  h.pci.push_back(Fn("0000:19:00.0", "0000:17:01.0", 0x030200, 0));
  h.pci.push_back(Fn("0000:1a:00.0", "0000:17:02.0", 0x020000, 0));
  h.pci.push_back(Fn("0000:1b:00.0", "0000:17:03.0", 0x030200, 0));
  h.pci.push_back(Fn("0000:1c:00.0", "0000:17:04.0", 0x010802, 0));  // NVMe: neither
  return h;
}

TEST(TopologyModuleTest, DiscoverFillsGpusAndLevels) {
  TopologyModule m;
  HostFacts h = SharedSwitch();
  HostContext ctx;
  ASSERT_TRUE(m.Discover(ctx, h).ok());
  EXPECT_TRUE(h.topology.discovered);
  ASSERT_EQ(h.topology.gpus.size(), 2u);
  ASSERT_EQ(h.topology.links.size(), 2u);
  EXPECT_EQ(h.topology.links[1].gpu, "0000:1b:00.0");
  EXPECT_EQ(h.topology.links[1].level, PcieLevel::kPix);
}

TEST(TopologyModuleTest, PlanReportsTwoGpusOnOneNicAndPlansNothing) {
  TopologyModule m;
  HostFacts h = SharedSwitch();
  HostContext ctx;
  ASSERT_TRUE(m.Discover(ctx, h).ok());
  DesiredState d;
  d.nics.resize(2);
  d.nics[0].name = "rail1";
  d.nics[0].selector.near_gpu = 0;
  d.nics[1].name = "rail2";
  d.nics[1].selector.near_gpu = 1;
  PlanSink sink;
  m.Plan(d, h, sink);
  EXPECT_TRUE(sink.changes().empty());
  ASSERT_EQ(sink.diagnostics().size(), 1u);
  EXPECT_EQ(sink.diagnostics()[0].path, "spec.nics[1].nicSelector.nearGpu");
  EXPECT_NE(sink.diagnostics()[0].message.find("two GPUs share one NIC"), std::string::npos);
  Change c;
  c.id = "topology/x/y";
  EXPECT_FALSE(m.Apply(c, ctx).ok());
}

}  // namespace
}  // namespace provisioner
