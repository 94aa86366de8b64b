#!/bin/bash
# e_docker.sh: dockerd 20.10 (Debian's docker.io) on the test's own
# containerd, with the runtime under test in daemon.json's "runtimes" (the
# default runtime) and kist's global --allow-degraded=cgroup.* in its
# "runtimeArgs" (issue #9): run --rm, run -d, exec, top, pause/unpause, stop,
# rm, run -it, exec -it, and one container on docker's bridge network with eth0 inside
# (the prestart hook worked).  dockerd runs with "iptables": false and
# "ip-forward": false on a bridge of the test's own; all its state is under
# $E/dk, in this test's private mount namespace where the host's cgroup2 is
# /sys/fs/cgroup (lib_daemons.sh).  The test sends no packets over the
# bridge; the host's iptables rules and sysctls must be unchanged after it,
# the bridge and the veths gone.  The runtime path is a wrapper that logs
# docker's calls (lib_daemons.sh eng_rt_wrapper).
# KIST_ENGINE_RUNTIME=/usr/sbin/runc runs the same checks against runc.
. "$(dirname "$0")/lib_daemons.sh"

eng_daemons_init docker dockerd containerd containerd-shim-runc-v2 jq tmux

IMG=kist-busybox:latest
RTN=testrt
ARGV_LOG=$E/runtime.argv
WRAP=$E/runtime-wrapper
eng_rt_wrapper "$WRAP" "$ARGV_LOG" noglobal
RTJSON=$(printf '{"%s": {"path": %s, "runtimeArgs": %s}}' "$RTN" "$(json_str "$WRAP")" \
  "$(json_arr "${RT_GLOBAL[@]}")")
# docker 20.10 runs every runtime with --root EXEC-ROOT/runtime-runc/moby.
RTROOT=$E/dk/exec/runtime-runc/moby
RUN=(--env "KIST_IT_MARK=$MARK")
# docker sets the terminal's size with a resize after the start: wait for it
# (busybox's stty size fails while the size is 0 0).
TTY_PROBE='test -t 0 && test -t 1 && echo TTY-$((6*7)); i=0;
  until s=$(stty size 2> /dev/null) && [ -n "$s" ] && [ "$s" != "0 0" ] || [ $i -ge 50 ]; do
    sleep 0.1; i=$((i+1)); done; echo "size $s"'

# dc TAG ARGS...: docker capturing into $T/TAG.out/.err; sets RC, OUT, ERR.
dc ()
{
  local tag=$1
  shift
  LAST=$T/$tag
  printf 'docker %s\n' "$*" > "$LAST.cmd"
  dk "$@" > "$LAST.out" 2> "$LAST.err" < /dev/null
  RC=$?
  OUT=$(cat "$LAST.out")
  ERR=$(cat "$LAST.err")
}

# rts ID FIELD: a field of the runtime's own `state ID` (kist and runc alike).
rts ()
{
  timeout 10 "$RT" --root "$RTROOT" state "$1" 2> /dev/null | jq -r ".$2 // empty" 2> /dev/null
}

insp ()
{
  dk inspect -f "$2" "$1" 2> /dev/null
}

cg_of ()
{
  printf '/sys/fs/cgroup%s/%s' "$ENG_CGROUP" "$1"
}

ctrd_start || exit 1
dockerd_start "$RTJSON" || exit 1
expect_eq "dockerd's default runtime is the one under test" "$RTN" \
  "$(dk info -f '{{.DefaultRuntime}}' 2> /dev/null)"

eng_docker_archive "$T/image.tar" "$IMG" || { fail "build the busybox docker-archive"; exit 1; }
dc load load -i "$T/image.tar"
expect_eq "docker load of the busybox docker-archive" 0 "$RC"

# --- run --rm --------------------------------------------------------------------------------
dc runrm run --rm --network none "${RUN[@]}" "$IMG" \
  sh -c 'echo hello-from-docker; echo x > /dev/null && echo devnull-ok'
expect_eq "run --rm exits 0" 0 "$RC"
expect_contains "run --rm: the container's output reaches docker" "$OUT" hello-from-docker
expect_contains "run --rm: /dev/null is writable" "$OUT" devnull-ok
expect_contains "run --rm: the shim called the runtime under test (create)" \
  "$(grep ' create ' "$ARGV_LOG" 2> /dev/null)" "--root $RTROOT"
if eng_is_kist; then
  expect_contains "docker passed runtimeArgs (the global --allow-degraded) before the command" \
    "$(grep ' create ' "$ARGV_LOG" 2> /dev/null | head -n 1)" "${RT_GLOBAL[0]} --root"
fi
expect_match "docker's config has its prestart hook (libnetwork-setkey)" \
  "$(cat "$ARGV_LOG".config.*.json 2> /dev/null | jq -r '.hooks.prestart[]?.args | join(" ")' 2> /dev/null)" \
  'libnetwork-setkey'
dc psa ps -aq
expect_eq "run --rm: no container is left in docker" "" "$OUT"

dc runst run --rm --network none "${RUN[@]}" "$IMG" sh -c 'exit 3'
expect_eq "run --rm: a failing command's status (3) is docker's" 3 "$RC"

# The runtime's error reaches the user (docker shows the last --log line).
dc runnx run --rm --network none "${RUN[@]}" "$IMG" /no/such-command
expect_eq "run of a missing command: docker exits 127" 127 "$RC"
expect_contains "run of a missing command: docker shows the runtime's message naming it" \
  "$ERR" "/no/such-command"
dc psnx ps -aq
expect_eq "run of a missing command: no container is left in docker" "" "$OUT"

# --- run -d ---------------------------------------------------------------------------------------
dc rund run -d --name "$PREFIX-d" --network none "${RUN[@]}" "$IMG" \
  sh -c 'echo started > /tmp/s; trap "exit 0" TERM; sleep 600 & wait'
expect_eq "run -d exits 0" 0 "$RC"
CID=$OUT
expect_eq "run -d: docker says running" true "$(insp "$CID" '{{.State.Running}}')"
PID=$(insp "$CID" '{{.State.Pid}}')
expect_true "run -d: the container's init is alive" pid_alive "$PID"
expect_eq "run -d: the runtime's state says running" running "$(rts "$CID" status)"
expect_eq "run -d: the runtime's state has docker's pid" "$PID" "$(rts "$CID" pid)"
expect_true "run -d: the container is in docker's cgroup under the cgroup-parent" \
  grep -qx "0::$ENG_CGROUP/$CID" "/proc/$PID/cgroup"
if eng_is_kist; then
  timeout 10 "$RT" --root "$RTROOT" report "$CID" > "$T/d.report.json" 2> "$T/d.report.err"
  expect_eq "kist report of the docker container: the policy from runtimeArgs" '["cgroup.*"]' \
    "$(jq -c '.allowDegraded' "$T/d.report.json" 2> /dev/null)"
  expect_eq "kist report: confinement applied" true \
    "$(jq -r '.confinement.applied' "$T/d.report.json" 2> /dev/null)"
  expect_eq "kist report: the prestart hook ran and exited 0" true \
    "$(jq -r '[.layers[] | select(.layer == "hooks.prestart")][0].applied' "$T/d.report.json" 2> /dev/null)"
else
  skip "kist's report of the docker container" "the runtime under test is $RT_NAME, not kist"
fi

# --- exec, top ---------------------------------------------------------------------------------------
dc exec1 exec "$CID" sh -c 'cat /tmp/s; echo exec-out'
expect_eq "exec exits 0" 0 "$RC"
expect_eq "exec: its output, in the container's filesystem" "started
exec-out" "$OUT"
dc exec2 exec "$CID" sh -c 'exit 5'
expect_eq "exec: the command's status (5) is docker's" 5 "$RC"
expect_contains "docker's exec reached the runtime as exec --process --detach" \
  "$(grep ' exec ' "$ARGV_LOG")" "--detach"
eng_tmux_start execit 89 21 \
  "/usr/bin/docker -H unix://$(printf '%q' "$DK_SOCK") exec -it $CID sh -c $(printf '%q' "$TTY_PROBE; exit 7")"
TRC=$(eng_tmux_done execit 30)
S=$(eng_tmux_screen execit)
expect_contains "exec -it: stdin and stdout are a terminal inside" "$S" "TTY-42"
expect_contains "exec -it: the terminal has the caller's size" "$S" "size 21 89"
expect_eq "exec -it: the command's status (7) is docker's" 7 "$TRC"
expect_contains "exec -it: the runtime got exec --tty --console-socket" \
  "$(grep ' exec ' "$ARGV_LOG" | tail -n 1)" "--console-socket"
eng_tmux_stop
dc top top "$CID"
expect_eq "top exits 0" 0 "$RC"
expect_contains "top lists the container's sleep" "$OUT" "sleep 600"
expect_match "top lists the init's pid" "$OUT" "^[^ ]+ +$PID "
expect_true "top called the runtime's ps --format json" grep -q " ps --format json $CID\$" "$ARGV_LOG"

# --- pause / unpause -----------------------------------------------------------------------------------
dc pause pause "$CID"
expect_eq "pause exits 0" 0 "$RC"
expect_eq "pause: docker says paused" true "$(insp "$CID" '{{.State.Paused}}')"
expect_eq "pause: the runtime's state says paused" paused "$(rts "$CID" status)"
expect_eq "pause: the cgroup is frozen" 1 "$(cat "$(cg_of "$CID")/cgroup.freeze" 2> /dev/null)"
expect_true "pause: the kernel says the cgroup is frozen (cgroup.events)" \
  grep -qx 'frozen 1' "$(cg_of "$CID")/cgroup.events"
dc unpause unpause "$CID"
expect_eq "unpause exits 0" 0 "$RC"
expect_eq "unpause: docker says not paused" false "$(insp "$CID" '{{.State.Paused}}')"
expect_eq "unpause: the runtime's state says running" running "$(rts "$CID" status)"
expect_eq "unpause: the cgroup is thawed" 0 "$(cat "$(cg_of "$CID")/cgroup.freeze" 2> /dev/null)"
dc exec3 exec "$CID" echo after-unpause
expect_eq "unpause: exec works again" after-unpause "$OUT"

# --- stop ----------------------------------------------------------------------------------------------------
t0=$SECONDS
dc stop stop -t 20 "$CID"
expect_eq "stop exits 0" 0 "$RC"
expect_true "stop: SIGTERM ended the container (no 20 s wait for SIGKILL)" test $((SECONDS - t0)) -lt 15
expect_eq "stop: docker says not running" false "$(insp "$CID" '{{.State.Running}}')"
expect_eq "stop: the exit code is the trap's 0" 0 "$(insp "$CID" '{{.State.ExitCode}}')"
expect_true "stop: the init is gone" wait_gone "$PID" 5
expect_contains "stop: the runtime got kill ID 15" "$(cat "$ARGV_LOG")" "kill $CID 15"

# --- rm ------------------------------------------------------------------------------------------------------
dc rm rm "$CID"
expect_eq "rm exits 0" 0 "$RC"
dc psa2 ps -aq
expect_eq "rm: no container is left in docker" "" "$OUT"
expect_true "rm: the runtime's state dir is gone" test ! -e "$RTROOT/$CID"
expect_true "rm: the container's cgroup is gone" test ! -e "$(cg_of "$CID")"

# --- run -it (through a pseudo-terminal) -----------------------------------------------------------------------
eng_tmux_start runit 93 25 \
  "/usr/bin/docker -H unix://$(printf '%q' "$DK_SOCK") run -it --rm --network none --name $PREFIX-it \
     $(printf '%q ' "${RUN[@]}") $IMG sh -c $(printf '%q' "$TTY_PROBE; exit 6")"
TRC=$(eng_tmux_done runit 30)
S=$(eng_tmux_screen runit)
expect_contains "run -it: stdin and stdout are a terminal inside" "$S" "TTY-42"
expect_contains "run -it: the terminal has the caller's size" "$S" "size 25 93"
expect_eq "run -it: the command's status (6) is docker's" 6 "$TRC"
expect_contains "run -it: the runtime got create --console-socket" \
  "$(grep ' create ' "$ARGV_LOG" | tail -n 1)" "--console-socket"
eng_tmux_stop
dc psa3 ps -aq
expect_eq "run -it --rm: no container is left in docker" "" "$OUT"

# --- the default bridge network: eth0 from the prestart hook ------------------------------------------------------
dc runbr run -d --name "$PREFIX-br" "${RUN[@]}" "$IMG" sleep 600
expect_eq "run -d on the bridge network exits 0" 0 "$RC"
BID=$OUT
dc ethbr exec "$BID" ip -o -4 addr show dev eth0
expect_contains "bridge: eth0 inside has an address of the test's bridge network" "$OUT" "inet $DK_NET."
dc linkbr exec "$BID" sh -c 'ls /sys/class/net | sort | tr "\n" " "'
expect_eq "bridge: the container's links are lo and eth0" "eth0 lo " "$OUT"
VETH=$(ip -o link show master "$DK_BRIDGE" 2> /dev/null | awk -F': ' '{ sub(/@.*/, "", $2); print $2; exit }')
expect_match "bridge: the host end of the veth is on the test's bridge" "$VETH" '^veth'
dc rmbr rm -f "$BID"
expect_eq "bridge: rm -f exits 0" 0 "$RC"
if [ -n "$VETH" ]; then
  expect_true "bridge: the veth is gone after rm" bash -c "! ip link show $(printf '%q' "$VETH") > /dev/null 2>&1"
fi

# --- teardown ----------------------------------------------------------------------------------------------------
dockerd_stop
expect_true "the test's bridge is gone" bash -c "! ip link show $DK_BRIDGE > /dev/null 2>&1"
ctrd_stop
if [ -d "/sys/fs/cgroup$ENG_CGROUP" ]; then
  expect_eq "every container cgroup was removed by the runtime" "" \
    "$(find "/sys/fs/cgroup$ENG_CGROUP" -mindepth 1 -type d)"
fi
eng_daemons_check_clean docker
