// Reading and setting a card's firmware configuration. The live root runs
// mstflint's `mstconfig`; under a tree root the query output is a captured
// file (kMstconfigCapturePrefix/<BDF>.query, read and written through
// HostFs), and a set rewrites its Next Boot values: the stand-in for the
// card, as the kernel simulator is for sysfs.
#ifndef PROVISIONER_MODULES_FIRMWARE_FIRMWARE_TOOL_H_
#define PROVISIONER_MODULES_FIRMWARE_FIRMWARE_TOOL_H_

#include <chrono>
#include <map>
#include <memory>
#include <string>

#include "engine/base/status.h"
#include "engine/host/host_fs.h"
#include "modules/firmware/firmware_reset.h"

namespace provisioner {

class FirmwareTool {
 public:
  virtual ~FirmwareTool() = default;
  // "mstconfig" or the capture file's host path, for messages and facts.
  virtual std::string Source(const std::string& device) const = 0;
  // False when the tool is not installed (live root without mstflint).
  virtual bool Available() const = 0;
  // The text of `mstconfig -e -d <device> query`.
  virtual StatusOr<std::string> Query(const std::string& device) = 0;
  // `mstconfig -d <device> -y set NAME=VALUE ...`: next-boot values, each a
  // number or the name of a value ("2", "ETH", "true").
  virtual Status Set(const std::string& device,
                     const std::map<std::string, std::string>& params) = 0;
  // `mstconfig -d <device> -y reset`: every parameter to its default for
  // the next boot.
  // (Defaults here: a tool that cannot, for test doubles.)
  virtual Status ResetNvConfig(const std::string& device) {
    return FailedPreconditionError("cannot reset the NV configuration of " + device);
  }
  // mstfwreset ("mstfwreset" or the capture's host path), and whether it is
  // installed.
  virtual std::string ResetSource(const std::string&) const { return "mstfwreset"; }
  virtual bool ResetAvailable() const { return false; }
  // The text of `mstfwreset -d <device> query`.
  virtual StatusOr<std::string> ResetQuery(const std::string& device) {
    return FailedPreconditionError("cannot query the firmware reset of " + device);
  }
  // `mstfwreset -d <device> -y -l 3 [--sync N] [--skip_driver] reset`
  // (FirmwareResetArgv of `method`): the firmware reloads, the Next Boot
  // configuration becomes the running one. An error quotes the tool's "-E-"
  // lines. Unbinding the PFs first (kUnbindFirst) is the caller's.
  virtual Status Reset(const std::string& device, const FirmwareResetMethod& method) {
    (void)method;
    return FailedPreconditionError("cannot reset the firmware of " + device);
  }
  // The text of `mstflint -d <device> query` (nics[].firmwareVersion).
  virtual std::string FlintSource(const std::string&) const { return "mstflint"; }
  virtual StatusOr<std::string> FlintQuery(const std::string& device) {
    return FailedPreconditionError("cannot query the firmware version of " + device);
  }
  // False when mstflint is not installed (live root).
  virtual bool FlintAvailable() const { return false; }
  // The text of `mstflint -i <image> query` (policy update): the image's
  // FW Version and PSID. `image` is a host path.
  virtual StatusOr<std::string> FlintImageQuery(const std::string& image) {
    return FailedPreconditionError("cannot query the firmware image " + image);
  }
  // `mstflint -d <device> -i <image> -y burn`: the image on the card's flash,
  // running after a firmware reset or a reboot. Not reversible.
  virtual Status Burn(const std::string& device, const std::string& image) {
    return FailedPreconditionError("cannot burn " + image + " on " + device);
  }
  // True when the answers are capture files (the tree's stand-in), false
  // when a command asks the card: discovery then names a missing capture
  // instead of querying, shows no progress step for reading a file, and
  // hands nothing to `snapshot` (a command's answer it does).
  virtual bool FromCapture() const { return false; }
};

struct MstconfigOptions {
  std::string binary = "mstconfig";  // looked up in PATH
  std::string reset_binary = "mstfwreset";
  std::string flint_binary = "mstflint";
  // A reset reloads the firmware and waits for the device (minutes on a
  // BlueField; mstfwreset's own waits are up to 2 minutes on a ConnectX).
  std::chrono::milliseconds reset_timeout{std::chrono::minutes(5)};
  // A burn writes the whole flash (a few minutes on a ConnectX-7).
  std::chrono::milliseconds burn_timeout{std::chrono::minutes(20)};
  std::chrono::milliseconds timeout{std::chrono::seconds(60)};
};

std::unique_ptr<FirmwareTool> NewMstconfigTool(MstconfigOptions options = {});
std::unique_ptr<FirmwareTool> NewCapturedFirmwareTool(HostFs& fs);
// The one factory (firmware_tool_factory.cc): mstconfig for the live root,
// the captured queries under a tree root.
std::unique_ptr<FirmwareTool> NewFirmwareTool(HostFs& fs);

// "mstconfig (mstflint) is not installed ...: apt install mstflint".
std::string MstconfigInstallHint();
// "mstfwreset (mstflint) is not installed ...".
std::string MstfwresetInstallHint();
// "mstflint is not installed ...".
std::string MstflintInstallHint();

}  // namespace provisioner

#endif  // PROVISIONER_MODULES_FIRMWARE_FIRMWARE_TOOL_H_
