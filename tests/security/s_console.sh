#!/bin/bash
# s_console.sh: /dev/console and /dev/pts/N from the image (runc
# CVE-2025-52565, crun CVE-2026-88264: a swapped /dev/pts/N or /dev/console
# made the runtime bind or chown a host file as the console).  kist has no
# terminal support yet (a config that asks for one is refused), so it never
# binds a console: this test holds that line until terminals exist, then
# grows into the full race with terminal support (issue #9).  The host canary
# must stay unchanged whatever the image's /dev holds.
. "$(dirname "$0")/../integration/lib.sh"

CANARY=$T/canary
echo canary > "$CANARY"
chmod 0600 "$CANARY"
SUM=$(stat -c '%s %a %u:%g %Y' "$CANARY"; cat "$CANARY")

# console_rootfs R: the image's /dev/console and /dev/pts/0 point at the
# host canary (absolute, and up out of the root), /dev/ptmx at it too.
console_rootfs ()
{
  local r=$1
  mkdir -p "$r/dev/pts"
  ln -sfn "$CANARY" "$r/dev/console"
  ln -sfn "../../../../../../../../..$CANARY" "$r/dev/pts/0"
  ln -sfn "$CANARY" "$r/dev/ptmx"
}

canary_same ()
{
  expect_eq "$1: the host canary is unchanged" "$SUM" \
    "$(stat -c '%s %a %u:%g %Y' "$CANARY"; cat "$CANARY")"
}

# 1. The default /dev tmpfs: the image's entries are covered; kist makes no
#    console without a terminal.
cfg_reset
sh_args 'if [ -e /dev/console ]; then echo console; else echo noconsole; fi;
  echo pwned > /dev/pts/0 2> /dev/null; true'
B=$(mkbundle tmpfsdev)
console_rootfs "$B/rootfs"
id=$(new_id tmpfsdev)
kc run run --bundle "$B" "$id"
expect_eq "/dev tmpfs: run exits 0" 0 "$RC"
expect_eq "/dev tmpfs: no /dev/console without a terminal (as runc)" noconsole "$OUT"
canary_same "/dev tmpfs"

# 2. The image's own /dev (no tmpfs): the symlinks stay inside the root; the
#    container's writes through them cannot reach the host.
cfg_reset
sh_args 'echo pwned > /dev/console 2> /dev/null; echo pwned > /dev/pts/0 2> /dev/null;
  echo pwned > /dev/ptmx 2> /dev/null; echo done'
B=$(mkbundle imagedev)
console_rootfs "$B/rootfs"
# Drop the /dev, /dev/pts, /dev/shm and /dev/mqueue mounts.
mkconfig | awk '/"destination": "\/dev/ { skip = 1 } skip && /}/ { skip = 0; next } !skip' \
  > "$B/config.json"
id=$(new_id imagedev)
kc run run --bundle "$B" "$id"
if [ "$RC" = 0 ]; then
  expect_eq "image /dev: the container ran" done "$OUT"
else
  expect_contains "image /dev: refused with a reason naming /dev" "$ERR" "/dev"
fi
canary_same "image /dev"
for f in console pts/0 ptmx; do
  expect_eq "image /dev: /dev/$f in the image is still the attacker's symlink" symlink \
    "$(stat -c %F "$B/rootfs/dev/$f" | sed 's/symbolic link/symlink/')"
done

# 3. A terminal is asked for: refused (until terminals exist), nothing touched.
cfg_reset
C_TERMINAL=true
B=$(mkbundle term)
console_rootfs "$B/rootfs"
id=$(new_id term)
kc run run --bundle "$B" "$id"
expect_eq "terminal: refused with 125" 125 "$RC"
expect_contains "terminal: the error says terminals are not implemented" "$ERR" "terminal"
canary_same "terminal"

nothing_left "console"
