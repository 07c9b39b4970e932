#include "modules/rdma/verbs.h"

#include <endian.h>
#include <infiniband/verbs.h>
#include <net/if.h>

#include <cerrno>
#include <cstdio>
#include <map>
#include <memory>

namespace provisioner::rdma {

std::string GidText(const uint8_t* raw16) {
  std::string s;
  char buf[8];
  for (int i = 0; i < 16; i += 2) {
    std::snprintf(buf, sizeof buf, "%s%02x%02x", i ? ":" : "", raw16[i], raw16[i + 1]);
    s += buf;
  }
  return s;
}

std::string GidTypeName(uint32_t ibv_gid_type, bool roce) {
  // sysfs names IB and RoCE v1 alike ("IB/RoCE v1").
  (void)roce;
  return ibv_gid_type == IBV_GID_TYPE_ROCE_V2 ? "RoCE v2" : "IB/RoCE v1";
}

std::string GuidText(uint64_t be_guid) {
  uint64_t g = be64toh(be_guid);
  char buf[24];
  std::snprintf(buf, sizeof buf, "%04x:%04x:%04x:%04x", static_cast<unsigned>(g >> 48 & 0xffff),
                static_cast<unsigned>(g >> 32 & 0xffff), static_cast<unsigned>(g >> 16 & 0xffff),
                static_cast<unsigned>(g & 0xffff));
  return buf;
}

StatusOr<std::vector<VerbsDevice>> QueryRdmaCore(bool with_gids) {
  int n = 0;
  errno = 0;
  ibv_device** list = ibv_get_device_list(&n);
  if (list == nullptr) {
    // ENOSYS: no RDMA in this kernel; that is "no devices", not a failure.
    if (errno == ENOSYS || errno == 0) return std::vector<VerbsDevice>{};
    return ErrnoToStatus(errno, "ibv_get_device_list");
  }
  std::unique_ptr<ibv_device*, void (*)(ibv_device**)> guard(list, ibv_free_device_list);
  std::vector<VerbsDevice> out;
  for (int i = 0; i < n; ++i) {
    VerbsDevice d;
    d.name = ibv_get_device_name(list[i]);
    d.node_guid = GuidText(ibv_get_device_guid(list[i]));
    if (with_gids) {
      errno = 0;
      ibv_context* ctx = ibv_open_device(list[i]);
      if (ctx == nullptr) {
        d.open_error =
            ErrnoToStatus(errno != 0 ? errno : ENODEV, "ibv_open_device " + d.name).message();
      } else {
        ibv_device_attr attr{};
        size_t max = 0;
        if (ibv_query_device(ctx, &attr) == 0) {
          for (int p = 1; p <= attr.phys_port_cnt; ++p) {
            ibv_port_attr pa{};
            if (ibv_query_port(ctx, static_cast<uint8_t>(p), &pa) == 0) max += pa.gid_tbl_len;
          }
        }
        std::vector<ibv_gid_entry> entries(max);
        ssize_t got = max == 0 ? 0 : ibv_query_gid_table(ctx, entries.data(), entries.size(), 0);
        if (got < 0) {
          d.open_error =
              ErrnoToStatus(static_cast<int>(-got), "ibv_query_gid_table " + d.name).message();
        } else {
          d.gids_queried = true;
          for (ssize_t k = 0; k < got; ++k) {
            const ibv_gid_entry& e = entries[k];
            VerbsGid g;
            g.port = static_cast<int>(e.port_num);
            g.gid.index = static_cast<int>(e.gid_index);
            g.gid.gid = GidText(e.gid.raw);
            g.gid.type = GidTypeName(e.gid_type, e.ndev_ifindex != 0);
            char name[IF_NAMESIZE] = {};
            if (e.ndev_ifindex != 0 && if_indextoname(e.ndev_ifindex, name) != nullptr) {
              g.gid.netdev = name;
            }
            d.gids.push_back(std::move(g));
          }
        }
        ibv_close_device(ctx);
      }
    }
    out.push_back(std::move(d));
  }
  return out;
}

std::vector<std::string> CompareWithSysfs(const std::vector<VerbsDevice>& verbs,
                                          const std::vector<RdmaDevice>& sysfs) {
  std::vector<std::string> diffs;
  std::map<std::string, const RdmaDevice*> by_name;
  for (const auto& d : sysfs) by_name[d.name] = &d;
  std::map<std::string, const VerbsDevice*> seen;
  for (const auto& v : verbs) {
    seen[v.name] = &v;
    auto it = by_name.find(v.name);
    if (it == by_name.end()) {
      diffs.push_back(v.name + ": listed by rdma-core, not in /sys/class/infiniband");
      continue;
    }
    const RdmaDevice& s = *it->second;
    if (v.node_guid != s.node_guid) {
      diffs.push_back(v.name + ": node GUID rdma-core " + v.node_guid + ", sysfs " + s.node_guid);
    }
    if (!v.gids_queried) continue;
    std::map<std::pair<int, int>, const RdmaGid*> sg;
    for (const auto& p : s.ports) {
      for (const auto& g : p.gids) sg[{p.port, g.index}] = &g;
    }
    size_t matched = 0;
    for (const auto& vg : v.gids) {
      std::string where =
          v.name + " port " + std::to_string(vg.port) + " GID " + std::to_string(vg.gid.index);
      auto g = sg.find({vg.port, vg.gid.index});
      if (g == sg.end()) {
        diffs.push_back(where + ": only rdma-core has it (" + vg.gid.gid + ")");
        continue;
      }
      ++matched;
      const RdmaGid& x = *g->second;
      if (x.gid != vg.gid.gid)
        diffs.push_back(where + ": rdma-core " + vg.gid.gid + ", sysfs " + x.gid);
      if (x.type != vg.gid.type)
        diffs.push_back(where + ": type rdma-core " + vg.gid.type + ", sysfs " + x.type);
      if (x.netdev != vg.gid.netdev) {
        diffs.push_back(where + ": netdev rdma-core " + vg.gid.netdev + ", sysfs " + x.netdev);
      }
    }
    if (matched != sg.size()) {
      diffs.push_back(v.name + ": sysfs shows " + std::to_string(sg.size()) + " GIDs, rdma-core " +
                      std::to_string(v.gids.size()));
    }
  }
  for (const auto& d : sysfs) {
    // rdma-core lists only devices it can use (uverbs present).
    if (!seen.count(d.name))
      diffs.push_back(d.name + ": in /sys/class/infiniband, not listed by rdma-core");
  }
  return diffs;
}

}  // namespace provisioner::rdma
