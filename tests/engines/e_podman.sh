#!/bin/bash
# e_podman.sh: podman (+ conmon) with kist as its OCI runtime (issue #9):
# run --rm, run -d, exec, run -it and exec -it in a tmux pty (a terminal
# inside, a window-size change arriving), stop, kill, pause/unpause, top,
# logs, update, rm, --user, --cap-drop all, --read-only, --uidmap, exit
# statuses, the default devices, config errors shown with the runtime's own
# message.  All of podman's state (storage, runroot, tmpdir, locks, events,
# network config) is under $E; containers go into the cgroup $ENG_CGROUP of
# the cgroup2 hierarchy, seen at /sys/fs/cgroup in this test's private mount
# namespace (tests/engines/lib.sh).  --network none, pids_limit 0 and lowered
# ulimits: this host's settings (engines.md).  With kist, the global
# --allow-degraded=cgroup.* (this host's cgroup2 has no controllers) and
# checks that kist's report, state and --log say which limit was not applied.
# KIST_ENGINE_RUNTIME=/usr/sbin/runc runs the same checks against runc.
. "$(dirname "$0")/lib.sh"

eng_init podman podman conmon

mkdir -p "$E/root" "$E/run" "$E/tmp" "$E/net" "$E/volumes"
cat > "$E/containers.conf" <<EOF
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]
pids_limit = 0
netns = "none"
log_driver = "k8s-file"
[engine]
cgroup_manager = "cgroupfs"
events_logger = "file"
events_logfile_path = "$E/events.log"
lock_type = "file"
tmp_dir = "$E/tmp"
volume_path = "$E/volumes"
image_copy_tmp_dir = "$E/tmp"
conmon_path = ["$(command -v conmon)"]
runtime_supports_json = ["$RT_NAME"]
[engine.runtimes]
$RT_NAME = ["$RT"]
[network]
network_config_dir = "$E/net"
EOF
cat > "$E/storage.conf" <<EOF
[storage]
driver = "overlay"
graphroot = "$E/root"
runroot = "$E/run"
EOF
echo 'unqualified-search-registries = []' > "$E/registries.conf"
export CONTAINERS_CONF=$E/containers.conf CONTAINERS_STORAGE_CONF=$E/storage.conf
export CONTAINERS_REGISTRIES_CONF=$E/registries.conf TMPDIR=$E/tmp
unset XDG_RUNTIME_DIR
# Rootful podman passes no --root to its runtime, and its cleanup (conmon's
# exit command, `podman container cleanup`) would not pass a --runtime-flag
# root=: the runtime's state is in its default root, as for any podman user.
# Every container id the test made (the events log) is checked there at the end.
RTROOT=${KIST_ENGINE_RTROOT:-/run/$RT_NAME}
# A default root this test makes is this test's to remove at the end (the
# seccomp cache the runtime keeps there included); one that was there stays.
RTROOT_WAS=
[ -e "$RTROOT" ] && RTROOT_WAS=1
PODMAN_ARGS=(--root "$E/root" --runroot "$E/run" --cgroup-manager cgroupfs --tmpdir "$E/tmp"
  --runtime "$RT")
for g in "${RT_GLOBAL[@]}"; do
  PODMAN_ARGS+=(--runtime-flag "${g#--}")
done
RUN_ARGS=(--network none --cgroup-parent "$ENG_CGROUP")
IMG=localhost/busybox

# pm ARGS...: podman, with a timeout and no stdin.
pm ()
{
  timeout -k 5 60 podman "${PODMAN_ARGS[@]}" "$@" < /dev/null
}

# pc TAG ARGS...: pm capturing into $T/TAG.out/.err; sets RC, OUT, ERR.
pc ()
{
  local tag=$1
  shift
  LAST=$T/$tag
  printf 'podman %s\n' "$*" > "$LAST.cmd"
  pm "$@" > "$LAST.out" 2> "$LAST.err"
  RC=$?
  OUT=$(cat "$LAST.out")
  ERR=$(cat "$LAST.err")
}

# Every container id podman created (its events log), for the final checks.
podman_ids ()
{
  grep -o '"ID":"[0-9a-f]\{64\}"' "$E/events.log" 2> /dev/null | cut -d'"' -f4 | sort -u
}

# podman 4.3 probes for the memory controller (run --memory) by making the
# cgroup /podman_probe at the cgroup2 root, and leaves it there.
PROBE_CG=/sys/fs/cgroup/podman_probe
PROBE_CG_WAS=
[ -d "$PROBE_CG" ] && PROBE_CG_WAS=1

podman_cleanup ()
{
  local left id
  pm rm -a -f -t 0 > /dev/null 2>&1
  [ -z "$PROBE_CG_WAS" ] && [ -d "$PROBE_CG" ] && rmdir "$PROBE_CG" 2> /dev/null
  left=$(eng_wait_gone_matching "$E/" 20) \
    || fail "cleanup: podman's processes end after rm -a -f" "$(describe_pids $left)"
  # A runtime state dir podman did not delete (reported by the final check).
  for id in $(podman_ids); do
    [ -e "$RTROOT/$id" ] && timeout 20 "$RT" --root "$RTROOT" delete --force "$id" > /dev/null 2>&1
  done
  if [ -z "$RTROOT_WAS" ] && [ -d "$RTROOT" ] \
    && [ -z "$(ls -A "$RTROOT" 2> /dev/null | grep -vx -e '~seccomp-cache' -e '~device-program')" ]; then
    rm -rf --one-file-system "$RTROOT"
  fi
}
eng_on_cleanup podman_cleanup

# inspect NAME FORMAT
inspect ()
{
  pm inspect --format "$2" "$1" 2> /dev/null
}

# rt_status ID: the status the runtime's own `state` gives ("" when none).
rt_status ()
{
  timeout 20 "$RT" --root "$RTROOT" state "$1" 2> /dev/null | jq -r .status 2> /dev/null
}

# wait_podman_status NAME STATUS [SECONDS]
wait_podman_status ()
{
  local i n=$(( ${3:-10} * 10 ))
  for ((i = 0; i < n; i++)); do
    [ "$(inspect "$1" '{{.State.Status}}')" = "$2" ] && return 0
    sleep 0.1
  done
  return 1
}

# oci_log_error ID: msg of the last error line of the runtime's --log (JSON).
oci_log_error ()
{
  grep '"level":"error"' "$E/run/overlay-containers/$1/userdata/oci-log" 2> /dev/null \
    | tail -n 1 | jq -r .msg 2> /dev/null
}

# ---- the image ------------------------------------------------------------------------------
eng_rootfs_tar "$T/rootfs.tar"
chg=()
for v in "${ENG_IMAGE_ENV[@]}"; do chg+=(--change "ENV ${v%%=*}=${v#*=}"); done
pc import import "${chg[@]}" --change 'CMD ["sh"]' "$T/rootfs.tar" "$IMG"
if [ "$RC" != 0 ]; then
  fail "podman import of the busybox rootfs" "$ERR"
  exit 1
fi
ok "podman import of the busybox rootfs"

# ---- run --rm: output, stdin not a terminal, /dev/null writable, state gone ------------------
pc run-rm run --rm --cidfile "$T/rm.cid" "${RUN_ARGS[@]}" "$IMG" sh -c '
  echo hello from $(hostname)
  test -t 0 && echo stdin-tty || echo stdin-not-tty
  echo x > /dev/null && echo devnull-writable
  head -c 3 /dev/zero | wc -c | sed "s/^/zero-read=/"
  echo x > /dev/full 2> /dev/null || echo full-enospc
  head -c 8 /dev/urandom | wc -c | sed "s/^/urandom-read=/"'
expect_eq "run --rm: exit status 0" 0 "$RC"
expect_contains "run --rm: the command's output" "$OUT" "hello from"
expect_contains "run --rm: stdin is not a terminal without -t" "$OUT" stdin-not-tty
expect_contains "run --rm: /dev/null is writable" "$OUT" devnull-writable
expect_contains "run --rm: /dev/zero is readable" "$OUT" zero-read=3
expect_contains "run --rm: /dev/full gives ENOSPC" "$OUT" full-enospc
expect_contains "run --rm: /dev/urandom is readable" "$OUT" urandom-read=8
rm_id=$(cat "$T/rm.cid" 2> /dev/null)
expect_eq "run --rm: the runtime's state of the container is gone" "" \
  "$( [ -n "$rm_id" ] && ls -d "$RTROOT/$rm_id" 2> /dev/null)"

# ---- a failing command's exit status ---------------------------------------------------------------
pc run-exit run --rm "${RUN_ARGS[@]}" "$IMG" sh -c 'exit 7'
expect_eq "run --rm: a command's exit status 7 is podman's" 7 "$RC"

# ---- --user, --cap-drop all, --read-only, --uidmap ------------------------------------------------
pc run-user run --rm --user 1000:1000 "${RUN_ARGS[@]}" "$IMG" sh -c 'echo $(id -u):$(id -g)'
expect_eq "run --user 1000:1000" "1000:1000" "$OUT"
pc run-user-name run --rm --user test "${RUN_ARGS[@]}" "$IMG" sh -c 'echo $(id -u):$(id -g)'
expect_eq "run --user test (from the image's /etc/passwd)" "1000:1000" "$OUT"

pc run-capdrop run --rm --cap-drop all "${RUN_ARGS[@]}" "$IMG" sh -c '
  grep -E "^Cap(Inh|Prm|Eff|Bnd|Amb):" /proc/self/status | tr -s "\t " " "
  chown 1 /tmp 2> /dev/null && echo chown-worked || echo chown-denied'
expect_eq "run --cap-drop all: no capability in any set" \
  "CapInh: 0000000000000000
CapPrm: 0000000000000000
CapEff: 0000000000000000
CapBnd: 0000000000000000
CapAmb: 0000000000000000
chown-denied" "$OUT"

pc run-ro run --rm --read-only "${RUN_ARGS[@]}" "$IMG" sh -c '
  touch /x 2>&1
  touch /tmp/y && echo tmp-writable
  awk "\$5 == \"/\" { print \"root-opts=\" \$6 }" /proc/self/mountinfo'
expect_contains "run --read-only: / is read-only" "$OUT" "Read-only file system"
expect_contains "run --read-only: /tmp is a writable tmpfs" "$OUT" tmp-writable
expect_match "run --read-only: / is mounted ro" "$OUT" 'root-opts=ro(,|$)'

pc run-uidmap run --rm --uidmap 0:100000:65536 --gidmap 0:100000:65536 "${RUN_ARGS[@]}" "$IMG" sh -c '
  echo uid_map $(cat /proc/self/uid_map)
  echo gid_map $(cat /proc/self/gid_map)
  echo id $(id -u):$(id -g)
  test -r /sys/fs/cgroup/cgroup.procs && echo cgroup-mounted'
expect_eq "run --uidmap: exit status 0" 0 "$RC"
expect_contains "run --uidmap: uid_map" "$OUT" "uid_map 0 100000 65536"
expect_contains "run --uidmap: gid_map" "$OUT" "gid_map 0 100000 65536"
expect_contains "run --uidmap: root inside" "$OUT" "id 0:0"
expect_contains "run --uidmap: /sys/fs/cgroup is mounted (userns without cgroupns)" "$OUT" cgroup-mounted

# ---- run -d, exec, top, logs, pause/unpause ------------------------------------------------------------
pc run-d run -d --name d1 "${RUN_ARGS[@]}" "$IMG" sh -c '
  echo out-line; echo err-line >&2
  trap "exit 42" USR1
  while :; do sleep 0.2; done'
expect_eq "run -d: exit status 0" 0 "$RC"
d1=$OUT
wait_podman_status d1 running
expect_eq "run -d: podman says running" running "$(inspect d1 '{{.State.Status}}')"
expect_eq "run -d: the runtime's state says running" running "$(rt_status "$d1")"

pc exec exec d1 sh -c 'echo in-exec; cat /proc/1/cmdline | tr "\0" " "'
expect_eq "exec: exit status 0" 0 "$RC"
expect_eq "exec: the command's output" in-exec "$(sed -n 1p <<< "$OUT")"
expect_match "exec: runs in the container (its pid 1 is the container's sh)" "$(sed -n 2p <<< "$OUT")" '^sh -c '
pc exec-status exec d1 sh -c 'exit 5'
expect_eq "exec: a command's exit status 5" 5 "$RC"
pc exec-user exec --user 1000:1000 d1 sh -c 'echo $(id -u):$(id -g)'
expect_eq "exec --user 1000:1000" "1000:1000" "$OUT"
pc exec-env exec -e FOO=bar -w /tmp d1 sh -c 'echo $FOO $(pwd)'
expect_eq "exec -e FOO=bar -w /tmp" "bar /tmp" "$OUT"

pc top top d1
expect_eq "top: exit status 0" 0 "$RC"
expect_match "top: lists the container's sh" "$OUT" 'sh -c'

pc logs logs d1
expect_contains "logs: the container's stdout" "$OUT" out-line
expect_contains "logs: the container's stderr" "$ERR" err-line

pc pause pause d1
expect_eq "pause: exit status 0" 0 "$RC"
expect_eq "pause: podman says paused" paused "$(inspect d1 '{{.State.Status}}')"
expect_eq "pause: the runtime's state says paused" paused "$(rt_status "$d1")"
frozen=$(cat "/sys/fs/cgroup$ENG_CGROUP/libpod-$d1/cgroup.freeze" 2> /dev/null)
expect_eq "pause: the container's cgroup is frozen" 1 "$frozen"
pc unpause unpause d1
expect_eq "unpause: exit status 0" 0 "$RC"
expect_eq "unpause: the runtime's state says running" running "$(rt_status "$d1")"
pc exec-after exec d1 echo thawed
expect_eq "unpause: exec works again" thawed "$OUT"

# ---- update, and the limits this host cannot apply --------------------------------------------------
# This host's cgroup2 has no controllers: runc fails closed on any limit; kist
# with the global --allow-degraded=cgroup.* applies the rest and its report
# says which limit was not applied.
limit_checks ()
{
  local what=$1 id=$2
  if eng_is_kist; then
    expect_eq "$what: succeeds with --allow-degraded=cgroup.* (global)" 0 "$RC"
    "$RT" --root "$RTROOT" report "$id" > "$T/report.json" 2> "$T/report.err"
    expect_eq "$what: kist's report says the memory limit was not applied" false \
      "$(jq -r '.layers[] | select(.layer == "cgroup.memory.max") | .applied' "$T/report.json" 2> /dev/null | head -n 1)"
    expect_eq "$what: kist's report lists it as missing from the limits" true \
      "$(jq -r '.limits.missing | index("cgroup.memory.max") != null' "$T/report.json" 2> /dev/null)"
    expect_contains "$what: the report's allowDegraded is the global option" \
      "$(jq -c .allowDegraded "$T/report.json" 2> /dev/null)" '"cgroup.*"'
  else
    expect_ne "$what: $RT_NAME fails closed (no memory controller here)" 0 "$RC"
    expect_contains "$what: the error names the memory cgroup file" "$ERR" memory
  fi
}

pc update update --memory 128m d1
limit_checks "update --memory 128m" "$d1"
pc run-mem run -d --name m1 --memory 64m "${RUN_ARGS[@]}" "$IMG" sleep 1000
m1=$(inspect m1 '{{.Id}}')
limit_checks "run -d --memory 64m" "$m1"
if eng_is_kist; then
  expect_contains "run -d --memory 64m: kist's --log warns that the limit was not applied" \
    "$(cat "$E/run/overlay-containers/$m1/userdata/oci-log" 2> /dev/null)" cgroup.memory.max
fi
if eng_is_kist; then
  expect_contains "run -d --memory 64m: kist state says the limit was not applied" \
    "$("$RT" --root "$RTROOT" state "$m1" 2>&1)" cgroup.memory.max
fi
pm rm -f -t 0 m1 > /dev/null 2>&1

# ---- kill, stop ------------------------------------------------------------------------------------------
pc kill kill -s USR1 d1
expect_eq "kill -s USR1: exit status 0" 0 "$RC"
wait_podman_status d1 exited
expect_eq "kill -s USR1: the container's trap ran (exit 42)" "exited 42" \
  "$(inspect d1 '{{.State.Status}} {{.State.ExitCode}}')"
pc run-k2 run -d --name k2 "${RUN_ARGS[@]}" "$IMG" sleep 1000
pc kill-9 kill k2
expect_eq "kill (SIGKILL): exit status 0" 0 "$RC"
wait_podman_status k2 exited
expect_eq "kill (SIGKILL): exit code 137" "exited 137" "$(inspect k2 '{{.State.Status}} {{.State.ExitCode}}')"

pc run-s1 run -d --name s1 "${RUN_ARGS[@]}" "$IMG" sh -c 'trap "exit 15" TERM; while :; do sleep 0.2; done'
wait_podman_status s1 running
pc stop stop -t 10 s1
expect_eq "stop: exit status 0" 0 "$RC"
expect_eq "stop: SIGTERM reached the container (its trap exits 15)" "exited 15" \
  "$(inspect s1 '{{.State.Status}} {{.State.ExitCode}}')"
pc run-s2 run -d --name s2 "${RUN_ARGS[@]}" "$IMG" sleep 1000
wait_podman_status s2 running
pc stop-kill stop -t 1 s2
expect_eq "stop -t 1 of a container ignoring SIGTERM: exit status 0" 0 "$RC"
expect_eq "stop -t 1: SIGKILL after the timeout (137)" "exited 137" \
  "$(inspect s2 '{{.State.Status}} {{.State.ExitCode}}')"

# ---- rm --------------------------------------------------------------------------------------------------
ids_rm=$(inspect d1 '{{.Id}}')" "$(inspect k2 '{{.Id}}')" "$(inspect s1 '{{.Id}}')" "$(inspect s2 '{{.Id}}')
pc rm rm d1 k2 s1 s2
expect_eq "rm: exit status 0" 0 "$RC"
expect_eq "rm: podman lists no container" "" "$(pm ps -a -q)"
left=
for id in $ids_rm; do
  [ -e "$RTROOT/$id" ] && left+=" state:$id"
  [ -d "/sys/fs/cgroup$ENG_CGROUP/libpod-$id" ] && left+=" cgroup:libpod-$id"
done
expect_eq "rm: the runtime's state and the containers' cgroups are gone" "" "$left"

# ---- config errors reach the user with the runtime's message -----------------------------------------------
# config_error TAG WHAT STATUS NEEDLE PODMAN-RUN-ARGS...: the run fails with
# STATUS; podman's error shows the last error line of the runtime's --log
# (the runtime's own message), which names the cause (NEEDLE).
config_error ()
{
  local tag=$1 what=$2 status=$3 needle=$4 id msg
  shift 4
  pc "$tag" run --name "$tag" "${RUN_ARGS[@]}" "$@"
  expect_eq "$what: podman exits $status" "$status" "$RC"
  id=$(inspect "$tag" '{{.Id}}')
  msg=$(oci_log_error "$id")
  expect_ne "$what: the runtime logged an error line (--log-format=json)" "" "$msg"
  [ -n "$msg" ] && expect_contains "$what: podman shows the runtime's message" "$ERR" "$msg"
  expect_contains "$what: the message names the cause" "$msg" "$needle"
  pm rm -f -t 0 "$tag" > /dev/null 2>&1
}
config_error cfg-cmd "run of a missing command" 127 /nonexistent-cmd "$IMG" /nonexistent-cmd
config_error cfg-ulimit "run --ulimit nofile above the hard limit" 126 "$(eng_is_kist && echo NOFILE || echo 'rlimit type 7')" \
  --ulimit nofile=30000:30000 "$IMG" true

# ---- terminals: run -it and exec -it in a tmux pseudo-terminal -----------------------------------------------
# The container's stdin is a terminal of the caller's size; a window-size
# change reaches it; the exit status is kept.
# Podman sends no process.consoleSize: the size comes from conmon once podman
# attached, which can be a while after the process starts on a loaded
# machine (over 2 s seen in CI), so the script waits (10 s at most) for a
# size before printing it.
TTY_SCRIPT='test -t 0 && echo TTY-IN
  i=0; while ! stty size > /dev/null 2>&1 && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
  stty size; read x; stty size; exit'
tty_checks ()
{
  local what=$1 name=$2 status=$3 rc nfail=$N_FAIL
  eng_tmux_wait "$name" "24 80" 20
  expect_contains "$what: stdin is a terminal inside (test -t 0)" "$(eng_tmux_screen "$name")" TTY-IN
  expect_contains "$what: the terminal has the caller's size (24 80)" "$(eng_tmux_screen "$name")" "24 80"
  eng_tmux_resize "$name" 100 30
  sleep 0.5
  eng_tmux_keys "$name" go Enter
  eng_tmux_wait "$name" "30 100" 10
  expect_contains "$what: the window-size change arrived (30 100)" "$(eng_tmux_screen "$name")" "30 100"
  rc=$(eng_tmux_done "$name" 20)
  expect_eq "$what: podman exits with the command's status" "$status" "$rc"
  if [ "$N_FAIL" != "$nfail" ]; then
    echo "      (the terminal of $what showed:)"
    eng_tmux_screen "$name" | sed '/^$/d; s/^/      | /'
  fi
}
PM_CMD="podman ${PODMAN_ARGS[*]@Q}"
eng_tmux_start run-it 80 24 "$PM_CMD run -it --rm ${RUN_ARGS[*]@Q} $IMG sh -c ${TTY_SCRIPT@Q}' 3'"
tty_checks "run -it" run-it 3
pc run-t2 run -d --name t2 "${RUN_ARGS[@]}" "$IMG" sleep 1000
eng_tmux_start exec-it 80 24 "$PM_CMD exec -it t2 sh -c ${TTY_SCRIPT@Q}' 4'"
tty_checks "exec -it" exec-it 4
pm rm -f -t 0 t2 > /dev/null 2>&1

# ---- nothing left ---------------------------------------------------------------------------------------------
eng_tmux_stop
podman_cleanup
left=
for id in $(podman_ids); do
  [ -e "$RTROOT/$id" ] && left+=" $RTROOT/$id"
done
expect_eq "every container's runtime state ($RTROOT) is gone" "" "$left"
cm=$(awk -v t="$E/" 'index($5, t) == 1 && $5 ~ /\/merged$|\/userdata\/shm$/ { print $5 }' /proc/self/mountinfo)
expect_eq "no container rootfs or shm mount left in podman's storage" "" "$cm"
eng_umount_under "$E" > /dev/null
eng_check_clean podman
