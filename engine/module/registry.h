// Module registry. PROVISIONER_REGISTER_MODULE only queues a factory (a
// function-local static, so no static-initialization-order trap); the CLI
// builds the modules in main(). Module libraries are alwayslink = 1.
//
// Discovery (and so plan and doctor order) runs a module after the modules
// it names: the ones whose facts it reads, or that must come first.
//   PROVISIONER_REGISTER_MODULE("vf", VfModule, "sriov")
// Modules run in dependency order, the first by name among those ready; a
// name that is not registered, or a cycle, is an error (ModuleRegistry::Order).
#ifndef PROVISIONER_ENGINE_MODULE_REGISTRY_H_
#define PROVISIONER_ENGINE_MODULE_REGISTRY_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/base/status.h"
#include "engine/module/module.h"

namespace provisioner {

using ModuleFactory = std::function<std::unique_ptr<Module>()>;

// A module as registered: its name and the modules it runs after.
struct ModuleDecl {
  std::string name;
  std::vector<std::string> after;
};

// The run order of `decls`: each after every module it names, the first by
// name among those ready. Fails on a duplicate or unknown name and on a
// cycle (naming the modules in it).
StatusOr<std::vector<std::string>> OrderModules(const std::vector<ModuleDecl>& decls);

class ModuleRegistry {
 public:
  static bool Queue(std::string name, std::vector<std::string> after, ModuleFactory factory);
  // Every registered module, in OrderModules' order. The registrations are
  // checked by a test; a broken one aborts here with OrderModules' message.
  static std::vector<std::unique_ptr<Module>> CreateAll();
  static std::vector<std::string> Names();
  // OrderModules over what is registered.
  static StatusOr<std::vector<std::string>> Order();
};

}  // namespace provisioner

// PROVISIONER_REGISTER_MODULE(NAME, CLASS, AFTER...): AFTER, the names of the
// modules that run before this one (none for the first).
#define PROVISIONER_REGISTER_MODULE(NAME, CLASS, ...)                         \
  namespace {                                                                 \
  [[maybe_unused]] const bool provisioner_registered_##CLASS =                \
      ::provisioner::ModuleRegistry::Queue(                                   \
          NAME, std::vector<std::string>{__VA_ARGS__},                        \
          [] { return std::unique_ptr<::provisioner::Module>(new CLASS()); }); \
  }

#endif  // PROVISIONER_ENGINE_MODULE_REGISTRY_H_
