// The tree backend of names_backend.h.
#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include "modules/names/names_backend.h"

namespace provisioner {
namespace {

constexpr unsigned long kIffUp = 0x1;

// A request nothing answers: the tree has no kernel simulator behind it.
Status Explain(Status s) {
  if (s.err() != ENOENT) return s;
  return Status(s.code(),
                s.message() +
                    ": nothing under this tree root renames devices (only the "
                    "kernel simulator answers rename requests)",
                ENOENT);
}

class Tree : public NamesBackend {
 public:
  explicit Tree(HostFs& fs) : fs_(fs) {}
  std::string Name() const override { return "tree"; }

  Status RenameNetdev(const std::string& from, const std::string& to) override {
    const std::string flags_path = "/sys/class/net/" + from + "/flags";
    ASSIGN_OR_RETURN(std::string text, fs_.ReadAttr(flags_path));
    const unsigned long flags = std::strtoul(text.c_str(), nullptr, 16);
    const bool was_up = (flags & kIffUp) != 0;
    if (was_up) RETURN_IF_ERROR(WriteFlags(from, flags & ~kIffUp).WithContext("down " + from));
    Status s = Explain(fs_.WriteAttr(kNetdevRenameRequests + from, to + "\n"))
                   .WithContext("rename netdev " + from + " to " + to);
    if (!s.ok()) {
      if (was_up) (void)WriteFlags(from, flags);  // back as it was
      return s;
    }
    if (was_up) RETURN_IF_ERROR(WriteFlags(to, flags).WithContext("up " + to + " after rename"));
    return OkStatus();
  }

  Status RenameRdma(const std::string& from, const std::string& to) override {
    return Explain(fs_.WriteAttr(kRdmaRenameRequests + from, to + "\n"))
        .WithContext("rename RDMA device " + from + " to " + to);
  }

 private:
  Status WriteFlags(const std::string& ifname, unsigned long flags) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "0x%lx\n", flags);
    return fs_.WriteAttr("/sys/class/net/" + ifname + "/flags", buf);
  }
  HostFs& fs_;
};

}  // namespace

std::unique_ptr<NamesBackend> NewTreeNamesBackend(HostFs& fs) { return std::make_unique<Tree>(fs); }

}  // namespace provisioner
