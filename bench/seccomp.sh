#!/bin/bash
# bench/seccomp.sh [N]: what the seccomp layer costs at container start-up:
# `kist run` with seccomp-profiles/default.json, with a cold and a warm
# compiled-filter cache, against kist without seccomp and against crun with
# the same config.json, as median milliseconds over N interleaved rounds
# (default 50) and ratios.  See bench/README.md.
#
# Every contender starts /bin/true from a busybox rootfs and a config.json
# from `kist spec` (as bench/startup.sh: read-only root, namespaces mount pid
# network uts ipc), timed from fork to exit of `RUNTIME run`.  Two configs:
#   none     no linux.seccomp, annotation run.kist.seccomp.profile=none
#   default  linux.seccomp = default.json inline, with its capability gating
#            (includes/excludes) resolved against the config's bounding set
#            and the comment fields removed, so that kist and crun load the
#            same rules from the same file.
# kist cold removes STATE_ROOT/~seccomp-cache before every run (outside the
# timed window); kist warm keeps its own state root's cache.
# Environment: KIST (default <repo>/_build/kist), PROFILE (default
# <repo>/seccomp-profiles/default.json).  Needs root, jq, busybox-static.
set -euo pipefail
export LC_ALL=C

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$BENCH_DIR/.." && pwd)
KIST=${KIST:-$REPO/_build/kist}
case $KIST in /*) ;; *) KIST=$PWD/$KIST ;; esac
PROFILE=${PROFILE:-$REPO/seccomp-profiles/default.json}
case $PROFILE in /*) ;; *) PROFILE=$PWD/$PROFILE ;; esac
N=${1:-50}

if ! [[ "$N" =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: $0 [ROUNDS]   (ROUNDS > 0, default 50)" >&2
  exit 2
fi
if [ "$(id -u)" != 0 ]; then
  echo "seccomp.sh: run it as root (the runtimes create namespaces)" >&2
  exit 1
fi
if [ ! -x "$KIST" ]; then
  echo "seccomp.sh: $KIST is not an executable: build kist first (or set KIST=...)" >&2
  exit 1
fi
if [ ! -r "$PROFILE" ]; then
  echo "seccomp.sh: cannot read the profile $PROFILE (set PROFILE=...)" >&2
  exit 1
fi
if ! command -v jq > /dev/null; then
  echo "seccomp.sh: needs jq to edit config.json (apt-get install jq)" >&2
  exit 1
fi

# Private mount namespace, and the hybrid-host cgroup2 trick of startup.sh:
# mount the unified hierarchy over /sys/fs/cgroup, visible only in here.
if [ -z "${KIST_BENCH_IN_NS:-}" ]; then
  export KIST_BENCH_IN_NS=1 KIST PROFILE
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

TMP=$(mktemp -d /tmp/kist-bench-seccomp.XXXXXX)
ID_PREFIX=kistbsc$$
# contender -> runtime, bundle, label
CONTENDERS=(kist_none kist_cold kist_warm)
declare -A RT=([kist_none]=kist [kist_cold]=kist [kist_warm]=kist [crun_none]=crun [crun_sec]=crun)
declare -A BUNDLE=([kist_none]=none [kist_cold]=default [kist_warm]=default [crun_none]=none [crun_sec]=default)
PNAME=${PROFILE##*/}
declare -A LABEL=([kist_none]="kist run, no seccomp" [kist_cold]="kist run, $PNAME, cold cache"
                  [kist_warm]="kist run, $PNAME, warm cache" [crun_none]="crun run, no seccomp"
                  [crun_sec]="crun run, $PNAME")
declare -A RT_CMD=([kist]=$KIST)
CRUN_FLAGS=()
cleanup ()
{
  local c id
  for c in "${!RT[@]}"; do
    [ -d "$TMP/states/state-$c" ] || continue
    for id in "$TMP/states/state-$c"/*; do
      [ -e "$id" ] || continue
      case ${id##*/} in "~"*) continue ;; esac
      "${RT_CMD[${RT[$c]}]:-true}" --root "$TMP/states/state-$c" delete --force "${id##*/}" > /dev/null 2>&1 || true
    done
  done
  if [ -n "$CG2" ]; then
    find "$CG2" -mindepth 1 -maxdepth 3 -depth -type d -name "*$ID_PREFIX*" -exec rmdir {} + 2> /dev/null || true
  fi
  [ -z "$STATE_FS_MOUNT" ] || umount "$STATE_FS_MOUNT" 2> /dev/null || true
  rm -rf --one-file-system "$TMP"
}
STATE_FS_MOUNT=
trap cleanup EXIT
# shellcheck source=bench/statefs.sh
. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/statefs.sh"
bench_state_fs "$TMP/states"

# ---- the bundles -----------------------------------------------------------------------
ROOTFS=$TMP/rootfs
bash "$REPO/tests/integration/mkrootfs.sh" "$ROOTFS" > /dev/null
mkdir -p "$TMP/spec"
"$KIST" spec --bundle "$TMP/spec"
case $(uname -m) in
  x86_64) ARCH=SCMP_ARCH_X86_64 ;;
  aarch64) ARCH=SCMP_ARCH_AARCH64 ;;
  i?86) ARCH=SCMP_ARCH_X86 ;;
  armv*) ARCH=SCMP_ARCH_ARM ;;
  *) ARCH=SCMP_ARCH_$(uname -m | tr a-z A-Z) ;;
esac
# mkconfig NAME SECCOMP ARGS_JSON: write $TMP/NAME/config.json.  SECCOMP is
# "none" or "default".  The edits are those of startup.sh (args, ociVersion
# 1.0.2 for crun 1.8; kist spec's cgroup namespace stays, as in startup.sh
# since 2026-12-02: without it every runtime's cgroup2 mount waits for an RCU
# grace period, 1-16 ms, see bench/README.md) plus the seccomp choice.
mkconfig ()
{
  local name=$1 sc=$2 args=$3
  mkdir -p "$TMP/$name"
  jq --arg root "$ROOTFS" --arg sc "$sc" --arg arch "$ARCH" --argjson args "$args" \
     --slurpfile prof "$PROFILE" '
    def has($set; $c): any($set[]; . == $c);
    (.process.capabilities.bounding // []) as $caps
    | .ociVersion = "1.0.2"
    | .root.path = $root
    | .process.args = $args
    | .annotations = ((.annotations // {}) | del(."run.kist.seccomp.profile"))
    | if $sc == "none" then
        .annotations."run.kist.seccomp.profile" = "none" | del(.linux.seccomp)
      else
        .linux.seccomp = ($prof[0]
          | del(.comment)
          | .syscalls |= map(
              select(((.includes.caps // []) | all(. as $c | has($caps; $c)))
                     and ((.excludes.caps // []) | any(. as $c | has($caps; $c)) | not)
                     and ((.includes.arches // [$arch]) | has(.; $arch))
                     and ((.excludes.arches // []) | has(.; $arch) | not))
              | del(.comment, .includes, .excludes)))
      end
    | if .annotations == {} then del(.annotations) else . end' \
    "$TMP/spec/config.json" > "$TMP/$name/config.json"
}
mkconfig none none '["/bin/true"]'
mkconfig default default '["/bin/true"]'
mkconfig check-none none '["/bin/grep", "^Seccomp:", "/proc/self/status"]'
mkconfig check-default default '["/bin/grep", "^Seccomp:", "/proc/self/status"]'
n_entries=$(jq '.linux.seccomp.syscalls | length' "$TMP/default/config.json")
n_names=$(jq '[.linux.seccomp.syscalls[].names[]] | length' "$TMP/default/config.json")

if command -v crun > /dev/null; then
  RT_CMD[crun]=$(command -v crun)
  CONTENDERS+=(crun_none crun_sec)
fi

# start CONTENDER ID BUNDLE [REPORT]: one `run`, output to stdout.
start ()
{
  local c=$1 id=$2 b=$3 rt=${RT[$1]}
  if [ "$rt" = crun ]; then
    "${RT_CMD[crun]}" "${CRUN_FLAGS[@]}" --root "$TMP/states/state-$c" run --bundle "$TMP/$b" "$id" < /dev/null
  else
    "$KIST" --root "$TMP/states/state-$c" run ${4:+--report "$4"} --bundle "$TMP/$b" "$id" < /dev/null
  fi
}
# run_one CONTENDER ROUND: start /bin/true once; prints the latency in us.
run_one ()
{
  local c=$1 i=$2 t0 t1 rc=0
  [ "$c" = kist_cold ] && rm -rf --one-file-system "$TMP/states/state-$c/~seccomp-cache"
  t0=$EPOCHREALTIME
  start "$c" "$ID_PREFIX-$c-$i" "${BUNDLE[$c]}" > /dev/null 2>> "$TMP/err-$c" || rc=$?
  t1=$EPOCHREALTIME
  [ "$rc" = 0 ] || return "$rc"
  echo $(( (${t1/./} - ${t0/./}) ))
}
# check CONTENDER WANT: the container's /proc/self/status says Seccomp: WANT.
check ()
{
  local c=$1 want=$2 b out
  case ${BUNDLE[$c]} in none) b=check-none ;; *) b=check-default ;; esac
  [ "$c" = kist_cold ] && rm -rf --one-file-system "$TMP/states/state-$c/~seccomp-cache"
  out=$(start "$c" "$ID_PREFIX-$c-check" "$b" "$TMP/report-$c.json" 2>> "$TMP/err-$c") || return 1
  if [ "$(echo "$out" | tr -d ' \t')" != "Seccomp:$want" ]; then
    echo "seccomp.sh: ${LABEL[$c]}: the container's /proc/self/status says \"$out\", expected Seccomp: $want" >&2
    return 1
  fi
}

# Warm-up and check round (not counted): every contender runs once with a
# probe that prints its Seccomp mode, so a runtime that silently loaded no
# filter would be caught.  crun is retried without cgroups if it cannot use
# them (see startup.sh), and dropped if it still cannot run.
mkdir -p "$TMP/states/state-kist_none" "$TMP/states/state-kist_cold" "$TMP/states/state-kist_warm"
active=()
for c in "${CONTENDERS[@]}"; do
  mkdir -p "$TMP/states/state-$c"
  want=2
  [ "${BUNDLE[$c]}" = none ] && want=0
  if check "$c" "$want"; then
    active+=("$c")
    continue
  fi
  if [ "${RT[$c]}" = crun ] && [ ${#CRUN_FLAGS[@]} = 0 ]; then
    "${RT_CMD[crun]}" --root "$TMP/states/state-$c" delete --force "$ID_PREFIX-$c-check" > /dev/null 2>&1 || true
    find "$CG2" -mindepth 1 -maxdepth 3 -depth -type d -name "*$ID_PREFIX*" -exec rmdir {} + 2> /dev/null || true
    CRUN_FLAGS=(--cgroup-manager=disabled)
    LABEL[crun_none]="crun run (no cgroups), no seccomp"
    LABEL[crun_sec]="crun run (no cgroups), $PNAME"
    if check "$c" "$want"; then
      active+=("$c")
      continue
    fi
  fi
  echo "seccomp.sh: ${LABEL[$c]} cannot run here, left out:" >&2
  tail -n 5 "$TMP/err-$c" >&2
  [ "${RT[$c]}" = kist ] && exit 1
done
# kist's report must say what the cache did: a miss when cold, a hit when warm.
for c in kist_cold kist_warm; do
  detail=$(jq -r '.layers[] | select(.layer == "seccomp") | .detail // ""' "$TMP/report-$c.json")
  echo "$c: seccomp layer: $detail" >> "$TMP/details"
done
if ! grep -q 'cache miss' <(grep kist_cold "$TMP/details"); then
  echo "seccomp.sh: kist cold: the report does not say cache miss:" >&2
  cat "$TMP/details" >&2
  exit 1
fi
start kist_warm "$ID_PREFIX-kist_warm-check2" check-default "$TMP/report-kist_warm.json" > /dev/null 2>> "$TMP/err-kist_warm"
detail=$(jq -r '.layers[] | select(.layer == "seccomp") | .detail // ""' "$TMP/report-kist_warm.json")
case $detail in
  *"cache hit"*) ;;
  *) echo "seccomp.sh: kist warm: a second run is not a cache hit: $detail" >&2; exit 1 ;;
esac
for c in "${active[@]}"; do
  if ! run_one "$c" warmup > /dev/null; then
    echo "seccomp.sh: ${LABEL[$c]} failed its warm-up run:" >&2
    tail -n 5 "$TMP/err-$c" >&2
    exit 1
  fi
done

echo "seccomp start-up cost, $N interleaved rounds; cgroups: $CGNOTE; $STATE_FS_NOTE"
echo "profile: $PROFILE, inline, gated for bounding set [$(jq -r '.process.capabilities.bounding // [] | join(" ")' "$TMP/none/config.json")] on $ARCH: $n_entries entries, $n_names names"
echo "kist cold: $(grep kist_cold "$TMP/details" | sed 's/^[^:]*: seccomp layer: //')"
echo "kist warm: $detail"
for ((i = 1; i <= N; i++)); do
  for c in "${active[@]}"; do
    if ! us=$(run_one "$c" "$i"); then
      echo "seccomp.sh: ${LABEL[$c]} failed in round $i:" >&2
      tail -n 5 "$TMP/err-$c" >&2
      exit 1
    fi
    echo "$us" >> "$TMP/t-$c"
  done
done

median_us ()
{
  sort -n "$1" | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print int((v[NR / 2] + v[NR / 2 + 1]) / 2) }'
}
declare -A MED=()
for c in "${active[@]}"; do
  MED[$c]=$(median_us "$TMP/t-$c")
done
# Columns: median, min, the median's ratio to the same runtime without
# seccomp, and the seccomp cost (median minus that runtime's no-seccomp median).
echo
printf '%-44s %9s %9s %11s %12s\n' contender "median ms" "min ms" "x no-secc." "seccomp ms"
for c in "${active[@]}"; do
  base=${RT[$c]}_none
  mn=$(sort -n "$TMP/t-$c" | head -n 1)
  awk -v l="${LABEL[$c]}" -v m="${MED[$c]}" -v mn="$mn" -v b="${MED[$base]}" \
    'BEGIN { printf "%-44s %9.2f %9.2f %10.2fx %12.2f\n", l, m / 1000, mn / 1000, m / b, (m - b) / 1000 }'
done
if [ -n "${MED[crun_sec]:-}" ]; then
  echo
  echo "kist / crun (medians):"
  ratio ()
  {
    awk -v l="$1" -v a="${MED[$2]}" -v b="${MED[$3]}" 'BEGIN { printf "  %-52s %6.2fx\n", l, a / b }'
  }
  ratio "kist no seccomp / crun no seccomp" kist_none crun_none
  ratio "kist cold cache / crun $PNAME" kist_cold crun_sec
  ratio "kist warm cache / crun $PNAME" kist_warm crun_sec
  awk -v kc="${MED[kist_cold]}" -v kw="${MED[kist_warm]}" -v kn="${MED[kist_none]}" \
      -v cs="${MED[crun_sec]}" -v cn="${MED[crun_none]}" \
    'BEGIN { printf "  %-52s %6.2fx\n", "seccomp cost: kist cold / crun", (kc - kn) / (cs - cn);
             printf "  %-52s %6.2fx\n", "seccomp cost: kist warm / crun", (kw - kn) / (cs - cn) }'
fi
# Warnings the runtimes printed (e.g. about syscall names they do not know).
for c in "${active[@]}"; do
  [ -s "$TMP/err-$c" ] || continue
  echo
  echo "${LABEL[$c]} wrote to stderr ($(sort -u "$TMP/err-$c" | wc -l) distinct lines), e.g.:"
  sort -u "$TMP/err-$c" | head -n 3 | sed 's/^/  /'
done
