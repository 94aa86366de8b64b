#!/bin/bash
# t_rootless.sh: kist run by an unprivileged user (nobody) with the config of
# `kist spec --rootless` (a user namespace mapping uid/gid 0 to the caller).
. "$(dirname "$0")/lib.sh"

nobody_ok "rootless" || exit 0

# The state root is the default one, $XDG_RUNTIME_DIR/kist.
nobody_dir "$XDG" 0700
REPDIR=$T/nobody-reports
nobody_dir "$REPDIR"

# kn TAG ARGS...: kist as nobody (like kc, without --root), from the bundle.
kn ()
{
  kn_in "$B" "$@"
}
test_cleanup ()
{
  local id
  for id in "${IDS[@]}"; do
    kn cleanup delete --force "$id"
  done
}
# kn_state ID FIELD
kn_state ()
{
  kn st state "$1"
  jflat 2> /dev/null <<< "$OUT" | awk -F'\t' -v k="$2" '$1 == k { print $2; exit }'
}

B=$T/rootless
nobody_bundle "$B"
kn spec spec --rootless
expect_eq "kist spec --rootless as nobody exits 0" 0 "$RC"
expect_true "kist spec --rootless wrote config.json" test -s "$B/config.json"
jflat < "$B/config.json" > "$T/spec.flat" 2> /dev/null
expect_eq "the rootless spec maps uid 0 to the caller" "0 $NOBODY_UID 1" \
  "$(awk -F'\t' '$1 ~ /^linux\.uidMappings\[0\]\./ { v[$1] = $2 }
     END { print v["linux.uidMappings[0].containerID"], v["linux.uidMappings[0].hostID"], v["linux.uidMappings[0].size"] }' "$T/spec.flat")"
expect_contains "the rootless spec has a user namespace" \
  "$(awk -F'\t' '$1 ~ /^linux\.namespaces\[[0-9]+\]\.type$/ { print $2 }' "$T/spec.flat" | tr '\n' ' ')" user

kn spec2 spec --rootless
expect_ne "kist spec refuses to overwrite config.json" 0 "$RC"

# Our command, and the leftover marker in the environment.
rootless_config "$B/config.json" \
  '["sh", "-c", "id -u; id -g; cat /proc/self/uid_map; hostname; sleep 0.2"]' > "$T/config.new"
cp "$T/config.new" "$B/config.json"
expect_contains "the config was edited" "$(cat "$B/config.json")" "KIST_IT_MARK=$MARK"

id=$(new_id rootless)
kn run run --report "$REPDIR/r.json" "$id"
expect_eq "rootless run exits 0" 0 "$RC"
expect_eq "inside: uid 0, gid 0, uid_map 0 -> $NOBODY_UID, hostname kist" \
  "0 0 0 $NOBODY_UID 1 kist" "$(echo $OUT)"
rep=$REPDIR/r.json
expect_eq "report: namespace.user applied" true "$(layer_field "$rep" namespace.user applied)"
expect_eq "report: idmap.uid applied" true "$(layer_field "$rep" idmap.uid applied)"
expect_eq "report: idmap.uid requested 0:$NOBODY_UID:1" "0:$NOBODY_UID:1" "$(layer_field "$rep" idmap.uid requested)"
expect_eq "report: idmap.gid applied" true "$(layer_field "$rep" idmap.gid applied)"
expect_eq "report: confinement applied" true "$(jget "$rep" confinement.applied)"
expect_true "the run was deleted from \$XDG_RUNTIME_DIR/kist" test ! -e "$XDG/kist/$id"

# create: from the host, the container runs as nobody.
sed -E 's#"sh", "-c", "[^"]*"#"sleep", "3141"#' "$T/config.new" > "$B/config.json"
id=$(new_id rl-created)
kn create create "$id"
expect_eq "rootless create exits 0" 0 "$RC"
expect_true "the state dir is under \$XDG_RUNTIME_DIR/kist" test -d "$XDG/kist/$id"
pid=$(kn_state "$id" pid)
if pid_alive "$pid"; then
  expect_eq "host view: the container's init runs as uid $NOBODY_UID" "$NOBODY_UID" \
    "$(awk '$1 == "Uid:" { print $2 }' "/proc/$pid/status")"
  expect_ne "host view: it is in another user namespace" \
    "$(readlink /proc/$$/ns/user)" "$(readlink "/proc/$pid/ns/user")"
else
  fail "the rootless created container's init is alive" "pid: $pid"
fi
kn start start "$id"
expect_eq "rootless start exits 0" 0 "$RC"
expect_eq "rootless state is running" running "$(kn_state "$id" status)"
kn kill kill "$id" KILL
expect_eq "rootless kill exits 0" 0 "$RC"
wait_gone "$pid" 5
kn del delete "$id"
expect_eq "rootless delete exits 0" 0 "$RC"
expect_true "no state dir left under \$XDG_RUNTIME_DIR/kist" test ! -e "$XDG/kist/$id"

# Root's containers are not nobody's business.
cfg_reset
C_ARGS='["sleep", "3141"]'
RB=$(mkbundle rootowned)
rid=$(new_id rootowned)
kc rcreate create --bundle "$RB" "$rid"
rpid=$(state_field "$rid" pid)
LAST=$T/nobody-kill
echo "kist --root $ROOT kill $rid KILL (as nobody)" > "$LAST.cmd"
as_nobody "$KIST" --root "$ROOT" kill "$rid" KILL > "$LAST.out" 2> "$LAST.err" < /dev/null
expect_ne "nobody cannot kill root's container" 0 "$?"
expect_true "root's container survived nobody's kill" pid_alive "$rpid"
kc rdel delete --force "$rid"

# A config without a user namespace, run by a non-root user: a clear error
# that says what to do, exit 125, nothing left.
B2=$T/rootless-nouserns
nobody_bundle "$B2"
kn_in "$B2" spec3 spec
kn_in "$B2" nouserns run "$(new_id nouserns)"
expect_eq "rootless without a user namespace: exit 125" 125 "$RC"
expect_contains "rootless without a user namespace: the error says how to fix it" "$ERR" \
  "kist spec --rootless"

nothing_left "rootless"
