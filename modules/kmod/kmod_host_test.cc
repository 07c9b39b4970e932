#include "modules/kmod/kmod_host.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "modules/kmod/kmod_module.h"
#include "modules/kmod/kmod_planner.h"
#include "test/support/backend_by_root.h"
#include "test/support/ttar.h"

namespace provisioner {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;
using ::testing::UnorderedElementsAre;

class KmodTree : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = testing::MakeTempDir("kmod");
    ASSERT_FALSE(root_.empty());
    fs_ = NewLocalHostFs(root_);
    W("/proc/modules",
      "mlx5_ib 446464 0 - Live 0x0000000000000000\n"
      "ib_core 450560 1 mlx5_ib, Live 0x0000000000000000\n");
    W("/sys/module/ib_core/parameters/netns_mode", "Y\n");
    W("/lib/modules/6.1.0/modules.dep",
      "kernel/drivers/infiniband/hw/mlx5/mlx5_ib.ko: kernel/drivers/infiniband/core/ib_core.ko\n"
      "kernel/drivers/infiniband/core/rdma_ucm.ko: kernel/drivers/infiniband/core/rdma_cm.ko "
      "kernel/drivers/infiniband/core/ib_core.ko\n"
      "kernel/drivers/infiniband/core/rdma_cm.ko: kernel/drivers/infiniband/core/ib_core.ko\n"
      "kernel/drivers/infiniband/core/ib_core.ko:\n");
    W("/etc/modprobe.d/ib_core.conf",
      "# keep\noptions ib_core netns_mode=0\nblacklist nouveau\ninstall gdrdrv /bin/true\n");
    W("/lib/modprobe.d/aliases.conf", "alias net-pf-99 rdma_cm\n");
    ctx_.fs = fs_.get();
  }
  void W(const std::string& path, const std::string& content) {
    ASSERT_TRUE(fs_->WriteFileAtomic(path, content).ok());
  }
  // A change of the kmod module, as its planner makes them.
  static Change KmodChange(const std::string& target, const std::string& attribute,
                           nlohmann::json after) {
    Change c;
    c.module = "kmod";
    c.target = target;
    c.attribute = attribute;
    c.after = std::move(after);
    return c;
  }
  std::string root_;
  std::unique_ptr<HostFs> fs_;
  KmodModule m_;  // the module over fs_ (ctx_)
  HostContext ctx_;
};

TEST_F(KmodTree, DiscoversTheTreeNotThisMachine) {
  auto k = DiscoverKmod(*fs_, *NewTreeKmodBackend(*fs_), "6.1.0");
  ASSERT_TRUE(k.ok()) << k.status().ToString();
  EXPECT_EQ(k->loaded_source, "/proc/modules");
  ASSERT_EQ(k->loaded.size(), 2u);
  EXPECT_EQ(k->loaded[1].name, "ib_core");
  EXPECT_THAT(k->loaded[1].used_by, ElementsAre("mlx5_ib"));
  EXPECT_THAT(k->parameters["ib_core"], ElementsAre(Pair("netns_mode", "Y")));
  EXPECT_TRUE(k->modules_dep_found);
  EXPECT_THAT(k->available.at("rdma_ucm"), ElementsAre("rdma_cm", "ib_core"));
  // libkmod's config iterators over the tree's modprobe.d (and only those).
  ASSERT_EQ(k->options.size(), 1u);
  EXPECT_EQ(k->options[0].module, "ib_core");
  EXPECT_EQ(k->options[0].value, "netns_mode=0");
  EXPECT_THAT(k->blacklist, ElementsAre("nouveau"));
  ASSERT_EQ(k->install.size(), 1u);
  EXPECT_EQ(k->install[0].value, "/bin/true");
  ASSERT_EQ(k->aliases.size(), 1u);
  EXPECT_EQ(k->aliases[0].value, "rdma_cm");
  EXPECT_FALSE(k->persisted.has_value());
}

TEST_F(KmodTree, NoProcModulesMeansNothingLoaded) {
  ASSERT_TRUE(fs_->RemoveFile("/proc/modules").ok());
  auto k = DiscoverKmod(*fs_, *NewTreeKmodBackend(*fs_), "");
  ASSERT_TRUE(k.ok()) << k.status().ToString();
  EXPECT_TRUE(k->loaded.empty());
  EXPECT_FALSE(k->modules_dep_found);
  // A tree without proc/modules is a partial capture: no warning here (the
  // module infers the loaded list from the tree and says that instead).
  EXPECT_TRUE(k->config_warnings.empty());
}

// The live root's kernel stand-in when /proc/modules is absent (a kernel
// without loadable modules, a container without procfs): the backend says
// ENOENT as libkmod does (KmodLive.LibkmodAndProcModulesCopyAgree).
class NoProcModulesBackend : public KmodBackend {
 public:
  std::string Source() const override { return "libkmod"; }
  StatusOr<std::vector<LoadedModule>> ReadLoaded() override {
    return ErrnoToStatus(ENOENT, "read /proc/modules (libkmod)");
  }
  Status Load(const std::string&, const std::vector<std::string>&) override {
    return ErrnoToStatus(ENOENT, "load");
  }
  Status Unload(const std::string&) override { return ErrnoToStatus(ENOENT, "unload"); }
};

// On the live root an absent /proc/modules is not "nothing loaded" silently:
// a warning says the loaded modules are unknown (issue 31).
TEST(KmodLive, AbsentProcModulesOnTheLiveRootWarns) {
  auto live = NewLocalHostFs("/");
  NoProcModulesBackend backend;
  auto k = DiscoverKmod(*live, backend, "");
  ASSERT_TRUE(k.ok()) << k.status().ToString();
  EXPECT_TRUE(k->loaded.empty());
  EXPECT_THAT(
      k->config_warnings,
      ::testing::Contains("/proc/modules: ENOENT: loaded kernel modules unknown (no procfs?)"));
}

// Built-ins: modules.builtin's paths, and /sys/module entries that are not
// loaded and have no initstate; a loaded module's entry is not one.
TEST_F(KmodTree, BuiltinFromModulesBuiltinAndSysModule) {
  W("/lib/modules/6.1.0/modules.builtin",
    "kernel/drivers/net/virtio_net.ko\nkernel/drivers/block/virtio_blk.ko\n");
  W("/sys/module/8250/parameters/nr_uarts", "4\n");
  W("/sys/module/mlx5_ib/initstate", "live\n");
  W("/sys/module/nvme_core/initstate", "coming\n");  // loading, not built in
  auto k = DiscoverKmod(*fs_, *NewTreeKmodBackend(*fs_), "6.1.0");
  ASSERT_TRUE(k.ok()) << k.status().message();
  EXPECT_THAT(k->builtin, UnorderedElementsAre("virtio_net", "virtio_blk", "8250"));
  // Without a release there is no modules.builtin to read; /sys/module still says.
  auto no_release = DiscoverKmod(*fs_, *NewTreeKmodBackend(*fs_), "");
  ASSERT_TRUE(no_release.ok());
  EXPECT_THAT(no_release->builtin, UnorderedElementsAre("8250"));
}

TEST_F(KmodTree, MalformedProcModulesNamesTheFile) {
  W("/proc/modules", "garbage\n");
  auto k = DiscoverKmod(*fs_, *NewTreeKmodBackend(*fs_), "6.1.0");
  ASSERT_FALSE(k.ok());
  EXPECT_NE(k.status().message().find(root_ + "/proc/modules"), std::string::npos)
      << k.status().message();
}

TEST_F(KmodTree, LoadAddsModuleAndMissingDepsNewestFirst) {
  auto tree = NewTreeKmodBackend(*fs_);
  ASSERT_TRUE(tree->Load("rdma_ucm", {"rdma_cm", "ib_core"}).ok());
  auto loaded = tree->ReadLoaded();
  ASSERT_TRUE(loaded.ok());
  std::vector<std::string> names;
  for (const auto& m : *loaded) names.push_back(m.name);
  EXPECT_THAT(names, ElementsAre("rdma_ucm", "rdma_cm", "mlx5_ib", "ib_core"));
  ASSERT_TRUE(tree->Unload("rdma_ucm").ok());
  loaded = tree->ReadLoaded();
  ASSERT_TRUE(loaded.ok());
  EXPECT_EQ(loaded->size(), 3u);
}

// Issue 36.6: a module name is one token of modules-load.d; a value that
// would add a line (or a comment) is refused before anything is written.
TEST_F(KmodTree, AHostileModuleNameNeverReachesModulesLoadD) {
  Change c = KmodChange(kKmodPersistTarget, kKmodAttrPersist,
                        nlohmann::json::array({"mlx5_ib", "mlx5_ib\nbad_module"}));
  c.id = "kmod/modules-load.d/provisioner.conf/modules";
  Status s = m_.Apply(c, ctx_);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.message();
  EXPECT_NE(s.message().find("cannot go into a modprobe.d/modules-load.d file"), std::string::npos)
      << s.message();
  EXPECT_FALSE(fs_->Exists("/etc/modules-load.d/provisioner.conf"));
}

TEST_F(KmodTree, ModuleApplyAndVerify) {
  HostFacts facts;
  facts.kernel.release = "6.1.0";
  ASSERT_TRUE(m_.Discover(ctx_, facts).ok());
  EXPECT_THAT(facts.loaded_modules, ElementsAre("mlx5_ib", "ib_core"));
  DesiredState d;
  d.kernel_modules = {{"mlx5_ib", true}, {"rdma_ucm", true}};
  PlanSink sink;
  m_.Plan(d, facts, sink);
  ASSERT_EQ(sink.changes().size(), 2u);
  for (const Change& c : sink.changes()) {
    ASSERT_TRUE(m_.Apply(c, ctx_).ok()) << c.id;
    ASSERT_TRUE(m_.Verify(c, ctx_).ok()) << c.id;
  }
  auto conf = fs_->ReadFile("/etc/modules-load.d/provisioner.conf");
  ASSERT_TRUE(conf.ok());
  EXPECT_NE(conf->find("\nmlx5_ib\nrdma_ucm\n"), std::string::npos) << *conf;
  HostFacts again;
  again.kernel.release = "6.1.0";
  ASSERT_TRUE(m_.Discover(ctx_, again).ok());
  PlanSink sink2;
  m_.Plan(d, again, sink2);
  EXPECT_TRUE(sink2.changes().empty());
}

// A modules directory as depmod (Debian kmod) builds it from .ko files: tiny
// ELF objects compiled here whose exported (__ksymtab_strings) and undefined
// symbols give the dependencies, as in real modules. libkmod needs depmod's
// index files; our discovery reads the text modules.dep: both must agree.
class KmodDepmodTree : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = testing::MakeTempDir("kmod");
    ASSERT_FALSE(root_.empty());
    const std::string kdir = root_ + "/lib/modules/" + kRelease + "/kernel";
    ASSERT_EQ(std::system(("mkdir -p '" + kdir + "' '" + root_ + "/proc/sys/kernel'").c_str()), 0);
    std::ofstream(root_ + "/proc/sys/kernel/osrelease") << kRelease << "\n";
    // name, exported symbol, used symbols
    Module("ib_core", "ib_core_sym", {});
    Module("ib_uverbs", "ib_uverbs_sym", {"ib_core_sym"});
    Module("mlx5_ib", "", {"ib_core_sym", "ib_uverbs_sym"});
    Module("rdma_ucm", "", {"ib_uverbs_sym"});
    std::string depmod;
    for (const char* p : {"/usr/sbin/depmod", "/sbin/depmod"}) {
      if (::access(p, X_OK) == 0) depmod = p;
    }
    ASSERT_FALSE(depmod.empty())
        << "depmod not found: install Debian's kmod (scripts/setup.sh does)";
    ASSERT_EQ(std::system((depmod + " -b '" + root_ + "' " + kRelease + " 2>/dev/null").c_str()),
              0);
    fs_ = NewLocalHostFs(root_);
  }
  void Module(const std::string& name, const std::string& exports,
              const std::vector<std::string>& uses) {
    std::string src;
    if (!exports.empty()) {
      src += "int " + exports + ";\n";
      src += "__attribute__((section(\"__ksymtab_strings\"), used)) static const char ks[] = \"" +
             exports + "\";\n";
    }
    for (const auto& u : uses) src += "extern int " + u + ";\nint *use_" + u + " = &" + u + ";\n";
    src +=
        "__attribute__((section(\".modinfo\"), used)) static const char lic[] = \"license=GPL\";\n";
    const std::string c = root_ + "/" + name + ".c";
    std::ofstream(c) << src;
    const std::string ko = root_ + "/lib/modules/" + kRelease + "/kernel/" + name + ".ko";
    ASSERT_EQ(std::system(("cc -c -o '" + ko + "' '" + c + "'").c_str()), 0) << src;
  }
  static constexpr const char* kRelease = "6.1.0-test";
  std::string root_;
  std::unique_ptr<HostFs> fs_;
};

TEST_F(KmodDepmodTree, LibkmodAndModulesDepTextAgree) {
  auto k = DiscoverKmod(*fs_, *NewTreeKmodBackend(*fs_), kRelease);
  ASSERT_TRUE(k.ok()) << k.status().ToString();
  ASSERT_TRUE(k->modules_dep_found);
  ASSERT_EQ(k->available.size(), 4u);
  EXPECT_THAT(k->available.at("mlx5_ib"), UnorderedElementsAre("ib_uverbs", "ib_core"));
  for (const auto& [name, deps] : k->available) {
    auto lib = LibkmodDependencies(*fs_, kRelease, name);
    ASSERT_TRUE(lib.ok()) << name << ": " << lib.status().ToString();
    EXPECT_EQ(*lib, deps) << name;
  }
  auto missing = LibkmodDependencies(*fs_, kRelease, "nvidia_peermem");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
}

TEST_F(KmodDepmodTree, TreeLoadTakesTheTreesDependencies) {
  // No dependencies given: found in the tree's modules.dep (libkmod agrees:
  // LibkmodAndModulesDepTextAgree).
  auto tree = NewTreeKmodBackend(*fs_);
  ASSERT_TRUE(tree->Load("mlx5_ib", {}).ok());
  auto loaded = tree->ReadLoaded();
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  std::vector<std::string> names;
  for (const auto& m : *loaded) names.push_back(m.name);
  EXPECT_THAT(names, ElementsAre("mlx5_ib", "ib_uverbs", "ib_core"));  // newest first
  EXPECT_FALSE(tree->Load("not_a_module", {}).ok());
}

// The two ways to read the loaded list agree on this machine: libkmod on the
// live /proc/modules, and our parser on a copy of it in a tree. A kernel
// without loadable modules has no /proc/modules: then both say ENOENT.
TEST(KmodLive, LibkmodAndProcModulesCopyAgree) {
  std::string tree = testing::MakeTempDir("kmod");
  ASSERT_FALSE(tree.empty());
  auto tree_fs = NewLocalHostFs(tree);
  std::ifstream in("/proc/modules");
  auto live_fs = NewLocalHostFs("/");
  auto from_libkmod = NewLibkmodBackend(*live_fs)->ReadLoaded();
  if (!in) {
    ASSERT_FALSE(from_libkmod.ok());
    EXPECT_EQ(from_libkmod.status().err(), ENOENT);
    auto parsed = NewTreeKmodBackend(*tree_fs)->ReadLoaded();
    ASSERT_FALSE(parsed.ok());
    EXPECT_EQ(parsed.status().err(), ENOENT);
    return;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  ASSERT_TRUE(tree_fs->WriteFileAtomic("/proc/modules", ss.str()).ok());
  auto parsed = NewTreeKmodBackend(*tree_fs)->ReadLoaded();
  ASSERT_TRUE(from_libkmod.ok()) << from_libkmod.status().ToString();
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  ASSERT_EQ(from_libkmod->size(), parsed->size());
  for (size_t i = 0; i < parsed->size(); ++i) {
    EXPECT_EQ((*from_libkmod)[i].name, (*parsed)[i].name);
    EXPECT_EQ((*from_libkmod)[i].size, (*parsed)[i].size);
  }
}

// ParseModprobeConf is libkmod's parser, quirks included: the same files
// through libkmod 30 itself (kmod_new's config iterators, without what it
// adds from this machine's /proc/cmdline) give the same entries in the same
// order. Crafted files, then this machine's own modprobe.d directories.
void ExpectSameAsLibkmod(const std::vector<std::string>& config_paths,
                         const std::vector<std::string>& files_in_order) {
  auto lib = LibkmodModprobeConf(config_paths);
  ASSERT_TRUE(lib.ok()) << lib.status().ToString();
  ModprobeConf ours;
  for (const std::string& f : files_in_order) {
    std::ifstream in(f, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    ParseModprobeConf(ss.str(), &ours);
  }
  auto pairs = [](const std::vector<ModprobeEntry>& v) {
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& e : v) out.emplace_back(e.module, e.value);
    return out;
  };
  EXPECT_EQ(pairs(ours.options), pairs(lib->options));
  EXPECT_EQ(ours.blacklist, lib->blacklist);
  EXPECT_EQ(pairs(ours.install), pairs(lib->install));
  EXPECT_EQ(pairs(ours.remove), pairs(lib->remove));
  EXPECT_EQ(pairs(ours.softdeps), pairs(lib->softdeps));
  EXPECT_EQ(pairs(ours.aliases), pairs(lib->aliases));
}

TEST(ModprobeConfParser, AgreesWithLibkmodOnCraftedFiles) {
  const std::string dir = testing::MakeTempDir("kmod");
  ASSERT_FALSE(dir.empty());
  const std::vector<std::pair<std::string, std::string>> files = {
      {"a.conf",
       "# comment\n"
       "options ib_core netns_mode=0\n"
       "options ib-core\tnetns_mode=1 foo=\"a b\"\t \n"
       "options  mlx5-core  prof_sel=2\n"
       "  options mlx5_core log_num_mgm_entry_size=-1\n"
       "options nothing\n"
       "options mlx5_core x=1 \\\n y=2\n"
       "options snd-[a-z]-x v=1\n"
       "options bad]name v=1\n"
       "options \\#esc a=\\b\n"
       " # indented comment\n"
       "blacklist nouveau\n"
       "blacklist rdma-rxe extra words\n"
       "blacklist\n"
       "install gdr-drv /sbin/modprobe --ignore-install gdrdrv && echo \\\n done\n"
       "remove  mlx5_ib\t/bin/true\n"
       "alias net-pf-99 rdma-cm trailing\n"
       "alias only_one\n"
       "include /etc/other.conf\n"
       "config x\n"
       "unknown command here\n"
       "softdep mlx5_core pre: mlx5_ib post: ib_ipoib rdma_ucm\n"
       "softdep a  pre: x\n"
       "softdep b pre: x y post: z pre: w\n"
       "softdep c post:   p  q   \n"
       "softdep d pre:\n"
       "softdep e nothing here\n"
       "options\tnvidia NVreg_EnableGpuFirmware=0\r\n"
       "options last noeol=1\\"},
      {"b.conf", "options z z=1\n\n\n#\noptions y y=2"},
  };
  std::vector<std::string> paths;
  for (const auto& [name, text] : files) {
    std::ofstream(dir + "/" + name, std::ios::binary) << text;
    paths.push_back(dir + "/" + name);
  }
  ExpectSameAsLibkmod({dir}, paths);
}

TEST(ModprobeConfParser, AgreesWithLibkmodOnThisMachinesModprobeD) {
  const char* const dirs[] = {"/etc/modprobe.d", "/run/modprobe.d", "/usr/local/lib/modprobe.d",
                              "/lib/modprobe.d"};
  std::map<std::string, std::string> by_name;
  std::vector<std::string> config_paths;
  for (const char* d : dirs) {
    config_paths.push_back(d);
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(d, ec)) {
      const std::string n = e.path().filename().string();
      const bool conf = n.size() >= 6 && (n.compare(n.size() - 5, 5, ".conf") == 0 ||
                                          n.compare(n.size() - 6, 6, ".alias") == 0);
      if (conf && n[0] != '.' && !e.is_directory()) by_name.emplace(n, e.path().string());
    }
  }
  std::vector<std::string> files;
  for (const auto& [n, p] : by_name) files.push_back(p);
  if (files.empty()) GTEST_SKIP() << "no modprobe.d files on this machine";
  ExpectSameAsLibkmod(config_paths, files);
}

// The factory picks by root: libkmod only for "/", the tree's proc/modules
// for any other root (a tree must never load a module into this machine).
TEST(KmodBackendFactory, LibkmodForTheLiveRootOnly) {
  testing::ExpectBackendByRoot([](HostFs& fs) { return NewKmodBackend(fs)->Source(); }, "libkmod",
                               "/proc/modules");
}

TEST_F(KmodTree, ModuleLoadsIntoTheTreeNotThisMachine) {
  // The module's apply goes through the factory: under a tree root it
  // rewrites the tree's proc/modules (libkmod would fail without root here,
  // or load into this machine).
  ASSERT_TRUE(m_.Apply(KmodChange("rdma_cm", "loaded", true), ctx_).ok());
  auto text = fs_->ReadFile("/proc/modules");
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(text->rfind("rdma_cm ", 0), 0u) << *text;
}

}  // namespace
}  // namespace provisioner
