#include "engine/core/journal.h"

#include <unistd.h>

#include <ctime>

#include "engine/base/enum_names.h"
#include "engine/module/managed_file.h"
#include "nlohmann/json.hpp"

namespace provisioner {
namespace {

using nlohmann::json;

constexpr EnumName<JournalStep> kStepNames[] = {
    {JournalStep::kPending, "pending"},
    {JournalStep::kApplying, "applying"},
    {JournalStep::kApplied, "applied"},
};

std::string NowUtc() {
  std::time_t t = std::time(nullptr);
  std::tm tm;
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace

Change InverseChange(const Change& c, const nlohmann::json& prior_file) {
  Change inv = c;
  std::swap(inv.before, inv.after);
  inv.reason = "roll back " + c.id;
  if (inv.detail.is_object()) inv.detail.erase("resetFirst");
  if (inv.before.is_number_integer() && inv.after.is_number_integer() &&
      inv.before.get<long long>() != 0 && inv.after.get<long long>() != 0) {
    inv.detail["resetFirst"] = true;
  }
  // An inverse of an inverse restores nothing an earlier capture held.
  if (inv.detail.is_object()) inv.detail.erase(kRestoreFileKey);
  AttachRestore(inv, prior_file);
  return inv;
}

std::vector<Change> Journal::RollbackChanges() const {
  std::vector<Change> out;
  for (auto it = entries.rbegin(); it != entries.rend(); ++it) {
    if (it->step != JournalStep::kPending) out.push_back(InverseChange(it->change, it->prior_file));
  }
  return out;
}

std::string Journal::Describe() const {
  std::string where = "before its first change";
  for (const auto& e : entries) {
    if (e.step == JournalStep::kApplying) where = "during " + e.change.id;
    if (e.step == JournalStep::kApplied) where = "after " + e.change.id;
  }
  for (const auto& e : entries) {
    if (e.step == JournalStep::kApplying) where = "during " + e.change.id;
  }
  return "pid " + std::to_string(pid) + " started " + started_at + ", stopped " + where;
}

Status JournalWriter::Begin(const std::vector<Change>& changes) {
  std::lock_guard<std::mutex> lock(mu_);
  begun_ = true;
  // The document, once: a mark changes one entry's step (and prior file), so
  // a write is one dump, not a record per change made again at every mark
  // (that was quadratic in the plan's size: a fifth of the CPU of the fault
  // matrix's HGX case, by perf).
  doc_ = json::object();
  doc_["formatVersion"] = 1;
  doc_["pid"] = ::getpid();
  doc_["startedAt"] = NowUtc();
  if (!host_yaml_.empty()) doc_["hostYaml"] = host_yaml_;
  json entries = json::array();
  for (const Change& c : changes) {
    json j = ChangeToRecord(c);
    j["step"] = NameOf(kStepNames, JournalStep::kPending, "pending");
    entries.push_back(std::move(j));
  }
  doc_["changes"] = std::move(entries);
  return Write();
}

Status JournalWriter::Mark(size_t index, JournalStep step, const nlohmann::json& prior_file) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!doc_.contains("changes") || index >= doc_["changes"].size())
    return InternalError("journal: no entry " + std::to_string(index));
  json& record = doc_["changes"][index];
  record["step"] = NameOf(kStepNames, step, "pending");
  if (!prior_file.is_null()) record["priorFile"] = prior_file;
  return Write();
}

Status JournalWriter::Finish() {
  std::lock_guard<std::mutex> lock(mu_);
  return fs_->RemoveFile(kJournalPath);
}

Status JournalWriter::Write() {
  return fs_->WriteFileAtomic(kJournalPath, doc_.dump(2) + "\n", 0600).WithContext("write journal");
}

StatusOr<std::optional<Journal>> ReadJournal(const HostFs& fs) {
  // apply writes the journal as a regular file: a link in its place (an
  // absolute one, re-rooted, usually leads nowhere) is not "no journal".
  if (fs.IsSymlink(kJournalPath)) {
    return FailedPreconditionError(std::string(kJournalPath) +
                                   " is a symbolic link, not the journal apply writes: refused; "
                                   "inspect and remove it");
  }
  if (!fs.Exists(kJournalPath)) return std::optional<Journal>();
  ASSIGN_OR_RETURN(std::string text, fs.ReadFile(kJournalPath));
  json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object() || !doc.contains("changes") || !doc["changes"].is_array()) {
    return FailedPreconditionError(std::string(kJournalPath) +
                                   " is not a provisioner journal; inspect and remove it");
  }
  Journal j;
  if (auto it = doc.find("pid"); it != doc.end() && it->is_number_integer())
    j.pid = it->get<long long>();
  if (auto it = doc.find("startedAt"); it != doc.end() && it->is_string())
    j.started_at = it->get<std::string>();
  if (auto it = doc.find("hostYaml"); it != doc.end() && it->is_string())
    j.host_yaml = it->get<std::string>();
  for (size_t i = 0; i < doc["changes"].size(); ++i) {
    const json& e = doc["changes"][i];
    auto change = ParseChangeRecord(e);
    auto step_it = e.is_object() ? e.find("step") : e.end();
    if (!change.ok() || (step_it != e.end() && !step_it->is_string())) {
      return FailedPreconditionError(
          std::string(kJournalPath) + ": changes[" + std::to_string(i) +
          "]: " + (change.ok() ? std::string("step: want a string") : change.status().message()) +
          "; inspect and remove it");
    }
    std::string step = step_it == e.end() ? "pending" : step_it->get<std::string>();
    j.entries.push_back({std::move(change).value(),
                         ValueOf(kStepNames, step).value_or(JournalStep::kPending), nullptr});
    if (auto pf = e.find("priorFile"); pf != e.end()) {
      if (!pf->is_object() || !pf->contains("path") || !(*pf)["path"].is_string()) {
        return FailedPreconditionError(std::string(kJournalPath) + ": changes[" +
                                       std::to_string(i) +
                                       "]: priorFile: want the record of a file; inspect and "
                                       "remove it");
      }
      j.entries.back().prior_file = *pf;
    }
  }
  return std::optional<Journal>(std::move(j));
}

}  // namespace provisioner
