// RDMA discovery through HostFs: /sys/class/infiniband (devices, ports, GID
// tables), the netns mode (module parameter, modprobe.d), MLNX_OFED markers,
// /dev/infiniband and netdev addresses. Parsers take strings, never paths.
#ifndef PROVISIONER_MODULES_RDMA_RDMA_SYSFS_H_
#define PROVISIONER_MODULES_RDMA_RDMA_SYSFS_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/base/status.h"
#include "engine/host/host_fs.h"
#include "engine/model/kmod_facts.h"
#include "engine/model/host_model.h"

namespace provisioner::rdma {

// "4: ACTIVE" -> "ACTIVE"; "ACTIVE" stays.
std::string StripEnumPrefix(std::string_view s);
// "0x5" -> 5; nullopt when not a number.
std::optional<int> ParseHexLid(std::string_view s);
// True for the GID of an unused slot: its interface ID (the low 64 bits) is
// zero. That is rdma-core's rule (ibv_devinfo's null_gid); the kernel leaves
// an IB port's unused slots as the subnet prefix with a zero interface ID
// (fe80:0000:0000:0000:0000:0000:0000:0000 on mlx4 and qib), a RoCE port's as
// all zeros, and show_gids skips both.
bool IsEmptyGidSlot(std::string_view gid);
// "0000:0000:0000:0000:0000:ffff:ac51:0077" -> "172.81.0.119"; nullopt when
// the GID is not IPv4-mapped.
std::optional<std::string> Ipv4FromGid(std::string_view gid);
// The GID as an IPv6 address in the usual compressed text ("fe80::e42:a1ff:fe5b:7c2e");
// nullopt when it does not parse.
std::optional<std::string> Ipv6FromGid(std::string_view gid);
// The RoCE v2 slot of every address the GID table shows per netdev (show_gids).
std::vector<RoceAddress> RoceV2Addresses(const std::vector<RdmaGid>& gids);

// Netns mode from the ib_core parameter text ("Y"/"N"/"1"/"0").
std::optional<std::string> NetnsModeFromParam(std::string_view value);
// The netns_mode an "options ib_core ..." line of modprobe.d text sets, last one
// wins ("exclusive" for 0, "shared" for 1); nullopt when none.
std::optional<std::string> NetnsModeFromModprobe(std::string_view text);
// Rewrites modprobe.d text so that it sets ib_core netns_mode for `mode`
// ("exclusive" -> netns_mode=0; "shared" or "" -> the option removed; a line
// left with no option is dropped). Every other line is kept as it was.
std::string EditModprobeNetnsMode(std::string_view text, const std::string& mode);
// "5.2.0-1-amd64" -> {5, 2}; nullopt when it does not start with digits.
std::optional<std::pair<int, int>> KernelVersion(std::string_view release);
// "MLNX_OFED_LINUX-5.8-1.0.1.1" anywhere in the text -> "5.8-1.0.1.1".
std::string OfedVersionFrom(std::string_view text);

// The persistent netns mode files, in the order modprobe reads them.
inline constexpr const char* kIbCoreConf = "/etc/modprobe.d/ib_core.conf";
inline constexpr const char* kNetnsModeParam = "/sys/module/ib_core/parameters/netns_mode";

// Every RDMA device (by name) with ports, GIDs and netdevs.
StatusOr<std::vector<RdmaDevice>> ReadRdmaDevices(const HostFs& fs);
// The live mode from the ib_core parameter; nullopt when ib_core is not loaded.
std::optional<std::string> ReadNetnsModeParam(const HostFs& fs);
// The persistent netns mode and the file that sets it (modprobe.d under root).
void ReadPersistentNetnsMode(const HostFs& fs, RdmaFacts& facts);
// The same from modprobe.d as the kmod module read it (KmodFacts::
// options_by_file): the last file setting ib_core's netns_mode wins, and
// what /etc/modprobe.d/ib_core.conf itself sets.
void PersistentNetnsModeFrom(const std::vector<ModprobeFileOptions>& files, RdmaFacts& facts);

// Whether ib_core loads from the initramfs of kernel `release`, from files
// (no lsinitramfs on a tree: /boot/initrd.img-<release> is a compressed
// cpio): a capture of the image's file list as lsinitramfs/lsinitrd print
// it (/run/provisioner/initramfs/<release>.list: ib_core.ko, .ko.xz or
// .ko.zst listed), else the module lists the image is built from:
// initramfs-tools' /etc/initramfs-tools/modules, dracut's add_drivers /
// force_drivers / add_dracutmodules ("rdma") in /etc/dracut.conf{,.d/*.conf},
// naming ib_core or a module that needs it (mlx5_ib, ib_ipoib, rdma_ucm...).
// Fills ib_core_initramfs_evidence and initramfs_rebuild.
void ReadInitramfs(const HostFs& fs, const std::string& release, RdmaFacts& facts);
// MLNX_OFED: /sys/module/mlx_compat, /usr/bin/ofed_info.
void ReadOfed(const HostFs& fs, RdmaFacts& facts);
// /dev/infiniband entries.
void ReadDevFiles(const HostFs& fs, RdmaFacts& facts);
// The capture of the live root's addresses (what getifaddrs answered) that
// `snapshot` stores and a tree root replays: one "<ifname> inet|inet6
// <address>" line per address, in getifaddrs order.
inline constexpr const char* kAddressCapture = "/run/provisioner/addresses";
std::string RenderAddressCapture(const std::vector<std::pair<std::string, std::string>>& addrs);
// Fills facts.addresses from capture text (addresses_known is the caller's).
void ParseAddressCapture(std::string_view text, RdmaFacts& facts);
// Netdev addresses: /proc/net/if_inet6 (IPv6) and /proc/net/fib_trie with
// /proc/net/route (IPv4 local addresses, mapped to the interface whose
// link route holds them).
void ReadAddressesFromProc(const HostFs& fs, RdmaFacts& facts);

}  // namespace provisioner::rdma

#endif  // PROVISIONER_MODULES_RDMA_RDMA_SYSFS_H_
