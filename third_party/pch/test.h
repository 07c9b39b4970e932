// GoogleTest and GoogleMock, precompiled after library.h (BUILD.bazel here)
// for the tests: what they include beyond what most files do. System
// headers only (pch.bzl says why).
#ifndef PROVISIONER_THIRD_PARTY_PCH_TEST_H_
#define PROVISIONER_THIRD_PARTY_PCH_TEST_H_

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#endif  // PROVISIONER_THIRD_PARTY_PCH_TEST_H_
