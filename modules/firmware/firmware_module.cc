#include "modules/firmware/firmware_module.h"

#include <cctype>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/host/parallel_reads.h"
#include "engine/model/pci_address.h"
#include "engine/module/registry.h"
#include "modules/firmware/firmware_planner.h"
#include "modules/firmware/mstconfig_query.h"
#include "spdlog/spdlog.h"

namespace provisioner {
namespace {

// mstconfig queries run at once: one per card (hosts have up to 16 or so).
constexpr size_t kMaxParallelQueries = 32;

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
  if (c.module != kFirmwareModule || !PciAddress::ParseFull(c.target) || !IsParam(c.attribute)) {
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
  if (ctx.plan_for == nullptr) ReadCards(*tool, cards, ctx, facts);
  return OkStatus();
}

Status FirmwareModule::DiscoverForPlan(const DesiredState& desired, HostContext& ctx,
                                       HostFacts& facts) {
  std::vector<std::string> cards;
  for (const std::string& dev : FirmwareCardsToRead(desired, facts)) {
    auto it = facts.firmware.find(dev);
    // Not a ConnectX card: the planner says so.
    if (it != facts.firmware.end() && it->second.unread) cards.push_back(dev);
  }
  if (!cards.empty()) ReadCards(*Tool(*ctx.fs), cards, ctx, facts);
  return OkStatus();
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
      fw.error = "no captured query " + fw.source + " in the tree (capture it with: " +
                 "mstconfig -e -d " + dev + " query > <root>" + fw.source + ")";
    } else if (!live || answers_.count(dev) == 0) {
      ask.push_back(dev);
    }
  }
  // mstconfig takes about a second per card: every card at once, each on its
  // own thread (the commands wait, they do not compute). A tree's captured
  // files are read one after the other, as any file.
  std::vector<std::optional<StatusOr<std::string>>> got(ask.size());
  auto query = [&](size_t i) { got[i].emplace(tool.Query(ask[i])); };
  if (live) {
    if (ctx.progress && !ask.empty()) {
      std::string list;
      for (const std::string& dev : ask) list += (list.empty() ? "" : ", ") + dev;
      ctx.progress->Step("mstconfig query " + list);
    }
    ForEachIndexWaiting(ask.size(), kMaxParallelQueries, query);
  } else {
    for (size_t i = 0; i < ask.size(); ++i) query(i);
  }
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

Status FirmwareModule::Apply(const Change& change, HostContext& ctx) {
  RETURN_IF_ERROR(CheckChange(change));
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

Status FirmwareModule::CheckChange(const Change& change) const {
  return CheckChangeShape(change);
}

Status FirmwareModule::Verify(const Change& change, HostContext& ctx) {
  RETURN_IF_ERROR(CheckChange(change));
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
    return FailedPreconditionError((change.field_path.empty() ? change.id : change.field_path) +
                                   ": " + change.target + " " + change.attribute +
                                   " next boot: desired " + value + ", current " +
                                   it->second.next_boot);
  }
  return OkStatus();
}

PROVISIONER_REGISTER_MODULE("firmware", FirmwareModule, "pci")

}  // namespace provisioner
