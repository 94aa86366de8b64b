#!/bin/bash
# f_concurrent.sh: concurrency on the state root (issue #8).
#   1. 100 concurrent lifecycles (create, start, kill, wait for stopped,
#      delete) of distinct ids: every one succeeds, nothing is lost or left.
#   2. 20 concurrent creates of one id: exactly one wins, the others say the
#      container already exists.
#   3. 20 concurrent operations on one id (start, state, kill, delete,
#      delete --force, list, gc): no deadlock (bounded), each either succeeds
#      or fails with one of the clear errors a race explains, and nothing is
#      left.
. "$(dirname "$0")/../integration/lib.sh"

sh_args "sleep 1000"
B=$(mkbundle b)
WAIT_MAX=${KIST_FAULT_CONC_TIMEOUT:-120}

# wait_all WHAT PID...: wait for the background jobs, at most WAIT_MAX s in
# all; a job still running then is a deadlock (killed, and a failure).
wait_all ()
{
  local what=$1 p deadline=$((SECONDS + WAIT_MAX)) stuck=()
  shift
  for p in "$@"; do
    while kill -0 "$p" 2> /dev/null && [ $SECONDS -lt $deadline ]; do
      sleep 0.1
    done
    if kill -0 "$p" 2> /dev/null; then
      stuck+=("$p")
      kill -KILL "$p" 2> /dev/null
    fi
    wait "$p" 2> /dev/null
  done
  if [ ${#stuck[@]} -eq 0 ]; then
    ok "$what: all finished within ${WAIT_MAX} s (no deadlock)"
  else
    fail "$what: all finished within ${WAIT_MAX} s (no deadlock)" "still running: ${stuck[*]}"
  fi
}

# none_bad WHAT BAD...: ok when no BAD is given, else a failure listing the
# first ones.
none_bad ()
{
  local what=$1
  shift
  if [ $# -eq 0 ]; then
    ok "$what"
  else
    fail "$what" "$# failed" "${@:1:5}"
  fi
}

# lifecycle N ID: create, start, kill, wait until stopped, delete; writes
# "ok" or the step and its error to $T/lc.N.
lifecycle ()
{
  local n=$1 id=$2 i st
  exec > "$T/lc.$n" 2>&1
  "$KIST" --root "$ROOT" create --bundle "$B" "$id" < /dev/null > /dev/null 2> "$T/lc.$n.err" \
    || { echo "create: $(cat "$T/lc.$n.err")"; return; }
  "$KIST" --root "$ROOT" start "$id" < /dev/null 2> "$T/lc.$n.err" \
    || { echo "start: $(cat "$T/lc.$n.err")"; return; }
  "$KIST" --root "$ROOT" kill "$id" KILL < /dev/null 2> "$T/lc.$n.err" \
    || { echo "kill: $(cat "$T/lc.$n.err")"; return; }
  for ((i = 0; i < 200; i++)); do
    st=$("$KIST" --root "$ROOT" state "$id" < /dev/null 2> /dev/null | grep -o '"status": "[a-z]*"')
    [ "$st" = '"status": "stopped"' ] && break
    sleep 0.05
  done
  "$KIST" --root "$ROOT" delete "$id" < /dev/null 2> "$T/lc.$n.err" \
    || { echo "delete (state was $st): $(cat "$T/lc.$n.err")"; return; }
  echo ok
}

# ---- 1. 100 lifecycles of distinct ids ------------------------------------------
pids=()
for ((n = 0; n < 100; n++)); do
  id=$(new_id "lc$n")
  lifecycle "$n" "$id" &
  pids+=($!)
done
wait_all "100 concurrent lifecycles" "${pids[@]}"
bad=()
for ((n = 0; n < 100; n++)); do
  [ "$(cat "$T/lc.$n" 2> /dev/null)" = ok ] || bad+=("lc$n: $(head -c 300 "$T/lc.$n" 2> /dev/null)")
done
none_bad "100 concurrent lifecycles: every create, start, kill and delete succeeded" "${bad[@]}"
kc list1 list -q
expect_eq "after 100 lifecycles: list is empty" "" "$OUT"
nothing_left "100 concurrent lifecycles"

# ---- 2. 20 concurrent creates of one id ---------------------------------------------
ID=$(new_id one)
pids=()
for ((n = 0; n < 20; n++)); do
  ("$KIST" --root "$ROOT" create --bundle "$B" "$ID" < /dev/null > /dev/null 2> "$T/cr.$n.err"
   echo $? > "$T/cr.$n.rc") &
  pids+=($!)
done
wait_all "20 concurrent creates of one id" "${pids[@]}"
won=0
other=()
for ((n = 0; n < 20; n++)); do
  if [ "$(cat "$T/cr.$n.rc")" = 0 ]; then
    won=$((won + 1))
  elif ! grep -q "container \`$ID\` already exists" "$T/cr.$n.err"; then
    other+=("$(cat "$T/cr.$n.err")")
  fi
done
expect_eq "20 concurrent creates of one id: exactly one succeeds" 1 "$won"
none_bad "20 concurrent creates of one id: the others say it already exists" "${other[@]}"
kc st1 state "$ID"
expect_contains "the one created is created" "$OUT" '"status": "created"'
expect_eq "no temporary state dir is left" "" "$(ls -A "$ROOT" | grep '^@')"

# ---- 3. 20 concurrent operations on one id -------------------------------------------
# (@ stands for the id.)
OPS=("start @" "state @" "start @" "kill @ KILL" "state @" "delete @" "start @" list
     "delete --force @" "state @" gc "start @" "kill @ TERM" "state @" "delete @"
     "delete --force @" list "start @" "state @" "delete --force @")
pids=()
for ((n = 0; n < 20; n++)); do
  # shellcheck disable=SC2086
  (set -- ${OPS[n]//@/$ID}
   "$KIST" --root "$ROOT" "$@" < /dev/null > /dev/null 2> "$T/op.$n.err"
   echo $? > "$T/op.$n.rc") &
  pids+=($!)
done
wait_all "20 concurrent operations on one id" "${pids[@]}"
# The errors a race can explain (anything else, e.g. a bare errno or a
# crash, is a failure).  A start whose created init a concurrent `kill @ KILL`
# or `delete --force @` ends says that the init exited before its exec.
CLEAR="does not exist|cannot be started: it is|is not running|is running; stop it first|is (running|created); stop it first|was just deleted|exited before it could exec its process"
unclear=()
for ((n = 0; n < 20; n++)); do
  rc=$(cat "$T/op.$n.rc")
  [ "$rc" = 0 ] && continue
  if ! grep -Eq "$CLEAR" "$T/op.$n.err"; then
    unclear+=("${OPS[n]} (exit $rc): $(head -c 300 "$T/op.$n.err")")
  fi
done
none_bad "20 concurrent operations on one id: each succeeded or failed with a clear error" \
  "${unclear[@]}"
for ((n = 0; n < 20; n++)); do
  case ${OPS[n]} in
    "delete --force @")
      expect_eq "concurrent delete --force #$n exits 0" 0 "$(cat "$T/op.$n.rc")" ;;
  esac
done
kc st2 state "$ID"
expect_contains "after the concurrent delete --force: the container is gone" "$ERR" "does not exist"
nothing_left "20 concurrent operations on one id"
