#include "engine/base/status.h"

#include <cerrno>

#include "gtest/gtest.h"

namespace provisioner {
namespace {

TEST(StatusTest, ErrnoMapsToCodeAndNamesTheErrno) {
  Status s = ErrnoToStatus(EBUSY, "write /sys/x/sriov_numvfs");
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_EQ(s.err(), EBUSY);
  EXPECT_NE(s.message().find("write /sys/x/sriov_numvfs: EBUSY"), std::string::npos);
  EXPECT_EQ(ErrnoToStatus(ERANGE, "w").code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ErrnoToStatus(ENOENT, "w").code(), StatusCode::kNotFound);
}

TEST(StatusTest, ContextChainsWithArrow) {
  Status s = ErrnoToStatus(EBUSY, "write f").WithContext("apply numVfs");
  EXPECT_EQ(s.message().rfind("apply numVfs <- write f: EBUSY", 0), 0u);
  EXPECT_EQ(s.err(), EBUSY);
  EXPECT_TRUE(OkStatus().WithContext("x").ok());
}

StatusOr<int> Half(int v) {
  if (v % 2) return InvalidArgumentError("odd");
  return v / 2;
}

Status UseHalf(int v, int* out) {
  ASSIGN_OR_RETURN(*out, Half(v));
  return OkStatus();
}

TEST(StatusTest, AssignOrReturnPropagates) {
  int out = 0;
  EXPECT_TRUE(UseHalf(8, &out).ok());
  EXPECT_EQ(out, 4);
  Status s = UseHalf(3, &out);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(out, 4);
}

TEST(StatusTest, StatusOrFromOkStatusIsAnError) {
  StatusOr<int> v = OkStatus();
  EXPECT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), StatusCode::kInternal);
  StatusOr<int> w = Status();
  EXPECT_FALSE(w.ok());
}

}  // namespace
}  // namespace provisioner
