#!/bin/bash
# t_layers.sh: every layer is required by default (fail closed) and may
# degrade only when named in --allow-degraded.
#
# For each layer: a config where it succeeds (report: applied true), and one
# where it cannot be applied, which must
#   - exit 125, name the layer on stderr, not run the container's code (it
#     would write /mark/ran into a bind-mounted host dir), leave nothing;
#   - with --allow-degraded LAYER: run (marker written), and the report says
#     applied false with a reason, lists the layer as allowed to degrade and
#     as missing from its group.
. "$(dirname "$0")/lib.sh"

MARKER=$MARKDIR/ran
RUN_MARK='echo ran > /mark/ran'

# group_of LAYER: the report group a layer belongs to.
group_of ()
{
  case $1 in
    rlimit.* | cgroup | cgroup.* | oom_score_adj) echo limits ;;
    cwd | hooks | exec | intel_rdt | net_devices) echo other ;;
    *) echo confinement ;;
  esac
}

# good_case NAME LAYER [INSIDE-CHECK-NAME EXPECTED]: run the current C_*
# config (with the marker) and check the layer was applied.  The container
# writes the output of its check to /mark/check.
good_case ()
{
  local name=$1 layer=$2 what=${3:-} expected=${4:-}
  local b id rep=$T/$name.good.json
  rm -f "$MARKER" "$MARKDIR/check"
  b=$(mkbundle "$name-good")
  id=$(new_id "$name-good")
  kc "$name-good" run --report "$rep" --bundle "$b" "$id"
  expect_eq "$name: the good config runs (exit 0)" 0 "$RC"
  expect_true "$name: the good config ran the container code" test -e "$MARKER"
  expect_eq "$name: report says $layer applied" true "$(layer_field "$rep" "$layer" applied)"
  if [ -n "$what" ]; then
    expect_eq "$name: $what" "$expected" "$(cat "$MARKDIR/check" 2> /dev/null)"
  fi
  nothing_left "$name: good config"
}

# bad_case NAME LAYER [HOST-CHECK-COMMAND]: the current C_* config cannot
# apply LAYER.  HOST-CHECK-COMMAND (optional) prints host state that must not
# change (e.g. a sysctl value).
bad_case ()
{
  local name=$1 layer=$2 hostcheck=${3:-}
  local b id rep=$T/$name.bad.json before after group
  [ -n "$hostcheck" ] && before=$(eval "$hostcheck")
  b=$(mkbundle "$name-bad")

  # Fail closed.
  rm -f "$MARKER"
  id=$(new_id "$name-bad")
  kc "$name-bad" run --report "$rep" --bundle "$b" "$id"
  expect_eq "$name: refused with exit 125" 125 "$RC"
  expect_contains "$name: the error names the layer $layer" "$ERR" "$layer"
  expect_true "$name: the container code did not run (no marker)" test ! -e "$MARKER"
  expect_true "$name: no state dir after the refused run" test ! -e "$ROOT/$id"
  nothing_left "$name: refused run"

  # Degrade on request.
  rm -f "$MARKER" "$rep"
  id=$(new_id "$name-degr")
  kc "$name-degr" run --allow-degraded "$layer" --report "$rep" --bundle "$b" "$id"
  expect_eq "$name: with --allow-degraded $layer the run succeeds" 0 "$RC"
  expect_true "$name: with --allow-degraded $layer the container code ran" test -e "$MARKER"
  expect_eq "$name: report says $layer applied false" false "$(layer_field "$rep" "$layer" applied)"
  expect_ne "$name: report gives the reason $layer was not applied" "" "$(layer_field "$rep" "$layer" reason)"
  expect_ne "$name: report says $layer was requested" false "$(layer_field "$rep" "$layer" requested)"
  expect_contains "$name: report lists $layer in allowDegraded" \
    " $(json_list "$rep" allowDegraded | tr '\n' ' ')" " $layer "
  group=$(group_of "$layer")
  if [ "$group" != other ]; then
    expect_eq "$name: report's $group.applied is false" false "$(jget "$rep" "$group.applied")"
    expect_contains "$name: report's $group.missing lists $layer" \
      " $(json_list "$rep" "$group.missing" | tr '\n' ' ')" " $layer "
  fi
  expect_true "$name: the degraded run was deleted" test ! -e "$ROOT/$id"
  if [ -n "$hostcheck" ]; then
    after=$(eval "$hostcheck")
    expect_eq "$name: host state unchanged ($hostcheck)" "$before" "$after"
  fi
  nothing_left "$name: degraded run"
}

# ---- sysctl: a value the kernel rejects -------------------------------------
cfg_reset
with_marker
sh_args "$RUN_MARK; cat /proc/sys/net/ipv4/ip_forward > /mark/check"
C_LINUX_EXTRA=', "sysctl": {"net.ipv4.ip_forward": "1"}'
good_case sysctl sysctl "net.ipv4.ip_forward is 1 inside" 1

cfg_reset
with_marker
sh_args "$RUN_MARK"
C_LINUX_EXTRA=', "sysctl": {"net.ipv4.ip_forward": "banana"}'
bad_case sysctl-banana sysctl "cat /proc/sys/net/ipv4/ip_forward"

# ---- sysctl: not namespaced (kernel.panic) -----------------------------------
# Requests the host's current value, so that even a kist bug writing it to the
# host changes nothing.
cfg_reset
with_marker
sh_args "$RUN_MARK"
C_LINUX_EXTRA=", \"sysctl\": {\"kernel.panic\": \"$(cat /proc/sys/kernel/panic)\"}"
bad_case sysctl-hostwide sysctl "cat /proc/sys/kernel/panic"

# ---- mounts: a bind mount whose source does not exist -----------------------
mkdir -p "$T/bindsrc"
echo bound > "$T/bindsrc/file"
cfg_reset
with_marker
C_MOUNTS_EXTRA+=", $(bind_json "$T/bindsrc" /mnt rbind ro)"
sh_args "$RUN_MARK; cat /mnt/file > /mark/check"
good_case mounts mounts "the bind mount shows the host file" bound

cfg_reset
with_marker
C_MOUNTS_EXTRA+=", $(bind_json "$T/does-not-exist" /mnt rbind ro)"
sh_args "$RUN_MARK"
bad_case mounts-nosrc mounts

# ---- capabilities: an unknown name -------------------------------------------
cfg_reset
with_marker
sh_args "$RUN_MARK; grep CapEff /proc/\$\$/status | cut -f2 > /mark/check"
good_case caps capabilities "CapEff is the default set" 0000000020000420

# A name neither kist nor the kernel knows (a newer kernel's, say) is a grant
# that cannot be given: not granted, said in the report and the log, and the
# container runs, more confined than asked (a restriction would fail closed).
cfg_reset
with_marker
C_CAPS='["CAP_AUDIT_WRITE", "CAP_KILL", "CAP_BOGUS", "CAP_NET_BIND_SERVICE"]'
sh_args "$RUN_MARK; grep CapEff /proc/\$\$/status | cut -f2 > /mark/check"
good_case caps-bogus capabilities "an unknown name: CapEff is the known names only" 0000000020000420
expect_contains "caps-bogus: the report says CAP_BOGUS was not granted" \
  "$(layer_field "$T/caps-bogus.good.json" capabilities detail)" \
  "not granted (a grant that cannot be given leaves the process more confined): CAP_BOGUS in process.capabilities.bounding"
expect_contains "caps-bogus: kist warns that CAP_BOGUS was not granted" "$ERR" \
  "capabilities not granted"

# ---- linux.netDevices: a device kist's network namespace does not have ----------
# (Refused, or degraded on request; nothing is moved.  The moves themselves
# are t_netdev.sh's, in a network namespace of its own: never the host's.)
cfg_reset
with_marker
C_LINUX_EXTRA=', "netDevices": {"kistnone0": {"name": "eth1"}}'
sh_args "$RUN_MARK"
bad_case netdevices net_devices

# ---- rlimits: an unknown type, and a hard limit above the host's ------------
cfg_reset
with_marker
C_RLIMITS='[{"type": "RLIMIT_NOFILE", "hard": 1024, "soft": 512}]'
sh_args "$RUN_MARK; ulimit -n > /mark/check"
good_case rlimit rlimit.RLIMIT_NOFILE "ulimit -n is the soft limit" 512

cfg_reset
with_marker
C_RLIMITS='[{"type": "RLIMIT_NOFILE", "hard": 1024, "soft": 1024}, {"type": "RLIMIT_BOGUS", "hard": 1, "soft": 1}]'
sh_args "$RUN_MARK"
bad_case rlimit-bogus rlimit.RLIMIT_BOGUS

hard=$(ulimit -Hn)
capbnd=$(awk '$1 == "CapBnd:" { print $2 }' /proc/self/status)
if [ "$hard" = unlimited ] || [ "$hard" -ge 1048576 ]; then
  skip "rlimit above the host's hard limit" "the host's hard nofile limit is $hard"
elif (( (16#$capbnd >> 24) & 1 )); then
  skip "rlimit above the host's hard limit" "this host has CAP_SYS_RESOURCE, which may raise it"
else
  cfg_reset
  with_marker
  C_RLIMITS='[{"type": "RLIMIT_NOFILE", "hard": 1048576, "soft": 1024}]'
  sh_args "$RUN_MARK"
  bad_case rlimit-above-host rlimit.RLIMIT_NOFILE
fi

# ---- hostname without a UTS namespace ---------------------------------------
# (This test runs in its own UTS namespace: a kist bug cannot rename the host.)
cfg_reset
with_marker
C_HOSTNAME=kist-layer-uts
sh_args "$RUN_MARK; hostname > /mark/check"
good_case hostname hostname "hostname inside" kist-layer-uts

cfg_reset
with_marker
C_HOSTNAME=kist-layer-nouts
C_NAMESPACES="pid network ipc mount cgroup"
sh_args "$RUN_MARK"
bad_case hostname-nouts hostname "hostname"

# ---- apparmor: not implemented ------------------------------------------------
rep=$T/sysctl.good.json
expect_eq "a config without apparmorProfile: report apparmor requested false" false \
  "$(layer_field "$rep" apparmor requested)"
cfg_reset
with_marker
C_PROCESS_EXTRA=', "apparmorProfile": "kist-test-profile"'
sh_args "$RUN_MARK"
bad_case apparmor apparmor

# ---- seccomp: not implemented yet ----------------------------------------------
expect_eq "a config without linux.seccomp: report seccomp requested false" false \
  "$(layer_field "$rep" seccomp requested)"
cfg_reset
with_marker
C_LINUX_EXTRA=', "seccomp": {"defaultAction": "SCMP_ACT_ALLOW", "architectures": ["SCMP_ARCH_X86_64"],
    "syscalls": [{"names": ["mknod", "mknodat"], "action": "SCMP_ACT_ERRNO"}]}'
sh_args "$RUN_MARK; grep Seccomp: /proc/\$\$/status | cut -f2 > /mark/check"
rm -f "$MARKER" "$MARKDIR/check"
b=$(mkbundle seccomp-probe)
id=$(new_id seccomp-probe)
kc seccomp-probe run --report "$T/seccomp-probe.json" --bundle "$b" "$id"
if [ "$RC" = 0 ] && [ "$(layer_field "$T/seccomp-probe.json" seccomp applied)" = true ]; then
  # Implemented: then it must really be in force.
  expect_eq "seccomp (implemented): Seccomp is 2 (filter) inside" 2 "$(cat "$MARKDIR/check" 2> /dev/null)"
  nothing_left "seccomp: implemented"
else
  sh_args "$RUN_MARK"
  bad_case seccomp seccomp
fi
