// The loader as a whole: files, formatting, file order, state and marks, and
// that no input at all can make it crash or throw.
#include "engine/config/loader.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <random>
#include <string>

#include "engine/config/test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace provisioner {
namespace {

using namespace config::testing;  // NOLINT: test_util.h's vocabulary

const char kGood[] = R"(apiVersion: provisioner/v1alpha1
kind: HostConfig
metadata:
  name: worker1
spec:
  rdma:
    netnsMode: exclusive
  kernelModules:
    - mlx5_ib
    - name: nvidia_peermem
      required: false
  nics:
    - name: gpu1-nic
      nicSelector:
        vendor: "15B3"
        deviceID: "1017"
        rootDevices: ["AF:00.0"]
      linkType: eth
      numVfs: 12
      mtu: 9000
      isRdma: true
      resourceName: gpu1sriov
  ipPools:
    - name: gpu1-net11
      subnet: 172.16.11.0/24
      ips: ["172.16.11.1-172.16.11.200"]
      gateway: 172.16.11.254
  multusConfigs:
    - name: gpu1-sriov
      namespace: spiderpool
      cniType: sriov
      nic: gpu1-nic
      ippools: { ipv4: [gpu1-net11] }
      rdmaResourceInject: rdma-network
  kubernetes:
    nodeSelector: { kubernetes.io/os: linux }
)";

std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir != nullptr ? dir : "/tmp") + "/" + name;
}

TEST(LoaderTest, BuildsTheTypedState) {
  LoadResult r = LoadDesiredStateFromString(kGood, "host.yaml");
  ASSERT_THAT(r.diagnostics, IsEmpty());
  ASSERT_TRUE(r.state.has_value());
  const DesiredState& s = *r.state;
  EXPECT_EQ(s.file, "host.yaml");
  EXPECT_EQ(s.api_version, "provisioner/v1alpha1");
  EXPECT_EQ(s.kind, "HostConfig");
  EXPECT_EQ(s.name, "worker1");
  ASSERT_TRUE(s.rdma.has_value());
  EXPECT_EQ(s.rdma->netns_mode, "exclusive");
  EXPECT_TRUE(s.rdma->persist);  // default
  ASSERT_EQ(s.kernel_modules.size(), 2u);
  EXPECT_TRUE(s.kernel_modules[0].required);
  EXPECT_FALSE(s.kernel_modules[1].required);
  ASSERT_EQ(s.nics.size(), 1u);
  const NicSpec& nic = s.nics[0];
  EXPECT_EQ(nic.selector.vendor, "15b3");  // normalized
  EXPECT_EQ(nic.selector.root_devices, std::vector<std::string>{"0000:af:00.0"});
  EXPECT_FALSE(nic.selector.near_gpu.has_value());
  EXPECT_EQ(nic.num_vfs, 12);
  EXPECT_EQ(nic.mtu, 9000);
  EXPECT_FALSE(nic.device_type.has_value());  // unspecified = unmanaged
  EXPECT_FALSE(nic.vf_trust.has_value());
  ASSERT_EQ(s.multus_configs.size(), 1u);
  EXPECT_EQ(s.multus_configs[0].namespace_name, "spiderpool");
  EXPECT_EQ(s.multus_configs[0].ippools.ipv4, std::vector<std::string>{"gpu1-net11"});
  ASSERT_TRUE(s.kubernetes.has_value());
  EXPECT_EQ(s.kubernetes->resource_prefix, "spidernet.io");  // default
  EXPECT_EQ(s.kubernetes->node_selector.at("kubernetes.io/os"), "linux");
  EXPECT_FALSE(s.kubernetes->rdma_shared_device_plugin.has_value());
  // Marks are in the state too, for plan-time diagnostics.
  EXPECT_EQ(s.marks.Find("spec.nics[0].numVfs").line, 19);
  EXPECT_EQ(s.marks.Find("spec.nics[0].numVfs").column, 15);
  EXPECT_EQ(r.marks.Find("spec.nics[0].numVfs").line, 19);
  Diagnostic plan_time{Severity::kError, "spec.nics[0].numVfs",
                       "300 exceeds sriov_totalvfs 127 of 0000:af:00.0"};
  EXPECT_EQ(FormatDiagnostic("host.yaml", s.marks, plan_time),
            "host.yaml:19:15: spec.nics[0].numVfs: 300 exceeds sriov_totalvfs 127 of "
            "0000:af:00.0");
}

TEST(LoaderTest, RoceListsAreSortedAndUnsetFieldsUnmanaged) {
  LoadResult r = LoadDesiredStateFromString(
      "apiVersion: provisioner/v1alpha1\nkind: HostConfig\nmetadata: {name: w}\nspec:\n"
      "  nics:\n"
      "    - {name: a, nicSelector: {pfNames: [eth0]}, roce: {pfc: [4, 3], ecn: []}}\n"
      "    - {name: b, nicSelector: {pfNames: [eth1]}, roce: {trust: pcp}}\n",
      "host.yaml");
  ASSERT_THAT(r.diagnostics, IsEmpty());
  const NicSpec& a = r.state->nics[0];
  ASSERT_TRUE(a.roce.has_value());
  EXPECT_FALSE(a.roce->trust.has_value());
  EXPECT_EQ(a.roce->pfc, (std::vector<int>{3, 4}));
  EXPECT_EQ(a.roce->ecn, std::vector<int>{});
  const NicSpec& b = r.state->nics[1];
  EXPECT_EQ(b.roce->trust, "pcp");
  EXPECT_FALSE(b.roce->pfc.has_value());
  EXPECT_FALSE(b.roce->ecn.has_value());
  EXPECT_FALSE(b.roce->cnp.has_value());
}

TEST(LoaderTest, RoceCnpAndItsRanges) {
  LoadResult r = LoadDesiredStateFromString(
      "apiVersion: provisioner/v1alpha1\nkind: HostConfig\nmetadata: {name: w}\nspec:\n"
      "  nics:\n"
      "    - {name: a, nicSelector: {pfNames: [eth0]}, roce: {cnp: {dscp: 26, priority: 3}}}\n"
      "    - {name: b, nicSelector: {pfNames: [eth1]}, roce: {cnp: {priority: 6}}}\n",
      "host.yaml");
  ASSERT_THAT(r.diagnostics, IsEmpty());
  ASSERT_TRUE(r.state->nics[0].roce->cnp.has_value());
  EXPECT_EQ(r.state->nics[0].roce->cnp->dscp, 26);
  EXPECT_EQ(r.state->nics[0].roce->cnp->priority, 3);
  EXPECT_FALSE(r.state->nics[1].roce->cnp->dscp.has_value());
  EXPECT_EQ(r.state->nics[1].roce->cnp->priority, 6);
  LoadResult bad = LoadDesiredStateFromString(
      "apiVersion: provisioner/v1alpha1\nkind: HostConfig\nmetadata: {name: w}\nspec:\n"
      "  nics:\n"
      "    - {name: a, nicSelector: {pfNames: [eth0]}, roce: {cnp: {dscp: 64, prio: 3}}}\n",
      "host.yaml");
  std::string all;
  for (const auto& d : bad.diagnostics) all += d.path + ": " + d.message + "\n";
  EXPECT_THAT(all, HasSubstr("spec.nics[0].roce.cnp.dscp: "));
  EXPECT_THAT(all, HasSubstr("prio"));
}

TEST(LoaderTest, NoStateWhenThereAreErrors) {
  LoadResult r = LoadDesiredStateFromString(WithHeader("spec:\n  nics: 1\n"), "host.yaml");
  EXPECT_FALSE(r.state.has_value());
  EXPECT_TRUE(HasErrors(r.diagnostics));
}

TEST(LoaderTest, ReportsEverythingInFileOrder) {
  std::string yaml = WithHeader(
      "spec:\n"                                                   // 5
      "  multusConfigs:\n"                                        // 6
      "    - {name: a, cniType: sriov, nic: x}\n"                 // 7  dangling nic
      "  nics:\n"                                                 // 8
      "    - name: x1\n"                                          // 9
      "      nicSelector: {vendor: \"15b3\"}\n"                   // 10
      "      numVF: 2\n"                                          // 11 unknown field
      "  ipPools:\n"                                              // 12
      "    - {name: p, subnet: 10.0.0.0/8, gateway: 11.0.0.1}\n"  // 13
      "  rdma: {netnsMode: both}\n");                             // 14
  EXPECT_THAT(Diagnose(yaml),
              ElementsAre("host.yaml:7:38: spec.multusConfigs[0].nic: nic \"x\" names no NIC in "
                          "spec.nics (defined: x1)",
                          "host.yaml:11:7: spec.nics[0].numVF: unknown field \"numVF\" (did you "
                          "mean \"numVfs\"?)",
                          "host.yaml:13:46: spec.ipPools[0].gateway: gateway 11.0.0.1 is outside "
                          "subnet 10.0.0.0/8",
                          "host.yaml:14:21: spec.rdma.netnsMode: \"both\" is not one of: shared, "
                          "exclusive"));
}

TEST(LoaderTest, MalformedYamlGivesOneCleanError) {
  ExpectDiagnoses({
      {"apiVersion: provisioner/v1alpha1\nkind: HostConfig\nmetadata:\n"
       "\tname: worker1\n",
       ElementsAre("host.yaml:4:6: invalid YAML: a \": \" where no key can start here (quote a "
                   "value that contains \": \", or check the indentation) (tabs are not "
                   "allowed in YAML indentation; use spaces)")},
      {"apiVersion: \"provisioner/v1alpha1\nkind: HostConfig\n",
       ElementsAre("host.yaml:1:13: apiVersion: unterminated quoted string: no closing "
                   "\"")},
      {WithHeader("spec:\n  nics: [\n"),
       ElementsAre("host.yaml:7:1: invalid YAML: a [ list is not closed: a ] is missing "
                   "before here")},
      {WithHeader("spec: {}\nspec: {}\n"),
       ElementsAre("host.yaml:6:1: spec: duplicate key \"spec\" (first at line 5)")},
      {"", ElementsAre("host.yaml:1:1: the file is empty: expected a HostConfig "
                       "mapping (apiVersion, kind, metadata, spec)")},
      {"- apiVersion: provisioner/v1alpha1\n",
       ElementsAre("host.yaml:1:1: expected a mapping (apiVersion, kind, metadata, spec) "
                   "at the top level, found a list")},
  });
}

TEST(LoaderTest, FileErrorsNameThePathAndErrno) {
  std::string missing = TempPath("does-not-exist.yaml");
  LoadResult r = LoadDesiredStateFromFile(missing);
  ASSERT_EQ(r.diagnostics.size(), 1u);
  EXPECT_FALSE(r.state.has_value());
  EXPECT_THAT(r.diagnostics[0].message, HasSubstr(missing));
  EXPECT_THAT(r.diagnostics[0].message, HasSubstr("ENOENT"));
  EXPECT_THAT(FormatDiagnostic(missing, r.marks, r.diagnostics[0]),
              HasSubstr(missing + ": cannot open " + missing + ": ENOENT"));

  LoadResult dir = LoadDesiredStateFromFile(TempPath(""));
  ASSERT_EQ(dir.diagnostics.size(), 1u);
  EXPECT_THAT(dir.diagnostics[0].message, HasSubstr("EISDIR"));

  // No size to check before reading: the read stops at the limit (4 MiB).
  LoadResult endless = LoadDesiredStateFromFile("/dev/zero");
  ASSERT_EQ(endless.diagnostics.size(), 1u);
  EXPECT_THAT(endless.diagnostics[0].message, HasSubstr("cannot read /dev/zero: "));
  EXPECT_THAT(endless.diagnostics[0].message, HasSubstr("File too large"));  // EFBIG
}

// Issue 26 item 14: a FIFO given as host.yaml blocked open(2) until a
// writer came (forever). Now opened non-blocking: without a writer it reads
// as empty, an error naming the file; a pipe with a writer still works.
// Issue 26 items 10, 12, 14: a raw NUL in a plain scalar was read as an
// escape (NUL + "n" became a newline and passed); control bytes in a map key
// reached stderr raw; CR-only line endings read as an empty file.
TEST(LoaderTest, RawControlBytesKeysAndCrOnlyLines) {
  const std::string head = "apiVersion: provisioner/v1alpha1\nkind: HostConfig\nmetadata:\n";
  LoadResult nul = LoadDesiredStateFromString(
      head + "  name: w1\nspec:\n  kernelModules: [mlx5" + std::string(1, '\0') + "nib]\n",
      "h.yaml");
  ASSERT_EQ(nul.diagnostics.size(), 1u);
  EXPECT_FALSE(nul.state.has_value());
  EXPECT_THAT(nul.diagnostics[0].message, HasSubstr("a raw control byte \\x00"));
  EXPECT_THAT(FormatDiagnostic("h.yaml", nul.marks, nul.diagnostics[0]), HasSubstr("h.yaml:6:23:"));

  LoadResult key =
      LoadDesiredStateFromString(head + "  name: w1\nspec:\n  \"bad\\e[2Jkey\\nx\": 1\n", "h.yaml");
  ASSERT_FALSE(key.diagnostics.empty());
  for (const auto& d : key.diagnostics) {
    const std::string text = FormatDiagnostic("h.yaml", key.marks, d);
    EXPECT_EQ(text.find('\x1b'), std::string::npos) << text;
    EXPECT_EQ(text.find('\n'), std::string::npos) << text;
    EXPECT_THAT(text, HasSubstr("spec.\"bad\\x1b[2Jkey\\x0ax\""));
  }

  std::string cr = head + "  name: w1\nspec:\n  kernelModules: [mlx5_ib]\n";
  for (char& c : cr) c = c == '\n' ? '\r' : c;
  LoadResult mac = LoadDesiredStateFromString(cr, "h.yaml");
  EXPECT_THAT(mac.diagnostics, IsEmpty());
  ASSERT_TRUE(mac.state.has_value());
  EXPECT_EQ(mac.state->kernel_modules.size(), 1u);
}

TEST(LoaderTest, FifoWithoutAWriterDoesNotHang) {
  std::string fifo = TempPath("fifo.yaml");
  ::unlink(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  LoadResult r = LoadDesiredStateFromFile(fifo);
  ASSERT_EQ(r.diagnostics.size(), 1u);
  EXPECT_FALSE(r.state.has_value());
  EXPECT_EQ(r.diagnostics[0].severity, Severity::kError);
  ::unlink(fifo.c_str());
}

// spec.network.owner (issue 39 item 4): stack or provisioner, nothing else.
TEST(LoaderTest, NetworkOwner) {
  LoadResult r = LoadDesiredStateFromString(WithHeader("spec:\n  network: { owner: provisioner }\n"),
                                            "host.yaml");
  ASSERT_TRUE(r.state.has_value());
  ASSERT_TRUE(r.state->network.has_value());
  EXPECT_EQ(r.state->network->owner, "provisioner");
  LoadResult unset = LoadDesiredStateFromString(WithHeader("spec:\n  network: {}\n"), "host.yaml");
  ASSERT_TRUE(unset.state.has_value());
  EXPECT_EQ(unset.state->network->owner, "stack");
  EXPECT_THAT(Diagnose(WithHeader("spec:\n  network: { owner: networkd }\n")),
              ElementsAre(HasSubstr("spec.network.owner")));
}

TEST(LoaderTest, LoadsFromAFile) {
  std::string path = TempPath("host.yaml");
  {
    std::ofstream out(path);
    out << kGood;
  }
  LoadResult r = LoadDesiredStateFromFile(path);
  EXPECT_THAT(r.diagnostics, IsEmpty());
  ASSERT_TRUE(r.state.has_value());
  EXPECT_EQ(r.state->file, path);
  std::remove(path.c_str());
}

// Mutations of a valid file and random bytes: every result is a clean set
// of diagnostics with marks, never a crash or an exception.
TEST(LoaderTest, NeverCrashesOnMutatedInput) {
  std::mt19937 rng(20251122);
  const std::string base = kGood;
  const char* inserts[] = {"\t", "\"",  "'",   "[",      "]",     "{",       "}",  ": ",
                           "- ", "&a ", "*a",  "!!int ", "? ",    "#",       "\n", "  ",
                           "|",  ">",   "%",   "@",      "`",     ",",       "\\", "\xff",
                           "0x", "-1",  "1e9", "~",      "---\n", "<<: *a\n"};
  for (int i = 0; i < 1500; ++i) {
    std::string s = base;
    int mutations = 1 + static_cast<int>(rng() % 5);
    for (int m = 0; m < mutations && !s.empty(); ++m) {
      size_t pos = rng() % s.size();
      switch (rng() % 5) {
        case 0:
          s[pos] = static_cast<char>(rng() % 256);
          break;
        case 1:
          s.insert(pos, inserts[rng() % (sizeof(inserts) / sizeof(inserts[0]))]);
          break;
        case 2:
          s.erase(pos, 1 + rng() % 20);
          break;
        case 3:
          s.resize(pos);
          break;
        default:
          s.insert(pos, s.substr(rng() % s.size(), 1 + rng() % 40));
          break;
      }
    }
    LoadResult r = LoadDesiredStateFromString(s, "host.yaml");
    EXPECT_EQ(r.state.has_value(), !HasErrors(r.diagnostics)) << s;
    for (const auto& d : r.diagnostics) {
      EXPECT_FALSE(d.message.empty()) << s;
      if (d.severity == Severity::kError && !r.state) {
        EXPECT_GT(r.marks.Find(d.path).line, 0) << FormatDiagnostic("host.yaml", r.marks, d);
      }
    }
  }
  std::string bytes;
  for (int i = 0; i < 20000; ++i) bytes += static_cast<char>(rng() % 256);
  LoadResult r = LoadDesiredStateFromString(bytes, "host.yaml");
  EXPECT_FALSE(r.state.has_value());
  ASSERT_FALSE(r.diagnostics.empty());
}

}  // namespace
}  // namespace provisioner
