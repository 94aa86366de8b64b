#!/bin/bash
# t_cgroup.sh: cgroup v2 scopes on THIS host (issue 4, the honest path).
# The host's cgroup2 mount (hybrid: /sys/fs/cgroup/unified) may have no
# resource controllers; the limit tests that need them run in tests/vm.
#   - a container without limits gets a scope: state.json's cgroupPath is a
#     directory under the cgroup2 mount holding the init's pid;
#   - pause freezes it (a counter the container writes to a bind-mounted host
#     file stops advancing), `kist state` says paused, resume continues and
#     the state says running again; pause/resume in the wrong state fail;
#   - ps --format json lists the init pid, the table shows its command;
#   - events --stats prints one stats event, the event stream ends when the
#     container stops;
#   - kill --all kills every process of the scope, also processes outside a
#     pid namespace that left the init's process tree;
#   - delete removes the scope directory;
#   - a memory limit without the memory controller fails with exit 125 and a
#     message naming the controller, runs with --allow-degraded
#     cgroup.memory.max and the report says applied false with the reason;
#   - update of a running container without the controller fails naming the
#     file; update of a non-existent container fails.
#   - the report, checked against what the test reads itself from outside:
#     the default scope's `cgroup` entry is requested (the path kist chose)
#     and applied, its detail quotes the init's /proc/PID/cgroup; `cgroup.v1`
#     lists exactly the init's v1 lines of /proc/PID/cgroup (a hybrid host;
#     no entry on a pure v2 host); `namespace.cgroup` says where the cgroup
#     namespace is rooted, as the test sees it (nsenter --cgroup, mountinfo);
#     rootless without a scope: `cgroup` not requested, the init in kist's
#     own cgroup, the namespace rooted there (the cgroup2 root: the whole
#     hierarchy).
. "$(dirname "$0")/lib.sh"

CG2=$LO_CG2
if [ -z "$CG2" ] || [ ! -f "$CG2/cgroup.procs" ]; then
  skip "cgroup v2 tests" "no cgroup2 mount in /proc/self/mountinfo"
  exit 0
fi
if [ ! -w "$CG2/cgroup.procs" ]; then
  skip "cgroup v2 tests" "the cgroup2 hierarchy at $CG2 is not writable"
  exit 0
fi
# The first process of a scope must not be in a cgroup that has controllers
# enabled for its children, so a host where this does not hold is a test
# environment problem, not a kist one; freeze needs cgroup.freeze (5.2+).
CONTROLLERS=$(cat "$CG2/cgroup.controllers" 2> /dev/null)

# scope_of ID: the absolute cgroup path kist recorded for the container.
scope_of ()
{
  jget "$ROOT/$1/state.json" cgroupPath
}

# counter: the value the container last wrote (empty when none yet).
counter ()
{
  cat "$MARKDIR/counter" 2> /dev/null
}

# wait_counter_above N [SECONDS]: poll until the counter exceeds N.
wait_counter_above ()
{
  local i n=$(( ${2:-5} * 20 )) v
  for ((i = 0; i < n; i++)); do
    v=$(counter)
    [ -n "$v" ] && [ "$v" -gt "$1" ] && return 0
    sleep 0.05
  done
  return 1
}

# in_procs SCOPE PID: PID is listed in SCOPE/cgroup.procs.
in_procs ()
{
  grep -qx "$2" "$1/cgroup.procs" 2> /dev/null
}

# ns_root_seen PID: the root field of the cgroup2 mount $CG2 in mountinfo as
# PID's cgroup namespace shows it ("/": the namespace is rooted at the cgroup2
# root; "/../..": two levels below), read by the test from outside.
ns_root_seen ()
{
  nsenter --cgroup="/proc/$1/ns/cgroup" awk -v m="$CG2" '$5 == m { r = $4 } END { print r }' \
    /proc/self/mountinfo 2> /dev/null
}

# v1_lines PID: the cgroup v1 lines of /proc/PID/cgroup, joined by ", ".
v1_lines ()
{
  grep -v '^0::' "/proc/$1/cgroup" 2> /dev/null | awk 'NR > 1 { printf ", " } { printf "%s", $0 }'
}

# check_cgroup_truth WHAT REPORT PID: cgroup.v1 and namespace.cgroup of the
# report against /proc/PID/cgroup and the namespace, read by the test.
check_cgroup_truth ()
{
  local what=$1 rep=$2 pid=$3 v1 seen
  v1=$(v1_lines "$pid")
  if [ -n "$v1" ]; then
    expect_eq "$what: cgroup.v1 lists exactly the init's v1 lines of /proc/$pid/cgroup" "$v1" \
      "$(layer_field "$rep" cgroup.v1 detail | sed -n "s|.*(/proc/$pid/cgroup): ||p")"
    expect_eq "$what: cgroup.v1 is not requested (kist does not manage v1)" false \
      "$(layer_field "$rep" cgroup.v1 requested)"
    expect_contains "$what: cgroup.v1 says kist does not manage them" \
      "$(layer_field "$rep" cgroup.v1 detail)" "not managed by kist"
  else
    expect_eq "$what: no cgroup.v1 entry on a host without v1 hierarchies" "" \
      "$(layer_names "$rep" | grep -x cgroup.v1)"
    skip "$what: cgroup.v1 lists the init's v1 cgroups" "the init is in no cgroup v1 hierarchy here (pure v2)"
  fi
  seen=$(ns_root_seen "$pid")
  if [ -n "$seen" ]; then
    expect_contains "$what: namespace.cgroup says where the namespace is rooted ($seen, as the test sees it)" \
      "$(layer_field "$rep" namespace.cgroup detail)" "reads $seen in mountinfo"
  else
    fail "$what: the test can read the cgroup2 mount in the init's cgroup namespace (nsenter --cgroup)"
  fi
}

# ---- a scope without limits; pause / resume ------------------------------------
cfg_reset
with_marker
# Write through a temp file and rename, so a reader never sees a half-written
# number (the container may be frozen between the two).
sh_args 'i=0; while true; do i=$((i+1)); echo $i > /mark/counter.tmp; mv /mark/counter.tmp /mark/counter; sleep 0.05; done'
B=$(mkbundle scope)
id=$(new_id scope)
kc create create --report "$T/scope.json" --bundle "$B" "$id"
expect_eq "create without limits exits 0" 0 "$RC"
pid=$(state_field "$id" pid)
scope=$(scope_of "$id")
expect_ne "state.json records a cgroupPath" "" "$scope"
case $scope in
  "$CG2"/*) ok "the scope $scope is under the cgroup2 mount $CG2" ;;
  *) fail "the scope is under the cgroup2 mount $CG2" "cgroupPath: $scope" ;;
esac
expect_true "the scope directory exists" test -d "$scope"
expect_true "the created init ($pid) is in the scope's cgroup.procs" in_procs "$scope" "$pid"
expect_eq "/proc/PID/cgroup of the init names the scope" "0::${scope#$CG2}" \
  "$(grep '^0::' "/proc/$pid/cgroup" 2> /dev/null)"
# The report says what the test sees (kist-report.5: the default scope is
# applied, with the path kist chose as requested).
expect_eq "report: the default scope's cgroup entry is applied" true \
  "$(layer_field "$T/scope.json" cgroup applied)"
expect_eq "report: the default scope's cgroup entry requests the scope kist chose" "${scope#$CG2/}" \
  "$(layer_field "$T/scope.json" cgroup requested)"
expect_contains "report: the cgroup detail names the scope" \
  "$(layer_field "$T/scope.json" cgroup detail)" "scope $scope (created)"
expect_contains "report: the cgroup detail quotes the init's /proc/$pid/cgroup (read by the test)" \
  "$(layer_field "$T/scope.json" cgroup detail)" "/proc/$pid/cgroup: $(grep '^0::' "/proc/$pid/cgroup")"
expect_eq "report: limits applied (the default scope counts)" true "$(jget "$T/scope.json" limits.applied)"
check_cgroup_truth "default scope" "$T/scope.json" "$pid"

kc pause_created pause "$id"
expect_eq "pause of a created container fails with exit 1" 1 "$RC"
expect_contains "pause of a created container: the error says it is not running" "$ERR" "not running"

kc start start "$id"
expect_eq "start exits 0" 0 "$RC"
expect_true "state becomes running" wait_status "$id" running 5
expect_true "the counter advances while running" wait_counter_above 2 5

kc resume_running resume "$id"
expect_eq "resume of a running container fails with exit 1" 1 "$RC"
expect_contains "resume of a running container: the error says it is not paused" "$ERR" "not paused"

kc pause pause "$id"
expect_eq "pause exits 0" 0 "$RC"
expect_eq "pause prints nothing" "" "$OUT"
expect_eq "state says paused" paused "$(state_field "$id" status)"
expect_eq "cgroup.events says frozen 1" "frozen 1" "$(grep '^frozen ' "$scope/cgroup.events" 2> /dev/null)"
c1=$(counter)
sleep 0.6
c2=$(counter)
expect_eq "the counter does not advance while paused" "$c1" "$c2"
expect_true "the paused init is still alive" pid_alive "$pid"
kc pause_twice pause "$id"
expect_eq "pause of a paused container fails with exit 1" 1 "$RC"
expect_contains "pause of a paused container: the error says it is not running" "$ERR" "not running"

kc resume resume "$id"
expect_eq "resume exits 0" 0 "$RC"
expect_eq "state says running after resume" running "$(state_field "$id" status)"
expect_eq "cgroup.events says frozen 0" "frozen 0" "$(grep '^frozen ' "$scope/cgroup.events" 2> /dev/null)"
expect_true "the counter advances again after resume" wait_counter_above "${c2:-0}" 5

# ---- ps ------------------------------------------------------------------------------
kc psjson ps --format json "$id"
expect_eq "ps --format json exits 0" 0 "$RC"
expect_match "ps --format json is a JSON array of pids" "$OUT" '^\[[0-9]+(,[0-9]+)*\]$'
expect_match "ps --format json lists the init pid $pid" "$OUT" "[[,]$pid[],]"
# The table is ps(1)'s (runc runs ps -ef by default and keeps the
# container's lines); kist reads /proc itself: compared with procps here.
kc pstable ps "$id"
expect_eq "ps (table) exits 0" 0 "$RC"
expect_match "ps table has ps -ef's header" "$(head -n 1 "$T/pstable.out")" \
  '^ *UID +PID +PPID +C +STIME +TTY +TIME +CMD$'
expect_match "ps table shows the init's command line" "$OUT" " $pid +[0-9]+ .* sh -c i=0; while true"
expect_eq "ps: the init's row has the fields of procps' ps -f" \
  "$(ps -f -p "$pid" | awk 'NR == 2 { print $1, $2, $3, $6 }')" \
  "$(awk -v p="$pid" '$2 == p { print $1, $2, $3, $6 }' "$T/pstable.out")"
kc psargs ps "$id" -- -eo pid,ppid,user,comm,stat,tty,nlwp,ni,args
expect_eq "ps -- -eo LIST exits 0" 0 "$RC"
# The state letter (R or S) changes between the two reads of a busy loop:
# compared as one of ps(1)'s letters, the rest field by field.
expect_eq "ps -- -eo LIST: the init's row is procps' (same keywords)" \
  "$(ps -o pid=,ppid=,user=,comm=,stat=,tty=,nlwp=,ni=,args= -p "$pid" | awk '{ $5 = "-"; print }')" \
  "$(awk -v p="$pid" '$1 == p { $5 = "-"; print }' "$T/psargs.out" | awk '{ $1 = $1; print }')"
expect_match "ps -- -eo LIST: the init's stat is a ps(1) state letter" \
  "$(awk -v p="$pid" '$1 == p { print $5 }' "$T/psargs.out")" '^[RSDTtZI]$'
kc psaux ps "$id" aux
expect_match "ps aux: procps' u header" "$(head -n 1 "$T/psaux.out")" '^USER +PID +VSZ +RSS +TT +S +STIME +TIME +COMMAND$'
kc psbad ps "$id" -- -L
expect_eq "ps with a ps(1) option kist does not understand fails with exit 1" 1 "$RC"
expect_contains "ps -L: the error names the option" "$ERR" "-L"
kc psjsonargs ps --format json "$id" -- -ef
expect_eq "ps --format json ignores ps(1) arguments like runc" 0 "$RC"
kc psbadfmt ps --format yaml "$id"
expect_eq "ps --format yaml fails with exit 1" 1 "$RC"

# ---- events --------------------------------------------------------------------------
kc stats events --stats "$id"
expect_eq "events --stats exits 0" 0 "$RC"
expect_match "events --stats prints one stats event for the id" "$OUT" \
  "^\{\"type\":\"stats\",\"id\":\"$id\",\"data\":\{.*\}\}$"
expect_eq "events --stats prints exactly one line" 1 "$(wc -l < "$T/stats.out")"
kc badinterval events --interval 5parsecs "$id"
expect_eq "events --interval with a bad duration fails with exit 1" 1 "$RC"

# The stream: stats every 200 ms, ends when the container stops.
kist events --interval 200ms "$id" > "$T/events.out" 2> "$T/events.err" &
events_pid=$!
sleep 0.9

# ---- update without controllers ----------------------------------------------------
if [[ " $CONTROLLERS " != *" memory "* ]]; then
  kc upd_mem update --memory 64m "$id"
  expect_eq "update --memory without the memory controller fails with exit 1" 1 "$RC"
  expect_contains "update --memory: the error names memory.max" "$ERR" "memory.max"
  printf '{"memory": {"limit": 67108864}}\n' > "$T/res.json"
  kc upd_res update --resources "$T/res.json" "$id"
  expect_eq "update --resources FILE without the memory controller fails with exit 1" 1 "$RC"
  expect_contains "update --resources: the error names memory.max" "$ERR" "memory.max"
else
  skip "update fails without the memory controller" "this cgroup2 hierarchy has it (tests/vm covers update)"
fi
# A controller this host may have (hugetlb here): update succeeds, reads
# back, and the stored report gets the entry (replacing an older one).
# The scope was made without hugetlb: update itself must enable it in the
# ancestors' cgroup.subtree_control.
if [[ " $CONTROLLERS " == *" hugetlb "* ]]; then
  for lim in 4194304 8388608; do
    # Docker's zero-valued fields mean unset; engines send a trailing newline.
    printf '{"hugepageLimits": [{"pageSize": "2MB", "limit": %s}], "memory": {"reservation": 0},
      "cpu": {"shares": 0}, "blockIO": {"weight": 0}}\n' "$lim" \
      | timeout -k 5 "$KIST_IT_TIMEOUT" "$KIST" --root "$ROOT" update --resources - "$id" \
        > "$T/upd_ok.out" 2> "$T/upd_ok.err"
    rc=$?
    expect_eq "update --resources - (hugetlb 2MB $lim) exits 0" 0 "$rc"
    expect_eq "update prints nothing on success" "" "$(cat "$T/upd_ok.out" "$T/upd_ok.err")"
    expect_eq "hugetlb.2MB.max is $lim after the update" "$lim" "$(cat "$scope/hugetlb.2MB.max")"
  done
  kist report "$id" > "$T/upd_report.json" 2> /dev/null
  expect_eq "the stored report has the updated entry" 8388608 \
    "$(layer_field "$T/upd_report.json" cgroup.hugetlb.2MB.max requested)"
  expect_eq "the stored report's updated entry is applied" true \
    "$(layer_field "$T/upd_report.json" cgroup.hugetlb.2MB.max applied)"
  expect_eq "the stored report has one entry per cgroup file" 1 \
    "$(layer_names "$T/upd_report.json" | grep -cx cgroup.hugetlb.2MB.max)"
else
  skip "update applies and records a limit" "no hugetlb controller in this cgroup2 hierarchy"
fi
kc upd_bad update --memory lots "$id"
expect_eq "update --memory lots fails with exit 1" 1 "$RC"
expect_contains "update --memory lots: the error names the flag" "$ERR" "--memory"
printf '[1, 2]\n' > "$T/res-bad.json"
kc upd_badjson update --resources "$T/res-bad.json" "$id"
expect_eq "update --resources with a JSON array fails with exit 1" 1 "$RC"
expect_contains "update with a JSON array: the error says what is expected" "$ERR" "LinuxResources"
kc upd_none update "$id"
expect_eq "update without anything to change fails with exit 1" 1 "$RC"
expect_true "the container still runs after the refused updates" pid_alive "$pid"

# ---- kill --all ------------------------------------------------------------------------
kc kill kill --all "$id" KILL
expect_eq "kill --all ID KILL exits 0" 0 "$RC"
expect_true "state becomes stopped after kill --all" wait_status "$id" stopped 5
for ((i = 0; i < 100; i++)); do
  [ -z "$(cat "$scope/cgroup.procs" 2> /dev/null)" ] && break
  sleep 0.05
done
expect_eq "the scope is empty after kill --all" "" "$(cat "$scope/cgroup.procs" 2> /dev/null)"
for ((i = 0; i < 100; i++)); do
  kill -0 "$events_pid" 2> /dev/null || break
  sleep 0.05
done
if kill -0 "$events_pid" 2> /dev/null; then
  fail "the event stream ends when the container stops"
  kill "$events_pid" 2> /dev/null
  wait "$events_pid" 2> /dev/null
else
  wait "$events_pid"
  expect_eq "the event stream ends with exit 0 when the container stops" 0 "$?"
fi
n_stats=$(grep -c "^{\"type\":\"stats\",\"id\":\"$id\",\"data\":{" "$T/events.out")
expect_true "the event stream printed stats events every 200ms ($n_stats)" test "$n_stats" -ge 2
expect_eq "the event stream printed nothing else" "$n_stats" "$(wc -l < "$T/events.out")"

kc delete delete "$id"
expect_eq "delete exits 0" 0 "$RC"
expect_true "delete removes the scope directory" test ! -e "$scope"
nothing_left "scope"

# ---- kill --all without a pid namespace: processes outside the init's tree --------
cfg_reset
C_NAMESPACES="network ipc uts mount"
# The init starts a process in a new session whose parent exits: it is not
# the init's descendant any more, only the cgroup still holds it.
C_ARGS=$(json_arr sh -c 'sh -c "setsid sleep 3142 & exit 0"; exec sleep 3141')
B=$(mkbundle nopidns)
id=$(new_id nopidns)
kc create2 create --bundle "$B" "$id"
kc start2 start "$id"
expect_eq "start of the container without a pid namespace exits 0" 0 "$RC"
scope=$(scope_of "$id")
pid=$(state_field "$id" pid)
for ((i = 0; i < 100; i++)); do
  [ "$(wc -l < "$scope/cgroup.procs" 2> /dev/null)" -ge 2 ] && break
  sleep 0.05
done
pids=$(cat "$scope/cgroup.procs" 2> /dev/null | tr '\n' ' ')
expect_true "the scope holds the init and the detached sleep ($pids)" \
  test "$(echo $pids | wc -w)" -ge 2
kc psjson2 ps --format json "$id"
expect_eq "ps --format json lists every process of the scope" \
  "[$(echo $pids | tr ' ' '\n' | sort -n | paste -sd,)]" "$OUT"
kc kill2 kill --all "$id" KILL
expect_eq "kill --all exits 0" 0 "$RC"
for p in $pids; do
  expect_true "kill --all killed pid $p of the scope" wait_gone "$p" 5
done
kc delete2 delete "$id"
expect_eq "delete exits 0" 0 "$RC"
expect_true "delete removes the scope directory" test ! -e "$scope"
nothing_left "kill --all without a pid namespace"

# ---- delete --force of a paused container (podman rm -f) --------------------------
cfg_reset
C_ARGS='["sleep", "3143"]'
B=$(mkbundle paused)
id=$(new_id paused)
kc create3 create --bundle "$B" "$id"
kc start3 start "$id"
scope=$(scope_of "$id")
pid=$(state_field "$id" pid)
kc pause3 pause "$id"
expect_eq "pause exits 0" 0 "$RC"
kc delete3 delete --force "$id"
expect_eq "delete --force of a paused container exits 0" 0 "$RC"
expect_true "delete --force killed the frozen init" wait_gone "$pid" 5
expect_true "delete --force of a paused container removes the scope" test ! -e "$scope"
nothing_left "delete --force of a paused container"

# ---- memory limit without the memory controller -------------------------------
if [[ " $CONTROLLERS " == *" memory "* ]]; then
  skip "memory.max without the memory controller" "this cgroup2 hierarchy has the memory controller"
else
  cfg_reset
  with_marker
  sh_args 'echo ran > /mark/ran'
  C_LINUX_EXTRA=', "resources": {"memory": {"limit": 33554432}}'
  B=$(mkbundle memlimit)
  rm -f "$MARKDIR/ran"
  id=$(new_id memlimit)
  kc memfail run --report "$T/memfail.json" --bundle "$B" "$id"
  expect_eq "a memory limit without the memory controller fails with exit 125" 125 "$RC"
  expect_contains "the error names the layer cgroup.memory.max" "$ERR" "cgroup.memory.max"
  expect_match "the error names the missing memory controller" "$ERR" "memory controller"
  expect_true "the container code did not run" test ! -e "$MARKDIR/ran"
  expect_true "no state dir after the refused run" test ! -e "$ROOT/$id"
  nothing_left "refused memory limit"

  id=$(new_id memdegr)
  kc memdegr run --allow-degraded cgroup.memory.max --report "$T/memdegr.json" --bundle "$B" "$id"
  expect_eq "with --allow-degraded cgroup.memory.max the run succeeds" 0 "$RC"
  expect_true "with --allow-degraded the container code ran" test -e "$MARKDIR/ran"
  expect_eq "the report says cgroup.memory.max requested 33554432" 33554432 \
    "$(layer_field "$T/memdegr.json" cgroup.memory.max requested)"
  expect_eq "the report says cgroup.memory.max applied false" false \
    "$(layer_field "$T/memdegr.json" cgroup.memory.max applied)"
  expect_match "the report gives the reason (the memory controller)" \
    "$(layer_field "$T/memdegr.json" cgroup.memory.max reason)" "memory controller"
  expect_eq "the report's limits.applied is false" false "$(jget "$T/memdegr.json" limits.applied)"
  expect_contains "the report's limits.missing lists cgroup.memory.max" \
    " $(json_list "$T/memdegr.json" limits.missing | tr '\n' ' ')" " cgroup.memory.max "
  expect_eq "the report says the scope (cgroup) applied" true \
    "$(layer_field "$T/memdegr.json" cgroup applied)"
  nothing_left "degraded memory limit"
fi

# ---- rootless without a delegated hierarchy: no scope -------------------------------
if ! nobody_ok "rootless without a scope"; then
  :
elif "${AS_NOBODY[@]}" test -w "$CG2"; then
  skip "rootless without a scope" "nobody may write to $CG2 (a delegated hierarchy)"
else
  nobody_dir "$XDG" 0700
  RB=$T/rootless
  nobody_bundle "$RB"
  kn_in "$RB" rlspec spec --rootless
  rootless_config "$RB/config.json" '["sleep", "3144"]' > "$T/rl-config.json"
  cp "$T/rl-config.json" "$RB/config.json"
  rid=$(new_id rl-noscope)
  test_cleanup ()
  {
    kn_in "$RB" rlcleanup delete --force "$rid"
  }
  kn_in "$RB" rlrun run --detach --report "$XDG/rl.json" "$rid"
  expect_eq "rootless run --detach without a scope exits 0" 0 "$RC"
  rpid=$(jget "$XDG/kist/$rid/state.json" pid)
  expect_ne "rootless: the state records the init's pid" "" "$rpid"
  expect_eq "rootless: cgroup not requested (no scope)" false "$(layer_field "$XDG/rl.json" cgroup requested)"
  expect_contains "rootless: the cgroup detail says there is no scope" \
    "$(layer_field "$XDG/rl.json" cgroup detail)" "no scope"
  expect_eq "rootless: the init stays in kist's own cgroup" "$(grep '^0::' /proc/$$/cgroup)" \
    "$(grep '^0::' "/proc/$rpid/cgroup" 2> /dev/null)"
  expect_contains "rootless: the cgroup detail quotes the init's /proc/$rpid/cgroup (read by the test)" \
    "$(layer_field "$XDG/rl.json" cgroup detail)" "(/proc/$rpid/cgroup: $(grep '^0::' "/proc/$rpid/cgroup"))"
  check_cgroup_truth "rootless" "$XDG/rl.json" "$rpid"
  if [ "$(ns_root_seen "$rpid")" = / ]; then
    expect_contains "rootless: namespace.cgroup says the container sees the whole hierarchy" \
      "$(layer_field "$XDG/rl.json" namespace.cgroup detail)" "the container sees the whole cgroup2 hierarchy"
  else
    skip "rootless: the namespace rooted at the cgroup2 root" "kist's own cgroup is not the cgroup2 root here"
  fi
  kn_in "$RB" rldel delete --force "$rid"
  expect_eq "rootless delete --force exits 0" 0 "$RC"
  rm -f "$XDG/rl.json"
  nothing_left "rootless without a scope"
fi

# ---- commands on a container that does not exist -------------------------------------
nx=$PREFIX-nonexistent
for cmd in "update --memory 64m" "pause" "resume" "ps" "events --stats"; do
  kc nx $cmd "$nx"
  expect_eq "$cmd of a non-existent container fails with exit 1" 1 "$RC"
  expect_contains "$cmd of a non-existent container: the error says it does not exist" "$ERR" \
    "does not exist"
done

# ---- the cgroup2 hierarchy mounted again over a path (what engine tests do) ----------
# A cgroup2 bind over /sys/fs/cgroup hides the first cgroup2 mount of
# mountinfo on a hybrid host: kist must use the mount its path shows now.
if [ -n "$CG2" ] && [ "$CG2" != /sys/fs/cgroup ]; then
  cfg_reset
  C_LINUX_EXTRA=", \"cgroupsPath\": \"/$PREFIX-over/c1\""
  B=$(mkbundle cgover)
  id=$(new_id cgover)
  unshare -m --propagation private sh -c '
      mount --bind "$1" /sys/fs/cgroup || exit 99
      timeout -k 5 30 "$2" --root "$3" run --report "$4" --bundle "$5" "$6" < /dev/null' \
    sh "$CG2" "$KIST" "$ROOT" "$T/cgover.json" "$B" "$id" > "$T/cgover.out" 2> "$T/cgover.err"
  RC=$?
  expect_eq "cgroup2 bound over /sys/fs/cgroup (the first cgroup2 mount hidden): run exits 0" 0 "$RC"
  expect_contains "cgroup2 bound over /sys/fs/cgroup: the scope is under the visible mount" \
    "$(layer_field "$T/cgover.json" cgroup detail)" "scope /sys/fs/cgroup/$PREFIX-over/c1"
  rmdir "$CG2/$PREFIX-over/c1" "$CG2/$PREFIX-over" 2> /dev/null
  nothing_left "cgroup2 bound over /sys/fs/cgroup"
else
  skip "a cgroup2 mount hidden by another" "cgroup2 is mounted at /sys/fs/cgroup here"
fi
