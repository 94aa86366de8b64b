#!/bin/bash
# s_procfs.sh: kist writes to /proc (sysctls, oom_score_adj) and reads
# /proc/self/status only through the real procfs mounted at /proc, never
# through a fake tree or a file a mount put in the way (issue #8):
#   CVE-2019-16884  a volume mounted over /proc with a fake procfs-looking tree;
#   CVE-2025-52881  writes redirected by a bind of another (procfs) file over
#                   the target, or by a symlink where the target should be;
#   CVE-2025-31133  masking with a /dev/null the image replaced.
# The attacker is the image and the volumes' contents; config.json is trusted.
. "$(dirname "$0")/../integration/lib.sh"

# tree_sum DIR: one checksum of every file's path, type and content under DIR
# (symlinks by their target, not followed).
tree_sum ()
{
  (cd "$1" && find . -printf '%p %y %l\n' | sort
   find . -type f -print0 | sort -z | xargs -0r md5sum) | md5sum
}

# real_or_refused WHAT WANT: kist refused the last run (exit 125), or it
# printed WANT.
real_or_refused ()
{
  if [ "$RC" = 125 ]; then
    ok "$1"
  else
    expect_eq "$1" "$2" "$(echo $OUT)"
  fi
}
# krun NAME: a bundle NAME from the C_* variables, run as container NAME
# with the report in $T/NAME.json (RC, OUT, ERR as kc sets them).
krun ()
{
  local b id
  b=$(mkbundle "$1")
  id=$(new_id "$1")
  kc "$1" run --report "$T/$1.json" --bundle "$b" "$id"
}

# drop_dev_mounts BUNDLE: its config.json without the /dev tmpfs and the
# mounts under it, so that /dev is the image's own (or a volume's).
drop_dev_mounts ()
{
  awk '/"destination": "\/dev", "type": "tmpfs"/ { skip = 2 } skip > 0 { skip--; next }
       /"destination": "\/dev\/(pts|shm|mqueue)"/ { skip = 1; next } { print }' \
    "$1/config.json" > "$1/config.tmp" && mv "$1/config.tmp" "$1/config.json"
}

# A fake procfs tree, as an image or a volume would carry it.
fake_proc ()
{
  local d=$1
  mkdir -p "$d/sys/net/ipv4" "$d/sys/kernel" "$d/self/attr" "$d/1/attr"
  echo 0 > "$d/sys/net/ipv4/ip_forward"
  echo fake > "$d/sys/kernel/hostname"
  echo 0 > "$d/self/oom_score_adj"
  echo 0 > "$d/1/oom_score_adj"
  printf 'Name:\tfake\nSeccomp:\t2\nNoNewPrivs:\t1\nCapEff:\t0000000000000000\n' > "$d/self/status"
  cp "$d/self/status" "$d/1/status"
  echo unconfined > "$d/self/attr/current"
  chmod -R a+rwX "$d"
}

SYSCTL=', "sysctl": {"net.ipv4.ip_forward": "1"}'
OOM=', "oomScoreAdj": 100'

# 1. CVE-2019-16884: a volume with a fake procfs tree mounted over /proc.
for what in ${S_PROCFS_ONLY:-sysctl oom status}; do
  cfg_reset
  V=$T/vol-fakeproc-$what
  fake_proc "$V"
  before=$(tree_sum "$V")
  case $what in
    sysctl) C_LINUX_EXTRA=$SYSCTL ;;
    oom) C_PROCESS_EXTRA=$OOM ;;
    status) ;;
  esac
  C_MOUNTS_EXTRA=", $(bind_json "$V" /proc)"
  with_marker
  sh_args 'touch /mark/ran-fakeproc'
  krun "fakeproc-$what"
  if [ "$what" = oom ]; then
    # kist may write oom_score_adj before the mounts (then on the real file)
    # or refuse; it must never write the fake one (checked below).
    if [ "$RC" = 0 ]; then
      expect_eq "fake /proc volume (oom): the report says 100 was read back" \
        "/proc/self/oom_score_adj reads back 100" \
        "$(layer_field "$T/fakeproc-$what.json" oom_score_adj detail)"
    else
      expect_contains "fake /proc volume (oom): the error says /proc is not procfs" "$ERR" \
        "not on procfs"
    fi
  elif [ "$what" = status ]; then
    # Nothing to write: the run goes on, and the read-backs do not believe
    # the fake status (Seccomp 2, NoNewPrivs 1, no capabilities).
    expect_eq "fake /proc volume (status): the run exits 0" 0 "$RC"
    expect_contains "fake /proc volume (status): capabilities read back without it" \
      "$(layer_field "$T/fakeproc-$what.json" capabilities detail)" "(no procfs at /proc)"
    expect_contains "fake /proc volume (status): no_new_privileges read back without it" \
      "$(layer_field "$T/fakeproc-$what.json" no_new_privileges detail)" "(no procfs at /proc)"
  else
    expect_ne "fake /proc volume ($what): the run is refused" 0 "$RC"
    expect_contains "fake /proc volume ($what): the error says /proc is not procfs" "$ERR" \
      "not on procfs"
    expect_true "fake /proc volume ($what): the container never ran" \
      test ! -e "$MARKDIR/ran-fakeproc"
  fi
  expect_eq "fake /proc volume ($what): the fake files are unchanged" "$before" "$(tree_sum "$V")"
  rm -f "$MARKDIR/ran-fakeproc"
done

# 2. A volume's plain file bound over the sysctl file: never written.
cfg_reset
V=$T/vol-plain
mkdir -p "$V"
echo 0 > "$V/ipf"
C_LINUX_EXTRA=$SYSCTL
C_MOUNTS_EXTRA=", $(bind_json "$V/ipf" /proc/sys/net/ipv4/ip_forward)"
krun plainbind
expect_ne "plain file bound over /proc/sys/net/ipv4/ip_forward: the run is refused" 0 "$RC"
expect_eq "plain file bound over /proc/sys/net/ipv4/ip_forward: the file still reads 0" 0 \
  "$(cat "$V/ipf")"

# 3. CVE-2025-52881: the volume's file became a symlink to another procfs file
# (/proc/self/comm of the process that opens it, a harmless target), so the
# bind puts a procfs file over /proc/sys/net/ipv4/ip_forward.  statfs says
# procfs; the write must still not land there.
cfg_reset
V=$T/vol-redirect
mkdir -p "$V"
ln -s /proc/self/comm "$V/ipf"
C_LINUX_EXTRA=$SYSCTL
C_MOUNTS_EXTRA=", $(bind_json "$V/ipf" /proc/sys/net/ipv4/ip_forward)"
krun procbind
expect_ne "procfs file bound over a sysctl file: the run is refused" 0 "$RC"
expect_contains "procfs file bound over a sysctl file: the error names the mount in the way" \
  "$ERR" "a mount is in the way"
expect_ne "procfs file bound over a sysctl file: the report does not say sysctl applied" true \
  "$(layer_field "$T/procbind.json" sysctl applied)"

# The same for oom_score_adj: a procfs file bound over the init's
# /proc/1/oom_score_adj.  The write must land on the real file (read by a
# child of the init, which inherits the value, at its own /proc/self, not
# covered by the bind) or the run must be refused.
cfg_reset
C_PROCESS_EXTRA=$OOM
C_MOUNTS_EXTRA=", $(bind_json "$V/ipf" /proc/1/oom_score_adj)"
sh_args 'cat /proc/self/oom_score_adj; true'
krun oombind
real_or_refused "procfs file bound over /proc/1/oom_score_adj: the write lands on the real file" \
  100

# 4. Symlinks where the targets should be: a volume over /proc/sys/net/ipv4
# whose ip_forward is a symlink to another /proc file, and one over
# /proc/1 (the init's /proc/self) whose oom_score_adj is a symlink to a sysctl.
cfg_reset
V=$T/vol-symlinks
mkdir -p "$V/ipv4" "$V/self"
ln -s /proc/self/comm "$V/ipv4/ip_forward"
ln -s /proc/sys/net/ipv4/ip_forward "$V/self/oom_score_adj"
before=$(tree_sum "$V")
C_LINUX_EXTRA=$SYSCTL
C_MOUNTS_EXTRA=", $(bind_json "$V/ipv4" /proc/sys/net/ipv4)"
krun symsysctl
expect_ne "symlink at /proc/sys/net/ipv4/ip_forward: the run is refused" 0 "$RC"
expect_ne "symlink at /proc/sys/net/ipv4/ip_forward: the report does not say sysctl applied" \
  true "$(layer_field "$T/symsysctl.json" sysctl applied)"

cfg_reset
C_PROCESS_EXTRA=', "oomScoreAdj": 1'
# (Without /proc/sys read-only, a redirected write would succeed.)
C_READONLY='["/proc/bus", "/proc/fs", "/proc/irq", "/proc/sysrq-trigger"]'
C_MOUNTS_EXTRA=", $(bind_json "$V/self" /proc/1)"
sh_args 'cat /proc/sys/net/ipv4/ip_forward /proc/self/oom_score_adj; true'
krun symoom
real_or_refused "symlink at /proc/1/oom_score_adj: the write lands on the real file, not the sysctl" \
  "0 1"
expect_eq "the symlink volume is unchanged" "$before" "$(tree_sum "$V")"

# 5. The real procfs still works: the sysctl and oom_score_adj land on it.
cfg_reset
C_LINUX_EXTRA=$SYSCTL
C_PROCESS_EXTRA=$OOM
sh_args 'cat /proc/sys/net/ipv4/ip_forward /proc/self/oom_score_adj; true'
krun real
expect_eq "real procfs: the run exits 0" 0 "$RC"
expect_eq "real procfs: ip_forward 1 and oom_score_adj 100 inside" "1 100" "$(echo $OUT)"
expect_eq "real procfs: the report says sysctl applied" true \
  "$(layer_field "$T/real.json" sysctl applied)"
expect_eq "real procfs: the report says oom_score_adj applied" true \
  "$(layer_field "$T/real.json" oom_score_adj applied)"

# 6. CVE-2025-31133: masking uses a verified null device even when the
# image's /dev/null is a regular file (with the /dev tmpfs of the config, and
# without it, on the image's own /dev).
# The masked file: the first of these that exists on this kernel.
MASKED_FILE=
for f in /proc/keys /proc/kcore /proc/timer_list; do
  [ -e "$f" ] && { MASKED_FILE=$f; break; }
done
if [ -z "$MASKED_FILE" ]; then
  skip "masked file is the null device" "none of /proc/keys, /proc/kcore, /proc/timer_list exists"
else
  for variant in devtmpfs imagedev; do
    cfg_reset
    sh_args "stat -c '%F %t:%T' $MASKED_FILE; cat $MASKED_FILE | wc -c"
    B=$(mkbundle "null-$variant")
    rm -f "$B/rootfs/dev/null"
    mkdir -p "$B/rootfs/dev"
    echo 'not a device' > "$B/rootfs/dev/null"
    if [ "$variant" = imagedev ]; then
      # The config without its /dev tmpfs (and what needs it): the image's /dev.
      drop_dev_mounts "$B"
    fi
    id=$(new_id "null-$variant")
    kc "null-$variant" run --bundle "$B" "$id"
    expect_eq "image /dev/null is a regular file ($variant): the run exits 0" 0 "$RC"
    expect_eq "image /dev/null is a regular file ($variant): masked $MASKED_FILE is char 1:3, empty" \
      "character special file 1:3 0" "$(echo $OUT)"
  done

  # /dev bound from a volume whose null is a regular file: kist creates no
  # nodes there, so masking has no null device and must fail closed.
  cfg_reset
  V=$T/vol-dev
  mkdir -p "$V"
  echo 'not a device' > "$V/null"
  C_MOUNTS_EXTRA=", $(bind_json "$V" /dev)"
  with_marker
  sh_args 'touch /mark/ran-voldev'
  B=$(mkbundle voldev)
  drop_dev_mounts "$B"
  id=$(new_id voldev)
  kc voldev run --bundle "$B" "$id"
  expect_ne "/dev volume with a regular file as null: the run is refused" 0 "$RC"
  expect_contains "/dev volume with a regular file as null: the error names masked_paths" "$ERR" \
    "masked_paths"
  expect_true "/dev volume with a regular file as null: the container never ran" \
    test ! -e "$MARKDIR/ran-voldev"
  expect_eq "/dev volume: its null file is unchanged" "not a device" "$(cat "$V/null")"
fi

nothing_left "procfs"
