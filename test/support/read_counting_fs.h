// A HostFs that counts its ReadFile calls per path, for the paths holding a
// given piece (e.g. "/pkeys/"): "read once per discovery" assertions.
#ifndef PROVISIONER_TEST_SUPPORT_READ_COUNTING_FS_H_
#define PROVISIONER_TEST_SUPPORT_READ_COUNTING_FS_H_

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "engine/host/forwarding_host_fs.h"

namespace provisioner::testing {

class ReadCountingFs final : public ForwardingHostFs {
 public:
  ReadCountingFs(std::unique_ptr<HostFs> inner, std::string counted)
      : ForwardingHostFs(std::move(inner)), counted_(std::move(counted)) {}
  StatusOr<std::string> ReadFile(std::string_view p) const override {
    if (p.find(counted_) != std::string_view::npos) ++reads_[std::string(p)];
    return ForwardingHostFs::ReadFile(p);
  }
  // Reads per path, of the paths counted.
  const std::map<std::string, int>& reads() const { return reads_; }

 private:
  std::string counted_;
  mutable std::map<std::string, int> reads_;
};

}  // namespace provisioner::testing

#endif  // PROVISIONER_TEST_SUPPORT_READ_COUNTING_FS_H_
