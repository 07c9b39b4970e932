// What most of our C++ files include from the standard library and
// nlohmann-json, precompiled once per clang build (BUILD.bazel here says
// why). System headers only (pch.bzl says why).
#ifndef PROVISIONER_THIRD_PARTY_PCH_LIBRARY_H_
#define PROVISIONER_THIRD_PARTY_PCH_LIBRARY_H_

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#endif  // PROVISIONER_THIRD_PARTY_PCH_LIBRARY_H_
