#!/usr/bin/env bash
# scripts/check-includes passes on the repository and fails, naming the problem, on a tree whose
# lower module includes a higher one's header, and on one whose headers include each other.
# Usage: includes_test.sh SOURCE_DIR
set -uo pipefail
src="$1"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$src/scripts/check-includes" "$src" || fail "the repository's includes do not follow docs/design.md"

mkdir -p "$tmp/docs" "$tmp/src/hlo" "$tmp/src/backend" "$tmp/tools/tacit"
cp "$src/docs/design.md" "$tmp/docs/"
printf '#include "backend/x.h"\n' > "$tmp/src/hlo/a.h"
printf '#pragma once\n' > "$tmp/src/backend/x.h"
out=$("$src/scripts/check-includes" "$tmp") && fail "an upward include passed: $out"
echo "$out" | grep -q "hlo/a.h: includes \"backend/x.h\", but 'hlo' may use only support" ||
  fail "wrong report for an upward include: $out"

printf '#include "hlo/b.h"\n' > "$tmp/src/hlo/a.h"
printf '#include "hlo/a.h"\n' > "$tmp/src/hlo/b.h"
out=$("$src/scripts/check-includes" "$tmp") && fail "an include cycle passed: $out"
echo "$out" | grep -q "include cycle: hlo/a.h -> hlo/b.h -> hlo/a.h" ||
  fail "wrong report for a cycle: $out"
echo "ok"
