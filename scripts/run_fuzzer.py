#!/usr/bin/env python3
"""Runs one libFuzzer target for a budget of CPU seconds, not wall seconds.

    run_fuzzer.py BINARY CORPUS_DIR LOG CPU_SECONDS

scripts/test.sh runs the fuzzers beside the sanitized tests and the package
step, at a lower priority, so that they take the cores those leave idle. A
wall-clock budget (`-max_total_time`) would then give a fuzzer less work the
busier the machine is; a CPU budget gives each the same work wherever it
runs. The fuzzer's CPU time (user + system, /proc/PID/stat) is read five
times a second; at the budget it gets SIGINT, on which libFuzzer prints its
final stats and exits with its interrupt code (72, `-interrupt_exit_code`).
`-max_total_time` stays as a wall-clock backstop (20 times the budget).

Prints one line: "ok <executed units> units, <cpu> s CPU, <wall> s wall", or
"FAILED (exit N)"; exits 0 on ok. A crash, a leak, a timeout or an
out-of-memory report is libFuzzer's own non-zero exit before the budget.
"""
import os
import re
import signal
import subprocess
import sys
import time

INTERRUPT_EXIT = 72


def cpu_seconds(pid, ticks):
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
    except OSError:
        return None
    # After "(comm)": state is field 3 of stat(5), utime 14, stime 15.
    return (int(fields[11]) + int(fields[12])) / ticks


def main():
    binary, corpus, log, budget = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
    ticks = os.sysconf("SC_CLK_TCK")
    argv = [binary, f"-max_total_time={int(budget * 20)}", "-timeout=10",
            "-rss_limit_mb=2048", "-print_final_stats=1",
            f"-interrupt_exit_code={INTERRUPT_EXIT}", corpus]
    t0 = time.monotonic()
    with open(log, "wb") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT)
        interrupted = False
        used = 0.0
        while proc.poll() is None:
            now = cpu_seconds(proc.pid, ticks)
            if now is not None:
                used = now
            if used >= budget and not interrupted:
                proc.send_signal(signal.SIGINT)
                interrupted = True
            try:
                proc.wait(timeout=0.2)
            except subprocess.TimeoutExpired:
                pass
    wall = time.monotonic() - t0
    code = proc.returncode
    with open(log, "rb") as f:
        text = f.read().decode("utf-8", "replace")
    ok = code == 0 or (interrupted and code == INTERRUPT_EXIT)
    if not ok:
        print(f"FAILED (exit {code}, {used:.0f} s CPU, {wall:.0f} s wall)")
        return 1
    units = re.search(r"stat::number_of_executed_units: (\d+)", text)
    print(f"ok {units.group(1) if units else '?'} units, {used:.0f} s CPU, {wall:.0f} s wall")
    return 0


if __name__ == "__main__":
    sys.exit(main())
