#!/bin/bash
# tests/run-all.sh: THE test command (README, .ci/run).
#
#   1. tests/deps.sh                     build and test dependencies
#   2. autoreconf -fi
#   3. _build/:      ./configure --enable-werror; make -j2; make check
#   4. _build-asan/: the same with -fsanitize=address,undefined; make check
#   5. mandoc -T lint -W warning man/*   must print nothing
#   6. tests/integration/run.sh          against _build/kist (needs root)
#      tests/security/run.sh             one test per published CVE class
#      tests/truth/run.sh                every report entry against an observer outside
#      tests/fault/run.sh                kill -9 at every step, concurrency, full disk
#   7. tests/fuzz/run.sh                 libFuzzer targets, bounded (KIST_FUZZ_SECONDS
#                                        per target, default 10)
#      tests/vm/run.sh                   cgroup v2 limit tests in a qemu VM
#                                        against _build/kist (needs root)
#   8. make distcheck                    in _build/
#
# Ends with the line "N passed, N failed, N skipped": the unit checks of both
# builds plus the integration and VM checks; a stage that fails (deps, build,
# lint, distcheck...) adds one failure.  Exits non-zero on any failure.
# Environment: JOBS (make -j, default 2), KIST_SKIP_ASAN=1 / KIST_SKIP_VM=1 /
# KIST_SKIP_DISTCHECK=1 / KIST_SKIP_FUZZ=1 to leave those stages out locally
# (reported as skipped).
set -uo pipefail
export LC_ALL=C

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO" || exit 1
JOBS=${JOBS:-2}

PASSED=0
FAILED=0
SKIPPED=0
STAGES=()

say ()
{
  printf '\n==== %s\n' "$*"
}

# stage_result NAME STATUS [counted]: record a stage (ok / FAILED... /
# skipped...).  A failed or skipped stage adds one to the totals unless its
# individual results were "counted" already.
stage_result ()
{
  STAGES+=("$(printf '%-28s %s' "$1" "$2")")
  [ "${3:-}" = counted ] && return 0
  case $2 in
    FAILED*) FAILED=$((FAILED + 1)) ;;
    skipped*) SKIPPED=$((SKIPPED + 1)) ;;
  esac
}

# unit_results BUILDDIR LABEL: sets UNIT_FAILED; adds the check results of `make check` in
# BUILDDIR (each tests/unit/*.log has check's "NN%: Checks: C, Failures: F,
# Errors: E" line; a program that failed without it counts as one failure).
unit_results ()
{
  local dir=$1 label=$2 trs log res line c f e p=0 x=0 s=0
  for trs in "$dir"/tests/unit/*.trs; do
    [ -e "$trs" ] || continue
    log=${trs%.trs}.log
    res=$(sed -n 's/^:test-result: //p' "$trs" | head -n 1)
    line=$(grep -E '^[0-9]+%: Checks: [0-9]+, Failures: [0-9]+, Errors: [0-9]+' "$log" 2> /dev/null | tail -n 1)
    if [ -n "$line" ]; then
      c=$(sed -E 's/^.*Checks: ([0-9]+).*$/\1/' <<< "$line")
      f=$(sed -E 's/^.*Failures: ([0-9]+).*$/\1/' <<< "$line")
      e=$(sed -E 's/^.*Errors: ([0-9]+).*$/\1/' <<< "$line")
      p=$((p + c - f - e))
      x=$((x + f + e))
      # Passed every check but still failed (sanitizer report, leak, crash at exit).
      if [ $((f + e)) = 0 ] && [ "$res" != PASS ] && [ "$res" != SKIP ]; then
        x=$((x + 1))
        echo "$label: $(basename "${trs%.trs}") $res after all checks passed (see $log)"
      fi
    else
      case $res in
        PASS) p=$((p + 1)) ;;
        SKIP) s=$((s + 1)) ;;
        *) x=$((x + 1)); echo "$label: $(basename "${trs%.trs}") $res without a check summary (see $log)" ;;
      esac
    fi
  done
  echo "$label: $p passed, $x failed, $s skipped"
  PASSED=$((PASSED + p))
  FAILED=$((FAILED + x))
  SKIPPED=$((SKIPPED + s))
  UNIT_FAILED=$x
}

# unit_stage BUILDDIR NAME LABEL: make check in BUILDDIR and count it.
unit_stage ()
{
  local dir=$1 name=$2 label=$3 rc
  (cd "$dir" && make -j"$JOBS" check)
  rc=$?
  unit_results "$dir" "$label"
  if [ "$rc" = 0 ] && [ "$UNIT_FAILED" = 0 ]; then
    stage_result "$name" ok
  elif [ "$UNIT_FAILED" -gt 0 ]; then
    show_failed_logs "$dir"
    stage_result "$name" "FAILED ($UNIT_FAILED failed checks)" counted
  else
    show_failed_logs "$dir"
    stage_result "$name" "FAILED (make check exited with $rc)"
  fi
}

# show_failed_logs BUILDDIR: print the logs of failed unit tests.
show_failed_logs ()
{
  local trs
  for trs in "$1"/tests/unit/*.trs; do
    [ -e "$trs" ] || continue
    grep -q '^:test-result: PASS' "$trs" && continue
    echo "---- ${trs%.trs}.log"
    tail -n 60 "${trs%.trs}.log"
  done
}

# ---- 1. dependencies ----------------------------------------------------------
say "dependencies (tests/deps.sh)"
if bash tests/deps.sh < /dev/null; then
  stage_result deps ok
else
  stage_result deps FAILED
fi

# ---- 2. autoreconf ---------------------------------------------------------------
say "autoreconf -fi"
if autoreconf -fi; then
  stage_result autoreconf ok
  have_configure=1
else
  stage_result autoreconf FAILED
  have_configure=
fi

# ---- 3. build + unit tests ---------------------------------------------------------
built=
say "build in _build/ (--enable-werror)"
if [ -n "$have_configure" ] && rm -rf _build && mkdir _build \
   && (cd _build && ../configure --enable-werror && make -j"$JOBS"); then
  stage_result "build" ok
  built=1
  say "make check (_build/)"
  unit_stage _build "unit tests" unit
else
  stage_result "build" FAILED
fi

# ---- 4. sanitizer build + unit tests --------------------------------------------------
if [ -n "${KIST_SKIP_ASAN:-}" ]; then
  stage_result "asan build + unit tests" "skipped (KIST_SKIP_ASAN)"
elif [ -z "$have_configure" ]; then
  stage_result "asan build + unit tests" FAILED
else
  say "build in _build-asan/ (-fsanitize=address,undefined) and make check"
  export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
  export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
  if rm -rf _build-asan && mkdir _build-asan \
     && (cd _build-asan && ../configure \
           CFLAGS="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer" \
           LDFLAGS="-fsanitize=address,undefined" && make -j"$JOBS"); then
    unit_stage _build-asan "asan build + unit tests" "unit (asan+ubsan)"
  else
    stage_result "asan build + unit tests" FAILED
  fi
fi

# ---- 5. man pages ---------------------------------------------------------------------
say "mandoc -T lint -W warning man/*"
lint=$(mandoc -T lint -W warning man/* 2>&1)
lint_rc=$?
if [ "$lint_rc" = 0 ] && [ -z "$lint" ]; then
  stage_result "man page lint" ok
else
  printf '%s\n' "$lint"
  stage_result "man page lint" FAILED
fi

# harness_stage NAME LOG COMMAND...: run a suite that ends with the line "N
# passed, N failed[, N skipped]" (tee'd to LOG) and add its counts.
harness_stage ()
{
  local name=$1 log=$2 rc line hp hx hs
  shift 2
  "$@" < /dev/null 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
  if [ -z "$line" ]; then
    stage_result "$name" "FAILED (no summary line)"
    return
  fi
  read -r hp _ hx _ hs _ <<< "$(sed -E 's/^([0-9]+) passed, ([0-9]+) failed(, ([0-9]+) skipped)?.*/\1 p \2 f \4 s/' <<< "$line")"
  [[ $hs =~ ^[0-9]+$ ]] || hs=0
  PASSED=$((PASSED + hp))
  FAILED=$((FAILED + hx))
  SKIPPED=$((SKIPPED + hs))
  if [ "$rc" = 0 ] && [ "$hx" = 0 ]; then
    stage_result "$name" ok
  elif [ "$hx" = 0 ]; then
    stage_result "$name" "FAILED (exit $rc)"
  else
    stage_result "$name" "FAILED ($hx failed checks)" counted
  fi
}

# ---- 6. integration, security and fault tests -----------------------------------------
for suite in integration security truth fault engines; do
  if [ -n "$built" ]; then
    say "$suite tests (tests/$suite/run.sh, KIST=_build/kist)"
    KIST=$REPO/_build/kist harness_stage "$suite tests" "_build/$suite.log" \
      bash "tests/$suite/run.sh"
  else
    stage_result "$suite tests" "FAILED (no kist binary)"
  fi
done

# ---- 7. fuzz targets (bounded), VM tests (cgroup v2 limits) ------------------------------
if [ -n "${KIST_SKIP_FUZZ:-}" ]; then
  stage_result "fuzz targets" "skipped (KIST_SKIP_FUZZ)"
elif [ -n "$have_configure" ]; then
  say "fuzz targets (tests/fuzz/run.sh ${KIST_FUZZ_SECONDS:-10})"
  KIST_FUZZ_BUILDDIR=$REPO/_build-fuzz harness_stage "fuzz targets" _build/fuzz.log \
    bash tests/fuzz/run.sh "${KIST_FUZZ_SECONDS:-10}"
else
  stage_result "fuzz targets" FAILED
fi
if [ -n "${KIST_SKIP_VM:-}" ]; then
  stage_result "vm tests" "skipped (KIST_SKIP_VM)"
elif [ -n "$built" ]; then
  say "VM tests (tests/vm/run.sh _build/kist)"
  harness_stage "vm tests" _build/vm.log bash tests/vm/run.sh "$REPO/_build/kist"
else
  stage_result "vm tests" "FAILED (no kist binary)"
fi

# ---- 8. distcheck -----------------------------------------------------------------------
if [ -n "${KIST_SKIP_DISTCHECK:-}" ]; then
  stage_result "make distcheck" "skipped (KIST_SKIP_DISTCHECK)"
elif [ -n "$built" ]; then
  say "make distcheck (_build/)"
  if (cd _build && make -j"$JOBS" distcheck); then
    stage_result "make distcheck" ok
  else
    stage_result "make distcheck" FAILED
  fi
else
  stage_result "make distcheck" "FAILED (no build)"
fi

say "summary"
printf '%s\n' "${STAGES[@]}"
echo "$PASSED passed, $FAILED failed, $SKIPPED skipped"
[ "$FAILED" = 0 ]
