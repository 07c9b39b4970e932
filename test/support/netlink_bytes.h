// Netlink messages as bytes, laid out as the kernel lays them out: for tests
// that build a kernel's replies and read the requests our builders make
// (rtnetlink dcbnl, generic netlink ethtool, RDMA nldev).
#ifndef PROVISIONER_TEST_SUPPORT_NETLINK_BYTES_H_
#define PROVISIONER_TEST_SUPPORT_NETLINK_BYTES_H_

#include <linux/netlink.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace provisioner::testing {

// Appends an attribute: header, payload, padding to 4.
void PutAttr(std::vector<uint8_t>& out, uint16_t type, const void* data, size_t len);
// An attribute of `type` (NLA_F_NESTED set) holding the attribute bytes `inner`.
std::vector<uint8_t> Nest(uint16_t type, const std::vector<uint8_t>& inner);

// A message of `type`: nlmsghdr (nlmsg_len set), the family header
// `family_header` of `header_len` bytes (dcbmsg, genlmsghdr; none: 0), then
// the attribute bytes.
std::vector<uint8_t> NetlinkMessage(uint16_t type, const void* family_header, size_t header_len,
                                    const std::vector<uint8_t>& attrs);
// NLMSG_ERROR carrying nlmsgerr.error = -errnum (0: an ACK).
std::vector<uint8_t> ErrorMessage(int errnum);

const nlmsghdr* Hdr(const std::vector<uint8_t>& m);
// The first attribute after a family header of `header_len` bytes.
const nlattr* FirstAttr(const std::vector<uint8_t>& m, size_t header_len);
const nlattr* NextAttr(const nlattr* a);
const uint8_t* Payload(const nlattr* a);

}  // namespace provisioner::testing

#endif  // PROVISIONER_TEST_SUPPORT_NETLINK_BYTES_H_
