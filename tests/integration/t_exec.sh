#!/bin/bash
# t_exec.sh: kist exec into a running container (root and rootless).
. "$(dirname "$0")/lib.sh"

C_ARGS='["sleep", "3141"]'
# The default seccomp profile: the exec'd process must get the filter too.
C_TOP_EXTRA=', "annotations": {"run.kist.seccomp.profile": "default"}'
B=$(mkbundle exec)

id=$(new_id exec)
kc run run --detach --bundle "$B" "$id"
expect_eq "run --detach of the target exits 0" 0 "$RC"
ipid=$(state_field "$id" pid)
if ! pid_alive "$ipid"; then
  fail "the target container runs" "pid: $ipid" "$(_last_err)"
  exit 1
fi

# ---- the process sees the container ----------------------------------------
kc hostname exec "$id" hostname
expect_eq "exec hostname exits 0" 0 "$RC"
expect_eq "exec hostname prints the container's" kist-test "$OUT"

kc status exec "$id" cat /proc/self/status
expect_eq "exec cat /proc/self/status exits 0" 0 "$RC"
field () { awk -v f="$1:" '$1 == f { print $2 }' <<< "$OUT"; }
# config caps: AUDIT_WRITE(29) KILL(5) NET_BIND_SERVICE(10) = 0x20000420
expect_eq "CapEff is the config's" 0000000020000420 "$(field CapEff)"
expect_eq "CapBnd is the config's" 0000000020000420 "$(field CapBnd)"
expect_eq "NoNewPrivs is 1 (config)" 1 "$(field NoNewPrivs)"
expect_eq "the init runs with a seccomp filter" 2 "$(awk '$1 == "Seccomp:" { print $2 }' "/proc/$ipid/status")"
expect_eq "Seccomp is 2 (filter) in the exec'd process" 2 "$(field Seccomp)"

kc nsl exec "$id" sh -c 'for n in mnt pid net uts ipc cgroup user; do readlink /proc/self/ns/$n; done'
want=""
for n in mnt pid net uts ipc cgroup user; do
  want+="$(readlink "/proc/$ipid/ns/$n") "
done
expect_eq "exec readlink /proc/self/ns/* exits 0" 0 "$RC"
expect_eq "every namespace is the init's" "$want" "$(echo $OUT) "
expect_ne "the mount namespace is not the host's" "$(readlink /proc/self/ns/mnt)" \
  "$(readlink "/proc/$ipid/ns/mnt")"

kc pidns exec "$id" sh -c 'echo $$; ps -o pid,args'
expect_eq "exec in the pid namespace exits 0" 0 "$RC"
mypid=$(head -n1 <<< "$OUT")
expect_ne "the exec'd shell is not pid 1" 1 "$mypid"
expect_match "the exec'd shell is a small pid of the container's namespace" "$mypid" '^[0-9]+$'
expect_match "ps inside shows the init (pid 1 sleep 3141)" "$OUT" '(^|\n) *1 +(\S+ +)?sleep 3141'

# ---- flags -------------------------------------------------------------------
kc env exec --env FOO=bar -e HOME=/tmp --cwd /tmp "$id" sh -c 'echo $FOO $HOME; pwd'
expect_eq "exec --env/--cwd exits 0" 0 "$RC"
expect_eq "--env adds, replaces; --cwd" "bar /tmp /tmp" "$(echo $OUT)"

kc user exec --user 1000:1000 "$id" id
expect_eq "exec --user exits 0" 0 "$RC"
expect_match "--user 1000:1000 -> id" "$OUT" '^uid=1000.* gid=1000'

kc cap exec --cap CAP_SYS_ADMIN "$id" cat /proc/self/status
expect_eq "exec --cap exits 0" 0 "$RC"
expect_eq "--cap CAP_SYS_ADMIN is added to CapEff" 0000000020200420 "$(field CapEff)"

# fds: only 0, 1, 2 (and --preserve-fds) reach the process.
LAST=$T/fds
kist exec "$id" sh -c 'ls /proc/$$/fd; true' > "$T/fds.out" 2> "$T/fds.err" 3< /dev/null 7< /dev/null
RC=$?
expect_eq "exec with kist fds 3 and 7 open exits 0" 0 "$RC"
expect_eq "only fds 0 1 2 reach the process" "0 1 2" "$(echo $(sort -n "$T/fds.out"))"
LAST=$T/pfds
kist exec --preserve-fds 1 "$id" sh -c 'ls /proc/$$/fd; true' > "$T/pfds.out" 2> "$T/pfds.err" 3< /dev/null 7< /dev/null
expect_eq "--preserve-fds 1 passes fd 3 on, not 7" "0 1 2 3" "$(echo $(sort -n "$T/pfds.out"))"

kc st7 exec "$id" sh -c 'exit 7'
expect_eq "exit 7 -> kist exec exits 7" 7 "$RC"
kc sig exec "$id" sh -c 'kill -TERM $$'
expect_eq "killed by SIGTERM -> 143" 143 "$RC"

kc missing exec "$id" /no/such/binary
expect_eq "exec of a missing binary -> 127" 127 "$RC"
expect_contains "the error names the binary" "$ERR" "/no/such/binary"

# ---- --detach and --pid-file -------------------------------------------------
kc det exec --detach --pid-file "$T/exec.pid" "$id" sleep 2718
expect_eq "exec --detach exits 0" 0 "$RC"
dpid=$(cat "$T/exec.pid" 2> /dev/null)
if pid_alive "$dpid"; then
  expect_eq "--pid-file holds the host pid of the exec'd process" "sleep 2718 " \
    "$(tr '\0' ' ' < "/proc/$dpid/cmdline")"
  expect_eq "the detached process is in the init's pid namespace" \
    "$(readlink "/proc/$ipid/ns/pid")" "$(readlink "/proc/$dpid/ns/pid")"
  expect_eq "the detached process is in the init's cgroup" "$(grep '^0::' "/proc/$ipid/cgroup")" \
    "$(grep '^0::' "/proc/$dpid/cgroup")"
  kill -KILL "$dpid"
  wait_gone "$dpid" 5
else
  fail "--pid-file names a live process" "pid file: $dpid" "$(_last_err)"
fi

# ---- --process FILE and the report ------------------------------------------
cat > "$T/proc.json" << EOF
{"terminal": false, "user": {"uid": 2000, "gid": 3000}, "args": ["sh", "-c", "id -u; id -g; echo \$XX; pwd"],
 "env": ["PATH=/bin:/usr/bin", "XX=fromfile"], "cwd": "/dev", "noNewPrivileges": true}
EOF
kc proc exec --process "$T/proc.json" --report "$T/exec-report.json" "$id"
expect_eq "exec --process FILE exits 0" 0 "$RC"
expect_eq "--process: user, env, cwd" "2000 3000 fromfile /dev" "$(echo $OUT)"
rep=$T/exec-report.json
expect_eq "report operation is exec" exec "$(jget "$rep" operation)"
expect_eq "report: namespace.pid joined" true "$(layer_field "$rep" namespace.pid applied)"
expect_eq "report: namespace.mount joined" true "$(layer_field "$rep" namespace.mount applied)"
expect_eq "report: user applied" true "$(layer_field "$rep" user applied)"
expect_eq "report: seccomp applied" true "$(layer_field "$rep" seccomp applied)"
expect_eq "report: cgroup applied (joined the scope)" true "$(layer_field "$rep" cgroup applied)"
expect_eq "report: confinement applied" true "$(jget "$rep" confinement.applied)"
expect_eq "report: exec recorded" true "$(layer_field "$rep" exec applied)"
expect_ne "the stored report is still the run's" exec \
  "$(kist report "$id" 2> /dev/null | jflat 2> /dev/null | awk -F'\t' '$1 == "operation" { print $2 }')"

# (t_terminal.sh has the rest of the terminals.)
kc tty exec --tty "$id" sh -c 'test -t 0 && echo IS-TTY'
expect_eq "--tty: exit 0" 0 "$RC"
expect_contains "--tty: the process's stdin is a terminal" "$(tr -d '\r' <<< "$OUT")" "IS-TTY"

# ---- not running -------------------------------------------------------------
kc kill kill "$id" KILL
wait_gone "$ipid" 5
kc stopped exec "$id" true
expect_ne "exec into a stopped container fails" 0 "$RC"
expect_contains "the error says it is stopped" "$ERR" "stopped"

cid=$(new_id exec-created)
kc create create --bundle "$B" "$cid"
kc created exec "$cid" true
expect_ne "exec into a created container fails" 0 "$RC"
kc cdel delete --force "$cid"
kc del delete --force "$id"

# ---- rootless ----------------------------------------------------------------
if nobody_ok "rootless exec"; then
  nobody_dir "$XDG" 0700
  RB=$T/rootless
  nobody_bundle "$RB"
  kn ()
  {
    kn_in "$RB" "$@"
  }
  test_cleanup ()
  {
    kn cleanup delete --force "$rid"
  }
  kn spec spec --rootless
  rootless_config "$RB/config.json" '["sleep", "3141"]' > "$T/rl-config.json"
  cp "$T/rl-config.json" "$RB/config.json"
  rid=$(new_id rl-exec)
  kn rrun run --detach "$rid"
  expect_eq "rootless run --detach exits 0" 0 "$RC"
  kn rexec exec "$rid" sh -c 'id -u; cat /proc/self/uid_map; echo $$'
  expect_eq "rootless exec exits 0" 0 "$RC"
  set -- $OUT
  expect_eq "rootless exec: uid 0 mapped to nobody" "0 0 $NOBODY_UID 1" "$1 $2 $3 $4"
  expect_ne "rootless exec: not pid 1 (in the pid namespace)" 1 "${5:-1}"
  kn rexit exec "$rid" sh -c 'exit 7'
  expect_eq "rootless exec exit 7 -> 7" 7 "$RC"
  kn rdel delete --force "$rid"
  expect_eq "rootless delete --force exits 0" 0 "$RC"
  expect_true "no rootless state dir left" test ! -e "$XDG/kist/$rid"
fi

nothing_left "exec"
