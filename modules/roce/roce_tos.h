// The default RoCE traffic class (IP ToS byte) of an RDMA device port, in
// one of two files, both through the host layer (under --root the tree's):
//  - /sys/class/infiniband/<dev>/tc/<port>/traffic_class: NVIDIA's
//    out-of-tree mlx5_ib (MLNX_OFED / DOCA-OFED "force TC"): it reads
//    "Global tclass=<n>\n" once set (then rule lines "...,tclass=<n>"),
//    nothing while unset; a write of "<n>" (kstrtoint, base 0, <= 255) sets
//    it and rewrites the DSCP of every RoCE QP in RTS, "-1" unsets it; other
//    input is EINVAL. It applies to every QP of the port, verbs QPs (NCCL,
//    UCX) as much as RDMA-CM ones. NVIDIA's lossless RoCE guides set it to
//    106 (DSCP 26 with ECT(0)).
//  - /sys/kernel/config/rdma_cm/<dev>/ports/<port>/default_roce_tos: the
//    upstream kernel's rdma_cm configfs (drivers/infiniband/core/
//    cma_configfs.c): "%u\n", a write is kstrtou8 (EINVAL, ERANGE above 255);
//    only RDMA-CM connections that set no ToS of their own use it. The
//    rdma_cm/<dev> directory exists once someone mkdir'ed it (the value stays
//    in the device after rmdir); provisioner does not create it.
// The first that exists is the one planned; the mlx5 file wins because it
// also covers NCCL's verbs QPs.
#ifndef PROVISIONER_MODULES_ROCE_ROCE_TOS_H_
#define PROVISIONER_MODULES_ROCE_ROCE_TOS_H_

#include <optional>
#include <string>

#include "engine/base/status.h"
#include "engine/host/host_fs.h"

namespace provisioner {

std::string TrafficClassPath(const std::string& rdma_device, int port);
std::string RdmaCmTosPath(const std::string& rdma_device, int port);
// The file of the port's default ToS, "" when there is neither.
std::string TosFile(const HostFs& fs, const std::string& rdma_device, int port);
// True for a path of one of the two shapes with safe names (what a change
// may carry).
bool IsTosPath(const std::string& path);
// nullopt: traffic_class unset. An error names the file and what it holds.
StatusOr<std::optional<int>> ReadTos(const HostFs& fs, const std::string& path);
// nullopt unsets traffic_class (writes "-1"); default_roce_tos has no unset
// (the kernel's default is 0).
Status WriteTos(HostFs& fs, const std::string& path, std::optional<int> tos);

}  // namespace provisioner

#endif  // PROVISIONER_MODULES_ROCE_ROCE_TOS_H_
