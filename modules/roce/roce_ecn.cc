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

std::string CnpPath(const std::string& ifname, const std::string& file) {
  return "/sys/class/net/" + ifname + "/ecn/" + kEcnNp + "/" + file;
}

StatusOr<std::optional<int>> ReadCnp(const HostFs& fs, const std::string& ifname,
                                     const std::string& file) {
  const std::string path = CnpPath(ifname, file);
  if (!fs.Exists(path)) return std::optional<int>();
  ASSIGN_OR_RETURN(std::string v, fs.ReadAttr(path));
  const int max = file == kCnpDscp ? 63 : 7;
  if (v.empty() || v.size() > 2 || v.find_first_not_of("0123456789") != std::string::npos ||
      std::stoi(v) > max) {
    return InvalidArgumentError(path + ": \"" + v + "\" is not a number 0.." + std::to_string(max));
  }
  return std::optional<int>(std::stoi(v));
}

Status WriteCnp(HostFs& fs, const std::string& ifname, const std::string& file, int value) {
  return fs.WriteAttr(CnpPath(ifname, file), std::to_string(value) + "\n")
      .WithContext("set " + file + " of " + ifname);
}

Status WriteEcn(HostFs& fs, const std::string& ifname, const std::string& point, int prio,
                bool on) {
  // With the newline, as `echo 1 >` writes it; a tree file then reads back
  // as sysfs prints it.
  return fs.WriteAttr(EcnPath(ifname, point, prio), on ? "1\n" : "0\n")
      .WithContext("set ECN " + point + " priority " + std::to_string(prio) + " of " + ifname);
}

}  // namespace provisioner
