#!/bin/bash
# t_devices.sh: the device cgroup (layer cgroup.devices) with podman's rule
# list, compared with runc (issue #9).
#
# podman sends linux.resources.devices = [{"allow": false, "access": "rwm"}]
# and nothing else.  Like runc, kist appends runc's default rules after the
# configured ones (mknod of any char/block device; rwm of null, random, full,
# tty, zero, urandom, the pty slaves 136:* and ptmx 5:2), so:
#   - /dev/null and /dev/zero read and write, /dev/full reads and its write
#     fails with ENOSPC, /dev/random and /dev/urandom read, /dev/urandom
#     takes a write;
#   - /dev/tty opens as far as the tty driver (ENXIO: no controlling
#     terminal), not EPERM;
#   - /dev/ptmx opens and a pty pair (master, then /dev/pts/N) works;
#   - a linux.devices node that is not a default (/dev/kmsg 1:11, a node of
#     an unregistered major) is created but stays denied (EPERM), as in runc;
#   - mknod of any char or block device is allowed (runc's c/b *:* m), the
#     node it made still cannot be opened (EPERM);
#   - the defaults win over configured deny rules for them (a deny of
#     c 1:3 and c 1:7 leaves /dev/null and /dev/full usable); a configured
#     allow rule works (the unregistered major then opens as far as its
#     missing driver: ENXIO);
#   - the report's cgroup.devices detail says the defaults were appended and
#     that the kernel's copy of the program was read back; the rule list of
#     `kist update` gets the defaults too;
#   - without linux.resources.devices (or with "resources": {}) the defaults
#     are installed alone, as runc does: a root container with CAP_MKNOD may
#     mknod the host's disk but cannot open it, while /dev/null works;
#   - a default device also in linux.devices is one node with the config's
#     mode, as in runc, and /dev/null stays writable under the deny-all
#     list (runc 1.1 also drops its default rule there and fails);
#   - rootless (kist as nobody in a delegated cgroup) cannot load a device
#     program: the defaults are recorded as not requested with the reason and
#     the run succeeds, as runc ignores device cgroup errors when rootless;
#   - runc, on the same bundle, gives the same answer to every probe.
# A static helper, devprobe (built from the C source below), does each
# operation and prints its errno name.
. "$(dirname "$0")/lib.sh"

CG2=$LO_CG2
if [ -z "$CG2" ] || [ ! -w "$CG2/cgroup.procs" ]; then
  skip "device cgroup tests" "no writable cgroup2 hierarchy (${CG2:-none})"
  exit 0
fi

RUNC_ROOT=$T/runc-root
RUNC_IDS=()
_devices_cleanup ()
{
  local rc=$? id
  for id in "${RUNC_IDS[@]}"; do
    in_cg2_view runc --root "$RUNC_ROOT" delete --force "$id" > /dev/null 2>&1
  done
  [ -n "${DELEG:-}" ] && rmdir "$DELEG/kist" "$DELEG" 2> /dev/null
  (exit "$rc")
  _cleanup
}
trap _devices_cleanup EXIT

# in_cg2_view CMD...: CMD in a private mount namespace of its own where the
# host's cgroup2 hierarchy is mounted over /sys/fs/cgroup, so that runc sees
# a pure cgroup v2 host and never touches the v1 hierarchies
# (/work/shared/engines.md).  kist's own view stays as it is.
in_cg2_view ()
{
  timeout -k 5 "$KIST_IT_TIMEOUT" unshare -m --propagation private \
    sh -c 'mount --bind "$0" /sys/fs/cgroup && exec "$@"' "$CG2" "$@" < /dev/null
}

# ---- the probe -------------------------------------------------------------
DEVPROBE=$T/devprobe
cat > "$T/devprobe.c" << 'EOF'
/* devprobe OP PATH...: one device operation; prints "OP ok ..." or "OP ERRNO". */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

static int
bad (const char *op)
{
  const char *n = strerrorname_np (errno);
  printf ("%s %s\n", op, n ? n : "E?");
  return 0;
}

int
main (int argc, char **argv)
{
  char buf[16];
  if (argc < 2)
    return 2;
  const char *op = argv[1];
  if (strcmp (op, "pty") == 0)
    {
      int m = posix_openpt (O_RDWR | O_NOCTTY);
      if (m < 0)
        return bad ("pty-master");
      if (grantpt (m) < 0 || unlockpt (m) < 0)
        return bad ("pty-unlock");
      const char *name = ptsname (m);
      if (name == NULL)
        return bad ("pty-name");
      int s = open (name, O_RDWR | O_NOCTTY);
      if (s < 0)
        return bad ("pty-slave");
      if (write (s, "x\n", 2) != 2)
        return bad ("pty-write");
      if (read (m, buf, sizeof buf) <= 0)
        return bad ("pty-read");
      printf ("pty ok %s\n", strncmp (name, "/dev/pts/", 9) == 0 ? "/dev/pts/N" : name);
      return 0;
    }
  if (argc < 3)
    return 2;
  const char *path = argv[2];
  if (strcmp (op, "mknod") == 0 && argc == 6)
    {
      mode_t t = argv[3][0] == 'b' ? S_IFBLK : S_IFCHR;
      if (mknod (path, t | 0666, makedev (atoi (argv[4]), atoi (argv[5]))) < 0)
        return bad (op);
      printf ("%s ok\n", op);
      return 0;
    }
  /* wopen: open for writing only, write nothing (/dev/kmsg opened so needs
   * no CAP_SYSLOG, and nothing reaches the host's kernel log). */
  int flags = strcmp (op, "read") == 0                                 ? O_RDONLY
              : strcmp (op, "write") == 0 || strcmp (op, "wopen") == 0 ? O_WRONLY
                                                                       : O_RDWR;
  int fd = open (path, flags | O_NOCTTY | O_NONBLOCK);
  if (fd < 0)
    return bad ("open");
  if (strcmp (op, "read") == 0)
    {
      ssize_t n = read (fd, buf, sizeof buf);
      if (n < 0)
        return bad (op);
      printf ("read %zd\n", n);
    }
  else if (strcmp (op, "write") == 0)
    {
      if (write (fd, "kist\n", 5) != 5)
        return bad (op);
      printf ("write ok\n");
    }
  else
    printf ("open ok\n");
  return 0;
}
EOF
CC=${CC:-cc}
if ! "$CC" -static -O2 -Wall -o "$DEVPROBE" "$T/devprobe.c" > "$T/devprobe.build" 2>&1; then
  fail "devprobe builds with $CC -static (needs libc6-dev's libc.a)" "$(cat "$T/devprobe.build")"
  exit 1
fi

# A char and a block major no driver has registered here (the local and
# experimental ranges of devices.txt): an allowed open reaches the missing
# driver (ENXIO), a denied one stops at the device cgroup (EPERM).
free_major ()
{
  local kind=$1 m
  for m in 60 61 62 63 120 121 122 123 124 125 126 127; do
    if ! awk -v k="$kind" -v m="$m" '/^Character/ { s = "c" } /^Block/ { s = "b" }
        s == k && $1 == m { found = 1 } END { exit !found }' /proc/devices; then
      echo "$m"
      return 0
    fi
  done
  return 1
}
FREE_C=$(free_major c)
FREE_B=$(free_major b)
if [ -z "$FREE_C" ] || [ -z "$FREE_B" ]; then
  skip "device cgroup tests" "no unregistered char/block major in 60-63, 120-127"
  exit 0
fi

# The probes, "LABEL|DEVPROBE ARGS": each runs in the container and prints
# "LABEL: RESULT".
PROBES=(
  "null-write|write /dev/null"
  "null-read|read /dev/null"
  "zero-read|read /dev/zero"
  "zero-write|write /dev/zero"
  "full-read|read /dev/full"
  "full-write|write /dev/full"
  "random-read|read /dev/random"
  "urandom-read|read /dev/urandom"
  "urandom-write|write /dev/urandom"
  "tty-open|open /dev/tty"
  "ptmx-open|open /dev/ptmx"
  "pty-pair|pty"
  "kmsg-open|wopen /dev/kmsg"
  "freec-open|open /dev/kist-free"
  "mknod-c|mknod /dev/kist-mk-c c $FREE_C 1"
  "mknod-c-open|open /dev/kist-mk-c"
  "mknod-b|mknod /dev/kist-mk-b b $FREE_B 1"
  "mknod-b-open|read /dev/kist-mk-b"
  "mknod-kmsg|mknod /dev/kist-kmsg c 1 11"
  "mknod-kmsg-open|wopen /dev/kist-kmsg"
)
probe_script ()
{
  local p s=""
  for p in "${PROBES[@]}"; do
    s+="printf '%s: ' '${p%%|*}'; /bin/devprobe ${p#*|}; "
  done
  printf '%s' "$s"
}

# result LABEL [OUTPUT]: the result of one probe ("" if it printed none).
result ()
{
  sed -n "s/^$1: //p" <<< "${2-$OUT}" | head -n 1
}

# dbundle NAME RESOURCES_DEVICES: a bundle running every probe, with
# CAP_MKNOD, the linux.devices /dev/kmsg (1:11) and /dev/kist-free
# (FREE_C:0), and linux.resources.devices RESOURCES_DEVICES.
dbundle ()
{
  local b
  cfg_reset
  C_CAPS='["CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE", "CAP_MKNOD"]'
  C_ARGS=$(json_arr sh -c "$(probe_script)")
  C_LINUX_EXTRA=', "devices": [
      {"path": "/dev/kmsg", "type": "c", "major": 1, "minor": 11, "fileMode": 438},
      {"path": "/dev/kist-free", "type": "c", "major": '"$FREE_C"', "minor": 0, "fileMode": 438}],
    "resources": {"devices": '"$2"'}'
  b=$(mkbundle "$1") || return 1
  cp "$DEVPROBE" "$b/rootfs/bin/devprobe"
  printf '%s' "$b"
}

PODMAN_RULES='[{"allow": false, "access": "rwm"}]'

# ---- podman's config in short: the deny-all list, nothing else -----------------
cfg_reset
sh_args 'echo x > /dev/null && echo null-ok; head -c 4 /dev/zero | wc -c'
C_LINUX_EXTRA=', "resources": {"devices": '"$PODMAN_RULES"'}'
B=$(mkbundle plain)
id=$(new_id plain)
kc plain run --bundle "$B" "$id"
expect_eq "deny-all only: run exits 0" 0 "$RC"
expect_eq "deny-all only: echo > /dev/null works, /dev/zero reads" "null-ok"$'\n'"4" "$OUT"
expect_eq "deny-all only: nothing on stderr (no EPERM)" "" "$ERR"
nothing_left "the deny-all list alone"

# ---- no linux.resources.devices at all: runc's defaults still apply ---------------
# A root container without a user namespace, with CAP_MKNOD and no device
# rules: like runc, kist installs the default rules (mknod of anything,
# rwm of the default devices only), so a node of the host's disk made inside
# cannot be opened.  Without the program it opens.  (The same config with
# "resources": {} and without "resources".)  The disk is the first block
# device whose node opens on the host (this VM's own policy refuses its
# root disk even to the host's root: then a loop or zram device), so that
# an EPERM inside comes from the container's device program.
DISK=
for d in $(ls -d /sys/block/* | grep -Ev '/(loop|ram|zram)[0-9]*$') /sys/block/loop0 /sys/block/zram0; do
  [ -r "$d/dev" ] || continue
  dev=$(cat "$d/dev")
  rm -f "$T/hostdisk"
  mknod "$T/hostdisk" b "${dev%%:*}" "${dev#*:}" 2> /dev/null || continue
  if grep -q '^read ' <<< "$("$DEVPROBE" read "$T/hostdisk")"; then
    DISK=$dev
    DISK_NAME=${d##*/}
    break
  fi
done
rm -f "$T/hostdisk"
if [ -z "$DISK" ]; then
  skip "no device rules: a host disk node stays closed" "no block device in /sys/block opens on the host"
else
  DEF_PROBES="printf 'disk-mknod: '; /bin/devprobe mknod /dev/kist-disk b ${DISK%%:*} ${DISK#*:};
    printf 'disk-read: '; /bin/devprobe read /dev/kist-disk;
    printf 'kmsg-mknod: '; /bin/devprobe mknod /dev/kist-kmsg c 1 11;
    printf 'kmsg-open: '; /bin/devprobe wopen /dev/kist-kmsg;
    printf 'null-write: '; /bin/devprobe write /dev/null;
    printf 'zero-read: '; /bin/devprobe read /dev/zero;
    printf 'ptmx-open: '; /bin/devprobe open /dev/ptmx;
    printf 'pty-pair: '; /bin/devprobe pty"
  DEF_LABELS="disk-mknod disk-read kmsg-mknod kmsg-open null-write zero-read ptmx-open pty-pair"
  # defbundle NAME LINUX_EXTRA
  defbundle ()
  {
    local b
    cfg_reset
    C_CAPS='["CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE", "CAP_MKNOD"]'
    C_ARGS=$(json_arr sh -c "$DEF_PROBES")
    C_LINUX_EXTRA=$2
    b=$(mkbundle "$1") || return 1
    cp "$DEVPROBE" "$b/rootfs/bin/devprobe"
    printf '%s' "$b"
  }
  for variant in none empty; do
    if [ $variant = none ]; then extra=; else extra=', "resources": {}'; fi
    B=$(defbundle "def-$variant" "$extra")
    id=$(new_id "def-$variant")
    kc "def-$variant" run --report "$T/def-$variant.json" --bundle "$B" "$id"
    expect_eq "no device rules ($variant): run exits 0" 0 "$RC"
    eval "DEF_OUT_$variant=\$OUT"
    expect_eq "no device rules ($variant): mknod of the host disk $DISK_NAME ($DISK) is allowed (b *:* m)" \
      "mknod ok" "$(result disk-mknod)"
    expect_eq "no device rules ($variant): the host disk's node cannot be opened (EPERM)" \
      "open EPERM" "$(result disk-read)"
    expect_eq "no device rules ($variant): a 1:11 (kmsg) node made inside cannot be opened" \
      "open EPERM" "$(result kmsg-open)"
    expect_eq "no device rules ($variant): /dev/null takes a write" "write ok" "$(result null-write)"
    expect_eq "no device rules ($variant): /dev/zero reads" "read 16" "$(result zero-read)"
    expect_eq "no device rules ($variant): a pty pair works" "pty ok /dev/pts/N" "$(result pty-pair)"
    expect_eq "no device rules ($variant): report: cgroup.devices applied" true \
      "$(layer_field "$T/def-$variant.json" cgroup.devices applied)"
    expect_eq "no device rules ($variant): report: cgroup.devices requested the defaults" default \
      "$(layer_field "$T/def-$variant.json" cgroup.devices requested)"
    expect_contains "no device rules ($variant): report: only runc's default rules, read back" \
      "$(layer_field "$T/def-$variant.json" cgroup.devices detail)" \
      "0 configured rules, then runc's 10 default rules"
  done
  nothing_left "no device rules"

  # ---- a live program is shared: one load for containers with the same rules ------
  # kist notes the id of the program it loaded last in ROOT/~device-program; a
  # container with the same rules attaches that very program while another
  # container holds it, once its read back shows the same instructions.  The
  # note is a hint only: another config's program, garbage or a symlink there
  # mean a load of the container's own program, and no failure.
  prog_id () { sed -n 's/^bpf program \([0-9]*\) .*/\1/p' <<< "$1"; }
  HINT=$ROOT/~device-program
  B=$(defbundle share "")
  hold=$(new_id share-hold)
  kc share-hold create --bundle "$B" "$hold"
  expect_eq "sharing: the holder is created" 0 "$RC"
  "$KIST" --root "$ROOT" report "$hold" > "$T/share-hold.json" 2> /dev/null
  HOLD_DETAIL=$(layer_field "$T/share-hold.json" cgroup.devices detail)
  HOLD_ID=$(prog_id "$HOLD_DETAIL")
  expect_match "sharing: the holder's program has an id" "$HOLD_ID" '^[0-9]+$'
  expect_eq "sharing: the note names the holder's program" "$(printf '%010d' "$HOLD_ID")" \
    "$(cat "$HINT" 2> /dev/null)"
  kc share-same run --report "$T/share-same.json" --bundle "$B" "$(new_id share-same)"
  expect_eq "sharing: a container with the same rules runs" 0 "$RC"
  d=$(layer_field "$T/share-same.json" cgroup.devices detail)
  expect_eq "sharing: it has the holder's program" "$HOLD_ID" "$(prog_id "$d")"
  expect_contains "sharing: its report says the program is shared and was read back" "$d" \
    "shared: loaded for another container, found alive by the id in ~device-program; read back: the kernel's copy is this program"
  expect_eq "sharing: the shared program keeps the host disk closed (EPERM)" "open EPERM" \
    "$(result disk-read)"
  expect_eq "sharing: the shared program lets /dev/null be written" "write ok" "$(result null-write)"
  # Another config's program under the note: not this container's.
  cfg_reset
  C_CAPS='["CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE", "CAP_MKNOD"]'
  C_ARGS=$(json_arr sh -c "$DEF_PROBES")
  C_LINUX_EXTRA=', "resources": {"devices": [{"allow": true, "type": "c", "major": 1, "minor": 11, "access": "rw"}]}'
  B2=$(mkbundle share-other)
  cp "$DEVPROBE" "$B2/rootfs/bin/devprobe"
  kc share-other run --report "$T/share-other.json" --bundle "$B2" "$(new_id share-other)"
  expect_eq "sharing: a container with other rules runs" 0 "$RC"
  d=$(layer_field "$T/share-other.json" cgroup.devices detail)
  expect_ne "sharing: other rules get a program of their own" "$HOLD_ID" "$(prog_id "$d")"
  expect_not_contains "sharing: other rules: not shared" "$d" "shared"
  expect_eq "sharing: other rules: its own program allows 1:11 (kmsg opens)" "open ok" \
    "$(result kmsg-open)"
  # The note now names that program (gone or not); point it at another
  # config's live program instead: the holder's, for a container with other rules.
  printf '%010d\n' "$HOLD_ID" > "$HINT"
  kc share-wrong run --report "$T/share-wrong.json" --bundle "$B2" "$(new_id share-wrong)"
  d=$(layer_field "$T/share-wrong.json" cgroup.devices detail)
  expect_eq "sharing: a note naming another config's live program: the run succeeds" 0 "$RC"
  expect_ne "sharing: a note naming another config's live program is not taken" "$HOLD_ID" \
    "$(prog_id "$d")"
  expect_eq "sharing: ...and 1:11 opens under the container's own program" "open ok" \
    "$(result kmsg-open)"
  # Garbage, then a symlink, where the note is: a load, and nothing written through the link.
  printf 'not an id\n' > "$HINT"
  kc share-garbage run --report "$T/share-garbage.json" --bundle "$B" "$(new_id share-garbage)"
  d=$(layer_field "$T/share-garbage.json" cgroup.devices detail)
  expect_eq "sharing: a garbage note: the run succeeds" 0 "$RC"
  expect_not_contains "sharing: a garbage note: the program is loaded, not shared" "$d" "shared"
  expect_eq "sharing: a garbage note is replaced by the new program's id" \
    "$(printf '%010d' "$(prog_id "$d")")" "$(cat "$HINT")"
  rm -f "$HINT"
  printf 'keep\n' > "$T/hint-target"
  ln -s "$T/hint-target" "$HINT"
  kc share-link run --report "$T/share-link.json" --bundle "$B" "$(new_id share-link)"
  d=$(layer_field "$T/share-link.json" cgroup.devices detail)
  expect_eq "sharing: a symlinked note: the run succeeds" 0 "$RC"
  expect_not_contains "sharing: a symlinked note is not followed (not shared)" "$d" "shared"
  expect_eq "sharing: nothing is written through the symlinked note" keep "$(cat "$T/hint-target")"
  expect_eq "sharing: the host disk stays closed under a loaded program" "open EPERM" \
    "$(result disk-read)"
  rm -f "$HINT"
  kc share-del delete --force "$hold"
  nothing_left "device program sharing"
fi

# ---- a default device also listed in linux.devices ------------------------------
# runc dedups its defaults against linux.devices: one node, with the
# config's mode.  kist does too; the default rule stays (runc 1.1 also drops
# the default rule of such a device, so under a deny-all list its init fails
# "reopening /dev/null": kist keeps /dev/null writable, issue #9).
# dupbundle NAME RESOURCES_DEVICES
dupbundle ()
{
  local b
  cfg_reset
  C_ARGS=$(json_arr sh -c "printf 'nodes: '; ls -a /dev | grep -cxE 'null|zero';
    printf 'null: '; ls -ln /dev/null | awk '{ print \$1, \$3, \$4, \$5, \$6 }';
    printf 'zero: '; ls -ln /dev/zero | awk '{ print \$1, \$3, \$4, \$5, \$6 }';
    printf 'null-write: '; /bin/devprobe write /dev/null;
    printf 'zero-read: '; /bin/devprobe read /dev/zero")
  C_LINUX_EXTRA=', "devices": [
      {"path": "/dev/null", "type": "c", "major": 1, "minor": 3, "fileMode": 438, "uid": 0, "gid": 0},
      {"path": "/dev/zero", "type": "c", "major": 1, "minor": 5, "fileMode": 384, "uid": 0, "gid": 0}],
    "resources": {"devices": '"$2"'}'
  b=$(mkbundle "$1") || return 1
  cp "$DEVPROBE" "$b/rootfs/bin/devprobe"
  printf '%s' "$b"
}
DUP_LABELS="nodes null zero null-write zero-read"
ALLOW_ALL='[{"allow": true, "access": "rwm"}]'
for variant in denyall allowall; do
  if [ $variant = denyall ]; then rules=$PODMAN_RULES; else rules=$ALLOW_ALL; fi
  B=$(dupbundle "dup-$variant" "$rules")
  id=$(new_id "dup-$variant")
  kc "dup-$variant" run --bundle "$B" "$id"
  expect_eq "/dev/null and /dev/zero also in linux.devices ($variant): run exits 0" 0 "$RC"
  eval "DUP_OUT_$variant=\$OUT"
  expect_eq "linux.devices + defaults ($variant): one node each for null and zero" 2 "$(result nodes)"
  expect_eq "linux.devices + defaults ($variant): /dev/zero has the config's mode 0600" \
    "crw------- 0 0 1, 5" "$(result zero)"
  expect_eq "linux.devices + defaults ($variant): /dev/null is crw-rw-rw- 1, 3" \
    "crw-rw-rw- 0 0 1, 3" "$(result null)"
  expect_eq "linux.devices + defaults ($variant): /dev/null takes a write" "write ok" "$(result null-write)"
  expect_eq "linux.devices + defaults ($variant): /dev/zero reads" "read 16" "$(result zero-read)"
done
nothing_left "default devices also in linux.devices"

# ---- podman's deny-all rule list, every probe -------------------------------------
B=$(dbundle podman "$PODMAN_RULES")
id=$(new_id podman)
kc podman run --report "$T/podman.json" --bundle "$B" "$id"
expect_eq "run with podman's deny-all device rules exits 0" 0 "$RC"
KIST_OUT=$OUT
expect_eq "/dev/null takes a write (not EPERM)" "write ok" "$(result null-write)"
expect_eq "/dev/null reads empty" "read 0" "$(result null-read)"
expect_eq "/dev/zero reads" "read 16" "$(result zero-read)"
expect_eq "/dev/zero takes a write" "write ok" "$(result zero-write)"
expect_eq "/dev/full reads" "read 16" "$(result full-read)"
expect_eq "/dev/full: the write reaches the driver (ENOSPC)" "write ENOSPC" "$(result full-write)"
expect_eq "/dev/random reads" "read 16" "$(result random-read)"
expect_eq "/dev/urandom reads" "read 16" "$(result urandom-read)"
expect_eq "/dev/urandom takes a write" "write ok" "$(result urandom-write)"
expect_eq "/dev/tty opens as far as the tty driver (ENXIO: no controlling terminal, not EPERM)" \
  "open ENXIO" "$(result tty-open)"
expect_eq "/dev/ptmx opens" "open ok" "$(result ptmx-open)"
expect_eq "a pty pair (ptmx, then /dev/pts/N) opens and carries data" "pty ok /dev/pts/N" \
  "$(result pty-pair)"
expect_eq "linux.devices /dev/kmsg (1:11, not a default) stays denied" "open EPERM" \
  "$(result kmsg-open)"
expect_eq "linux.devices /dev/kist-free ($FREE_C:0, not a default) stays denied" "open EPERM" \
  "$(result freec-open)"
expect_eq "mknod of a char device is allowed (c *:* m)" "mknod ok" "$(result mknod-c)"
expect_eq "the char node made inside ($FREE_C:1) cannot be opened" "open EPERM" \
  "$(result mknod-c-open)"
expect_eq "mknod of a block device is allowed (b *:* m)" "mknod ok" "$(result mknod-b)"
expect_eq "the block node made inside ($FREE_B:1) cannot be opened" "open EPERM" \
  "$(result mknod-b-open)"
expect_eq "mknod of 1:11 inside is allowed" "mknod ok" "$(result mknod-kmsg)"
expect_eq "the 1:11 node made inside cannot be opened" "open EPERM" "$(result mknod-kmsg-open)"

expect_eq "report: cgroup.devices applied" true "$(layer_field "$T/podman.json" cgroup.devices applied)"
expect_eq "report: cgroup.devices requested the 1 configured rule" "1 rules" \
  "$(layer_field "$T/podman.json" cgroup.devices requested)"
detail=$(layer_field "$T/podman.json" cgroup.devices detail)
expect_contains "report: the detail says runc's default rules were appended" "$detail" \
  "1 configured rule, then runc's 10 default rules (c *:* m, b *:* m, c 1:3 rwm, c 1:8 rwm, c 1:7 rwm, c 5:0 rwm, c 1:5 rwm, c 1:9 rwm, c 136:* rwm, c 5:2 rwm)"
expect_contains "report: the detail says the kernel's copy was read back" "$detail" \
  "read back: the kernel's copy is this program"
nothing_left "podman's rule list"

# ---- configured rules for default devices, and a configured allow ---------------
# Deny rules for null and full come before the defaults: the defaults win.
# The allow of FREE_C:0 is the config's own: that node opens (ENXIO: no driver).
B=$(dbundle rules '[{"allow": false, "access": "rwm"},
  {"allow": false, "type": "c", "major": 1, "minor": 3, "access": "rwm"},
  {"allow": false, "type": "c", "major": 1, "minor": 7, "access": "w"},
  {"allow": true, "type": "c", "major": '"$FREE_C"', "minor": 0, "access": "rw"}]')
id=$(new_id rules)
kc rules run --report "$T/rules.json" --bundle "$B" "$id"
expect_eq "run with deny rules for null and full exits 0" 0 "$RC"
KIST_RULES_OUT=$OUT
expect_eq "a configured deny of c 1:3: /dev/null still takes a write (the default wins)" \
  "write ok" "$(result null-write)"
expect_eq "a configured deny of c 1:7 w: /dev/full still reaches the driver (ENOSPC)" \
  "write ENOSPC" "$(result full-write)"
expect_eq "a configured allow of c $FREE_C:0 rw: the node opens as far as the driver (ENXIO)" \
  "open ENXIO" "$(result freec-open)"
expect_eq "the configured allow does not cover $FREE_C:1" "open EPERM" "$(result mknod-c-open)"
expect_eq "/dev/kmsg is still denied" "open EPERM" "$(result kmsg-open)"
expect_contains "report: 4 configured rules, then the defaults" \
  "$(layer_field "$T/rules.json" cgroup.devices detail)" "4 configured rules, then runc's 10 default rules"
nothing_left "configured rules for default devices"

# ---- kist update with the deny-all list: the defaults stay -------------------------
cfg_reset
C_ARGS='["sleep", "3144"]'
C_LINUX_EXTRA=', "devices": [{"path": "/dev/kmsg", "type": "c", "major": 1, "minor": 11}],
  "resources": {"devices": [{"allow": true, "access": "rwm"}]}'
B=$(mkbundle upd)
cp "$DEVPROBE" "$B/rootfs/bin/devprobe"
id=$(new_id upd)
kc upd_create create --bundle "$B" "$id"
kc upd_start start "$id"
expect_eq "start of the container for update exits 0" 0 "$RC"
kc upd_exec0 exec "$id" /bin/devprobe wopen /dev/kmsg
expect_eq "before the update (allow all) /dev/kmsg opens" "open ok" "$OUT"
printf '{"devices": %s}\n' "$PODMAN_RULES" > "$T/upd.json"
kc upd update --resources "$T/upd.json" "$id"
expect_eq "update --resources with the deny-all device list exits 0" 0 "$RC"
kc upd_exec exec "$id" sh -c '/bin/devprobe write /dev/null; /bin/devprobe wopen /dev/kmsg'
expect_eq "after the update /dev/null takes a write, /dev/kmsg is denied" \
  "write ok"$'\n'"open EPERM" "$OUT"
kist report "$id" > "$T/upd_report.json" 2> /dev/null
expect_contains "the stored report's cgroup.devices entry (from update) has the defaults" \
  "$(layer_field "$T/upd_report.json" cgroup.devices detail)" "1 configured rule, then runc's 10 default rules"
kc upd_del delete --force "$id"
expect_eq "delete --force exits 0" 0 "$RC"
nothing_left "update with the deny-all device list"

# ---- rootless in a delegated cgroup: no device program, and no failure -----------
# kist as nobody, in a cgroup2 subtree delegated to nobody: its scope is
# made, but only root in the initial user namespace can load a device
# program.  As runc ignores device cgroup errors of rootless containers,
# the defaults are recorded as not requested with the reason, and the run
# succeeds (the user namespace keeps device nodes from being made).
if nobody_ok "rootless device defaults in a delegated cgroup"; then
  DELEG=$CG2/$PREFIX-deleg
  mkdir "$DELEG" && chown -R "$NOBODY_UID:$NOBODY_GID" "$DELEG"
  RB=$T/rootless-dev
  nobody_bundle "$RB"
  nobody_dir "$XDG" 0700
  (cd "$RB" && XDG_RUNTIME_DIR=$XDG "${AS_NOBODY[@]}" "$KIST" spec --rootless) > /dev/null 2>&1
  rootless_config "$RB/config.json" '["sh", "-c", "if echo x > /dev/null; then echo null-ok; fi"]' > "$T/rl.json"
  cp "$T/rl.json" "$RB/config.json"
  rid=$(new_id rldev)
  nobody_dir "$T/rlrep" 0777
  (cd "$RB" && bash -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' bash "$DELEG" \
    env XDG_RUNTIME_DIR="$XDG" timeout -k 5 "$KIST_IT_TIMEOUT" "${AS_NOBODY[@]}" "$KIST" \
    run --report "$T/rlrep/r.json" "$rid") > "$T/rl.out" 2> "$T/rl.err" < /dev/null
  RC=$?
  expect_eq "rootless run in a delegated cgroup exits 0" 0 "$RC"
  [ "$RC" = 0 ] || cat "$T/rl.err"
  expect_eq "rootless: /dev/null takes a write" null-ok "$(cat "$T/rl.out")"
  expect_contains "rootless: the scope was made in the delegated cgroup" \
    "$(layer_field "$T/rlrep/r.json" cgroup detail)" "$DELEG/"
  expect_eq "rootless: cgroup.devices is recorded as not requested" false \
    "$(layer_field "$T/rlrep/r.json" cgroup.devices requested)"
  # (the load is the first bpf call on a scope kist has just made: no
  # query for programs to replace)
  expect_contains "rootless: cgroup.devices says why the defaults were not installed" \
    "$(layer_field "$T/rlrep/r.json" cgroup.devices detail)" \
    "not installed: load the device program (BPF_PROG_TYPE_CGROUP_DEVICE, "
  expect_contains "rootless: cgroup.devices names the error and its cause" \
    "$(layer_field "$T/rlrep/r.json" cgroup.devices detail)" \
    "Operation not permitted (kist is not root in the initial user namespace"
  expect_eq "rootless: limits applied (nothing requested failed)" true "$(jget "$T/rlrep/r.json" limits.applied)"
  rmdir "$DELEG/kist" 2> /dev/null
  rmdir "$DELEG" 2> /dev/null
  expect_true "rootless: the delegated cgroup holds nothing afterwards (removed)" test ! -d "$DELEG"
  nothing_left "rootless device defaults"
fi

# ---- runc on the same bundles ----------------------------------------------------
if ! command -v runc > /dev/null; then
  skip "the same probes under runc" "runc is not installed (apt-get install runc)"
  exit 0
fi
# runc_run TAG BUNDLE: runc run of BUNDLE in the cgroup2 view; sets RC, OUT.
runc_run ()
{
  local rid="$PREFIX-runc-$1"
  RUNC_IDS+=("$rid")
  LAST=$T/runc-$1
  printf 'runc --root %s run --bundle %s %s\n' "$RUNC_ROOT" "$2" "$rid" > "$LAST.cmd"
  in_cg2_view runc --root "$RUNC_ROOT" run --bundle "$2" "$rid" > "$LAST.out" 2> "$LAST.err"
  RC=$?
  OUT=$(cat "$LAST.out")
  in_cg2_view runc --root "$RUNC_ROOT" delete --force "$rid" > /dev/null 2>&1
}
# Each bundle again, fresh: runc gets the same config and rootfs as kist did.
for tag in podman rules; do
  if [ "$tag" = podman ]; then
    B=$(dbundle "runc-$tag" "$PODMAN_RULES")
    kout=$KIST_OUT
  else
    B=$(dbundle "runc-$tag" '[{"allow": false, "access": "rwm"},
      {"allow": false, "type": "c", "major": 1, "minor": 3, "access": "rwm"},
      {"allow": false, "type": "c", "major": 1, "minor": 7, "access": "w"},
      {"allow": true, "type": "c", "major": '"$FREE_C"', "minor": 0, "access": "rw"}]')
    kout=$KIST_RULES_OUT
  fi
  runc_run "$tag" "$B"
  if [ "$RC" != 0 ]; then
    fail "runc run of the $tag bundle exits 0" "rc=$RC" "$(tail -c 1500 "$LAST.err")"
    continue
  fi
  ok "runc run of the $tag bundle exits 0"
  for p in "${PROBES[@]}"; do
    label=${p%%|*}
    expect_eq "$tag: kist and runc agree on $label" "$(result "$label" "$OUT")" \
      "$(result "$label" "$kout")"
  done
done
if [ -n "$DISK" ]; then
  for variant in none empty; do
    if [ $variant = none ]; then extra=; else extra=', "resources": {}'; fi
    B=$(defbundle "runc-def-$variant" "$extra")
    runc_run "def-$variant" "$B"
    if [ "$RC" != 0 ]; then
      fail "runc run of the no-device-rules ($variant) bundle exits 0" "rc=$RC" "$(tail -c 1500 "$LAST.err")"
      continue
    fi
    eval "kout=\$DEF_OUT_$variant"
    for label in $DEF_LABELS; do
      expect_eq "no device rules ($variant): kist and runc agree on $label" "$(result "$label" "$OUT")" \
        "$(result "$label" "$kout")"
    done
  done
fi
for variant in allowall denyall; do
  if [ $variant = denyall ]; then rules=$PODMAN_RULES; else rules=$ALLOW_ALL; fi
  B=$(dupbundle "runc-dup-$variant" "$rules")
  runc_run "dup-$variant" "$B"
  if [ $variant = denyall ] && [ "$RC" != 0 ] && grep -q "reopening /dev/null" "$LAST.err"; then
    # runc 1.1 drops the default rule of a device listed in linux.devices.
    ok "linux.devices + defaults (denyall): runc fails reopening /dev/null (kist keeps it writable)"
    continue
  fi
  if [ "$RC" != 0 ]; then
    fail "runc run of the dup-$variant bundle exits 0" "rc=$RC" "$(tail -c 1500 "$LAST.err")"
    continue
  fi
  eval "kout=\$DUP_OUT_$variant"
  for label in $DUP_LABELS; do
    expect_eq "linux.devices + defaults ($variant): kist and runc agree on $label" \
      "$(result "$label" "$OUT")" "$(result "$label" "$kout")"
  done
done
nothing_left "runc on the same bundles"

# ---- the same path twice in linux.devices: the first entry is kept (as runc) ------------
cfg_reset
C_LINUX_EXTRA=', "devices": [
    {"path": "/dev/kist-twice", "type": "c", "major": 1, "minor": 3, "fileMode": 432, "uid": 0, "gid": 0},
    {"path": "/dev/kist-twice", "type": "c", "major": 1, "minor": 5, "fileMode": 420, "uid": 0, "gid": 0}]'
sh_args 'stat -c "%a %t:%T" /dev/kist-twice'
B=$(mkbundle twice)
kc twice run --bundle "$B" --report "$T/twice.json" "$(new_id twice)"
expect_eq "a path twice in linux.devices: run exits 0" 0 "$RC"
expect_eq "a path twice in linux.devices: the node is the first entry's (mode 660, 1:3)" "660 1:3" "$OUT"
expect_contains "a path twice in linux.devices: the dev entry says the first was kept" \
  "$(layer_field "$T/twice.json" dev detail)" "the first entry kept"
nothing_left "a path twice in linux.devices"
