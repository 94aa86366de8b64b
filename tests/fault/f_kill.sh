#!/bin/bash
# f_kill.sh: kill -9 of the kist process at every step of create, start,
# exec, delete and sandbox; afterwards `kist delete --force ID` (alone) and
# `kist gc` (for a sandbox, whose id the caller does not know) must find and
# remove everything it made: no process, mount, cgroup, netns
# (a netns lives only as long as a process or a mount holds it) or state dir
# may be left (issue #8).
#
# The kill points: a normal run of the command is traced first (strace -e
# trace=SET, only the kist parent: no -f), listing its SET syscalls in order.
# For the i-th of them, the k-th call of syscall S, the command is run again
# under strace -e inject=S:signal=KILL:when=k (strace counts calls per
# syscall), which kills kist on entry to exactly that call, before it runs.
# SET holds every syscall that changes something outside the process (files,
# dirs, sockets, cgroups, processes, messages); a kill before any other
# syscall leaves the same state as a kill before the next one of SET.  After
# the last kill point comes the normal end (not for exec of a long-running
# process: it never ends by itself).
#
# Environment: KIST_FAULT_ALL=1 makes SET every syscall (about 3x the steps);
# KIST_FAULT_STRIDE=K tries only every K-th step (a quick run).
. "$(dirname "$0")/../integration/lib.sh"

if ! command -v strace > /dev/null; then
  skip "kill -9 at every step" "strace is missing (apt-get install strace)"
  exit 0
fi
STRIDE=${KIST_FAULT_STRIDE:-1}

SET=mkdir,mkdirat,rmdir,unlink,unlinkat,rename,renameat,renameat2,link,linkat,symlink,symlinkat
SET+=,openat,open,creat,write,pwrite64,writev,ftruncate,fchmod,fchmodat,fchown,fchownat
SET+=,clone,clone3,fork,vfork,kill,tgkill,pidfd_send_signal,socket,socketpair,bind,listen
SET+=,connect,accept4,sendmsg,sendto,flock,setns,unshare,mount,umount2,prctl
[ "${KIST_FAULT_ALL:-}" = 1 ] && SET=all

# A container that runs until it is killed, with the marker in its
# environment (every process left behind is found by leftover_pids).
sh_args "sleep 1000"
B=$(mkbundle b)

# strace_count TAG ARGS...: trace `kist ARGS` (run normally); sets RC, COUNT
# (the number of SET syscalls) and POINTS ("S K" per SET syscall: the K-th
# call of S).  With SET_UNTIL=NAME, only those up to the first NAME syscall
# (exec: where it starts waiting for the process).
strace_count ()
{
  local tag=$1
  shift
  strace -o "$T/$tag.strace" -qq -e trace="$SET" "$KIST" --root "$ROOT" "$@" \
    < /dev/null > "$T/$tag.out" 2> "$T/$tag.err"
  RC=$?
  mapfile -t POINTS < <(awk -v until="${SET_UNTIL:-}" '/^(\+\+\+|---)/ { next }
    { name = $0; sub(/\(.*/, "", name); print name, ++k[name] }
    until != "" && name == until { exit }' "$T/$tag.strace")
  COUNT=${#POINTS[@]}
}

# killed_at "S K" ARGS...: `kist ARGS`, SIGKILLed on entry to its K-th call
# of syscall S ("" : not killed, the normal end).
killed_at ()
{
  local point=$1 inject=()
  shift
  [ -n "$point" ] && inject=(-e inject="${point% *}":signal=KILL:when="${point#* }")
  # (In a subshell: strace dies of the tracee's SIGKILL, and the shell's
  # "Killed" notice goes to /dev/null.)
  (timeout -k 5 "$KIST_IT_TIMEOUT" strace -o /dev/null -qq "${inject[@]}" \
    "$KIST" --root "$ROOT" "$@" < /dev/null > "$T/killed.out" 2> "$T/killed.err"; :) 2> /dev/null
}

# what_is_left: one line per kind of leftover ("" when nothing is left).
what_is_left ()
{
  local s p m c
  s=$(leftover_state | grep -vx '~sandbox')
  [ -n "$(ls -A "$ROOT/~sandbox" 2> /dev/null)" ] && s+=" ~sandbox/$(ls -A "$ROOT/~sandbox" | head -n 3 | tr '\n' ' ')"
  p=$(leftover_pids)
  m=$(leftover_mounts)
  c=$(leftover_cgroups)
  [ -n "$s" ] && echo "state dirs: $s"
  [ -n "$p" ] && echo "processes: $(describe_pids $p)"
  [ -n "$m" ] && echo "mounts: $m"
  [ -n "$c" ] && echo "cgroups: $c"
  return 0
}

# clean_up ID: what the user does after a kill: delete --force (which alone
# must remove everything of ID), then gc.  Both must succeed (gc: exit 0).
# Sets CLEAN_ERR to what went wrong.
clean_up ()
{
  local left
  CLEAN_ERR=
  if [ -n "$1" ]; then
    kist delete --force "$1" > "$T/del.out" 2> "$T/del.err" \
      || CLEAN_ERR+="delete --force $1 failed: $(cat "$T/del.err"); "
    left=$(what_is_left)
    [ -n "$left" ] && CLEAN_ERR+="delete --force alone left: $left; "
  fi
  kist gc > "$T/gc.out" 2> "$T/gc.err" || CLEAN_ERR+="gc failed: $(cat "$T/gc.err"); "
}

# sweep OP FINAL PREPARE ID ARGS...: for each kill point of POINTS (and,
# with FINAL=1, the normal end), run PREPARE (a function that makes the
# container the command needs, or ""), kill `kist ARGS` there, clean up and
# check that nothing is left.  One ok or fail line per OP, naming the steps
# after which something was left.
sweep ()
{
  local op=$1 final=$2 prepare=$3 id=$4
  shift 4
  local points=("${POINTS[@]}")
  [ "$final" = 1 ] && points+=("")
  local count=${#points[@]} i n
  local n bad=() details=() left
  for ((i = 0; i < count; i += STRIDE)); do
    n=$((i + 1))
    [ -n "$prepare" ] && "$prepare" "$id"
    local t0=$EPOCHREALTIME
    killed_at "${points[i]}" "$@"
    clean_up "$id"
    [ -n "${KIST_FAULT_DEBUG:-}" ] && echo "  $op step $n: $(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }') s" >&2
    left=$(what_is_left)
    if [ -n "$left$CLEAN_ERR" ]; then
      bad+=("$n")
      [ ${#details[@]} -lt 3 ] && details+=("killed at step $n of $count (${points[i]:-the normal end}; its stderr: $(tail -n 1 "$T/killed.err")): $CLEAN_ERR$left; gc said: $(cat "$T/gc.out")")
      # Leave a clean slate for the next step.
      kist delete --force "$id" > /dev/null 2>&1
      for p in $(leftover_pids); do kill -KILL "$p" 2> /dev/null; done
      leftover_cgroups | sort -r | while read -r c; do rmdir "$c" 2> /dev/null; done
      rm -rf "${ROOT:?}"/@creating-* 2> /dev/null
    fi
  done
  if [ ${#bad[@]} -eq 0 ]; then
    ok "$op: kill -9 at each of its $count steps, then delete --force + gc: nothing left"
  else
    fail "$op: kill -9 at each of its $count steps, then delete --force + gc: nothing left" \
      "left behind after a kill at steps: ${bad[*]}" "${details[@]}"
  fi
}

# make_created ID / make_running ID: the container a command works on.
make_created ()
{
  kist create --bundle "$B" "$1" > /dev/null 2> "$T/prep.err" || echo "prepare: create failed: $(cat "$T/prep.err")" >&2
}
make_running ()
{
  make_created "$1"
  kist start "$1" > /dev/null 2> "$T/prep.err" || echo "prepare: start failed: $(cat "$T/prep.err")" >&2
}

ID=$(new_id k)

# ---- create -------------------------------------------------------------------
strace_count c1 create --bundle "$B" "$ID"
expect_eq "create (traced) exits 0" 0 "$RC"
N_CREATE=$COUNT
CREATE_POINTS=("${POINTS[@]}")
kist delete --force "$ID" > /dev/null 2>&1
sweep create 1 "" "$ID" create --bundle "$B" "$ID"

# A create in progress (stopped with SIGSTOP halfway, holding its lock) is
# left alone by gc; once its kist is killed, `state` and `list` call it
# stopped (no crash) and gc removes what it made.
MID=${CREATE_POINTS[N_CREATE / 2]}
# (strace in a subshell whose stderr takes the "Killed" notice.)
(strace -o /dev/null -qq -e inject="${MID% *}":signal=STOP:when="${MID#* }" \
  "$KIST" --root "$ROOT" create --bundle "$B" "$ID" < /dev/null > /dev/null 2>&1; :) 2> /dev/null &
SPID=$!
# (Stopped: its state dir exists and it stays in a stop for 0.3 s; strace
# stops it briefly at every syscall too.)
KPID=
stopped=0
for ((i = 0; i < 100 && stopped < 3; i++)); do
  KPID=$(pgrep -P "$(pgrep -P "$SPID" | head -n 1)" 2> /dev/null | head -n 1)
  if [ -n "$KPID" ] && grep -Eq '^State:\s+[tT]' "/proc/$KPID/status" 2> /dev/null \
    && [ -d "$ROOT/$ID" ]; then
    stopped=$((stopped + 1))
  else
    stopped=0
  fi
  sleep 0.1
done
kc gcbusy gc
expect_eq "gc leaves a create in progress alone: exit 0" 0 "$RC"
expect_true "gc leaves a create in progress alone: its state dir stays" test -d "$ROOT/$ID"
expect_match "the state of a create in progress says creating" \
  "$(cat "$ROOT/$ID/state.json" 2> /dev/null)" '"creating": *true'
[ -n "$KPID" ] && kill -KILL "$KPID"
wait "$SPID" 2> /dev/null
kc st state "$ID"
expect_eq "state of an interrupted create: exit 0 (no crash)" 0 "$RC"
expect_contains "state of an interrupted create: stopped" "$OUT" '"status": "stopped"'
kc list2 list
expect_match "list shows an interrupted create as stopped" "$OUT" "$ID +0 +stopped "
kc gc2 gc
expect_match "gc removes an interrupted create (its state and cgroup)" "$OUT" \
  "^removed $ID: .*cgroup removed, state removed"
expect_eq "gc removes an interrupted create: nothing left" "" "$(what_is_left)"

# The temporary dir of a create (@creating-ID.PID.N, made before the state
# dir is renamed into place): removed by gc once its kist is gone, left while
# it lives (here: this shell's pid) or holds its lock.
sleep 0 &
DEAD=$!
wait "$DEAD"
mkdir -m 0700 "$ROOT/@creating-$ID.$DEAD.0" "$ROOT/@creating-$ID.$$.0" "$ROOT/@creating-$ID.$DEAD.1"
flock "$ROOT/@creating-$ID.$DEAD.1" sleep 2 &
LOCKER=$!
sleep 0.2
kc tmpgc gc
expect_contains "gc removes the temporary dir of a dead create" "$OUT" "removed @creating-$ID.$DEAD.0:"
expect_true "... and leaves the one of a live kist" test -d "$ROOT/@creating-$ID.$$.0"
expect_true "... and the one whose lock is held" test -d "$ROOT/@creating-$ID.$DEAD.1"
wait "$LOCKER"
rmdir "$ROOT/@creating-$ID.$$.0"
kc tmpdel delete --force "$ID"
expect_eq "delete --force ID removes the temporary dir of its dead create" "0:" \
  "$RC:$(ls -A "$ROOT" | grep '^@')"

# ---- start --------------------------------------------------------------------
make_created "$ID"
strace_count s1 start "$ID"
expect_eq "start (traced) exits 0" 0 "$RC"
kist delete --force "$ID" > /dev/null 2>&1
sweep start 1 make_created "$ID" start "$ID"

# ---- exec ---------------------------------------------------------------------
# The exec'd process runs until killed: the kill points are the SET syscalls
# up to the wait for it (wait4 is added to SET), the last one while it waits.
make_running "$ID"
SET_ALL=$SET
SET+=,wait4,waitid
SET_UNTIL=wait4 strace_count e1 exec "$ID" sleep 0
expect_eq "exec (traced) exits 0" 0 "$RC"
kist delete --force "$ID" > /dev/null 2>&1
sweep exec 0 make_running "$ID" exec "$ID" sleep 1000
SET=$SET_ALL

# ---- delete -------------------------------------------------------------------
make_running "$ID"
strace_count d1 delete --force "$ID"
expect_eq "delete --force (traced) exits 0" 0 "$RC"
sweep "delete --force" 1 make_running "$ID" delete --force "$ID"

# ---- sandbox ------------------------------------------------------------------
if [ -x /usr/bin/env ] && [ -L /bin ] && grep -qE '^  sandbox ' <<< "$("$KIST" --help 2>&1)"; then
  SB=(sandbox --ro /usr --setenv "KIST_IT_MARK=$MARK" -- /usr/bin/env true)
  strace_count x1 "${SB[@]}"
  expect_eq "sandbox (traced) exits 0" 0 "$RC"
  # The sandbox's id is its own: gc (its kist is gone) must find it.
  sweep sandbox 1 "" "" "${SB[@]}"
  rmdir "$ROOT/~sandbox" 2> /dev/null
else
  skip "sandbox: kill -9 at every step" "no merged /usr or no sandbox command"
fi

nothing_left "kill -9 at every step"
