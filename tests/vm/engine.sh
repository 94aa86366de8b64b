# tests/vm/engine.sh: limits through an engine on a pure cgroup v2 host.
# Sourced by tests/vm/tests.sh inside the test VM (busybox sh, as root); uses
# its helpers (ok, fail, check, has, wait_for, dead, layer, now) and $KIST,
# $CG, $W.
#
# containerd 1.6 (no CRI plugin, the native snapshotter, all state under $W
# and /run/containerd) with its runc shim, driven by ctr with --runc-binary
# pointing at a wrapper that logs argv and execs kist.  run.sh puts the
# binaries in /usr/bin, a docker-archive of the container rootfs at
# /engine/image.tar and ctr's default spec with pids.limit 20 at
# /engine/pids-spec.json (ctr has no pids flag; `ctr run --config FILE`
# starts from that spec), or the reason they are missing in /engine/missing.
#   ct-oom   ctr run --rm --memory-limit 32 MiB alloc 64: ctr exits 137
#   ct-mem   ctr run -d --memory-limit 32 MiB; kist report read back through
#            the shim's runc root; ctr task exec alloc 64 is OOM-killed
#            (137, memory.events oom_kill); the init survives
#   ct-pids  ctr run -d --config (the whole spec from a file, pids.limit 20,
#            root /rootfs): a loop of 200 sleeps stops at the limit
#            (pids.current, pids.events max), report read back
# Afterwards containerd is stopped (by pid) and nothing of it may be left: no
# shim, no cgroup under /sys/fs/cgroup/default, no state in kist's root.

EW=$W/engine
ESOCK=/run/containerd/containerd.sock
# The shim runs its runtime with --root /run/containerd/runc/<namespace>.
EROOT=/run/containerd/runc/default
ECG=$CG/default
EIMG=localhost/kistvm:latest
MIB32=33554432
export CONTAINERD_SNAPSHOTTER=native

# c ARGS...: ctr on the test's containerd, killed after 60 s.
c ()
{
  timeout -s KILL 60 ctr --address "$ESOCK" "$@"
}

# kr ARGS...: kist with the shim's root.
kr ()
{
  timeout -s KILL 30 "$KIST" --root "$EROOT" "$@"
}

# eng_diag ID: what the runtime saw, for a failure's context (a few lines).
eng_diag ()
{
  echo "   kist-runc calls: $(grep -c . "$EW/kist-runc.log" 2> /dev/null); last: $(tail -n 1 "$EW/kist-runc.log" 2> /dev/null | cut -c 1-200)"
  echo "   kist log: $(tail -n 2 /run/containerd/io.containerd.runtime.v2.task/default/"$1"/log.json 2> /dev/null | cut -c 1-300)"
  echo "   containerd: $(grep -iE 'level=(error|fatal)' "$EW/containerd.log" 2> /dev/null | tail -n 2 | cut -c 1-300)"
}

# eng_layer NAME REPORT LAYER DETAIL: the report lists LAYER applied with
# exactly DETAIL (check_layer matches a substring: "read back 20" is also in
# "read back 200").
eng_layer ()
{
  obj=$(layer "$2" "$3")
  detail=$(printf '%s' "$obj" | sed -n 's/.*"detail" *: *"\([^"]*\)".*/\1/p')
  want=$4
  check "$1" "layer $3 applied with detail '$want' expected, the report $(basename "$2") has: ${obj:-$(head -c 200 "$2" 2> /dev/null)}" \
    'printf "%s" "$obj" | grep -q "\"applied\" *: *true" && [ "$detail" = "$want" ]'
}

# task_status ID: RUNNING, STOPPED, ... or empty.
task_status ()
{
  c task ls 2> /dev/null | awk -v id="$1" '$1 == id { print $3 }'
}

# eng_remove ID: kill the task, delete it and the container; the container's
# cgroup and kist's state must be gone.
eng_remove ()
{
  if [ -n "$(task_status "$1")" ]; then
    c task kill -s SIGKILL "$1" > /dev/null 2>&1
    wait_for 20 [ "$(task_status "$1")" = STOPPED ]
    c task rm "$1" > "$EW/rm-$1.log" 2>&1
  fi
  out=$(c container rm "$1" 2>&1)
  rc=$?
  if [ "$rc" != 0 ]; then
    fail "$1-remove" "ctr container rm exited $rc: $out $(cat "$EW/rm-$1.log" 2> /dev/null)"
  elif [ -d "$ECG/$1" ]; then
    fail "$1-remove" "$ECG/$1 still exists after ctr task rm + container rm"
  elif kr state "$1" > /dev/null 2>&1; then
    fail "$1-remove" "kist --root $EROOT still knows $1 after ctr task rm"
  else
    ok "$1-remove"
  fi
}

eng_tests ()
{
  mkdir -p "$EW/root" "$EW/out-mem" "$EW/out-pids"
  cat > "$EW/kist-runc" << EOF
#!/bin/sh
echo "\$*" >> $EW/kist-runc.log
exec $KIST "\$@"
EOF
  chmod 0755 "$EW/kist-runc"
  cat > "$EW/config.toml" << EOF
version = 2
root = "$EW/root"
state = "/run/containerd"
disabled_plugins = [ "io.containerd.grpc.v1.cri", "io.containerd.snapshotter.v1.aufs",
  "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.devmapper",
  "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.overlayfs",
  "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing" ]
[grpc]
  address = "$ESOCK"
[ttrpc]
  address = "$ESOCK.ttrpc"
EOF

  t0=$(now)
  containerd --config "$EW/config.toml" > "$EW/containerd.log" 2>&1 &
  CTRD_PID=$!
  if ! wait_for 60 c version > /dev/null 2>&1; then
    fail eng-containerd "containerd (pid $CTRD_PID) did not answer on $ESOCK within 60 s: $(tail -n 3 "$EW/containerd.log")"
    return 1
  fi
  ok eng-containerd
  echo "   engine: containerd $(c version 2> /dev/null | awk '/Version:/ { print $2; exit }') answered after $(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }') s"

  out=$(c images import /engine/image.tar 2>&1)
  rc=$?
  check eng-import "ctr images import exited $rc: $out" '[ "$rc" = 0 ] && c images ls -q 2> /dev/null | grep -qx "$EIMG"'
  [ "$rc" = 0 ] || return 1
  ERUNC="--runc-binary $EW/kist-runc"

  # ---- ct-oom: the container's init is OOM-killed; ctr shows 137 ----------------------
  id=ct-oom
  t0=$(now)
  out=$(c run --rm $ERUNC --memory-limit $MIB32 "$EIMG" $id /bin/alloc 64 2>&1 < /dev/null)
  rc=$?
  secs=$(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }')
  check $id-exit "ctr run --rm --memory-limit $MIB32 ... alloc 64 exited $rc after $secs s (137 expected): $(printf '%s' "$out" | tail -n 2)" \
    '[ "$rc" = 137 ] && has "$out" "alloc: 8 MiB" && ! has "$out" "touched"'
  [ "$rc" = 137 ] || eng_diag $id
  check $id-kist "kist was not called with the shim's root for $id: $(grep " $id\$" "$EW/kist-runc.log" | head -n 2)" \
    'grep -q -- "--root $EROOT .*create .*--bundle .* $id\$" "$EW/kist-runc.log"'
  check $id-gone "after ctr run --rm: cgroup $ECG/$id exists: $([ -d "$ECG/$id" ] && echo yes); kist state: $(kr state $id 2>&1 | head -c 100)" \
    '[ ! -d "$ECG/$id" ] && ! kr state $id > /dev/null 2>&1'
  c container rm $id > /dev/null 2>&1

  # ---- ct-mem: report read back, an exec'd allocation is OOM-killed ---------------------
  id=ct-mem
  out=$(c run -d $ERUNC --memory-limit $MIB32 "$EIMG" $id sleep 600 2>&1 < /dev/null)
  rc=$?
  if [ "$rc" != 0 ]; then
    fail $id-run "ctr run -d exited $rc: $out"
    eng_diag $id
  else
    wait_for 20 [ "$(task_status $id)" = RUNNING ]
    kr report $id > "$EW/r-$id.json" 2>&1
    eng_layer $id-report "$EW/r-$id.json" cgroup.memory.max "read back $MIB32"
    scope=$(layer "$EW/r-$id.json" cgroup | sed -n 's/.*"detail" *: *"[^"]*scope \(\/[^ "]*\).*/\1/p')
    mmax=$(cat "$ECG/$id/memory.max" 2> /dev/null)
    check $id-cgroup "report's scope '$scope', $ECG/$id/memory.max '$mmax'" \
      '[ "$scope" = "$ECG/$id" ] && [ "$mmax" = $MIB32 ]'
    out=$(c task exec --exec-id oom $id /bin/alloc 64 2>&1 < /dev/null)
    rc=$?
    ook=$(awk '$1 == "oom_kill" { print $2 }' "$ECG/$id/memory.events" 2> /dev/null)
    check $id-oom "ctr task exec alloc 64 exited $rc (137 expected), memory.events oom_kill '$ook': $(printf '%s' "$out" | tail -n 2)" \
      '[ "$rc" = 137 ] && [ "${ook:-0}" -ge 1 ]'
    st=$(task_status $id)
    check $id-alive "the init's task is '$st' after the exec's OOM kill (RUNNING expected)" '[ "$st" = RUNNING ]'
    eng_remove $id
  fi

  # ---- ct-pids: pids.limit 20 from the spec holds against 200 sleeps --------------------
  id=ct-pids
  sed "s#@OUT@#$EW/out-pids#" /engine/pids-spec.json > "$EW/pids-spec.json"
  echo '(i=0; while [ $i -lt 200 ]; do sleep 600 & i=$((i+1)); echo $i > /out/n; done) 2> /dev/null
echo done > /out/done
exec sleep 600' > "$EW/out-pids/bomb.sh"
  out=$(c run -d $ERUNC --config "$EW/pids-spec.json" $id 2>&1 < /dev/null)
  rc=$?
  if [ "$rc" != 0 ]; then
    fail $id-run "ctr run -d --config exited $rc: $out"
    eng_diag $id
  else
    kr report $id > "$EW/r-$id.json" 2>&1
    eng_layer $id-report "$EW/r-$id.json" cgroup.pids.max "read back 20"
    wait_for 30 [ -s "$EW/out-pids/done" ]
    n=$(cat "$EW/out-pids/n" 2> /dev/null)
    pmax=$(cat "$ECG/$id/pids.max" 2> /dev/null)
    cur=$(cat "$ECG/$id/pids.current" 2> /dev/null)
    evmax=$(awk '$1 == "max" { print $2 }' "$ECG/$id/pids.events" 2> /dev/null)
    check $id-bomb "${n:-0} of 200 sleeps started; $ECG/$id: pids.max '$pmax', pids.current '$cur', pids.events max '$evmax'" \
      '[ -s "$EW/out-pids/done" ] && [ "$pmax" = 20 ] && [ -n "$n" ] && [ "$n" -lt 20 ] && [ "${cur:-99}" -le 20 ] && [ "${evmax:-0}" -ge 1 ]'
    echo "   engine pids: $n sleeps started, pids.current $cur, pids.events max $evmax"
    eng_remove $id
  fi
}

if [ -e /engine/missing ]; then
  fail engine "containerd cannot run in the VM: $(cat /engine/missing)"
else
  CTRD_PID=
  eng_t0=$(now)
  eng_tests
  if [ -n "$CTRD_PID" ]; then
    kill "$CTRD_PID" 2> /dev/null
    wait_for 20 dead "$CTRD_PID" || kill -9 "$CTRD_PID" 2> /dev/null
    wait "$CTRD_PID" 2> /dev/null
    shims=$(ps -o pid,args 2> /dev/null | grep '[c]ontainerd-shim' | tr '\n' ' ')
    left=$(cd "$ECG" 2> /dev/null && find . -mindepth 1 -type d | tr '\n' ' ')
    # (kist's own caches stay, as in every state root: the seccomp filters, the
    # note of the last device program)
    state=$(ls "$EROOT" 2> /dev/null | grep -vx -e '~seccomp-cache' -e '~device-program' | tr '\n' ' ')
    check eng-leftovers "left after containerd stopped: shims '$shims', cgroups under $ECG '$left', kist state in $EROOT '$state'" \
      '[ -z "$shims$left$state" ]'
    rmdir "$ECG" 2> /dev/null
  fi
  echo "   engine: $(awk -v a="$eng_t0" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }') s"
fi
