#!/bin/bash
# t_example.sh: examples/harness.py, the worked client of `kist sandbox`
# (issue 12), as root and as nobody: four requests through one workspace.
# A request that succeeds is committed, one that fails or times out is not;
# --status-fd tells exit from signal and timeout.
. "$(dirname "$0")/lib.sh"

HARNESS=$IT_DIR/../../examples/harness.py
# Debian's python3 (tests/deps.sh), not a per-user one nobody cannot run.
PY=/usr/bin/python3
if [ ! -x "$PY" ]; then
  skip "example harness" "no $PY (tests/deps.sh installs python3)"
  exit 0
fi
if [ ! -x /usr/bin/env ] || [ ! -L /bin ]; then
  skip "example harness" "the host has no merged /usr"
  exit 0
fi

# field JSON-LINE KEY: a top-level value of one of the harness's lines.
field ()
{
  "$PY" -c 'import json, sys; v = json.loads(sys.argv[1]).get(sys.argv[2]); print("" if v is None else v)' "$1" "$2"
}

run_harness ()   # MODE: root or nobody
{
  local mode=$1 ws=$T/ws-$1 rep=$T/rep-$1 out
  mkdir -p "$ws" "$rep"
  # As root the workspace stays root's (kist maps its owner to the sandbox
  # user); as nobody the harness writes its own workspace and reports.
  [ "$mode" = root ] || chown "$NOBODY_UID:$NOBODY_GID" "$ws" "$rep"
  local cmd=("$PY" "$HARNESS" --kist "$KIST" --workspace "$ws" --timeout 1 --reports "$rep"
    'echo ok > ok.txt' 'echo bad > bad.txt; exit 3' 'sleep 60' 'kill -SEGV $$')
  if [ "$mode" = root ]; then
    out=$(cd "$T" && timeout -k 5 60 "${cmd[@]:0:2}" --root "$ROOT" "${cmd[@]:2}" 2> "$T/harness-$mode.err")
  else
    out=$(cd / && XDG_RUNTIME_DIR=$XDG timeout -k 5 60 "${AS_NOBODY[@]}" "${cmd[@]}" 2> "$T/harness-$mode.err")
  fi
  expect_eq "harness ($mode): exit 1 (some requests failed)" 1 "$?"
  mapfile -t L <<< "$out"
  expect_eq "harness ($mode): one line per request" 4 "${#L[@]}"
  expect_eq "harness ($mode): request 1 exits 0" 0 "$(field "${L[0]}" exit)"
  expect_contains "harness ($mode): request 1 is committed" "$(field "${L[0]}" workspace)" "committed 1 files"
  expect_eq "harness ($mode): request 2 exits 3, how exit" "3 exit" "$(field "${L[1]}" exit) $(field "${L[1]}" how)"
  expect_contains "harness ($mode): request 2 is discarded" "$(field "${L[1]}" workspace)" "discarded (exit 3)"
  expect_eq "harness ($mode): request 3 times out (124, how timeout)" "124 timeout" \
    "$(field "${L[2]}" exit) $(field "${L[2]}" how)"
  expect_eq "harness ($mode): request 4 dies of SIGSEGV (139, how signal, 11)" "139 signal 11" \
    "$(field "${L[3]}" exit) $(field "${L[3]}" how) $(field "${L[3]}" signal)"
  expect_eq "harness ($mode): the workspace holds the committed file only" "ok.txt" "$(ls "$ws")"
  expect_eq "harness ($mode): the committed file's content" ok "$(cat "$ws/ok.txt" 2> /dev/null)"
  expect_true "harness ($mode): a report per request" test -s "$rep/report-3.json"
}

nobody_dir "$XDG" 0700
run_harness root
if nobody_ok "example harness as nobody"; then
  run_harness nobody
fi
sandbox_dirs_empty
nothing_left "example harness"
