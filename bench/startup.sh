#!/bin/bash
# bench/startup.sh [N]: container start-up latency of kist against a floor,
# crun and runc (when installed), as median milliseconds over N interleaved
# rounds (default 50) and ratios to the floors.  See bench/README.md.
#
# Two floors: the bare one (bench/floor.c: namespaces, bind, pivot_root,
# exec) and the fair one (bench/floor_full.c: the kernel work of `kist run`
# on this bundle -- cgroup scope and device program, namespaces, every mount,
# /dev, masked and read-only paths, hostname, rlimits, credentials,
# capabilities, no_new_privs, kist's cached seccomp BPF, exec -- without
# kist's checks, state and report).  kist / fair floor is kist's own overhead.
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
# shellcheck source=bench/statefs.sh
. "$BENCH_DIR/statefs.sh"
STATE_FS_MOUNT=
cleanup ()
{
  local r
  for r in kist kistro crun runc; do
    [ -d "$TMP/states/state-$r" ] || continue
    for id in "$TMP/states/state-$r"/*; do
      [ -e "$id" ] || continue
      "${RT_CMD[$r]:-true}" --root "$TMP/states/state-$r" delete --force "${id##*/}" > /dev/null 2>&1 || true
    done
  done
  # cgroups a failed run may have left (named after our ids; ours to remove).
  if [ -n "$CG2" ]; then
    find "$CG2" -mindepth 1 -maxdepth 3 -depth -type d -name "*$ID_PREFIX*" -exec rmdir {} + 2> /dev/null || true
  fi
  if [ -n "${FAIRCG:-}" ] && [ -d "$FAIRCG" ]; then
    rmdir "$FAIRCG"/ff-* 2> /dev/null || true
    rmdir "$FAIRCG" 2> /dev/null || true
  fi
  umount "$TMP/kist-ro" 2> /dev/null || true
  [ -z "$STATE_FS_MOUNT" ] || umount "$STATE_FS_MOUNT" 2> /dev/null || true
  rm -rf --one-file-system "$TMP"
}
declare -A RT_CMD=()
trap cleanup EXIT

# ---- the state roots, the floor, the bundle ----------------------------------------
bench_state_fs "$TMP/states"

"${CC:-cc}" -O2 -o "$TMP/floor" "$BENCH_DIR/floor.c"
"${CC:-cc}" -O2 -o "$TMP/floor_full" "$BENCH_DIR/floor_full.c"
B=$TMP/bundle
bash "$REPO/tests/integration/mkrootfs.sh" "$B/rootfs" > /dev/null
"$KIST" spec --bundle "$B"
# process.args -> ["/bin/true"]; ociVersion 1.0.2, which every runtime here
# accepts (crun 1.8 refuses 1.2.0).  The namespaces stay kist spec's (with the
# cgroup namespace, which the fair floor makes too; the bare floor has none).
tr '\n' ' ' < "$B/config.json" \
  | sed -E 's#"args" *: *\[[^]]*\]#"args": ["/bin/true"]#;
            s#"ociVersion" *: *"[^"]*"#"ociVersion": "1.0.2"#' > "$B/config.edited"
mv "$B/config.edited" "$B/config.json"
if ! grep -q '"args": \["/bin/true"\]' "$B/config.json" || ! grep -q '"type" *: *"cgroup" *}' "$B/config.json"; then
  echo "startup.sh: could not edit the config.json written by kist spec:" >&2
  cat "$B/config.json" >&2
  exit 1
fi
grep -q '"readonly" *: *true' "$B/config.json" || echo "startup.sh: warning: the root is not read-only in kist spec's config" >&2

# ---- the fair floor: its cgroup parent, kist's cached seccomp program, the probe ---
if [ -z "$CG2" ]; then
  echo "startup.sh: no cgroup2 mount in /proc/self/mountinfo: the fair floor (and kist) need one" >&2
  exit 1
fi
FAIRCG=$CG2/$ID_PREFIX-fair
mkdir "$FAIRCG"
# The probe: what the process got, printed by the container's shell, under
# kist and under the fair floor; they must be the same.  The probe bundle is
# the bench bundle with args ["/bin/sh", "/.kist-bench-probe"] (a file in the
# bench's own rootfs).  Mount ids and device numbers are left out.
cat > "$B/rootfs/.kist-bench-probe" << 'PROBE'
grep -E '^(Uid|Gid|Groups|Cap(Inh|Prm|Eff|Bnd|Amb)|NoNewPrivs|Seccomp|Seccomp_filters):' /proc/self/status
read -r pid comm state ppid pgrp sid rest < /proc/self/stat
echo "pid $pid sid $sid ppid $ppid"
echo "mountinfo lines: $(wc -l < /proc/self/mountinfo)"
cut -d ' ' -f 4- /proc/self/mountinfo
ls -ln /dev | awk '{ print $1, $3, $4, $5, $6, $NF }'
echo "hostname $(hostname) nofile $(ulimit -n) lo flags $(cat /sys/class/net/lo/flags) cwd $(pwd)"
grep '^0::' /proc/self/cgroup | tr -cd '/' | awk '{ print "cgroup depth", length($0) }'
env | grep -v '^PWD=' | sort
PROBE
P=$TMP/probe
mkdir -p "$P"
sed -E 's#"args": \["/bin/true"\]#"args": ["/bin/sh", "/.kist-bench-probe"]#;
        s#"path" *: *"rootfs"#"path": "'"$B"'/rootfs"#' "$B/config.json" > "$P/config.json"
mkdir -p "$TMP/states/state-kist"
if ! "$KIST" --root "$TMP/states/state-kist" run --bundle "$P" "$ID_PREFIX-probe" < /dev/null > "$TMP/probe-kist" 2>&1; then
  echo "startup.sh: the probe under kist failed:" >&2
  cat "$TMP/probe-kist" >&2
  exit 1
fi
# The probe run filled kist's seccomp cache: the fair floor loads that entry.
shopt -s nullglob
SECCOMP_BPF=("$TMP/states/state-kist/~seccomp-cache/"*.bpf)
shopt -u nullglob
if [ "${#SECCOMP_BPF[@]}" != 1 ]; then
  echo "startup.sh: expected one entry in kist's seccomp cache, found ${#SECCOMP_BPF[@]}" >&2
  exit 1
fi
SECCOMP_BPF=${SECCOMP_BPF[0]}
if ! "$TMP/floor_full" "$B/rootfs" "$FAIRCG" "$SECCOMP_BPF" /bin/sh /.kist-bench-probe \
  < /dev/null > "$TMP/probe-fair" 2>&1; then
  echo "startup.sh: the probe under the fair floor failed:" >&2
  cat "$TMP/probe-fair" >&2
  exit 1
fi
if ! diff -u "$TMP/probe-kist" "$TMP/probe-fair" > "$TMP/probe-diff"; then
  echo "startup.sh: the fair floor's process differs from kist's (- kist, + fair floor):" >&2
  cat "$TMP/probe-diff" >&2
  exit 1
fi
# The device program kist attaches to a created (not started) container's
# scope must be the fair floor's (same kernel tag, same length).
if ! "$KIST" --root "$TMP/states/state-kist" create --bundle "$P" "$ID_PREFIX-devprobe" < /dev/null > /dev/null 2> "$TMP/err-devprobe"; then
  echo "startup.sh: kist create of the probe bundle failed:" >&2
  cat "$TMP/err-devprobe" >&2
  exit 1
fi
dp_pid=$("$KIST" --root "$TMP/states/state-kist" state "$ID_PREFIX-devprobe" | sed -nE 's/^ *"pid" *: *([0-9]+).*/\1/p' | head -n 1)
dp_cg=$(sed -n 's/^0:://p' "/proc/${dp_pid:-0}/cgroup" 2> /dev/null || true)
kist_tags=$("$TMP/floor_full" --cgroup-tags "$CG2$dp_cg" 2>&1 || true)
"$KIST" --root "$TMP/states/state-kist" delete --force "$ID_PREFIX-devprobe" > /dev/null 2>&1 || true
fair_tag=$("$TMP/floor_full" --devprog-tag)
if [ -z "$dp_cg" ] || [ "$kist_tags" != "$fair_tag" ]; then
  echo "startup.sh: kist's device program (scope ${dp_cg:-?}: ${kist_tags:-none}) is not the fair floor's ($fair_tag)" >&2
  exit 1
fi
PROBE_NOTE=$(awk '/^(NoNewPrivs|Seccomp|Seccomp_filters|CapEff|CapBnd):/ { printf "%s %s, ", $1, $2 }
                  /^mountinfo lines:/ { printf "mountinfo %s lines", $3 }' "$TMP/probe-fair")
PROBE_NOTE="$PROBE_NOTE; device program ${fair_tag% *} (${fair_tag#* } insns); seccomp ${SECCOMP_BPF##*/}"

# ---- the contenders ------------------------------------------------------------------
RUNTIMES=(floor fairfloor kist kistro)
RT_CMD[kist]=$KIST
LABEL_floor="floor (clone+bind+pivot_root+exec)"
LABEL_fairfloor="fair floor (kist's kernel work)"
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
    fairfloor) "$TMP/floor_full" "$B/rootfs" "$FAIRCG" "$SECCOMP_BPF" \
                 < /dev/null > /dev/null 2>> "$TMP/err-$r" || rc=$? ;;
    *) "${RT_CMD[$r]}" ${RT_FLAGS[$r]:+"${RT_FLAGS[$r]}"} --root "$TMP/states/state-$r" run --bundle "$B" "$ID_PREFIX-$r-$i" \
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
  mkdir -p "$TMP/states/state-$r"
  if run_one "$r" warmup > /dev/null; then
    active+=("$r")
    continue
  fi
  if [ "$r" = crun ]; then
    "${RT_CMD[crun]}" --root "$TMP/states/state-crun" delete --force "$ID_PREFIX-crun-warmup" > /dev/null 2>&1 || true
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
  case $r in floor | fairfloor | kist | kistro) exit 1 ;; esac
done

echo "start-up latency, $N interleaved rounds; cgroups: $CGNOTE; $STATE_FS_NOTE"
echo "fair floor, same as kist (probe): $PROBE_NOTE"
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
fair_us=$(median_us "$TMP/t-fairfloor")
printf '%-44s %10s %10s %9s %9s\n' runtime "median ms" "min ms" "x floor" "x fair"
declare -A MED=()
for r in "${active[@]}"; do
  m=$(median_us "$TMP/t-$r")
  MED[$r]=$m
  mn=$(sort -n "$TMP/t-$r" | head -n 1)
  label=LABEL_$r
  awk -v l="${!label}" -v m="$m" -v mn="$mn" -v f="$floor_us" -v ff="$fair_us" \
    'BEGIN { printf "%-44s %10.2f %10.2f %8.2fx %8.2fx\n", l, m / 1000, mn / 1000, m / f, m / ff }'
done
ratio ()
{
  awk -v l="$1" -v a="$2" -v b="$3" 'BEGIN { printf "  %-44s %6.2fx\n", l, a / b }'
}
echo
echo "ratios of the medians:"
ratio "kist / fair floor (kist's own overhead)" "${MED[kist]}" "$fair_us"
ratio "kist, no re-exec / fair floor" "${MED[kistro]}" "$fair_us"
ratio "kist / floor" "${MED[kist]}" "$floor_us"
ratio "fair floor / floor (kist's kernel work)" "$fair_us" "$floor_us"
if [ -n "${MED[crun]:-}" ]; then
  ratio "kist / crun" "${MED[kist]}" "${MED[crun]}"
fi
