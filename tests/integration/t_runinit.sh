#!/bin/bash
# t_runinit.sh: `kist run --init` and `kist create --init` (issue 12: kist's
# init for OCI containers, as engines' --init), as root and as nobody:
#   - the process is pid 2 of its pid namespace, its parent PID 1 is kist's
#     init (report entry `init` applied, verified from outside at start);
#   - SIGTERM to kist run (and `kist kill ID TERM` of a created container)
#     ends a process without handlers: 143; without --init the same process,
#     PID 1, ignores it;
#   - a self-inflicted SIGSEGV gives 139 (0 without --init);
#   - orphans are reaped: no zombie while the process runs;
#   - --init with a config without a new pid namespace is refused (125, the
#     error says why), and nothing is left behind.
# Every case fails on a kist without --init (unknown option: 125).
. "$(dirname "$0")/lib.sh"

mkdir -p "$T/flag"
chmod 0777 "$T/flag"
FLAG_MOUNT=$(bind_json "$T/flag" /flag)

# run_signal TAG SIG ARGS...: `kist run ARGS` in the background; SIG to kist
# once the process made /flag/up; its exit status in RC.  The waits are
# bounds, not timing checks: the processes sleep 600 s.
run_signal ()
{
  local tag=$1 sig=$2 i pid
  shift 2
  rm -f "$T/flag/up"
  "$KIST" --root "$ROOT" run "$@" > "$T/$tag.out" 2> "$T/$tag.err" < /dev/null &
  pid=$!
  for ((i = 0; i < 200; i++)); do
    [ -e "$T/flag/up" ] && break
    sleep 0.05
  done
  kill -"$sig" "$pid"
  for ((i = 0; i < 100; i++)); do
    kill -0 "$pid" 2> /dev/null || break
    sleep 0.05
  done
  if kill -0 "$pid" 2> /dev/null; then
    RC=still-running
    kill -KILL "$pid"
    { wait "$pid"; } 2> /dev/null
  else
    wait "$pid"
    RC=$?
  fi
  rm -f "$T/flag/up"
}

cfg_reset
C_MOUNTS_EXTRA=", $FLAG_MOUNT"

# ---- the process is the init's child; the init entry ---------------------------------
sh_args 'echo "pid=$$ ppid=$PPID"; cat /proc/1/cmdline | tr "\0" " "'
B=$(mkbundle pid)
id=$(new_id pid)
kc pid run --init --bundle "$B" --report "$T/pid.json" "$id"
expect_eq "run --init: exit 0" 0 "$RC"
expect_contains "run --init: the process is pid 2, its parent PID 1" "$OUT" "pid=2 ppid=1"
expect_eq "run --init: report init applied" true "$(layer_field "$T/pid.json" init applied)"
expect_contains "run --init: init verified from outside" \
  "$(layer_field "$T/pid.json" init detail)" "verified from outside"
id=$(new_id pid0)
kc pid0 run --bundle "$B" --report "$T/pid0.json" "$id"
expect_contains "run without --init: the process is pid 1 (the check can fail)" "$OUT" "pid=1 ppid=0"
expect_eq "run without --init: init not requested" false "$(layer_field "$T/pid0.json" init requested)"

# ---- signals ---------------------------------------------------------------------------
sh_args 'touch /flag/up; exec sleep 600'
B=$(mkbundle sig)
id=$(new_id term)
run_signal term TERM --init --bundle "$B" "$id"
expect_eq "run --init: SIGTERM to kist ends sleep with 143" 143 "$RC"
id=$(new_id int)
run_signal int INT --init --bundle "$B" "$id"
expect_eq "run --init: SIGINT to kist ends sleep with 130" 130 "$RC"
id=$(new_id term0)
run_signal term0 TERM --bundle "$B" "$id"
expect_eq "run without --init: sleep as PID 1 ignores SIGTERM (the check can fail)" still-running "$RC"
kc term0-del delete --force "$id"

sh_args 'kill -SEGV $$'
B=$(mkbundle segv)
id=$(new_id segv)
kc segv run --init --bundle "$B" "$id"
expect_eq "run --init: kill -SEGV \$\$ gives 139" 139 "$RC"
id=$(new_id segv0)
kc segv0 run --bundle "$B" "$id"
expect_eq "run without --init: PID 1 ignores its own SIGSEGV: 0" 0 "$RC"

# ---- orphans are reaped ------------------------------------------------------------------
# The orphan (sleep 0.1) is reparented to PID 1; a zombie stays unless it reaps.
sh_args 'sh -c "sleep 0.1 &"; sleep 1; z=0; for s in /proc/[0-9]*/stat; do
  read -r l < "$s" 2>/dev/null || continue; case "${l##*) }" in Z*) z=$((z+1));; esac; done
  echo "zombies=$z"'
B=$(mkbundle orphan)
id=$(new_id orphan)
kc orphan run --init --bundle "$B" "$id"
expect_eq "run --init: the orphan was reaped" "zombies=0" "$OUT"

# ---- create --init, start, kill ----------------------------------------------------------
sh_args 'touch /flag/up; exec sleep 600'
B=$(mkbundle created)
id=$(new_id created)
kc create create --init --bundle "$B" --report "$T/created.json" "$id"
expect_eq "create --init: exit 0" 0 "$RC"
expect_eq "create --init: init not yet recorded" "" "$(layer_field "$T/created.json" init applied)"
kc start start "$id"
expect_eq "start: exit 0" 0 "$RC"
kc rep report "$id"
printf '%s' "$OUT" > "$T/started.json"
expect_eq "start: report init applied" true "$(layer_field "$T/started.json" init applied)"
pid=$(state_field "$id" pid)
kids=$(cat "/proc/$pid/task/$pid/children" 2> /dev/null)
expect_match "create --init: the state's pid (the init) has the process as its one child" \
  "$kids" '^[0-9]+ ?$'
kc kill kill "$id" TERM
expect_eq "kill TERM: exit 0" 0 "$RC"
expect_true "kill TERM: the container stopped (the init passed it on)" wait_status "$id" stopped 10
kc del delete "$id"
expect_eq "delete: exit 0" 0 "$RC"

# ---- refused without a new pid namespace ----------------------------------------------
C_NAMESPACES="network ipc uts mount"
with_marker
sh_args 'touch /mark/nopidns'
B=$(mkbundle nopid)
id=$(new_id nopid)
kc nopid run --init --bundle "$B" "$id"
expect_eq "run --init without a pid namespace: exit 125" 125 "$RC"
expect_contains "run --init without a pid namespace: the error says why" "$ERR" \
  "--init: kist's init must be PID 1 of a new pid namespace"
expect_true "run --init without a pid namespace: the process did not run" \
  test ! -e "$MARKDIR/nopidns"
expect_true "run --init without a pid namespace: no state dir" test ! -e "$ROOT/$id"

# ---- as nobody (rootless config) -------------------------------------------------------
if nobody_ok "run --init as nobody"; then
  nobody_dir "$XDG" 0700
  nobody_dir "$T/nbrep" 0700
  NB=$T/nb
  nobody_bundle "$NB"
  kn_in "$NB" nspec spec --rootless
  rootless_config "$NB/config.json" '["sh", "-c", "echo pid=$$ ppid=$PPID; kill -SEGV $$"]' \
    > "$T/nb.json"
  cp "$T/nb.json" "$NB/config.json"
  id=$(new_id nb)
  kn_in "$NB" nb run --init --report "$T/nbrep/r.json" "$id"
  expect_eq "nobody: run --init: kill -SEGV \$\$ gives 139" 139 "$RC"
  expect_contains "nobody: run --init: the process is pid 2, its parent PID 1" "$OUT" "pid=2 ppid=1"
  expect_eq "nobody: report init applied" true "$(layer_field "$T/nbrep/r.json" init applied)"
  expect_true "nobody: the run was deleted" test ! -e "$XDG/kist/$id"
fi

# ---- help and man page ---------------------------------------------------------------
for c in run create; do
  kc "help-$c" "$c" --help
  expect_contains "kist $c --help lists --init" "$OUT" "--init"
  expect_contains "kist-$c(8) describes --init" "$(cat "$IT_DIR/../../man/kist-$c.8")" 'Fl \-init'
done

nothing_left "t_runinit"
