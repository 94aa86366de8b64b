#!/bin/bash
# f_disk.sh: a full disk under the state root (issue #8).  The state root is
# on a small tmpfs (mounted in this test's own mount namespace: run.sh runs
# each test file under unshare -m) that is filled up to leave 0, 1, 2, ...
# pages free: create either succeeds (and delete then works) or fails with
# a clear error naming the cause, and leaves nothing half-written: no state
# dir, no temporary file, no cgroup, no process.
. "$(dirname "$0")/../integration/lib.sh"

sh_args "sleep 1000"
B=$(mkbundle b)

FULL=$T/full
mkdir -p "$FULL"
if ! mount -t tmpfs -o size=64k,mode=0755 kistfull "$FULL"; then
  skip "full disk under the state root" "cannot mount a tmpfs in the test's mount namespace"
  exit 0
fi
test_cleanup ()
{
  umount "$FULL" 2> /dev/null
}
SROOT=$FULL/state
mkdir -m 0700 "$SROOT"
PAGES=$(($(stat -f -c '%b' "$FULL") * $(stat -f -c '%S' "$FULL") / 4096))

# kd TAG ARGS...: kc with the state root on the full tmpfs.
kd ()
{
  ROOT=$SROOT kc "$@"
}

# fill FREE: fill the tmpfs so that FREE pages are left.
fill ()
{
  rm -f "$FULL/fill"
  dd if=/dev/zero of="$FULL/fill" bs=4096 count=$((PAGES - $1)) 2> /dev/null
  # Whatever dd could not place: the disk is full then.
  return 0
}

ID=$(new_id d)
outcomes=""
for free in 0 1 2 3 4 6 8; do
  fill "$free"
  kd c$free create --bundle "$B" "$ID"
  if [ "$RC" = 0 ]; then
    outcomes+=" $free:created"
    kd d$free delete --force "$ID"
    expect_eq "with $free pages free: create succeeded, and delete then works" 0 "$RC"
  else
    outcomes+=" $free:refused"
    expect_contains "with $free pages free: create fails; the error names the cause" "$ERR" \
      "No space left on device"
    expect_contains "with $free pages free: ... and the state root" "$ERR" "$SROOT"
  fi
  expect_eq "with $free pages free: nothing half-written in the state root" "" \
    "$(ls -A "$SROOT" | grep -vx -e '~seccomp-cache' -e '~device-program')"
  # The note of the device program, if it was written, is whole: one id.
  if [ -e "$SROOT/~device-program" ]; then
    expect_match "with $free pages free: the device program's note is one whole id" \
      "$(cat "$SROOT/~device-program")" '^[0-9]{10}$'
  fi
  expect_eq "with $free pages free: no temporary file in the seccomp cache" "" \
    "$(find "$SROOT" -name '.*.tmp.*' 2> /dev/null)"
  expect_eq "with $free pages free: no process, cgroup or mount left" "" \
    "$(leftover_pids)$(leftover_cgroups)"
done
expect_match "a completely full state root refuses create" "$outcomes" " 0:refused"
echo "      (outcomes by free pages:$outcomes)"

# A full disk must not break the commands that only read (list, state) nor
# gc of an empty root.
fill 0
kd list list
expect_eq "list on a full state root: exit 0" 0 "$RC"
kd gc gc
expect_eq "gc on a full state root: exit 0" 0 "$RC"

rm -f "$FULL/fill"
umount "$FULL"
nothing_left "full disk"
