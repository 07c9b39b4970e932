// What the kernel does on writes to the default-RoCE-ToS files (acting on a
// host tree; `path` is the file as written, /sys/class/infiniband/... or
// /sys/kernel/config/rdma_cm/...):
//   tc/<port>/traffic_class  NVIDIA's mlx5_ib (traffic_class_store): at most
//       TCLASS_MAX_CMD bytes, comma-separated tokens, strim'ed; a global
//       value is "<n>" or "tclass=<n>" (kstrtoint base 0, > 255: EINVAL); a
//       negative value unsets it; anything else (rules with src_ip=/dst_ip=
//       are not simulated) EINVAL. The file then reads "Global tclass=<n>\n",
//       or nothing while unset.
//   ports/<p>/default_roce_tos  rdma_cm configfs (cma_configfs.c):
//       kstrtou8 base 0: not a number EINVAL, above 255 ERANGE; reads "%u\n".
// Each returns 0 or the errno (and changes nothing when it fails), or -1 for
// a path that is neither.
#ifndef PROVISIONER_TEST_SIM_ROCE_SIM_H_
#define PROVISIONER_TEST_SIM_ROCE_SIM_H_

#include <string>
#include <string_view>

#include "test/support/host_tree.h"

namespace provisioner::testing {

// `path` as written (its shape says which file), `real` the file it resolves to.
int RoceTosWrite(TreeWriter& w, const std::string& path, const std::string& real,
                 std::string_view value);

}  // namespace provisioner::testing

#endif  // PROVISIONER_TEST_SIM_ROCE_SIM_H_
