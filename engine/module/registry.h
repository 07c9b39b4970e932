// Module registry. PROVISIONER_REGISTER_MODULE only queues a factory (a
// function-local static, so no static-initialization-order trap); the CLI
// builds the modules in main(). Module libraries are alwayslink = 1.
#ifndef PROVISIONER_ENGINE_MODULE_REGISTRY_H_
#define PROVISIONER_ENGINE_MODULE_REGISTRY_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/module/module.h"

namespace provisioner {

using ModuleFactory = std::function<std::unique_ptr<Module>()>;

class ModuleRegistry {
 public:
  // `order` sorts discovery (pci = 0 first, then the rest by order, then name).
  static bool Queue(std::string name, int order, ModuleFactory factory);
  static std::vector<std::unique_ptr<Module>> CreateAll();
  static std::vector<std::string> Names();
};

}  // namespace provisioner

#define PROVISIONER_REGISTER_MODULE(NAME, ORDER, CLASS)                       \
  namespace {                                                                 \
  [[maybe_unused]] const bool provisioner_registered_##CLASS =                \
      ::provisioner::ModuleRegistry::Queue(                                   \
          NAME, ORDER, [] { return std::unique_ptr<::provisioner::Module>(    \
                                new CLASS()); });                             \
  }

#endif  // PROVISIONER_ENGINE_MODULE_REGISTRY_H_
