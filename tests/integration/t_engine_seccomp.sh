#!/bin/bash
# t_engine_seccomp.sh: the seccomp profiles of podman, docker and containerd
# give the same filter under kist as under runc (issue #9).
#
# engine-profiles/ holds the profiles as the engines ship them (see its
# README): podman's (containers-common seccomp.json), docker's (moby
# profiles/seccomp/default.json), containerd's (contrib/seccomp, transcribed
# to the same JSON form), and duplicates.json, which names syscalls in
# several entries in every way libseccomp resolves differently.
#
# An engine resolves its profile's includes/excludes (capabilities, arch,
# kernel) and archMap before it sends linux.seccomp to the runtime; `resolve`
# below does the same with jq (moby's setupSeccomp rules, GOARCH amd64 names).
# For every profile one bundle runs a static probe (epr, built here) under
# `runc run` with the resolved profile, and under `kist run` with the resolved
# and with the raw profile (kist evaluates the gating itself).  The probe
# calls a list of syscalls with chosen arguments, each in a fresh child, and
# prints one line per call: "LABEL ok", "LABEL ENAME" or "LABEL killed".
# The outputs must be identical.  Each check can fail: before issue #9, kist
# refused podman's profile (setns both allowed and SCMP_ACT_ERRNO) and
# duplicates.json (several conditions on one argument).
#
# KIST_IT_ENGINE_OUT=DIR keeps the probe outputs (NAME.runc.txt, NAME.kist.txt)
# and the resolved profiles there.
#
# runc gets its own --root under $T, runs in this test's private mount
# namespace with the host's cgroup2 hierarchy bind-mounted over
# /sys/fs/cgroup (never the v1 hierarchies), and is deleted with --force.
. "$(dirname "$0")/lib.sh"

EP=$IT_DIR/engine-profiles
RUNC=${RUNC:-$(command -v runc)}
RUNC_ROOT=$T/runc-root
EPR=$T/epr
RUNC_IDS=()

_engine_cleanup ()
{
  local rc=$? id
  for id in "${RUNC_IDS[@]}"; do
    timeout -k 5 20 "$RUNC" --root "$RUNC_ROOT" delete --force "$id" > /dev/null 2>&1
  done
  if [ -d "$RUNC_ROOT" ] && [ -n "$(ls -A "$RUNC_ROOT" 2> /dev/null)" ]; then
    fail "cleanup: runc left nothing in its --root" "$(ls -A "$RUNC_ROOT")"
  fi
  rm -rf --one-file-system "$ROOT/~seccomp-cache"
  (exit "$rc")
  _cleanup
}
trap _engine_cleanup EXIT

for p in podman docker containerd duplicates; do
  if [ ! -s "$EP/$p.json" ]; then
    fail "engine-profiles/$p.json exists"
    exit 1
  fi
done
if [ -z "$RUNC" ] || ! command -v jq > /dev/null; then
  skip "runc vs kist under the engines' seccomp profiles" "needs runc and jq (apt-get install runc jq)"
  exit 0
fi
if [ "$(uname -m)" != x86_64 ]; then
  skip "runc vs kist under the engines' seccomp profiles" "the probe's syscall numbers are x86_64's"
  exit 0
fi

# ---- the probe -------------------------------------------------------------------
# epr LABEL:NAME[:ARG...] ...: NAME is a syscall name from the table or a
# number; ARGs are numbers (strtoull, base 0; "-1" is all ones).  Every call
# runs in its own child (a successful unshare or personality stays there; a
# successful clone's new process exits at once).
cat > "$T/epr.c" << 'EOF'
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static const struct { const char *name; long nr; } tab[] = {
  { "setns", SYS_setns }, { "unshare", SYS_unshare }, { "clone", SYS_clone },
  { "clone3", SYS_clone3 }, { "personality", SYS_personality }, { "mount", SYS_mount },
  { "umount2", SYS_umount2 }, { "ptrace", SYS_ptrace }, { "keyctl", SYS_keyctl },
  { "add_key", SYS_add_key }, { "bpf", SYS_bpf }, { "open_by_handle_at", SYS_open_by_handle_at },
  { "socket", SYS_socket }, { "chroot", SYS_chroot }, { "acct", SYS_acct },
  { "kcmp", SYS_kcmp }, { "syslog", SYS_syslog }, { "perf_event_open", SYS_perf_event_open },
  { "userfaultfd", SYS_userfaultfd }, { "io_uring_setup", SYS_io_uring_setup },
  { "getpid", SYS_getpid }, { "getppid", SYS_getppid }, { "getpriority", SYS_getpriority },
  { "sethostname", SYS_sethostname }, { "reboot", SYS_reboot }, { "iopl", SYS_iopl },
  { "settimeofday", SYS_settimeofday }, { "vhangup", SYS_vhangup },
  { "process_vm_readv", SYS_process_vm_readv }, { "pidfd_getfd", SYS_pidfd_getfd },
  { "quotactl", SYS_quotactl }, { "fanotify_init", SYS_fanotify_init },
  { "delete_module", SYS_delete_module }, { "mbind", SYS_mbind },
  { "modify_ldt", SYS_modify_ldt }, { "arch_prctl", SYS_arch_prctl },
  { "kexec_load", SYS_kexec_load }, { "lookup_dcookie", SYS_lookup_dcookie },
  { "name_to_handle_at", SYS_name_to_handle_at }, { "fsopen", SYS_fsopen },
  { "close_range", SYS_close_range }, { "faccessat2", SYS_faccessat2 },
};

int
main (int argc, char **argv)
{
  setvbuf (stdout, NULL, _IOLBF, 0);
  for (int i = 1; i < argc; i++)
    {
      char *spec = strdup (argv[i]), *save = NULL;
      const char *label = strtok_r (spec, ":", &save), *name = strtok_r (NULL, ":", &save);
      long nr = -1;
      unsigned long long a[6] = { 0 };
      if (label == NULL || name == NULL)
        return 2;
      for (size_t k = 0; k < sizeof tab / sizeof tab[0]; k++)
        if (strcmp (tab[k].name, name) == 0)
          nr = tab[k].nr;
      if (nr < 0)
        {
          char *end;
          nr = strtol (name, &end, 0);
          if (*end || nr < 0)
            {
              printf ("%s unknown-syscall\n", label);
              continue;
            }
        }
      for (int k = 0; k < 6; k++)
        {
          const char *s = strtok_r (NULL, ":", &save);
          if (s == NULL)
            break;
          a[k] = strcmp (s, "-1") == 0 ? ~0ULL : strtoull (s, NULL, 0);
        }
      pid_t c = fork ();
      if (c < 0)
        return 3;
      if (c == 0)
        {
          pid_t self = getpid ();
          long r = syscall (nr, a[0], a[1], a[2], a[3], a[4], a[5]);
          int e = errno;
          if (r == 0 && getpid () != self)
            _exit (0); /* the new process of a successful clone */
          if (r < 0)
            printf ("%s %s\n", label, strerrorname_np (e) ? strerrorname_np (e) : "E?");
          else
            printf ("%s ok\n", label);
          _exit (0);
        }
      int st;
      if (waitpid (c, &st, 0) < 0)
        return 4;
      if (WIFSIGNALED (st))
        printf ("%s killed\n", label);
      free (spec);
    }
  return 0;
}
EOF
if ! "${CC:-cc}" -static -O2 -Wall -o "$EPR" "$T/epr.c" > "$T/epr.build" 2>&1; then
  fail "the probe builds with ${CC:-cc} -static (needs libc6-dev's libc.a)" "$(cat "$T/epr.build")"
  exit 1
fi

# ---- runc in a cgroup v2 view ------------------------------------------------------
# This test runs in its own mount namespace (run.sh / lib.sh): mount the host's
# cgroup2 hierarchy over /sys/fs/cgroup there, so runc never sees the v1
# hierarchies (/work/shared/engines.md).  Nothing changes for the host.
if [ "$(stat -f -c %T /sys/fs/cgroup)" != cgroup2fs ]; then
  if [ "$(stat -f -c %T /sys/fs/cgroup/unified 2> /dev/null)" = cgroup2fs ]; then
    mount --bind /sys/fs/cgroup/unified /sys/fs/cgroup
  fi
fi
if [ "$(stat -f -c %T /sys/fs/cgroup)" != cgroup2fs ]; then
  skip "runc vs kist under the engines' seccomp profiles" "no cgroup2 hierarchy to give runc"
  exit 0
fi
mkdir -p "$RUNC_ROOT"
chmod 0700 "$RUNC_ROOT"

# ---- profiles --------------------------------------------------------------------
KVER=$(uname -r)

# resolve PROFILE CAPS_JSON: the linux.seccomp an engine (moby's setupSeccomp,
# containers/common's likewise) sends for a container with these bounding caps
# on amd64 and this kernel: archMap -> architectures, includes/excludes
# evaluated and dropped, comment/name dropped.
resolve ()
{
  jq -c --argjson caps "$2" --arg kver "$KVER" '
    def kver($s): $s | capture("^(?<a>[0-9]+)\\.(?<b>[0-9]+)") | [(.a|tonumber), (.b|tonumber)];
    (kver($kver)) as $k
    | def kge($s): (kver($s)) as $m | ($k[0] > $m[0]) or ($k[0] == $m[0] and $k[1] >= $m[1]);
    def has($l; $x): ($l // []) | index([$x]) != null;
    def ok:
      (.excludes // {}) as $x | (.includes // {}) as $i
      | (has($x.arches; "amd64") | not)
      and ([($x.caps // [])[] | select(has($caps; .))] | length == 0)
      and (($x.minKernel // null) == null or (kge($x.minKernel) | not))
      and ((($i.arches // []) | length) == 0 or has($i.arches; "amd64"))
      and ([($i.caps // [])[] | select(has($caps; .) | not)] | length == 0)
      and (($i.minKernel // null) == null or kge($i.minKernel));
    {defaultAction}
    + (if .defaultErrnoRet != null then {defaultErrnoRet} else {} end)
    + (if (.architectures // []) | length > 0 then {architectures}
       else {architectures: ([(.archMap // [])[] | select(.architecture == "SCMP_ARCH_X86_64")
                              | [.architecture] + (.subArchitectures // [])] | add // [])} end)
    + {syscalls: [(.syscalls // [])[] | select(ok)
                  | {names: (.names // [.name]), action}
                    + (if .errnoRet != null then {errnoRet} else {} end)
                    + (if (.args // []) | length > 0 then {args} else {} end)]}' "$1"
}

# The engines' default capabilities (podman 4.3 containers.conf, docker and
# containerd's oci.defaultUnixCaps); probes need none of them beyond that.
CAPS_PODMAN='["CAP_CHOWN","CAP_DAC_OVERRIDE","CAP_FOWNER","CAP_FSETID","CAP_KILL","CAP_NET_BIND_SERVICE","CAP_SETFCAP","CAP_SETGID","CAP_SETPCAP","CAP_SETUID","CAP_SYS_CHROOT"]'
CAPS_DOCKER='["CAP_CHOWN","CAP_DAC_OVERRIDE","CAP_FSETID","CAP_FOWNER","CAP_MKNOD","CAP_NET_RAW","CAP_SETGID","CAP_SETUID","CAP_SETFCAP","CAP_SETPCAP","CAP_NET_BIND_SERVICE","CAP_SYS_CHROOT","CAP_KILL","CAP_AUDIT_WRITE"]'

# x86_64 numbers of calls newer than any of the profiles (cachestat 451,
# fchmodat2 452, map_shadow_stack 453) and one no kernel has: the ENOSYS stub.
PROBES=(
  "setns:setns:-1:0" "unshare_user:unshare:0x10000000" "unshare_ns:unshare:0x20000"
  "unshare_none:unshare:0"
  "clone_plain:clone:17" "clone_user:clone:0x10000011" "clone_ns:clone:0x20011"
  "clone3:clone3:0:0"
  "pers_query:personality:0xffffffff" "pers_linux:personality:0" "pers_8:personality:8"
  "pers_20008:personality:0x20008" "pers_40000:personality:0x40000"
  "pers_hi:personality:0x100000008"
  "mount:mount:0:0:0:0:0" "umount2:umount2:0:0" "ptrace:ptrace:-1:0:0:0"
  "keyctl:keyctl:0:-3:0" "add_key:add_key:0:0:0:0:0" "bpf:bpf:0xffff:0:0"
  "open_by_handle_at:open_by_handle_at:-1:0:0"
  "sock_vsock:socket:40:1:0" "sock_inet:socket:2:2:0" "sock_audit:socket:16:3:9"
  "sock_nl_route:socket:16:3:0" "sock_packet:socket:17:3:0"
  "chroot:chroot:0" "acct:acct:0" "kcmp:kcmp:0:0:0:0:0" "syslog:syslog:10:0:0"
  "perf_event_open:perf_event_open:0:0:0:0:0" "userfaultfd:userfaultfd:-1"
  "io_uring:io_uring_setup:0:0" "getpid:getpid" "getppid:getppid"
  "getpriority:getpriority:0:0" "sethostname:sethostname:0:0" "reboot:reboot:0:0:0:0"
  "iopl:iopl:4" "settimeofday:settimeofday:0:0" "vhangup:vhangup"
  "process_vm_readv:process_vm_readv:0:0:0:0:0:0" "pidfd_getfd:pidfd_getfd:-1:0:0"
  "quotactl:quotactl:0:0:0:0" "fanotify_init:fanotify_init:-1:0"
  "delete_module:delete_module:0:0" "mbind:mbind:0:0:0:0:0:0"
  "modify_ldt:modify_ldt:-1:0:0" "arch_prctl:arch_prctl:0:0"
  "kexec_load:kexec_load:0:0:0:-1" "lookup_dcookie:lookup_dcookie:0:0:0"
  "name_to_handle_at:name_to_handle_at:-1:0:0:0:0" "fsopen:fsopen:0:-1"
  "close_range:close_range:1000:999:0" "faccessat2:faccessat2:-1:0:0:-1"
  "nr451:451:0:0:0:0" "nr452:452:-1:0:0:-1" "nr453:453:0:0:-1" "nr999:999"
  "x32_getpid:0x40000027"
)

# One bundle for all runs: the probe in the rootfs, config from lib.sh's
# defaults (what both runtimes accept), the capabilities and the profile
# given per run.
BUNDLE=$(mkbundle engine) || exit 1
cp "$EPR" "$BUNDLE/rootfs/bin/epr"

# config CAPS SECCOMP_JSON: write $BUNDLE/config.json.
config ()
{
  cfg_reset
  C_CAPS=$1
  C_ARGS=$(json_arr /bin/epr "${PROBE_LIST[@]}")
  C_LINUX_EXTRA=", \"seccomp\": $2"
  mkconfig > "$BUNDLE/config.json"
}

# under_runc TAG: run the bundle under runc; output in $T/TAG.out.
under_runc ()
{
  local id="$PREFIX-r$1"
  RUNC_IDS+=("$id")
  (cd "$BUNDLE" && timeout -k 5 "$KIST_IT_TIMEOUT" "$RUNC" --root "$RUNC_ROOT" \
    --systemd-cgroup=false run --no-new-keyring "$id" < /dev/null > "$T/$1.out" 2> "$T/$1.err")
  RC=$?
  timeout -k 5 20 "$RUNC" --root "$RUNC_ROOT" delete --force "$id" > /dev/null 2>&1
  OUT=$(cat "$T/$1.out")
}

# under_kist TAG: the same under kist run.
under_kist ()
{
  local id
  id=$(new_id "k$1")
  kc "$1" run --report "$T/$1.report.json" --bundle "$BUNDLE" "$id"
}

# same_as_runc WHAT RUNC_OUTPUT: kist's $OUT is runc's, else the diff.
same_as_runc ()
{
  if [ "$OUT" == "$2" ]; then
    ok "$1"
  else
    fail "$1" "$(diff <(printf '%s\n' "$2") <(printf '%s\n' "$OUT") | sed 's/^</runc/; s/^>/kist/')"
  fi
}

# compare NAME PROFILE CAPS: runc with the resolved profile, kist with the
# resolved and with the raw one; the probe outputs must be the same.
compare ()
{
  local name=$1 raw=$2 caps=$3 resolved runc_out
  resolved=$(resolve "$raw" "$caps") || {
    fail "$name: jq resolves $raw"
    return
  }
  printf '%s\n' "$resolved" > "$T/$name.resolved.json"

  config "$caps" "$resolved"
  under_runc "$name-runc"
  expect_eq "$name: runc runs the probe under the resolved profile (exit 0)" 0 "$RC"
  runc_out=$OUT
  if [ "$RC" != 0 ] || [ "$(wc -l <<< "$runc_out")" != "${#PROBE_LIST[@]}" ]; then
    fail "$name: runc printed one line per probe" "$runc_out" "$(tail -c 1500 "$T/$name-runc.err")"
    return
  fi
  printf '%s\n' "$runc_out" > "$T/$name.runc.txt"

  under_kist "$name-kist"
  expect_eq "$name: kist runs the probe under the resolved profile (exit 0)" 0 "$RC"
  expect_eq "$name: kist's report says seccomp applied (resolved profile)" true \
    "$(layer_field "$T/$name-kist.report.json" seccomp applied)"
  printf '%s\n' "$OUT" > "$T/$name.kist.txt"
  if [ -n "${KIST_IT_ENGINE_OUT:-}" ]; then
    cp "$T/$name.runc.txt" "$T/$name.kist.txt" "$T/$name.resolved.json" "$KIST_IT_ENGINE_OUT/"
  fi
  same_as_runc "$name: kist and runc give every probe the same result (resolved profile)" \
    "$runc_out"

  config "$caps" "$(cat "$raw")"
  under_kist "$name-kraw"
  expect_eq "$name: kist runs the probe under the raw profile (exit 0)" 0 "$RC"
  same_as_runc "$name: kist with the raw profile (its own includes/excludes) gives runc's results" \
    "$runc_out"
}

# ---- 1. the engines' profiles ------------------------------------------------------
PROBE_LIST=("${PROBES[@]}")
compare podman "$EP/podman.json" "$CAPS_PODMAN"
compare docker "$EP/docker.json" "$CAPS_DOCKER"
compare containerd "$EP/containerd.json" "$CAPS_DOCKER"
# podman's socket rules and setns depend on CAP_AUDIT_WRITE and CAP_SYS_ADMIN.
compare podman-docker-caps "$EP/podman.json" "$CAPS_DOCKER"

# The probes see a difference where the profiles make one (so that "the same
# output" is not "nothing was filtered").
p_setns=$(awk '$1 == "setns" { print $2 }' "$T/podman.runc.txt" 2> /dev/null)
d_setns=$(awk '$1 == "setns" { print $2 }' "$T/docker.runc.txt" 2> /dev/null)
expect_eq "podman: setns is allowed (the first, unconditional SCMP_ACT_ALLOW wins)" EBADF "$p_setns"
expect_eq "docker: setns is denied without CAP_SYS_ADMIN" EPERM "$d_setns"
expect_eq "podman: socket(AF_NETLINK, NETLINK_AUDIT) without CAP_AUDIT_WRITE gets errnoRet 22" \
  EINVAL "$(awk '$1 == "sock_audit" { print $2 }' "$T/podman.runc.txt" 2> /dev/null)"
expect_eq "docker: clone with CLONE_NEWUSER is denied (masked argument rule)" EPERM \
  "$(awk '$1 == "clone_user" { print $2 }' "$T/docker.runc.txt" 2> /dev/null)"

# ---- 2. duplicates, the way libseccomp resolves them -------------------------------
# duplicates.json: personality, getpriority and socket in several entries;
# probes around every value it names.
PROBE_LIST=(
  "pers_0:personality:0" "pers_8:personality:8" "pers_9:personality:9" "pers_ff:personality:0xffffffff"
  "pers_20000:personality:0x20000" "pers_20008:personality:0x20008" "pers_40000:personality:0x40000"
  "pers_1:personality:1" "prio_0_0:getpriority:0:0" "prio_1_0:getpriority:1:0"
  "prio_2_0:getpriority:2:0" "prio_0_5:getpriority:0:5" "prio_1_5:getpriority:1:5"
  "prio_3_0:getpriority:3:0" "sock_unix:socket:1:1:0" "sock_inet:socket:2:1:0"
  "sock_inet6:socket:10:1:0" "sock_nl:socket:16:3:0" "sock_vsock:socket:40:1:0"
  "sock_packet:socket:17:3:0" "setns:setns:-1:0" "unshare:unshare:0" "getppid:getppid"
  "kcmp:kcmp:0:0:0:0:0" "umount2:umount2:0:0" "chroot:chroot:0" "syslog:syslog:10:0:0"
)
compare duplicates "$EP/duplicates.json" "$CAPS_DOCKER"

# ---- 3. what libseccomp refuses, both refuse -----------------------------------------
# A conditional rule that widens an earlier one with another action: EEXIST.
PROBE_LIST=("getpid:getpid")
config "$CAPS_DOCKER" '{"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [
  {"names": ["syslog"], "action": "SCMP_ACT_ERRNO", "errnoRet": 13,
   "args": [{"index": 0, "value": 10, "op": "SCMP_CMP_EQ"}, {"index": 1, "value": 0, "op": "SCMP_CMP_EQ"}]},
  {"names": ["syslog"], "action": "SCMP_ACT_ERRNO", "errnoRet": 5,
   "args": [{"index": 0, "value": 10, "op": "SCMP_CMP_EQ"}]}]}'
under_runc conflict-runc
expect_ne "conflict: runc refuses a conditional rule that widens an earlier one with another action" 0 "$RC"
expect_contains "conflict: runc's error is libseccomp's EEXIST" "$(cat "$T/conflict-runc.err")" "file exists"
under_kist conflict-kist
expect_ne "conflict: kist refuses it too" 0 "$RC"
expect_contains "conflict: kist's error names both entries and the fix" "$ERR" \
  'syscalls[1]: libseccomp refuses the conditional SCMP_ACT_ERRNO(5) for `syslog`: its conditions overlap those of syscalls[0], which gives SCMP_ACT_ERRNO(13)'
