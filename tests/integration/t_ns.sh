#!/bin/bash
# t_ns.sh: namespaces joined by path, the time namespace and its offsets, a
# user namespace created as root with its maps, --no-pivot, --preserve-fds,
# --pid-file, signal forwarding by run, domainname, oomScoreAdj, linux.devices
# and bind mount flags.  Each check compares what the container sees (or the
# host sees of it) with the request and with the report.
. "$(dirname "$0")/lib.sh"

ns_ino ()
{
  stat -L -c %i "$1" 2> /dev/null
}

# ---- joining net, uts and ipc namespaces by path ----------------------------------
# A holder process in its own net+uts+ipc namespaces (made by this test).
unshare -n -u -i sh -c 'hostname kist-holder; exec sleep 120' &
HOLDER=$!
for _ in $(seq 50); do
  [ "$(ns_ino /proc/$HOLDER/ns/net)" != "$(ns_ino /proc/self/ns/net)" ] && break
  sleep 0.05
done
trap_holder ()
{
  kill "$HOLDER" 2> /dev/null
  wait "$HOLDER" 2> /dev/null
}
cfg_reset
C_HOSTNAME=
C_NAMESPACES="pid mount cgroup"
C_LINUX_EXTRA=", \"namespaces\": [{\"type\": \"pid\"}, {\"type\": \"mount\"}, {\"type\": \"cgroup\"},
  {\"type\": \"network\", \"path\": \"/proc/$HOLDER/ns/net\"},
  {\"type\": \"uts\", \"path\": \"/proc/$HOLDER/ns/uts\"},
  {\"type\": \"ipc\", \"path\": \"/proc/$HOLDER/ns/ipc\"}]"
sh_args 'echo "net=$(stat -L -c %i /proc/self/ns/net) uts=$(stat -L -c %i /proc/self/ns/uts) ipc=$(stat -L -c %i /proc/self/ns/ipc) host=$(hostname)"'
B=$(mkbundle join)
# The later "namespaces" key wins (last duplicate key), so mkconfig's list is replaced.
id=$(new_id join)
kc join run --bundle "$B" --report "$T/join.json" "$id"
expect_eq "join: run exits 0" 0 "$RC"
expect_contains "join: net namespace is the holder's" "$OUT" "net=$(ns_ino /proc/$HOLDER/ns/net) "
expect_contains "join: uts namespace is the holder's" "$OUT" "uts=$(ns_ino /proc/$HOLDER/ns/uts) "
expect_contains "join: ipc namespace is the holder's" "$OUT" "ipc=$(ns_ino /proc/$HOLDER/ns/ipc) "
expect_contains "join: hostname is the holder's" "$OUT" "host=kist-holder"
expect_eq "join: report namespace.net applied" true "$(layer_field "$T/join.json" namespace.net applied)"
expect_contains "join: report says joined" \
  "$(layer_field "$T/join.json" namespace.net detail)" "joined /proc/$HOLDER/ns/net"
expect_eq "join: network.loopback left alone (not requested)" false \
  "$(layer_field "$T/join.json" network.loopback requested)"

# A path that is not a namespace of that type fails closed, naming the layer.
cfg_reset
C_LINUX_EXTRA=", \"namespaces\": [{\"type\": \"pid\"}, {\"type\": \"mount\"},
  {\"type\": \"network\", \"path\": \"/proc/$HOLDER/ns/uts\"}]"
with_marker
sh_args 'touch /mark/join-bad'
B=$(mkbundle joinbad)
kc joinbad run --bundle "$B" "$(new_id joinbad)"
expect_eq "join: wrong namespace type exits 125" 125 "$RC"
expect_contains "join: error names namespace.net" "$ERR" "namespace.net"
expect_true "join: container code did not run" test ! -e "$MARKDIR/join-bad"
trap_holder

# ---- time namespace with offsets ------------------------------------------------------
cfg_reset
C_NAMESPACES="pid network ipc uts mount cgroup time"
C_LINUX_EXTRA=', "timeOffsets": {"boottime": {"secs": 864000, "nanosecs": 0},
  "monotonic": {"secs": 86400, "nanosecs": 0}}'
sh_args 'cut -d. -f1 /proc/uptime'
B=$(mkbundle time)
id=$(new_id time)
kc time run --bundle "$B" --report "$T/time.json" "$id"
if [ ! -e /proc/self/ns/time ]; then
  skip "time: this kernel has no time namespaces"
else
  expect_eq "time: run exits 0" 0 "$RC"
  host_up=$(cut -d. -f1 /proc/uptime)
  expect_true "time: uptime inside is 10 days ahead ($OUT vs $host_up)" \
    test "${OUT:-0}" -ge $((host_up + 864000 - 5))
  expect_eq "time: report namespace.time applied" true "$(layer_field "$T/time.json" namespace.time applied)"
fi

# ---- a user namespace created as root, with uid/gid maps -----------------------------
cfg_reset
C_NAMESPACES="pid network ipc uts mount cgroup user"
C_LINUX_EXTRA=', "uidMappings": [{"containerID": 0, "hostID": 200000, "size": 65536}],
  "gidMappings": [{"containerID": 0, "hostID": 200000, "size": 65536}]'
# sysfs and cgroup2 mounts need their namespaces owned by the new user namespace:
# they are (net and cgroup are new too).
sh_args 'cat /proc/self/uid_map /proc/self/gid_map; id -u'
B=$(mkbundle userns)
chown -R 200000:200000 "$B/rootfs"
id=$(new_id userns)
kc userns run --bundle "$B" --report "$T/userns.json" "$id"
expect_eq "userns: run exits 0" 0 "$RC"
expect_match "userns: uid_map inside" "$(sed -n 1p "$LAST.out")" '^ *0 +200000 +65536'
expect_match "userns: gid_map inside" "$(sed -n 2p "$LAST.out")" '^ *0 +200000 +65536'
expect_eq "userns: uid 0 inside" 0 "$(sed -n 3p "$LAST.out")"
expect_eq "userns: report idmap.uid applied" true "$(layer_field "$T/userns.json" idmap.uid applied)"
expect_eq "userns: report idmap.uid requested" "0:200000:65536" \
  "$(layer_field "$T/userns.json" idmap.uid requested)"
expect_eq "userns: report namespace.user applied" true \
  "$(layer_field "$T/userns.json" namespace.user applied)"

# A user namespace without maps is refused before anything runs.
cfg_reset
C_NAMESPACES="pid network ipc uts mount cgroup user"
with_marker
sh_args 'touch /mark/nomaps'
B=$(mkbundle nomaps)
kc nomaps run --bundle "$B" "$(new_id nomaps)"
expect_ne "userns without maps fails" 0 "$RC"
expect_contains "userns without maps: error names idmap" "$ERR" "idmap"
expect_true "userns without maps: container code did not run" test ! -e "$MARKDIR/nomaps"

# ---- --no-pivot ---------------------------------------------------------------------------
cfg_reset
sh_args 'cat /proc/self/mountinfo | wc -l; ls /'
B=$(mkbundle nopivot)
kc nopivot run --no-pivot --bundle "$B" --report "$T/nopivot.json" "$(new_id nopivot)"
expect_eq "no-pivot: run exits 0" 0 "$RC"
expect_contains "no-pivot: root is the rootfs" "$OUT" "etc"
expect_contains "no-pivot: report says chroot" \
  "$(layer_field "$T/nopivot.json" rootfs.pivot_root detail)" "chroot"

# ---- --preserve-fds, --pid-file, fds closed ---------------------------------------------
cfg_reset
sh_args 'cat <&3; if [ -e /proc/$$/fd/4 ]; then echo fd4=open; else echo fd4=closed; fi'
B=$(mkbundle fds)
echo "through fd 3" > "$T/fd3"
id=$(new_id fds)
timeout 20 "$KIST" --root "$ROOT" run --preserve-fds 1 --bundle "$B" "$id" 3< "$T/fd3" 4< "$T/fd3" \
  > "$T/fds.out" 2> "$T/fds.err" < /dev/null
RC=$?
expect_eq "preserve-fds: run exits 0" 0 "$RC"
expect_contains "preserve-fds: fd 3 readable inside" "$(cat "$T/fds.out")" "through fd 3"
expect_eq "preserve-fds: fd 4 (not preserved) closed" "fd4=closed" "$(sed -n 2p "$T/fds.out")"

cfg_reset
sh_args 'sleep 30'
B=$(mkbundle pidfile)
id=$(new_id pidfile)
kc pidfile create --bundle "$B" --pid-file "$T/pid" "$id"
expect_eq "pid-file: create exits 0" 0 "$RC"
expect_eq "pid-file: holds the state's pid" "$(state_field "$id" pid)" "$(cat "$T/pid" 2> /dev/null)"
kist delete --force "$id" > /dev/null 2>&1

# ---- signals are forwarded by run ------------------------------------------------------------
cfg_reset
sh_args 'trap "echo got-term; exit 3" TERM; echo ready; while :; do sleep 0.1; done'
B=$(mkbundle sig)
id=$(new_id sig)
timeout 20 "$KIST" --root "$ROOT" run --bundle "$B" "$id" > "$T/sig.out" 2> "$T/sig.err" < /dev/null &
RUNPID=$!
for _ in $(seq 400); do grep -q ready "$T/sig.out" 2> /dev/null && break; sleep 0.05; done
kill -TERM "$RUNPID"
wait "$RUNPID"
RC=$?
expect_eq "signals: SIGTERM forwarded, container exit status 3" 3 "$RC"
expect_contains "signals: the container's trap ran" "$(cat "$T/sig.out")" "got-term"

# ---- domainname, oomScoreAdj, linux.devices, bind flags --------------------------------------
cfg_reset
C_TOP_EXTRA=', "domainname": "kist.example"'
C_PROCESS_EXTRA=', "oomScoreAdj": 123'
C_LINUX_EXTRA=', "devices": [{"path": "/dev/kmsg", "type": "c", "major": 1, "minor": 11, "fileMode": 384}]'
mkdir -p "$T/ro-src"
echo data > "$T/ro-src/f"
C_MOUNTS_EXTRA=", $(bind_json "$T/ro-src" /data bind ro nosuid nodev)"
sh_args 'cat /proc/sys/kernel/domainname; cat /proc/self/oom_score_adj; stat -c "%F %t:%T %a" /dev/kmsg; cat /data/f;
  (echo x > /data/g) 2>&1; grep " /data " /proc/self/mountinfo'
B=$(mkbundle misc)
kc misc run --bundle "$B" --report "$T/misc.json" "$(new_id misc)"
expect_eq "misc: run exits 0" 0 "$RC"
expect_eq "domainname inside" kist.example "$(sed -n 1p "$LAST.out")"
expect_eq "oom_score_adj inside" 123 "$(sed -n 2p "$LAST.out")"
expect_eq "linux.devices: /dev/kmsg char 1:11 mode 600" "character special file 1:b 600" "$(sed -n 3p "$LAST.out")"
expect_eq "bind source visible" data "$(sed -n 4p "$LAST.out")"
expect_contains "bind ro: write fails" "$OUT" "Read-only file system"
expect_match "bind flags in mountinfo" "$(grep ' /data ' "$LAST.out")" ' /data ro,nosuid,nodev[, ]'
expect_eq "report domainname applied" true "$(layer_field "$T/misc.json" domainname applied)"
expect_eq "report oom_score_adj applied" true "$(layer_field "$T/misc.json" oom_score_adj applied)"
expect_true "host file untouched" test ! -e "$T/ro-src/g"

# ---- a host that restricts user namespaces: the error names the sysctl ----------------
# The limit is set in a user namespace this test makes (per-namespace sysctl).
cfg_reset
C_NAMESPACES="pid network ipc uts mount cgroup user"
C_LINUX_EXTRA=', "uidMappings": [{"containerID": 0, "hostID": 0, "size": 1}],
  "gidMappings": [{"containerID": 0, "hostID": 0, "size": 1}]'
with_marker
sh_args 'touch /mark/userns-limited'
B=$(mkbundle limited)
id=$(new_id limited)
timeout 20 unshare -Ur sh -c 'echo 0 > /proc/sys/user/max_user_namespaces && exec "$@"' sh \
  "$KIST" --root "$ROOT" run --bundle "$B" "$id" > "$T/limited.out" 2> "$T/limited.err" < /dev/null
RC=$?
expect_eq "userns restricted: exit 125" 125 "$RC"
expect_contains "userns restricted: the error names the sysctl and the fix" "$(cat "$T/limited.err")" \
  "user.max_user_namespaces is 0 here: raise it"
expect_true "userns restricted: container code did not run" test ! -e "$MARKDIR/userns-limited"

nothing_left "t_ns"
