// Issue 35.2: the RDMA name of our rules file survives rdma-core's own rule.
// A small model of systemd-udevd for one `add` event of an RDMA device,
// against the real text of rdma-core v64.0's 60-rdma-persistent-naming.rules
// (testdata/rdma-core-v64.0/, see its README.md):
// - rules files from /etc/udev/rules.d, /run/udev/rules.d and
//   /usr/lib/udev/rules.d, a name in an earlier directory hiding the same
//   name in a later one, all sorted by file name (udev-rules.c
//   udev_rules_load -> conf_files_list_strv);
// - the rules of every file in that order, each key in its order: a match
//   key that fails ends the rule; PROGRAM runs the program at once and the
//   rule matches only if it exits 0; RUN+= is queued and runs after every
//   rule is processed, in the order added (udev_event_execute_run);
// - %k is the kernel's name of the device at the event, whatever a program
//   renamed it to since.
// The programs are modelled on their source: rdma_rename (rdma-core v64.0
// kernel-boot/rdma_rename.c: the device looked up by its current name, a
// user-assigned name left alone, NAME_FALLBACK = onboard then PCI,
// NAME_FIXED; before v36 no NAME_FIXED) and iproute2's `rdma dev set`.
#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "modules/names/names_planner.h"
#include "test/support/files.h"

namespace provisioner {
namespace {

std::string ReadTestdata(const std::string& name) {
  return testing::ReadFile("modules/names/testdata/" + name);
}

// The RDMA kernel of one host: the device and what the tools installed.
struct RdmaHost {
  std::string name = "mlx5_0";  // now
  bool user_assigned = false;   // RDMA_NAME_ASSIGN_TYPE_USER
  std::string pci = "0000:af:00.0";
  bool rdma_rename_installed = true;
  bool rdma_rename_has_fixed = true;  // rdma-core >= 36

  bool Rename(const std::string& from, const std::string& to) {
    if (from != name || to.empty()) return false;
    name = to;
    user_assigned = true;
    return true;
  }

  // Runs `cmd` (%k already substituted); true when it exits 0.
  bool Run(const std::string& cmd) {
    std::vector<std::string> argv;
    std::istringstream in(cmd);
    for (std::string a; in >> a;) argv.push_back(a);
    if (argv.empty()) return false;
    if (argv[0] == "rdma_rename") {
      if (!rdma_rename_installed || argv.size() < 3) return false;
      const std::string& curr = argv[1];
      const std::string& policy = argv[2];
      if (policy == "NAME_FIXED" && !rdma_rename_has_fixed) return false;  // Unknown policy
      if (policy == "NAME_KERNEL") return true;
      if (curr != name) return false;  // "Failed to get current device name and index"
      if (user_assigned) return true;  // "Leave user-assigned names, do nothing"
      if (policy == "NAME_FIXED") return argv.size() >= 4 && Rename(curr, argv[3]);
      if (policy == "NAME_FALLBACK" || policy == "NAME_PCI") {
        // by_pci: <prefix>p<bus>s<slot>f<func> for domain 0 (no onboard index).
        const unsigned bus = std::stoul(pci.substr(5, 2), nullptr, 16);
        const unsigned slot = std::stoul(pci.substr(8, 2), nullptr, 16);
        const unsigned func = std::stoul(pci.substr(11, 1), nullptr, 16);
        return Rename(curr, "roce" + std::string("p") + std::to_string(bus) + "s" +
                                std::to_string(slot) + "f" + std::to_string(func));
      }
      return false;
    }
    if (argv[0] == "/usr/sbin/rdma" && argv.size() == 6 && argv[1] == "dev" && argv[2] == "set" &&
        argv[4] == "name") {
      return Rename(argv[3], argv[5]);
    }
    return false;
  }
};

struct Key {
  std::string name;  // "ACTION", "ATTR{board_id}", "PROGRAM", "RUN"
  std::string op;    // "==", "!=", "=", "+="
  std::string value;
};

// One rule line as udev reads it: KEY op "value", comma separated.
std::vector<Key> ParseRule(const std::string& line) {
  std::vector<Key> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == ',' || line[i] == '\t')) ++i;
    if (i >= line.size()) break;
    const size_t op_at = line.find_first_of("=!+", i);
    const size_t quote = line.find('"', op_at);
    const size_t end = line.find('"', quote + 1);
    if (op_at == std::string::npos || quote == std::string::npos || end == std::string::npos) {
      ADD_FAILURE() << "unparsable rule: " << line;
      return {};
    }
    out.push_back({line.substr(i, op_at - i), line.substr(op_at, quote - op_at),
                   line.substr(quote + 1, end - quote - 1)});
    i = end + 1;
  }
  return out;
}

// One `add` event of the RDMA device through the rules files of `dirs`
// (directory -> file name -> text, in udev's directory order); the device's
// name at the end.
std::string AddEvent(const std::vector<std::map<std::string, std::string>>& dirs, RdmaHost& host) {
  std::map<std::string, std::string> files;  // by name: the first directory's wins
  for (const auto& dir : dirs) {
    for (const auto& [name, text] : dir) files.emplace(name, text);
  }
  const std::string kernel_name = host.name;  // %k
  auto subst = [&](std::string v) {
    for (size_t p; (p = v.find("%k")) != std::string::npos;) v.replace(p, 2, kernel_name);
    return v;
  };
  std::vector<std::string> run;
  for (const auto& [file, text] : files) {  // std::map: sorted by file name
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
      const size_t first = line.find_first_not_of(" \t");
      if (first == std::string::npos || line[first] == '#') continue;
      for (const Key& k : ParseRule(line)) {
        bool match = true;
        if (k.name == "ACTION") {
          match = (k.value == "add") == (k.op == "==");
        } else if (k.name == "SUBSYSTEM") {
          match = (k.value == "infiniband") == (k.op == "==");
        } else if (k.name == "KERNELS") {
          match = (k.value == host.pci || k.value == kernel_name) == (k.op == "==");
        } else if (k.name.rfind("ATTR{", 0) == 0) {
          match = k.op == "!=";  // the model's device has no such attribute value
        } else if (k.name == "PROGRAM") {
          match = host.Run(subst(k.value));
        } else if (k.name == "RUN" && k.op == "+=") {
          run.push_back(subst(k.value));
        } else {
          ADD_FAILURE() << file << ": key the model does not know: " << k.name;
        }
        if (!match) break;
      }
    }
  }
  for (const std::string& cmd : run) host.Run(cmd);
  return host.name;
}

const std::map<std::string, std::string> kRdmaCore = {
    {"60-rdma-persistent-naming.rules",
     ReadTestdata("rdma-core-v64.0/60-rdma-persistent-naming.rules")}};

std::map<std::string, std::string> Ours() {
  PfNames pf;
  pf.pci_address = "0000:af:00.0";
  pf.rdma = "mlx5_rail1";
  return {{"10-provisioner-names.rules", NameRulesFileText(RenderNameRules({pf}))}};
}

TEST(NamesUdevOrderTest, TheRealRdmaCoreRuleIsRead) {
  ASSERT_NE(kRdmaCore.begin()->second.find(
                "ACTION==\"add\", SUBSYSTEM==\"infiniband\", PROGRAM=\"rdma_rename %k "
                "NAME_FALLBACK\""),
            std::string::npos)
      << kRdmaCore.begin()->second;
  RdmaHost host;  // rdma-core alone: its PCI name
  EXPECT_EQ(AddEvent({{}, {}, kRdmaCore}, host), "rocep175s0f0");
}

// Ours in /etc (10-), rdma-core's in /usr/lib (60-): our name at the end.
TEST(NamesUdevOrderTest, OurNameSurvivesRdmaCoresRule) {
  RdmaHost host;
  EXPECT_EQ(AddEvent({Ours(), {}, kRdmaCore}, host), "mlx5_rail1");
}

// What the module wrote before (a RUN+= of `rdma dev set`): rdma-core's
// PROGRAM renamed the device first and the RUN found no %k.
TEST(NamesUdevOrderTest, ARunRuleLosesToRdmaCoresProgram) {
  const std::map<std::string, std::string> old = {
      {"10-provisioner-names.rules",
       "ACTION==\"add\", SUBSYSTEM==\"infiniband\", KERNELS==\"0000:af:00.0\", "
       "RUN+=\"/usr/sbin/rdma dev set %k name mlx5_rail1\"\n"}};
  RdmaHost host;
  EXPECT_EQ(AddEvent({old, {}, kRdmaCore}, host), "rocep175s0f0");
}

// rdma-core older than 36 (no NAME_FIXED), or none installed: the `rdma dev
// set` PROGRAM names it, still before rdma-core's rule.
TEST(NamesUdevOrderTest, WithoutNameFixedTheRdmaToolNamesIt) {
  RdmaHost old_core;
  old_core.rdma_rename_has_fixed = false;
  EXPECT_EQ(AddEvent({Ours(), {}, kRdmaCore}, old_core), "mlx5_rail1");
  RdmaHost no_core;
  no_core.rdma_rename_installed = false;
  EXPECT_EQ(AddEvent({Ours(), {}, {}}, no_core), "mlx5_rail1");
}

// An administrator's /etc override of rdma-core's file (say NAME_KERNEL)
// hides /usr/lib's, and our rule still names the device.
TEST(NamesUdevOrderTest, AnEtcOverrideOfRdmaCoresFileHidesIt) {
  std::map<std::string, std::string> etc = Ours();
  etc["60-rdma-persistent-naming.rules"] =
      "ACTION==\"add\", SUBSYSTEM==\"infiniband\", PROGRAM=\"rdma_rename %k NAME_KERNEL\"\n";
  RdmaHost host;
  EXPECT_EQ(AddEvent({etc, {}, kRdmaCore}, host), "mlx5_rail1");
  RdmaHost plain;
  EXPECT_EQ(AddEvent({{{"60-rdma-persistent-naming.rules", etc["60-rdma-persistent-naming.rules"]}},
                      {},
                      kRdmaCore},
                     plain),
            "mlx5_0");
}

}  // namespace
}  // namespace provisioner
