#!/bin/bash
# t_probe.sh: kist sandbox --probe (issue 12), as root and as nobody: what a
# sandbox with the given options would get on this host, without running
# anything.
#   - --probe=json is one JSON object (python3 -m json.tool) listing every
#     layer; its "status" and kist's exit status say whether every requested
#     layer can be applied (0) or not (1); --probe prints the table;
#   - the other options count: --memory asks for the memory controller (not
#     available on a host whose cgroup2 hierarchy lacks it, with the reason
#     and the fix), --net host and --seccomp none make their layers not
#     requested, a broken --seccomp profile or an rlimit above the hard limit
#     (nobody) cannot be applied, --workspace tries the overlay, root's
#     --userns is refused;
#   - as nobody inside a user namespace whose user.max_user_namespaces is 0,
#     namespace.user is not available and the reason names the sysctl;
#   - no COMMAND is needed, and one given is not run; nothing is left on the
#     host: no state root, no sandbox dir, no cgroup dir, no mount.
# Every check fails on a kist without --probe (unknown option, exit 125).
. "$(dirname "$0")/lib.sh"

nobody_dir "$XDG" 0700
PROOT=$T/probe-root        # --root for root: must never be created
WS=$T/ws
nobody_dir "$WS" 0755
echo hello > "$WS/file"
chown "$NOBODY_UID:$NOBODY_GID" "$WS/file" 2> /dev/null
printf '{"defaultAction": "SCMP_ACT_NO_SUCH_ACTION"}\n' > "$T/bad-profile.json"
chmod 0644 "$T/bad-profile.json"

# The cgroup2 mount as kist finds it (never assumed at /sys/fs/cgroup).
CG2=$LO_CG2
HAVE_MEMORY=no
[ -n "$CG2" ] && grep -qw memory "$CG2/cgroup.controllers" 2> /dev/null && HAVE_MEMORY=yes

MODE=root

# kp TAG ARGS...: `kist sandbox ARGS` as root (--root $PROOT) or as nobody
# (XDG_RUNTIME_DIR=$XDG, from /); sets RC, OUT, ERR and JSON (its stdout's
# file).  The pid of every kist it runs goes to $T/kpids (the id of any
# sandbox it made would hold it: sandbox-PID-...).
kp ()
{
  local tag=$MODE-$1 as=()
  shift
  [ "$MODE" = root ] || as=("${AS_NOBODY[@]}")
  LAST=$T/$tag
  printf 'kist sandbox %s (as %s)\n' "$*" "$MODE" > "$LAST.cmd"
  local root=()
  [ "$MODE" = root ] && root=(--root "$PROOT")
  (cd / && XDG_RUNTIME_DIR=$XDG timeout -k 5 "$KIST_IT_TIMEOUT" \
      sh -c 'echo $$ >> "$0"; exec "$@"' "$T/kpids" "${as[@]}" "$KIST" "${root[@]}" sandbox "$@") \
    > "$LAST.out" 2> "$LAST.err" < /dev/null
  RC=$?
  OUT=$(cat "$LAST.out")
  ERR=$(cat "$LAST.err")
  JSON=$LAST.out
}

# json_ok FILE: FILE is one valid JSON document.
json_ok ()
{
  python3 -m json.tool "$1" > /dev/null
}

# field LAYER KEY: that key of the probe's row for LAYER (in $JSON).
field ()
{
  layer_field "$JSON" "$1" "$2"
}

# expected_status: 1 when some requested row is not available, else 0,
# computed from the rows themselves.
expected_status ()
{
  python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(1 if any(l["requested"] and not l["available"] for l in d["layers"]) else 0)' "$JSON"
}

# A snapshot of what a probe must not change: the state roots, the cgroup2
# directories a sandbox of these kist processes would have made
# (sandbox-PID-*, or the probe's own placeholder sandbox-ID) and this test's
# mounts (it runs in its own mount namespace: a mount the probe leaked out of
# its child would show here).  Other sandboxes on the host are not counted.
snapshot ()
{
  local names=(-name sandbox-ID) p
  for p in $(cat "$T/kpids" 2> /dev/null); do
    names+=(-o -name "sandbox-$p-*")
  done
  ls -A "$PROOT" "$XDG" 2>&1
  [ -n "$CG2" ] && find "$CG2" -maxdepth 6 -type d \( "${names[@]}" \) 2> /dev/null | sort
  awk '{ print $5, $9 }' /proc/self/mountinfo | sort
}

cases ()
{
  local before after
  before=$(snapshot)

  # --- the JSON, the layers, the exit status
  kp json --probe=json
  expect_true "$MODE: --probe=json is valid JSON" json_ok "$JSON"
  expect_eq "$MODE: probeVersion" 1 "$(jget "$JSON" probeVersion)"
  expect_eq "$MODE: user.uid" "$(if [ "$MODE" = root ]; then echo 0; else echo "$NOBODY_UID"; fi)" \
    "$(jget "$JSON" user.uid)"
  local names want missing=""
  names=$(layer_names "$JSON")
  for want in namespace.user idmap.uid idmap.gid namespace.mount namespace.pid namespace.net \
    namespace.uts namespace.ipc namespace.cgroup network.loopback mounts cgroup capabilities \
    no_new_privileges seccomp landlock; do
    grep -qx "$want" <<< "$names" || missing+=" $want"
  done
  expect_eq "$MODE: every layer is listed" "" "$missing"
  expect_eq "$MODE: exit status = whether every requested layer can be applied" \
    "$(expected_status)" "$RC"
  expect_eq "$MODE: the JSON's status is the exit status" "$RC" "$(jget "$JSON" status)"
  expect_eq "$MODE: seccomp strict can be applied" true "$(field seccomp available)"
  expect_eq "$MODE: namespace.net can be applied" true "$(field namespace.net available)"
  expect_eq "$MODE: network.loopback can be applied" true "$(field network.loopback available)"
  expect_eq "$MODE: mounts (the scratch tmpfs) can be applied" true "$(field mounts available)"
  if [ "$MODE" = root ]; then
    expect_eq "root: namespace.user not requested" false "$(field namespace.user requested)"
    expect_eq "root: nothing unavailable by default: exit 0" 0 "$RC"
  else
    expect_eq "nobody: namespace.user requested" true "$(field namespace.user requested)"
    expect_eq "nobody: namespace.user can be applied" true "$(field namespace.user available)"
    expect_eq "nobody: idmap.uid requested" true "$(field idmap.uid requested)"
  fi

  # --- the table
  local json_status=$RC
  kp table --probe
  expect_match "$MODE: --probe prints the table" "$OUT" '^LAYER +APPLY +DETAIL OR REASON'
  expect_match "$MODE: the table's seccomp row" "$OUT" '^seccomp +yes +profile strict compiles'
  expect_match "$MODE: the table's summary" "$OUT" '^summary: '
  expect_eq "$MODE: --probe and --probe=json agree on the status" "$json_status" "$RC"

  # --- --memory: the memory controller
  kp mem --probe=json --memory 64m
  expect_true "$MODE --memory: valid JSON" json_ok "$JSON"
  expect_eq "$MODE --memory: cgroup.memory.max requested" true "$(field cgroup.memory.max requested)"
  if [ "$HAVE_MEMORY" = no ]; then
    expect_eq "$MODE --memory: not available (no memory controller in $CG2)" false \
      "$(field cgroup.memory.max available)"
    expect_contains "$MODE --memory: the reason names the memory controller" \
      "$(field cgroup.memory.max reason)" "memory controller not available in the cgroup2 hierarchy at $CG2"
    expect_match "$MODE --memory: and the fix" "$(field cgroup.memory.max fix)" 'controller|delegated'
    expect_eq "$MODE --memory: exit 1" 1 "$RC"
    expect_contains "$MODE --memory: the summary names it" "$(jget "$JSON" summary)" \
      "cgroup.memory.max"
  elif [ "$MODE" = root ]; then
    expect_eq "root --memory: available (the memory controller is there)" true \
      "$(field cgroup.memory.max available)"
  fi
  kp memdeg --probe=json --memory 64m --allow-degraded cgroup.memory.max
  if [ "$HAVE_MEMORY" = no ] && [ "$MODE" = root ]; then
    expect_contains "root --memory --allow-degraded: the summary says it would run without it" \
      "$(jget "$JSON" summary)" "run without it"
  fi

  # --- options that change what is requested
  kp hostnet --probe=json --net host --seccomp none
  expect_eq "$MODE --net host: namespace.net not requested" false "$(field namespace.net requested)"
  expect_eq "$MODE --net host: network.loopback not requested" false \
    "$(field network.loopback requested)"
  expect_eq "$MODE --seccomp none: seccomp not requested" false "$(field seccomp requested)"
  kp badprof --probe=json --seccomp "$T/bad-profile.json"
  expect_eq "$MODE --seccomp BROKEN: not available" false "$(field seccomp available)"
  expect_contains "$MODE --seccomp BROKEN: the reason names the action" "$(field seccomp reason)" \
    "SCMP_ACT_NO_SUCH_ACTION"
  expect_eq "$MODE --seccomp BROKEN: exit 1" 1 "$RC"
  kp ws --probe=json --workspace "$WS" --ro /usr
  expect_eq "$MODE --workspace: mounts can be applied (the overlay was mounted)" true \
    "$(field mounts available)"
  expect_contains "$MODE --workspace: the detail names the overlay" "$(field mounts detail)" \
    "overlay on it"
  expect_contains "$MODE --workspace --ro /usr: the bind was tried" "$(field mounts detail)" \
    "1 --ro/--rw binds (cloned with their flags)"
  if [ "$MODE" = root ]; then
    kp userns --probe=json --userns
    expect_eq "root --userns: namespace.user requested" true "$(field namespace.user requested)"
    expect_eq "root --userns: not available" false "$(field namespace.user available)"
    expect_eq "root --userns: exit 1" 1 "$RC"
    kp userns-run --userns -- /bin/true
    expect_eq "root --userns without --probe: still refused (125)" 125 "$RC"
  else
    kp nofile --probe=json --nofile 999999999
    expect_eq "nobody --nofile above the hard limit: not available" false \
      "$(field rlimit.RLIMIT_NOFILE available)"
    expect_contains "nobody --nofile: the reason" "$(field rlimit.RLIMIT_NOFILE reason)" \
      "above this process's hard limit"
    expect_eq "nobody --nofile: exit 1" 1 "$RC"
    # The upper dir's filesystem needs user xattrs: not so under /proc.
    kn_in / nobody-noxattr --root /proc/kist-probe-none sandbox --probe=json --workspace "$WS"
    JSON=$T/nobody-noxattr.out
    expect_eq "nobody --workspace, state root without user xattrs: mounts not available" false \
      "$(field mounts available)"
    expect_contains "nobody --workspace, no user xattrs: the reason" "$(field mounts reason)" \
      "has no user xattrs"
  fi

  # --- usage; a COMMAND is not run
  kp bad --probe=yaml
  expect_eq "$MODE --probe=yaml: a usage error (125)" 125 "$RC"
  rm -f "$T/flag/ran"
  kp cmd --probe -- /usr/bin/touch "$T/flag/ran"
  expect_true "$MODE --probe -- COMMAND: the command did not run" test ! -e "$T/flag/ran"
  expect_match "$MODE --probe -- COMMAND: the table is printed" "$OUT" '^LAYER '

  after=$(snapshot)
  expect_eq "$MODE: nothing created (state roots, sandbox cgroups, mounts)" "$before" "$after"
  expect_true "$MODE: no state root made" test ! -e "$PROOT" -a ! -e "$XDG/kist"
}

mkdir -p "$T/flag"
chmod 0777 "$T/flag"
cases
if nobody_ok "sandbox --probe as nobody"; then
  MODE=nobody
  cases

  # --- restricted user namespaces: as nobody in a user namespace whose
  # user.max_user_namespaces is 0 (restricted_userns, lib.sh).
  restricted_userns limited "$KIST" sandbox --probe=json
  JSON=$LAST.out
  expect_true "userns restricted: valid JSON" json_ok "$JSON"
  expect_eq "userns restricted: namespace.user requested" true "$(field namespace.user requested)"
  expect_eq "userns restricted: namespace.user not available" false \
    "$(field namespace.user available)"
  expect_contains "userns restricted: the reason names the sysctl" \
    "$(field namespace.user reason)" "user.max_user_namespaces is 0 here"
  expect_contains "userns restricted: the fix" "$(field namespace.user fix)" \
    "sysctl -w user.max_user_namespaces="
  expect_eq "userns restricted: namespace.mount not available either" false \
    "$(field namespace.mount available)"
  expect_eq "userns restricted: exit 1" 1 "$RC"
fi
sandbox_dirs_empty
nothing_left "sandbox --probe"
