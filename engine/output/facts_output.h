// What `discover` prints, written by the modules from their own facts
// (Module::RenderFactsJson, Module::RenderFactsTable): the JSON document
// (-o json/yaml, contract keys) and the table's text helpers.
#ifndef PROVISIONER_ENGINE_OUTPUT_FACTS_OUTPUT_H_
#define PROVISIONER_ENGINE_OUTPUT_FACTS_OUTPUT_H_

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "nlohmann/json.hpp"

namespace provisioner {

// The discover document being built. Top-level keys are the modules' own;
// `nics` is one array that the pci module fills (AddNic) and the modules
// after it extend per NIC (Nic).
class FactsJson {
 public:
  explicit FactsJson(nlohmann::json* doc) : doc_(doc) {}
  nlohmann::json& doc() { return *doc_; }
  // Appends a NIC to `nics` (creating the array).
  void AddNic(const std::string& pci_address, nlohmann::json nic);
  // The NIC's object, or null when `pci_address` is not a listed NIC.
  nlohmann::json* Nic(const std::string& pci_address);

 private:
  nlohmann::json* doc_;
  std::unordered_map<std::string, size_t> nic_index_;
};

nlohmann::json StringList(const std::vector<std::string>& v);
// "a,b,c"; `empty` when there are none.
std::string JoinNames(const std::vector<std::string>& v, std::string_view empty = "");
// An aligned text table, the first row its header; each line starts with
// `indent`, trailing spaces trimmed.
std::string TextTable(const std::vector<std::vector<std::string>>& rows,
                      std::string_view indent = "");

}  // namespace provisioner

#endif  // PROVISIONER_ENGINE_OUTPUT_FACTS_OUTPUT_H_
