#!/bin/bash
# t_conformance.sh: the runtime-spec 1.2 rules of tests/conformance/SPEC.md
# that no other test checks: config rules kist must refuse (exit 125, the
# config path named, nothing left), operations without an id, a config
# changed after create, what delete must leave alone, oom_score_adj left as
# inherited, and kist's documented deviations (no mount namespace, update
# with both --resources and flags, RTMIN+n, --systemd-cgroup, a busy cgroup).
. "$(dirname "$0")/lib.sh"

CG2=$LO_CG2
HOLDER=
BUSY=
CG_PARENT=
CG_BUSY=
test_cleanup ()
{
  local p
  for p in $HOLDER $BUSY; do
    kill -KILL "$p" 2> /dev/null
    wait "$p" 2> /dev/null
  done
  [ -n "$CG_BUSY" ] && rmdir "$CG_BUSY" 2> /dev/null
  [ -n "$CG_PARENT" ] && rmdir "$CG_PARENT" 2> /dev/null
  return 0
}

# config_refused WHAT NEEDLE-ERE: `create` of the bundle from the C_*
# variables with a fresh id exits 125, its error matches NEEDLE-ERE, and
# nothing is left (no state dir, mount, process or cgroup).
config_refused ()
{
  local what=$1 needle=$2 b
  b=$(mkbundle "cfg-$N_PASS-$N_FAIL")
  kc cfg create --bundle "$b" "$(new_id "cfg$N_PASS")"
  expect_eq "$what: create exits 125" 125 "$RC"
  expect_match "$what: the error names $needle" "$ERR" "$needle"
  nothing_left "$what"
}

# bundle_and_id NAME: B, the bundle NAME from the C_* variables, and id, a
# fresh container id NAME.
bundle_and_id ()
{
  B=$(mkbundle "$1")
  id=$(new_id "$1")
}

# ---- config rules (config.md) -----------------------------------------------------
cfg_reset
C_TOP_EXTRA=', "annotations": {"org.example.a": "b", "": "x"}'
config_refused "an empty annotation key" 'annotations: keys must not be empty'

cfg_reset
C_LINUX_EXTRA=', "seccomp": {"defaultAction": "SCMP_ACT_ALLOW", "listenerMetadata": "m=1"}'
config_refused "seccomp listenerMetadata without listenerPath" \
  'linux\.seccomp\.listenerMetadata: must not be set without listenerPath'

cfg_reset
C_LINUX_EXTRA=', "seccomp": {"defaultAction": "SCMP_ACT_ALLOW",
  "syscalls": [{"names": [], "action": "SCMP_ACT_ERRNO"}]}'
config_refused "a seccomp syscall entry with no names" 'syscalls\[0\]\.names: must contain'

cfg_reset
C_LINUX_EXTRA=', "resources": {"blockIO": {"weightDevice": [{"major": 8, "minor": 0}]}}'
config_refused "a blockIO weightDevice entry without weight or leafWeight" \
  'blockIO\.weightDevice\[0\]: weight or leafWeight is required'

cfg_reset
C_LINUX_EXTRA=', "resources": {"rdma": {"mlx4_0": {}}}'
config_refused "an rdma entry without hcaHandles or hcaObjects" \
  'rdma\.mlx4_0: hcaHandles or hcaObjects is required'

# Start MUST fail without process: kist (as runc) refuses at create.
cfg_reset
B=$(mkbundle noprocess)
awk 'BEGIN { skip = 0 }
     /^  "process": \{/ { skip = 1; next }
     skip && /^  \},/ { skip = 0; next }
     !skip' "$B/config.json" > "$B/config.tmp" && mv "$B/config.tmp" "$B/config.json"
if grep -q '"process"' "$B/config.json" || ! grep -q '"root"' "$B/config.json"; then
  fail "a config without process: the test could strip process" "$(cat "$B/config.json")"
fi
kc noproc create --bundle "$B" "$(new_id noproc)"
expect_eq "a config without process: create exits 125" 125 "$RC"
expect_match "a config without process: the error names process" "$ERR" 'process'
nothing_left "a config without process"

# ---- every operation needs the container id (runtime.md "Operations") -----------------
before=$(ls -A "$ROOT")
for op in state start kill delete; do
  kc "noid-$op" "$op"
  expect_eq "$op without a container id exits 1" 1 "$RC"
  expect_match "$op without a container id: the error is the usage" "$ERR" \
    'container id|usage: kist'
done
cfg_reset
B=$(mkbundle noid)
kc noid-create create --bundle "$B"
expect_eq "create --bundle B without a container id exits 1" 1 "$RC"
expect_match "create without a container id: the error is the usage" "$ERR" 'container id'
expect_eq "the operations without an id created nothing in the state root" "$before" "$(ls -A "$ROOT")"
nothing_left "operations without an id"

# create without --bundle: the bundle is the current directory (as runc).
id=$(new_id cwdbundle)
(cd "$B" && kc cwdbundle create "$id"; exit "$RC")
expect_eq "create without --bundle (in the bundle dir) exits 0" 0 "$?"
expect_eq "create without --bundle: the state's bundle is the current directory" "$B" \
  "$(state_field "$id" bundle)"
kc cwdbundle-del delete --force "$id"
nothing_left "create without --bundle"

# ---- consoleSize without a terminal is ignored (config.md process) ----------------------
cfg_reset
C_PROCESS_EXTRA=', "consoleSize": {"height": 40, "width": 100}'
sh_args 'if [ -t 0 ] || [ -t 1 ]; then echo tty; else echo notty; fi'
bundle_and_id consize
kc consize run --report "$T/consize.json" --bundle "$B" "$id"
expect_eq "consoleSize with terminal false: run exits 0" 0 "$RC"
expect_eq "consoleSize with terminal false: the process has no terminal" notty "$OUT"
expect_eq "consoleSize with terminal false: no error" "" "$ERR"
expect_eq "consoleSize with terminal false: the report's terminal layer is not requested" false \
  "$(layer_field "$T/consize.json" terminal requested)"
expect_eq "consoleSize with terminal false: the report's terminal layer is not applied" false \
  "$(layer_field "$T/consize.json" terminal applied)"
nothing_left "consoleSize with terminal false"

# ---- oomScoreAdj unset: oom_score_adj is inherited ------------------------------------
cfg_reset
sh_args 'cat /proc/self/oom_score_adj'
bundle_and_id oom
(
  echo 123 > /proc/self/oom_score_adj || exit 99
  kc oom run --bundle "$B" "$id"
  exit "$RC"
)
RC=$?
expect_eq "oomScoreAdj unset: run (kist at oom_score_adj 123) exits 0" 0 "$RC"
expect_eq "oomScoreAdj unset: the container's oom_score_adj is kist's, 123" 123 "$(cat "$T/oom.out")"
nothing_left "oomScoreAdj unset"

# ---- config.json changed after create does not affect the container (runtime.md) ---------
cfg_reset
with_marker
C_HOSTNAME=before-edit
sh_args 'hostname > /mark/host; echo original > /mark/which'
bundle_and_id edited
kc edited create --bundle "$B" "$id"
expect_eq "edit after create: create exits 0" 0 "$RC"
C_HOSTNAME=after-edit
sh_args 'hostname > /mark/host; echo edited > /mark/which'
mkconfig > "$B/config.json"
kc edited-start start "$id"
expect_eq "edit after create: start exits 0" 0 "$RC"
wait_status "$id" stopped 10
expect_eq "edit after create: the original process.args ran" original "$(cat "$MARKDIR/which" 2> /dev/null)"
expect_eq "edit after create: the original hostname is set" before-edit \
  "$(cat "$MARKDIR/host" 2> /dev/null)"
kc edited-del delete "$id"
rm -f "$MARKDIR/which" "$MARKDIR/host"
nothing_left "edit after create"

# ---- delete leaves what kist did not create (runtime.md "Delete") ------------------------
cfg_reset
with_marker
echo keep > "$MARKDIR/keep"
unshare --net sleep 3600 &
HOLDER=$!
for _ in $(seq 50); do
  [ "$(readlink "/proc/$HOLDER/ns/net")" != "$(readlink /proc/self/ns/net)" ] && break
  sleep 0.05
done
netns=$(readlink "/proc/$HOLDER/ns/net")
# The holder's netns joined by path (mkconfig writes {"type": T} only).
ns_json='{"type": "pid"}, {"type": "ipc"}, {"type": "uts"}, {"type": "mount"}, {"type": "cgroup"},
  {"type": "network", "path": "/proc/'$HOLDER'/ns/net"}'
if [ -n "$CG2" ] && [ -w "$CG2/cgroup.procs" ]; then
  CG_PARENT=$CG2/kist-conf-test-$$
  mkdir "$CG_PARENT"
fi
id=$(new_id keep)
[ -n "$CG_PARENT" ] && C_LINUX_EXTRA=", \"cgroupsPath\": \"/kist-conf-test-$$/$id\""
sh_args 'cat /mark/keep; readlink /proc/self/ns/net'
B=$(mkbundle keep)
sed -i "s#\"namespaces\": \[[^]]*\]#\"namespaces\": [$(echo $ns_json)]#" "$B/config.json"
kc keep create --bundle "$B" "$id"
expect_eq "delete keeps: create joining a netns exits 0" 0 "$RC"
kc keep-start start "$id"
expect_true "delete keeps: the container stops" wait_status "$id" stopped 10
expect_eq "delete keeps: the container read the bind source, in the holder's netns" \
  "keep $netns" "$(echo $(cat "$T/keep.out"))"
kc keep-del delete "$id"
expect_eq "delete keeps: delete exits 0" 0 "$RC"
expect_true "delete keeps: the joined netns's holder is alive" pid_alive "$HOLDER"
expect_eq "delete keeps: the joined netns is the same" "$netns" "$(readlink "/proc/$HOLDER/ns/net")"
expect_true "delete keeps: the bind mount source still exists" test -d "$MARKDIR"
expect_eq "delete keeps: the bind mount source's file is intact" keep "$(cat "$MARKDIR/keep")"
if [ -n "$CG_PARENT" ]; then
  expect_true "delete keeps: the cgroupsPath parent that existed before is still there" \
    test -d "$CG_PARENT"
  expect_true "delete keeps: the container's own cgroup is gone" test ! -e "$CG_PARENT/$id"
else
  skip "delete keeps a cgroupsPath parent" "no writable cgroup2 mount"
fi
kill -KILL "$HOLDER" 2> /dev/null
wait "$HOLDER" 2> /dev/null
HOLDER=
rm -f "$MARKDIR/keep"
nothing_left "delete keeps"

# ---- deviations (SPEC.md "Where kist differs") -----------------------------------------
# No mount namespace: refused; the caller's mounts are unchanged.
cfg_reset
C_NAMESPACES="pid network ipc uts cgroup"
mounts_before=$(cat /proc/self/mountinfo)
config_refused "a config without a mount namespace" 'mount namespace'
expect_eq "a config without a mount namespace: the caller's mountinfo is unchanged" \
  "$mounts_before" "$(cat /proc/self/mountinfo)"

# --systemd-cgroup: refused with the reason.
cfg_reset
B=$(mkbundle systemd)
kc systemd --systemd-cgroup create --bundle "$B" "$(new_id systemd)"
expect_eq "--systemd-cgroup create exits 125" 125 "$RC"
expect_match "--systemd-cgroup create: the error says the driver is not implemented" "$ERR" \
  'systemd cgroup driver is not implemented'
nothing_left "--systemd-cgroup create"

# update with both --resources and limit flags: refused, the report unchanged.
cfg_reset
C_ARGS='["sleep", "3600"]'
bundle_and_id upd
kc upd create --bundle "$B" "$id"
expect_eq "update --resources and flags: create exits 0" 0 "$RC"
kist report "$id" > "$T/upd0.json" 2> /dev/null
kc upd-both update --resources - --memory 64m "$id"
expect_eq "update --resources - --memory 64m exits 1" 1 "$RC"
expect_match "update --resources and flags: the error says to give one" "$ERR" 'either --resources'
kist report "$id" > "$T/upd1.json" 2> /dev/null
expect_ne "update --resources and flags: the report could be read" "" "$(cat "$T/upd0.json")"
expect_eq "update --resources and flags: the stored report is unchanged" "$(cat "$T/upd0.json")" \
  "$(cat "$T/upd1.json")"
kc upd-del delete --force "$id"
nothing_left "update --resources and flags"

# kill RTMIN+n: a real-time signal by name.
cfg_reset
with_marker
sh_args 'trap "echo caught > /mark/sig35" 35; echo ready > /mark/ready
         while [ ! -e /mark/sig35 ]; do sleep 0.05; done; sleep 3600'
bundle_and_id rt
kc rt run -d --bundle "$B" "$id"
expect_eq "kill RTMIN+1: run -d exits 0" 0 "$RC"
for _ in $(seq 100); do [ -e "$MARKDIR/ready" ] && break; sleep 0.05; done
kc rt-kill kill "$id" RTMIN+1
expect_eq "kill ID RTMIN+1 of a running container exits 0" 0 "$RC"
for _ in $(seq 100); do [ -e "$MARKDIR/sig35" ] && break; sleep 0.05; done
expect_eq "kill RTMIN+1: the container's trap saw signal 35" caught \
  "$(cat "$MARKDIR/sig35" 2> /dev/null)"
kc rt-bad kill "$id" RTMIN+99
expect_eq "kill ID RTMIN+99 exits 1" 1 "$RC"
expect_eq "kill RTMIN+99: the container is still running" running "$(state_field "$id" status)"
kc rt-del delete --force "$id"
rm -f "$MARKDIR/ready" "$MARKDIR/sig35"
nothing_left "kill RTMIN+n"

# cgroupsPath naming a cgroup that holds a process: create refuses, the
# process is left alone (in its cgroup, alive).
if [ -n "$CG2" ] && [ -w "$CG2/cgroup.procs" ]; then
  CG_BUSY=$CG2/kist-conf-busy-$$
  mkdir "$CG_BUSY"
  sleep 3600 &
  BUSY=$!
  echo "$BUSY" > "$CG_BUSY/cgroup.procs"
  cfg_reset
  C_LINUX_EXTRA=", \"cgroupsPath\": \"/kist-conf-busy-$$\""
  config_refused "cgroupsPath naming a cgroup with a process" 'already has processes'
  expect_true "busy cgroup: its process is alive" pid_alive "$BUSY"
  expect_eq "busy cgroup: its process is still in it" "$BUSY" "$(cat "$CG_BUSY/cgroup.procs")"
  expect_true "busy cgroup: the cgroup is still there" test -d "$CG_BUSY"
  kill -KILL "$BUSY"
  wait "$BUSY" 2> /dev/null
  BUSY=
  rmdir "$CG_BUSY" && CG_BUSY=
else
  skip "cgroupsPath naming a cgroup with a process" "no writable cgroup2 mount"
fi

[ -n "$CG_PARENT" ] && rmdir "$CG_PARENT" && CG_PARENT=

# ---- rro on an rbind makes its submounts read-only too (config.md mounts, SHOULD) ----
# The submount is a tmpfs in this test's own mount namespace (lib.sh runs
# the test under unshare -m); `rw` is the control: the submount is
# writable there, so the test sees a submount that rro missed.  (Plain `ro`
# is no control: kist applies every attribute option of an rbind to the
# whole tree, runtime/mounts_opts.c.)
RSRC=$T/rsrc
mkdir -p "$RSRC/sub"
if mount -t tmpfs -o size=1m kist-conf "$RSRC/sub"; then
  for opt in rro rw; do
    cfg_reset
    C_MOUNTS_EXTRA=", $(bind_json "$RSRC" /r rbind "$opt")"
    sh_args 'for d in /r /r/sub; do
               if touch "$d/w" 2> /dev/null; then echo "$d rw"; else echo "$d ro"; fi
             done'
    bundle_and_id "rbind-$opt"
    kc "rbind-$opt" run --bundle "$B" "$id"
    expect_eq "rbind,$opt with a submount: run exits 0" 0 "$RC"
    case $opt in
      rro) want="/r ro /r/sub ro" ;;
      rw) want="/r rw /r/sub rw" ;;
    esac
    expect_eq "rbind,$opt with a submount: what the container can write" "$want" "$(echo $OUT)"
    rm -f "$RSRC/w" "$RSRC/sub/w"
  done
  umount "$RSRC/sub"
  nothing_left "rro on an rbind with a submount"
else
  skip "rro on an rbind with a submount" "cannot mount a tmpfs in the test's mount namespace"
fi
