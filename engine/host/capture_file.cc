#include "engine/host/capture_file.h"

#include <algorithm>
#include <cerrno>

namespace provisioner {

StatusOr<std::string> ReadCaptureFile(const HostFs& fs, const std::string& path,
                                      std::string_view what, std::string_view made_by) {
  StatusOr<std::string> text = fs.ReadFile(path);
  if (!text.ok() && text.status().err() == ENOENT) {
    return Status(
        StatusCode::kFailedPrecondition,
        path + ": ENOENT: " + std::string(what) + " not captured (" + std::string(made_by) + ")",
        ENOENT);
  }
  return text;
}

StatusOr<nlohmann::json> ParseCaptureObject(const std::string& text, std::string_view kind,
                                            std::string_view shape,
                                            std::initializer_list<std::string_view> keys) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return InvalidArgumentError("not a " + std::string(kind) + " capture: expected " +
                                std::string(shape));
  }
  for (const auto& item : j.items()) {
    if (std::find(keys.begin(), keys.end(), item.key()) == keys.end()) {
      return InvalidArgumentError("unknown key \"" + item.key() + "\"");
    }
  }
  return j;
}

}  // namespace provisioner
