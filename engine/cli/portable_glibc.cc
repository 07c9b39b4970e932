// Only in the portable binary (--config=portable): keeps the glibc it needs at
// 2.34 (RHEL 9; Ubuntu 22.04 has 2.35). Its libstdc++ is linked statically
// (scripts/build-portable.sh), and Debian 12's libstdc++.a was built against
// glibc 2.36: std::random_device (random.o) calls arc4random, a GLIBC_2.36
// symbol, and the only one of that family it imports (`nm libstdc++.a`). The
// definition here, over getrandom(2) (glibc 2.25, Linux 3.17), is linked
// before libstdc++.a, so the binary imports no arc4random from libc.
#include <sys/random.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdlib>  // declares arc4random (glibc 2.36): the definition must match

namespace {

// Fills buf with kernel randomness; like glibc's arc4random, never fails
// silently: a kernel without getrandom (before 3.17) aborts.
void FillRandom(void* buf, size_t n) {
  auto* p = static_cast<unsigned char*>(buf);
  while (n > 0) {
    ssize_t got = ::getrandom(p, n, 0);
    if (got < 0) {
      if (errno == EINTR) continue;
      std::abort();
    }
    p += got;
    n -= static_cast<size_t>(got);
  }
}

}  // namespace

extern "C" {

uint32_t arc4random() noexcept {
  uint32_t v;
  FillRandom(&v, sizeof v);
  return v;
}

}  // extern "C"
