#include "modules/firmware/firmware_tool.h"

#include <cerrno>
#include <utility>
#include <vector>

#include "engine/base/strings.h"
#include "engine/model/link_facts.h"
#include "modules/firmware/command.h"
#include "modules/firmware/firmware_reset.h"
#include "modules/firmware/mstconfig_query.h"

namespace provisioner {
namespace {

// What Said() trims off the end of mstconfig's output: line ends and spaces.
constexpr std::string_view kLineEnd = " \r\n";

// What mstconfig said, for an error message: its "-E-" lines, else the tail.
std::string Said(const CommandResult& r) {
  std::string said;
  for (const std::string* s : {&r.out, &r.err}) {
    size_t start = 0;
    while (start < s->size()) {
      size_t nl = s->find('\n', start);
      if (nl == std::string::npos) nl = s->size();
      std::string line = s->substr(start, nl - start);
      if (line.rfind("-E-", 0) == 0) said += (said.empty() ? "" : "; ") + TrimRight(line, kLineEnd);
      start = nl + 1;
    }
  }
  if (!said.empty()) return said;
  std::string all = TrimRight(r.out + r.err, kLineEnd);
  if (all.size() > 400) all = "..." + all.substr(all.size() - 400);
  return all.empty() ? "no output" : all;
}

class Mstconfig : public FirmwareTool {
 public:
  explicit Mstconfig(MstconfigOptions o) : o_(std::move(o)) {}
  std::string Source(const std::string&) const override { return o_.binary; }
  bool Available() const override { return !FindInPath(o_.binary).empty(); }

  StatusOr<std::string> Query(const std::string& device) override {
    return Run({o_.binary, "-e", "-d", device, "query"}, "query " + device);
  }

  Status Set(const std::string& device, const std::map<std::string, std::string>& params) override {
    std::vector<std::string> argv = {o_.binary, "-d", device, "-y", "set"};
    for (const auto& [name, value] : params) argv.push_back(name + "=" + value);
    return Run(argv, "set " + device).status();
  }

  Status ResetNvConfig(const std::string& device) override {
    return Run({o_.binary, "-d", device, "-y", "reset"}, "reset " + device).status();
  }

  std::string ResetSource(const std::string&) const override { return o_.reset_binary; }
  bool ResetAvailable() const override { return !FindInPath(o_.reset_binary).empty(); }

  StatusOr<std::string> ResetQuery(const std::string& device) override {
    return Run({o_.reset_binary, "-d", device, "query"}, "query " + device);
  }

  StatusOr<std::string> FlintQuery(const std::string& device) override {
    return Run({o_.flint_binary, "-d", device, "query"}, "query " + device);
  }
  bool FlintAvailable() const override { return !FindInPath(o_.flint_binary).empty(); }
  StatusOr<std::string> FlintImageQuery(const std::string& image) override {
    return Run({o_.flint_binary, "-i", image, "query"}, "query " + image);
  }
  // flint burn (subcommands.cpp BurnSubCommand, v4.36.0-1): exit 0 after
  // "Burning FW image without signatures - OK" (or "FW image is already
  // updated on flash"), 1 with "-E- ..." (PSID mismatch, cannot open).
  Status Burn(const std::string& device, const std::string& image) override {
    return Run({o_.flint_binary, "-d", device, "-i", image, "-y", "burn"}, "burn " + device,
               o_.burn_timeout)
        .status();
  }

  // mstfwreset: exit 0 "-I- FW was loaded successfully.", 1 "-E- ...".
  Status Reset(const std::string& device, const FirmwareResetMethod& method) override {
    return Run(FirmwareResetArgv(o_.reset_binary, device, method), "reset " + device,
               o_.reset_timeout)
        .status();
  }

 private:
  StatusOr<std::string> Run(const std::vector<std::string>& argv, const std::string& what) {
    return Run(argv, what, o_.timeout);
  }
  StatusOr<std::string> Run(const std::vector<std::string>& argv, const std::string& what,
                            std::chrono::milliseconds timeout) {
    auto r = RunCommand(argv, timeout);
    if (!r.ok()) {
      if (r.status().err() == ENOENT) {
        return Status(StatusCode::kFailedPrecondition,
                      argv[0] == o_.reset_binary   ? MstfwresetInstallHint()
                      : argv[0] == o_.flint_binary ? MstflintInstallHint()
                                                   : MstconfigInstallHint(),
                      ENOENT);
      }
      return r.status().WithContext(argv[0] + " " + what);
    }
    if (r->exit_code != 0) {
      // mstconfig: 0 ok, 2 aborted, 3 error ("-E- Failed to open the device");
      // mstfwreset: 1 error ("-E- Reset-level '3' is not supported ...").
      std::string cmd;
      for (const auto& a : argv) cmd += (cmd.empty() ? "" : " ") + a;
      return FailedPreconditionError(cmd + " exited " + std::to_string(r->exit_code) + ": " +
                                     Said(*r));
    }
    return r->out;
  }

  MstconfigOptions o_;
};

class Captured : public FirmwareTool {
 public:
  explicit Captured(HostFs& fs) : fs_(fs) {}
  std::string Source(const std::string& device) const override {
    return std::string(kMstconfigCapturePrefix) + device + ".query";
  }
  bool Available() const override { return true; }
  bool FromCapture() const override { return true; }

  StatusOr<std::string> Query(const std::string& device) override {
    auto text = fs_.ReadFile(Source(device));
    if (!text.ok()) return text.status().WithContext("read captured mstconfig query");
    return text;
  }

  // The card stores numbers; a value's name resolves as mstconfig would,
  // from the name alone or the value printed now ("ETH" with "ETH(2)").
  Status Set(const std::string& device, const std::map<std::string, std::string>& params) override {
    ASSIGN_OR_RETURN(std::string text, Query(device));
    ASSIGN_OR_RETURN(MstconfigQuery q, ParseMstconfigQuery(text));
    std::map<std::string, long> numbers;
    for (const auto& [name, value] : params) {
      auto p = q.params.find(name);
      if (p == q.params.end()) {
        return NotFoundError(Source(device) + " has no parameter " + name);
      }
      if (p->second.read_only) {  // as mstconfig refuses it
        return FailedPreconditionError(Source(device) + ": " + name +
                                       ": Operation is not supported (Read only TLV)");
      }
      auto n = ResolveMstconfigValue(name, p->second.next_boot, value);
      if (!n) {
        return InvalidArgumentError(Source(device) + ": " + name + "=" + Quote(value) +
                                    ": the number of that name is known to the card only (" + name +
                                    " reads " + p->second.next_boot + "); give the number");
      }
      numbers[name] = *n;
    }
    auto updated = SetNextBootValues(text, numbers);
    if (!updated.ok()) return updated.status().WithContext(Source(device));
    return fs_.WriteFileAtomic(Source(device), *updated, 0644)
        .WithContext("write " + Source(device));
  }

  // As `mstconfig reset`: the Next Boot column to the Default one.
  Status ResetNvConfig(const std::string& device) override {
    ASSIGN_OR_RETURN(std::string text, Query(device));
    auto updated = ResetNextBootToDefaults(text);
    if (!updated.ok()) return updated.status().WithContext(Source(device));
    return fs_.WriteFileAtomic(Source(device), *updated, 0644)
        .WithContext("write " + Source(device));
  }

  std::string ResetSource(const std::string& device) const override {
    return std::string(kMstfwresetCapturePrefix) + device + ".query";
  }

  std::string FlintSource(const std::string& device) const override {
    return std::string(kMstflintCapturePrefix) + device + ".query";
  }
  StatusOr<std::string> FlintQuery(const std::string& device) override {
    auto text = fs_.ReadFile(FlintSource(device));
    if (!text.ok()) return text.status().WithContext("read captured mstflint query");
    return text;
  }
  bool FlintAvailable() const override { return true; }
  // The stand-in image: a file of the tree (the image path read under the
  // root, as any file) whose content is what `mstflint -i <image> query`
  // prints for the real image.
  StatusOr<std::string> FlintImageQuery(const std::string& image) override {
    auto text = fs_.ReadFile(image);
    if (!text.ok()) return text.status().WithContext("read firmware image");
    return text;
  }
  // As the card: refused as flint refuses another PSID; else the image's
  // version is on the flash, and the running one stays until a reset
  // (mstflint then prints "FW Version(Running):").
  Status Burn(const std::string& device, const std::string& image) override {
    const std::string cmd = "mstflint -d " + device + " -i " + image + " -y burn";
    ASSIGN_OR_RETURN(std::string image_text, FlintImageQuery(image));
    auto img = ParseFlintQuery(image_text);
    if (!img.ok()) return img.status().WithContext(cmd + " exited 1: " + image);
    ASSIGN_OR_RETURN(std::string text, FlintQuery(device));
    ASSIGN_OR_RETURN(::provisioner::FlintQuery card, ParseFlintQuery(text));
    if (card.psid != img->psid) {
      return FailedPreconditionError(cmd + " exited 1: -E- PSID mismatch. Device PSID (" +
                                     card.psid + ") differs from image PSID (" + img->psid + ").");
    }
    const std::string running = card.running.empty() ? card.fw_version : card.running;
    return fs_
        .WriteFileAtomic(FlintSource(device), SetFlashedVersion(text, img->fw_version, running),
                         0644)
        .WithContext("write " + FlintSource(device));
  }
  bool ResetAvailable() const override { return true; }

  StatusOr<std::string> ResetQuery(const std::string& device) override {
    auto text = fs_.ReadFile(ResetSource(device));
    if (!text.ok()) return text.status().WithContext("read captured mstfwreset query");
    return text;
  }

  // As the card: refused as mstfwreset refuses (a <BDF>.refuse file holds
  // what it printed; a query without level 3), else the Current column
  // becomes the Next Boot one.
  Status Reset(const std::string& device, const FirmwareResetMethod& method) override {
    std::string cmd;
    for (const std::string& a : FirmwareResetArgv("mstfwreset", device, method)) {
      cmd += (cmd.empty() ? "" : " ") + a;
    }
    const std::string refuse = std::string(kMstfwresetCapturePrefix) + device + ".refuse";
    if (fs_.Exists(refuse)) {
      auto said = fs_.ReadFile(refuse);
      return FailedPreconditionError(cmd + " exited 1: " +
                                     (said.ok() ? TrimRight(*said, kLineEnd)
                                                : said.status().message()));
    }
    ASSIGN_OR_RETURN(std::string query, ResetQuery(device));
    ASSIGN_OR_RETURN(MstfwresetQuery q, ParseMstfwresetQuery(query));
    if (std::string why = ResetLevelRefusal(q); !why.empty()) {
      return FailedPreconditionError(cmd + " exited 1: -E- Reset-level '3' " +
                                     "is not supported in the current state of this device.");
    }
    // As mstfwreset refuses a sync the card does not list
    // (mstfwreset.py: "Requested reset sync '1' is not supported").
    if (method.sync && !ResetSyncSupported(q, *method.sync)) {
      return FailedPreconditionError(cmd + " exited 1: -E- Requested reset sync '" +
                                     std::to_string(*method.sync) + "' is not supported");
    }
    ASSIGN_OR_RETURN(std::string text, Query(device));
    auto updated = ActivateNextBootValues(text);
    if (!updated.ok()) return updated.status().WithContext(Source(device));
    RETURN_IF_ERROR(
        fs_.WriteFileAtomic(Source(device), *updated, 0644).WithContext("write " + Source(device)));
    // The flashed firmware runs now: no "FW Version(Running):" line.
    if (fs_.Exists(FlintSource(device))) {
      ASSIGN_OR_RETURN(std::string flint, FlintQuery(device));
      ASSIGN_OR_RETURN(::provisioner::FlintQuery q, ParseFlintQuery(flint));
      if (!q.running.empty()) {
        RETURN_IF_ERROR(fs_.WriteFileAtomic(FlintSource(device),
                                            SetFlashedVersion(flint, q.fw_version, q.fw_version),
                                            0644)
                            .WithContext("write " + FlintSource(device)));
      }
    }
    return OkStatus();
  }

 private:
  HostFs& fs_;
};

}  // namespace

std::string MstconfigInstallHint() {
  return "mstconfig (mstflint) is not installed: install it (apt install mstflint) so that the "
         "firmware configuration can be read and set";
}

std::string MstfwresetInstallHint() {
  return "mstfwreset (mstflint) is not installed: install it (apt install mstflint) so that the "
         "firmware can be reset instead of rebooting the host";
}

std::string MstflintInstallHint() {
  return "mstflint is not installed: install it (apt install mstflint) so that the firmware "
         "version can be read and burned";
}

std::unique_ptr<FirmwareTool> NewMstconfigTool(MstconfigOptions options) {
  return std::make_unique<Mstconfig>(std::move(options));
}

std::unique_ptr<FirmwareTool> NewCapturedFirmwareTool(HostFs& fs) {
  return std::make_unique<Captured>(fs);
}

}  // namespace provisioner
