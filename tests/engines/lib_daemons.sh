# tests/engines/lib_daemons.sh: a containerd and a dockerd of the test's own,
# for e_containerd.sh and e_docker.sh.  Source it instead of lib.sh (it
# sources lib.sh: $T, $E, RT, RT_GLOBAL, eng_* and the integration helpers).
#
#   eng_daemons_init NAME BINARY...  eng_init NAME BINARY..., plus:
#                     - the host's cgroup2 mount is MOVED (not bound) over
#                       /sys/fs/cgroup, so that this namespace has exactly one
#                       cgroup2 mount, as a pure cgroup v2 host does (see
#                       below: a bind leaves the old entry in mountinfo);
#                     - private tmpfs over /run and /etc/docker: containerd's
#                       shims put their sockets in /run/containerd/s whatever
#                       the config says, ctr its fifos in /run/containerd/fifo,
#                       dockerd writes /etc/docker/key.json;
#                     - snapshots of the host's links and iptables rules.
#   eng_rt_wrapper OUT LOG [noglobal|plain]  an executable for ctr
#                     --runc-binary (or docker's runtime path): logs argv to
#                     LOG, keeps a copy of each create's config.json as
#                     LOG.config.ID.json, runs $RT "${RT_GLOBAL[@]}" "$@"
#                     (noglobal: without RT_GLOBAL, docker adds it from
#                     runtimeArgs; plain: without RT_GLOBAL and without
#                     touching config.json, to see the runtime fail closed).
#                     For a runtime other than kist it first deletes
#                     linux.resources.cpu from the bundle's config.json: ctr
#                     always sends cpu.shares, this host's cgroup2 has no cpu
#                     controller, and runc has no degradation option; the
#                     result is what kist's --allow-degraded=cgroup.* does.
#   ctrd_start        containerd: config, root, state, sockets, opt dir under
#                     $E/ctrd, no CRI plugin.  CTRD_SOCK, CTRD_PID.
#   ctrc ARGS...      ctr on that containerd, namespace $CTR_NS, with a
#                     timeout (stdin from the caller).
#   ctrd_stop         every task killed and deleted, every container removed,
#                     the daemon stopped (by pid), then any shim of it.
#   dockerd_start RUNTIMES_JSON  dockerd on $CTRD_SOCK: daemon.json with
#                     data-root, exec-root, pidfile under $E/dk, socket
#                     $E/dk/docker.sock, "iptables": false, "ip-forward":
#                     false, the test's own bridge $DK_BRIDGE (made here),
#                     cgroup-parent $ENG_CGROUP, "runtimes": RUNTIMES_JSON
#                     (its first key is the default runtime).
#   dk ARGS...        the Debian client /usr/bin/docker on that daemon.
#   dockerd_stop      containers removed, the daemon stopped, the bridge gone.
#   eng_daemons_check_clean WHAT  after the daemons are stopped: no daemon or
#                     shim of ours, the private /run and /etc/docker
#                     unmounted, the host's iptables rules and forwarding
#                     sysctls unchanged, no interface or /tmp/ptyN console
#                     socket dir added, then eng_check_clean WHAT.

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ENG_TIMEOUT=${KIST_ENGINE_TIMEOUT:-60}

# --- the namespace's view ---------------------------------------------------------------

# kist finds the cgroup2 hierarchy as the first cgroup2 line of
# /proc/self/mountinfo; with the host's /sys/fs/cgroup/unified bound over
# /sys/fs/cgroup, that line is the now hidden original, and every create
# fails with "open the cgroup2 mount `/sys/fs/cgroup/unified`: No such file
# or directory".  Moving the mount leaves one cgroup2 line, at /sys/fs/cgroup.
_eng_move_cgroup2 ()
{
  local cg2
  cg2=$(awk '{ for (i = 7; i <= NF; i++) if ($i == "-") { if ($(i + 1) == "cgroup2") print $5; break } }' \
    /proc/self/mountinfo | head -n 1)
  [ -n "$cg2" ] && [ "$cg2" != /sys/fs/cgroup ] || return 0
  mount --move "$cg2" /sys/fs/cgroup
}

ENG_PRIVATE_MOUNTS=()
eng_daemons_init ()
{
  if [ -z "${KIST_IT_IN_NS:-}" ] || [ "$(readlink /proc/self/ns/mnt)" = "$(readlink /proc/1/ns/mnt)" ]; then
    fail "eng_daemons_init: runs in a private mount namespace" "$(readlink /proc/self/ns/mnt)"
    exit 1
  fi
  _eng_move_cgroup2 || { fail "move the host's cgroup2 mount over /sys/fs/cgroup"; exit 1; }
  eng_init "$@"
  local d
  for d in /run /etc/docker; do
    [ -d "$d" ] || continue
    if ! mount -t tmpfs -o mode=0755,nosuid,nodev,size=64m "eng-private" "$d"; then
      fail "a private tmpfs over $d in the test's mount namespace"
      exit 1
    fi
    ENG_PRIVATE_MOUNTS+=("$d")
  done
  eng_on_cleanup _eng_private_undo
  ENG_LINKS_BEFORE=$(_eng_links)
  ENG_IPT_BEFORE=$(_eng_iptables)
  ENG_SYSCTL_BEFORE=$(_eng_sysctls)
  ENG_TMP_BEFORE=$(_eng_tmp_pty)
  export DOCKER_CONFIG=$E/docker-client
}

_eng_private_undo ()
{
  local i
  for ((i = ${#ENG_PRIVATE_MOUNTS[@]} - 1; i >= 0; i--)); do
    umount "${ENG_PRIVATE_MOUNTS[i]}" 2> /dev/null || umount -l "${ENG_PRIVATE_MOUNTS[i]}" 2> /dev/null
  done
  ENG_PRIVATE_MOUNTS=()
}

_eng_links ()
{
  ip -o link show 2> /dev/null | awk -F': ' '{ sub(/@.*/, "", $2); print $2 }' | sort
}

# Console socket dirs a shim makes when TMPDIR is not set.
_eng_tmp_pty ()
{
  find /tmp -maxdepth 1 -name 'pty[0-9]*' 2> /dev/null | sort
}

_eng_sysctls ()
{
  local f
  for f in /proc/sys/net/ipv4/ip_forward /proc/sys/net/ipv6/conf/all/forwarding \
      /proc/sys/net/bridge/bridge-nf-call-iptables; do
    [ -e "$f" ] && echo "$f $(cat "$f")"
  done
}

_eng_iptables ()
{
  local t
  for t in filter nat mangle raw; do
    echo "== $t"
    iptables -w 5 -t "$t" -S 2>&1
  done
}

# --- the runtime wrapper for ctr ------------------------------------------------------------

eng_rt_wrapper ()
{
  local out=$1 log=$2 g=
  [ ${#RT_GLOBAL[@]} -gt 0 ] && [ -z "${3:-}" ] && printf -v g '%q ' "${RT_GLOBAL[@]}"
  local strip=0
  eng_is_kist || [ "${3:-}" = plain ] || strip=1
  cat > "$out" <<EOF
#!/bin/bash
log=$(printf '%q' "$log")
printf '%s\n' "\$*" >> "\$log"
args=("\$@")
for ((i = 0; i < \${#args[@]}; i++)); do
  if [ "\${args[i]}" = create ] || [ "\${args[i]}" = run ]; then
    b=.
    for ((j = i + 1; j < \${#args[@]}; j++)); do
      case \${args[j]} in --bundle|-b) b=\${args[j+1]} ;; --bundle=*) b=\${args[j]#--bundle=} ;; esac
    done
    cp "\$b/config.json" "\$log.config.\${*: -1}.json" 2> /dev/null
    if [ $strip = 1 ]; then
      jq -c 'del(.linux.resources.cpu)' "\$b/config.json" > "\$b/config.json.new" \\
        && mv "\$b/config.json.new" "\$b/config.json"
    fi
    break
  fi
done
exec $(printf '%q' "$RT") $g"\$@"
EOF
  chmod 0755 "$out"
}

# --- containerd ----------------------------------------------------------------------------

CTRD_PID=
CTR_NS=${PREFIX}
ctrd_start ()
{
  local c=$E/ctrd i
  mkdir -p "$c"
  CTRD_DIR=$c
  CTRD_SOCK=$c/c.sock
  cat > "$c/config.toml" <<EOF
version = 2
root = "$c/root"
state = "$c/state"
disabled_plugins = ["io.containerd.grpc.v1.cri", "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper",
  "io.containerd.snapshotter.v1.aufs", "io.containerd.tracing.processor.v1.otlp",
  "io.containerd.internal.v1.tracing"]

[grpc]
  address = "$CTRD_SOCK"

[ttrpc]
  address = "$CTRD_SOCK.ttrpc"

[debug]
  address = ""

[metrics]
  address = ""

[plugins]
  [plugins."io.containerd.internal.v1.opt"]
    path = "$c/opt"
EOF
  # The shims make their console sockets in $TMPDIR (else /tmp/ptyN).
  mkdir -p "$c/tmp"
  TMPDIR=$c/tmp containerd --config "$c/config.toml" > "$c/log" 2>&1 < /dev/null &
  CTRD_PID=$!
  eng_on_cleanup ctrd_stop
  for ((i = 0; i < 300; i++)); do
    if [ -S "$CTRD_SOCK" ] && timeout 5 ctr --address "$CTRD_SOCK" version > /dev/null 2>&1; then
      return 0
    fi
    pid_alive "$CTRD_PID" || break
    sleep 0.1
  done
  fail "containerd starts" "$(tail -n 20 "$c/log")"
  return 1
}

ctrc ()
{
  timeout -k 5 "$ENG_TIMEOUT" ctr --address "$CTRD_SOCK" -n "$CTR_NS" "$@"
}

# ctrd_shims: the shims of this containerd.
ctrd_shims ()
{
  eng_pids_matching "-address $CTRD_SOCK"
}

# eng_stop_pids SECONDS PID...: SIGTERM, SIGKILL after SECONDS; succeeds when
# they ended on SIGTERM.
eng_stop_pids ()
{
  local secs=$1 p rc=0
  shift
  [ $# -gt 0 ] || return 0
  kill -TERM "$@" 2> /dev/null
  for p in "$@"; do
    if ! wait_gone "$p" "$secs"; then
      kill -KILL "$p" 2> /dev/null
      wait_gone "$p" 5
      rc=1
    fi
  done
  return $rc
}

ctrd_stop ()
{
  [ -n "$CTRD_PID" ] || return 0
  local ns c s
  if pid_alive "$CTRD_PID"; then
    for ns in $(timeout 10 ctr --address "$CTRD_SOCK" namespaces ls -q 2> /dev/null); do
      for c in $(timeout 10 ctr --address "$CTRD_SOCK" -n "$ns" tasks ls -q 2> /dev/null); do
        timeout 10 ctr --address "$CTRD_SOCK" -n "$ns" tasks kill -a -s SIGKILL "$c" > /dev/null 2>&1
        timeout 10 ctr --address "$CTRD_SOCK" -n "$ns" tasks rm -f "$c" > /dev/null 2>&1
      done
      for c in $(timeout 10 ctr --address "$CTRD_SOCK" -n "$ns" containers ls -q 2> /dev/null); do
        timeout 10 ctr --address "$CTRD_SOCK" -n "$ns" containers rm "$c" > /dev/null 2>&1
      done
    done
  fi
  eng_stop_pids 10 "$CTRD_PID" || echo "# containerd needed SIGKILL" >&2
  wait "$CTRD_PID" 2> /dev/null
  CTRD_PID=
  s=$(ctrd_shims)
  # shellcheck disable=SC2086
  [ -z "$s" ] || eng_stop_pids 5 $s
  # A runtime call a shim was waiting for (its argv names the bundle).
  s=$(eng_pids_matching "$CTRD_DIR/")
  # shellcheck disable=SC2086
  [ -z "$s" ] || eng_stop_pids 5 $s
  # The snapshotter's and the shims' mounts, should any be left.
  eng_umount_under "$CTRD_DIR" > /dev/null
}

# --- dockerd --------------------------------------------------------------------------------

DOCKERD_PID=
dockerd_start ()
{
  local d=$E/dk i rt_name
  mkdir -p "$d" "$DOCKER_CONFIG"
  DK_DIR=$d
  DK_SOCK=$d/docker.sock
  DK_BRIDGE=kbr${PREFIX#kit}
  DK_BRIDGE=${DK_BRIDGE:0:15}
  rt_name=$(printf '%s' "$1" | jq -r 'keys_unsorted[0]') || return 1
  # A /24 that no route of the host uses.
  DK_NET=
  for i in 213 214 215 216 217 218 219; do
    if ! ip -4 route show | grep -q "^10\.$i\."; then
      DK_NET=10.$i.$(( $$ % 250 + 1 ))
      break
    fi
  done
  if [ -z "$DK_NET" ] || ! ip link add "$DK_BRIDGE" type bridge; then
    fail "create the test's bridge $DK_BRIDGE"
    return 1
  fi
  eng_on_cleanup dockerd_stop
  ip addr add "$DK_NET.1/24" dev "$DK_BRIDGE" && ip link set "$DK_BRIDGE" up
  cat > "$d/daemon.json" <<EOF
{
  "data-root": "$d/data",
  "exec-root": "$d/exec",
  "pidfile": "$d/docker.pid",
  "iptables": false,
  "ip-forward": false,
  "ip-masq": false,
  "ipv6": false,
  "userland-proxy": false,
  "bridge": "$DK_BRIDGE",
  "storage-driver": "overlay2",
  "exec-opts": ["native.cgroupdriver=cgroupfs"],
  "cgroup-parent": "$ENG_CGROUP",
  "live-restore": false,
  "features": {"buildkit": false},
  "default-runtime": "$rt_name",
  "runtimes": $1
}
EOF
  mkdir -p "$d/tmp"
  TMPDIR=$d/tmp dockerd --config-file "$d/daemon.json" -H "unix://$DK_SOCK" --containerd "$CTRD_SOCK" \
    > "$d/log" 2>&1 < /dev/null &
  DOCKERD_PID=$!
  for ((i = 0; i < 300; i++)); do
    if [ -S "$DK_SOCK" ] && timeout 5 /usr/bin/docker -H "unix://$DK_SOCK" version > /dev/null 2>&1; then
      return 0
    fi
    pid_alive "$DOCKERD_PID" || break
    sleep 0.1
  done
  fail "dockerd starts" "$(tail -n 20 "$d/log")"
  return 1
}

dk ()
{
  timeout -k 5 "$ENG_TIMEOUT" /usr/bin/docker -H "unix://$DK_SOCK" "$@"
}

dockerd_stop ()
{
  if [ -n "$DOCKERD_PID" ]; then
    if pid_alive "$DOCKERD_PID"; then
      local ids
      ids=$(dk ps -aq 2> /dev/null)
      # shellcheck disable=SC2086
      [ -z "$ids" ] || dk rm -f $ids > /dev/null 2>&1
    fi
    eng_stop_pids 20 "$DOCKERD_PID" || echo "# dockerd needed SIGKILL" >&2
    wait "$DOCKERD_PID" 2> /dev/null
    DOCKERD_PID=
  fi
  if [ -n "${DK_BRIDGE:-}" ] && ip link show "$DK_BRIDGE" > /dev/null 2>&1; then
    ip link del "$DK_BRIDGE"
  fi
  [ -z "${DK_DIR:-}" ] || eng_umount_under "$DK_DIR" > /dev/null
}

# --- nothing left ----------------------------------------------------------------------------

eng_daemons_check_clean ()
{
  local what=$1 p d
  p=$(eng_pids_matching "$E/")
  for d in /proc/[0-9]*; do
    [ "$(cat "$d/comm" 2> /dev/null)" = docker-proxy ] && p+=" ${d#/proc/}"
  done
  p=${p# }
  expect_eq "$what: no daemon, shim or docker-proxy of the test is left" "" "${p:+$(describe_pids $p)}"
  _eng_private_undo
  expect_eq "$what: the host's iptables rules are unchanged" "$ENG_IPT_BEFORE" "$(_eng_iptables)"
  expect_eq "$what: the host's forwarding sysctls are unchanged" "$ENG_SYSCTL_BEFORE" "$(_eng_sysctls)"
  expect_eq "$what: no console socket dir is left in /tmp" "" \
    "$(comm -13 <(printf '%s\n' "$ENG_TMP_BEFORE") <(_eng_tmp_pty) | sed '/^$/d')"
  expect_eq "$what: no network interface is left" "" \
    "$(comm -13 <(printf '%s\n' "$ENG_LINKS_BEFORE") <(_eng_links))"
  eng_check_clean "$what"
}
