// The RDMA stack's files beside the devices: ib_core's netns_mode (the
// parameter and /etc/modprobe.d), the kernel and MLNX_OFED versions,
// /dev/infiniband, and whether the initramfs loads ib_core.
#include "modules/rdma/rdma_sysfs.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "engine/base/strings.h"
#include "engine/host/parallel_reads.h"
#include "engine/model/ipoib_facts.h"
#include "modules/kmod/kmod_host.h"
#include "spdlog/spdlog.h"

namespace provisioner::rdma {

std::optional<std::string> NetnsModeFromParam(std::string_view value) {
  std::string v = Trim(value);
  if (v == "Y" || v == "1" || v == "y") return "shared";
  if (v == "N" || v == "0" || v == "n") return "exclusive";
  return std::nullopt;
}

std::optional<std::string> NetnsModeFromModprobe(std::string_view text) {
  std::optional<std::string> mode;
  for (const auto& line : SplitLines(text)) {
    std::vector<std::string> f = SplitWhitespace(line);
    if (f.size() < 3 || f[0] != "options" || f[1] != "ib_core") continue;
    for (size_t i = 2; i < f.size(); ++i) {
      if (f[i].rfind('#', 0) == 0) break;
      if (f[i].rfind("netns_mode=", 0) != 0) continue;
      std::string v = f[i].substr(11);
      if (v == "0" || v == "N" || v == "n") mode = "exclusive";
      if (v == "1" || v == "Y" || v == "y") mode = "shared";
    }
  }
  return mode;
}

std::string EditModprobeNetnsMode(std::string_view text, const std::string& mode) {
  const bool set = mode == "exclusive";
  std::string out;
  bool written = false;
  for (const auto& line : SplitLines(text)) {
    std::vector<std::string> f = SplitWhitespace(line);
    bool ours = f.size() >= 2 && f[0] == "options" && f[1] == "ib_core";
    // Options end where a '#' token starts a comment (as NetnsModeFromModprobe reads them).
    size_t end = f.size();
    for (size_t i = 2; ours && i < f.size(); ++i) {
      if (f[i].rfind('#', 0) == 0) {
        end = i;
        break;
      }
    }
    bool has = false;
    for (size_t i = 2; ours && i < end; ++i) has = has || f[i].rfind("netns_mode=", 0) == 0;
    if (!has) {
      out += line + "\n";
      continue;
    }
    std::string comment;
    for (size_t i = end; i < f.size(); ++i) comment += (comment.empty() ? "" : " ") + f[i];
    // Rebuild the line without netns_mode; the one wanted value goes once.
    std::string rebuilt = "options ib_core";
    int kept = 0;
    for (size_t i = 2; i < end; ++i) {
      if (f[i].rfind("netns_mode=", 0) == 0) {
        if (set && !written) {
          rebuilt += " netns_mode=0";
          written = true;
          ++kept;
        }
        continue;
      }
      rebuilt += " " + f[i];
      ++kept;
    }
    if (kept > 0) {
      out += rebuilt + (comment.empty() ? "" : " " + comment) + "\n";
    } else if (!comment.empty()) {
      out += comment + "\n";  // the line's comment stays, on its own
    }
  }
  if (set && !written) out += "options ib_core netns_mode=0\n";
  return out;
}

std::optional<std::pair<int, int>> KernelVersion(std::string_view release) {
  int major = 0, minor = 0;
  if (std::sscanf(std::string(release).c_str(), "%d.%d", &major, &minor) != 2) return std::nullopt;
  return std::make_pair(major, minor);
}

std::string OfedVersionFrom(std::string_view text) {
  const std::string_view key = "MLNX_OFED_LINUX-";
  size_t p = text.find(key);
  if (p == std::string_view::npos) return "";
  size_t b = p + key.size(), e = b;
  while (e < text.size() &&
         (std::isalnum(static_cast<unsigned char>(text[e])) || text[e] == '.' || text[e] == '-')) {
    ++e;
  }
  return std::string(text.substr(b, e - b));
}

std::optional<std::string> ReadNetnsModeParam(const HostFs& fs) {
  auto v = fs.ReadAttr(kNetnsModeParam);
  if (!v.ok()) return std::nullopt;
  return NetnsModeFromParam(*v);
}

void ReadPersistentNetnsMode(const HostFs& fs, RdmaFacts& facts) {
  PersistentNetnsModeFrom(ModprobeOptionsByFile(fs), facts);
}

void PersistentNetnsModeFrom(const std::vector<ModprobeFileOptions>& files, RdmaFacts& facts) {
  // modprobe.d through libkmod, as modprobe reads it (ib-core is ib_core,
  // continued lines are one line); the last file setting it wins.
  for (const ModprobeFileOptions& file : files) {
    for (const ModprobeEntry& o : file.options) {
      if (o.module != "ib_core") continue;
      if (auto m = NetnsModeFromModprobe("options ib_core " + o.value)) {
        facts.persistent_netns_mode = *m;
        facts.persistent_netns_source = file.path;
        if (file.path == kIbCoreConf) facts.ib_core_conf_netns_mode = *m;
      }
    }
  }
}

void ReadOfed(const HostFs& fs, RdmaFacts& facts) {
  facts.ofed = fs.Exists("/sys/module/mlx_compat");
  if (auto v = fs.ReadAttr("/sys/module/mlx_compat/version"); v.ok() && !v->empty()) {
    facts.ofed_version = *v;
  }
  if (auto t = fs.ReadFile("/usr/bin/ofed_info"); t.ok()) {
    facts.ofed = true;
    if (std::string v = OfedVersionFrom(*t); !v.empty()) facts.ofed_version = v;
  }
}

void ReadDevFiles(const HostFs& fs, RdmaFacts& facts) {
  auto names = fs.ListDir("/dev/infiniband");
  if (names.ok()) facts.dev_files = *names;
  // The live root always has /dev; a tree may not have captured it, or only
  // part of it (hwloc's dev/cpuset): device files count as captured when the
  // tree has /dev/infiniband or the device nodes every host has.
  facts.dev_captured = fs.Captured("/dev/infiniband") || fs.Captured("/dev/null");
}

namespace {

// ib_core itself, or a module that depends on it (modprobe loads it first).
bool NeedsIbCore(const std::string& m) {
  static const char* const kUsers[] = {"ib_core", "ib_uverbs", "ib_umad",  "ib_cm",     "iw_cm",
                                       "rdma_cm", "rdma_ucm",  "ib_ipoib", "mlx5_ib",   "mlx4_ib",
                                       "irdma",   "bnxt_re",   "efa",      "rdma_rxe",  "siw",
                                       "ib_iser", "ib_isert",  "ib_srp",   "nvme_rdma", "rpcrdma"};
  std::string n = m;
  for (char& c : n) {
    if (c == '-') c = '_';
  }
  for (const char* u : kUsers) {
    if (n == u) return true;
  }
  return false;
}

// The words of `line` after `key` (`add_drivers+=" mlx5_ib ib_core "`).
std::vector<std::string> DracutWords(const std::string& line, const std::string& key) {
  std::vector<std::string> out;
  const size_t at = line.find_first_not_of(" \t");
  if (at == std::string::npos || line.compare(at, key.size(), key) != 0) return out;
  const size_t after = at + key.size();
  if (after >= line.size() || (line[after] != '=' && line[after] != '+')) return out;
  const size_t eq = line.find('=', after);
  if (eq == std::string::npos) return out;
  std::string rest = line.substr(eq + 1);
  for (char& c : rest) {
    if (c == '"' || c == '\'') c = ' ';
  }
  std::istringstream in(rest);
  std::string w;
  while (in >> w) out.push_back(w);
  return out;
}

}  // namespace

void ReadInitramfs(const HostFs& fs, const std::string& release, RdmaFacts& facts) {
  const bool dracut = fs.Exists("/etc/dracut.conf") || fs.IsDir("/etc/dracut.conf.d");
  const bool tools = fs.IsDir("/etc/initramfs-tools");
  if (!release.empty()) {
    if (tools) {
      facts.initramfs_rebuild = "update-initramfs -u -k " + release;
    } else if (dracut) {
      facts.initramfs_rebuild = "dracut -f --kver " + release;
    }
    // A capture of the image's file list (what lsinitramfs / lsinitrd print).
    const std::string list = "/run/provisioner/initramfs/" + release + ".list";
    if (auto text = fs.ReadFile(list); text.ok()) {
      std::istringstream in(*text);
      std::string line;
      while (std::getline(in, line)) {
        const size_t slash = line.rfind('/');
        const std::string base = line.substr(slash == std::string::npos ? 0 : slash + 1);
        if (base == "ib_core.ko" || base == "ib_core.ko.xz" || base == "ib_core.ko.zst" ||
            base == "ib_core.ko.gz") {
          facts.ib_core_initramfs_evidence = list + " lists " + line;
          return;
        }
      }
      return;  // the list says: not in it
    }
  }
  if (tools) {
    if (auto text = fs.ReadFile("/etc/initramfs-tools/modules"); text.ok()) {
      std::istringstream in(*text);
      std::string line;
      while (std::getline(in, line)) {
        std::istringstream words(line);
        std::string m;
        if (!(words >> m) || m[0] == '#') continue;
        if (NeedsIbCore(m)) {
          facts.ib_core_initramfs_evidence = "/etc/initramfs-tools/modules lists " + m;
          return;
        }
      }
    }
  }
  if (!dracut) return;
  std::vector<std::string> files = {"/etc/dracut.conf"};
  // In the order dracut sources them (its `*.conf` glob: bytewise in the C
  // locale; a later file overrides), not ListDir's natural order.
  std::vector<std::string> names = ListDirIfPresent(fs, "/etc/dracut.conf.d");
  std::sort(names.begin(), names.end());
  for (const std::string& n : names) {
    if (n.size() > 5 && n.compare(n.size() - 5, 5, ".conf") == 0) {
      files.push_back("/etc/dracut.conf.d/" + n);
    }
  }
  for (const std::string& f : files) {
    auto text = fs.ReadFile(f);
    if (!text.ok()) continue;
    std::istringstream in(*text);
    std::string line;
    while (std::getline(in, line)) {
      for (const char* key : {"add_drivers", "force_drivers", "drivers"}) {
        for (const std::string& m : DracutWords(line, key)) {
          if (NeedsIbCore(m)) {
            facts.ib_core_initramfs_evidence = f + ": " + key + " has " + m;
            return;
          }
        }
      }
      for (const std::string& m : DracutWords(line, "add_dracutmodules")) {
        if (m == "rdma") {
          facts.ib_core_initramfs_evidence = f + ": add_dracutmodules has rdma";
          return;
        }
      }
    }
  }
}

}  // namespace provisioner::rdma
