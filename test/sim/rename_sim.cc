#include "test/sim/rename_sim.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "engine/base/strings.h"
#include "engine/host/host_fs.h"

namespace provisioner::testing {
namespace {

// The new name as written: one trailing newline allowed (as `echo` writes).
std::string NameOf(std::string_view value) {
  std::string s(value);
  if (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

// dev_valid_name (net/core/dev.c).
bool ValidNetdevName(const std::string& n) {
  if (n.empty() || n.size() >= 16 || n == "." || n == "..") return false;
  for (char c : n) {
    if (c == '/' || c == ':' || std::isspace(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

bool Move(const TreeWriter& w, const std::string& from, const std::string& to) {
  std::error_code ec;
  std::filesystem::rename(w.Fs(from), w.Fs(to), ec);
  return !ec;
}

// Rewrites `path` when its content (less trailing whitespace) is `old_text`.
void Replace(TreeWriter& w, const std::string& path, const std::string& old_text,
             const std::string& new_text) {
  auto v = w.ReadAttr(path);
  if (v.ok() && *v == old_text) (void)w.WriteFile(path, new_text + "\n", 0444);
}

}  // namespace

int RenameNetdev(TreeWriter& w, const std::string& old_name, std::string_view value) {
  const std::string name = NameOf(value);
  const std::string link = "/sys/class/net/" + old_name;
  if (old_name.empty() || !w.Exists(link)) return ENODEV;
  if (!ValidNetdevName(name)) return EINVAL;
  auto dir = w.RealPath(link);
  if (!dir.ok()) return ENODEV;
  const long flags = std::strtol(w.ReadAttr(*dir + "/flags").value_or("0").c_str(), nullptr, 16);
  if ((flags & 0x1) != 0) return EBUSY;  // IFF_UP, no IFF_LIVE_RENAME_OK on these drivers
  if (name == old_name) return 0;
  if (w.Exists("/sys/class/net/" + name)) return EEXIST;
  const std::string new_dir = std::string(Dirname(*dir)) + "/" + name;
  if (!Move(w, *dir, new_dir)) return EIO;
  (void)w.RemoveAll(link);
  if (!w.Link("/sys/class/net/" + name, new_dir).ok()) return EIO;
  // What the kernel prints from dev->name.
  auto uevent = w.ReadFile(new_dir + "/uevent");
  if (uevent.ok()) {
    std::string text = *uevent;
    const std::string key = "INTERFACE=" + old_name + "\n";
    if (auto at = text.find(key); at != std::string::npos) {
      text.replace(at, key.size(), "INTERFACE=" + name + "\n");
      (void)w.WriteFile(new_dir + "/uevent", text, 0644);
    }
  }
  for (const std::string& n : w.List("/sys/class/net")) {
    Replace(w, "/sys/class/net/" + n + "/parent", old_name, name);  // IPoIB children
  }
  for (const std::string& ib : w.List("/sys/class/infiniband")) {
    const std::string ports = "/sys/class/infiniband/" + ib + "/ports";
    for (const std::string& p : w.List(ports)) {
      const std::string ndevs = ports + "/" + p + "/gid_attrs/ndevs";
      for (const std::string& i : w.List(ndevs)) Replace(w, ndevs + "/" + i, old_name, name);
    }
  }
  // The roce module's capture of the netdev's DCB state goes with it.
  const std::string dcb = "/run/provisioner/dcb/";
  if (w.Exists(dcb + old_name)) (void)Move(w, dcb + old_name, dcb + name);
  return 0;
}

int RenameRdmaDevice(TreeWriter& w, const std::string& old_name, std::string_view value) {
  const std::string name = NameOf(value);
  const std::string link = "/sys/class/infiniband/" + old_name;
  if (old_name.empty() || !w.Exists(link)) return ENODEV;
  // nla_strscpy into char[IB_DEVICE_NAME_MAX]; an empty result is EINVAL,
  // and kobject names cannot hold '/'.
  if (name.empty() || name.size() >= 64 || name.find('/') != std::string::npos) return EINVAL;
  if (name == old_name) return 0;
  if (w.Exists("/sys/class/infiniband/" + name)) return EEXIST;
  auto dir = w.RealPath(link);
  if (!dir.ok()) return ENODEV;
  const std::string dev_dir(Dirname(Dirname(*dir)));
  const std::string new_dir = dev_dir + "/infiniband/" + name;
  if (!Move(w, *dir, new_dir)) return EIO;
  (void)w.RemoveAll(link);
  if (!w.Link("/sys/class/infiniband/" + name, new_dir).ok()) return EIO;
  Replace(w, new_dir + "/uevent", "NAME=" + old_name, "NAME=" + name);
  for (const std::string& u : w.List(dev_dir + "/infiniband_verbs")) {
    Replace(w, dev_dir + "/infiniband_verbs/" + u + "/ibdev", old_name, name);
  }
  return 0;
}

}  // namespace provisioner::testing
