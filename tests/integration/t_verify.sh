#!/bin/bash
# t_verify.sh: apply inside, verify outside (issue 10).  With
# process.noNewPrivileges false the container's seccomp filter is loaded
# before the user switch and the capability sets (it needs CAP_SYS_ADMIN, as
# in runc); a profile that allows only what the program needs (no open,
# openat, openat2: nothing can read /proc) must not break kist's
# verification.  The parent reads /proc/PID of the waiting process from
# outside and marks an entry applied only when the kernel agrees.
#
# Each case: `kist create` (the init waits at the start barrier with the
# process layers applied), this test reads /proc/PID/status, oom_score_adj,
# limits and stat itself and compares every entry's read-back with what it
# sees (and with the config); then `kist start` and the same for the entries
# of the start (session, a filter loaded last) against the running program.
#
# The allowlist (defaultAction SCMP_ACT_ERRNO), derived with strace and by
# trial (each name left out in turn):
#   busybox-static `sleep`: arch_prctl brk clock_nanosleep execve exit_group
#     mprotect (getrandom getuid prlimit64 readlink rseq set_robust_list
#     set_tid_address are called too; it copes with ERRNO for them);
#   kist after a filter loaded early (noNewPrivileges false): sendmsg recvmsg
#     (report entries, READY, the create's commit), accept4 recvfrom (the
#     start), setgroups setresgid setresuid umask (user), capget capset prctl
#     (capabilities, keep-caps, the parent-death signal), setsid (session),
#     close_range (no host fd at the exec), and one of recvfrom recvmsg read
#     ppoll poll to wait for the parent's word after READY;
#   kist after a filter loaded last (noNewPrivileges true): sendmsg, one of
#     those waits, execve or execveat.
. "$(dirname "$0")/lib.sh"

ALLOW='"arch_prctl", "brk", "clock_nanosleep", "execve", "exit_group", "mprotect",
  "sendmsg", "recvmsg", "accept4", "recvfrom", "setgroups", "setresgid", "setresuid",
  "umask", "capget", "capset", "prctl", "setsid", "close_range"'
for forbidden in open openat openat2 read pread64; do
  expect_not_contains "the allowlist has no $forbidden" "$ALLOW" "\"$forbidden\""
done
# profile [NAME...]: the allowlist without the names given.
profile ()
{
  local list=$ALLOW n
  for n in "$@"; do
    list=$(printf '%s' "$list" | sed -E "s/\"$n\", //; s/, \"$n\"//")
  done
  printf '"seccomp": {"defaultAction": "SCMP_ACT_ERRNO", "architectures": ["SCMP_ARCH_X86_64"],
    "syscalls": [{"names": [%s], "action": "SCMP_ACT_ALLOW"}]}' "$list"
}

# observe PID FILE: what this test reads of PID from outside, KEY=VALUE lines.
observe ()
{
  local pid=$1
  {
    awk '$1 ~ /^(Uid|Gid|Groups|Umask|CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs|Seccomp|Seccomp_filters|NSpid|NSsid):$/ {
           k = substr($1, 1, length($1) - 1); $1 = ""; sub(/^ +/, ""); sub(/ +$/, ""); print k "=" $0 }' \
      "/proc/$pid/status"
    echo "oom=$(cat "/proc/$pid/oom_score_adj")"
    awk '/^Max open files/ { print "nofile=" $4 ":" $5 }' "/proc/$pid/limits"
    echo "tty_nr=$(sed 's/^.*) //' "/proc/$pid/stat" | awk '{ print $5 }')"
  } > "$2"
}
# obs FILE KEY
obs ()
{
  awk -v k="$2" 'index($0, k "=") == 1 { print substr($0, length(k) + 2); exit }' "$1"
}
first () { printf '%s' "${1%% *}"; }

# check_create CASE REPORT PID OBS WANT_UID WANT_GID WANT_GROUPS WANT_UMASK CAPHEX NNP
# Every process entry of the create against what the test read.
check_create ()
{
  local c=$1 rep=$2 pid=$3 o=$4 uid=$5 gid=$6 groups=$7 umask=$8 caps=$9 nnp=${10} d
  # user
  expect_eq "$c: observed Uid (real, effective, saved, fs)" "$uid $uid $uid $uid" "$(obs "$o" Uid)"
  expect_eq "$c: observed Gid" "$gid $gid $gid $gid" "$(obs "$o" Gid)"
  expect_eq "$c: observed Groups" "$groups" "$(obs "$o" Groups)"
  expect_eq "$c: observed Umask" "$umask" "$(obs "$o" Umask)"
  expect_eq "$c: report: user applied" true "$(layer_field "$rep" user applied)"
  local g=$(obs "$o" Groups)
  expect_contains "$c: report: user's read-back is what the test sees" \
    "$(layer_field "$rep" user detail)" \
    "verified from outside: /proc/$pid/status Uid $(first "$(obs "$o" Uid)"), Gid $(first "$(obs "$o" Gid)"), Groups ${g:-none}, Umask $(obs "$o" Umask)"
  # capabilities
  local s
  for s in CapBnd CapEff CapPrm CapInh CapAmb; do
    case $s in
      CapInh | CapAmb) [ "${CAPS_AMBIENT:-}" = 1 ] || { expect_eq "$c: observed $s" 0000000000000000 "$(obs "$o" $s)"; continue; } ;;
    esac
    expect_eq "$c: observed $s" "$caps" "$(obs "$o" $s)"
  done
  expect_eq "$c: report: capabilities applied" true "$(layer_field "$rep" capabilities applied)"
  expect_contains "$c: report: capabilities' read-back is what the test sees" \
    "$(layer_field "$rep" capabilities detail)" \
    "verified from outside: /proc/$pid/status CapBnd $(obs "$o" CapBnd) CapEff $(obs "$o" CapEff) CapPrm $(obs "$o" CapPrm) CapInh $(obs "$o" CapInh) CapAmb $(obs "$o" CapAmb)"
  # no_new_privileges (and seccomp, when it was loaded before the user switch)
  if [ "$nnp" = true ]; then
    expect_eq "$c: observed NoNewPrivs" 1 "$(obs "$o" NoNewPrivs)"
    expect_eq "$c: report: no_new_privileges applied" true "$(layer_field "$rep" no_new_privileges applied)"
    expect_contains "$c: report: no_new_privileges' read-back is what the test sees" \
      "$(layer_field "$rep" no_new_privileges detail)" \
      "verified from outside: /proc/$pid/status NoNewPrivs $(obs "$o" NoNewPrivs)"
    expect_eq "$c: observed Seccomp before start (loaded last)" 0 "$(obs "$o" Seccomp)"
    expect_eq "$c: report: no seccomp entry before start (loaded last)" "" \
      "$(layer_field "$rep" seccomp applied)"
  else
    expect_eq "$c: observed NoNewPrivs" 0 "$(obs "$o" NoNewPrivs)"
    expect_eq "$c: report: no_new_privileges not requested" false \
      "$(layer_field "$rep" no_new_privileges requested)"
    expect_eq "$c: observed Seccomp (loaded early)" 2 "$(obs "$o" Seccomp)"
    expect_eq "$c: observed Seccomp_filters" 1 "$(obs "$o" Seccomp_filters)"
    expect_eq "$c: report: seccomp applied" true "$(layer_field "$rep" seccomp applied)"
    expect_contains "$c: report: seccomp's read-back is what the test sees" \
      "$(layer_field "$rep" seccomp detail)" \
      "verified from outside: /proc/$pid/status Seccomp $(obs "$o" Seccomp), Seccomp_filters $(obs "$o" Seccomp_filters)"
  fi
  # oom_score_adj, rlimit
  expect_eq "$c: observed oom_score_adj" 100 "$(obs "$o" oom)"
  expect_eq "$c: report: oom_score_adj applied" true "$(layer_field "$rep" oom_score_adj applied)"
  expect_eq "$c: report: oom_score_adj's read-back is what the test sees" \
    "/proc/self/oom_score_adj reads back $(obs "$o" oom)" "$(layer_field "$rep" oom_score_adj detail)"
  expect_eq "$c: observed RLIMIT_NOFILE" 1024:2048 "$(obs "$o" nofile)"
  expect_match "$c: report: rlimit.RLIMIT_NOFILE's read-back is what the test sees" \
    "$(layer_field "$rep" rlimit.RLIMIT_NOFILE detail)" \
    "^read back $(obs "$o" nofile); verified from outside: /proc/[0-9]+/limits says $(obs "$o" nofile)\$"
  # complete: nothing pending, nothing missing
  expect_not_contains "$c: report: no entry left unverified" "$(cat "$rep")" "not verified"
  expect_eq "$c: report: confinement applied" true "$(jget "$rep" confinement.applied)"
  expect_eq "$c: report: limits applied" true "$(jget "$rep" limits.applied)"
}

# check_start CASE REPORT PID OBS: the entries of the start, against the
# program that runs now.
check_start ()
{
  local c=$1 rep=$2 pid=$3 o=$4
  expect_eq "$c: observed: the program leads its session (NSsid = NSpid)" \
    "$(first "$(obs "$o" NSpid)")" "$(first "$(obs "$o" NSsid)")"
  expect_eq "$c: observed: no controlling terminal" 0 "$(obs "$o" tty_nr)"
  expect_eq "$c: report: session applied" true "$(layer_field "$rep" session applied)"
  expect_contains "$c: report: session's read-back is what the test sees" \
    "$(layer_field "$rep" session detail)" \
    "verified from outside: /proc/$pid/status NSsid = NSpid $(first "$(obs "$o" NSpid)"), /proc/$pid/stat tty_nr $(obs "$o" tty_nr)"
  expect_eq "$c: observed Seccomp (running)" 2 "$(obs "$o" Seccomp)"
  expect_eq "$c: observed Seccomp_filters (running)" 1 "$(obs "$o" Seccomp_filters)"
  expect_eq "$c: report: seccomp applied" true "$(layer_field "$rep" seccomp applied)"
  expect_contains "$c: report: seccomp's read-back is what the test sees" \
    "$(layer_field "$rep" seccomp detail)" \
    ", Seccomp_filters $(obs "$o" Seccomp_filters)"
  expect_eq "$c: report: exec applied" true "$(layer_field "$rep" exec applied)"
  expect_not_contains "$c: report after start: no entry left unverified" "$(cat "$rep")" "not verified"
}

# run_case CASE NNP UID GID CAPS CAPHEX WANT_GROUPS
run_case ()
{
  local c=$1 nnp=$2 uid=$3 gid=$4 caps=$5 caphex=$6 groups=$7 id b pid
  cfg_reset
  C_NNP=$nnp
  C_UID=$uid
  C_GID=$gid
  C_GIDS='[10, 20]'
  C_UMASK=23 # 0027
  C_CAPS=$caps
  [ "${CAPS_AMBIENT:-}" = 1 ] && C_CAPS_AMBIENT=$caps
  C_RLIMITS='[{"type": "RLIMIT_NOFILE", "hard": 2048, "soft": 1024}]'
  C_PROCESS_EXTRA=', "oomScoreAdj": 100'
  C_ARGS='["sleep", "30"]'
  C_LINUX_EXTRA=", $(profile)"
  b=$(mkbundle "$c")
  id=$(new_id "$c")
  kc "$c-create" create --report "$T/$c.create.json" --bundle "$b" "$id"
  expect_eq "$c: create exits 0" 0 "$RC"
  pid=$(state_field "$id" pid)
  if ! pid_alive "$pid"; then
    fail "$c: the created init is alive" "pid: $pid" "$(_last_err)"
    return
  fi
  observe "$pid" "$T/$c.obs1"
  check_create "$c" "$T/$c.create.json" "$pid" "$T/$c.obs1" "$uid" "$gid" "$groups" 0027 \
    "$caphex" "$nnp"
  kc "$c-start" start "$id"
  expect_eq "$c: start exits 0" 0 "$RC"
  kc "$c-report" report "$id"
  cp "$LAST.out" "$T/$c.start.json"
  if pid_alive "$pid"; then
    observe "$pid" "$T/$c.obs2"
    expect_eq "$c: the program runs (sleep)" sleep "$(cat "/proc/$pid/comm")"
    check_start "$c" "$T/$c.start.json" "$pid" "$T/$c.obs2"
  else
    fail "$c: the started program is alive" "pid: $pid"
  fi

  # exec with the same config: its report against the exec'd process.
  kc "$c-exec" exec -d --pid-file "$T/$c.exec.pid" --report "$T/$c.exec.json" "$id" sleep 20
  expect_eq "$c: exec -d exits 0" 0 "$RC"
  local epid
  epid=$(cat "$T/$c.exec.pid" 2> /dev/null)
  if pid_alive "$epid"; then
    observe "$epid" "$T/$c.obs3"
    expect_eq "$c exec: observed Uid" "$uid $uid $uid $uid" "$(obs "$T/$c.obs3" Uid)"
    expect_contains "$c exec: report: user's read-back is what the test sees" \
      "$(layer_field "$T/$c.exec.json" user detail)" \
      "verified from outside: /proc/$epid/status Uid $uid, Gid $gid"
    expect_contains "$c exec: report: capabilities' read-back is what the test sees" \
      "$(layer_field "$T/$c.exec.json" capabilities detail)" \
      "CapEff $(obs "$T/$c.obs3" CapEff) CapPrm $(obs "$T/$c.obs3" CapPrm)"
    expect_eq "$c exec: observed Seccomp_filters" 1 "$(obs "$T/$c.obs3" Seccomp_filters)"
    expect_contains "$c exec: report: seccomp's read-back is what the test sees" \
      "$(layer_field "$T/$c.exec.json" seccomp detail)" \
      "verified from outside: /proc/$epid/status Seccomp 2, Seccomp_filters $(obs "$T/$c.obs3" Seccomp_filters)"
    expect_contains "$c exec: report: session's read-back is what the test sees" \
      "$(layer_field "$T/$c.exec.json" session detail)" \
      "NSsid = NSpid $(first "$(obs "$T/$c.obs3" NSpid)")"
    expect_not_contains "$c exec: report: no entry left unverified" "$(cat "$T/$c.exec.json")" "not verified"
    kill -KILL "$epid" 2> /dev/null
  else
    fail "$c exec: the exec'd process is alive" "pid: $epid" "$(_last_err)"
  fi
  kist delete --force "$id" > /dev/null 2>&1
}

CAP3='["CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"]'
# ---- 1. root, noNewPrivileges false: the filter before the user switch ---------------
run_case early false 0 0 "$CAP3" 0000000020000420 "10 20"
# ---- 2. a non-root user with one capability (all five sets, so that it survives
#         the exec), noNewPrivileges false --------------------------------------------
CAPS_AMBIENT=1 run_case nonroot false 1000 1000 '["CAP_NET_BIND_SERVICE"]' 0000000000000400 "10 20"
# ---- 3. noNewPrivileges true, the same allowlist: the filter loaded last -------------
run_case late true 0 0 "$CAP3" 0000000020000420 "10 20"

# ---- 4. what only the outside can tell: the filter denies umask, so the umask the
#         config asks for is never set; inside nothing can read it back ----------------
cfg_reset
C_NNP=false
C_UMASK=63 # 0077
C_ARGS='["sleep", "30"]'
C_LINUX_EXTRA=", $(profile umask)"
b=$(mkbundle noumask)
id=$(new_id noumask)
kc noumask create --report "$T/noumask.json" --bundle "$b" "$id"
expect_eq "umask denied: create fails (fail closed)" 125 "$RC"
expect_contains "umask denied: the error says what the outside saw" "$ERR" \
  "layer user not applied: from outside, /proc/"
expect_contains "umask denied: ... the Umask line, not 0077" "$ERR" ", not 0077"
expect_eq "umask denied: report: user not applied" false "$(layer_field "$T/noumask.json" user applied)"
expect_not_contains "umask denied: report: no entry shown applied without its verification" \
  "$(cat "$T/noumask.json")" "not verified from outside yet"
id=$(new_id noumask2)
kc noumask2 create --allow-degraded user --report "$T/noumask2.json" --bundle "$b" "$id"
expect_eq "umask denied, --allow-degraded user: create exits 0" 0 "$RC"
pid=$(state_field "$id" pid)
if pid_alive "$pid"; then
  observe "$pid" "$T/noumask2.obs"
  expect_ne "umask denied: observed Umask is not 0077" 0077 "$(obs "$T/noumask2.obs" Umask)"
  expect_eq "umask denied: report: user not applied" false "$(layer_field "$T/noumask2.json" user applied)"
  expect_contains "umask denied: report: its reason names the Umask the test sees" \
    "$(layer_field "$T/noumask2.json" user reason)" "Umask: $(obs "$T/noumask2.obs" Umask), not 0077"
  expect_eq "umask denied: report: confinement not applied" false "$(jget "$T/noumask2.json" confinement.applied)"
else
  fail "umask denied, degraded: the init is alive" "pid: $pid" "$(_last_err)"
fi
kist delete --force "$id" > /dev/null 2>&1

# ---- 4b. exec's final CPU affinity with a filter loaded early that has neither
#          sched_setaffinity nor sched_getaffinity: kist sets and reads it before
#          any filter, the parent verifies it from outside -----------------------------
cfg_reset
C_NNP=false
C_ARGS='["sleep", "30"]'
C_PROCESS_EXTRA=', "execCPUAffinity": {"final": "0"}'
C_LINUX_EXTRA=", $(profile)"
expect_not_contains "the allowlist has no sched_setaffinity" "$(profile)" sched_setaffinity
b=$(mkbundle affinity)
id=$(new_id affinity)
kc affinity-run run -d --bundle "$b" "$id"
expect_eq "affinity, early filter: run -d exits 0" 0 "$RC"
kc affinity-exec exec -d --pid-file "$T/affinity.pid" --report "$T/affinity.json" "$id" sleep 20
expect_eq "affinity, early filter: exec -d exits 0" 0 "$RC"
epid=$(cat "$T/affinity.pid" 2> /dev/null)
if pid_alive "$epid"; then
  expect_eq "affinity, early filter: the exec'd process runs on CPU 0" 0 \
    "$(awk '/^Cpus_allowed_list:/ { print $2 }' "/proc/$epid/status")"
  expect_eq "affinity, early filter: report: exec_cpu_affinity applied" true \
    "$(layer_field "$T/affinity.json" exec_cpu_affinity applied)"
  expect_contains "affinity, early filter: report: verified from outside" \
    "$(layer_field "$T/affinity.json" exec_cpu_affinity detail)" \
    "verified from outside (sched_getaffinity of pid $epid)"
  kill -KILL "$epid" 2> /dev/null
else
  fail "affinity, early filter: the exec'd process is alive" "pid: $epid" "$(_last_err)"
fi
kist delete --force "$id" > /dev/null 2>&1

# ---- 5. rootless: kist as nobody, a user namespace, the same allowlist ----------------
if nobody_ok "rootless verification"; then
  nobody_dir "$XDG" 0700
  REPDIR=$T/nobody-reports
  nobody_dir "$REPDIR"
  RB=$T/rootless
  nobody_bundle "$RB"
  kn_in "$RB" rspec spec --rootless
  expect_eq "rootless: kist spec --rootless exits 0" 0 "$RC"
  rootless_config "$RB/config.json" '["sleep", "30"]' \
    | sed -E 's#"noNewPrivileges" *: *true#"noNewPrivileges": false, "oomScoreAdj": 100#;
              s#"linux" *: *\{#"linux": {'"$(profile | tr '\n' ' ')"', #' > "$T/rl.json"
  cp "$T/rl.json" "$RB/config.json"
  expect_contains "rootless: the config has the allowlist" "$(cat "$RB/config.json")" SCMP_ACT_ERRNO
  test_cleanup ()
  {
    local i
    for i in "${IDS[@]}"; do
      kn_in "$RB" cleanup delete --force "$i"
    done
  }
  id=$(new_id rootless)
  kn_in "$RB" rcreate create --report "$REPDIR/c.json" "$id"
  expect_eq "rootless: create exits 0" 0 "$RC"
  kn_in "$RB" rstate state "$id"
  pid=$(jflat 2> /dev/null <<< "$OUT" | awk -F'\t' '$1 == "pid" { print $2 }')
  if pid_alive "$pid"; then
    observe "$pid" "$T/rl.obs"
    rep=$REPDIR/c.json
    expect_eq "rootless: observed Uid: container root is nobody outside" \
      "$NOBODY_UID $NOBODY_UID $NOBODY_UID $NOBODY_UID" "$(obs "$T/rl.obs" Uid)"
    expect_eq "rootless: report: user applied" true "$(layer_field "$rep" user applied)"
    g=$(obs "$T/rl.obs" Groups)
    expect_contains "rootless: report: user's read-back is what the test sees" \
      "$(layer_field "$rep" user detail)" \
      "verified from outside: /proc/$pid/status Uid $NOBODY_UID, Gid $NOBODY_GID, Groups ${g:-none}, Umask $(obs "$T/rl.obs" Umask)"
    expect_contains "rootless: report: capabilities' read-back is what the test sees" \
      "$(layer_field "$rep" capabilities detail)" \
      "verified from outside: /proc/$pid/status CapBnd $(obs "$T/rl.obs" CapBnd) CapEff $(obs "$T/rl.obs" CapEff)"
    expect_eq "rootless: observed Seccomp" 2 "$(obs "$T/rl.obs" Seccomp)"
    expect_contains "rootless: report: seccomp's read-back is what the test sees" \
      "$(layer_field "$rep" seccomp detail)" \
      "verified from outside: /proc/$pid/status Seccomp 2, Seccomp_filters $(obs "$T/rl.obs" Seccomp_filters)"
    expect_eq "rootless: report: oom_score_adj's read-back is what the test sees" \
      "/proc/self/oom_score_adj reads back $(obs "$T/rl.obs" oom)" "$(layer_field "$rep" oom_score_adj detail)"
    expect_not_contains "rootless: report: no entry left unverified" "$(cat "$rep")" "not verified"
    kn_in "$RB" rstart start "$id"
    expect_eq "rootless: start exits 0" 0 "$RC"
    kn_in "$RB" rreport report "$id"
    expect_eq "rootless: report after start: session applied" true \
      "$(layer_field "$LAST.out" session applied)"
    expect_contains "rootless: report after start: session verified from outside" \
      "$(layer_field "$LAST.out" session detail)" "verified from outside: /proc/$pid/status NSsid = NSpid $pid"
  else
    fail "rootless: the created init is alive" "pid: $pid" "$(_last_err)"
  fi
  kn_in "$RB" rdelete delete --force "$id"
fi

nothing_left "t_verify"
