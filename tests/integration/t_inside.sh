#!/bin/bash
# t_inside.sh: what a container sees from inside, and its namespaces from
# outside.
. "$(dirname "$0")/lib.sh"

# The probe prints KEY=VALUE lines and KEY<< ... >>KEY blocks.  It runs as
# the container's init (sh -c), so /proc/$$ is the init itself.
PROBE='
echo "pid=$$"
echo "hostname=$(hostname)"
echo "netdev=$(tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d " " | sort | tr "\n" " ")"
if command -v ip > /dev/null; then echo "iplo=$(ip link show lo 2>&1 | head -n 1)"; fi
echo "env<<"; tr "\0" "\n" < /proc/$$/environ | sort; echo ">>env"
echo "status<<"; grep -E "^(Uid|Gid|Groups|Cap(Inh|Prm|Eff|Bnd|Amb)|NoNewPrivs|Seccomp):" /proc/$$/status; echo ">>status"
echo "nofile=$(ulimit -n)"
echo "nofile_hard=$(ulimit -Hn)"
echo "touch=$(touch /x 2>&1; echo " rc=$?")"
echo "masked=$([ -c @MASKED@ ] && echo char) $(stat -c %t,%T @MASKED@) size=$(wc -c < @MASKED@)"
echo "firmware=$([ -d /sys/firmware ] && echo dir) entries=$(ls -A /sys/firmware | wc -l)"
echo "rosys=$( (echo kist-x > /proc/sys/kernel/domainname) 2>&1; echo " rc=$?")"
echo "mountinfo<<"; cat /proc/$$/mountinfo; echo ">>mountinfo"
for n in null zero full random urandom tty; do
  if [ -c /dev/$n ]; then echo "dev_$n=char"; else echo "dev_$n=missing"; fi
done
echo "ptmx=$(readlink /dev/ptmx)"
echo "umask=$(umask)"
echo "cwd=$(pwd)"
echo "fds=$(ls /proc/self/fd | sort -n | tr "\n" " ")"
'

val ()
{
  sed -n "s/^$1=//p" <<< "$OUT" | head -n 1
}
block ()
{
  sed -n "/^$1<<\$/,/^>>$1\$/p" <<< "$OUT" | sed '1d;$d'
}
status_line ()
{
  block status | awk -v k="$1:" '$1 == k { $1 = ""; sub(/^ /, ""); print }'
}
# mount_opts MOUNTPOINT: "per-mount-options fstype" of the last mount there.
mount_opts ()
{
  block mountinfo | awk -v m="$1" '
    $5 == m { for (i = 7; i <= NF; i++) if ($i == "-") { r = $6 " " $(i + 1); break } }
    END { print r }'
}
has_opt ()
{
  [[ ",${1%% *}," == *",$2,"* ]]
}

# ---- run A: root with a chosen capability set ------------------------------
# A masked file this kernel has (runc's list; /proc/kcore is not always there).
MASKED_FILE=
for f in /proc/kcore /proc/keys /proc/timer_list; do
  if [ -e "$f" ]; then MASKED_FILE=$f; break; fi
done
PROBE=${PROBE//@MASKED@/${MASKED_FILE:-/proc/kcore}}
ENV_LIST=("PATH=/usr/sbin:/usr/bin:/sbin:/bin" "HOME=/root" "FOO=bar baz" "EMPTY="
  "WITH_EQ=a=b" "KIST_IT_MARK=$MARK")
C_ENV=$(json_arr "${ENV_LIST[@]}")
C_ARGS=$(json_arr sh -c "$PROBE")
C_HOSTNAME=kist-inside
C_CAPS='["CAP_CHOWN", "CAP_KILL", "CAP_NET_BIND_SERVICE"]'
C_RLIMITS='[{"type": "RLIMIT_NOFILE", "hard": 1024, "soft": 512}]'
C_UMASK=23   # 0027
C_CWD=/tmp
B=$(mkbundle inside)
id=$(new_id inside)
# The caller's environment and an extra open fd must not reach the container.
exec 7< /dev/null
LEAKME=1 kc runA run --bundle "$B" "$id"
exec 7<&-
expect_eq "run exits 0" 0 "$RC"
expect_eq "the container's init is pid 1" 1 "$(val pid)"
expect_eq "hostname from the config" kist-inside "$(val hostname)"
expect_eq "/proc/net/dev lists only lo" "lo " "$(val netdev)"
if [ -n "$(val iplo)" ]; then
  expect_match "ip link show lo: lo is UP" "$(val iplo)" '<([^>]*,)?UP[,>]'
else
  skip "ip link show lo" "the rootfs's busybox has no ip applet"
fi
expect_eq "the environment is exactly process.env" \
  "$(printf '%s\n' "${ENV_LIST[@]}" | sort)" "$(block env)"
expect_eq "CapEff is the configured set (CHOWN KILL NET_BIND_SERVICE)" 0000000000000421 "$(status_line CapEff)"
expect_eq "CapPrm is the configured set" 0000000000000421 "$(status_line CapPrm)"
expect_eq "CapBnd is the configured set" 0000000000000421 "$(status_line CapBnd)"
expect_eq "CapInh is empty (not configured)" 0000000000000000 "$(status_line CapInh)"
expect_eq "CapAmb is empty (not configured)" 0000000000000000 "$(status_line CapAmb)"
expect_eq "NoNewPrivs is 1" 1 "$(status_line NoNewPrivs)"
expect_eq "ulimit -n is the configured RLIMIT_NOFILE soft limit" 512 "$(val nofile)"
expect_eq "ulimit -Hn is the configured RLIMIT_NOFILE hard limit" 1024 "$(val nofile_hard)"
expect_contains "the root is read-only: touch /x fails" "$(val touch)" "Read-only file system"
if [ -n "$MASKED_FILE" ]; then
  expect_eq "masked $MASKED_FILE is the char device 1,3 and reads empty" "char 1,3 size=0" "$(val masked)"
else
  skip "masked /proc/kcore" "this kernel has none of /proc/kcore /proc/keys /proc/timer_list"
fi
expect_eq "masked /sys/firmware is an empty directory" "dir entries=0" "$(val firmware)"
expect_contains "read-only /proc/sys: writing kernel/domainname fails" "$(val rosys)" "Read-only file system"
m=$(mount_opts /)
if has_opt "$m" ro; then ok "mountinfo: / is ro ($m)"; else fail "mountinfo: / is ro" "got: $m"; fi
m=$(mount_opts /dev)
if [ "${m#* }" = tmpfs ] && has_opt "$m" nosuid; then ok "mountinfo: /dev is tmpfs nosuid ($m)"; else fail "mountinfo: /dev is tmpfs nosuid" "got: $m"; fi
m=$(mount_opts /sys)
if [ "${m#* }" = sysfs ] && has_opt "$m" ro; then ok "mountinfo: /sys is sysfs ro ($m)"; else fail "mountinfo: /sys is sysfs ro" "got: $m"; fi
m=$(mount_opts /proc)
if [ "${m#* }" = proc ]; then ok "mountinfo: /proc is proc ($m)"; else fail "mountinfo: /proc is proc" "got: $m"; fi
m=$(mount_opts /proc/sys)
if has_opt "$m" ro; then ok "mountinfo: /proc/sys is ro ($m)"; else fail "mountinfo: /proc/sys is ro" "got: $m"; fi
m=$(mount_opts /dev/pts)
if [ "${m#* }" = devpts ]; then ok "mountinfo: /dev/pts is devpts ($m)"; else fail "mountinfo: /dev/pts is devpts" "got: $m"; fi
m=$(mount_opts /sys/fs/cgroup)
if [ "${m#* }" = cgroup2 ] && has_opt "$m" ro; then ok "mountinfo: /sys/fs/cgroup is cgroup2 ro ($m)"; else fail "mountinfo: /sys/fs/cgroup is cgroup2 ro" "got: $m"; fi
for n in null zero full random urandom tty; do
  expect_eq "/dev/$n is a character device" char "$(val "dev_$n")"
done
expect_eq "/dev/ptmx is a symlink to pts/ptmx" pts/ptmx "$(val ptmx)"
expect_eq "umask from process.user.umask (0027)" 0027 "$(val umask)"
expect_eq "cwd from process.cwd" /tmp "$(val cwd)"
expect_eq "only fds 0 1 2 (and ls's own 3) are open inside" "0 1 2 3 " "$(val fds)"
expect_true "run deleted the container" test ! -e "$ROOT/$id"

# ---- run B: a user with supplementary groups -------------------------------
cfg_reset
sh_args 'echo "status<<"; grep -E "^(Uid|Gid|Groups|CapEff|CapBnd|NoNewPrivs):" /proc/$$/status; echo ">>status"; echo "user=$(id -un)"; echo "home=$HOME"'
C_UID=1000
C_GID=1000
C_GIDS='[10, 20]'
C_ENV=$(json_arr "PATH=/bin:/sbin" "HOME=/home/test" "KIST_IT_MARK=$MARK")
B=$(mkbundle user)
id=$(new_id user)
kc runB run --bundle "$B" "$id"
expect_eq "run as uid 1000 exits 0" 0 "$RC"
expect_eq "Uid (real effective saved fs) is 1000" "1000 1000 1000 1000" "$(status_line Uid)"
expect_eq "Gid (real effective saved fs) is 1000" "1000 1000 1000 1000" "$(status_line Gid)"
expect_eq "Groups are exactly additionalGids 10 20" "10 20" "$(status_line Groups | xargs)"
expect_eq "CapBnd is the default set (AUDIT_WRITE KILL NET_BIND_SERVICE)" 0000000020000420 "$(status_line CapBnd)"
expect_eq "NoNewPrivs is 1 for the user too" 1 "$(status_line NoNewPrivs)"
expect_eq "id -un resolves through the image's /etc/passwd" test "$(val user)"

# ---- namespaces, seen from outside while created -----------------------------
cfg_reset
C_ARGS='["sleep", "3141"]'
B=$(mkbundle ns)
id=$(new_id ns)
kc create create --bundle "$B" "$id"
expect_eq "create exits 0" 0 "$RC"
pid=$(state_field "$id" pid)
if pid_alive "$pid"; then
  for ns in mnt pid net uts ipc cgroup; do
    mine=$(readlink "/proc/$$/ns/$ns")
    theirs=$(readlink "/proc/$pid/ns/$ns")
    if [ -n "$theirs" ] && [ "$theirs" != "$mine" ]; then
      ok "namespace $ns of the created container differs from the caller's ($theirs)"
    else
      fail "namespace $ns of the created container differs from the caller's" "caller: $mine" "container: $theirs"
    fi
  done
  for ns in user; do
    expect_eq "namespace $ns is shared (not requested)" "$(readlink "/proc/$$/ns/$ns")" "$(readlink "/proc/$pid/ns/$ns")"
  done
else
  fail "the created container's init is alive" "pid: $pid"
fi
kc del delete --force "$id"
expect_eq "delete --force exits 0" 0 "$RC"

# HOME: process.env without it gets the user's home from the container's
# /etc/passwd, else "/" (as runc); one given in process.env is kept.
cfg_reset
C_ENV=$(json_arr "PATH=/bin:/sbin" "KIST_IT_MARK=$MARK")
sh_args 'echo "HOME=<$HOME>"'
for c in "0 /root" "1000 /home/test" "4242 /"; do
  set -- $c
  C_UID=$1
  B=$(mkbundle "home$1")
  id=$(new_id "home$1")
  kc "home$1" run --report "$T/home$1.json" --bundle "$B" "$id"
  expect_eq "no HOME in process.env, uid $1: HOME is $2" "HOME=<$2>" "$OUT"
done
expect_contains "the report's environment entry says HOME was added" \
  "$(layer_field "$T/home4242.json" environment detail)" "HOME=/ added"
# The passwd file of the image is hostile: a FIFO must not hang the start.
C_UID=1000
B=$(mkbundle homefifo)
rm -f "$B/rootfs/etc/passwd"
mkfifo "$B/rootfs/etc/passwd"
id=$(new_id homefifo)
kc homefifo run --bundle "$B" "$id"
expect_eq "a FIFO as /etc/passwd: HOME is / and the start does not hang" "HOME=</>" "$OUT"
C_ENV=$(json_arr "PATH=/bin:/sbin" "HOME=/given" "KIST_IT_MARK=$MARK")
B=$(mkbundle homegiven)
id=$(new_id homegiven)
kc homegiven run --bundle "$B" "$id"
expect_eq "HOME given in process.env is kept" "HOME=</given>" "$OUT"
cfg_reset
nothing_left "t_inside"
