// The sysfs backend of link_backend.h.
#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include "engine/base/strings.h"
#include "modules/link/link_backend.h"

namespace provisioner {
namespace {

constexpr unsigned kIffUp = 0x1;

std::string Dir(const std::string& ifname) { return "/sys/class/net/" + ifname; }

StatusOr<long> ReadNumber(HostFs& fs, const std::string& path, int base) {
  ASSIGN_OR_RETURN(std::string text, fs.ReadAttr(path));
  char* end = nullptr;
  errno = 0;
  long v = std::strtol(text.c_str(), &end, base);
  if (end == text.c_str() || *end != '\0' || errno != 0) {
    return InvalidArgumentError(path + ": " + Quote(text) + " is not a number");
  }
  return v;
}

class Sysfs : public LinkBackend {
 public:
  explicit Sysfs(HostFs& fs) : fs_(fs) {}
  std::string Name() const override { return "sysfs"; }

  StatusOr<LinkFacts> Read(const std::string& ifname) override {
    RETURN_IF_ERROR(CheckNetdevInTree(fs_, ifname));
    LinkFacts f;
    f.name = ifname;
    ASSIGN_OR_RETURN(long mtu, ReadNumber(fs_, Dir(ifname) + "/mtu", 10));
    ASSIGN_OR_RETURN(long flags, ReadNumber(fs_, Dir(ifname) + "/flags", 16));
    f.mtu = static_cast<int>(mtu);
    f.admin_up = (static_cast<unsigned long>(flags) & kIffUp) != 0;
    if (auto op = fs_.ReadAttr(Dir(ifname) + "/operstate"); op.ok()) f.operstate = *op;
    return f;
  }

  Status SetMtu(const std::string& ifname, int mtu) override {
    if (!IsValidIfname(ifname)) return InvalidArgumentError("bad interface name " + ifname);
    // With the newline, as `echo` writes it: the kernel accepts it, and a
    // tree file then reads back as sysfs prints it.
    return fs_.WriteAttr(Dir(ifname) + "/mtu", std::to_string(mtu) + "\n")
        .WithContext("set mtu " + std::to_string(mtu) + " on " + ifname);
  }

  Status SetUp(const std::string& ifname, bool up) override {
    if (!IsValidIfname(ifname)) return InvalidArgumentError("bad interface name " + ifname);
    const std::string path = Dir(ifname) + "/flags";
    ASSIGN_OR_RETURN(long flags, ReadNumber(fs_, path, 16));
    unsigned long want =
        up ? (static_cast<unsigned long>(flags) | kIffUp)
           : (static_cast<unsigned long>(flags) & ~static_cast<unsigned long>(kIffUp));
    if (want == static_cast<unsigned long>(flags)) return OkStatus();
    char buf[32];
    std::snprintf(buf, sizeof buf, "0x%lx\n", want);
    return fs_.WriteAttr(path, buf).WithContext(std::string("set ") + ifname +
                                                (up ? " up" : " down"));
  }

 private:
  HostFs& fs_;
};

}  // namespace

bool IsValidIfname(const std::string& name) {
  if (name.empty() || name.size() > 15 || name == "." || name == "..") return false;
  for (char c : name) {
    if (c == '/' || c == ':' || c <= ' ' || c == 0x7f) return false;
  }
  return true;
}

Status CheckNetdevInTree(const HostFs& fs, const std::string& ifname) {
  if (!IsValidIfname(ifname)) return InvalidArgumentError("bad interface name " + ifname);
  if (!fs.Exists(Dir(ifname))) {
    return Status(StatusCode::kNotFound, Dir(ifname) + ": ENODEV: no such netdev", ENODEV);
  }
  return OkStatus();
}

std::unique_ptr<LinkBackend> NewSysfsLinkBackend(HostFs& fs) { return std::make_unique<Sysfs>(fs); }

}  // namespace provisioner
