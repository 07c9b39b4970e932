// A strict structural check of a document against a CRD's openAPIV3Schema:
// unknown fields (without x-kubernetes-preserve-unknown-fields), types, enums
// and required fields are errors. The kubectl apply --validate=strict
// equivalent for tests.
#ifndef PROVISIONER_TEST_MANIFESTS_CRD_CHECKER_H_
#define PROVISIONER_TEST_MANIFESTS_CRD_CHECKER_H_

#include <string>
#include <vector>

#include "nlohmann/json.hpp"

namespace provisioner::testing {

class CrdChecker {
 public:
  // Loads one CRD YAML file; false (and `error`) when it cannot.
  bool AddCrdFile(const std::string& path, std::string* error);

  // Errors ("spec.sriov.enableRdma: unknown field"); empty when valid.
  std::vector<std::string> Check(const nlohmann::json& doc) const;

 private:
  struct Crd {
    std::string group, kind;
    std::vector<std::pair<std::string, nlohmann::json>> versions;  // name -> schema
  };
  std::vector<Crd> crds_;
};

// YAML -> JSON; untagged plain scalars become bool/int/float when they look so.
nlohmann::json YamlFileToJson(const std::string& path);

}  // namespace provisioner::testing

#endif  // PROVISIONER_TEST_MANIFESTS_CRD_CHECKER_H_
