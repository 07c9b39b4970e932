#include "test/support/netlink_bytes.h"

#include <cstring>

namespace provisioner::testing {

void PutAttr(std::vector<uint8_t>& out, uint16_t type, const void* data, size_t len) {
  nlattr a{};
  a.nla_len = static_cast<uint16_t>(NLA_HDRLEN + len);
  a.nla_type = type;
  const auto* p = reinterpret_cast<const uint8_t*>(&a);
  out.insert(out.end(), p, p + sizeof a);
  const auto* d = static_cast<const uint8_t*>(data);
  out.insert(out.end(), d, d + len);
  out.resize((out.size() + 3) & ~size_t{3}, 0);
}

std::vector<uint8_t> Nest(uint16_t type, const std::vector<uint8_t>& inner) {
  std::vector<uint8_t> out;
  PutAttr(out, type | NLA_F_NESTED, inner.data(), inner.size());
  return out;
}

std::vector<uint8_t> NetlinkMessage(uint16_t type, const void* family_header, size_t header_len,
                                    const std::vector<uint8_t>& attrs) {
  std::vector<uint8_t> out(NLMSG_HDRLEN, 0);
  const auto* p = static_cast<const uint8_t*>(family_header);
  out.insert(out.end(), p, p + header_len);
  out.resize(NLMSG_HDRLEN + NLMSG_ALIGN(header_len), 0);
  out.insert(out.end(), attrs.begin(), attrs.end());
  nlmsghdr h{};
  h.nlmsg_len = static_cast<uint32_t>(out.size());
  h.nlmsg_type = type;
  std::memcpy(out.data(), &h, sizeof h);
  return out;
}

std::vector<uint8_t> ErrorMessage(int errnum) {
  nlmsgerr e{};
  e.error = -errnum;
  return NetlinkMessage(NLMSG_ERROR, &e, sizeof e, {});
}

const nlmsghdr* Hdr(const std::vector<uint8_t>& m) {
  return reinterpret_cast<const nlmsghdr*>(m.data());
}

const nlattr* FirstAttr(const std::vector<uint8_t>& m, size_t header_len) {
  return reinterpret_cast<const nlattr*>(m.data() + NLMSG_HDRLEN + NLMSG_ALIGN(header_len));
}

const nlattr* NextAttr(const nlattr* a) {
  return reinterpret_cast<const nlattr*>(reinterpret_cast<const uint8_t*>(a) +
                                         NLA_ALIGN(a->nla_len));
}

const uint8_t* Payload(const nlattr* a) { return reinterpret_cast<const uint8_t*>(a) + NLA_HDRLEN; }

}  // namespace provisioner::testing
