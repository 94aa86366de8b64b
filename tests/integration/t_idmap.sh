#!/bin/bash
# t_idmap.sh: idmapped bind mounts (runtime-spec 1.2 config.md: the
# options idmap and ridmap, a mount's uidMappings/gidMappings).  The parent
# makes each tree before clone (open_tree, a user namespace carrying the
# mapping, mount_setattr(MOUNT_ATTR_IDMAP)); the init attaches it.
#   1. no user namespace: a root-owned host dir mapped 0 -> 1000 shows
#      1000:1000 inside (a plain bind: 0:0); a file made through it by uid
#      1000 is owned by 0 on disk;
#   2. a user namespace 0 -> 100000 and the mount mapped the same: 0:0
#      inside (plain bind: the overflow id); idmap without mappings takes the
#      user namespace's;
#   3. ridmap on an rbind maps its submount too; idmap on an rbind only its
#      top (as runc);
#   4. bad input: exit 125, the error names mounts[N], nothing left;
#   5. the report's mounts entry.
. "$(dirname "$0")/lib.sh"

MI=7 # the index of the first extra mount (lib.sh mkconfig has 7 before it)

# idm_json SRC DEST OPTIONS_JSON [UIDMAP_JSON [GIDMAP_JSON]]
idm_json ()
{
  local m=""
  [ -n "${4:-}" ] && m+=", \"uidMappings\": $4"
  [ -n "${5:-}" ] && m+=", \"gidMappings\": $5"
  printf '{"destination": %s, "type": "bind", "source": %s, "options": %s%s}' \
    "$(json_str "$2")" "$(json_str "$1")" "$3" "$m"
}
map1 () { printf '[{"containerID": %s, "hostID": %s, "size": %s}]' "$1" "$2" "$3"; }

SRC=$T/src
mkdir -p "$SRC"
echo hi > "$SRC/f"
chown 0:0 "$SRC" "$SRC/f"
chmod 0755 "$SRC"

# ---- 1. no user namespace ---------------------------------------------------------
cfg_reset
sh_args 'stat -c "idm=%u:%g" /idm/f; stat -c "plain=%u:%g" /plain/f; grep " /idm " /proc/self/mountinfo'
C_MOUNTS_EXTRA+=", $(idm_json "$SRC" /idm '["bind", "idmap"]' "$(map1 0 1000 1)" "$(map1 0 1000 1)")"
C_MOUNTS_EXTRA+=", $(bind_json "$SRC" /plain bind)"
B=$(mkbundle plain)
kc plain run --bundle "$B" --report "$T/plain.json" "$(new_id plain)"
if [ "$RC" != 0 ] && grep -q "Linux 5.12" <<< "$ERR"; then
  skip "idmapped mounts" "the kernel has no mount_setattr: $ERR"
  exit 0
fi
expect_eq "no userns: run exits 0" 0 "$RC"
expect_eq "no userns: the idmapped file shows 1000:1000" "idm=1000:1000" "$(grep '^idm=' <<< "$OUT")"
expect_eq "no userns: the plain bind (control) shows 0:0" "plain=0:0" "$(grep '^plain=' <<< "$OUT")"
expect_contains "no userns: mountinfo shows /idm idmapped" "$(grep ' /idm ' <<< "$OUT")" "idmapped"
expect_eq "the source itself is still owned by 0:0" "0:0" "$(stat -c %u:%g "$SRC/f")"

# A file made through the mount by uid 1000 lands on disk as 0.
cfg_reset
C_UID=1000
C_GID=1000
sh_args 'echo made > /idm/new && stat -c "new=%u:%g" /idm/new'
C_MOUNTS_EXTRA+=", $(idm_json "$SRC" /idm '["bind", "idmap"]' "$(map1 0 1000 1)" "$(map1 0 1000 1)")"
B=$(mkbundle write)
kc write run --bundle "$B" "$(new_id write)"
expect_eq "uid 1000 writes through the mount: run exits 0" 0 "$RC"
expect_eq "uid 1000 writes through the mount: inside it is 1000:1000" "new=1000:1000" "$OUT"
expect_eq "uid 1000 writes through the mount: on disk it is 0:0" "0:0" "$(stat -c %u:%g "$SRC/new" 2> /dev/null)"
rm -f "$SRC/new"

# ---- 5. the report ----------------------------------------------------------------
d=$(layer_field "$T/plain.json" mounts detail)
expect_eq "report: mounts applied" true "$(layer_field "$T/plain.json" mounts applied)"
expect_contains "report: the mounts entry records the idmap" "$d" "/idm bind: idmapped uid 0:1000:1 gid 0:1000:1"
expect_contains "report: the owner seen through the mapping" "$d" "root owned 1000:1000 through it"
expect_contains "report: verified from outside, with the owner through /proc/PID/root" "$d" "/idm owned 1000:1000 (idmapped)"

# ---- 2. a user namespace --------------------------------------------------------------
USERNS_MAP=$(map1 0 100000 65536)
userns_cfg ()
{
  cfg_reset
  C_NAMESPACES="pid network ipc uts mount user"
  C_LINUX_EXTRA=", \"uidMappings\": $USERNS_MAP, \"gidMappings\": $USERNS_MAP"
}
userns_cfg
sh_args 'stat -c "idm=%u:%g" /idm/f; stat -c "implied=%u:%g" /implied/f; stat -c "plain=%u:%g" /plain/f'
C_MOUNTS_EXTRA+=", $(idm_json "$SRC" /idm '["rbind", "idmap"]' "$USERNS_MAP" "$USERNS_MAP")"
C_MOUNTS_EXTRA+=", $(idm_json "$SRC" /implied '["rbind", "idmap"]')"
C_MOUNTS_EXTRA+=", $(bind_json "$SRC" /plain rbind)"
B=$(mkbundle userns)
chown -R 100000:100000 "$B/rootfs"
kc userns run --bundle "$B" --report "$T/userns.json" "$(new_id userns)"
expect_eq "userns: run exits 0" 0 "$RC"
expect_eq "userns: the idmapped file shows 0:0" "idm=0:0" "$(grep '^idm=' <<< "$OUT")"
expect_eq "userns: idmap without mappings takes the user namespace's: 0:0" "implied=0:0" "$(grep '^implied=' <<< "$OUT")"
expect_eq "userns: the plain bind (control) shows the overflow id" "plain=65534:65534" "$(grep '^plain=' <<< "$OUT")"
expect_contains "userns: the report says the implied mapping is the user namespace's" \
  "$(layer_field "$T/userns.json" mounts detail)" "/implied rbind: idmapped uid 0:100000:65536 gid 0:100000:65536 (the user namespace's"

# ---- 3. ridmap and idmap on an rbind with a submount ------------------------------------
# The test runs in a mount namespace of its own: the tmpfs is local to it.
SRC2=$T/src2
mkdir -p "$SRC2/sub"
echo top > "$SRC2/t"
mount -t tmpfs -o mode=0755 tmpfs "$SRC2/sub"
echo sub > "$SRC2/sub/g"
chown 0:0 "$SRC2/sub/g"
for o in ridmap idmap; do
  cfg_reset
  sh_args 'stat -c "top=%u:%g" /r/t; stat -c "sub=%u:%g" /r/sub/g; echo "subopts=$(grep " /r/sub " /proc/self/mountinfo | cut -d" " -f6)"'
  C_MOUNTS_EXTRA+=", $(idm_json "$SRC2" /r "[\"rbind\", \"$o\"]" "$(map1 0 1000 1)" "$(map1 0 1000 1)")"
  B=$(mkbundle "rb-$o")
  kc "rb-$o" run --bundle "$B" "$(new_id "rb-$o")"
  expect_eq "$o on an rbind: run exits 0" 0 "$RC"
  expect_eq "$o on an rbind: the top shows 1000:1000" "top=1000:1000" "$(grep '^top=' <<< "$OUT")"
  if [ "$o" = ridmap ]; then
    expect_eq "ridmap: the submount shows 1000:1000" "sub=1000:1000" "$(grep '^sub=' <<< "$OUT")"
    expect_contains "ridmap: the submount is idmapped in mountinfo" "$(grep '^subopts=' <<< "$OUT")" "idmapped"
  else
    expect_eq "idmap (not recursive, as runc): the submount keeps 0:0" "sub=0:0" "$(grep '^sub=' <<< "$OUT")"
    expect_not_contains "idmap: the submount is not idmapped" "$(grep '^subopts=' <<< "$OUT")" "idmapped"
  fi
done
umount "$SRC2/sub"

# ---- 4. bad input -------------------------------------------------------------------
# bad TAG WHAT MOUNT_JSON MESSAGE: refused with exit 125, naming mounts[7]
# and MESSAGE; the container did not run; nothing is left.
bad ()
{
  cfg_reset
  with_marker
  sh_args "touch /mark/$1-ran"
  C_MOUNTS_EXTRA+=", $3"
  B=$(mkbundle "$1")
  kc "$1" run --bundle "$B" "$(new_id "$1")"
  expect_eq "$2: exit 125" 125 "$RC"
  expect_contains "$2: the error names the mount" "$ERR" "mounts[$((MI + 1))] /bad"
  expect_contains "$2: the error says why" "$ERR" "$4"
  expect_true "$2: the container did not run" test ! -e "$MARKDIR/$1-ran"
  nothing_left "$2"
}
bad noidmaps "idmap without uidMappings" "$(idm_json "$SRC" /bad '["bind", "idmap"]')" \
  "without uidMappings and gidMappings"
bad nogid "uidMappings without gidMappings" "$(idm_json "$SRC" /bad '["bind"]' "$(map1 0 1000 1)")" \
  "uidMappings given without gidMappings"
bad tmpfs "idmap on a tmpfs mount" \
  "{\"destination\": \"/bad\", \"type\": \"tmpfs\", \"source\": \"tmpfs\", \"options\": [\"idmap\"], \"uidMappings\": $(map1 0 1000 1), \"gidMappings\": $(map1 0 1000 1)}" \
  "an idmapped mount is a bind mount only"
bad overlap "overlapping mappings" \
  "$(idm_json "$SRC" /bad '["bind", "idmap"]' '[{"containerID": 0, "hostID": 1000, "size": 10}, {"containerID": 5, "hostID": 5000, "size": 10}]' "$(map1 0 1000 1)")" \
  "uidMappings[0] and uidMappings[1]: their containerID ranges overlap"
bad oversize "an oversized mapping" \
  "$(idm_json "$SRC" /bad '["bind", "idmap"]' "$(map1 0 1000 1)" "$(map1 4294967200 0 1000)")" \
  "gidMappings[0]: 1000 ids from containerID 4294967200"
bad procfs "a source on a filesystem without idmap support (sysfs)" \
  "$(idm_json /sys/kernel /bad '["rbind", "idmap"]' "$(map1 0 1000 1)" "$(map1 0 1000 1)")" \
  "does not support idmapped mounts"

# ---- rootless: refused, naming the mount and why ----------------------------------------
if nobody_ok "rootless idmap"; then
  nobody_dir "$XDG" 0700
  NB=$T/nb
  nobody_bundle "$NB"
  nobody_dir "$T/nsrc" 0755
  kn_in "$NB" nspec spec --rootless
  with_marker_json=$(bind_json "$MARKDIR" /mark rbind)
  rootless_config "$NB/config.json" '["sh", "-c", "touch /mark/nb-ran"]' \
    | sed "s#\"mounts\" *: *\[#\"mounts\": [$(idm_json "$T/nsrc" /idm '["rbind", "idmap"]' "$(map1 0 "$NOBODY_UID" 1)" "$(map1 0 "$NOBODY_GID" 1)"), $with_marker_json, #" \
    > "$T/nb.json"
  cp "$T/nb.json" "$NB/config.json"
  IDS+=("$PREFIX-nb")
  kn_in "$NB" nb run "$PREFIX-nb"
  expect_ne "rootless: an idmapped mount is refused" 0 "$RC"
  expect_contains "rootless: the error names the mount" "$ERR" "mounts[0] /idm"
  expect_contains "rootless: the error says kist must run as root" "$ERR" "need kist to run as root"
  expect_true "rootless: the container did not run" test ! -e "$MARKDIR/nb-ran"
  expect_eq "rootless: no state dir left" "" "$(ls -A "$XDG/kist" 2> /dev/null | grep -vx '~seccomp-cache')"
fi
