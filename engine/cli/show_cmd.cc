// `provisioner show PLANFILE` (terraform show): a saved plan printed as plan
// printed it, with where it applies and how; and plan's word for a saved
// plan given where a host.yaml belongs.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>

#include "engine/base/fd_io.h"
#include "engine/cli/commands.h"
#include "engine/output/render.h"

namespace provisioner::cli {
namespace {

constexpr size_t kMaxSavedPlanBytes = size_t{64} << 20;

}  // namespace

int SavedPlanState(const std::string& file, std::optional<SavedPlan>* saved, std::string* error) {
  std::string text;
  const char* not_regular = nullptr;
  const int read_error = ReadRegularFile(file, kMaxSavedPlanBytes, &text, &not_regular);
  if (read_error < 0) {
    *error = "read " + file + ": " + not_regular + ", not a regular file: refused";
    return -1;
  }
  if (read_error == EFBIG) {
    *error = "read " + file + ": larger than " + std::to_string(kMaxSavedPlanBytes) + " bytes";
    return -1;
  }
  if (read_error != 0) {
    *error = "read " + file + ": " + std::strerror(read_error);
    return -1;
  }
  auto parsed = ParseSavedPlan(text);
  if (!parsed.ok()) {
    *error = "saved plan " + file + " is malformed: " + parsed.status().message();
    return -1;
  }
  *saved = std::move(parsed).value();
  return saved->has_value() ? 1 : 0;
}

int RunShow(const CommonOptions& opt) {
  std::optional<SavedPlan> saved;
  std::string error;
  const int state = SavedPlanState(opt.file, &saved, &error);
  if (state < 0) {
    std::fprintf(stderr, "provisioner: error: %s\n", error.c_str());
    return kExitError;
  }
  if (state == 0) {
    std::fprintf(stderr,
                 "provisioner: error: %s is not a saved plan (provisioner plan FILE --out "
                 "PLANFILE writes one); for a host.yaml: provisioner plan %s\n",
                 opt.file.c_str(), opt.file.c_str());
    return kExitError;
  }
  Plan plan;
  plan.changes = saved->changes;
  if (opt.output != "table") {
    nlohmann::json doc = PlanToJson(plan, saved->root);
    doc["file"] = saved->desired_file;
    PrintDocument(doc, opt.output);
    return kExitOk;
  }
  std::cout << "Saved plan " << opt.file << ": " << saved->desired_file << " for the host under "
            << saved->root << ".\n\n"
            << RenderPlanTable(plan, opt.color) << "\nApply it with: provisioner apply "
            << opt.file << "\n";
  return kExitOk;
}

}  // namespace provisioner::cli
