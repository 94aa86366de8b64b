#!/bin/bash
# bench/fuzz.sh [SECONDS]: run every libFuzzer target (tests/fuzz/) for
# SECONDS (default 60) each, one after the other, and print per target the
# executions per second (libFuzzer's stat::average_exec_per_sec) and the
# coverage of its final status line (cov: edges, ft: features, corp: units).
#
# Starts from a temp copy of tests/fuzz/corpus/TARGET with its dictionary;
# the tree is not changed.  A target that crashes is reported as CRASH (the
# reproducer is kept in BUILDDIR/fuzz/artifacts/) and makes the exit status
# non-zero.  Environment: KIST_FUZZ_BUILDDIR (default _build-fuzz), CLANG,
# KIST_FUZZ_TARGETS (a space-separated subset).
set -u -o pipefail
export LC_ALL=C

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=tests/fuzz/lib.sh
. "$REPO/tests/fuzz/lib.sh"
SECS=${1:-60}

case $SECS in
  '' | *[!0-9]*)
    echo "usage: bench/fuzz.sh [SECONDS]" >&2
    exit 2
    ;;
esac

fuzz_targets

bash "$FUZZ_SRC/build.sh" "${targets[@]}"
rc=$?
if [ "$rc" = 77 ]; then
  echo "bench/fuzz.sh: skipped: clang with the libFuzzer runtime is not available"
  exit 0
elif [ "$rc" != 0 ]; then
  echo "bench/fuzz.sh: the fuzz targets did not build" >&2
  exit 1
fi

TMP=$(mktemp -d "${TMPDIR:-/tmp}/kist-fuzz-bench.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT
mkdir -p "$OUT/logs" "$OUT/artifacts" || exit 1

status=0
rows=()
for t in "${targets[@]}"; do
  log=$OUT/logs/bench-$t.log
  echo "fuzz_$t: ${SECS}s ..." >&2
  fuzz_run "$t" "$SECS" "$TMP" "$log"
  rc=$?
  read -r execs eps cov ft corp <<< "$(fuzz_stats "$log")"
  result=ok
  if [ "$rc" != 0 ]; then
    result="CRASH (exit $rc, log $log)"
    status=1
  fi
  rows+=("$(printf '%-20s %10s %9s %6s %6s %12s  %s' "fuzz_$t" "$execs" "$eps" "$cov" "$ft" \
    "$corp" "$result")")
done

printf '%-20s %10s %9s %6s %6s %12s  %s\n' target execs exec/s cov ft corpus result
printf '%s\n' "${rows[@]}"
exit "$status"
