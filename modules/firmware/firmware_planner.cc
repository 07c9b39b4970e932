#include "modules/firmware/firmware_planner.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "engine/model/selector.h"
#include "modules/firmware/firmware_plan_steps.h"
#include "modules/firmware/firmware_reset.h"
#include "modules/firmware/mstconfig_query.h"

namespace provisioner {

namespace firmware_plan {

void PlanSettings(const DesiredState& desired, const HostFacts& facts, Planned& planned,
                  PlanSink& sink) {
  for (size_t i = 0; i < desired.nics.size(); ++i) {
    const NicSpec& nic = desired.nics[i];
    const std::string path = DesiredState::NicPath(i);
    // A selector matching nothing is reported by the modules that need PFs
    // (sriov); the firmware planner has nothing to add then.
    if (nic.link_type) PlanLinkType(nic, path, facts, planned, sink);
    if (!nic.firmware.empty()) PlanRawFirmware(nic, path, facts, planned, sink);
    if (nic.num_vfs && *nic.num_vfs > 0) PlanVfLimit(nic, path, facts, planned, sink);
    if (nic.roce) PlanRoceFirmware(nic, path, facts, planned, sink);
  }
}

namespace {

// A card a nic's firmwareReset asks for, with the first nic's field.
struct NvResetCard {
  std::string field;
  std::string nic;
  std::string pf;
};

// The cards of the nics with firmwareReset: true (readable ones; the others
// are errors).
std::map<std::string, NvResetCard> NvResetCards(const DesiredState& desired, const HostFacts& facts,
                                                PlanSink& sink) {
  std::map<std::string, NvResetCard> cards;
  for (size_t i = 0; i < desired.nics.size(); ++i) {
    const NicSpec& nic = desired.nics[i];
    if (!nic.firmware_reset) continue;
    const std::string field = DesiredState::NicPath(i) + ".firmwareReset";
    for (const PciFunction* pf : SelectPfs(nic, facts)) {
      const FirmwareFacts* fw = Lookup(facts, *pf, field, "configuration", sink);
      if (fw == nullptr) continue;
      cards.emplace(FirmwareDevice(pf->pci_address), NvResetCard{field, nic.name, pf->pci_address});
    }
  }
  return cards;
}

// What a reset to defaults would change on `fw`: the parameters (not
// read-only, with a Default) whose Next Boot is not their Default, except
// those host.yaml asks to be at that Next Boot value. Name -> next boot.
std::map<std::string, std::string> NvResetWouldChange(const FirmwareFacts& fw,
                                                      const std::string& dev,
                                                      const Planned& asked) {
  std::map<std::string, std::string> out;
  for (const auto& [name, p] : fw.params) {
    if (p.read_only || !p.default_value || *p.default_value == "N/A") continue;
    if (SamePrintedValue(*p.default_value, p.next_boot)) continue;
    auto a = asked.asked.find(std::string(kFirmwareModule) + "/" + dev + "/" + name);
    if (a != asked.asked.end() && MstconfigValueMatches(p.next_boot, a->second.text)) continue;
    out[name] = p.next_boot;
  }
  return out;
}

}  // namespace
}  // namespace firmware_plan

using firmware_plan::Planned;

void PlanFirmware(const DesiredState& desired, const HostFacts& facts, PlanSink& sink) {
  const size_t from = sink.changes().size();
  // The burns first: the sets after them land in the new firmware's
  // configuration (mstflint keeps the NV configuration across a burn).
  std::set<std::string> pending_burns;
  firmware_plan::PlanFirmwareVersions(desired, facts, sink, pending_burns);
  Planned planned;
  PlanSink first;
  firmware_plan::PlanSettings(desired, facts, planned, first);
  // firmwareReset: the cards whose reset to defaults changes something are
  // planned again as they will read after it (Next Boot = Default), the
  // reset first.
  std::map<std::string, firmware_plan::NvResetCard> nv_cards = firmware_plan::NvResetCards(desired, facts, sink);
  std::vector<Change> nv_resets;
  HostFacts reset_facts;
  for (const auto& [dev, card] : nv_cards) {
    const FirmwareFacts& fw = facts.firmware.at(dev);
    if (!fw.params.empty() && fw.params.begin()->second.default_value == std::nullopt) {
      sink.Error(card.field, "the mstconfig query of " + dev +
                                 " has no Default column (query with -e): the defaults a reset " +
                                 "restores are unknown");
      continue;
    }
    std::map<std::string, std::string> would = firmware_plan::NvResetWouldChange(fw, dev, planned);
    if (would.empty()) continue;
    nlohmann::json before = nlohmann::json::object();
    for (const auto& [name, next] : would) {
      auto n = MstconfigValueNumber(next);
      before[name] = n ? nlohmann::json(*n) : nlohmann::json(next);
    }
    Change c = MakeChange(kFirmwareModule, dev, kNvConfigAttribute, before, "defaults",
                          Disruption::kReboot, kPhaseFirmware,
                          "nic " + card.nic + " wants the NV configuration of " + dev +
                              " reset to its defaults (mstconfig -d " + dev + " -y reset; " +
                              std::to_string(would.size()) +
                              " parameter(s) differ; takes effect after a reboot)",
                          card.field);
    c.detail["nic"] = card.nic;
    c.detail["pf"] = card.pf;
    nv_resets.push_back(std::move(c));
    if (reset_facts.firmware.empty()) reset_facts = facts;
    for (auto& [name, p] : reset_facts.firmware[dev].params) {
      if (!p.read_only && p.default_value && *p.default_value != "N/A") {
        p.next_boot = *p.default_value;
      }
    }
  }
  if (nv_resets.empty()) {
    firmware_plan::CopyInto(first, sink);
  } else {
    planned = Planned();
    PlanSink again;
    firmware_plan::PlanSettings(desired, reset_facts, planned, again);
    for (Change& c : nv_resets) sink.AddChange(std::move(c));
    firmware_plan::CopyInto(again, sink);
  }
  if (desired.firmware && desired.firmware->activation == "reset") {
    firmware_plan::PlanActivation(desired, facts, from, planned, pending_burns, sink);
  }
}

std::set<std::string> FirmwareCardsToRead(const DesiredState& desired, const HostFacts& facts) {
  std::set<std::string> cards;
  for (const NicSpec& nic : desired.nics) {
    // A burn activated by a reset reads the card's configuration too: the
    // reset refuses a BlueField in DPU mode and is verified by it.
    const bool burn_by_reset = nic.firmware_version && nic.firmware_version->policy == "update" &&
                               desired.firmware && desired.firmware->activation == "reset";
    const bool asks = nic.link_type || !nic.firmware.empty() || nic.firmware_reset || burn_by_reset;
    const int vfs = nic.num_vfs.value_or(0);
    if (!asks && vfs <= 0 && !nic.roce) continue;
    for (const PciFunction* pf : SelectPfs(nic, facts)) {
      // As PlanVfLimit and the sriov planner's FirmwareRaisesLimit read it.
      const bool above_kernel = vfs > 0 && (!pf->sriov || vfs > pf->sriov->total_vfs);
      if (asks || above_kernel || firmware_plan::RoceNeeds(nic, *pf, facts).Any()) {
        cards.insert(FirmwareDevice(pf->pci_address));
      }
    }
  }
  return cards;
}

StatusOr<long> FirmwareValue(const Change& change) {
  const nlohmann::json& a = change.after;
  if (change.attribute.rfind("LINK_TYPE_P", 0) == 0 && a.is_string()) {
    const std::string s = a.get<std::string>();
    if (auto v = LinkTypeValue(s)) return *v;
    if (s == "vpi") return 3;
  } else if (change.attribute == "NUM_OF_VFS") {
    if (a.is_number_integer() && a.get<long long>() >= 0 && a.get<long long>() <= 65535) {
      return static_cast<long>(a.get<long long>());
    }
  } else if (a.is_boolean()) {
    return a.get<bool>() ? 1 : 0;
  } else if (a.is_number_integer() && a.get<long long>() >= 0 &&
             a.get<long long>() <= 0xffffffffLL) {
    return static_cast<long>(a.get<long long>());
  }
  return InvalidArgumentError(change.id + ": firmware parameter " + change.attribute +
                              " cannot be set to " + a.dump());
}

StatusOr<std::string> FirmwareSetText(const Change& change) {
  auto n = FirmwareValue(change);
  if (n.ok()) return std::to_string(*n);
  const nlohmann::json& a = change.after;
  if (!a.is_string() || change.attribute.rfind("LINK_TYPE_P", 0) == 0) return n.status();
  std::string s = a.get<std::string>();
  bool word = !s.empty();
  for (char c : s) {
    word = word && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
  }
  if (!word) return n.status();
  return s;  // a value's name ("ETH", "DISABLED"): mstconfig resolves it
}

}  // namespace provisioner
