#!/bin/bash
# t_conformance.sh: the runtime-spec 1.2 rules of tests/conformance/SPEC.md
# that no other test checks: config rules kist must refuse (exit 125, the
# config path named, nothing left), operations without an id, a config
# changed after create, what delete must leave alone, oom_score_adj left as
# inherited, and kist's documented deviations (no mount namespace, update
# with both --resources and flags, RTMIN+n, --systemd-cgroup, a busy cgroup).
# Then (issue 11's partial rows): `kist state` (ociVersion, annotations with
# an unknown key, an absolute bundle for a relative --bundle), start of a
# stopped or paused container (and runc's answer), mount order, /dev/shm
# with `kist spec`'s config, the rootfs's owners after a user namespace run,
# linux.devices owners and a file in the way, SCHED_DEADLINE, SELinux and
# intelRdt refused, seccomp errnoRet, a listenerPath nobody listens on, and
# the mount options (each read back; the r* forms on an rbind submount).
. "$(dirname "$0")/lib.sh"

CG2=$LO_CG2
HOLDER=
BUSY=
CG_PARENT=
CG_BUSY=
RROOT=
RID=
test_cleanup ()
{
  local p
  for p in $HOLDER $BUSY; do
    kill -KILL "$p" 2> /dev/null
    wait "$p" 2> /dev/null
  done
  [ -n "$CG_BUSY" ] && rmdir "$CG_BUSY" 2> /dev/null
  [ -n "$CG_PARENT" ] && rmdir "$CG_PARENT" 2> /dev/null
  if [ -n "$RROOT" ] && [ -d "$RROOT" ]; then
    for p in -s -p; do
      unshare -m --propagation private sh -c '
        [ "$1" = /sys/fs/cgroup ] || mount --bind "$1" /sys/fs/cgroup
        runc --root "$2" delete --force "$3"' sh "$CG2" "$RROOT" "$RID$p" > /dev/null 2>&1
    done
  fi
  return 0
}

# config_refused WHAT NEEDLE-ERE: `create` of the bundle from the C_*
# variables with a fresh id exits 125, its error matches NEEDLE-ERE, and
# nothing is left (no state dir, mount, process or cgroup).
config_refused ()
{
  local what=$1 needle=$2 b cid
  b=$(mkbundle "cfg-$N_PASS-$N_FAIL")
  new_id "cfg$N_PASS" > /dev/null
  cid=$PREFIX-cfg$N_PASS
  kc cfg create --bundle "$b" "$cid"
  expect_eq "$what: create exits 125" 125 "$RC"
  expect_match "$what: the error names $needle" "$ERR" "$needle"
  # (A create that wrongly succeeded has failed above; its container goes.)
  [ "$RC" = 0 ] && kist delete --force "$cid" > /dev/null 2>&1
  nothing_left "$what"
}

# bundle_and_id NAME: B, the bundle NAME from the C_* variables, and id, a
# fresh container id NAME (registered for the EXIT trap's delete --force:
# new_id in $(...) would register it in the subshell only).
bundle_and_id ()
{
  B=$(mkbundle "$1")
  new_id "$1" > /dev/null
  id=$PREFIX-$1
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

# ---- kist state (runtime.md "State", "Query State"; config.md annotations) ------------
# Created with a relative --bundle: the state's bundle is absolute; the
# state has the config's ociVersion and annotations, an unknown key
# (com.example.unknown) among them, and that container runs.
cfg_reset
C_ARGS='["sleep", "3600"]'
C_TOP_EXTRA=', "annotations": {"com.example.unknown": "kist-unknown-value",
  "org.example.second": "two"}'
bundle_and_id state-rel
(cd "$T" && kc state-rel create --bundle ./state-rel "$id"; exit "$RC")
expect_eq "state: create --bundle ./state-rel (relative) with an unknown annotation key exits 0" 0 "$?"
kist state "$id" > "$T/state-rel.json" 2> /dev/null
# (kist-state(8): the config's ociVersion, 1.0.2 from mkconfig; kist's own
# default, 1.2.0, would be a state made up rather than read.)
expect_eq "state: ociVersion is the config's, 1.0.2" 1.0.2 "$(jget "$T/state-rel.json" ociVersion)"
expect_eq "state: bundle is absolute for --bundle ./state-rel" "$B" "$(jget "$T/state-rel.json" bundle)"
expect_eq "state: annotations has the unknown key com.example.unknown" kist-unknown-value \
  "$(jget "$T/state-rel.json" annotations.com.example.unknown)"
expect_eq "state: annotations has org.example.second" two \
  "$(jget "$T/state-rel.json" annotations.org.example.second)"
expect_eq "state: status created" created "$(jget "$T/state-rel.json" status)"
kc state-rel-start start "$id"
expect_eq "state: start of the container with the unknown annotation key exits 0" 0 "$RC"
expect_eq "state: the container with the unknown annotation key runs" running "$(state_field "$id" status)"
expect_eq "state: the running container's annotations still have com.example.unknown" \
  kist-unknown-value "$(kist state "$id" 2> /dev/null | jflat | awk -F'\t' \
    '$1 == "annotations.com.example.unknown" { print $2 }')"
kc state-rel-del delete --force "$id"
nothing_left "state with a relative bundle"

# ---- start of a stopped or a paused container (runtime.md "Start") ---------------------
# Start MUST fail and change nothing: the program did not run again (its
# count of runs in /mark), the status and the pid are the same.  Then the
# same under runc, side by side (runc exits 1; kist 125, as kist-start(8)).
CAN_PAUSE=
[ -n "$CG2" ] && [ -e "$CG2/cgroup.freeze" -o -n "$(ls "$CG2"/*/cgroup.freeze 2> /dev/null | head -n 1)" ] \
  && CAN_PAUSE=1
# start_once STATUS SCRIPT: B and id of a fresh container (start-STATUS)
# running SCRIPT, which appends a line to /mark/runs-STATUS; created and
# started once.
start_once ()
{
  cfg_reset
  with_marker
  sh_args "echo run >> /mark/runs-$1; $2"
  bundle_and_id "start-$1"
  kc "start-$1" create --bundle "$B" "$id"
  kc "start-$1-1" start "$id"
  expect_eq "start of a $1 container: the first start exits 0" 0 "$RC"
}
# start_again STATUS: start again: 125 with the reason, still STATUS, and
# the program ran once.
start_again ()
{
  local st=$1
  kc "start-$st-2" start "$id"
  expect_eq "start of a $st container exits 125" 125 "$RC"
  expect_match "start of a $st container: the error says it is $st" "$ERR" "$st, not created"
  expect_eq "start of a $st container: still $st" "$st" "$(state_field "$id" status)"
  expect_eq "start of a $st container: the program ran once" 1 "$(wc -l < "$MARKDIR/runs-$st")"
}
start_once stopped true
B_STOPPED=$B
expect_true "start of a stopped container: it stops" wait_status "$id" stopped 10
start_again stopped
kc start-stopped-del delete "$id"
expect_eq "start of a stopped container: delete exits 0" 0 "$RC"
rm -f "$MARKDIR/runs-stopped"
nothing_left "start of a stopped container"

B_PAUSED=
if [ -n "$CAN_PAUSE" ]; then
  start_once paused 'exec sleep 3600'
  B_PAUSED=$B
  for _ in $(seq 100); do [ -s "$MARKDIR/runs-paused" ] && break; sleep 0.05; done
  kc start-paused-pause pause "$id"
  expect_eq "start of a paused container: pause exits 0" 0 "$RC"
  pid=$(state_field "$id" pid)
  start_again paused
  expect_eq "start of a paused container: the same pid" "$pid" "$(state_field "$id" pid)"
  expect_true "start of a paused container: its process is alive" pid_alive "$pid"
  kc start-paused-del delete --force "$id"
  rm -f "$MARKDIR/runs-paused"
  nothing_left "start of a paused container"
else
  skip "start of a paused container" "no cgroup2 freezer here"
fi

# runc on the same bundles, in a mount namespace of its own whose
# /sys/fs/cgroup is the host's cgroup2 hierarchy (as t_killdelete.sh).
RROOT=$T/runc-root
RID=$PREFIX-rstart
if command -v runc > /dev/null && [ -n "$CG2" ]; then
  runc_table=$(unshare -m --propagation private bash -c '
      [ "$1" = /sys/fs/cgroup ] || mount --bind "$1" /sys/fs/cgroup || exit 99
      R=$2 D=$3 ID=$4 BS=$5 BP=$6
      shift 6
      r () { runc --root "$R" "$@" > /dev/null 2>> "$D/runc-start.errs" < /dev/null; echo $?; }
      st () { runc --root "$R" state "$1" 2> /dev/null | awk -F\" "/\"status\"/ { print \$4 }"; }
      r create --bundle "$BS" "$ID-s" > /dev/null
      r start "$ID-s" > /dev/null
      for _ in $(seq 100); do [ "$(st "$ID-s")" = stopped ] && break; sleep 0.05; done
      echo "stopped start: $(r start "$ID-s") $(st "$ID-s")"
      r delete --force "$ID-s" > /dev/null
      if [ -n "$BP" ]; then
        r create --bundle "$BP" "$ID-p" > /dev/null
        r start "$ID-p" > /dev/null
        r pause "$ID-p" > /dev/null
        echo "paused start: $(r start "$ID-p") $(st "$ID-p")"
        r delete --force "$ID-p" > /dev/null
      fi' bash "$CG2" "$RROOT" "$T" "$RID" "$B_STOPPED" "$B_PAUSED")
  want="stopped start: 1 stopped"
  [ -n "$B_PAUSED" ] && want+=$'\n'"paused start: 1 paused"
  expect_eq "start of a stopped/paused container under runc: exit 1, state unchanged" "$want" "$runc_table"
  rm -f "$MARKDIR/runs-stopped" "$MARKDIR/runs-paused"
else
  skip "start of a stopped/paused container compared with runc" "runc or a cgroup2 hierarchy is missing"
fi

# ---- mounts in the listed order (config.md mounts) --------------------------------------
# Two mounts on one destination: the second is the one the container sees
# (binds of two dirs, then two tmpfs of different modes).
cfg_reset
mkdir -p "$T/order1" "$T/order2"
echo first > "$T/order1/which"
echo second > "$T/order2/which"
C_MOUNTS_EXTRA=", $(bind_json "$T/order1" /m rbind ro), $(bind_json "$T/order2" /m rbind ro),
  {\"destination\": \"/t\", \"type\": \"tmpfs\", \"source\": \"tmpfs\", \"options\": [\"mode=0700\"]},
  {\"destination\": \"/t\", \"type\": \"tmpfs\", \"source\": \"tmpfs\", \"options\": [\"mode=0751\"]}"
sh_args 'echo "which $(cat /m/which)"; echo "mode $(stat -c %a /t)"
  echo "nm $(grep -c " /m " /proc/self/mountinfo) nt $(grep -c " /t " /proc/self/mountinfo)"'
bundle_and_id order
kc order run --bundle "$B" "$id"
expect_eq "mount order: run exits 0" 0 "$RC"
expect_eq "mount order: two binds on /m: the second (order2) is seen" second \
  "$(sed -n 's/^which //p' <<< "$OUT")"
expect_eq "mount order: two tmpfs on /t: the second's mode 0751 is seen" 751 \
  "$(sed -n 's/^mode //p' <<< "$OUT")"
expect_eq "mount order: both mounts of each destination are made" "nm 2 nt 2" "$(grep '^nm' <<< "$OUT")"
kc order-del delete "$id"
nothing_left "mount order"

# ---- /dev/shm with kist spec's config (config-linux.md "Default Filesystems") ---------
cfg_reset
B=$T/specshm
copy_rootfs "$B"
new_id specshm > /dev/null
id=$PREFIX-specshm
(cd "$B" && "$KIST" spec) > /dev/null 2>&1
if [ -s "$B/config.json" ]; then
  rootless_config "$B/config.json" '["sh", "-c", "grep '"' /dev/shm '"' /proc/self/mountinfo; echo w > /dev/shm/w; echo read $(cat /dev/shm/w)"]' \
    > "$B/config.tmp" && mv "$B/config.tmp" "$B/config.json"
  kc specshm run --bundle "$B" "$id"
  expect_eq "kist spec's config: run exits 0" 0 "$RC"
  expect_eq "kist spec's config: /dev/shm is a tmpfs in mountinfo" tmpfs \
    "$(awk '$5 == "/dev/shm" { for (i = 7; i <= NF; i++) if ($i == "-") { print $(i + 1); exit } }' <<< "$OUT")"
  expect_eq "kist spec's config: /dev/shm is writable" "read w" "$(grep '^read' <<< "$OUT")"
  kc specshm-del delete "$id"
else
  fail "kist spec writes config.json" "$(cat "$B/config.json" 2> /dev/null)"
fi
nothing_left "/dev/shm with kist spec's config"

# ---- a user namespace leaves the rootfs's owners alone (config-linux.md) ---------------
# Root in a user namespace mapped 0 -> 100000: owners and ctimes of the
# rootfs (the dir, dirs and files in it) are the same after the run; a
# chown there, even one undone, would change the ctimes.
cfg_reset
C_NAMESPACES="pid network ipc uts mount cgroup user"
C_LINUX_EXTRA=', "uidMappings": [{"containerID": 0, "hostID": 100000, "size": 65536}],
  "gidMappings": [{"containerID": 0, "hostID": 100000, "size": 65536}]'
sh_args 'echo "map $(cat /proc/self/uid_map)"; echo "owner $(stat -c %u:%g /bin/busybox)"'
bundle_and_id userns-owner
owners ()
{
  (cd "$B/rootfs" && stat -c '%n %u:%g %Z' . bin bin/busybox etc etc/passwd dev proc sys)
}
before=$(owners)
sleep 1.1
kc userns-owner run --bundle "$B" "$id"
expect_eq "userns run: exits 0" 0 "$RC"
expect_eq "userns run: the container's uid_map is 0 100000 65536" "0 100000 65536" \
  "$(sed -n 's/^map //p' <<< "$OUT" | awk '{ print $1, $2, $3 }')"
expect_eq "userns run: the image's root-owned busybox is the overflow id inside" 65534:65534 \
  "$(sed -n 's/^owner //p' <<< "$OUT")"
expect_eq "userns run: owners and ctimes of the rootfs are unchanged" "$before" "$(owners)"
kc userns-owner-del delete "$id"
nothing_left "userns run: rootfs owners"

# ---- linux.devices (config-linux.md "Devices") -------------------------------------------
# A node with uid, gid and fileMode: as configured.
cfg_reset
C_LINUX_EXTRA=', "devices": [{"path": "/dev/kist-null", "type": "c", "major": 1, "minor": 3,
  "fileMode": 416, "uid": 1000, "gid": 1001}]'
sh_args 'stat -c "%F %t:%T %a %u:%g" /dev/kist-null'
bundle_and_id devowner
kc devowner run --bundle "$B" "$id"
expect_eq "linux.devices uid 1000 gid 1001 fileMode 0640: run exits 0" 0 "$RC"
expect_eq "linux.devices uid 1000 gid 1001 fileMode 0640: the node inside" \
  "character special file 1:3 640 1000:1001" "$OUT"
kc devowner-del delete "$id"
nothing_left "linux.devices owner"

# A regular file of the image at a linux.devices path: create exits 125
# naming it; the image's file is intact.
cfg_reset
C_LINUX_EXTRA=', "devices": [{"path": "/kistdev", "type": "c", "major": 1, "minor": 3}]'
bundle_and_id devfile
echo image-file > "$B/rootfs/kistdev"
kc devfile create --bundle "$B" "$id"
expect_eq "a regular file at a linux.devices path: create exits 125" 125 "$RC"
expect_match "a regular file at a linux.devices path: the error names it and what it is" "$ERR" \
  '/kistdev exists in the container and is a regular file'
expect_eq "a regular file at a linux.devices path: the image's file is intact" image-file \
  "$(cat "$B/rootfs/kistdev")"
[ "$RC" = 0 ] && kist delete --force "$id" > /dev/null 2>&1
nothing_left "a regular file at a linux.devices path"

# ---- SCHED_DEADLINE (config.md process.scheduler) ---------------------------------------
# runtime 1 ms, deadline 10 ms, period 20 ms: applied and read back with
# sched_getattr by the container's own program, where the kernel lets root
# (this test, on itself) set it; where not, create fails with the
# kernel's reason, naming process.scheduler.  (t_procattrs.sh has the others.)
cat > "$T/dlprobe.c" << 'PROBE'
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>
struct attr { uint32_t size, policy; uint64_t flags; int32_t nice; uint32_t prio; uint64_t rt, dl, per; };
int main (int argc, char **argv)
{
  struct attr a = { .size = sizeof a };
  if (argc > 1)
    {
      /* "set": try it on this process (the host side's probe of the kernel). */
      a.policy = 6, a.rt = 1000000, a.dl = 10000000, a.per = 20000000;
      if (syscall (SYS_sched_setattr, 0, &a, 0) < 0)
        {
          printf ("set error %s\n", strerror (errno));
          return 1;
        }
      printf ("set ok\n");
      return 0;
    }
  if (syscall (SYS_sched_getattr, 0, &a, sizeof a, 0) != 0)
    {
      printf ("dl error %s\n", strerror (errno));
      return 1;
    }
  printf ("dl %u %llu %llu %llu\n", a.policy, (unsigned long long) a.rt, (unsigned long long) a.dl,
          (unsigned long long) a.per);
  return 0;
}
PROBE
if ! "${CC:-cc}" -static -O2 -o "$T/dlprobe" "$T/dlprobe.c" > "$T/dlprobe.build" 2>&1; then
  fail "SCHED_DEADLINE: the probe builds with ${CC:-cc} -static" "$(cat "$T/dlprobe.build")"
else
  cfg_reset
  C_ARGS='["/dlprobe"]'
  C_PROCESS_EXTRA=', "scheduler": {"policy": "SCHED_DEADLINE", "runtime": 1000000,
    "deadline": 10000000, "period": 20000000}'
  bundle_and_id deadline
  cp "$T/dlprobe" "$B/rootfs/dlprobe"
  host=$("$T/dlprobe" set)
  kc deadline run --report "$T/deadline.json" --bundle "$B" "$id"
  if [ "$host" = "set ok" ]; then
    expect_eq "SCHED_DEADLINE: run exits 0" 0 "$RC"
    expect_eq "SCHED_DEADLINE: sched_getattr inside: policy 6, runtime 1 ms, deadline 10 ms, period 20 ms" \
      "dl 6 1000000 10000000 20000000" "$OUT"
    expect_eq "SCHED_DEADLINE: the report's scheduler is applied" true \
      "$(layer_field "$T/deadline.json" scheduler applied)"
  else
    # The kernel refuses root here too: kist must say so, not run.
    expect_eq "SCHED_DEADLINE refused by the kernel here ($host): run exits 125" 125 "$RC"
    expect_match "SCHED_DEADLINE refused by the kernel: the error names process.scheduler and the reason" \
      "$ERR" "process\.scheduler: sched_setattr\(SCHED_DEADLINE\): ${host#set error }"
    expect_eq "SCHED_DEADLINE refused by the kernel: the program did not run" "" "$OUT"
  fi
  kc deadline-del delete --force "$id"
  nothing_left "SCHED_DEADLINE"
fi

# ---- SELinux and Intel RDT: refused, naming the layer (SPEC.md "Where kist differs") ---
cfg_reset
C_PROCESS_EXTRA=', "selinuxLabel": "system_u:system_r:container_t:s0:c1,c2"'
config_refused "process.selinuxLabel" 'layer selinux not applied: process\.selinuxLabel / linux\.mountLabel \(SELinux\) is not implemented by kist'
cfg_reset
C_LINUX_EXTRA=', "mountLabel": "system_u:object_r:container_file_t:s0:c1,c2"'
config_refused "linux.mountLabel" 'layer selinux not applied: process\.selinuxLabel / linux\.mountLabel \(SELinux\) is not implemented by kist'
cfg_reset
C_LINUX_EXTRA=', "intelRdt": {"closID": "kist-test", "l3CacheSchema": "L3:0=f"}'
if grep -qw resctrl /proc/filesystems || awk '{ for (i = 7; i <= NF; i++) if ($i == "-") { if ($(i + 1) == "resctrl") f = 1; break } } END { exit !f }' /proc/self/mountinfo; then
  skip "linux.intelRdt on a machine without resctrl" "this machine has resctrl"
  config_refused "linux.intelRdt (this machine has resctrl)" 'layer intel_rdt not applied: linux\.intelRdt is not implemented by kist'
else
  config_refused "linux.intelRdt without resctrl" \
    'layer intel_rdt not applied: linux\.intelRdt: this machine has no resctrl \(Intel RDT / AMD PQoS\): remove linux\.intelRdt'
fi

# ---- seccomp errnoRet with an action that takes none (config-linux.md seccomp) ---------
cfg_reset
C_LINUX_EXTRA=', "seccomp": {"defaultAction": "SCMP_ACT_ALLOW",
  "syscalls": [{"names": ["mkdir"], "action": "SCMP_ACT_KILL", "errnoRet": 1}]}'
config_refused "seccomp errnoRet with SCMP_ACT_KILL" \
  'linux\.seccomp\.syscalls\[0\]\.errnoRet: only SCMP_ACT_ERRNO and SCMP_ACT_TRACE take an errno'

# ---- seccomp listenerPath nobody listens on (config-linux.md seccomp) -------------------
# An absent socket, and a regular file (connect is refused): the run fails
# naming the path, and nothing runs or is left.
cfg_reset
with_marker
echo not-a-socket > "$T/notsock"
for what in absent refused; do
  case $what in
    absent) lp=$T/nobody.sock why='No such file or directory' ;;
    refused) lp=$T/notsock why='Connection refused' ;;
  esac
  C_LINUX_EXTRA=", \"seccomp\": {\"defaultAction\": \"SCMP_ACT_ALLOW\", \"listenerPath\": $(json_str "$lp"),
    \"syscalls\": [{\"names\": [\"mkdir\", \"mkdirat\"], \"action\": \"SCMP_ACT_NOTIFY\"}]}"
  sh_args 'echo ran > /mark/listener-ran'
  bundle_and_id "listener-$what"
  kc "listener-$what" run --bundle "$B" "$id"
  expect_eq "seccomp listenerPath $what: run exits 125" 125 "$RC"
  expect_contains "seccomp listenerPath $what: the error names the path" "$ERR" \
    "linux.seccomp.listenerPath \`$lp\`"
  expect_contains "seccomp listenerPath $what: the error says why ($why)" "$ERR" "$why"
  expect_eq "seccomp listenerPath $what: the program did not run" "" \
    "$(cat "$MARKDIR/listener-ran" 2> /dev/null)"
  kist delete --force "$id" > /dev/null 2>&1
  rm -f "$MARKDIR/listener-ran"
  nothing_left "seccomp listenerPath $what"
done

# ---- mount options, read back from mountinfo (config.md mounts, MUST options) ----------
# One tmpfs per case at /oN; each option that clears a flag follows the
# one that sets it, so a kist that ignored it would leave the flag on.
# A case is "OPTIONS|WANT": WANT is a grep -E pattern on the line
# "mnt=PER-MOUNT-OPTIONS opt=OPTIONAL-FIELDS sb=SUPERBLOCK-OPTIONS".
# defaults, loud, silent, iversion, noiversion and remount change nothing
# (as runc; they once went to tmpfs as data, which refused them).
OPT_CASES=(
  'ro|mnt=ro,' 'ro,rw|mnt=rw,'
  'nosuid|mnt=[^ ]*nosuid' 'nosuid,suid|mnt=([^n ]|n[^o])*( |$)'
  'nodev|mnt=[^ ]*nodev' 'nodev,dev|mnt=([^n ]|n[^o])*( |$)'
  'noexec|mnt=[^ ]*noexec' 'noexec,exec|mnt=([^n ]|n[^o])*( |$)'
  'noatime|mnt=[^ ]*noatime' 'noatime,atime|mnt=rw,relatime '
  'nodiratime|mnt=[^ ]*nodiratime' 'nodiratime,diratime|mnt=rw,relatime '
  'strictatime|mnt=rw ' 'strictatime,nostrictatime|mnt=rw,relatime '
  'norelatime|mnt=rw ' 'norelatime,relatime|mnt=rw,relatime '
  'nosymfollow|mnt=[^ ]*nosymfollow' 'nosymfollow,symfollow|mnt=rw,relatime '
  'sync|sb=[^ ]*(^|,)sync' 'sync,async|sb=rw$'
  'dirsync|sb=[^ ]*dirsync'
  'lazytime|sb=[^ ]*lazytime' 'lazytime,nolazytime|sb=rw$'
  'shared|opt=shared:' 'shared,private|opt= '
  'rshared|opt=shared:' 'rshared,rprivate|opt= '
  'unbindable|opt=unbindable' 'runbindable|opt=unbindable'
  'defaults,loud,silent,iversion,noiversion,remount,ro|mnt=ro,'
)
cfg_reset
i=0
for c in "${OPT_CASES[@]}"; do
  i=$((i + 1))
  C_MOUNTS_EXTRA+=", {\"destination\": \"/o$i\", \"type\": \"tmpfs\", \"source\": \"tmpfs\",
    \"options\": $(json_arr $(tr , ' ' <<< "${c%%|*}"))}"
done
sh_args 'cat /proc/self/mountinfo'
bundle_and_id mntopts
kc mntopts run --bundle "$B" "$id"
expect_eq "mount options: run with a tmpfs per option exits 0" 0 "$RC"
i=0
for c in "${OPT_CASES[@]}"; do
  i=$((i + 1))
  line=$(awk -v p="/o$i" '$5 == p {
      o = ""; for (j = 7; $j != "-"; j++) o = o (o == "" ? "" : " ") $j
      print "mnt=" $6 " opt=" o " sb=" $NF }' <<< "$OUT")
  expect_match "mount option ${c%%|*}: mountinfo matches ${c#*|}" "$line" "${c#*|}"
done
kc mntopts-del delete "$id"
nothing_left "mount options"

# The recursive forms and nosymfollow on an rbind with a submount (SHOULD):
# the submount gets the flag too; plain rbind is the control (the
# submount, mounted here without them, has none).
if mount -t tmpfs -o size=1m kist-conf "$RSRC/sub"; then
  for opt in rnosuid rnodev rnoexec rnoatime rnosymfollow rbind; do
    cfg_reset
    C_MOUNTS_EXTRA=", $(bind_json "$RSRC" /r rbind "$opt")"
    sh_args 'awk '"'"'$5 == "/r/sub" { print $6 }'"'"' /proc/self/mountinfo'
    bundle_and_id "rec-$opt"
    kc "rec-$opt" run --bundle "$B" "$id"
    if [ "$opt" = rbind ]; then
      expect_match "rbind alone: the submount has none of nosuid, nodev, noexec, noatime, nosymfollow" \
        "$OUT" '^rw,relatime$'
    else
      expect_match "rbind,$opt: the submount has ${opt#r}" "$OUT" "(^|,)${opt#r}(,|$)"
    fi
    kc "rec-$opt-del" delete "$id"
  done
  # The clearing forms: the submount has every flag; rbind alone (the
  # control) keeps them, each r-form clears its own.
  mount -o remount,ro,nosuid,nodev,noexec,noatime,nosymfollow "$RSRC/sub"
  for opt in rbind rrw rsuid rdev rexec ratime rsymfollow; do
    cfg_reset
    C_MOUNTS_EXTRA=", $(bind_json "$RSRC" /r rbind "$opt")"
    sh_args 'awk '"'"'$5 == "/r/sub" { print $6 }'"'"' /proc/self/mountinfo'
    bundle_and_id "clr-$opt"
    kc "clr-$opt" run --bundle "$B" "$id"
    case $opt in
      rbind) expect_eq "rbind alone: the submount keeps ro, nosuid, nodev, noexec, noatime, nosymfollow" \
               ro,nosuid,nodev,noexec,noatime,nosymfollow "$OUT" ;;
      rrw) expect_match "rbind,rrw: the submount is rw" "$OUT" '^rw,' ;;
      ratime) expect_not_contains "rbind,ratime: the submount lost noatime" "$OUT" noatime ;;
      *) expect_not_contains "rbind,$opt: the submount lost no${opt#r}" "$OUT" "no${opt#r}" ;;
    esac
    kc "clr-$opt-del" delete "$id"
  done
  umount "$RSRC/sub"
  nothing_left "recursive mount options on an rbind with a submount"
else
  skip "recursive mount options on an rbind with a submount" "cannot mount a tmpfs in the test's mount namespace"
fi
