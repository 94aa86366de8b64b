#!/bin/bash
# t_gc.sh: kist gc removes sandboxes whose deadline passed or whose kist
# process is gone, and nothing else.
#
# Part 1 works on state entries written by hand (the fields of state.c) with
# real processes standing in for the container init and the owning kist, so
# that every rule is checked on its own.  Part 2 uses real `kist sandbox`
# runs (skipped while the binary has no sandbox command).
. "$(dirname "$0")/lib.sh"

HELPERS=()
test_cleanup ()
{
  local p
  for p in "${HELPERS[@]}"; do
    kill -CONT "$p" 2> /dev/null
    kill -KILL "$p" 2> /dev/null
  done
  rm -rf --one-file-system "$ROOT/~sandbox" 2> /dev/null
}

# start_time PID: /proc/PID/stat field 22.
start_time ()
{
  awk '{ sub(/^.*\) /, ""); print $20 }' "/proc/$1/stat" 2> /dev/null
}

# helper: a background sleep carrying the leftover marker; sets HPID.
helper ()
{
  env KIST_IT_MARK="$MARK" sleep 300 < /dev/null > /dev/null 2>&1 &
  HPID=$!
  HELPERS+=("$HPID")
}

# dead_pid: the pid and start time of a process that has exited (reaped).
dead_pid ()
{
  sleep 0 &
  DPID=$!
  DSTART=$(start_time "$DPID")
  wait "$DPID"
  DSTART=${DSTART:-1}
}

# fake_state ID INIT_PID INIT_START DEADLINE KIST_PID KIST_START: a state entry
# as kist create writes it, plus ROOT/~sandbox/ID with an empty root.
fake_state ()
{
  local id=$1
  IDS+=("$id")
  mkdir -m 0700 "$ROOT/$id"
  cat > "$ROOT/$id/state.json" <<EOF
{"kistStateVersion": 1, "id": "$id", "ociVersion": "1.2.0", "bundle": "$ROOT/~sandbox/$id",
 "rootfs": "$ROOT/~sandbox/$id/rootfs", "pid": $2, "pidStartTime": $3, "started": true,
 "created": "2026-01-01T00:00:00Z", "owner": "0", "deadline": $4, "kistPid": $5,
 "kistPidStartTime": $6}
EOF
  mkdir -p -m 0700 "$ROOT/~sandbox"
  mkdir -p "$ROOT/~sandbox/$id/rootfs/usr" "$ROOT/~sandbox/$id/rootfs/work" \
    "$ROOT/~sandbox/$id/rootfs/a/b/c"
  ln -s usr/bin "$ROOT/~sandbox/$id/rootfs/bin"
  : > "$ROOT/~sandbox/$id/rootfs/a/b/c/file"
  # A symlink out of the sandbox dir: gc must unlink it, never follow it.
  ln -s "$VICTIM" "$ROOT/~sandbox/$id/rootfs/escape"
}

exists () { [ -e "$1" ] || [ -L "$1" ]; }

VICTIM=$T/victim
mkdir -p "$VICTIM/sub"
echo keep > "$VICTIM/sub/file"

NOW=$(date +%s)

# ---- Part 1: hand-written state ------------------------------------------------

# A: the owning kist is gone (the init still runs).
helper; A_INIT=$HPID
dead_pid
A=$PREFIX-deadowner
fake_state "$A" "$A_INIT" "$(start_time "$A_INIT")" $((NOW + 300)) "$DPID" "$DSTART"
# B: the kist pid was reused by another process (start time differs).
helper; B_INIT=$HPID
helper; B_KIST=$HPID
B=$PREFIX-reused
fake_state "$B" "$B_INIT" "$(start_time "$B_INIT")" $((NOW + 300)) "$B_KIST" \
  $(( $(start_time "$B_KIST") + 1 ))
# C: the deadline passed, the owning kist is alive (stuck).
helper; C_INIT=$HPID
helper; C_KIST=$HPID
C=$PREFIX-expired
fake_state "$C" "$C_INIT" "$(start_time "$C_INIT")" $((NOW - 5)) "$C_KIST" "$(start_time "$C_KIST")"
# D: a live sandbox within its deadline with a live kist: never touched.
helper; D_INIT=$HPID
helper; D_KIST=$HPID
D=$PREFIX-live
fake_state "$D" "$D_INIT" "$(start_time "$D_INIT")" $((NOW + 300)) "$D_KIST" "$(start_time "$D_KIST")"
# E: an ordinary container (kist create / run --detach): no deadline, no
# owner, even though its init is gone.
dead_pid
E=$PREFIX-ordinary
fake_state "$E" "$DPID" "$DSTART" 0 0 0
# F: a stopped sandbox with a dead owner and no sandbox dir (state only).
dead_pid
F=$PREFIX-stopped
fake_state "$F" "$DPID" "$DSTART" $((NOW + 300)) "$DPID" "$DSTART"
rm -rf "$ROOT/~sandbox/$F"

kc dry gc --dry-run
expect_eq "dry run: exit 0" 0 "$RC"
expect_match "dry run: lists the dead owner" "$OUT" "^would remove $A: its kist process [0-9]+ is gone"
expect_contains "dry run: lists the reused kist pid" "$OUT" "would remove $B:"
expect_match "dry run: lists the expired one" "$OUT" "^would remove $C: its deadline passed"
expect_contains "dry run: lists the stopped one" "$OUT" "would remove $F:"
expect_not_contains "dry run: not the live sandbox" "$OUT" "$D"
expect_not_contains "dry run: not the ordinary container" "$OUT" "$E"
expect_true "dry run: removes nothing" test -d "$ROOT/$A" -a -d "$ROOT/$B" -a -d "$ROOT/$C" \
  -a -d "$ROOT/$F" -a -d "$ROOT/~sandbox/$A"
expect_true "dry run: kills nothing" pid_alive "$A_INIT"

kc dryjson gc --dry-run --format json
expect_eq "dry run json: exit 0" 0 "$RC"
expect_eq "dry run json: four entries" \
  "$(printf '%s\n' "$A" "$B" "$C" "$F" | sort | tr '\n' ' ')" \
  "$(jflat < "$T/dryjson.out" | awk -F'\t' '$1 ~ /^\[[0-9]+\]\.id$/ { print $2 }' | sort | tr '\n' ' ')"
expect_eq "dry run json: action" would-remove "$(jget "$T/dryjson.out" '[0].action')"

kc gc gc
expect_eq "gc: exit 0" 0 "$RC"
expect_eq "gc: text line for the dead owner" \
  "removed $A: processes killed, state removed, scratch removed" \
  "$(grep "^removed $A:" <<< "$OUT")"
expect_eq "gc: text line for the stopped one (nothing to kill, no scratch)" \
  "removed $F: state removed" "$(grep "^removed $F:" <<< "$OUT")"
expect_contains "gc: removed the reused-pid one" "$OUT" "removed $B: processes killed"
expect_contains "gc: removed the expired one" "$OUT" "removed $C: processes killed"
for id in "$A" "$B" "$C" "$F"; do
  expect_true "gc: state of ${id#"$PREFIX"-} gone" bash -c "! test -e '$ROOT/$id'"
  expect_true "gc: sandbox dir of ${id#"$PREFIX"-} gone" bash -c "! test -e '$ROOT/~sandbox/$id'"
done
expect_true "gc: init of the dead-owner sandbox killed" wait_gone "$A_INIT" 5
expect_true "gc: init of the reused-pid sandbox killed" wait_gone "$B_INIT" 5
expect_true "gc: init of the expired sandbox killed" wait_gone "$C_INIT" 5
expect_true "gc: the stuck kist itself is not killed" pid_alive "$C_KIST"
expect_true "gc: the live sandbox is left alone" test -d "$ROOT/$D" -a -d "$ROOT/~sandbox/$D"
expect_true "gc: the live sandbox's init still runs" pid_alive "$D_INIT"
expect_true "gc: the ordinary container is left alone" test -f "$ROOT/$E/state.json"
expect_true "gc: a symlink out of the sandbox was not followed" test -f "$VICTIM/sub/file"

kc again gc
expect_eq "gc again: exit 0 and nothing to do" "0:" "$RC:$OUT"

# The live one becomes garbage when its kist dies; json output.
kill -KILL "$D_KIST"
wait "$D_KIST" 2> /dev/null
kc json gc --format json
expect_eq "gc json: exit 0" 0 "$RC"
expect_eq "gc json: id" "$D" "$(jget "$T/json.out" '[0].id')"
expect_eq "gc json: action" removed "$(jget "$T/json.out" '[0].action')"
expect_eq "gc json: processes killed" true "$(jget "$T/json.out" '[0].processesKilled')"
expect_eq "gc json: state removed" true "$(jget "$T/json.out" '[0].stateRemoved')"
expect_eq "gc json: scratch removed" true "$(jget "$T/json.out" '[0].scratchRemoved')"
expect_eq "gc json: no cgroup to remove" false "$(jget "$T/json.out" '[0].cgroupRemoved')"
expect_eq "gc json: one entry" "" "$(jget "$T/json.out" '[1].id')"
expect_true "gc json: init killed" wait_gone "$D_INIT" 5

# A busy entry (another command holds its lock) is skipped, not waited for.
dead_pid
G=$PREFIX-busy
fake_state "$G" "$DPID" "$DSTART" $((NOW + 300)) "$DPID" "$DSTART"
flock "$ROOT/$G" sleep 3 &
LOCKER=$!
HELPERS+=("$LOCKER")
sleep 0.3
kc busy gc
expect_eq "gc busy: exit 0" 0 "$RC"
expect_contains "gc busy: says it skipped" "$OUT" "skipped $G:"
expect_true "gc busy: state kept" test -d "$ROOT/$G"
wait "$LOCKER"

# A mount inside the sandbox dir: refused, exit 1, the error names it; after
# unmounting, gc finishes the job.  (We are in the test's own mount namespace.)
mount -t tmpfs -o size=1m kistgc "$ROOT/~sandbox/$G/rootfs/usr"
kc mnt gc
expect_eq "gc across a mount: exit 1" 1 "$RC"
expect_contains "gc across a mount: says so" "$ERR" "mount point"
expect_contains "gc across a mount: names the path" "$ERR" "$ROOT/~sandbox/$G/rootfs/usr"
expect_contains "gc across a mount: line on stdout" "$OUT" "failed to remove $G: state removed before the error"
umount "$ROOT/~sandbox/$G/rootfs/usr"
kc mnt2 gc
expect_eq "gc after umount: nothing left to do (state already gone)" "0:" "$RC:$OUT"
expect_true "gc after umount: the sandbox dir is still there" test -d "$ROOT/~sandbox/$G"
rm -rf --one-file-system "$ROOT/~sandbox/$G"

kc badfmt gc --format yaml
expect_eq "gc --format yaml: usage error" 1 "$RC"
kc badarg gc someid
expect_eq "gc ID: usage error" 1 "$RC"

# The ordinary entry was fake: remove it by hand (its init never existed).
rm -rf "$ROOT/$E" "$ROOT/~sandbox/$E"
rmdir "$ROOT/~sandbox" 2> /dev/null
kill -KILL "$C_KIST" "$B_KIST" 2> /dev/null
nothing_left "hand-written state"

# ---- Part 2: real sandboxes ----------------------------------------------------

if ! grep -qE '^  sandbox ' <<< "$("$KIST" --help 2>&1)"; then
  skip "gc of real sandboxes" "this kist has no sandbox command yet"
  exit 0
fi

# sandbox_id KIST_PID: the id of the sandbox that kist process owns.
sandbox_id ()
{
  local d i
  for ((i = 0; i < 100; i++)); do
    for d in "$ROOT"/*/; do
      d=${d%/}
      [ -f "$d/state.json" ] || continue
      if [ "$(jget "$d/state.json" kistPid)" = "$1" ]; then
        jget "$d/state.json" id
        return 0
      fi
    done
    sleep 0.05
  done
  return 1
}

sandbox_bg ()
{
  "$KIST" --root "$ROOT" sandbox --ro /usr --setenv KIST_IT_MARK="$MARK" --allow-degraded all "$@" \
    < /dev/null > /dev/null 2>> "$T/sandbox.err" &
  SPID=$!
  HELPERS+=("$SPID")
}

# kill -9 of the kist process: the sandbox dies with it, gc removes the rest.
sandbox_bg --timeout 30 -- /bin/sleep 30
K1=$SPID
S1=$(sandbox_id "$K1")
expect_ne "sandbox 1 has a state entry" "" "$S1"
sandbox_bg --timeout 30 -- /bin/sleep 30
K2=$SPID
S2=$(sandbox_id "$K2")
expect_ne "sandbox 2 has a state entry" "" "$S2"
I2=$(jget "$ROOT/$S2/state.json" pid)

kill -KILL "$K1"
wait "$K1" 2> /dev/null
kc real1 gc
expect_eq "real gc: exit 0" 0 "$RC"
expect_match "real gc: removed the sandbox of the killed kist" "$OUT" "^removed $S1: .*state removed"
expect_true "real gc: its state is gone" bash -c "! test -e '$ROOT/$S1'"
expect_true "real gc: its sandbox dir is gone" bash -c "! test -e '$ROOT/~sandbox/$S1'"
expect_not_contains "real gc: the concurrent live sandbox is not listed" "$OUT" "$S2"
expect_true "real gc: the live sandbox keeps its state" test -f "$ROOT/$S2/state.json"
expect_true "real gc: the live sandbox still runs" pid_alive "$I2"

# A sandbox past its deadline whose kist cannot enforce it (stopped).
sandbox_bg --timeout 1 -- /bin/sleep 30
K3=$SPID
S3=$(sandbox_id "$K3")
expect_ne "sandbox 3 has a state entry" "" "$S3"
I3=$(jget "$ROOT/$S3/state.json" pid)
kill -STOP "$K3"
sleep 2.2
kc real2 gc
expect_eq "real gc (deadline): exit 0" 0 "$RC"
expect_match "real gc (deadline): removed" "$OUT" "^removed $S3: processes killed"
expect_true "real gc (deadline): its init is gone" wait_gone "$I3" 5
expect_true "real gc (deadline): its state is gone" bash -c "! test -e '$ROOT/$S3'"
expect_not_contains "real gc (deadline): the live one again untouched" "$OUT" "$S2"
kill -CONT "$K3"
kill -KILL "$K3" 2> /dev/null
wait "$K3" 2> /dev/null

# An ordinary `kist run --detach` container is never touched.
sh_args "sleep 30"
B=$(mkbundle ord)
O=$(new_id ord)
kc run run --detach --bundle "$B" "$O"
expect_eq "run --detach: exit 0" 0 "$RC"
kc real3 gc
expect_not_contains "real gc: the detached container is not touched" "$OUT" "$O"
expect_eq "real gc: the detached container still runs" running "$(state_field "$O" status)"
kc del delete --force "$O"

kill -KILL "$K2"
wait "$K2" 2> /dev/null
kc real4 gc
expect_match "real gc: removed the second sandbox after its kist died" "$OUT" "^removed $S2:"
expect_true "real gc: its init is gone" wait_gone "$I2" 5
rmdir "$ROOT/~sandbox" 2> /dev/null
nothing_left "real sandboxes"
