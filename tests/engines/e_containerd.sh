#!/bin/bash
# e_containerd.sh: containerd 1.6 (shim io.containerd.runc.v2) driven by ctr,
# with the runtime under test as `ctr run --runc-binary` (issue #9): run --rm,
# run -d, run --tty, task exec (also --tty), ps, pause/resume, kill -a, rm.
# The test's own containerd keeps everything under $E/ctrd (no CRI plugin)
# in this test's private mount namespace, where the host's cgroup2 is
# /sys/fs/cgroup (lib_daemons.sh).  ctr always sends cpu.shares and this
# host's cgroup2 has no cpu controller: --runc-binary is a wrapper that gives
# kist --allow-degraded=cgroup.* (for runc it drops the cpu resources), and
# the test reads kist's state and report to see that they say so.
# KIST_ENGINE_RUNTIME=/usr/sbin/runc runs the same checks against runc.
. "$(dirname "$0")/lib_daemons.sh"

eng_daemons_init containerd containerd ctr containerd-shim-runc-v2 jq tmux

IMG=docker.io/library/kist-busybox:latest
RROOT=$E/runc-root
ARGV_LOG=$E/runtime.argv
WRAP=$E/runtime-wrapper
eng_rt_wrapper "$WRAP" "$ARGV_LOG"
# The shim runs the runtime with --root RROOT/NAMESPACE.
RTROOT=$RROOT/$CTR_NS
RUN=(--runc-binary "$WRAP" --runc-root "$RROOT" --env "KIST_IT_MARK=$MARK")

# cc TAG ARGS...: ctrc capturing into $T/TAG.out/.err; sets RC, OUT, ERR.
cc ()
{
  local tag=$1
  shift
  LAST=$T/$tag
  printf 'ctr %s\n' "$*" > "$LAST.cmd"
  ctrc "$@" > "$LAST.out" 2> "$LAST.err" < /dev/null
  RC=$?
  OUT=$(cat "$LAST.out")
  ERR=$(cat "$LAST.err")
}

# rts ID FIELD: a field of the runtime's own `state ID` (kist and runc alike).
rts ()
{
  timeout 10 "$RT" --root "$RTROOT" state "$1" 2> /dev/null | jq -r ".$2 // empty" 2> /dev/null
}

# task_field ID COLUMN: PID (2) or STATUS (3) of ID in `ctr task ls`.
task_field ()
{
  ctrc task ls 2> /dev/null | awk -v id="$1" -v c="$2" '$1 == id { print $c }'
}

wait_task_status ()
{
  local i
  for ((i = 0; i < ${3:-100}; i++)); do
    [ "$(task_field "$1" 3)" = "$2" ] && return 0
    sleep 0.1
  done
  return 1
}

cg_of ()
{
  printf '/sys/fs/cgroup%s/%s' "$ENG_CGROUP" "$1"
}

ctrd_start || exit 1

eng_docker_archive "$T/image.tar" "$IMG" || { fail "build the busybox docker-archive"; exit 1; }
cc import images import "$T/image.tar"
expect_eq "ctr images import of the busybox docker-archive" 0 "$RC"

# --- run --rm --------------------------------------------------------------------------------
id=$PREFIX-rm
cc runrm run --rm "${RUN[@]}" --cgroup "$ENG_CGROUP/$id" "$IMG" "$id" \
  sh -c 'echo hello-from-ctr; echo /dev/null works > /dev/null && echo devnull-ok'
expect_eq "run --rm exits 0" 0 "$RC"
expect_contains "run --rm: the container's output reaches ctr" "$OUT" hello-from-ctr
expect_contains "run --rm: /dev/null is writable" "$OUT" devnull-ok
expect_contains "run --rm: the shim called the runtime under test (create)" \
  "$(cat "$ARGV_LOG" 2> /dev/null)" "--root $RTROOT --log"
cc rmls containers ls -q
expect_not_contains "run --rm: the container is gone from containerd" "$OUT" "$id"
expect_true "run --rm: the runtime's state dir is gone" test ! -e "$RTROOT/$id"
expect_true "run --rm: the container's cgroup is gone" test ! -e "$(cg_of "$id")"

cc runst run --rm "${RUN[@]}" --cgroup "$ENG_CGROUP/$PREFIX-st" "$IMG" "$PREFIX-st" sh -c 'exit 3'
expect_eq "run --rm: a failing command's status (3) is ctr's" 3 "$RC"

# Without the degradation (kist without the global --allow-degraded, runc with
# the cpu resources left in), the runtime fails closed on cpu.shares and the
# user sees why.
eng_rt_wrapper "$E/runtime-plain" "$ARGV_LOG" plain
cc runfc run --rm --runc-binary "$E/runtime-plain" --runc-root "$RROOT" --env "KIST_IT_MARK=$MARK" \
  --cgroup "$ENG_CGROUP/$PREFIX-fc" "$IMG" "$PREFIX-fc" true
expect_ne "without the degradation, ctr run fails (cpu.shares, no cpu controller)" 0 "$RC"
expect_match "without the degradation: ctr shows the runtime's message about the cpu controller" \
  "$ERR" 'cpu controller|cpu\.weight'
cc fcls containers ls -q
expect_not_contains "without the degradation: the container is gone from containerd" "$OUT" "$PREFIX-fc"
expect_true "without the degradation: the runtime's state dir is gone" test ! -e "$RTROOT/$PREFIX-fc"
expect_true "without the degradation: the container's cgroup is gone" test ! -e "$(cg_of "$PREFIX-fc")"

# The runtime's error reaches the user (the shim reads the last --log line).
cc runnx run --rm "${RUN[@]}" --cgroup "$ENG_CGROUP/$PREFIX-nx" "$IMG" "$PREFIX-nx" /no/such-command
expect_ne "run of a missing command: ctr fails" 0 "$RC"
expect_contains "run of a missing command: ctr shows the runtime's message naming it" \
  "$ERR" "/no/such-command"
cc nxls containers ls -q
expect_not_contains "run of a missing command: the container is gone from containerd" "$OUT" "$PREFIX-nx"
expect_true "run of a missing command: the runtime's state dir is gone" test ! -e "$RTROOT/$PREFIX-nx"

# --- run -d -----------------------------------------------------------------------------------
id=$PREFIX-d
cc rund run -d "${RUN[@]}" --cgroup "$ENG_CGROUP/$id" "$IMG" "$id" sh -c 'echo started > /tmp/s; exec sleep 600'
expect_eq "run -d exits 0" 0 "$RC"
wait_task_status "$id" RUNNING
expect_eq "run -d: ctr task ls says RUNNING" RUNNING "$(task_field "$id" 3)"
PID=$(task_field "$id" 2)
expect_true "run -d: the task's pid is alive" pid_alive "$PID"
expect_eq "run -d: the runtime's state says running" running "$(rts "$id" status)"
expect_eq "run -d: the runtime's state has the task's pid" "$PID" "$(rts "$id" pid)"
expect_true "run -d: the task is in the cgroup ctr asked for" \
  grep -qx "0::$ENG_CGROUP/$id" "/proc/$PID/cgroup"
expect_eq "ctr sent linux.resources.cpu.shares 1024 (why the degradation is needed)" 1024 \
  "$(jq -r '.linux.resources.cpu.shares // empty' "$ARGV_LOG.config.$id.json" 2> /dev/null)"
if eng_is_kist; then
  timeout 10 "$RT" --root "$RTROOT" report "$id" > "$T/d.report.json" 2> "$T/d.report.err"
  expect_eq "kist report of the ctr container: limits not applied" false \
    "$(jq -r '.limits.applied' "$T/d.report.json" 2> /dev/null)"
  expect_eq "kist report: cgroup.cpu.weight (from cpu.shares) is what is missing" cgroup.cpu.weight \
    "$(jq -r '.limits.missing | join(",")' "$T/d.report.json" 2> /dev/null)"
  expect_match "kist report: the reason names the missing cpu controller" \
    "$(jq -r '.layers[] | select(.layer == "cgroup.cpu.weight") | .reason' "$T/d.report.json" 2> /dev/null)" \
    'cpu controller'
  expect_eq "kist report: the cgroup layer itself was applied" true \
    "$(jq -r '[.layers[] | select(.layer == "cgroup")][0].applied' "$T/d.report.json" 2> /dev/null)"
  expect_eq "kist report: the policy was the wrapper's global --allow-degraded=cgroup.*" '["cgroup.*"]' \
    "$(jq -c '.allowDegraded' "$T/d.report.json" 2> /dev/null)"
  # issue #9: "The report, kist state and the --log line still say what was
  # not applied."
  expect_contains "kist state says what was not applied" \
    "$(timeout 10 "$RT" --root "$RTROOT" state "$id" 2>&1)" cgroup.cpu.weight
  expect_contains "kist's --log file (the shim's log.json) says what was not applied" \
    "$(cat "$CTRD_DIR/state/io.containerd.runtime.v2.task/$CTR_NS/$id/log.json" 2>&1)" cgroup.cpu.weight
else
  skip "kist's report, state and log of the ctr container" "the runtime under test is $RT_NAME, not kist"
fi

# --- task exec ---------------------------------------------------------------------------------
cc exec1 task exec --exec-id e1 "$id" sh -c 'cat /tmp/s; echo exec-out'
expect_eq "task exec exits 0" 0 "$RC"
expect_eq "task exec: its output, in the container's filesystem" "started
exec-out" "$OUT"
cc exec2 task exec --exec-id e2 "$id" sh -c 'exit 5'
expect_eq "task exec: the command's status (5) is ctr's" 5 "$RC"
expect_contains "the shim called exec --process --detach" "$(cat "$ARGV_LOG")" "exec --process"

# --- task exec --tty (through a pseudo-terminal) ------------------------------------------------
# ctr sets the terminal's size with a resize after the start: wait for it.
# (busybox's stty size fails while the size is 0 0.)
TTY_PROBE='test -t 0 && test -t 1 && echo TTY-$((6*7)); i=0;
  until s=$(stty size 2> /dev/null) && [ -n "$s" ] && [ "$s" != "0 0" ] || [ $i -ge 50 ]; do
    sleep 0.1; i=$((i+1)); done; echo "size $s"'
eng_tmux_start exectty 91 27 \
  "ctr --address $(printf '%q' "$CTRD_SOCK") -n $CTR_NS task exec --tty --exec-id et $id \
     sh -c $(printf '%q' "$TTY_PROBE; exit 4")"
TRC=$(eng_tmux_done exectty 30)
S=$(eng_tmux_screen exectty)
expect_contains "task exec --tty: stdin and stdout are a terminal inside" "$S" "TTY-42"
expect_contains "task exec --tty: the terminal has the caller's size" "$S" "size 27 91"
expect_eq "task exec --tty: the command's status (4) is ctr's" 4 "$TRC"
expect_contains "task exec --tty: the runtime got exec --tty --console-socket" \
  "$(grep ' exec ' "$ARGV_LOG")" "--console-socket"
eng_tmux_stop

# --- ps ------------------------------------------------------------------------------------------
cc bg task exec -d --exec-id bg "$id" sleep 500
expect_eq "task exec -d (a second process) exits 0" 0 "$RC"
sleep 0.5
cc ps task ps "$id"
expect_eq "task ps exits 0" 0 "$RC"
PS_PIDS=$(printf '%s\n' "$OUT" | awk 'NR > 1 { print $1 }' | sort -n | tr '\n' ' ')
expect_match "task ps lists the init's pid" " $PS_PIDS" " $PID "
BG=$(printf '%s\n' "$OUT" | awk -v p="$PID" 'NR > 1 && $1 != p { print $1; exit }')
expect_eq "task ps lists the exec'd process too (2 pids)" 2 "$(printf '%s\n' "$OUT" | awk 'NR > 1' | wc -l)"
expect_true "the shim called the runtime's ps --format json" grep -q " ps --format json $id\$" "$ARGV_LOG"

# --- pause / resume -----------------------------------------------------------------------------------
cc pause task pause "$id"
expect_eq "task pause exits 0" 0 "$RC"
expect_eq "pause: ctr task ls says PAUSED" PAUSED "$(task_field "$id" 3)"
expect_eq "pause: the runtime's state says paused" paused "$(rts "$id" status)"
expect_eq "pause: the cgroup is frozen" 1 "$(cat "$(cg_of "$id")/cgroup.freeze" 2> /dev/null)"
expect_true "pause: the kernel says the cgroup is frozen (cgroup.events)" \
  grep -qx 'frozen 1' "$(cg_of "$id")/cgroup.events"
cc resume task resume "$id"
expect_eq "task resume exits 0" 0 "$RC"
expect_eq "resume: ctr task ls says RUNNING" RUNNING "$(task_field "$id" 3)"
expect_eq "resume: the cgroup is thawed" 0 "$(cat "$(cg_of "$id")/cgroup.freeze" 2> /dev/null)"
cc exec3 task exec --exec-id e3 "$id" echo after-resume
expect_eq "resume: exec works again" after-resume "$OUT"

# --- kill -a --------------------------------------------------------------------------------------------
cc kill task kill -a -s SIGKILL "$id"
expect_eq "task kill -a -s SIGKILL exits 0" 0 "$RC"
wait_task_status "$id" STOPPED
expect_eq "kill -a: ctr task ls says STOPPED" STOPPED "$(task_field "$id" 3)"
expect_true "kill -a: the init is gone" wait_gone "$PID" 5
if [ -n "$BG" ]; then
  expect_true "kill -a: the exec'd process is gone too" wait_gone "$BG" 5
else
  fail "kill -a: the exec'd process is gone too" "task ps did not list it"
fi
expect_eq "kill -a: the runtime's state says stopped" stopped "$(rts "$id" status)"
expect_contains "the runtime got kill --all" "$(cat "$ARGV_LOG")" "kill --all $id 9"

# --- rm ------------------------------------------------------------------------------------------------------
cc taskrm task rm "$id"
expect_eq "task rm exits 0" 0 "$RC"
cc crm containers rm "$id"
expect_eq "containers rm exits 0" 0 "$RC"
cc rmls2 containers ls -q
expect_not_contains "rm: the container is gone from containerd" "$OUT" "$id"
expect_true "rm: the runtime's state dir is gone" test ! -e "$RTROOT/$id"
expect_true "rm: the container's cgroup is gone" test ! -e "$(cg_of "$id")"
expect_contains "the runtime got delete" "$(cat "$ARGV_LOG")" "delete"

# --- run --tty (through a pseudo-terminal) -----------------------------------------------------------------
id=$PREFIX-tty
eng_tmux_start runtty 87 23 \
  "ctr --address $(printf '%q' "$CTRD_SOCK") -n $CTR_NS run --rm --tty $(printf '%q ' "${RUN[@]}") \
     --cgroup $ENG_CGROUP/$id $IMG $id sh -c $(printf '%q' "$TTY_PROBE; exit 6")"
TRC=$(eng_tmux_done runtty 30)
S=$(eng_tmux_screen runtty)
expect_contains "run --tty: stdin and stdout are a terminal inside" "$S" "TTY-42"
expect_contains "run --tty: the terminal has the caller's size" "$S" "size 23 87"
expect_eq "run --tty: the command's status (6) is ctr's" 6 "$TRC"
expect_contains "run --tty: the runtime got create --console-socket" \
  "$(grep " create .* $id\$" "$ARGV_LOG")" "--console-socket"
eng_tmux_stop
cc ttyls containers ls -q
expect_not_contains "run --tty --rm: the container is gone" "$OUT" "$id"

# --- teardown ---------------------------------------------------------------------------------------------------
ctrd_stop
if [ -d "/sys/fs/cgroup$ENG_CGROUP" ]; then
  left=$(find "/sys/fs/cgroup$ENG_CGROUP" -mindepth 1 -type d)
  expect_eq "every container cgroup was removed by the runtime" "" "$left"
fi
eng_daemons_check_clean containerd
