#include "modules/firmware/firmware_module.h"

#include <cctype>
#include <cerrno>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "engine/host/parallel_reads.h"
#include "engine/model/pci_address.h"
#include "engine/model/selector.h"
#include "engine/module/clock.h"
#include "engine/module/registry.h"
#include "modules/firmware/firmware_planner.h"
#include "modules/firmware/firmware_reset.h"
#include "modules/firmware/mstconfig_query.h"
#include "spdlog/spdlog.h"

namespace provisioner {
namespace {

// mstconfig queries run at once: one per card (hosts have up to 16 or so).
constexpr size_t kMaxParallelQueries = 32;

// query(0..n-1), one per card. On the live root every card at once, each on
// its own thread (the tools take about a second per card: they wait, they do
// not compute), after the progress line `step` (none when empty); a tree's
// captured files are read one after the other, as any file.
void QueryCards(size_t n, bool live, HostContext& ctx, const std::string& step,
                const std::function<void(size_t)>& query) {
  if (!live) {
    for (size_t i = 0; i < n; ++i) query(i);
    return;
  }
  if (ctx.progress && n > 0 && !step.empty()) ctx.progress->Step(step);
  ForEachIndexWaiting(n, kMaxParallelQueries, query);
}

bool IsParam(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!std::isupper(static_cast<unsigned char>(c)) &&
        !std::isdigit(static_cast<unsigned char>(c)) && c != '_') {
      return false;
    }
  }
  return true;
}

// The target goes into mstconfig's argv and a file name as it is: a PCI
// address in the full form only.
Status CheckChangeShape(const Change& c) {
  const bool special = c.attribute == kNvConfigAttribute || c.attribute == kActivateAttribute ||
                       c.attribute == kBurnAttribute;
  if (c.module != kFirmwareModule || !PciAddress::ParseFull(c.target) ||
      (!special && !IsParam(c.attribute))) {
    return InvalidArgumentError("module firmware cannot apply " + c.id);
  }
  return OkStatus();
}

}  // namespace

std::unique_ptr<FirmwareTool> FirmwareModule::Tool(HostFs& fs) const {
  if (options_.tool) return options_.tool(fs);
  return NewFirmwareTool(fs);
}

Status FirmwareModule::Discover(HostContext& ctx, HostFacts& facts) {
  std::unique_ptr<FirmwareTool> tool = Tool(*ctx.fs);
  std::vector<std::string> cards;
  for (const PciFunction& f : facts.pci) {
    // ConnectX PFs only: mstconfig configures the card through function .0.
    if (f.IsVf() || !f.IsNetwork() || f.vendor != "15b3") continue;
    const std::string dev = FirmwareDevice(f.pci_address);
    if (!PciAddress::ParseFull(dev)) continue;  // goes into argv and a file name, as in CheckChange
    if (!f.netdevs.empty()) {
      auto type = ctx.fs->ReadAttr("/sys/bus/pci/devices/" + f.pci_address + "/net/" +
                                   f.netdevs.front() + "/type");
      std::string running = !type.ok() ? "" : *type == "32" ? "ib" : *type == "1" ? "eth" : "";
      if (!running.empty()) {
        facts.firmware[dev].running_link_types[FirmwarePort(f.pci_address)] = running;
      }
    }
    FirmwareFacts& fw = facts.firmware[dev];
    if (!fw.source.empty()) continue;  // card already listed (its other port)
    fw.source = tool->Source(dev);
    fw.unread = true;  // until ReadCards
    cards.push_back(dev);
  }
  // For a plan, DiscoverForPlan reads the cards its nics ask about, once the
  // facts it selects them by (sriov, topology) are there.
  if (ctx.plan_for == nullptr) {
    ReadCards(*tool, cards, ctx, facts);
    // discover and doctor: each card's firmware version and PSID (`mstflint
    // -d <card> query`; under a tree root the captures it holds).
    for (const std::string& dev : cards) facts.firmware[dev].flint_read = true;
    ReadFlint(*tool, cards, /*only_captured=*/true, ctx, facts);
  }
  return OkStatus();
}

// `mstflint -d <card> query` of each card (at once, as the mstconfig
// queries). With `only_captured` (discover) a tree's card without a capture
// and a live host without mstflint are left unread (flint_read false), not
// an error: discovery reports what it can.
void FirmwareModule::ReadFlint(FirmwareTool& tool, const std::vector<std::string>& cards,
                               bool only_captured, HostContext& ctx, HostFacts& facts) {
  const bool live = !tool.FromCapture();
  std::vector<std::string> ask;
  for (const std::string& dev : cards) {
    FirmwareFacts& fw = facts.firmware[dev];
    fw.flint_source = tool.FlintSource(dev);
    if (only_captured && (live ? !tool.FlintAvailable() : !ctx.fs->Exists(tool.FlintSource(dev)))) {
      fw.flint_read = false;
      fw.flint_source.clear();
      continue;
    }
    ask.push_back(dev);
  }
  std::vector<std::optional<StatusOr<std::string>>> got(ask.size());
  QueryCards(ask.size(), live, ctx, "mstflint query " + std::to_string(ask.size()) + " card(s)",
             [&](size_t i) { got[i].emplace(tool.FlintQuery(ask[i])); });
  for (size_t i = 0; i < ask.size(); ++i) {
    FirmwareFacts& fw = facts.firmware[ask[i]];
    if (!got[i]->ok()) {
      fw.flint_error = got[i]->status().message();
      continue;
    }
    // `snapshot` writes it where a tree root's discovery reads it.
    if (live) {
      ctx.fs->NoteCapture(std::string(kMstflintCapturePrefix) + ask[i] + ".query", **got[i]);
    }
    auto q = ParseFlintQuery(**got[i]);
    if (!q.ok()) {
      fw.flint_error = q.status().WithContext(tool.FlintSource(ask[i])).message();
    } else {
      fw.fw_version = q->fw_version;
      fw.fw_running = q->running;
      fw.psid = q->psid;
    }
  }
}

// policy update: `mstflint -i <image> query` of each image a card's nics
// name. The image is a host path: read under the root like any file (a
// tree holds the stand-in: the text the query prints); a missing or
// unreadable image is an error naming the host path and errno.
void FirmwareModule::ReadImages(FirmwareTool& tool,
                                const std::map<std::string, std::set<std::string>>& images,
                                HostContext& ctx, HostFacts& facts) {
  std::map<std::string, FirmwareFacts::Image> read;  // one query per image
  for (const auto& [dev, paths] : images) {
    for (const std::string& path : paths) {
      auto done = read.find(path);
      if (done == read.end()) {
        FirmwareFacts::Image img;
        if (path.empty() || path[0] != '/') {
          img.error = "the firmware image " + path + " is not an absolute host path";
        } else if (!ctx.fs->Exists(path)) {
          // stat through the host layer: ENOENT (the only reason Exists is false
          // but for a broken link, which mstflint could not open either).
          img.error = "the firmware image " + path +
                      " cannot be opened: No such file or directory (errno " +
                      std::to_string(ENOENT) + ", ENOENT)";
        } else if (!tool.FlintAvailable()) {
          img.error = MstflintInstallHint();
        } else {
          if (ctx.progress && !tool.FromCapture())
            ctx.progress->Step("mstflint -i " + path + " query");
          auto text = tool.FlintImageQuery(path);
          if (!text.ok()) {
            img.error =
                "the firmware image " + path + " cannot be read: " + text.status().message();
          } else if (auto q = ParseFlintQuery(*text); !q.ok()) {
            img.error = "the firmware image " + path + " is not one mstflint reads (mstflint -i " +
                        path + " query): " + q.status().message();
          } else {
            img.fw_version = q->fw_version;
            img.psid = q->psid;
          }
        }
        done = read.emplace(path, img).first;
      }
      facts.firmware[dev].images[path] = done->second;
    }
  }
}

Status FirmwareModule::DiscoverForPlan(const DesiredState& desired, HostContext& ctx,
                                       HostFacts& facts) {
  std::vector<std::string> cards;
  for (const std::string& dev : FirmwareCardsToRead(desired, facts)) {
    auto it = facts.firmware.find(dev);
    // Not a ConnectX card: the planner says so.
    if (it != facts.firmware.end() && it->second.unread) cards.push_back(dev);
  }
  std::unique_ptr<FirmwareTool> tool = Tool(*ctx.fs);
  if (!cards.empty()) ReadCards(*tool, cards, ctx, facts);
  // nics[].firmwareVersion: `mstflint -d <card> query` of their cards, and
  // for policy update `mstflint -i <image> query` of the images they name.
  std::vector<std::string> flint_cards;
  std::map<std::string, std::set<std::string>> images;  // card -> images
  for (const NicSpec& nic : desired.nics) {
    if (!nic.firmware_version) continue;
    for (const PciFunction* pf : SelectPfs(nic, facts)) {
      const std::string dev = FirmwareDevice(pf->pci_address);
      auto it = facts.firmware.find(dev);
      if (it == facts.firmware.end()) continue;
      if (nic.firmware_version->policy == "update" && nic.firmware_version->image) {
        images[dev].insert(*nic.firmware_version->image);
      }
      if (it->second.flint_read) continue;
      it->second.flint_read = true;
      flint_cards.push_back(dev);
    }
  }
  ReadFlint(*tool, flint_cards, /*only_captured=*/false, ctx, facts);
  ReadImages(*tool, images, ctx, facts);
  if (desired.firmware && desired.firmware->activation == "reset") {
    std::vector<std::string> reset_cards;
    for (const std::string& dev : FirmwareCardsToRead(desired, facts)) {
      auto it = facts.firmware.find(dev);
      if (it != facts.firmware.end() && !it->second.reset_read) reset_cards.push_back(dev);
    }
    ReadResetCapability(*tool, reset_cards, ctx, facts);
  }
  return OkStatus();
}

// `mstfwreset -d <card> query` of each card (at once, as the mstconfig
// queries): whether level 3 is supported; why not, else.
void FirmwareModule::ReadResetCapability(FirmwareTool& tool, const std::vector<std::string>& cards,
                                         HostContext& ctx, HostFacts& facts) {
  const bool live = !tool.FromCapture();
  std::vector<std::optional<StatusOr<std::string>>> got(cards.size());
  auto query = [&](size_t i) {
    if (!tool.ResetAvailable()) return;
    if (!live && !ctx.fs->Exists(tool.ResetSource(cards[i]))) return;
    got[i].emplace(tool.ResetQuery(cards[i]));
  };
  QueryCards(
      cards.size(), live, ctx,
      tool.ResetAvailable() ? "mstfwreset query " + std::to_string(cards.size()) + " card(s)" : "",
      query);
  for (size_t i = 0; i < cards.size(); ++i) {
    FirmwareFacts& fw = facts.firmware[cards[i]];
    fw.reset_read = true;
    if (!tool.ResetAvailable()) {
      fw.reset_refused = MstfwresetInstallHint();
    } else if (!got[i]) {
      fw.reset_refused = "no captured query " + tool.ResetSource(cards[i]) + " in the tree";
    } else if (!got[i]->ok()) {
      fw.reset_refused = got[i]->status().message();
    } else {
      fw.reset_query = **got[i];
      if (live) {
        ctx.fs->NoteCapture(std::string(kMstfwresetCapturePrefix) + cards[i] + ".query",
                            fw.reset_query);
      }
      auto q = ParseMstfwresetQuery(fw.reset_query);
      fw.reset_refused = q.ok() ? ResetLevelRefusal(*q) : q.status().message();
    }
  }
}

void FirmwareModule::ReadCards(FirmwareTool& tool, const std::vector<std::string>& cards,
                               HostContext& ctx, HostFacts& facts) {
  const bool live = !tool.FromCapture();
  std::vector<std::string> ask;  // cards whose answer is not known yet
  for (const std::string& dev : cards) {
    FirmwareFacts& fw = facts.firmware[dev];
    fw.unread = false;
    if (!tool.Available()) {
      fw.tool_missing = true;
      fw.error = MstconfigInstallHint();
    } else if (!live && !ctx.fs->Exists(fw.source)) {
      // No root in the message: facts of a snapshot equal the original's.
      fw.error = "no captured query " + fw.source +
                 " in the tree (capture it with: " + "mstconfig -e -d " + dev + " query > <root>" +
                 fw.source + ")";
    } else if (!live || answers_.count(dev) == 0) {
      ask.push_back(dev);
    }
  }
  std::vector<std::optional<StatusOr<std::string>>> got(ask.size());
  std::string list;
  for (const std::string& dev : ask) list += (list.empty() ? "" : ", ") + dev;
  QueryCards(ask.size(), live, ctx, "mstconfig query " + list,
             [&](size_t i) { got[i].emplace(tool.Query(ask[i])); });
  std::map<std::string, StatusOr<std::string>> read;  // a tree's, for this discovery only
  for (size_t i = 0; i < ask.size(); ++i) {
    (live ? answers_ : read).insert_or_assign(ask[i], std::move(*got[i]));
  }
  for (const std::string& dev : cards) {
    FirmwareFacts& fw = facts.firmware[dev];
    if (!fw.error.empty()) continue;
    const StatusOr<std::string>& text = live ? answers_.at(dev) : read.at(dev);
    if (!text.ok()) {
      // A missing fact, not a discovery failure: plan reports it where a
      // change needs the firmware.
      fw.error = text.status().message();
      spdlog::debug("firmware {}: {}", dev, fw.error);
      continue;
    }
    // `snapshot` writes it where a tree root's discovery reads it.
    if (live) ctx.fs->NoteCapture(std::string(kMstconfigCapturePrefix) + dev + ".query", *text);
    fw.raw_query = *text;
    auto q = ParseMstconfigQuery(*text);
    if (!q.ok()) {
      fw.error = q.status().WithContext(fw.source).message();
    } else {
      fw.device_type = q->device_type;
      fw.params = std::move(q->params);
    }
  }
}

void FirmwareModule::Plan(const DesiredState& desired, const HostFacts& facts,
                          PlanSink& sink) const {
  const size_t from = sink.changes().size();
  PlanFirmware(desired, facts, sink);
  // One card's settings in order; cards at once (each `mstconfig set` is
  // about a second, and takes effect at the next boot: nothing live needs it).
  for (size_t i = from; i < sink.changes().size(); ++i) {
    sink.changes()[i].resource = "card:" + sink.changes()[i].target;
  }
}

namespace {

// Every PF of the card to 0 VFs (as sriov-network-operator's MlxResetFW),
// waiting until the kernel removed them: the reset reloads the driver, which
// must not hold VFs that pods may use.
Status RemoveVfs(const Change& change, HostContext& ctx) {
  Clock& clock = ctx.clock != nullptr ? *ctx.clock : RealClock();
  if (!change.detail.is_object() || !change.detail.contains("pfs") ||
      !change.detail["pfs"].is_array()) {
    return InvalidArgumentError(change.id + ": detail.pfs (the card's PFs) missing");
  }
  for (const auto& j : change.detail["pfs"]) {
    if (!j.is_string() || !PciAddress::ParseFull(j.get<std::string>())) {
      return InvalidArgumentError(change.id + ": detail.pfs holds " + j.dump() +
                                  ", not a PCI address");
    }
    const std::string dir = "/sys/bus/pci/devices/" + j.get<std::string>();
    auto n = ctx.fs->ReadAttr(dir + "/sriov_numvfs");
    if (!n.ok() || *n == "0") continue;  // no SR-IOV, or none
    if (ctx.progress) ctx.progress->Step("0 VFs on " + j.get<std::string>() + " (had " + *n + ")");
    RETURN_IF_ERROR(ctx.fs->WriteAttr(dir + "/sriov_numvfs", "0")
                        .WithContext("remove the VFs of " + j.get<std::string>() +
                                     " before the firmware reset"));
    const auto deadline = clock.Now() + ctx.settle_timeout;
    for (;;) {
      bool any = false;
      for (const std::string& e : ListDirIfPresent(*ctx.fs, dir)) {
        any = any || e.rfind("virtfn", 0) == 0;
      }
      if (!any) break;
      if (clock.Now() >= deadline) {
        return DeadlineExceededError(j.get<std::string>() +
                                     ": VFs still present after writing 0 to sriov_numvfs");
      }
      clock.SleepFor(std::chrono::milliseconds(20));
    }
  }
  return OkStatus();
}

}  // namespace

Status FirmwareModule::ApplyActivate(const Change& change, HostContext& ctx) {
  // The inverse (a rollback): a reset cannot be undone; the sets' own
  // rollbacks put the previous values back for the next boot.
  if (!change.after.is_object()) {
    spdlog::warn(
        "{}: a firmware reset cannot be undone; the previous values are set for the "
        "next boot by the rollback of the sets (reboot to run them)",
        change.target);
    return OkStatus();
  }
  std::unique_ptr<FirmwareTool> tool = Tool(*ctx.fs);
  // Checked again on the card now: the plan may come from a file.
  auto text = tool->Query(change.target);
  if (text.ok()) {
    auto q = ParseMstconfigQuery(*text);
    FirmwareFacts fw;
    if (q.ok()) fw.params = q->params;
    if (std::string dpu = BlueFieldDpuMode(fw); !dpu.empty()) {
      return FailedPreconditionError("no firmware reset of " + change.target + ": " + dpu);
    }
  }
  if (!tool->ResetAvailable()) {
    ctx.deferred_to_reboot =
        "no firmware reset of " + change.target + ": " + MstfwresetInstallHint();
    return OkStatus();
  }
  RETURN_IF_ERROR(RemoveVfs(change, ctx));
  if (ctx.progress) {
    ctx.progress->Step(!tool->FromCapture()
                           ? "mstfwreset -d " + change.target + " -y --skip_driver -l 3 reset"
                           : "firmware reset of " + change.target + " (" +
                                 tool->ResetSource(change.target) + ")");
  }
  {
    std::lock_guard<std::mutex> lock(answers_mu_);
    answers_.erase(change.target);
  }
  Status reset = tool->Reset(change.target);
  if (!reset.ok()) {
    // Refused or failed: the sets stay for the next boot, which runs them.
    ctx.deferred_to_reboot = "the firmware reset of " + change.target + " failed (" +
                             reset.message() + "): its changes take effect after a reboot";
    spdlog::warn("{}", ctx.deferred_to_reboot);
  }
  return OkStatus();
}

Status FirmwareModule::VerifyActivate(const Change& change, HostContext& ctx) {
  if (!change.after.is_object()) return OkStatus();  // the rollback did nothing
  std::unique_ptr<FirmwareTool> tool = Tool(*ctx.fs);
  auto answer = tool->Query(change.target);
  if (!tool->FromCapture()) {
    std::lock_guard<std::mutex> lock(answers_mu_);
    answers_.insert_or_assign(change.target, answer);
  }
  ASSIGN_OR_RETURN(std::string text, std::move(answer));
  ASSIGN_OR_RETURN(MstconfigQuery q, ParseMstconfigQuery(text));
  std::string differ;  // nothing to compare without a Current column (a query without -e)
  for (const auto& [name, p] : q.params) {
    if (q.has_current && p.current && !SamePrintedValue(*p.current, p.next_boot)) {
      differ += (differ.empty() ? "" : ", ") + name + " current " + *p.current + ", next boot " +
                p.next_boot;
    }
  }
  if (change.after.contains(kBurnAttribute)) {
    // A burned image: the card runs what its flash holds now.
    ASSIGN_OR_RETURN(std::string flint, tool->FlintQuery(change.target));
    ASSIGN_OR_RETURN(FlintQuery f, ParseFlintQuery(flint));
    if (!f.running.empty() && f.running != f.fw_version) {
      differ += (differ.empty() ? "" : ", ") + std::string("firmware running ") + f.running +
                ", on the flash " + f.fw_version;
    }
  }
  if (!differ.empty()) {
    return FailedPreconditionError(change.target + ": after the firmware reset the card does not " +
                                   "run its Next Boot configuration: " + differ);
  }
  return OkStatus();
}

Status FirmwareModule::ApplyNvConfig(const Change& change, HostContext& ctx) {
  std::unique_ptr<FirmwareTool> tool = Tool(*ctx.fs);
  if (!tool->Available()) return FailedPreconditionError(MstconfigInstallHint());
  {
    std::lock_guard<std::mutex> lock(answers_mu_);
    answers_.erase(change.target);
  }
  if (change.after.is_object()) {
    // The rollback: the values before the reset back for the next boot.
    std::map<std::string, std::string> params;
    for (const auto& [name, v] : change.after.items()) {
      if (!IsParam(name)) return InvalidArgumentError(change.id + ": no parameter " + name);
      if (v.is_number_integer()) {
        params[name] = std::to_string(v.get<long long>());
      } else if (v.is_string()) {
        auto n = MstconfigValueNumber(v.get<std::string>());
        if (!n)
          return InvalidArgumentError(change.id + ": " + name + " cannot be set to " + v.dump());
        params[name] = std::to_string(*n);
      } else {
        return InvalidArgumentError(change.id + ": " + name + " cannot be set to " + v.dump());
      }
    }
    if (ctx.progress) ctx.progress->Step("mstconfig -d " + change.target + " -y set (rollback)");
    return tool->Set(change.target, params)
        .WithContext("restore the NV configuration of " + change.target);
  }
  if (ctx.progress) {
    ctx.progress->Step(!tool->FromCapture()
                           ? "mstconfig -d " + change.target + " -y reset"
                           : "next boot = defaults in " + tool->Source(change.target));
  }
  return tool->ResetNvConfig(change.target)
      .WithContext("reset the NV configuration of " + change.target);
}

Status FirmwareModule::VerifyNvConfig(const Change& change, HostContext& ctx) {
  std::unique_ptr<FirmwareTool> tool = Tool(*ctx.fs);
  auto answer = tool->Query(change.target);
  if (!tool->FromCapture()) {
    std::lock_guard<std::mutex> lock(answers_mu_);
    answers_.insert_or_assign(change.target, answer);
  }
  ASSIGN_OR_RETURN(std::string text, std::move(answer));
  ASSIGN_OR_RETURN(MstconfigQuery q, ParseMstconfigQuery(text));
  if (change.after.is_object()) {
    for (const auto& [name, v] : change.after.items()) {
      auto p = q.params.find(name);
      const std::string want = v.is_string() ? v.get<std::string>() : v.dump();
      if (p == q.params.end() || !SamePrintedValue(p->second.next_boot, want)) {
        return FailedPreconditionError(change.target + " " + name + " next boot is not " + want +
                                       " after the rollback");
      }
    }
    return OkStatus();
  }
  for (const auto& [name, p] : q.params) {
    if (p.read_only || !p.default_value || *p.default_value == "N/A") continue;
    if (!SamePrintedValue(*p.default_value, p.next_boot)) {
      return FailedPreconditionError(change.target + " " + name + " next boot " + p.next_boot +
                                     " is not its default " + *p.default_value +
                                     " after mstconfig reset");
    }
  }
  return OkStatus();
}

namespace {

// A burn change's image and pinned version, checked (plans may come from a
// file); `rollback` when it is the inverse (after is not the pinned version).
struct BurnOf {
  std::string image;
  std::string version;
  bool rollback = false;
};
StatusOr<BurnOf> BurnDetail(const Change& change) {
  const nlohmann::json& d = change.detail;
  if (!d.is_object() || !d.contains("image") || !d["image"].is_string() || !d.contains("version") ||
      !d["version"].is_string() || !change.after.is_string()) {
    return InvalidArgumentError(change.id + ": detail.image and detail.version (strings) missing");
  }
  BurnOf b{d["image"].get<std::string>(), d["version"].get<std::string>(), false};
  if (b.image.empty() || b.image[0] != '/' || b.image.find('\0') != std::string::npos) {
    return InvalidArgumentError(change.id + ": detail.image " + d["image"].dump() +
                                " is not an absolute host path");
  }
  b.rollback = change.after.get<std::string>() != b.version;
  return b;
}

}  // namespace

Status FirmwareModule::ApplyBurn(const Change& change, HostContext& ctx) {
  ASSIGN_OR_RETURN(BurnOf b, BurnDetail(change));
  if (b.rollback) {
    spdlog::warn(
        "{}: a firmware burn cannot be undone; {} stays on the flash of {} (burn the "
        "previous image to go back)",
        change.id, b.version, change.target);
    return OkStatus();
  }
  std::unique_ptr<FirmwareTool> tool = Tool(*ctx.fs);
  if (!tool->FlintAvailable()) return FailedPreconditionError(MstflintInstallHint());
  // Checked again now: the plan may come from a file, the image may have
  // been replaced since.
  ASSIGN_OR_RETURN(std::string image_text, tool->FlintImageQuery(b.image));
  auto img = ParseFlintQuery(image_text);
  if (!img.ok()) return img.status().WithContext("the firmware image " + b.image);
  ASSIGN_OR_RETURN(std::string card_text, tool->FlintQuery(change.target));
  ASSIGN_OR_RETURN(FlintQuery card, ParseFlintQuery(card_text));
  if (img->psid != card.psid || img->fw_version != b.version) {
    return FailedPreconditionError("the firmware image " + b.image + " (PSID " + img->psid +
                                   ", firmware " + img->fw_version + ") is not firmware " +
                                   b.version + " for " + change.target + " (PSID " + card.psid +
                                   "): not burned");
  }
  if (ctx.progress) {
    ctx.progress->Step("mstflint -d " + change.target + " -i " + b.image + " -y burn" +
                       (tool->FromCapture() ? " (" + tool->FlintSource(change.target) + ")" : ""));
  }
  return tool->Burn(change.target, b.image).WithContext("burn " + b.image + " on " + change.target);
}

Status FirmwareModule::VerifyBurn(const Change& change, HostContext& ctx) {
  ASSIGN_OR_RETURN(BurnOf b, BurnDetail(change));
  if (b.rollback) return OkStatus();  // nothing was done
  std::unique_ptr<FirmwareTool> tool = Tool(*ctx.fs);
  ASSIGN_OR_RETURN(std::string text, tool->FlintQuery(change.target));
  ASSIGN_OR_RETURN(FlintQuery q, ParseFlintQuery(text));
  if (q.fw_version != b.version) {
    return FailedPreconditionError(change.target + ": after the burn the flash holds firmware " +
                                   q.fw_version + ", not " + b.version);
  }
  return OkStatus();
}

Status FirmwareModule::Apply(const Change& change, HostContext& ctx) {
  RETURN_IF_ERROR(CheckChange(change));
  if (change.attribute == kBurnAttribute) return ApplyBurn(change, ctx);
  if (change.attribute == kActivateAttribute) return ApplyActivate(change, ctx);
  if (change.attribute == kNvConfigAttribute) return ApplyNvConfig(change, ctx);
  ASSIGN_OR_RETURN(std::string value, FirmwareSetText(change));
  std::unique_ptr<FirmwareTool> tool = Tool(*ctx.fs);
  if (!tool->Available()) return FailedPreconditionError(MstconfigInstallHint());
  const std::string set = change.attribute + "=" + value;
  if (ctx.progress) {
    ctx.progress->Step(!tool->FromCapture()
                           ? "mstconfig -d " + change.target + " -y set " + set
                           : "next boot " + set + " in " + tool->Source(change.target));
  }
  // The card changes (or may have): its next query asks it again.
  {
    std::lock_guard<std::mutex> lock(answers_mu_);
    answers_.erase(change.target);
  }
  return tool->Set(change.target, {{change.attribute, value}})
      .WithContext("set firmware " + set + " on " + change.target);
}

Status FirmwareModule::CheckChange(const Change& change) const { return CheckChangeShape(change); }

Status FirmwareModule::Verify(const Change& change, HostContext& ctx) {
  RETURN_IF_ERROR(CheckChange(change));
  if (change.attribute == kBurnAttribute) return VerifyBurn(change, ctx);
  if (change.attribute == kActivateAttribute) return VerifyActivate(change, ctx);
  if (change.attribute == kNvConfigAttribute) return VerifyNvConfig(change, ctx);
  ASSIGN_OR_RETURN(std::string value, FirmwareSetText(change));
  std::unique_ptr<FirmwareTool> tool = Tool(*ctx.fs);
  auto answer = tool->Query(change.target);
  // The card's answer after the set: what the re-discovery after apply reads.
  if (!tool->FromCapture()) {
    std::lock_guard<std::mutex> lock(answers_mu_);
    answers_.insert_or_assign(change.target, answer);
  }
  ASSIGN_OR_RETURN(std::string text, std::move(answer));
  ASSIGN_OR_RETURN(MstconfigQuery q, ParseMstconfigQuery(text));
  auto it = q.params.find(change.attribute);
  if (it == q.params.end()) {
    return FailedPreconditionError(change.target + ": " + change.attribute +
                                   " missing from the query after the set");
  }
  if (!MstconfigValueMatches(it->second.next_boot, value)) {
    return FailedPreconditionError(
        (change.field_path.empty() ? change.id : change.field_path) + ": " + change.target + " " +
        change.attribute + " next boot: desired " + value + ", current " + it->second.next_boot);
  }
  return OkStatus();
}

PROVISIONER_REGISTER_MODULE("firmware", FirmwareModule, "pci")

}  // namespace provisioner
