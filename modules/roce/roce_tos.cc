#include "modules/roce/roce_tos.h"

#include <cctype>
#include <sstream>

#include "engine/base/strings.h"

namespace provisioner {
namespace {

constexpr char kTcSuffix[] = "/traffic_class";
constexpr char kCmSuffix[] = "/default_roce_tos";

bool SafeName(const std::string& s) {
  if (s.empty() || s.size() > 64 || s == "." || s == "..") return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.') {
      return false;
    }
  }
  return true;
}

bool SmallNumber(const std::string& s) {
  return !s.empty() && s.size() <= 3 && s.find_first_not_of("0123456789") == std::string::npos;
}

// 0..255 as the kernel parses it here (decimal only: we never write other bases).
std::optional<int> Byte(const std::string& s) {
  if (!SmallNumber(s)) return std::nullopt;
  const int v = std::stoi(s);
  if (v > 255) return std::nullopt;
  return v;
}

bool IsTrafficClass(const std::string& path) {
  return path.rfind("/sys/class/infiniband/", 0) == 0;
}

}  // namespace

std::string TrafficClassPath(const std::string& rdma_device, int port) {
  return "/sys/class/infiniband/" + rdma_device + "/tc/" + std::to_string(port) + kTcSuffix;
}

std::string RdmaCmDevicePath(const std::string& rdma_device) {
  return std::string(kRdmaCmConfigfs) + "/" + rdma_device;
}

std::string RdmaCmTosPath(const std::string& rdma_device, int port) {
  return RdmaCmDevicePath(rdma_device) + "/ports/" + std::to_string(port) + kCmSuffix;
}

std::string TosFile(const HostFs& fs, const std::string& rdma_device, int port) {
  if (!SafeName(rdma_device) || port < 1) return "";
  const std::string tc = TrafficClassPath(rdma_device, port);
  if (fs.Exists(tc)) return tc;
  const std::string cm = RdmaCmTosPath(rdma_device, port);
  if (fs.Exists(cm)) return cm;
  // configfs mounted and rdma_cm loaded, no directory for the device yet:
  // apply makes it (the kernel then makes the port's file).
  if (fs.IsDir(kRdmaCmConfigfs) && !fs.Exists(RdmaCmDevicePath(rdma_device))) return cm;
  return "";
}

std::string RdmaCmDirToMake(const HostFs& fs, const std::string& tos_file) {
  if (tos_file.rfind(std::string(kRdmaCmConfigfs) + "/", 0) != 0) return "";
  const size_t end = tos_file.find('/', sizeof(kRdmaCmConfigfs));
  if (end == std::string::npos) return "";
  const std::string dir = tos_file.substr(0, end);
  return fs.Exists(dir) ? "" : dir;
}

bool IsRdmaCmDevicePath(const std::string& path) {
  const std::string prefix = std::string(kRdmaCmConfigfs) + "/";
  return path.rfind(prefix, 0) == 0 && SafeName(path.substr(prefix.size()));
}

namespace {

class LiveRdmaCm final : public RdmaCmConfigfs {
 public:
  explicit LiveRdmaCm(HostFs& fs) : fs_(fs) {}
  Status MakeDevice(const std::string& dev) override {
    if (!SafeName(dev)) return InvalidArgumentError("bad RDMA device name " + dev);
    return fs_.MakeDir(RdmaCmDevicePath(dev))
        .WithContext("make the rdma_cm configfs directory of " + dev);
  }
  Status RemoveDevice(const std::string& dev) override {
    if (!SafeName(dev)) return InvalidArgumentError("bad RDMA device name " + dev);
    return fs_.RemoveDir(RdmaCmDevicePath(dev))
        .WithContext("remove the rdma_cm configfs directory of " + dev);
  }

 private:
  HostFs& fs_;
};

// What make_cma_dev does, in the tree: ENODEV without such an RDMA device,
// ports/<n>/{default_roce_mode,default_roce_tos} for each of its ports.
class TreeRdmaCm final : public RdmaCmConfigfs {
 public:
  explicit TreeRdmaCm(HostFs& fs) : fs_(fs) {}
  Status MakeDevice(const std::string& dev) override {
    if (!SafeName(dev)) return InvalidArgumentError("bad RDMA device name " + dev);
    const std::string dir = RdmaCmDevicePath(dev);
    auto ports = fs_.ListDir("/sys/class/infiniband/" + dev + "/ports");
    if (!ports.ok()) {
      return Status(StatusCode::kNotFound, "mkdir " + dir + ": ENODEV: no RDMA device " + dev,
                    ENODEV);
    }
    RETURN_IF_ERROR(fs_.MakeDir(dir));
    for (const std::string& p : *ports) {
      if (!SmallNumber(p)) continue;
      const std::string port = dir + "/ports/" + p;
      RETURN_IF_ERROR(fs_.WriteFileAtomic(port + "/default_roce_mode", "RoCE v2\n"));
      RETURN_IF_ERROR(fs_.WriteFileAtomic(port + kCmSuffix, "0\n"));
    }
    return OkStatus();
  }
  Status RemoveDevice(const std::string& dev) override {
    if (!SafeName(dev)) return InvalidArgumentError("bad RDMA device name " + dev);
    const std::string dir = RdmaCmDevicePath(dev);
    if (auto ports = fs_.ListDir(dir + "/ports"); ports.ok()) {
      for (const std::string& p : *ports) {
        const std::string port = dir + "/ports/" + p;
        RETURN_IF_ERROR(fs_.RemoveFile(port + "/default_roce_mode"));
        RETURN_IF_ERROR(fs_.RemoveFile(port + kCmSuffix));
        RETURN_IF_ERROR(fs_.RemoveDir(port));
      }
      RETURN_IF_ERROR(fs_.RemoveDir(dir + "/ports"));
    }
    return fs_.RemoveDir(dir);
  }

 private:
  HostFs& fs_;
};

}  // namespace

std::unique_ptr<RdmaCmConfigfs> NewLiveRdmaCmConfigfs(HostFs& fs) {
  return std::make_unique<LiveRdmaCm>(fs);
}

std::unique_ptr<RdmaCmConfigfs> NewTreeRdmaCmConfigfs(HostFs& fs) {
  return std::make_unique<TreeRdmaCm>(fs);
}

bool IsTosPath(const std::string& path) {
  std::vector<std::string> parts;
  std::stringstream in(path);
  std::string part;
  while (std::getline(in, part, '/')) parts.push_back(part);
  // "", sys, class, infiniband, <dev>, tc, <port>, traffic_class
  if (parts.size() == 8 && parts[0].empty() && parts[1] == "sys" && parts[2] == "class" &&
      parts[3] == "infiniband" && SafeName(parts[4]) && parts[5] == "tc" && SmallNumber(parts[6]) &&
      parts[7] == "traffic_class") {
    return true;
  }
  // "", sys, kernel, config, rdma_cm, <dev>, ports, <port>, default_roce_tos
  return parts.size() == 9 && parts[0].empty() && parts[1] == "sys" && parts[2] == "kernel" &&
         parts[3] == "config" && parts[4] == "rdma_cm" && SafeName(parts[5]) &&
         parts[6] == "ports" && SmallNumber(parts[7]) && parts[8] == "default_roce_tos";
}

StatusOr<std::optional<int>> ReadTos(const HostFs& fs, const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, fs.ReadFile(path));
  if (!IsTrafficClass(path)) {
    if (auto v = Byte(Trim(text))) return std::optional<int>(*v);
    return InvalidArgumentError(path + ": \"" + Trim(text) + "\" is not a ToS 0..255");
  }
  // "Global tclass=<n>" first when set; rule lines (",tclass=<n>" at their
  // end) are per destination and not ours.
  // Under a tree root without the kernel simulator the file holds what
  // apply wrote, the kernel's input ("106", "-1"): read as that value.
  if (auto v = Byte(Trim(text))) return std::optional<int>(*v);
  if (Trim(text) == "-1") return std::optional<int>();
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    const std::string l = Trim(line);
    const std::string prefix = "Global tclass=";
    if (l.rfind(prefix, 0) != 0) continue;
    if (auto v = Byte(l.substr(prefix.size()))) return std::optional<int>(*v);
    return InvalidArgumentError(path + ": \"" + l + "\" is not \"Global tclass=<0..255>\"");
  }
  return std::optional<int>();
}

Status WriteTos(HostFs& fs, const std::string& path, std::optional<int> tos) {
  if (!tos && !IsTrafficClass(path)) {
    return InvalidArgumentError(path + ": rdma_cm's default_roce_tos cannot be unset");
  }
  return fs.WriteAttr(path, (tos ? std::to_string(*tos) : std::string("-1")) + "\n")
      .WithContext("set the default RoCE ToS in " + path);
}

}  // namespace provisioner
