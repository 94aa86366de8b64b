#!/bin/bash
# t_subuid.sh: rootless maps wider than the caller's own id, through the
# setuid helpers newuidmap/newgidmap and a range in /etc/subuid, /etc/subgid.
#
# The range "nobody:300000:65536" is given to nobody by bind-mounting a file
# over /etc/subuid and /etc/subgid in this test's private mount namespace
# (lib.sh runs every test under unshare -m): the host's files are never
# written, and other tests running at the same time do not see the range.
. "$(dirname "$0")/lib.sh"

HELPER=
for d in /usr/bin /bin; do
  [ -x "$d/newuidmap" ] && [ -x "$d/newgidmap" ] && HELPER=$d/newuidmap && break
done
if [ -z "$HELPER" ]; then
  skip "subuid" "newuidmap/newgidmap are not installed (apt-get install uidmap; tests/deps.sh does)"
  exit 0
fi
nobody_ok "subuid" || exit 0
if [ "$(readlink /proc/self/ns/mnt)" = "$(readlink /proc/1/ns/mnt)" ]; then
  fail "subuid: the test runs in a private mount namespace" "refusing to bind-mount over /etc/subuid on the host"
  exit 1
fi

# /etc/subuid and /etc/subgid must exist to be mount points; create the
# missing ones (on the host) and remove them again at exit.
CREATED=()
for f in /etc/subuid /etc/subgid; do
  if [ ! -e "$f" ]; then
    : > "$f" && chmod 0644 "$f" && CREATED+=("$f")
  fi
done
MOUNTED=()
test_cleanup ()
{
  local f id
  for id in "${IDS[@]}"; do
    kn cleanup delete --force "$id"
  done
  for f in "${MOUNTED[@]}"; do
    umount "$f" 2> /dev/null || umount -l "$f"
  done
  MOUNTED=()
  for f in "${CREATED[@]}"; do
    [ -s "$f" ] || rm -f "$f"
  done
}
subid_on ()
{
  local f
  printf 'nobody:300000:65536\n' > "$T/subid"
  chmod 0644 "$T/subid"
  for f in /etc/subuid /etc/subgid; do
    mount --bind "$T/subid" "$f" && MOUNTED+=("$f")
  done
}
subid_off ()
{
  local f
  for f in "${MOUNTED[@]}"; do
    umount "$f"
  done
  MOUNTED=()
}

nobody_dir "$XDG" 0700
REPDIR=$T/nobody-reports
nobody_dir "$REPDIR"

# kn TAG ARGS...: kist as nobody, from the bundle dir.
kn ()
{
  kn_in "$B" "$@"
}

B=$T/bundle
nobody_bundle "$B"
kn spec spec --rootless
expect_eq "kist spec --rootless as nobody exits 0" 0 "$RC"
rootless_config "$B/config.json" \
  '["sh", "-c", "cat /proc/self/uid_map /proc/self/gid_map; id -u"]' > "$T/config.base"

# mkcfg UIDHOST2: the rootless config with uid 0 -> nobody and 1.. -> UIDHOST2
# (65536 ids), gid 0 -> nobody's group and 1.. -> 300000.
mkcfg ()
{
  sed -E 's#"uidMappings" *: *\[[^]]*\]#"uidMappings": [{"containerID": 0, "hostID": '"$NOBODY_UID"', "size": 1}, {"containerID": 1, "hostID": '"$1"', "size": 65536}]#;
          s#"gidMappings" *: *\[[^]]*\]#"gidMappings": [{"containerID": 0, "hostID": '"$NOBODY_GID"', "size": 1}, {"containerID": 1, "hostID": 300000, "size": 65536}]#' \
    "$T/config.base" > "$B/config.json"
}

subid_on
expect_eq "/etc/subuid (bind mount in this namespace) gives nobody a range" \
  "nobody:300000:65536" "$(cat /etc/subuid)"

# 1. kist run with a two-entry map: written by newuidmap / newgidmap.
mkcfg 300000
expect_contains "the config has the two-entry uid map" "$(cat "$B/config.json")" '"hostID": 300000'
id=$(new_id subuid)
kn run run --report "$REPDIR/r.json" "$id"
expect_eq "run with a subordinate range exits 0" 0 "$RC"
expect_eq "inside: uid_map and gid_map have both entries, id -u is 0" \
  "0 $NOBODY_UID 1 1 300000 65536 0 $NOBODY_GID 1 1 300000 65536 0" "$(echo $OUT)"
rep=$REPDIR/r.json
expect_eq "report: idmap.uid applied" true "$(layer_field "$rep" idmap.uid applied)"
expect_eq "report: idmap.uid requested" "0:$NOBODY_UID:1,1:300000:65536" \
  "$(layer_field "$rep" idmap.uid requested)"
expect_contains "report: idmap.uid written by newuidmap" \
  "$(layer_field "$rep" idmap.uid detail)" "written by newuidmap"
expect_eq "report: idmap.gid applied" true "$(layer_field "$rep" idmap.gid applied)"
expect_contains "report: idmap.gid written by newgidmap" \
  "$(layer_field "$rep" idmap.gid detail)" "written by newgidmap"
expect_not_contains "report: no setgroups deny on the helper path" \
  "$(layer_field "$rep" idmap.gid detail)" "setgroups denied"
expect_eq "report: confinement applied" true "$(jget "$rep" confinement.applied)"
expect_true "the run left no state dir" test ! -e "$XDG/kist/$id"

# 2. A range outside nobody's subordinate ids: newuidmap refuses, kist fails.
mkcfg 400000
id=$(new_id subuid-bad)
kn run run --report "$REPDIR/bad.json" "$id"
expect_eq "run with a range outside /etc/subuid exits 125" 125 "$RC"
expect_contains "the error names newuidmap" "$ERR" "newuidmap"
expect_match "the error carries newuidmap's complaint" "$ERR" "newuidmap: .*(not allowed|range)"
expect_contains "the error names the fix" "$ERR" "/etc/subuid"
expect_eq "report: idmap.uid not applied" false "$(layer_field "$REPDIR/bad.json" idmap.uid applied)"
expect_true "the failed run left no state dir" test ! -e "$XDG/kist/$id"

# ks TAG ARGS...: kist sandbox as nobody.
ks ()
{
  local tag=$1
  shift
  kn_in / "$tag" sandbox "$@"
}
SBASE=(--ro /usr --setenv "KIST_IT_MARK=$MARK")

# 3. The sandbox uses the whole range; the sandbox user stays nobody on the host.
ks full "${SBASE[@]}" --report "$REPDIR/sb.json" -- sh -c 'cat /proc/self/uid_map; id -u'
expect_eq "sandbox with a range exits 0" 0 "$RC"
expect_eq "sandbox: uid_map maps the full range around 65534, id -u is 65534" \
  "0 300000 65534 65534 $NOBODY_UID 1 65535 365534 2 65534" "$(echo $OUT)"
expect_contains "sandbox report: idmap.uid written by newuidmap" \
  "$(layer_field "$REPDIR/sb.json" idmap.uid detail)" "written by newuidmap"
expect_contains "sandbox report: idmap.uid says where the range came from" \
  "$(layer_field "$REPDIR/sb.json" idmap.uid detail)" "/etc/subuid 300000:65536"

# 4. Without the entry, the sandbox falls back to the caller only.
subid_off
expect_not_contains "/etc/subuid is back to the host's" "$(cat /etc/subuid)" "nobody:300000"
ks single "${SBASE[@]}" --report "$REPDIR/sb1.json" -- sh -c 'cat /proc/self/uid_map; id -u'
expect_eq "sandbox without a range exits 0" 0 "$RC"
expect_eq "sandbox: uid_map maps only 65534 to nobody" "65534 $NOBODY_UID 1 65534" "$(echo $OUT)"
expect_contains "sandbox report: idmap.uid written by the parent" \
  "$(layer_field "$REPDIR/sb1.json" idmap.uid detail)" "written by the parent"
expect_contains "sandbox report: idmap.uid says why only the caller is mapped" \
  "$(layer_field "$REPDIR/sb1.json" idmap.uid detail)" "no range in /etc/subuid"
expect_eq "sandbox dirs are gone" "" "$(ls -A "$XDG/kist/~sandbox" 2> /dev/null)"

nothing_left "subuid"
