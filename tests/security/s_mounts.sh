#!/bin/bash
# s_mounts.sh: the image's paths cannot redirect mounts (issue #8).
#   1. proc, sysfs and the /dev tmpfs (and any mount at /proc, /sys, /dev or
#      below /proc) land on a plain directory at exactly their path: a
#      symlink in the image is refused with exit 125 and an error naming the
#      destination and the fix (runc: "must be mounted on ordinary
#      directory"); a symlink cannot point any other mount into procfs.
#   2. an image /dev that is a symlink to a host-looking path gets nothing
#      created or mounted on the host (a canary directory stays unchanged).
#   3. symlink-exchange races (CVE-2021-30465, CVE-2024-45310 class): a host
#      loop, and a detached container sharing a volume, keep swapping a mount
#      destination and its parent between a directory and a symlink out of
#      the root (renameat2 RENAME_EXCHANGE) during 200 starts each: no file and
#      no mount ever appears outside the rootfs.
. "$(dirname "$0")/../integration/lib.sh"

# The host canary: symlinks in the images point here.  It is a shared tmpfs
# mount (in this test's own namespace), so that with rootfsPropagation rshared
# a container mount landing on it would show up here, not only a file.
# It lies outside $T (whose mounts count as leftovers) and $T/hostcanary
# points at it, for the relative symlinks.
CANARY=$(mktemp -d "${KIST_IT_WORK:-/tmp}/s_mounts-canary.XXXXXX") || exit 1
mount -t tmpfs -o size=1m,mode=0755 kist-canary "$CANARY"
mount --make-shared "$CANARY"
mkdir "$CANARY/keep"
echo canary > "$CANARY/keep/file"
ln -s "$CANARY" "$T/hostcanary"
SWAP_PIDS=()
test_cleanup ()
{
  local p
  for p in "${SWAP_PIDS[@]}"; do kill -KILL "$p" 2> /dev/null; wait "$p" 2> /dev/null; done
  # (everything on the canary: with a kist that let a mount escape, several)
  for p in $(seq 100); do
    [ -n "$(canary_mounts)" ] || break
    canary_mounts | sort -r | while read -r m; do umount -l "$m" 2> /dev/null; done
  done
  rmdir "$CANARY"
}
canary_mounts ()
{
  awk -v c="$CANARY" '$5 == c || index($5, c "/") == 1 { print $5 }' /proc/self/mountinfo
}

canary_state ()
{
  find "$CANARY" -printf '%p %y %m %s %l\n' 2> /dev/null | sort
  canary_mounts | sed 's/^/mount /'
}
CANARY_BEFORE=$(canary_state)
host_mounts ()
{
  awk '{ print $5 }' /proc/self/mountinfo | sort
}
MOUNTS_BEFORE=$(host_mounts)

# canary_intact WHAT: nothing was created or mounted on the host canary, and
# no mount appeared in this test's namespace.
canary_intact ()
{
  local now
  now=$(canary_state)
  if [ "$now" == "$CANARY_BEFORE" ]; then
    ok "$1: the host canary is unchanged"
  else
    fail "$1: the host canary is unchanged" "before: $CANARY_BEFORE" "now: $now"
  fi
  expect_eq "$1: no new mount in the caller's namespace" "$MOUNTS_BEFORE" "$(host_mounts)"
}

# refused NAME NEEDLE-ERE: the last kc call failed with 125, saying NEEDLE.
refused ()
{
  expect_eq "$1: exit status 125" 125 "$RC"
  expect_match "$1: the error names it ($2)" "$ERR" "$2"
  nothing_left "$1"
}

run_one ()
{
  kc "$1" run --bundle "$2" "$(new_id "$1")"
}

# without_mounts PATTERN: the config.json of the C_* variables without the
# default mount entries whose first line contains PATTERN.
without_mounts ()
{
  mkconfig | awk -v pat="$1" '
    skip { if ($0 ~ /}/) skip = 0; next }
    index($0, pat) { if ($0 !~ /}/) skip = 1; next }
    { print }'
}

# ---- 1. symlinked /proc, /sys, /dev ------------------------------------------------
# Each top directory, in turn, is a symlink to an empty directory of the image.
for top in proc sys dev; do
  cfg_reset
  B=$(mkbundle "sym$top")
  rmdir "$B/rootfs/$top"
  mkdir "$B/rootfs/tmp/fake$top"
  ln -s "/tmp/fake$top" "$B/rootfs/$top"
  run_one "sym$top" "$B"
  refused "/$top a symlink in the image" "/$top.*(ordinary directory).*symlink.*/tmp/fake$top"
  expect_match "/$top a symlink: the error says the fix" "$ERR" "plain directory in the image"
  expect_eq "/$top a symlink: nothing was mounted or made in its target" "" \
    "$(ls -A "$B/rootfs/tmp/fake$top")"
  expect_true "/$top a symlink: the image's symlink is intact" test -L "$B/rootfs/$top"
done

# symlink_case TAG WHAT MOUNT LINK TARGET NEEDLE GONE: the image's LINK is a
# symlink to TARGET and config.json has the extra MOUNT entry (or none), and
# with NOPROC=1 no proc at /proc: refused with NEEDLE, and GONE (a path in
# the rootfs, or "") was not created.
symlink_case ()
{
  cfg_reset
  [ -z "$3" ] || C_MOUNTS_EXTRA=", $3"
  C_READONLY='[]'
  B=$(mkbundle "$1")
  [ "${NOPROC:-0}" = 1 ] && without_mounts '"destination": "/proc"' > "$B/config.json"
  rm -rf "${B:?}/rootfs/$4"
  ln -s "$5" "$B/rootfs/$4"
  run_one "$1" "$B"
  refused "$2" "$6"
  [ -z "$7" ] || expect_true "$2: $7 was not created in the rootfs" test ! -e "$B/rootfs/$7"
}
symlink_case dangling "/proc a dangling symlink" "" proc /nonexistent/proc \
  "proc must be mounted on an ordinary directory.*/proc" nonexistent
symlink_case symparent "proc below a symlinked parent" \
  '{"destination": "/run/kproc", "type": "proc", "source": "proc"}' run /tmp \
  "proc must be mounted on an ordinary directory at exactly \`/run/kproc\`.*\`/run\`.*symlink" \
  tmp/kproc
# (A symlink below the image's own /proc: the config mounts no proc here.)
NOPROC=1 symlink_case belowproc "a mount below a symlink in /proc" \
  '{"destination": "/proc/x/y", "type": "tmpfs", "source": "tmpfs"}' proc/x /etc \
  "\`/proc/x/y\` must land on an ordinary directory.*\`/proc/x\`.*symlink" etc/y
# A symlink in the image cannot point another mount into procfs.
symlink_case intoproc "a symlink pointing a tmpfs onto /proc/sys" \
  '{"destination": "/data", "type": "tmpfs", "source": "tmpfs"}' data /proc/sys \
  "/data.*(procfs or sysfs)" ""

# Other mounts still follow a symlink inside the root (as runc does).
cfg_reset
mkdir -p "$T/vol" && echo hello > "$T/vol/file"
C_MOUNTS_EXTRA=", $(bind_json "$T/vol" /data rbind ro)"
sh_args 'cat /srv/file'
B=$(mkbundle follow)
mkdir "$B/rootfs/srv" && ln -s /srv "$B/rootfs/data"
run_one follow "$B"
expect_eq "a bind through an image symlink inside the root: runs" 0 "$RC"
expect_eq "a bind through an image symlink: lands on its target in the root" hello "$OUT"
nothing_left "bind through a symlink"

# ---- 2. /dev a symlink to the host -----------------------------------------------------
# The absolute target would be the canary on the host; the relative one
# climbs from rootfs/ to $T.  Refused; nothing may appear in the canary.
for how in abs dots rel; do
  case $how in
    abs) tgt=$CANARY ;;
    dots) tgt=/../../../../..$CANARY ;;
    rel) tgt=../../hostcanary ;;
  esac
  cfg_reset
  B=$(mkbundle "devhost$how")
  rmdir "$B/rootfs/dev"
  ln -s "$tgt" "$B/rootfs/dev"
  expect_true "/dev -> $tgt: seen from the host, it is the canary" \
    test "$B/rootfs/dev/keep/file" -ef "$CANARY/keep/file"
  run_one "devhost$how" "$B"
  refused "/dev -> $tgt" "/dev.*ordinary directory.*symlink"
  canary_intact "/dev -> $tgt"
  # Without the /dev tmpfs (devpts, shm and mqueue then go below /dev).
  without_mounts '"destination": "/dev", ' > "$B/config.json"
  run_one "devhost${how}2" "$B"
  refused "/dev -> $tgt without a /dev tmpfs" "/dev.*ordinary directory.*symlink"
  canary_intact "/dev -> $tgt without a /dev tmpfs"
  # Without any /dev mount: the dev layer alone.
  without_mounts '"destination": "/dev' > "$B/config.json"
  run_one "devhost${how}3" "$B"
  refused "/dev -> $tgt without /dev mounts" "/dev.*ordinary directories.*symlink"
  canary_intact "/dev -> $tgt without /dev mounts"
done

# ---- 3. symlink-exchange races ------------------------------------------------------------
SWAP_SRC=$(dirname "$0")/swap.c
SWAP=$T/swap
if ! gcc -O2 -static -o "$SWAP" "$SWAP_SRC" 2> "$T/swap.err"; then
  skip "symlink-exchange races" "cannot compile the helper: $(head -c 300 "$T/swap.err")"
  exit 0
fi

STARTS=${KIST_SEC_STARTS:-200}

# race NAME BUNDLE: STARTS runs of BUNDLE; each must succeed or fail with a
# kist error (125), never crash; prints "ok=N refused=N".
race ()
{
  local i n_ok=0 n_ref=0 bad=
  for ((i = 0; i < STARTS; i++)); do
    kc "$1" run --bundle "$2" "$PREFIX-$1"
    case $RC in
      0) n_ok=$((n_ok + 1)) ;;
      125) n_ref=$((n_ref + 1)) ;;
      *)
        bad+="run $i: exit $RC: $(tail -c 300 "$LAST.err")"$'\n'
        kist delete --force "$PREFIX-$1" > /dev/null 2>&1
        ;;
    esac
  done
  IDS+=("$PREFIX-$1")
  if [ "$n_ok" -gt 0 ]; then
    ok "$1: some starts succeeded, so the race reached real mounts ($n_ok)"
  else
    fail "$1: some starts succeeded, so the race reached real mounts" "$(tail -c 600 "$LAST.err")"
  fi
  if [ -z "$bad" ]; then
    ok "$1: $STARTS starts: every one ran or was refused with 125 (ok=$n_ok refused=$n_ref)"
  else
    fail "$1: $STARTS starts: every one ran or was refused with 125" "$bad"
  fi
}

# 3a. A host loop swaps the image's /p (the parent of two destinations) and
# /d (a destination itself) with symlinks out of the root.  rshared, so that
# a mount that escaped would propagate to the (shared) canary here.
cfg_reset
mkdir -p "$T/vol"
C_MOUNTS_EXTRA=", {\"destination\": \"/p/t\", \"type\": \"tmpfs\", \"source\": \"tmpfs\"},
  $(bind_json "$T/vol" /p/b rbind ro),
  {\"destination\": \"/d\", \"type\": \"tmpfs\", \"source\": \"tmpfs\"},
  {\"destination\": \"/d/new/deep\", \"type\": \"tmpfs\", \"source\": \"tmpfs\"}"
C_LINUX_EXTRA=', "rootfsPropagation": "rshared"'
C_MASKED='[]'
C_READONLY='[]'
B=$(mkbundle hostrace)
R=$B/rootfs
mkdir "$R/p" "$R/d"
ln -s "/../../../../..$CANARY" "$R/p.x"
ln -s ../../hostcanary "$R/d.x"
"$SWAP" 120 "$R/p" "$R/p.x" "$R/d" "$R/d.x" > "$T/swap.count" &
SWAP_PIDS+=($!)
race hostrace "$B"
kill "${SWAP_PIDS[-1]}" 2> /dev/null
wait "${SWAP_PIDS[-1]}" 2> /dev/null
canary_intact "host swap loop"
nothing_left "host swap loop"

# 3b. A detached container (the attacker) shares a host volume with the next
# containers and swaps /vol/x there with a symlink out of the root while
# they mount on /vol/x and below it.
cfg_reset
SHARED=$T/shared
mkdir -p "$SHARED/x"
C_MOUNTS_EXTRA=", $(bind_json "$SHARED" /vol)"
C_ARGS=$(json_arr /swap 120 /vol/x /vol/x.lnk)
C_MASKED='[]'
C_READONLY='[]'
BA=$(mkbundle attacker)
cp "$SWAP" "$BA/rootfs/swap"
ln -s "/../../../../..$CANARY" "$SHARED/x.lnk"
ida=$(new_id attacker)
kc attacker run --detach --bundle "$BA" "$ida"
expect_eq "the attacker container runs detached" 0 "$RC"
cfg_reset
C_MOUNTS_EXTRA=", $(bind_json "$SHARED" /vol),
  {\"destination\": \"/vol/x/t\", \"type\": \"tmpfs\", \"source\": \"tmpfs\"},
  $(bind_json "$T/vol" /vol/x/b rbind ro),
  {\"destination\": \"/vol/x\", \"type\": \"tmpfs\", \"source\": \"tmpfs\"}"
C_LINUX_EXTRA=', "rootfsPropagation": "rshared"'
C_MASKED='[]'
C_READONLY='[]'
BV=$(mkbundle victim)
race volrace "$BV"
expect_eq "the attacker was still swapping at the end" running "$(state_field "$ida" status)"
kc attackerdel delete --force "$ida"
canary_intact "container swap loop on a shared volume"
nothing_left "container swap loop on a shared volume"

# ---- 4. the same refusals in a user namespace (kist run by nobody) -------------------------
if nobody_ok "rootless: symlinked /proc and /dev"; then
  nobody_dir "$XDG" 0700
  RB=$T/rootless
  nobody_bundle "$RB"
  kn_in "$RB" rlspec spec --rootless
  rootless_config "$RB/config.json" '["true"]' > "$T/rootless.json"
  cp "$T/rootless.json" "$RB/config.json"
  for top in proc dev; do
    rm -rf "${RB:?}/rootfs/$top"
    ln -s "$CANARY" "$RB/rootfs/$top"
    kn_in "$RB" "rl$top" run "$PREFIX-rl$top"
    refused "rootless: /$top -> the host canary" "/$top.*ordinary director.*symlink"
    canary_intact "rootless: /$top -> the host canary"
    rm "$RB/rootfs/$top" && mkdir "$RB/rootfs/$top"
  done
  kn_in "$RB" rlok run "$PREFIX-rlok"
  expect_eq "rootless: with plain directories the same bundle runs" 0 "$RC"
fi
