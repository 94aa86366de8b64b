#!/bin/bash
# t_netdev.sh: linux.netDevices (the layer net_devices).  A device of kist's
# network namespace is moved into the container's, renamed, with its
# addresses and its UP state; delete of a live container moves it back under
# its host name (with its addresses); every error exits 125, names
# linux.netDevices.KEY and leaves the device where it was and no state.
#
# Root only.  No link is ever made in the host's network namespace: the
# script re-executes itself in a network namespace of its own (unshare -n),
# where it makes ifb devices, and every kist command runs there.
if [ -z "${KIST_IT_NETNS:-}" ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "$0: linux.netDevices needs root: skipped" >&2
    exit 77
  fi
  export KIST_IT_NETNS=1
  exec unshare -n bash "$0" "$@"
fi
. "$(dirname "$0")/lib.sh"

if ! ip link add kistprobe0 type ifb 2> /dev/null; then
  skip "linux.netDevices" "this kernel cannot make ifb devices (ip link add ... type ifb)"
  exit 0
fi
ip link del kistprobe0

# mkdev NAME ADDR: a fresh ifb device NAME with ADDR, in the test's namespace.
mkdev ()
{
  ip link del "$1" 2> /dev/null
  ip link add "$1" type ifb && ip addr add "$2" dev "$1"
}
has_dev ()
{
  ip -o link show "$1" > /dev/null 2>&1
}
dev_addrs ()
{
  ip -o addr show dev "$1" 2> /dev/null | awk '{ print $4 }' | tr '\n' ' '
}

netdev_cfg ()
{
  cfg_reset
  with_marker
  C_LINUX_EXTRA=", \"netDevices\": $1"
}

# ---- 1. moved in, renamed, its address kept --------------------------------------
mkdev kistnd0 10.99.0.1/24
netdev_cfg '{"kistnd0": {"name": "eth7"}}'
sh_args 'ip -o link show eth7 > /mark/link; ip -o addr show dev eth7 > /mark/addr;
  cat /sys/class/net/eth7/ifindex > /mark/ifindex;
  ip -o link show kistnd0 > /dev/null 2>&1 || echo absent > /mark/old'
b=$(mkbundle move)
id=$(new_id move)
rep=$T/move.json
rm -f "$MARKDIR"/*
kc move-create create --report "$rep" --bundle "$b" "$id"
expect_eq "move: create succeeds" 0 "$RC"
expect_true "move: while created, the test's namespace no longer has kistnd0" eval '! has_dev kistnd0'
pid=$(state_field "$id" pid)
expect_contains "move: from outside (nsenter), the container's namespace has eth7 with the address" \
  "$(nsenter --net="/proc/$pid/ns/net" ip -o addr show dev eth7 2>&1)" "inet 10.99.0.1/24"
expect_eq "move: report says net_devices applied" true "$(layer_field "$rep" net_devices applied)"
expect_eq "move: report says what was requested" "kistnd0 -> eth7" \
  "$(layer_field "$rep" net_devices requested)"
detail=$(layer_field "$rep" net_devices detail)
expect_match "move: the report's detail names the move, the ifindex and the address" "$detail" \
  '^kistnd0 -> eth7 \(ifindex [0-9]+, ifb, DOWN\); addresses 10\.99\.0\.1/24; read back from outside'
idx=$(printf '%s' "$detail" | sed -n 's/.*(ifindex \([0-9]*\),.*/\1/p')
expect_contains "move: state.json records the device for delete" "$(cat "$ROOT/$id/state.json")" \
  '"host": "kistnd0"'
kc move-start start "$id"
expect_eq "move: start succeeds" 0 "$RC"
wait_gone "$pid"
expect_contains "move: inside, ip -o link shows eth7" "$(cat "$MARKDIR/link" 2> /dev/null)" "eth7:"
expect_contains "move: inside, eth7 has 10.99.0.1/24 (addresses preserved)" \
  "$(cat "$MARKDIR/addr" 2> /dev/null)" "inet 10.99.0.1/24"
expect_eq "move: inside, /sys/class/net/eth7/ifindex is the report's" \
  "${idx:-(no ifindex in the report)}" "$(cat "$MARKDIR/ifindex" 2> /dev/null)"
expect_eq "move: inside, there is no kistnd0" absent "$(cat "$MARKDIR/old" 2> /dev/null)"
# The container exited: its namespace died and the kernel destroyed the
# (virtual) ifb device with it.  delete says so in its log, no error.
kc move-delete --debug delete "$id"
expect_eq "move: delete of the stopped container succeeds" 0 "$RC"
expect_contains "move: delete's log says the kernel destroyed the ifb device" "$ERR" \
  "destroyed the ifb device kistnd0"
expect_true "move: a virtual device goes with the namespace that died" eval '! has_dev kistnd0'
nothing_left "move"

# ---- 2. delete of a created container moves it back ---------------------------------
mkdev kistnd0 10.99.0.1/24
netdev_cfg '{"kistnd0": {}}'
sh_args 'true'
b=$(mkbundle back)
id=$(new_id back)
kc back-create create --bundle "$b" "$id"
expect_eq "back: create succeeds (name absent: the same name inside)" 0 "$RC"
pid=$(state_field "$id" pid)
expect_contains "back: inside, the device keeps its name kistnd0" \
  "$(nsenter --net="/proc/$pid/ns/net" ip -o link show kistnd0 2>&1)" "kistnd0:"
left=here
has_dev kistnd0 || left=gone
expect_eq "back: while created, the test's namespace has no kistnd0" gone "$left"
kc back-delete delete "$id"
expect_eq "back: delete of the created container succeeds" 0 "$RC"
expect_eq "back: after delete, kistnd0 (gone while created) is back in the test's namespace" \
  "gone back" "$left $(has_dev kistnd0 && echo back)"
expect_eq "back: with its address (moved back like it was moved in)" "10.99.0.1/24 " \
  "$(dev_addrs kistnd0)"
nothing_left "back"

# Running, UP, renamed, two addresses: delete --force moves it back before the kill.
mkdev kistnd0 10.99.0.1/24
ip addr add fd00:99::1/64 dev kistnd0 nodad
ip link set kistnd0 up
netdev_cfg '{"kistnd0": {"name": "eth7"}}'
sh_args 'ip -o link show eth7 > /mark/up; ip -o addr show dev eth7 > /mark/addr; sleep 100'
b=$(mkbundle force)
id=$(new_id force)
rm -f "$MARKDIR"/*
kc force-create create --bundle "$b" "$id"
left=here
has_dev kistnd0 || left=gone
kc force-start start "$id"
expect_eq "force: create and start succeed" 0 "$RC"
for _ in $(seq 50); do [ -s "$MARKDIR/addr" ] && break; sleep 0.1; done
expect_contains "force: inside, eth7 is UP (as it was)" "$(cat "$MARKDIR/up" 2> /dev/null)" ",UP"
expect_contains "force: inside, eth7 has its IPv6 address too" "$(cat "$MARKDIR/addr" 2> /dev/null)" \
  "fd00:99::1/64"
kc force-delete delete --force "$id"
expect_eq "force: delete --force of the running container (with kistnd0 in it) succeeds" \
  "gone 0" "$left $RC"
expect_eq "force: kistnd0 (gone while it ran) is back under its host name" "gone back" \
  "$left $(has_dev kistnd0 && echo back)"
expect_eq "force: back UP" "gone UP" "$left $(ip -o link show kistnd0 | grep -o ',UP' | tr -d ,)"
expect_eq "force: back with both addresses" "gone 10.99.0.1/24 fd00:99::1/64 " \
  "$left $(dev_addrs kistnd0 | tr ' ' '\n' | grep -v '^fe80' | tr '\n' ' ')"
nothing_left "force"

# ---- 3. errors: exit 125, the message names linux.netDevices.KEY, nothing moved ----
# bad_netdev TAG NETDEVICES WORDS...: create fails, names each of WORDS,
# kistnd0 is still in the test's namespace with its address, nothing left.
bad_netdev ()
{
  local tag=$1 nd=$2 w b id
  shift 2
  mkdev kistnd0 10.99.0.1/24
  netdev_cfg "$nd"
  [ -n "${BAD_NS:-}" ] && C_NAMESPACES=$BAD_NS
  [ -n "${BAD_MOUNT:-}" ] && C_MOUNTS_EXTRA+=", $BAD_MOUNT"
  b=$(mkbundle "$tag")
  id=$(new_id "$tag")
  kc "$tag" --debug create --bundle "$b" "$id"
  expect_eq "$tag: refused with exit 125" 125 "$RC"
  if [ -n "${BAD_BACK:-}" ]; then
    expect_contains "$tag: the undo moved kistnd0 back (debug log)" "$ERR" \
      "network device kistnd0 (eth7 inside) moved back into kist's network namespace"
  fi
  for w in "$@"; do
    expect_contains "$tag: the error says $w" "$ERR" "$w"
  done
  expect_true "$tag: kistnd0 is still in the test's namespace" has_dev kistnd0
  expect_eq "$tag: with its address" "10.99.0.1/24 " "$(dev_addrs kistnd0)"
  expect_true "$tag: no state dir" test ! -e "$ROOT/$id"
  nothing_left "$tag"
}
bad_netdev nd-missing '{"kistnone0": {"name": "eth7"}}' "linux.netDevices.kistnone0" \
  "no device kistnone0"
bad_netdev nd-taken '{"kistnd0": {"name": "lo"}}' "linux.netDevices.kistnd0" \
  "already has a device named lo"
BAD_NS="pid ipc uts mount cgroup" bad_netdev nd-nonetns '{"kistnd0": {"name": "eth7"}}' \
  "linux.netDevices.kistnd0" "network namespace"
bad_netdev nd-slash '{"a/b": {}}' 'linux.netDevices["a/b"]' "not a network interface name"
bad_netdev nd-long '{"kistnd0": {"name": "abcdefghijklmnop"}}' "linux.netDevices.kistnd0.name" \
  "IFNAMSIZ"
bad_netdev nd-dot '{"kistnd0": {"name": ".."}}' "linux.netDevices.kistnd0.name" "is . or .."
bad_netdev nd-space '{"kistnd0": {"name": "eth 7"}}' "linux.netDevices.kistnd0.name" "white space"
bad_netdev nd-twice '{"kistnd0": {"name": "eth7"}, "lo": {"name": "eth7"}}' \
  "linux.netDevices.lo" "unique"
# lo cannot leave its namespace: kistnd0, moved first, goes back (all or none).
BAD_BACK=1 bad_netdev nd-undo '{"kistnd0": {"name": "eth7"}, "lo": {"name": "lo7"}}' "linux.netDevices.lo" \
  "cannot be moved"
# A failure in the init after the move: the held namespace keeps kistnd0
# alive until the undo moved it back.
BAD_BACK=1 BAD_MOUNT=$(bind_json "$T/does-not-exist" /mnt rbind ro) bad_netdev nd-initfail \
  '{"kistnd0": {"name": "eth7"}}' "mounts"

# ---- 4. allowed to degrade: runs without the device, says so ------------------------
mkdev kistnd0 10.99.0.1/24
netdev_cfg '{"kistnone0": {}}'
sh_args 'echo ran > /mark/ran'
b=$(mkbundle degr)
id=$(new_id degr)
rep=$T/degr.json
rm -f "$MARKDIR"/*
kc degr run --allow-degraded net_devices --report "$rep" --bundle "$b" "$id"
expect_eq "degrade: the run succeeds with --allow-degraded net_devices" 0 "$RC"
expect_true "degrade: the container ran" test -e "$MARKDIR/ran"
expect_eq "degrade: report says net_devices applied false" false \
  "$(layer_field "$rep" net_devices applied)"
expect_contains "degrade: with the reason" "$(layer_field "$rep" net_devices reason)" \
  "linux.netDevices.kistnone0"
expect_contains "degrade: kist warns it runs without it" "$ERR" "net_devices"
nothing_left "degrade"

# ---- 5. a namespace joined by path: the device stays there at delete ---------------
mkdev kistnd0 10.99.0.1/24
unshare -n sleep 300 &
holder=$!
for _ in $(seq 50); do
  [ "$(readlink "/proc/$holder/ns/net")" != "$(readlink /proc/self/ns/net)" ] && break
  sleep 0.05
done
netdev_cfg '{"kistnd0": {"name": "eth7"}}'
C_NAMESPACES="pid ipc uts mount cgroup"
b=$(mkbundle joined)
sed -i "s#\"namespaces\": \[#\"namespaces\": [{\"type\": \"network\", \"path\": \"/proc/$holder/ns/net\"}, #" \
  "$b/config.json"
id=$(new_id joined)
kc joined-create create --bundle "$b" "$id"
expect_eq "joined: create into a namespace joined by path succeeds" 0 "$RC"
expect_contains "joined: the joined namespace has eth7 with the address" \
  "$(nsenter --net="/proc/$holder/ns/net" ip -o addr show dev eth7 2>&1)" "10.99.0.1/24"
kc joined-delete delete "$id"
expect_eq "joined: delete succeeds" 0 "$RC"
expect_true "joined: the device stays in the joined namespace (its owner's)" eval \
  "nsenter --net=/proc/$holder/ns/net ip -o link show eth7 > /dev/null 2>&1"
expect_true "joined: and does not come back here" eval '! has_dev kistnd0'
kill "$holder"
wait "$holder" 2> /dev/null
nothing_left "joined"

# ---- 6. rootless: moving needs CAP_NET_ADMIN in kist's namespace -------------------
if nobody_ok "rootless: linux.netDevices is refused with the fix"; then
  mkdev kistnd0 10.99.0.1/24
  nobody_dir "$XDG" 0700
  rb=$T/rootless
  nobody_bundle "$rb"
  kn_in "$rb" rl-spec spec --rootless
  rootless_config "$rb/config.json" '["true"]' \
    | sed 's#"linux" *: *{#"linux": {"netDevices": {"kistnd0": {"name": "eth7"}}, #' \
    > "$rb/config.json.new" && mv "$rb/config.json.new" "$rb/config.json"
  chown "$NOBODY_UID:$NOBODY_GID" "$rb/config.json"
  kn_in "$rb" rl-run run rl-"$PREFIX"
  expect_eq "rootless: refused with exit 125" 125 "$RC"
  expect_contains "rootless: the error names linux.netDevices" "$ERR" "linux.netDevices"
  expect_contains "rootless: and the fix" "$ERR" \
    "moving a device needs CAP_NET_ADMIN in kist's network namespace"
  expect_eq "rootless: kistnd0 stays, with its address" "10.99.0.1/24 " "$(dev_addrs kistnd0)"
  expect_eq "rootless: no state dir" "" "$(ls -A "$XDG/kist" 2> /dev/null | grep -vx '~seccomp-cache')"
fi

ip link del kistnd0 2> /dev/null
true
