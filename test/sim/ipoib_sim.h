// What ib_ipoib does on writes to an IPoIB netdev's sysfs files
// (drivers/infiniband/ulp/ipoib/ipoib_main.c, ipoib_vlan.c), acting on a host
// tree. `dir` is the netdev's real directory (/sys/devices/.../net/ibs5f0).
//
//   create_child  sscanf "%i"; <= 0, > 0xffff or 0x8000: EINVAL; the PF's own
//                 P_Key or an existing child's: ENOTUNIQ; else the child
//                 "<if>.<pkey %04x>" (cut to 15 characters) under the same
//                 PCI function's net/, with /sys/class/net/<child>: type 32,
//                 pkey, parent, mode datagram, the parent's MTU (at most
//                 4092), down
//   delete_child  the child of that P_Key goes (its addresses with it); none: ENODEV
//   mode          exactly "connected\n" or "datagram\n" (else EINVAL); the
//                 current mode: nothing; connected without the RC flag in
//                 the hardware address: EINVAL; connected sets the MTU to
//                 65520, datagram to min(4092, mtu) (a 4K broadcast group)
// Each returns 0 or the errno, and changes nothing when it fails.
#ifndef PROVISIONER_TEST_SIM_IPOIB_SIM_H_
#define PROVISIONER_TEST_SIM_IPOIB_SIM_H_

#include <string>
#include <string_view>

#include "test/support/host_tree.h"

namespace provisioner::testing {

int IpoibCreateChild(TreeWriter& w, const std::string& dir, std::string_view value);
int IpoibDeleteChild(TreeWriter& w, const std::string& dir, std::string_view value);
// `old_mode`: the mode before this write ("datagram"/"connected").
int IpoibSetMode(TreeWriter& w, const std::string& dir, std::string_view value,
                 const std::string& old_mode);

}  // namespace provisioner::testing

#endif  // PROVISIONER_TEST_SIM_IPOIB_SIM_H_
