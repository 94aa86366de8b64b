#!/bin/bash
# t_cli.sh: the command line as engines and scripts probe it (issue #9):
# --version in runc's shape; --help and -h on every command, listing the
# same options as the command's man page, each of them accepted; an unknown
# command; checkpoint and restore; --debug's one line per report entry; the
# global --allow-degraded, merged with each command's own.
. "$(dirname "$0")/lib.sh"

MAN=$REPO/man
# Every command kist must know (design.md section 4, plus runc's checkpoint
# and restore, which podman probes).
COMMANDS="spec create start run exec state kill delete list ps pause resume update events
  features report sandbox gc checkpoint restore"

# --- --version ------------------------------------------------------------------

kc ver --version
expect_eq "--version exits 0" 0 "$RC"
expect_eq "--version prints three lines" 3 "$(printf '%s\n' "$OUT" | wc -l)"
expect_match "--version line 1: kist version X.Y.Z" "$(sed -n 1p <<< "$OUT")" \
  '^kist version [0-9]+\.[0-9]+\.[0-9]+$'
expect_eq "--version line 2: the OCI spec version" "spec: 1.2.0" "$(sed -n 2p <<< "$OUT")"
expect_match "--version line 3: libseccomp: A.B.C" "$(sed -n 3p <<< "$OUT")" \
  '^libseccomp: [0-9]+\.[0-9]+\.[0-9]+$'
# The version of the library loaded, as the package manager knows it.
if v=$(dpkg-query -W -f '${Version}' libseccomp2 2> /dev/null) && [ -n "$v" ]; then
  expect_eq "--version: libseccomp is the installed libseccomp2 ($v)" \
    "libseccomp: ${v%%[-+~]*}" "$(sed -n 3p <<< "$OUT")"
fi
kc ver_v -v
expect_eq "-v prints the same as --version" "$(cat "$T/ver.out")" "$OUT"

# --- --help of every command, against its man page ------------------------------

# man_options PAGE: the long options of the OPTIONS section of man/PAGE (the
# .It lines; a page that says "The options of kist-create(8) ..." for its
# options, as kist-run(8) does, gets create's too), one a line, sorted,
# without help.
man_section_options ()
{
  awk '/^\.Sh OPTIONS/ { on = 1; next } on && /^\.Sh / { exit }
       on && /^\.It / { while (match($0, /Fl \\-[a-z\\-]+/)) {
           o = substr($0, RSTART + 5, RLENGTH - 5); gsub(/\\/, "", o); print o
           $0 = substr($0, RSTART + RLENGTH) } }' "$MAN/$1"
}
man_options ()
{
  {
    man_section_options "$1"
    if awk '/^\.Sh OPTIONS/ { on = 1; next } on && /^\.Sh / { exit }
            on && prev == "The options of" && $0 == ".Xr kist-create 8" { found = 1 }
            on { prev = $0 } END { exit !found }' "$MAN/$1"; then
      man_section_options kist-create.8
    fi
  } | grep -vx help | sort -u
}

# help_options TEXT: the long options of a --help text (lines "  -x, --name ..."
# or "      --name ..."), one a line, sorted, without help.
help_options ()
{
  printf '%s\n' "$1" | sed -nE 's/^ +(-[a-zA-Z], )?--([a-z][a-z-]*).*/\2/p' | grep -vx help | sort -u
}

# The commands of `kist --help`.
kc help --help
expect_eq "kist --help exits 0" 0 "$RC"
listed=$(printf '%s\n' "$OUT" | awk '/^Commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 }')
for cmd in $COMMANDS; do
  grep -qx "$cmd" <<< "$listed" || fail "kist --help lists the command $cmd" "$OUT"
done

mkdir -p "$T/probe"
for cmd in $COMMANDS; do
  for flag in --help -h; do
    kc "h_$cmd" "$cmd" "$flag"
    if [ "$RC" = 0 ] && [[ "$OUT" == "Usage: kist "*" $cmd"* ]] && [ -z "$ERR" ]; then
      ok "$cmd $flag: exit 0, the usage on stdout"
    else
      fail "$cmd $flag: exit 0, the usage on stdout" "exit $RC" "stdout: $OUT" "stderr: $ERR"
    fi
  done
  help=$OUT
  expect_contains "$cmd --help lists --help" "$help" "--help"
  page=kist-$cmd.8
  if [ ! -f "$MAN/$page" ]; then
    fail "$cmd has a man page man/$page"
    continue
  fi
  want=$(man_options "$page")
  have=$(help_options "$help")
  missing=$(comm -23 <(printf '%s\n' "$want") <(printf '%s\n' "$have") | grep .)
  extra=$(comm -13 <(printf '%s\n' "$want") <(printf '%s\n' "$have") | grep .)
  expect_eq "$cmd --help lists every option of man/$page" "" "$missing"
  expect_eq "man/$page lists every option of $cmd --help" "" "$extra"
  # Every option the help lists is one the command accepts: given (with a
  # dummy value where it takes one, from a scratch directory, without an id)
  # it fails at most for another reason than an unknown option.
  bad=
  while read -r opt takes; do
    [ -n "$opt" ] || continue
    if [ "$takes" = 1 ]; then arg=--$opt=x; else arg=--$opt; fi
    out=$(cd "$T/probe" && kist "$cmd" "$arg" 2>&1 > /dev/null)
    [[ "$out" == *"unknown option"* ]] && bad+="$arg: $out"$'\n'
  done < <(printf '%s\n' "$help" \
             | sed -nE 's/^ +(-[a-zA-Z], )?--([a-z][a-z-]*)( [^ ])?.*/\2 \3/p' \
             | awk '$1 != "help" { print $1, ($2 != "" ? 1 : 0) }')
  expect_eq "$cmd accepts every option its --help lists" "" "$bad"
done
rm -rf "$T/probe"

# `kist run --bundle X --help`: the help also after other options.
kc h_late create --bundle "$T" --help
expect_eq "create --bundle DIR --help: exit 0" 0 "$RC"
expect_contains "create --bundle DIR --help: the usage" "$OUT" "Usage: kist [GLOBAL OPTIONS] create"

# --- an unknown command -------------------------------------------------------------

kc unknown no-such-command
expect_eq "an unknown command exits 1" 1 "$RC"
expect_contains "an unknown command: the error names it" "$ERR" "no-such-command"
expect_contains "an unknown command: the usage on stderr" "$ERR" "Usage: kist"
expect_eq "an unknown command: nothing on stdout" "" "$OUT"

# --- checkpoint, restore ---------------------------------------------------------------

kc cp_help checkpoint --help
expect_eq "checkpoint --help exits 0 (podman's probe)" 0 "$RC"
for o in image-path work-path leave-running tcp-established manage-cgroups-mode; do
  expect_contains "checkpoint --help lists runc's --$o" "$OUT" "--$o"
done
id=$(new_id cp)
kc cp checkpoint --image-path "$T/img" --work-path "$T/work" --leave-running "$id"
expect_eq "checkpoint ID exits 1" 1 "$RC"
expect_contains "checkpoint ID: the error says it is not supported" "$ERR" \
  "checkpoint is not supported by kist"
expect_true "checkpoint ID made no image directory" test ! -e "$T/img"
kc rs restore --image-path "$T/img" --bundle "$T" "$id"
expect_eq "restore ID exits 125" 125 "$RC"
expect_contains "restore ID: the error says it is not supported" "$ERR" \
  "restore is not supported by kist"

# --- --debug: one line per report entry --------------------------------------------------

# debug_layers FILE: the layer names of the text debug lines in FILE.
debug_layers ()
{
  sed -nE 's/^kist: debug: layer ([^:]+): .*/\1/p' "$1"
}

cfg_reset
B=$(mkbundle dbg)
id=$(new_id dbg)
kc dbg --debug run --report "$T/dbg.json" --bundle "$B" "$id"
expect_eq "--debug run exits 0" 0 "$RC"
n=$(layer_names "$T/dbg.json" | wc -l)
d=$(debug_layers "$T/dbg.err" | wc -l)
expect_ne "--debug run: the report has layers" 0 "$n"
expect_eq "--debug run: one debug line per layer of the report ($n)" "$n" "$d"
expect_eq "--debug run: the debug lines name the report's layers" \
  "$(layer_names "$T/dbg.json" | sort)" "$(debug_layers "$T/dbg.err" | sort)"
# In the report's order, but for the entries the parent verifies from outside:
# each of those is logged once verified (at the READY barrier).
late=$(jq -r '.layers[] | select((.detail // "") | test("verified from outside")) | .layer' "$T/dbg.json")
expect_ne "--debug run: some entries are verified from outside" "" "$late"
expect_eq "--debug run: the other debug lines come in the report's order" \
  "$(layer_names "$T/dbg.json" | grep -vxF -e "$late")" \
  "$(debug_layers "$T/dbg.err" | grep -vxF -e "$late")"
line=$(grep -m1 '^kist: debug: layer namespace.pid: ' "$T/dbg.err")
expect_match "--debug: an applied layer's line says applied and the detail" "$line" \
  '^kist: debug: layer namespace.pid: applied: new; '
line=$(grep -m1 '^kist: debug: layer namespace.user: ' "$T/dbg.err")
expect_match "--debug: a layer not requested says so" "$line" \
  '^kist: debug: layer namespace.user: not requested'
kc dbg_quiet run --bundle "$B" "$id"
expect_eq "without --debug: no debug line" "" "$(grep 'debug:' "$T/dbg_quiet.err")"

# JSON lines in the --log file (and none on stderr then).
kc dbgj --debug --log "$T/dbg.log" --log-format json run --report "$T/dbgj.json" --bundle "$B" "$id"
expect_eq "--debug --log-format json run exits 0" 0 "$RC"
n=$(layer_names "$T/dbgj.json" | wc -l)
expect_eq "--debug --log-format json: one JSON debug line per layer ($n)" "$n" \
  "$(grep -c '^{"level":"debug","msg":"layer .*","layer":"[^"]*","applied":\(true\|false\),"time":"[^"]*"}$' "$T/dbg.log")"
expect_eq "--debug --log-format json: the lines' layer fields are the report's layers" \
  "$(layer_names "$T/dbgj.json" | sort)" \
  "$(sed -nE 's/^\{"level":"debug",.*"layer":"([^"]*)","applied".*/\1/p' "$T/dbg.log" | sort)"
expect_eq "--debug with --log: no debug line on stderr" "" "$(grep 'debug:' "$T/dbgj.err")"

# create + start: each entry is logged once, by the command that recorded or
# received it (start does not log again what create recorded).
# (Up to 5 tries: today the init of a create can die with its kist, a race
# between the COMMIT and clearing PR_SET_PDEATHSIG in container.c; start then
# finds it stopped.  That is not what this checks.)
rc_s=
for try in 1 2 3 4 5; do
  kc dbgc --debug create --bundle "$B" "$id"
  rc_c=$RC
  [ "$rc_c" = 0 ] || break
  kc dbgs --debug start "$id"
  rc_s=$RC
  [[ "$RC" != 0 && "$ERR" == *"it is stopped, not created"* ]] || break
  kist delete --force "$id" > /dev/null 2>&1
done
expect_eq "--debug create exits 0" 0 "$rc_c"
expect_eq "--debug start exits 0" 0 "$rc_s"
wait_status "$id" stopped 5
kc dbgr report "$id"
printf '%s\n' "$OUT" > "$T/dbgc.json"
expect_eq "--debug create + start: together one line per layer of the stored report" \
  "$(layer_names "$T/dbgc.json" | sort)" \
  "$(cat <(debug_layers "$T/dbgc.err") <(debug_layers "$T/dbgs.err") | sort)"
kc dbgd delete "$id"

# --- the global --allow-degraded -------------------------------------------------------

# A limit controller this host's cgroup2 hierarchy lacks (the host of these
# tests has no pids controller; under tests/vm every controller is there).
CG2=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
missing_ctl=
for ctl in pids memory; do
  [ -n "$CG2" ] && ! grep -qw "$ctl" "$CG2/cgroup.controllers" 2> /dev/null && { missing_ctl=$ctl; break; }
done
case $missing_ctl in
  pids) res='{"pids": {"limit": 100}}' file=pids.max upd=(--pids-limit 50) ;;
  memory) res='{"memory": {"limit": 33554432}}' file=memory.max upd=(--memory 64m) ;;
esac

if [ -z "$CG2" ] || [ -z "$missing_ctl" ]; then
  skip "global --allow-degraded with a missing controller" \
    "the cgroup2 hierarchy has the pids and memory controllers"
else
  cfg_reset
  C_ARGS='["sleep", "30"]'
  C_LINUX_EXTRA=", \"resources\": $res"
  B=$(mkbundle deg)
  BDEG=$B
  id=$(new_id deg)
  kc deg0 create --bundle "$B" "$id"
  expect_eq "create asking for $file without the $missing_ctl controller fails with 125" 125 "$RC"
  expect_contains "create without a policy: the error names cgroup.$file" "$ERR" "cgroup.$file"
  kc deg1 --allow-degraded seccomp create --bundle "$B" "$id"
  expect_eq "global --allow-degraded of another layer: the create still fails with 125" 125 "$RC"

  kc deg2 --allow-degraded "cgroup.$file" create --report "$T/deg.json" --bundle "$B" "$id"
  expect_eq "global --allow-degraded cgroup.$file: create exits 0" 0 "$RC"
  expect_eq "global --allow-degraded: the report says cgroup.$file not applied" false \
    "$(layer_field "$T/deg.json" "cgroup.$file" applied)"
  expect_eq "global --allow-degraded: the report's policy" "cgroup.$file" \
    "$(json_list "$T/deg.json" allowDegraded | paste -sd,)"
  expect_eq "global --allow-degraded: limits not applied in the summary" false \
    "$(jget "$T/deg.json" limits.applied)"
  expect_contains "global --allow-degraded: create warns what is not applied" "$ERR" \
    "runs without part of its configuration (allowed to degrade): cgroup.$file"
  expect_eq "global --allow-degraded: kist state lists the degraded layer" "cgroup.$file" \
    "$(kist state "$id" | jq -r '.degraded[]' 2> /dev/null)"
  kc deg_del0 delete --force "$id"
  # The same with a json --log: the warning is a JSON line there.
  kc deg2l --log "$T/deg.log" --log-format json --allow-degraded "cgroup.$file" create \
    --bundle "$B" "$id"
  expect_eq "--log json: the degraded create's warning is a JSON warning line naming the layer" \
    "warning cgroup.$file" \
    "$(jq -r 'select(.level == "warning") | .level + " " + (.msg | capture("degrade\\): (?<l>[^ ]*)").l)' "$T/deg.log" 2> /dev/null)"
  kc deg_del1 delete --force "$id"

  # update follows the same policy (on a container of run --detach, without
  # resources: the update asks for the missing controller).
  cfg_reset
  C_ARGS='["sleep", "30"]'
  B=$(mkbundle degu)
  kc upd_run run --detach --bundle "$B" "$id"
  expect_eq "run --detach for the update checks exits 0" 0 "$RC"
  kc upd0 update "${upd[@]}" "$id"
  expect_eq "update of $file without the controller and without a policy exits 1" 1 "$RC"
  expect_contains "update without a policy: the error names cgroup.$file" "$ERR" "cgroup.$file"
  kc upd1 --allow-degraded 'cgroup.*' update "${upd[@]}" "$id"
  expect_eq "global --allow-degraded 'cgroup.*': the update exits 0" 0 "$RC"
  expect_contains "the degraded update warns" "$ERR" "cgroup.$file not applied"
  kc upd2 update --allow-degraded "cgroup.$file" "${upd[@]}" "$id"
  expect_eq "update --allow-degraded cgroup.$file exits 0" 0 "$RC"
  kc deg_del delete --force "$id"
  B=$BDEG

  # The union: the global list and the command's own both count.
  kc deg3 --allow-degraded seccomp create --allow-degraded "cgroup.$file" \
    --report "$T/deg3.json" --bundle "$B" "$id"
  expect_eq "global and per-create --allow-degraded together: create exits 0" 0 "$RC"
  expect_eq "the report's policy is the union of both lists" "cgroup.$file,seccomp" \
    "$(json_list "$T/deg3.json" allowDegraded | sort | paste -sd,)"
  kc deg3_del delete --force "$id"

  # exec: the same union (the exec'd process joins the same cgroup, so a
  # process whose rlimit cannot be set is the degradable layer here).
  cfg_reset
  C_ARGS='["sleep", "30"]'
  B=$(mkbundle degx)
  id=$(new_id degx)
  kc degx_c run --detach --bundle "$B" "$id"
  if [ "$RC" = 0 ]; then
    cat > "$T/proc.json" << EOF
{"args": ["true"], "cwd": "/", "env": ["PATH=/bin"], "user": {"uid": 0, "gid": 0},
 "rlimits": [{"type": "RLIMIT_NOFILE", "hard": 4294967296, "soft": 4294967296}]}
EOF
    kc degx0 exec --process "$T/proc.json" "$id"
    if [ "$RC" = 0 ]; then
      skip "global --allow-degraded with exec" "an RLIMIT_NOFILE of 2^32 was applied here"
    else
      expect_contains "exec with an impossible rlimit fails on rlimit.RLIMIT_NOFILE" "$ERR" \
        "rlimit.RLIMIT_NOFILE"
      kc degx1 --allow-degraded rlimit.RLIMIT_NOFILE exec --report "$T/degx.json" \
        --process "$T/proc.json" "$id"
      expect_eq "global --allow-degraded: the exec exits 0" 0 "$RC"
      expect_eq "global --allow-degraded: the exec report says rlimit.RLIMIT_NOFILE not applied" \
        false "$(layer_field "$T/degx.json" rlimit.RLIMIT_NOFILE applied)"
    fi
  else
    fail "run --detach for the exec check exits 0" "$ERR"
  fi
  kc degx_d delete --force "$id"
fi

# ---- --log FILE --log-format json: the last line is the real cause -----------------
# (what podman and docker show: also for errors inside the container's init)
# log_cause TAG WANT: `run` of the bundle $B with a json --log; the last line
# is one JSON object whose msg contains WANT.
log_cause ()
{
  local id
  id=$(new_id "log-$1")
  rm -f "$T/$1.log"
  kc "log-$1" --log "$T/$1.log" --log-format json run --bundle "$B" "$id"
  expect_ne "--log json, $1: run fails" 0 "$RC"
  local last
  last=$(tail -n 1 "$T/$1.log" 2> /dev/null)
  expect_eq "--log json, $1: the last line is an error object" error \
    "$(jq -r .level <<< "$last" 2> /dev/null)"
  expect_contains "--log json, $1: the last line names the cause" \
    "$(jq -r .msg <<< "$last" 2> /dev/null)" "$2"
}
cfg_reset
C_MOUNTS_EXTRA=", $(bind_json "$T/no-such-dir" /x)"
B=$(mkbundle logmount)
log_cause mount "no-such-dir"
cfg_reset
C_ARGS='["/no-such-program"]'
B=$(mkbundle logexec)
log_cause exec "/no-such-program"
# A filter loaded early (noNewPrivileges false: before the user switch) that
# denies the socket kist reports over: said before it is loaded.
cfg_reset
C_NNP=false
C_UID=1000
C_LINUX_EXTRA=', "seccomp": {"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": ["sendmsg"], "action": "SCMP_ACT_ERRNO"}]}'
B=$(mkbundle logsend)
log_cause seccomp-sendmsg "denies sendmsg"
# One that kills the init at the user switch: the message says so and where.
C_LINUX_EXTRA=', "seccomp": {"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": ["setresuid", "setuid"], "action": "SCMP_ACT_KILL"}]}'
B=$(mkbundle logkill)
log_cause seccomp-kill "killed by its seccomp filter"
expect_contains "--log json, seccomp-kill: the last line names the last layer reported" \
  "$(tail -n 1 "$T/seccomp-kill.log" | jq -r .msg)" "after the layer"

nothing_left "t_cli"
