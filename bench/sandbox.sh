#!/bin/bash
# bench/sandbox.sh [RUNS [ROUNDS]]: throughput of `kist sandbox` against
# bubblewrap with the equivalent flags (when installed) and the floor program:
# the wall time of RUNS sandboxes of /bin/true (default 200), PARALLEL at a
# time (default 2), as the median over ROUNDS interleaved rounds (default 3),
# in runs per second and as ratios to the floor, with the machine CPU per run
# (/proc/stat busy time during each batch).  See bench/README.md.
# Environment: KIST (default <repo>/_build/kist), BWRAP (default: bwrap from
# PATH), PARALLEL (default 2), CC (default cc).
set -euo pipefail
export LC_ALL=C

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$BENCH_DIR/.." && pwd)
KIST=${KIST:-$REPO/_build/kist}
case $KIST in /*) ;; *) KIST=$PWD/$KIST ;; esac
RUNS=${1:-200}
ROUNDS=${2:-3}
PARALLEL=${PARALLEL:-2}

if ! [[ "$RUNS" =~ ^[1-9][0-9]*$ && "$ROUNDS" =~ ^[1-9][0-9]*$ && "$PARALLEL" =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: [PARALLEL=2] $0 [RUNS [ROUNDS]]   (all > 0; defaults 200 and 3)" >&2
  exit 2
fi
if [ "$(id -u)" != 0 ]; then
  echo "sandbox.sh: run it as root (the floor and bwrap without a user namespace need it)" >&2
  exit 1
fi
if [ ! -x "$KIST" ]; then
  echo "sandbox.sh: $KIST is not an executable: build kist first (or set KIST=...)" >&2
  exit 1
fi
BWRAP=${BWRAP:-$(command -v bwrap || true)}

# Run in a private mount namespace: the floor's root below is assembled with
# bind mounts, and nothing of it may be visible outside.
if [ -z "${KIST_BENCH_IN_NS:-}" ]; then
  export KIST_BENCH_IN_NS=1 KIST BWRAP
  exec unshare -m --propagation private bash "$0" "$@"
fi

TMP=$(mktemp -d /tmp/kist-bench.XXXXXX)
STATE=$TMP/states/state
STATE_FS_MOUNT=
cleanup ()
{
  # Sandboxes a killed or failed run may have left: kist gc removes those whose
  # kist process is gone (their cgroup scope included).  All are ours: the
  # state root is this script's.
  if [ -d "$STATE" ]; then
    "$KIST" --root "$STATE" gc > /dev/null 2>&1 || true
  fi
  umount -R "$TMP/floor-root/usr" 2> /dev/null || true
  [ -z "$STATE_FS_MOUNT" ] || umount "$STATE_FS_MOUNT" 2> /dev/null || true
  rm -rf --one-file-system "$TMP"
}
trap cleanup EXIT
# shellcheck source=bench/statefs.sh
. "$BENCH_DIR/statefs.sh"
bench_state_fs "$TMP/states"

# ---- the host view: /usr read-only plus the merged-/usr symlinks ---------------------
# Every contender sees the same: /usr, and /bin /lib /lib64 /sbin (...) as the
# host has them -- symlinks into usr/ on a merged-/usr host, else read-only
# binds of the directories.  /bin/true is the host's, dynamically linked.
VIEW_SYMLINKS=()   # "TARGET LINK" pairs
VIEW_DIRS=(/usr)
for d in /bin /sbin /lib /lib32 /lib64 /libx32; do
  if [ -L "$d" ]; then
    VIEW_SYMLINKS+=("$(readlink "$d") $d")
  elif [ -d "$d" ]; then
    VIEW_DIRS+=("$d")
  fi
done

# ---- the floor -------------------------------------------------------------------------
# bench/floor.c (clone with new mount, pid, net, uts, ipc namespaces, bind the
# root onto itself, pivot_root, exec) on a root that holds the same view.
"${CC:-cc}" -O2 -o "$TMP/floor" "$BENCH_DIR/floor.c"
FR=$TMP/floor-root
mkdir -p "$FR"
for d in "${VIEW_DIRS[@]}"; do
  mkdir -p "$FR$d"
  mount --rbind "$d" "$FR$d"
  mount -o remount,bind,ro "$FR$d"
done
for s in "${VIEW_SYMLINKS[@]}"; do
  ln -s "${s%% *}" "$FR${s#* }"
done

# ---- the contenders --------------------------------------------------------------------
# CMD_<name>: the command line that xargs runs once per sandbox (it appends the
# run's number, which /bin/true ignores); PROBE_<name>: the same sandbox with a
# shell command instead of /bin/true (set with "$@").
CONTENDERS=(floor)
LABEL_floor="floor (clone+bind+pivot_root+exec)"

# bubblewrap as root (no user namespace): the namespaces of kist sandbox, /usr
# and the symlinks, /proc, /dev, /tmp 64m and /work 256m tmpfs (mode 1777),
# read-only root, cleared environment, no capabilities, dies with its parent,
# hostname "sandbox".  bwrap sets no_new_privs itself and brings lo up in the
# new network namespace.
BWRAP_ARGS=()
if [ -n "$BWRAP" ] && [ -x "$BWRAP" ]; then
  BWRAP_ARGS=("$BWRAP" --unshare-pid --unshare-net --unshare-ipc --unshare-uts --unshare-cgroup
    --hostname sandbox)
  for d in "${VIEW_DIRS[@]}"; do BWRAP_ARGS+=(--ro-bind "$d" "$d"); done
  for s in "${VIEW_SYMLINKS[@]}"; do BWRAP_ARGS+=(--symlink "${s%% *}" "${s#* }"); done
  BWRAP_ARGS+=(--proc /proc --dev /dev
    --perms 1777 --size $((64 << 20)) --tmpfs /tmp
    --perms 1777 --size $((256 << 20)) --tmpfs /work
    --remount-ro / --chdir /work --clearenv --die-with-parent --cap-drop ALL --)
  CONTENDERS+=(bwrap)
  LABEL_bwrap="bwrap (equivalent flags)"
else
  echo "sandbox.sh: bubblewrap is not installed (apt-get install bubblewrap), left out" >&2
fi

# kist sandbox with its defaults (strict seccomp, empty netns with lo up, cgroup
# scope, uid 65534, no capabilities, scratch tmpfs at /work, ...) in this
# script's own state root, and the same without seccomp.
KIST_ARGS=("$KIST" --root "$STATE" sandbox)
for d in "${VIEW_DIRS[@]}"; do KIST_ARGS+=(--ro "$d"); done
CONTENDERS+=(kist kist_nosecc)
LABEL_kist="kist sandbox (strict seccomp)"
LABEL_kist_nosecc="kist sandbox --seccomp none"

# cmd NAME: print nothing; fill the array C with the contender's command line.
cmd ()
{
  case $1 in
    floor) C=("$TMP/floor" "$FR") ;;
    bwrap) C=("${BWRAP_ARGS[@]}") ;;
    kist) C=("${KIST_ARGS[@]}" --) ;;
    kist_nosecc) C=("${KIST_ARGS[@]}" --seccomp none --) ;;
  esac
}

# ---- probe and warm-up (not counted) ---------------------------------------------------
# Each contender runs a shell that prints what it got, then /bin/true twice.  The
# first kist runs also compile the strict profile into the state root's seccomp
# cache: every counted run is a cache hit.
PROBE='set -- $(grep -E "^(Uid|CapEff|CapBnd|NoNewPrivs|Seccomp):" /proc/self/status 2>/dev/null | tr -s "\t" " ");
echo "uid $2, CapEff $7, CapBnd $9, NoNewPrivs ${11}, Seccomp ${13},"
echo "links $(tail -n +3 /proc/net/dev 2>/dev/null | cut -d: -f1 | tr -d " " | paste -sd+),"
echo "root $(touch /probe 2>/dev/null && echo rw || echo ro), env $(env | grep -vc "^PWD=") vars, cwd $PWD"'
echo "sandbox throughput: $RUNS runs of /bin/true, $PARALLEL in parallel, median of $ROUNDS interleaved rounds"
echo "$STATE_FS_NOTE"
echo "machine: $(nproc) CPUs ($(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)), kernel $(uname -r), load average $(cut -d' ' -f1-3 /proc/loadavg)"
[ -z "${BWRAP_ARGS[*]}" ] || echo "bwrap: $("$BWRAP" --version)"
for r in "${CONTENDERS[@]}"; do
  cmd "$r"
  label=LABEL_$r
  if [ "$r" = floor ]; then
    line="bare: no /proc, host environment and capabilities"
  elif ! line=$("${C[@]}" /bin/sh -c "$PROBE" < /dev/null 2> "$TMP/err-$r" | paste -sd' '); then
    echo "sandbox.sh: ${!label} cannot run here:" >&2
    tail -n 5 "$TMP/err-$r" >&2
    exit 1
  fi
  for i in 1 2; do
    if ! "${C[@]}" /bin/true < /dev/null > /dev/null 2> "$TMP/err-$r"; then
      echo "sandbox.sh: ${!label} cannot run /bin/true here:" >&2
      tail -n 5 "$TMP/err-$r" >&2
      exit 1
    fi
  done
  printf '  %-30s %s\n' "$r:" "$line"
done
"${KIST_ARGS[@]}" --report "$TMP/report" --report-format text -- /bin/true < /dev/null > /dev/null
awk '$1 == "cgroup" || $1 == "seccomp" { $2 = $3 = ""; gsub(/  +/, " "); print "  kist " $0 }' "$TMP/report"

# ---- the rounds ------------------------------------------------------------------------
# busy_ticks: the machine's busy time so far, every CPU, in clock ticks of
# /proc/stat (user, nice, system, irq, softirq: not idle, iowait or steal).
busy_ticks ()
{
  awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8; exit }' /proc/stat
}
HZ=$(getconf CLK_TCK)

# run_batch NAME: RUNS sandboxes, PARALLEL at a time (xargs -P; xargs gives each
# child /dev/null as stdin); prints the wall time in microseconds and the
# machine's busy time meanwhile in clock ticks.
run_batch ()
{
  local r=$1 t0 t1 b0 b1 rc=0
  cmd "$r"
  b0=$(busy_ticks)
  t0=$EPOCHREALTIME
  seq 1 "$RUNS" | xargs -P "$PARALLEL" -n 1 "${C[@]}" /bin/true > /dev/null 2>> "$TMP/err-$r" || rc=$?
  t1=$EPOCHREALTIME
  b1=$(busy_ticks)
  [ "$rc" = 0 ] || return "$rc"
  echo $(( (${t1/./} - ${t0/./}) )) $((b1 - b0))
}

for ((i = 1; i <= ROUNDS; i++)); do
  for r in "${CONTENDERS[@]}"; do
    : > "$TMP/err-$r"
    if ! out=$(run_batch "$r"); then
      label=LABEL_$r
      echo "sandbox.sh: ${!label} failed in round $i:" >&2
      tail -n 5 "$TMP/err-$r" >&2
      exit 1
    fi
    echo "${out% *}" >> "$TMP/t-$r"
    echo "${out#* }" >> "$TMP/c-$r"
  done
done
# kist must have removed every sandbox it made.
left=$(find "$STATE" -mindepth 1 -maxdepth 1 ! -name '~*' | wc -l)
left_sb=$(find "$STATE/~sandbox" -mindepth 1 -maxdepth 1 2> /dev/null | wc -l)
if [ "$left" != 0 ] || [ "$left_sb" != 0 ]; then
  echo "sandbox.sh: warning: kist left $left state entries and $left_sb sandbox directories behind" >&2
fi

median_us ()
{
  sort -n "$1" | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print int((v[NR / 2] + v[NR / 2 + 1]) / 2) }'
}
floor_us=$(median_us "$TMP/t-floor")
echo
printf '%-36s %9s %9s %9s %10s %8s %8s\n' contender "median s" "min s" "runs/s" "ms/run" "x floor" "cpu ms"
for r in "${CONTENDERS[@]}"; do
  m=$(median_us "$TMP/t-$r")
  mn=$(sort -n "$TMP/t-$r" | head -n 1)
  c=$(median_us "$TMP/c-$r")
  label=LABEL_$r
  awk -v l="${!label}" -v m="$m" -v mn="$mn" -v f="$floor_us" -v n="$RUNS" -v c="$c" -v hz="$HZ" \
    'BEGIN { printf "%-36s %9.2f %9.2f %9.1f %10.2f %7.1fx %8.2f\n", l, m / 1e6, mn / 1e6, n / (m / 1e6), m / 1e3 / n, m / f, c * 1e3 / hz / n }'
  declare "MED_$r=$m" "CPU_$r=$c"
done
echo
awk -v k="$MED_kist" -v kn="$MED_kist_nosecc" -v b="${MED_bwrap:-}" -v n="$RUNS" \
  -v ck="$CPU_kist" -v ckn="$CPU_kist_nosecc" -v cb="${CPU_bwrap:-}" -v hz="$HZ" 'BEGIN {
  if (b != "") {
    printf "kist / bwrap (wall time):            strict %.2fx, no seccomp %.2fx\n", k / b, kn / b
    printf "throughput, kist / bwrap:            strict %.3fx, no seccomp %.3fx\n", b / k, b / kn
    if (ck > 0 && ckn > 0)
      printf "machine CPU, bwrap / kist:           strict %.3fx, no seccomp %.3fx\n", cb / ck, cb / ckn
  }
  printf "seccomp (strict) per run:            %.2f ms of wall time, %.2f ms of machine CPU\n", (k - kn) / 1e3 / n, (ck - ckn) * 1e3 / hz / n }'
