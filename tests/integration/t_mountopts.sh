#!/bin/bash
# t_mountopts.sh: the mount options engines send (issue #9): tmpcopyup
# (podman --read-only), filesystem data options on a bind (accepted and
# ignored, as runc does), the propagation/flag/atime options of podman,
# docker and containerd configs, idmap without mappings refused (idmapped
# mounts themselves: t_idmap.sh), and a cgroup mount in a user
# namespace without a cgroup namespace (podman --uidmap: a read-only bind of
# the container's own cgroup).  Where runc is installed, the same bundle runs
# under runc too (its own --root in $T, in a mount namespace of its own with
# the host's cgroup2 hierarchy over /sys/fs/cgroup: never the v1 ones).
. "$(dirname "$0")/lib.sh"

BB=$ROOTFS_SRC/bin/busybox

# mount_line MOUNTPOINT TEXT: "root options fstype" of the last mount at
# MOUNTPOINT in mountinfo TEXT.
mount_line ()
{
  awk -v m="$1" '$5 == m { for (i = 7; i <= NF; i++) if ($i == "-") { r = $4 " " $6 " " $(i + 1); break } }
    END { print r }' <<< "$2"
}
has_opt ()
{
  local o=${1#* }
  [[ ",${o%% *}," == *",$2,"* ]]
}
block ()
{
  sed -n "/^$1<<\$/,/^>>$1\$/p" <<< "$OUT" | sed '1d;$d'
}

# The runc comparison: RUNC_OK when runc is installed and a cgroup2 hierarchy
# can be shown to it.
RUNC_OK=
CG2=
if command -v runc > /dev/null; then
  CG2=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
  [ -n "$CG2" ] && RUNC_OK=1
fi
RROOT=$T/runc-root
# runc_run TAG BUNDLE: `runc run` of BUNDLE as container $PREFIX-r-TAG, in a
# mount namespace of its own where /sys/fs/cgroup is the host's cgroup2
# hierarchy; sets RC, OUT and ERR; deletes the container after.
runc_run ()
{
  local id=$PREFIX-r-$1
  mkdir -p "$RROOT"
  (cd "$2" && unshare -m --propagation private sh -c '
      [ "$1" = /sys/fs/cgroup ] || mount --bind "$1" /sys/fs/cgroup || exit 99
      timeout -k 5 30 runc --root "$2" run "$3" < /dev/null; rc=$?
      runc --root "$2" delete --force "$3" > /dev/null 2>&1
      exit $rc' sh "$CG2" "$RROOT" "$id") > "$T/$1.runc.out" 2> "$T/$1.runc.err"
  RC=$?
  OUT=$(cat "$T/$1.runc.out")
  ERR=$(cat "$T/$1.runc.err")
}
test_cleanup ()
{
  local c
  [ -d "$RROOT" ] || return 0
  for c in $(ls "$RROOT" 2> /dev/null); do
    unshare -m --propagation private sh -c '
      [ "$1" = /sys/fs/cgroup ] || mount --bind "$1" /sys/fs/cgroup
      runc --root "$2" delete --force "$3"' sh "$CG2" "$RROOT" "$c" > /dev/null 2>&1
  done
  # runc's own cgroup (no cgroupsPath: /<id> in the hierarchy).
  for c in "$CG2/$PREFIX"-r-*; do [ -d "$c" ] && rmdir "$c" 2> /dev/null; done
}

# ---- tmpcopyup -------------------------------------------------------------------
# The image's /data, copied into the tmpfs: files, a directory tree, symlinks
# (relative, absolute, one to a host path that must stay a symlink), a fifo,
# a set-uid file, an empty file, owners, modes and times.
HOSTSECRET=$T/hostsecret
mkdir -p "$HOSTSECRET"
echo host-only > "$HOSTSECRET/secret"
mk_image_data ()
{
  local r=$1/rootfs
  mkdir -p "$r/data/sub/deeper/deepest"
  echo hello > "$r/data/f"
  chmod 0640 "$r/data/f"
  chown 12:34 "$r/data/f"
  : > "$r/data/empty"
  printf 'x%.0s' $(seq 1 3000) > "$r/data/sub/big"
  cp "$BB" "$r/data/sub/suidbin"
  chmod 4755 "$r/data/sub/suidbin"
  chown 5:6 "$r/data/sub"
  chmod 0750 "$r/data/sub"
  echo deep > "$r/data/sub/deeper/deepest/d"
  ln -s ../etc/passwd "$r/data/rel"
  ln -s /etc "$r/data/abs"
  ln -s "$HOSTSECRET" "$r/data/tohost"
  ln -sn ../../../../../../../.. "$r/data/up"
  mkfifo -m 0620 "$r/data/fifo"
  chown -h 7:8 "$r/data/rel"
  touch -h -d '2001-02-03 04:05:06' "$r/data/f" "$r/data/rel" "$r/data/sub/deeper"
  chmod 0710 "$r/data"
  chown 3:4 "$r/data"
  # The destination itself is a symlink to a host path: resolved in the
  # image (kist makes that path inside the root), never on the host.
  ln -s "$HOSTSECRET" "$r/hostdir"
}
# The listing the probe prints, computed with the image's own busybox.
LIST_CMD='cd "$1" && find . | sort | while read -r p; do
  if [ -L "$p" ]; then l=" -> $(readlink "$p")"; else l=""; fi
  if [ -f "$p" ] && [ ! -L "$p" ]; then s=" $(stat -c %s "$p") $(md5sum < "$p" | cut -c1-8)"; else s=""; fi
  echo "$(stat -c "%n %f %u:%g" "$p")$s$l"
done'
list_host ()
{
  "$BB" sh -c "$LIST_CMD" sh "$1"
}
mtime ()
{
  "$BB" stat -c %Y "$1"
}

tmpfs_json ()
{
  local dst=$1
  shift
  printf '{"destination": %s, "type": "tmpfs", "source": "tmpfs", "options": %s}' \
    "$(json_str "$dst")" "$(json_arr "$@")"
}

cfg_reset
# The probe reads modes 0710 and 0750 owned by others.
C_CAPS='["CAP_DAC_OVERRIDE", "CAP_DAC_READ_SEARCH", "CAP_KILL"]'
LISTFN="list () { $LIST_CMD; }"
sh_args "$LISTFN"'
echo "list<<"; list /data; echo ">>list"
echo "rootmode=$(stat -c "%a %u:%g" /data)"
echo "mtimes=$(stat -c %Y /data/f) $(stat -c %Y /data/sub/deeper)"
echo "lmtime=$(stat -c %Y /data/rel 2>&1)"
echo "secret=$(find / -xdev -name secret 2>/dev/null | tr "\n" " ") $(find /data /hostdir -name secret | tr "\n" " ")"
echo "hostdir=$(ls -A /hostdir | tr "\n" " ")"
echo "write=$(echo new > /data/new && echo ok)"
echo "mountinfo<<"; cat /proc/self/mountinfo; echo ">>mountinfo"'
C_MOUNTS_EXTRA=", $(tmpfs_json /data rw rprivate nosuid nodev tmpcopyup),
  $(tmpfs_json /hostdir rw nosuid nodev tmpcopyup)"
B=$(mkbundle copyup)
mk_image_data "$B"
mkdir -p "$B/rootfs/$HOSTSECRET"
echo image-file > "$B/rootfs/$HOSTSECRET/from-image"
want=$(list_host "$B/rootfs/data")
want_mt="$(mtime "$B/rootfs/data/f") $(mtime "$B/rootfs/data/sub/deeper")"
id=$(new_id copyup)
kc copyup run --bundle "$B" --report "$T/copyup.json" "$id"
expect_eq "tmpcopyup: run exits 0" 0 "$RC"
expect_eq "tmpcopyup: the tmpfs holds the image's /data: every entry, type, mode, owner, size, content and symlink target" \
  "$want" "$(block list)"
expect_eq "tmpcopyup: the tmpfs root has the image directory's mode and owner (no mode=/uid=/gid=)" \
  "710 3:4" "$(sed -n 's/^rootmode=//p' <<< "$OUT")"
expect_eq "tmpcopyup: mtimes are kept (a file, a directory)" "$want_mt" "$(sed -n 's/^mtimes=//p' <<< "$OUT")"
expect_eq "tmpcopyup: a symlink's own mtime is kept" "$(mtime "$B/rootfs/data/rel")" \
  "$(sed -n 's/^lmtime=//p' <<< "$OUT")"
expect_eq "tmpcopyup: no file from the host path a symlink names was copied" " " \
  "$(sed -n 's/^secret=//p' <<< "$OUT")"
expect_eq "tmpcopyup at a destination that is a symlink to a host path: the image's dir is copied, not the host's" \
  "from-image " "$(sed -n 's/^hostdir=//p' <<< "$OUT")"
expect_eq "tmpcopyup: the tmpfs is writable (the root is read-only)" ok "$(sed -n 's/^write=//p' <<< "$OUT")"
mi=$(block mountinfo)
m=$(mount_line /data "$mi")
if [ "${m##* }" = tmpfs ] && has_opt "$m" nosuid && has_opt "$m" nodev && has_opt "$m" rw; then
  ok "tmpcopyup: /data is a tmpfs rw,nosuid,nodev ($m)"
else
  fail "tmpcopyup: /data is a tmpfs rw,nosuid,nodev" "got: $m"
fi
expect_true "tmpcopyup: the image's /data is unchanged on the host (no file written back)" \
  test ! -e "$B/rootfs/data/new"
expect_true "tmpcopyup: the host dir a symlink named is unchanged" \
  test "$(ls -A "$HOSTSECRET")" = secret
d=$(layer_field "$T/copyup.json" mounts detail)
expect_contains "tmpcopyup: the report detail says what was copied" "$d" \
  "/data: tmpcopyup: copied 5 files"
expect_eq "tmpcopyup: report mounts applied" true "$(layer_field "$T/copyup.json" mounts applied)"

if [ -n "$RUNC_OK" ]; then
  # runc 1.1 fails on a fifo in the image (lchown of a file it did not make):
  # the comparison is without it.
  rm "$B/rootfs/data/fifo"
  want=$(list_host "$B/rootfs/data")
  runc_run copyup "$B"
  if [ "$RC" = 0 ]; then
    ok "runc runs the same tmpcopyup bundle (without the fifo)"
    # runc leaves the tmpfs root owned by root; kist gives it the image
    # directory's owner as well (a kept difference): the "." line is compared
    # without its owner.
    expect_eq "tmpcopyup: runc copies the same tree" "$(sed '1s/ [0-9]*:[0-9]*$//' <<< "$want")" \
      "$(block list | sed '1s/ [0-9]*:[0-9]*$//')"
    expect_eq "tmpcopyup: runc's tmpfs root has the same mode" "710" \
      "$(sed -n 's/^rootmode=//p' <<< "$OUT" | cut -d' ' -f1)"
  else
    fail "runc runs the same tmpcopyup bundle (without the fifo)" "rc=$RC" "$ERR"
  fi
else
  skip "tmpcopyup compared with runc" "runc or a cgroup2 hierarchy is missing"
fi

# mode= wins over the image's mode; ro: filled first, read-only after.
cfg_reset
sh_args 'echo "rootmode=$(stat -c %a /data)"; echo "ro<<"; cat /ro/f; touch /ro/x 2>&1; echo ">>ro"'
C_MOUNTS_EXTRA=", $(tmpfs_json /data tmpcopyup mode=1777), $(tmpfs_json /ro ro tmpcopyup)"
B=$(mkbundle copyup2)
mk_image_data "$B"
mkdir -p "$B/rootfs/ro"
echo ro-content > "$B/rootfs/ro/f"
kc copyup2 run --bundle "$B" "$(new_id copyup2)"
expect_eq "tmpcopyup with mode=: run exits 0" 0 "$RC"
expect_eq "tmpcopyup: mode=1777 is the tmpfs root's mode" 1777 "$(sed -n 's/^rootmode=//p' <<< "$OUT")"
expect_contains "tmpcopyup + ro: the content is there" "$(block ro)" ro-content
expect_contains "tmpcopyup + ro: the tmpfs is read-only" "$(block ro)" "Read-only file system"

# A tmpfs too small for the content: a clear error, nothing runs.
cfg_reset
with_marker
sh_args 'touch /mark/small-ran'
C_MOUNTS_EXTRA+=", $(tmpfs_json /data tmpcopyup size=4k)"
B=$(mkbundle copyupfull)
mkdir -p "$B/rootfs/data"
head -c 200000 /dev/zero > "$B/rootfs/data/big"
kc copyupfull run --bundle "$B" "$(new_id copyupfull)"
expect_ne "tmpcopyup into a too small tmpfs fails" 0 "$RC"
expect_contains "tmpcopyup too small: the error names the file and the fix" "$ERR" "/data/big"
expect_contains "tmpcopyup too small: the error says to raise size=" "$ERR" "size="
expect_true "tmpcopyup too small: the container did not run" test ! -e "$MARKDIR/small-ran"

# ---- data options on a bind: accepted, ignored, said ------------------------------
cfg_reset
mkdir -p "$T/bindsrc"
echo in-bind > "$T/bindsrc/file"
sh_args 'cat /b/file; grep " /b " /proc/self/mountinfo'
C_MOUNTS_EXTRA=", $(bind_json "$T/bindsrc" /b rbind mode=755 size=10k nosuid tmpcopyup)"
B=$(mkbundle bindmode)
kc bindmode run --bundle "$B" --report "$T/bindmode.json" "$(new_id bindmode)"
expect_eq "bind with mode=/size=: run exits 0 (as runc)" 0 "$RC"
expect_contains "bind with mode=: the bind works" "$OUT" in-bind
expect_contains "bind with mode=: the report says which options were ignored" \
  "$(layer_field "$T/bindmode.json" mounts detail)" "/b: options mode=755, size=10k, tmpcopyup ignored"
m=$(mount_line /b "$(sed -n '2,$p' <<< "$OUT")")
if has_opt "$m" nosuid; then ok "bind with mode=: the flags are still applied (nosuid: $m)"; else fail "bind with mode=: nosuid applied" "got: $m"; fi
if [ -n "$RUNC_OK" ]; then
  runc_run bindmode "$B"
  expect_eq "runc accepts the same bind with mode=/size=" 0 "$RC"
else
  skip "bind mode= compared with runc" "runc or a cgroup2 hierarchy is missing"
fi

# ---- a relative bind source is relative to the bundle (as runc) -------------------
cfg_reset
sh_args 'ls /bundle; cat /rel/file'
C_MOUNTS_EXTRA=", $(bind_json . /bundle rbind ro), $(bind_json sub/dir /rel bind ro)"
B=$(mkbundle relsrc)
mkdir -p "$B/sub/dir"
echo in-rel > "$B/sub/dir/file"
kc relsrc run --bundle "$B" "$(new_id relsrc)"
expect_eq "bind of . and of sub/dir: run exits 0 (as runc)" 0 "$RC"
expect_contains "bind of .: the bundle is at /bundle" "$OUT" "config.json"
expect_contains "bind of sub/dir: BUNDLE/sub/dir is at /rel" "$OUT" "in-rel"
if [ -n "$RUNC_OK" ]; then
  runc_run relsrc "$B"
  expect_eq "runc runs the same relative binds" 0 "$RC"
  expect_contains "runc: the same /bundle" "$OUT" "config.json"
else
  skip "relative bind sources compared with runc" "runc or a cgroup2 hierarchy is missing"
fi

# ---- a read-only /dev tmpfs: its submounts, nodes and console first (as runc) --------
cfg_reset
C_TERMINAL=true
sh_args 'touch /dev/x 2> /dev/null && echo dev-writable || echo dev-readonly; ls /dev/pts/ptmx;
  echo > /dev/null && echo null-ok; [ -c /dev/console ] && echo console-ok; true'
B=$(mkbundle devro)
jq '(.mounts[] | select(.destination == "/dev") | .options) += ["ro"]' "$B/config.json" > "$B/c" \
  && mv "$B/c" "$B/config.json"
kc devro run --bundle "$B" --report "$T/devro.json" "$(new_id devro)"
OUT=$(tr -d '\r' <<< "$OUT")
expect_eq "ro /dev tmpfs with /dev/pts under it: run exits 0 (as runc)" 0 "$RC"
expect_contains "ro /dev: /dev is read-only in the end" "$OUT" dev-readonly
expect_contains "ro /dev: the devpts under it is mounted" "$OUT" /dev/pts/ptmx
expect_contains "ro /dev: /dev/null is there and writable" "$OUT" null-ok
expect_contains "ro /dev: the terminal's /dev/console is bound in it" "$OUT" console-ok
expect_contains "ro /dev: the dev entry says it made /dev read-only and read it back" \
  "$(layer_field "$T/devro.json" dev detail)" "then /dev made read-only"
if [ -n "$RUNC_OK" ]; then
  jq '.process.terminal = false' "$B/config.json" > "$B/c" && mv "$B/c" "$B/config.json"
  runc_run devro "$B"
  expect_eq "runc runs the same read-only /dev" 0 "$RC"
  expect_contains "runc: /dev read-only too" "$OUT" dev-readonly
else
  skip "read-only /dev compared with runc" "runc or a cgroup2 hierarchy is missing"
fi

# ---- what podman, docker and containerd configs carry ----------------------------
cfg_reset
mkdir -p "$T/optsrc"
sh_args 'cat /proc/self/mountinfo'
C_MOUNTS_EXTRA=", $(bind_json "$T/optsrc" /docker rbind rprivate nosuid nodev noexec ro),
  $(bind_json "$T/optsrc" /podman bind rprivate),
  $(bind_json "$T/optsrc" /slave rbind rslave),
  $(tmpfs_json /rel rw nosuid nodev relatime),
  $(tmpfs_json /strict rw nosuid strictatime mode=755),
  $(tmpfs_json /noatime noatime noexec)"
B=$(mkbundle opts)
kc opts run --bundle "$B" "$(new_id opts)"
expect_eq "engine options: run exits 0" 0 "$RC"
m=$(mount_line /docker "$OUT")
bad=
for o in ro nosuid nodev noexec; do has_opt "$m" "$o" || bad+=" $o"; done
expect_eq "rbind,rprivate,nosuid,nodev,noexec,ro: every flag is on /docker ($m)" "" "$bad"
expect_not_contains "rprivate: /docker has no shared peer group" "$(awk '$5 == "/docker"' <<< "$OUT")" "shared:"
m=$(mount_line /podman "$OUT")
if has_opt "$m" rw; then ok "bind,rprivate: /podman is rw ($m)"; else fail "bind,rprivate: /podman is rw" "got: $m"; fi
expect_ne "rbind,rslave: /slave is mounted" "" "$(mount_line /slave "$OUT")"
m=$(mount_line /rel "$OUT")
if has_opt "$m" relatime; then ok "relatime: /rel ($m)"; else fail "relatime: /rel" "got: $m"; fi
m=$(mount_line /strict "$OUT")
if ! has_opt "$m" relatime && ! has_opt "$m" noatime; then ok "strictatime: /strict is neither relatime nor noatime ($m)"; else fail "strictatime: /strict" "got: $m"; fi
m=$(mount_line /noatime "$OUT")
if has_opt "$m" noatime && has_opt "$m" noexec; then ok "noatime,noexec: /noatime ($m)"; else fail "noatime,noexec: /noatime" "got: $m"; fi

# ---- idmap/ridmap without mappings (and no user namespace): refused clearly --------
for o in idmap ridmap; do
  cfg_reset
  with_marker
  sh_args "touch /mark/$o-ran"
  C_MOUNTS_EXTRA+=", $(bind_json "$T/optsrc" /idm rbind "$o")"
  B=$(mkbundle "$o")
  kc "$o" run --bundle "$B" "$(new_id "$o")"
  expect_eq "$o without mappings: refused (exit 125)" 125 "$RC"
  expect_contains "$o without mappings: the error says the mappings are missing" "$ERR" "option \`$o\` without uidMappings and gidMappings"
  expect_contains "$o: the error names the mount" "$ERR" "/idm"
  expect_true "$o: the container did not run" test ! -e "$MARKDIR/$o-ran"
done

# ---- cgroup in a user namespace without a cgroup namespace (podman --uidmap) ------
for type in cgroup2 cgroup; do
  cfg_reset
  C_NAMESPACES="pid network ipc uts mount user"
  C_LINUX_EXTRA=', "uidMappings": [{"containerID": 0, "hostID": 200000, "size": 65536}],
    "gidMappings": [{"containerID": 0, "hostID": 200000, "size": 65536}]'
  sh_args 'echo "self=$(sed -n "s/^0:://p" /proc/self/cgroup)"
    echo "procs=$(grep -c "^$$\$" /sys/fs/cgroup/cgroup.procs)"
    echo "touch=$(touch /sys/fs/cgroup/x 2>&1; echo " rc=$?")"
    echo "mountinfo<<"; cat /proc/self/mountinfo; echo ">>mountinfo"'
  B=$(mkbundle "cg-$type")
  sed -i "s#\"type\": \"cgroup2\", \"source\": \"cgroup\"#\"type\": \"$type\", \"source\": \"cgroup\"#" "$B/config.json"
  chown -R 200000:200000 "$B/rootfs"
  kc "cg-$type" run --bundle "$B" --report "$T/cg-$type.json" "$(new_id "cg-$type")"
  expect_eq "$type mount, userns without cgroupns: run exits 0" 0 "$RC"
  self=$(sed -n 's/^self=//p' <<< "$OUT")
  m=$(mount_line /sys/fs/cgroup "$(block mountinfo)")
  expect_eq "$type mount, userns without cgroupns: /sys/fs/cgroup is the container's own cgroup ($self), cgroup2" \
    "$self cgroup2" "${m%% *} ${m##* }"
  expect_ne "$type mount: the container's cgroup is not the hierarchy's root" "/" "$self"
  if has_opt "$m" ro; then ok "$type mount, userns: the bind is read-only ($m)"; else fail "$type mount, userns: read-only" "got: $m"; fi
  expect_eq "$type mount, userns: the init is listed in /sys/fs/cgroup/cgroup.procs" 1 "$(sed -n 's/^procs=//p' <<< "$OUT")"
  expect_contains "$type mount, userns: writing into it fails" "$(sed -n 's/^touch=//p' <<< "$OUT")" "Read-only file system"
  expect_contains "$type mount, userns: the report says what was done" \
    "$(layer_field "$T/cg-$type.json" mounts detail)" "bind of the container's own cgroup"
done
if [ -n "$RUNC_OK" ]; then
  runc_run cgroup "$B"
  expect_eq "runc runs the same userns bundle without a cgroup namespace" 0 "$RC"
  m=$(mount_line /sys/fs/cgroup "$(block mountinfo)")
  # runc binds the whole hierarchy it sees (root /): kist only the container's cgroup.
  expect_eq "runc: /sys/fs/cgroup is a read-only bind of the cgroup2 hierarchy's root" "/ cgroup2" "${m%% *} ${m##* }"
else
  skip "cgroup in a userns compared with runc" "runc or a cgroup2 hierarchy is missing"
fi

nothing_left "t_mountopts"
