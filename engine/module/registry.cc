#include "engine/module/registry.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <thread>

#include "engine/base/interrupt.h"

namespace provisioner {
namespace {

struct Entry {
  ModuleDecl decl;
  ModuleFactory factory;
};

std::vector<Entry>& Entries() {
  static std::vector<Entry>* entries = new std::vector<Entry>();
  return *entries;
}

std::vector<ModuleDecl> Decls() {
  std::vector<ModuleDecl> decls;
  for (const auto& e : Entries()) decls.push_back(e.decl);
  return decls;
}

// Entries in run order; aborts on a broken registration (a build defect the
// registry test catches first).
std::vector<const Entry*> Sorted() {
  auto order = OrderModules(Decls());
  if (!order.ok()) {
    std::fprintf(stderr, "provisioner: module registry: %s\n", order.status().message().c_str());
    std::abort();
  }
  std::vector<const Entry*> out;
  for (const auto& name : *order) {
    for (const auto& e : Entries()) {
      if (e.decl.name == name) out.push_back(&e);
    }
  }
  return out;
}

class SteadyClock final : public Clock {
 public:
  std::chrono::steady_clock::time_point Now() override { return std::chrono::steady_clock::now(); }
  void SleepFor(std::chrono::milliseconds d) override { std::this_thread::sleep_for(d); }
};

}  // namespace

Clock& RealClock() {
  static SteadyClock* clock = new SteadyClock();
  return *clock;
}

bool WaitStep(Clock& clock, std::chrono::milliseconds d, const std::atomic<int>* interrupt) {
  if (interrupt == nullptr) {
    clock.SleepFor(d);
    return true;
  }
  if (interrupt->load() != 0) return false;
  if (&clock == &RealClock() && interrupt == &InterruptGuard::signal()) {
    return WaitUnlessInterrupted(d);
  }
  clock.SleepFor(d);
  return interrupt->load() == 0;
}

StatusOr<std::vector<std::string>> OrderModules(const std::vector<ModuleDecl>& decls) {
  std::map<std::string, const ModuleDecl*> by_name;
  for (const auto& d : decls) {
    if (!by_name.emplace(d.name, &d).second) {
      return InvalidArgumentError("module " + d.name + " is registered twice");
    }
  }
  std::map<std::string, size_t> waiting;  // name -> how many of its `after` have not run
  for (const auto& d : decls) {
    for (const auto& a : d.after) {
      if (by_name.count(a) == 0) {
        return InvalidArgumentError("module " + d.name + " runs after " + a +
                                    ", which is not registered");
      }
    }
    waiting[d.name] = std::set<std::string>(d.after.begin(), d.after.end()).size();
  }
  std::set<std::string> ready;
  for (const auto& [name, n] : waiting) {
    if (n == 0) ready.insert(name);
  }
  std::vector<std::string> order;
  while (!ready.empty()) {
    std::string next = *ready.begin();
    ready.erase(ready.begin());
    order.push_back(next);
    waiting.erase(next);
    for (auto& [name, n] : waiting) {
      const auto& after = by_name[name]->after;
      if (std::find(after.begin(), after.end(), next) != after.end() && --n == 0) ready.insert(name);
    }
  }
  if (!waiting.empty()) {
    std::string names;
    for (const auto& [name, n] : waiting) names += (names.empty() ? "" : ", ") + name;
    return InvalidArgumentError("modules in a cycle of `after` (or after one): " + names);
  }
  return order;
}

bool ModuleRegistry::Queue(std::string name, std::vector<std::string> after, ModuleFactory factory) {
  Entries().push_back({{std::move(name), std::move(after)}, std::move(factory)});
  return true;
}

std::vector<std::unique_ptr<Module>> ModuleRegistry::CreateAll() {
  std::vector<std::unique_ptr<Module>> out;
  for (const Entry* e : Sorted()) out.push_back(e->factory());
  return out;
}

std::vector<std::string> ModuleRegistry::Names() {
  std::vector<std::string> out;
  for (const Entry* e : Sorted()) out.push_back(e->decl.name);
  return out;
}

StatusOr<std::vector<std::string>> ModuleRegistry::Order() { return OrderModules(Decls()); }

}  // namespace provisioner
