#!/bin/bash
# tests/fuzz/run.sh [SECONDS_PER_TARGET]: build and run the libFuzzer targets.
#
#   1. tests/fuzz/build.sh (outputs in $KIST_FUZZ_BUILDDIR/fuzz, default
#      _build-fuzz/fuzz).  If clang or its libFuzzer runtime is missing, says so
#      and exits 0 with every target counted as skipped.
#   2. Regressions: every file in tests/fuzz/crashes/TARGET/ (of the targets
#      run) goes once through fuzz_TARGET; it passes when the target no
#      longer crashes on it.  (A crash saved there fails until the runtime is
#      fixed: that is intended.)
#   3. Each target fuzzes for SECONDS_PER_TARGET (default 10) with
#      -max_total_time, -rss_limit_mb=2048 -timeout=10 and its dictionary
#      (tests/fuzz/dict/TARGET.dict), starting from a temp copy of
#      tests/fuzz/corpus/TARGET (the tree is never changed).  JOBS targets
#      (default 2) run at a time.  A crash, leak, timeout or out-of-memory
#      fails the target; the reproducer is kept in BUILDDIR/fuzz/artifacts/.
#
# Ends with one line "N passed, N failed, N skipped" (one result per target
# plus one per regression input) and exits non-zero on any failure.
# Environment: JOBS, CLANG, KIST_FUZZ_BUILDDIR, KIST_FUZZ_TARGETS (a
# space-separated subset of the targets).
set -u -o pipefail
export LC_ALL=C

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=tests/fuzz/lib.sh
. "$REPO/tests/fuzz/lib.sh"
SECONDS_PER_TARGET=${1:-10}
JOBS=${JOBS:-2}

case $SECONDS_PER_TARGET in
  '' | *[!0-9]*)
    echo "usage: tests/fuzz/run.sh [SECONDS_PER_TARGET]" >&2
    exit 2
    ;;
esac
[ "$JOBS" -ge 1 ] 2> /dev/null || JOBS=1

fuzz_targets
crashes=()
for t in "${targets[@]}"; do
  for f in "$FUZZ_SRC/crashes/$t"/*; do
    [ -f "$f" ] && crashes+=("$f")
  done
done

PASSED=0
FAILED=0
SKIPPED=0

# result STATUS PASS_TEXT FAIL_TEXT LOG: count and print one result.
result ()
{
  if [ "$1" = 0 ]; then
    echo "PASS  $2"
    PASSED=$((PASSED + 1))
  else
    echo "FAIL  $3"
    fuzz_problem "$4"
    FAILED=$((FAILED + 1))
  fi
}

summary ()
{
  echo "$PASSED passed, $FAILED failed, $SKIPPED skipped"
  [ "$FAILED" = 0 ]
}

# ---- 1. build ---------------------------------------------------------------------
echo "==== fuzz: build (tests/fuzz/build.sh)"
bash "$FUZZ_SRC/build.sh" "${targets[@]}"
rc=$?
if [ "$rc" = 77 ]; then
  echo "fuzz: SKIPPED: clang with the libFuzzer runtime is not available (see above)"
  SKIPPED=$((${#targets[@]} + ${#crashes[@]}))
  summary
  exit 0
elif [ "$rc" != 0 ]; then
  echo "fuzz: FAILED: the fuzz targets did not build"
  FAILED=$((FAILED + 1))
  summary
  exit 1
fi

TMP=$(mktemp -d "${TMPDIR:-/tmp}/kist-fuzz-run.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT
mkdir -p "$OUT/logs" "$OUT/artifacts" || exit 1

# ---- 2. regressions -------------------------------------------------------------------
if [ "${#crashes[@]}" -gt 0 ]; then
  echo "==== fuzz: regressions (tests/fuzz/crashes/)"
fi
for f in "${crashes[@]}"; do
  t=$(basename "$(dirname "$f")")
  name=crashes/$t/$(basename "$f")
  bin=$OUT/fuzz_$t
  if [ ! -x "$bin" ]; then
    echo "FAIL  $name (no target fuzz_$t)"
    FAILED=$((FAILED + 1))
    continue
  fi
  log=$OUT/logs/regression-$t-$(basename "$f").log
  (cd "$TMP" && TMPDIR=$TMP timeout 60 "$bin" -rss_limit_mb=2048 -timeout=10 "$f") > "$log" 2>&1
  result "$?" "$name" "$name (still crashes; log: $log)" "$log"
done

# ---- 3. fuzzing ------------------------------------------------------------------------
echo "==== fuzz: ${SECONDS_PER_TARGET}s per target, $JOBS at a time"

# fuzz_one TARGET: fuzz it; writes $TMP/TARGET.rc
fuzz_one ()
{
  fuzz_run "$1" "$SECONDS_PER_TARGET" "$TMP" "$OUT/logs/$1.log"
  echo "$?" > "$TMP/$1.rc"
}

running=0
for t in "${targets[@]}"; do
  if [ ! -x "$OUT/fuzz_$t" ]; then
    echo 127 > "$TMP/$t.rc"
    continue
  fi
  fuzz_one "$t" &
  running=$((running + 1))
  if [ "$running" -ge "$JOBS" ]; then
    wait -n
    running=$((running - 1))
  fi
done
wait

for t in "${targets[@]}"; do
  log=$OUT/logs/$t.log
  rc=$(cat "$TMP/$t.rc" 2> /dev/null || echo 1)
  read -r execs eps cov ft _ <<< "$(fuzz_stats "$log")"
  result "$rc" "fuzz_$t ($execs execs, $eps/s, cov $cov, ft $ft)" \
    "fuzz_$t (exit $rc; log: $log)" "$log"
done
summary
