#include "test/manifests/golden.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "gtest/gtest.h"

namespace provisioner::testing {

void ExpectGolden(const std::string& file, const std::string& got) {
  const char* ws = std::getenv("BUILD_WORKSPACE_DIRECTORY");
  if (std::getenv("UPDATE_GOLDEN") != nullptr && ws != nullptr) {
    std::ofstream(std::string(ws) + "/" + file, std::ios::trunc) << got;
    return;
  }
  std::ifstream in(file);
  ASSERT_TRUE(in) << file << " missing: run with UPDATE_GOLDEN=1 (test/manifests/golden.h)";
  std::stringstream want;
  want << in.rdbuf();
  EXPECT_EQ(got, want.str()) << file << " differs: if intended, UPDATE_GOLDEN=1";
}

}  // namespace provisioner::testing
