#!/bin/bash
# t_report.sh: the per-layer report (design.md sections 2 and 3): --report -,
# --report FILE, --report-fd N, `kist report ID` (json and text), checked
# against what the container and the host show.
. "$(dirname "$0")/lib.sh"

# Layers the default config must list (requested or not), and the ones it
# does not request (man/kist-report.5: terminal, intel_rdt ... are listed only
# when requested).
EXPECTED_LAYERS="idmap.uid idmap.gid namespace.user namespace.mount namespace.pid namespace.net
  namespace.uts namespace.ipc namespace.cgroup namespace.time rootfs.propagation rootfs.bind mounts dev
  rootfs.pivot_root hostname domainname sysctl network.loopback masked_paths readonly_paths
  rootfs.readonly rlimit.RLIMIT_NOFILE oom_score_adj cwd environment user capabilities
  no_new_privileges seccomp apparmor selinux hooks.prestart hooks.createRuntime hooks.createContainer
  cgroup"
# cgroup: the default scope kist makes (ROOT-cgroup/kist/ID) is requested
# and applied even without linux.resources (kist-report.5).
NOT_REQUESTED="idmap.uid idmap.gid namespace.user namespace.time domainname sysctl oom_score_adj
  seccomp apparmor selinux hooks.prestart hooks.createRuntime hooks.createContainer"
REQUESTED="namespace.mount namespace.pid namespace.net namespace.uts namespace.ipc namespace.cgroup
  rootfs.bind mounts dev rootfs.pivot_root hostname network.loopback masked_paths readonly_paths
  rootfs.readonly rlimit.RLIMIT_NOFILE cwd environment user capabilities no_new_privileges cgroup"
# The vocabulary is the layer registry's (runtime/layer.c), as `kist features`
# lists it (run.kist.report.layers; "rlimit.*" is every rlimit.NAME); the
# unit test test_layer checks kist-report.5 against the same registry.
LAYER_NAMES=$("$KIST" features | jq -r '.annotations["run.kist.report.layers"] // empty')
if [ -z "$LAYER_NAMES" ]; then
  fail "kist features lists the report vocabulary (run.kist.report.layers)" "$("$KIST" features | tail -5)"
fi
VOCAB='^('$(tr ',' '\n' <<< "$LAYER_NAMES" | sed -e 's/\./\\./g' -e 's/\\\.\*$/\\.[A-Za-z0-9_.]+/' | paste -sd '|')')$'
# Orders any implementation must respect: A before B.
ORDER="namespace.mount:rootfs.propagation rootfs.propagation:rootfs.bind rootfs.bind:mounts
  mounts:rootfs.pivot_root rootfs.bind:rootfs.pivot_root mounts:masked_paths mounts:readonly_paths
  mounts:rootfs.readonly namespace.uts:hostname namespace.net:network.loopback
  capabilities:exec no_new_privileges:exec user:exec environment:exec cwd:exec seccomp:exec
  dev:hooks.prestart hooks.prestart:hooks.createRuntime hooks.createRuntime:hooks.createContainer
  hooks.createContainer:rootfs.pivot_root hooks.startContainer:exec exec:hooks.poststart"

# check_report NAME FILE ID OPERATION: the structure of a report of the
# default config.
check_report ()
{
  local name=$1 f=$2 id=$3 op=$4 names l dups i a b ia ib bad v pid
  if ! jflat < "$f" > /dev/null 2> "$T/jflat.err"; then
    fail "$name: the report is valid JSON" "$(cat "$T/jflat.err")" "$(head -c 1500 "$f")"
    return
  fi
  ok "$name: the report is valid JSON"
  expect_eq "$name: reportVersion is 1" 1 "$(jget "$f" reportVersion)"
  expect_match "$name: kist version" "$(jget "$f" kist)" '^[0-9]+\.[0-9]+\.[0-9]+'
  expect_eq "$name: id" "$id" "$(jget "$f" id)"
  expect_eq "$name: operation" "$op" "$(jget "$f" operation)"
  pid=$(jget "$f" pid)
  expect_match "$name: pid is a positive number" "$pid" '^[1-9][0-9]*$'
  names=$(layer_names "$f")
  bad=$(grep -Ev "$VOCAB" <<< "$names")
  expect_eq "$name: every layer name is in the vocabulary (man/kist-report.5)" "" "$bad"
  dups=$(sort <<< "$names" | uniq -d)
  expect_eq "$name: no layer is listed twice" "" "$dups"
  bad=
  for l in $EXPECTED_LAYERS; do
    grep -qxF "$l" <<< "$names" || bad+="$l "
  done
  expect_eq "$name: every layer is listed, requested or not" "" "$bad"
  bad=
  for l in $NOT_REQUESTED; do
    v=$(layer_field "$f" "$l" requested)
    [ "$v" = false ] || bad+="$l(requested=$v) "
  done
  expect_eq "$name: layers the config does not ask for say requested false" "" "$bad"
  bad=
  for l in $REQUESTED; do
    v=$(layer_field "$f" "$l" requested)
    { [ -n "$v" ] && [ "$v" != false ]; } || bad+="$l(requested=$v) "
  done
  expect_eq "$name: layers the config asks for say requested" "" "$bad"
  bad=
  for l in $REQUESTED; do
    v=$(layer_field "$f" "$l" applied)
    [ "$v" = true ] || bad+="$l(applied=$v, reason=$(layer_field "$f" "$l" reason)) "
  done
  expect_eq "$name: every requested layer of the default config is applied" "" "$bad"
  bad=
  for l in $NOT_REQUESTED; do
    v=$(layer_field "$f" "$l" applied)
    [ "$v" = false ] || bad+="$l(applied=$v) "
  done
  expect_eq "$name: not-requested layers say applied false" "" "$bad"
  expect_eq "$name: rlimit.RLIMIT_NOFILE requested is \"1024:1024\"" 1024:1024 \
    "$(layer_field "$f" rlimit.RLIMIT_NOFILE requested)"
  bad=
  for i in $ORDER; do
    a=${i%%:*}
    b=${i#*:}
    ia=$(grep -nxF "$a" <<< "$names" | cut -d: -f1)
    ib=$(grep -nxF "$b" <<< "$names" | cut -d: -f1)
    [ -n "$ia" ] && [ -n "$ib" ] && [ "$ia" -ge "$ib" ] && bad+="$a after $b; "
  done
  for l in $names; do
    case $l in namespace.*) ;; *) continue ;; esac
    ia=$(grep -nxF "$l" <<< "$names" | cut -d: -f1)
    ib=$(grep -nE '^rootfs\.' <<< "$names" | head -n 1 | cut -d: -f1)
    [ -n "$ib" ] && [ "$ia" -ge "$ib" ] && bad+="$l after the first rootfs.*; "
  done
  # (The poststart hooks run after the exec: only hooks.poststart may follow it.)
  if grep -qx exec <<< "$names" \
    && [ "$(grep -vx hooks.poststart <<< "$names" | tail -n 1)" != exec ]; then
    bad+="exec is not the last layer (but hooks.poststart); "
  fi
  expect_eq "$name: layers are listed in the order they were applied" "" "$bad"
  expect_eq "$name: confinement.applied is true" true "$(jget "$f" confinement.applied)"
  expect_eq "$name: confinement.missing is empty" "[]" "$(jget "$f" confinement.missing)"
  expect_ne "$name: summary is present" "" "$(jget "$f" summary)"
}

OUTMARK=CONTAINER-CODE-RAN

# ---- run --report - --------------------------------------------------------------------
cfg_reset
sh_args "echo $OUTMARK; ulimit -n; hostname"
B=$(mkbundle def)
id=$(new_id stdout)
kc rstdout run --report - --bundle "$B" "$id"
expect_eq "run --report - exits 0" 0 "$RC"
awk -v m="$OUTMARK" '$0 == m { exit } { print }' <<< "$OUT" > "$T/stdout-report.json"
after=$(awk -v m="$OUTMARK" 'f { print } $0 == m { f = 1 }' <<< "$OUT")
expect_contains "run --report -: the container's output follows the report" "$OUT" "$OUTMARK"
check_report "run --report -" "$T/stdout-report.json" "$id" run
expect_eq "run --report -: written before the exec, so no exec entry" "" \
  "$(layer_names "$T/stdout-report.json" | grep -x exec)"
expect_eq "observed: ulimit -n and hostname inside agree with the report's config" \
  "1024 kist-test" "$(echo $after)"
expect_true "run --report -: the container was deleted" test ! -e "$ROOT/$id"

# ---- run --report FILE ------------------------------------------------------------------
mkdir -p "$T/repdir"
id=$(new_id file)
kc rfile run --report "$T/repdir/r.json" --bundle "$B" "$id"
expect_eq "run --report FILE exits 0" 0 "$RC"
expect_true "run --report FILE wrote the file" test -s "$T/repdir/r.json"
expect_eq "run --report FILE: only the report in its directory (no temp file left)" r.json "$(ls -A "$T/repdir")"
expect_eq "run --report FILE: stdout has only the container's output" "$OUTMARK 1024 kist-test" "$(echo $OUT)"
check_report "run --report FILE" "$T/repdir/r.json" "$id" run
expect_eq "run --report FILE: rewritten with the exec recorded as applied" true \
  "$(layer_field "$T/repdir/r.json" exec applied)"

# ---- run --report-fd 3 ------------------------------------------------------------------
id=$(new_id fd)
LAST=$T/rfd
echo "kist run --report-fd 3 ..." > "$LAST.cmd"
kist run --report-fd 3 --bundle "$B" "$id" > "$LAST.out" 2> "$LAST.err" 3> "$T/fd3.json"
RC=$?
expect_eq "run --report-fd 3 exits 0" 0 "$RC"
expect_true "run --report-fd 3 wrote to fd 3" test -s "$T/fd3.json"
check_report "run --report-fd 3" "$T/fd3.json" "$id" run
expect_eq "run --report-fd 3: written before the exec, so no exec entry" "" \
  "$(layer_names "$T/fd3.json" | grep -x exec)"

# ---- per-row time (issue 13) ------------------------------------------------------------------
# Every entry a registry row recorded carries the row's number and time; the
# exec entry (recorded by the parent afterwards) has none; run's report has
# the time from kist's start to the execve, which is more than the rows' sum.
rj=$T/fd3.json
untimed=$(jflat < "$rj" | awk -F'\t' '
  match($1, /^layers\[[0-9]+\]\./) { i = substr($1, 1, RLENGTH - 1); k = substr($1, RLENGTH + 1)
    if (k == "layer") name[i] = $2; if (k == "step") step[i] = $2; if (k == "usec") us[i] = $2 }
  END { for (i in name) if (step[i] !~ /^[1-9][0-9]*$/ || us[i] !~ /^[0-9]+$/) print name[i] }')
expect_eq "run: every entry recorded before the exec has a step and usec" "" "$untimed"
expect_match "run --report-fd: timing.layersUsec" "$(jget "$rj" timing.layersUsec)" '^[1-9][0-9]*$'
kc timed run --bundle "$B" --report "$T/timed.json" "$(new_id timed)"
lu=$(jget "$T/timed.json" timing.layersUsec)
su=$(jget "$T/timed.json" timing.startupUsec)
expect_match "run --report: timing.startupUsec once the execve was seen" "$su" '^[1-9][0-9]*$'
expect_true "run: kist's start to the execve ($su us) is more than the rows ($lu us)" \
  test "${su:-0}" -gt "${lu:-0}"
expect_eq "run: the exec entry has no step" "" "$(layer_field "$T/timed.json" exec step)"

# ---- create, then kist report ID ------------------------------------------------------------
cfg_reset
C_ARGS='["sleep", "3141"]'
B=$(mkbundle created)
id=$(new_id created)
kc create create --bundle "$B" "$id"
expect_eq "create exits 0" 0 "$RC"
pid=$(state_field "$id" pid)
kc rep report "$id"
expect_eq "kist report ID exits 0" 0 "$RC"
printf '%s\n' "$OUT" > "$T/created.json"
check_report "kist report (created)" "$T/created.json" "$id" create
expect_eq "kist report: pid is the container's pid from kist state" "$pid" "$(jget "$T/created.json" pid)"
kc repj report --format json "$id"
expect_eq "kist report --format json is the default output" "$(cat "$T/created.json")" "$OUT"
# Namespaces the report says were applied really differ from ours.
for pair in mount:mnt pid:pid net:net uts:uts ipc:ipc cgroup:cgroup user:user time:time; do
  l=${pair%%:*}
  f=${pair#*:}
  applied=$(layer_field "$T/created.json" "namespace.$l" applied)
  mine=$(readlink "/proc/$$/ns/$f" 2> /dev/null)
  theirs=$(readlink "/proc/$pid/ns/$f" 2> /dev/null)
  [ -n "$mine" ] || continue
  if [ "$applied" = true ]; then
    expect_ne "observed: namespace.$l applied, and /proc/PID/ns/$f differs" "$mine" "$theirs"
  else
    expect_eq "observed: namespace.$l not applied, and /proc/PID/ns/$f is shared" "$mine" "$theirs"
  fi
done

kc rept report --format text "$id"
expect_eq "kist report --format text exits 0" 0 "$RC"
text=$OUT
hdr=$(head -n 1 <<< "$text")
expect_match "text report header: LAYER REQUESTED APPLIED USEC DETAIL/REASON" "$hdr" \
  '^ *LAYER +REQUESTED +APPLIED +USEC +(DETAIL|REASON)'
expect_contains "text report: the timing line" "$text" "timing: layers "
# The USEC column: a number on the first entry of a row, ^ on the others it recorded.
pre=${hdr%%USEC*}
usec_col=$(awk 'NR > 1 && NF' <<< "$text" | grep -v '^summary:\|^timing:' \
  | cut -c "$((${#pre} + 1))-" | awk '{ print $1 }' | sort -u | grep -vx '[0-9]*\|\^\|-')
expect_eq "text report: the USEC column holds numbers, ^ or -" "" "$usec_col"
nlayers=$(layer_names "$T/created.json" | wc -l)
rows=$(awk 'NR > 1' <<< "$text" | awk 'NR == FNR { n[$0]; next } ($1 in n)' <(layer_names "$T/created.json") -)
expect_eq "text report: one row per layer" "$nlayers" "$(printf '%s\n' "$rows" | grep -c .)"
for col in REQUESTED APPLIED USEC; do
  pre=${hdr%%"$col"*}
  c=$((${#pre} + 1))
  bad=$(awk -v c="$c" 'substr($0, c - 1, 1) != " " || substr($0, c, 1) == " "' <<< "$rows")
  expect_eq "text report: the $col column is aligned" "" "$bad"
done
summary=$(jget "$T/created.json" summary)
expect_contains "text report: ends with the summary line" "$(tail -n 3 <<< "$text")" "$summary"
kc repnone report "$PREFIX-no-such-container"
expect_ne "kist report of a nonexistent container fails" 0 "$RC"
kc del delete --force "$id"

# ---- run --keep: the stored report records the exec --------------------------------------------
cfg_reset
sh_args 'exit 0'
B=$(mkbundle keep)
id=$(new_id keep)
kc rkeep run --keep --bundle "$B" "$id"
expect_eq "run --keep exits 0" 0 "$RC"
expect_true "run --keep keeps the state dir" test -d "$ROOT/$id"
kc repkeep report "$id"
printf '%s\n' "$OUT" > "$T/keep.json"
expect_eq "stored report after run: operation run" run "$(jget "$T/keep.json" operation)"
expect_eq "stored report after run: exec recorded as applied" true "$(layer_field "$T/keep.json" exec applied)"
expect_eq "stored report after run: exec is the last layer, then hooks.poststart" \
  "exec hooks.poststart " "$(layer_names "$T/keep.json" | tail -n 2 | tr '\n' ' ')"
expect_eq "the kept container is stopped" stopped "$(state_field "$id" status)"
kc delkeep delete "$id"
expect_eq "delete of the kept, stopped container exits 0" 0 "$RC"
nothing_left "t_report"
