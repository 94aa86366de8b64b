#!/bin/bash
# tests/truth/run.sh: the report's truth, measured from outside (issue 10).
#
# For each config of a matrix, runs the real kist with a long-running
# process, takes its report, and compares EVERY entry with what an observer
# outside the container reads (tests/truth/observe.sh: /proc/PID/status, ns
# links, mountinfo, limits, oom_score_adj, cgroup and the scope's files,
# nsenter -u hostname, nsenter -n ip -o link, environ, cwd, the attached
# device program and the seccomp filter through tests/truth/peek.c).  Fails
# on any disagreement, on an entry no rule checks, and on any layer observed
# in force without an entry.  Then deletes the container and checks that
# nothing is left (process, state dir, cgroup, mount).
#
# The matrix: root default (kist spec), user namespace, seccomp none,
# seccomp strict, non-root process.user (run -d), exactly one capability
# (foreground run; its kist is killed to see that the init outlives it),
# degraded limits (--allow-degraded), rootless (nobody, kist spec
# --rootless), sandbox as root (its kist killed: the parent-death signal)
# and as nobody, a hostile allowlist seccomp profile with noNewPrivileges
# false, and a missing controller without --allow-degraded (refused, 125).
#
# Prints ok / FAIL / skip lines and "N passed, N failed, N skipped".
# Needs root.  Environment: KIST (default <repo>/_build/kist).
#   KIST=$PWD/_build/kist bash tests/truth/run.sh [CONFIG...]
set -u
if [ "$(id -u)" != 0 ]; then
  echo "tests/truth/run.sh: needs root (it creates containers and reads their /proc files): skipped"
  echo "0 passed, 0 failed, 1 skipped"
  exit 0
fi
case ${KIST:-} in "" | /*) ;; *) KIST=$PWD/$KIST ;; esac
export KIST
for tool in jq nsenter ip setpriv cc ionice chrt; do
  if ! command -v "$tool" > /dev/null; then
    echo "FAIL  truth: $tool is missing (tests/deps.sh installs it)"
    echo "0 passed, 1 failed, 0 skipped"
    exit 1
  fi
done

TRUTH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# lib.sh re-executes this script in a private mount and UTS namespace, makes
# $T, the rootfs, the counters and the leftover checks.
. "$TRUTH_DIR/../integration/lib.sh"
TEST_NAME=truth
. "$TRUTH_DIR/observe.sh"

ONLY=" $* "
want_config ()
{
  [ "$ONLY" = "  " ] || [[ $ONLY == *" $1 "* ]]
}

OBS_PEEK=$T/peek
if ! cc -O1 -Wall -Wextra -o "$OBS_PEEK" "$TRUTH_DIR/peek.c" 2> "$T/peek.err"; then
  fail "tests/truth/peek.c builds" "$(cat "$T/peek.err")"
  exit 1
fi

# The fd kist's caller hands down without close-on-exec: the container must
# not get it (the close-on-exec sweep), and the report must say so.
OBS_INHERITED_FD=7
INHERIT=$T/inherited-fd
: > "$INHERIT"
OBS_PRESERVED=

# ---------------------------------------------------------------- helpers

REFPID=
# ref_start [nobody]: the reference process, started as kist is (same user,
# namespaces, cgroup, session, stdio and the inherited fd).
ref_start ()
{
  if [ "${1:-}" = nobody ]; then
    "${AS_NOBODY[@]}" sleep 1000 < /dev/null > /dev/null 2> "$T/ref.err" 7> "$INHERIT" &
  else
    sleep 1000 < /dev/null > /dev/null 2> "$T/ref.err" 7> "$INHERIT" &
  fi
  REFPID=$!
  sleep 0.1
}
ref_stop ()
{
  [ -n "$REFPID" ] && kill "$REFPID" 2> /dev/null && wait "$REFPID" 2> /dev/null
  REFPID=
}
test_cleanup ()
{
  local id
  ref_stop
  for id in "${IDS[@]}"; do
    [ -d "$XDG/kist" ] && kn_in "$T" cleanup delete --force "$id"
  done
  [ -n "${SB_KIST:-}" ] && kill -KILL "$SB_KIST" 2> /dev/null
  [ -p "${FIFO:-/nonexistent}" ] && timeout 2 sh -c "echo x > '$FIFO'" 2> /dev/null
  true
}

# spec_config BUNDLE [JQ]: config.json from `kist spec`, with process.args
# sleep, the leftover marker in the environment, then the jq filter JQ.
spec_config ()
{
  local b=$1 f=${2:-.}
  (cd "$b" && "$KIST" spec) || return 1
  jq --arg mark "KIST_IT_MARK=$MARK" \
    '.process.args = ["sleep", "1000"] | .process.env += [$mark] | '"$f" \
    "$b/config.json" > "$b/config.new" && mv "$b/config.new" "$b/config.json"
}

# fresh_bundle NAME: $T/NAME with a copy of the rootfs.
fresh_bundle ()
{
  local b=$T/$1
  rm -rf --one-file-system "$b"
  copy_rootfs "$b"
  printf '%s' "$b"
}

# gone NAME ID [ROOT-CMD]: the container's process, state dir and cgroup are gone.
check_gone ()
{
  local name=$1 id=$2 pid=$3 left=
  wait_gone "$pid" 5 || left+="process $pid; "
  [ ! -e "$ROOT/$id" ] || left+="state dir $ROOT/$id; "
  [ ! -e "$XDG/kist/$id" ] || left+="state dir $XDG/kist/$id; "
  [ ! -e "$CG2/kist/$id" ] || left+="cgroup $CG2/kist/$id; "
  if [ -z "$left" ]; then
    ok "$name: delete left nothing (process, state dir, cgroup)"
  else
    fail "$name: delete left nothing" "$left"
  fi
}

# create_start NAME BUNDLE [CREATE-OPTIONS...]: kist create + start as root;
# sets ID, PID and REP (the stored report after start).
create_start ()
{
  local name=$1 b=$2
  shift 2
  ID=$(new_id "$name")
  PID=
  OBS_SECCOMP_INSNS=
  REP=$T/$name.report.json
  kc "$name-create" create -b "$b" "$@" "$ID" 7> "$INHERIT"
  if [ "$RC" != 0 ]; then
    fail "$name: kist create exits 0" "exit $RC" "$(_last_err)"
    return 1
  fi
  kc "$name-start" start "$ID"
  if [ "$RC" != 0 ]; then
    fail "$name: kist start exits 0" "exit $RC" "$(_last_err)"
    return 1
  fi
  kist report "$ID" > "$REP" 2> "$T/$name.report.err"
  PID=$(jq -r '.pid // empty' "$REP" 2> /dev/null)
  [ -n "$PID" ] || { fail "$name: kist report ID gives the pid" "$(cat "$REP" "$T/$name.report.err")"; return 1; }
  ok "$name: kist create + start, pid $PID"
}

# finish NAME: peek at the seccomp filter, delete, check nothing is left.
finish ()
{
  local name=$1
  peek_seccomp "$name" "$PID"
  kc "$name-delete" delete --force "$ID"
  expect_eq "$name: kist delete --force exits 0" 0 "$RC"
  check_gone "$name" "$ID" "$PID"
  ref_stop
  nothing_left "$name"
}

# run_config NAME JQ [CREATE-OPTIONS...]: a root config from kist spec + JQ.
run_config ()
{
  local name=$1 f=$2 b
  shift 2
  b=$(fresh_bundle "$name")
  spec_config "$b" "$f" || { fail "$name: kist spec"; return; }
  ref_start
  if create_start "$name" "$b" "$@"; then
    observe "$name" "$REP" "$PID" "$b/config.json" "$REFPID" "$(realpath "$b/rootfs")"
    [ -z "${MUTANTS:-}" ] || mutants "$name" "$b"
  fi
  [ -n "${ID:-}" ] && finish "$name"
}

# mutants NAME BUNDLE: the observer must catch a lie.  Each mutant is the
# report of the running container with one entry falsified (or removed); the
# observer, run on it, must fail on that layer.
mutants ()
{
  local name=$1 b=$2 m out i layer f
  local -a list=(
    'hostname|(.layers[] | select(.layer == "hostname") | .requested) = "not-this-one"'
    'capabilities|(.layers[] | select(.layer == "capabilities") | .requested) |= sub("eff=0x[0-9a-f]+"; "eff=0x1")'
    'rlimit.RLIMIT_NOFILE|(.layers[] | select(.layer == "rlimit.RLIMIT_NOFILE") | .requested) = "2048:2048"'
    'namespace.net|(.layers[] | select(.layer == "namespace.net")) |= (.requested = false | .applied = false)'
    'mounts|(.layers[] | select(.layer == "mounts") | .detail) |= sub("/dev/shm tmpfs"; "/dev/shm devpts")'
    'seccomp|(.layers[] | select(.layer == "seccomp")) |= {layer, requested: false, applied: false, detail: "not requested"}'
    'user|(.layers[] | select(.layer == "user") | .requested) |= sub("uid=0 "; "uid=5 ")'
    'environment|(.layers[] | select(.layer == "environment") | .detail) |= sub("^[0-9]+ "; "9 ")'
    'masked_paths|(.layers[] | select(.layer == "masked_paths") | .detail) |= sub("/proc/timer_list;"; "/proc/timer_list /proc/kcore;")'
    'namespace.pid|del(.layers[] | select(.layer == "namespace.pid"))'
    'the mount at /proc|del(.layers[] | select(.layer == "mounts"))'
    'rootfs.readonly|del(.layers[] | select(.layer == "rootfs.readonly"))'
    'cgroup.devices|(.layers[] | select(.layer == "cgroup.devices") | .detail) |= sub("\\(38 insns"; "(37 insns")'
    'landlock|(.layers[] | select(.layer == "landlock")) |= (.requested = true | .applied = true | .detail = "ABI 7; fs: 1 rules (ro /); tcp not restricted (network shared); not scoped; probes: mkdir in /dev/shm denied (EACCES; allowed before)")'
    'no rule|.layers += [{"layer": "made_up", "requested": true, "applied": true}]'
  )
  for i in "${!list[@]}"; do
    layer=${list[$i]%%|*}
    f=${list[$i]#*|}
    m=$T/mutant-$i.json
    if ! jq "$f" "$REP" > "$m" 2> "$m.err" || cmp -s "$m" <(jq . "$REP"); then
      fail "$name: mutant $i ($layer) is a different report" "$(cat "$m.err")"
      continue
    fi
    out=$( (KIST_IT_RESULTS=/dev/null observe "mutant-$i" "$m" "$PID" "$b/config.json" "$REFPID" "$(realpath "$b/rootfs")") 2>&1)
    if grep -E "^FAIL  truth: mutant-$i: .*$layer" <<< "$out" > /dev/null; then
      ok "$name: the observer catches mutant $i: a false $layer entry"
    else
      fail "$name: the observer catches mutant $i: a false $layer entry" "$(grep '^FAIL' <<< "$out" | head -n 5)"
    fi
  done
}

# ---------------------------------------------------------------- the matrix

# 1. root, the configuration of `kist spec`; then the mutants of its report.
if want_config root-default; then
  MUTANTS=1
  run_config root-default .
  MUTANTS=
fi

# 2. root with a user namespace and maps.
want_config userns && run_config userns \
  '.linux.namespaces += [{"type": "user"}]
   | .linux.uidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]
   | .linux.gidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]'

# 3. and 4. seccomp none, and kist's built-in strict profile.
want_config seccomp-none && run_config seccomp-none '.annotations["run.kist.seccomp.profile"] = "none"'
want_config seccomp-strict && run_config seccomp-strict '.annotations["run.kist.seccomp.profile"] = "strict"'

# 5. non-root process.user, with groups, umask, cwd, oomScoreAdj, two
# rlimits; started with run -d and --report FILE.
if want_config nonroot-user; then
  name=nonroot-user
  b=$(fresh_bundle $name)
  spec_config "$b" '.process.user = {"uid": 1000, "gid": 1000, "additionalGids": [10, 20], "umask": 23}
    | .process.cwd = "/tmp" | .process.oomScoreAdj = 300
    | .process.rlimits += [{"type": "RLIMIT_NPROC", "soft": 512, "hard": 1024}]'
  ref_start
  ID=$(new_id $name)
  REP=$T/$name.report.json
  kc "$name-run" run -d --report "$REP" -b "$b" "$ID" 7> "$INHERIT"
  PID=$(jq -r '.pid // empty' "$REP" 2> /dev/null)
  if [ "$RC" = 0 ] && [ -n "$PID" ]; then
    ok "$name: kist run -d --report FILE, pid $PID"
    kist report "$ID" > "$T/$name.stored.json"
    expect_eq "$name: --report FILE is the stored report" "$(jq -S . "$T/$name.stored.json")" "$(jq -S . "$REP")"
    observe "$name" "$REP" "$PID" "$b/config.json" "$REFPID" "$(realpath "$b/rootfs")"
  else
    fail "$name: kist run -d exits 0 with a report" "exit $RC" "$(_last_err)"
  fi
  finish $name
fi

# 6. exactly one capability, in every set; a foreground kist run, killed
# once observed: the container outlives it (no parent-death signal in force).
if want_config one-cap; then
  name=one-cap
  b=$(fresh_bundle $name)
  spec_config "$b" '.process.capabilities = {"bounding": ["CAP_NET_BIND_SERVICE"], "effective": ["CAP_NET_BIND_SERVICE"],
      "permitted": ["CAP_NET_BIND_SERVICE"], "inheritable": ["CAP_NET_BIND_SERVICE"], "ambient": ["CAP_NET_BIND_SERVICE"]}'
  ref_start
  ID=$(new_id $name)
  REP=$T/$name.report.json
  LAST=$T/$name-run
  "$KIST" --root "$ROOT" run --report "$REP" -b "$b" "$ID" < /dev/null > "$LAST.out" 2> "$LAST.err" 7> "$INHERIT" &
  runpid=$!
  PID=
  for _ in $(seq 100); do
    PID=$(jq -r 'select(.layers[-1].layer == "exec" or (.layers | map(.layer) | index("exec"))) | .pid // empty' "$REP" 2> /dev/null)
    [ -n "$PID" ] && break
    sleep 0.1
  done
  if [ -n "$PID" ]; then
    ok "$name: kist run (foreground) --report FILE, pid $PID"
    observe "$name" "$REP" "$PID" "$b/config.json" "$REFPID" "$(realpath "$b/rootfs")"
    pdeath_check "$name" "$runpid" "$PID"
  else
    fail "$name: kist run (foreground) writes its report" "$(cat "$LAST.err")"
    kill "$runpid" 2> /dev/null
  fi
  finish $name
fi

# 7. degraded limits: memory and pids, which this host's cgroup2 lacks, with
# --allow-degraded; hugetlb, which it has, applied.
if want_config degraded-limits; then
  if tr ' ' '\n' < "$CG2/cgroup.controllers" | grep -qx memory; then
    skip "degraded-limits" "this host's cgroup2 has the memory controller: nothing degrades"
  else
    run_config degraded-limits \
      '.linux.resources = {"memory": {"limit": 268435456}, "pids": {"limit": 64},
                           "hugepageLimits": [{"pageSize": "2MB", "limit": 20971520}]}' \
      --allow-degraded cgroup.memory.max,cgroup.pids.max
    if [ -s "$T/degraded-limits.report.json" ]; then
      expect_eq "degraded-limits: limits.missing lists exactly what did not apply" \
        '["cgroup.memory.max","cgroup.pids.max"]' "$(jq -c '.limits.missing | sort' "$T/degraded-limits.report.json")"
      expect_eq "degraded-limits: limits.applied false" false "$(jq -c .limits.applied "$T/degraded-limits.report.json")"
    fi
  fi
fi

# 8. rootless: kist as nobody, the config of `kist spec --rootless`.
if want_config rootless && nobody_ok rootless; then
  name=rootless
  nobody_dir "$XDG" 0700
  b=$T/$name
  nobody_bundle "$b"
  kn_in "$b" spec spec --rootless
  jq --arg mark "KIST_IT_MARK=$MARK" '.process.args = ["sleep", "1000"] | .process.env += [$mark]' \
    "$b/config.json" > "$T/$name.config" && cp "$T/$name.config" "$b/config.json"
  ref_start nobody
  ID=$(new_id $name)
  REP=$T/$name.report.json
  kn_in "$b" "$name-create" create "$ID" 7> "$INHERIT"
  c=$RC
  kn_in "$b" "$name-start" start "$ID"
  kn_in "$b" "$name-report" report "$ID"
  printf '%s\n' "$OUT" > "$REP"
  PID=$(jq -r '.pid // empty' "$REP" 2> /dev/null)
  if [ "$c" = 0 ] && [ -n "$PID" ]; then
    ok "$name: kist create + start as nobody, pid $PID"
    observe "$name" "$REP" "$PID" "$b/config.json" "$REFPID" "$(realpath "$b/rootfs")"
    peek_seccomp "$name" "$PID"
  else
    fail "$name: kist create + start as nobody" "create exit $c" "$(cat "$T/$name-create.err" "$T/$name-start.err")"
  fi
  kn_in "$b" "$name-delete" delete --force "$ID"
  expect_eq "$name: kist delete --force (as nobody) exits 0" 0 "$RC"
  check_gone "$name" "$ID" "${PID:-0}"
  ref_stop
  s=$(ls -A "$XDG/kist" 2> /dev/null | grep -vx '~seccomp-cache')
  expect_eq "$name: nothing left in nobody's state root" "" "$s"
  nothing_left "$name"
fi

# 9. and 10. kist sandbox, as root and as nobody: the command waits on a
# fifo.  As root, its kist is then killed (SIGKILL): the sandbox dies with it
# (parent-death signal), and kist gc removes what is left.
# sandbox_config ARGS-JSON ENV-JSON: the request kist-sandbox(8) makes.
sandbox_config ()
{
  jq -n --argjson a "$1" --argjson e "$2" \
    '{process: {args: $a, env: $e, cwd: "/work", user: {uid: 65534, gid: 65534}, noNewPrivileges: true},
      hostname: "sandbox", root: {readonly: true}, annotations: {"run.kist.seccomp.profile": "strict"}}'
}
sandbox_config_run ()
{
  local name=$1 who=$2 sbroot cmd args sbcfg rc sbid
  FIFO=$T/$name.fifo
  mkfifo "$FIFO"
  chmod 0666 "$FIFO"
  REP=$T/$name.report.json
  nobody_dir "$T/$name.reports" 0755
  REP=$T/$name.reports/report.json
  cmd='read x < /ff; exit 0'
  args=$(json_arr /bin/sh -c "$cmd")
  sbcfg=$T/$name.config
  sandbox_config "$args" '["TRUTH=1"]' > "$sbcfg"
  local opts=(sandbox --ro "$FIFO:/ff" --ro /bin --ro /lib --ro /usr --setenv TRUTH=1 --report "$REP")
  [ -e /lib64 ] && opts+=(--ro /lib64)
  if [ "$who" = nobody ]; then
    nobody_dir "$XDG" 0700
    ref_start nobody
    (cd "$T" && XDG_RUNTIME_DIR=$XDG exec "${AS_NOBODY[@]}" "$KIST" "${opts[@]}" -- /bin/sh -c "$cmd") \
      < /dev/null > "$T/$name.out" 2> "$T/$name.err" 7> "$INHERIT" &
  else
    ref_start
    "$KIST" --root "$ROOT" "${opts[@]}" -- /bin/sh -c "$cmd" < /dev/null > "$T/$name.out" 2> "$T/$name.err" 7> "$INHERIT" &
  fi
  SB_KIST=$!
  PID=
  for _ in $(seq 100); do
    PID=$(jq -r '.pid // empty' "$REP" 2> /dev/null)
    [ -n "$PID" ] && [ "$(readlink "/proc/$PID/ns/mnt")" != "$(readlink /proc/self/ns/mnt)" ] && break
    PID=
    sleep 0.1
  done
  if [ -z "$PID" ]; then
    fail "$name: kist sandbox ($who) writes its report" "$(cat "$T/$name.err")"
    kill -KILL "$SB_KIST" 2> /dev/null
    return
  fi
  ok "$name: kist sandbox as $who, pid $PID"
  # The report's process entries are of the command, the child of kist's
  # init (PID $PID); the init itself holds only the status pipe, with the
  # command's user, no capabilities and no_new_privileges.
  local CMDPID=$PID init_app
  init_app=$(jq -r '.layers[] | select(.layer == "init") | .applied' "$REP")
  if [ "$init_app" = true ]; then
    CMDPID=$(cat "/proc/$PID/task/$PID/children" 2> /dev/null | awk '{ print $1 }')
    expect_ne "$name: kist's init (pid $PID) has the command as its child" "" "$CMDPID"
    local st
    st=$(grep -E '^(Uid|CapEff|CapPrm|NoNewPrivs):' "/proc/$PID/status" | tr -s '\t ' ' ' | tr '\n' ';')
    expect_match "$name: kist's init has the command's uid, no capabilities, no_new_privileges" "$st" \
      "^Uid: ([0-9]+) \\1 \\1 \\1;CapPrm: 0+;CapEff: 0+;NoNewPrivs: 1;$"
    if [ "$who" = root ]; then
      expect_eq "$name: kist's init holds one fd (the status pipe)" 1 "$(ls "/proc/$PID/fd" | wc -l)"
    fi
  fi
  sbroot=$(jq -r '.layers[] | select(.layer == "rootfs.bind") | .detail' "$REP" | sed -E 's/ bound recursively.*//')
  OBS_INIT=$PID observe "$name" "$REP" "$CMDPID" "$sbcfg" "$REFPID" "$sbroot"
  peek_seccomp "$name" "$CMDPID"
  if [ "$who" = root ]; then
    pdeath_check "$name" "$SB_KIST" "$PID"
    SB_KIST=
    kc "$name-gc" gc
    expect_eq "$name: kist gc (the sandbox's kist died) exits 0" 0 "$RC"
  else
    echo go > "$FIFO"
    wait "$SB_KIST"
    rc=$?
    SB_KIST=
    expect_eq "$name: the sandbox exits 0 once the fifo is written" 0 "$rc"
  fi
  wait_gone "$PID" 5
  expect_true "$name: the sandbox's process is gone" bash -c "! kill -0 $PID 2> /dev/null || grep -q '^State:.*Z' /proc/$PID/status"
  sbid=$(jq -r .id "$REP")
  expect_true "$name: no cgroup left ($CG2/kist/$sbid)" test ! -e "$CG2/kist/$sbid"
  expect_true "$name: no sandbox dir left (~sandbox/$sbid)" test ! -e "$ROOT/~sandbox/$sbid" -a ! -e "$XDG/kist/~sandbox/$sbid"
  ref_stop
  sandbox_dirs_empty
  nothing_left "$name"
}
want_config sandbox-root && sandbox_config_run sandbox-root root
if want_config sandbox-nobody && nobody_ok sandbox-nobody; then
  sandbox_config_run sandbox-nobody nobody
fi

# 11. a hostile allowlist profile with noNewPrivileges false: the filter is
# loaded before the user switch and allows exactly what kist's last steps
# and `sleep` need, and no open, openat or openat2 (issue 10).
if want_config hostile-allowlist; then
  allow='["execve", "execveat", "brk", "mmap", "munmap", "mprotect", "arch_prctl", "set_tid_address",
    "set_robust_list", "rseq", "prlimit64", "clock_nanosleep", "nanosleep", "restart_syscall", "exit",
    "exit_group", "rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "futex", "getpid", "gettid",
    "getuid", "geteuid", "getgid", "getegid", "getresuid", "getresgid", "getgroups", "setgroups",
    "setresuid", "setresgid", "setuid", "setgid", "capget", "capset", "prctl", "umask", "setsid",
    "getsid", "read", "write", "sendmsg", "recvmsg", "sendto", "recvfrom", "accept4", "close",
    "close_range", "fcntl", "dup2", "dup3", "fstat", "newfstatat", "poll", "ppoll"]'
  run_config hostile-allowlist \
    '.process.noNewPrivileges = false | del(.annotations["run.kist.seccomp.profile"])
     | .linux.seccomp = {"defaultAction": "SCMP_ACT_ERRNO", "defaultErrnoRet": 1,
         "architectures": ["SCMP_ARCH_X86_64"],
         "syscalls": [{"names": '"$allow"', "action": "SCMP_ACT_ALLOW"}]}'
fi

# 12. a missing controller without --allow-degraded: refused with 125, and
# the report (--report FILE) says exactly what is missing; nothing is left.
if want_config missing-controller; then
  name=missing-controller
  if tr ' ' '\n' < "$CG2/cgroup.controllers" | grep -qx memory; then
    skip "$name" "this host's cgroup2 has the memory controller"
  else
    b=$(fresh_bundle $name)
    spec_config "$b" '.linux.resources = {"memory": {"limit": 268435456}}'
    ID=$(new_id $name)
    REP=$T/$name.report.json
    kc "$name-create" create --report "$REP" -b "$b" "$ID" 7> "$INHERIT"
    expect_eq "$name: create is refused with 125" 125 "$RC"
    expect_contains "$name: the error names the layer" "$ERR" "cgroup.memory.max"
    row=$(jq -c '.layers[] | select(.layer == "cgroup.memory.max")' "$REP" 2> /dev/null)
    expect_eq "$name: the entry: requested 268435456, applied false, EOPNOTSUPP" \
      '"268435456" false "EOPNOTSUPP"' "$(jq -r '[.requested, .applied, .errno] | map(tojson) | join(" ")' <<< "${row:-null}" 2> /dev/null)"
    expect_contains "$name: the reason names the controller missing on this host" \
      "$(jq -r .reason <<< "${row:-null}")" "memory controller not available in the cgroup2 hierarchy at $CG2 (cgroup.controllers: $(cat "$CG2/cgroup.controllers"))"
    expect_eq "$name: limits.missing is exactly [cgroup.memory.max]" '["cgroup.memory.max"]' "$(jq -c .limits.missing "$REP" 2> /dev/null)"
    expect_eq "$name: the report ends with the failed layer" cgroup.memory.max "$(jq -r '.layers[-1].layer' "$REP" 2> /dev/null)"
    expect_eq "$name: no other entry failed" '["cgroup.memory.max"]' \
      "$(jq -c '[.layers[] | select(.requested != false and .applied == false) | .layer]' "$REP" 2> /dev/null)"
    expect_eq "$name: the report has no pid (no init was started)" null "$(jq -c .pid "$REP" 2> /dev/null)"
    kc "$name-state" state "$ID"
    expect_ne "$name: no container is left (kist state fails)" 0 "$RC"
    check_gone "$name" "$ID" 0
    nothing_left "$name"
  fi
fi
