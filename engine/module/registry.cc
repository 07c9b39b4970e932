#include "engine/module/registry.h"

#include <algorithm>
#include <thread>
#include <tuple>

namespace provisioner {
namespace {

struct Entry {
  std::string name;
  int order;
  ModuleFactory factory;
};

std::vector<Entry>& Entries() {
  static std::vector<Entry>* entries = new std::vector<Entry>();
  return *entries;
}

std::vector<Entry> Sorted() {
  std::vector<Entry> e = Entries();
  std::sort(e.begin(), e.end(), [](const Entry& a, const Entry& b) {
    return std::tie(a.order, a.name) < std::tie(b.order, b.name);
  });
  return e;
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

bool ModuleRegistry::Queue(std::string name, int order, ModuleFactory factory) {
  Entries().push_back({std::move(name), order, std::move(factory)});
  return true;
}

std::vector<std::unique_ptr<Module>> ModuleRegistry::CreateAll() {
  std::vector<std::unique_ptr<Module>> out;
  for (auto& e : Sorted()) out.push_back(e.factory());
  return out;
}

std::vector<std::string> ModuleRegistry::Names() {
  std::vector<std::string> out;
  for (auto& e : Sorted()) out.push_back(e.name);
  return out;
}

}  // namespace provisioner
