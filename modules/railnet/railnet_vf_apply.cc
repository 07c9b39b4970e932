#include "modules/railnet/railnet_vf_apply.h"

#include <string>
#include <vector>

#include "modules/railnet/policy_routing.h"
#include "modules/railnet/railnet_planner.h"
#include "modules/railnet/railnet_vf.h"

namespace provisioner {
namespace {

// The netdev of VF `ref` now ("" none), and why not when there is none.
std::string NetdevOf(const HostFs& fs, const std::string& ref, std::string* why) {
  auto vf = ParseVfRef(ref);
  if (!vf) return ref;
  const std::string dir =
      "/sys/bus/pci/devices/" + vf->first + "/virtfn" + std::to_string(vf->second);
  auto net = fs.ListDir(dir + "/net");
  if (net.ok() && !net->empty()) return net->front();
  std::string driver = "none";
  if (auto d = fs.ReadLink(dir + "/driver"); d.ok()) driver = d->substr(d->rfind('/') + 1);
  *why = "VF " + std::to_string(vf->second) + " of " + vf->first +
         (fs.Exists(dir) ? " has no netdev (driver " + driver + ")" : " does not exist");
  return "";
}

// No address, no sysctl value (an inverse of a VF's first settings: its
// values were unknown, all null).
bool WantsNothing(const nlohmann::json& after) {
  if (after.is_object()) {
    for (const auto& [k, v] : after.items()) {
      if (!v.is_null()) return false;
    }
    return true;
  }
  return after.is_null() || (after.is_array() && after.empty());
}

// "net.ipv4.conf.<ref>.<key> = v" lines with the netdev's name.
StatusOr<std::string> ResolveSysctlText(const std::string& text, const HostFs& fs) {
  const std::string prefix = "net.ipv4.conf.";
  std::string out;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    end = end == std::string::npos ? text.size() : end + 1;
    std::string line = text.substr(at, end - at);
    at = end;
    if (line.compare(0, prefix.size(), prefix) == 0) {
      const size_t dot =
          line.find('.', line.find('#') == std::string::npos ? prefix.size() : line.find('#'));
      const std::string name = line.substr(prefix.size(), dot - prefix.size());
      if (ParseVfRef(name)) {
        std::string why;
        const std::string netdev = NetdevOf(fs, name, &why);
        if (netdev.empty()) return FailedPreconditionError(why + ": its sysctls have no name");
        line = prefix + netdev + line.substr(dot);
      }
    }
    out += line;
  }
  return out;
}

}  // namespace

StatusOr<std::optional<Change>> ResolveVfRefs(const Change& c, const HostFs& fs) {
  Change out = c;
  std::string why;
  if (ParseVfRef(c.target)) {
    out.target = NetdevOf(fs, c.target, &why);
    if (out.target.empty()) {
      if (WantsNothing(c.after)) return std::optional<Change>();
      return FailedPreconditionError(c.id + ": " + why);
    }
  }
  if (c.attribute == kRailRoutes && c.after.is_array()) {
    for (auto& e : out.after) {
      auto r = ParseRoute(e.get<std::string>());
      if (!r || !ParseVfRef(r->dev)) continue;
      r->dev = NetdevOf(fs, r->dev, &why);
      if (r->dev.empty()) return FailedPreconditionError(c.id + ": " + why);
      e = FormatRoute(*r);
    }
  }
  if (c.attribute == kRailFile && c.after.is_string() &&
      c.detail.value("path", "") == kRailSysctlFile) {
    ASSIGN_OR_RETURN(std::string text, ResolveSysctlText(c.after.get<std::string>(), fs));
    out.after = text;
  }
  return std::optional<Change>(std::move(out));
}

}  // namespace provisioner
