// The capture format, the tree backend and the factory of eswitch_backend.h.
#include <cerrno>

#include "engine/host/capture_file.h"
#include "modules/eswitch/eswitch_backend.h"
#include "nlohmann/json.hpp"

namespace provisioner {
namespace {

using nlohmann::json;

class TreeDevlink final : public DevlinkBackend {
 public:
  explicit TreeDevlink(HostFs& fs) : fs_(fs) {}
  std::string Name() const override { return "capture"; }

  StatusOr<DevlinkState> Read(const std::string& bdf) override {
    if (bdf.empty() || bdf.find('/') != std::string::npos || bdf[0] == '.') {
      return InvalidArgumentError("bad PCI address " + bdf);
    }
    if (!fs_.Exists("/sys/bus/pci/devices/" + bdf)) {
      return Status(StatusCode::kNotFound,
                    "/sys/bus/pci/devices/" + bdf + ": ENODEV: no such devlink device", ENODEV);
    }
    return ReadParsedCapture(fs_, DevlinkCapturePath(bdf), "devlink E-Switch mode of " + bdf,
                             "provisioner snapshot writes it from devlink", ParseDevlinkCapture);
  }

  Status SetMode(const std::string& bdf, const std::string& mode) override {
    if (mode != kEswitchLegacy && mode != kEswitchSwitchdev) {
      return InvalidArgumentError("E-Switch mode must be legacy or switchdev, not " + mode);
    }
    ASSIGN_OR_RETURN(DevlinkState s, Read(bdf));
    if (s.mode == mode) return OkStatus();
    s.mode = mode;
    return Write(bdf, s, "set E-Switch mode " + mode);
  }

  Status SetParam(const std::string& bdf, const std::string& name,
                  const std::string& value) override {
    ASSIGN_OR_RETURN(DevlinkState s, Read(bdf));
    if (name != kFlowSteeringParam || !s.flow_steering_mode) {
      // As devlink answers a param the device does not register.
      return Status(StatusCode::kInvalidArgument,
                    DevlinkCapturePath(bdf) + ": EINVAL: pci/" + bdf + " has no param " + name,
                    EINVAL);
    }
    if (*s.flow_steering_mode == value) return OkStatus();
    s.flow_steering_mode = value;
    return Write(bdf, s, "set devlink param " + name + " " + value);
  }

  Status SetHwTcOffload(const std::string& bdf, const std::string& ifname) override {
    ASSIGN_OR_RETURN(DevlinkState s, Read(bdf));
    if (!fs_.Exists("/sys/class/net/" + ifname)) {
      return Status(StatusCode::kNotFound, "/sys/class/net/" + ifname + ": ENODEV: no such netdev",
                    ENODEV);
    }
    if (s.hw_tc_offload == true) return OkStatus();
    s.hw_tc_offload = true;
    return Write(bdf, s, "hw-tc-offload on for " + ifname);
  }

 private:
  Status Write(const std::string& bdf, const DevlinkState& s, const std::string& what) {
    return fs_.WriteFileAtomic(DevlinkCapturePath(bdf), RenderDevlinkCapture(s))
        .WithContext(what + " of pci/" + bdf);
  }

  HostFs& fs_;
};

}  // namespace

std::string DevlinkCapturePath(const std::string& bdf) { return "/run/provisioner/devlink/" + bdf; }

std::string RenderDevlinkCapture(const DevlinkState& s) {
  json j = {{"mode", s.mode}};
  if (s.flow_steering_mode) j["flowSteeringMode"] = *s.flow_steering_mode;
  if (s.hw_tc_offload) j["hwTcOffload"] = *s.hw_tc_offload;
  return j.dump() + "\n";
}

StatusOr<DevlinkState> ParseDevlinkCapture(const std::string& text) {
  ASSIGN_OR_RETURN(json j,
                   ParseCaptureObject(text, "devlink", "{\"mode\":\"legacy\"|\"switchdev\", ...}",
                                      {"mode", "flowSteeringMode", "hwTcOffload"}));
  DevlinkState s;
  auto mode = j.find("mode");
  if (mode == j.end() || !mode->is_string() ||
      (*mode != kEswitchLegacy && *mode != kEswitchSwitchdev)) {
    return InvalidArgumentError("\"mode\" must be \"legacy\" or \"switchdev\"");
  }
  s.mode = mode->get<std::string>();
  if (auto f = j.find("flowSteeringMode"); f != j.end()) {
    if (!f->is_string() || (*f != "dmfs" && *f != "smfs" && *f != "hmfs")) {
      return InvalidArgumentError("\"flowSteeringMode\" must be \"dmfs\", \"smfs\" or \"hmfs\"");
    }
    s.flow_steering_mode = f->get<std::string>();
  }
  if (auto h = j.find("hwTcOffload"); h != j.end()) {
    if (!h->is_boolean()) return InvalidArgumentError("\"hwTcOffload\" must be true or false");
    s.hw_tc_offload = h->get<bool>();
  }
  return s;
}

std::unique_ptr<DevlinkBackend> NewTreeDevlinkBackend(HostFs& fs) {
  return std::make_unique<TreeDevlink>(fs);
}

}  // namespace provisioner
