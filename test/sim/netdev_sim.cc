#include "test/sim/netdev_sim.h"

#include <cerrno>
#include <cstdlib>

#include "engine/base/strings.h"

namespace provisioner::testing {
namespace {

// kstrtoul(buf, 0, ...): one optional trailing newline, digits in base 0.
bool ParseUnsigned(std::string_view value, unsigned long* out) {
  std::string text(value);
  if (!text.empty() && text.back() == '\n') text.pop_back();
  if (text.empty() || text.front() == '-' || text.front() == '+' || text.front() == ' ') {
    return false;
  }
  char* end = nullptr;
  errno = 0;
  *out = std::strtoul(text.c_str(), &end, 0);
  return errno == 0 && end != nullptr && *end == '\0';
}

}  // namespace

bool IsVfNetdevDir(const TreeWriter& w, const std::string& dir) {
  const std::string_view net = Dirname(dir);
  if (Basename(net) != "net") return false;
  return w.Exists(std::string(Dirname(net)) + "/physfn");
}

int VfNetdevCheckMtu(const TreeWriter& w, const std::string& dir, std::string_view value,
                     int* out) {
  unsigned long mtu = 0;
  if (!ParseUnsigned(value, &mtu) || mtu > 0x7fffffff) return EINVAL;
  if (mtu < 68 || mtu > static_cast<unsigned long>(kSimVfMaxMtu)) return EINVAL;
  // The PF's netdev: <VF>/physfn/net/<first>.
  const std::string vf(Dirname(Dirname(dir)));
  for (const std::string& n : w.List(vf + "/physfn/net")) {
    auto pf_mtu = w.ReadAttr(vf + "/physfn/net/" + n + "/mtu");
    if (pf_mtu.ok() && mtu > std::strtoul(pf_mtu->c_str(), nullptr, 10)) return EINVAL;
    break;
  }
  *out = static_cast<int>(mtu);
  return 0;
}

int VfNetdevSetMtu(TreeWriter& w, const std::string& dir, std::string_view value) {
  int mtu = 0;
  if (int err = VfNetdevCheckMtu(w, dir, value, &mtu); err != 0) return err;
  if (!w.WriteFile(dir + "/mtu", std::to_string(mtu) + "\n", 0644).ok()) return EIO;
  return 0;
}

}  // namespace provisioner::testing
