#!/usr/bin/env bash
# Runs the HLO corpus tests with TACIT_SHARED_DIR at an empty folder and checks the chain that keeps
# a skip for missing data from hiding a CI regression: the tests skip with the marker,
# scripts/count-data-skips counts them and passes by default, fails with
# TACIT_REQUIRE_SHARED_DATA=1, and .ci/run sets that variable for both of its test runs.
# Usage: data_skips_test.sh SOURCE_DIR HLO_TEXT_TESTS_BINARY
set -uo pipefail
src="$1" bin="$2"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

mkdir "$tmp/empty"
TACIT_SHARED_DIR="$tmp/empty" "$bin" --gtest_filter='HloCorpus.*' > "$tmp/log" 2>&1 ||
  fail "the corpus tests failed instead of skipping: $(tail -20 "$tmp/log")"
grep -q '\[  SKIPPED \] HloCorpus.EveryModuleParsesVerifiesAndRoundTrips' "$tmp/log" ||
  fail "HloCorpus did not skip: $(cat "$tmp/log")"

out=$(TACIT_REQUIRE_SHARED_DATA=0 "$src/scripts/count-data-skips" "$tmp/log") ||
  fail "count-data-skips failed without TACIT_REQUIRE_SHARED_DATA: $out"
echo "$out" | grep -q 'MISSING - 2 tests skipped for missing data' || fail "wrong count: $out"

if out=$(TACIT_REQUIRE_SHARED_DATA=1 "$src/scripts/count-data-skips" "$tmp/log"); then
  fail "count-data-skips passed with TACIT_REQUIRE_SHARED_DATA=1: $out"
fi

# With the data present (the same binary, an area that exists) nothing is counted.
mkdir -p "$tmp/partial/corpus/hlo"
TACIT_SHARED_DIR="$tmp/partial" "$bin" --gtest_filter='HloCorpus.*' > "$tmp/log2" 2>&1 &&
  fail "an existing but empty corpus folder passed; it must fail, not skip"
TACIT_REQUIRE_SHARED_DATA=1 "$src/scripts/count-data-skips" "$tmp/log2" > /dev/null ||
  fail "a failure for partial data was counted as a skip"

# CI runs both suites through scripts/test with the variable set.
grep -q '^export TACIT_REQUIRE_SHARED_DATA=1' "$src/.ci/run" ||
  fail ".ci/run does not export TACIT_REQUIRE_SHARED_DATA=1"
grep -q 'count-data-skips' "$src/scripts/test" || fail "scripts/test does not count data skips"
echo "ok"
