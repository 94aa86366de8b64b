#!/bin/bash
# s_dev.sh: masked paths over a swapped or missing /dev/null (issue #8;
# CVE-2025-31133 class).  kist masks a file by bind-mounting the container's
# /dev/null over it.  Whatever the image (or a process sharing the /dev
# volume) puts at /dev/null - a symlink to /proc/sys/kernel/core_pattern, a
# regular file, nothing, a directory - a masked path that the container can
# see must be the null device (char 1:3), /proc/sysrq-trigger must not be
# writable, and no host file may change.  A start may instead be refused
# (exit 125, naming /dev/null); it may never run with a path unmasked.
. "$(dirname "$0")/../integration/lib.sh"

# A masked file this kernel has (from cfg_reset's list; /proc/kcore is not
# always there).
MASKED_FILE=
for f in /proc/kcore /proc/keys /proc/timer_list; do
  if [ -e "$f" ]; then MASKED_FILE=$f; break; fi
done
if [ -z "$MASKED_FILE" ]; then
  skip "masked files over /dev/null" "this kernel has none of /proc/kcore /proc/keys /proc/timer_list"
  exit 0
fi
PROBE='
echo "masked=$(stat -c "%F %t:%T" '"$MASKED_FILE"' 2>&1)"
echo "masked_read=$(wc -c < '"$MASKED_FILE"' 2>&1)"
echo "null=$(stat -c "%F %t:%T" /dev/null 2>&1)"
if e=$( (: > /proc/sysrq-trigger) 2>&1 ); then echo sysrq=writable; else echo "sysrq=refused"; fi
echo "sysrq_err=$e"
'
NULLDEV="character special file 1:3"
# (Only checked where the kernel has it; opening it for writing writes nothing.)
SYSRQ=
if [ -e /proc/sysrq-trigger ]; then
  SYSRQ=1
else
  skip "/proc/sysrq-trigger is not writable" "this kernel has no /proc/sysrq-trigger"
fi
CORE_BEFORE=$(cat /proc/sys/kernel/core_pattern)

val ()
{
  sed -n "s/^$1=//p" <<< "$OUT" | head -n 1
}

# without_dev_tmpfs: config.json of the C_* variables without the /dev tmpfs
# (the image's own /dev is used; devpts, shm and mqueue are mounted in it).
without_dev_tmpfs ()
{
  mkconfig | awk '/"destination": "\/dev", "type": "tmpfs"/ { getline; next } { print }'
}

# masked_ok WHAT: the last run started and everything was masked, or it was
# refused with 125 naming /dev/null (when REFUSE_OK=1).
masked_ok ()
{
  if [ "$RC" = 125 ] && [ "${REFUSE_OK:-0}" = 1 ]; then
    expect_match "$1: refused, naming /dev/null" "$ERR" "/dev/null"
  else
    expect_eq "$1: runs" 0 "$RC"
    expect_eq "$1: $MASKED_FILE is the null device" "$NULLDEV" "$(val masked)"
    expect_eq "$1: reading $MASKED_FILE gives nothing" 0 "$(val masked_read)"
    expect_eq "$1: /dev/null is the null device" "$NULLDEV" "$(val null)"
    if [ -n "$SYSRQ" ]; then
      expect_eq "$1: /proc/sysrq-trigger is not writable" refused "$(val sysrq)"
    fi
  fi
  expect_eq "$1: the host's core_pattern is unchanged" "$CORE_BEFORE" \
    "$(cat /proc/sys/kernel/core_pattern)"
  nothing_left "$1"
}

run_one ()
{
  kc "$1" run --bundle "$2" "$(new_id "$1")"
}

# ---- the image's /dev/null ----------------------------------------------------------
# With the /dev tmpfs the image's /dev is covered; without it, kist's dev
# layer must replace whatever the image has at /dev/null.
for dev in tmpfs image; do
  for kind in symlink file missing; do
    cfg_reset
    sh_args "$PROBE"
    B=$(mkbundle "null-$dev-$kind")
    [ "$dev" = image ] && without_dev_tmpfs > "$B/config.json"
    case $kind in
      symlink) ln -s /proc/sys/kernel/core_pattern "$B/rootfs/dev/null" ;;
      file) echo not-null > "$B/rootfs/dev/null" ;;
      missing) rm -f "$B/rootfs/dev/null" ;;
    esac
    run_one "null-$dev-$kind" "$B"
    masked_ok "/dev $dev, the image's /dev/null $kind"
  done
done

# A directory at /dev/null cannot be replaced: refused, by the dev layer.
cfg_reset
sh_args "$PROBE"
B=$(mkbundle null-dir)
without_dev_tmpfs > "$B/config.json"
mkdir "$B/rootfs/dev/null"
run_one null-dir "$B"
REFUSE_OK=1 masked_ok "the image's /dev/null a directory"
expect_eq "the image's /dev/null a directory: refused" 125 "$RC"

# ---- /dev a volume shared with an attacker --------------------------------------------
# /dev is a bind of a host directory (config.json is trusted), which another
# container could change (kist creates no nodes there).  Its null is not the
# null device: kist must refuse rather than bind it over the masked paths.
DEVVOL=$T/devvol
mkdir -p "$DEVVOL"
echo decoy > "$T/decoy"
dev_volume_config ()
{
  cfg_reset
  sh_args "$PROBE"
  mkconfig | awk -v vol="$DEVVOL" '
    /"destination": "\/dev", "type": "tmpfs"/ {
      getline
      printf "    {\"destination\": \"/dev\", \"type\": \"bind\", \"source\": \"%s\", \"options\": [\"rbind\", \"rw\"]},\n", vol
      next
    }
    /"destination": "\/dev\/(pts|shm|mqueue)"/ { getline; next }
    { print }'
}
for kind in symlink file; do
  rm -f "$DEVVOL/null"
  case $kind in
    symlink) ln -s /proc/sys/kernel/core_pattern "$DEVVOL/null" ;;
    file) ln "$T/decoy" "$DEVVOL/null" ;;
  esac
  B=$(mkbundle "vol-$kind")
  dev_volume_config > "$B/config.json"
  run_one "vol-$kind" "$B"
  REFUSE_OK=1 masked_ok "/dev a volume whose null is a $kind"
  expect_eq "/dev a volume whose null is a $kind: refused" 125 "$RC"
done
expect_eq "the decoy file behind the volume's null is unchanged" decoy "$(cat "$T/decoy")"

# The same volume with a real null device, swapped over and over (rename,
# atomic) with a symlink to core_pattern and a hard link of the decoy, while
# 200 containers start: each runs with everything masked or is refused.  (The
# probe itself never writes to /dev/null: here it may be the decoy.)
rm -f "$DEVVOL/null"
mknod -m 0666 "$DEVVOL/null" c 1 3
B=$(mkbundle vol-race)
dev_volume_config > "$B/config.json"
(
  cd "$DEVVOL" || exit 1
  end=$((SECONDS + 120))
  while [ $SECONDS -lt $end ]; do
    ln -sfn /proc/sys/kernel/core_pattern n.lnk && mv -T n.lnk null
    mknod -m 0666 n.dev c 1 3 && mv -T n.dev null
    ln -f "$T/decoy" n.reg && mv -T n.reg null
    mknod -m 0666 n.dev c 1 3 && mv -T n.dev null
  done
) &
SWAPPER=$!
test_cleanup ()
{
  kill -KILL "$SWAPPER" 2> /dev/null
  wait "$SWAPPER" 2> /dev/null
}
STARTS=${KIST_SEC_STARTS:-200}
n_ok=0 n_ref=0 bad=
for ((i = 0; i < STARTS; i++)); do
  kc vol-race run --bundle "$B" "$PREFIX-volrace"
  if [ "$RC" = 125 ] && [[ "$ERR" == */dev/null* ]]; then
    n_ref=$((n_ref + 1))
  elif [ "$RC" = 0 ] && [ "$(val masked)" == "$NULLDEV" ] && [ "$(val masked_read)" = 0 ] \
         && [ "$(val sysrq)" = refused ]; then
    n_ok=$((n_ok + 1))
  else
    bad+="start $i: exit $RC; $OUT; $(tail -c 300 "$LAST.err")"$'\n'
    kist delete --force "$PREFIX-volrace" > /dev/null 2>&1
  fi
done
IDS+=("$PREFIX-volrace")
test_cleanup
if [ -z "$bad" ]; then
  ok "swapped /dev/null: $STARTS starts, each masked by the null device or refused (ok=$n_ok refused=$n_ref)"
else
  fail "swapped /dev/null: $STARTS starts, each masked by the null device or refused" "$bad"
fi
if [ "$n_ok" -gt 0 ] && [ "$n_ref" -gt 0 ]; then
  ok "swapped /dev/null: the race hit both a real null and a fake one"
else
  skip "swapped /dev/null: the race hit both a real null and a fake one" "ok=$n_ok refused=$n_ref"
fi
expect_eq "swapped /dev/null: the host's core_pattern is unchanged" "$CORE_BEFORE" \
  "$(cat /proc/sys/kernel/core_pattern)"
expect_eq "swapped /dev/null: the decoy file is unchanged" decoy "$(cat "$T/decoy")"
nothing_left "swapped /dev/null"
