#!/bin/bash
# t_workspace.sh: `kist sandbox --workspace DIR --commit on-success|always|never`
# as root and as the unprivileged user nobody.  DIR holds a, d/b and
# link -> a; the command changes a, creates c, deletes d/b and replaces the
# symlink.  Exit 0 commits exactly those changes; exit 1, a timeout and
# --commit never leave DIR byte-for-byte unchanged; --commit always commits
# after exit 1; a symlink DIR/x -> /etc never lets a commit write into /etc;
# the report's "workspace" entry says what happened; nothing is left under
# ROOT/~sandbox.
. "$(dirname "$0")/lib.sh"

if [ ! -x /usr/bin/env ] || [ ! -L /bin ]; then
  skip "workspace" "the host has no merged /usr"
  exit 0
fi
if [ -z "$NOBODY_UID" ]; then
  skip "workspace" "there is no user nobody (the workspace is owned by the sandbox user)"
  exit 0
fi

REPDIR=$T/reports
mkdir -p "$REPDIR"
chmod 0777 "$REPDIR"
nobody_dir "$XDG" 0700

MODE=root
SROOT=$ROOT
N=0


BASE=(--ro /usr --setenv "KIST_IT_MARK=$MARK")
CHANGE='echo A2 > a && echo C > c && rm d/b && rm link && ln -s c link'

# mkws: a fresh workspace (a, d/b, link -> a) owned by nobody; sets WS.
mkws ()
{
  N=$((N + 1))
  WS=$T/ws-$MODE-$N
  mkdir -p "$WS/d"
  echo A > "$WS/a"
  echo B > "$WS/d/b"
  ln -s a "$WS/link"
  chown -R -h "$NOBODY_UID:$NOBODY_GID" "$WS"
}

# snap DIR: every entry with type, size, mode, symlink target, owner, and
# the checksum of every file: any change shows.
snap ()
{
  (cd "$1" && find . -printf '%p %y %s %m %l %U:%G %T@\n' | sort \
    && find . -type f -print0 | sort -z | xargs -0 -r sha256sum)
}

# listing DIR: the contents as "path type content-or-target".
listing ()
{
  local p
  (cd "$1" && find . -mindepth 1 | sort | while read -r p; do
    if [ -L "$p" ]; then echo "$p l $(readlink "$p")"
    elif [ -d "$p" ]; then echo "$p d"
    else echo "$p f $(cat "$p")"
    fi
  done)
}

EXPECT_COMMITTED=$(printf '%s\n' './a f A2' './c f C' './d d' './link l c')
EXPECT_ORIGINAL=$(printf '%s\n' './a f A' './d d' './d/b f B' './link l a')

sandbox_dirs ()
{
  ls -A "$SROOT/~sandbox" 2> /dev/null
}

wsdetail ()
{
  layer_field "$1" workspace detail
}

suite ()
{
  local before rep

  # 1. Exit 0 (default on-success): exactly the changes are committed.
  mkws
  expect_eq "setup: the workspace listing ($MODE)" "$EXPECT_ORIGINAL" "$(listing "$WS")"
  rep=$REPDIR/$MODE-ok.json
  ks ok "${BASE[@]}" --workspace "$WS" --report "$rep" -- sh -c "$CHANGE"
  expect_eq "exit 0: status ($MODE)" 0 "$RC"
  expect_eq "exit 0: DIR shows exactly the changes ($MODE)" "$EXPECT_COMMITTED" "$(listing "$WS")"
  expect_eq "exit 0: report workspace detail ($MODE)" "committed 3 files, 1 deletions" \
    "$(wsdetail "$rep")"
  expect_eq "exit 0: report workspace requested ($MODE)" "$WS" \
    "$(layer_field "$rep" workspace requested)"
  expect_eq "exit 0: committed files keep the sandbox user as owner ($MODE)" \
    "$NOBODY_UID:$NOBODY_GID" "$(stat -c %u:%g "$WS/c")"
  expect_eq "exit 0: nothing under ~sandbox ($MODE)" "" "$(sandbox_dirs)"

  # 2. Exit 1: DIR byte-for-byte unchanged.
  mkws
  before=$(snap "$WS")
  rep=$REPDIR/$MODE-fail.json
  ks fail "${BASE[@]}" --workspace "$WS" --report "$rep" -- sh -c "$CHANGE && exit 1"
  expect_eq "exit 1: status ($MODE)" 1 "$RC"
  expect_eq "exit 1: DIR unchanged ($MODE)" "$before" "$(snap "$WS")"
  expect_eq "exit 1: report says discarded ($MODE)" "discarded (exit 1)" "$(wsdetail "$rep")"
  expect_eq "exit 1: nothing under ~sandbox ($MODE)" "" "$(sandbox_dirs)"

  # 3. Timeout: unchanged.
  mkws
  before=$(snap "$WS")
  rep=$REPDIR/$MODE-timeout.json
  ks timeout "${BASE[@]}" --workspace "$WS" --timeout 1 --report "$rep" \
    -- sh -c "$CHANGE; sleep 60"
  expect_eq "timeout: status 124 ($MODE)" 124 "$RC"
  expect_eq "timeout: DIR unchanged ($MODE)" "$before" "$(snap "$WS")"
  expect_eq "timeout: report says discarded ($MODE)" "discarded (timeout)" "$(wsdetail "$rep")"
  expect_eq "timeout: nothing under ~sandbox ($MODE)" "" "$(sandbox_dirs)"

  # 4. --commit always with exit 1: committed.
  mkws
  ks always "${BASE[@]}" --workspace "$WS" --commit always -- sh -c "$CHANGE && exit 1"
  expect_eq "commit always: status 1 ($MODE)" 1 "$RC"
  expect_eq "commit always: changes committed after exit 1 ($MODE)" "$EXPECT_COMMITTED" \
    "$(listing "$WS")"

  # 5. --commit never with exit 0: unchanged.
  mkws
  before=$(snap "$WS")
  ks never "${BASE[@]}" --workspace "$WS" --commit never -- sh -c "$CHANGE"
  expect_eq "commit never: status 0 ($MODE)" 0 "$RC"
  expect_eq "commit never: DIR unchanged ($MODE)" "$before" "$(snap "$WS")"

  # 6. The sandbox sees DIR, and DIR is not written while it runs.
  mkws
  before=$(snap "$WS")
  ks see "${BASE[@]}" --workspace "$WS" --commit never \
    -- sh -c "cat a d/b && echo X > a && cat $WS/a 2>&1; true"
  expect_eq "the sandbox sees the workspace's files ($MODE)" "A
B" "$(head -n 2 <<< "$OUT")"
  expect_eq "the host path of DIR is not visible in the sandbox ($MODE)" 1 \
    "$(grep -c 'No such file' <<< "$OUT")"

  # 7. A symlink DIR/x -> /etc: nothing reaches the host's /etc.
  mkws
  ln -s /etc "$WS/x"
  chown -h "$NOBODY_UID:$NOBODY_GID" "$WS/x"
  local evil=kist-evil-$MARK evil2=kist-evil2-$MARK
  ks escape "${BASE[@]}" --workspace "$WS" \
    -- sh -c "echo e > x/$evil 2> /dev/null; rm x && mkdir x && echo e > x/$evil2"
  expect_eq "symlink escape: status 0 ($MODE)" 0 "$RC"
  expect_true "symlink escape: no /etc/$evil on the host ($MODE)" test ! -e "/etc/$evil"
  expect_true "symlink escape: no /etc/$evil2 on the host ($MODE)" test ! -e "/etc/$evil2"
  expect_true "symlink escape: DIR/x became a directory, not a symlink ($MODE)" \
    test -d "$WS/x" -a ! -L "$WS/x"
  expect_true "symlink escape: its file is in DIR/x ($MODE)" test -f "$WS/x/$evil2"
  rm -f "/etc/$evil" "/etc/$evil2"

  # 8. Opaque directory and deletion of a whole tree; special files skipped.
  mkws
  mkdir -p "$WS/o/deep" "$WS/gone/sub"
  echo old > "$WS/o/deep/old"
  echo g > "$WS/gone/sub/g"
  chown -R "$NOBODY_UID:$NOBODY_GID" "$WS"
  ks opaque "${BASE[@]}" --workspace "$WS" \
    -- sh -c 'rm -rf o gone && mkdir o && echo n > o/new && mkfifo fifo'
  expect_eq "opaque: status 0 ($MODE)" 0 "$RC"
  expect_eq "opaque: the recreated directory holds only the new file ($MODE)" "./new f n" \
    "$(listing "$WS/o")"
  expect_true "opaque: the deleted tree is gone ($MODE)" test ! -e "$WS/gone"
  expect_true "opaque: the fifo is not committed ($MODE)" test ! -e "$WS/fifo"
  expect_contains "opaque: the skipped fifo is named ($MODE)" "$ERR" "first: fifo"

  # 9. Bad --workspace arguments: 125 before anything runs.
  ks nodir "${BASE[@]}" --workspace "$T/does-not-exist" -- true
  expect_eq "missing DIR: exit 125 ($MODE)" 125 "$RC"
  ln -sfn "$WS" "$T/wslink-$MODE"
  ks symlinkdir "${BASE[@]}" --workspace "$T/wslink-$MODE" -- true
  expect_eq "symlink DIR: exit 125 ($MODE)" 125 "$RC"
  mkdir -p "$T/bad,dir-$MODE"
  chown "$NOBODY_UID:$NOBODY_GID" "$T/bad,dir-$MODE"
  ks comma "${BASE[@]}" --workspace "$T/bad,dir-$MODE" -- true
  expect_eq "DIR with a comma: exit 125 ($MODE)" 125 "$RC"
  expect_contains "DIR with a comma: the error names the character ($MODE)" "$ERR" "contains \`,\`"
  ks badcommit "${BASE[@]}" --workspace "$WS" --commit sometimes -- true
  expect_eq "--commit sometimes: exit 125 ($MODE)" 125 "$RC"

  expect_eq "after every run: nothing under ~sandbox ($MODE)" "" "$(sandbox_dirs)"
}

suite

if nobody_ok "workspace as nobody"; then
  MODE=nobody
  SROOT=$XDG/kist
  suite
fi

test_cleanup ()
{
  sandbox_dirs_empty
}
