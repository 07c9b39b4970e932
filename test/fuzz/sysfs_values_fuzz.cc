// Fuzz target: the parsers of values read from sysfs and the modprobe.d
// text the rdma module edits: GIDs, LIDs, port states, PCI addresses, GUIDs,
// the ib_core netns_mode parameter, kernel releases. None may crash, hang
// or read out of bounds; the modprobe.d editor must keep its promise (the
// edited text sets the mode asked, and editing twice changes nothing more),
// and so must PciAddress (what parses is safe in a path and reads back as
// the same address; the full form is a case of the others), and so must the
// IPoIB values (a P_Key reads back as itself; a child's name, which goes in
// paths, is a valid interface name; the address capture re-renders as read).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "engine/model/ipoib_facts.h"
#include "engine/model/pci_address.h"
#include "modules/ipoib/ipoib_backend.h"
#include "modules/link/link_backend.h"
#include "modules/rdma/rdma_sysfs.h"
#include "modules/vf/vf_planner.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace provisioner;
  std::string text(reinterpret_cast<const char*>(data), size);
  (void)rdma::StripEnumPrefix(text);
  (void)rdma::ParseHexLid(text);
  bool zero = rdma::IsEmptyGidSlot(text);
  auto v4 = rdma::Ipv4FromGid(text);
  auto v6 = rdma::Ipv6FromGid(text);
  if (zero && v4) __builtin_trap();  // an empty slot has no address
  if (v4 && !v6) __builtin_trap();   // an IPv4-mapped GID is an IPv6 address
  (void)rdma::NetnsModeFromParam(text);
  (void)rdma::KernelVersion(text);
  (void)rdma::OfedVersionFrom(text);
  (void)ParseGuid(text);
  const auto any = PciAddress::Parse(text);
  const auto full = PciAddress::ParseFull(text);
  const auto sysfs = PciAddress::ParseSysfsName(text);
  for (const auto& a : {any, full, sysfs}) {
    if (!a) continue;
    if (text.find('/') != std::string::npos) __builtin_trap();  // goes in paths
    if (PciAddress::ParseSysfsName(a->ToString()) != a) __builtin_trap();
  }
  if (any && PciAddress::ParseFull(any->ToString()) != any) __builtin_trap();
  if (full && (any != full || sysfs != full)) __builtin_trap();
  if (auto pkey = ParsePkey(text)) {
    if (*pkey < 0 || *pkey > 0xffff || ParsePkey(PkeyText(*pkey)) != pkey) __builtin_trap();
    if (IsChildPkey(*pkey) && !IsValidIfname(IpoibChildName("ibs5f0", *pkey))) __builtin_trap();
  }
  if (auto cidr = CanonicalCidr(text)) {
    if (CanonicalCidr(*cidr) != cidr) __builtin_trap();  // canonical is a fixed point
  }
  const auto captured = ParseIpoibAddresses(text);
  if (ParseIpoibAddresses(RenderIpoibAddresses(captured)) != captured) __builtin_trap();
  for (const std::string mode : {"exclusive", "shared"}) {
    std::string edited = rdma::EditModprobeNetnsMode(text, mode);
    auto now = rdma::NetnsModeFromModprobe(edited);
    if (mode == "exclusive" && now != "exclusive") __builtin_trap();
    if (mode == "shared" && now == "exclusive") __builtin_trap();
    if (rdma::EditModprobeNetnsMode(edited, mode) != edited) __builtin_trap();
  }
  return 0;
}
