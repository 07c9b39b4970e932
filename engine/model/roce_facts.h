// Lossless RoCE QoS facts (module `roce`): per PF netdev, the DCB trust state
// and PFC-enabled priorities (dcbnl on the live root, the capture file
// run/provisioner/dcb/<ifname> under a tree root) and mlx5's ECN enables
// (/sys/class/net/<if>/ecn/roce_{np,rp}/enable/<prio>); plus the NCCL traffic
// class doctor compares them with.
#ifndef PROVISIONER_ENGINE_MODEL_ROCE_FACTS_H_
#define PROVISIONER_ENGINE_MODEL_ROCE_FACTS_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace provisioner {

struct RoceNetdevFacts {
  // DCB, nullopt when it could not be read (then `dcb_error` says why).
  std::optional<std::string> trust;     // "dscp" | "pcp"
  std::optional<std::vector<int>> pfc;  // PFC-enabled priorities, ascending
  std::string dcb_error;
  // ECN enable per priority (0..7) of the notification and reaction points;
  // a priority whose file is absent is absent. `ecn_dir` is false when the
  // netdev has no ecn/ directory at all (not mlx5, or no such driver sysfs).
  bool ecn_dir = false;
  std::map<int, bool> ecn_np;
  std::map<int, bool> ecn_rp;
  std::string ecn_error;  // why an ECN file could not be read ("" = none)
  // ecn/roce_np/cnp_dscp and cnp_802p_prio (NVIDIA's out-of-tree mlx5):
  // nullopt when the file is absent.
  std::optional<int> cnp_dscp;
  std::optional<int> cnp_802p_prio;
  // dcbnl, beside trust/pfc: the DSCP -> priority APP entries (empty with
  // trust pcp) and the DCBX mode ("host" | "firmware"; nullopt when the
  // driver has no getdcbx or it was not read).
  std::map<int, int> dscp_map;
  std::optional<std::string> dcbx;
  // dcbnl, beside pfc: the cable length (ieee_pfc.delay, meters; nullopt when
  // the driver reports none) and the port receive buffers
  // (DCB_ATTR_DCB_BUFFER; nullopt without dcbnl_getbuffer): the buffer of
  // each priority, each buffer's bytes and the port's total.
  std::optional<int> cable_length;
  std::optional<std::vector<int>> prio2buffer;
  std::optional<std::vector<long long>> buffer_sizes;
  long long buffer_total = 0;
  // The bytes of the port buffer mlx5 keeps for its internal buffers (PBMC
  // buffers 8 and 9: not in dcbnl, so 0 on the live root; a tree capture
  // may say). mlx5 takes sizes up to total - internal - 4 shared cells.
  long long buffer_internal = 0;
  // The default RoCE traffic class of the netdev's RDMA device port:
  // `tos_file` is the file it lives in (mlx5's tc/<port>/traffic_class or
  // rdma_cm's configfs default_roce_tos), "" when the host has neither;
  // `tos` is nullopt while unset (traffic_class without "Global tclass=").
  std::string tos_file;
  // /sys/kernel/config/rdma_cm/<dev> when `tos_file` is its default_roce_tos
  // and the directory is not there yet (configfs mounted, rdma_cm loaded):
  // apply makes it, and the kernel then makes ports/<n>/default_roce_tos.
  std::string tos_mkdir;
  std::optional<int> tos;
  std::string tos_error;
  // Global pause frames (ethtool netlink, or the capture file under a tree
  // root); nullopt when not read (`pause_error` says why).
  std::optional<bool> pause_rx;
  std::optional<bool> pause_tx;
  std::string pause_error;
};

struct RoceFacts {
  bool discovered = false;  // the roce module ran
  // By PF netdev name.
  std::map<std::string, RoceNetdevFacts> netdevs;
  // The NCCL_IB_TC RoCE traffic uses (the IP ToS byte: DSCP << 2): from the
  // environment of this process, else /etc/nccl.conf under the root;
  // nullopt when set nowhere. `nccl_ib_tc_source` names where it came from.
  std::optional<int> nccl_ib_tc;
  std::string nccl_ib_tc_source;
};

}  // namespace provisioner

#endif  // PROVISIONER_ENGINE_MODEL_ROCE_FACTS_H_
