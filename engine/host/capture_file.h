// The capture files a tree backend answers from: what a live backend asks
// the kernel (devlink, dcbnl, ethtool netlink), recorded under the root by
// `provisioner snapshot` (run/provisioner/...) and rewritten by the tree
// backend's sets. One reading for them all: a missing capture is the tree's
// word for "not recorded", with how to make one; a bad one names its path.
#ifndef PROVISIONER_ENGINE_HOST_CAPTURE_FILE_H_
#define PROVISIONER_ENGINE_HOST_CAPTURE_FILE_H_

#include <initializer_list>
#include <string>
#include <string_view>

#include "engine/base/status.h"
#include "engine/host/host_fs.h"
#include "nlohmann/json.hpp"

namespace provisioner {

// The text of the capture at `path`. A missing file is kFailedPrecondition
// (ENOENT) "<path>: ENOENT: <what> not captured (<made_by>)": a host whose
// driver lacks the interface answers EOPNOTSUPP live, a tree without the
// capture says as much, and how to make one. Other read errors as read.
StatusOr<std::string> ReadCaptureFile(const HostFs& fs, const std::string& path,
                                      std::string_view what, std::string_view made_by);

// ReadCaptureFile parsed by `parse` (StatusOr<T>(const std::string&)); a
// parse error is given the path as its context.
template <typename Parse>
auto ReadParsedCapture(const HostFs& fs, const std::string& path, std::string_view what,
                       std::string_view made_by, Parse parse) -> decltype(parse(std::string())) {
  StatusOr<std::string> text = ReadCaptureFile(fs, path, what, made_by);
  if (!text.ok()) return text.status();
  auto parsed = parse(*text);
  if (!parsed.ok()) return parsed.status().WithContext(path);
  return parsed;
}

// A JSON capture's object, every key of it one of `keys`: kInvalidArgument
// "not a <kind> capture: expected <shape>" for text that is not a JSON
// object, "unknown key \"k\"" for a key not in `keys`. The values are the
// caller's to check.
StatusOr<nlohmann::json> ParseCaptureObject(const std::string& text, std::string_view kind,
                                            std::string_view shape,
                                            std::initializer_list<std::string_view> keys);

}  // namespace provisioner

#endif  // PROVISIONER_ENGINE_HOST_CAPTURE_FILE_H_
