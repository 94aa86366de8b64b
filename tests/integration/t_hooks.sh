#!/bin/bash
# t_hooks.sh: OCI hooks (runtime-spec 1.2 config.md "POSIX-platform Hooks",
# runtime.md "Lifecycle"): every kind runs once, in order, in the right
# namespace, with its args, env and the state JSON on stdin; a failing or
# timed-out prestart/createRuntime/createContainer/startContainer hook fails
# the operation and leaves nothing; a failing poststart/poststop hook is a
# warning; the report says what ran, its status and duration.
. "$(dirname "$0")/lib.sh"

LOG=$MARKDIR/hooks.log
HOST_MNT=$(readlink /proc/self/ns/mnt)
HOOK_PATH_ENV="PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
# Must not reach a hook: its env is exactly hooks.*[].env.
export LEAKME=leak

# write_hook FILE LOGDIR: a hook script that appends "KIND mnt=... arg=...
# env=..." to LOGDIR/hooks.log, saves its stdin as LOGDIR/state.KIND.json
# and prints a line on its stdout.
write_hook ()
{
  cat > "$1" <<EOF
#!/bin/sh
kind=\$1
printf '%s mnt=%s arg=%s env=%s leak=%s\n' "\$kind" "\$(readlink /proc/self/ns/mnt)" "\${2:-}" \\
  "\${HOOK_ENV:-}" "\${LEAKME:-none}" >> "$2/hooks.log"
cat > "$2/state.\$kind.json"
echo "HOOK-STDOUT-\$kind"
EOF
  chmod 0755 "$1"
}

HOST_HOOK=$T/hook.sh
write_hook "$HOST_HOOK" "$MARKDIR"

# hook PATH KIND [TIMEOUT]: one hook entry running PATH with args
# [hook, KIND, a1] and env HOOK_ENV=v-KIND.
hook ()
{
  local t=""
  [ -n "${3:-}" ] && t=", \"timeout\": $3"
  printf '{"path": %s, "args": %s, "env": %s%s}' "$(json_str "$1")" \
    "$(json_arr hook "$2" a1)" "$(json_arr "HOOK_ENV=v-$2" "$HOOK_PATH_ENV")" "$t"
}

# sh_hook SCRIPT [TIMEOUT]: a hook running /bin/sh -c SCRIPT.
sh_hook ()
{
  local t=""
  [ -n "${2:-}" ] && t=", \"timeout\": $2"
  printf '{"path": "/bin/sh", "args": %s, "env": %s%s}' "$(json_arr sh -c "$1")" \
    "$(json_arr "$HOOK_PATH_ENV")" "$t"
}

all_hooks ()
{
  printf '"prestart": [%s], "createRuntime": [%s], "createContainer": [%s], ' \
    "$(hook "$HOST_HOOK" prestart)" "$(hook "$HOST_HOOK" createRuntime)" \
    "$(hook "$HOST_HOOK" createContainer)"
  printf '"startContainer": [%s], "poststart": [%s], "poststop": [%s]' \
    "$(hook /hook.sh startContainer)" "$(hook "$HOST_HOOK" poststart)" \
    "$(hook "$HOST_HOOK" poststop)"
}

kinds_in_log ()
{
  awk '{ print $1 }' "$LOG" 2> /dev/null | tr '\n' ' '
}

log_field ()
{
  awk -v k="$1" -v f="$2" '$1 == k { for (i = 2; i <= NF; i++) if (index($i, f "=") == 1) {
      print substr($i, length(f) + 2); exit } }' "$LOG" 2> /dev/null
}

# ---- every kind, once, in order, in its namespace ---------------------------
cfg_reset
with_marker
sh_args 'echo process >> /mark/hooks.log; exec sleep 300'
C_TOP_EXTRA=", \"hooks\": {$(all_hooks)}"
B=$(mkbundle all)
write_hook "$B/rootfs/hook.sh" /mark
rm -f "$LOG" "$MARKDIR"/state.*.json
id=$(new_id all)
kc all_create create --bundle "$B" "$id"
expect_eq "create with every hook kind exits 0" 0 "$RC"
expect_eq "create ran prestart, createRuntime, createContainer in order" \
  "prestart createRuntime createContainer " "$(kinds_in_log)"
expect_contains "a hook's stdout goes to kist's stderr" "$ERR" "HOOK-STDOUT-createRuntime"
expect_not_contains "a hook's stdout is not kist's stdout" "$OUT" "HOOK-STDOUT"
pid=$(state_field "$id" pid)
CT_MNT=$(readlink "/proc/$pid/ns/mnt")
kc all_start start "$id"
expect_eq "start exits 0" 0 "$RC"
kc all_delete delete --force "$id"
expect_eq "delete exits 0" 0 "$RC"
expect_eq "every hook kind ran once, in the order of runtime.md, startContainer before the process" \
  "prestart createRuntime createContainer startContainer process poststart poststop " \
  "$(kinds_in_log | sed 's/poststart process /process poststart /')"
expect_ne "the container has its own mount namespace" "$HOST_MNT" "$CT_MNT"
for k in prestart createRuntime poststart poststop; do
  expect_eq "$k ran in the runtime's mount namespace" "$HOST_MNT" "$(log_field "$k" mnt)"
done
# createContainer runs in the container's mount namespace before pivot_root;
# after pivot_root /proc/self/ns/mnt is still that namespace.
for k in createContainer startContainer; do
  expect_eq "$k ran in the container's mount namespace" "$CT_MNT" "$(log_field "$k" mnt)"
done
for k in prestart createRuntime createContainer startContainer poststart poststop; do
  expect_eq "$k got its args" a1 "$(log_field "$k" arg)"
  expect_eq "$k got its env" "v-$k" "$(log_field "$k" env)"
  expect_eq "$k got only its env (nothing of kist's)" none "$(log_field "$k" leak)"
  f=$MARKDIR/state.$k.json
  expect_eq "$k: state JSON on stdin has the id" "$id" "$(jget "$f" id)"
  expect_eq "$k: state JSON on stdin has the bundle" "$B" "$(jget "$f" bundle)"
  expect_match "$k: state JSON on stdin has ociVersion" "$(jget "$f" ociVersion)" '^1\.'
done
expect_eq "prestart: state status is creating" creating "$(jget "$MARKDIR/state.prestart.json" status)"
expect_eq "createRuntime: state pid is the init's host pid" "$pid" \
  "$(jget "$MARKDIR/state.createRuntime.json" pid)"
expect_eq "createContainer: state pid is the init as the container sees it" 1 \
  "$(jget "$MARKDIR/state.createContainer.json" pid)"
expect_eq "startContainer: state status is created" created \
  "$(jget "$MARKDIR/state.startContainer.json" status)"
expect_eq "poststart: state status is running" running \
  "$(jget "$MARKDIR/state.poststart.json" status)"
expect_eq "poststart: state pid is the host pid" "$pid" "$(jget "$MARKDIR/state.poststart.json" pid)"
expect_eq "poststop: state status is stopped" stopped "$(jget "$MARKDIR/state.poststop.json" status)"
nothing_left "every hook kind"

# ---- the report: each kind, its status and duration ---------------------------
rm -f "$LOG"
id=$(new_id rep)
REP=$T/rep.json
kc rep_create create --report "$REP" --bundle "$B" "$id"
expect_eq "create (report) exits 0" 0 "$RC"
for k in prestart createRuntime createContainer; do
  expect_eq "create report: hooks.$k applied" true "$(layer_field "$REP" "hooks.$k" applied)"
  expect_match "create report: hooks.$k says exit status and duration" \
    "$(layer_field "$REP" "hooks.$k" detail)" "^\[0\] .*hook\.sh: exit 0, [0-9]+ ms$"
done
names=$(layer_names "$REP" | tr '\n' ' ')
expect_match "create report: hooks.createContainer comes after dev and before rootfs.pivot_root" \
  "$names" ' dev .*hooks\.prestart hooks\.createRuntime hooks\.createContainer .*rootfs\.pivot_root'
kc rep_start start "$id"
expect_eq "start (report) exits 0" 0 "$RC"
kc rep_report report "$id"
printf '%s\n' "$OUT" > "$T/rep2.json"
for k in startContainer poststart; do
  expect_eq "stored report: hooks.$k applied" true "$(layer_field "$T/rep2.json" "hooks.$k" applied)"
  expect_match "stored report: hooks.$k says exit status and duration" \
    "$(layer_field "$T/rep2.json" "hooks.$k" detail)" "exit 0, [0-9]+ ms"
done
kc rep_delete delete --force "$id"
nothing_left "report"

# ---- without hooks: every kind is listed as not requested ----------------------
cfg_reset
B0=$(mkbundle none)
id=$(new_id none)
kc none_run run --report "$T/none.json" --bundle "$B0" "$id"
expect_eq "run without hooks exits 0" 0 "$RC"
for k in prestart createRuntime createContainer startContainer poststart; do
  expect_eq "no hooks: hooks.$k requested false" false "$(layer_field "$T/none.json" "hooks.$k" requested)"
done
nothing_left "no hooks"

# ---- failures that fail the operation --------------------------------------------
# fail_create NAME CONFIG-HOOKS EXPECTED-IN-STDERR
fail_create ()
{
  local name=$1 hooks=$2 needle=$3 b id t0 t1
  cfg_reset
  with_marker
  sh_args 'echo ran > /mark/ran'
  C_TOP_EXTRA=", \"hooks\": {$hooks}"
  b=$(mkbundle "$name")
  rm -f "$MARKDIR/ran" "$MARKDIR/poststop-ran"
  id=$(new_id "$name")
  t0=$(date +%s)
  kc "$name" create --bundle "$b" "$id"
  t1=$(date +%s)
  expect_eq "$name: create exits 125" 125 "$RC"
  expect_contains "$name: the error names the hook" "$ERR" "$needle"
  expect_true "$name: the error says how to fix it" grep -q "fix the hook or remove it" "$T/$name.err"
  expect_true "$name: the container's code did not run" test ! -e "$MARKDIR/ran"
  expect_true "$name: create returned within 10 s" test $((t1 - t0)) -le 10
  nothing_left "$name"
}

fail_create create-runtime-fails \
  "\"createRuntime\": [$(sh_hook 'exit 3')], \"createContainer\": [$(sh_hook "touch $MARKDIR/ran")]" \
  'hooks.createRuntime[0].path `/bin/sh` exited with status 3'
fail_create prestart-fails "\"prestart\": [$(sh_hook 'exit 4')]" \
  'hooks.prestart[0].path `/bin/sh` exited with status 4'
fail_create create-container-fails "\"createContainer\": [$(sh_hook 'kill -9 $$')]" \
  'hooks.createContainer[0].path `/bin/sh` was killed by signal 9'
# A nap no other process on the machine has (pgrep below looks for it).
NAP="sleep 6$(( $$ % 100000 ))"
fail_create create-runtime-timeout "\"createRuntime\": [$(sh_hook "$NAP" 1)]" \
  'hooks.createRuntime[0].path `/bin/sh` did not finish within its timeout of 1 s'
fail_create create-container-timeout "\"createContainer\": [$(sh_hook "$NAP" 1)]" \
  'hooks.createContainer[0].path `/bin/sh` did not finish within its timeout of 1 s'
fail_create hook-not-found "\"createRuntime\": [{\"path\": \"$T/no-such-hook\"}]" \
  "hooks.createRuntime[0].path \`$T/no-such-hook\` could not be executed"
if pgrep -xf "$NAP" > /dev/null; then
  fail "a timed-out hook is killed (no sleep of its left)" "$(pgrep -axf "$NAP")"
else
  ok "a timed-out hook is killed (no sleep of its left)"
fi

# A failed create hook goes on at destroy and poststop (runtime.md steps 3-5, 12, 13).
fail_create create-fails-poststop \
  "\"createRuntime\": [$(sh_hook 'exit 5')], \"poststop\": [$(sh_hook "touch $MARKDIR/poststop-ran")]" \
  'hooks.createRuntime[0].path `/bin/sh` exited with status 5'
expect_true "a failed createRuntime hook is followed by the poststop hooks" \
  test -e "$MARKDIR/poststop-ran"

# startContainer: start fails, the container's code never runs, nothing is left.
for case in "fails:exit 6:exited with status 6" "timeout:sleep 60:did not finish within its timeout of 1 s"; do
  name=start-container-${case%%:*}
  rest=${case#*:}
  script=${rest%%:*}
  needle=${rest#*:}
  cfg_reset
  with_marker
  sh_args 'echo ran > /mark/ran'
  C_TOP_EXTRA=", \"hooks\": {\"startContainer\": [$(sh_hook "$script" 1)], \"poststop\": [$(hook "$HOST_HOOK" poststop)]}"
  b=$(mkbundle "$name")
  rm -f "$MARKDIR/ran" "$LOG"
  id=$(new_id "$name")
  kc "$name-create" create --bundle "$b" "$id"
  expect_eq "$name: create exits 0" 0 "$RC"
  kc "$name-start" start "$id"
  expect_eq "$name: start exits 125" 125 "$RC"
  expect_contains "$name: the error names the hook" "$ERR" \
    "hooks.startContainer[0].path \`/bin/sh\` $needle"
  expect_true "$name: the container's code did not run" test ! -e "$MARKDIR/ran"
  expect_eq "$name: the container was destroyed, then poststop ran" "poststop " "$(kinds_in_log)"
  nothing_left "$name"
done

# ---- failures that are warnings ----------------------------------------------------
cfg_reset
with_marker
sh_args 'echo ran > /mark/ran; exec sleep 300'
C_TOP_EXTRA=", \"hooks\": {\"poststart\": [$(sh_hook 'exit 7'), $(hook "$HOST_HOOK" poststart)], \"poststop\": [$(sh_hook 'exit 8'), $(hook "$HOST_HOOK" poststop)]}"
b=$(mkbundle warn)
rm -f "$MARKDIR/ran" "$LOG"
id=$(new_id warn)
kc warn-create create --bundle "$b" "$id"
expect_eq "warn: create exits 0" 0 "$RC"
kc warn-start start "$id"
expect_eq "a failing poststart hook: start still exits 0" 0 "$RC"
expect_contains "a failing poststart hook is a logged warning naming it" "$ERR" \
  'hooks.poststart[0].path `/bin/sh` exited with status 7'
expect_true "the container runs after a failing poststart hook" wait_status "$id" running 5
expect_eq "the poststart hooks after the failing one still ran" "poststart " "$(kinds_in_log)"
kc warn-report report "$id"
printf '%s\n' "$OUT" > "$T/warn.json"
expect_eq "report: hooks.poststart not applied" false "$(layer_field "$T/warn.json" hooks.poststart applied)"
expect_match "report: hooks.poststart says which hook failed, how, and how long it took" \
  "$(layer_field "$T/warn.json" hooks.poststart reason)" \
  'hooks\.poststart\[0\]\.path `/bin/sh` exited with status 7 after [0-9]+ ms'
kc warn-delete delete --force "$id"
expect_eq "a failing poststop hook: delete still exits 0" 0 "$RC"
expect_contains "a failing poststop hook is a logged warning naming it" "$ERR" \
  'hooks.poststop[0].path `/bin/sh` exited with status 8'
expect_eq "the poststop hooks after the failing one still ran" "poststart poststop " "$(kinds_in_log)"
nothing_left "warnings"

# ---- docker's prestart hook: /proc/<dockerd pid>/exe libnetwork-setkey ... ---------------
# (a path through /proc/PID/exe of a process of the runtime's namespaces,
# here this shell's bash), even with no network namespace of the container's own.
cfg_reset
C_NAMESPACES="pid ipc uts mount"
C_TOP_EXTRA=", \"hooks\": {\"prestart\": [{\"path\": \"/proc/$$/exe\", \"args\": $(json_arr libnetwork-setkey -c "read -r -d '' s; case \$s in *'\"id\"'*) echo setkey >> $LOG ;; esac")}]}"
b=$(mkbundle docker)
rm -f "$LOG"
id=$(new_id docker)
kc docker run --bundle "$b" "$id"
expect_eq "a docker-style prestart hook (/proc/PID/exe) runs: run exits 0" 0 "$RC"
expect_eq "the docker-style prestart hook read the state on its stdin" "setkey " "$(kinds_in_log)"
nothing_left "docker-style prestart hook"

# A prestart hook that gives the container a link (docker's bridge network
# moves eth0 in): the loopback layer checked the new netns before the hooks.
cfg_reset
C_TOP_EXTRA=", \"hooks\": {\"prestart\": [{\"path\": \"/bin/sh\", \"args\": $(json_arr sh -c 'pid=$(sed -n "s/.*\"pid\": *\([0-9]*\).*/\1/p"); nsenter -t "$pid" -n ip link add kdum0 type veth peer name kdum1')}]}"
sh_args 'ip link show kdum0 > /dev/null 2>&1 && echo has-kdum0; ip link show lo | grep -q UP && echo lo-up'
b=$(mkbundle hooklink)
id=$(new_id hooklink)
kc hooklink run --bundle "$b" --report "$T/hooklink.json" "$id"
expect_eq "a prestart hook adds a link to the container's netns: run exits 0 (as runc)" 0 "$RC"
expect_contains "the container sees the hook's link" "$OUT" has-kdum0
expect_contains "the container's lo is up" "$OUT" lo-up
expect_eq "network.loopback applied (checked before the hooks)" true \
  "$(layer_field "$T/hooklink.json" network.loopback applied)"
expect_eq "the host has no such link" "" "$(ip -o link show kdum0 2> /dev/null)"
nothing_left "a prestart hook that adds a link"

# ---- kist features lists the hook kinds ----------------------------------------------
kc features features
got=$(printf '%s\n' "$OUT" | jflat | awk -F'\t' '$1 ~ /^hooks\[/ { printf "%s ", $2 }')
expect_eq "kist features lists every hook kind" \
  "prestart createRuntime createContainer startContainer poststart poststop " "$got"
