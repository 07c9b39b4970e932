#!/usr/bin/env python3
"""Whether two checkouts declare the same Bazel rules: the proof that a BUILD
refactoring (macros, shared lists) is mechanical.

Each side is the output of, in its checkout,
    bazel query 'kind(rule, //...)' --output=build > SIDE.txt
and optionally the targets test-only as Bazel computes them (a package's
default_testonly included, which --output=build does not show):
    bazel query 'attr(testonly, 1, //...)' > SIDE.testonly

    scripts/compare_rules.py BEFORE_ROOT BEFORE.txt AFTER_ROOT AFTER.txt \
        [BEFORE.testonly AFTER.testonly]

ROOT is the checkout's absolute path (the query names BUILD files by it).
A rule is its package and name; its attributes are compared but for
generator_* (where the rule is written: file, line, macro), and `deps` and
`data` are compared as sets (their order in a macro's list is not the order
in the BUILD file; a change of data order is listed, runfiles are a set).
With the testonly lists, testonly is compared as Bazel computes it instead of
as written. Prints every difference; exit status 1 if there is one.
"""
import ast
import re
import sys


def parse(root, path):
    rules, cur, kind, pkg = {}, None, None, None
    where = re.compile(r"^# %s/?(.*?)/?BUILD(\.bazel)?:\d+:\d+$" % re.escape(root.rstrip("/")))
    with open(path) as lines:
        for line in lines:
            line = line.rstrip("\n")
            m = where.match(line)
            if m:
                pkg = m.group(1)
            if not line or line.startswith("#"):
                continue
            m = re.match(r"^([a-z_0-9]+)\($", line)
            if m:
                kind, cur = m.group(1), {}
                continue
            if line == ")":
                rules["//%s:%s" % (pkg, cur["name"])] = (kind, cur)
                cur = None
                continue
            m = re.match(r"^  ([a-z_0-9]+) = (.*),$", line)
            if not m or cur is None:
                sys.exit("%s: not --output=build: %s" % (path, line))
            key, value = m.group(1), m.group(2)
            if key.startswith("generator_"):
                continue
            try:
                value = ast.literal_eval(value)
            except (ValueError, SyntaxError):
                pass
            if key in ("deps", "data") and isinstance(value, list):
                if key == "data":
                    cur["_data_order"] = value
                value = sorted(value)
            cur[key] = value
    return rules


def main(argv):
    if len(argv) not in (5, 7):
        sys.exit(__doc__)
    before, after = parse(argv[1], argv[2]), parse(argv[3], argv[4])
    if len(argv) == 7:
        testonly = [set(open(p).read().split()) for p in argv[5:7]]
        if testonly[0] != testonly[1]:
            print("testonly differs:", sorted(testonly[0] ^ testonly[1]))
            return 1
        print("testonly (as Bazel computes it): the same %d targets" % len(testonly[0]))
        for _, attrs in list(before.values()) + list(after.values()):
            attrs.pop("testonly", None)
    differ = 0
    for label in sorted(set(before) | set(after)):
        if label not in before or label not in after:
            print("only", "before:" if label in before else "after:", label)
            differ += 1
            continue
        (kind_a, a), (kind_b, b) = before[label], after[label]
        if a.pop("_data_order", None) != b.pop("_data_order", None) and a.get("data") == b.get("data"):
            print("data order only:", label)
        if kind_a != kind_b or a != b:
            differ += 1
            if kind_a != kind_b:
                print(label, "kind:", kind_a, "->", kind_b)
            for key in sorted(set(a) | set(b)):
                if a.get(key) != b.get(key):
                    print(label, key + ":", a.get(key), "->", b.get(key))
    print("%d rules before, %d after, %d differ" % (len(before), len(after), differ))
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
