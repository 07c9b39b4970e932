// The apply journal: before each change, what it was and how far apply got,
// in <root>/run/provisioner/journal.json (written atomically). Removed when an
// apply ends (converged or rolled back). Found at the start of the next run,
// it means the earlier apply was interrupted (kill -9, power loss).
#ifndef PROVISIONER_ENGINE_CORE_JOURNAL_H_
#define PROVISIONER_ENGINE_CORE_JOURNAL_H_

#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "engine/base/status.h"
#include "engine/host/host_fs.h"
#include "engine/plan/change.h"

namespace provisioner {

inline constexpr const char* kJournalPath = "/run/provisioner/journal.json";

enum class JournalStep { kPending, kApplying, kApplied };

struct JournalEntry {
  Change change;  // before = the prior value, recorded before the change ran
  JournalStep step = JournalStep::kPending;
  // The file the change declares (managed_file.h), as it was just before
  // the change ran: what its rollback restores. Null when none.
  nlohmann::json prior_file;
};

struct Journal {
  long long pid = 0;
  std::string started_at;  // UTC, ISO 8601
  // The host.yaml that apply applied (absolute; "hostYaml"), so that
  // `apply --rollback` needs no FILE. "" in a journal written before it.
  std::string host_yaml;
  std::vector<JournalEntry> entries;

  // Changes that may have touched the host (applying or applied), newest
  // first, each inverted (before/after swapped): what --rollback runs. The
  // entries are in plan order, a topological order of the plan's graph, so
  // its reverse undoes a change only after every change that followed it,
  // however many ran at once.
  std::vector<Change> RollbackChanges() const;
  // "pid 1234 started 2026-11-22T10:00:00Z, stopped during sriov/...".
  std::string Describe() const;
};

// Writes and removes the journal through the host layer. Safe for
// concurrent use (apply's workers mark their changes at once): one mark at a
// time, each writing the whole journal atomically, so the file always holds
// every change's latest step and several may be "applying".
class JournalWriter {
 public:
  explicit JournalWriter(HostFs* fs) : fs_(fs) {}
  // Recorded by Begin as Journal::host_yaml.
  void set_host_yaml(std::string path) { host_yaml_ = std::move(path); }
  Status Begin(const std::vector<Change>& changes);
  // `prior_file`: the capture of the change's file (kApplying), kept.
  Status Mark(size_t index, JournalStep step, const nlohmann::json& prior_file = nullptr);
  Status Finish();  // removes the file
  // Begin was called: the apply wrote to the tree.
  bool begun() const { return begun_; }

 private:
  Status Write();
  HostFs* fs_;
  std::mutex mu_;
  nlohmann::json doc_;  // the journal as the file holds it, kept up to date
  std::string host_yaml_;
  bool begun_ = false;
};

// nullopt when there is no journal; an error when it exists but is unreadable.
StatusOr<std::optional<Journal>> ReadJournal(const HostFs& fs);

// The inverse of a change: before and after swapped (resetFirst recomputed),
// carrying the capture of its file when there is one (managed_file.h).
Change InverseChange(const Change& c, const nlohmann::json& prior_file = nullptr);

}  // namespace provisioner

#endif  // PROVISIONER_ENGINE_CORE_JOURNAL_H_
