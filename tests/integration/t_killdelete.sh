#!/bin/bash
# t_killdelete.sh: `kill` in every state as runc 1.1 answers it (issue #9),
# with the one kept difference: `kill ID 9` of a stopped container exits 0
# (containerd sends it at teardown and expects success; runc says "container
# not running").  And `state` / `list` answer at once while a create holds the
# container's lock (they read the intent record: "creating"), the create held
# by strace delaying its clone of the init.
. "$(dirname "$0")/lib.sh"

# ---- kill in every state -------------------------------------------------------------
# The sequence, one "STEP rc" line per call; the same for kist and for runc.
# Signal 18 (CONT) probes without harm: kist refuses signal 0, runc takes it.
#   missing id; created; running; paused; stopped; delete.
C_ARGS='["sleep", "3141"]'
B=$(mkbundle kill)

CAN_PAUSE=
cg2=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
[ -n "$cg2" ] && [ -e "$cg2/cgroup.freeze" -o -n "$(ls "$cg2"/*/cgroup.freeze 2> /dev/null | head -n 1)" ] && CAN_PAUSE=1

# seq_run RUNTIME_FN ID: prints the table.  RUNTIME_FN ARGS... runs the runtime
# and prints its exit status; RUNTIME_FN_err holds its last stderr.
seq_run ()
{
  local r=$1 id=$2 x
  echo "missing kill 9: $($r kill "$id-none" 9)"
  echo "missing kill --all 9: $($r kill --all "$id-none" 9)"
  echo "create: $($r create --bundle "$B" "$id")"
  echo "created kill 18: $($r kill "$id" 18)"
  echo "created kill --all 18: $($r kill --all "$id" 18)"
  echo "created kill BOGUS: $($r kill "$id" BOGUS)"
  echo "start: $($r start "$id")"
  echo "running kill 18: $($r kill "$id" 18)"
  echo "running kill --all 18: $($r kill --all "$id" 18)"
  if [ -n "$CAN_PAUSE" ]; then
    echo "pause: $($r pause "$id")"
    echo "paused kill 18: $($r kill "$id" 18)"
    echo "paused kill --all 18: $($r kill --all "$id" 18)"
    echo "paused kill 9: $($r kill "$id" 9)"
  else
    echo "running kill 9: $($r kill "$id" 9)"
  fi
  for x in $(seq 1 100); do
    [ "$($r state "$id" | grep -c '"stopped"')" = 1 ] && break
    sleep 0.05
  done
  echo "stopped kill 9: $($r kill "$id" 9)"
  echo "stopped kill --all 9: $($r kill --all "$id" 9)"
  echo "stopped kill 15: $($r kill "$id" 15)"
  echo "stopped kill --all 15: $($r kill --all "$id" 15)"
  echo "stopped kill 18: $($r kill "$id" 18)"
  echo "delete: $($r delete "$id")"
  echo "deleted kill 9: $($r kill "$id" 9)"
  echo "deleted delete: $($r delete "$id")"
  echo "deleted delete --force: $($r delete --force "$id")"
}

ERRS=$T/kist.errs
: > "$ERRS"
kist_rc ()
{
  kist "$@" > /dev/null 2>> "$ERRS"
  echo $?
}
KID=$(new_id kseq)
IDS+=("$KID-none")
kist_table=$(seq_run kist_rc "$KID")

row ()
{
  sed -n "s/^$1: //p" <<< "$2"
}
expect_eq "kill of a missing id exits 1" 1 "$(row "missing kill 9" "$kist_table")"
expect_eq "kill --all of a missing id exits 1" 1 "$(row "missing kill --all 9" "$kist_table")"
expect_eq "kill 18 (CONT) of a created container exits 0" 0 "$(row "created kill 18" "$kist_table")"
expect_eq "kill --all 18 (CONT) of a created container exits 0" 0 "$(row "created kill --all 18" "$kist_table")"
expect_eq "kill with an unknown signal exits 1" 1 "$(row "created kill BOGUS" "$kist_table")"
expect_eq "kill 18 (CONT) of a running container exits 0" 0 "$(row "running kill 18" "$kist_table")"
expect_eq "kill --all 18 (CONT) of a running container exits 0" 0 "$(row "running kill --all 18" "$kist_table")"
if [ -n "$CAN_PAUSE" ]; then
  expect_eq "kill 18 (CONT) of a paused container exits 0" 0 "$(row "paused kill 18" "$kist_table")"
  expect_eq "kill --all 18 (CONT) of a paused container exits 0" 0 "$(row "paused kill --all 18" "$kist_table")"
  expect_eq "kill 9 of a paused container exits 0" 0 "$(row "paused kill 9" "$kist_table")"
else
  skip "kill of a paused container" "no cgroup2 freezer here"
fi
expect_eq "kill 9 of a stopped container exits 0 (containerd's teardown)" 0 "$(row "stopped kill 9" "$kist_table")"
expect_eq "kill --all 9 of a stopped container exits 0 (containerd's teardown)" 0 "$(row "stopped kill --all 9" "$kist_table")"
expect_eq "kill 15 of a stopped container exits 1 (as runc)" 1 "$(row "stopped kill 15" "$kist_table")"
expect_eq "kill --all 15 of a stopped container exits 0 (as runc)" 0 "$(row "stopped kill --all 15" "$kist_table")"
expect_eq "kill 18 (CONT) of a stopped container exits 1 (as runc)" 1 "$(row "stopped kill 18" "$kist_table")"
expect_eq "delete of the stopped container exits 0" 0 "$(row "delete" "$kist_table")"
expect_eq "kill of a deleted container exits 1" 1 "$(row "deleted kill 9" "$kist_table")"
expect_eq "delete of a deleted container exits 1" 1 "$(row "deleted delete" "$kist_table")"
expect_eq "delete --force of a deleted container exits 0" 0 "$(row "deleted delete --force" "$kist_table")"
errs=$(cat "$ERRS")
expect_contains "kill of a missing id: the error says it does not exist" "$errs" "container \`$KID-none\` does not exist"
expect_contains "kill 15 of a stopped container: the error says it is not running and how to remove it" \
  "$errs" "is not running (it is stopped): signal 15 was not sent"
expect_contains "kill with an unknown signal: the error names it" "$errs" "unknown signal \`BOGUS\`"

# The same sequence under runc, in a mount namespace of its own where the
# host's cgroup2 hierarchy is /sys/fs/cgroup (never the v1 hierarchies).
RROOT=$T/runc-root
RID=$PREFIX-rseq
runc_rc ()
{
  runc --root "$RROOT" "$@" > /dev/null 2>> "$T/runc.errs" < /dev/null
  echo $?
}
if command -v runc > /dev/null && [ -n "$cg2" ]; then
  export -f seq_run runc_rc
  export B RROOT T CAN_PAUSE
  runc_table=$(unshare -m --propagation private bash -c '
      [ "$1" = /sys/fs/cgroup ] || mount --bind "$1" /sys/fs/cgroup || exit 99
      seq_run runc_rc "$2"' bash "$cg2" "$RID")
  # The one kept difference.
  want=$(sed 's/^stopped kill 9: 0$/stopped kill 9: 1/' <<< "$kist_table")
  expect_eq "kill: kist's exit codes are runc's in every state, but for kill 9 of a stopped container" \
    "$runc_table" "$want"
  expect_contains "runc says \"container not running\" for kill 9 of a stopped container" \
    "$(cat "$T/runc.errs")" "container not running"
else
  skip "kill compared with runc" "runc or a cgroup2 hierarchy is missing"
fi
test_cleanup ()
{
  [ -d "$RROOT" ] || return 0
  unshare -m --propagation private sh -c '
    [ "$1" = /sys/fs/cgroup ] || mount --bind "$1" /sys/fs/cgroup
    runc --root "$2" delete --force "$3"' sh "$cg2" "$RROOT" "$RID" > /dev/null 2>&1
  [ -d "$cg2/$RID" ] && rmdir "$cg2/$RID" 2> /dev/null
  return 0
}
nothing_left "kill in every state"

# ---- state / list while a create holds the lock -----------------------------------------
# strace delays the create's clone of the init by 4 s: kist holds the
# container's lock from the intent record on, for as long as the create takes.
if ! command -v strace > /dev/null; then
  skip "state/list during a held create" "strace is missing"
else
cfg_reset
C_ARGS='["sleep", "3141"]'
B=$(mkbundle held)
id=$(new_id held)
strace -o /dev/null -e trace=clone,clone3 -e inject=clone,clone3:delay_enter=4000000:when=1 \
  "$KIST" --root "$ROOT" create --bundle "$B" "$id" > "$T/held.out" 2> "$T/held.err" < /dev/null &
cpid=$!
busy=$(for ((i = 0; i < 100; i++)); do
  # flock -n fails while the create holds the lock (only on the real dir:
  # flock would create a file).
  if [ -d "$ROOT/$id" ] && ! flock -n "$ROOT/$id" true 2> /dev/null; then echo held; break; fi
  sleep 0.02
done)
expect_eq "the held create holds the container's lock" held "$busy"
t0=$(date +%s%N)
kc heldstate state "$id"
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
expect_eq "state during a held create exits 0" 0 "$RC"
if [ "$ms" -lt 2000 ]; then ok "state during a held create answers at once (${ms} ms)"; else fail "state during a held create answers at once" "took ${ms} ms"; fi
expect_eq "state during a held create says creating" creating "$(jflat <<< "$OUT" | awk -F'\t' '$1 == "status" { print $2 }')"
t0=$(date +%s%N)
kc heldlist list
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
expect_eq "list during a held create exits 0" 0 "$RC"
if [ "$ms" -lt 2000 ]; then ok "list during a held create answers at once (${ms} ms)"; else fail "list during a held create answers at once" "took ${ms} ms"; fi
expect_eq "list during a held create shows it creating" creating \
  "$(awk -v id="$id" '$1 == id { print $3 }' <<< "$OUT")"
kc heldlistj list --format json
expect_match "list --format json during a held create shows it creating" "$OUT" '"status": ?"creating"'
wait "$cpid"
rc=$?
expect_eq "the held create completes" 0 "$rc"
[ "$rc" = 0 ] || cat "$T/held.err"
expect_eq "after the create, state says created" created "$(state_field "$id" status)"
kist delete --force "$id" > /dev/null 2>&1
fi
nothing_left "state/list during a create"
