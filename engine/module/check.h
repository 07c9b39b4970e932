// Doctor checks: what a module found wrong (or right) on the host, with the
// evidence and the fix. Modules add them in Module::Check; `provisioner
// doctor` renders them.
#ifndef PROVISIONER_ENGINE_MODULE_CHECK_H_
#define PROVISIONER_ENGINE_MODULE_CHECK_H_

#include <string>
#include <utility>
#include <vector>

namespace provisioner {

enum class Verdict { kOk, kWarn, kFail };
inline const char* VerdictName(Verdict v) {
  return v == Verdict::kOk ? "ok" : v == Verdict::kWarn ? "warn" : "fail";
}

struct CheckResult {
  std::string module;  // "rdma"
  std::string id;      // stable check id: "rdma.port-netdev"
  std::string target;  // "mlx5_0 port 1"
  Verdict verdict = Verdict::kOk;
  std::string summary;  // one line: what is (not) right
  // Evidence: host paths and the values read there, or facts compared.
  std::vector<std::pair<std::string, std::string>> evidence;
  std::string fix;  // what to do ("" when ok)
};

class CheckSink {
 public:
  void Add(CheckResult r) { results_.push_back(std::move(r)); }
  const std::vector<CheckResult>& results() const { return results_; }

 private:
  std::vector<CheckResult> results_;
};

}  // namespace provisioner

#endif  // PROVISIONER_ENGINE_MODULE_CHECK_H_
