#!/bin/bash
# s_state.sh: the state root and the per-container state dirs cannot be
# redirected or planted (issue #8, design.md section 6):
#   --root LINK/.         the "." made O_NOFOLLOW check only the last
#                         component, so state went into LINK's target;
#   a symlink in a parent component of --root that another user owns;
#   a pre-created symlinked, foreign-owned or world-writable state root;
#   a pre-created state dir for an id that is a symlink, owned by another
#   user or writable by others (bubblewrap CVE-2019-12439 class): kist must
#   refuse it, never read its state.json (a planted pid would be killed by
#   delete --force) nor write into it.
# Every check fails on a kist that follows the link or uses the planted dir.
. "$(dirname "$0")/../integration/lib.sh"

if [ -z "$NOBODY_UID" ]; then
  skip "state root and state dir checks" "there is no user nobody"
  exit 0
fi

sh_args "sleep 1000"
B=$(mkbundle b)

# kr TAG ROOT ARGS...: kc with the state root ROOT.
kr ()
{
  local tag=$1
  ROOT=$2 kc "$tag" "${@:3}"
}

# refused WHAT NEEDLE: the last kr/kc failed, with an error containing NEEDLE.
refused ()
{
  if [ "$RC" != 0 ] && [[ "$ERR" == *"$2"* ]]; then
    ok "$1"
  else
    fail "$1" "expected a failure whose message contains: $2" "exit $RC" "stdout: $OUT" "$(_last_err)"
  fi
}

# victim: a process that a planted state.json names as the container init;
# kist must never signal it.  Sets VPID and VSTART.
VICTIMS=()
victim ()
{
  env KIST_IT_MARK="$MARK" sleep 300 < /dev/null > /dev/null 2>&1 &
  VPID=$!
  VICTIMS+=("$VPID")
  VSTART=$(awk '{ sub(/^.*\) /, ""); print $20 }' "/proc/$VPID/stat")
}
test_cleanup ()
{
  local p
  for p in "${VICTIMS[@]}"; do kill -KILL "$p" 2> /dev/null; done
  wait "${VICTIMS[@]}" 2> /dev/null
}

# plant DIR ID PID START: a state.json in DIR that names PID as the started init.
plant ()
{
  cat > "$1/state.json" <<EOF
{"kistStateVersion": 1, "id": "$2", "ociVersion": "1.2.0", "bundle": "$B", "rootfs": "$B/rootfs",
 "pid": $3, "pidStartTime": $4, "started": true, "created": "2026-01-01T00:00:00Z", "owner": "0"}
EOF
}

# ---- the state root -----------------------------------------------------------

REAL=$T/realroot
mkdir -m 0700 "$REAL"
ln -s "$REAL" "$T/rootlink"

ID=$(new_id r)
kr link "$T/rootlink" create --bundle "$B" "$ID"
refused "--root LINK (a symlinked state root) is refused" "symbolic link"
expect_eq "--root LINK: nothing written into the link's target" "" "$(ls -A "$REAL")"

kr linkdot "$T/rootlink/." create --bundle "$B" "$ID"
refused "--root LINK/. is refused (the link is checked, not only the last component)" \
  "symbolic link"
expect_contains "--root LINK/.: the error names the link" "$ERR" "$T/rootlink"
expect_contains "--root LINK/.: the error says how to fix it" "$ERR" "--root"
expect_eq "--root LINK/.: nothing written into the link's target" "" "$(ls -A "$REAL")"
kist_rm_stray () { "$KIST" --root "$REAL" delete --force "$ID" > /dev/null 2>&1; }
kist_rm_stray

kr linkslash "$T/rootlink/./" list
refused "--root LINK/./ is refused" "symbolic link"

kr linkdotdot "$T/rootlink/../realroot" list
refused "--root with a .. component is refused" ".."

# A parent component that is a symlink another user owns (and could point
# anywhere): refused.  One that root owns in a directory only root can
# write (like /var/run -> /run) is followed.
EVIL=$T/evil
mkdir -m 0755 "$EVIL"
mkdir -m 0755 "$T/target"
ln -s "$T/target" "$EVIL/l"
chown -h "$NOBODY_UID:$NOBODY_GID" "$EVIL/l"
kr evil "$EVIL/l/state" list
refused "--root through a symlink owned by another user is refused" "symbolic link"
expect_eq "... and nothing is created behind it" "" "$(ls -A "$T/target")"

mkdir -m 0755 "$T/trusted"
ln -s "$T/target" "$T/trusted/l"
kr trusted "$T/trusted/l/state" list
expect_eq "--root through a root-owned symlink in a root-only directory works (like /var/run)" \
  0 "$RC"
rm -rf "$T/target/state"

# A pre-created state root that another user owns, or that others can write.
FOREIGN=$T/foreignroot
mkdir -m 0700 "$FOREIGN"
chown "$NOBODY_UID:$NOBODY_GID" "$FOREIGN"
kr foreign "$FOREIGN" create --bundle "$B" "$ID"
refused "a state root owned by another user is refused" "owned by uid $NOBODY_UID"
expect_eq "... nothing written into it" "" "$(ls -A "$FOREIGN")"

WW=$T/wwroot
mkdir "$WW"
chmod 0777 "$WW"
kr ww "$WW" create --bundle "$B" "$ID"
refused "a world-writable state root is refused" "writable by group or others"
expect_eq "... nothing written into it" "" "$(ls -A "$WW")"

chmod 1777 "$WW"
kr wwsticky "$WW" create --bundle "$B" "$ID"
refused "a world-writable sticky state root is refused" "writable by group or others"

# ---- per-container state dirs ---------------------------------------------------

# A state dir for an id, owned by another user, naming a victim as its init.
victim
P=$(new_id planted)
mkdir -m 0700 "$ROOT/$P"
plant "$ROOT/$P" "$P" "$VPID" "$VSTART"
chown -R "$NOBODY_UID:$NOBODY_GID" "$ROOT/$P"
kc pdel delete --force "$P"
refused "delete --force of a foreign-owned state dir is refused" "owned by uid $NOBODY_UID"
expect_true "... and the pid its state.json names was not killed" kill -0 "$VPID"
kc pkill kill "$P" KILL
refused "kill of a foreign-owned state dir is refused" "owned by uid $NOBODY_UID"
expect_true "... and the pid was not killed" kill -0 "$VPID"
kc pstate state "$P"
refused "state of a foreign-owned state dir is refused" "owned by uid $NOBODY_UID"
kc pcreate create --bundle "$B" "$P"
refused "create over a foreign-owned state dir is refused" "owned by uid $NOBODY_UID"
expect_eq "... and it did not write into it" "state.json" "$(ls -A "$ROOT/$P")"
kc pgc gc
expect_true "gc leaves a foreign-owned state dir alone" test -d "$ROOT/$P"
expect_true "... and the pid was not killed" kill -0 "$VPID"
rm -rf "${ROOT:?}/$P"

# The same as a symlink to a directory elsewhere (the attacker's).
victim
ELSE=$T/elsewhere
mkdir -m 0700 "$ELSE"
plant "$ELSE" "$P" "$VPID" "$VSTART"
ln -s "$ELSE" "$ROOT/$P"
kc sdel delete --force "$P"
refused "delete --force of a symlinked state dir is refused" "symbolic link"
expect_true "... and the pid its state.json names was not killed" kill -0 "$VPID"
kc sstart start "$P"
refused "start of a symlinked state dir is refused" "symbolic link"
kc screate create --bundle "$B" "$P"
refused "create over a symlinked state dir is refused" "symbolic link"
expect_eq "... and nothing was written behind the link" "state.json" "$(ls -A "$ELSE")"
expect_true "... and the link is still a link (not replaced)" test -L "$ROOT/$P"
rm -f "${ROOT:?}/$P"

# One that is ours but writable by others (anyone could swap its state.json).
victim
mkdir -m 0777 "$ROOT/$P"
chmod 0777 "$ROOT/$P"
plant "$ROOT/$P" "$P" "$VPID" "$VSTART"
kc wdel delete --force "$P"
refused "delete --force of a world-writable state dir is refused" "writable by group or others"
expect_true "... and the pid was not killed" kill -0 "$VPID"
rm -rf "${ROOT:?}/$P"

test_cleanup
VICTIMS=()
nothing_left "state root and state dir checks"
