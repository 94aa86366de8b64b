#!/bin/bash
# bench/startup.sh [N]: container start-up latency of kist against a floor,
# crun and runc (when installed), as median milliseconds over N interleaved
# rounds (default 50) and ratios to the floor.  See bench/README.md.
#
# Every runtime starts /bin/true from the same bundle: a busybox rootfs and a
# config.json from `kist spec` (read-only root, namespaces mount pid network
# uts ipc -- the floor's), timed from fork to exit of `RUNTIME run`.
# Environment: KIST (default <repo>/_build/kist), CC (default cc).
set -euo pipefail
export LC_ALL=C

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$BENCH_DIR/.." && pwd)
KIST=${KIST:-$REPO/_build/kist}
case $KIST in /*) ;; *) KIST=$PWD/$KIST ;; esac
N=${1:-50}

if ! [[ "$N" =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: $0 [ROUNDS]   (ROUNDS > 0, default 50)" >&2
  exit 2
fi
if [ "$(id -u)" != 0 ]; then
  echo "startup.sh: run it as root (the floor and the runtimes create namespaces)" >&2
  exit 1
fi
if [ ! -x "$KIST" ]; then
  echo "startup.sh: $KIST is not an executable: build kist first (or set KIST=...)" >&2
  exit 1
fi

# Run in a private mount namespace.  On a hybrid cgroup host (cgroup2 only at
# /sys/fs/cgroup/unified) mount that same cgroup2 hierarchy over
# /sys/fs/cgroup here, so that every runtime sees a pure cgroup2 host and none
# of them touches the v1 hierarchies.  Nothing of this is visible outside.
if [ -z "${KIST_BENCH_IN_NS:-}" ]; then
  export KIST_BENCH_IN_NS=1 KIST
  exec unshare -m --propagation private bash "$0" "$@"
fi
fstype=$(stat -f -c %T /sys/fs/cgroup 2> /dev/null || echo none)
if [ "$fstype" != cgroup2fs ] && [ "$(stat -f -c %T /sys/fs/cgroup/unified 2> /dev/null)" = cgroup2fs ]; then
  mount -t cgroup2 cgroup2 /sys/fs/cgroup
  CG2=/sys/fs/cgroup
  CGNOTE="cgroup2 (the hybrid host's unified hierarchy, mounted at /sys/fs/cgroup for the benchmark)"
else
  CGNOTE="$fstype at /sys/fs/cgroup"
  CG2=$(awk '{ for (i = 7; i <= NF; i++) if ($i == "-") { if ($(i + 1) == "cgroup2") print $5; break } }' \
    /proc/self/mountinfo | head -n 1)
fi

TMP=$(mktemp -d /tmp/kist-bench.XXXXXX)
ID_PREFIX=kistbench$$
cleanup ()
{
  local r
  for r in kist kistro crun runc; do
    [ -d "$TMP/state-$r" ] || continue
    for id in "$TMP/state-$r"/*; do
      [ -e "$id" ] || continue
      "${RT_CMD[$r]:-true}" --root "$TMP/state-$r" delete --force "${id##*/}" > /dev/null 2>&1 || true
    done
  done
  # cgroups a failed run may have left (named after our ids; ours to remove).
  if [ -n "$CG2" ]; then
    find "$CG2" -mindepth 1 -maxdepth 3 -depth -type d -name "*$ID_PREFIX*" -exec rmdir {} + 2> /dev/null || true
  fi
  umount "$TMP/kist-ro" 2> /dev/null || true
  rm -rf --one-file-system "$TMP"
}
declare -A RT_CMD=()
trap cleanup EXIT

# ---- the floor, the bundle ---------------------------------------------------------
"${CC:-cc}" -O2 -o "$TMP/floor" "$BENCH_DIR/floor.c"
B=$TMP/bundle
bash "$REPO/tests/integration/mkrootfs.sh" "$B/rootfs" > /dev/null
"$KIST" spec --bundle "$B"
# process.args -> ["/bin/true"]; drop the cgroup namespace (the floor has none);
# ociVersion 1.0.2, which every runtime here accepts (crun 1.8 refuses 1.2.0).
tr '\n' ' ' < "$B/config.json" \
  | sed -E 's#"args" *: *\[[^]]*\]#"args": ["/bin/true"]#;
            s#"ociVersion" *: *"[^"]*"#"ociVersion": "1.0.2"#;
            s#, *\{ *"type" *: *"cgroup" *\}##;
            s#\{ *"type" *: *"cgroup" *\} *, *##' > "$B/config.edited"
mv "$B/config.edited" "$B/config.json"
if ! grep -q '"args": \["/bin/true"\]' "$B/config.json" || grep -q '"type" *: *"cgroup" *}' "$B/config.json"; then
  echo "startup.sh: could not edit the config.json written by kist spec:" >&2
  cat "$B/config.json" >&2
  exit 1
fi
grep -q '"readonly" *: *true' "$B/config.json" || echo "startup.sh: warning: the root is not read-only in kist spec's config" >&2

# ---- the contenders ------------------------------------------------------------------
RUNTIMES=(floor kist kistro)
RT_CMD[kist]=$KIST
LABEL_floor="floor (clone+bind+pivot_root+exec)"
LABEL_kist="kist run"
# The same binary on a read-only bind mount (private to this namespace): it
# needs no re-exec from a protected copy (runtime/selfexe.c), so kist minus
# kistro is what that protection costs.
touch "$TMP/kist-ro"
mount --bind "$KIST" "$TMP/kist-ro"
mount -o remount,bind,ro "$TMP/kist-ro"
RT_CMD[kistro]=$TMP/kist-ro
LABEL_kistro="kist run (binary on a ro mount: no re-exec)"
if command -v crun > /dev/null; then
  RUNTIMES+=(crun)
  RT_CMD[crun]=$(command -v crun)
  LABEL_crun="crun run"
fi
if command -v runc > /dev/null; then
  RUNTIMES+=(runc)
  RT_CMD[runc]=$(command -v runc)
  LABEL_runc="runc run"
fi

# run_one RUNTIME ROUND: start /bin/true once; prints the latency in us.
run_one ()
{
  local r=$1 i=$2 t0 t1 rc=0
  t0=$EPOCHREALTIME
  case $r in
    floor) "$TMP/floor" "$B/rootfs" < /dev/null > /dev/null 2>> "$TMP/err-$r" || rc=$? ;;
    *) "${RT_CMD[$r]}" ${RT_FLAGS[$r]:+"${RT_FLAGS[$r]}"} --root "$TMP/state-$r" run --bundle "$B" "$ID_PREFIX-$r-$i" \
         < /dev/null > /dev/null 2>> "$TMP/err-$r" || rc=$? ;;
  esac
  t1=$EPOCHREALTIME
  [ "$rc" = 0 ] || return "$rc"
  echo $(( (${t1/./} - ${t0/./}) ))
}
declare -A RT_FLAGS=()

# Warm-up round (not counted); a runtime that cannot run here is dropped, except
# crun, which is retried without cgroups (crun 1.8 cannot load its eBPF device
# filter without CAP_SYS_RESOURCE, and refuses hybrid hosts).
active=()
for r in "${RUNTIMES[@]}"; do
  mkdir -p "$TMP/state-$r"
  if run_one "$r" warmup > /dev/null; then
    active+=("$r")
    continue
  fi
  if [ "$r" = crun ]; then
    "${RT_CMD[crun]}" --root "$TMP/state-crun" delete --force "$ID_PREFIX-crun-warmup" > /dev/null 2>&1 || true
    find "$CG2" -mindepth 1 -maxdepth 3 -depth -type d -name "*$ID_PREFIX*" -exec rmdir {} + 2> /dev/null || true
    RT_FLAGS[crun]=--cgroup-manager=disabled
    LABEL_crun="crun run (no cgroups)"
    if run_one crun warmup2 > /dev/null; then
      active+=(crun)
      continue
    fi
  fi
  echo "startup.sh: $r cannot run here, left out:" >&2
  tail -n 5 "$TMP/err-$r" >&2
  [ "$r" = floor ] || [ "$r" = kist ] || [ "$r" = kistro ] && exit 1
done

echo "start-up latency, $N interleaved rounds; cgroups: $CGNOTE"
for ((i = 1; i <= N; i++)); do
  for r in "${active[@]}"; do
    if ! us=$(run_one "$r" "$i"); then
      echo "startup.sh: $r failed in round $i:" >&2
      tail -n 5 "$TMP/err-$r" >&2
      exit 1
    fi
    echo "$us" >> "$TMP/t-$r"
  done
done

median_us ()
{
  sort -n "$1" | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print int((v[NR / 2] + v[NR / 2 + 1]) / 2) }'
}
floor_us=$(median_us "$TMP/t-floor")
printf '%-40s %10s %10s %10s\n' runtime "median ms" "min ms" "x floor"
for r in "${active[@]}"; do
  m=$(median_us "$TMP/t-$r")
  mn=$(sort -n "$TMP/t-$r" | head -n 1)
  label=LABEL_$r
  awk -v l="${!label}" -v m="$m" -v mn="$mn" -v f="$floor_us" \
    'BEGIN { printf "%-40s %10.2f %10.2f %9.1fx\n", l, m / 1000, mn / 1000, m / f }'
done
