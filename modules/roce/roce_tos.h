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
//    rdma_cm/<dev> directory exists once someone mkdir'ed it: the kernel's
//    make_cma_dev (ENODEV for a name that is no RDMA device) then makes
//    ports/<1..phys_port_cnt>/ with default_roce_mode and default_roce_tos.
//    It is gone after every boot (the value stays in the device after an
//    rmdir, not across a reboot). /sys/kernel/config/rdma_cm itself is there
//    while configfs is mounted and rdma_cm is loaded: then apply makes the
//    device's directory (RdmaCmConfigfs), and the boot apply makes it again.
// The mlx5 file wins where both could be used: it also covers NCCL's verbs
// QPs. Read in drivers/infiniband/core/cma_configfs.c (torvalds/linux
// 045959db: make_cma_dev, make_cma_ports; default_roce_tos beside
// default_roce_mode in later kernels).
#ifndef PROVISIONER_MODULES_ROCE_ROCE_TOS_H_
#define PROVISIONER_MODULES_ROCE_ROCE_TOS_H_

#include <memory>
#include <optional>
#include <string>

#include "engine/base/status.h"
#include "engine/host/host_fs.h"

namespace provisioner {

inline constexpr char kRdmaCmConfigfs[] = "/sys/kernel/config/rdma_cm";

std::string TrafficClassPath(const std::string& rdma_device, int port);
// /sys/kernel/config/rdma_cm/<dev>
std::string RdmaCmDevicePath(const std::string& rdma_device);
std::string RdmaCmTosPath(const std::string& rdma_device, int port);
// The file of the port's default ToS, "" when there is neither: the
// default_roce_tos of a device directory not made yet counts when the
// rdma_cm configfs is there (RdmaCmDirToMake then names the directory).
std::string TosFile(const HostFs& fs, const std::string& rdma_device, int port);
// The rdma_cm/<dev> directory `tos_file` needs made first; "" when none.
std::string RdmaCmDirToMake(const HostFs& fs, const std::string& tos_file);
// True for /sys/kernel/config/rdma_cm/<safe name>.
bool IsRdmaCmDevicePath(const std::string& path);

// Makes and removes rdma_cm/<dev>: on the live root one mkdir / rmdir (the
// kernel makes and drops ports/<n>/); under a tree root the directory and
// the files the kernel would make (default_roce_mode "RoCE v2",
// default_roce_tos 0, one ports/<n> per /sys/class/infiniband/<dev>/ports
// entry), and their removal. One factory (rdma_cm_factory.cc).
class RdmaCmConfigfs {
 public:
  virtual ~RdmaCmConfigfs() = default;
  virtual Status MakeDevice(const std::string& rdma_device) = 0;
  virtual Status RemoveDevice(const std::string& rdma_device) = 0;
};
std::unique_ptr<RdmaCmConfigfs> NewLiveRdmaCmConfigfs(HostFs& fs);
std::unique_ptr<RdmaCmConfigfs> NewTreeRdmaCmConfigfs(HostFs& fs);
std::unique_ptr<RdmaCmConfigfs> NewRdmaCmConfigfs(HostFs& fs);
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
