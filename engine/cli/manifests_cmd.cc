// provisioner manifests FILE|DIR... [--root DIR | --roots DIR] [--helm-values FILE]
// One host.yaml, or a fleet: several files (a directory stands for its
// *.yaml/*.yml files), rendered one by one and merged (engine/manifests/
// fleet.h). Each host's discovered tree: --root for one host, --roots DIR for
// a fleet (DIR/<metadata.name>, e.g. the output of `provisioner snapshot`).
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "engine/base/fd_io.h"
#include "engine/base/strings.h"
#include "engine/cli/commands.h"
#include "engine/core/session.h"
#include "engine/host/host_fs.h"
#include "engine/manifests/fleet.h"
#include "engine/manifests/manifests.h"
#include "engine/output/render.h"
#include "spdlog/spdlog.h"

namespace provisioner::cli {
namespace {

// manifests --output-dir: each file written as a temporary of a random name
// (O_CREAT|O_EXCL|O_NOFOLLOW) in the directory, then renamed over its name,
// both relative to the directory's descriptor. A link planted in the
// directory under a manifest's name is replaced, never followed, and a
// reader never sees half a file. The directory's *.yaml files this run did
// not write (an earlier run's, for a name no longer emitted) go to `*stale`:
// `kubectl apply -f DIR` would apply them too.
Status WriteOutputDir(const std::vector<manifests::Manifest>& ms, const std::string& dir,
                      std::ostream& out, std::vector<std::string>* stale) {
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST)
    return ErrnoToStatus(errno, "mkdir " + dir);
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) return ErrnoToStatus(errno, "open " + dir);
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{dfd};
  const std::vector<std::string> names = manifests::ManifestFileNames(ms);
  for (size_t i = 0; i < ms.size(); ++i) {
    const std::string path = dir + "/" + names[i];
    const std::string text = JsonToYaml(ms[i].doc);
    std::string tmp;
    int fd = -1;
    for (int attempt = 0; attempt < 16 && fd < 0; ++attempt) {
      tmp = "." + names[i] + ".tmp-" + RandomFileSuffix();
      fd = ::openat(dfd, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
      if (fd < 0 && errno != EEXIST) break;
    }
    if (fd < 0) return ErrnoToStatus(errno, "write " + path + " (temporary file)");
    int e = WriteAll(fd, text);
    if (e == 0 && ::fsync(fd) != 0) e = errno;
    if (::close(fd) != 0 && e == 0) e = errno;
    if (e == 0 && ::renameat(dfd, tmp.c_str(), dfd, names[i].c_str()) != 0) e = errno;
    if (e != 0) {
      ::unlinkat(dfd, tmp.c_str(), 0);
      return ErrnoToStatus(e, "write " + path);
    }
    out << path << "\n";
  }
  const int list_fd = ::dup(dfd);
  DIR* d = list_fd < 0 ? nullptr : ::fdopendir(list_fd);
  if (d == nullptr) {
    if (list_fd >= 0) ::close(list_fd);
    return OkStatus();
  }
  std::vector<std::string> found;
  while (struct dirent* ent = ::readdir(d)) {
    const std::string n = ent->d_name;
    if (n.empty() || n[0] == '.' || n.size() < 5 || n.compare(n.size() - 5, 5, ".yaml") != 0)
      continue;
    if (std::find(names.begin(), names.end(), n) == names.end()) found.push_back(dir + "/" + n);
  }
  ::closedir(d);
  std::sort(found.begin(), found.end(),
            [](const std::string& a, const std::string& b) { return NaturalLess(a, b); });
  stale->insert(stale->end(), found.begin(), found.end());
  return OkStatus();
}

void PrintError(const std::string& message) {
  std::fprintf(stderr, "provisioner: error: %s\n", message.c_str());
}

bool IsDir(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool HasYamlSuffix(const std::string& name) {
  auto ends = [&](const char* s) {
    const size_t n = std::strlen(s);
    return name.size() > n && name.compare(name.size() - n, n, s) == 0;
  };
  return ends(".yaml") || ends(".yml");
}

// FILE arguments with each directory replaced by its *.yaml/*.yml files
// (in natural order of name, not recursive).
std::optional<std::vector<std::string>> ExpandFiles(const std::vector<std::string>& args) {
  std::vector<std::string> out;
  for (const auto& arg : args) {
    if (!IsDir(arg)) {
      out.push_back(arg);
      continue;
    }
    DIR* dir = ::opendir(arg.c_str());
    if (dir == nullptr) {
      PrintError(arg + ": " + std::strerror(errno));
      return std::nullopt;
    }
    std::vector<std::string> names;
    while (dirent* e = ::readdir(dir)) {
      std::string name = e->d_name;
      if (name[0] != '.' && HasYamlSuffix(name)) names.push_back(name);
    }
    ::closedir(dir);
    // Natural order, as every list a person reads: node2.yaml before node10.yaml.
    std::sort(names.begin(), names.end(),
              [](const std::string& a, const std::string& b) { return NaturalLess(a, b); });
    if (names.empty()) {
      PrintError(arg + ": no *.yaml or *.yml host files in this directory");
      return std::nullopt;
    }
    for (const auto& n : names) out.push_back(arg + (arg.back() == '/' ? "" : "/") + n);
  }
  return out;
}

// A problem with host.yaml's field (the one that needs --root, at the start
// of `message`): printed as diagnostics are, "host.yaml:14:7:
// spec.nics[0].nicSelector.nearGpu: ...", for editors and CI annotations;
// "provisioner: error: LABEL: ..." when the message names no field of it.
void PrintAtField(const std::string& file, const std::string& label, const MarkIndex& marks,
                  const std::string& message) {
  const std::string path = message.substr(0, message.find_first_of(": "));
  const SourceMark m = path.rfind("spec.", 0) == 0 ? marks.Find(path) : SourceMark{};
  if (m.line > 0) {
    std::fprintf(stderr, "%s:%d:%d: %s\n", file.c_str(), m.line, m.column, message.c_str());
  } else {
    PrintError(label + ": " + message);
  }
}

// One host: load, discover its tree when there is one, render.
std::optional<manifests::HostRender> RenderHost(const CommonOptions& opt, const std::string& file,
                                                bool fleet) {
  auto desired = LoadOrReport(file);
  if (!desired) return std::nullopt;
  const std::string label = fleet ? desired->name + " (" + file + ")" : file;
  std::optional<HostFacts> facts;
  CommonOptions host_opt = opt;
  bool have_root = opt.root_given;
  if (!opt.roots_dir.empty()) {
    host_opt.root = opt.roots_dir + "/" + desired->name;
    if (!IsDir(host_opt.root)) {
      PrintError(label + ": no discovered tree at " + host_opt.root +
                 " (--roots DIR holds one directory per host, named by metadata.name)");
      return std::nullopt;
    }
    have_root = true;
  }
  if (have_root) {
    facts = DiscoverHost(host_opt);
    if (!facts) return std::nullopt;
    if (!ExpandRailsForHost(file, *facts, &*desired)) return std::nullopt;
  }
  if (desired->rails_need_gpu_count) {
    PrintAtField(file, label, desired->marks,
                 "spec.rails.count is allGpus: give --root DIR (the host, or a snapshot of "
                 "it; --roots DIR for a fleet) to count the GPUs");
    return std::nullopt;
  }
  manifests::ManifestOptions options;
  options.flavor = opt.flavor;
  options.with_test_workload = opt.with_test_workload;
  options.facts = facts ? &*facts : nullptr;
  if (facts) {
    // The node's health label: doctor's checks over the same facts.
    manifests::DoctorSummary doctor;
    for (const CheckResult& r : CheckHost(&*desired, *facts)) {
      ++doctor.checks;
      if (r.verdict == Verdict::kFail) ++doctor.failed;
      if (r.verdict == Verdict::kWarn) ++doctor.warnings;
    }
    options.doctor = doctor;
  }
  auto out = manifests::BuildHostManifests(*desired, options);
  if (!out.ok()) {
    PrintAtField(file, label, desired->marks, out.status().message());
    return std::nullopt;
  }
  return manifests::HostRender{desired->name + " (" + file + ")", std::move(out).value()};
}

}  // namespace

int RunManifests(const CommonOptions& opt) {
  std::vector<std::string> args = opt.files;
  if (args.empty() && !opt.file.empty()) args.push_back(opt.file);
  auto files = ExpandFiles(args);
  if (!files) return kExitError;
  const bool fleet = files->size() > 1;
  if (fleet && opt.root_given) {
    PrintError("--root is one host's tree; for " + std::to_string(files->size()) +
               " hosts give --roots DIR (DIR/<metadata.name> per host)");
    return kExitError;
  }
  if (opt.root_given && !opt.roots_dir.empty()) {
    PrintError("--root and --roots: give one of them");
    return kExitError;
  }
  std::vector<manifests::HostRender> hosts;
  hosts.reserve(files->size());
  bool failed = false;
  for (const auto& file : *files) {
    auto out = RenderHost(opt, file, fleet);
    if (!out) {
      failed = true;  // every host's problems are reported, then exit 1
      continue;
    }
    hosts.push_back(std::move(*out));
  }
  if (failed) return kExitError;
  auto merged = manifests::MergeHosts(std::move(hosts));
  if (!merged.ok()) {
    PrintError(merged.status().message());
    return kExitError;
  }
  for (const auto& w : merged->warnings) {
    spdlog::warn("{}", w);
  }
  if (!opt.helm_values_out.empty()) {
    if (opt.flavor != "spiderpool") {
      PrintError("--helm-values: the Spiderpool chart's values go with --flavor spiderpool");
      return kExitError;
    }
    std::ofstream f(opt.helm_values_out, std::ios::trunc);
    f << manifests::HelmValuesHeader(*merged, opt.helm_values_out);
    f << (merged->helm_values.empty() ? std::string("{}\n") : JsonToYaml(merged->helm_values));
    f.close();
    if (!f) {
      PrintError("write " + opt.helm_values_out + ": " + std::strerror(errno));
      return kExitError;
    }
  }
  if (opt.output_dir.empty()) {
    std::cout << manifests::RenderManifests(merged->manifests);
    return kExitOk;
  }
  std::vector<std::string> stale;
  Status s = WriteOutputDir(merged->manifests, opt.output_dir, std::cout, &stale);
  if (!s.ok()) {
    PrintError(s.message());
    return kExitError;
  }
  for (const std::string& f : stale) {
    spdlog::warn(
        "{} was not written by this run (an earlier run's?); kubectl apply -f {} would apply it "
        "too: remove it if it is not yours",
        f, opt.output_dir);
  }
  return kExitOk;
}

}  // namespace provisioner::cli
