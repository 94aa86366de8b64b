#!/bin/bash
# s_escape.sh: host escapes through the processes kist puts into a container,
# replayed as an attacker who controls the image and every container process
# (THREAT_MODEL.md).  Each check failed on main before the fix it covers:
#   1. CVE-2019-5736: kist's own binary run inside the container through a
#      `#!/proc/self/exe` script, then rewritten (create + start, exec)
#   2. CVE-2016-9962: the exec helper reachable through /proc/PID before execve
#   3. CVE-2024-21626: args[0] an image symlink through /proc/self/fd/N
#   4. CVE-2022-29162: exec --cap raising inheritable and ambient capabilities
#   5. bubblewrap CVE-2017-5226: TIOCSTI into the caller's terminal
#   6. a profile that denies what kist still needs after loading the filter
#   7. bubblewrap CVE-2020-5291 class: kist installed setuid refuses to run
. "$(dirname "$0")/../integration/lib.sh"

SEC_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BIN=$T/bin
mkdir -p "$BIN"
for prog in fdscan sti; do
  if ! cc -static -O2 -o "$BIN/$prog" "$SEC_DIR/$prog.c" 2> "$T/cc.err"; then
    fail "build the static $prog probe" "$(cat "$T/cc.err")"
    exit 1
  fi
done
cc -O2 -o "$BIN/ptyrun" "$SEC_DIR/ptyrun.c" 2> "$T/cc.err" \
  && cc -O2 -shared -fPIC -o "$BIN/payload.so" "$SEC_DIR/payload.c" 2>> "$T/cc.err" \
  || { fail "build the pty runner and the payload" "$(cat "$T/cc.err")"; exit 1; }

# ---- 1. CVE-2019-5736 -----------------------------------------------------------
# A copy of kist is the victim (never the binary under test).  The image holds
# kist's loader and libraries, an /etc/ld.so.preload naming the payload, and
# /bin/evil, a `#!/proc/self/exe` script: whoever executes it runs the binary
# of the process that executes it, with the payload preloaded.
VICTIM=$T/kist-victim
cp "$KIST" "$VICTIM"
VICTIM_SUM=$(sha256sum < "$VICTIM")

evil_rootfs ()
{
  local r=$1 lib
  for lib in $(ldd "$VICTIM" | grep -o '/[^ ]*'); do
    mkdir -p "$r$(dirname "$lib")"
    cp -L "$lib" "$r$lib"
  done
  cp "$BIN/payload.so" "$r/lib/payload.so"
  echo /lib/payload.so > "$r/etc/ld.so.preload"
  printf '#!/proc/self/exe\n' > "$r/bin/evil"
  chmod 0755 "$r/bin/evil"
}

# evil_bundle NAME ARGS: a bundle of the evil rootfs with the marker mount.
evil_bundle ()
{
  cfg_reset
  with_marker
  C_ARGS=$2
  B=$(mkbundle "$1")
  evil_rootfs "$B/rootfs"
}

# victim_check WHAT ID: the payload reported DENIED and the victim binary is
# unchanged; then a fresh victim and the container deleted.
victim_check ()
{
  local i
  for ((i = 0; i < 100; i++)); do [ -s "$MARKDIR/result" ] && break; sleep 0.1; done
  expect_eq "5736 $1: the payload could not write kist's binary" DENIED \
    "$(cat "$MARKDIR/result" 2> /dev/null)"
  expect_eq "5736 $1: kist's binary on the host is unchanged" "$VICTIM_SUM" \
    "$(sha256sum < "$VICTIM")"
  cp "$KIST" "$VICTIM"
  rm -f "$MARKDIR/result" "$MARKDIR/why"
  kist delete --force "$2" > /dev/null 2>&1
}

KIST_SAVED=$KIST
evil_bundle selfexe '["/bin/evil"]'
id=$(new_id selfexe)
KIST=$VICTIM
kc create create --bundle "$B" "$id"
expect_eq "5736 create: exits 0" 0 "$RC"
kc start start "$id"
expect_eq "5736 start: exits 0" 0 "$RC"
KIST=$KIST_SAVED
victim_check create+start "$id"

# Through exec, into a running container.
evil_bundle selfexe2 '["sleep", "600"]'
id=$(new_id selfexe2)
KIST=$VICTIM
kc run run --detach --bundle "$B" "$id"
expect_eq "5736 exec: run --detach exits 0" 0 "$RC"
kc exec exec --detach "$id" /bin/evil
expect_eq "5736 exec: exec exits 0" 0 "$RC"
KIST=$KIST_SAVED
victim_check exec "$id"

# How the image was protected.  As root kist moves its running image onto a
# detached read-only bind mount of its binary (its mappings, then exe_file),
# without a second exec: seen from outside on a created init, the image is
# the same file, not writable, and no mapping names the writable path; the
# debug log has no re-exec.
evil_bundle selfexe3 '["sleep", "600"]'
id=$(new_id selfexe3)
timeout -k 5 "$KIST_IT_TIMEOUT" "$VICTIM" --root "$ROOT" --debug --log "$T/rebind.log" \
  create --bundle "$B" "$id" < /dev/null > "$T/rebind.out" 2>&1
expect_eq "rebind: create exits 0" 0 "$?"
pid=$(state_field "$id" pid)
if [ -n "$pid" ] && [ "/proc/$pid/exe" -ef "$VICTIM" ]; then
  ok "rebind: the created init's /proc/PID/exe is kist's binary"
else
  fail "rebind: the created init's /proc/PID/exe is kist's binary" "pid '$pid'"
fi
if [ -n "$pid" ] && [ ! -w "/proc/$pid/exe" ]; then
  ok "rebind: the created init's /proc/PID/exe is not writable (read-only mount)"
else
  fail "rebind: the created init's /proc/PID/exe is not writable (read-only mount)"
fi
expect_eq "rebind: no mapping of the created init names the writable binary" "" \
  "$(grep -F " $VICTIM" "/proc/$pid/maps" 2> /dev/null)"
expect_contains "rebind: no re-exec as root (debug log)" "$(cat "$T/rebind.log")" \
  "onto a read-only bind mount of its binary (mappings and exe_file; no re-exec)"
expect_not_contains "rebind: nothing refused it (debug log)" "$(cat "$T/rebind.log")" \
  "re-executing instead"
kist delete --force "$id" > /dev/null 2>&1

# kist sandbox as root: the command runs as uid 65534 without any capability
# (empty bounding set, no_new_privs), so a root-owned binary without group or
# other write bits is out of its reach and kist leaves its image as it is
# (the debug log says why); the payload still cannot write the binary.  A
# binary the sandbox's user owns (or --uid 0) gets the read-only rebind.
# The binary's directory is bound into the sandbox: otherwise Landlock
# alone already refuses to execute it there (EACCES).
SBR=$T/sb-evil
mkdir -p "$SBR/bin" "$SBR/etc" "$SBR/mark" "$SBR/proc" "$SBR/dev" "$SBR/tmp" "$SBR/work"
evil_rootfs "$SBR"
cp "$(command -v busybox)" "$SBR/bin/busybox"
SBMARK=$T/sb-mark
mkdir -p "$SBMARK" "$T/sbv"
chmod 1777 "$SBMARK"
SBV=$T/sbv/kist
cp "$KIST" "$SBV"
SBV_SUM=$(sha256sum < "$SBV")
# sb_evil NAME [ARG...]: $SBV sandbox runs /bin/evil; its debug log in $T/NAME.log.
sb_evil ()
{
  local name=$1
  shift
  rm -f "$SBMARK/result" "$SBMARK/why"
  timeout -k 5 "$KIST_IT_TIMEOUT" "$SBV" --root "$ROOT" --debug --log "$T/$name.log" sandbox \
    --rootfs "$SBR" --ro "$T/sbv:/tmp" --rw "$SBMARK:/mark" "$@" -- /bin/evil \
    < /dev/null > "$T/$name.out" 2>&1
  RC=$?
}
# sb_evil_check WHAT [rebound]: the payload ran and could not write, and the
# binary is unchanged.  rebound: the image is the detached read-only copy,
# which no Landlock rule of the sandbox covers, so the exec of
# /proc/self/exe may be refused before the payload runs (exit 126).
sb_evil_check ()
{
  local got
  got=$(cat "$SBMARK/result" 2> /dev/null)
  if [ "${2:-}" = rebound ] && [ "$RC" = 126 ] && [ -z "$got" ] \
    && grep -q "Permission denied" "$T/$3.out"; then
    ok "5736 $1: the copy's exec inside is refused (Landlock covers no detached mount)"
  else
    expect_eq "5736 $1: exits 0" 0 "$RC"
    expect_eq "5736 $1: the payload ran and could not write kist's binary" DENIED "$got"
  fi
  expect_eq "5736 $1: kist's binary on the host is unchanged" "$SBV_SUM" "$(sha256sum < "$SBV")"
  cp "$KIST" "$SBV"
}
sb_evil sb-root
sb_evil_check "sandbox (uid 65534)"
expect_contains "5736 sandbox: uid 65534 without capabilities cannot write the root-owned binary: no rebind (debug log)" \
  "$(cat "$T/sb-root.log")" \
  "image left as it is: the container's processes (uid 65534 gid 65534, no capabilities) cannot write"
expect_contains "5736 sandbox: the payload's write was refused by the file's permissions" \
  "$(cat "$SBMARK/why" 2> /dev/null)" "Permission denied"
sb_evil sb-uid0 --uid 0 --gid 0
sb_evil_check "sandbox --uid 0" rebound sb-uid0
expect_contains "5736 sandbox --uid 0: the binary's owner inside: the image is rebound (debug log)" \
  "$(cat "$T/sb-uid0.log")" "onto a read-only bind mount of its binary"
chmod 0775 "$SBV"
sb_evil sb-gw
sb_evil_check "sandbox, group-writable binary" rebound sb-gw
expect_contains "5736 sandbox, group-writable binary: the image is rebound (debug log)" \
  "$(cat "$T/sb-gw.log")" "onto a read-only bind mount of its binary"
chmod 0755 "$SBV"
# An ACL (a named entry for uid 65534; the mask keeps the mode 0755): kist
# does not read ACLs, any one means the rebind.
if python3 -c '
import os, struct, sys
e = [(1, 7, -1), (2, 6, 65534), (4, 5, -1), (0x10, 5, -1), (0x20, 5, -1)]
acl = struct.pack("<I", 2) + b"".join(struct.pack("<HHI", t, p, i & 0xffffffff) for t, p, i in e)
os.setxattr(sys.argv[1], "system.posix_acl_access", acl)' "$SBV" 2> "$T/acl.err"; then
  sb_evil sb-acl
  sb_evil_check "sandbox, binary with an ACL" rebound sb-acl
  expect_contains "5736 sandbox, binary with an ACL: the image is rebound (debug log)" \
    "$(cat "$T/sb-acl.log")" "onto a read-only bind mount of its binary"
  rm -f "$SBV"
  cp "$KIST" "$SBV"
else
  skip "5736 sandbox, binary with an ACL" "no POSIX ACLs on $T's file system: $(cat "$T/acl.err")"
fi
if [ -n "$NOBODY_UID" ]; then
  chown "$NOBODY_UID" "$SBV"
  sb_evil sb-owner --uid "$NOBODY_UID"
  sb_evil_check "sandbox, binary owned by the sandbox's user" rebound sb-owner
  expect_contains "5736 sandbox, binary owned by the sandbox's user: the image is rebound (debug log)" \
    "$(cat "$T/sb-owner.log")" "onto a read-only bind mount of its binary"
  chown 0 "$SBV"
else
  skip "5736 sandbox, binary owned by the sandbox's user" "no user nobody on this machine"
fi

# Rootless, with a binary the caller can write (a build in its own home): no
# privilege for a read-only bind mount, so kist re-executes from a sealed
# memfd copy.  Seen from outside on the created init: its image is that copy
# (not the writable file, and no mapping names it), and the copy takes no
# write, not even root's (F_SEAL_WRITE).
if nobody_ok "rootless: the init runs from a sealed memfd copy"; then
  nobody_dir "$XDG" 0700
  NK=$T/nobody-kist
  nobody_dir "$NK"
  cp "$KIST" "$NK/kist"
  chown "$NOBODY_UID:$NOBODY_GID" "$NK/kist"
  NK_SUM=$(sha256sum < "$NK/kist")
  RB=$T/rootless-memfd
  nobody_bundle "$RB"
  KIST_SAVED=$KIST
  KIST=$NK/kist
  kn_in "$RB" mspec spec --rootless
  rootless_config "$RB/config.json" '["sleep", "600"]' > "$T/memfd.json" \
    && cp "$T/memfd.json" "$RB/config.json"
  rid=memfd-$$
  kn_in "$RB" mcreate --debug --log "$NK/memfd.log" create "$rid"
  expect_eq "rootless memfd: create (as nobody, binary writable by nobody) exits 0" 0 "$RC"
  kn_in "$RB" mstate state "$rid"
  mpid=$(jflat 2> /dev/null <<< "$OUT" | awk -F'\t' '$1 == "pid" { print $2; exit }')
  mexe=$(readlink "/proc/$mpid/exe" 2> /dev/null)
  expect_match "rootless memfd: the created init's /proc/PID/exe is the memfd copy" \
    "$mexe" '^/memfd:kist'
  if [ -n "$mpid" ] && [ ! "/proc/$mpid/exe" -ef "$NK/kist" ]; then
    ok "rootless memfd: the created init's image is not the writable binary"
  else
    fail "rootless memfd: the created init's image is not the writable binary" "pid '$mpid' exe '$mexe'"
  fi
  expect_eq "rootless memfd: no mapping of the created init names the writable binary" "" \
    "$(grep -F " $NK/kist" "/proc/$mpid/maps" 2> /dev/null)"
  if [ -n "$mpid" ] && ! (printf x >> "/proc/$mpid/exe") 2> /dev/null; then
    ok "rootless memfd: the copy takes no write (root appending to /proc/PID/exe fails)"
  else
    fail "rootless memfd: the copy takes no write (root appending to /proc/PID/exe fails)"
  fi
  kn_in "$RB" mdel delete --force "$rid"
  expect_eq "rootless memfd: delete --force exits 0" 0 "$RC"
  expect_eq "rootless memfd: the binary is unchanged" "$NK_SUM" "$(sha256sum < "$NK/kist")"
  KIST=$KIST_SAVED
fi

# When the kernel refuses the rebind (mremap fails with EPERM under a seccomp
# filter), kist re-executes from the copy instead, and the payload still
# cannot write the binary.
cc -O2 -o "$BIN/denysys" "$SEC_DIR/denysys.c" 2> "$T/cc.err" \
  || { fail "build denysys" "$(cat "$T/cc.err")"; exit 1; }
evil_bundle selfexe4 '["/bin/evil"]'
id=$(new_id selfexe4)
timeout -k 5 "$KIST_IT_TIMEOUT" "$BIN/denysys" 25 1 "$VICTIM" --root "$ROOT" --debug \
  --log "$T/reexec.log" create --bundle "$B" "$id" < /dev/null > "$T/reexec.out" 2>&1
expect_eq "rebind refused: create exits 0" 0 "$?"
expect_contains "rebind refused: kist says why and re-executes (debug log)" \
  "$(cat "$T/reexec.log")" "re-executing instead"
kc start4 start "$id"
expect_eq "rebind refused: start exits 0" 0 "$RC"
victim_check "rebind refused" "$id"

# ---- 2. CVE-2016-9962: the exec helper before execve ---------------------------------
cfg_reset
with_marker
C_ARGS=$(json_arr /fdscan 0 /mark/scan.log)
B=$(mkbundle scan)
cp "$BIN/fdscan" "$B/rootfs/fdscan"
id=$(new_id scan)
kc run run --detach --bundle "$B" "$id"
expect_eq "9962: the attacker container runs" 0 "$RC"
n_ok=0
: > "$T/scan.err"
for ((i = 0; i < 50; i++)); do
  kist exec "$id" true > /dev/null 2>> "$T/scan.err" && n_ok=$((n_ok + 1))
done
# (The attacker may ptrace an exec'd process once it runs its program: that
# is its right, and it can make such an exec fail; most must go through.)
if [ "$n_ok" -ge 25 ]; then
  ok "9962: 50 execs while the attacker scans /proc: $n_ok succeed"
else
  fail "9962: 50 execs while the attacker scans /proc: only $n_ok succeed" \
    "$(sort "$T/scan.err" | uniq -c | head)"
fi
kist kill "$id" KILL > /dev/null 2>&1
wait_gone "$(state_field "$id" pid)" 30
hits=$(grep -E '^(ESCAPE|MEM|PTRACE) kist ' "$MARKDIR/scan.log" 2> /dev/null | sort | uniq -c | head -5)
expect_eq "9962: no container process reached a kist process through /proc/PID (fd, mem, ptrace)" \
  "" "$hits"
escaped=$(find "$T" -name 'escaped-*' 2> /dev/null | head -5)
expect_eq "9962: no file was created in a host directory" "" "$escaped"
expect_eq "9962: the attacker did scan" scanning "$(grep -m1 '^scanning' "$MARKDIR/scan.log" 2> /dev/null)"
kist delete --force "$id" > /dev/null 2>&1
rm -f "$MARKDIR/scan.log"

# ---- 3. CVE-2024-21626: args[0] through a leaked fd ------------------------------------
# A host program the container must never get to run.
cat > "$T/hostprog" << 'EOF'
#!/bin/sh
echo PWNED > /mark/pwned
EOF
chmod 0755 "$T/hostprog"
up=$(printf '../%.0s' $(seq 1 24))
leak_links ()
{
  local r=$1 n
  for n in $(seq 3 12); do
    ln -s "/proc/self/fd/$n/$up${T#/}/hostprog" "$r/x$n"
  done
}
cfg_reset
with_marker
B=$(mkbundle leak)
leak_links "$B/rootfs"
# leak_check N: after the kist call for /xN, note in $bad whether it ran the
# host program or did not refuse; count the magic-link refusals in $magic.
# An fd that is not open (or not a directory) gives "not found" (127); one
# that is gives the magic-link refusal (126); none may run the program.
leak_check ()
{
  if [ -e "$MARKDIR/pwned" ]; then
    bad+="x$1(ran the host program) "
    rm -f "$MARKDIR/pwned"
  elif [ "$RC" != 126 ] && [ "$RC" != 127 ]; then
    bad+="x$1(exit $RC) "
  fi
  grep -q "magic link" "$LAST.err" && magic=$((magic + 1))
}
bad=
magic=0
for n in $(seq 3 12); do
  C_ARGS=$(json_arr "/x$n")
  mkconfig > "$B/config.json"
  id=$(new_id "leak$n")
  kc "leak$n" run --bundle "$B" "$id"
  leak_check "$n"
done
expect_eq "21626 run: no /proc/self/fd/N/... args[0] runs a host program; each is refused" "" "$bad"
expect_ne "21626 run: the open fds are refused as magic links" 0 "$magic"
# The same through exec.
cfg_reset
with_marker
C_ARGS='["sleep", "600"]'
B=$(mkbundle leakx)
leak_links "$B/rootfs"
id=$(new_id leakx)
kc run run --detach --bundle "$B" "$id"
bad=
magic=0
for n in $(seq 3 12); do
  kc "leakx$n" exec "$id" "/x$n"
  leak_check "$n"
done
expect_eq "21626 exec: no /proc/self/fd/N/... args[0] runs a host program; each is refused" "" "$bad"
expect_ne "21626 exec: the open fds are refused as magic links" 0 "$magic"
kist delete --force "$id" > /dev/null 2>&1

# ---- 4. CVE-2022-29162: exec --cap ------------------------------------------------------
cfg_reset
C_ARGS='["sleep", "600"]'
B=$(mkbundle caps)
id=$(new_id caps)
kc run run --detach --bundle "$B" "$id"
kc capx exec --cap NET_RAW -u 1000 "$id" grep -E '^Cap(Inh|Amb)' /proc/self/status
expect_eq "29162: exec --cap NET_RAW -u 1000 exits 0" 0 "$RC"
expect_eq "29162: no inheritable and no ambient capability" \
  "CapInh: 0000000000000000 CapAmb: 0000000000000000" "$(echo $OUT)"
kc capr exec --cap NET_RAW "$id" sed -n 's/^CapEff:[[:space:]]*//p' /proc/self/status
expect_eq "29162: exec --cap NET_RAW as root does get it (bit 13) in the effective set" 1 \
  "$(( (0x$OUT >> 13) & 1 ))"
kist delete --force "$id" > /dev/null 2>&1

# ---- 5. TIOCSTI into the caller's terminal ----------------------------------------------
cfg_reset
B=$(mkbundle sti)
cp "$BIN/sti" "$B/rootfs/sti"
C_ARGS='["/sti"]'
mkconfig > "$B/config.json"
id=$(new_id sti)
timeout 30 "$BIN/ptyrun" "$T/sti.queue" "$KIST" --root "$ROOT" run --bundle "$B" "$id" \
  > "$T/sti.out" 2>&1
expect_contains "5226 run: TIOCSTI on the caller's terminal is refused" "$(cat "$T/sti.out")" \
  "sti: Operation not permitted"
expect_eq "5226 run: nothing was pushed into the caller's terminal" "" "$(cat "$T/sti.queue")"
timeout 30 "$BIN/ptyrun" "$T/stis.queue" "$KIST" --root "$ROOT" sandbox --seccomp none \
  --ro "$B/rootfs/sti:/sti" -- /sti > "$T/stis.out" 2>&1
expect_contains "5226 sandbox --seccomp none: TIOCSTI is refused" "$(cat "$T/stis.out")" \
  "sti: Operation not permitted"
expect_eq "5226 sandbox: nothing was pushed into the caller's terminal" "" "$(cat "$T/stis.queue")"
# The probe can fail: the same ioctl works for a process of the caller's session.
timeout 30 "$BIN/ptyrun" "$T/sti0.queue" "$B/rootfs/sti" > "$T/sti0.out" 2>&1
expect_eq "5226: the probe does inject from the caller's own session" INJECTED \
  "$(tr -d '\r\n' < "$T/sti0.queue")"

# ---- 6. a filter that denies what kist needs after loading it ---------------------------
cfg_reset
with_marker
sh_args 'echo ran > /mark/ran'
C_LINUX_EXTRA=', "seccomp": {"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": ["read", "recvfrom", "recvmsg", "accept4"], "action": "SCMP_ACT_ERRNO"}]}'
B=$(mkbundle denyread)
id=$(new_id denyread)
kc create create --bundle "$B" "$id"
expect_eq "deny read: create exits 0" 0 "$RC"
kc start start "$id"
expect_eq "deny read: start exits 0" 0 "$RC"
for ((i = 0; i < 50; i++)); do [ -e "$MARKDIR/ran" ] && break; sleep 0.1; done
expect_eq "deny read: the program ran" ran "$(cat "$MARKDIR/ran" 2> /dev/null)"
kc report report "$id"
expect_eq "deny read: the report says seccomp applied" true \
  "$(layer_field "$LAST.out" seccomp applied)"
kist delete --force "$id" > /dev/null 2>&1
rm -f "$MARKDIR/ran"
id=$(new_id denyread2)
kc run run --bundle "$B" "$id"
expect_eq "deny read: run exits with the program's status" 0 "$RC"
expect_eq "deny read: run: the program ran" ran "$(cat "$MARKDIR/ran" 2> /dev/null)"
rm -f "$MARKDIR/ran"
# A filter that denies the exec itself: start fails, never reports success.
C_LINUX_EXTRA=', "seccomp": {"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": ["execve", "execveat"], "action": "SCMP_ACT_ERRNO"}]}'
mkconfig > "$B/config.json"
id=$(new_id denyexec)
kc create create --bundle "$B" "$id"
kc start start "$id"
expect_ne "deny execve: start does not exit 0" 0 "$RC"
expect_contains "deny execve: start names the failed exec" "$ERR" "exec"
expect_ne "deny execve: the state is not running" running "$(state_field "$id" status)"
kist delete --force "$id" > /dev/null 2>&1
id=$(new_id denyexec2)
kc run run --bundle "$B" "$id"
expect_eq "deny execve: run exits 126 (not executable), without hanging" 126 "$RC"
expect_eq "deny execve: the program never ran" "" "$(cat "$MARKDIR/ran" 2> /dev/null)"

# ---- 7. setuid ---------------------------------------------------------------------------
if [ -n "$NOBODY_UID" ]; then
  SUID=$T/suid
  mkdir -p "$SUID"
  chmod 0755 "$SUID"
  cp "$KIST" "$SUID/kist"
  chmod 4755 "$SUID/kist"
  as_nobody "$SUID/kist" --version > "$T/suid.out" 2> "$T/suid.err"
  rc=$?
  if [ "$(stat -c %a "$SUID/kist")" = 4755 ] && ! grep -q nosuid <<< "$(findmnt -no OPTIONS -T "$SUID")"; then
    expect_eq "setuid kist refuses to run (exit 125)" 125 "$rc"
    expect_contains "setuid kist says why" "$(cat "$T/suid.err")" "setuid"
  else
    skip "setuid kist refuses to run" "$SUID is on a nosuid mount"
  fi
else
  skip "setuid kist refuses to run" "there is no user nobody"
fi

sandbox_dirs_empty
nothing_left "escapes"
