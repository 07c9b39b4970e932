#!/usr/bin/env python3
"""Checks that a provisioner binary serves the agent's Prometheus endpoint.

  check_metrics.py BINARY TREE [--timeout 60]

Runs `BINARY agent HOST.YAML --root TREE --metrics-address 127.0.0.1:PORT`
(PORT: a free port, asked of the kernel) on TREE, a host tree directory (an
extracted examples/hosts/*.ttar), with a host.yaml that asks nothing, so
the first reconcile ends at once. It waits for the agent's
"metrics on http://..." and first "reconcile" lines (no polling), fetches /metrics with urllib and
checks the page has the agent's metrics and the RDMA port counter written
into each of TREE's ports (the bundled trees capture none), then
sends SIGTERM and checks the exit status is 0.

The Debian package's binary serves the endpoint; the portable one does not
(prometheus-cpp is not linked in: docs/agent.md "Portable build"), so this
fails on it. Used by scripts/test-package.sh on the installed package.
Prints one line per finding; exits 1 on the first failed check.
"""

import argparse
import os
import re
import selectors
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

HOST_YAML = """apiVersion: provisioner/v1alpha1
kind: HostConfig
metadata:
  name: metrics-check
spec: {}
"""

# Metrics the page must have: the agent's own and the RDMA port counters of
# the tree (examples/hosts/cx5-roce.ttar has mlx5_0 and mlx5_1).
EXPECTED = [
    "provisioner_agent_reconcile_runs_total",
    "provisioner_rdma_port_transmit_data_words_total",
]


def fail(msg):
    print("metrics: FAIL: " + msg)
    sys.exit(1)


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(proc, pattern, timeout, log):
    """Reads the agent's stderr (kept in `log`) until its text matches
    `pattern`: the match, or None at timeout or when the agent exits first."""
    sel = selectors.DefaultSelector()
    sel.register(proc.stderr, selectors.EVENT_READ)
    deadline = time.monotonic() + timeout
    while True:
        m = re.search(pattern, "".join(log))
        if m:
            return m
        left = deadline - time.monotonic()
        if left <= 0 or not sel.select(left):
            return None
        chunk = os.read(proc.stderr.fileno(), 65536)
        if not chunk:
            return None
        log.append(chunk.decode(errors="replace"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("tree")
    ap.add_argument("--timeout", type=float, default=60)
    args = ap.parse_args()

    # The bundled trees capture no counters: give each RDMA port one, read
    # at scrape time like the kernel's.
    ports = 0
    ib = os.path.join(args.tree, "sys/class/infiniband")
    for dev in sorted(os.listdir(ib)) if os.path.isdir(ib) else []:
        pdir = os.path.join(ib, dev, "ports")
        for port in sorted(os.listdir(pdir)) if os.path.isdir(pdir) else []:
            os.makedirs(os.path.join(pdir, port, "counters"), exist_ok=True)
            with open(os.path.join(pdir, port, "counters", "port_xmit_data"), "w") as f:
                f.write("4242\n")
            ports += 1
    if ports == 0:
        fail("%s has no RDMA port (sys/class/infiniband/*/ports/*)" % args.tree)

    with tempfile.TemporaryDirectory() as tmp:
        host_yaml = os.path.join(tmp, "host.yaml")
        with open(host_yaml, "w") as f:
            f.write(HOST_YAML)
        address = "127.0.0.1:%d" % free_port()
        cmd = [args.binary, "--no-color", "-v", "agent", host_yaml, "--root", args.tree,
               "--metrics-address", address]
        print("metrics: " + " ".join(cmd))
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE)
        log = []
        try:
            # The endpoint is up, then the first reconcile (as apply -y) has
            # ended and its outcome is counted.
            m = wait_for(proc, r"metrics on (http://\S+/metrics)", args.timeout, log)
            if m is None or wait_for(proc, r"agent: reconcile \(", args.timeout, log) is None:
                fail("no 'metrics on' and 'reconcile' lines from the agent within %g s; its "
                     "log:\n%s" % (args.timeout, "".join(log)))
            url = m.group(1)
            with urllib.request.urlopen(url, timeout=args.timeout) as r:
                page = r.read().decode()
                if r.status != 200:
                    fail("%s: HTTP %d" % (url, r.status))
            for name in EXPECTED:
                if not re.search(r"^%s(\{| )" % re.escape(name), page, re.M):
                    fail("%s has no %s sample; the page:\n%s" % (url, name, page[:4000]))
            counters = re.findall(r"^provisioner_rdma_port_transmit_data_words_total\{.*\} 4242$",
                                  page, re.M)
            if len(counters) != ports:
                fail("%s: %d port_xmit_data samples of 4242, the tree has %d ports"
                     % (url, len(counters), ports))
            samples = sum(1 for line in page.splitlines() if line and not line.startswith("#"))
            print("metrics: %s served %d samples (%s)" % (url, samples, ", ".join(EXPECTED)))
        finally:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
            try:
                code = proc.wait(timeout=args.timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                fail("the agent did not exit within %g s of SIGTERM" % args.timeout)
        rest = proc.stderr.read().decode(errors="replace")
        if code != 0:
            fail("the agent exited %d after SIGTERM; its log:\n%s%s" % (code, "".join(log), rest))
        print("metrics: SIGTERM: exit 0")


if __name__ == "__main__":
    main()
