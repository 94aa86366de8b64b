#!/bin/bash
# t_sbvocab.sh: bwrap's vocabulary on kist sandbox (issue 12), as root and as
# nobody, side by side with bubblewrap for the same flags where bwrap has
# them:
#   - --file FD DEST: the data of FD until EOF as a file of the empty root
#     (the content, the owner, the directories above it; 0644 where bwrap
#     gives 0666), FD closed in kist afterwards, fd 0 replaced with
#     /dev/null; a bad fd, DEST under a mount, through a --symlink or with
#     --rootfs: exit 125 and nothing left;
#   - --chmod OCTAL PATH: on entries an earlier --dir/--file made (the same
#     modes as bwrap's), refused before the entry exists (bwrap: the same),
#     on a symlink, under a mount, with setuid;
#   - --dev /dev: bwrap's minimal /dev, node for node (but bwrap's core link);
#     another DEST refused;
#   - kist sandbox --help: the same options as the option table of
#     runtime/cmd_sandbox.c and as man/kist-sandbox.8, in the man page's order
#     and under its headings.
# On a kist without these options every case fails (unknown option: 125).
. "$(dirname "$0")/lib.sh"

[ -L /bin ] && [ -x /usr/bin/env ] || { skip "sandbox vocabulary" "the host has no merged /usr"; exit 0; }
BWRAP=$(command -v bwrap)
[ -n "$BWRAP" ] || skip "bwrap side by side" "bubblewrap is not installed (apt-get install bubblewrap)"
nobody_dir "$XDG" 0700
BASE=(--ro /usr --setenv "KIST_IT_MARK=$MARK")
# bwrap as close to kist's sandbox as its flags go: the sandbox user 65534.
BW_BASE=(--ro-bind /usr /usr --proc /proc --dev /dev --unshare-all --die-with-parent
         --uid 65534 --gid 65534)
for l in bin sbin lib lib32 lib64 libx32; do
  t=$(readlink "/$l") && BW_BASE+=(--symlink "$t" "/$l")
done
printf 'hello\nworld\n' > "$T/data"
head -c 300000 /dev/urandom > "$T/big"
chmod 0644 "$T/data" "$T/big"
BIG_SUM=$(sha256sum < "$T/big")
mkdir -p "$T/flag"
chmod 0777 "$T/flag"

# bw TAG ARGS...: bwrap ARGS as the MODE's user; sets BRC, BOUT, BERR.
bw ()
{
  local tag=$T/$MODE-bw-$1
  shift
  if [ "$MODE" = root ]; then
    timeout -k 5 "$KIST_IT_TIMEOUT" "$BWRAP" "${BW_BASE[@]}" "$@" > "$tag.out" 2> "$tag.err" < /dev/null
  else
    (cd / && timeout -k 5 "$KIST_IT_TIMEOUT" "${AS_NOBODY[@]}" "$BWRAP" "${BW_BASE[@]}" "$@") \
      > "$tag.out" 2> "$tag.err" < /dev/null
  fi
  BRC=$?
  BOUT=$(cat "$tag.out")
  BERR=$(cat "$tag.err")
}

# side TAG WHAT WANT-KIST ARGS... -- CMD...: the same flags and command under
# kist (exit 0 and WANT-KIST as its output, "" for no check) and under bwrap
# (when installed: exit 0 and the same output as kist's); fd 3 holds data,
# fd 4 the big file.
side ()
{
  local tag=$1 what=$2 want=$3
  shift 3
  ks "$tag" "${BASE[@]}" "$@" 3< "$T/data" 4< "$T/big"
  expect_eq "$what: kist exits 0 ($MODE)" 0 "$RC"
  [ -z "$want" ] || expect_eq "$what: kist's result ($MODE)" "$want" "$OUT"
  if [ -n "$BWRAP" ]; then
    bw "$tag" "$@" 3< "$T/data" 4< "$T/big"
    expect_eq "$what: bwrap exits 0 ($MODE)" 0 "$BRC"
    expect_eq "$what: kist's result is bwrap's ($MODE)" "$BOUT" "$OUT"
  fi
}

# refused TAG WHAT WORD ARGS...: kist refuses (125, the error has WORD).
refused ()
{
  local tag=$1 what=$2 word=$3
  shift 3
  ks "$tag" "${BASE[@]}" "$@" -- true 3< "$T/data"
  expect_eq "$what: exit 125 ($MODE)" 125 "$RC"
  expect_contains "$what: the error says why ($MODE)" "$ERR" "$word"
}

run_cases ()
{
  # --- --file
  side file "--file 3 /etc/greeting" "" --file 3 /etc/greeting -- \
    sh -c 'stat -c "%u:%g %F" /etc/greeting; cat /etc/greeting'
  expect_eq "--file: the data, owned by the sandbox user ($MODE)" \
    "65534:65534 regular file"$'\n'"hello"$'\n'"world" "$OUT"
  ks file-mode "${BASE[@]}" --file 3 /etc/greeting -- stat -c %a /etc/greeting 3< "$T/data"
  expect_eq "--file: mode 0644 (bwrap: 0666 in its writable root) ($MODE)" 644 "$OUT"
  local mask
  mask=$(umask)
  umask 077
  ks file-umask "${BASE[@]}" --file 3 /in/d/f -- \
    sh -c 'stat -c %a /in /in/d /in/d/f; cat /in/d/f' 3< "$T/data"
  umask "$mask"
  expect_eq "--file under umask 077: dirs 0755, file 0644, readable ($MODE)" \
    "755"$'\n'"755"$'\n'"644"$'\n'"hello"$'\n'"world" "$OUT"
  ks file-ro "${BASE[@]}" --file 3 /f -- sh -c 'echo x >> /f || echo read-only' 3< "$T/data"
  expect_contains "--file: the file is read-only, as the root ($MODE)" "$OUT" read-only
  side file-parents "--file with missing parents: both make them" "" --file 3 /a/b/c/f -- \
    sh -c 'stat -c "%F %u" /a /a/b /a/b/c; cat /a/b/c/f'
  side file-big "--file of 300000 bytes (more than one read)" "$BIG_SUM" --file 4 /big -- \
    sh -c 'sha256sum < /big'
  side file-two "two --file, a --dir" "" --dir /x --file 3 /x/one --file 4 /x/two -- \
    sh -c 'cat /x/one; wc -c < /x/two; stat -c %F /x'

  # fd 0: read until EOF, then the command's stdin is /dev/null.
  local out
  if [ "$MODE" = root ]; then
    out=$(timeout -k 5 "$KIST_IT_TIMEOUT" "$KIST" --root "$ROOT" sandbox "${BASE[@]}" \
            --file 0 /in -- sh -c 'cat /in; cat; echo end' < "$T/data" 2>&1)
  else
    out=$(cd / && XDG_RUNTIME_DIR=$XDG timeout -k 5 "$KIST_IT_TIMEOUT" "${AS_NOBODY[@]}" "$KIST" \
            sandbox "${BASE[@]}" --file 0 /in -- sh -c 'cat /in; cat; echo end' < "$T/data" 2>&1)
  fi
  expect_eq "--file 0: the data in the file, stdin then empty ($MODE)" \
    "hello"$'\n'"world"$'\n'"end" "$out"

  # Errors: 125, nothing made.
  ks file-badfd "${BASE[@]}" --file 9 /x -- true
  expect_eq "--file 9 (not open): exit 125 ($MODE)" 125 "$RC"
  expect_contains "--file 9: the error says the fd is not open ($MODE)" "$ERR" "fd 9 is not open"
  if [ -n "$BWRAP" ]; then
    bw file-badfd --file 9 /x -- true
    expect_ne "--file 9: bwrap fails too ($MODE)" 0 "$BRC"
  fi
  refused file-stdout "--file 1" "standard output" --file 1 /x
  if [ "$MODE" = root ]; then
    # kist's own --log file is its fd 3 here (close-on-exec): not data.
    kc file-own --log "$T/own.log" sandbox "${BASE[@]}" --file 3 /f -- true
    expect_eq "--file of an fd kist opened itself (--log): exit 125" 125 "$RC"
    expect_contains "--file of kist's own fd: the error says so" "$ERR" "one kist opened itself"
  fi
  refused file-twice "the same fd twice" "already the data of" --file 3 /x --file 3 /y
  refused file-nofd "--file without DEST" "expected FD DEST" --file 3
  refused file-bind "--file under a --ro bind" "the mount at \`/usr\` (--ro) would hide it" \
    --file 3 /usr/x
  refused file-tmpfs "--file under a --tmpfs" "(--tmpfs) would hide it" --tmpfs /t --file 3 /t/f
  refused file-work "--file under the workdir" "(the workdir) would hide it" --file 3 /work/f
  refused file-dev "--file under /dev" "the mount at \`/dev\`" --file 3 /dev/x
  refused file-above "--file above a mount point" "needs a directory there" \
    --ro /usr/bin:/opt/bin --file 3 /opt
  refused file-root "--file with --rootfs" "not with --rootfs" --rootfs / --file 3 /f
  refused file-exists "--file on a --dir" "File exists" --dir /f --file 3 /f
  refused file-link "--file through a --symlink" "a --symlink is never followed" \
    --symlink "$T/flag" /s --file 3 /s/evil
  expect_true "--file through a --symlink: nothing made through it on the host ($MODE)" \
    test ! -e "$T/flag/evil"
  if [ -n "$BWRAP" ]; then
    bw file-link --symlink "$T/flag" /s --file 3 /s/evil -- true 3< "$T/data"
    expect_ne "--file through a --symlink: bwrap fails too ($MODE)" 0 "$BRC"
    expect_true "--file through a --symlink: bwrap made nothing on the host either ($MODE)" \
      test ! -e "$T/flag/evil"
  fi

  # kist's own fd 3 is closed once the data is read (a pipe's reader would
  # otherwise stay open for the whole run).
  if [ "$MODE" = root ]; then
    rm -f "$T/flag/up" "$T/flag/go"
    "$KIST" --root "$ROOT" sandbox "${BASE[@]}" --rw "$T/flag:/flag" --file 3 /f -- \
      sh -c ': > /flag/up; while [ ! -e /flag/go ]; do sleep 0.05; done' \
      3< "$T/data" > /dev/null 2>&1 < /dev/null &
    local kp=$! i fds=
    for ((i = 0; i < 200; i++)); do
      [ -e "$T/flag/up" ] && break
      sleep 0.05
    done
    for f in /proc/$kp/fd/*; do fds+="$(readlink "$f") "; done
    : > "$T/flag/go"
    wait "$kp"
    expect_eq "--file: the sandbox ran ($MODE)" 0 "$?"
    expect_not_contains "--file: kist holds the fd no more while the command runs" "$fds" "$T/data"
    rm -f "$T/flag/up" "$T/flag/go"
  fi

  # --- --chmod
  side chmod "--chmod on a --dir and a --file" "750 65534"$'\n'"600 65534"$'\n'"hello" \
    --dir /d --chmod 0750 /d --file 3 /d/f --chmod 0600 /d/f -- \
    sh -c 'stat -c "%a %u" /d /d/f; head -n 1 /d/f'
  side chmod-parent "--chmod on a directory above a --file" "711"$'\n'"755" \
    --file 3 /p/q/f --chmod 0711 /p -- stat -c %a /p /p/q
  side chmod-sticky "--chmod 1777 on a --dir" "1777" --dir /s --chmod 1777 /s -- stat -c %a /s
  # A directory without u+w as nobody: the teardown still removes it
  # (sandbox_dirs_empty at the end).
  side chmod-ro-dir "--chmod 0500 on a directory with a file in it" "500" \
    --dir /r --file 3 /r/f --chmod 0500 /r -- stat -c %a /r
  ks chmod-missing "${BASE[@]}" --chmod 0700 /nx -- true
  expect_eq "--chmod of a path nothing made: exit 125 ($MODE)" 125 "$RC"
  expect_contains "--chmod of a path nothing made: the error says so ($MODE)" "$ERR" \
    "only on an entry kist made"
  ks chmod-early "${BASE[@]}" --chmod 0700 /o --dir /o -- true
  expect_eq "--chmod before the --dir that makes it: exit 125 ($MODE)" 125 "$RC"
  if [ -n "$BWRAP" ]; then
    bw chmod-missing --chmod 0700 /nx -- true
    expect_ne "--chmod of a path nothing made: bwrap fails too ($MODE)" 0 "$BRC"
    bw chmod-early --chmod 0700 /o --dir /o -- true
    expect_ne "--chmod before the --dir: bwrap fails too ($MODE)" 0 "$BRC"
  fi
  refused chmod-link "--chmod on a --symlink" "never follows a symlink" \
    --symlink /usr /u --chmod 0700 /u
  refused chmod-bound "--chmod on a --dir a bind covers" "the mount at \`/m\` (--ro)" \
    --dir /m --chmod 0700 /m --ro /usr/bin:/m
  refused chmod-suid "--chmod 4755" "no setuid or setgid bit" --file 3 /x --chmod 4755 /x
  refused chmod-octal "--chmod 0999" "expected OCTAL PATH" --dir /y --chmod 0999 /y
  refused chmod-rootfs "--chmod with --rootfs" "not with --rootfs" --dir /q --chmod 0700 /q --rootfs /

  # --- --dev
  local devlist='cd /dev && for e in * pts/*; do stat -c "%F %t:%T %N" "$e"; done'
  ks dev "${BASE[@]}" --dev /dev -- sh -c "$devlist"
  expect_eq "--dev /dev: exit 0 ($MODE)" 0 "$RC"
  local kdev=$OUT
  ks dev-default "${BASE[@]}" -- sh -c "$devlist"
  expect_eq "--dev /dev: the /dev every sandbox has ($MODE)" "$kdev" "$OUT"
  if [ -n "$BWRAP" ]; then
    bw dev sh -c "$devlist"
    expect_eq "--dev /dev: bwrap's nodes, links and dirs, but its core link ($MODE)" \
      "$(grep -v "^symbolic link 0:0 'core' -> '/proc/kcore'$" <<< "$BOUT")" "$kdev"
  fi
  expect_contains "--dev /dev: /dev/null is the null device ($MODE)" "$kdev" \
    "character special file 1:3 'null'"
  refused dev-other "--dev elsewhere" "only /dev" --dev /newdev
}

MODE=root
run_cases
if nobody_ok "sandbox vocabulary as nobody"; then
  MODE=nobody
  run_cases
fi

# --- --help: the option table, the help and the man page agree -------------------

MODE=root
kc help sandbox --help
expect_eq "sandbox --help: exit 0" 0 "$RC"
HELP=$OUT
kc help-late sandbox --ro /usr --help
expect_eq "sandbox --ro /usr --help: the same text as sandbox --help" "$HELP" "$OUT"

# The long options, in order, of: the option table, the help, the man page.
table=$(awk '/static const struct option opts\[\] = \{/ { on = 1; next }
             on && /\{ NULL, 0, NULL, 0 \}/ { exit }
             on && match($0, /\{ "[a-z-]+"/) { print substr($0, RSTART + 3, RLENGTH - 4) }' \
          "$REPO/runtime/cmd_sandbox.c")
help=$(sed -nE 's/^ +(-[a-zA-Z], )?--([a-z][a-z-]*).*/\2/p' <<< "$HELP")
man=$(awk '/^\.Sh OPTIONS/ { on = 1; next } on && /^\.Sh / { exit }
           on && /^\.It / { while (match($0, /Fl \\-[a-z\\-]+/)) {
               o = substr($0, RSTART + 5, RLENGTH - 5); gsub(/\\/, "", o); print o
               $0 = substr($0, RSTART + RLENGTH) } }' "$REPO/man/kist-sandbox.8")
expect_ne "the option table of cmd_sandbox.c is found" "" "$table"
for o in file chmod dev; do
  expect_true "the option table has --$o" grep -qx "$o" <<< "$table"
done
expect_eq "every option of the table is in --help, and no other" \
  "$(sort <<< "$table")" "$(sort <<< "$help")"
expect_eq "every option of man/kist-sandbox.8 is in --help, and no other" \
  "$(sort <<< "$man")" "$(sort <<< "$help")"
expect_eq "--help lists the options in the man page's order" "$man" "$help"
# The headings: the .Ss of the man page's OPTIONS, the "Heading:" lines of the help.
man_heads=$(awk '/^\.Sh OPTIONS/ { on = 1; next } on && /^\.Sh / { exit }
                 on && /^\.Ss / { sub(/^\.Ss /, ""); print }' "$REPO/man/kist-sandbox.8")
help_heads=$(sed -nE 's/^([A-Z][A-Za-z ,]*):$/\1/p' <<< "$HELP")
expect_eq "--help's headings are the man page's" "$man_heads" "$help_heads"
# Each option under the same heading in both.
grouped_help=$(awk '/^[A-Z][A-Za-z ,]*:$/ { h = $0; sub(/:$/, "", h); next }
                    match($0, /^ +(-[a-zA-Z], )?--[a-z][a-z-]*/) {
                      o = substr($0, RSTART, RLENGTH); sub(/.*--/, "", o); print h ": " o }' <<< "$HELP")
grouped_man=$(awk '/^\.Sh OPTIONS/ { on = 1; next } on && /^\.Sh / { exit }
                   on && /^\.Ss / { h = $0; sub(/^\.Ss /, "", h) }
                   on && /^\.It / { while (match($0, /Fl \\-[a-z\\-]+/)) {
                       o = substr($0, RSTART + 5, RLENGTH - 5); gsub(/\\/, "", o); print h ": " o
                       $0 = substr($0, RSTART + RLENGTH) } }' "$REPO/man/kist-sandbox.8")
expect_eq "every option under the same heading in --help and the man page" "$grouped_man" "$grouped_help"
expect_not_contains "--help: no stale 'refused for now'" "$HELP" "refused for now"

sandbox_dirs_empty
nothing_left "sandbox vocabulary"
