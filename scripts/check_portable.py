#!/usr/bin/env python3
"""Checks that a provisioner binary is portable (scripts/build-portable.sh).

  check_portable.py BINARY [--max-glibc 2.34] [--chroot DIR TREE]

1. The newest GLIBC_ symbol version it imports (objdump -T) is printed as
   "portable: requires GLIBC <version>" and must be at most --max-glibc
   (2.34: RHEL 9; Ubuntu 22.04 has 2.35). No GLIBCXX_/CXXABI_ import either:
   libstdc++ is linked in.
2. Its NEEDED libraries (readelf -d) are all in ALLOWED: libc and friends,
   libgcc_s, and the libraries with a stable soname on every target
   distribution (libkmod, libpci, libnl-3, libnl-route-3, libnl-genl-3, libibverbs,
   libsystemd and libudev: the agent's sd_notify and udev monitor).
3. --chroot DIR TREE (as root): copies only the binary and its ldd closure
   into the empty DIR, the host tree TREE (a directory) beside them, and runs
   `provisioner --version` and `provisioner discover --root TREE` in a
   chroot to DIR: the binary starts with only those libraries present.

Prints one line per finding; exits 1 on the first failed check.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys

# Sonames the portable binary may need, by name before ".so".
ALLOWED = {
    "libc", "libm", "libpthread", "libdl", "librt", "ld-linux-x86-64", "ld-linux-aarch64",
    "libgcc_s", "libkmod", "libpci", "libnl-3", "libnl-route-3", "libnl-genl-3", "libibverbs",
    "libsystemd", "libudev",
}


def fail(msg):
    print("portable: FAIL: " + msg)
    sys.exit(1)


def run(argv):
    try:
        return subprocess.run(argv, check=True, capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        fail("%s: %s" % (" ".join(argv), getattr(e, "stderr", "") or e))


def version_key(v):
    return tuple(int(x) for x in v.split("."))


def check_glibc(binary, max_glibc):
    dynsyms = run(["objdump", "-T", binary])
    needed = {}  # version -> symbols
    for m in re.finditer(r"\(?\b(GLIBC_[0-9.]+|GLIBCXX_[0-9.]+|CXXABI_[0-9.]+)\)?\s+(\S+)$",
                         dynsyms, re.M):
        needed.setdefault(m.group(1), []).append(m.group(2))
    glibc = sorted((v[len("GLIBC_"):] for v in needed if v.startswith("GLIBC_")), key=version_key)
    if not glibc:
        fail("%s imports no GLIBC_ symbol versions (not a dynamic glibc binary?)" % binary)
    newest = glibc[-1]
    print("portable: requires GLIBC %s (for %s)"
          % (newest, ", ".join(sorted(set(needed["GLIBC_" + newest]))[:5])))
    if version_key(newest) > version_key(max_glibc):
        fail("GLIBC %s is newer than --max-glibc %s" % (newest, max_glibc))
    cxx = sorted(v for v in needed if not v.startswith("GLIBC_"))
    if cxx:
        fail("imports libstdc++ symbols (%s: %s): libstdc++ is not linked in"
             % (cxx[0], ", ".join(needed[cxx[0]][:3])))


def check_needed(binary):
    dyn = run(["readelf", "-d", binary])
    libs = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dyn)
    bad = [lib for lib in libs if lib.split(".so")[0] not in ALLOWED]
    print("portable: NEEDED " + " ".join(libs))
    if bad:
        fail("needs %s: not in the allowed list (link it in, or allow it if every target "
             "distribution ships that soname)" % ", ".join(bad))


def ldd_closure(binary):
    """Absolute paths of the libraries the loader maps for BINARY (with the loader)."""
    paths = []
    for line in run(["ldd", binary]).splitlines():
        m = re.search(r"=>\s+(/\S+)", line) or re.match(r"\s*(/\S+)", line)
        if m:
            paths.append(m.group(1))
        elif "not found" in line:
            fail("ldd: " + line.strip())
    return paths


def check_chroot(binary, root, tree):
    if os.geteuid() != 0:
        fail("--chroot needs root")
    if os.path.exists(root) and os.listdir(root):
        fail("%s is not empty" % root)
    chroot = shutil.which("chroot") or shutil.which("chroot", path="/usr/sbin:/sbin")
    if not chroot:
        fail("no chroot command (coreutils)")
    libs = ldd_closure(binary)
    for lib in libs:
        dest = root + lib
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        shutil.copy(lib, dest)  # follows symlinks: the file under the soname ldd printed
    os.makedirs(root + "/usr/bin", exist_ok=True)
    shutil.copy(binary, root + "/usr/bin/provisioner")
    shutil.copytree(tree, root + "/host", symlinks=True)
    print("portable: chroot %s holds only %s" % (root, " ".join(libs)))
    for argv in (["/usr/bin/provisioner", "--version"],
                 ["/usr/bin/provisioner", "--no-color", "discover", "--root", "/host"]):
        r = subprocess.run([chroot, root] + argv, capture_output=True, text=True,
                           env={"PATH": "/usr/bin:/bin", "LC_ALL": "C"})
        if r.returncode != 0:
            fail("in the chroot, %s exited %d: %s" % (" ".join(argv), r.returncode,
                                                       (r.stderr or r.stdout).strip()))
        first = (r.stdout.strip().splitlines() or [""])[0]
        print("portable: chroot: %s: ok (%s)" % (" ".join(argv[1:]), first))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("binary")
    p.add_argument("--max-glibc", default="2.34")
    p.add_argument("--chroot", nargs=2, metavar=("DIR", "TREE"))
    a = p.parse_args()
    check_glibc(a.binary, a.max_glibc)
    check_needed(a.binary)
    if a.chroot:
        check_chroot(os.path.abspath(a.binary), os.path.abspath(a.chroot[0]),
                     os.path.abspath(a.chroot[1]))


if __name__ == "__main__":
    main()
