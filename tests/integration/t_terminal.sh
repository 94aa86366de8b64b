#!/bin/bash
# t_terminal.sh: process.terminal (issue #9).  The pty comes from the
# container's own devpts, is its controlling terminal and stdio, /dev/console
# is bound from it; with --console-socket the master goes to a receiver
# (SCM_RIGHTS, as runc), without it a foreground run/exec relays the caller's
# terminal (raw mode, restored; window size changes; end of input; exit
# status).  ttytool.c plays the receiver and the caller's terminal.  Bad
# combinations (create without a socket, a socket without a terminal, no
# devpts, nobody listening) fail with a clear error and leave nothing.
. "$(dirname "$0")/lib.sh"

CC=${CC:-cc}
TT=$T/ttytool
if ! "$CC" -O2 -Wall -o "$TT" "$IT_DIR/ttytool.c" > "$T/ttytool.build" 2>&1; then
  fail "ttytool builds with $CC" "$(cat "$T/ttytool.build")"
  exit 1
fi

# drive TAG STEP... -- KIST-ARGS...: kist (our root) on a fresh pty driven by
# ttytool; sets RC, OUT (what the pty showed) and ERR (ttytool's lines).
drive ()
{
  local tag=$1
  shift
  local steps=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do
    steps+=("$1")
    shift
  done
  shift
  timeout -k 5 60 "$TT" drive "${steps[@]}" -- "$KIST" --root "$ROOT" "$@" \
    > "$T/$tag.out" 2> "$T/$tag.err" < /dev/null
  RC=$?
  OUT=$(tr -d '\r' < "$T/$tag.out")
  ERR=$(cat "$T/$tag.err")
}

# recv_start TAG SOCK STEP...: a receiver on SOCK in the background (RECV_PID).
recv_start ()
{
  local tag=$1 sock=$2
  shift 2
  rm -f "$sock"
  "$TT" recv "$sock" "$@" > "$T/$tag.recv.out" 2> "$T/$tag.recv.err" < /dev/null &
  RECV_PID=$!
  local i
  for ((i = 0; i < 100; i++)); do
    [ -S "$sock" ] && return 0
    sleep 0.02
  done
}
recv_wait ()
{
  local i
  for ((i = 0; i < 300; i++)); do
    kill -0 "$RECV_PID" 2> /dev/null || break
    sleep 0.05
  done
  kill "$RECV_PID" 2> /dev/null
  wait "$RECV_PID" 2> /dev/null
  ROUT=$(tr -d '\r' < "$T/$1.recv.out")
  RERR=$(cat "$T/$1.recv.err")
}

C_TERMINAL=true

# ---- 1. run in the foreground: the caller's terminal relayed ----------------------
sh_args 'test -t 0 && test -t 1 && test -t 2 && echo STDIO-TTY; echo "TTY=$(tty)";
  echo "CON=$(stat -c %t:%T /dev/console) PTS=$(stat -c %t:%T $(tty))";
  echo "SESSION $(cut -d" " -f6 /proc/self/stat) $$";
  trap '"'"'echo SIZE $(stty size)'"'"' WINCH; echo "START $(stty size)";
  while :; do read -t 1 l && break; done; echo "GOT<$l>"; exit 7'
B=$(mkbundle fg)
id=$(new_id fg)
drive fg wait "START" resize 40x120 wait "SIZE 40 120" input 'bye\r' wait "GOT<bye>" \
  -- run --bundle "$B" "$id"
expect_eq "foreground run: the program's exit status (7) is run's" 7 "$RC"
expect_contains "foreground run: stdin, stdout, stderr are a terminal" "$OUT" "STDIO-TTY"
expect_match "foreground run: tty is /dev/pts/N" "$OUT" 'TTY=/dev/pts/[0-9]+'
con=$(sed -n 's/.*CON=\([^ ]*\) PTS=.*/\1/p' <<< "$OUT")
pts=$(sed -n 's/.*CON=[^ ]* PTS=\(.*\)/\1/p' <<< "$OUT")
expect_match "foreground run: /dev/console is a pts node (major 0x88)" "$con" '^88:[0-9a-f]+$'
expect_eq "foreground run: /dev/console is the process's own pty" "$pts" "$con"
expect_contains "foreground run: the caller's window size reached the pty (24x80)" "$OUT" "START 24 80"
expect_contains "foreground run: a window size change reaches the container (SIGWINCH)" "$OUT" "SIZE 40 120"
sess=$(sed -n 's/^SESSION \([0-9]*\) \([0-9]*\)$/\1 \2/p' <<< "$OUT")
expect_match "foreground run: the shell leads its session (stat field 6 = tty_nr is set)" "$sess" '^[1-9][0-9]* 1$'
# The caller's terminal was raw: "bye" is echoed once, by the container's pty.
n=$(grep -o 'bye' <<< "$OUT" | wc -l)
# (Not raw, ttytool's own pty would echo it a second time: 3.)
expect_eq "foreground run: the caller's terminal is raw (input echoed once, by the container)" 2 "$n"
expect_contains "foreground run: the caller's terminal modes are restored" "$ERR" "termios restored yes"

# ---- 2. the report ------------------------------------------------------------------
sh_args 'exit 0'
B=$(mkbundle rep)
id=$(new_id rep)
kc rep run --bundle "$B" --report "$T/rep.json" "$id"
expect_eq "report run: exit 0" 0 "$RC"
expect_eq "report: terminal requested" true "$(layer_field "$T/rep.json" terminal requested)"
expect_eq "report: terminal applied" true "$(layer_field "$T/rep.json" terminal applied)"
d=$(layer_field "$T/rep.json" terminal detail)
expect_contains "report: terminal detail says the container's devpts, not the host's" "$d" "of the container's devpts"
expect_contains "report: terminal detail says the slave came from TIOCGPTPEER" "$d" "TIOCGPTPEER"
expect_contains "report: terminal detail says /dev/console is bound" "$d" "/dev/console bound"
expect_contains "report: terminal detail says kist relays it" "$d" "relays"
d=$(layer_field "$T/rep.json" session detail)
expect_contains "report: session names the controlling terminal" "$d" "controlling terminal /dev/pts/"

# ---- 3. stdin ends: end-of-file in the container; large output drained -------------
sh_args 'cat; echo CAT-DONE; i=0; while [ $i -lt 3000 ]; do echo "line $i"; i=$((i+1)); done; echo LAST-LINE'
B=$(mkbundle eof)
id=$(new_id eof)
kc eof run --bundle "$B" "$id"
expect_eq "stdin at EOF: run exits 0" 0 "$RC"
expect_contains "stdin at EOF: cat in the container reads end-of-file" "$OUT" "CAT-DONE"
expect_contains "output: every line before the exit reaches kist's stdout" "$OUT" "LAST-LINE"
expect_eq "output: 3000 numbered lines" 3000 "$(grep -c '^line [0-9]*' <<< "$(tr -d '\r' <<< "$OUT")")"

# ---- 4. --console-socket: create and start, the master to a receiver ---------------
C_PROCESS_EXTRA=', "consoleSize": {"height": 33, "width": 111}'
sh_args 'test -t 0 && echo IS-TTY; echo "SIZE $(stty size)"; read l; echo "GOT<$l>"; echo "CON=$(stat -c %t /dev/console)"'
B=$(mkbundle cs)
C_PROCESS_EXTRA=
id=$(new_id cs)
recv_start cs "$T/cs.sock" wait IS-TTY input 'hello\n'
kc cs-create create --bundle "$B" --console-socket "$T/cs.sock" "$id"
expect_eq "console socket: create exits 0" 0 "$RC"
expect_eq "console socket: created" created "$(state_field "$id" status)"
kc cs-start start "$id"
expect_eq "console socket: start exits 0" 0 "$RC"
recv_wait cs
expect_contains "console socket: the receiver got a tty fd named /dev/ptmx (runc's message)" "$RERR" "fd /dev/ptmx isatty 1"
expect_contains "console socket: the process's stdin is the pty" "$ROUT" "IS-TTY"
expect_contains "console socket: consoleSize applied (33 111)" "$ROUT" "SIZE 33 111"
expect_contains "console socket: input from the receiver reaches the process" "$ROUT" "GOT<hello>"
expect_contains "console socket: /dev/console is a pts node" "$ROUT" "CON=88"
kc cs-rep report "$id"
expect_contains "console socket: the report says the master went to the socket" "$OUT" "console-socket"
kc cs-del delete --force "$id"

# The waiting init has the pty as its stdio already (as runc's): a caller
# that reads create's output until EOF (the containerd shim does) is not
# held until the start.
sh_args 'echo started'
B=$(mkbundle cspipe)
id=$(new_id cspipe)
recv_start cspipe "$T/cspipe.sock" wait started
timeout -k 5 20 bash -c '"$1" --root "$2" create --bundle "$3" --console-socket "$4" "$5" | cat' \
  sh "$KIST" "$ROOT" "$B" "$T/cspipe.sock" "$id" > /dev/null 2>&1 < /dev/null
expect_eq "create --console-socket | cat: ends at once, the init holds no pipe of create's" 0 "$?"
expect_eq "create --console-socket | cat: created" created "$(state_field "$id" status)"
fds=$(ls -l "/proc/$(state_field "$id" pid)/fd/" 2> /dev/null | awk '$NF ~ /pipe:/' | wc -l)
expect_eq "the waiting init holds no pipe" 0 "$fds"
kc cspipe-start start "$id"
recv_wait cspipe
expect_contains "create | cat, then start: the output goes to the pty" "$ROUT" started
kc cspipe-del delete --force "$id"

# run with --console-socket: the master goes there, run still waits for the exit status.
sh_args 'test -t 1 && echo RUN-TTY; exit 4'
B=$(mkbundle csrun)
id=$(new_id csrun)
recv_start csrun "$T/csrun.sock"
kc csrun run --bundle "$B" --console-socket "$T/csrun.sock" "$id"
recv_wait csrun
expect_eq "run --console-socket: the program's exit status" 4 "$RC"
expect_contains "run --console-socket: the output went to the socket's pty" "$ROUT" "RUN-TTY"
expect_not_contains "run --console-socket: nothing on kist's own stdout" "$OUT" "RUN-TTY"

# An early filter (noNewPrivileges false: loaded before the user switch) that
# denies ioctl: the session and the controlling terminal come before any
# filter, so the terminal still works (it failed with TIOCSCTTY EPERM while
# they came after it).
# (isatty is an ioctl too: the program only writes.)
sh_args 'echo EARLY-TTY; exit 4'
C_NNP=false
C_LINUX_EXTRA=', "seccomp": {"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": ["ioctl"], "action": "SCMP_ACT_ERRNO"}]}'
B=$(mkbundle csearly)
id=$(new_id csearly)
recv_start csearly "$T/csearly.sock"
kc csearly run --bundle "$B" --console-socket "$T/csearly.sock" --report "$T/csearly.json" "$id"
recv_wait csearly
expect_eq "early filter denying ioctl, with a terminal: the program's exit status" 4 "$RC"
expect_contains "early filter denying ioctl: the output went to the socket's pty" "$ROUT" "EARLY-TTY"
expect_contains "early filter denying ioctl: the session entry names the controlling terminal" \
  "$(layer_field "$T/csearly.json" session detail)" "controlling terminal /dev/pts/"
C_NNP=true
C_LINUX_EXTRA=

# ---- 5. bad combinations: clear errors, nothing left ---------------------------------
sh_args 'true'
B=$(mkbundle bad)
id=$(new_id bad)
kc bad1 create --bundle "$B" "$id"
expect_ne "create with a terminal and no --console-socket fails" 0 "$RC"
expect_contains "create without a socket: the error names --console-socket" "$ERR" "--console-socket"
kc bad2 run -d --bundle "$B" "$id"
expect_ne "run -d with a terminal and no --console-socket fails" 0 "$RC"
kc bad3 create --bundle "$B" --console-socket "$T/nobody-listens.sock" "$id"
expect_ne "create with a socket nobody listens on fails" 0 "$RC"
expect_contains "nobody listening: the error names the socket" "$ERR" "nobody-listens.sock"
C_TERMINAL=false
B2=$(mkbundle bad-noterm)
C_TERMINAL=true
kc bad4 create --bundle "$B2" --console-socket "$T/cs.sock" "$id"
expect_ne "--console-socket without process.terminal fails (as runc)" 0 "$RC"
expect_contains "a socket without a terminal: the error says terminal is false" "$ERR" "terminal is false"
# No devpts mount: the layer cannot find the container's own ptmx.
B3=$(mkbundle bad-nopts)
jq 'del(.mounts[] | select(.destination == "/dev/pts"))' "$B3/config.json" > "$B3/c" && mv "$B3/c" "$B3/config.json"
kc bad5 run --bundle "$B3" "$id"
expect_ne "a terminal without a devpts mount fails" 0 "$RC"
expect_contains "no devpts: the error says what to add" "$ERR" "devpts"
expect_eq "no devpts: nothing of the container ran (no output)" "" "$OUT"
# A bind of the host's devpts is not the container's own.
B4=$(mkbundle bad-hostpts)
jq '(.mounts[] | select(.destination == "/dev/pts")) |= {"destination": "/dev/pts", "type": "bind", "source": "/dev/pts", "options": ["rbind"]}' \
  "$B4/config.json" > "$B4/c" && mv "$B4/c" "$B4/config.json"
kc bad6 run --bundle "$B4" "$id"
expect_ne "a terminal on a bind of the host's /dev/pts fails" 0 "$RC"
expect_contains "host devpts: the error says it is the host's instance" "$ERR" "host's devpts"
nothing_left "bad terminal configs"

# ---- 6. exec --tty ---------------------------------------------------------------------
C_TERMINAL=false
sh_args 'sleep 60'
B=$(mkbundle ex)
id=$(new_id ex)
kc ex-run run -d --bundle "$B" "$id"
expect_eq "exec: the container runs" 0 "$RC"
drive exfg wait READY input 'x\r' wait 'GOT<x>' -- exec -t "$id" sh -c \
  'test -t 0 && echo EXEC-TTY; echo READY; read l; echo "GOT<$l>"; exit 5'
expect_eq "exec -t in the foreground: the exit status is the process's" 5 "$RC"
expect_contains "exec -t: stdin is a terminal" "$OUT" "EXEC-TTY"
expect_contains "exec -t: input reaches the process" "$OUT" "GOT<x>"
expect_contains "exec -t: the caller's terminal modes are restored" "$ERR" "termios restored yes"
kc ex-notty exec "$id" sh -c 'test -t 0 || echo NO-TTY'
expect_contains "exec without -t: no terminal" "$OUT" "NO-TTY"
recv_start exd "$T/exd.sock" wait EXEC-D-TTY
kc ex-d exec -d -t --console-socket "$T/exd.sock" "$id" sh -c 'test -t 1 && echo EXEC-D-TTY'
expect_eq "exec -d -t --console-socket exits 0" 0 "$RC"
recv_wait exd
expect_contains "exec -d -t: the receiver got the pty" "$RERR" "isatty 1"
expect_contains "exec -d -t: the process's output is on it" "$ROUT" "EXEC-D-TTY"
kc ex-bad exec -d -t "$id" true
expect_ne "exec -d -t without --console-socket fails" 0 "$RC"
expect_contains "exec -d -t without a socket: the error names --console-socket" "$ERR" "--console-socket"
printf '{"terminal": true, "args": ["sh", "-c", "test -t 0 && echo PROC-TTY"], "cwd": "/", "user": {"uid": 0, "gid": 0}, "env": ["PATH=/bin"]}' > "$T/proc.json"
recv_start exp "$T/exp.sock" wait PROC-TTY
kc ex-p exec -d --process "$T/proc.json" --console-socket "$T/exp.sock" "$id"
expect_eq "exec --process with terminal true and a socket exits 0" 0 "$RC"
recv_wait exp
expect_contains "exec --process terminal: the process has the pty" "$ROUT" "PROC-TTY"
kc ex-del delete --force "$id"

# ---- 7. rootless: a terminal in a user namespace, as nobody ---------------------------
if nobody_ok "rootless terminal"; then
  nobody_dir "$XDG" 0700
  RB=$T/rl
  nobody_bundle "$RB"
  (cd "$RB" && "${AS_NOBODY[@]}" "$KIST" spec --rootless) > /dev/null 2>&1
  rootless_config "$RB/config.json" '["sh", "-c", "test -t 0 || exit 9; echo RL-TTY; echo CON=$(stat -c %t /dev/console); exit 3"]' \
    | sed -E 's#"terminal" *: *false#"terminal": true#' > "$RB/c" && mv "$RB/c" "$RB/config.json"
  chown "$NOBODY_UID:$NOBODY_GID" "$RB/config.json"
  (cd "$RB" && XDG_RUNTIME_DIR=$XDG timeout -k 5 60 "$TT" drive wait 'CON=' -- "${AS_NOBODY[@]}" \
      env XDG_RUNTIME_DIR="$XDG" "$KIST" run "$PREFIX-rl") > "$T/rl.out" 2> "$T/rl.err" < /dev/null
  RC=$?
  OUT=$(tr -d '\r' < "$T/rl.out")
  expect_eq "rootless terminal: the exit status" 3 "$RC"
  expect_contains "rootless terminal: stdin is a terminal" "$OUT" "RL-TTY"
  expect_contains "rootless terminal: /dev/console is the pty" "$OUT" "CON=88"
  expect_contains "rootless terminal: the caller's modes are restored" "$(cat "$T/rl.err")" "termios restored yes"
  (XDG_RUNTIME_DIR=$XDG "${AS_NOBODY[@]}" "$KIST" delete --force "$PREFIX-rl") > /dev/null 2>&1 < /dev/null
fi

nothing_left "terminals"
