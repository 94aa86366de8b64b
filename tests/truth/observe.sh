# observe.sh: the outside observer of tests/truth (sourced by run.sh, after
# tests/integration/lib.sh, whose ok/fail it uses).
#
#   observe NAME REPORT PID CONFIG REF [PEEK]
#
# compares every entry of the kist report REPORT with what the kernel shows
# from OUTSIDE the container whose process is PID: /proc/PID/{status,ns/*,
# mountinfo,limits,oom_score_adj,cgroup,environ,cwd,root,fd,stat,...}, the
# cgroup files of its scope, and its UTS and network namespaces entered with
# nsenter.  CONFIG is the config.json the container was made from (for a
# sandbox: the fields run.sh knows it asks for); REF is a reference process
# started the way kist was started (same user, namespaces, cgroup, fds), the
# "host" side of every comparison.
#
# One line per report entry (ok / FAIL NAME: LAYER: every disagreement),
# then one per layer observed in force (FAIL "in force, no entry" when the
# report lacks it).  An entry without a rule here fails too ("no rule"),
# except the few in NOT_OBSERVABLE, each with its reason.
#
# The entries the runtime is about to add are looked up by these patterns
# (the names are not settled yet): the parent-death signal and the
# close-on-exec sweep of inherited fds.
PDEATH_RE=${PDEATH_RE:-'^(parent_death_signal|pdeathsig|pdeath_signal|die_with_parent)$'}
FDS_RE=${FDS_RE:-'^(fds|fd_sweep|close_fds|inherited_fds|fds\.close_on_exec)$'}

# Entries no outside observer can check, with the reason.  Keep it short.
declare -A NOT_OBSERVABLE=(
  [hooks.prestart]="a hook is a process that ran and exited during create: it leaves nothing in the container's process to read (checked against config.json only)"
  [hooks.createRuntime]="as hooks.prestart"
  [hooks.createContainer]="as hooks.prestart"
  [hooks.startContainer]="as hooks.prestart"
  [hooks.poststart]="as hooks.prestart"
  [hooks.poststop]="as hooks.prestart"
)

# Parts of details that describe how a layer was made, not what is in force
# now, and are not checked: the seccomp cache hit/miss, "ENOSYS above
# syscall N" and the includes/excludes count (the filter's instruction count
# is: peek_seccomp); how the init joined its scope (clone3 or cgroup.procs);
# the mount count "N mounts visible" at the time of pivot_root (every mount
# now visible is accounted for instead); the EROFS probe of rootfs.readonly.

CG2=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)

# ---------------------------------------------------------------- helpers

_st ()   # _st PID FIELD: the value of a /proc/PID/status line
{
  awk -v k="$2:" '$1 == k { $1 = ""; sub(/^ +/, ""); print; exit }' "/proc/$1/status" 2> /dev/null
}

_hex ()  # _hex 0000000020000420 -> 0x20000420
{
  printf '0x%x' "$((16#${1:-0}))"
}

_ns ()   # _ns PID TYPE: the inode of /proc/PID/ns/TYPE
{
  stat -L -c %i "/proc/$1/ns/$2" 2> /dev/null
}

# _mi PID: /proc/PID/mountinfo as "id<TAB>parent<TAB>dev<TAB>root<TAB>mountpoint
# <TAB>per-mount options<TAB>optional fields<TAB>fstype<TAB>source<TAB>super options"
_mi ()
{
  awk '{
    opt = ""; i = 7
    while ($i != "-") { opt = opt (opt == "" ? "" : " ") $i; i++ }
    printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", $1, $2, $3, $4, $5, $6, opt, $(i+1), $(i+2), $(i+3)
  }' "/proc/$1/mountinfo" 2> /dev/null
}

# _mnt MOUNTPOINT: the last (topmost) mountinfo row of that mount point.
_mnt ()
{
  awk -F'\t' -v m="$1" '$5 == m { r = $0 } END { if (r != "") print r }' "$OBS_T/mi"
}

# _map_in ID MAPFILE: the id inside a user namespace of host id ID (uid_map
# read from outside: inside outside count).
_map_in ()
{
  awk -v id="$1" '{ if (id >= $2 && id < $2 + $3) { print id - $2 + $1; f = 1; exit } }
                  END { if (!f) print "unmapped(" id ")" }' "$2"
}

_cfg ()  # _cfg JQ: a value of the config ("" when absent or null)
{
  [ -n "$OBS_CONFIG" ] && [ -s "$OBS_CONFIG" ] || return 0
  jq -r "$1 // empty" "$OBS_CONFIG" 2> /dev/null
}

_has_cfg ()  # _has_cfg JQ: the config has the path (not null)
{
  [ -n "$OBS_CONFIG" ] && [ -s "$OBS_CONFIG" ] && jq -e "$1 != null" "$OBS_CONFIG" > /dev/null 2>&1
}

bad ()   # a disagreement of the entry being checked
{
  PROBS+=("$*")
}

# The entry being checked: L (name), REQ (requested, as JSON: false, true or
# a string), RQ (requested as text: "" for false/true), APP, ERRNO, DET, REASON.
_load_entry ()
{
  IFS=$'\x1f' read -r L REQ APP ERRNO DET REASON <<< "$1"
  RQ=
  case $REQ in
    false | true) ;;
    *) RQ=$(jq -r . <<< "$REQ") ;;
  esac
}

_entry ()  # _entry NAME: the TSV row of that entry ("" when absent)
{
  awk -F'\037' -v n="$1" '$1 == n { print; exit }' "$OBS_T/entries"
}

_entry_re ()  # _entry_re ERE: the first row whose name matches
{
  awk -F'\037' -v re="$1" '$1 ~ re { print; exit }' "$OBS_T/entries"
}

# ---------------------------------------------------------------- the rules

rule_apparmor ()
{
  local a b
  a=$(cat "/proc/$P/attr/current" 2> /dev/null || echo "(unreadable)")
  b=$(cat "/proc/$REF/attr/current" 2> /dev/null || echo "(unreadable)")
  if [ "$REQ" = false ]; then
    [ "$a" = "$b" ] || bad "not requested, but /proc/$P/attr/current is '$a' (kist's caller: '$b')"
    _has_cfg '.process.apparmorProfile' && bad "config.json sets process.apparmorProfile"
  else
    # kist implements no LSM: a request must be recorded as not applied.
    [ "$APP" = false ] || bad "applied, but kist implements no AppArmor (attr/current: $a)"
  fi
}
rule_selinux () { rule_apparmor; }

rule_terminal ()
{
  local fd t
  if [ "$REQ" = false ]; then
    for fd in 0 1 2; do
      t=$(readlink "/proc/$P/fd/$fd" 2> /dev/null)
      case $t in /dev/pts/* | /dev/ptmx | /dev/console) bad "not requested, but fd $fd is $t" ;; esac
    done
    [ "$(_cfg .process.terminal)" = true ] && bad "config.json asks process.terminal true"
  else
    t=$(readlink "/proc/$P/fd/0" 2> /dev/null)
    case $t in /dev/pts/*) ;; *) bad "requested, but fd 0 is $t" ;; esac
  fi
}

# The cgroup v2 scope: /proc/PID/cgroup's 0:: line against the caller's.
rule_cgroup ()
{
  local cfgpath want
  cfgpath=$(_cfg .linux.cgroupsPath)
  if [ "$OBS_CGPATH" != "$OBS_REF_CGPATH" ]; then
    # In force: the container is in a cgroup of its own.
    [ "$APP" = true ] || bad "the container is in the scope $CG2$OBS_CGPATH (its /proc/PID/cgroup: 0::$OBS_CGPATH; the caller's: 0::$OBS_REF_CGPATH), but the entry says requested $REQ, applied $APP${DET:+ ($DET)}"
    if [ -n "$cfgpath" ]; then
      want=$cfgpath
    else
      want=${OBS_CGPATH#"$OBS_REF_CGPATH"}
      want=${want#/}
    fi
    [ "$RQ" = "$want" ] || bad "requested should be the scope '$want' (kist-report.5: the path kist chose, or linux.cgroupsPath), is $REQ"
    [[ $DET == *"$CG2$OBS_CGPATH"* ]] || bad "detail does not name the scope $CG2$OBS_CGPATH: $DET"
    grep -qx "$P" "$CG2$OBS_CGPATH/cgroup.procs" 2> /dev/null \
      || bad "pid $P is not in $CG2$OBS_CGPATH/cgroup.procs"
  else
    [ "$APP" = false ] || bad "applied, but the container is in its caller's cgroup 0::$OBS_CGPATH"
    [ "$REQ" = false ] || [ "$APP" = true ] || [ -n "$ERRNO" ] || bad "requested, not applied, without errno"
    [[ $DET == *"no scope"* ]] || [ "$REQ" != false ] || bad "not requested without saying 'no scope: REASON': $DET"
  fi
}

rule_cgroup_devices ()
{
  local progs id n
  if [ "$OBS_CGPATH" = "$OBS_REF_CGPATH" ]; then
    [ "$APP" = false ] || bad "applied, but there is no scope of the container's own to attach it to"
    return
  fi
  progs=$("$OBS_PEEK" cgdev "$CG2$OBS_CGPATH" 2>&1) || { bad "peek cgdev: $progs"; return; }
  if [ "$APP" = true ]; then
    id=$(sed -nE 's/^bpf program ([0-9]+) .*/\1/p' <<< "$DET")
    n=$(sed -nE 's/^bpf program [0-9]+ \(([0-9]+) insns.*/\1/p' <<< "$DET")
    [ "$(wc -l <<< "$progs")" = 1 ] && [ -n "$progs" ] \
      || bad "BPF_PROG_QUERY of $CG2$OBS_CGPATH lists not exactly one device program: ${progs:-none}"
    [ "$progs" = "$id $n" ] || bad "detail says program $id with $n insns; the scope has: ${progs:-none}"
    case $RQ in
      default) _has_cfg '.linux.resources.devices' && bad "requested default, but config.json has linux.resources.devices" ;;
      *" rules") [ "${RQ% rules}" = "$(_cfg '.linux.resources.devices | length')" ] || bad "requested $RQ, config.json has $(_cfg '.linux.resources.devices | length') rules" ;;
    esac
  else
    [ -z "$progs" ] || bad "not applied, but the scope has the device program(s): $progs"
  fi
}

# cgroup.<file>: the file in the scope.
rule_cgroup_file ()
{
  local f=${L#cgroup.} ctl v
  ctl=${f%%.*}
  case $f in
    # Settings cgroup v2 cannot express: never applied.
    memory.kernel | memory.kernelTCP | memory.swappiness | memory.disableOOMKiller | cpu.rt_runtime | cpu.rt_period | io.leafWeight | network)
      [ "$APP" = false ] && [ "$ERRNO" = EOPNOTSUPP ] || bad "cgroup v2 has no $f: must be not applied with EOPNOTSUPP"
      return ;;
  esac
  if [ "$APP" = true ]; then
    v=$(cat "$CG2$OBS_CGPATH/$f" 2>&1 | tr '\n' ';' | sed 's/;$//')
    [ "$v" = "$RQ" ] || [[ $DET == *"rounded down"* ]] || bad "requested '$RQ', $CG2$OBS_CGPATH/$f reads '$v'"
    [[ $DET == *"read back $v"* ]] || [[ $DET == *"write-only"* ]] || bad "detail '$DET' does not read back '$v'"
  else
    if [ "$ERRNO" = EOPNOTSUPP ]; then
      if tr ' ' '\n' < "$CG2$OBS_CGPATH/cgroup.controllers" 2> /dev/null | grep -qx "$ctl"; then
        bad "EOPNOTSUPP, but the $ctl controller is in $CG2$OBS_CGPATH/cgroup.controllers"
      fi
      [ ! -e "$CG2$OBS_CGPATH/$f" ] || bad "EOPNOTSUPP, but $CG2$OBS_CGPATH/$f exists: $(cat "$CG2$OBS_CGPATH/$f")"
      [[ $REASON == *"$ctl controller not available"* ]] || bad "reason does not say the $ctl controller is not available: $REASON"
    else
      [ -n "$ERRNO" ] || bad "not applied without errno"
    fi
  fi
}

# cgroup.v1: the v1 hierarchies the container is in (inherited on a hybrid host).
rule_cgroup_v1 ()
{
  local line
  while IFS= read -r line; do
    [[ $DET == *"${line#*:}"* ]] || [[ $DET == *"${line##*:}"* ]] \
      || bad "the container is in the v1 cgroup $line; the entry does not name it: $DET"
  done < <(grep -v '^0::' "/proc/$P/cgroup" | cut -d: -f2- | awk -F: '$2 != "/"')
}

rule_idmap ()
{
  local t=${L#idmap.} want got
  if [ "$REQ" = false ]; then
    [ "$(_ns "$P" user)" = "$(_ns "$REF" user)" ] \
      || bad "not requested, but the container has a user namespace of its own"
    return
  fi
  got=$(awk '{ printf "%s%s:%s:%s", (NR > 1 ? "," : ""), $1, $2, $3 }' "/proc/$P/${t}_map")
  [ "$got" = "$RQ" ] || bad "requested $RQ, /proc/$P/${t}_map reads $got"
  if _has_cfg ".linux.${t}Mappings"; then
    want=$(jq -r ".linux.${t}Mappings | map(\"\(.containerID):\(.hostID):\(.size)\") | join(\",\")" "$OBS_CONFIG")
    [ "$want" = "$RQ" ] || bad "config.json asks $want, the entry requested $RQ"
  fi
}

_nsfile ()
{
  case $1 in mount) echo mnt ;; *) echo "$1" ;; esac
}
_nscfg ()
{
  case $1 in net) echo network ;; *) echo "$1" ;; esac
}

rule_namespace ()
{
  local t=${L#namespace.} f a h nspid root own
  f=$(_nsfile "$t")
  a=$(_ns "$P" "$f")
  h=$(_ns "$REF" "$f")
  [ "$t" = time ] && a=$(_ns "$P" time)
  if [ "$REQ" = false ]; then
    [ "$a" = "$h" ] || bad "not requested (shared with the host), but /proc/$P/ns/$f is $a and the caller's $h"
    _has_cfg ".linux.namespaces[]? | select(.type == \"$(_nscfg "$t")\")" && bad "config.json lists the $t namespace"
    return
  fi
  if [ "$REQ" = true ]; then
    [ "$a" != "$h" ] || bad "requested new, but /proc/$P/ns/$f is the caller's ($h)"
    [[ $DET == *"inode $a (host $h)"* ]] || bad "detail '$DET' does not say 'inode $a (host $h)'"
  else
    [ "$a" = "$(stat -L -c %i "$RQ" 2> /dev/null)" ] || bad "joined $RQ, but /proc/$P/ns/$f is $a"
  fi
  [ "$APP" = true ] || bad "requested, not applied: $ERRNO $REASON"
  if [ "$t" = pid ] && [ "$REQ" = true ]; then
    # The container's init (with kist's init, the command's parent).
    nspid=$(_st "${OBS_INIT:-$P}" NSpid)
    [ "${nspid##* }" = 1 ] || bad "not pid 1 in its pid namespace (NSpid: $nspid)"
  fi
  if [ "$t" = cgroup ] && [ "$REQ" = true ]; then
    # The root of the new cgroup namespace: the container's own cgroup as
    # seen from inside that namespace (/proc/PID/cgroup is relative to the
    # reader's cgroup namespace), taken off the host path.
    root=$(nsenter -C -t "$P" cat "/proc/$P/cgroup" 2> /dev/null | sed -n 's/^0:://p')
    if [ "$root" = / ]; then
      root=$OBS_CGPATH
    elif [ -n "$root" ] && [[ $OBS_CGPATH == *"$root" ]]; then
      root=${OBS_CGPATH%"$root"}
      root=${root:-/}
    else
      root="(unknown: the container's cgroup $OBS_CGPATH is ${root:-unreadable} from inside)"
    fi
    own=$OBS_CGPATH
    _cgns_root_stated "$root" "$own"
  fi
}

# _cgns_root_stated ROOT OWN: the namespace.cgroup detail must say where
# the namespace is rooted when that is not the container's own cgroup or is
# the host's cgroup2 root (the container then sees the whole hierarchy); what
# it says must be true: "rooted N levels below the cgroup2 root" or "rooted
# at the cgroup2 root".
_cgns_root_stated ()
{
  local root=$1 own=$2 depth n
  case $root in
    /*) ;;
    *) bad "the root of the cgroup namespace cannot be read from outside: $root"; return ;;
  esac
  depth=$(tr '/' '\n' <<< "$root" | sed '/^$/d' | wc -l)
  if [[ $DET =~ rooted\ ([0-9]+)\ levels?\ below ]]; then
    n=${BASH_REMATCH[1]}
    [ "$n" = "$depth" ] || bad "the detail says rooted $n levels below the cgroup2 root; it is rooted at $root ($depth levels)"
  elif [[ $DET =~ rooted\ at\ the\ cgroup2\ root ]] || [[ $DET =~ rooted\ at\ /([^[:alnum:]]|$) ]]; then
    [ "$depth" = 0 ] || bad "the detail says rooted at the cgroup2 root; it is rooted at $root"
  elif [ "$root" != "$own" ]; then
    bad "in force: the cgroup namespace is rooted at $root, above the container's cgroup $own, so the container sees the hierarchy above it; the detail does not say so: $DET"
  elif [ "$depth" = 0 ]; then
    bad "in force: no scope, the cgroup namespace is rooted at the host's cgroup2 root / (the container sees the whole hierarchy); the detail does not say so: $DET"
  fi
}

rule_network_loopback ()
{
  local links
  if [ "$REQ" = false ]; then
    [ "$(_ns "$P" net)" = "$(_ns "$REF" net)" ] || bad "not requested, but the container has a network namespace of its own"
    return
  fi
  links=$(nsenter -n -t "$P" ip -o link 2>&1)
  if [ "$(wc -l <<< "$links")" != 1 ] || ! grep -qE '^1: lo: <([A-Z_]+,)*UP' <<< "$links"; then
    bad "requested, but nsenter -n ip -o link shows: $links"
  fi
  [[ $DET == *"lo UP"* ]] || bad "detail does not say lo UP: $DET"
}

rule_rootfs_propagation ()
{
  local tags want
  tags=$(awk -F'\t' '$7 != "" { print $5 " " $7 }' "$OBS_T/mi")
  if [ "$REQ" = false ]; then
    # kist default: rprivate, so no mount is shared or a slave.
    [ -z "$tags" ] || bad "kist default rprivate, but mounts propagate: $(echo $tags)"
    return
  fi
  tags=$(awk -F'\t' '$5 == "/" { print $7 }' "$OBS_T/mi")
  case $RQ in
    private | rprivate) want='^$' ;;
    shared | rshared) want='shared:' ;;
    slave | rslave) want='master:' ;;
    *) want=. ;;
  esac
  grep -qE "$want" <<< "$tags" || bad "requested $RQ, / has propagation '$tags'"
}

rule_rootfs_bind ()
{
  local root id rootfs
  root=$(_mnt /)
  id=$(cut -f1 <<< "$root")
  [[ $DET == *"(mount $id "* ]] || bad "/ is mount $id; the detail says: $DET"
  rootfs=$OBS_ROOTFS
  [ -n "$rootfs" ] || return 0
  [ "$(cut -f4 <<< "$root")" = "$rootfs" ] || bad "the container's / is $(cut -f4 <<< "$root") of its device, not the rootfs $rootfs"
  [ "$(stat -L -c '%d:%i' "/proc/$P/root")" = "$(stat -c '%d:%i' "$rootfs" 2> /dev/null)" ] \
    || [ ! -e "$rootfs" ] || bad "/proc/$P/root is not the rootfs $rootfs"
}

rule_rootfs_pivot_root ()
{
  local id n
  id=$(cut -f1 <<< "$(_mnt /)")
  n=$(awk -F'\t' '$5 == "/"' "$OBS_T/mi" | wc -l)
  [[ $DET == *"/ is mount $id;"* ]] || bad "/ is mount $id; the detail says: $DET"
  [ "$n" = 1 ] || bad "$n mounts at / (the old root is still there)"
  if [[ $DET == *chroot* ]]; then return; fi
  # After pivot_root the process's root is the root of its mount namespace.
  [ "$(stat -L -c '%d:%i' "/proc/$P/root")" = "$(stat -L -c '%d:%i' "/proc/$P/root/")" ] || bad "root mismatch"
}

rule_rootfs_readonly ()
{
  local o
  o=$(cut -f6 <<< "$(_mnt /)")
  if [ "$REQ" = false ]; then
    [[ ,$o, != *,ro,* ]] || bad "not requested, but / is mounted $o"
  else
    [[ ,$o, == *,ro,* ]] || bad "requested, but / is mounted $o"
  fi
  if _has_cfg .root.readonly; then
    [ "$(jq -r .root.readonly "$OBS_CONFIG")" = "$([ "$REQ" = false ] && echo false || echo true)" ] \
      || bad "config.json's root.readonly is $(jq -r .root.readonly "$OBS_CONFIG")"
  fi
}

# mounts: every mount the detail lists is there, with its type and flags.
rule_mounts ()
{
  local list n dest type row fst opts i cdest ctype copts o
  n=$(sed -nE 's/^([0-9]+) mounts: .*/\1/p' <<< "$DET")
  list=$(sed -nE 's/^[0-9]+ mounts: (.*) \(flags verified\).*/\1/p' <<< "$DET")
  [ -n "$n" ] || { [ "$REQ" = false ] || bad "detail lists no mounts: $DET"; return; }
  if _has_cfg .mounts; then
    [ "$n" = "$(jq '.mounts | length' "$OBS_CONFIG")" ] || bad "$n mounts, config.json has $(jq '.mounts | length' "$OBS_CONFIG")"
  fi
  while IFS= read -r i; do
    dest=${i% *}
    type=${i##* }
    row=$(_mnt "$dest")
    if [ -z "$row" ]; then
      bad "$dest ($type): no mount there"
      continue
    fi
    fst=$(cut -f8 <<< "$row")
    opts=$(cut -f6 <<< "$row")
    case $type in
      bind | rbind) ;;
      cgroup) [ "$fst" = cgroup2 ] || bad "$dest: a cgroup mount is $fst" ;;
      *) [ "$fst" = "$type" ] || bad "$dest: type $type in the detail, $fst mounted" ;;
    esac
    OBS_EXPLAINED[$dest]=mounts
    # The config's options for this destination.
    _has_cfg .mounts || continue
    cdest=$(jq -c --arg d "$dest" '[.mounts[] | select(.destination == $d)] | last' "$OBS_CONFIG")
    [ "$cdest" != null ] || { bad "$dest is not in config.json's mounts"; continue; }
    copts=$(jq -r '.options // [] | join(",")' <<< "$cdest")
    ctype=$(jq -r '.type // ""' <<< "$cdest")
    for o in ro nosuid nodev noexec; do
      if [[ ,$copts, == *,$o,* ]] || { [ "$o" = ro ] && [[ ,$copts, == *,rro,* ]]; }; then
        [[ ,$opts, == *,$o,* ]] || bad "$dest: config.json asks $o, mounted $opts"
      elif [ "$o" = ro ] && [ "$type" != bind ] && [ "$type" != rbind ]; then
        [[ ,$opts, != *,ro,* ]] || bad "$dest: mounted ro, config.json asks $copts"
      fi
    done
    if [ "$ctype" = bind ] || [[ ,$copts, == *,bind,* ]] || [[ ,$copts, == *,rbind,* ]]; then
      local src
      src=$(jq -r .source <<< "$cdest")
      [ "$(cut -d$'\x1f' -f3 <<< "$row")" = "$(stat -L -c '%Hd:%Ld' "$src" 2> /dev/null)" ] \
        || bad "$dest: bind of $src, but the device is $(cut -d$'\x1f' -f3 <<< "$row")"
    fi
  done < <(tr ',' '\n' <<< "$list" | sed 's/^ *//')
}

# dev: the default nodes, their numbers, the symlinks.
rule_dev ()
{
  local n want got r
  [ "$REQ" = false ] && return
  for n in null:1:3 zero:1:5 full:1:7 random:1:8 urandom:1:9 tty:5:0; do
    want=${n#*:}
    got=$(stat -c '%F %t:%T' "/proc/$P/root/dev/${n%%:*}" 2> /dev/null)
    [ "$got" = "character special file $(printf '%x:%x' "${want%:*}" "${want#*:}")" ] \
      || bad "/dev/${n%%:*} is '$got', want char $want"
    if [[ $DET == *"(mknod)"* ]]; then
      [ -z "$(_mnt "/dev/${n%%:*}")" ] || bad "/dev/${n%%:*}: a mount, the detail says mknod"
    else
      [ -n "$(_mnt "/dev/${n%%:*}")" ] && OBS_EXPLAINED[/dev/${n%%:*}]=dev
    fi
  done
  for n in ptmx:pts/ptmx fd:/proc/self/fd stdin:/proc/self/fd/0 stdout:/proc/self/fd/1 stderr:/proc/self/fd/2; do
    r=$(readlink "/proc/$P/root/dev/${n%%:*}")
    [ "$r" = "${n#*:}" ] || bad "/dev/${n%%:*} -> '$r', want ${n#*:}"
  done
  for r in $(_cfg '.linux.devices[]?.path'); do
    [ -e "/proc/$P/root$r" ] || bad "linux.devices $r is missing"
  done
}

rule_hooks ()
{
  local h=${L#hooks.}
  if [ "$REQ" = false ]; then
    [ "$(_cfg ".hooks.$h | length")" = "" ] || [ "$(_cfg ".hooks.$h | length")" = 0 ] \
      || bad "config.json has hooks.$h"
  fi
}

_uts ()  # _uts PID hostname|domainname
{
  nsenter -u -t "$1" "$2" 2> /dev/null
}

rule_hostname ()
{
  local v h
  v=$(_uts "$P" "$L")
  h=$(_uts "$REF" "$L")
  if [ "$REQ" = false ]; then
    [ "$v" = "$h" ] || bad "not requested, but the container's $L is '$v' (caller's '$h')"
    return
  fi
  [ "$v" = "$RQ" ] || bad "requested '$RQ', nsenter -u $L reads '$v'"
  [ "$(_ns "$P" uts)" != "$(_ns "$REF" uts)" ] || bad "set in the caller's UTS namespace"
  [ -z "$OBS_CONFIG" ] || [ "$(_cfg ".$L")" = "$RQ" ] || bad "config.json's $L is '$(_cfg ".$L")'"
}
rule_domainname () { rule_hostname; }

rule_sysctl ()
{
  local kv k v got
  if [ "$REQ" = false ]; then
    [ "$(_cfg '.linux.sysctl | length')" = "" ] || [ "$(_cfg '.linux.sysctl | length')" = 0 ] || bad "config.json has linux.sysctl"
    return
  fi
  for kv in ${RQ//,/ }; do
    k=${kv%%=*}
    v=${kv#*=}
    got=$(nsenter -n -i -u -t "$P" cat "/proc/sys/${k//.//}" 2> /dev/null)
    [ "$got" = "$v" ] || bad "$k: requested $v, reads $got"
  done
}

# _split_paths DETAIL LABEL: the paths after "LABEL: " up to ";" or the end.
_paths_after ()
{
  sed -nE "s#.*$2[^:]*: ([^;]*).*#\1#p" <<< "$1"
}

rule_masked_paths ()
{
  local p row all=
  [ "$REQ" = false ] && return
  for p in $(_paths_after "$DET" 'dirs \(empty read-only tmpfs\)'); do
    row=$(_mnt "$p")
    [ "$(cut -f8 <<< "$row")" = tmpfs ] && [[ ,$(cut -f6 <<< "$row"), == *,ro,* ]] \
      || bad "$p: not an empty read-only tmpfs: $row"
    [ -z "$(ls -A "/proc/$P/root$p" 2> /dev/null)" ] || bad "$p is not empty"
    OBS_EXPLAINED[$p]=masked_paths
    all+=" $p"
  done
  for p in $(_paths_after "$DET" 'files \(/dev/null\)'); do
    [ -n "$(_mnt "$p")" ] || bad "$p: no mount there"
    [ "$(stat -c '%F %t:%T' "/proc/$P/root$p" 2> /dev/null)" = "character special file 1:3" ] \
      || bad "$p is not the null device: $(stat -c '%F %t:%T' "/proc/$P/root$p" 2>&1)"
    OBS_EXPLAINED[$p]=masked_paths
    all+=" $p"
  done
  for p in $(_paths_after "$DET" 'missing, skipped'); do
    [ ! -e "/proc/$P/root$p" ] && [ ! -L "/proc/$P/root$p" ] || bad "$p: 'missing, skipped', but it exists in the container"
    all+=" $p"
  done
  for p in $(_cfg '.linux.maskedPaths[]?'); do
    [[ "$all " == *" $p "* ]] || bad "config.json masks $p; the detail does not account for it"
  done
}

rule_readonly_paths ()
{
  local p row all=
  [ "$REQ" = false ] && return
  for p in $(_paths_after "$DET" 'read-only \(recursive bind, ST_RDONLY verified\)'); do
    row=$(_mnt "$p")
    [[ ,$(cut -f6 <<< "$row"), == *,ro,* ]] || bad "$p: not read-only: ${row:-no mount}"
    OBS_EXPLAINED[$p]=readonly_paths
    all+=" $p"
  done
  for p in $(_paths_after "$DET" 'missing, skipped'); do
    [ ! -e "/proc/$P/root$p" ] || bad "$p: 'missing, skipped', but it exists in the container"
    all+=" $p"
  done
  for p in $(_cfg '.linux.readonlyPaths[]?'); do
    [[ "$all " == *" $p "* ]] || bad "config.json makes $p read-only; the detail does not account for it"
  done
}

rule_oom_score_adj ()
{
  local v h
  v=$(cat "/proc/$P/oom_score_adj")
  h=$(cat "/proc/$REF/oom_score_adj")
  if [ "$REQ" = false ]; then
    [ "$v" = "$h" ] || bad "not requested, but oom_score_adj is $v (caller's $h)"
    _has_cfg .process.oomScoreAdj && bad "config.json sets process.oomScoreAdj"
  else
    [ "$v" = "$RQ" ] || bad "requested $RQ, /proc/$P/oom_score_adj reads $v"
    [ -z "$OBS_CONFIG" ] || [ "$(_cfg .process.oomScoreAdj)" = "$RQ" ] || bad "config.json asks $(_cfg .process.oomScoreAdj)"
  fi
}

rule_cwd ()
{
  [ "$(stat -L -c '%d:%i' "/proc/$P/cwd")" = "$(stat -L -c '%d:%i' "/proc/$P/root$RQ" 2> /dev/null)" ] \
    || bad "requested $RQ, /proc/$P/cwd is another directory ($(readlink "/proc/$P/cwd"))"
  [ -z "$(_cfg .process.cwd)" ] || [ "$(_cfg .process.cwd)" = "$RQ" ] || bad "config.json's cwd is $(_cfg .process.cwd)"
}

rule_environment ()
{
  local want got add
  got=$(tr '\0' '\n' < "/proc/$P/environ" | sort)
  want=$(jq -r '.process.env[]?' "$OBS_CONFIG" 2> /dev/null)
  add=$(sed -nE 's/.*; (HOME=[^ ]*) added.*/\1/p' <<< "$DET")
  want=$(printf '%s\n%s\n' "$want" "$add" | sed '/^$/d' | sort)
  [ "$got" = "$want" ] || bad "environ is {$(echo $got)}, process.env (+ the detail's addition) is {$(echo $want)}"
  [[ $DET =~ ^$(jq -r '.process.env | length' "$OBS_CONFIG" 2> /dev/null)\ variables?, ]] \
    || bad "detail '$DET' does not count the $(jq -r '.process.env | length' "$OBS_CONFIG" 2> /dev/null) variables"
}

rule_rlimit ()
{
  local name=${L#rlimit.} row soft hard want
  if [ "$L" = rlimit ]; then
    [ "$REQ" = false ] || bad "the single rlimit entry is requested"
    [ "$(_cfg '.process.rlimits | length')" = "" ] || [ "$(_cfg '.process.rlimits | length')" = 0 ] \
      || bad "config.json has process.rlimits"
    return
  fi
  row=$(grep -F "$(_rlimit_label "$name")" "/proc/$P/limits")
  soft=$(awk -v l="$(_rlimit_label "$name")" '{ sub(l, ""); print $1 }' <<< "$row")
  hard=$(awk -v l="$(_rlimit_label "$name")" '{ sub(l, ""); print $2 }' <<< "$row")
  if [ "$APP" = true ]; then
    [ "$soft:$hard" = "$RQ" ] || bad "requested $RQ, /proc/$P/limits reads $soft:$hard"
  fi
  want=$(_cfg ".process.rlimits[]? | select(.type == \"$name\") | \"\(.soft):\(.hard)\"")
  [ -z "$OBS_CONFIG" ] || [ "${want//18446744073709551615/unlimited}" = "$RQ" ] || bad "config.json asks $want"
}

_rlimit_label ()
{
  case $1 in
    RLIMIT_CPU) echo "Max cpu time" ;;
    RLIMIT_FSIZE) echo "Max file size" ;;
    RLIMIT_DATA) echo "Max data size" ;;
    RLIMIT_STACK) echo "Max stack size" ;;
    RLIMIT_CORE) echo "Max core file size" ;;
    RLIMIT_RSS) echo "Max resident set" ;;
    RLIMIT_NPROC) echo "Max processes" ;;
    RLIMIT_NOFILE) echo "Max open files" ;;
    RLIMIT_MEMLOCK) echo "Max locked memory" ;;
    RLIMIT_AS) echo "Max address space" ;;
    RLIMIT_LOCKS) echo "Max file locks" ;;
    RLIMIT_SIGPENDING) echo "Max pending signals" ;;
    RLIMIT_MSGQUEUE) echo "Max msgqueue size" ;;
    RLIMIT_NICE) echo "Max nice priority" ;;
    RLIMIT_RTPRIO) echo "Max realtime priority" ;;
    RLIMIT_RTTIME) echo "Max realtime timeout" ;;
  esac
}

# Inherited process attributes, not requested: the same as kist's caller.
rule_inherited ()
{
  local a b
  case $L in
    io_priority) a=$(ionice -p "$P" 2>&1); b=$(ionice -p "$REF" 2>&1) ;;
    scheduler) a="$(chrt -p "$P" 2>&1 | sed 's/.*: //' | tr '\n' ' ') nice $(awk '{ sub(/^.*\) /, ""); print $17 }' "/proc/$P/stat")"
               b="$(chrt -p "$REF" 2>&1 | sed 's/.*: //' | tr '\n' ' ') nice $(awk '{ sub(/^.*\) /, ""); print $17 }' "/proc/$REF/stat")" ;;
    personality) a=$(cat "/proc/$P/personality"); b=$(cat "/proc/$REF/personality") ;;
    memory_policy) a=$(awk '{ print $2 }' "/proc/$P/numa_maps" | sort -u | tr '\n' ' ')
                   b=$(awk '{ print $2 }' "/proc/$REF/numa_maps" | sort -u | tr '\n' ' ') ;;
    exec_cpu_affinity) a=$(_st "$P" Cpus_allowed_list); b=$(_st "$REF" Cpus_allowed_list) ;;
  esac
  if [ "$REQ" = false ]; then
    [ "$a" = "$b" ] || bad "not requested (inherited), but the container has '$a', kist's caller '$b'"
  else
    [ "$APP" = true ] || return 0
    [ "$L" != personality ] || [ "$a" = "$( [ "$RQ" = LINUX32 ] && echo 00000008 || echo 00000000)" ] \
      || bad "requested $RQ, /proc/$P/personality is $a"
  fi
}

rule_user ()
{
  local uid gid groups umask wu wg wgr wm u
  eval "$(sed -nE 's/^uid=([0-9]+) gid=([0-9]+) groups=([^ ]+) umask=([0-7]+)$/wu=\1 wg=\2 wgr=\3 wm=\4/p' <<< "$RQ")"
  [ -n "${wu:-}" ] || { bad "cannot read the request '$RQ'"; return; }
  uid=
  for u in $(_st "$P" Uid); do uid+="$(_map_in "$u" "/proc/$P/uid_map") "; done
  gid=
  for u in $(_st "$P" Gid); do gid+="$(_map_in "$u" "/proc/$P/gid_map") "; done
  groups=
  for u in $(_st "$P" Groups); do groups+="${groups:+,}$(_map_in "$u" "/proc/$P/gid_map")"; done
  umask=$(_st "$P" Umask)
  [ "$uid" = "$wu $wu $wu $wu " ] || bad "requested uid $wu, Uid (in the container) is $uid"
  [ "$gid" = "$wg $wg $wg $wg " ] || bad "requested gid $wg, Gid (in the container) is $gid"
  [ "${groups:-none}" = "$wgr" ] || bad "requested groups $wgr, Groups (in the container) is ${groups:-none}"
  [ "$umask" = "$wm" ] || bad "requested umask $wm, Umask is $umask"
  [[ $DET == "$RQ"* ]] || bad "detail '$DET' does not read back the request"
  if [ -n "$(_cfg .process.user.uid)" ]; then
    [ "$(_cfg .process.user.uid)" = "$wu" ] && [ "$(_cfg .process.user.gid)" = "$wg" ] \
      || bad "config.json asks uid $(_cfg .process.user.uid) gid $(_cfg .process.user.gid)"
    [ "$(_cfg '.process.user.additionalGids // [] | map(tostring) | join(",")' | sed 's/^$/none/')" = "$wgr" ] \
      || bad "config.json asks groups $(_cfg '.process.user.additionalGids')"
  fi
}

_capmask ()  # _capmask JSONARRAY-of-names: the mask, by the bit order of `kist features`
{
  jq -r --argjson all "$OBS_CAPS" '. // [] | map(. as $n | $all | index($n)) | map(select(. != null))
    | reduce .[] as $b (0; . + pow(2; $b)) | floor' <<< "$1" | xargs printf '0x%x'
}

rule_capabilities ()
{
  local got s want
  got="bnd=$(_hex "$(_st "$P" CapBnd)") eff=$(_hex "$(_st "$P" CapEff)") prm=$(_hex "$(_st "$P" CapPrm)") inh=$(_hex "$(_st "$P" CapInh)") amb=$(_hex "$(_st "$P" CapAmb)")"
  # requested is what config.json asks (checked below); the detail starts
  # with what is in force once the program runs (the execve's rules).
  [[ $DET == "$got after the execve"* ]] || bad "detail '$DET', /proc/$P/status has $got"
  if _has_cfg .process.capabilities; then
    want=
    for s in bounding:bnd effective:eff permitted:prm inheritable:inh ambient:amb; do
      want+="${want:+ }${s#*:}=$(_capmask "$(jq -c ".process.capabilities.${s%:*}" "$OBS_CONFIG")")"
    done
    [ "$want" = "$RQ" ] || bad "config.json asks $want"
  fi
}

rule_no_new_privileges ()
{
  local v
  v=$(_st "$P" NoNewPrivs)
  if [ "$REQ" = false ]; then
    [ "$v" = "$(_st "$REF" NoNewPrivs)" ] || bad "not requested, but NoNewPrivs is $v"
    [ "$(_cfg .process.noNewPrivileges)" != true ] || bad "config.json asks noNewPrivileges true"
  else
    [ "$v" = 1 ] || bad "requested, NoNewPrivs is $v"
  fi
}

rule_session ()
{
  local f
  read -r -a f <<< "$(sed 's/^.*) //' "/proc/$P/stat")"
  # f[0] state, f[1] ppid, f[2] pgrp, f[3] session, f[4] tty_nr
  if [ "$REQ" = false ]; then
    [ "${f[3]}" = "$(sed 's/^.*) //' "/proc/$REF/stat" | cut -d' ' -f4)" ] || bad "not requested, but the session is ${f[3]}"
    return
  fi
  [ "${f[3]}" = "$P" ] || bad "requested new, but the session of $P is ${f[3]} (not its own)"
  if [ "$(_cfg .process.terminal)" != true ]; then
    [ "${f[4]}" = 0 ] || bad "no terminal requested, but tty_nr is ${f[4]}"
  fi
}

rule_seccomp ()
{
  local mode n rn
  mode=$(_st "$P" Seccomp)
  n=$(_st "$P" Seccomp_filters)
  rn=$(_st "$REF" Seccomp_filters)
  if [ "$REQ" = false ]; then
    [ "$n" = "$rn" ] && [ "$mode" = "$(_st "$REF" Seccomp)" ] || bad "not requested, but Seccomp: $mode, Seccomp_filters: $n (caller: $rn)"
    case $(_cfg '.annotations["run.kist.seccomp.profile"]') in
      "" | none) ;;
      *) bad "config.json's run.kist.seccomp.profile is $(_cfg '.annotations["run.kist.seccomp.profile"]')" ;;
    esac
    _has_cfg .linux.seccomp && bad "config.json has linux.seccomp"
    return
  fi
  [ "$APP" = true ] || { bad "requested, not applied: $ERRNO $REASON"; return; }
  [ "$mode" = 2 ] || bad "Seccomp: $mode"
  [ "$n" = $((rn + 1)) ] || bad "Seccomp_filters: $n, the caller has $rn: not one more"
  local re="Seccomp_filters:? ($rn -> )?$n([^0-9]|\$)"
  [[ $DET =~ $re ]] || bad "detail does not say Seccomp_filters $n (the caller has $rn): $DET"
  if _has_cfg .linux.seccomp; then
    [ "$RQ" = linux.seccomp ] || bad "config.json has linux.seccomp, requested $REQ"
  elif [ -n "$OBS_CONFIG" ] && [ -n "$(_cfg '.annotations["run.kist.seccomp.profile"]')" ]; then
    [ "$RQ" = "$(_cfg '.annotations["run.kist.seccomp.profile"]')" ] || bad "config.json's annotation asks $(_cfg '.annotations["run.kist.seccomp.profile"]')"
  fi
  # The instruction count is checked by peek_seccomp at the end (ptrace).
  OBS_SECCOMP_INSNS=$(sed -nE 's/.*; ([0-9]+) BPF insns;.*/\1/p' <<< "$DET")
}

rule_exec ()
{
  local args want exe
  args=$(tr '\0' '\n' < "/proc/$P/cmdline")
  want=$(jq -r '.process.args[]?' "$OBS_CONFIG" 2> /dev/null)
  [ "$args" = "$want" ] || bad "cmdline is '$(echo $args)', process.args '$(echo $want)'"
  [ "$APP" = true ] || bad "the program runs, the entry says not applied"
  exe=$(readlink "/proc/$P/exe")
  [ -n "$exe" ] || bad "no /proc/$P/exe"
}

rule_structural ()
{
  # kist-report.5: not requested => not applied; not applied => errno + reason.
  if [ "$REQ" = false ] && [ "$APP" = true ]; then bad "applied but not requested"; fi
  if [ "$REQ" != false ] && [ "$APP" = false ] && { [ -z "$ERRNO" ] || [ -z "$REASON" ]; }; then
    bad "requested, not applied, without errno and reason"
  fi
  if [ "$APP" = true ] && [ -n "$ERRNO" ]; then bad "applied with errno $ERRNO"; fi
}

# The entries the runtime is adding (names by PDEATH_RE / FDS_RE).
rule_pdeath ()
{
  OBS_PDEATH_ENTRY=$L
}
rule_fds ()
{
  local fds
  fds=$(ls "/proc/$P/fd" | sort -n | tr '\n' ' ')
  if [ "$APP" = true ]; then
    [ "$fds" = "0 1 2 " ] || [ -n "$OBS_PRESERVED" ] || bad "applied, but the container holds fds $fds"
  fi
}

# init: applied, the process is the child of its pid namespace's PID 1
# (kist's init); not requested, a process in a new pid namespace is PID 1.
rule_init ()
{
  local nspid n ppid pl
  nspid=$(awk '/^NSpid:/ { $1 = ""; print }' "/proc/$P/status")
  n=$(wc -w <<< "$nspid")
  if [ "$APP" = true ]; then
    ppid=$(awk '/^PPid:/ { print $2 }' "/proc/$P/status")
    pl=$(awk '/^NSpid:/ { print $NF }' "/proc/$ppid/status" 2> /dev/null)
    [ "$pl" = 1 ] && [ "${nspid##* }" != 1 ] \
      || bad "applied, but the process is pid ${nspid##* } in its namespace and its parent ${pl:-?}"
  elif [ "$n" -gt 1 ] && [ "${nspid##* }" != 1 ]; then
    bad "not requested, but the process is pid ${nspid##* } of its new pid namespace, not its init"
  fi
}

# landlock: no file shows a Landlock domain, so the observer asks the
# kernel through the process itself: system calls injected into it with
# ptrace (peek landlock, x86_64), a mkdir in the detail's probe directory
# and a TCP bind to 127.0.0.1:0.  Applied: the detail names the kernel's
# ABI, the mkdir is denied (EACCES), and the bind too when the detail says
# TCP is denied (else it works).  Not requested (a config's create or run):
# nothing claimed.
rule_landlock ()
{
  [ "$APP" = true ] || return 0
  local got dir abi mk bd
  dir=$(sed -n 's/.*probes: .*mkdir in \([^ ]*\) denied.*/\1/p' <<< "$DET")
  got=$("$OBS_PEEK" landlock "$P" "${dir:-/dev/shm}" 2>&1) || { bad "peek landlock: $got"; return; }
  read -r _ abi _ mk _ bd <<< "$got"
  [[ $DET == "ABI $abi; "* ]] || bad "the kernel offers Landlock ABI $abi, the detail says '${DET%%;*}'"
  [ -n "$dir" ] || bad "applied, but the detail names no mkdir probe"
  [ "$mk" = EACCES ] \
    || bad "applied, but a mkdir in ${dir:-/dev/shm} injected into the process gives ${mk:-?}, not EACCES"
  if [[ $DET == *"; tcp bind+connect denied;"* ]]; then
    [ "$bd" = EACCES ] || bad "TCP denied, but a TCP bind injected into the process gives ${bd:-?}"
  elif [ "$bd" != 0 ]; then
    bad "TCP not restricted, but a TCP bind injected into the process gives ${bd:-?}"
  fi
}

_rule_for ()
{
  case $1 in
    init) echo rule_init ;;
    landlock) echo rule_landlock ;;
    apparmor | selinux | terminal | cgroup | hostname | domainname | sysctl | masked_paths | readonly_paths | oom_score_adj \
      | cwd | environment | user | capabilities | no_new_privileges | session | seccomp | exec | dev | mounts)
      echo "rule_$1" ;;
    cgroup.devices) echo rule_cgroup_devices ;;
    cgroup.v1) echo rule_cgroup_v1 ;;
    cgroup.*) echo rule_cgroup_file ;;
    idmap.uid | idmap.gid) echo rule_idmap ;;
    namespace.*) echo rule_namespace ;;
    network.loopback) echo rule_network_loopback ;;
    rootfs.propagation | rootfs.bind | rootfs.pivot_root | rootfs.readonly) echo "rule_${1/./_}" ;;
    rlimit | rlimit.*) echo rule_rlimit ;;
    io_priority | scheduler | personality | memory_policy | exec_cpu_affinity) echo rule_inherited ;;
    hooks.*) echo rule_hooks ;;
    *)
      if [[ $1 =~ $PDEATH_RE ]]; then echo rule_pdeath
      elif [[ $1 =~ $FDS_RE ]]; then echo rule_fds
      fi ;;
  esac
}

# ---------------------------------------------------------------- observe

# observe NAME REPORT PID CONFIG REF [ROOTFS]
observe ()
{
  OBS_NAME=$1 OBS_REPORT=$2 P=$3 OBS_CONFIG=$4 REF=$5 OBS_ROOTFS=${6:-}
  OBS_T=$T/obs-$OBS_NAME
  mkdir -p "$OBS_T"
  declare -gA OBS_EXPLAINED=()
  OBS_SECCOMP_INSNS=
  OBS_PDEATH_ENTRY=
  local names dup row rule ent
  if ! pid_alive "$P"; then
    fail "$OBS_NAME: the container process $P is alive to be observed" "$(cat "$OBS_REPORT" 2> /dev/null | head -c 2000)"
    return 1
  fi
  jq -r '.layers[] | [.layer, (.requested | tojson), (.applied | tostring), (.errno // ""), (.detail // ""), (.reason // "")] | map(gsub("[\u001f\n]"; " ")) | join("\u001f")' \
    "$OBS_REPORT" > "$OBS_T/entries" 2> "$OBS_T/jq.err" \
    || { fail "$OBS_NAME: the report is JSON with layers" "$(cat "$OBS_T/jq.err")"; return 1; }
  _mi "$P" > "$OBS_T/mi"
  OBS_CGPATH=$(sed -n 's/^0:://p' "/proc/$P/cgroup")
  OBS_REF_CGPATH=$(sed -n 's/^0:://p' "/proc/$REF/cgroup")
  OBS_CAPS=$("$KIST" features | jq -c .linux.capabilities)

  [ "$(jq .pid "$OBS_REPORT")" = "${OBS_INIT:-$P}" ] \
    || fail "$OBS_NAME: report pid" "report: $(jq .pid "$OBS_REPORT"), observed ${OBS_INIT:-$P}"
  dup=$(cut -d$'\x1f' -f1 "$OBS_T/entries" | sort | uniq -d)
  [ -z "$dup" ] || fail "$OBS_NAME: every layer has one entry" "twice: $dup"

  while IFS= read -r ent; do
    _load_entry "$ent"
    PROBS=()
    rule=$(_rule_for "$L")
    if [ -z "$rule" ]; then
      fail "$OBS_NAME: $L: no rule in tests/truth/observe.sh checks this entry" "$ent"
      continue
    fi
    rule_structural
    "$rule"
    if [ -n "${NOT_OBSERVABLE[$L]:-}" ] && [ "$REQ" != false ]; then
      PROBS+=("requested, but not observable from outside: ${NOT_OBSERVABLE[$L]}")
    fi
    if [ ${#PROBS[@]} = 0 ]; then
      ok "$OBS_NAME: $L"
    else
      fail "$OBS_NAME: $L: the report disagrees with the outside view" \
        "entry: requested $REQ, applied $APP${ERRNO:+, $ERRNO}${DET:+, detail: $DET}${REASON:+, reason: $REASON}" \
        "${PROBS[@]}"
    fi
  done < "$OBS_T/entries"

  _in_force
}

# need LAYER WHAT: a layer observed in force must have an entry that is applied.
_need ()
{
  local row
  row=$(_entry "$1")
  if [ -z "$row" ]; then
    fail "$OBS_NAME: in force, no entry: $1" "observed from outside: $2"
  elif [ "$(cut -d$'\x1f' -f3 <<< "$row")" != true ] && [ "${3:-}" != any ]; then
    fail "$OBS_NAME: in force, entry not applied: $1" "observed from outside: $2" "entry: ${row//$'\x1f'/ | }"
  else
    ok "$OBS_NAME: in force and reported: $1"
  fi
}

_in_force ()
{
  local f t a h row mp seen l name v
  # Every namespace that is not the caller's.
  for f in cgroup ipc mnt net pid time user uts; do
    a=$(_ns "$P" "$f")
    h=$(_ns "$REF" "$f")
    [ -n "$a" ] && [ "$a" != "$h" ] || continue
    t=$f
    [ "$f" = mnt ] && t=mount
    _need "namespace.$t" "/proc/$P/ns/$f is $a, the caller's $h"
  done
  # Every mount: explained by an entry.
  OBS_EXPLAINED[/]=rootfs.bind
  local unexplained=0
  while IFS=$'\t' read -r _ _ _ _ mp _; do
    [ -n "${OBS_EXPLAINED[$mp]:-}" ] && continue
    seen=
    for l in "${!OBS_EXPLAINED[@]}"; do
      # A submount of an rbind destination came with it.
      [ "$l" != / ] && [[ $mp == "$l"/* ]] && [ "${OBS_EXPLAINED[$l]}" = mounts ] && seen=1
    done
    [ "$mp" = /dev/console ] && [ -n "$(_entry terminal)" ] && [ "$(cut -d$'\x1f' -f3 <<< "$(_entry terminal)")" = true ] && seen=1
    [ -n "$seen" ] && continue
    fail "$OBS_NAME: in force, no entry: the mount at $mp" "$(_mnt "$mp")"
    unexplained=$((unexplained + 1))
  done < "$OBS_T/mi"
  [ "$unexplained" != 0 ] || ok "$OBS_NAME: every mount of the container is accounted for by an entry"
  # The root read-only, the loopback of a new netns, the nodes of a new /dev.
  [[ ,$(cut -f6 <<< "$(_mnt /)"), != *,ro,* ]] || _need rootfs.readonly "/ is mounted $(cut -f6 <<< "$(_mnt /)")"
  if [ "$(_ns "$P" net)" != "$(_ns "$REF" net)" ] && nsenter -n -t "$P" ip -o link show lo 2> /dev/null | grep -q '[<,]UP[,>]'; then
    _need network.loopback "lo is UP in the container's network namespace"
  fi
  [ "$(cut -f5 <<< "$(_mnt /dev)")" = /dev ] && [ -c "/proc/$P/root/dev/null" ] \
    && _need dev "/dev is a mount of its own with the device nodes in it"
  # Every resource limit that is not the caller's.
  while IFS= read -r name; do
    [ -n "$name" ] || continue
    a=$(grep -F "$(_rlimit_label "$name")" "/proc/$P/limits" | sed 's/  */ /g')
    h=$(grep -F "$(_rlimit_label "$name")" "/proc/$REF/limits" | sed 's/  */ /g')
    [ "$a" = "$h" ] || _need "rlimit.$name" "$a (the caller: $h)"
  done < <(printf '%s\n' RLIMIT_CPU RLIMIT_FSIZE RLIMIT_DATA RLIMIT_STACK RLIMIT_CORE RLIMIT_RSS RLIMIT_NPROC RLIMIT_NOFILE \
             RLIMIT_MEMLOCK RLIMIT_AS RLIMIT_LOCKS RLIMIT_SIGPENDING RLIMIT_MSGQUEUE RLIMIT_NICE RLIMIT_RTPRIO RLIMIT_RTTIME)
  a=$(cat "/proc/$P/oom_score_adj")
  [ "$a" = "$(cat "/proc/$REF/oom_score_adj")" ] || _need oom_score_adj "oom_score_adj $a"
  # The cgroups: v2 (a scope of its own), v1 (inherited on a hybrid host).
  [ "$OBS_CGPATH" = "$OBS_REF_CGPATH" ] || _need cgroup "the container is in $CG2$OBS_CGPATH"
  v=$(grep -v '^0::' "/proc/$P/cgroup" | awk -F: '$3 != "/" { printf "%s%s:%s", s, $2, $3; s = ", " }')
  [ -z "$v" ] || _need cgroup.v1 "the container is in the v1 cgroups $v (inherited from kist's caller)" any
  # Process attributes.
  [ "$(_st "$P" Seccomp_filters)" = "$(_st "$REF" Seccomp_filters)" ] || _need seccomp "Seccomp_filters: $(_st "$P" Seccomp_filters)"
  [ "$(_st "$P" NoNewPrivs)" = "$(_st "$REF" NoNewPrivs)" ] || _need no_new_privileges "NoNewPrivs: $(_st "$P" NoNewPrivs)"
  for f in CapBnd CapEff CapPrm CapInh CapAmb; do
    [ "$(_st "$P" "$f")" = "$(_st "$REF" "$f")" ] || { _need capabilities "$f: $(_st "$P" "$f") (caller: $(_st "$REF" "$f"))"; break; }
  done
  for f in Uid Gid Groups Umask; do
    [ "$(_st "$P" "$f")" = "$(_st "$REF" "$f")" ] || { _need user "$f: $(_st "$P" "$f") (caller: $(_st "$REF" "$f"))"; break; }
  done
  [ "$(_uts "$P" hostname)" = "$(_uts "$REF" hostname)" ] || _need hostname "hostname $(_uts "$P" hostname)"
  [ "$(sed 's/^.*) //' "/proc/$P/stat" | cut -d' ' -f4)" = "$(sed 's/^.*) //' "/proc/$REF/stat" | cut -d' ' -f4)" ] \
    || _need session "the container's process leads session $(sed 's/^.*) //' "/proc/$P/stat" | cut -d' ' -f4)"
  cmp -s <(tr '\0' '\n' < "/proc/$P/environ" | sort) <(tr '\0' '\n' < "/proc/$REF/environ" | sort) \
    || _need environment "an environment that is not the caller's"
  # The close-on-exec sweep: kist's caller handed it fd $OBS_INHERITED_FD
  # (not close-on-exec); the container does not have it.
  if [ -n "${OBS_INHERITED_FD:-}" ]; then
    a=$(ls "/proc/$P/fd" | sort -n | tr '\n' ' ')
    if [ -e "/proc/$REF/fd/$OBS_INHERITED_FD" ] && [ ! -e "/proc/$P/fd/$OBS_INHERITED_FD" ]; then
      row=$(_entry_re "$FDS_RE")
      if [ -z "$row" ]; then
        fail "$OBS_NAME: in force, no entry: the close-on-exec sweep of inherited fds" \
          "kist's caller holds fd $OBS_INHERITED_FD (-> $(readlink "/proc/$REF/fd/$OBS_INHERITED_FD"), not close-on-exec); the container holds only fds $a"
      else
        ok "$OBS_NAME: in force and reported: the fd sweep ($(cut -d$'\x1f' -f1 <<< "$row"))"
      fi
    fi
    for f in $a; do
      [ "$f" -gt 2 ] || continue
      fail "$OBS_NAME: in force, no entry: fd $f open in the container" "$(readlink "/proc/$P/fd/$f")"
    done
  fi
}

# peek_seccomp NAME PID: the filter's instruction count, read with ptrace
# (last, since it stops the process for a moment).
peek_seccomp ()
{
  local got
  [ -n "$OBS_SECCOMP_INSNS" ] && [ -n "$2" ] || return 0
  got=$("$OBS_PEEK" seccomp "$2" 2>&1)
  if [ "$(head -n 1 <<< "$got")" = "0 $OBS_SECCOMP_INSNS" ]; then
    ok "$1: seccomp: the filter has the $OBS_SECCOMP_INSNS instructions the detail says (PTRACE_SECCOMP_GET_FILTER)"
  else
    fail "$1: seccomp: the filter has the $OBS_SECCOMP_INSNS instructions the detail says" "PTRACE_SECCOMP_GET_FILTER: $got"
  fi
}

# pdeath_check NAME KISTPID PID: kill the kist process that is the
# container's parent with SIGKILL; the container dies with it when a
# parent-death signal is in force.  The report must say which.
pdeath_check ()
{
  local name=$1 kpid=$2 pid=$3 row died=
  row=$(_entry_re "$PDEATH_RE")
  kill -KILL "$kpid" 2> /dev/null
  wait "$kpid" 2> /dev/null
  wait_gone "$pid" 2 && died=1
  if [ -n "$died" ]; then
    if [ -z "$row" ]; then
      fail "$name: in force, no entry: the parent-death signal" "SIGKILL to kist (pid $kpid, the parent of $pid) killed the container's process"
    elif [ "$(cut -d$'\x1f' -f3 <<< "$row")" != true ]; then
      fail "$name: the parent-death signal is in force; its entry says not applied" "$row"
    else
      ok "$name: in force and reported: the parent-death signal ($(cut -d$'\x1f' -f1 <<< "$row"))"
    fi
  else
    if [ -n "$row" ] && [ "$(cut -d$'\x1f' -f3 <<< "$row")" = true ]; then
      fail "$name: the parent-death signal entry is applied, but the container outlived its kist" "$row"
    else
      ok "$name: no parent-death signal in force (the container outlived SIGKILL to its kist), none claimed"
    fi
  fi
}
