// Discovery with every module the test binary links (ModuleRegistry), as
// `provisioner discover` runs it.
#ifndef PROVISIONER_TEST_SUPPORT_DISCOVER_EVERY_MODULE_H_
#define PROVISIONER_TEST_SUPPORT_DISCOVER_EVERY_MODULE_H_

#include "engine/core/engine.h"
#include "engine/host/host_fs.h"
#include "engine/module/registry.h"
#include "gtest/gtest.h"

namespace provisioner::testing {

// The facts every registered module discovers on `fs`; a failed discovery
// fails the test (and gives empty facts).
inline HostFacts DiscoverWithEveryModule(HostFs& fs) {
  auto modules = ModuleRegistry::CreateAll();
  HostContext ctx;
  ctx.fs = &fs;
  auto facts = Discover(modules, ctx);
  EXPECT_TRUE(facts.ok()) << facts.status().message();
  return facts.ok() ? *facts : HostFacts{};
}

}  // namespace provisioner::testing

#endif  // PROVISIONER_TEST_SUPPORT_DISCOVER_EVERY_MODULE_H_
