#!/bin/sh
# tests/vm/tests.sh KIST ROOTFS: kist's cgroup v2 limit tests, run inside the
# test VM (busybox sh, as root, cgroup2 at /sys/fs/cgroup with +cpu +memory
# +pids +io enabled at the root).  ROOTFS is a read-only busybox rootfs with
# /bin/alloc (tests/vm/alloc.c) and an empty /out.
#
# Each check prints "ok NAME" or "FAIL NAME: why"; the script ends with
# "N passed, N failed" and exits 1 if anything failed.  Every wait is bounded.
# Containers use linux.cgroupsPath /kistvm/<id> (absolute: relative to the
# cgroup2 root), except the one that tests the default scope.
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
export LC_ALL=C

KIST=${1:-/bin/kist}
ROOTFS=${2:-/rootfs}
CG=/sys/fs/cgroup
PARENT=kistvm
W=$(mktemp -d /tmp/kistvm.XXXXXX) || exit 1
STATE=$W/state
mkdir -p "$STATE"
PASS=0
FAIL=0
IDS=""

ok ()
{
  PASS=$((PASS + 1))
  echo "ok $1"
}

# fail NAME WHY: WHY is cut to one short line (the console is slow).
fail ()
{
  FAIL=$((FAIL + 1))
  echo "FAIL $1: $(printf '%s' "$2" | tr '\n' ' ' | cut -c 1-400)"
}

# check NAME WHY COND: ok if the shell condition COND (eval'd) holds, else
# fail with WHY.
check ()
{
  if eval "$3"; then ok "$1"; else fail "$1" "$2"; fi
}

# has STRING PATTERN: STRING matches the grep -E PATTERN.
has ()
{
  printf '%s' "$1" | grep -qE "$2"
}

# k ARGS...: kist with this test's state root, killed after 30 s.
k ()
{
  timeout -s KILL 30 "$KIST" --root "$STATE" "$@"
}

now ()
{
  cut -d ' ' -f 1 /proc/uptime
}

# wait_for SECONDS CMD...: poll CMD every 0.1 s until it succeeds.
wait_for ()
{
  n=$(($1 * 10))
  shift
  while [ "$n" -gt 0 ]; do
    "$@" && return 0
    usleep 100000
    n=$((n - 1))
  done
  return 1
}

# cgval ID FILE [KEY]: a cgroup file of the container's scope; with KEY, the
# value of the "KEY VALUE" line (memory.events, cpu.stat, pids.events ...).
cgval ()
{
  if [ -n "${3:-}" ]; then
    awk -v k="$3" '$1 == k { print $2; exit }' "$CG/$PARENT/$1/$2" 2> /dev/null
  else
    cat "$CG/$PARENT/$1/$2" 2> /dev/null
  fi
}

# mkbundle ID ARGS_JSON [RESOURCES_JSON] [LINUX_EXTRA_JSON]: bundle $W/b-ID
# whose container writes to $W/out-ID through /out.  CGPATH (if set, even
# empty) replaces linux.cgroupsPath /kistvm/ID; empty means none.
mkbundle ()
{
  b=$W/b-$1
  mkdir -p "$b" "$W/out-$1"
  cgp=${CGPATH-/$PARENT/$1}
  cat > "$b/config.json" << EOF
{
  "ociVersion": "1.2.0",
  "process": {
    "terminal": false,
    "user": { "uid": 0, "gid": 0 },
    "args": $2,
    "env": [ "PATH=/bin:/sbin:/usr/bin:/usr/sbin" ],
    "cwd": "/",
    "capabilities": {
      "bounding": [ "CAP_KILL" ], "effective": [ "CAP_KILL" ], "permitted": [ "CAP_KILL" ]
    },
    "noNewPrivileges": true
  },
  "root": { "path": "$ROOTFS", "readonly": true },
  "hostname": "kistvm",
  "mounts": [
    { "destination": "/proc", "type": "proc", "source": "proc" },
    { "destination": "/dev", "type": "tmpfs", "source": "tmpfs",
      "options": [ "nosuid", "mode=755", "size=1024k" ] },
    { "destination": "/tmp", "type": "tmpfs", "source": "tmpfs",
      "options": [ "nosuid", "nodev", "mode=1777", "size=16m" ] },
    { "destination": "/out", "type": "bind", "source": "$W/out-$1", "options": [ "rbind", "rw" ] }
  ],
  "linux": {
    ${cgp:+\"cgroupsPath\": \"$cgp\",}
    ${3:+\"resources\": $3,}
    ${4:+$4,}
    "namespaces": [
      { "type": "pid" }, { "type": "mount" }, { "type": "ipc" }, { "type": "uts" }, { "type": "cgroup" }
    ]
  }
}
EOF
  IDS="$IDS $1"
}

# start ID: `kist run --detach` the bundle of ID, report in $W/r-ID.json,
# container output in $W/log-ID.  Fails NAME-start on error.
start ()
{
  k run -d --report "$W/r-$1.json" -b "$W/b-$1" "$1" > "$W/log-$1" 2>&1 < /dev/null
  rc=$?
  if [ "$rc" != 0 ]; then
    fail "$1-start" "kist run -d exited $rc: $(tail -c 300 "$W/log-$1")"
    return 1
  fi
  return 0
}

# layer FILE LAYER: the layer's JSON object from a report, on one line.
layer ()
{
  tr '\n\t' '  ' < "$1" 2> /dev/null | awk -v l="\"$2\"" 'BEGIN { RS = "}" }
    { i = index($0, "\"layer\""); if (i == 0) next; s = substr($0, i)
      if (s ~ ("^\"layer\" *: *" l)) { gsub(/  +/, " ", s); print s; exit } }'
}

# check_layer NAME REPORT LAYER VALUE: the report lists LAYER applied, with
# VALUE (the read-back value) in its detail.
check_layer ()
{
  obj=$(layer "$2" "$3")
  detail=$(printf '%s' "$obj" | sed -n 's/.*"detail" *: *"\([^"]*\)".*/\1/p')
  if [ -z "$obj" ]; then
    fail "$1" "layer $3 not in the report $(basename "$2"): $(tr '\n' ' ' < "$2" 2> /dev/null | cut -c 1-200)"
  elif ! printf '%s' "$obj" | grep -q '"applied" *: *true'; then
    fail "$1" "layer $3 not applied: $obj"
  elif ! printf '%s' "$detail" | grep -qF "$4"; then
    fail "$1" "layer $3 does not show the read-back value $4 in its detail: $obj"
  else
    ok "$1"
  fi
}

# dead PID: the process is gone or a zombie.
dead ()
{
  ! kill -0 "$1" 2> /dev/null || grep -q '^State:.*Z' "/proc/$1/status" 2> /dev/null
}

# pid_of ID: the container's init pid (kist state).
pid_of ()
{
  k state "$1" 2> /dev/null | tr -d ' \n' | sed -n 's/.*"pid":\([0-9]*\).*/\1/p'
}

# finish ID: delete --force; the scope must be gone.
finish ()
{
  out=$(k delete --force "$1" 2>&1)
  rc=$?
  if [ "$rc" != 0 ]; then
    fail "$1-delete" "kist delete --force exited $rc: $out"
  elif [ -d "$CG/$PARENT/$1" ]; then
    fail "$1-delete" "$CG/$PARENT/$1 still exists after kist delete"
  else
    ok "$1-delete"
  fi
}

echo "tests: kist $("$KIST" --version 2>&1 | head -n 1)"

# ---- smoke: the binary runs and `kist run` works in the VM --------------------------
out=$("$KIST" --version 2>&1)
check version "kist --version: $out" '[ -n "$out" ]'

# No linux.cgroupsPath nor resources: this works without the cgroup layer.
CGPATH='' mkbundle smoke '["echo", "hello from the vm"]'
out=$(k run --report "$W/r-smoke.json" -b "$W/b-smoke" smoke 2>&1 < /dev/null)
rc=$?
check smoke-run "kist run exited $rc: $out" '[ "$rc" = 0 ] && [ "$(printf "%s" "$out" | tail -n 1)" = "hello from the vm" ]'
left=$(find "$CG" -type d -name smoke | head -n 3 | tr '\n' ' ')
check smoke-gone "cgroups left behind after kist run: $left" '[ -z "$left" ]'

# ---- memory.max: 32 MiB OOM-kills a 64 MiB allocation ---------------------------------
id=mem
mkbundle $id '["sh", "-c", "sleep 2; /bin/alloc 64 > /out/alloc.log 2>&1; echo $? > /out/alloc; exec sleep 600"]' \
  '{ "memory": { "limit": 33554432 } }'
if start $id; then
  "$KIST" --root "$STATE" events --interval 1s $id > "$W/events-$id" 2>&1 &
  evpid=$!
  check_layer $id-report "$W/r-$id.json" cgroup.memory.max 33554432
  check $id-readback "memory.max is '$(cgval $id memory.max)'" '[ "$(cgval $id memory.max)" = 33554432 ]'
  wait_for 60 [ -s "$W/out-$id/alloc" ]
  st=$(cat "$W/out-$id/alloc" 2> /dev/null)
  check $id-oom "alloc 64 exited '$st' (137 = SIGKILL expected): $(tail -n 2 "$W/out-$id/alloc.log")" '[ "$st" = 137 ]'
  n=$(cgval $id memory.events oom_kill)
  check $id-oom-kill "memory.events oom_kill is '$n'" '[ "${n:-0}" -ge 1 ]'
  out=$(k events --stats $id 2>&1)
  check $id-events-stats "kist events --stats: $out" \
    'has "$out" "\"type\" *: *\"stats\"" && has "$out" "\"memory\""'
  wait_for 3 grep -q '"oom"' "$W/events-$id"
  kill "$evpid" 2> /dev/null
  wait "$evpid" 2> /dev/null
  check $id-events-oom "kist events printed no oom event: $(head -c 300 "$W/events-$id")" 'grep -q "\"oom\"" "$W/events-$id"'
  finish $id
fi

# ---- pids.max: a fork bomb stops at the limit -----------------------------------------
id=pids
mkbundle $id '["sh", "-c", "(i=0; while [ $i -lt 200 ]; do sleep 600 & i=$((i+1)); echo $i > /out/n; done); echo done > /out/done; exec sleep 600"]' \
  '{ "pids": { "limit": 20 } }'
if start $id; then
  check_layer $id-report "$W/r-$id.json" cgroup.pids.max 20
  check $id-readback "pids.max is '$(cgval $id pids.max)'" '[ "$(cgval $id pids.max)" = 20 ]'
  wait_for 30 [ -s "$W/out-$id/done" ]
  n=$(cat "$W/out-$id/n" 2> /dev/null)
  cur=$(cgval $id pids.current)
  procs=$(wc -l < "$CG/$PARENT/$id/cgroup.procs" 2> /dev/null)
  max=$(cgval $id pids.events max)
  check $id-bomb "the loop spawned ${n:-0} of 200 sleeps; pids.current $cur, cgroup.procs $procs (limit 20)" \
    '[ -n "$n" ] && [ "$n" -lt 200 ] && [ "${cur:-99}" -le 20 ] && [ "${procs:-99}" -le 20 ] && [ "${procs:-0}" -ge 15 ]'
  check $id-events "pids.events max is '$max'" '[ "${max:-0}" -ge 1 ]'
  echo "   pids: $n sleeps started, pids.current $cur, pids.events max $max"
  finish $id
fi

# ---- cpu.max: a busy loop with quota 10000/100000 is throttled ------------------------
id=cpu
mkbundle $id '["sh", "-c", "while :; do :; done"]' '{ "cpu": { "quota": 10000, "period": 100000 } }'
if start $id; then
  t0=$(now)
  check_layer $id-report "$W/r-$id.json" cgroup.cpu.max "10000 100000"
  check $id-readback "cpu.max is '$(cgval $id cpu.max)'" '[ "$(cgval $id cpu.max)" = "10000 100000" ]'
  sleep 3
  thr=$(cgval $id cpu.stat nr_throttled)
  use=$(cgval $id cpu.stat usage_usec)
  t1=$(now)
  # usage over wall time, in percent; the quota is 10%.
  pct=$(awk -v u="${use:-0}" -v a="$t0" -v b="$t1" 'BEGIN { printf "%d", u / ((b - a) * 1e6) * 100 }')
  check $id-throttled "cpu.stat nr_throttled is '$thr'" '[ "${thr:-0}" -ge 1 ]'
  # Unthrottled, the loop would use about 100%; TCG timers are imprecise.
  check $id-usage "the busy loop used $pct% of one CPU (quota 10%)" '[ "$pct" -le 50 ]'
  echo "   cpu: nr_throttled $thr, usage ${pct}% of one CPU over $t0..$t1 s"
  finish $id
fi

# ---- io.max: writes to a brd device run at the wbps limit -----------------------------
id=io
if [ ! -e /sys/block/ram0 ]; then
  while read -r m; do
    [ "$m" = brd ] && insmod /lib/modules/brd.ko rd_nr=1 rd_size=65536 || insmod "/lib/modules/$m.ko"
  done < /lib/modules/order
fi
dev=$(cat /sys/block/ram0/dev 2> /dev/null)
if [ -z "$dev" ]; then
  fail $id "no /dev/ram0 after insmod brd: $(dmesg | tail -n 3)"
else
  maj=${dev%:*} min=${dev#*:}
  # Unthrottled, outside any container, for comparison.
  a=$(now)
  dd if=/dev/zero of=/dev/ram0 bs=64k count=64 oflag=direct 2> /dev/null
  b=$(now)
  base=$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", b - a }')
  mkbundle $id '["sh", "-c", "a=$(cut -d\" \" -f1 /proc/uptime); dd if=/dev/zero of=/dev/ram0 bs=64k count=64 oflag=direct 2> /out/dd.err; r=$?; echo $r $a $(cut -d\" \" -f1 /proc/uptime) > /out/t"]' \
    "{ \"blockIO\": { \"throttleWriteBpsDevice\": [ { \"major\": $maj, \"minor\": $min, \"rate\": 1048576 } ] }, \"devices\": [ { \"allow\": true, \"type\": \"b\", \"major\": $maj, \"minor\": $min, \"access\": \"rw\" } ] }" \
    "\"devices\": [ { \"path\": \"/dev/ram0\", \"type\": \"b\", \"major\": $maj, \"minor\": $min, \"fileMode\": 432, \"uid\": 0, \"gid\": 0 } ]"
  out=$(k run --keep --report "$W/r-$id.json" -b "$W/b-$id" $id 2>&1 < /dev/null)
  rc=$?
  if [ "$rc" != 0 ]; then
    fail $id-run "kist run exited $rc: $out $(cat "$W/out-$id/dd.err" 2> /dev/null)"
  else
    check_layer $id-report "$W/r-$id.json" cgroup.io.max "$maj:$min"
    iomax=$(grep "^$maj:$min " "$CG/$PARENT/$id/io.max" 2> /dev/null)
    check $id-readback "io.max is '$iomax'" 'has "$iomax" "wbps=1048576( |$)"'
    ddrc= ta=0 tb=0
    read -r ddrc ta tb < "$W/out-$id/t" 2> /dev/null
    secs=$(awk -v a="$ta" -v b="$tb" 'BEGIN { printf "%.2f", b - a }')
    # 4 MiB at 1 MiB/s: about 4 s (blk-throttle may let the first slice through).
    check $id-throttled "dd exit '$ddrc'; 4 MiB took $secs s at wbps=1048576 (unthrottled: $base s)" \
      '[ "$ddrc" = 0 ] && awk -v s="$secs" "BEGIN { exit !(s >= 2.5 && s <= 8) }"'
    echo "   io: 4 MiB in $secs s with wbps=1 MiB/s; $base s unthrottled"
    finish $id
  fi
fi

# ---- pause / resume: a counter stops and continues ------------------------------------
id=pause
# The counter is the number of lines in /out/c (appends: never half-written).
mkbundle $id '["sh", "-c", "while :; do echo x >> /out/c; done"]'
if start $id; then
  counter ()
  {
    wc -l < "$W/out-$id/c" 2> /dev/null || echo 0
  }
  wait_for 10 [ -s "$W/out-$id/c" ]
  pid=$(pid_of $id)
  out=$(k ps --format json $id 2>&1)
  check $id-ps "kist ps --format json: '$out' (init pid $pid)" \
    '[ -n "$pid" ] && has "$(printf "%s" "$out" | tr -d " \n")" "^\[([0-9]+,)*$pid(,[0-9]+)*\]\$"'
  out=$(k pause $id 2>&1)
  rc=$?
  check $id-pause "kist pause exited $rc: $out" '[ "$rc" = 0 ]'
  check $id-frozen "cgroup.freeze '$(cgval $id cgroup.freeze)', cgroup.events frozen '$(cgval $id cgroup.events frozen)'" \
    '[ "$(cgval $id cgroup.events frozen)" = 1 ]'
  st=$(k state $id 2>&1 | tr -d ' \n')
  check $id-state "kist state: $st" 'has "$st" "\"status\":\"paused\""'
  c1=$(counter)
  sleep 1
  c2=$(counter)
  check $id-stopped "the counter moved from $c1 to $c2 while paused" '[ "$c1" = "$c2" ]'
  out=$(k resume $id 2>&1)
  rc=$?
  check $id-resume "kist resume exited $rc: $out" '[ "$rc" = 0 ]'
  sleep 1
  c3=$(counter)
  check $id-continues "the counter went from $c2 to $c3 after resume" '[ "$c3" -gt "$c2" ]'
  check $id-thawed "cgroup.events frozen '$(cgval $id cgroup.events frozen)'" '[ "$(cgval $id cgroup.events frozen)" = 0 ]'
  finish $id
fi

# ---- update: memory.max raised and lowered on a running container -----------------------
id=update
mkbundle $id '["sleep", "600"]' '{ "memory": { "limit": 33554432 }, "pids": { "limit": 100 } }'
if start $id; then
  check $id-initial "memory.max is '$(cgval $id memory.max)'" '[ "$(cgval $id memory.max)" = 33554432 ]'
  out=$(echo '{"memory":{"limit":67108864}}' | k update --resources - $id 2>&1)
  rc=$?
  check $id-raise "kist update --resources - exited $rc ($out); memory.max '$(cgval $id memory.max)'" \
    '[ "$rc" = 0 ] && [ "$(cgval $id memory.max)" = 67108864 ]'
  out=$(k update --memory 16777216 --pids-limit 50 $id 2>&1 < /dev/null)
  rc=$?
  check $id-lower "kist update --memory 16777216 exited $rc ($out); memory.max '$(cgval $id memory.max)'" \
    '[ "$rc" = 0 ] && [ "$(cgval $id memory.max)" = 16777216 ]'
  check $id-pids "pids.max is '$(cgval $id pids.max)' after --pids-limit 50" '[ "$(cgval $id pids.max)" = 50 ]'
  k report --format json $id > "$W/r-$id-after.json" 2>&1
  check_layer $id-report "$W/r-$id-after.json" cgroup.memory.max 16777216
  pid=$(pid_of $id)
  check $id-alive "the container (pid '$pid') died during update" '[ -n "$pid" ] && kill -0 "$pid" 2> /dev/null'
  finish $id
fi

# ---- update with memory.checkBeforeUpdate: a limit below the usage is refused -----------
# alloc touches 30 MiB and holds it; memory.current is then about 30 MiB.

# memory_at_least ID BYTES: memory.current has reached BYTES.
memory_at_least ()
{
  c=$(cgval "$1" memory.current)
  [ -n "$c" ] && [ "$c" -ge "$2" ]
}

# mem_update NAME RC MAX PATTERN ARGS...: `kist update ARGS... $id` (stdin:
# $UPD and a newline) exits RC, with PATTERN (if not empty) in its output,
# and memory.max of $id is then MAX.
mem_update ()
{
  n=$1 want=$2 max=$3 pat=$4
  shift 4
  out=$(printf '%s\n' "$UPD" | k update "$@" $id 2>&1)
  rc=$?
  got=$(cgval $id memory.max)
  check "$n" "kist update $* $id exited $rc ($want expected): $out; memory.max '$got' ($max expected)" \
    '[ "$rc" = "$want" ] && [ "$got" = "$max" ] && { [ -z "$pat" ] || has "$out" "$pat"; }'
}

REFUSED='memory.current [0-9]+.*checkBeforeUpdate is true'
id=cbu
mkbundle $id '["/bin/alloc", "30", "600"]' '{ "memory": { "limit": 134217728 } }'
if start $id; then
  wait_for 30 memory_at_least $id 29360128
  use=$(cgval $id memory.current)
  check $id-usage "memory.current is '$use' (alloc 30 should hold about 31457280)" '[ "${use:-0}" -ge 29360128 ]'
  UPD='{"memory":{"limit":16777216,"checkBeforeUpdate":true}}'
  mem_update $id-refused 1 134217728 "$REFUSED" --resources -
  echo "   cbu: $(printf '%s' "$out" | tr '\n' ' ' | cut -c 1-300)"
  k report --format json $id > "$W/r-$id-refused.json" 2>&1
  check_layer $id-report-unchanged "$W/r-$id-refused.json" cgroup.memory.max "read back 134217728"
  pid=$(pid_of $id)
  check $id-alive "the container (pid '$pid') died after the refused update" '[ -n "$pid" ] && kill -0 "$pid" 2> /dev/null'
  # Controls: checkBeforeUpdate lets a limit above the usage through, and
  # without it the limit below the usage is applied (the kernel may then
  # OOM-kill alloc, the container's init).
  UPD='{"memory":{"limit":100663296,"checkBeforeUpdate":true}}'
  mem_update $id-above 0 100663296 '' --resources -
  UPD='{"memory":{"limit":16777216,"checkBeforeUpdate":false}}'
  mem_update $id-unchecked 0 16777216 '' --resources -
  finish $id
fi

# The same with checkBeforeUpdate in config.json: remembered for updates that
# do not say (the stored report's entry), also for the flags; an update's
# false overrides it.
id=cbu-config
mkbundle $id '["/bin/alloc", "30", "600"]' '{ "memory": { "limit": 134217728, "checkBeforeUpdate": true } }'
if start $id; then
  wait_for 30 memory_at_least $id 29360128
  check_layer $id-report "$W/r-$id.json" cgroup.memory.checkBeforeUpdate "kist update refuses"
  UPD='{"memory":{"limit":16777216}}'
  mem_update $id-refused 1 134217728 "$REFUSED" --resources -
  UPD=
  mem_update $id-flag-refused 1 134217728 "$REFUSED" --memory 16m
  UPD='{"memory":{"limit":16777216,"checkBeforeUpdate":false}}'
  mem_update $id-override 0 16777216 '' --resources -
  finish $id
fi

# ---- linux.resources.unified: raw files, their controllers enabled by kist ---------------
# pids.max (pids is enabled at the root by init.sh, kist enables it in
# /kistvm) and, where the kernel has it, cpuset.cpus (cpuset is enabled
# nowhere: kist must enable it in / and /kistvm).
id=unified
uni='"pids.max": "10"'
has_cpuset=
if grep -qw cpuset "$CG/cgroup.controllers"; then
  has_cpuset=1
  uni="$uni, \"cpuset.cpus\": \"0\""
fi
mkbundle $id '["sleep", "600"]' "{ \"unified\": { $uni } }"
if start $id; then
  check $id-pids "pids.max is '$(cgval $id pids.max)' (unified pids.max 10)" '[ "$(cgval $id pids.max)" = 10 ]'
  check_layer $id-report "$W/r-$id.json" cgroup.pids.max "read back 10"
  if [ -n "$has_cpuset" ]; then
    check $id-cpuset "cpuset.cpus is '$(cgval $id cpuset.cpus)' (unified cpuset.cpus 0)" '[ "$(cgval $id cpuset.cpus)" = 0 ]'
  else
    echo "   unified: no cpuset controller in this kernel: cpuset.cpus not checked"
  fi
  finish $id
fi

# run_fails ID RESOURCES NAME PATTERN: `kist run` of a bundle with these
# resources exits 125 with PATTERN in its message, and leaves neither a
# scope nor a container.
run_fails ()
{
  mkbundle "$1" '["true"]' "$2"
  out=$(k run -b "$W/b-$1" "$1" 2>&1 < /dev/null)
  rc=$?
  st=$(k state "$1" 2>&1)
  src=$?
  check "$3" "kist run exited $rc (125 expected): $out; scope $CG/$PARENT/$1 $([ -d "$CG/$PARENT/$1" ] && echo exists || echo gone); state exit $src" \
    '[ "$rc" = 125 ] && has "$out" "$4" && [ ! -d "$CG/$PARENT/$1" ] && [ "$src" != 0 ]'
  echo "   $1: $(printf '%s' "$out" | tr '\n' ' ' | cut -c 1-300)"
}
run_fails unified-nosuch '{ "unified": { "nosuch.max": "1" } }' unified-unknown-key \
  'unified\.nosuch\.max: nosuch controller not available'
# A controller this kernel does not have.
absent=
for c in hugetlb:hugetlb.2MB.max rdma:rdma.max misc:misc.max dmem:dmem.max; do
  if ! grep -qw "${c%%:*}" "$CG/cgroup.controllers"; then
    absent=$c
    break
  fi
done
if [ -n "$absent" ]; then
  run_fails unified-absent "{ \"unified\": { \"${absent#*:}\": \"max\" } }" unified-absent-controller \
    "${absent%%:*} controller not available"
else
  fail unified-absent-controller "every candidate controller is in $CG/cgroup.controllers: $(cat "$CG/cgroup.controllers")"
fi

# ---- the same relative cgroupsPath attaches to the same place --------------------------
# Relative: below kist's own cgroup (here the root), as runc; two containers
# (two ids) with one cgroupsPath, one after the other.
same=
for id in samepath1 samepath2; do
  CGPATH="$PARENT/samepath" mkbundle $id '["sleep", "600"]'
  if start $id; then
    pid=$(pid_of $id)
    same="$same $(sed -n 's/^0:://p' "/proc/$pid/cgroup" 2> /dev/null)"
    out=$(k delete --force $id 2>&1)
    rc=$?
    check $id-delete "kist delete --force exited $rc: $out; $CG/$PARENT/samepath $([ -d "$CG/$PARENT/samepath" ] && echo "still exists" || echo gone)" \
      '[ "$rc" = 0 ] && [ ! -d "$CG/$PARENT/samepath" ]'
  fi
done
check samepath "the two containers with cgroupsPath $PARENT/samepath were in:$same (/$PARENT/samepath twice expected)" \
  '[ "$same" = " /$PARENT/samepath /$PARENT/samepath" ]'

# ---- delete: the default scope (no cgroupsPath) is created and removed ------------------
id=scope
CGPATH='' mkbundle $id '["sleep", "600"]'
if start $id; then
  pid=$(pid_of $id)
  rel=$(sed -n 's/^0:://p' "/proc/$pid/cgroup" 2> /dev/null)
  check $id-default "init pid $pid is in the cgroup '$rel' (expected .../kist/$id)" \
    'has "$rel" "/kist/$id\$" && [ -d "/sys/fs/cgroup$rel" ]'
  out=$(k kill $id 9 2>&1)
  check $id-kill "kist kill $id 9: $out" 'wait_for 10 dead "$pid"'
  out=$(k delete $id 2>&1)
  rc=$?
  check $id-delete "kist delete exited $rc: $out" '[ "$rc" = 0 ]'
  check $id-removed "/sys/fs/cgroup$rel still exists after kist delete" '[ -n "$rel" ] && [ ! -d "/sys/fs/cgroup$rel" ]'
  out=$(k state $id 2>&1)
  rc=$?
  check $id-state-gone "kist state still knows $id: $out" '[ "$rc" != 0 ]'
fi

# ---- kist sandbox: --memory, --pids, --cpus on the busybox rootfs -------------------------
# Each sandbox runs as uid 65534 with --rootfs ROOTFS; its cgroup scope is
# kist's default one, named by the report's "cgroup" entry ("scope PATH ...",
# also when no limit was asked for).

# sb_scope REPORT: the scope directory from the report's cgroup entry.
sb_scope ()
{
  layer "$1" cgroup | sed -n 's/.*"detail" *: *"[^"]*scope \(\/[^ "]*\).*/\1/p'
}

# sb_start NAME SANDBOX_ARGS...: `kist sandbox --rootfs ROOTFS` in the
# background with $W/sb-NAME (mode 0777, with the fifo "go") bound at /out;
# report in $W/r-NAME.json, output in $W/log-NAME, kist's pid in SBPID.  The
# command ends by reading /out/go, so it runs until sb_stop.
sb_start ()
{
  d=$W/sb-$1
  mkdir -p "$d" && chmod 0777 "$d" && mkfifo -m 0666 "$d/go"
  n=$1
  shift
  timeout -s KILL 60 "$KIST" --root "$STATE" sandbox --rootfs "$ROOTFS" --rw "$d:/out" \
    --report "$W/r-$n.json" "$@" > "$W/log-$n" 2>&1 < /dev/null &
  SBPID=$!
}

# sb_stop NAME: release the command (write the fifo), wait for kist; its
# exit status in SBRC.
sb_stop ()
{
  timeout 5 sh -c 'echo go > "$1"' sh "$W/sb-$1/go"
  wait "$SBPID"
  SBRC=$?
}

# --memory 32M: a 64 MiB allocation is OOM-killed (kist exits 137, well
# before k's 30 s SIGKILL); the scope's memory.events oom_kill counts it
# (read while the shell waits on the fifo); without a limit the same
# allocation succeeds.
id=sb-mem
a=$(now)
out=$(k sandbox --rootfs "$ROOTFS" --memory 32M --report "$W/r-$id.json" -- /bin/alloc 64 2>&1 < /dev/null)
rc=$?
secs=$(awk -v a="$a" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }')
check $id-oom "kist sandbox --memory 32M -- alloc 64 exited $rc after $secs s (137 expected): $(printf '%s' "$out" | tail -n 2)" \
  '[ "$rc" = 137 ] && ! has "$out" "touched" && has "$out" "alloc: 8 MiB" && awk -v s="$secs" "BEGIN { exit !(s < 20) }"'
check_layer $id-report "$W/r-$id.json" cgroup.memory.max "read back 33554432"
# The exit channel: the same OOM kill, told by --status-fd and the report.
k sandbox --rootfs "$ROOTFS" --memory 32M --status-fd 9 --report "$W/r-$id-st.json" -- /bin/alloc 64 \
  9> "$W/st-$id" > /dev/null 2>&1 < /dev/null
ex=$(sed -n 2p "$W/st-$id")
check $id-status-fd "--status-fd's exited line: $ex" \
  'has "$ex" "\"how\":\"signal\"" && has "$ex" "\"signal\":9[,}]" && has "$ex" "\"oom-killed\":true" && has "$ex" "\"memory-peak\":[0-9]{7,}"'
check_layer $id-exit-entry "$W/r-$id-st.json" exit "OOM-killed"
check_layer $id-usage-entry "$W/r-$id-st.json" usage "; memory.peak "
sb_start $id-ev --memory 32M -- sh -c '/bin/alloc 64 2> /dev/null; echo $? > /out/st; read x < /out/go'
wait_for 30 [ -s "$W/sb-$id-ev/st" ]
scope=$(sb_scope "$W/r-$id-ev.json")
ook=$(awk '$1 == "oom_kill" { print $2 }' "$scope/memory.events" 2> /dev/null)
st=$(cat "$W/sb-$id-ev/st" 2> /dev/null)
sb_stop $id-ev
check $id-oom-kill "alloc 64 in the sandbox exited '$st'; scope '$scope' memory.events oom_kill '$ook'; kist exited $SBRC" \
  '[ "$st" = 137 ] && [ "${ook:-0}" -ge 1 ] && [ "$SBRC" = 0 ]'
out=$(k sandbox --rootfs "$ROOTFS" -- /bin/alloc 64 2>&1 < /dev/null)
rc=$?
check $id-nolimit "kist sandbox -- alloc 64 (no --memory) exited $rc: $(printf '%s' "$out" | tail -n 2)" \
  '[ "$rc" = 0 ] && has "$out" "touched 64 MiB"'

# --pids 10: a fork bomb of 100 sleeps stops near the limit (the shell and its
# subshell count too); the scope's pids.events max rises.
id=sb-pids
sb_start $id --pids 10 -- sh -c '(i=0; while [ $i -lt 100 ]; do sleep 600 & i=$((i+1)); echo $i > /out/n; done) 2> /dev/null; echo done > /out/done; read x < /out/go'
wait_for 30 [ -s "$W/sb-$id/done" ]
scope=$(sb_scope "$W/r-$id.json")
n=$(cat "$W/sb-$id/n" 2> /dev/null)
cur=$(cat "$scope/pids.current" 2> /dev/null)
max=$(awk '$1 == "max" { print $2 }' "$scope/pids.events" 2> /dev/null)
check $id-bomb "${n:-0} of 100 sleeps started; scope '$scope' pids.current '$cur', pids.events max '$max' (limit 10)" \
  '[ -n "$scope" ] && [ -n "$n" ] && [ "$n" -lt 10 ] && [ "${cur:-99}" -le 10 ] && [ "${max:-0}" -ge 1 ]'
check_layer $id-report "$W/r-$id.json" cgroup.pids.max "read back 10"
sb_stop $id
check $id-exit "kist sandbox exited $SBRC: $(tail -c 300 "$W/log-$id")" '[ "$SBRC" = 0 ] && [ ! -d "$scope" ]'
echo "   sandbox pids: $n sleeps started, pids.current $cur, pids.events max $max"

# --cpus 0.1: cpu.max "10000 100000"; a busy loop is throttled to about 10%.
id=sb-cpu
sb_start $id --cpus 0.1 -- sh -c 'while :; do :; done & read x < /out/go'
wait_for 30 [ -s "$W/r-$id.json" ]
t0=$(now)
scope=$(sb_scope "$W/r-$id.json")
check_layer $id-report "$W/r-$id.json" cgroup.cpu.max "read back 10000 100000"
sleep 3
cmax=$(cat "$scope/cpu.max" 2> /dev/null)
thr=$(awk '$1 == "nr_throttled" { print $2 }' "$scope/cpu.stat" 2> /dev/null)
use=$(awk '$1 == "usage_usec" { print $2 }' "$scope/cpu.stat" 2> /dev/null)
t1=$(now)
pct=$(awk -v u="${use:-0}" -v a="$t0" -v b="$t1" 'BEGIN { printf "%d", u / ((b - a) * 1e6) * 100 }')
check $id-throttled "scope '$scope': cpu.max '$cmax', nr_throttled '$thr', the busy loop used $pct% of one CPU" \
  '[ "$cmax" = "10000 100000" ] && [ "${thr:-0}" -ge 1 ] && [ "$pct" -le 50 ]'
sb_stop $id
check $id-exit "kist sandbox exited $SBRC: $(tail -c 300 "$W/log-$id")" '[ "$SBRC" = 0 ] && [ ! -d "$scope" ]'
echo "   sandbox cpu: nr_throttled $thr, usage ${pct}% of one CPU over $t0..$t1 s"

left=$( (ls -d "$CG"/kist/sandbox-* "$STATE"/~sandbox/* 2> /dev/null) | tr '\n' ' ')
check sb-leftovers "sandbox scopes or dirs left: $left" '[ -z "$left" ]'

# ---- an engine: containerd + ctr with kist as its runtime (tests/vm/engine.sh) --------
. "$(dirname "$0")/engine.sh"

# ---- nothing left ----------------------------------------------------------------------
left=$(k list -q 2> /dev/null)
[ -n "$left" ] || left=$(ls "$STATE" 2> /dev/null | grep -v '^~')
check leftovers-containers "containers left in $STATE: $left" '[ -z "$left" ]'
left=$(cd "$CG/$PARENT" 2> /dev/null && find . -mindepth 1 -type d | tr '\n' ' ')
check leftovers-cgroups "cgroups left under $CG/$PARENT: $left" '[ -z "$left" ]'

for id in $IDS; do
  k delete --force "$id" > /dev/null 2>&1
done
rm -rf "$W"
echo "$PASS passed, $FAIL failed"
[ "$FAIL" = 0 ]
