#include "modules/roce/roce_ecn.h"

namespace provisioner {

std::string EcnPath(const std::string& ifname, const std::string& point, int prio) {
  return "/sys/class/net/" + ifname + "/ecn/" + point + "/enable/" + std::to_string(prio);
}

bool HasEcn(const HostFs& fs, const std::string& ifname) {
  return fs.IsDir("/sys/class/net/" + ifname + "/ecn");
}

StatusOr<bool> ReadEcnOne(const HostFs& fs, const std::string& ifname, const std::string& point,
                          int prio) {
  const std::string path = EcnPath(ifname, point, prio);
  ASSIGN_OR_RETURN(std::string v, fs.ReadAttr(path));
  if (v == "0") return false;
  if (v == "1") return true;
  return InvalidArgumentError(path + ": \"" + v + "\" is not 0 or 1");
}

StatusOr<std::map<int, bool>> ReadEcn(const HostFs& fs, const std::string& ifname,
                                      const std::string& point) {
  std::map<int, bool> out;
  for (int p = 0; p < 8; ++p) {
    if (!fs.Exists(EcnPath(ifname, point, p))) continue;
    ASSIGN_OR_RETURN(out[p], ReadEcnOne(fs, ifname, point, p));
  }
  return out;
}

Status WriteEcn(HostFs& fs, const std::string& ifname, const std::string& point, int prio,
                bool on) {
  // With the newline, as `echo 1 >` writes it; a tree file then reads back
  // as sysfs prints it.
  return fs.WriteAttr(EcnPath(ifname, point, prio), on ? "1\n" : "0\n")
      .WithContext("set ECN " + point + " priority " + std::to_string(prio) + " of " + ifname);
}

}  // namespace provisioner
