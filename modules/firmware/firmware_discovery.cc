// The firmware module's discovery: the card list, each card's mstconfig,
// mstflint and mstfwreset queries (every card at once on the live root).
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
#include "modules/firmware/firmware_module.h"
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

// The running firmware version and PSID as the driver reports them, from
// the RDMA device of the card's PF (mlx5_ib: fw_ver "16.35.2000", board_id
// the PSID "MT_0000000008"): two file reads, no tool (issue 35.9).
void ReadSysfsFirmware(HostFs& fs, const std::string& pf, FirmwareFacts& fw) {
  const std::string dir = "/sys/bus/pci/devices/" + pf + "/infiniband";
  for (const std::string& ib : ListDirIfPresent(fs, dir)) {
    auto ver = fs.ReadAttr(dir + "/" + ib + "/fw_ver");
    if (!ver.ok() || ver->empty()) continue;
    fw.sysfs_fw_ver = *ver;
    fw.sysfs_board_id = fs.ReadAttr(dir + "/" + ib + "/board_id").value_or("");
    fw.sysfs_fw_source = "/sys/class/infiniband/" + ib + "/fw_ver";
    return;
  }
}

}  // namespace

Status FirmwareModule::Discover(HostContext& ctx, HostFacts& facts) {
  std::unique_ptr<FirmwareTool> tool = options_.tool(*ctx.fs);
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
    ReadSysfsFirmware(*ctx.fs, f.pci_address, fw);
    cards.push_back(dev);
  }
  // For a plan, DiscoverForPlan reads the cards its nics ask about, once the
  // facts it selects them by (sriov, topology) are there.
  if (ctx.plan_for == nullptr) {
    ReadCards(*tool, cards, ctx, facts);
    // discover and doctor: each card's firmware version and PSID, from sysfs
    // where the card has an RDMA device, else `mstflint -d <card> query`
    // (under a tree root the captures it holds, which also say what waits
    // on the flash).
    for (const std::string& dev : cards) facts.firmware[dev].flint_read = true;
    ReadFlint(*tool, cards, /*only_captured=*/true, /*sysfs_first=*/true, ctx, facts);
  }
  return OkStatus();
}

// `mstflint -d <card> query` of each card (at once, as the mstconfig
// queries). With `only_captured` (discover) a tree's card without a capture
// and a live host without mstflint are left unread (flint_read false), not
// an error: discovery reports what it can.
void FirmwareModule::ReadFlint(FirmwareTool& tool, const std::vector<std::string>& cards,
                               bool only_captured, bool sysfs_first, HostContext& ctx,
                               HostFacts& facts) {
  const bool live = !tool.FromCapture();
  std::vector<std::string> ask;
  for (const std::string& dev : cards) {
    FirmwareFacts& fw = facts.firmware[dev];
    // The running version from sysfs: on the live root instead of a tool
    // run, under a tree root when it holds no mstflint capture.
    if (sysfs_first && !fw.sysfs_fw_ver.empty() &&
        (live || !ctx.fs->Exists(tool.FlintSource(dev)))) {
      fw.fw_version = fw.sysfs_fw_ver;
      fw.fw_running.clear();
      fw.psid = fw.sysfs_board_id;
      fw.flint_source = fw.sysfs_fw_source;
      fw.flint_read = true;
      continue;
    }
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
  std::unique_ptr<FirmwareTool> tool = options_.tool(*ctx.fs);
  if (!cards.empty()) ReadCards(*tool, cards, ctx, facts);
  // nics[].firmwareVersion: `mstflint -d <card> query` of their cards, and
  // for policy update `mstflint -i <image> query` of the images they name.
  // policy validate needs the running version only (sysfs first); policy
  // update what the flash holds too (mstflint only).
  std::map<std::string, bool> flint_cards;              // card -> needs mstflint
  std::map<std::string, std::set<std::string>> images;  // card -> images
  for (const NicSpec& nic : desired.nics) {
    if (!nic.firmware_version) continue;
    for (const PciFunction* pf : SelectPfs(nic, facts)) {
      const std::string dev = FirmwareDevice(pf->pci_address);
      auto it = facts.firmware.find(dev);
      if (it == facts.firmware.end()) continue;
      const bool update = nic.firmware_version->policy == "update";
      if (update && nic.firmware_version->image) {
        images[dev].insert(*nic.firmware_version->image);
      }
      if (it->second.flint_read) continue;
      flint_cards[dev] = flint_cards[dev] || update;
    }
  }
  std::vector<std::string> by_sysfs, by_flint;
  for (const auto& [dev, flint] : flint_cards) {
    facts.firmware[dev].flint_read = true;
    (flint ? by_flint : by_sysfs).push_back(dev);
  }
  ReadFlint(*tool, by_sysfs, /*only_captured=*/false, /*sysfs_first=*/true, ctx, facts);
  ReadFlint(*tool, by_flint, /*only_captured=*/false, /*sysfs_first=*/false, ctx, facts);
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

}  // namespace provisioner
