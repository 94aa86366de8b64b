# shellcheck shell=bash
# tests/fuzz/lib.sh: shared by tests/fuzz/run.sh and bench/fuzz.sh (sourced).
# Needs REPO; sets FUZZ_SRC, BUILDDIR, OUT and the sanitizer options.

FUZZ_SRC=$REPO/tests/fuzz
BUILDDIR=${KIST_FUZZ_BUILDDIR:-$REPO/_build-fuzz}
OUT=$BUILDDIR/fuzz
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}

# fuzz_targets: the array targets = $KIST_FUZZ_TARGETS (space-separated) or
# every tests/fuzz/fuzz_*.c.
fuzz_targets ()
{
  local f
  targets=()
  if [ -n "${KIST_FUZZ_TARGETS:-}" ]; then
    read -r -a targets <<< "$KIST_FUZZ_TARGETS"
    return 0
  fi
  for f in "$FUZZ_SRC"/fuzz_*.c; do
    [ -e "$f" ] || continue
    f=${f##*/fuzz_}
    targets+=("${f%.c}")
  done
}

# fuzz_run TARGET SECONDS TMPDIR LOG: fuzz TARGET for SECONDS from a copy of
# its corpus in TMPDIR (with its dictionary; the target's own temp dirs go
# there too), output to LOG; crash reproducers go to OUT/artifacts/TARGET/.  Returns libFuzzer's status.
fuzz_run ()
{
  local t=$1 secs=$2 tmp=$3 log=$4
  local corpus=$tmp/corpus-$t
  local dict=()
  mkdir -p "$corpus" "$OUT/artifacts/$t" || return 1
  if [ -d "$FUZZ_SRC/corpus/$t" ]; then
    cp -R "$FUZZ_SRC/corpus/$t/." "$corpus/" || return 1
  fi
  [ -f "$FUZZ_SRC/dict/$t.dict" ] && dict=(-dict="$FUZZ_SRC/dict/$t.dict")
  (cd "$tmp" && TMPDIR=$tmp timeout $((secs + 120)) "$OUT/fuzz_$t" -max_total_time="$secs" \
     -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 "${dict[@]}" \
     -artifact_prefix="$OUT/artifacts/$t/" "$corpus") > "$log" 2>&1
}

# fuzz_stats LOG: "EXECS EXEC/S COV FT CORPUS" from libFuzzer's final stats
# and its last status line ("?" for what is missing).
fuzz_stats ()
{
  local log=$1 last execs eps cov ft corp
  last=$(grep -E '^#[0-9]+' "$log" 2> /dev/null | tail -n 1)
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" 2> /dev/null | tail -n 1)
  eps=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" 2> /dev/null | tail -n 1)
  cov=$(sed -nE 's/.* cov: ([0-9]+).*/\1/p' <<< "$last")
  ft=$(sed -nE 's/.* ft: ([0-9]+).*/\1/p' <<< "$last")
  corp=$(sed -nE 's/.* corp: ([0-9]+\/[0-9]+[a-zA-Z]*).*/\1/p' <<< "$last")
  echo "${execs:-?} ${eps:-?} ${cov:-?} ${ft:-?} ${corp:-?}"
}

# fuzz_problem LOG: the lines of LOG that say what went wrong.
fuzz_problem ()
{
  grep -E '^(==[0-9]+==ERROR|SUMMARY|.*runtime error|.*fuzz invariant failed|.*does not read back|.*outside the root|Test unit written|==[0-9]+== ERROR)' \
    "$1" 2> /dev/null | head -n 8 | sed 's/^/      /'
}
