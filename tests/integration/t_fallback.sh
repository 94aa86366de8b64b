#!/bin/bash
# t_fallback.sh: the Landlock fallback of kist sandbox (issue 12).  As nobody,
# in a user namespace whose user.max_user_namespaces is 0 (so that kist, not
# root, wants a user namespace and cannot make one):
#   - without the caller's permission kist refuses (125), naming the sysctl
#     and --fallback landlock; the command does not run;
#   - with --fallback landlock (or --allow-degraded namespace.*) the command
#     runs without any new namespace (its /proc/self/ns/* are the caller's),
#     under Landlock (a write to a writable host dir it was not given:
#     EACCES), NoNewPrivs 1, Seccomp 2, no capabilities, a cleared
#     environment, its own session, the scratch dir as cwd (writable, gone
#     afterwards); an orphan is killed at the end; --timeout gives 124 and
#     kills everything; the report says confinement is degraded, and each
#     namespace.* entry why and what replaced it;
#   - options the fallback cannot give are refused (125).
# Every case fails on a kist without the fallback (--fallback is unknown).
. "$(dirname "$0")/lib.sh"

if [ ! -x /usr/bin/env ] || [ ! -L /bin ] || [ -z "$NOBODY_UID" ]; then
  skip "sandbox fallback" "it needs a merged /usr and a user nobody"
  exit 0
fi
nobody_dir "$XDG" 0700
SB=$XDG/kist/~sandbox
# A host dir anyone may write, which no sandbox is given.
HOSTW=$T/hostw
mkdir -p "$HOSTW"
chmod 0777 "$HOSTW"
BASE=(--ro /usr --setenv "KIST_IT_MARK=$MARK")

# The sandbox's view, one fact a line.
cat > "$T/probe.sh" << 'EOF'
for n in user mnt pid net uts ipc cgroup; do echo "ns-$n=$(readlink /proc/self/ns/$n)"; done
grep -E '^(NoNewPrivs|Seccomp|CapEff):' /proc/self/status | tr -d ' \t' | sed 's/:/=/'
echo "env=$(env | grep -v '^PWD=' | sort | tr '\n' ' ')"
echo "cwd=$(pwd)"
echo "session=$(cut -d' ' -f6 /proc/$$/stat) pid=$$"
if (: > "$1/escaped") 2> "$PWD/err"; then echo "hostw=written"; else echo "hostw=$(cat "$PWD/err")"; fi
if : > ./scratch-file; then echo "scratch=writable"; fi
if (echo 1000 > /proc/$PPID/oom_score_adj) 2> "$PWD/err"; then echo "proc=written"; else echo "proc=$(cat "$PWD/err")"; fi
EOF
chmod 0644 "$T/probe.sh"

# restricted TAG ARGS...: `kist ARGS` as nobody in a user namespace whose
# user.max_user_namespaces is 0 (restricted_userns, lib.sh).  First the
# caller's own namespaces, one "caller-NS=LINK" line each, on stdout.
restricted ()
{
  local tag=$1
  shift
  restricted_userns "$tag" sh -c '
      for n in user mnt pid net uts ipc cgroup; do echo "caller-$n=$(readlink /proc/self/ns/$n)"; done
      exec "$@"' sh "$KIST" "$@"
}

# val KEY: the value of KEY=... in $OUT.
val ()
{
  printf '%s\n' "$OUT" | sed -n "s/^$1=//p" | head -n 1
}

# ---- without the caller's permission: refused as before, naming both fixes
mkdir -p "$T/flag"
chmod 0777 "$T/flag"
restricted deny sandbox "${BASE[@]}" -- /usr/bin/touch "$T/flag/ran"
expect_eq "no permission: exit 125" 125 "$RC"
expect_contains "no permission: the error names the sysctl" "$ERR" "user.max_user_namespaces is 0 here"
expect_contains "no permission: the error names --fallback landlock" "$ERR" "--fallback landlock"
expect_true "no permission: the command did not run" test ! -e "$T/flag/ran"

# ---- --fallback landlock
restricted fb sandbox --fallback landlock --report "$XDG/fb.json" "${BASE[@]}" -- \
  /usr/bin/sh "$T/probe.sh" "$HOSTW"
expect_eq "fallback: exit 0" 0 "$RC"
same=yes
for n in user mnt pid net uts ipc cgroup; do
  if [ -z "$(val "ns-$n")" ] || [ "$(val "ns-$n")" != "$(val "caller-$n")" ]; then
    same="no: $n inside $(val "ns-$n"), caller $(val "caller-$n")"
  fi
done
expect_eq "fallback: no new namespace (every /proc/self/ns/* is the caller's)" yes "$same"
expect_eq "fallback: landlock applied (report)" true "$(layer_field "$XDG/fb.json" landlock applied)"
expect_contains "fallback: a write to a host dir not given is denied (EACCES)" "$(val hostw)" \
  "Permission denied"
expect_true "fallback: nothing written to the host dir" test ! -e "$HOSTW/escaped"
expect_eq "fallback: NoNewPrivs 1" 1 "$(val NoNewPrivs)"
expect_eq "fallback: Seccomp 2" 2 "$(val Seccomp)"
expect_eq "fallback: no capabilities" 0000000000000000 "$(val CapEff)"
expect_eq "fallback: environment cleared (only --setenv)" "KIST_IT_MARK=$MARK " "$(val env)"
sess=$(val session)
expect_eq "fallback: the command leads a new session" "${sess#* pid=}" "${sess% pid=*}"
cwd=$(val cwd)
expect_match "fallback: cwd is the scratch dir under the sandbox dir" "$cwd" "^$SB/sandbox-[^/]*/scratch\$"
expect_eq "fallback: the scratch dir is writable" writable "$(val scratch)"
expect_contains "fallback: the host's /proc is read-only (the init's oom_score_adj)" "$(val proc)" \
  "Permission denied"
expect_true "fallback: the scratch dir is removed afterwards" test ! -e "$cwd"
expect_eq "fallback: report entry fallback applied" true "$(layer_field "$XDG/fb.json" fallback applied)"
expect_contains "fallback: the entry fallback says what replaced the namespaces" \
  "$(layer_field "$XDG/fb.json" fallback detail)" "confined instead by landlock ABI"
for n in user mount pid net uts ipc cgroup; do
  expect_eq "fallback: namespace.$n requested" true "$(layer_field "$XDG/fb.json" "namespace.$n" requested)"
  expect_eq "fallback: namespace.$n not applied" false "$(layer_field "$XDG/fb.json" "namespace.$n" applied)"
  expect_contains "fallback: namespace.$n says what replaced it" \
    "$(layer_field "$XDG/fb.json" "namespace.$n" reason)" "replaced by the Landlock fallback"
done
expect_contains "fallback: namespace.user says why (the sysctl)" \
  "$(layer_field "$XDG/fb.json" namespace.user reason)" "user.max_user_namespaces is 0 here"
summary=$(jget "$XDG/fb.json" summary)
expect_contains "fallback: the summary says confinement is not applied" "$summary" "confinement NOT applied"
expect_contains "fallback: the summary says confinement is degraded" "$summary" "confinement degraded"
expect_eq "fallback: rootfs.pivot_root not requested" false \
  "$(layer_field "$XDG/fb.json" rootfs.pivot_root requested)"
expect_contains "fallback: rootfs.pivot_root says why" \
  "$(layer_field "$XDG/fb.json" rootfs.pivot_root detail)" "no mount namespace"

# ---- an orphan is killed at the end; --allow-degraded namespace.* allows it too
restricted orphan sandbox --allow-degraded 'namespace.*' --report "$XDG/orphan.json" "${BASE[@]}" -- \
  /usr/bin/sh -c '(/usr/bin/sleep 300 &); echo started'
expect_eq "orphan: --allow-degraded namespace.* runs the fallback (exit 0)" 0 "$RC"
expect_eq "orphan: report entry fallback" true "$(layer_field "$XDG/orphan.json" fallback applied)"
expect_eq "orphan: no process of the sandbox is left" "" "$(leftover_pids)"

# ---- --timeout: 124, every process killed
restricted timeout sandbox --fallback landlock --timeout 1 "${BASE[@]}" -- \
  /usr/bin/sh -c '(/usr/bin/sleep 301 &); /usr/bin/sleep 302 & /usr/bin/sleep 303'
expect_eq "timeout: exit 124" 124 "$RC"
expect_eq "timeout: no process of the sandbox is left" "" "$(leftover_pids)"

# ---- Landlock refused by the kernel where kist applies it
# (landlock_restrict_self fails with EPERM under a filter; the probe before
# passes) and allowed to degrade: the fallback never runs unconfined.  The create succeeded, so its state dir is locked by kist's
# own handle: the teardown must let that go before it deletes (it once
# waited for it forever).
if cc -O2 -o "$T/denysys" "$IT_DIR/../security/denysys.c" 2> "$T/denysys.err"; then
  restricted_userns nold "$T/denysys" 446 1 "$KIST" sandbox --fallback landlock \
    --allow-degraded landlock "${BASE[@]}" -- /usr/bin/touch "$T/flag/ran-unconfined"
  expect_eq "landlock refused: exit 125, a kist error (not the timeout's 124)" 125 "$RC"
  expect_contains "landlock refused: the error says the sandbox never runs without it" "$ERR" \
    "without namespaces the sandbox never runs without it"
  expect_true "landlock refused: the command did not run" test ! -e "$T/flag/ran-unconfined"
  expect_eq "landlock refused: no process of the sandbox is left" "" "$(leftover_pids)"
  expect_eq "landlock refused: no sandbox dir is left" "" "$(ls -A "$SB" 2> /dev/null)"
else
  fail "build denysys" "$(cat "$T/denysys.err")"
fi

# ---- kist and its process group killed (SIGKILL): its init, in a group of its
# own, kills everything left (its parent-death signal), then kist gc removes
# the sandbox's state and dir
restricted killed sandbox --fallback landlock --rw "$T/flag" "${BASE[@]}" -- \
  /usr/bin/sh -c '(/usr/bin/sleep 304 &); : > '"$T/flag/up"'; /usr/bin/sleep 305' 2> /dev/null &
bg=$!
for ((i = 0; i < 300; i++)); do
  [ -e "$T/flag/up" ] && break
  sleep 0.05
done
# the command: the parent of its `sleep 305`
slp=
for d in /proc/[0-9]*; do
  [ "$(tr '\0' ' ' 2> /dev/null < "$d/cmdline")" = "/usr/bin/sleep 305 " ] \
    && grep -qz "^KIST_IT_MARK=$MARK\$" "$d/environ" 2> /dev/null && slp=${d#/proc/}
done
cmd=$(awk '/^PPid:/ { print $2 }' "/proc/$slp/status" 2> /dev/null)
init=$(awk '/^PPid:/ { print $2 }' "/proc/$cmd/status" 2> /dev/null)
kpid=$(awk '/^PPid:/ { print $2 }' "/proc/$init/status" 2> /dev/null)
kcomm=$(basename "$KIST" | cut -c 1-15)   # the comm of kist's process (TASK_COMM_LEN)
if [ -n "$kpid" ] && [ "$(cat "/proc/$kpid/comm" 2> /dev/null)" = "$kcomm" ]; then
  # kist's whole process group (as `timeout -s KILL` does): kist, not its init
  pgrp=$(cut -d' ' -f5 "/proc/$kpid/stat")
  kill -KILL -- "-$pgrp"
  for ((i = 0; i < 100; i++)); do
    [ -z "$(leftover_pids)" ] && break
    sleep 0.05
  done
  expect_eq "kist killed: no process of the sandbox is left" "" "$(leftover_pids)"
else
  fail "kist killed: found kist above the command" "sleep $slp, command $cmd, init $init, kist $kpid" \
    "flag: $(ls "$T/flag")"
fi
wait "$bg"
kn_in / gc gc
expect_eq "kist killed: kist gc removes what is left (exit 0)" 0 "$RC"

# ---- root makes its namespaces without a user namespace: never falls back
kc root sandbox --fallback landlock --report "$T/root.json" "${BASE[@]}" -- /usr/bin/true
expect_eq "root: --fallback landlock runs the namespaced sandbox" 0 "$RC"
expect_eq "root: no fallback entry" "" "$(layer_field "$T/root.json" fallback applied)"
expect_eq "root: namespace.user not needed" true "$(layer_field "$T/root.json" namespace.mount applied)"

# ---- what the fallback cannot give: refused before anything runs
restricted ws sandbox --fallback landlock --workspace "$HOSTW" "${BASE[@]}" -- /usr/bin/true
expect_eq "refused: --workspace (exit 125)" 125 "$RC"
expect_contains "refused: --workspace names the option" "$ERR" "--workspace: not available in the Landlock fallback"
restricted dest sandbox --fallback landlock --ro /usr:/opt/usr -- /usr/bin/true
expect_eq "refused: --ro SRC:DEST elsewhere (exit 125)" 125 "$RC"
expect_contains "refused: --ro SRC:DEST says why" "$ERR" "give it without :DEST"
restricted uid sandbox --fallback landlock --uid 1000 "${BASE[@]}" -- /usr/bin/true
expect_eq "refused: --uid other than the caller's (exit 125)" 125 "$RC"

sandbox_dirs_empty
rm -f "$XDG"/*.json
nothing_left "sandbox fallback"
