#!/bin/bash
# t_lifecycle.sh: create / start / state / kill / delete / list / run.
. "$(dirname "$0")/lib.sh"

SLEEP_ARGS='["sleep", "3141"]'
C_ARGS=$SLEEP_ARGS
B=$(mkbundle life)

cmdline_of ()
{
  tr '\0' ' ' < "/proc/$1/cmdline" 2> /dev/null
}

# wait_cmdline PID TEXT: poll until /proc/PID/cmdline is TEXT (2 s).
wait_cmdline ()
{
  local i
  for ((i = 0; i < 40; i++)); do
    [ "$(cmdline_of "$1")" == "$2" ] && return 0
    sleep 0.05
  done
  return 1
}

# ---- create: the init exists and waits -------------------------------------
id=$(new_id life)
kc create create --bundle "$B" "$id"
expect_eq "create exits 0" 0 "$RC"
expect_eq "state after create is created" created "$(state_field "$id" status)"
expect_eq "state.id" "$id" "$(state_field "$id" id)"
expect_eq "state.bundle is the bundle path" "$B" "$(state_field "$id" bundle)"
pid=$(state_field "$id" pid)
expect_true "state.pid ($pid) of the created container is alive" pid_alive "$pid"
cmd=$(cmdline_of "$pid")
expect_ne "created init has not exec'd the container's command yet (cmdline: $cmd)" "sleep 3141 " "$cmd"
if [ "/proc/$pid/exe" -ef "$B/rootfs/bin/busybox" ]; then
  fail "created init's /proc/PID/exe is not yet the container's binary"
else
  ok "created init's /proc/PID/exe is not yet the container's binary"
fi
# The state dir of a create: the record, and the socket `kist start` connects
# to (its name is the state dir's, not a hash: the id is short).
expect_true "create made the start socket start.sock in the state dir" test -S "$ROOT/$id/start.sock"
sleep 0.3
expect_true "created init is still alive and waiting after 0.3 s" pid_alive "$pid"
expect_eq "still created after 0.3 s" created "$(state_field "$id" status)"

# ---- run starts what it created: no start socket --------------------------------
# (the init takes START on its sync socket; had run died before sending it,
# the init would read EOF and exit: tests/fault f_kill, sandbox.)
rid=$(new_id liferun)
kc runsock run --detach --bundle "$B" "$rid"
expect_eq "run --detach exits 0" 0 "$RC"
expect_eq "run --detach: running" running "$(state_field "$rid" status)"
expect_eq "run made no start socket; the state dir holds the record and the report" \
  ".state.json.next report.json state.json" "$(ls -A "$ROOT/$rid" | sort | tr '\n' ' ' | sed 's/ $//')"
kc runsockstart start "$rid"
expect_ne "start of a container run started fails" 0 "$RC"
kist delete --force "$rid" > /dev/null 2>&1

# ---- start -----------------------------------------------------------------
kc start start "$id"
expect_eq "start exits 0" 0 "$RC"
expect_true "state becomes running" wait_status "$id" running 5
expect_true "after start the init runs process.args" wait_cmdline "$pid" "sleep 3141 "
expect_eq "start keeps the pid" "$pid" "$(state_field "$id" pid)"

kc start2 start "$id"
expect_ne "second start of a running container fails" 0 "$RC"
expect_ne "second start prints an error" "" "$ERR"
expect_true "second start did not disturb the container" pid_alive "$pid"

kc del_running delete "$id"
expect_ne "delete of a running container without --force fails" 0 "$RC"
expect_ne "delete without --force prints an error" "" "$ERR"
expect_eq "the container is still running after the refused delete" running "$(state_field "$id" status)"
expect_true "the refused delete kept the process" pid_alive "$pid"

# ---- kill -------------------------------------------------------------------
kc kill1 kill "$id" KILL
expect_eq "kill ID KILL exits 0" 0 "$RC"
expect_true "state becomes stopped after kill KILL" wait_status "$id" stopped 5
expect_true "the init is gone after kill KILL" wait_gone "$pid" 5

# SIGKILL of a stopped container succeeds (containerd's teardown; see
# t_killdelete.sh); any other signal fails, as with runc.
kc kill2 kill "$id" TERM
expect_ne "kill TERM of a stopped container fails" 0 "$RC"
expect_ne "kill TERM of a stopped container prints an error" "" "$ERR"

kc del_stopped delete "$id"
expect_eq "delete of a stopped container exits 0" 0 "$RC"
expect_true "no state dir after delete" test ! -e "$ROOT/$id"
kc state_gone state "$id"
expect_ne "state of a deleted container fails" 0 "$RC"

# ---- delete --force ----------------------------------------------------------
id=$(new_id created)
kc create2 create --bundle "$B" "$id"
pid=$(state_field "$id" pid)
kc delf1 delete --force "$id"
expect_eq "delete --force of a created container exits 0" 0 "$RC"
expect_true "no state dir after delete --force (created)" test ! -e "$ROOT/$id"
expect_true "no process after delete --force (created)" wait_gone "$pid" 2

id=$(new_id running)
kc create3 create --bundle "$B" "$id"
pid=$(state_field "$id" pid)
kc start3 start "$id"
wait_status "$id" running 5
kc delf2 delete --force "$id"
expect_eq "delete --force of a running container exits 0" 0 "$RC"
expect_true "no state dir after delete --force (running)" test ! -e "$ROOT/$id"
expect_true "no process after delete --force (running)" wait_gone "$pid" 2

kc del_none delete "$PREFIX-never-created"
expect_ne "delete of a nonexistent container fails" 0 "$RC"
kc delf_none delete --force "$PREFIX-never-created"
expect_eq "delete --force of a nonexistent container succeeds (like runc)" 0 "$RC"
nothing_left "create/start/kill/delete"

# ---- list -------------------------------------------------------------------
ida=$(new_id lista)
idb=$(new_id listb)
kc cla create --bundle "$B" "$ida"
kc clb create --bundle "$B" "$idb"
kc slb start "$idb"
wait_status "$idb" running 5
pida=$(state_field "$ida" pid)
pidb=$(state_field "$idb" pid)

kc list list
expect_eq "list exits 0" 0 "$RC"
expect_match "list table header: ID PID STATUS BUNDLE CREATED OWNER" \
  "$(head -n 1 <<< "$OUT")" '^ID +PID +STATUS +BUNDLE +CREATED +OWNER *$'
row=$(awk -v id="$ida" '$1 == id { print $2, $3, $4 }' <<< "$OUT")
expect_eq "list row for the created container: pid status bundle" "$pida created $B" "$row"
row=$(awk -v id="$idb" '$1 == id { print $2, $3, $4 }' <<< "$OUT")
expect_eq "list row for the running container: pid status bundle" "$pidb running $B" "$row"
hdr=$(head -n 1 <<< "$OUT")
col=${hdr%%STATUS*}
bad=$(tail -n +2 <<< "$OUT" | awk -v c=$((${#col} + 1)) 'substr($0, c - 1, 1) != " " || substr($0, c, 1) == " "')
expect_eq "list table columns are aligned under the header" "" "$bad"

kc listj list --format json
expect_eq "list --format json exits 0" 0 "$RC"
flat=$(jflat <<< "$OUT")
expect_ne "list --format json is a JSON document" "" "$flat"
for x in "$ida:$pida:created" "$idb:$pidb:running"; do
  IFS=: read -r xid xpid xst <<< "$x"
  i=$(awk -F'\t' -v id="$xid" '$1 ~ /^\[[0-9]+\]\.id$/ && $2 == id { sub(/\].*/, "", $1); sub(/^\[/, "", $1); print $1 }' <<< "$flat")
  if [ -z "$i" ]; then
    fail "list json has an entry for $xid" "$OUT"
    continue
  fi
  got=$(awk -F'\t' -v i="$i" '$1 == "[" i "].pid" { p = $2 } $1 == "[" i "].status" { s = $2 } END { print p ":" s }' <<< "$flat")
  expect_eq "list json entry for $xid has pid and status" "$xpid:$xst" "$got"
done

kc listq list --quiet
expect_eq "list --quiet prints exactly the ids" "$(printf '%s\n' "$ida" "$idb" | sort)" "$(sort <<< "$OUT")"

kist delete --force "$ida" > /dev/null 2>&1
kist delete --force "$idb" > /dev/null 2>&1
kc listq2 list -q
expect_eq "list is empty after deleting both" "" "$OUT"

# ---- duplicate id ------------------------------------------------------------
id=$(new_id dup)
C_ARGS=$SLEEP_ARGS
B2=$(mkbundle dup2)
kc dup1 create --bundle "$B" "$id"
pid=$(state_field "$id" pid)
kc dup2 create --bundle "$B2" "$id"
expect_ne "create with a duplicate id fails" 0 "$RC"
expect_contains "the duplicate-id error names the id" "$ERR" "$id"
expect_eq "the first container is still created" created "$(state_field "$id" status)"
expect_eq "the first container keeps its pid" "$pid" "$(state_field "$id" pid)"
expect_eq "the first container keeps its bundle" "$B" "$(state_field "$id" bundle)"
expect_true "the first container's init is still alive" pid_alive "$pid"
kc dupstart start "$id"
expect_eq "the first container still starts after the refused duplicate" 0 "$RC"
kist delete --force "$id" > /dev/null 2>&1

# ---- exit status through run -------------------------------------------------
sh_args 'echo out-ok; echo err-ok >&2; exit 7'
B3=$(mkbundle exit7)
id=$(new_id exit7)
kc run7 run --bundle "$B3" "$id"
expect_eq "run propagates exit status 7" 7 "$RC"
expect_eq "run passes the container's stdout through" out-ok "$OUT"
expect_contains "run passes the container's stderr through" "$ERR" err-ok
expect_true "run deletes the container after it exits" test ! -e "$ROOT/$id"

C_ARGS=$SLEEP_ARGS
B4=$(mkbundle killed)
id=$(new_id killed)
"$KIST" --root "$ROOT" run --bundle "$B4" "$id" > "$T/killed.out" 2> "$T/killed.err" < /dev/null &
runpid=$!
if wait_status "$id" running 10; then
  ok "run: the container is running"
else
  fail "run: the container is running" "$(cat "$T/killed.err")"
fi
kc killrun kill "$id" KILL
expect_eq "kill of the run container exits 0" 0 "$RC"
( sleep 20; kill -KILL "$runpid" 2> /dev/null ) &
watchdog=$!
wait "$runpid"
rc=$?
kill "$watchdog" 2> /dev/null
wait "$watchdog" 2> /dev/null
expect_eq "run reports 128+9 when the container is killed by SIGKILL" 137 "$rc"
expect_true "run deleted the killed container" test ! -e "$ROOT/$id"

# SIGTERM to `kist run` is forwarded to the container (whose init traps it).
sh_args 'trap "echo got-term; exit 3" TERM; echo ready; while :; do sleep 0.1; done'
B5=$(mkbundle fwd)
id=$(new_id fwd)
"$KIST" --root "$ROOT" run --bundle "$B5" "$id" > "$T/fwd.out" 2> "$T/fwd.err" < /dev/null &
runpid=$!
for ((i = 0; i < 400; i++)); do
  grep -q ready "$T/fwd.out" 2> /dev/null && break
  sleep 0.05
done
kill -TERM "$runpid"
( sleep 20; kill -KILL "$runpid" 2> /dev/null ) &
watchdog=$!
wait "$runpid"
rc=$?
kill "$watchdog" 2> /dev/null
wait "$watchdog" 2> /dev/null
expect_eq "SIGTERM to kist run is forwarded: the container's trap exits 3" 3 "$rc"
expect_contains "the container saw SIGTERM" "$(cat "$T/fwd.out")" got-term

# ---- run --detach ------------------------------------------------------------
C_ARGS=$SLEEP_ARGS
B6=$(mkbundle detach)
id=$(new_id detach)
t0=$(date +%s%N)
kc rund run --detach --bundle "$B6" "$id"
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
expect_eq "run --detach exits 0" 0 "$RC"
if [ "$ms" -lt 5000 ]; then ok "run --detach returns at once (${ms} ms)"; else fail "run --detach returns at once" "took ${ms} ms"; fi
expect_eq "the detached container is running" running "$(state_field "$id" status)"
pid=$(state_field "$id" pid)
expect_true "the detached container runs its command" wait_cmdline "$pid" "sleep 3141 "
kist delete --force "$id" > /dev/null 2>&1
expect_true "the detached container is gone after delete --force" wait_gone "$pid" 2

# ---- concurrent kill / delete of one id --------------------------------------
id=$(new_id conc)
kc cc create --bundle "$B" "$id"
kc cs start "$id"
pid=$(state_field "$id" pid)
bg=()
for i in 1 2 3 4; do
  ( kist kill "$id" KILL > "$T/conc.kill$i.out" 2> "$T/conc.kill$i.err"; echo $? > "$T/conc.kill$i.rc" ) &
  bg+=($!)
  ( kist delete --force "$id" > "$T/conc.del$i.out" 2> "$T/conc.del$i.err"; echo $? > "$T/conc.del$i.rc" ) &
  bg+=($!)
done
wait "${bg[@]}"
crashes=
silent=
ndel_ok=0
for f in "$T"/conc.*.rc; do
  r=$(cat "$f")
  e=${f%.rc}.err
  if [ "$r" -ge 124 ] && [ "$r" != 125 ]; then
    crashes+="$(basename "${f%.rc}") exit $r: $(head -c 300 "$e")"$'\n'
  elif grep -Eqi 'segmentation|abort|sanitizer|core dumped|double free|panic' "$e"; then
    crashes+="$(basename "${f%.rc}"): $(head -c 300 "$e")"$'\n'
  fi
  if [ "$r" != 0 ] && [ ! -s "$e" ]; then
    silent+="$(basename "${f%.rc}") exit $r with an empty stderr"$'\n'
  fi
  case $f in *del*) [ "$r" = 0 ] && ndel_ok=$((ndel_ok + 1)) ;; esac
done
expect_eq "concurrent kill/delete: no crash or hang" "" "$crashes"
expect_eq "concurrent kill/delete: every failure says why" "" "$silent"
expect_eq "concurrent delete --force: all succeed (idempotent)" 4 "$ndel_ok"
expect_true "concurrent kill/delete: no state dir left" test ! -e "$ROOT/$id"
expect_true "concurrent kill/delete: the init is gone" wait_gone "$pid" 2
nothing_left "list/duplicate/run/concurrency"
