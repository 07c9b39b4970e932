// make_tree: writes a kernel-shaped host tree.
//   make_tree --preset NAME [--vfs BDF=N]... [--all-vfs N] (--out FILE.ttar | --dir DIR)
// Presets: cx5-roce, cx5-ib, bench-<P> (bench/: P PFs behind PCIe switches with
// GPUs, 256-slot GID tables), scaled-<P> (P single-port ConnectX-5 PFs; with
// --all-vfs V: P x V VFs, for benchmarks).
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "test/support/host_presets.h"
#include "test/tools/make_tree.h"

namespace {

int Usage() {
  std::fprintf(stderr,
               "usage: make_tree --preset NAME [--vfs BDF=N]... [--all-vfs N] (--out FILE.ttar | "
               "--dir DIR)\n"
               "presets:");
  for (const auto& n : provisioner::testing::PresetNames()) std::fprintf(stderr, " %s", n.c_str());
  std::fprintf(stderr, "\n");
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  provisioner::testing::TreeRequest req;
  std::string out, dir;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (i + 1 >= argc) return Usage();
    std::string v = argv[++i];
    if (a == "--preset") {
      req.preset = v;
    } else if (a == "--vfs") {
      size_t eq = v.find('=');
      if (eq == std::string::npos) return Usage();
      req.vfs.emplace_back(v.substr(0, eq), std::atoi(v.c_str() + eq + 1));
    } else if (a == "--all-vfs") {
      req.all_vfs = std::atoi(v.c_str());
    } else if (a == "--out") {
      out = v;
    } else if (a == "--dir") {
      dir = v;
    } else {
      return Usage();
    }
  }
  if (req.preset.empty() || out.empty() == dir.empty()) return Usage();
  if (!dir.empty()) {
    provisioner::Status s = provisioner::testing::MakeTree(req, dir);
    if (!s.ok()) {
      std::fprintf(stderr, "make_tree: %s\n", s.message().c_str());
      return 1;
    }
    return 0;
  }
  auto text = provisioner::testing::MakeTreeTtar(req);
  if (!text.ok()) {
    std::fprintf(stderr, "make_tree: %s\n", text.status().message().c_str());
    return 1;
  }
  std::ofstream f(out, std::ios::binary);
  f << *text;
  f.close();
  if (!f) {
    std::fprintf(stderr, "make_tree: cannot write %s\n", out.c_str());
    return 1;
  }
  return 0;
}
