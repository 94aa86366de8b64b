# lib.sh: helpers for kist's integration tests.  Source it from a t_*.sh:
#   . "$(dirname "$0")/lib.sh"
#
# Every test gets its own temp dir $T (state root $ROOT = $T/state), its own
# bundles (a copy of the busybox rootfs from mkrootfs.sh plus a config.json
# written by mkconfig from the C_* variables), ok/fail/skip accounting and an
# EXIT trap that deletes its containers (kist delete --force), reports and
# removes anything left behind, and removes $T.
#
# Environment (set by run.sh; all optional when a test is run on its own):
#   KIST                the binary under test (default: <repo>/_build/kist)
#   KIST_IT_ROOTFS      a rootfs made by mkrootfs.sh (default: made in $T)
#   KIST_IT_RESULTS     file that collects "PASS|FAIL|SKIP test: what" lines
#   KIST_IT_PREFIX      prefix of every container id (to find leftovers)
#   KIST_IT_WORK        where temp dirs go (default /tmp)
#   KIST_IT_TIMEOUT     seconds before a kist call is killed (default 30)
#
# A test runs in a private mount (and UTS) namespace: run.sh starts it with
# unshare; run on its own, this file re-executes the test under unshare.

if [ -z "${KIST_IT_IN_NS:-}" ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "$0: the integration tests must run as root (they create containers)" >&2
    exit 77
  fi
  export KIST_IT_IN_NS=1
  exec unshare -m -u --propagation private bash "$0" "$@"
fi

set -u
# Under pipefail, never test `PRODUCER | grep -q`: grep exits at its first
# match, a producer still writing (bash's printf writes a line at a time)
# dies of SIGPIPE and the whole test reads as false.  Feed grep a here-string.
set -o pipefail
export LC_ALL=C

IT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$IT_DIR/../.." && pwd)
KIST=${KIST:-$REPO/_build/kist}
TEST_NAME=$(basename "$0" .sh)
KIST_IT_TIMEOUT=${KIST_IT_TIMEOUT:-30}
PREFIX=${KIST_IT_PREFIX:-kit$$}
# Every container's environment carries KIST_IT_MARK=$MARK, so that a process
# left behind is found by its /proc/PID/environ.  Never export KIST_IT_MARK in
# the test's own shell (it would match itself).
MARK=m$PREFIX
N_PASS=0
N_FAIL=0
N_SKIP=0
IDS=()

T=$(mktemp -d "${KIST_IT_WORK:-/tmp}/$TEST_NAME.XXXXXX") || exit 1
chmod 0755 "$T"
ROOT=$T/state
mkdir -p "$ROOT"
chmod 0700 "$ROOT"

if [ -z "${KIST_IT_RESULTS:-}" ]; then
  STANDALONE=1
  KIST_IT_RESULTS=$T/results
  : > "$KIST_IT_RESULTS"
else
  STANDALONE=
fi

# --- accounting ------------------------------------------------------------

_record ()
{
  printf '%s %s: %s\n' "$1" "$TEST_NAME" "$2" >> "$KIST_IT_RESULTS"
}

ok ()
{
  N_PASS=$((N_PASS + 1))
  _record PASS "$1"
  printf 'ok    %s: %s\n' "$TEST_NAME" "$1"
}

# fail WHAT [DETAIL...]: each DETAIL is printed indented.
fail ()
{
  local what=$1
  shift
  N_FAIL=$((N_FAIL + 1))
  _record FAIL "$what"
  printf 'FAIL  %s: %s\n' "$TEST_NAME" "$what"
  local d
  for d in "$@"; do
    printf '%s\n' "$d" | head -c 4000 | sed 's/^/      | /'
  done
}

# skip WHAT WHY: only for a feature the machine lacks.
skip ()
{
  N_SKIP=$((N_SKIP + 1))
  _record SKIP "$1 ($2)"
  printf 'skip  %s: %s (%s)\n' "$TEST_NAME" "$1" "$2"
}

# The stderr of the last kist call, shown when an expectation fails.
_last_err ()
{
  if [ -n "${LAST:-}" ] && [ -s "$LAST.err" ]; then
    printf 'stderr of: %s\n%s' "$(cat "$LAST.cmd" 2>/dev/null)" "$(tail -c 1500 "$LAST.err")"
  fi
}

expect_eq ()
{
  if [ "$3" == "$2" ]; then
    ok "$1"
  else
    fail "$1" "expected: $2" "actual:   $3" "$(_last_err)"
  fi
}

expect_ne ()
{
  if [ "$3" != "$2" ]; then
    ok "$1"
  else
    fail "$1" "expected anything but: $2" "$(_last_err)"
  fi
}

# expect_contains WHAT HAYSTACK NEEDLE (fixed string)
expect_contains ()
{
  if [[ "$2" == *"$3"* ]]; then
    ok "$1"
  else
    fail "$1" "expected to contain: $3" "actual: $2" "$(_last_err)"
  fi
}

expect_not_contains ()
{
  if [[ "$2" != *"$3"* ]]; then
    ok "$1"
  else
    fail "$1" "expected NOT to contain: $3" "actual: $2"
  fi
}

# expect_match WHAT HAYSTACK ERE (grep -E on the whole text)
expect_match ()
{
  if grep -Eq -- "$3" <<< "$2"; then
    ok "$1"
  else
    fail "$1" "expected to match: $3" "actual: $2" "$(_last_err)"
  fi
}

# expect_true WHAT COMMAND...: passes when the command succeeds.
expect_true ()
{
  local what=$1
  shift
  if "$@"; then
    ok "$what"
  else
    fail "$what" "command failed: $*" "$(_last_err)"
  fi
}

# --- running kist -------------------------------------------------------------

# kist ARGS...: the binary under test with our state root, a timeout, and no
# stdin.  Output goes where the caller redirects it.
kist ()
{
  timeout -k 5 "$KIST_IT_TIMEOUT" "$KIST" --root "$ROOT" "$@" < /dev/null
}

# kc TAG ARGS...: run kist capturing stdout/stderr into $T/TAG.out/.err; sets
# RC, OUT and ERR.  The container of create/run -d inherits these files, not a
# pipe, so kc never blocks on a container that keeps its stdout open.
kc ()
{
  local tag=$1
  shift
  LAST=$T/$tag
  printf 'kist --root %s %s\n' "$ROOT" "$*" > "$LAST.cmd"
  kist "$@" > "$LAST.out" 2> "$LAST.err"
  RC=$?
  OUT=$(cat "$LAST.out")
  ERR=$(cat "$LAST.err")
  # (run and sandbox exit with the command's status: 124 may be its own.)
  if [ "$RC" = 124 ] && [ "$1" != run ] && [ "$1" != sandbox ]; then
    echo "      (kist $* timed out after ${KIST_IT_TIMEOUT}s)" >&2
  fi
  return 0
}

# new_id NAME: a container id for this test, deleted by the EXIT trap.
new_id ()
{
  local id="$PREFIX-$1"
  IDS+=("$id")
  printf '%s' "$id"
}

# state_field ID FIELD: a top-level field of `kist state ID` ("" on error).
state_field ()
{
  kist state "$1" 2> /dev/null | jflat 2> /dev/null | awk -F'\t' -v k="$2" '$1 == k { print $2; exit }'
}

# wait_status ID STATUS [SECONDS]: poll `kist state` until it says STATUS.
wait_status ()
{
  local i n=$(( ${3:-5} * 20 ))
  for ((i = 0; i < n; i++)); do
    [ "$(state_field "$1" status)" == "$2" ] && return 0
    sleep 0.05
  done
  return 1
}

# pid_alive PID: the process exists and is not a zombie.
pid_alive ()
{
  local st
  [ -n "$1" ] && [ "$1" != 0 ] || return 1
  st=$(awk '{ sub(/^.*\) /, ""); print $1 }' "/proc/$1/stat" 2> /dev/null) || return 1
  [ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ]
}

# wait_gone PID [SECONDS]
wait_gone ()
{
  local i n=$(( ${2:-5} * 20 ))
  for ((i = 0; i < n; i++)); do
    pid_alive "$1" || return 0
    sleep 0.05
  done
  return 1
}

# --- JSON -----------------------------------------------------------------------

# jflat: JSON on stdin -> "path<TAB>value" lines (see jsonflat.awk).
jflat ()
{
  awk -f "$IT_DIR/jsonflat.awk"
}

# jget FILE PATH: the value at PATH ("" when absent).
jget ()
{
  jflat 2> /dev/null < "$1" | awk -F'\t' -v k="$2" '$1 == k { print $2; exit }'
}

# layer_field FILE LAYER FIELD: field of the (first) report entry for LAYER.
layer_field ()
{
  jflat 2> /dev/null < "$1" | awk -F'\t' -v name="$2" -v f="$3" '
    match($1, /^layers\[[0-9]+\]\./) {
      idx = substr($1, 1, RLENGTH - 1); key = substr($1, RLENGTH + 1)
      val[idx, key] = $2
      if (key == "layer" && $2 == name && found == "") found = idx
    }
    END { if (found != "" && (found, f) in val) print val[found, f] }'
}

# layer_names FILE: the report's layer names in order, one a line.
layer_names ()
{
  jflat 2> /dev/null < "$1" | awk -F'\t' '$1 ~ /^layers\[[0-9]+\]\.layer$/ { print $2 }'
}

# json_list FILE PREFIX: values of PREFIX[0], PREFIX[1] ... (e.g. confinement.missing)
json_list ()
{
  jflat 2> /dev/null < "$1" | awk -F'\t' -v p="$2" '
    index($1, p "[") == 1 && substr($1, length(p) + 1) ~ /^\[[0-9]+\]$/ { print $2 }'
}

json_str ()
{
  local s=$1
  s=${s//\\/\\\\}
  s=${s//\"/\\\"}
  s=${s//$'\n'/\\n}
  s=${s//$'\t'/\\t}
  printf '"%s"' "$s"
}

# json_arr ARG...: a JSON array of strings.
json_arr ()
{
  local out="[" sep="" a
  for a in "$@"; do
    out+="$sep$(json_str "$a")"
    sep=", "
  done
  printf '%s]' "$out"
}

# --- bundles ------------------------------------------------------------------

ROOTFS_SRC=${KIST_IT_ROOTFS:-}
if [ -z "$ROOTFS_SRC" ]; then
  ROOTFS_SRC=$T/rootfs-src
  bash "$IT_DIR/mkrootfs.sh" "$ROOTFS_SRC" || { echo "mkrootfs.sh failed" >&2; exit 1; }
fi

# Defaults mirror `kist spec` (see README), plus the leftover marker in env.
cfg_reset ()
{
  C_ARGS='["sh", "-c", "true"]'
  C_ENV=$(json_arr "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
    "TERM=xterm" "HOME=/root" "KIST_IT_MARK=$MARK")
  C_TERMINAL=false
  C_CWD=/
  C_UID=0
  C_GID=0
  C_GIDS=
  C_UMASK=
  C_CAPS='["CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"]'
  C_CAPS_AMBIENT=
  C_RLIMITS='[{"type": "RLIMIT_NOFILE", "hard": 1024, "soft": 1024}]'
  C_NNP=true
  C_PROCESS_EXTRA=
  C_ROOT_RO=true
  C_HOSTNAME=kist-test
  C_NAMESPACES="pid network ipc uts mount cgroup"
  C_MOUNTS_EXTRA=
  C_LINUX_EXTRA=
  C_TOP_EXTRA=
  C_MASKED='["/proc/acpi", "/proc/asound", "/proc/kcore", "/proc/keys", "/proc/latency_stats",
      "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug", "/sys/firmware", "/proc/scsi"]'
  C_READONLY='["/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"]'
}
cfg_reset

# bind_json SRC DEST [OPTION...]: a bind mount entry (options default rbind,rw).
bind_json ()
{
  local src=$1 dst=$2
  shift 2
  [ $# -gt 0 ] || set -- rbind rw
  printf '{"destination": %s, "type": "bind", "source": %s, "options": %s}' \
    "$(json_str "$dst")" "$(json_str "$src")" "$(json_arr "$@")"
}

# mkconfig: config.json from the C_* variables, on stdout.
mkconfig ()
{
  local ns sep="" nsj="" user extra_user=""
  for ns in $C_NAMESPACES; do
    nsj+="$sep{\"type\": \"$ns\"}"
    sep=", "
  done
  [ -n "$C_GIDS" ] && extra_user+=", \"additionalGids\": $C_GIDS"
  [ -n "$C_UMASK" ] && extra_user+=", \"umask\": $C_UMASK"
  user="{\"uid\": $C_UID, \"gid\": $C_GID$extra_user}"
  local caps="\"bounding\": $C_CAPS, \"effective\": $C_CAPS, \"permitted\": $C_CAPS"
  [ -n "$C_CAPS_AMBIENT" ] && caps+=", \"inheritable\": $C_CAPS_AMBIENT, \"ambient\": $C_CAPS_AMBIENT"
  local host=""
  [ -n "$C_HOSTNAME" ] && host="\"hostname\": $(json_str "$C_HOSTNAME"),"
  cat <<EOF
{
  "ociVersion": "1.0.2",
  "process": {
    "terminal": $C_TERMINAL,
    "user": $user,
    "args": $C_ARGS,
    "env": $C_ENV,
    "cwd": $(json_str "$C_CWD"),
    "capabilities": {$caps},
    "rlimits": $C_RLIMITS,
    "noNewPrivileges": $C_NNP$C_PROCESS_EXTRA
  },
  "root": {"path": "rootfs", "readonly": $C_ROOT_RO},
  $host
  "mounts": [
    {"destination": "/proc", "type": "proc", "source": "proc"},
    {"destination": "/dev", "type": "tmpfs", "source": "tmpfs",
     "options": ["nosuid", "strictatime", "mode=755", "size=65536k"]},
    {"destination": "/dev/pts", "type": "devpts", "source": "devpts",
     "options": ["nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620", "gid=5"]},
    {"destination": "/dev/shm", "type": "tmpfs", "source": "shm",
     "options": ["nosuid", "noexec", "nodev", "mode=1777", "size=65536k"]},
    {"destination": "/dev/mqueue", "type": "mqueue", "source": "mqueue",
     "options": ["nosuid", "noexec", "nodev"]},
    {"destination": "/sys", "type": "sysfs", "source": "sysfs",
     "options": ["nosuid", "noexec", "nodev", "ro"]},
    {"destination": "/sys/fs/cgroup", "type": "cgroup2", "source": "cgroup",
     "options": ["nosuid", "noexec", "nodev", "relatime", "ro"]}$C_MOUNTS_EXTRA
  ],
  "linux": {
    "namespaces": [$nsj],
    "maskedPaths": $C_MASKED,
    "readonlyPaths": $C_READONLY$C_LINUX_EXTRA
  }$C_TOP_EXTRA
}
EOF
}

# mkbundle NAME: $T/NAME with a fresh copy of the rootfs and config.json from
# the current C_* variables.  Prints the bundle path.
mkbundle ()
{
  local b=$T/$1
  rm -rf --one-file-system "$b"
  copy_rootfs "$b"
  mkconfig > "$b/config.json"
  printf '%s' "$b"
}

# copy_rootfs DIR: DIR (created) with a fresh copy of the rootfs, DIR/rootfs.
copy_rootfs ()
{
  mkdir -p "$1"
  cp -a "$ROOTFS_SRC" "$1/rootfs"
  # One inode for every copy of busybox: leftovers.sh finds processes by it.
  ln -f "$ROOTFS_SRC/bin/busybox" "$1/rootfs/bin/busybox"
}

# sh_args SCRIPT: C_ARGS running SCRIPT with sh -c.
sh_args ()
{
  C_ARGS=$(json_arr sh -c "$1")
}

# A host dir bind-mounted read-write at /mark in containers that ask for it
# (with_marker); the container code writes /mark/ran to prove it ran.
MARKDIR=$T/markdir
mkdir -p "$MARKDIR"
chmod 0777 "$MARKDIR"
with_marker ()
{
  C_MOUNTS_EXTRA+=", $(bind_json "$MARKDIR" /mark)"
}

# --- kist as the unprivileged user nobody ----------------------------------------

# The ids of user nobody ("" when there is none).  As nobody, kist has no
# --root: its state root is the default one, $XDG_RUNTIME_DIR/kist, with
# XDG_RUNTIME_DIR=$XDG (made by nobody_dir "$XDG" 0700).
NOBODY_UID=$(id -u nobody 2> /dev/null)
NOBODY_GID=$(id -g nobody 2> /dev/null)
AS_NOBODY=(setpriv --reuid="$NOBODY_UID" --regid="$NOBODY_GID" --clear-groups)
XDG=$T/xdg

# as_nobody COMMAND...: COMMAND as nobody, without supplementary groups.
# (Where a function cannot go, e.g. after exec or timeout: "${AS_NOBODY[@]}".)
as_nobody ()
{
  "${AS_NOBODY[@]}" "$@"
}

# nobody_ok WHAT: succeeds when there is a user nobody who can make user
# namespaces; else records the skip of WHAT and fails.
nobody_ok ()
{
  if [ -z "$NOBODY_UID" ]; then
    skip "$1" "there is no user nobody"
    return 1
  fi
  if ! as_nobody unshare -U true 2> /dev/null; then
    skip "$1" "unprivileged user namespaces are not available here"
    return 1
  fi
  return 0
}

# nobody_dir DIR [MODE]: make DIR, owned by nobody (when there is one), and
# chmod it to MODE if given.
nobody_dir ()
{
  mkdir -p "$1"
  [ -n "$NOBODY_UID" ] && chown "$NOBODY_UID:$NOBODY_GID" "$1"
  [ -z "${2:-}" ] || chmod "$2" "$1"
}

# nobody_bundle DIR: DIR owned by nobody with a copy of the rootfs (root-owned,
# as it is), for `kist spec --rootless` run as nobody to write config.json in.
nobody_bundle ()
{
  copy_rootfs "$1"
  chown "$NOBODY_UID:$NOBODY_GID" "$1"
}

# sandbox_dirs_empty: the sandbox dirs (ROOT/~sandbox, as root and as nobody)
# must be empty after a test's sandboxes; then they go.
sandbox_dirs_empty ()
{
  local d
  for d in "$ROOT/~sandbox" "$XDG/kist/~sandbox"; do
    if [ -d "$d" ] && [ -n "$(ls -A "$d")" ]; then
      fail "cleanup: $d is empty" "$(ls -A "$d")"
      rm -rf --one-file-system "$d"
    fi
    rmdir "$d" 2> /dev/null
  done
}

# ks TAG ARGS...: `kist sandbox ARGS` as root (MODE=root) or as nobody
# (MODE=nobody, from /); the tag gets the mode's prefix; sets RC, OUT, ERR.
ks ()
{
  local tag=${MODE:-root}-$1
  shift
  if [ "${MODE:-root}" = root ]; then
    kc "$tag" sandbox "$@"
  else
    kn_in / "$tag" sandbox "$@"
  fi
}

# kn_in DIR TAG ARGS...: like kc, but kist runs as nobody from DIR, with
# XDG_RUNTIME_DIR=$XDG and no --root; sets RC, OUT and ERR.
kn_in ()
{
  local dir=$1 tag=$2
  shift 2
  LAST=$T/$tag
  printf 'XDG_RUNTIME_DIR=%s kist %s (as nobody)\n' "$XDG" "$*" > "$LAST.cmd"
  (cd "$dir" && XDG_RUNTIME_DIR=$XDG timeout -k 5 "$KIST_IT_TIMEOUT" \
      "${AS_NOBODY[@]}" "$KIST" "$@") > "$LAST.out" 2> "$LAST.err" < /dev/null
  RC=$?
  OUT=$(cat "$LAST.out")
  ERR=$(cat "$LAST.err")
}

# rootless_config FILE ARGS: the config.json FILE written by `kist spec
# --rootless`, on one line, with process.args ARGS (a JSON array without `]`,
# `#`, `&` or `\` inside) and the leftover marker in the environment; on stdout.
rootless_config ()
{
  tr '\n' ' ' < "$1" \
    | sed -E 's#"args" *: *\[[^]]*\]#"args": '"$2"'#;
              s#"TERM=xterm"#"TERM=xterm", "KIST_IT_MARK='"$MARK"'"#'
}

# restricted_userns TAG COMMAND...: COMMAND as nobody (from /, with
# XDG_RUNTIME_DIR=$XDG and the test's timeout) in a new user namespace that
# maps ids 0-65535 to themselves and whose user.max_user_namespaces is 0: a
# host that restricts unprivileged user namespaces.  The maps are written
# from outside (as root) once the child is in its namespace; it then execs
# again, as uid 0 there with its capabilities, to set the sysctl.  Sets RC,
# OUT and ERR.
restricted_userns ()
{
  local tag=$1 go=$T/go.$1 pid i
  shift
  LAST=$T/$tag
  mkfifo "$go"
  (cd / && XDG_RUNTIME_DIR=$XDG exec unshare -U sh -c '
      read _ < "$0"
      # exec again: as uid 0 of the namespace, now that it is mapped.
      exec sh -c "echo 0 > /proc/sys/user/max_user_namespaces && exec \"\$@\"" sh "$@"' \
    "$go" timeout -k 5 "$KIST_IT_TIMEOUT" "${AS_NOBODY[@]}" "$@") \
    > "$LAST.out" 2> "$LAST.err" < /dev/null &
  pid=$!
  for ((i = 0; i < 500; i++)); do
    [ "$(readlink "/proc/$pid/ns/user")" != "$(readlink /proc/self/ns/user)" ] && break
    sleep 0.01
  done
  echo '0 0 65536' > "/proc/$pid/uid_map"
  echo '0 0 65536' > "/proc/$pid/gid_map"
  echo > "$go"
  wait "$pid"
  RC=$?
  rm -f "$go"
  OUT=$(cat "$LAST.out")
  ERR=$(cat "$LAST.err")
}

# --- leftovers --------------------------------------------------------------------

LO_DIR=$T
LO_MARK=$MARK
LO_BUSYBOX=$ROOTFS_SRC/bin/busybox
LO_PREFIX=$PREFIX
. "$IT_DIR/leftovers.sh"

# The compiled seccomp filter cache (ROOT/~seccomp-cache) is meant to stay, and
# so are the note of the last device program (ROOT/~device-program, one line)
# and the shared sandbox roots ROOT/~sandbox-root/KEY (until kist gc): but
# not a temporary one (a create that left it) nor anything below their
# entries (they hold only empty directories and symlinks).
leftover_state ()
{
  ls -A "$ROOT" 2> /dev/null | grep -vx -e '~seccomp-cache' -e '~sandbox-root' -e '~device-program'
  ls -A "$ROOT/~sandbox-root" 2> /dev/null | grep -vx '[0-9a-f]\{16\}' | sed 's|^|~sandbox-root/|'
  [ -d "$ROOT/~sandbox-root" ] && find "$ROOT/~sandbox-root" -mindepth 3
  [ -d "$ROOT/~sandbox-root" ] && find "$ROOT/~sandbox-root" -mindepth 2 -maxdepth 2 ! -type d ! -type l
  true
}

# nothing_left WHAT: no state dir, process, mount or cgroup of this test exists.
nothing_left ()
{
  local s p m c
  s=$(leftover_state)
  p=$(leftover_pids)
  m=$(leftover_mounts)
  c=$(leftover_cgroups)
  if [ -z "$s$p$m$c" ]; then
    ok "$1: nothing left behind"
  else
    fail "$1: nothing left behind" \
      "${s:+state dirs: $s}" \
      "${p:+processes: $(describe_pids $p)}" \
      "${m:+mounts: $m}" "${c:+cgroups: $c}"
  fi
}

# --- cleanup ----------------------------------------------------------------------

_cleanup ()
{
  local rc=$? id p m c s
  trap - EXIT
  # A test may define test_cleanup (e.g. containers under another state root).
  if declare -F test_cleanup > /dev/null; then
    test_cleanup
  fi
  for id in "${IDS[@]}"; do
    timeout -k 5 "$KIST_IT_TIMEOUT" "$KIST" --root "$ROOT" delete --force "$id" \
      > /dev/null 2>&1 < /dev/null
  done
  p=$(leftover_pids)
  if [ -n "$p" ]; then
    fail "cleanup: no process left after delete --force" "$(describe_pids $p)"
    for id in $p; do kill -KILL "$id" 2> /dev/null; done
  fi
  m=$(leftover_mounts)
  if [ -n "$m" ]; then
    # We are in the test's private mount namespace: unmounting is local.
    fail "cleanup: no mount left under $T" "$m"
    for id in $(printf '%s\n' "$m" | sort -r); do umount -l "$id" 2> /dev/null; done
  fi
  c=$(leftover_cgroups)
  if [ -n "$c" ]; then
    fail "cleanup: no cgroup left named after a test id" "$c"
    printf '%s\n' "$c" | sort -r | while read -r id; do rmdir "$id" 2> /dev/null; done
  fi
  s=$(leftover_state)
  if [ -n "$s" ]; then
    fail "cleanup: no state dir left after delete --force" "$s"
  fi
  [ -n "$(leftover_mounts)" ] || rm -rf --one-file-system "$T"
  if [ -n "$STANDALONE" ]; then
    echo "$N_PASS passed, $N_FAIL failed, $N_SKIP skipped"
  fi
  if [ "$N_FAIL" -gt 0 ]; then
    exit 1
  fi
  exit "$rc"
}
trap _cleanup EXIT
trap 'exit 130' INT TERM

if [ ! -x "$KIST" ]; then
  fail "the kist binary exists" "not executable: $KIST (build it, or set KIST=...)"
  exit 1
fi
