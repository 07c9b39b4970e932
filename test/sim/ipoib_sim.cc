#include "test/sim/ipoib_sim.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include "engine/base/strings.h"
#include "engine/model/ipoib_facts.h"
#include "modules/ipoib/ipoib_backend.h"

namespace provisioner::testing {
namespace {

// sscanf("%i"): decimal, 0x hex or 0 octal, leading space and sign allowed.
bool ScanInt(std::string_view value, long* out) {
  std::string text(value);
  return std::sscanf(text.c_str(), "%li", out) == 1;
}

int ReadNumber(const TreeWriter& w, const std::string& path, int fallback) {
  auto v = w.ReadAttr(path);
  if (!v.ok()) return fallback;
  return static_cast<int>(std::strtol(v->c_str(), nullptr, 0));
}

std::string Parent(const std::string& dir) { return std::string(Dirname(dir)); }

// The child of `dir`'s netdev with P_Key `pkey`, or "".
std::string ChildWithPkey(const TreeWriter& w, const std::string& dir, int pkey) {
  const std::string name(Basename(dir));
  for (const std::string& n : w.List(Parent(dir))) {
    const std::string d = Parent(dir) + "/" + n;
    if (w.ReadAttr(d + "/parent").value_or("") != name) continue;
    if (ReadNumber(w, d + "/pkey", -1) == pkey) return n;
  }
  return "";
}

}  // namespace

int IpoibCreateChild(TreeWriter& w, const std::string& dir, std::string_view value) {
  long pkey = 0;
  if (!ScanInt(value, &pkey) || pkey <= 0 || pkey > 0xffff || pkey == kPkeyFullMember) {
    return EINVAL;
  }
  if (ReadNumber(w, dir + "/pkey", -1) == pkey ||
      !ChildWithPkey(w, dir, static_cast<int>(pkey)).empty()) {
    return ENOTUNIQ;
  }
  const std::string parent(Basename(dir));
  NetdevSpec n;
  n.name = IpoibChildName(parent, static_cast<int>(pkey));
  if (w.Exists("/sys/class/net/" + n.name)) return ENOTUNIQ;  // register_netdev: EEXIST
  n.type = kArphrdInfiniband;
  n.mac = w.ReadAttr(dir + "/address").value_or("");
  n.mtu = std::min(ReadNumber(w, dir + "/mtu", 2044), kIpoibDatagramMaxMtu);
  n.operstate = "down";
  // The PCI function: <dev_dir>/net/<parent>.
  const std::string dev_dir = Parent(Parent(dir));
  if (!AddNetdev(w, n, dev_dir).ok()) return EIO;
  const std::string d = dev_dir + "/net/" + n.name;
  (void)w.WriteFile(d + "/pkey", PkeyText(static_cast<int>(pkey)) + "\n");
  (void)w.WriteFile(d + "/parent", parent + "\n");
  // Only the PF's interface has create_child/delete_child.
  (void)w.RemoveAll(d + "/create_child");
  (void)w.RemoveAll(d + "/delete_child");
  return 0;
}

int IpoibDeleteChild(TreeWriter& w, const std::string& dir, std::string_view value) {
  long pkey = 0;
  if (!ScanInt(value, &pkey) || pkey < 0 || pkey > 0xffff) return EINVAL;
  const std::string child = ChildWithPkey(w, dir, static_cast<int>(pkey));
  if (child.empty()) return ENODEV;
  (void)w.RemoveAll(Parent(dir) + "/" + child);
  (void)w.RemoveAll("/sys/class/net/" + child);
  // Its addresses go with the netdev (the tree's stand-in for rtnetlink).
  auto captured = w.ReadFile(kIpoibAddressCapture);
  if (captured.ok()) {
    auto all = ParseIpoibAddresses(*captured);
    if (all.erase(child) > 0) {
      if (all.empty()) {
        (void)w.RemoveAll(kIpoibAddressCapture);
      } else {
        (void)w.WriteFile(kIpoibAddressCapture, RenderIpoibAddresses(all), 0644);
      }
    }
  }
  return 0;
}

int IpoibSetMode(TreeWriter& w, const std::string& dir, std::string_view value,
                 const std::string& old_mode) {
  if (value != "connected\n" && value != "datagram\n") return EINVAL;
  const std::string mode(TrimRight(value));
  if (mode == old_mode) return 0;
  const int mtu = ReadNumber(w, dir + "/mtu", 2044);
  if (mode == "connected") {
    const std::string address = w.ReadAttr(dir + "/address").value_or("00");
    if ((std::strtol(address.substr(0, 2).c_str(), nullptr, 16) & 0x80) == 0) return EINVAL;
    (void)w.WriteFile(dir + "/mtu", std::to_string(kIpoibConnectedMaxMtu) + "\n", 0644);
  } else {
    (void)w.WriteFile(dir + "/mtu", std::to_string(std::min(mtu, kIpoibDatagramMaxMtu)) + "\n",
                      0644);
  }
  (void)w.WriteFile(dir + "/mode", mode + "\n", 0644);
  return 0;
}

}  // namespace provisioner::testing
