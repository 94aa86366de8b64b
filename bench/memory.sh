#!/bin/bash
# bench/memory.sh [N]: peak resident set size of `kist run` and of the same
# start under the floors, crun, runc and bubblewrap, as medians over N
# interleaved rounds (default 10).  See bench/README.md ("Peak memory").
#
# Every contender starts /bin/true from bench/startup.sh's bundle (a busybox
# rootfs, `kist spec`'s config.json with args /bin/true) under bench/rss.c,
# which follows every process of the start with ptrace and prints, per
# process, VmHWM at its exit stop and the ru_maxrss of its reaping wait4.
# Environment: KIST (default <repo>/_build/kist), CC (default cc).
set -euo pipefail
export LC_ALL=C

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$BENCH_DIR/.." && pwd)
KIST=${KIST:-$REPO/_build/kist}
case $KIST in /*) ;; *) KIST=$PWD/$KIST ;; esac
N=${1:-10}

if ! [[ "$N" =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: $0 [ROUNDS]   (ROUNDS > 0, default 10)" >&2
  exit 2
fi
if [ "$(id -u)" != 0 ]; then
  echo "memory.sh: run it as root (the floors and the runtimes create namespaces)" >&2
  exit 1
fi
if [ ! -x "$KIST" ]; then
  echo "memory.sh: $KIST is not an executable: build kist first (or set KIST=...)" >&2
  exit 1
fi

# A private mount namespace; on a hybrid cgroup host the unified hierarchy is
# mounted over /sys/fs/cgroup here (as in bench/startup.sh).
if [ -z "${KIST_BENCH_IN_NS:-}" ]; then
  export KIST_BENCH_IN_NS=1 KIST
  exec unshare -m --propagation private bash "$0" "$@"
fi
fstype=$(stat -f -c %T /sys/fs/cgroup 2> /dev/null || echo none)
if [ "$fstype" != cgroup2fs ] && [ "$(stat -f -c %T /sys/fs/cgroup/unified 2> /dev/null)" = cgroup2fs ]; then
  mount -t cgroup2 cgroup2 /sys/fs/cgroup
  CG2=/sys/fs/cgroup
else
  CG2=$(awk '{ for (i = 7; i <= NF; i++) if ($i == "-") { if ($(i + 1) == "cgroup2") print $5; break } }' \
    /proc/self/mountinfo | head -n 1)
fi
if [ -z "$CG2" ]; then
  echo "memory.sh: no cgroup2 mount in /proc/self/mountinfo: the fair floor (and kist) need one" >&2
  exit 1
fi

TMP=$(mktemp -d /tmp/kist-membench.XXXXXX)
ID_PREFIX=kistmem$$
declare -A RT_CMD=() RT_FLAGS=() LABEL=()
cleanup ()
{
  local r id
  for r in kist kistro crun runc; do
    [ -d "$TMP/state-$r" ] || continue
    for id in "$TMP/state-$r"/*; do
      [ -e "$id" ] || continue
      "${RT_CMD[$r]:-true}" --root "$TMP/state-$r" delete --force "${id##*/}" > /dev/null 2>&1 || true
    done
  done
  find "$CG2" -mindepth 1 -maxdepth 3 -depth -type d -name "*$ID_PREFIX*" -exec rmdir {} + 2> /dev/null || true
  if [ -n "${FAIRCG:-}" ] && [ -d "$FAIRCG" ]; then
    rmdir "$FAIRCG"/ff-* 2> /dev/null || true
    rmdir "$FAIRCG" 2> /dev/null || true
  fi
  umount "$TMP/kist-ro" 2> /dev/null || true
  rm -rf --one-file-system "$TMP"
}
trap cleanup EXIT

"${CC:-cc}" -O2 -o "$TMP/rss" "$BENCH_DIR/rss.c"
"${CC:-cc}" -O2 -o "$TMP/floor" "$BENCH_DIR/floor.c"
"${CC:-cc}" -O2 -o "$TMP/floor_full" "$BENCH_DIR/floor_full.c"
B=$TMP/bundle
bash "$REPO/tests/integration/mkrootfs.sh" "$B/rootfs" > /dev/null
"$KIST" spec --bundle "$B"
tr '\n' ' ' < "$B/config.json" \
  | sed -E 's#"args" *: *\[[^]]*\]#"args": ["/bin/true"]#;
            s#"ociVersion" *: *"[^"]*"#"ociVersion": "1.0.2"#' > "$B/config.edited"
mv "$B/config.edited" "$B/config.json"
grep -q '"args": \["/bin/true"\]' "$B/config.json" || { echo "memory.sh: could not edit kist spec's config.json" >&2; exit 1; }

FAIRCG=$CG2/$ID_PREFIX-fair
mkdir "$FAIRCG"
# One kist run fills kist's seccomp cache (the first run compiles the profile,
# which costs memory the later runs do not spend); the fair floor loads it.
mkdir -p "$TMP/state-kist"
"$KIST" --root "$TMP/state-kist" run --bundle "$B" "$ID_PREFIX-fill" < /dev/null > /dev/null
shopt -s nullglob
SECCOMP_BPF=("$TMP/state-kist/~seccomp-cache/"*.bpf)
shopt -u nullglob
[ "${#SECCOMP_BPF[@]}" = 1 ] || { echo "memory.sh: expected one entry in kist's seccomp cache" >&2; exit 1; }
SECCOMP_BPF=${SECCOMP_BPF[0]}

RUNTIMES=(floor fairfloor kist kistro)
LABEL[floor]="floor (bench/floor.c)"
LABEL[fairfloor]="fair floor (bench/floor_full.c)"
RT_CMD[kist]=$KIST
LABEL[kist]="kist run"
touch "$TMP/kist-ro"
mount --bind "$KIST" "$TMP/kist-ro"
mount -o remount,bind,ro "$TMP/kist-ro"
RT_CMD[kistro]=$TMP/kist-ro
LABEL[kistro]="kist run (ro binary, no re-exec)"
mkdir -p "$TMP/state-kistro"
cp -a "$TMP/state-kist/~seccomp-cache" "$TMP/state-kistro/" 2> /dev/null || true
for r in crun runc; do
  if command -v $r > /dev/null; then
    RUNTIMES+=($r)
    RT_CMD[$r]=$(command -v $r)
    LABEL[$r]="$r run"
  fi
done
if command -v bwrap > /dev/null; then
  RUNTIMES+=(bwrap)
  LABEL[bwrap]="bwrap (same namespaces, ro root)"
fi

# run_one RUNTIME ROUND: one start under rss; rss's lines go to stdout.
run_one ()
{
  local r=$1 i=$2
  case $r in
    floor) "$TMP/rss" "$TMP/floor" "$B/rootfs" ;;
    fairfloor) "$TMP/rss" "$TMP/floor_full" "$B/rootfs" "$FAIRCG" "$SECCOMP_BPF" ;;
    bwrap) "$TMP/rss" bwrap --unshare-pid --unshare-net --unshare-ipc --unshare-uts --unshare-cgroup \
             --ro-bind "$B/rootfs" / --proc /proc --dev /dev --cap-drop ALL --die-with-parent /bin/true ;;
    *) "$TMP/rss" "${RT_CMD[$r]}" ${RT_FLAGS[$r]:+"${RT_FLAGS[$r]}"} --root "$TMP/state-$r" \
         run --bundle "$B" "$ID_PREFIX-$r-$i" ;;
  esac < /dev/null 2>&1 > /dev/null
}

active=()
for r in "${RUNTIMES[@]}"; do
  mkdir -p "$TMP/state-$r"
  if run_one "$r" warmup > "$TMP/warm-$r" 2>&1; then
    active+=("$r")
    continue
  fi
  if [ "$r" = crun ]; then
    "${RT_CMD[crun]}" --root "$TMP/state-crun" delete --force "$ID_PREFIX-crun-warmup" > /dev/null 2>&1 || true
    find "$CG2" -mindepth 1 -maxdepth 3 -depth -type d -name "*$ID_PREFIX*" -exec rmdir {} + 2> /dev/null || true
    RT_FLAGS[crun]=--cgroup-manager=disabled
    LABEL[crun]="crun run (no cgroups)"
    if run_one crun warmup2 > "$TMP/warm-$r" 2>&1; then
      active+=(crun)
      continue
    fi
  fi
  echo "memory.sh: $r cannot run here, left out:" >&2
  grep -v '^ *\(rss\|smaps_rollup\) ' "$TMP/warm-$r" | tail -n 5 >&2 || true
  case $r in floor | fairfloor | kist | kistro) exit 1 ;; esac
done

# Per round and runtime one record:
#   own   VmHWM of the runtime's own process at its exit (its last image)
#   tree  ru_maxrss of the runtime's process (every image, and the children it reaped)
#   child the largest ru_maxrss among its descendants (the setup child / the
#         container's process, which ends as busybox /bin/true)
#   anon, file  RssAnon and RssFile of the runtime's process at exit (file:
#         pages of the binary and the shared libraries it touched)
#   nproc processes in the start
for i in $(seq 1 "$N"); do
  for r in "${active[@]}"; do
    run_one "$r" "$i" > "$TMP/out" 2>&1 || { echo "memory.sh: $r failed in round $i:" >&2; tail -n 5 "$TMP/out" >&2; exit 1; }
    awk -v r="$r" '
      $1 == "rss" { n++; split($5, h, "="); split($6, m, "="); split($8, a, "="); split($9, f, "=");
                    if ($2 == "top") { own = h[2]; tree = m[2]; anon = a[2]; file = f[2] }
                    else if (m[2] > child) child = m[2] }
      END { printf "%s %d %d %d %d %d %d\n", r, own, tree, child, anon, file, n }
    ' "$TMP/out" >> "$TMP/records"
  done
done

echo "peak RSS (KB), medians of $N interleaved rounds; $(uname -r), $(nproc) CPUs"
printf '%-36s %8s %8s %8s %8s %8s %5s\n' runtime own tree child anon file procs
for r in "${active[@]}"; do
  printf '%-36s' "${LABEL[$r]}"
  for col in 2 3 4 5 6 7; do
    awk -v r="$r" -v c="$col" '$1 == r { print $c }' "$TMP/records" | sort -n \
      | awk '{ v[NR] = $1 } END { printf " %8s", (NR % 2) ? v[(NR + 1) / 2] : int((v[NR / 2] + v[NR / 2 + 1]) / 2) }'
  done
  echo
done
echo "own: VmHWM of the runtime's process at exit; tree: its ru_maxrss (all its images and reaped"
echo "children); child: the largest descendant's ru_maxrss; anon/file: its RssAnon/RssFile at exit."
