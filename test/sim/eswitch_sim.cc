#include "test/sim/eswitch_sim.h"

#include <cerrno>
#include <cstdlib>
#include <set>

#include "engine/base/strings.h"
#include "modules/eswitch/eswitch_backend.h"

namespace provisioner::testing {
namespace {

constexpr std::string_view kPrefix = "/run/provisioner/devlink/";

bool IsRepresentorPortName(const std::string& name) {
  // pf<N>vf<M>
  if (name.rfind("pf", 0) != 0) return false;
  const size_t vf = name.find("vf");
  return vf != std::string::npos && vf > 2;
}

std::string PfNetdev(const TreeWriter& w, const std::string& pf_dir) {
  for (const std::string& n : w.List(pf_dir + "/net")) {
    const std::string ppn = Trim(w.ReadAttr(pf_dir + "/net/" + n + "/phys_port_name").value_or(""));
    if (!IsRepresentorPortName(ppn)) return n;
  }
  return "";
}

std::string SwitchId(const std::string& bdf) {
  // Both ports of a card share one E-Switch id in the kernel only with a
  // LAG; per PF here: stable hex from the address.
  uint64_t h = 1469598103934665603ULL;
  for (char c : bdf) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
  char buf[17];
  snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

}  // namespace

bool IsDevlinkCapture(std::string_view path) {
  return path.size() > kPrefix.size() && path.compare(0, kPrefix.size(), kPrefix) == 0 &&
         path.find('/', kPrefix.size()) == std::string_view::npos;
}

std::string RepresentorName(const std::string& pf_netdev, int pf_func, int vf) {
  std::string base = pf_netdev;
  // udev's path name carries the PF's phys_port_name as "n<name>": the PF's
  // "np0" becomes the representor's "npf0vf<i>".
  const size_t np = base.rfind("np");
  if (np != std::string::npos && np + 2 < base.size() &&
      base.find_first_not_of("0123456789", np + 2) == std::string::npos) {
    base.resize(np);
  }
  return base + "npf" + std::to_string(pf_func) + "vf" + std::to_string(vf);
}

Status EswitchSyncRepresentors(TreeWriter& w, const std::string& pf_dir) {
  const std::string bdf(Basename(pf_dir));
  auto text = w.ReadFile(std::string(kPrefix) + bdf);
  bool switchdev = false;
  if (text.ok()) {
    auto s = ParseDevlinkCapture(*text);
    switchdev = s.ok() && s->mode == kEswitchSwitchdev;
  }
  const int num_vfs =
      switchdev ? std::atoi(w.ReadAttr(pf_dir + "/sriov_numvfs").value_or("0").c_str()) : 0;
  const std::string pf_netdev = PfNetdev(w, pf_dir);
  const int func = bdf.empty() ? 0 : bdf.back() - '0';
  std::set<std::string> want;
  for (int i = 0; i < num_vfs; ++i)
    want.insert("pf" + std::to_string(func) + "vf" + std::to_string(i));
  // Remove the representors no longer wanted.
  for (const std::string& n : w.List(pf_dir + "/net")) {
    const std::string ppn = Trim(w.ReadAttr(pf_dir + "/net/" + n + "/phys_port_name").value_or(""));
    if (!IsRepresentorPortName(ppn)) continue;
    if (want.erase(ppn) > 0) continue;  // exists and wanted
    RETURN_IF_ERROR(w.RemoveAll(pf_dir + "/net/" + n));
    RETURN_IF_ERROR(w.RemoveAll("/sys/class/net/" + n));
  }
  const std::string switch_id = SwitchId(bdf);
  if (!pf_netdev.empty()) {
    const std::string f = pf_dir + "/net/" + pf_netdev + "/phys_switch_id";
    if (switchdev) {
      RETURN_IF_ERROR(w.WriteFile(f, switch_id + "\n"));
    } else if (w.Exists(f)) {
      RETURN_IF_ERROR(w.RemoveAll(f));
    }
  }
  for (const std::string& ppn : want) {
    const int vf = std::atoi(ppn.c_str() + ppn.find("vf") + 2);
    NetdevSpec n;
    n.name = pf_netdev.empty() ? "" : RepresentorName(pf_netdev, func, vf);
    if (n.name.empty() || n.name.size() > 15 || w.Exists("/sys/class/net/" + n.name)) {
      n.name = "eth" + std::to_string(100 + vf);
    }
    n.pci = bdf;
    n.mac = "00:00:00:00:00:00";
    n.operstate = "down";
    n.phys_port_name = ppn;
    RETURN_IF_ERROR(AddNetdev(w, n, pf_dir));
    RETURN_IF_ERROR(w.WriteFile(pf_dir + "/net/" + n.name + "/phys_switch_id", switch_id + "\n"));
  }
  return OkStatus();
}

int EswitchCaptureCheck(const TreeWriter& w, const std::string& bdf, std::string_view old_content,
                        std::string_view content) {
  auto want = ParseDevlinkCapture(std::string(content));
  if (!want.ok()) return EINVAL;
  auto real = w.RealPath("/sys/bus/pci/devices/" + bdf);
  if (!real.ok() || !w.Exists(*real)) return ENODEV;
  const std::string pf_dir = *real;
  DevlinkState now;
  if (auto parsed = ParseDevlinkCapture(std::string(old_content)); parsed.ok()) now = *parsed;
  const std::string driver(Basename(w.ReadLink(pf_dir + "/driver")));
  const int num_vfs = std::atoi(w.ReadAttr(pf_dir + "/sriov_numvfs").value_or("0").c_str());
  if (driver == "ice" && want->mode != now.mode && num_vfs > 0) return EOPNOTSUPP;
  if (driver == "mlx5_core" && now.mode == kEswitchSwitchdev &&
      want->flow_steering_mode != now.flow_steering_mode) {
    return EOPNOTSUPP;
  }
  return 0;
}

int EswitchCaptureWrite(TreeWriter& w, const std::string& bdf, std::string_view content) {
  const std::string path = std::string(kPrefix) + bdf;
  const std::string old = w.ReadFile(path).value_or("");
  if (int err = EswitchCaptureCheck(w, bdf, old, content); err != 0) return err;
  if (!w.WriteFile(path, std::string(content), 0644).ok()) return EIO;
  auto real = w.RealPath("/sys/bus/pci/devices/" + bdf);
  return real.ok() && EswitchSyncRepresentors(w, *real).ok() ? 0 : EIO;
}

}  // namespace provisioner::testing
