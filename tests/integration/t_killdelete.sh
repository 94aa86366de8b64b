#!/bin/bash
# t_killdelete.sh: `kill` and `delete` in every state as runc 1.1 answers
# them (issue #9): signal 0 (the liveness probe), signal names and numbers,
# delete of a created container without --force (killed and removed), of a
# running or paused one (refused, then removed with --force: init, cgroup and
# state gone), with the one kept difference: `kill ID 9` of a stopped container exits 0
# (containerd sends it at teardown and expects success; runc says "container
# not running").  And `state` / `list` answer at once while a create holds the
# container's lock (they read the intent record: "creating"), the create held
# by strace delaying its clone of the init.
. "$(dirname "$0")/lib.sh"

# ---- kill and delete in every state ---------------------------------------------------
# The sequence, one "STEP rc" line per call; the same for kist and for runc.
# Signal 18 (CONT) probes without harm, and so does signal 0 (the liveness
# probe: it succeeds while the init lives, as with kill(2)).  Signal names
# and numbers as runc takes them (KILL, SIGKILL, cont, 9).
#   missing id; created; running; paused; stopped; delete.
# Then delete in every state, each on a container of its own: created
# (without --force: runc kills the waiting init and removes it), running and
# paused (refused without --force, removed with it); after each removal the
# init, its cgroup and the state are gone ("gone" rows).
C_ARGS='["sleep", "3141"]'
B=$(mkbundle kill)

CAN_PAUSE=
cg2=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
[ -n "$cg2" ] && [ -e "$cg2/cgroup.freeze" -o -n "$(ls "$cg2"/*/cgroup.freeze 2> /dev/null | head -n 1)" ] && CAN_PAUSE=1

# seq_run RUNTIME_FN ID: prints the table.  RUNTIME_FN ARGS... runs the runtime
# and prints its exit status; RUNTIME_FN_err holds its last stderr.
# seq_run RUNTIME ID: RUNTIME_rc ARGS... runs the runtime and prints its exit
# status; RUNTIME_out ARGS... prints its standard output.
seq_run ()
{
  local r=${1}_rc o=${1}_out id=$2 x
  echo "missing kill 9: $($r kill "$id-none" 9)"
  echo "missing kill --all 9: $($r kill --all "$id-none" 9)"
  echo "missing kill 0: $($r kill "$id-none" 0)"
  echo "create: $($r create --bundle "$B" "$id")"
  echo "created kill 18: $($r kill "$id" 18)"
  echo "created kill --all 18: $($r kill --all "$id" 18)"
  echo "created kill 0: $($r kill "$id" 0)"
  echo "created kill --all 0: $($r kill --all "$id" 0)"
  echo "created kill CONT: $($r kill "$id" CONT)"
  echo "created kill SIGCONT: $($r kill "$id" SIGCONT)"
  echo "created kill cont: $($r kill "$id" cont)"
  echo "created kill sigcont: $($r kill "$id" sigcont)"
  echo "created kill BOGUS: $($r kill "$id" BOGUS)"
  echo "created kill SIGBOGUS: $($r kill "$id" SIGBOGUS)"
  echo "created kill 65: $($r kill "$id" 65)"
  echo "created kill -1: $($r kill "$id" -1)"
  echo "start: $($r start "$id")"
  echo "running kill 18: $($r kill "$id" 18)"
  echo "running kill --all 18: $($r kill --all "$id" 18)"
  echo "running kill 0: $($r kill "$id" 0)"
  echo "running kill --all 0: $($r kill --all "$id" 0)"
  if [ -n "$CAN_PAUSE" ]; then
    echo "pause: $($r pause "$id")"
    echo "paused kill 18: $($r kill "$id" 18)"
    echo "paused kill --all 18: $($r kill --all "$id" 18)"
    echo "paused kill 0: $($r kill "$id" 0)"
    echo "paused kill 9: $($r kill "$id" 9)"
  else
    echo "running kill 9: $($r kill "$id" 9)"
  fi
  for x in $(seq 1 100); do
    [ "$($o state "$id" | grep -c '"stopped"')" = 1 ] && break
    sleep 0.05
  done
  echo "stopped kill 9: $($r kill "$id" 9)"
  echo "stopped kill --all 9: $($r kill --all "$id" 9)"
  echo "stopped kill 15: $($r kill "$id" 15)"
  echo "stopped kill --all 15: $($r kill --all "$id" 15)"
  echo "stopped kill 18: $($r kill "$id" 18)"
  echo "stopped kill 0: $($r kill "$id" 0)"
  echo "stopped kill --all 0: $($r kill --all "$id" 0)"
  echo "delete: $($r delete "$id")"
  echo "deleted kill 9: $($r kill "$id" 9)"
  echo "deleted delete: $($r delete "$id")"
  echo "deleted delete --force: $($r delete --force "$id")"

  # SIGKILL by name: SIGKILL on a running container, KILL on a created one.
  echo "create for SIGKILL: $($r create --bundle "$B" "$id-k1")"
  echo "start for SIGKILL: $($r start "$id-k1")"
  echo "running kill SIGKILL: $($r kill "$id-k1" SIGKILL)"
  echo "create for KILL: $($r create --bundle "$B" "$id-k2")"
  echo "created kill KILL: $($r kill "$id-k2" KILL)"
  for x in $(seq 1 100); do
    [ "$($o state "$id-k1" | grep -c '"stopped"')$($o state "$id-k2" | grep -c '"stopped"')" = 11 ] && break
    sleep 0.05
  done
  echo "after SIGKILL, stopped: $($o state "$id-k1" | grep -c '"stopped"')"
  echo "after KILL, stopped: $($o state "$id-k2" | grep -c '"stopped"')"
  echo "delete after SIGKILL: $($r delete "$id-k1")"
  echo "delete after KILL: $($r delete "$id-k2")"

  # delete in every state, one container each: the init, its cgroup and the
  # state are gone afterwards.
  local pid cg
  # init_of ID: "PID CGROUP" of the init (its cgroup2 path, absolute).
  init_of ()
  {
    local p
    p=$($o state "$1" | sed -n 's/^ *"pid": *\([0-9]*\).*/\1/p')
    printf '%s %s' "$p" "$CG2$(sed -n 's/^0:://p' "/proc/$p/cgroup" 2> /dev/null)"
  }
  gone ()
  {
    local what="" st
    # (a zombie counts as gone: its parent reaps it)
    [ -n "$1" ] && [ "$1" != 0 ] \
      && [ "$(awk '{ sub(/^.*\) /, ""); print $1 }' "/proc/$1/stat" 2> /dev/null | tr -d ZX)" != "" ] \
      && what+=" init-alive"
    [ "$2" != "$CG2" ] && [ -d "$2" ] && what+=" cgroup-left"
    st=$($r state "$3")
    [ "$st" = 0 ] && what+=" state-left"
    echo "${what:- all gone}"
  }
  echo "create for delete: $($r create --bundle "$B" "$id-dc")"
  read -r pid cg <<< "$(init_of "$id-dc")"
  echo "created: init in a cgroup of its own: $([ -n "$pid" ] && [ "$cg" != "$CG2" ] && [ -d "$cg" ] && echo yes)"
  echo "created delete: $($r delete "$id-dc")"
  echo "gone after created delete:$(gone "$pid" "$cg" "$id-dc")"

  echo "create for delete --force: $($r create --bundle "$B" "$id-dcf")"
  read -r pid cg <<< "$(init_of "$id-dcf")"
  echo "created delete --force: $($r delete --force "$id-dcf")"
  echo "gone after created delete --force:$(gone "$pid" "$cg" "$id-dcf")"

  # refused_then_forced STATE ID: delete is refused and leaves it in STATE,
  # delete --force removes it all.
  refused_then_forced ()
  {
    read -r pid cg <<< "$(init_of "$2")"
    echo "$1 delete: $($r delete "$2")"
    echo "after $1 delete, still $1: $($o state "$2" | grep -c "\"$1\"")"
    echo "$1 delete --force: $($r delete --force "$2")"
    echo "gone after $1 delete --force:$(gone "$pid" "$cg" "$2")"
  }
  echo "create for running delete: $($r create --bundle "$B" "$id-dr")"
  echo "start for running delete: $($r start "$id-dr")"
  refused_then_forced running "$id-dr"
  if [ -n "$CAN_PAUSE" ]; then
    echo "create for paused delete: $($r create --bundle "$B" "$id-dp")"
    echo "start for paused delete: $($r start "$id-dp")"
    echo "pause for paused delete: $($r pause "$id-dp")"
    refused_then_forced paused "$id-dp"
  fi
}

ERRS=$T/kist.errs
: > "$ERRS"
kist_rc ()
{
  kist "$@" > /dev/null 2>> "$ERRS"
  echo $?
}
kist_out ()
{
  kist "$@" 2> /dev/null
}
CG2=$cg2
KID=$(new_id kseq)
IDS+=("$KID-none" "$KID-dc" "$KID-dcf" "$KID-dr" "$KID-dp" "$KID-k1" "$KID-k2")
kist_table=$(seq_run kist "$KID")

row ()
{
  sed -n "s/^$1: //p" <<< "$2"
}
expect_eq "kill of a missing id exits 1" 1 "$(row "missing kill 9" "$kist_table")"
expect_eq "kill --all of a missing id exits 1" 1 "$(row "missing kill --all 9" "$kist_table")"
expect_eq "kill 18 (CONT) of a created container exits 0" 0 "$(row "created kill 18" "$kist_table")"
expect_eq "kill --all 18 (CONT) of a created container exits 0" 0 "$(row "created kill --all 18" "$kist_table")"
expect_eq "kill with an unknown signal exits 1" 1 "$(row "created kill BOGUS" "$kist_table")"
expect_eq "kill with an unknown SIG name exits 1" 1 "$(row "created kill SIGBOGUS" "$kist_table")"
expect_eq "kill with signal 65 (beyond SIGRTMAX) exits 1" 1 "$(row "created kill 65" "$kist_table")"
expect_eq "kill with signal -1 exits 1" 1 "$(row "created kill -1" "$kist_table")"
expect_eq "kill 0 of a missing id exits 1" 1 "$(row "missing kill 0" "$kist_table")"
expect_eq "kill 0 (liveness probe) of a created container exits 0" 0 "$(row "created kill 0" "$kist_table")"
expect_eq "kill --all 0 of a created container exits 0" 0 "$(row "created kill --all 0" "$kist_table")"
for n in CONT SIGCONT cont sigcont; do
  expect_eq "kill $n (a signal name) of a created container exits 0" 0 "$(row "created kill $n" "$kist_table")"
done
expect_eq "kill 0 of a running container exits 0" 0 "$(row "running kill 0" "$kist_table")"
expect_eq "kill --all 0 of a running container exits 0" 0 "$(row "running kill --all 0" "$kist_table")"
expect_eq "kill 0 of a stopped container exits 1 (as runc: not running)" 1 "$(row "stopped kill 0" "$kist_table")"
expect_eq "kill --all 0 of a stopped container exits 0 (as runc)" 0 "$(row "stopped kill --all 0" "$kist_table")"
expect_eq "kill SIGKILL (by name) of a running container exits 0" 0 "$(row "running kill SIGKILL" "$kist_table")"
expect_eq "kill KILL (by name) of a created container exits 0" 0 "$(row "created kill KILL" "$kist_table")"
expect_eq "after kill SIGKILL the container is stopped" 1 "$(row "after SIGKILL, stopped" "$kist_table")"
expect_eq "after kill KILL the container is stopped" 1 "$(row "after KILL, stopped" "$kist_table")"
expect_eq "delete after kill SIGKILL exits 0" 0 "$(row "delete after SIGKILL" "$kist_table")"
expect_eq "delete after kill KILL exits 0" 0 "$(row "delete after KILL" "$kist_table")"
expect_eq "delete of a created container (no --force) exits 0, as runc" 0 "$(row "created delete" "$kist_table")"
expect_eq "the created container's init ran in a cgroup of its own" yes \
  "$(row "created: init in a cgroup of its own" "$kist_table")"
expect_eq "delete of a created container: init, cgroup and state are gone" "all gone" \
  "$(row "gone after created delete" "$kist_table")"
expect_eq "delete --force of a created container exits 0" 0 "$(row "created delete --force" "$kist_table")"
expect_eq "delete --force of a created container: all gone" "all gone" \
  "$(row "gone after created delete --force" "$kist_table")"
expect_eq "delete of a running container without --force exits 1" 1 "$(row "running delete" "$kist_table")"
expect_eq "the refused delete left it running" 1 "$(row "after running delete, still running" "$kist_table")"
expect_eq "delete --force of a running container exits 0" 0 "$(row "running delete --force" "$kist_table")"
expect_eq "delete --force of a running container: all gone" "all gone" \
  "$(row "gone after running delete --force" "$kist_table")"
if [ -n "$CAN_PAUSE" ]; then
  expect_eq "kill 0 of a paused container exits 0" 0 "$(row "paused kill 0" "$kist_table")"
  expect_eq "delete of a paused container without --force exits 1" 1 "$(row "paused delete" "$kist_table")"
  expect_eq "the refused delete left it paused" 1 "$(row "after paused delete, still paused" "$kist_table")"
  expect_eq "delete --force of a paused container exits 0" 0 "$(row "paused delete --force" "$kist_table")"
  expect_eq "delete --force of a paused container: all gone" "all gone" \
    "$(row "gone after paused delete --force" "$kist_table")"
fi
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
expect_contains "kill with an unknown signal: the error says what is accepted" "$errs" \
  "give a number from 0 to"
expect_contains "delete of a running container: the error says it is running and how to force it" \
  "$errs" "container \`$KID-dr\` is running; stop it first or use \`kist delete --force\`"

# The same sequence under runc, in a mount namespace of its own where the
# host's cgroup2 hierarchy is /sys/fs/cgroup (never the v1 hierarchies).
RROOT=$T/runc-root
RID=$PREFIX-rseq
runc_rc ()
{
  runc --root "$RROOT" "$@" > /dev/null 2>> "$T/runc.errs" < /dev/null
  echo $?
}
runc_out ()
{
  runc --root "$RROOT" "$@" 2> /dev/null < /dev/null
}
if command -v runc > /dev/null && [ -n "$cg2" ]; then
  export -f seq_run runc_rc runc_out
  export B RROOT T CAN_PAUSE
  # (In runc's view the host's cgroup2 hierarchy is /sys/fs/cgroup.)
  runc_table=$(unshare -m --propagation private bash -c '
      [ "$1" = /sys/fs/cgroup ] || mount --bind "$1" /sys/fs/cgroup || exit 99
      CG2=/sys/fs/cgroup seq_run runc "$2"' bash "$cg2" "$RID")
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
  local x
  for x in "" -dc -dcf -dr -dp -k1 -k2; do
    unshare -m --propagation private sh -c '
      [ "$1" = /sys/fs/cgroup ] || mount --bind "$1" /sys/fs/cgroup
      runc --root "$2" delete --force "$3"' sh "$cg2" "$RROOT" "$RID$x" > /dev/null 2>&1
    [ -d "$cg2/$RID$x" ] && rmdir "$cg2/$RID$x" 2> /dev/null
  done
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
