#!/bin/bash
# t_wsquota.sh: `kist sandbox --workspace DIR` for any caller (issue 12).
# As root: a DIR owned by root (or by any user other than the sandbox user)
# is writable inside, where it shows as the sandbox user's; the commit gives
# new entries DIR's owner and keeps the owner of the entries it replaces
# (checked with stat on the host).  --workspace-size, --workspace-inodes
# and --max-file-size (= --fsize), root and nobody: an overflow is
# not committed (DIR byte-for-byte unchanged), the report's workspace entry
# and kist's message say so, kist exits 125 where the command exited 0;
# under the limits the commit happens.  As nobody: a DIR that is not
# nobody's is refused (naming --commit never).  Nothing is left under
# ROOT/~sandbox.
. "$(dirname "$0")/lib.sh"

if [ ! -L /bin ] || [ ! -x /usr/bin/env ] || [ -z "$NOBODY_UID" ]; then
  skip "workspace quotas" "needs a merged /usr and a user nobody (the sandbox user)"
  exit 0
fi

nobody_dir "$XDG" 0700
REPDIR=$T/reports
mkdir -m 0777 -p "$REPDIR"
BASE=(--ro /usr --setenv "KIST_IT_MARK=$MARK")
MODE=root
SROOT=$ROOT
N=0
OTHER=4711   # a uid:gid that is neither root nor the sandbox user

# mkws OWNER: a fresh workspace (a, d/b) owned by OWNER (uid:gid); sets WS.
mkws ()
{
  WS=$T/ws-$MODE-$((N += 1))
  mkdir -p "$WS/d" && printf 'A\n' > "$WS/a" && printf 'B\n' > "$WS/d/b" && chown -R "$1" "$WS"
}

# snap DIR: each entry's type, mode, owner, size, mtime and path, then the
# checksum of each file: any change shows.
snap ()
{
  (
    cd "$1" || exit 1
    find . -printf '%y %m %U:%G %s %T@ %p\n' | sort
    find . -type f -exec sha256sum {} + | sort
  )
}

# owners DIR PATH...: "PATH uid:gid" for each.
owners ()
{
  local d=$1 p
  shift
  for p in "$@"; do echo "$p $(stat -c %u:%g "$d/$p" 2> /dev/null)"; done
}

wsfield ()   # REPORT FIELD
{
  layer_field "$1" workspace "$2"
}

# overflow TAG WHAT RC ERRNO REASON ARGS... -- COMMAND: the command overflows
# (and prints "ran"); DIR must stay unchanged, kist exit with RC, the
# workspace entry be failed with ERRNO and REASON.
overflow ()
{
  local tag=$1 what=$2 rc=$3 errno=$4 reason=$5 before rep
  shift 5
  mkws "$NOBODY_UID:$NOBODY_GID"
  [ "$MODE" = nobody ] || chown -R root:root "$WS"
  before=$(snap "$WS")
  rep=$REPDIR/$MODE-$tag.json
  ks "$tag" "${BASE[@]}" --workspace "$WS" --report "$rep" "$@"
  expect_eq "$what: the command ran, DIR unchanged, exit $rc, entry failed with $errno ($MODE)" \
    "$before
ran
$rc false $errno" "$(snap "$WS")
$(tail -n 1 <<< "$OUT")
$RC $(wsfield "$rep" applied) $(wsfield "$rep" errno)"
  expect_contains "$what: the entry says why ($MODE)" "$(wsfield "$rep" reason)" "$reason"
  expect_contains "$what: kist says it was not committed ($MODE)" "$ERR" \
    "not committed (an overflow)"
  expect_contains "$what: kist names the limit ($MODE)" "$ERR" "$reason"
}

suite_root ()
{
  local rep

  # 1. A workspace owned by root: writable inside, committed with root's ids.
  mkws 0:0
  chmod 0755 "$WS" "$WS/d"
  rep=$REPDIR/root-owner.json
  ks owner "${BASE[@]}" --workspace "$WS" --report "$rep" \
    -- sh -c 'stat -c %u:%g . d a; echo A2 > a && echo C > c && echo X > d/x && mkdir e &&
              echo Y > e/y && rm d/b'
  expect_eq "root's workspace: the command can write it (exit 0)" 0 "$RC"
  expect_eq "root's workspace shows as the sandbox user's inside" \
    "$(printf '%s\n' "$NOBODY_UID:$NOBODY_GID" "$NOBODY_UID:$NOBODY_GID" "$NOBODY_UID:$NOBODY_GID")" \
    "$(head -n 3 <<< "$OUT")"
  expect_eq "root's workspace: committed" "A2 C X Y gone" \
    "$(cat "$WS/a" "$WS/c" "$WS/d/x" "$WS/e/y" 2> /dev/null | tr '\n' ' ')$([ -e "$WS/d/b" ] || echo gone)"
  expect_eq "root's workspace: changed and new entries belong to root on the host" \
    "$(printf '%s 0:0\n' a c d/x e e/y)" "$(owners "$WS" a c d/x e e/y)"
  expect_eq "root's workspace: report detail" "committed 4 files, 1 deletions" \
    "$(wsfield "$rep" detail)"

  # 2. Owned by another user: new entries get that owner, a replaced file
  #    keeps its own (here root's, group-writable to the other user's group).
  mkws "$OTHER:$OTHER"
  chown 0:"$OTHER" "$WS/a"
  chmod 0664 "$WS/a"
  ks other "${BASE[@]}" --workspace "$WS" -- sh -c 'echo A3 > a && echo N > new && echo Z > d/z'
  expect_eq "another user's workspace: exit 0" 0 "$RC"
  expect_eq "another user's workspace: new entries are the owner's, the changed file keeps its owner" \
    "$(printf '%s\n' "a 0:$OTHER" "new $OTHER:$OTHER" "d/z $OTHER:$OTHER")" \
    "$(owners "$WS" a new d/z)"
  expect_eq "another user's workspace: contents committed" "A3 N Z" \
    "$(cat "$WS/a" "$WS/new" "$WS/d/z" 2> /dev/null | tr '\n' ' ' | sed 's/ $//')"

  # 5. Under both limits: committed, owned by DIR's owner.
  mkws 0:0
  rep=$REPDIR/root-under.json
  ks under "${BASE[@]}" --workspace "$WS" --workspace-size 4m --workspace-inodes 20 \
    --max-file-size 1m --report "$rep" \
    -- sh -c 'dd if=/dev/zero of=big bs=64k count=8 2> /dev/null && : > f1 && : > f2 &&
              rm -r d && mkdir d && echo n > d/n && echo ran'
  expect_eq "under the limits: exit 0 and committed" "0 524288 0:0" \
    "$RC $(stat -c '%s %u:%g' "$WS/big" 2> /dev/null)"
  expect_eq "under the limits: the recreated directory holds only its new file" "n" \
    "$(ls "$WS/d" 2> /dev/null)"
  expect_eq "under the limits: report detail" "committed 4 files, 0 deletions" \
    "$(wsfield "$rep" detail)"
  expect_contains "under the limits: the workspace tmpfs is in the mounts entry" \
    "$(layer_field "$rep" mounts detail)" "tmpfs"

  # 6. A file system that cannot idmap (sysfs): refused, naming --uid/--gid.
  ks noidmap "${BASE[@]}" --workspace /sys/kernel -- true
  expect_eq "root's workspace where idmapped mounts fail: 125 naming --uid/--gid" "125 1" \
    "$RC $(grep -c -- 'give --uid 0 --gid 0 (its owner)' <<< "$ERR")"

  # 7. --workspace-size without --workspace: refused before anything runs.
  ks nows "${BASE[@]}" --workspace-size 1m -- true
  expect_eq "--workspace-size without --workspace: 125 naming --workspace" "125 1" \
    "$RC $(grep -c -- 'give --workspace' <<< "$ERR")"
}

suite_common ()
{
  local rep

  # --workspace-size: dd beyond it.
  overflow size "--workspace-size overflow" 125 ENOSPC "upper layer is full" \
    --workspace-size 1m -- sh -c 'dd if=/dev/zero of=big bs=64k count=64 2> /dev/null; echo ran'

  # --workspace-inodes: more files than it allows.
  overflow inodes "--workspace-inodes overflow" 125 EDQUOT "no inodes left" \
    --workspace-inodes 5 -- sh -c 'for i in 1 2 3 4 5 6 7 8 9; do echo > f$i; done 2> /dev/null; echo ran'

  # Under --workspace-size and --workspace-inodes: committed.
  mkws "$NOBODY_UID:$NOBODY_GID"
  [ "$MODE" = nobody ] || chown -R root:root "$WS"
  rep=$REPDIR/$MODE-size-under.json
  ks size-under "${BASE[@]}" --workspace "$WS" --workspace-size 4m --workspace-inodes 20 \
    --report "$rep" -- sh -c 'dd if=/dev/zero of=big bs=64k count=8 2> /dev/null && echo n > d/n'
  expect_eq "under --workspace-size/-inodes: exit 0, committed ($MODE)" \
    "0 524288 n committed 2 files, 0 deletions" \
    "$RC $(stat -c %s "$WS/big" 2> /dev/null) $(cat "$WS/d/n" 2> /dev/null) $(wsfield "$rep" detail)"

  # --max-file-size: the file reaches it (the command dies of SIGXFSZ).
  overflow fsize "--max-file-size overflow (SIGXFSZ: the command's 153)" 153 EFBIG \
    "reached --max-file-size 1000" --max-file-size 1000 \
    -- sh -c 'echo ran; dd if=/dev/zero of=big bs=100 count=20 2> /dev/null'

  # ... and a command that ignores SIGXFSZ and exits 0: kist exits 125.
  overflow fsize-trap "--max-file-size overflow, SIGXFSZ ignored" 125 EFBIG \
    "reached --max-file-size 1000" --max-file-size 1000 \
    -- sh -c 'trap "" XFSZ; dd if=/dev/zero of=big bs=100 count=20 2> /dev/null; echo ran'

  # --fsize is the same limit.
  overflow fsize-alias "--fsize overflow" 125 EFBIG "reached --max-file-size 1000" \
    --fsize 1000 -- sh -c 'trap "" XFSZ; dd if=/dev/zero of=big bs=100 count=20 2> /dev/null; echo ran'

  # Under --max-file-size: committed.
  mkws "$NOBODY_UID:$NOBODY_GID"
  [ "$MODE" = nobody ] || chown -R root:root "$WS"
  rep=$REPDIR/$MODE-fsize-under.json
  ks fsize-under "${BASE[@]}" --workspace "$WS" --max-file-size 1000 --report "$rep" \
    -- sh -c 'dd if=/dev/zero of=small bs=100 count=5 2> /dev/null'
  expect_eq "under --max-file-size: exit 0, committed ($MODE)" "0 500 committed 1 files, 0 deletions" \
    "$RC $(stat -c %s "$WS/small" 2> /dev/null) $(wsfield "$rep" detail)"
}

suite_nobody ()
{
  # A workspace that is not nobody's: refused, naming --commit never, and
  # unchanged; with --commit never the sandbox reads it.
  mkws 0:0
  local before rc1 err1
  before=$(snap "$WS")
  ks notmine "${BASE[@]}" --workspace "$WS" -- sh -c 'echo X > x'
  rc1=$RC err1=$(grep -c -- '--commit never' <<< "$ERR")
  ks notmine-never "${BASE[@]}" --workspace "$WS" --commit never -- cat a
  expect_eq "nobody, root's workspace: 125 naming --commit never, unchanged; read with it" \
    "125 1 unchanged 0 A" "$rc1 $err1 $([ "$before" = "$(snap "$WS")" ] && echo unchanged) $RC $OUT"

}

suite_root
suite_common

if nobody_ok "workspace quotas as nobody"; then
  MODE=nobody
  SROOT=$XDG/kist
  suite_common
  suite_nobody
fi

test_cleanup ()
{
  sandbox_dirs_empty
}
