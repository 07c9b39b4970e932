#!/usr/bin/env python3
"""Counts test cases in Bazel's JUnit XML results and prints 'N passed, N failed'.

A test target whose XML is missing or unreadable (crashed before writing it)
counts as one failure, so a broken target can never hide.
"""
import os
import sys
import xml.etree.ElementTree as ET


def main(logs):
    passed = failed = 0
    for dirpath, _, files in sorted(os.walk(logs, followlinks=True)):
        if "test.log" not in files:
            continue
        xml = os.path.join(dirpath, "test.xml")
        try:
            root = ET.parse(xml).getroot()
        except (OSError, ET.ParseError):
            failed += 1
            print(f"unreadable results: {xml}", file=sys.stderr)
            continue
        cases = list(root.iter("testcase"))
        if not cases:
            failed += 1
            continue
        for case in cases:
            if case.find("failure") is not None or case.find("error") is not None:
                failed += 1
            elif case.get("status") == "notrun" or case.find("skipped") is not None:
                continue
            else:
                passed += 1
    print(f"{passed} passed, {failed} failed")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "bazel-testlogs")
