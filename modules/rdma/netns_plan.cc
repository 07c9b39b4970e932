#include "modules/rdma/netns_plan.h"

#include <cstdio>
#include <string>

#include "engine/module/managed_file.h"

namespace provisioner::rdma {
namespace {

// "5.2.0-1-amd64" older than 5.3 (when exclusive mode came to mainline).
bool KernelBefore53(const std::string& release) {
  int major = 0, minor = 0;
  if (std::sscanf(release.c_str(), "%d.%d", &major, &minor) != 2) return false;
  return major < 5 || (major == 5 && minor < 3);
}

// MLNX_OFED 4.7 backported exclusive mode to older kernels.
bool OfedAtLeast47(const std::string& version) {
  int major = 0, minor = 0;
  if (std::sscanf(version.c_str(), "%d.%d", &major, &minor) != 2) return false;
  return major > 4 || (major == 4 && minor >= 7);
}

nlohmann::json Json(const std::optional<std::string>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json();
}

}  // namespace

void PlanNetnsMode(const DesiredState& desired, const HostFacts& facts, PlanSink& sink) {
  if (!desired.rdma || !desired.rdma->netns_mode) return;
  const std::string& want = *desired.rdma->netns_mode;
  const bool persist = desired.rdma->persist;
  const RdmaFacts& r = facts.rdma;

  if (want == "exclusive" && KernelBefore53(facts.kernel.release) &&
      !(r.ofed && OfedAtLeast47(r.ofed_version))) {
    sink.Warning(kNetnsField,
                 "exclusive RDMA netns mode needs Linux 5.3 or MLNX_OFED 4.7; this host runs " +
                     facts.kernel.release +
                     (r.ofed ? " with MLNX_OFED " + (r.ofed_version.empty()
                                                         ? std::string("(version unknown)")
                                                         : r.ofed_version)
                             : " without MLNX_OFED"));
  }

  const bool live_known = facts.rdma_netns_mode.has_value();
  if (!live_known) {
    sink.Warning(
        kNetnsField,
        "cannot read the live RDMA netns mode (" +
            (r.netns_mode_source.empty() ? std::string("ib_core not loaded")
                                         : r.netns_mode_source) +
            ")" +
            (persist ? ": it is set persistently and takes effect when ib_core loads (reboot)"
                     : " and persist is false: nothing is changed"));
  } else if (*facts.rdma_netns_mode != want) {
    Change c;
    c.id = std::string(kModuleName) + "/" + kLiveTarget + "/" + kNetnsAttribute;
    c.module = kModuleName;
    c.target = kLiveTarget;
    c.attribute = kNetnsAttribute;
    c.before = *facts.rdma_netns_mode;
    c.after = want;
    c.disruption = Disruption::kLive;
    c.reason = "spec.rdma.netnsMode wants " + want + " (rdma system set netns " + want + ")";
    c.phase = kPhaseRdmaNetns;
    c.field_path = kNetnsField;
    c.detail = {{"persist", persist}};
    sink.AddChange(std::move(c));
    if (!r.named_netns.empty()) {
      sink.Warning(kNetnsField,
                   "network namespaces exist (/run/netns/" + r.named_netns.front() +
                       (r.named_netns.size() > 1
                            ? " and " + std::to_string(r.named_netns.size() - 1) + " more"
                            : std::string()) +
                       "): the kernel refuses the live switch while they do" +
                       (persist ? "; the mode then takes effect at the next reboot" : ""));
    }
  }

  if (!persist) return;
  // ib_core.conf sets netns_mode=0 for exclusive; shared is the kernel's
  // default, so for shared the option is removed from the file.
  const bool conf_exclusive = r.ib_core_conf_netns_mode == std::optional<std::string>("exclusive");
  if ((want == "exclusive") != conf_exclusive) {
    Change c;
    c.id = std::string(kModuleName) + "/" + kPersistTarget + "/" + kNetnsAttribute;
    c.module = kModuleName;
    c.target = kPersistTarget;
    c.attribute = kNetnsAttribute;
    c.before = Json(r.ib_core_conf_netns_mode);
    c.after = want;
    c.disruption = live_known ? Disruption::kLive : Disruption::kReboot;
    c.reason = want == "exclusive" ? "keep exclusive mode across reboots: options ib_core "
                                     "netns_mode=0 in /etc/modprobe.d/ib_core.conf"
                                   : "keep shared mode across reboots: remove netns_mode from "
                                     "/etc/modprobe.d/ib_core.conf";
    c.phase = kPhaseRdmaNetns;
    c.field_path = "spec.rdma.persist";
    c.detail = {{"path", "/etc/modprobe.d/ib_core.conf"}};
    // A shared file, edited in place: a rollback gives its bytes back.
    DeclareEditedFile(c, "/etc/modprobe.d/ib_core.conf");
    sink.AddChange(std::move(c));
    // ib_core loads from the initramfs, with the modprobe.d copied in when
    // it was built: the file takes effect at boot only once it is rebuilt.
    if (!r.ib_core_initramfs_evidence.empty()) {
      const std::string cmd = r.initramfs_rebuild.empty()
                                  ? std::string("update-initramfs -u (or dracut -f)")
                                  : r.initramfs_rebuild;
      sink.Warning("spec.rdma.persist",
                   "ib_core loads from the initramfs (" + r.ib_core_initramfs_evidence +
                       "): /etc/modprobe.d/ib_core.conf takes effect at boot only after `" + cmd +
                       "`; run it after apply, before the reboot (or boot with "
                       "ib_core.netns_mode=" +
                       (want == "exclusive" ? "0" : "1") + " on the kernel command line)");
    }
  }
  // Another modprobe.d file may set the option after ours: modprobe keeps
  // the last value, so say which file overrides.
  std::string src_name = r.persistent_netns_source.substr(r.persistent_netns_source.rfind('/') + 1);
  if (r.persistent_netns_mode && *r.persistent_netns_mode != want && src_name > "ib_core.conf") {
    sink.Warning("spec.rdma.persist",
                 r.persistent_netns_source + " sets ib_core netns_mode to " +
                     *r.persistent_netns_mode +
                     " and is not managed by provisioner: edit it, or it wins at boot");
  }
}

}  // namespace provisioner::rdma
