// The pcie module end to end with the real binary, on a generated HGX H100
// tree whose functions have their 4096-byte PCIe `config` (ACS enabled on
// every root and downstream port, MaxReadReq 512): plan lists one ACS change
// per downstream port between each GPU and its rail NIC and none elsewhere,
// apply writes exactly those config bytes, the next plan is empty; doctor
// explains the state before and after.
#include <filesystem>
#include <map>
#include <set>
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

const std::string kHostYaml = HgxPcieYaml();

const int kRootPorts[8] = {0x15, 0x37, 0x48, 0x59, 0x97, 0xb7, 0xc7, 0xd7};

std::string Hex2(int v) {
  char b[4];
  snprintf(b, sizeof b, "%02x", v);
  return b;
}

std::string Config(const std::string& root, const std::string& bdf) {
  return ReadFile(root + "/sys/bus/pci/devices/" + bdf + "/config");
}

// Every config file of the tree, by BDF.
std::map<std::string, std::string> Configs(const std::string& root) {
  std::map<std::string, std::string> out;
  HostSpec spec;
  PresetByName("hgx-h100-pcie", &spec);
  for (const auto& f : spec.pci) out[f.bdf] = Config(root, f.bdf);
  return out;
}

TEST(PcieCliTest, AcsOnGpuNicPathsAndMaxReadRequestRoundTrip) {
  const std::string root = BuildPresetTree("hgx-h100-pcie");
  const std::string yaml = WriteTempFile("host.yaml", kHostYaml);
  const auto before = Configs(root);
  ASSERT_EQ(before.at("0000:17:01.0").size(), 4096u);

  RunResult p = Provisioner({"plan", yaml, "--root", root, "-o", "json"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  json plan = json::parse(p.out);
  std::set<std::string> acs, mrrs;
  for (const auto& c : plan["changes"]) {
    const std::string id = c["id"];
    if (id.find("/acsControl") != std::string::npos) {
      acs.insert(id);
      // intel_iommu=on, groups of type DMA: a translating IOMMU keeps SV,
      // RR, CR, UF and sets DT (advertised: Capability 0x005f).
      EXPECT_EQ(c["before"], "0x001d") << id;
      EXPECT_EQ(c["after"], "0x005d") << id;
      EXPECT_NE(c["reason"].get<std::string>().find("re-applied at every boot by the systemd unit"),
                std::string::npos);
      EXPECT_NE(c["reason"].get<std::string>().find(
                    "IOMMU translating (intel_iommu=on without iommu=pt; 16 iommu_groups of type "
                    "DMA): ACS Control keeps SV, RR, CR, UF and sets DT"),
                std::string::npos)
          << c["reason"];
    } else if (id.find("/maxReadRequest") != std::string::npos) {
      mrrs.insert(id);
      EXPECT_EQ(c["before"], 512) << id;
      EXPECT_EQ(c["after"], 4096) << id;
    } else {
      ADD_FAILURE() << "unexpected change " << id;
    }
  }
  // Per switch: the downstream ports above the GPU (:01.0) and the ConnectX-7
  // (:02.0); not the ConnectX-6 Dx's (:03.0), not root or upstream ports.
  std::set<std::string> want_acs, want_mrrs;
  for (int rp : kRootPorts) {
    for (int dev : {1, 2}) {
      want_acs.insert("pcie/0000:" + Hex2(rp + 2) + ":0" + std::to_string(dev) + ".0/acsControl");
    }
  }
  for (int nic : {0x1a, 0x3c, 0x4d, 0x5e, 0x9c, 0xbc, 0xcc, 0xdc}) {
    want_mrrs.insert("pcie/0000:" + Hex2(nic) + ":00.0/maxReadRequest");
  }
  EXPECT_EQ(acs, want_acs);
  EXPECT_EQ(mrrs, want_mrrs);

  RunResult a = Provisioner({"apply", yaml, "--root", root});
  ASSERT_EQ(a.exit_code, 0) << a.err;

  // Exactly those bytes changed: ACS Control (0x148 + 6) of the 16 ports to
  // 005d, Device Control (0x60 + 8) bits 14:12 of the 8 NICs to 5 (4096).
  const auto after = Configs(root);
  for (const auto& [bdf, bytes] : before) {
    std::string expect = bytes;
    if (want_acs.count("pcie/" + bdf + "/acsControl")) {
      expect[0x14e] = static_cast<char>(0x5d);
      expect[0x14f] = '\0';
    }
    if (want_mrrs.count("pcie/" + bdf + "/maxReadRequest")) {
      // 0x2830 (MRRS 512, NoSnoop, MPS 256, RlxdOrd) -> 0x5830
      EXPECT_EQ(static_cast<unsigned char>(expect[0x69]), 0x28u) << bdf;
      expect[0x69] = static_cast<char>(0x58);
    }
    EXPECT_TRUE(after.at(bdf) == expect) << bdf << " config differs from the expected bytes";
  }

  ExpectConverged(yaml, root);
}

TEST(PcieCliTest, DoctorExplainsAcsMaxReadRequestAndIommu) {
  const std::string root = BuildPresetTree("hgx-h100-pcie");
  const std::string yaml = WriteTempFile("host.yaml", kHostYaml);
  auto checks = [&](const std::string& file) {
    std::vector<std::string> args = {"doctor"};
    if (!file.empty()) args.push_back(file);
    for (const char* a : {"--root", root.c_str(), "-o", "json"}) args.push_back(a);
    RunResult d = Provisioner(args);
    EXPECT_NE(d.exit_code, -1) << d.err;
    std::map<std::string, std::map<std::string, json>> by_id;
    const json doc = json::parse(d.out);
    for (const auto& c : doc["checks"]) {
      if (c["module"] == "pcie") by_id[c["id"]][c["target"]] = c;
    }
    return by_id;
  };
  auto before = checks(yaml);
  ASSERT_EQ(before["pcie.acs-gpu-nic-path"].size(), 8u);
  const json& rail0 = before["pcie.acs-gpu-nic-path"]["GPU 0000:19:00.0 <-> NIC 0000:1a:00.0"];
  EXPECT_EQ(rail0["verdict"], "fail");  // host.yaml asks for it and it is not done
  EXPECT_NE(rail0["summary"].get<std::string>().find("0000:17:01.0"), std::string::npos);
  EXPECT_NE(rail0["fix"].get<std::string>().find("disableAcs"), std::string::npos);
  // The translating IOMMU's value, and ATS with it.
  EXPECT_NE(rail0["fix"].get<std::string>().find("ECAP_ACS+0x6.w=005d"), std::string::npos)
      << rail0;
  EXPECT_NE(rail0["fix"].get<std::string>().find("ATS_ENABLED=1"), std::string::npos) << rail0;
  EXPECT_EQ(rail0["evidence"][0]["value"], "ACS Control 0x001d, Capability 0x005f");
  // Every RoCE PF (8 ConnectX-7, 4 ConnectX-6 Dx ports) at 512.
  ASSERT_EQ(before["pcie.max-read-request"].size(), 12u);
  for (const auto& [target, c] : before["pcie.max-read-request"]) {
    EXPECT_EQ(c["verdict"], "warn") << target;
    EXPECT_NE(c["summary"].get<std::string>().find("512"), std::string::npos);
  }
  const json& iommu = before["pcie.iommu-passthrough"]["IOMMU"];
  EXPECT_EQ(iommu["verdict"], "warn");  // groups of type DMA: translated
  EXPECT_NE(iommu.dump().find("/sys/kernel/iommu_groups/4/type"), std::string::npos) << iommu;
  EXPECT_NE(iommu["fix"].get<std::string>().find("iommu=pt"), std::string::npos);

  ASSERT_EQ(Provisioner({"apply", yaml, "--root", root}).exit_code, 0);
  // Booted with iommu=pt: the kernel's default domain of every group is
  // identity (the generator's groups say DMA, translated).
  KernelWrite(root + "/proc/cmdline", "BOOT_IMAGE=/boot/vmlinuz ro intel_iommu=on iommu=pt\n");
  for (const auto& e : std::filesystem::directory_iterator(root + "/sys/kernel/iommu_groups")) {
    KernelWrite(e.path().string() + "/type", "identity\n");
  }
  // Under passthrough the redirects kept for the translating IOMMU are
  // wrong: doctor says so, apply clears them.
  auto pt = checks(yaml);
  const json& rail0_pt = pt["pcie.acs-gpu-nic-path"]["GPU 0000:19:00.0 <-> NIC 0000:1a:00.0"];
  EXPECT_EQ(rail0_pt["verdict"], "fail") << rail0_pt;
  EXPECT_NE(rail0_pt["summary"].get<std::string>().find("0x005d (want 0x0000)"), std::string::npos)
      << rail0_pt;
  EXPECT_NE(rail0_pt["fix"].get<std::string>().find("ECAP_ACS+0x6.w=0000"), std::string::npos)
      << rail0_pt;
  ASSERT_EQ(Provisioner({"apply", yaml, "--root", root}).exit_code, 0);
  auto after = checks(yaml);
  for (const auto& [target, c] : after["pcie.acs-gpu-nic-path"]) {
    EXPECT_EQ(c["verdict"], "ok") << target;
  }
  EXPECT_EQ(after["pcie.max-read-request"]["0000:1a:00.0 (mlx5_0)"]["verdict"], "ok");
  EXPECT_EQ(after["pcie.max-read-request"]["0000:1b:00.0 (mlx5_1)"]["verdict"], "warn");
  EXPECT_EQ(after["pcie.iommu-passthrough"]["IOMMU"]["verdict"], "ok");
}

TEST(PcieCliTest, BundledTreeWithoutConfigFilesSaysNotCaptured) {
  // examples/hosts/hgx-h100.ttar has no `config` files: plan refuses to guess
  // the ACS state, doctor says what is missing.
  const std::string root = MakeTempDir("hgx");
  ASSERT_TRUE(ExtractTtar(HostTreePath("hgx-h100"), root).ok());
  const std::string yaml = WriteTempFile("host.yaml", kHostYaml);
  RunResult p = Provisioner({"plan", yaml, "--root", root});
  EXPECT_EQ(p.exit_code, 1);
  EXPECT_NE(p.err.find("spec.pcie.disableAcs"), std::string::npos) << p.err;
  EXPECT_NE(p.err.find("not captured (no /sys/bus/pci/devices/0000:17:01.0/config)"),
            std::string::npos)
      << p.err;
  EXPECT_NE(p.err.find("host.yaml:7:"), std::string::npos) << p.err;
  RunResult d = Provisioner({"doctor", "--root", root, "-o", "json"});
  bool seen = false;
  const json doc = json::parse(d.out);
  for (const auto& c : doc["checks"]) {
    if (c["id"] == "pcie.acs-gpu-nic-path") {
      EXPECT_EQ(c["verdict"], "warn");
      EXPECT_NE(c["summary"].get<std::string>().find("not captured"), std::string::npos);
      seen = true;
    }
  }
  EXPECT_TRUE(seen) << d.out;
  // discover's table says what is missing instead of guessing.
  RunResult table = Provisioner({"discover", "--root", root});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("config space not read for 46 function(s), e.g. 0000:15:01.0: not "
                           "captured (no /sys/bus/pci/devices/0000:15:01.0/config)"),
            std::string::npos)
      << table.out;
}

// discover on the bundled tree with config space: the PCIe section lists each
// root/downstream port and NIC PF with ACS Control, MaxReadReq and the link,
// and the GPU<->NIC paths a port lies on; the JSON has the same facts.
TEST(PcieCliTest, DiscoverShowsPortsAndNicPfs) {
  const std::string root = MakeTempDir("hgx-pcie");
  ASSERT_TRUE(ExtractTtar(HostTreePath("hgx-h100-pcie"), root).ok());
  RunResult t = Provisioner({"discover", "--root", root});
  ASSERT_EQ(t.exit_code, 0) << t.err;
  const size_t section = t.out.find("\nPCIe (config space:");
  ASSERT_NE(section, std::string::npos) << t.out;
  const std::string pcie = t.out.substr(section);
  auto row = [&](const std::string& bdf) {
    const size_t at = pcie.find("\n  " + bdf + " ");
    if (at == std::string::npos) return std::string();
    return pcie.substr(at + 3, pcie.find('\n', at + 1) - at - 3);
  };
  EXPECT_EQ(row("0000:17:02.0"),
            "0000:17:02.0  downstream port    0x001d   512         32.0 GT/s x16  "
            "0000:19:00.0<->0000:1a:00.0");
  EXPECT_EQ(row("0000:15:01.0"),
            "0000:15:01.0  root port          0x001d   512         32.0 GT/s x16  -");
  EXPECT_EQ(row("0000:1a:00.0"),
            "0000:1a:00.0  NIC enp26s0np0     -        512         32.0 GT/s x16  -");
  EXPECT_EQ(row("0000:16:00.0"), "") << "upstream ports are not listed";
  EXPECT_EQ(row("0000:19:00.0"), "") << "GPUs are not listed";

  RunResult j = Provisioner({"discover", "--root", root, "-o", "json"});
  ASSERT_EQ(j.exit_code, 0) << j.err;
  const json port = json::parse(j.out)["pcie"]["functions"]["0000:17:02.0"];
  EXPECT_EQ(port["portType"], 6);
  EXPECT_EQ(port["acsControl"], "0x001d");
  EXPECT_EQ(port["linkSpeed"], "32.0 GT/s PCIe");
  EXPECT_EQ(port["linkWidth"], 16);

  // After apply, the table shows what the plan changed.
  const std::string yaml = WriteTempFile("host.yaml", kHostYaml);
  ASSERT_EQ(Provisioner({"apply", yaml, "--root", root}).exit_code, 0);
  RunResult after = Provisioner({"discover", "--root", root});
  const std::string tuned = after.out.substr(after.out.find("\nPCIe (config space:"));
  EXPECT_NE(tuned.find("\n  0000:17:02.0  downstream port    0x005d   512 "), std::string::npos)
      << tuned;
  EXPECT_NE(tuned.find("\n  0000:1a:00.0  NIC enp26s0np0     -        4096 "), std::string::npos)
      << tuned;
}

// examples/gpudirect-tuned.yaml on its bundled tree: apply writes the ACS and
// MaxReadReq registers live and ATS_ENABLED for the next boot (exit 3, the
// reboot flagged); the next plan has no change, only the pending reboot.
TEST(PcieCliTest, GpudirectExampleAppliesLiveAndForTheNextBoot) {
  const std::string root = MakeTempDir("gpudirect");
  ASSERT_TRUE(ExtractTtar(HostTreePath("hgx-h100-pcie"), root).ok());
  const std::string yaml = RunfilePath("examples/gpudirect-tuned.yaml");
  RunResult a = Provisioner({"apply", yaml, "--root", root});
  EXPECT_EQ(a.exit_code, 3) << a.out << a.err;
  EXPECT_TRUE(Exists(root + "/run/reboot-required"));
  const std::string port = Config(root, "0000:17:02.0");
  EXPECT_EQ(port.substr(0x14e, 2), std::string("\x5d\0", 2));  // ACS Control 0x005d (DMA)
  EXPECT_EQ(static_cast<unsigned char>(Config(root, "0000:1a:00.0")[0x69]), 0x58u);  // 4096
  EXPECT_NE(ReadFile(root + "/run/provisioner/mstconfig/0000:1a:00.0.query")
                .find("ATS_ENABLED                                 False(0)             "
                      "False(0)             True(1)"),
            std::string::npos);

  RunResult p = Provisioner({"plan", yaml, "--root", root, "-o", "json"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  const json plan = json::parse(p.out);
  EXPECT_TRUE(plan["changes"].empty()) << plan.dump(2);
  // One change pending reboot per card (issue 38 item 9; warnings before).
  EXPECT_TRUE(plan["warnings"].empty()) << plan.dump(2);
  EXPECT_EQ(plan["summary"]["pendingReboot"], 8) << plan.dump(2);
}

// Issue 25 item 2: the bundled HGX tree boots intel_iommu=on without pt
// (groups of type DMA): disableAcs keeps RR and CR and sets DT; with
// iommu=pt added to its proc/cmdline, 0x0000, the mode in the reason.
TEST(PcieCliTest, AcsValueFollowsTheIommuMode) {
  const std::string root = MakeTempDir("hgx-iommu");
  ASSERT_TRUE(ExtractTtar(HostTreePath("hgx-h100-pcie"), root).ok());
  const std::string yaml = WriteTempFile("host.yaml", kHostYaml);
  auto acs = [&](std::string* reason, std::vector<std::string>* warnings) {
    RunResult p = Provisioner({"plan", yaml, "--root", root, "-o", "json"});
    EXPECT_EQ(p.exit_code, 0) << p.err;
    std::set<std::string> afters;
    const json plan = json::parse(p.out);
    for (const auto& c : plan["changes"]) {
      if (c["attribute"] != "acsControl") continue;
      afters.insert(c["after"].get<std::string>());
      *reason = c["reason"];
    }
    for (const auto& w : plan["warnings"]) warnings->push_back(w.dump());
    return afters;
  };
  std::string reason;
  std::vector<std::string> warnings;
  EXPECT_EQ(acs(&reason, &warnings), std::set<std::string>{"0x005d"});
  EXPECT_NE(reason.find("IOMMU translating (intel_iommu=on without iommu=pt"), std::string::npos)
      << reason;
  const std::string cmdline = ReadFile(root + "/proc/cmdline");
  ASSERT_NE(cmdline.find("intel_iommu=on"), std::string::npos);
  std::string pt = cmdline.substr(0, cmdline.find_last_not_of("\n") + 1) + " iommu=pt\n";
  KernelWrite(root + "/proc/cmdline", pt);
  warnings.clear();
  EXPECT_EQ(acs(&reason, &warnings), std::set<std::string>{"0x0000"});
  EXPECT_NE(reason.find("IOMMU passthrough (iommu=pt on /proc/cmdline): ACS Control cleared"),
            std::string::npos)
      << reason;
  // The groups still say DMA (the generator's): the disagreement is shown.
  bool conflict = false;
  for (const auto& w : warnings) conflict = conflict || w.find("of type DMA although") != w.npos;
  EXPECT_TRUE(conflict);
}

// Issue 25 item 9: a capture read without root holds 64 bytes of each
// `config`: capabilities past them are "not captured", never "none".
TEST(PcieCliTest, ShortConfigCapturesAreNotCapturedNotAbsent) {
  const std::string root = MakeTempDir("hgx-short");
  ASSERT_TRUE(ExtractTtar(HostTreePath("hgx-h100-pcie"), root).ok());
  HostSpec spec;
  ASSERT_TRUE(PresetByName("hgx-h100-pcie", &spec));
  for (const auto& f : spec.pci) {
    const std::string path = root + "/sys/bus/pci/devices/" + f.bdf + "/config";
    const std::string bytes = ReadFile(path);
    if (bytes.size() > 64) KernelWrite(path, bytes.substr(0, 64));
  }
  KernelWrite(root + "/proc/cmdline", "BOOT_IMAGE=/boot/vmlinuz ro intel_iommu=on iommu=pt\n");
  const std::string yaml = WriteTempFile("host.yaml", HostYaml(R"(  pcie:
    disableAcs: all
  nics:
    - name: rails
      nicSelector: { vendor: "15b3", deviceID: "1021" }
      pcie: { maxReadRequest: 4096 }
)",
                                                               "hgx"));
  RunResult p = Provisioner({"plan", yaml, "--root", root, "-o", "json"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  const json plan = json::parse(p.out);
  int acs = 0, mrrs = 0;
  for (const auto& c : plan["changes"]) {
    EXPECT_TRUE(c["before"].is_null()) << c;
    if (c["attribute"] == "acsControl") {
      ++acs;
      EXPECT_EQ(c["after"], "0x0000");
    }
    if (c["attribute"] == "maxReadRequest") ++mrrs;
  }
  EXPECT_GT(acs, 16);  // every bridge: the port type is not captured either
  EXPECT_EQ(mrrs, 8);
  EXPECT_NE(p.err.find("ACS Control not captured in /sys/bus/pci/devices/0000:15:01.0/config"),
            std::string::npos)
      << p.err;
  EXPECT_NE(p.err.find("/sys/bus/pci/devices/0000:1a:00.0/config holds 64 bytes"),
            std::string::npos)
      << p.err;
  EXPECT_EQ(p.err.find("has no PCI Express capability"), std::string::npos) << p.err;

  RunResult t = Provisioner({"discover", "--root", root});
  ASSERT_EQ(t.exit_code, 0) << t.err;
  EXPECT_NE(t.out.find("\n  0000:17:02.0  bridge (type ?)    ?        ?  "), std::string::npos)
      << t.out;
  EXPECT_NE(t.out.find("\n  0000:1a:00.0  NIC enp26s0np0     -        ?  "), std::string::npos)
      << t.out;

  // A snapshot of it says its config-space copies are partial.
  const std::string snap = MakeTempDir("hgx-short-snap") + "/out";
  RunResult s = Provisioner({"snapshot", "--output", snap, "--root", root});
  ASSERT_EQ(s.exit_code, 0) << s.err;
  EXPECT_NE(s.err.find("config space copies are partial"), std::string::npos) << s.err;

  // Under a translating IOMMU the kept redirects depend on the register:
  // an error naming the file, not a guess.
  KernelWrite(root + "/proc/cmdline", "BOOT_IMAGE=/boot/vmlinuz ro intel_iommu=on\n");
  RunResult tr = Provisioner({"plan", yaml, "--root", root});
  EXPECT_EQ(tr.exit_code, 1);
  EXPECT_NE(tr.err.find("/sys/bus/pci/devices/0000:15:01.0/config holds 64 of 4096 bytes"),
            std::string::npos)
      << tr.err;
}

}  // namespace
}  // namespace provisioner::testing
