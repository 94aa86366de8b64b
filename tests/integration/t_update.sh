#!/bin/bash
# t_update.sh: `kist update` as engines call it, side by side with runc
# (issue #9).  On this host the cgroup2 hierarchy has no cpu, memory, pids or
# io controller.
#   - the same sequence of updates under kist and under runc (in a mount
#     namespace where the host's cgroup2 hierarchy is /sys/fs/cgroup) gives
#     the same exit codes: the JSON engines send on stdin (a trailing
#     newline), --resources FILE and --resources=FILE, Docker's zero-valued
#     fields (reservation 0, kernel 0, shares 0, blockIO.weight 0, ...: unset,
#     they fail nothing and change nothing), limits whose controller is
#     missing (exit 1), runc's single-value flags (0: unset), malformed input,
#     a missing container, a stopped one;
#   - the kept differences: kernel and kernelTCP memory and realtime CPU
#     values, which runc ignores on cgroup v2 (a warning, or nothing), fail
#     closed in kist like any limit that cannot be applied;
#   - the degradation policy is create's: the global --allow-degraded LIST
#     (before the subcommand, as engines pass runtime flags) or update's own
#     lets named layers degrade; the update then exits 0, warns (also in the
#     --log file as JSON) and the stored report lists each layer not applied
#     with its reason, limits.applied false and the policy in allowDegraded,
#     and `kist state` lists them under "degraded";
#     an update that fails closed leaves the stored report as it was;
#   - the container keeps running through all of it; nothing is left.
. "$(dirname "$0")/lib.sh"

CG2=$LO_CG2
if [ -z "$CG2" ] || [ ! -w "$CG2/cgroup.procs" ]; then
  skip "update tests" "no writable cgroup2 hierarchy (${CG2:-none})"
  exit 0
fi
CONTROLLERS=$(cat "$CG2/cgroup.controllers" 2> /dev/null)
for c in memory cpu pids io; do
  if [[ " $CONTROLLERS " == *" $c "* ]]; then
    skip "update tests on a host without controllers" "this cgroup2 hierarchy has $c (tests/vm covers limits)"
    exit 0
  fi
done

C_ARGS='["sleep", "3145"]'
B=$(mkbundle upd)

DOCKER_ZERO='{"memory":{"limit":0,"reservation":0,"kernel":0,"kernelTCP":0},"cpu":{"shares":0,"quota":0,"period":0,"realtimeRuntime":0,"realtimePeriod":0,"cpus":"","mems":""},"blockIO":{"weight":0},"pids":{"limit":0}}'
printf '%s\n' "$DOCKER_ZERO" > "$T/zero.json"
printf '{"memory":{"limit":67108864}}\n' > "$T/mem.json"

# useq RUNTIME ID: one "STEP: rc" line per call.  RUNTIME_rc ARGS... runs
# the runtime with stdin from $IN (a string and a newline, as engines send
# it) and prints its exit status.
useq ()
{
  local r=${1}_rc id=$2
  echo "missing: $(IN='{}' $r update --resources - "$id-none")"
  echo "create: $(IN= $r create --bundle "$B" "$id")"
  echo "created {}: $(IN='{}' $r update --resources - "$id")"
  echo "start: $(IN= $r start "$id")"
  echo "running {}: $(IN='{}' $r update --resources - "$id")"
  echo "docker zero stdin: $(IN=$DOCKER_ZERO $r update --resources - "$id")"
  echo "docker zero -r FILE: $(IN= $r update -r "$T/zero.json" "$id")"
  echo "docker zero --resources=FILE: $(IN= $r update --resources="$T/zero.json" "$id")"
  echo "memory stdin: $(IN='{"memory":{"limit":67108864}}' $r update --resources - "$id")"
  echo "memory --resources=FILE: $(IN= $r update --resources="$T/mem.json" "$id")"
  echo "engines' example: $(IN='{"memory":{"limit":67108864,"swap":134217728},"cpu":{"quota":50000,"period":100000}}' \
    $r update --resources - "$id")"
  echo "docker memory with zeros: $(IN='{"memory":{"limit":67108864,"reservation":0,"kernel":0},"cpu":{"shares":0,"quota":0,"period":0},"blockIO":{"weight":0}}' \
    $r update --resources - "$id")"
  echo "cpu shares 1024: $(IN='{"cpu":{"shares":1024}}' $r update --resources - "$id")"
  echo "pids 100: $(IN='{"pids":{"limit":100}}' $r update --resources - "$id")"
  echo "blockIO weight 100: $(IN='{"blockIO":{"weight":100}}' $r update --resources - "$id")"
  echo "--memory 0: $(IN= $r update --memory 0 "$id")"
  echo "--memory-reservation 0: $(IN= $r update --memory-reservation 0 "$id")"
  echo "--cpu-share 0: $(IN= $r update --cpu-share 0 "$id")"
  echo "--cpu-quota 0: $(IN= $r update --cpu-quota 0 "$id")"
  echo "--cpu-period 0: $(IN= $r update --cpu-period 0 "$id")"
  echo "--pids-limit 0: $(IN= $r update --pids-limit 0 "$id")"
  echo "--blkio-weight 0: $(IN= $r update --blkio-weight 0 "$id")"
  echo "--memory 64m: $(IN= $r update --memory 64m "$id")"
  echo "--memory 67108864: $(IN= $r update --memory 67108864 "$id")"
  echo "--cpu-share 512: $(IN= $r update --cpu-share 512 "$id")"
  echo "--pids-limit 10: $(IN= $r update --pids-limit 10 "$id")"
  echo "array: $(IN='[]' $r update --resources - "$id")"
  echo "garbage: $(IN='garbage' $r update --resources - "$id")"
  echo "empty stdin: $(IN= $r update --resources - "$id")"
  echo "missing file: $(IN= $r update --resources "$T/none.json" "$id")"
  echo "kill: $(IN= $r kill "$id" 9)"
  for x in $(seq 1 100); do
    [ "$(IN= ${1}_out state "$id" | grep -c '"stopped"')" = 1 ] && break
    sleep 0.05
  done
  echo "stopped {}: $(IN='{}' $r update --resources - "$id")"
  echo "stopped --memory 0: $(IN= $r update --memory 0 "$id")"
  echo "delete: $(IN= $r delete "$id")"
}

# (A here-string, not a pipe: under pipefail a printf into a pipe that kist
# closed unread would fail the call with SIGPIPE.)
kist_rc ()
{
  timeout -k 5 "$KIST_IT_TIMEOUT" "$KIST" --root "$ROOT" "$@" <<< "$IN" \
    > /dev/null 2>> "$T/kist.errs"
  echo $?
}
kist_out ()
{
  kist "$@" 2> /dev/null
}
: > "$T/kist.errs"
KID=$(new_id useq)
IDS+=("$KID-none")
kist_table=$(useq kist "$KID")

row ()
{
  sed -n "s/^$1: //p" <<< "$2"
}
for step in "created {}" "running {}" "docker zero stdin" "docker zero -r FILE" \
  "docker zero --resources=FILE" "--memory 0" "--memory-reservation 0" "--cpu-share 0" \
  "--cpu-quota 0" "--cpu-period 0" "--pids-limit 0" "--blkio-weight 0"; do
  expect_eq "update ($step) exits 0" 0 "$(row "$step" "$kist_table")"
done
for step in "missing" "memory stdin" "memory --resources=FILE" "engines' example" \
  "docker memory with zeros" "cpu shares 1024" "pids 100" "blockIO weight 100" "--memory 64m" \
  "--memory 67108864" "--cpu-share 512" "--pids-limit 10" "array" "garbage" "empty stdin" \
  "missing file" "stopped {}" "stopped --memory 0"; do
  expect_eq "update ($step) fails with exit 1" 1 "$(row "$step" "$kist_table")"
done
errs=$(cat "$T/kist.errs")
expect_contains "a limit without its controller: the error names the layer" "$errs" \
  "layer cgroup.memory.max not applied: linux.resources.memory.limit: memory controller not available"
expect_contains "a limit without its controller: the error says how to let it degrade" "$errs" \
  "--allow-degraded cgroup.memory.max"
expect_contains "cpu.shares without the cpu controller names cgroup.cpu.weight" "$errs" \
  "layer cgroup.cpu.weight not applied"
expect_contains "a stopped container: the error says so" "$errs" "is not running (it is stopped)"

RROOT=$T/runc-root
RID=$PREFIX-ruseq
runc_rc ()
{
  runc --root "$RROOT" "$@" <<< "$IN" > /dev/null 2>> "$T/runc.errs"
  echo $?
}
runc_out ()
{
  runc --root "$RROOT" "$@" 2> /dev/null < /dev/null
}
test_cleanup ()
{
  [ -d "$RROOT" ] || return 0
  unshare -m --propagation private sh -c '
    mount --bind "$1" /sys/fs/cgroup && runc --root "$2" delete --force "$3"' \
    sh "$CG2" "$RROOT" "$RID" > /dev/null 2>&1
  [ -d "$CG2/$RID" ] && rmdir "$CG2/$RID" 2> /dev/null
  return 0
}
if command -v runc > /dev/null; then
  export -f useq runc_rc runc_out
  export B RROOT T DOCKER_ZERO
  runc_table=$(timeout -k 5 300 unshare -m --propagation private bash -c '
      mount --bind "$1" /sys/fs/cgroup || exit 99
      useq runc "$2"' bash "$CG2" "$RID")
  expect_eq "update: kist's exit codes are runc's at every step" "$runc_table" "$kist_table"
  expect_contains "runc too fails the memory limit without the controller" "$(cat "$T/runc.errs")" \
    "memory.max: no such file or directory"
else
  skip "update compared with runc" "runc is not installed"
fi
nothing_left "the update sequence"

# ---- the kept differences: what runc ignores on cgroup v2 fails closed -------------
kid=$(new_id diff)
kc diff_run run --detach --bundle "$B" "$kid"
expect_eq "run --detach for the differences exits 0" 0 "$RC"
for case in 'kernel|{"memory":{"kernel":1048576}}|cgroup.memory.kernel' \
  'kernelTCP|{"memory":{"kernelTCP":1048576}}|cgroup.memory.kernelTCP' \
  'realtimePeriod|{"cpu":{"realtimePeriod":1000}}|cgroup.cpu.rt_period' \
  'realtimeRuntime|{"cpu":{"realtimeRuntime":1000}}|cgroup.cpu.rt_runtime'; do
  IFS='|' read -r what json layer <<< "$case"
  IN=$json
  rc=$(kist_rc update --resources - "$kid")
  expect_eq "update with $what (runc ignores it on cgroup v2) fails closed with exit 1" 1 "$rc"
  expect_contains "update with $what: the error names $layer" "$(tail -n 1 "$T/kist.errs")" \
    "layer $layer not applied"
  rc=$(kist_rc --allow-degraded "$layer" update --resources - "$kid")
  expect_eq "update with $what and --allow-degraded $layer exits 0" 0 "$rc"
done
# memory.checkBeforeUpdate: a boolean, checked before the container is
# touched; without a memory controller there is no memory.current to compare
# with, and the limit fails for the missing controller as without the check
# (the VM test, tests/vm/tests.sh cbu-*, refuses a limit below the usage).
IN='{"memory":{"limit":67108864,"checkBeforeUpdate":"yes"}}'
expect_eq "update with checkBeforeUpdate \"yes\" fails with exit 1" 1 "$(kist_rc update --resources - "$kid")"
expect_contains "... naming its JSON path" "$(tail -n 1 "$T/kist.errs")" \
  "linux.resources.memory.checkBeforeUpdate: expected boolean"
IN='{"memory":{"limit":4096,"checkBeforeUpdate":true}}'
expect_eq "update with checkBeforeUpdate and no memory controller fails with exit 1" 1 \
  "$(kist_rc update --resources - "$kid")"
expect_contains "... for the missing controller" "$(tail -n 1 "$T/kist.errs")" \
  "memory controller not available"
expect_eq "... and exits 0 with --allow-degraded cgroup.memory.max" 0 \
  "$(kist_rc --allow-degraded cgroup.memory.max update --resources - "$kid")"
kc diff_del delete --force "$kid"
nothing_left "the kept differences"

# ---- memory.checkBeforeUpdate: recorded at create, replaced by an update that sets it ----
# (The refusal itself needs a memory controller: tests/vm/tests.sh cbu-*.)
C_LINUX_EXTRA=', "resources": {"memory": {"checkBeforeUpdate": true}}'
BC=$(mkbundle upd-cbu)
C_LINUX_EXTRA=
kid=$(new_id cbu)
kc cbu_run run --detach --report "$T/cbu-run.json" --bundle "$BC" "$kid"
expect_eq "run --detach with checkBeforeUpdate in config.json exits 0" 0 "$RC"
expect_eq "the run's report: cgroup.memory.checkBeforeUpdate requested true" true \
  "$(layer_field "$T/cbu-run.json" cgroup.memory.checkBeforeUpdate requested)"
expect_eq "the run's report: cgroup.memory.checkBeforeUpdate applied" true \
  "$(layer_field "$T/cbu-run.json" cgroup.memory.checkBeforeUpdate applied)"
IN='{"memory":{"limit":4096,"checkBeforeUpdate":false}}'
expect_eq "a failed update with checkBeforeUpdate false exits 1" 1 "$(kist_rc update --resources - "$kid")"
kist report "$kid" > "$T/cbu-1.json" 2> /dev/null
expect_eq "... and the stored entry is still true" true \
  "$(layer_field "$T/cbu-1.json" cgroup.memory.checkBeforeUpdate requested)"
IN='{"memory":{"checkBeforeUpdate":false}}'
expect_eq "update with only checkBeforeUpdate false exits 0" 0 "$(kist_rc update --resources - "$kid")"
kist report "$kid" > "$T/cbu-2.json" 2> /dev/null
expect_eq "... and the stored entry is now false" false \
  "$(layer_field "$T/cbu-2.json" cgroup.memory.checkBeforeUpdate requested)"
expect_eq "... listed once" 1 "$(layer_names "$T/cbu-2.json" | grep -cx cgroup.memory.checkBeforeUpdate)"
kc cbu_del delete --force "$kid"
nothing_left "checkBeforeUpdate"

# ---- the degradation policy, the report, the log ------------------------------------
id=$(new_id policy)
kc pol_run run --detach --report "$T/pol-run.json" --bundle "$B" "$id"
expect_eq "run --detach for the policy checks exits 0" 0 "$RC"
pid=$(state_field "$id" pid)
kist report "$id" > "$T/rep0.json" 2> /dev/null
kist state "$id" > "$T/state0.json" 2> /dev/null
expect_eq "before the updates kist state lists nothing degraded" "" "$(json_list "$T/state0.json" degraded)"

# Zero-valued fields change nothing: the stored report stays as it was.
IN=$DOCKER_ZERO
expect_eq "Docker's zero-valued fields: update exits 0" 0 "$(kist_rc update --resources - "$id")"
kist report "$id" > "$T/rep1.json" 2> /dev/null
expect_eq "Docker's zero-valued fields: the stored report is unchanged" "$(cat "$T/rep0.json")" \
  "$(cat "$T/rep1.json")"

# Fail closed: the stored report is unchanged too.
ENGINE='{"memory":{"limit":67108864,"reservation":0,"kernel":0},"cpu":{"shares":0,"quota":50000,"period":100000},"blockIO":{"weight":0}}'
IN=$ENGINE
expect_eq "the engine's update without a policy fails with exit 1" 1 "$(kist_rc update --resources - "$id")"
kist report "$id" > "$T/rep2.json" 2> /dev/null
expect_eq "a failed update leaves the stored report as it was" "$(cat "$T/rep0.json")" \
  "$(cat "$T/rep2.json")"

# Only memory allowed: cpu.max still fails the update.
expect_eq "update --allow-degraded cgroup.memory.max with cpu.max asked too fails with exit 1" 1 \
  "$(kist_rc update --allow-degraded cgroup.memory.max --resources - "$id")"
expect_contains "... naming cgroup.cpu.max" "$(tail -n 1 "$T/kist.errs")" "layer cgroup.cpu.max not applied"

# The global option, as an engine passes it, with a JSON log.
: > "$T/kist.errs"
timeout -k 5 "$KIST_IT_TIMEOUT" "$KIST" --root "$ROOT" --log "$T/log.json" --log-format json \
  --allow-degraded 'cgroup.*' update --resources - "$id" <<< "$ENGINE" > "$T/pol.out" 2> "$T/pol.err"
expect_eq "global --allow-degraded 'cgroup.*': the update exits 0" 0 "$?"
expect_contains "the degraded update warns about cgroup.memory.max" "$(cat "$T/pol.err")" \
  "layer cgroup.memory.max not applied (allowed to degrade)"
expect_contains "the degraded update warns about cgroup.cpu.max" "$(cat "$T/pol.err")" \
  "layer cgroup.cpu.max not applied (allowed to degrade)"
expect_match "the --log file has a JSON warning line naming cgroup.memory.max" "$(cat "$T/log.json" 2> /dev/null)" \
  '"level": ?"warning".*cgroup\.memory\.max not applied'
kist report "$id" > "$T/rep3.json" 2> /dev/null
expect_eq "the stored report: cgroup.memory.max requested 67108864" 67108864 \
  "$(layer_field "$T/rep3.json" cgroup.memory.max requested)"
expect_eq "the stored report: cgroup.memory.max not applied" false \
  "$(layer_field "$T/rep3.json" cgroup.memory.max applied)"
expect_contains "the stored report: cgroup.memory.max's reason names the missing controller" \
  "$(layer_field "$T/rep3.json" cgroup.memory.max reason)" "memory controller not available"
expect_eq "the stored report: cgroup.cpu.max not applied" false \
  "$(layer_field "$T/rep3.json" cgroup.cpu.max applied)"
expect_eq "the stored report: limits.applied is false" false "$(jget "$T/rep3.json" limits.applied)"
expect_eq "the stored report: limits.missing lists both" "cgroup.cpu.max,cgroup.memory.max" \
  "$(json_list "$T/rep3.json" limits.missing | sort | paste -sd,)"
expect_contains "the stored report: allowDegraded has the update's policy" \
  "$(json_list "$T/rep3.json" allowDegraded | paste -sd,)" "cgroup.*"
expect_match "the stored report's summary says limits NOT applied" "$(jget "$T/rep3.json" summary)" \
  'limits NOT applied: .*cgroup\.memory\.max'
kist report --format text "$id" > "$T/rep3.txt" 2> /dev/null
expect_match "kist report --format text shows cgroup.memory.max not applied" "$(cat "$T/rep3.txt")" \
  'cgroup\.memory\.max +67108864 +no'
kist state "$id" > "$T/state3.json" 2> /dev/null
expect_eq "kist state lists the layers the update let degrade" "cgroup.cpu.max,cgroup.memory.max" \
  "$(json_list "$T/state3.json" degraded | sort | paste -sd,)"
expect_eq "the stored report still has the run's entries (namespace.pid)" true \
  "$(layer_field "$T/rep3.json" namespace.pid applied)"
expect_eq "the stored report lists cgroup.memory.max once" 1 \
  "$(layer_names "$T/rep3.json" | grep -cx cgroup.memory.max)"

# Again: the entries are replaced, not repeated.
IN=$ENGINE
expect_eq "the degraded update again exits 0" 0 "$(kist_rc --allow-degraded 'cgroup.*' update --resources - "$id")"
kist report "$id" > "$T/rep4.json" 2> /dev/null
expect_eq "after a second degraded update cgroup.memory.max is listed once" 1 \
  "$(layer_names "$T/rep4.json" | grep -cx cgroup.memory.max)"
expect_eq "after a second degraded update the policy is listed once" 1 \
  "$(json_list "$T/rep4.json" allowDegraded | grep -cxF 'cgroup.*')"

expect_eq "the container still runs after every update" running "$(state_field "$id" status)"
expect_true "its init is the same process" pid_alive "$pid"
kc pol_del delete --force "$id"
expect_eq "delete --force exits 0" 0 "$RC"
nothing_left "the degradation policy"
