// host.yaml rules of names: nic, ipPool and multus config names used once,
// two nics never selecting one PF, spec.nics[].names (the netdev and RDMA
// device names the kernel takes), spec.kernelModules listed once.
#include <algorithm>
#include <cctype>
#include <map>

#include "engine/config/checks.h"
#include "engine/config/check_context.h"
#include "engine/config/field_path.h"
#include "engine/config/text.h"
#include "engine/model/selector.h"

namespace provisioner::config {
namespace {

class NameChecks : private CheckContext {
 public:
  explicit NameChecks(const CheckContext& c) : CheckContext(c) {}

  // -- names ----------------------------------------------------------------

  template <typename T, typename KeyFn>
  void CheckUnique(const std::vector<T>& items, const std::string& list_path, const char* what,
                   KeyFn key) {
    std::map<std::string, size_t> first;
    for (size_t i = 0; i < items.size(); ++i) {
      std::string name_path = JoinField(JoinIndex(list_path, i), "name");
      std::string k = key(items[i]);
      if (items[i].name.empty() || Tainted(name_path)) continue;
      auto [it, inserted] = first.emplace(k, i);
      if (!inserted) {
        Error(name_path, "duplicate " + std::string(what) + " " + Quote(k) + " (first at " +
                             Where(JoinField(JoinIndex(list_path, it->second), "name")) + ")");
      }
    }
  }

  // Two nics naming the same PF (rootDevices) or PF netdev (pfNames) would
  // both configure it and both publish it as a device-plugin resource.
  // Overlaps that only discovery shows (a rootDevice whose netdev another nic
  // names, vendor/deviceID selectors) are plan/manifests errors
  // (CheckNicOverlaps in engine/model/selector.h).
  void CheckNicOverlaps() {
    std::map<std::string, size_t> roots, names;  // canonical address / netdev -> nic
    auto claim = [&](std::map<std::string, size_t>& seen, const std::string& key, size_t i,
                     const std::string& field, size_t k, const std::string& shown) {
      std::string path = JoinIndex(JoinField(JoinField(NicPath(i), "nicSelector"), field), k);
      if (Tainted(path)) return;
      auto [it, inserted] = seen.emplace(key, i);
      if (inserted || it->second == i) return;
      const size_t first = it->second;
      Error(path, Quote(shown) + " is also selected by " + Where(NicPath(first)) + " (" +
                      s_.nics[first].name + "): two nics cannot share a PF (each would set " +
                      "its VFs and publish it as its own resource)");
    };
    for (size_t i = 0; i < s_.nics.size(); ++i) {
      const NicSelector& sel = s_.nics[i].selector;
      for (size_t k = 0; k < sel.root_devices.size(); ++k) {
        claim(roots, CanonicalPciAddress(sel.root_devices[k]), i, "rootDevices", k,
              sel.root_devices[k]);
      }
      for (size_t k = 0; k < sel.pf_names.size(); ++k) {
        claim(names, sel.pf_names[k], i, "pfNames", k, sel.pf_names[k]);
      }
    }
  }

  // spec.nics[].names: names the kernel takes (dev_valid_name for a netdev;
  // for an RDMA device nldev_set_doit's IB_DEVICE_NAME_MAX and no '%', the
  // format character ib_register_device expands), each used once, and no
  // pfNames selector (it would stop matching once the PF is renamed).
  void CheckNames() {
    std::map<std::string, std::string> netdevs, rdmas;  // name -> its path
    for (size_t i = 0; i < s_.nics.size(); ++i) {
      const NicSpec& nic = s_.nics[i];
      if (!nic.names) continue;
      const std::string path = JoinField(NicPath(i), "names");
      if (Tainted(path)) continue;
      auto claim = [&](std::map<std::string, std::string>& seen, const std::string& name,
                       const std::string& field) {
        auto [it, inserted] = seen.emplace(name, field);
        if (!inserted) {
          Error(field, Quote(name) + " is also the name of " + Where(it->second) +
                           ": two devices cannot have one name");
        }
      };
      if (nic.names->netdev) {
        const std::string field = JoinField(path, "netdev");
        const std::string& n = *nic.names->netdev;
        if (auto why = InterfaceNameProblem(n)) {
          Error(field, Quote(n) + " is not a valid Linux interface name: " + *why);
        } else if (n.find_first_of("%$\"\\") != std::string::npos) {
          Error(field, Quote(n) + " contains one of % $ \" \\ (the kernel reads '%' as a " +
                           "name template, udev's NAME= substitutes '%' and '$')");
        } else {
          claim(netdevs, n, field);
        }
        if (!nic.selector.pf_names.empty()) {
          Error(field, "nic " + Quote(nic.name) +
                           " selects its PF by pfNames, which no longer match once it is "
                           "renamed: select it by rootDevices, vendor/deviceID or nearGpu");
        }
      }
      if (nic.names->rdma) {
        const std::string field = JoinField(path, "rdma");
        const std::string& n = *nic.names->rdma;
        std::optional<std::string> why;
        if (n.empty()) why = "it is empty";
        if (n.size() > 63) why = "it is longer than 63 characters";
        if (n == "." || n == "..") why = "\".\" and \"..\" are reserved";
        for (char c : n) {
          if (c == '/') why = "it contains '/'";
          if (c == '%' || c == '$' || c == '"' || c == '\\') {
            why = "it contains one of % $ \" \\ (udev rules substitute '%' and '$')";
          }
          if (std::isspace(static_cast<unsigned char>(c)) || c == '\0') {
            why = "it contains whitespace";
          }
        }
        if (why) {
          Error(field, Quote(n) + " is not a valid RDMA device name: " + *why);
        } else {
          claim(rdmas, n, field);
        }
      }
    }
  }

  void CheckDuplicates() {
    CheckNicOverlaps();
    CheckUnique(s_.nics, "spec.nics", "nic name", [](const NicSpec& n) { return n.name; });
    CheckUnique(s_.ip_pools, "spec.ipPools", "ipPool name",
                [](const IpPoolSpec& p) { return p.name; });
    CheckUnique(s_.multus_configs, "spec.multusConfigs", "multus config",
                [](const MultusConfigSpec& m) { return m.namespace_name + "/" + m.name; });
  }

  void CheckKernelModules() {
    std::map<std::string, size_t> first;
    for (size_t i = 0; i < s_.kernel_modules.size(); ++i) {
      std::string path = JoinIndex("spec.kernelModules", i);
      const std::string& name = s_.kernel_modules[i].name;
      if (name.empty() || Tainted(path)) continue;
      // kmod treats '-' and '_' in module names as the same character.
      std::string key = name;
      std::replace(key.begin(), key.end(), '-', '_');
      auto [it, inserted] = first.emplace(key, i);
      if (!inserted) {
        Error(path, "kernel module " + Quote(name) + " is listed twice (first at " +
                        Where(JoinIndex("spec.kernelModules", it->second)) + ")");
      }
    }
  }
};

}  // namespace

void CheckNames(const CheckContext& c) {
  NameChecks n(c);
  n.CheckNames();
  n.CheckDuplicates();
  n.CheckKernelModules();
}

}  // namespace provisioner::config
