#include "engine/output/facts_output.h"

#include <algorithm>
#include <utility>

namespace provisioner {

using nlohmann::json;

void FactsJson::AddNic(const std::string& pci_address, json nic) {
  json& nics = (*doc_)["nics"];
  if (!nics.is_array()) nics = json::array();
  nic_index_[pci_address] = nics.size();
  nics.push_back(std::move(nic));
}

json* FactsJson::Nic(const std::string& pci_address) {
  auto it = nic_index_.find(pci_address);
  return it == nic_index_.end() ? nullptr : &(*doc_)["nics"][it->second];
}

json StringList(const std::vector<std::string>& v) {
  json a = json::array();
  for (const auto& s : v) a.push_back(s);
  return a;
}

std::string JoinNames(const std::vector<std::string>& v, std::string_view empty) {
  if (v.empty()) return std::string(empty);
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ",") + s;
  return out;
}

std::string TextTable(const std::vector<std::vector<std::string>>& rows, std::string_view indent) {
  if (rows.empty()) return "";
  std::vector<size_t> w(rows[0].size(), 0);
  for (const auto& r : rows) {
    for (size_t i = 0; i < r.size() && i < w.size(); ++i) w[i] = std::max(w[i], r[i].size());
  }
  std::string out;
  for (const auto& r : rows) {
    std::string line(indent);
    for (size_t i = 0; i < r.size(); ++i) {
      line += r[i];
      if (i + 1 < r.size() && i < w.size()) line.append(w[i] + 2 - r[i].size(), ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

}  // namespace provisioner
