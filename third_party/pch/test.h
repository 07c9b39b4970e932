// library.h's headers and GoogleTest/GoogleMock: what the tests include,
// precompiled once per clang build (BUILD.bazel here says why). System
// headers only, named here (pch.bzl says why it cannot include library.h).
#ifndef PROVISIONER_THIRD_PARTY_PCH_TEST_H_
#define PROVISIONER_THIRD_PARTY_PCH_TEST_H_

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

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#endif  // PROVISIONER_THIRD_PARTY_PCH_TEST_H_
