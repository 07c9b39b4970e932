#!/bin/bash
# The ttar CLI: extract, re-create, compare; --strip; errors exit 1.
set -euo pipefail
TTAR="$TEST_SRCDIR/provisioner/test/tools/ttar"
FIXTURE="$TEST_SRCDIR/provisioner/test/support/testdata/fixtures-sys-subset.ttar"
T="$TEST_TMPDIR"

"$TTAR" -x "$FIXTURE" -C "$T/a" --strip 1
test "$(cat "$T/a/sys/bus/pci/devices/0000:a2:00.0/sriov_offset")" = 8
test -L "$T/a/sys/bus/pci/devices/0000:a2:00.0"
"$TTAR" -c "$T/a" -f "$T/a.ttar"
"$TTAR" -x "$T/a.ttar" -C "$T/b"
"$TTAR" -c "$T/b" -f "$T/b.ttar"
cmp "$T/a.ttar" "$T/b.ttar"
"$TTAR" -c "$T/b" > "$T/c.ttar"
cmp "$T/a.ttar" "$T/c.ttar"
diff -r --no-dereference "$T/a" "$T/b"

if "$TTAR" -x "$T/missing.ttar" -C "$T/x" 2>/dev/null; then echo "missing archive accepted"; exit 1; fi
if "$TTAR" --bogus 2>/dev/null; then echo "bad option accepted"; exit 1; fi
echo PASS
