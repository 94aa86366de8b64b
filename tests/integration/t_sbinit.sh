#!/bin/bash
# t_sbinit.sh: kist's init in every sandbox (issue 12), as root and as nobody,
# side by side with bubblewrap where bwrap has the same case:
#   - the command is pid 2, its parent PID 1 is kist's init (report entry
#     `init`, verified from outside);
#   - SIGTERM to kist ends a command without handlers (143, as bwrap), a
#     self-inflicted SIGSEGV gives 139 (as bwrap), --cpu-time gives SIGXCPU's
#     152;
#   - orphans are reaped: no zombie in the sandbox while the command runs;
#   - a command that ignores SIGTERM is killed --grace later (137), and the
#     report's `signal` entry says which;
#   - `kist run` records init as not requested;
#   - the exit channel (--status-fd, the exit and usage entries) and bwrap's
#     --ro-try, --symlink and --dir.
# Every case fails on a kist whose command is PID 1 (SIGTERM ignored: exit 0
# after the full sleep, kill -SEGV ignored: 0, pid 1, zombies left).
. "$(dirname "$0")/lib.sh"

if [ ! -x /usr/bin/env ] || [ ! -L /bin ]; then
  skip "sandbox init" "the host has no merged /usr"
  exit 0
fi
BWRAP=$(command -v bwrap)
nobody_dir "$XDG" 0700
REPDIR=$T/reports
mkdir -p "$REPDIR"
chmod 0777 "$REPDIR"
BASE=(--ro /usr --setenv "KIST_IT_MARK=$MARK")
mkdir -p "$T/flag"
chmod 0777 "$T/flag"

MODE=root

# signal_when_up PID SIG: once the command made /flag/up, SIG to PID (kist
# or bwrap, our child); its exit status.  The wait is a bound, not a timing
# check: the commands sleep 600 s.
signal_when_up ()
{
  local pid=$1 i
  for ((i = 0; i < 200; i++)); do
    [ -e "$T/flag/up" ] && break
    sleep 0.05
  done
  kill -"$2" "$pid"
  for ((i = 0; i < 400; i++)); do
    kill -0 "$pid" 2> /dev/null || break
    sleep 0.05
  done
  kill -KILL "$pid" 2> /dev/null
  wait "$pid"
  local rc=$?
  rm -f "$T/flag/up"
  return $rc
}

# ks_signal TAG SIG ARGS...: start the sandbox in the background, send SIG to
# kist once the command runs (its marker file exists), wait; sets RC, ERR.
ks_signal ()
{
  local tag=$MODE-$1 sig=$2
  shift 2
  local up=$T/$tag.up
  rm -f "$up"
  if [ "$MODE" = root ]; then
    "$KIST" --root "$ROOT" sandbox --rw "$T/flag:/flag" "$@" \
      > "$T/$tag.out" 2> "$T/$tag.err" < /dev/null &
  else
    (cd / && XDG_RUNTIME_DIR=$XDG exec "${AS_NOBODY[@]}" "$KIST" sandbox --rw "$T/flag:/flag" "$@") \
      > "$T/$tag.out" 2> "$T/$tag.err" < /dev/null &
  fi
  signal_when_up $! "$sig"
  RC=$?
  ERR=$(cat "$T/$tag.err")
}

# bw_signal SIG CMD...: the same under bubblewrap; sets BRC.
bw_signal ()
{
  local sig=$1
  shift
  rm -f "$T/flag/up"
  "$BWRAP" --ro-bind /usr /usr --symlink usr/bin /bin --symlink usr/lib /lib \
    --symlink usr/lib64 /lib64 --proc /proc --dev /dev --bind "$T/flag" /flag \
    --unshare-pid --unshare-net --die-with-parent "$@" < /dev/null > /dev/null 2>&1 &
  signal_when_up $! "$sig"
  BRC=$?
}

# zombies_under PID: how many zombies descend from PID.
zombies_under ()
{
  awk -v top="$1" '
    FNR == 1 {
      line = $0; sub(/^[0-9]+ \(.*\) /, "", line); split(line, f, " ")
      pid = FILENAME; sub(/^\/proc\//, "", pid); sub(/\/stat$/, "", pid)
      state[pid] = f[1]; parent[pid] = f[2]
    }
    END {
      n = 0
      for (p in state) {
        q = p
        for (d = 0; d < 64 && q != "" && q != top && q != 0; d++) q = parent[q]
        if (q == top && p != top && state[p] == "Z") n++
      }
      print n
    }' /proc/[0-9]*/stat 2> /dev/null
}

run_cases ()
{
  local rep=$REPDIR/$MODE-init.json
  ks pid "${BASE[@]}" --report "$rep" -- sh -c 'echo "pid=$$ ppid=$PPID"; tr "\0" " " < /proc/1/cmdline'
  expect_eq "the sandbox runs ($MODE)" 0 "$RC"
  expect_eq "the command is pid 2, its parent PID 1 ($MODE)" "pid=2 ppid=1" "$(sed -n 1p <<< "$OUT")"
  expect_contains "PID 1 is kist itself, no other program ($MODE)" "$(sed -n 2p <<< "$OUT")" "sandbox"
  expect_eq "report: init applied ($MODE)" true "$(layer_field "$rep" init applied)"
  expect_contains "report: init verified from outside ($MODE)" "$(layer_field "$rep" init detail)" \
    "verified from outside: the command (pid"
  expect_eq "report: no signal passed on ($MODE)" false "$(layer_field "$rep" signal requested)"

  # SIGTERM to kist: the command (sleep, no handler) ends at once, 143.
  ks_signal term TERM "${BASE[@]}" -- sh -c ': > /flag/up; exec sleep 600'
  expect_eq "SIGTERM to kist ends a command without handlers: 143 ($MODE)" 143 "$RC"
  ks_signal int INT "${BASE[@]}" -- sh -c ': > /flag/up; exec sleep 600'
  expect_eq "SIGINT to kist ends a command without handlers: 130 ($MODE)" 130 "$RC"

  # Self-inflicted signals are not dropped.
  ks segv "${BASE[@]}" -- sh -c 'kill -SEGV $$; echo survived'
  expect_eq "kill -SEGV \$\$: 139 ($MODE)" 139 "$RC"
  expect_not_contains "kill -SEGV \$\$: the shell did not go on ($MODE)" "$OUT" survived
  ks term-self "${BASE[@]}" -- sh -c 'kill -TERM $$; echo survived'
  expect_eq "kill -TERM \$\$: 143 ($MODE)" 143 "$RC"

  # Signals kist's caller ignored (a shell's background job ignores SIGINT
  # and SIGQUIT) are at their default for the command: the init resets them.
  trap '' INT QUIT USR2
  ks sigign "${BASE[@]}" -- sh -c 'grep "^SigIgn" /proc/self/status'
  trap - INT QUIT USR2
  expect_eq "signals kist's caller ignored are at the default for the command ($MODE)" \
    "$(printf 'SigIgn:\t0000000000000000')" "$OUT"

  # --cpu-time: SIGXCPU first.
  ks cpu "${BASE[@]}" --cpu-time 1 -- sh -c 'while :; do :; done'
  expect_eq "--cpu-time 1 of a busy loop: SIGXCPU, 152 ($MODE)" 152 "$RC"

  # Orphans: the inner shell leaves a sleep behind that ends at once; the
  # command then execs a program that reaps nothing.
  if [ "$MODE" = root ]; then
    "$KIST" --root "$ROOT" sandbox "${BASE[@]}" --rw "$T/flag:/flag" -- \
      sh -c 'sh -c "sleep 0.1 &"; sleep 0.5; : > /flag/up; exec sleep 6' \
      > "$T/orphan.out" 2> "$T/orphan.err" < /dev/null &
    local kp=$! i
    for ((i = 0; i < 200; i++)); do
      [ -e "$T/flag/up" ] && break
      sleep 0.05
    done
    # Reaped within a bound (a loaded machine may take a moment); without an
    # init the zombie stays until the command (sleep 6) ends.
    local z=1
    for ((i = 0; i < 60; i++)); do
      z=$(zombies_under "$kp")
      [ "$z" = 0 ] && break
      sleep 0.05
    done
    expect_eq "an orphan that ended is reaped while the command runs (zombies in the sandbox)" 0 "$z"
    wait "$kp"
    expect_eq "the orphan case exits 0" 0 "$?"
    rm -f "$T/flag/up"
  fi

  # --grace: a command that ignores SIGTERM is killed, 137.
  local grep_rep=$REPDIR/$MODE-grace.json
  ks_signal grace TERM "${BASE[@]}" --grace 0.5 --report "$grep_rep" --status-fd 9 -- \
    sh -c 'trap "" TERM; : > /flag/up; sleep 600' 9> "$T/$MODE-grace.status"
  sed -n 2p "$T/$MODE-grace.status" > "$T/$MODE-grace.status.2"
  expect_eq "--status-fd: killed after --grace: how grace ($MODE)" grace "$(jget "$T/$MODE-grace.status.2" how)"
  expect_eq "a command ignoring SIGTERM is killed after --grace: 137 ($MODE)" 137 "$RC"
  expect_contains "--grace: kist says so on stderr ($MODE)" "$ERR" "still ran --grace 0.5 after SIGTERM"
  expect_eq "report: signal requested SIGTERM ($MODE)" SIGTERM "$(layer_field "$grep_rep" signal requested)"
  expect_contains "report: signal says every process was killed ($MODE)" \
    "$(layer_field "$grep_rep" signal detail)" "every process of the sandbox was killed"
  local ok_rep=$REPDIR/$MODE-term.json
  ks_signal term-rep TERM "${BASE[@]}" --report "$ok_rep" -- sh -c ': > /flag/up; exec sleep 600'
  expect_contains "report: signal says the command ended within --grace ($MODE)" \
    "$(layer_field "$ok_rep" signal detail)" "ended within --grace 3s (status 143)"

  # The exit channel: --status-fd and the exit and usage entries.
  local sf=$T/$MODE-status
  status_case ()   # TAG EXPECTED-RC ARGS...: a sandbox with --status-fd 9
  {
    local tag=$1 want=$2
    shift 2
    ks "$tag" "${BASE[@]}" --status-fd 9 --report "$REPDIR/$MODE-$tag.json" "$@" 9> "$sf.$tag"
    expect_eq "$tag: exit status $want ($MODE)" "$want" "$RC"
    sed -n 1p "$sf.$tag" > "$sf.$tag.1"
    sed -n 2p "$sf.$tag" > "$sf.$tag.2"
  }
  status_case st-exit 3 -- sh -c 'exit 3'
  expect_eq "--status-fd: two lines ($MODE)" 2 "$(wc -l < "$sf.st-exit")"
  expect_eq "--status-fd: the first says started ($MODE)" started "$(jget "$sf.st-exit.1" event)"
  expect_match "--status-fd: started has the init's pid ($MODE)" "$(jget "$sf.st-exit.1" child-pid)" '^[0-9]+$'
  expect_match "--status-fd: started has the command's pid ($MODE)" "$(jget "$sf.st-exit.1" command-pid)" '^[0-9]+$'
  expect_ne "--status-fd: the pid namespace is not kist's ($MODE)" \
    "$(stat -L -c %i /proc/self/ns/pid)" "$(jget "$sf.st-exit.1" pid-namespace)"
  expect_eq "--status-fd: the second says exited ($MODE)" exited "$(jget "$sf.st-exit.2" event)"
  expect_eq "--status-fd: exit 3: how exit ($MODE)" exit "$(jget "$sf.st-exit.2" how)"
  expect_eq "--status-fd: exit 3: exit-code 3 ($MODE)" 3 "$(jget "$sf.st-exit.2" exit-code)"
  expect_match "--status-fd: exited has the CPU time ($MODE)" "$(jget "$sf.st-exit.2" cpu-system-us)" '^[0-9]+$'
  expect_contains "report: exit says exited with status 3 ($MODE)" \
    "$(layer_field "$REPDIR/$MODE-st-exit.json" exit detail)" "exited with status 3"
  expect_contains "report: usage has the wall and CPU time ($MODE)" \
    "$(layer_field "$REPDIR/$MODE-st-exit.json" usage detail)" "cpu user"
  status_case st-139 139 -- sh -c 'exit 139'
  expect_eq "--status-fd: exit 139 is an exit, not a signal ($MODE)" exit "$(jget "$sf.st-139.2" how)"
  status_case st-segv 139 -- sh -c 'kill -SEGV $$'
  expect_eq "--status-fd: kill -SEGV: how signal ($MODE)" signal "$(jget "$sf.st-segv.2" how)"
  expect_eq "--status-fd: kill -SEGV: signal 11 ($MODE)" 11 "$(jget "$sf.st-segv.2" signal)"
  expect_contains "report: exit says killed by signal 11 ($MODE)" \
    "$(layer_field "$REPDIR/$MODE-st-segv.json" exit detail)" "killed by signal 11 (SIGSEGV)"
  status_case st-timeout 124 --timeout 0.5 -- sleep 600
  expect_eq "--status-fd: --timeout: how timeout ($MODE)" timeout "$(jget "$sf.st-timeout.2" how)"
  expect_eq "--status-fd: --timeout: exit-code 124 ($MODE)" 124 "$(jget "$sf.st-timeout.2" exit-code)"
  ks st-bad "${BASE[@]}" --status-fd 97 -- true
  expect_eq "--status-fd 97 (not open): exit 125 ($MODE)" 125 "$RC"
  expect_contains "--status-fd 97: the error says so ($MODE)" "$ERR" "not an open file descriptor"

  # bwrap's vocabulary: --ro-try/--rw-try, --symlink, --dir.
  ks try "${BASE[@]}" --ro-try "$T/no-such-dir:/nx" --ro-try /usr/bin:/ubin -- \
    sh -c 'test -e /nx && echo nx; test -x /ubin/env && echo bound'
  expect_eq "--ro-try of a missing source: skipped, the existing one bound ($MODE)" "0 bound" "$RC $OUT"
  ks notry "${BASE[@]}" --ro "$T/no-such-dir:/nx" -- true
  expect_eq "--ro of a missing source (the control): exit 125 ($MODE)" 125 "$RC"
  ks links "${BASE[@]}" --symlink /usr/bin/env /opt/x/e --dir /a/b -- \
    sh -c 'echo "$(readlink /opt/x/e) $(test -d /a/b && echo dir)"'
  expect_eq "--symlink and --dir: the link's target and the directory ($MODE)" "/usr/bin/env dir" "$OUT"
  ks evil "${BASE[@]}" --symlink "$T" /s --symlink x /s/evil-link -- true
  expect_eq "--symlink under an earlier --symlink: refused, 125 ($MODE)" 125 "$RC"
  expect_true "--symlink under an earlier --symlink: nothing made through it on the host ($MODE)" \
    test ! -e "$T/evil-link"
  ks withroot "${BASE[@]}" --rootfs / --dir /q -- true
  expect_eq "--dir with --rootfs: exit 125 ($MODE)" 125 "$RC"

  ks badgrace "${BASE[@]}" --grace soon -- true
  expect_eq "--grace soon: exit 125 ($MODE)" 125 "$RC"
  expect_contains "--grace soon: the error names the option ($MODE)" "$ERR" "--grace"
}

run_cases

if [ -n "$BWRAP" ]; then
  bw_signal TERM sh -c ': > /flag/up; exec sleep 600'
  expect_eq "bwrap: SIGTERM ends sleep with 143 (kist: the same)" 143 "$BRC"
  "$BWRAP" --ro-bind /usr /usr --symlink usr/bin /bin --symlink usr/lib /lib \
    --symlink usr/lib64 /lib64 --proc /proc --dev /dev --unshare-pid \
    sh -c 'kill -SEGV $$' < /dev/null > /dev/null 2>&1
  expect_eq "bwrap: kill -SEGV \$\$ gives 139 (kist: the same)" 139 "$?"
else
  skip "bwrap side by side" "bubblewrap is not installed"
fi

# kist run: the process is the container's init; no kist init.
sh_args 'echo "pid=$$"'
B=$(mkbundle rb)
id=$(new_id runinit)
kc runinit run --bundle "$B" --report "$T/runinit.json" "$id"
expect_eq "kist run: the process is pid 1" "pid=1" "$OUT"
expect_eq "kist run: report init not requested" false "$(layer_field "$T/runinit.json" init requested)"

if nobody_ok "sandbox init as nobody"; then
  MODE=nobody
  run_cases
fi
sandbox_dirs_empty
nothing_left "sandbox init"
