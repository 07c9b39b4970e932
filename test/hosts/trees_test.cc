// The checked-in host trees: up to date with their generator, readable by
// libpci's sysfs backend, and shaped like the kernel's sysfs.
#include <setjmp.h>
#include <sys/stat.h>

#include <cstdarg>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "test/support/files.h"

extern "C" {
#include <pci/pci.h>  // no extern "C" of its own
}
#include "test/sim/sriov_sim.h"
#include "test/support/host_tree.h"
#include "test/support/tree_diff.h"
#include "test/support/ttar.h"
#include "test/tools/make_tree.h"

// libpci 3.9 does not free realpath() results of its sysfs backend (driver,
// parent): keep LeakSanitizer quiet about them under --config=asan.
extern "C" const char* __lsan_default_suppressions() { return "leak:libpci.so\n"; }

namespace provisioner::testing {
namespace {

std::string Extract(const std::string& name) {
  std::string dir = MakeTempDir(name);
  Status s = ExtractTtar(HostTreePath(name), dir);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return dir;
}

// ------------------------------------------------------------------ libpci

struct PciFn {
  std::string bdf;
  unsigned vendor = 0, device = 0, cls = 0;
  int numa = -1;
  std::string driver;
  std::string parent;
};

jmp_buf g_pci_jump;
char g_pci_error[512];

// GNU noreturn: part of the function type for clang, as libpci's `error` wants.
__attribute__((noreturn)) void PciError(char* msg, ...) {
  va_list ap;
  va_start(ap, msg);
  vsnprintf(g_pci_error, sizeof g_pci_error, msg, ap);
  va_end(ap);
  longjmp(g_pci_jump, 1);
}

void PciQuiet(char*, ...) {}

// Scans <root>/sys/bus/pci the way the engine does; "" or the libpci error.
std::string ScanPci(const std::string& root, std::vector<PciFn>* out) {
  std::string path = root + "/sys/bus/pci";
  struct pci_access* a = pci_alloc();
  a->method = PCI_ACCESS_SYS_BUS_PCI;
  a->error = PciError;
  a->warning = PciQuiet;
  a->debug = PciQuiet;
  pci_set_param(a, const_cast<char*>("sysfs.path"), const_cast<char*>(path.c_str()));
  g_pci_error[0] = '\0';
  if (setjmp(g_pci_jump) != 0) {
    pci_cleanup(a);
    return g_pci_error;
  }
  pci_init(a);
  pci_scan_bus(a);
  for (struct pci_dev* d = a->devices; d != nullptr; d = d->next) {
    pci_fill_info(d, PCI_FILL_IDENT | PCI_FILL_CLASS | PCI_FILL_IRQ | PCI_FILL_BASES |
                         PCI_FILL_NUMA_NODE | PCI_FILL_DRIVER | PCI_FILL_PARENT);
    PciFn f;
    char bdf[32];
    snprintf(bdf, sizeof bdf, "%04x:%02x:%02x.%d", d->domain, d->bus, d->dev, d->func);
    f.bdf = bdf;
    f.vendor = d->vendor_id;
    f.device = d->device_id;
    f.cls = d->device_class;
    f.numa = d->numa_node;
    const char* drv = pci_get_string_property(d, PCI_FILL_DRIVER);
    if (drv != nullptr) f.driver = drv;
    if (d->parent != nullptr) {
      snprintf(bdf, sizeof bdf, "%04x:%02x:%02x.%d", d->parent->domain, d->parent->bus,
               d->parent->dev, d->parent->func);
      f.parent = bdf;
    }
    out->push_back(f);
  }
  pci_cleanup(a);
  return "";
}

std::map<std::string, PciFn> ScanMap(const std::string& root) {
  std::vector<PciFn> fns;
  std::string err = ScanPci(root, &fns);
  EXPECT_EQ(err, "");
  std::map<std::string, PciFn> m;
  for (const auto& f : fns) m[f.bdf] = f;
  return m;
}

const char* const kAllTrees[] = {"cx5-roce",          "cx5-roce-qos",  "cx5-ib",        "cx5-roce-vfs",
                                 "i350-sriov-ghw",    "e810-procfs",   "hgx-h100",
                                 "hgx-h100-pcie",     "gpu-shared-switch", "mlx4-ib-hwloc",
                                 "qib-ib-hwloc",      "cx4-ib-noverbs-hwloc"};
const char* const kGeneratedTrees[] = {"cx5-roce", "cx5-roce-qos", "cx5-ib", "cx5-roce-vfs",
                                       "hgx-h100", "hgx-h100-pcie", "gpu-shared-switch"};

TreeRequest RequestFor(const std::string& name) {
  if (name == "cx5-roce-vfs") return TreeRequest{"cx5-roce", {{"0000:af:00.0", 4}}, 0};
  return TreeRequest{name, {}, 0};
}

// ------------------------------------------------------------------ tests

// Each attribute of the tree at its value (as ReadAttr trims it): the
// table of what a capture holds.
void ExpectAttrs(TreeWriter& w, const std::vector<std::pair<std::string, std::string>>& want) {
  for (const auto& [path, value] : want) EXPECT_EQ(w.ReadAttr(path).value_or(""), value) << path;
}

TEST(TreesTest, GeneratedTreesAreUpToDate) {
  for (const char* name : kGeneratedTrees) {
    SCOPED_TRACE(name);
    auto text = MakeTreeTtar(RequestFor(name));
    ASSERT_TRUE(text.ok()) << text.status().ToString();
    EXPECT_TRUE(*text == ReadFile(HostTreePath(name)))
        << name << ".ttar is stale: run test/hosts/regenerate.sh";
  }
}

// The POWER9 capture is kept partial on purpose (each function has only
// class and local_cpus): libpci refuses it, discovery skips its functions.
TEST(TreesTest, LibpciRefusesThePartialPower9Capture) {
  std::vector<PciFn> fns;
  EXPECT_NE(ScanPci(Extract("power9-partial-hwloc"), &fns).find("/vendor"), std::string::npos);
}

TEST(TreesTest, LibpciScansEveryTree) {
  for (const char* name : kAllTrees) {
    SCOPED_TRACE(name);
    std::string root = Extract(name);
    std::vector<PciFn> fns;
    ASSERT_EQ(ScanPci(root, &fns), "");
    TreeWriter w(root);
    EXPECT_EQ(fns.size(), w.List("/sys/bus/pci/devices").size());
    for (const auto& f : fns) {
      EXPECT_NE(f.vendor, 0u) << f.bdf;
      EXPECT_NE(f.vendor, 0xffffu) << f.bdf;
    }
  }
}

TEST(TreesTest, Cx5RoceAsLibpciSeesIt) {
  auto m = ScanMap(Extract("cx5-roce"));
  ASSERT_EQ(m.size(), 8u);
  const PciFn& pf0 = m["0000:af:00.0"];
  EXPECT_EQ(pf0.vendor, 0x15b3u);
  EXPECT_EQ(pf0.device, 0x1017u);
  EXPECT_EQ(pf0.cls, 0x0200u);
  EXPECT_EQ(pf0.numa, 1);
  EXPECT_EQ(pf0.driver, "mlx5_core");
  EXPECT_EQ(pf0.parent, "0000:ae:00.0");
  EXPECT_EQ(m["0000:18:00.0"].cls, 0x0302u);
  EXPECT_EQ(m["0000:18:00.0"].parent, "0000:17:00.0");
  EXPECT_EQ(m["0000:02:00.0"].driver, "igb");
}

TEST(TreesTest, VfTreeAsLibpciSeesIt) {
  auto m = ScanMap(Extract("cx5-roce-vfs"));
  ASSERT_EQ(m.size(), 12u);
  for (const char* vf : {"0000:af:00.2", "0000:af:00.3", "0000:af:00.4", "0000:af:00.5"}) {
    EXPECT_EQ(m[vf].device, 0x1018u) << vf;
    EXPECT_EQ(m[vf].driver, "mlx5_core") << vf;
    EXPECT_EQ(m[vf].numa, 1) << vf;
  }
}

// Every symlink of a generated tree resolves inside the tree, and every PCI
// function, netdev and RDMA device has the files the engine reads.
TEST(TreesTest, GeneratedTreesAreKernelShaped) {
  for (const char* name : kGeneratedTrees) {
    SCOPED_TRACE(name);
    std::string root = Extract(name);
    TreeWriter w(root);
    std::vector<std::string> dangling;
    std::function<void(const std::string&)> walk = [&](const std::string& dir) {
      for (const auto& e : w.List(dir)) {
        std::string p = JoinPath(dir, e);
        struct stat st;
        if (::lstat(w.Fs(p).c_str(), &st) != 0) continue;
        if (S_ISLNK(st.st_mode)) {
          std::string target = w.ReadLink(p);
          if (target.empty() || target[0] == '/' || ::stat(w.Fs(p).c_str(), &st) != 0)
            dangling.push_back(p);
        } else if (S_ISDIR(st.st_mode)) {
          walk(p);
        }
      }
    };
    walk("/");
    EXPECT_TRUE(dangling.empty()) << dangling.size() << " bad links, first " << dangling[0];
    for (const auto& bdf : w.List("/sys/bus/pci/devices")) {
      const std::string d = "/sys/bus/pci/devices/" + bdf;
      for (const char* f :
           {"vendor", "device", "class", "irq", "resource", "numa_node", "local_cpulist",
            "subsystem_vendor", "subsystem_device", "revision", "modalias"}) {
        EXPECT_TRUE(w.Exists(d + "/" + f)) << d << "/" << f;
      }
      EXPECT_EQ(std::string(Basename(w.RealPath(d).value_or(""))), bdf);
    }
    for (const auto& n : w.List("/sys/class/net")) {
      for (const char* f : {"address", "mtu", "operstate", "ifindex", "type"}) {
        EXPECT_TRUE(w.Exists("/sys/class/net/" + n + "/" + f)) << n << "/" << f;
      }
    }
    for (const auto& r : w.List("/sys/class/infiniband")) {
      const std::string d = "/sys/class/infiniband/" + r;
      for (const char* f :
           {"node_guid", "fw_ver", "hca_type", "ports/1/state", "ports/1/phys_state",
            "ports/1/link_layer", "ports/1/rate", "ports/1/lid", "ports/1/sm_lid", "ports/1/gids/0",
            "ports/1/gid_attrs/types/0"}) {
        EXPECT_TRUE(w.Exists(d + "/" + f)) << d << "/" << f;
      }
      EXPECT_TRUE(w.Exists(d + "/device/vendor")) << d;
    }
    EXPECT_EQ(w.ReadAttr("/sys/module/ib_core/parameters/netns_mode").value_or(""), "Y");
    EXPECT_NE(w.ReadAttr("/proc/modules").value_or("").find("mlx5_core "), std::string::npos);
    EXPECT_FALSE(w.ReadAttr("/proc/sys/kernel/osrelease").value_or("").empty());
    EXPECT_TRUE(w.Exists("/etc/modprobe.d"));
  }
}

TEST(TreesTest, Cx5RoceContents) {
  std::string root = Extract("cx5-roce");
  TreeWriter w(root);
  const std::string pf0 = "/sys/bus/pci/devices/0000:af:00.0";
  EXPECT_EQ(w.ReadLink(pf0), "../../../devices/pci0000:ae/0000:ae:00.0/0000:af:00.0");
  EXPECT_EQ(w.List(pf0 + "/net"), std::vector<std::string>{"ens6f0np0"});
  EXPECT_EQ(w.List(pf0 + "/infiniband"), std::vector<std::string>{"mlx5_0"});
  EXPECT_EQ(w.List("/sys/bus/pci/devices/0000:af:00.1/net"), std::vector<std::string>{"ens6f1np1"});
  const std::string port = "/sys/class/infiniband/mlx5_0/ports/1";
  ExpectAttrs(w, {
                     {pf0 + "/sriov_totalvfs", "127"},
                     {pf0 + "/sriov_numvfs", "0"},
                     {pf0 + "/sriov_offset", "2"},
                     {pf0 + "/sriov_stride", "1"},
                     {pf0 + "/sriov_vf_device", "1018"},
                     {pf0 + "/sriov_drivers_autoprobe", "1"},
                     {port + "/link_layer", "Ethernet"},
                     {port + "/state", "4: ACTIVE"},
                     {port + "/gids/3", "0000:0000:0000:0000:0000:ffff:ac51:0077"},
                     {port + "/gid_attrs/types/3", "RoCE v2"},
                     {port + "/gid_attrs/types/2", "IB/RoCE v1"},
                     {port + "/gid_attrs/ndevs/3", "ens6f0np0"},
                     {"/sys/class/net/ens6f0np0/type", "1"},
                 });
  EXPECT_EQ(w.ReadLink("/sys/class/net/ens6f0np0/device"), "../../../0000:af:00.0");
  EXPECT_EQ(w.ReadAttr("/sys/bus/pci/devices/0000:02:00.0/class").value_or(""), "0x020000");
  EXPECT_FALSE(w.Exists("/sys/bus/pci/devices/0000:02:00.0/sriov_totalvfs"));
  EXPECT_EQ(w.ReadAttr("/sys/bus/pci/devices/0000:18:00.0/class").value_or(""), "0x030200");
}

TEST(TreesTest, Cx5IbContents) {
  std::string root = Extract("cx5-ib");
  TreeWriter w(root);
  const std::string pf = "/sys/bus/pci/devices/0000:86:00.0";
  ExpectAttrs(w, {
                     {pf + "/class", "0x020700"},
                     {pf + "/sriov_totalvfs", "16"},
                     {"/sys/class/net/ibs5f0/type", "32"},
                     {"/sys/class/infiniband/mlx5_0/ports/1/link_layer", "InfiniBand"},
                     {"/sys/class/infiniband/mlx5_0/ports/1/lid", "0x5"},
                     {"/sys/class/infiniband/mlx5_0/ports/1/sm_lid", "0x1"},
                 });
}

// hgx-h100-pcie is hgx-h100 plus config space and the ConnectX-7 firmware
// captures; hgx-h100 itself has neither (the "not captured" case).
TEST(TreesTest, HgxH100PcieHasConfigSpaceAndFirmwareCaptures) {
  TreeWriter plain(Extract("hgx-h100"));
  TreeWriter w(Extract("hgx-h100-pcie"));
  const std::string port = "/sys/bus/pci/devices/0000:17:01.0/config";
  EXPECT_FALSE(plain.Exists(port));
  EXPECT_FALSE(plain.Exists("/run/provisioner/mstconfig/0000:1a:00.0.query"));
  std::string config = w.ReadFile(port).value_or("");
  ASSERT_EQ(config.size(), 4096u);
  // Extended capability at 0x148: ID 0x000d (ACS), version 1; ACS Control 0x001d.
  EXPECT_EQ(static_cast<unsigned char>(config[0x148]), 0x0du);
  EXPECT_EQ(static_cast<unsigned char>(config[0x14a]), 0x01u);
  EXPECT_EQ(static_cast<unsigned char>(config[0x14e]), 0x1du);
  for (const char* nic : {"1a", "3c", "4d", "5e", "9c", "bc", "cc", "dc"}) {
    const std::string q =
        w.ReadAttr("/run/provisioner/mstconfig/0000:" + std::string(nic) + ":00.0.query")
            .value_or("");
    EXPECT_NE(q.find("ATS_ENABLED"), std::string::npos) << nic;
    EXPECT_NE(q.find("ETH(2)"), std::string::npos) << nic;
  }
  EXPECT_EQ(plain.List("/sys/bus/pci/devices"), w.List("/sys/bus/pci/devices"));
}

// The VF tree is the RoCE tree after "echo 4 > sriov_numvfs": writing 0 in
// it gives the RoCE tree back, byte for byte.
TEST(TreesTest, VfTreeMinusItsVfsIsTheRoceTree) {
  std::string vfs = Extract("cx5-roce-vfs");
  std::string roce = Extract("cx5-roce");
  EXPECT_NE(DiffTreesText(roce, vfs), "");
  SriovSim sim(vfs);
  ASSERT_EQ(sim.WriteNumVfs("/sys/bus/pci/devices/0000:af:00.0", "0"), 0) << sim.last_error();
  EXPECT_EQ(DiffTreesText(roce, vfs), "");
}

// The real I350 capture agrees with the simulator's routing-id arithmetic.
TEST(TreesTest, I350CaptureMatchesVfArithmetic) {
  std::string root = Extract("i350-sriov-ghw");
  TreeWriter w(root);
  for (const char* pf : {"0000:05:00.0", "0000:05:00.1"}) {
    SCOPED_TRACE(pf);
    const std::string d = std::string("/sys/bus/pci/devices/") + pf;
    EXPECT_EQ(w.ReadAttr(d + "/sriov_totalvfs").value_or(""), "7");
    EXPECT_EQ(w.ReadAttr(d + "/sriov_numvfs").value_or(""), "4");
    int offset = std::stoi(w.ReadAttr(d + "/sriov_offset").value_or("0"));
    int stride = std::stoi(w.ReadAttr(d + "/sriov_stride").value_or("0"));
    for (int i = 0; i < 4; ++i) {
      std::string link = w.ReadLink(d + "/virtfn" + std::to_string(i));
      EXPECT_EQ(link, "../" + VfBdf(*ParseBdf(pf), offset, stride, i)->ToString());
    }
  }
  auto m = ScanMap(root);
  EXPECT_EQ(m["0000:05:10.0"].driver, "igbvf");
  EXPECT_EQ(m["0000:05:10.0"].device, 0x1520u);
  EXPECT_EQ(m["0000:05:00.0"].driver, "igb");
}

TEST(TreesTest, E810FixtureHasSriovPf) {
  std::string root = Extract("e810-procfs");
  TreeWriter w(root);
  const std::string d = "/sys/bus/pci/devices/0000:a2:00.0";
  EXPECT_EQ(w.ReadAttr(d + "/sriov_totalvfs").value_or(""), "128");
  EXPECT_EQ(w.ReadAttr(d + "/vendor").value_or(""), "0x8086");
  EXPECT_EQ(w.ReadAttr(d + "/resource").value_or("x"), "");  // added, empty
}

}  // namespace
}  // namespace provisioner::testing
