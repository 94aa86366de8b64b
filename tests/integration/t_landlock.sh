#!/bin/bash
# t_landlock.sh: the Landlock layer of every kist sandbox (issue 12), as root
# and as nobody:
#   - the report's `landlock` entry is applied, with the kernel's ABI, the
#     rules and the probes that showed the domain in force; `kist run` of a
#     config records it as not requested;
#   - TCP bind and connect on 127.0.0.1 are denied (EACCES) in a sandbox of
#     its own network; with --net host they work (so the check can fail);
#   - connecting to an abstract unix socket made outside the sandbox is
#     denied (EPERM: scoped) where the socket is reachable (--net host);
#   - /dev/shm, a writable tmpfs (mode 1777), takes files but no directory,
#     symlink or fifo: Landlock denies what the mount allows;
#   - the workdir, --rw, --tmpfs and /tmp are writable, --ro readable, and
#     what programs need of /proc, /dev/null and a pty still works.
# Every Landlock case fails on a kist without the layer (no entry; bind,
# mkdir in /dev/shm and the abstract connect all succeed).
. "$(dirname "$0")/lib.sh"

if [ ! -x /usr/bin/env ] || [ ! -L /bin ]; then
  skip "landlock" "the host has no merged /usr"
  exit 0
fi
if ! command -v python3 > /dev/null; then
  skip "landlock" "python3 is missing (tests/deps.sh installs it)"
  exit 0
fi
# The kernel's Landlock ABI (landlock_create_ruleset(NULL, 0, VERSION)).
ABI=$(python3 -c 'import ctypes; print(ctypes.CDLL(None, use_errno=True).syscall(444, None, 0, 1))' 2> /dev/null)
if ! [ "${ABI:-0}" -ge 2 ] 2> /dev/null; then
  skip "landlock" "this kernel has no Landlock ABI >= 2 (ABI ${ABI:-?})"
  exit 0
fi

nobody_dir "$XDG" 0700
REPDIR=$T/reports
mkdir -p "$REPDIR"
chmod 0777 "$REPDIR"
BASE=(--ro /usr --setenv "KIST_IT_MARK=$MARK")

# An abstract unix socket on the host, made outside any sandbox.
ABSTRACT=kist-it-landlock-$$
python3 -c 'import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.bind("\0" + sys.argv[1])
s.listen(16)
time.sleep(600)' "$ABSTRACT" < /dev/null > /dev/null 2>&1 &
LISTENER=$!
# Bound before any sandbox looks for it (python's start-up under load can
# take longer than the first sandboxes: ECONNREFUSED, not the scope's EPERM).
for ((i = 0; i < 500; i++)); do
  grep -q "@$ABSTRACT\$" /proc/net/unix 2> /dev/null && break
  sleep 0.01
done
grep -q "@$ABSTRACT\$" /proc/net/unix || fail "the host's abstract socket @$ABSTRACT is listening"
test_cleanup ()
{
  kill "$LISTENER" 2> /dev/null
  wait "$LISTENER" 2> /dev/null
}

# What a program sees of the network: "bind E connect E abstract E", each
# "ok" or the errno name.
NETPY='import errno, socket, sys
def t(f):
    try:
        f()
        return "ok"
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))
s = socket.socket()
c = socket.socket()
u = socket.socket(socket.AF_UNIX)
print("bind", t(lambda: s.bind(("127.0.0.1", 0))), "connect", t(lambda: c.connect(("127.0.0.1", 9))),
      "abstract", t(lambda: u.connect("\0" + sys.argv[1])))'

run_cases ()
{
  local rep=$REPDIR/$MODE-ll.json rw=$T/$MODE-rw ro=$T/$MODE-ro
  nobody_dir "$rw" 0777
  mkdir -p "$ro"
  echo data > "$ro/f"

  # The entry.
  ks entry "${BASE[@]}" --report "$rep" -- true
  expect_eq "the sandbox runs ($MODE)" 0 "$RC"
  expect_eq "report: landlock requested ($MODE)" true "$(layer_field "$rep" landlock requested)"
  expect_eq "report: landlock applied ($MODE)" true "$(layer_field "$rep" landlock applied)"
  local det
  det=$(layer_field "$rep" landlock detail)
  expect_contains "report: landlock names the kernel's ABI ($MODE)" "$det" "ABI $ABI; "
  expect_contains "report: landlock: / and --ro read-only ($MODE)" "$det" "(ro / /usr; "
  expect_contains "report: landlock: the workdir and /tmp writable ($MODE)" "$det" "; rw /work /tmp; "
  expect_contains "report: landlock: the /dev/shm probe denied ($MODE)" "$det" \
    "mkdir in /dev/shm denied (EACCES; allowed before)"
  if [ "$ABI" -ge 4 ]; then
    expect_contains "report: landlock: TCP denied ($MODE)" "$det" "tcp bind+connect denied"
    expect_contains "report: landlock: the TCP probe denied ($MODE)" "$det" \
      "TCP bind 127.0.0.1:0 denied (EACCES; allowed before)"
  fi
  if [ "$ABI" -ge 6 ]; then
    expect_contains "report: landlock: scoped ($MODE)" "$det" "scoped: signal, abstract unix"
  fi
  expect_eq "report: confinement applied ($MODE)" true "$(jget "$rep" confinement.applied)"

  # TCP: denied in the sandbox's own network, allowed with --net host.
  if [ "$ABI" -ge 4 ]; then
    ks tcp "${BASE[@]}" -- python3 -c "$NETPY" "$ABSTRACT"
    expect_eq "TCP bind and connect on 127.0.0.1 denied by Landlock ($MODE)" \
      "bind EACCES connect EACCES abstract ECONNREFUSED" "$OUT"
  fi
  ks tcp-host "${BASE[@]}" --net host --report "$REPDIR/$MODE-host.json" -- python3 -c "$NETPY" "$ABSTRACT"
  # (connect: refused, unless the host has something on port 9.)
  if [ "$ABI" -ge 6 ]; then
    expect_match "--net host: TCP works, the host's abstract socket is scoped out (EPERM) ($MODE)" \
      "$OUT" '^bind ok connect (ok|ECONNREFUSED) abstract EPERM$'
  else
    expect_match "--net host: TCP works ($MODE)" "$OUT" '^bind ok connect (ok|ECONNREFUSED) abstract ok$'
  fi
  expect_contains "--net host: report says TCP is not restricted ($MODE)" \
    "$(layer_field "$REPDIR/$MODE-host.json" landlock detail)" "tcp not restricted (network shared)"

  # /dev/shm: the mount takes anything, Landlock only files.
  ks shm "${BASE[@]}" -- sh -c '
    echo x > /dev/shm/f && echo file ok; rm /dev/shm/f && echo rm ok
    mkdir /dev/shm/d 2>&1; ln -s f /dev/shm/l 2>&1; mkfifo /dev/shm/p 2>&1
    mkdir /tmp/d && echo tmp mkdir ok'
  expect_contains "/dev/shm: a file is made and removed ($MODE)" "$OUT" "file ok
rm ok"
  expect_contains "/dev/shm: mkdir denied by Landlock, the mount allows it ($MODE)" "$OUT" \
    "'/dev/shm/d': Permission denied"
  expect_contains "/dev/shm: symlink denied ($MODE)" "$OUT" "'/dev/shm/l': Permission denied"
  expect_contains "/dev/shm: fifo denied ($MODE)" "$OUT" "'/dev/shm/p': Permission denied"
  expect_contains "/tmp: mkdir works ($MODE)" "$OUT" "tmp mkdir ok"

  # The writable paths, the read-only ones, and what programs need.
  ks paths "${BASE[@]}" --rw "$rw:/rw" --ro "$ro:/ro" --tmpfs /scratch -- sh -c '
    set -e
    mkdir -p /work/a/b && echo w > /work/a/b/f && mv /work/a/b/f /work/a/g && ln -s g /work/a/l
    mkdir /rw/d && echo r > /rw/d/f && mv /rw/d /rw/e
    mkdir /scratch/d && echo s > /scratch/d/f
    cat /ro/f
    ! echo x > /ro/new 2> /dev/null
    echo x > /dev/null && head -c 4 /dev/urandom | wc -c
    echo sb > /proc/self/comm
    python3 -c "import os; m, s = os.openpty(); print(os.ttyname(s).startswith(\"/dev/pts/\"))"
    echo done'
  expect_eq "workdir, --rw, --tmpfs writable, --ro readable, /dev, /proc and a pty work ($MODE)" \
    "data
4
True
done" "$OUT"
  expect_eq "the --rw dir got the sandbox's writes ($MODE)" r "$(cat "$rw/e/f" 2> /dev/null)"
}

MODE=root
run_cases

# kist run of a config: not requested.
sh_args 'true'
B=$(mkbundle rb)
id=$(new_id run)
kc run run --bundle "$B" --report "$T/run.json" "$id"
expect_eq "kist run: exits 0" 0 "$RC"
expect_eq "kist run: report landlock not requested" false "$(layer_field "$T/run.json" landlock requested)"
expect_eq "kist run: report landlock not applied" false "$(layer_field "$T/run.json" landlock applied)"

if nobody_ok "landlock as nobody"; then
  MODE=nobody
  run_cases
fi
sandbox_dirs_empty
nothing_left "landlock"
