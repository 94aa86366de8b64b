#!/bin/bash
# t_sandbox.sh: `kist sandbox` as root and as the unprivileged user nobody:
# a host view of /usr only, a cleared environment, the requested uid, an
# empty network namespace, a read-only root with a writable scratch dir that
# is gone afterwards, --timeout (124, nothing left), background children
# killed with the sandbox, kill -9 of kist kills the sandbox, the report
# against what the sandbox itself sees, and the memory limit failing closed
# on a host without the memory controller.
. "$(dirname "$0")/lib.sh"

if [ ! -x /usr/bin/env ] || [ ! -x /usr/bin/id ] || [ ! -L /bin ]; then
  skip "sandbox" "the host has no merged /usr with /usr/bin/env and /usr/bin/id"
  exit 0
fi

REPDIR=$T/reports
mkdir -p "$REPDIR"
chmod 0777 "$REPDIR"
nobody_dir "$XDG" 0700

MODE=root      # or nobody
SROOT=$ROOT    # the state root of the current mode


# The marker makes every sandbox process findable (leftovers.sh).
BASE=(--ro /usr --setenv "KIST_IT_MARK=$MARK")
# A file with the execute bit that is no program (ENOEXEC at the execve).
BADEXEC=$T/badexec
nobody_dir "$BADEXEC" 0755
printf '\001\002 not a program\n' > "$BADEXEC/bad"
chmod 0755 "$BADEXEC/bad"

# sandbox_dirs: what is left under ROOT/~sandbox (must be nothing).
sandbox_dirs ()
{
  ls -A "$SROOT/~sandbox" 2> /dev/null
}

# cgroup_of ID: a cgroup directory named after the sandbox id, if any.
cgroup_of ()
{
  [ -n "$LO_CG2" ] && [ -n "$1" ] || return 0
  find "$LO_CG2" -mindepth 1 -maxdepth 6 -type d -name "$1" 2> /dev/null
}

# marked_pids: processes carrying our marker (none may outlive a sandbox),
# and any process still running with a test path in its argv.
marked_pids ()
{
  leftover_pids
}

# sandbox_pids: only the processes inside a sandbox (the marker in environ).
sandbox_pids ()
{
  local d
  for d in /proc/[0-9]*; do
    grep -qzx "KIST_IT_MARK=$MARK" "$d/environ" 2> /dev/null && echo "${d#/proc/}"
  done
}

nothing_left_sb ()
{
  local what=$1 id=${2:-} s p c
  s=$(sandbox_dirs)
  p=$(marked_pids)
  c=$(cgroup_of "$id")
  if [ -z "$s$p$c" ] && [ ! -e "$SROOT/${id:-/nonexistent}" ]; then
    ok "$what: nothing left behind ($MODE)"
  else
    fail "$what: nothing left behind ($MODE)" "${s:+sandbox dirs: $s}" \
      "${p:+processes: $(describe_pids $p)}" "${c:+cgroups: $c}" \
      "$( [ -n "$id" ] && [ -e "$SROOT/$id" ] && echo "state dir: $SROOT/$id")"
  fi
}

# reader_gone_rc ARGS...: ARGS run from / with stdout and stderr a pipe
# whose reader is already gone (their first write fails); prints the exit
# status, -N when a signal N ended it (python's).
reader_gone_rc ()
{
  (cd / && python3 -c '
import os, subprocess, sys
r, w = os.pipe()
os.close(r)
print(subprocess.run(sys.argv[1:], stdin=subprocess.DEVNULL, stdout=w, stderr=w).returncode)
' "$@")
}

now_ms ()
{
  echo $(( $(date +%s%N) / 1000000 ))
}

suite ()
{
  local rep id t0 t1 pid i

  # 1. The environment is exactly --setenv.
  ks env "${BASE[@]}" --setenv A=1 --setenv B=two -- /usr/bin/env
  expect_eq "env: exit 0 ($MODE)" 0 "$RC"
  expect_eq "env: only the --setenv variables ($MODE)" \
    "$(printf 'A=1\nB=two\nKIST_IT_MARK=%s' "$MARK")" "$(sort <<< "$OUT")"
  expect_eq "env: the scratch dir is gone ($MODE)" "" "$(sandbox_dirs)"

  printf '# comment\nC=3\n\n  D=four\n' > "$T/envfile"
  chmod 0644 "$T/envfile"
  ks envfile "${BASE[@]}" --env-file "$T/envfile" -- /usr/bin/env
  expect_eq "env-file: its variables only ($MODE)" \
    "$(printf 'C=3\nD=four\nKIST_IT_MARK=%s' "$MARK")" "$(sort <<< "$OUT")"

  # 2. The requested uid, the default one, the hostname.
  ks id "${BASE[@]}" -- id -u
  expect_eq "id: default uid 65534 ($MODE)" 65534 "$OUT"
  ks id2 "${BASE[@]}" --uid 1234 --gid 4321 --hostname box -- sh -c 'id -u; id -g; hostname'
  expect_eq "id: --uid 1234 --gid 4321 --hostname box ($MODE)" "1234 4321 box" "$(echo $OUT)"

  # 3. Network: only lo.
  ks net "${BASE[@]}" -- sh -c 'tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d " "'
  expect_eq "net: /proc/net/dev shows only lo ($MODE)" lo "$OUT"

  # 4. Writing outside the workdir fails, inside works; cwd is the workdir.
  ks write "${BASE[@]}" -- sh -c '
    for f in /x /usr/x /etc-x; do if echo x > $f; then echo "WROTE $f"; fi; done 2> /dev/null
    echo inside > /work/f && cat /work/f; pwd'
  expect_eq "write: outside the workdir fails, inside works ($MODE)" "inside /work" "$(echo $OUT)"
  expect_eq "write: the scratch dir is gone afterwards ($MODE)" "" "$(sandbox_dirs)"

  # 5. The report against what the sandbox sees.
  rep=$REPDIR/$MODE-report.json
  rm -f "$rep"
  ks report "${BASE[@]}" --report "$rep" -- sh -c \
    'grep -E "^(CapBnd|CapEff|CapPrm|NoNewPrivs|Seccomp):" /proc/self/status | tr -s "\t " " "'
  expect_eq "report: the run exits 0 ($MODE)" 0 "$RC"
  expect_eq "inside: no capabilities, no_new_privs, seccomp filter ($MODE)" \
    "CapPrm: 0000000000000000 CapEff: 0000000000000000 CapBnd: 0000000000000000 NoNewPrivs: 1 Seccomp: 2" \
    "$(echo $OUT)"
  expect_eq "report: operation sandbox ($MODE)" sandbox "$(jget "$rep" operation)"
  expect_eq "report: namespace.net applied ($MODE)" true "$(layer_field "$rep" namespace.net applied)"
  expect_eq "report: network.loopback applied ($MODE)" true \
    "$(layer_field "$rep" network.loopback applied)"
  expect_eq "report: capabilities applied ($MODE)" true "$(layer_field "$rep" capabilities applied)"
  expect_contains "report: capabilities all zero ($MODE)" \
    "$(layer_field "$rep" capabilities detail)" "bnd=0x0 eff=0x0 prm=0x0 inh=0x0 amb=0x0"
  expect_eq "report: no_new_privileges applied ($MODE)" true \
    "$(layer_field "$rep" no_new_privileges applied)"
  expect_eq "report: seccomp strict requested ($MODE)" strict "$(layer_field "$rep" seccomp requested)"
  expect_eq "report: seccomp applied ($MODE)" true "$(layer_field "$rep" seccomp applied)"
  expect_eq "report: rootfs.readonly applied ($MODE)" true "$(layer_field "$rep" rootfs.readonly applied)"
  expect_eq "report: environment applied ($MODE)" true "$(layer_field "$rep" environment applied)"
  expect_eq "report: exec recorded ($MODE)" true "$(layer_field "$rep" exec applied)"
  expect_eq "report: teardown applied ($MODE)" true "$(layer_field "$rep" teardown applied)"
  expect_eq "report: confinement applied ($MODE)" true "$(jget "$rep" confinement.applied)"
  id=$(jget "$rep" id)
  expect_match "report: id sandbox-<pid>-<hex> ($MODE)" "$id" '^sandbox-[0-9]+-[0-9a-f]{8}$'
  if [ "$MODE" = nobody ]; then
    expect_eq "report: namespace.user applied (nobody)" true "$(layer_field "$rep" namespace.user applied)"
    expect_eq "report: idmap.uid applied (nobody)" true "$(layer_field "$rep" idmap.uid applied)"
    expect_eq "report: idmap.uid maps 65534 to nobody" "65534:$NOBODY_UID:1" \
      "$(layer_field "$rep" idmap.uid requested)"
    expect_eq "report: idmap.gid applied (nobody)" true "$(layer_field "$rep" idmap.gid applied)"
    expect_eq "report: cgroup not requested (nobody)" false "$(layer_field "$rep" cgroup requested)"
  else
    expect_eq "report: no user namespace as root" false "$(layer_field "$rep" namespace.user requested)"
  fi
  nothing_left_sb "report run" "$id"

  # 6. Text report on a file descriptor.
  ks text "${BASE[@]}" --report-fd 1 --report-format text -- true
  expect_contains "report: --report-format text --report-fd 1 ($MODE)" "$OUT" "namespace.net"
  expect_not_contains "report: text, not JSON ($MODE)" "$OUT" '"layers"'

  # 7. Timeout: 124 within 2 s, a background child too, nothing left.
  rep=$REPDIR/$MODE-timeout.json
  t0=$(now_ms)
  ks timeout "${BASE[@]}" --timeout 1 --report "$rep" -- sh -c 'sleep 60 & sleep 61'
  t1=$(now_ms)
  expect_eq "timeout: exit 124 ($MODE)" 124 "$RC"
  if [ $((t1 - t0)) -lt 2000 ]; then
    ok "timeout: returned within 2 s ($((t1 - t0)) ms, $MODE)"
  else
    fail "timeout: returned within 2 s ($MODE)" "took $((t1 - t0)) ms"
  fi
  expect_contains "timeout: says so on stderr ($MODE)" "$ERR" "kist: sandbox timed out after 1s"
  expect_eq "timeout: recorded in the report ($MODE)" true "$(layer_field "$rep" timeout applied)"
  nothing_left_sb "timeout" "$(jget "$rep" id)"
  m=$(leftover_mounts)
  expect_eq "timeout: no mount left ($MODE)" "" "$m"

  # 8. A background child that outlives the command is killed too.
  rep=$REPDIR/$MODE-bg.json
  ks bg "${BASE[@]}" --report "$rep" -- sh -c 'sleep 60 & echo started'
  expect_eq "background: the command exits 0 and prints started ($MODE)" "0 started" "$RC $OUT"
  nothing_left_sb "background child" "$(jget "$rep" id)"

  # 9. kill -9 of kist mid-run: the sandbox dies with it.
  rep=$REPDIR/$MODE-kill9.json
  rm -f "$rep"
  if [ "$MODE" = root ]; then
    "$KIST" --root "$ROOT" sandbox "${BASE[@]}" --report "$rep" -- sh -c 'sleep 60 & sleep 61' \
      > /dev/null 2> "$T/kill9.err" < /dev/null &
  else
    (cd / && XDG_RUNTIME_DIR=$XDG exec "${AS_NOBODY[@]}" "$KIST" sandbox "${BASE[@]}" \
      --report "$rep" -- sh -c 'sleep 60 & sleep 61') \
      > /dev/null 2> "$T/kill9.err" < /dev/null &
  fi
  pid=$!
  for ((i = 0; i < 100; i++)); do
    [ "$(sandbox_pids | wc -l)" -ge 3 ] && break
    sleep 0.05
  done
  if [ "$(sandbox_pids | wc -l)" -ge 3 ]; then
    kill -KILL "$pid"
    wait "$pid" 2> /dev/null
    for ((i = 0; i < 20; i++)); do
      [ -z "$(marked_pids)" ] && break
      sleep 0.05
    done
    expect_eq "kill -9 of kist: the sandbox's processes are gone within a second ($MODE)" "" \
      "$(describe_pids $(marked_pids))"
  else
    fail "kill -9: the sandbox started ($MODE)" "$(cat "$T/kill9.err")"
    kill -KILL "$pid" 2> /dev/null
    wait "$pid" 2> /dev/null
  fi
  # What kist gc would remove: the state dir (with its cgroup) and the sandbox dir.
  id=$(jget "$rep" id)
  if [ -n "$id" ]; then
    if [ "$MODE" = root ]; then
      kist delete --force "$id" > /dev/null 2>&1
    else
      (cd / && XDG_RUNTIME_DIR=$XDG as_nobody "$KIST" delete --force "$id") \
        > /dev/null 2>&1 < /dev/null
    fi
    rm -rf --one-file-system "${SROOT:?}/~sandbox/$id"
  fi
  nothing_left_sb "kill -9 (after the gc-equivalent cleanup)" "$id"

  # 10. --keep: the work dir stays and its path is printed.
  ks keep "${BASE[@]}" --keep -- sh -c 'echo kept > /work/k'
  expect_eq "keep: exit 0 ($MODE)" 0 "$RC"
  local kept
  kept=$(sed -n 's/^kist: sandbox work dir kept at //p' <<< "$ERR")
  expect_eq "keep: the kept work dir holds the file ($MODE)" kept "$(cat "$kept/k" 2> /dev/null)"
  expect_eq "keep: only the work dir is kept ($MODE)" work "$(ls -A "$(dirname "$kept")" 2> /dev/null)"
  [ -n "$kept" ] && rm -rf --one-file-system "$(dirname "$kept")"

  # 11. Limits: the memory controller is missing here (fail closed / degrade).
  if grep -qw memory "$LO_CG2/cgroup.controllers" 2> /dev/null; then
    skip "memory limit fails closed ($MODE)" "this host has the memory controller"
  else
    ks mem "${BASE[@]}" --memory 32M -- true
    expect_eq "memory: --memory 32M fails closed with 125 ($MODE)" 125 "$RC"
    expect_contains "memory: the error names the memory controller or the cgroup ($MODE)" \
      "$ERR" "$([ "$MODE" = root ] && echo 'memory controller' || echo 'not writable')"
    rep=$REPDIR/$MODE-mem.json
    ks memok "${BASE[@]}" --memory 32M --allow-degraded cgroup,cgroup.memory.max --report "$rep" -- true
    expect_eq "memory: runs with --allow-degraded ($MODE)" 0 "$RC"
    expect_eq "memory: report says cgroup.memory.max not applied ($MODE)" false \
      "$(layer_field "$rep" cgroup.memory.max applied)"
    expect_eq "memory: limits not applied in the summary ($MODE)" false "$(jget "$rep" limits.applied)"
  fi

  # 11b. A sandbox on the shared empty root makes no ROOT/~sandbox/ID: seen
  # from outside while it runs (its state dir is there), and its report's
  # teardown says so.
  rep=$REPDIR/$MODE-dirless.json
  ks dirless "${BASE[@]}" --report "$rep" -- sleep 0.8 &
  local bg=$! i seen=""
  for ((i = 0; i < 70; i++)); do
    seen=$(ls -d "$SROOT"/sandbox-* 2> /dev/null | head -1)
    [ -n "$seen" ] && break
    sleep 0.01
  done
  expect_ne "dirless: the running sandbox has a state dir ($MODE)" "" "$seen"
  expect_eq "dirless: and no ROOT/~sandbox/ID ($MODE)" "" "$(ls -A "$SROOT/~sandbox" 2> /dev/null)"
  wait "$bg"
  expect_contains "dirless: the teardown says no sandbox dir was made ($MODE)" \
    "$(layer_field "$rep" teardown detail)" "sandbox dir none made"

  # 11c. The shared root is verified on every use: a symlink of it replaced
  # by a regular file or pointed elsewhere, or a directory of it replaced by
  # a symlink, and the sandbox runs on a private root instead (the teardown
  # then names the sandbox dir it made).  Each tampered root is removed
  # before the next case (kist leaves a root that does not verify to gc).
  local key link dir tamper
  key=$(ls -d "$SROOT/~sandbox-root"/[0-9a-f]* 2> /dev/null | head -1)
  link=$( [ -n "$key" ] && find "$key" -mindepth 1 -maxdepth 1 -type l -printf '%f\n' | head -1)
  dir=$( [ -n "$key" ] && find "$key" -mindepth 1 -maxdepth 1 -type d -printf '%f\n' | head -1)
  expect_ne "shared root: there after the dirless run ($MODE)" "" "$key"
  for tamper in file retarget dirlink; do
    case $tamper in
      file | retarget) [ -n "$link" ] || { skip "shared root $tamper: no symlink in it (no merged /usr here)"; continue; } ;;
      dirlink) [ -n "$dir" ] || { skip "shared root $tamper: no directory in it"; continue; } ;;
    esac
    rep=$REPDIR/$MODE-tamper-$tamper.json
    ks tamper-ok "${BASE[@]}" -- true   # (re)makes the shared root
    case $tamper in
      file) rm -f "$key/$link" && : > "$key/$link" ;;
      retarget) rm -f "$key/$link" && ln -s /elsewhere "$key/$link" ;;
      dirlink) rmdir "$key/$dir" && ln -s usr "$key/$dir" ;;
    esac
    ks tamper "${BASE[@]}" --report "$rep" -- true
    expect_eq "shared root $tamper: the sandbox still runs ($MODE)" 0 "$RC"
    local td
    td=$(layer_field "$rep" teardown detail)
    expect_contains "shared root $tamper: the teardown names a sandbox dir ($MODE)" "$td" \
      "sandbox dir "
    expect_not_contains "shared root $tamper: not used, a private root instead ($MODE)" "$td" \
      "sandbox dir none made"
    rm -rf --one-file-system "$key"
  done
  nothing_left_sb "after the tampered shared roots" ""

  # 12. Failures before the command: 125, 127.
  ks notfound "${BASE[@]}" -- /usr/bin/does-not-exist
  expect_eq "not found: exit 127 ($MODE)" 127 "$RC"
  # An execve that fails in the command (an executable that is no program):
  # the command exits before its execve and kist's init passes its error on.
  ks badexec "${BASE[@]}" --ro "$BADEXEC:/x" -- /x/bad
  expect_eq "exec format error: exit 126 ($MODE)" 126 "$RC"
  expect_contains "exec format error: the error names the execve's ($MODE)" "$ERR" \
    "exec \`/x/bad\`"
  expect_contains "exec format error: and its cause ($MODE)" "$ERR" "Exec format error"
  # kist's stdout and stderr a pipe nobody reads any more (`kist ... | head`
  # that has exited): kist ignores SIGPIPE, so its writes fail and it still
  # tears the sandbox down, exiting with the command's status (a kist
  # without that dies of SIGPIPE at its first debug line: -13).
  if [ "$MODE" = root ]; then
    RC=$(reader_gone_rc timeout -k 5 "$KIST_IT_TIMEOUT" "$KIST" --root "$ROOT" --debug sandbox \
      "${BASE[@]}" -- sh -c 'exit 3')
  else
    RC=$(reader_gone_rc env XDG_RUNTIME_DIR="$XDG" timeout -k 5 "$KIST_IT_TIMEOUT" \
      "${AS_NOBODY[@]}" "$KIST" --debug sandbox "${BASE[@]}" -- sh -c 'exit 3')
  fi
  expect_eq "stdout and stderr a pipe without a reader: the command's status ($MODE)" 3 "$RC"
  nothing_left_sb "after a pipe without a reader" ""
  ks status "${BASE[@]}" -- sh -c 'exit 7'
  expect_eq "the command's exit status is kist's ($MODE)" 7 "$RC"
  ks usage --no-such-flag -- true
  expect_eq "unknown flag: exit 125 ($MODE)" 125 "$RC"
  nothing_left_sb "after every run" ""
}

suite

if nobody_ok "sandbox as nobody"; then
  MODE=nobody
  SROOT=$XDG/kist
  suite
fi

test_cleanup ()
{
  sandbox_dirs_empty
}
