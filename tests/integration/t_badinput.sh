#!/bin/bash
# t_badinput.sh: malformed or hostile input gets a clear error, a non-zero
# exit, and leaves nothing behind (no state dir, mount or process).
. "$(dirname "$0")/lib.sh"

# refused NAME EXPECTED-RC NEEDLE-ERE: checks for the last kc call.
# EXPECTED-RC "nonzero" accepts any failure status.
refused ()
{
  local name=$1 want=$2 needle=$3
  if [ "$want" = nonzero ]; then
    expect_ne "$name: fails" 0 "$RC"
  else
    expect_eq "$name: exit status $want" "$want" "$RC"
  fi
  if [ "$RC" -ge 128 ] || [ "$RC" = 124 ]; then
    fail "$name: kist did not crash or hang (exit $RC)" "$ERR"
  fi
  expect_match "$name: the error says what is wrong ($needle)" "$ERR" "$needle"
  nothing_left "$name"
}

# run_bad NAME BUNDLE: `run` of BUNDLE with a fresh id.
run_bad ()
{
  kc "$1" run --bundle "$2" "$(new_id "$1")"
}

# ---- config.json problems -------------------------------------------------------
cfg_reset
B=$(mkbundle malformed)
printf '{"ociVersion": "1.0.2", "process": {"args": ["sh"' > "$B/config.json"
run_bad malformed "$B"
refused "malformed JSON" 125 'config\.json'

cfg_reset
C_ARGS='["sh", 5]'
B=$(mkbundle wrongtype)
run_bad wrongtype "$B"
refused "wrong type in process.args" 125 'process\.args\[1\]'

cfg_reset
C_TERMINAL='"yes"'
B=$(mkbundle wrongtype2)
run_bad wrongtype2 "$B"
refused "wrong type in process.terminal" 125 'process\.terminal'

cfg_reset
B=$(mkbundle huge)
{
  printf '{"annotations": {"padding": "'
  head -c $((4 * 1024 * 1024 + 100)) /dev/zero | tr '\0' a
  printf '"},'
  mkconfig | tail -c +2
} > "$B/config.json"
run_bad huge "$B"
refused "config.json over 4 MiB" 125 '[Ll]arge|[Bb]ig|MiB|size|limit'

run_bad nobundle "$T/no-such-bundle"
refused "missing bundle" 125 "$T/no-such-bundle"

cfg_reset
B=$(mkbundle noconfig)
rm "$B/config.json"
run_bad noconfig "$B"
refused "missing config.json" 125 'config\.json'

cfg_reset
B=$(mkbundle norootfs)
rm -rf "$B/rootfs"
run_bad norootfs "$B"
refused "rootfs missing" 125 'rootfs'

cfg_reset
B=$(mkbundle symrootfs)
mv "$B/rootfs" "$B/real-rootfs"
ln -s real-rootfs "$B/rootfs"
run_bad symrootfs "$B"
refused "rootfs that is a symlink" 125 'rootfs'

cfg_reset
C_MOUNTS_EXTRA=', {"destination": "mnt", "type": "tmpfs", "source": "tmpfs"}'
B=$(mkbundle reldest)
run_bad reldest "$B"
refused "relative mount destination" 125 'mounts\[7\]'

cfg_reset
C_CWD=tmp
B=$(mkbundle relcwd)
run_bad relcwd "$B"
refused "relative process.cwd" 125 'process\.cwd'

# A masked or read-only path the image does not have is skipped (and said so);
# one that cannot be resolved for another reason fails the run before the
# container's code, with the layer, the path and the kernel's reason.
for list in C_MASKED C_READONLY; do
  layer=masked_paths
  [ "$list" = C_READONLY ] && layer=readonly_paths
  cfg_reset
  printf -v "$list" '%s' '["/etc/passwd/x", "/no/such/path"]'
  sh_args 'echo should-not-run'
  B=$(mkbundle "notdir$layer")
  run_bad "notdir$layer" "$B"
  refused "$layer through a file (ENOTDIR)" 125 "$layer: open \`/etc/passwd/x\` inside the container root: Not a directory"
  expect_not_contains "$layer through a file: the container did not run" "$OUT" should-not-run
  cfg_reset
  printf -v "$list" '%s' '["/no/such/path", "/proc/keys"]'
  sh_args 'echo ran'
  B=$(mkbundle "missing$layer")
  id=$(new_id "missing$layer")
  kc "missing$layer" run --report "$T/missing$layer.json" --bundle "$B" "$id"
  expect_eq "$layer: a path the image lacks is no error" 0 "$RC"
  expect_eq "$layer: a path the image lacks: the container ran" ran "$OUT"
  expect_match "$layer: a path the image lacks is named as skipped" \
    "$(layer_field "$T/missing$layer.json" "$layer" detail)" '/no/such/path'
  nothing_left "missing$layer"
done

# ---- ids -----------------------------------------------------------------------------
cfg_reset
C_ARGS='["sleep", "3141"]'
B=$(mkbundle ids)
before_t=$(ls -A "$T")
long=$(printf 'x%.0s' $(seq 1 1025))
for bad in "$PREFIX/slash" ".." "." "" "$PREFIX-$long" "$PREFIX bad" "$PREFIX*"; do
  label=${bad:0:40}
  kc badid create --bundle "$B" "$bad"
  refused "id '$label' is rejected" nonzero '[Ii][Dd]'
done
expect_eq "rejected ids created nothing next to the state root" "$before_t" "$(ls -A "$T" | grep -v '^badid\.')"
expect_true "the id with a slash created no directory" test ! -e "$ROOT/$PREFIX"

id=$PREFIX-$(printf 'y%.0s' $(seq 1 $((1024 - ${#PREFIX} - 1))))
IDS+=("$id")
kc longid create --bundle "$B" "$id"
expect_eq "an id of exactly 1024 characters is accepted (design.md section 6)" 0 "$RC"
kc longid_del delete --force "$id"
nothing_left "1024-character id"

id=$(new_id dup)
kc dup1 create --bundle "$B" "$id"
pid=$(state_field "$id" pid)
kc dup2 run --bundle "$B" "$id"
expect_eq "run with a duplicate id: exit 125" 125 "$RC"
expect_match "run with a duplicate id: the error says it exists" "$ERR" 'exist'
expect_eq "the first container is untouched by the duplicate run" created "$(state_field "$id" status)"
expect_true "the first container's init is alive" pid_alive "$pid"
kc dupdel delete --force "$id"
nothing_left "duplicate id"

# ---- a mount destination that is a symlink to /etc in the image ------------------------
# The mount must land inside the rootfs (on rootfs/etc), never on the host's /etc.
cfg_reset
mkdir -p "$T/landing"
echo landed > "$T/landing/kist-landed"
C_MOUNTS_EXTRA=", $(bind_json "$T/landing" /etclink rbind ro)"
sh_args 'if [ -e /etc/kist-landed ]; then echo inside; else echo elsewhere; fi; exit 0'
B=$(mkbundle symdest)
ln -s /etc "$B/rootfs/etclink"
host_etc_before=$(ls -A /etc | md5sum)
host_mounts_before=$(awk '{ print $5 }' /proc/self/mountinfo | sort | md5sum)
run_bad symdest "$B"
if [ "$RC" = 0 ]; then
  expect_contains "symlinked destination: the mount landed on the rootfs's /etc" "$OUT" inside
else
  expect_eq "symlinked destination: refused with exit 125 (if not followed inside the root)" 125 "$RC"
  expect_ne "symlinked destination: the refusal says why" "" "$ERR"
fi
expect_true "symlinked destination: the host has no kist-landed in /etc" test ! -e /etc/kist-landed
expect_eq "symlinked destination: the host's /etc is unchanged" "$host_etc_before" "$(ls -A /etc | md5sum)"
expect_eq "symlinked destination: no new mount in the caller's namespace" \
  "$host_mounts_before" "$(awk '{ print $5 }' /proc/self/mountinfo | sort | md5sum)"
expect_true "symlinked destination: the rootfs's /etc still exists" test -d "$B/rootfs/etc"
expect_true "symlinked destination: the image's symlink is intact" test -L "$B/rootfs/etclink"
expect_true "symlinked destination: the image's /etc is unchanged" test ! -e "$B/rootfs/etc/kist-landed"
nothing_left "symlinked destination"

# ---- the command -----------------------------------------------------------------------------
cfg_reset
C_ARGS='["/no-such-binary"]'
B=$(mkbundle nobin)
run_bad nobin "$B"
refused "missing binary (absolute path)" 127 'no-such-binary'

cfg_reset
C_ARGS='["no-such-command"]'
B=$(mkbundle nocmd)
run_bad nocmd "$B"
refused "missing command (searched in PATH)" 127 'no-such-command'

cfg_reset
C_ARGS='["/notexec"]'
B=$(mkbundle notexec)
printf '#!/bin/sh\necho should-not-run\n' > "$B/rootfs/notexec"
chmod 0644 "$B/rootfs/notexec"
run_bad notexec "$B"
refused "non-executable binary" 126 'notexec'
expect_not_contains "the non-executable file did not run" "$OUT" should-not-run

cfg_reset
C_ARGS='["/tmp"]'
B=$(mkbundle direxec)
run_bad direxec "$B"
refused "a directory as the command" 126 '/tmp'
