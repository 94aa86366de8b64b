#!/bin/bash
# bench/scale.sh [N]: kist with N containers (default 1000) created and
# running at once (each `sleep 100000` in a busybox bundle from `kist spec`).
# See bench/README.md.
#
#  1. Creates the N containers one after another (`kist create`, then
#     `kist start`, each timed on its own) and, with 1, 10, 100, ... and N
#     containers running, times `kist state ID`, `kist kill ID 0`, `kist list`
#     and `kist list --format json`: per-container costs must stay flat.
#  2. With N running: counts the processes, which must be the N inits and no
#     kist process (kist keeps none per running container).
#     At each of these checkpoints it also deletes (`kist delete --force`,
#     timed) a few more containers started for that purpose.
#  3. Deletes them all (`kist delete --force ID`, timed).
#  4. Makes N dead sandboxes (`kist sandbox -- sleep` whose kist gets
#     SIGKILL once the command started: state dir, sandbox dir and cgroup scope
#     stay behind) and times the `kist gc` that removes them.
#
# Everything lives in its own temp dir and state root; containers, cgroup
# scopes (under the cgroup2 mount, never a v1 hierarchy) and the temp dir are
# removed at exit, also when interrupted.  Nothing is mounted on the host.
# Environment: KIST (default <repo>/_build/kist), SAMPLES (timed runs of each
# command per checkpoint, default 10), GC_PARALLEL (sandboxes started at once
# while making the dead ones, default 4), SETTLE (seconds of quiet before the
# gc is timed, default 5), KIST_CMP (another kist build, e.g. an older one:
# its state, kill 0 and list are timed against KIST's with N running).
set -euo pipefail
export LC_ALL=C
N=${1:-1000} SAMPLES=${SAMPLES:-10} GC_PARALLEL=${GC_PARALLEL:-4}
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
KIST=${KIST:-$REPO/_build/kist}
case $KIST in /*) ;; *) KIST=$PWD/$KIST ;; esac

die () { echo "scale.sh: $*" >&2; exit 1; }
[[ "$N" =~ ^[1-9][0-9]*$ && "$SAMPLES" =~ ^[1-9][0-9]*$ && "$GC_PARALLEL" =~ ^[1-9][0-9]*$ ]] \
  || { echo "usage: [SAMPLES=10] [GC_PARALLEL=4] $0 [N]   (all > 0; N defaults to 1000)" >&2; exit 2; }
[ "$(id -u)" = 0 ] || die "run it as root (containers with namespaces and cgroup scopes)"
[ -x "$KIST" ] || die "$KIST is not an executable: build kist first (or set KIST=...)"
for tool in jq awk; do
  command -v "$tool" > /dev/null || die "$tool is needed (apt-get install $tool)"
done

# The cgroup2 mount (on a hybrid host /sys/fs/cgroup/unified), from mountinfo.
CG2=$(awk '{ for (i = 7; i <= NF; i++) if ($i == "-") { if ($(i + 1) == "cgroup2") print $5; break } }' \
  /proc/self/mountinfo | head -n 1)

TMP=$(mktemp -d /tmp/kist-scale.XXXXXX)
STATE=$TMP/state
BUNDLE=$TMP/bundle
PREFIX=scale$$
DATA=$TMP/times     # lines: OP RUNNING MICROSECONDS
BG_PIDS=()          # kist sandbox processes started in the background
KIST_CG_PREEXISTED=0
[ -n "$CG2" ] && [ -d "$CG2/kist" ] && KIST_CG_PREEXISTED=1

# rm_scope DIR: kill what is left in a cgroup scope of ours and remove it.
rm_scope ()
{
  local dir=$1 i
  [ -n "$dir" ] && [ -d "$dir" ] || return 0
  case $dir in "$CG2"/*) ;; *) return 0 ;; esac
  [ -e "$dir/cgroup.kill" ] && echo 1 > "$dir/cgroup.kill" 2> /dev/null || true
  for i in $(seq 1 50); do
    rmdir "$dir" 2> /dev/null && return 0
    sleep 0.02
  done
  echo "scale.sh: could not remove the cgroup $dir" >&2
}

cleanup ()
{
  local rc=$? p d id cg
  trap - EXIT INT TERM HUP
  for p in "${BG_PIDS[@]}"; do
    kill -KILL "$p" 2> /dev/null || true
  done
  wait 2> /dev/null || true
  if [ -d "$STATE" ]; then
    for d in "$STATE"/*; do
      [ -d "$d" ] || continue
      id=${d##*/}
      case $id in '~'*) continue ;; esac
      cg=$(jq -r '.cgroupPath // empty' "$d/state.json" 2> /dev/null || true)
      "$KIST" --root "$STATE" delete --force "$id" > /dev/null 2>&1 || true
      rm_scope "$cg"
    done
    # Dead sandboxes: their kist is gone, so gc takes them (scopes included).
    "$KIST" --root "$STATE" gc > /dev/null 2>&1 || true
  fi
  if [ -n "$CG2" ]; then
    for d in "$CG2/kist/$PREFIX"-*; do
      rm_scope "$d"
    done
    [ "$KIST_CG_PREEXISTED" = 1 ] || rmdir "$CG2/kist" 2> /dev/null || true
  fi
  rm -rf --one-file-system "$TMP"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

now_us () { echo "${EPOCHREALTIME/./}"; }

# timed OP RUNNING CMD...: run CMD (output discarded), record its wall time.
timed ()
{
  local op=$1 running=$2 t0 t1
  shift 2
  t0=${EPOCHREALTIME/./}
  "$@" > /dev/null
  t1=${EPOCHREALTIME/./}
  echo "$op $running $((t1 - t0))" >> "$DATA"
}

k () { "$KIST" --root "$STATE" "$@"; }

# cputime VAR CMD...: "WALL_MS CPU_MS" of one run of CMD (CPU: user + system
# of CMD and its children); its output goes to $TMP/VAR.out.
cputime ()
{
  local var=$1 t TIMEFORMAT='%R %U %S'
  shift
  t=$({ time "$@" > "$TMP/$var.out" 2> "$TMP/$var.err" || true; } 2>&1)
  printf -v "$var" '%s' "$(awk '{ printf "%.0f %.0f", $1 * 1000, ($2 + $3) * 1000 }' <<< "$t")"
}

# ---- the bundle --------------------------------------------------------------------
bash "$REPO/tests/integration/mkrootfs.sh" "$BUNDLE/rootfs" > /dev/null
"$KIST" spec --bundle "$BUNDLE"
jq '.process.args = ["sleep", "100000"]' "$BUNDLE/config.json" > "$BUNDLE/config.json.new"
mv "$BUNDLE/config.json.new" "$BUNDLE/config.json"
: > "$DATA"

LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
echo "kist scale: $N containers (sleep 100000, the kist spec config), $SAMPLES samples per checkpoint"
echo "machine: $(nproc) CPUs ($(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)), kernel $(uname -r), load average $LOAD0"
echo "state root: $STATE; cgroup2: ${CG2:-none}"

# Checkpoints: 1, 10, 100, ... below N, and N.
CHECKS=()
for ((c = 1; c < N; c *= 10)); do CHECKS+=("$c"); done
CHECKS+=("$N")
is_check ()
{
  local c
  for c in "${CHECKS[@]}"; do [ "$1" = "$c" ] && return 0; done
  return 1
}

# sample_ops RUNNING: state, kill 0 (on random running containers) and list.
sample_ops ()
{
  local r=$1 i id
  for ((i = 0; i < SAMPLES; i++)); do
    id=$PREFIX-$((RANDOM % r + 1))
    timed state "$r" k state "$id"
    timed kill0 "$r" k kill "$id" 0
  done
  for ((i = 0; i < (SAMPLES + 1) / 2; i++)); do
    timed list "$r" k list
    timed listjson "$r" k list --format json
  done
  # delete --force of a running container with r others running: SAMPLES
  # extra ones, created and started (not counted), then deleted one by one.
  for ((i = 0; i < SAMPLES; i++)); do
    k create --bundle "$BUNDLE" "$PREFIX-d$r-$i" > /dev/null
    k start "$PREFIX-d$r-$i"
  done
  for ((i = 0; i < SAMPLES; i++)); do
    timed delete "$r" k delete --force "$PREFIX-d$r-$i"
  done
}

# ---- 1. N containers created and started -------------------------------------------
T_CREATE0=$(now_us)
for ((i = 1; i <= N; i++)); do
  timed create "$((i - 1))" k create --bundle "$BUNDLE" "$PREFIX-$i"
  timed start "$((i - 1))" k start "$PREFIX-$i"
  if is_check "$i"; then sample_ops "$i"; fi
done
T_CREATE1=$(now_us)
cputime LISTN k list
cputime LISTJN k list --format json
# KIST_CMP: another kist binary (an older build) timed on the same N
# containers, interleaved with this one: state, kill 0 and list.
if [ -n "${KIST_CMP:-}" ]; then
  kc () { "$KIST_CMP" --root "$STATE" "$@"; }
  for ((i = 0; i < SAMPLES; i++)); do
    id=$PREFIX-$((RANDOM % N + 1))
    timed cmp_state "$N" kc state "$id"
    timed new_state "$N" k state "$id"
    timed cmp_kill0 "$N" kc kill "$id" 0
    timed new_kill0 "$N" k kill "$id" 0
    timed cmp_list "$N" kc list
    timed new_list "$N" k list
    timed cmp_listjson "$N" kc list --format json
    timed new_listjson "$N" k list --format json
  done
  cputime CMP_LISTN kc list
  cputime NEW_LISTN k list
fi
LOADN=$(cut -d' ' -f1-3 /proc/loadavg)

running=$(k list --format json | jq '[.[] | select(.status == "running")] | length')
if [ "$running" != "$N" ]; then
  echo "scale.sh: $running of $N containers are running" >&2
  exit 1
fi

# ---- 2. processes -------------------------------------------------------------------
# No kist process may stay: none whose arguments name this state root.
kist_procs=0
for f in /proc/[0-9]*/cmdline; do
  if { tr '\0' ' ' < "$f"; } 2> /dev/null | grep -qF -- "--root $STATE "; then
    kist_procs=$((kist_procs + 1))
  fi
done
# Each container's scope holds exactly its init (the sleep), whose parent is
# no kist process.
in_scopes=0 bad_scopes=0 kist_parents=0
declare -A PARENTS=()
for ((i = 1; i <= N; i++)); do
  cg=$(jq -r '.cgroupPath // empty' "$STATE/$PREFIX-$i/state.json")
  pid=$(jq -r '.pid' "$STATE/$PREFIX-$i/state.json")
  mapfile -t pids < "$cg/cgroup.procs"
  in_scopes=$((in_scopes + ${#pids[@]}))
  if [ "${#pids[@]}" != 1 ] || [ "${pids[0]}" != "$pid" ]; then bad_scopes=$((bad_scopes + 1)); fi
  ppid=$(awk '/^PPid:/ { print $2 }' "/proc/$pid/status")
  pcomm=$(cat "/proc/$ppid/comm" 2> /dev/null || echo '?')
  PARENTS[$pcomm]=$((${PARENTS[$pcomm]:-0} + 1))
  [ "$pcomm" != kist ] || kist_parents=$((kist_parents + 1))
done

# ---- 3. delete all ------------------------------------------------------------------
T_DEL0=$(now_us)
for ((i = N; i >= 1; i--)); do
  timed deleteall "$i" k delete --force "$PREFIX-$i"
done
T_DEL1=$(now_us)
left=$(k list --quiet | wc -l)
cg_left=$(find "$CG2/kist" -maxdepth 1 -name "$PREFIX-*" 2> /dev/null | wc -l)

# ---- 4. N dead sandboxes and kist gc ------------------------------------------------
# `kist sandbox` of the same rootfs; once its command started (the "started"
# line on --status-fd), its kist gets SIGKILL: the sandbox's init dies with it
# (die-with-parent) and its state dir, sandbox dir and cgroup scope stay.
mkdir -p "$TMP/status"
T_SB0=$(now_us)
made=0
while ((made < N)); do
  BG_PIDS=()
  batch=$((N - made < GC_PARALLEL ? N - made : GC_PARALLEL))
  for ((j = 0; j < batch; j++)); do
    sf=$TMP/status/$((made + j))
    "$KIST" --root "$STATE" sandbox --rootfs "$BUNDLE/rootfs" --status-fd 3 -- /bin/sleep 100000 \
      3> "$sf" < /dev/null > /dev/null 2>&1 &
    BG_PIDS+=("$!")
  done
  for ((j = 0; j < batch; j++)); do
    sf=$TMP/status/$((made + j))
    for ((w = 0; w < 2000; w++)); do
      [ -s "$sf" ] && break
      if ! kill -0 "${BG_PIDS[$j]}" 2> /dev/null; then break; fi
      sleep 0.005
    done
    if ! grep -q '"started"' "$sf" 2> /dev/null; then
      echo "scale.sh: a kist sandbox did not start (status: $(cat "$sf" 2> /dev/null))" >&2
      exit 1
    fi
  done
  for p in "${BG_PIDS[@]}"; do kill -KILL "$p"; done
  for p in "${BG_PIDS[@]}"; do wait "$p" 2> /dev/null || true; done
  BG_PIDS=()
  made=$((made + batch))
done
T_SB1=$(now_us)
dead=$(find "$STATE" -mindepth 1 -maxdepth 1 -name 'sandbox-*' | wc -l)
if [ "$dead" != "$N" ]; then
  echo "scale.sh: $dead dead sandbox state dirs, expected $N" >&2
  exit 1
fi
# Let the kernel finish tearing down what died (the namespaces of the
# containers deleted above and of the sandboxes' inits go in a workqueue),
# then the dry run (it reads every entry and decides) and the removal.
sleep "${SETTLE:-5}"
cputime GC_DRY k gc --dry-run
cputime GC k gc
gc_removed=$(grep -c '^removed ' "$TMP/GC.out" || true)
gc_left=$(find "$STATE" -mindepth 1 -maxdepth 1 -name 'sandbox-*' | wc -l)

# ---- output -------------------------------------------------------------------------
# median OP LO HI: the median in ms of OP's samples with LO <= RUNNING <= HI.
median ()
{
  awk -v op="$1" -v lo="$2" -v hi="$3" '$1 == op && $2 >= lo && $2 <= hi { print $3 }' "$DATA" \
    | sort -n | awk '{ v[++n] = $1 }
      END { if (n == 0) { print "-"; exit }
            m = n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
            printf "%.2f\n", m / 1000 }'
}

echo
echo "per command, median ms (create, start: the $SAMPLES runs from that many containers already"
echo "running on; state, kill 0: $SAMPLES runs on random running containers; delete --force:"
echo "$SAMPLES more containers deleted with that many running; list: $(((SAMPLES + 1) / 2)) runs):"
printf '%-8s %8s %8s %8s %8s %8s %8s %10s %14s\n' running create start state "kill 0" delete list "list json" "list/cont. us"
for c in "${CHECKS[@]}"; do
  lo=$c hi=$((c + SAMPLES - 1))
  if ((hi >= N)); then lo=$((N - SAMPLES)) hi=$((N - 1)); fi
  ((lo >= 0)) || lo=0
  l=$(median list "$c" "$c")
  lj=$(median listjson "$c" "$c")
  printf '%-8s %8s %8s %8s %8s %8s %8s %10s %14s\n' "$c" "$(median create "$lo" "$hi")" \
    "$(median start "$lo" "$hi")" "$(median state "$c" "$c")" "$(median kill0 "$c" "$c")" \
    "$(median delete "$c" "$c")" "$l" "$lj" "$(awk -v l="$l" -v c="$c" 'BEGIN { printf "%.0f", l * 1000 / c }')"
done
echo
echo "create+start of all $N: $(((T_CREATE1 - T_CREATE0) / 1000)) ms, the samples included (load average then $LOADN)"
echo "delete --force of all $N, one by one: $(((T_DEL1 - T_DEL0) / 1000)) ms, median" \
  "$(median deleteall 1 "$N") ms; left: $left state entries, $cg_left cgroup scopes"
parents=$(for p in "${!PARENTS[@]}"; do printf '%s %s, ' "${PARENTS[$p]}" "$p"; done)
echo "processes with $N running: $kist_procs kist processes (argv naming the state root);" \
  "$in_scopes processes in the $N scopes ($bad_scopes scopes not holding exactly the init);" \
  "parents of the inits: ${parents%, }"
echo "dead sandboxes: $N made in $(((T_SB1 - T_SB0) / 1000)) ms ($GC_PARALLEL at a time)"
echo "kist gc --dry-run of $N dead sandboxes: ${GC_DRY% *} ms (CPU ${GC_DRY#* } ms)"
echo "kist gc of $N dead sandboxes: ${GC% *} ms (CPU ${GC#* } ms); removed $gc_removed, left $gc_left"
echo "kist list with $N running, one more run each: ${LISTN% *} ms (CPU ${LISTN#* } ms)," \
  "--format json ${LISTJN% *} ms (CPU ${LISTJN#* } ms)"
if [ -n "${KIST_CMP:-}" ]; then
  echo "KIST_CMP=$KIST_CMP against KIST, $SAMPLES interleaved runs each with $N running, median ms:"
  for op in state kill0 list listjson; do
    echo "  $op: KIST_CMP $(median "cmp_$op" "$N" "$N"), KIST $(median "new_$op" "$N" "$N")"
  done
  echo "  list, one run each: KIST_CMP ${CMP_LISTN% *} ms (CPU ${CMP_LISTN#* } ms), KIST ${NEW_LISTN% *} ms (CPU ${NEW_LISTN#* } ms)"
fi
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"

fail=0
[ "$kist_procs" = 0 ] && [ "$kist_parents" = 0 ] || { echo "FAIL: kist processes stay per container" >&2; fail=1; }
[ "$bad_scopes" = 0 ] || { echo "FAIL: scopes not holding exactly their init" >&2; fail=1; }
[ "$left" = 0 ] && [ "$cg_left" = 0 ] || { echo "FAIL: delete left state or scopes" >&2; fail=1; }
[ "$gc_removed" = "$N" ] && [ "$gc_left" = 0 ] || { echo "FAIL: gc did not remove every dead sandbox" >&2; fail=1; }
exit "$fail"
