#include "modules/railnet/persist_render.h"

#include <cstdint>
#include <cstdio>

#include "modules/railnet/policy_routing.h"

namespace provisioner {
namespace {

const char kHeader[] = "# written by provisioner (module railnet): ";

std::vector<std::string> Addresses(const RailWant& w) {
  return w.addresses ? *w.addresses : std::vector<std::string>{};
}

bool IsV6(const std::string& cidr) { return cidr.find(':') != std::string::npos; }

std::vector<PolicyRoute> Routes(const RailWant& w) {
  std::vector<PolicyRoute> out;
  for (const std::string& r : w.routes) {
    if (auto p = ParseRoute(r)) out.push_back(*p);
  }
  return out;
}

std::vector<PolicyRule> Rules(const RailWant& w) {
  std::vector<PolicyRule> out;
  for (const std::string& r : w.rules) {
    if (auto p = ParseRule(r)) out.push_back(*p);
  }
  return out;
}

std::string Table(const RailWant& w) { return w.table ? std::to_string(*w.table) : ""; }

std::string Origin(const RailWant& w) {
  return "nic " + w.nic + " (" + w.path + ") on " + w.lasting_name + ".\n";
}

// "0.0.0.0/0" for the default route, the prefix otherwise.
std::string Destination(const PolicyRoute& r) { return r.dst == "default" ? "0.0.0.0/0" : r.dst; }

}  // namespace

std::string NetworkdRailPath(const RailWant& w) {
  return std::string(kNetworkdDir) + "/10-provisioner-" + w.lasting_name + ".network";
}

std::string NmRailPath(const RailWant& w) {
  return std::string(kNmConnectionsDir) + "/provisioner-" + w.lasting_name + ".nmconnection";
}

std::string StableUuid(const std::string& id) {
  // Two FNV-1a 64-bit hashes of the id (different offsets) as 128 bits, with
  // RFC 9562's version 8 (custom) and variant bits.
  auto fnv = [&](uint64_t h) {
    for (unsigned char c : id) {
      h ^= c;
      h *= 1099511628211ULL;
    }
    return h;
  };
  uint64_t hi = fnv(14695981039346656037ULL);
  uint64_t lo = fnv(0x6c62272e07bb0142ULL ^ hi);
  hi = (hi & ~0xf000ULL) | 0x8000ULL;
  lo = (lo & 0x3fffffffffffffffULL) | 0x8000000000000000ULL;
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%08x-%04x-%04x-%04x-%012llx", static_cast<unsigned>(hi >> 32),
                static_cast<unsigned>((hi >> 16) & 0xffff), static_cast<unsigned>(hi & 0xffff),
                static_cast<unsigned>(lo >> 48),
                static_cast<unsigned long long>(lo & 0xffffffffffffULL));
  return buf;
}

std::string RenderNetplanRails(const std::vector<const RailWant*>& rails) {
  std::string out = std::string(kHeader) +
                    "the rails' addresses, routing tables and rules.\n"
                    "# netplan merges this file with the others of /etc/netplan.\n"
                    "network:\n  version: 2\n  ethernets:\n";
  for (const RailWant* w : rails) {
    out += "    # " + Origin(*w);
    out += "    " + w->lasting_name + ":\n      optional: true\n";
    const std::vector<std::string> addresses = Addresses(*w);
    if (!addresses.empty()) {
      out += "      addresses:\n";
      for (const std::string& a : addresses) out += "        - \"" + a + "\"\n";
    }
    const std::vector<PolicyRoute> routes = Routes(*w);
    if (!routes.empty()) {
      out += "      routes:\n";
      for (const PolicyRoute& r : routes) {
        out += "        - to: " + r.dst + "\n";
        if (!r.via.empty()) out += "          via: " + r.via + "\n";
        if (!r.src.empty()) out += "          from: " + r.src + "\n";
        if (r.link_scope) out += "          scope: link\n";
        out += "          table: " + Table(*w) + "\n";
      }
    }
    const std::vector<PolicyRule> rules = Rules(*w);
    if (!rules.empty()) {
      out += "      routing-policy:\n";
      for (const PolicyRule& r : rules) {
        out += "        - from: " + r.from + "\n          table: " + std::to_string(r.table) +
               "\n          priority: " + std::to_string(r.pref) + "\n";
      }
    }
  }
  return out;
}

std::string RenderNetworkdRail(const RailWant& w) {
  std::string out = std::string(kHeader) + Origin(w);
  out += "\n[Match]\nName=" + w.lasting_name + "\n\n[Link]\nRequiredForOnline=no\n";
  for (const std::string& a : Addresses(w)) out += "\n[Address]\nAddress=" + a + "\n";
  for (const PolicyRoute& r : Routes(w)) {
    out += "\n[Route]\nDestination=" + Destination(r) + "\n";
    if (!r.via.empty()) out += "Gateway=" + r.via + "\n";
    if (!r.src.empty()) out += "PreferredSource=" + r.src + "\n";
    if (r.link_scope) out += "Scope=link\n";
    out += "Table=" + Table(w) + "\n";
  }
  for (const PolicyRule& r : Rules(w)) {
    out += "\n[RoutingPolicyRule]\nFrom=" + r.from + "\nTable=" + std::to_string(r.table) +
           "\nPriority=" + std::to_string(r.pref) + "\n";
  }
  return out;
}

std::string RenderNmKeyfileRail(const RailWant& w) {
  const std::string id = "provisioner-" + w.lasting_name;
  std::string out = std::string(kHeader) + Origin(w);
  out += "[connection]\nid=" + id + "\nuuid=" + StableUuid(id) +
         "\ntype=ethernet\ninterface-name=" + w.lasting_name + "\nautoconnect=true\n\n[ethernet]\n";
  std::string v4, v6;
  int n4 = 0, n6 = 0;
  for (const std::string& a : Addresses(w)) {
    if (IsV6(a)) {
      v6 += "address" + std::to_string(++n6) + "=" + a + "\n";
    } else {
      v4 += "address" + std::to_string(++n4) + "=" + a + "\n";
    }
  }
  int k = 0;
  for (const PolicyRoute& r : Routes(w)) {
    const std::string key = "route" + std::to_string(++k);
    v4 += key + "=" + Destination(r) + (r.via.empty() ? "" : "," + r.via) + "\n";
    v4 += key + "_options=" + (r.src.empty() ? "" : "src=" + r.src + ",") + "table=" + Table(w) +
          "\n";
  }
  k = 0;
  for (const PolicyRule& r : Rules(w)) {
    v4 += "routing-rule" + std::to_string(++k) + "=priority " + std::to_string(r.pref) + " from " +
          r.from + "/32 table " + std::to_string(r.table) + "\n";
  }
  out += "\n[ipv4]\nmethod=" + std::string(n4 > 0 ? "manual" : "disabled") + "\n" + v4;
  out += "\n[ipv6]\nmethod=" + std::string(n6 > 0 ? "manual" : "ignore") + "\n" + v6;
  return out;
}

std::string RenderIfupdownRails(const std::vector<const RailWant*>& rails) {
  std::string out = std::string(kHeader) +
                    "the rails' addresses, routing tables and rules.\n"
                    "# /etc/network/interfaces sources this directory (Debian's default).\n";
  for (const RailWant* w : rails) {
    const std::string& n = w->lasting_name;
    const std::vector<std::string> addresses = Addresses(*w);
    std::vector<std::string> v4;
    for (const std::string& a : addresses) {
      if (!IsV6(a)) v4.push_back(a);
    }
    out += "\n# " + Origin(*w) + "auto " + n + "\n";
    if (v4.empty()) {
      out += "iface " + n + " inet manual\n";
    } else {
      out += "iface " + n + " inet static\n    address " + v4.front() + "\n";
    }
    for (const std::string& a : addresses) {
      if (!v4.empty() && a == v4.front()) continue;
      out += "    post-up ip addr add " + a + " dev " + n + "\n";
    }
    for (PolicyRoute r : Routes(*w)) {
      r.dev = n;
      out += "    post-up ip route replace " + FormatRoute(r) + " table " + Table(*w) + "\n";
    }
    for (const PolicyRule& r : Rules(*w)) {
      out += "    post-up ip rule add " + FormatRule(r) + "\n";
      out += "    pre-down ip rule del " + FormatRule(r) + "\n";
    }
  }
  return out;
}

std::string RenderNmUnmanaged(const std::vector<std::string>& names) {
  std::string out = std::string(kHeader) +
                    "the rail interfaces are provisioner's\n"
                    "# (spec.network.owner: provisioner): NetworkManager leaves them alone.\n"
                    "[keyfile]\nunmanaged-devices+=";
  for (size_t i = 0; i < names.size(); ++i) {
    out += (i ? ";" : "") + std::string("interface-name:") + names[i];
  }
  return out + "\n";
}

std::string RenderNetworkdUnmanaged(const std::vector<std::string>& names) {
  std::string out = std::string(kHeader) +
                    "the rail interfaces are provisioner's\n"
                    "# (spec.network.owner: provisioner): systemd-networkd leaves them alone.\n"
                    "# Sorts before every other .network (netplan's 10-netplan-*) that could "
                    "match them.\n\n[Match]\nName=";
  for (size_t i = 0; i < names.size(); ++i) out += (i ? " " : "") + names[i];
  return out + "\n\n[Link]\nUnmanaged=yes\n";
}

}  // namespace provisioner
