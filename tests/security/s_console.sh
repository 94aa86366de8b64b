#!/bin/bash
# s_console.sh: /dev/console and /dev/pts/N from the image (runc
# CVE-2025-52565, crun CVE-2026-88264: a swapped /dev/pts/N or /dev/console
# made the runtime bind or chown a host file, or a procfs file, as the
# console).  kist takes the pty from the container's devpts by fd (openat2
# without symlinks, TIOCGPTPEER) and binds the slave fd itself onto a plain
# file at exactly /dev/console: no /dev/pts/N or /dev/console path of the
# image is followed.  Without a terminal there is no console at all.  The
# host canary must stay unchanged whatever the image's /dev holds, also
# while a host loop swaps the image's /dev/console with symlinks to it and
# to /proc/sysrq-trigger during hundreds of starts.
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

# 3. A terminal with the default /dev tmpfs over the hostile image: the
#    console is the process's own pty.
cfg_reset
C_TERMINAL=true
sh_args 'echo "CON=$(stat -c %t:%T /dev/console) PTS=$(stat -c %t:%T $(tty))"; echo hi > /dev/console'
B=$(mkbundle term)
console_rootfs "$B/rootfs"
id=$(new_id term)
kc run run --bundle "$B" "$id"
expect_eq "terminal: run exits 0" 0 "$RC"
con=$(sed -n 's/.*CON=\([^ ]*\) PTS=.*/\1/p' <<< "$OUT")
expect_match "terminal: /dev/console is a pts node (major 0x88)" "$con" '^88:[0-9a-f]+$'
expect_contains "terminal: /dev/console is the process's own pty" "$OUT" "PTS=$con"
expect_contains "terminal: what is written to /dev/console reaches the pty (kist's stdout)" "$OUT" "hi"
canary_same "terminal"

# 4. A terminal on the image's own /dev (only devpts mounted): the image's
#    /dev/console symlink is refused, never followed; /dev/ptmx is never used.
cfg_reset
C_TERMINAL=true
sh_args 'echo ran'
B=$(mkbundle termimg)
console_rootfs "$B/rootfs"
rm -f "$B/rootfs/dev/pts/0"
mkconfig | jq 'del(.mounts[] | select(.destination == "/dev" or .destination == "/dev/shm" or .destination == "/dev/mqueue"))' \
  > "$B/config.json"
id=$(new_id termimg)
kc run run --bundle "$B" "$id"
expect_eq "terminal, image /dev: a symlinked /dev/console is refused (125)" 125 "$RC"
expect_contains "terminal, image /dev: the error names /dev/console" "$ERR" "/dev/console"
expect_not_contains "terminal, image /dev: nothing of the container ran" "$OUT" "ran"
canary_same "terminal, image /dev"
expect_eq "terminal, image /dev: the image's /dev/console is still the attacker's symlink" symlink \
  "$(stat -c %F "$B/rootfs/dev/console" | sed 's/symbolic link/symlink/')"

# 5. The race (CVE-2025-52565): a host loop exchanges the image's
#    /dev/console (a plain file) with a symlink to the canary and one to
#    /proc/sysrq-trigger while the container starts again and again.  Every
#    start runs with the pty as its console or is refused; none binds
#    anything else, and the canary stays.  The swap pauses a random 0-400 us
#    after each exchange: without a pause, a loaded machine (CI) gave no start
#    a whole window with the plain file in place, and ran=0 proved nothing of
#    the starts that do run.
SWAP=$T/swap
if ! cc -O2 -static -o "$SWAP" "$(dirname "$0")/swap.c" 2> "$T/swap.err"; then
  fail "the swap helper builds" "$(cat "$T/swap.err")"
else
  cfg_reset
  C_TERMINAL=true
  # The pty's bind (a devpts mount whose root is /N) sits on the plain file,
  # whatever name the still running swap gives that file now; nothing of
  # devpts is mounted on /proc/sysrq-trigger.
  sh_args 'awk '"'"'$9 == "devpts" && $4 != "/" { print "BIND=" $5 } $5 == "/proc/sysrq-trigger" && $9 == "devpts" { print "SYSRQ" }'"'"' /proc/self/mountinfo'
  B=$(mkbundle race)
  R=$B/rootfs
  mkconfig | jq 'del(.mounts[] | select(.destination == "/dev" or .destination == "/dev/shm" or .destination == "/dev/mqueue"))' \
    > "$B/config.json"
  rm -f "$R/dev/console" "$R/dev/ptmx" "$R/dev/pts/0"
  : > "$R/dev/console"
  ln -s "$CANARY" "$R/dev/console.canary"
  ln -s /proc/sysrq-trigger "$R/dev/console.sysrq"
  "$SWAP" 120:400 "$R/dev/console" "$R/dev/console.canary" "$R/dev/console" "$R/dev/console.sysrq" \
    > "$T/swap.count" &
  SWAPPER=$!
  STARTS=${KIST_SEC_STARTS:-200}
  n_ok=0 n_ref=0 bad=
  for ((i = 0; i < STARTS; i++)); do
    kc race run --bundle "$B" "$PREFIX-race"
    case $RC in
      0)
        if [[ $(tr -d '\r' <<< "$OUT") =~ ^BIND=/dev/console(\.canary|\.sysrq)?$ ]]; then
          n_ok=$((n_ok + 1))
        else
          bad+="run $i: the pty is not bound on the image's plain file: $OUT"$'\n'
        fi
        ;;
      125) n_ref=$((n_ref + 1)) ;;
      *)
        bad+="run $i: exit $RC: $(tail -c 300 "$LAST.err")"$'\n'
        kist delete --force "$PREFIX-race" > /dev/null 2>&1
        ;;
    esac
  done
  kill "$SWAPPER" 2> /dev/null
  wait "$SWAPPER" 2> /dev/null
  IDS+=("$PREFIX-race")
  if [ "$n_ok" -gt 0 ] && [ "$n_ref" -gt 0 ]; then
    ok "race: the swap hit both ways (ran=$n_ok refused=$n_ref of $STARTS)"
  else
    fail "race: the swap hit both ways (some starts ran, some were refused)" \
      "ran=$n_ok refused=$n_ref; $(tail -c 300 "$LAST.err")"
  fi
  expect_eq "race: every start ran with the pty bound on the plain file (not on a symlink's target) or was refused with 125" "" "$bad"
  canary_same "race"
fi

nothing_left "console"
