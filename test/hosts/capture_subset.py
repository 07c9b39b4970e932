#!/usr/bin/env python3
"""Copies the part of a real sysfs capture that concerns some PCI functions.

    capture_subset.py CAPTURE_ROOT OUT_ROOT BDF...

A real capture (hwloc's, ghw's) holds thousands of files; a regression test
needs the functions it is about. For each BDF this copies, as captured (files
byte for byte, symlinks with their captured targets, modes kept):
  - the function's directory under sys/devices, whole, except the
    directories of other PCI functions below it (a bridge's children);
  - the plain files and symlinks of each ancestor directory up to
    sys/devices (the bridges and the host bridge a path walk reads);
  - sys/bus/pci/devices/<BDF> when the capture has it;
  - every link in sys/class/{net,infiniband,infiniband_verbs,infiniband_mad}
    and in sys/bus/pci/drivers/* whose target lies in a copied function, and
    the driver directories themselves;
  - proc/ and etc/ files as captured (small text files only).
Links whose targets were not copied stay as captured (dangling), as in a
partial capture. Nothing is added or edited: whatever a test needs beyond the
capture is added by regenerate.sh, said there and in test/hosts/README.md.
"""
import os
import re
import shutil
import stat
import sys

PCI_NAME = re.compile(r"^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$")
CLASS_DIRS = ["sys/class/net", "sys/class/infiniband", "sys/class/infiniband_verbs",
              "sys/class/infiniband_mad"]


def copy_entry(src, dst):
    """Copies one file or symlink (not following it), keeping its mode."""
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    if os.path.islink(src):
        if not os.path.lexists(dst):
            os.symlink(os.readlink(src), dst)
    elif os.path.isfile(src):
        shutil.copyfile(src, dst)
        os.chmod(dst, stat.S_IMODE(os.stat(src).st_mode))


def copy_function(cap, out, fn_dir):
    """The function's directory, without the PCI functions below it."""
    for dirpath, dirnames, filenames in os.walk(os.path.join(cap, fn_dir)):
        rel = os.path.relpath(dirpath, cap)
        # Another PCI function (a bridge's child) is not part of this one.
        keep = []
        for d in dirnames:
            full = os.path.join(dirpath, d)
            if os.path.islink(full):
                copy_entry(full, os.path.join(out, rel, d))
            elif not PCI_NAME.match(d):
                keep.append(d)
        dirnames[:] = keep
        os.makedirs(os.path.join(out, rel), exist_ok=True)
        for f in filenames:
            copy_entry(os.path.join(dirpath, f), os.path.join(out, rel, f))


def copy_ancestors(cap, out, fn_dir):
    parts = fn_dir.split("/")
    for i in range(2, len(parts)):  # sys/devices, sys/devices/pci0000:80, ...
        rel = "/".join(parts[:i])
        full = os.path.join(cap, rel)
        os.makedirs(os.path.join(out, rel), exist_ok=True)
        for name in sorted(os.listdir(full)):
            p = os.path.join(full, name)
            if os.path.islink(p) or os.path.isfile(p):
                copy_entry(p, os.path.join(out, rel, name))


def copy_links_into(cap, out, class_dir, copied):
    full = os.path.join(cap, class_dir)
    if not os.path.isdir(full):
        return
    os.makedirs(os.path.join(out, class_dir), exist_ok=True)
    for name in sorted(os.listdir(full)):
        p = os.path.join(full, name)
        if not os.path.islink(p):
            continue
        target = os.path.normpath(os.path.join(class_dir, os.readlink(p)))
        if any(target == c or target.startswith(c + "/") for c in copied):
            copy_entry(p, os.path.join(out, class_dir, name))


def main(argv):
    if len(argv) < 4:
        sys.exit(__doc__)
    cap, out, bdfs = argv[1], argv[2], argv[3:]
    copied = []
    for bdf in bdfs:
        fn_dir = None
        link = os.path.join(cap, "sys/bus/pci/devices", bdf)
        if os.path.islink(link):
            fn_dir = os.path.normpath(os.path.join("sys/bus/pci/devices", os.readlink(link)))
            copy_entry(link, os.path.join(out, "sys/bus/pci/devices", bdf))
        elif os.path.isdir(link):  # captured as a directory, not a link (hwloc POWER9)
            fn_dir = os.path.join("sys/bus/pci/devices", bdf)
        else:  # a capture without the bus link: find the directory
            for dirpath, dirnames, _ in os.walk(os.path.join(cap, "sys/devices")):
                if bdf in dirnames:
                    fn_dir = os.path.relpath(os.path.join(dirpath, bdf), cap)
                    break
        if fn_dir is None:
            sys.exit(f"{bdf}: not in the capture")
        copy_function(cap, out, fn_dir)
        if fn_dir.startswith("sys/devices/"):
            copy_ancestors(cap, out, fn_dir)
        copied.append(fn_dir)
    for d in CLASS_DIRS:
        copy_links_into(cap, out, d, copied)
    drivers = os.path.join(cap, "sys/bus/pci/drivers")
    if os.path.isdir(drivers):
        for drv in sorted(os.listdir(drivers)):
            copy_links_into(cap, out, os.path.join("sys/bus/pci/drivers", drv), copied)
            # Keep only the driver directories some copied function uses.
            d = os.path.join(out, "sys/bus/pci/drivers", drv)
            if os.path.isdir(d) and not os.listdir(d):
                os.rmdir(d)
    for top in ("proc", "etc"):
        for dirpath, _, filenames in os.walk(os.path.join(cap, top)):
            for f in filenames:
                p = os.path.join(dirpath, f)
                if os.path.isfile(p) and not os.path.islink(p) and os.path.getsize(p) < 256 * 1024:
                    copy_entry(p, os.path.join(out, os.path.relpath(p, cap)))


if __name__ == "__main__":
    main(sys.argv)
