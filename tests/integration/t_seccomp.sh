#!/bin/bash
# t_seccomp.sh: the seccomp layer and the shipped profiles (issue 3).
#
# A static helper, sysprobe (sysprobe.c), is built and copied into each
# bundle's rootfs; `sysprobe NAME` tries one syscall and prints "NAME ok" or
# "NAME errno=ENAME".  A denial counts only if the kernel alone would not have
# made it: every probe batch runs twice with the same capabilities, once with
# the profile and once without seccomp, and a "proof" probe must give another
# result without the filter.  Where the kernel checks the capability first
# (reboot, init_module, swapon, ...) the capability is granted: under
# default.json that opens the capability-gated entries (as in docker), so
# those calls are proven denied by strict.json with the capability, and by
# default.json with arguments the kernel rejects before its capability check
# (mount of a missing path: ENOENT; bpf with an unknown command: EINVAL; ...).
#
# Also: a busybox workload under both profiles, errnoRet and argument
# filters of an inline linux.seccomp (which wins over the annotation),
# SCMP_ACT_KILL (exit 159), TIOCSTI (into a pty, and into the caller's
# terminal), the compiled-filter cache (miss, hit, corrupt entry), and
# SCMP_ACT_NOTIFY with a small agent (notifyd.c).
. "$(dirname "$0")/lib.sh"

PROFILES=$REPO/seccomp-profiles
SYSPROBE=$T/sysprobe
NOTIFYD=$T/notifyd
NOTIFYD_PID=

# The seccomp cache lives under the state root ($ROOT/~seccomp-cache); it is
# not a container's state dir, so remove it before lib.sh looks for leftovers.
_seccomp_cleanup ()
{
  local rc=$?
  if [ -n "$NOTIFYD_PID" ] && kill -0 "$NOTIFYD_PID" 2> /dev/null; then
    kill -KILL "$NOTIFYD_PID" 2> /dev/null
    wait "$NOTIFYD_PID" 2> /dev/null
  fi
  rm -rf --one-file-system "$ROOT/~seccomp-cache"
  (exit "$rc")
  _cleanup
}
trap _seccomp_cleanup EXIT

CC=${CC:-cc}
if ! "$CC" -static -O2 -o "$SYSPROBE" "$IT_DIR/sysprobe.c" > "$T/sysprobe.build" 2>&1; then
  fail "sysprobe builds with $CC -static (needs libc6-dev's libc.a)" "$(cat "$T/sysprobe.build")"
  exit 1
fi
if ! "$CC" -O2 -o "$NOTIFYD" "$IT_DIR/notifyd.c" > "$T/notifyd.build" 2>&1; then
  fail "notifyd builds with $CC" "$(cat "$T/notifyd.build")"
  exit 1
fi
for f in default strict; do
  if [ ! -s "$PROFILES/$f.json" ]; then
    fail "seccomp-profiles/$f.json exists"
    exit 1
  fi
done

# ---- helpers -------------------------------------------------------------------

# pbundle NAME: mkbundle plus /bin/sysprobe in the rootfs.
pbundle ()
{
  local b
  b=$(mkbundle "$1") || return 1
  cp "$SYSPROBE" "$b/rootfs/bin/sysprobe"
  printf '%s' "$b"
}

# with_profile NAME|PATH|"": the run.kist.seccomp.profile annotation (or none).
with_profile ()
{
  if [ -n "$1" ]; then
    C_TOP_EXTRA=", \"annotations\": {\"run.kist.seccomp.profile\": $(json_str "$1")}"
  else
    C_TOP_EXTRA=
  fi
}

# run_probes TAG SPEC...: one container (current C_* config) that runs
# `sysprobe CMD` for every SPEC "LABEL|CMD" and prints "LABEL NAME RESULT"
# lines; then $PROBE_EXTRA (shell).  Sets RC, OUT; report in $T/TAG.report.json.
PROBE_EXTRA=
run_probes ()
{
  local tag=$1 s label cmd script="" b id
  shift
  for s in "$@"; do
    label=${s%%|*}
    cmd=${s#*|}
    script+="printf '%s ' '$label'; sysprobe $cmd; "
  done
  sh_args "$script$PROBE_EXTRA"
  b=$(pbundle "$tag")
  id=$(new_id "$tag")
  kc "$tag" run --report "$T/$tag.report.json" --bundle "$b" "$id"
}

# res OUTPUT LABEL: "ok", an errno name, or "missing".
res ()
{
  local r
  r=$(awk -v l="$2" '$1 == l { print $3; exit }' <<< "$1")
  r=${r#errno=}
  printf '%s' "${r:-missing}"
}

# seccomp_detail TAG: the report's detail for the seccomp layer of run TAG.
seccomp_detail ()
{
  layer_field "$T/$1.report.json" seccomp detail
}

# run_matrix NAME PROFILE SPEC...: SPEC is "LABEL|CMD|EXPECTED|KIND".
# The probes run in one container with PROFILE and in one without seccomp
# (same capabilities).  EXPECTED ("-": anything) is the result under the
# profile.  KIND: proof = the result without seccomp differs (so the filter
# made the denial); proof? = the same, but skipped where the kernel alone
# refuses the call too (user namespaces, io_uring and perf can be disabled
# by sysctls or LSMs); same = identical without seccomp (the filter let it
# through); only = no comparison (the kernel alone refuses it too: proven
# elsewhere with the capability).
run_matrix ()
{
  local name=$1 profile=$2 s label cmd exp kind f p probes=() filtered plain
  shift 2
  for s in "$@"; do
    IFS='|' read -r label cmd exp kind <<< "$s"
    probes+=("$label|$cmd")
  done

  with_profile "$profile"
  run_probes "$name-filtered" "${probes[@]}"
  expect_eq "$name: the probe container ran under $profile (exit 0)" 0 "$RC"
  expect_eq "$name: report says seccomp applied" true \
    "$(layer_field "$T/$name-filtered.report.json" seccomp applied)"
  filtered=$OUT

  with_profile ""
  run_probes "$name-plain" "${probes[@]}"
  expect_eq "$name: the probe container ran without seccomp (exit 0)" 0 "$RC"
  expect_eq "$name: report says seccomp not requested without the annotation" false \
    "$(layer_field "$T/$name-plain.report.json" seccomp requested)"
  plain=$OUT

  for s in "$@"; do
    IFS='|' read -r label cmd exp kind <<< "$s"
    f=$(res "$filtered" "$label")
    p=$(res "$plain" "$label")
    if [ "$exp" != - ]; then
      expect_eq "$name: $cmd gives $exp under $profile" "$exp" "$f"
    fi
    if [ "$kind" = "proof?" ]; then
      if [ "$p" = "$f" ]; then
        skip "$name: $cmd: without seccomp the kernel gives another result" \
          "the kernel alone refuses it here too ($p)"
        continue
      fi
      kind=proof
    fi
    case $kind in
      proof)
        if [ "$p" != "$f" ]; then
          ok "$name: $cmd: without seccomp the kernel gives $p instead, so the filter denied it"
        else
          fail "$name: $cmd: without seccomp the kernel gives another result" \
            "with $profile: $f" "without seccomp: $p" "$plain"
        fi
        ;;
      same)
        expect_eq "$name: $cmd passes the filter (same result as without seccomp)" "$p" "$f"
        ;;
    esac
  done
}

CAPS_DEFAULT='["CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"]'

# ---- 1. the compiled-filter cache ------------------------------------------------
# First with an empty state root: miss, then hit; a corrupted or truncated
# entry is detected, rebuilt, and the filter is still right.
cfg_reset
with_profile default
PROBE_EXTRA='grep "^Seccomp:" /proc/self/status'
cache_probes=("keyctl|keyctl" "getpid|getpid")

run_probes cache1 "${cache_probes[@]}"
expect_eq "cache: first run exits 0" 0 "$RC"
expect_eq "cache: first run: keyctl denied" EPERM "$(res "$OUT" keyctl)"
expect_eq "cache: first run: getpid allowed" ok "$(res "$OUT" getpid)"
expect_match "cache: /proc/self/status in the container says Seccomp: 2" "$OUT" '^Seccomp:[[:space:]]+2$'
d=$(seccomp_detail cache1)
expect_contains "cache: first run: report says cache miss" "$d" "cache miss"
expect_contains "cache: report names the profile" "$d" "profile default"
expect_eq "cache: report's seccomp requested is the profile name" default \
  "$(layer_field "$T/cache1.report.json" seccomp requested)"

run_probes cache2 "${cache_probes[@]}"
expect_eq "cache: second run: keyctl denied" EPERM "$(res "$OUT" keyctl)"
expect_contains "cache: second run with the same --root: report says cache hit" \
  "$(seccomp_detail cache2)" "cache hit"

expect_eq "cache: the cache dir is mode 700" 700 "$(stat -c %a "$ROOT/~seccomp-cache" 2> /dev/null)"
cache_files=("$ROOT"/~seccomp-cache/*.bpf)
if [ -e "${cache_files[0]}" ]; then
  ok "cache: an entry exists in ROOT/~seccomp-cache"
  expect_eq "cache: the entry is mode 600" 600 "$(stat -c %a "${cache_files[0]}")"
  # Overwrite 32 bytes in the middle of every entry (the program area).
  for f in "${cache_files[@]}"; do
    size=$(stat -c %s "$f")
    head -c 32 /dev/zero | tr '\0' '\377' \
      | dd of="$f" bs=1 seek=$((size / 2)) conv=notrunc status=none
  done
  run_probes cache3 "${cache_probes[@]}"
  expect_eq "cache: corrupted entry: the run still exits 0" 0 "$RC"
  d=$(seccomp_detail cache3)
  expect_contains "cache: corrupted entry: report says cache miss" "$d" "cache miss"
  expect_contains "cache: corrupted entry: report says the entry was corrupt" "$d" "corrupt"
  expect_eq "cache: corrupted entry: keyctl still denied (the right filter)" EPERM "$(res "$OUT" keyctl)"
  expect_eq "cache: corrupted entry: getpid still allowed" ok "$(res "$OUT" getpid)"
  run_probes cache4 "${cache_probes[@]}"
  expect_contains "cache: the rebuilt entry is a hit" "$(seccomp_detail cache4)" "cache hit"

  for f in "$ROOT"/~seccomp-cache/*.bpf; do
    truncate -s $(( $(stat -c %s "$f") - 8 )) "$f"
  done
  run_probes cache5 "${cache_probes[@]}"
  expect_contains "cache: truncated entry: report says cache miss" "$(seccomp_detail cache5)" "cache miss"
  expect_eq "cache: truncated entry: keyctl still denied" EPERM "$(res "$OUT" keyctl)"
else
  fail "cache: an entry exists in ROOT/~seccomp-cache" "$(ls -la "$ROOT" "$ROOT/~seccomp-cache" 2>&1)"
fi
PROBE_EXTRA=

# ---- 2. default.json, the default capabilities -------------------------------------
# Calls that need no capability, and calls the kernel rejects for another
# reason before it checks one.
cfg_reset
C_CAPS=$CAPS_DEFAULT
run_matrix default-nocap default \
  "unshare-user|unshare-user|EPERM|proof?" \
  "unshare-usernet|unshare-usernet|EPERM|proof?" \
  "clone-newuser|clone-newuser|EPERM|proof?" \
  "keyctl|keyctl|EPERM|proof" \
  "add_key|add_key|EPERM|proof" \
  "userfaultfd|userfaultfd|EPERM|proof?" \
  "mount-missing|mount /sysprobe-nonexistent|EPERM|proof" \
  "umount2|umount2|EPERM|proof" \
  "setns|setns|EPERM|proof" \
  "bpf-badcmd|bpf-badcmd|EPERM|proof" \
  "perf_event_open-badflags|perf_event_open-badflags|EPERM|proof" \
  "clock_settime|clock_settime|EPERM|proof" \
  "tiocsti|tiocsti|EPERM|proof" \
  "tiocsti-hi|tiocsti-hi|EPERM|proof" \
  "personality6|personality 6|EPERM|proof" \
  "clone3|clone3|ENOSYS|proof" \
  "mount|mount /tmp|EPERM|only" \
  "unshare-net|unshare-net|EPERM|only" \
  "reboot|reboot|EPERM|only" \
  "swapon|swapon|EPERM|only" \
  "bpf|bpf|EPERM|only" \
  "perf_event_open|perf_event_open|EPERM|only" \
  "init_module|init_module|EPERM|only" \
  "kexec_load|kexec_load|EPERM|only" \
  "getpid|getpid|ok|same" \
  "getpid-i386|getpid-i386|-|same" \
  "getpid-x32|getpid-x32|-|same" \
  "fork|fork|ok|same" \
  "unshare-fs|unshare-fs|ok|same" \
  "personality0|personality 0|ok|same" \
  "personality8|personality 8|ok|same" \
  "personality-query|personality 0xffffffff|ok|same" \
  "tcgets|tcgets|ENOTTY|same" \
  "socket-unix|socket-unix|ok|same" \
  "socket-inet|socket-inet|ok|same" \
  "socket-inet6|socket-inet6|-|same" \
  "socket-netlink|socket-netlink|ok|same" \
  "ptrace|ptrace|ESRCH|same" \
  "process_vm_readv|process_vm_readv|ok|same" \
  "io_uring_setup|io_uring_setup|-|same" \
  "name_to_handle_at|name_to_handle_at|-|same" \
  "set_mempolicy|set_mempolicy|-|same"

# TIOCSTI on a terminal where the kernel allows it (a new pty that is the
# probe's controlling terminal).
cfg_reset
with_profile default
run_probes tiocsti-pty "tiocsti-pty|tiocsti-pty"
expect_eq "default: TIOCSTI into a controlling pty is denied" EPERM "$(res "$OUT" tiocsti-pty)"
with_profile ""
run_probes tiocsti-pty-plain "tiocsti-pty|tiocsti-pty"
p=$(res "$OUT" tiocsti-pty)
if [ "$p" = ok ]; then
  ok "default: without seccomp the same TIOCSTI injects a byte, so the filter denied it"
elif [ "$(cat /proc/sys/dev/tty/legacy_tiocsti 2> /dev/null)" = 0 ]; then
  skip "default: TIOCSTI without seccomp injects" "dev.tty.legacy_tiocsti is 0: the kernel refuses TIOCSTI itself"
else
  fail "default: without seccomp the same TIOCSTI injects a byte" "result: $p" "$(_last_err)"
fi

# ---- 3. default.json with capabilities: gates open, the rest stays denied ----------
cfg_reset
C_CAPS='["CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE", "CAP_SYS_ADMIN", "CAP_SYS_BOOT",
  "CAP_BPF", "CAP_PERFMON", "CAP_SYS_MODULE", "CAP_SYS_CHROOT"]'
run_matrix default-caps default \
  "swapon|swapon|EPERM|proof" \
  "swapoff|swapoff|EPERM|proof" \
  "kexec_load|kexec_load|EPERM|proof" \
  "keyctl|keyctl|EPERM|proof" \
  "add_key|add_key|EPERM|proof" \
  "userfaultfd|userfaultfd|EPERM|proof?" \
  "tiocsti-hi|tiocsti-hi|EPERM|proof" \
  "personality6|personality 6|EPERM|proof" \
  "mount|mount /tmp|ok|same" \
  "umount2|umount2|ENOENT|same" \
  "unshare-net|unshare-net|ok|same" \
  "unshare-user|unshare-user|ok|same" \
  "setns|setns|EBADF|same" \
  "clone3|clone3|EINVAL|same" \
  "reboot|reboot|EINVAL|same" \
  "bpf|bpf|-|same" \
  "perf_event_open|perf_event_open|-|same" \
  "init_module|init_module|-|same" \
  "chroot|chroot|ok|same"

# ---- 4. strict.json with capabilities: nothing is gated, more is denied, native ABI only
cfg_reset
C_CAPS='["CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE", "CAP_SYS_ADMIN", "CAP_SYS_BOOT",
  "CAP_BPF", "CAP_PERFMON", "CAP_SYS_MODULE", "CAP_SYS_CHROOT", "CAP_NET_RAW", "CAP_SYS_PTRACE",
  "CAP_SYS_NICE"]'
strict_specs=(
  "mount|mount /tmp|EPERM|proof"
  "unshare-net|unshare-net|EPERM|proof"
  "unshare-user|unshare-user|EPERM|proof"
  "setns|setns|EPERM|proof"
  "reboot|reboot|EPERM|proof"
  "swapon|swapon|EPERM|proof"
  "keyctl|keyctl|EPERM|proof"
  "bpf|bpf|EPERM|proof"
  "perf_event_open|perf_event_open|EPERM|proof?"
  "init_module|init_module|EPERM|proof"
  "ptrace|ptrace|EPERM|proof"
  "process_vm_readv|process_vm_readv|EPERM|proof"
  "socket-packet|socket-packet|EPERM|proof"
  "socket-alg|socket-alg|EPERM|proof"
  "name_to_handle_at|name_to_handle_at|EPERM|proof"
  "set_mempolicy|set_mempolicy|EPERM|proof"
  "personality8|personality 8|EPERM|proof"
  "chroot|chroot|EPERM|proof"
  "tiocsti|tiocsti|EPERM|proof"
  "clone3|clone3|ENOSYS|proof"
  "getpid-i386|getpid-i386|killed=SIGSYS|proof?"
  "getpid-x32|getpid-x32|killed=SIGSYS|proof"
  "getpid|getpid|ok|same"
  "fork|fork|ok|same"
  "unshare-fs|unshare-fs|ok|same"
  "personality0|personality 0|ok|same"
  "personality-query|personality 0xffffffff|ok|same"
  "tcgets|tcgets|ENOTTY|same"
  "socket-unix|socket-unix|ok|same"
  "socket-inet|socket-inet|ok|same"
  "socket-inet6|socket-inet6|-|same"
  "socket-netlink|socket-netlink|ok|same"
  "io_uring_setup|io_uring_setup|EPERM|proof?"
)
run_matrix strict-caps strict "${strict_specs[@]}"

# The same profile by path (the annotation with a '/'), and "none".
cfg_reset
with_profile "$PROFILES/strict.json"
run_probes strict-path "personality8|personality 8" "getpid|getpid"
expect_eq "strict by path: runs (exit 0)" 0 "$RC"
expect_eq "strict by path: personality 8 denied" EPERM "$(res "$OUT" personality8)"
expect_eq "strict by path: getpid allowed" ok "$(res "$OUT" getpid)"
expect_contains "strict by path: report names the path" "$(seccomp_detail strict-path)" "$PROFILES/strict.json"
with_profile none
run_probes profile-none "keyctl|keyctl"
expect_eq "annotation none: runs (exit 0)" 0 "$RC"
expect_eq "annotation none: keyctl is not filtered" ok "$(res "$OUT" keyctl)"
expect_eq "annotation none: report says seccomp not requested" false \
  "$(layer_field "$T/profile-none.report.json" seccomp requested)"

# ---- 5. a busybox workload under both profiles ------------------------------------
WORKLOAD='set -e
ls / > /dev/null
cat /etc/passwd > /dev/null
ps > /dev/null
echo "hello from httpd" > /dev/shm/index.html
httpd -f -p 127.0.0.1:8080 -h /dev/shm & h=$!
i=0
until wget -q -O /dev/shm/got http://127.0.0.1:8080/index.html; do
  i=$((i + 1)); [ $i -lt 50 ]; sleep 0.1
done
echo "wget=$(cat /dev/shm/got)"
kill $h; wait $h || true
dd if=/dev/zero of=/dev/shm/zero bs=1k count=64 2> /dev/null
echo "dd=$(wc -c < /dev/shm/zero)"
sleep 30 & s=$!
kill $s
wait $s || echo "sleep=$?"
mkdir /dev/shm/d && rmdir /dev/shm/d
echo "workload done"'
for prof in default strict; do
  cfg_reset
  with_profile "$prof"
  C_ARGS=$(json_arr sh -c "$WORKLOAD")
  b=$(pbundle "workload-$prof")
  id=$(new_id "workload-$prof")
  kc "workload-$prof" run --report "$T/workload-$prof.report.json" --bundle "$b" "$id"
  expect_eq "workload under $prof: exit 0" 0 "$RC"
  expect_contains "workload under $prof: wget from busybox httpd on 127.0.0.1" "$OUT" "wget=hello from httpd"
  expect_contains "workload under $prof: dd wrote 65536 bytes" "$OUT" "dd=65536"
  expect_contains "workload under $prof: kill ended sleep with SIGTERM" "$OUT" "sleep=143"
  expect_contains "workload under $prof: the script finished" "$OUT" "workload done"
  expect_eq "workload under $prof: seccomp applied" true \
    "$(layer_field "$T/workload-$prof.report.json" seccomp applied)"
done

# ---- 6. inline linux.seccomp: errnoRet and argument filters ---------------------------
cfg_reset
C_LINUX_EXTRA=', "seccomp": {"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [
  {"names": ["add_key"], "action": "SCMP_ACT_ERRNO", "errnoRet": 13},
  {"names": ["personality"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1,
   "args": [{"index": 0, "value": 0, "op": "SCMP_CMP_NE"}]},
  {"names": ["socket"], "action": "SCMP_ACT_ERRNO", "errnoRet": 97,
   "args": [{"index": 0, "value": 10, "op": "SCMP_CMP_EQ"}]},
  {"names": ["unshare"], "action": "SCMP_ACT_ERRNO", "errnoRet": 22,
   "args": [{"index": 0, "value": 268435456, "valueTwo": 268435456, "op": "SCMP_CMP_MASKED_EQ"}]}]}'
run_probes inline \
  "add_key|add_key" "keyctl|keyctl" "personality0|personality 0" "personality8|personality 8" \
  "personality-query|personality 0xffffffff" "socket-inet6|socket-inet6" "socket-inet|socket-inet" \
  "unshare-user|unshare-user" "unshare-usernet|unshare-usernet" "unshare-fs|unshare-fs"
expect_eq "inline: runs (exit 0)" 0 "$RC"
expect_eq "inline: report says seccomp applied" true "$(layer_field "$T/inline.report.json" seccomp applied)"
expect_eq "inline: report's requested is linux.seccomp" linux.seccomp \
  "$(layer_field "$T/inline.report.json" seccomp requested)"
expect_eq "inline: errnoRet 13 on add_key gives EACCES" EACCES "$(res "$OUT" add_key)"
expect_eq "inline: keyctl is not listed: allowed by SCMP_ACT_ALLOW" ok "$(res "$OUT" keyctl)"
expect_eq "inline: personality(PER_LINUX) passes the SCMP_CMP_NE 0 rule" ok "$(res "$OUT" personality0)"
expect_eq "inline: personality(PER_LINUX32) is denied" EPERM "$(res "$OUT" personality8)"
expect_eq "inline: personality(0xffffffff) is denied" EPERM "$(res "$OUT" personality-query)"
expect_eq "inline: socket(AF_INET6) gets errnoRet 97 (EAFNOSUPPORT)" EAFNOSUPPORT "$(res "$OUT" socket-inet6)"
expect_eq "inline: socket(AF_INET) passes the SCMP_CMP_EQ 10 rule" ok "$(res "$OUT" socket-inet)"
expect_eq "inline: unshare(CLONE_NEWUSER) matches the MASKED_EQ rule (EINVAL)" EINVAL "$(res "$OUT" unshare-user)"
expect_eq "inline: unshare(CLONE_NEWUSER|CLONE_NEWNET) matches it too" EINVAL "$(res "$OUT" unshare-usernet)"
expect_eq "inline: unshare(CLONE_FS) does not match it" ok "$(res "$OUT" unshare-fs)"

# defaultErrnoRet, and an inline linux.seccomp wins over the annotation: the
# default profile with defaultErrnoRet 95, next to an annotation for strict.
inline_default=$(sed 's/"defaultErrnoRet": 1,/"defaultErrnoRet": 95,/' "$PROFILES/default.json")
if grep -q '"defaultErrnoRet": 95,' <<< "$inline_default"; then
  cfg_reset
  with_profile strict
  C_LINUX_EXTRA=", \"seccomp\": $inline_default"
  run_probes inline-default "keyctl|keyctl" "personality8|personality 8" "getpid|getpid"
  expect_eq "inline default.json: runs (exit 0)" 0 "$RC"
  expect_eq "inline default.json: defaultErrnoRet 95 for an unlisted syscall (EOPNOTSUPP)" \
    EOPNOTSUPP "$(res "$OUT" keyctl)"
  expect_eq "inline default.json wins over the strict annotation (PER_LINUX32 allowed)" ok \
    "$(res "$OUT" personality8)"
  expect_eq "inline default.json: report's requested is linux.seccomp" linux.seccomp \
    "$(layer_field "$T/inline-default.report.json" seccomp requested)"
else
  fail "default.json has \"defaultErrnoRet\": 1 (for the inline test)"
fi

# ---- 7. SCMP_ACT_KILL and SCMP_ACT_KILL_PROCESS ------------------------------------
cfg_reset
C_LINUX_EXTRA=', "seccomp": {"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [
  {"names": ["keyctl"], "action": "SCMP_ACT_KILL"},
  {"names": ["add_key"], "action": "SCMP_ACT_KILL_PROCESS"}]}'
C_ARGS='["/bin/sysprobe", "keyctl"]'
b=$(pbundle kill)
id=$(new_id kill)
kc kill run --bundle "$b" "$id"
expect_eq "SCMP_ACT_KILL: the container dies of SIGSYS (exit 128+31)" 159 "$RC"
expect_not_contains "SCMP_ACT_KILL: the probe printed nothing" "$OUT" "keyctl"
sh_args 'sysprobe keyctl; echo "keyctl-status=$?"; sysprobe add_key; echo "add_key-status=$?"; echo alive'
b=$(pbundle kill-sh)
id=$(new_id kill-sh)
kc kill-sh run --bundle "$b" "$id"
expect_eq "SCMP_ACT_KILL: the shell around the probe survives (exit 0)" 0 "$RC"
expect_contains "SCMP_ACT_KILL: the shell sees status 159" "$OUT" "keyctl-status=159"
expect_contains "SCMP_ACT_KILL_PROCESS: the shell sees status 159" "$OUT" "add_key-status=159"
expect_contains "SCMP_ACT_KILL: the shell went on" "$OUT" "alive"

# ---- 7b. a filter that lets no execve through: the init's own error -------------------
# run's init goes on into its start (fds, the filter, the check of which
# execve the filter lets through) right after its create's READY, while kist
# still reads the create's layers from outside; an init that fails there
# exits during that read, which then fails too (its /proc/PID/ns links are
# gone).  The error must be the init's, every time, not the read's.
cfg_reset
C_LINUX_EXTRA=', "seccomp": {"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [
  {"names": ["execve", "execveat"], "action": "SCMP_ACT_ERRNO"}]}'
C_ARGS='["/bin/true"]'
b=$(pbundle noexec)
bad=""
for i in 1 2 3 4 5; do
  id=$(new_id "noexec$i")
  kc "noexec$i" run --bundle "$b" "$id"
  if [ "$RC" != 126 ] || ! grep -q "allows neither execve nor execveat" "$LAST.err"; then
    bad+=" run $i: exit $RC: $ERR;"
  fi
done
expect_eq "a filter that denies execve and execveat: run fails with its own error (exit 126), 5 of 5" \
  "" "$bad"
expect_eq "a filter that denies execve and execveat: no state dir left" "" "$(leftover_state)"

# ---- 8. TIOCSTI cannot reach the caller's terminal -----------------------------------
# kist runs on a pty (script(1)); the container's stdin is that terminal.
# After the container, the shell on the pty reads what is pending: a byte
# pushed by TIOCSTI would be there.  Without seccomp (and with
# CAP_SYS_ADMIN, so the kernel allows TIOCSTI on any terminal) it is.
if command -v script > /dev/null; then
  tty_inject ()
  {
    local tag=$1 b id
    b=$(pbundle "$tag")
    id=$(new_id "$tag")
    cat > "$T/$tag.sh" <<EOF
stty -icanon -echo min 0 time 0 2> /dev/null
timeout -k 5 $KIST_IT_TIMEOUT "$KIST" --root "$ROOT" run --bundle "$b" "$id"
echo "run-status=\$?"
sleep 0.2
c=\$(timeout --foreground 2 dd bs=16 count=1 2> /dev/null | tr -d '\\000')
echo "pending=[\$c]"
EOF
    # script's stdin: a FIFO held open read-write, which never reaches EOF
    # (at EOF, script types ^D into the terminal).
    rm -f "$T/tty.in"
    mkfifo "$T/tty.in"
    exec {hold}<> "$T/tty.in"
    timeout -k 5 60 script -qec "bash $T/$tag.sh" /dev/null <&$hold > "$T/$tag.tty" 2>&1
    exec {hold}<&-
    OUT=$(tr -d '\r' < "$T/$tag.tty")
  }
  cfg_reset
  C_CAPS='["CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE", "CAP_SYS_ADMIN"]'
  C_ARGS='["/bin/sysprobe", "tiocsti", "0"]'
  with_profile default
  tty_inject tty-default
  expect_contains "caller's terminal: the container ran" "$OUT" "run-status=0"
  expect_contains "caller's terminal: TIOCSTI denied under default" "$OUT" "tiocsti errno=EPERM"
  expect_contains "caller's terminal: nothing was injected" "$OUT" "pending=[]"
  with_profile ""
  tty_inject tty-plain
  if [[ "$OUT" == *"pending=[x]"* ]]; then
    ok "caller's terminal: without seccomp the same container injects a byte"
  elif [ "$(cat /proc/sys/dev/tty/legacy_tiocsti 2> /dev/null)" = 0 ]; then
    skip "caller's terminal: TIOCSTI without seccomp injects" "dev.tty.legacy_tiocsti is 0"
  else
    fail "caller's terminal: without seccomp the same container injects a byte" "$OUT"
  fi
else
  skip "caller's terminal: TIOCSTI" "script(1) is not installed (bsdutils)"
fi

# ---- 9. SCMP_ACT_NOTIFY ----------------------------------------------------------------
# notifyd receives the listener fd and the state JSON on listenerPath and
# answers the container's mkdir with a fake success: the probe sees "ok" but
# no directory appears (the rootfs is read-only: a real mkdir would fail).
cfg_reset
SOCK=$T/notify.sock
"$NOTIFYD" "$SOCK" "$T/notify.state.json" > "$T/notifyd.out" 2> "$T/notifyd.err" &
NOTIFYD_PID=$!
for ((i = 0; i < 100; i++)); do
  [ -S "$SOCK" ] && break
  sleep 0.05
done
expect_true "notify: the agent listens on its socket" test -S "$SOCK"
C_LINUX_EXTRA=", \"seccomp\": {\"defaultAction\": \"SCMP_ACT_ALLOW\",
  \"listenerPath\": $(json_str "$SOCK"), \"listenerMetadata\": \"kist-it-metadata\",
  \"syscalls\": [{\"names\": [\"mkdir\", \"mkdirat\"], \"action\": \"SCMP_ACT_NOTIFY\"}]}"
PROBE_EXTRA='if [ -e /notified ]; then echo "dir=exists"; else echo "dir=absent"; fi'
run_probes notify "mkdir|mkdir /notified"
PROBE_EXTRA=
expect_eq "notify: the container runs (exit 0)" 0 "$RC"
expect_eq "notify: mkdir got the agent's fake success" ok "$(res "$OUT" mkdir)"
expect_contains "notify: the directory was not created" "$OUT" "dir=absent"
for ((i = 0; i < 100; i++)); do
  kill -0 "$NOTIFYD_PID" 2> /dev/null || break
  sleep 0.05
done
if kill -0 "$NOTIFYD_PID" 2> /dev/null; then
  kill -KILL "$NOTIFYD_PID" 2> /dev/null
fi
wait "$NOTIFYD_PID"
nrc=$?
NOTIFYD_PID=
nout=$(cat "$T/notifyd.out")
expect_eq "notify: the agent exited 0" 0 "$nrc"
expect_contains "notify: the agent got one fd" "$nout" "fds 1"
expect_match "notify: the agent answered a mkdir" "$nout" '^syscall mkdir(at)? nr='
expect_contains "notify: the agent's answer was accepted" "$nout" "answered"
expect_contains "notify: the state JSON carries listenerMetadata" "$nout" "metadata kist-it-metadata"
rpid=$(jget "$T/notify.report.json" pid)
expect_eq "notify: the state JSON's pid is the container's pid" "pid $rpid" "$(grep '^pid ' <<< "$nout")"
expect_contains "notify: the state JSON lists seccompFd" "$(cat "$T/notify.state.json" 2> /dev/null)" '"seccompFd"'
expect_contains "notify: report detail mentions the listener" "$(seccomp_detail notify)" "notify"
[ -s "$T/notifyd.err" ] && fail "notify: the agent printed no error" "$(cat "$T/notifyd.err")"

# ---- a bad profile is a config error: nothing is made ---------------------------------
# The profile is read and parsed with config.json, before the state dir, the
# report, the cgroup or the cache exist: the error names the JSON path, and
# the create leaves nothing, not even a report (kist before this recorded a
# failed seccomp layer in a report of a half-made container).
n_cache=$(ls -A "$ROOT/~seccomp-cache" 2> /dev/null | wc -l)
printf '{"defaultAction": "SCMP_ACT_ERRNO", "syscalls": [{"names": ["read", 7], "action": "SCMP_ACT_ALLOW"}]}' \
  > "$T/bad-profile.json"
bad_profile ()
{
  local tag=$1 needle=$2 b id
  b=$(pbundle "$tag")
  id=$(new_id "$tag")
  rm -f "$T/$tag.report.json"
  kc "$tag" create --report "$T/$tag.report.json" --bundle "$b" "$id"
  expect_eq "bad profile ($tag): create fails with 125" 125 "$RC"
  expect_contains "bad profile ($tag): the error names the JSON path" "$ERR" "$needle"
  expect_not_contains "bad profile ($tag): a config error, not a failed layer" "$ERR" \
    "layer seccomp not applied"
  expect_true "bad profile ($tag): no report was written (no container was begun)" \
    test ! -e "$T/$tag.report.json"
  expect_true "bad profile ($tag): no state dir under --root" test ! -e "$ROOT/$id"
  expect_eq "bad profile ($tag): no cgroup" "" "$(leftover_cgroups)"
}
cfg_reset
C_LINUX_EXTRA=', "seccomp": {"defaultAction": "SCMP_ACT_ERRNO", "syscalls": [
  {"names": ["read"], "action": "SCMP_ACT_ALLOW"},
  {"names": ["write"], "action": "SCMP_ACT_ALOW"}]}'
bad_profile bad-inline 'config.json: linux.seccomp.syscalls[1].action: unknown action `SCMP_ACT_ALOW`'
cfg_reset
C_LINUX_EXTRA=', "seccomp": {"defaultAction": "SCMP_ACT_ERRNO", "syscalls": [
  {"names": ["read"], "action": "SCMP_ACT_ALLOW", "args": [{"index": 7, "value": 0, "op": "SCMP_CMP_EQ"}]}]}'
bad_profile bad-inline-arg 'config.json: linux.seccomp.syscalls[0].args[0].index: must be between 0 and 5'
cfg_reset
with_profile "$T/bad-profile.json"
bad_profile bad-file "seccomp profile \`$T/bad-profile.json\`: syscalls[0].names[1]: expected string"
with_profile no-such-profile
bad_profile bad-builtin 'no built-in seccomp profile `no-such-profile`'
expect_eq "bad profiles: the filter cache was not touched" "$n_cache" \
  "$(ls -A "$ROOT/~seccomp-cache" 2> /dev/null | wc -l)"
cfg_reset

# ---- nothing left ------------------------------------------------------------------
rm -rf --one-file-system "$ROOT/~seccomp-cache"
nothing_left "seccomp tests"
