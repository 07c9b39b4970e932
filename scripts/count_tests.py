#!/usr/bin/env python3
"""Counts test cases in Bazel's JUnit XML results and prints 'N passed, N failed'.

With a second argument, appends one line per failed case ("target: case") to
that file, so the caller can list them again at the end of a long log.

A test target whose XML is missing or unreadable (crashed before writing it)
counts as one failure, so a broken target can never hide.
"""
import os
import sys
import xml.etree.ElementTree as ET


def main(logs, failures_path=None):
    passed = failed = 0
    names = []
    for dirpath, _, files in sorted(os.walk(logs, followlinks=True)):
        if "test.log" not in files:
            continue
        xml = os.path.join(dirpath, "test.xml")
        try:
            root = ET.parse(xml).getroot()
        except (OSError, ET.ParseError):
            failed += 1
            print(f"unreadable results: {xml}", file=sys.stderr)
            names.append(f"{os.path.relpath(dirpath, logs)}: no readable test.xml")
            continue
        cases = list(root.iter("testcase"))
        target = os.path.relpath(dirpath, logs)
        if not cases:
            failed += 1
            names.append(f"{target}: no test cases (crashed or timed out)")
            continue
        for case in cases:
            if case.find("failure") is not None or case.find("error") is not None:
                failed += 1
                names.append(f"{target}: {case.get('classname', '')}.{case.get('name', '')}")
            elif case.get("status") == "notrun" or case.find("skipped") is not None:
                continue
            else:
                passed += 1
    print(f"{passed} passed, {failed} failed")
    if failures_path:
        with open(failures_path, "a", encoding="utf-8") as out:
            for name in names:
                out.write(name + "\n")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "bazel-testlogs",
         sys.argv[2] if len(sys.argv) > 2 else None)
