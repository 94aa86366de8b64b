#!/bin/bash
# s_cgroup.sh: a rootless container cannot write any cgroup file of the host
# (CVE-2023-25809 class; issue #8).  kist runs as nobody in a cgroup2
# directory this test delegates to nobody (every file chowned, the worst
# case), from a `kist spec --rootless` config.  Inside, a probe tries to
# write every file of every cgroup2 mount it can see (a valid value for
# cgroup.max.depth and cgroup.max.descendants, "x" elsewhere: rejected by
# the kernel's parser, so "Invalid argument" means the write reached it);
# outside, the delegated cgroup's and the hierarchy root's files are
# compared before and after.  Only the cgroup2 hierarchy is touched.
. "$(dirname "$0")/../integration/lib.sh"

nobody_ok "rootless cgroup" || exit 0

CG2=$(awk '{ for (i = 7; i <= NF; i++) if ($i == "-") { if ($(i + 1) == "cgroup2") print $5; break } }' \
  /proc/self/mountinfo | head -n 1)
if [ -z "$CG2" ]; then
  skip "rootless cgroup" "no cgroup2 mount"
  exit 0
fi
DELEG=$CG2/$PREFIX-deleg
if ! mkdir "$DELEG" 2> /dev/null; then
  skip "rootless cgroup" "cannot create a cgroup under $CG2"
  exit 0
fi
chown -R "$NOBODY_UID:$NOBODY_GID" "$DELEG"

nobody_dir "$XDG" 0700
test_cleanup ()
{
  local id d
  for id in "${IDS[@]}"; do
    kn_in "$T" cleanup delete --force "$id"
  done
  remove_deleg
}

# kn_cg DIR TAG ARGS...: like kn_in, from inside the delegated cgroup.
kn_cg ()
{
  local dir=$1 tag=$2
  shift 2
  LAST=$T/$tag
  printf 'XDG_RUNTIME_DIR=%s kist %s (as nobody, in %s)\n' "$XDG" "$*" "$DELEG" > "$LAST.cmd"
  (cd "$dir" && XDG_RUNTIME_DIR=$XDG timeout -k 5 "$KIST_IT_TIMEOUT" \
      sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$DELEG" \
      "${AS_NOBODY[@]}" "$KIST" "$@") > "$LAST.out" 2> "$LAST.err" < /dev/null
  RC=$?
  OUT=$(cat "$LAST.out")
  ERR=$(cat "$LAST.err")
}

# The host files compared before and after: the delegated cgroup's (nobody's
# own cgroup, every file writable by nobody) and the hierarchy root's.
HOST_FILES="cgroup.max.depth cgroup.max.descendants cgroup.subtree_control cgroup.type cgroup.freeze"
host_snapshot ()
{
  local d f
  for d in "$DELEG" "$CG2"; do
    for f in $HOST_FILES; do
      [ -f "$d/$f" ] && printf '%s/%s=%s\n' "$d" "$f" "$(tr '\n' ' ' < "$d/$f" 2> /dev/null)"
    done
  done
}

# The probe (busybox sh).  Prints WROTE FILE for a write that succeeded,
# REACHED FILE: ERROR for one the kernel's parser refused (the file was
# writable), RO MOUNTPOINT or RW MOUNTPOINT per cgroup2 mount, and
# TRIED N at the end.
PROBE='n=0
for m in $(awk '"'"'{ for (i = 7; i <= NF; i++) if ($i == "-") { if ($(i + 1) == "cgroup2") print $5 "," $6; break } }'"'"' /proc/self/mountinfo); do
  mp=${m%%,*}; opts=${m#*,}
  case ",$opts," in *,ro,*) echo "RO $mp" ;; *) echo "RW $mp" ;; esac
  for f in $(find "$mp" -xdev -type f 2> /dev/null); do
    case $f in */cgroup.max.depth) v=3 ;; */cgroup.max.descendants) v=7 ;; *) v=x ;; esac
    n=$((n + 1))
    if e=$( (printf "%s\n" "$v" > "$f") 2>&1 ); then
      echo "WROTE $f"
    else
      case $e in
        *"Read-only file system"* | *"Permission denied"* | *"Operation not permitted"*) ;;
        *) echo "REACHED $f: $e" ;;
      esac
    fi
  done
done
mkdir -p /dev/shm/cg 2> /dev/null
mount -t cgroup2 none /dev/shm/cg 2> /dev/null && echo "MOUNTED a new cgroup2"
mount -o remount,rw /sys/fs/cgroup 2> /dev/null && echo "REMOUNTED /sys/fs/cgroup rw"
echo "TRIED $n"'

SPEC_B=$T/spec
nobody_bundle "$SPEC_B"
kn_in "$SPEC_B" spec spec --rootless
if [ "$RC" != 0 ]; then
  fail "kist spec --rootless" "$ERR"
  exit 1
fi
ARGS=$(json_arr sh -c "$PROBE")
# rootless_config cannot take these args (quotes, backslashes): put them in
# with awk after it, from a file.
printf '%s' "$ARGS" > "$T/args.json"
BASE=$(rootless_config "$SPEC_B/config.json" '["true"]' | sed 's/  */ /g')

# variant NAME SED-SCRIPT: a bundle with the rootless config edited by
# SED-SCRIPT and the probe as its process; prints the bundle path.
variant ()
{
  local b=$T/b-$1
  nobody_bundle "$b"
  printf '%s\n' "$BASE" | sed -E "$2" \
    | awk -v argsfile="$T/args.json" 'BEGIN { getline a < argsfile }
        { i = index($0, "\"args\": [\"true\"]"); if (i) $0 = substr($0, 1, i - 1) "\"args\": " a substr($0, i + 16); print }' \
    > "$b/config.json"
  chown "$NOBODY_UID:$NOBODY_GID" "$b/config.json"
  printf '%s' "$b"
}

# check_variant NAME WHAT: run the bundle of NAME as nobody in the delegated
# cgroup and check that nothing was written.
check_variant ()
{
  local name=$1 what=$2 b=$T/b-$1 before after id
  before=$(host_snapshot)
  id=$(new_id "cg-$name")
  kn_cg "$b" "run-$name" run "$id"
  after=$(host_snapshot)
  if [ "$RC" != 0 ]; then
    # Refusing to run is fine (nothing ran), but say why.
    ok "$what: the run was refused (nothing ran)"
    printf '      (exit %s: %s)\n' "$RC" "$(printf '%s' "$ERR" | head -c 300)"
  else
    expect_match "$what: the probe ran and tried some files" "$OUT" '^TRIED [1-9]'
    expect_not_contains "$what: no cgroup file was written" "$OUT" "WROTE "
    expect_not_contains "$what: no cgroup file was writable" "$OUT" "REACHED "
    expect_not_contains "$what: every cgroup2 mount is read-only" "$OUT" "RW "
    expect_not_contains "$what: no new cgroup2 mount" "$OUT" "MOUNTED"
    expect_not_contains "$what: no remount rw" "$OUT" "REMOUNTED"
  fi
  expect_eq "$what: the host's cgroup files are unchanged" "$before" "$after"
  [ "$before" = "$after" ] || { printf '%s\n' "$before" > "$T/before"; printf '%s\n' "$after" | diff "$T/before" - | sed 's/^/      /'; }
}

# 1. The config of `kist spec --rootless` as it is.
variant default '' > /dev/null
check_variant default "rootless default config"

# 2. Without a network namespace: sysfs cannot be mounted, kist binds the
# host's /sys (with the host's cgroup hierarchies under /sys/fs/cgroup).
# 2a with the cgroup2 mount on top, 2b without it (the host's tree visible).
NO_NET='s/\{ "type": "network" \}, //'
NO_CG_MOUNT='s/, \{ "destination": "\/sys\/fs\/cgroup", "type": "cgroup2"[^}]*\}//'
variant nonet "$NO_NET" > /dev/null
check_variant nonet "rootless, no network namespace (host /sys bound)"
variant nonet-nocg "$NO_NET; $NO_CG_MOUNT" > /dev/null
check_variant nonet-nocg "rootless, no network namespace, no cgroup2 mount"

# 3. The same, with /sys (and its cgroup2 mount) not marked "ro" in the
# config: runc makes the cgroup mount read-only in a rootless container
# whatever the config says; the host's cgroup2 tree must not become
# writable through the bound /sys.
SYS_RW='s/("destination": "\/sys", "type": "sysfs", "source": "sysfs", "options": \[ "nosuid", "noexec", "nodev"), "ro"/\1/'
variant nonet-rw "$NO_NET; $NO_CG_MOUNT; $SYS_RW" > /dev/null
check_variant nonet-rw "rootless, host /sys bound, config without ro"

# 4. Without a cgroup namespace: the cgroup2 mount of a user namespace needs
# one; kist must refuse rather than bind the host's tree.
NO_CGNS='s/\{ "type": "cgroup" \}, //'
variant nocgns "$NO_CGNS" > /dev/null
check_variant nocgns "rootless, no cgroup namespace"

# Control: nobody can write its delegated cgroup from the host, so what kept
# the probe out above is the container's confinement, not file modes.
out=$(cd "$T" && "${AS_NOBODY[@]}" sh -c 'echo 5 > "$1/cgroup.max.descendants" && cat "$1/cgroup.max.descendants"; echo max > "$1/cgroup.max.descendants"' sh "$DELEG" 2>&1)
expect_eq "control: nobody writes its delegated cgroup's files from the host" 5 "$out"

remove_deleg ()
{
  [ -d "$DELEG" ] || return 0
  # (Sub-cgroups first; a cgroup with processes stays and is reported.)
  find "$DELEG" -mindepth 1 -depth -type d -exec rmdir {} + 2> /dev/null
  rmdir "$DELEG" 2> /dev/null || fail "cleanup: the delegated cgroup $DELEG is removed" \
    "$(cat "$DELEG/cgroup.procs" 2> /dev/null)"
}
remove_deleg
nothing_left "rootless cgroup"
