#!/usr/bin/env python3
"""Benchmarks of the provisioner binary on generated host trees.

  bazel run -c opt //bench:run -- [--sizes small,rail,huge] [--runs N]
      [--tree-dir DIR] [--out FILE.md] [--json FILE] [--shell-max-devices N]

For each size: builds the tree once (//test/tools:make_tree, cached in
--tree-dir), traces one discovery with strace to list the files and
directories it opens (outside the timed part), then runs every benchmark
--runs times, round-robin so that load on a shared machine spreads over all
of them, and reports medians. Each provisioner run sets PROVISIONER_STATS
(the host layer's counters at exit); peak RSS comes from wait4's rusage.

Reference points measured in the same run:
  floor    bench/floor: opens and reads exactly the traced files and lists
           exactly the traced directories, by resolved path, nothing else.
  lspci    lspci -vmm -A linux-sysfs -O sysfs.path=<tree>/sys/bus/pci
  gid-sh   bench/show_gids_loop.sh: the show_gids walk (cat per GID slot).
           Above --shell-max-devices RDMA devices, it runs on an even sample
           of them and the time is scaled by devices/sampled (said so in the
           table): the full walk of the huge tree takes tens of minutes.
"""

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

# name -> (make_tree preset, VFs per PF, numVfs for the "all changes" plan)
SIZES = {
    "small": ("bench-2", 0, 4),
    "rail": ("bench-8", 16, 8),
    "huge": ("bench-16", 127, 64),
}
TREE_FORMAT = "2"  # bump when the preset changes: cached trees are rebuilt


def runfile(path):
    """A file of this target's runfiles (bazel run starts in the runfiles dir)."""
    for base in (os.environ.get("RUNFILES_DIR"), os.getcwd(),
                 os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")):
        if base:
            for cand in (os.path.join(base, path), os.path.join(base, "provisioner", path)):
                if os.path.exists(cand):
                    return os.path.abspath(cand)
    sys.exit("bench: cannot find %s in the runfiles" % path)


def ensure_tree(make_tree, tree_dir, size):
    preset, vfs, _ = SIZES[size]
    root = os.path.join(tree_dir, size)
    stamp = os.path.join(tree_dir, size + ".stamp")
    want = "%s %s --preset %s --all-vfs %d\n" % (TREE_FORMAT, os.path.basename(make_tree), preset, vfs)
    if os.path.isdir(root) and os.path.exists(stamp) and open(stamp).read() == want:
        return root
    shutil.rmtree(root, ignore_errors=True)
    print("bench: generating the %s tree (%s, %d VFs per PF) in %s" % (size, preset, vfs, root),
          file=sys.stderr, flush=True)
    args = [make_tree, "--preset", preset, "--dir", root]
    if vfs:
        args += ["--all-vfs", str(vfs)]
    subprocess.run(args, check=True)
    with open(stamp, "w") as f:
        f.write(want)
    return root


def first_discovery(provisioner, root, stats_file):
    """(PFs with their numVfs, RDMA devices, files the host layer read) of one
    untimed discovery."""
    _, _, rc, out, err = timed([provisioner, "discover", "--root", root, "-o", "json"], stats_file)
    if rc != 0:
        sys.exit("bench: discover on %s failed: %s" % (root, err.decode(errors="replace")))
    facts = json.loads(out)
    nics = facts.get("nics", [])
    return ([(n["pciAddress"], n.get("sriov", {}).get("numVfs", 0)) for n in nics if "sriov" in n],
            len(facts.get("rdmaDevices", [])), json.load(open(stats_file))["filesRead"])


def write_host_yaml(path, pfs, num_vfs_of):
    lines = ["apiVersion: provisioner/v1alpha1", "kind: HostConfig",
             "metadata:", "  name: bench", "spec:", "  nics:"]
    for i, (bdf, current) in enumerate(pfs):
        lines += ["    - name: nic%d" % i,
                  "      nicSelector:",
                  "        rootDevices: [\"%s\"]" % bdf,
                  "      numVfs: %d" % num_vfs_of(current)]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


OPEN_RE = re.compile(r'^\d+\s+(open|openat|openat2)\((.*)\) = (\d+)<(.*)>$')


def trace_discovery(provisioner, root, list_path):
    """Files and directories one discovery opens (strace -y): the floor's list."""
    trace = list_path + ".strace"
    # One read thread: strace splits the lines of concurrent calls into
    # "<unfinished ...>" and "resumed" halves. The files are the same (the
    # facts are: //test/integration:perf_invariants_test).
    env = dict(os.environ, PROVISIONER_READ_THREADS="1")
    subprocess.run(["strace", "-f", "--seccomp-bpf", "-y", "-e", "trace=open,openat,openat2", "-o", trace,
                    provisioner, "discover", "--root", root, "-o", "json"],
                   check=True, stdout=subprocess.DEVNULL, env=env)
    real_root = os.path.realpath(root)
    entries, tree_opens = [], 0
    with open(trace) as f:
        for line in f:
            m = OPEN_RE.match(line.strip())
            if not m:
                continue
            args, path = m.group(2), m.group(4)
            if "O_PATH" in args:
                continue  # a lookup, not a read
            if not (path.startswith(real_root + "/") or path.endswith("/pci.ids")):
                continue  # shared libraries, locale, ...
            tree_opens += 1
            entries.append(("D " if "O_DIRECTORY" in args else "F ") + path)
    with open(list_path, "w") as f:
        f.write("\n".join(entries) + "\n")
    os.unlink(trace)
    return tree_opens


def count_syscalls(argv):
    """strace -c -f: open/read/getdents/stat/fcntl/close calls of one run (independent of our counters)."""
    with tempfile.NamedTemporaryFile("r", suffix=".strace") as t:
        subprocess.run(["strace", "-c", "-f", "--seccomp-bpf", "-e",
                        "trace=open,openat,openat2,read,getdents64,newfstatat,readlink,readlinkat,statx,fcntl,close",
                        "-o", t.name] + argv,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        calls = {}
        for line in open(t.name):
            f = line.split()
            if len(f) >= 5 and f[-1] in ("open", "openat", "openat2", "read", "getdents64",
                                         "newfstatat", "readlink", "readlinkat", "statx", "fcntl",
                                         "close"):
                calls[f[-1]] = int(f[3])
        return calls


SPAWN = None  # bench/spawn
# The measured commands' stdout/stderr: on tmpfs when there is one (writing
# 3 MB of JSON to ext4 wakes its journal thread, on one of the two cores).
OUT_DIR = "/dev/shm" if os.path.isdir("/dev/shm") else None

TREE_ROOM = 8 << 30  # the huge tree is ~2.6 GB on tmpfs; its snapshot as much again


def default_tree_dir():
    """tmpfs when it has room: sysfs lives in memory, so does a tree there. On
    ext4 the 755k-file huge tree falls out of the dentry and page caches that
    the 38k-file rail tree fits in, and the cost per file grows with the tree,
    for the floor as for provisioner."""
    shm = "/dev/shm"
    if os.path.isdir(shm):
        st = os.statvfs(shm)
        if st.f_bavail * st.f_frsize >= TREE_ROOM:
            return os.path.join(shm, "provisioner-bench")
    return os.path.join(tempfile.gettempdir(), "provisioner-bench")


def timed(argv, stats_file=None, extra_env=None):
    """(wall seconds, peak RSS KiB, exit code, stdout, stderr) of one run (bench/spawn)."""
    env = dict(os.environ)
    env.pop("PROVISIONER_STATS", None)
    env.update(extra_env or {})
    if stats_file:
        env["PROVISIONER_STATS"] = stats_file
    with tempfile.NamedTemporaryFile(dir=OUT_DIR) as out_f, tempfile.NamedTemporaryFile(dir=OUT_DIR) as err_f:
        res = subprocess.run([SPAWN, out_f.name, err_f.name] + argv, env=env, check=True,
                             capture_output=True, text=True)
        m = json.loads(res.stdout)
        out_f.seek(0)
        err_f.seek(0)
        return m["seconds"], m["maxRssKiB"], m["exit"], out_f.read(), err_f.read()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="small,rail,huge")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--tree-dir", default=default_tree_dir(),
                    help="where the generated trees are kept between runs: /dev/shm when it has "
                         "room (sysfs is in memory too), else $TMPDIR")
    ap.add_argument("--out", help="write the Markdown table here too")
    ap.add_argument("--json", help="write every measurement here")
    ap.add_argument("--shell-max-devices", type=int, default=160)
    ap.add_argument("--shell-runs", type=int, default=1)
    ap.add_argument("--snapshot-dir", default="/dev/shm" if os.path.isdir("/dev/shm") else tempfile.gettempdir(),
                    help="where snapshot writes its output (deleted after each run)")
    ap.add_argument("--snapshot-runs", type=int, default=1,
                    help="snapshot writes the whole tree (minutes on huge): fewer runs")
    ap.add_argument("--no-shell", action="store_true")
    ap.add_argument("--only", default="",
                    help="comma-separated benchmark name prefixes (discover, plan, apply, "
                         "snapshot); the reference points always run")
    args = ap.parse_args()

    provisioner = runfile("engine/cli/provisioner")
    make_tree = runfile("test/tools/make_tree")
    floor = runfile("bench/floor")
    global SPAWN
    SPAWN = runfile("bench/spawn")
    show_gids = runfile("bench/show_gids_loop.sh")
    for tool in ("strace", "lspci", "bash"):
        if shutil.which(tool) is None:
            sys.exit("bench: %s is needed (apt-get install %s)" % (tool, tool))
    os.makedirs(args.tree_dir, exist_ok=True)
    work = tempfile.mkdtemp(prefix="provisioner-bench-run.")

    results = {"machine": machine(), "sizes": {}}
    for size in args.sizes.split(","):
        if size not in SIZES:
            sys.exit("bench: unknown size %s (small, rail, huge)" % size)
        root = ensure_tree(make_tree, args.tree_dir, size)
        shutil.rmtree(os.path.join(root, "run", "provisioner"), ignore_errors=True)
        pfs, rdma_devices, counted = first_discovery(provisioner, root,
                                                     os.path.join(work, "first.json"))
        functions = sum(1 + n for _, n in pfs)  # of the NICs: PFs + VFs
        # Every PCI function discovery reads: the NICs' and the GPUs, PCIe
        # switch ports and root ports around them.
        pci_functions = len(os.listdir(os.path.join(root, "sys/bus/pci/devices")))
        same = os.path.join(work, size + "-nochange.yaml")
        change = os.path.join(work, size + "-allchange.yaml")
        write_host_yaml(same, pfs, lambda n: n)
        write_host_yaml(change, pfs, lambda n, to=SIZES[size][2]: to if n != to else n + 1)
        flist = os.path.join(work, size + ".floor")
        traced_opens = trace_discovery(provisioner, root, flist)
        # The floor must read at least what the host layer counts (it also
        # reads libpci's files and pci.ids): fewer means the trace lost lines.
        if traced_opens < counted:
            sys.exit("bench: the trace of discover on %s lists %d opens, the host layer counted %d "
                     "file reads: the floor would be wrong" % (size, traced_opens, counted))
        syscalls = count_syscalls([provisioner, "discover", "--root", root, "-o", "json"])
        floor_syscalls = count_syscalls([floor, flist])

        benches = [
            ("discover", [provisioner, "discover", "--root", root, "-o", "json"]),
            # The same on one thread: what the parallel reads of the RDMA
            # devices (engine/host/parallel_reads.h) are worth.
            ("discover (1 read thread)", [provisioner, "discover", "--root", root, "-o", "json"]),
            ("plan (no changes)", [provisioner, "plan", same, "--root", root, "-o", "json"]),
            ("plan (all changes)", [provisioner, "plan", change, "--root", root, "-o", "json"]),
            ("apply (no-op)", [provisioner, "apply", same, "--root", root, "-o", "json"]),
        ]
        # On tmpfs when there is one: writing (and deleting) a 755k-file
        # snapshot on ext4 is minutes of inode allocation, not provisioner.
        snap_out = os.path.join(args.snapshot_dir, "provisioner-bench-snapshot.%d" % os.getpid())
        benches.append(("snapshot", [provisioner, "snapshot", "--root", root, "--output", snap_out]))
        if args.only:
            wanted = args.only.split(",")
            benches = [b for b in benches if any(b[0].startswith(p) for p in wanted)]
        benches += [
            ("floor", [floor, flist]),
            ("lspci -vmm", [shutil.which("lspci"), "-vmm", "-A", "linux-sysfs", "-O",
                            "sysfs.path=" + os.path.join(root, "sys/bus/pci")]),
        ]
        rows = {name: {"wall": [], "rss": [], "stats": None, "rc": set(), "note": ""}
                for name, _ in benches}
        for i in range(args.runs):
            for name, argv in benches:
                if name == "snapshot" and i >= args.snapshot_runs:
                    continue
                stats_file = os.path.join(work, "stats.json") if argv[0] == provisioner else None
                if stats_file and os.path.exists(stats_file):
                    os.unlink(stats_file)
                extra_env = {"PROVISIONER_READ_THREADS": "1"} if "1 read thread" in name else None
                wall, rss, rc, out, err = timed(argv, stats_file, extra_env)
                r = rows[name]
                r["rc"].add(rc)
                r["rss"].append(rss)
                if name == "floor":
                    loop = json.loads(out)
                    r.setdefault("loop", []).append(loop["seconds"])
                    r["stats"] = {"filesRead": loop["files"], "bytesRead": loop["bytes"],
                                  "dirsListed": loop["dirs"], "filesOpenedForWrite": 0}
                r["wall"].append(wall)
                if stats_file and os.path.exists(stats_file):
                    r["stats"] = json.load(open(stats_file))
                if name == "apply (no-op)":
                    doc = json.loads(out or b"{}")
                    if doc.get("changes"):
                        r["note"] = "NOT A NO-OP: %d changes" % len(doc["changes"])
                if name == "plan (all changes)" and i == 0:
                    r["note"] = "%d changes" % len(json.loads(out)["changes"])
                if name == "snapshot":
                    shutil.rmtree(snap_out, ignore_errors=True)
                if rc != 0 and not r["note"]:
                    r["note"] = "exit %d: %s" % (rc, err.decode(errors="replace").strip()[:200])
        # The shell GID walk, last (long).
        if not args.no_shell:
            devs = sorted(os.listdir(os.path.join(root, "sys/class/infiniband")),
                          key=lambda d: (len(d), d))
            stride = max(1, -(-len(devs) // args.shell_max_devices))
            sample = devs[::stride]
            walls = []
            for _ in range(args.shell_runs):
                wall, rss, rc, out, _ = timed(["/bin/bash", show_gids, root] + sample)
                walls.append(wall * len(devs) / len(sample))
            rows["show_gids loop"] = {
                "wall": walls, "rss": [rss], "rc": {rc}, "stats": None,
                "note": "" if stride == 1 else "%d of %d devices run, time scaled by %.2f" % (
                    len(sample), len(devs), len(devs) / len(sample))}
        rows = {n: r for n, r in rows.items() if r["wall"]}
        for r in rows.values():
            r["rc"] = sorted(r["rc"])
        results["sizes"][size] = {
            "root": root, "functions": functions, "pciFunctions": pci_functions, "pfs": len(pfs),
            "rdmaDevices": rdma_devices,
            "tracedOpens": traced_opens, "syscalls": syscalls, "floorSyscalls": floor_syscalls,
            "rows": rows}
        print(table_for(size, results["sizes"][size]), flush=True)

    results["load_after"] = open("/proc/loadavg").read().strip()
    text = report(results)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2, default=list)
    shutil.rmtree(work, ignore_errors=True)
    # Issue 27 item 7: discover on huge must stay under the floor. Loudly,
    # with a failing exit status, whatever was written above.
    huge = results["sizes"].get("huge")
    if huge and "discover" in huge["rows"] and "floor" in huge["rows"]:
        ratio = med(huge["rows"]["discover"]["wall"]) / med(huge["rows"]["floor"]["loop"])
        if ratio > 1.0:
            sys.exit("bench: FAILED: discover on huge took %.2fx the read-every-file floor "
                     "(must be <= 1.0x): a regression on the read path" % ratio)


def machine():
    model = ""
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            model = line.split(":", 1)[1].strip()
            break
    return {"nproc": os.cpu_count(), "cpu": model, "kernel": os.uname().release,
            "load_before": open("/proc/loadavg").read().strip()}


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def table_for(size, s):
    out = ["", "### %s: %d PFs, %d NIC functions (PFs + VFs), %d PCI functions in all, %d RDMA devices" % (
        size, s["pfs"], s["functions"], s["pciFunctions"], s["rdmaDevices"]), "",
        "| benchmark | median ms | min ms | runs | files read | bytes read | dirs listed | opened for write | read(2) calls, all | peak RSS MiB | note |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for name, r in s["rows"].items():
        st = r["stats"] or {}
        walls = r["wall"]
        out.append("| %s | %.1f | %.1f | %d | %s | %s | %s | %s | %s | %.1f | %s |" % (
            name, med(walls) * 1000, min(walls) * 1000, len(walls),
            st.get("filesRead", "-"), st.get("bytesRead", "-"), st.get("dirsListed", "-"),
            st.get("filesOpenedForWrite", "-"), st.get("processReadCalls", "-"),
            max(r["rss"]) / 1024.0, r["note"]))
    if "loop" in s["rows"].get("floor", {}):
        out.append("")
        out.append("floor loop alone (inside the process, list already loaded): median %.1f ms" %
                   (med(s["rows"]["floor"]["loop"]) * 1000))
    out.append("strace -c of one discover: %s; of the floor: %s" % (
        ", ".join("%s %d" % kv for kv in sorted(s["syscalls"].items())),
        ", ".join("%s %d" % kv for kv in sorted(s["floorSyscalls"].items()))))
    return "\n".join(out)


def report(results):
    m = results["machine"]
    lines = ["## Results", "",
             "Machine: %d CPUs (%s), kernel %s; load average before %s, after %s." % (
                 m["nproc"], m["cpu"], m["kernel"], m["load_before"], results["load_after"])]
    for size, s in results["sizes"].items():
        lines.append(table_for(size, s))
    lines += ["", "## Targets", "", "| target | measured | met |", "|---|---|---|"]
    S = results["sizes"]

    def w(size, name):
        rows = S.get(size, {}).get("rows", {})
        return med(rows[name]["wall"]) if name in rows else None

    d = w("huge", "discover")
    if d is not None:
        h = S["huge"]
        floor_loop = med(h["rows"]["floor"]["loop"])
        floor_proc = w("huge", "floor")
        d1 = w("huge", "discover (1 read thread)")
        one = "" if d1 is None else "; on 1 read thread %.2fx (%.0f ms)" % (d1 / floor_loop, d1 * 1000)
        lines.append("| discover on huge <= 1.0x the floor (<= 0.9x; one read thread <= 1.1x) | %.2fx the floor loop (%.0f / %.0f ms); %.2fx the floor process%s | %s |" % (
            d / floor_loop, d * 1000, floor_loop * 1000, d / floor_proc, one,
            "yes" if d / floor_loop <= 0.9 and (d1 is None or d1 / floor_loop <= 1.1) else "no"))
        for plan in ("plan (no changes)", "plan (all changes)"):
            p = w("huge", plan)
            if p is not None:
                lines.append("| %s on huge adds <= 10%% to discover | %+.1f%% | %s |" % (
                    plan, (p / d - 1) * 100, "yes" if p <= 1.1 * d else "no"))
        sh = w("huge", "show_gids loop")
        if sh is not None:
            lines.append("| >= 50x faster than the shell GID loop on huge | %.0fx (%.1f s / %.2f s) | %s |" % (
                sh / d, sh, d, "yes" if sh / d >= 50 else "no"))
        rss = max(max(r["rss"]) for n, r in h["rows"].items()
                  if n.startswith(("discover", "plan", "apply"))) / 1024.0
        lines.append("| peak RSS on huge < 32 MiB | %.1f MiB (largest of discover, plan, apply) | %s |" % (
            rss, "yes" if rss < 32 else "no"))
    if d is not None and w("rail", "discover") is not None:
        def off(t, f):
            return max(t / f, f / t)
        tr = d / w("rail", "discover")
        fr = S["huge"]["pciFunctions"] / S["rail"]["pciFunctions"]
        nr = S["huge"]["functions"] / S["rail"]["functions"]
        extra = "; NIC functions only %.2f: %.2fx" % (nr, off(tr, nr))
        d1, r1 = w("huge", "discover (1 read thread)"), w("rail", "discover (1 read thread)")
        if d1 is not None and r1 is not None:
            extra += "; on 1 read thread time %.2f: %.2fx (%.2fx)" % (d1 / r1, off(d1 / r1, fr), off(d1 / r1, nr))
        # The work itself, and the same files read by the floor: how much of
        # the distance is this machine's cost per file on the bigger tree.
        hs, rs = S["huge"]["rows"]["discover"]["stats"] or {}, S["rail"]["rows"]["discover"]["stats"] or {}
        if hs.get("filesRead") and rs.get("filesRead"):
            files = hs["filesRead"] / rs["filesRead"]
            extra += "; files read %.2f (%.2fx of NIC functions)" % (files, off(files, nr))
        if w("huge", "floor") is not None and w("rail", "floor") is not None:
            ft = w("huge", "floor") / w("rail", "floor")
            extra += "; the floor's own time %.2f (%.2fx of NIC functions)" % (ft, off(ft, nr))
        lines.append("| huge/rail time within 1.3x of the function ratio | time %.2f, PCI functions %.2f: %.2fx%s | %s |" % (
            tr, fr, off(tr, fr), extra, "yes" if off(tr, fr) <= 1.3 else "no"))
    writes = [(size, s["rows"]["apply (no-op)"]["stats"] or {}) for size, s in S.items()
              if "apply (no-op)" in s["rows"]]
    ok = all(st.get("filesOpenedForWrite", 1) == 0 for _, st in writes)
    if writes:
        lines.append("| no-op apply opens no file for writing | %s | %s |" % (
            ", ".join("%s %s" % (size, st.get("filesOpenedForWrite", "?")) for size, st in writes),
            "yes" if ok else "no"))
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
