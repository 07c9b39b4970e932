// SortDiagnostics (loader.h): file order, and a knock-on error after the
// error it follows from (issue 38 item 7).
#include <string>
#include <vector>

#include "engine/config/loader.h"
#include "gtest/gtest.h"

namespace provisioner {
namespace {

std::vector<std::string> Paths(const std::vector<Diagnostic>& diags) {
  std::vector<std::string> out;
  for (const auto& d : diags) out.push_back(d.path + (d.message.empty() ? "" : " " + d.message));
  return out;
}

Diagnostic Error(const std::string& path, const std::string& message = "") {
  return Diagnostic{Severity::kError, path, message};
}

// Module order (kmod's line 17 before sriov's line 14) becomes file order.
TEST(DiagnosticOrderTest, FileOrderWhateverOrderTheyCameIn) {
  MarkIndex marks;
  marks.Set("spec.nics[0].nicSelector", {8, 20});
  marks.Set("spec.nics[1].numVfs", {14, 15});
  marks.Set("spec.kernelModules[0]", {17, 7});
  std::vector<Diagnostic> diags = {Error("spec.kernelModules[0]"), Error("spec.nics[1].numVfs"),
                                   Error("spec.nics[0].nicSelector"), Error("")};
  SortDiagnostics(marks, &diags);
  EXPECT_EQ(Paths(diags),
            (std::vector<std::string>{"", "spec.nics[0].nicSelector", "spec.nics[1].numVfs",
                                      "spec.kernelModules[0]"}));
}

// A rail's nearGpu is written nowhere: its errors are attributed to
// spec.rails.count, above the nic template, but they follow from the
// template's nicSelector, so they come after what is said about it (and
// after what is said about the fields between).
TEST(DiagnosticOrderTest, RailNearGpuErrorsAfterTheRailSelector) {
  MarkIndex marks;
  marks.Set("spec.rails.count", {25, 12});
  marks.Set("spec.rails.nic.name", {27, 13});
  marks.Set("spec.rails.nic.nicSelector", {28, 20});
  marks.Set("spec.rails.ipPool.subnet", {37, 15});
  const std::string knock_on =
      "rail 1 (spec.nics[0].nicSelector.nearGpu): no NIC matching the selector's other fields "
      "is connected to GPU 0";
  std::vector<Diagnostic> diags = {
      Error("spec.rails.count", knock_on), Error("spec.rails.ipPool.subnet"),
      Error("spec.rails.nic.nicSelector", "bad"),
      Error("spec.rails.count", "allGpus: this host has 0 GPUs"), Error("spec.rails.nic.name")};
  SortDiagnostics(marks, &diags);
  EXPECT_EQ(Paths(diags),
            (std::vector<std::string>{"spec.rails.count allGpus: this host has 0 GPUs",
                                      "spec.rails.nic.name", "spec.rails.nic.nicSelector bad",
                                      "spec.rails.count " + knock_on, "spec.rails.ipPool.subnet"}));
}

}  // namespace
}  // namespace provisioner
