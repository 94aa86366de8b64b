#!/bin/bash
# run.sh [--suite DIR] [t_NAME.sh ...]: kist's integration suite (or the
# suite in DIR: tests/security, tests/fault use the same harness).
#
# Runs every tests/integration/t_*.sh (or the ones given), each in its own
# private mount and UTS namespace (unshare -m -u --propagation private), so
# that not even a kist bug can leave a mount on the host or rename it.  Then
# checks that nothing was left behind: no process of the tests, no mount
# under the test dirs, no state dir, no cgroup named after a test id.
# Prints "N passed, N failed, N skipped" and exits 1 on any failure.
#
# Environment: KIST (default <repo>/_build/kist), KIST_IT_TIMEOUT (seconds per
# kist call, default 30), KIST_IT_TEST_TIMEOUT (seconds per test file, 900).
set -u
export LC_ALL=C

IT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$IT_DIR/../.." && pwd)
KIST=${KIST:-$REPO/_build/kist}
case $KIST in /*) ;; *) KIST=$PWD/$KIST ;; esac
export KIST

if [ "$(id -u)" != 0 ]; then
  echo "run.sh: the integration tests need root (they create namespaces and containers): skipped"
  echo "0 passed, 0 failed, 1 skipped"
  exit 0
fi
for tool in unshare timeout awk find; do
  if ! command -v "$tool" > /dev/null; then
    echo "run.sh: $tool is missing (apt-get install util-linux coreutils mawk findutils)" >&2
    echo "0 passed, 1 failed, 0 skipped"
    exit 1
  fi
done
if [ ! -x "$KIST" ]; then
  echo "run.sh: $KIST is not an executable: build kist first (or set KIST=...)" >&2
  echo "0 passed, 1 failed, 0 skipped"
  exit 1
fi

# --suite DIR: the suite in DIR (tests/security, tests/fault): its
# ?_*.sh files, and test names are looked up there.
SUITE_DIR=$IT_DIR
SUITE_GLOB='t_*.sh'
if [ "${1:-}" = --suite ] && [ -n "${2:-}" ]; then
  SUITE_DIR=$(cd "$2" && pwd) || exit 1
  SUITE_GLOB='?_*.sh'
  shift 2
fi
if [ $# -gt 0 ]; then
  tests=()
  for t in "$@"; do
    case $t in */*) tests+=("$t") ;; *) tests+=("$SUITE_DIR/$t") ;; esac
  done
else
  tests=("$SUITE_DIR"/$SUITE_GLOB)
fi

WORK=$(mktemp -d /tmp/kist-it.XXXXXX) || exit 1
chmod 0755 "$WORK"
PREFIX=kit$$r$RANDOM
RESULTS=$WORK/results
: > "$RESULTS"
export KIST_IT_WORK=$WORK KIST_IT_PREFIX=$PREFIX KIST_IT_RESULTS=$RESULTS
export KIST_IT_ROOTFS=$WORK/rootfs

echo "kist integration tests: $KIST"
if ! bash "$IT_DIR/mkrootfs.sh" "$KIST_IT_ROOTFS"; then
  echo "FAIL run.sh: mkrootfs.sh could not build the test rootfs" >> "$RESULTS"
  tests=()
fi

# The host's device nodes, checked after every test: a runtime bug that
# resolved a container path on the host would show up here first.
host_devs ()
{
  stat -c '%n %F %t:%T' /dev/null /dev/zero /dev/full /dev/random /dev/urandom /dev/tty 2>&1
}
HOST_DEVS=$(host_devs)

for t in "${tests[@]}"; do
  name=$(basename "$t" .sh)
  echo "== $name"
  before=$(wc -l < "$RESULTS")
  KIST_IT_IN_NS=1 timeout -k 10 "${KIST_IT_TEST_TIMEOUT:-900}" \
    unshare -m -u --propagation private bash "$t"
  rc=$?
  after=$(wc -l < "$RESULTS")
  nfail=$(tail -n +"$((before + 1))" "$RESULTS" | grep -c '^FAIL ')
  if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
    echo "FAIL $name: timed out after ${KIST_IT_TEST_TIMEOUT:-900}s" >> "$RESULTS"
    echo "FAIL  $name: timed out"
  elif [ "$rc" = 77 ] && [ "$after" = "$before" ]; then
    echo "SKIP $name: whole test (exit 77)" >> "$RESULTS"
  elif [ "$rc" != 0 ] && [ "$nfail" = 0 ]; then
    echo "FAIL $name: exited with status $rc without recording a failure" >> "$RESULTS"
    echo "FAIL  $name: exited with status $rc"
  elif [ "$after" = "$before" ]; then
    echo "FAIL $name: recorded no result" >> "$RESULTS"
    echo "FAIL  $name: recorded no result"
  fi
  if [ "$(host_devs)" != "$HOST_DEVS" ]; then
    echo "FAIL $name: the host's /dev nodes changed" >> "$RESULTS"
    echo "FAIL  $name: the host's /dev nodes changed:"
    host_devs | sed 's/^/      | /'
    HOST_DEVS=$(host_devs)
  fi
done

# ---- nothing left behind, seen from the host ----
LO_DIR=$WORK
LO_MARK=m$PREFIX
LO_BUSYBOX=$KIST_IT_ROOTFS/bin/busybox
LO_PREFIX=$PREFIX
. "$IT_DIR/leftovers.sh"

leak ()
{
  echo "FAIL run.sh: nothing left after the suite: $1" >> "$RESULTS"
  echo "FAIL  run.sh: left behind: $1"
  shift
  printf '%s\n' "$@" | sed 's/^/      | /'
}

sleep 0.2
pids=$(leftover_pids)
# kist processes working on our dirs were found above by argv; also any kist
# whose working directory or root is in them.
for d in /proc/[0-9]*; do
  [ "$(cat "$d/comm" 2> /dev/null)" = kist ] || continue
  case $(readlink "$d/cwd" 2> /dev/null)/ in "$WORK"/*) pids+=" ${d#/proc/}" ;; esac
done
if [ -n "$pids" ]; then
  leak "processes" "$(describe_pids $pids)"
  for p in $pids; do kill -KILL "$p" 2> /dev/null; done
fi
m=$(leftover_mounts)
for f in /proc/[0-9]*/mountinfo; do
  # Mount namespaces still held by some process (e.g. a leaked container).
  lm=$(leftover_mounts "$f" 2> /dev/null)
  [ -n "$lm" ] && m+=$'\n'"${f%/mountinfo}: $(echo $lm)"
done
m=$(printf '%s\n' "$m" | sed '/^$/d' | sort -u)
[ -n "$m" ] && leak "mounts" "$m"
c=$(leftover_cgroups)
if [ -n "$c" ]; then
  leak "cgroups" "$c"
  printf '%s\n' "$c" | sort -r | while read -r d; do rmdir "$d" 2> /dev/null; done
fi
s=$(find "$WORK" -mindepth 3 -maxdepth 3 -path '*/state/*' 2> /dev/null)
for r in /run/kist "${XDG_RUNTIME_DIR:-/nonexistent}/kist"; do
  [ -d "$r" ] && s+=$(find "$r" -mindepth 1 -maxdepth 1 -name "*$PREFIX*" 2> /dev/null)
done
[ -n "$s" ] && leak "state dirs" "$s"

pass=$(grep -c '^PASS ' "$RESULTS")
failn=$(grep -c '^FAIL ' "$RESULTS")
skipn=$(grep -c '^SKIP ' "$RESULTS")
failures=$(grep '^FAIL ' "$RESULTS")
skips=$(grep '^SKIP ' "$RESULTS")
if [ -z "$(leftover_mounts)" ]; then
  rm -rf --one-file-system "$WORK"
else
  echo "run.sh: $WORK not removed (mounts left in it)"
fi

echo
[ -n "$failures" ] && printf 'Failures:\n%s\n' "$failures"
[ -n "$skips" ] && printf 'Skipped:\n%s\n' "$skips"
echo "$pass passed, $failn failed, $skipn skipped"
[ "$failn" = 0 ]
