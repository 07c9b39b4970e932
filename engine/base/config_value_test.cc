#include "engine/base/config_value.h"

#include "gtest/gtest.h"

namespace provisioner {
namespace {

// Issue 36.6: each format's syntax characters are refused, ordinary values
// (names, PCI addresses, phys_port_name, kernel arguments) pass.
TEST(ConfigValueTest, EachFormatRefusesItsSyntax) {
  for (const char* ok : {"p0", "pf0vf0", "0000:af:00.0", "mlx5_rail1", "rail-1.a"}) {
    EXPECT_EQ(ConfigValueProblem(ConfigSyntax::kUdevRuleValue, ok), std::nullopt) << ok;
  }
  EXPECT_EQ(*ConfigValueProblem(ConfigSyntax::kUdevRuleValue, "p0\", RUN+=\"/bin/sh"),
            "contains '\"' at byte 2");
  for (const char* bad : {"p0 x", "a%k", "a$b", "p*", "a\\b", "a\nb", "", "p[0]", "a|b"}) {
    EXPECT_NE(ConfigValueProblem(ConfigSyntax::kUdevRuleValue, bad), std::nullopt) << bad;
  }
  EXPECT_EQ(ConfigValueProblem(ConfigSyntax::kModprobeToken, "mlx5_ib"), std::nullopt);
  EXPECT_EQ(*ConfigValueProblem(ConfigSyntax::kModprobeToken, "mlx5_ib #x"),
            "contains byte 0x20 at byte 7");
  EXPECT_NE(ConfigValueProblem(ConfigSyntax::kModprobeToken, "a#b"), std::nullopt);
  EXPECT_EQ(ConfigValueProblem(ConfigSyntax::kSysctlValue, "4096 87380 6291456"), std::nullopt);
  EXPECT_NE(ConfigValueProblem(ConfigSyntax::kSysctlValue, "1\nnet.x=2"), std::nullopt);
  EXPECT_EQ(ConfigValueProblem(ConfigSyntax::kShellDoubleQuoted, "iommu=pt"), std::nullopt);
  for (const char* bad : {"a\"b", "$(reboot)", "`id`", "a\\", "a b"}) {
    EXPECT_NE(ConfigValueProblem(ConfigSyntax::kShellDoubleQuoted, bad), std::nullopt) << bad;
  }
  Status s = CheckConfigValue(ConfigSyntax::kUdevRuleValue, "phys_port_name of ens6f0np0",
                              "p0\", RUN+=\"x\"");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("phys_port_name of ens6f0np0"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("cannot go into a udev rule file: it contains '\"' at byte 2"),
            std::string::npos)
      << s.message();
}

}  // namespace
}  // namespace provisioner
