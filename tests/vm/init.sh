#!/bin/sh
# tests/vm/init.sh: /init of the kist test VM (busybox sh, PID 1).
#
# Stage 1 (on the initramfs): pivot_root cannot leave the initramfs (rootfs),
# so copy everything into a tmpfs and switch_root into it, running this script
# again as stage 2.
# Stage 2: mount proc, sysfs, devtmpfs, tmpfs on /tmp and /run, a pure cgroup2
# hierarchy at /sys/fs/cgroup (no v1), enable +cpu +memory +pids +io in the
# root's cgroup.subtree_control, run /tests/tests.sh (its output goes to the
# console, ttyS0, and to the result channel, ttyS1, a file on the host), end
# with the line "KIST-VM-EXIT <status>" on ttyS1 and power off.
#
# Kernel command line parameters (they reach init as environment variables):
#   kist_vm_timeout=SECONDS   hard limit for tests.sh inside the VM (default 240)
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
export LC_ALL=C

if [ "$1" != stage2 ]; then
  mount -t tmpfs -o mode=0755 tmpfs /newroot || exec poweroff -f
  for e in /*; do
    case $e in
      /newroot | /proc | /sys | /dev) ;;
      *) cp -a "$e" /newroot/ || exec poweroff -f ;;
    esac
  done
  mkdir -p /newroot/proc /newroot/sys /newroot/dev
  exec switch_root /newroot /init stage2
fi

BOOT=$(cut -d ' ' -f 1 /proc/uptime 2> /dev/null)
mount -t proc -o nosuid,nodev,noexec proc /proc
mount -t sysfs -o nosuid,nodev,noexec sysfs /sys
mount -t devtmpfs -o nosuid,mode=0755 devtmpfs /dev
mkdir -p /dev/pts /dev/shm
mount -t devpts -o newinstance,ptmxmode=0666 devpts /dev/pts
mount -t tmpfs -o nosuid,nodev,mode=1777 tmpfs /tmp
mount -t tmpfs -o nosuid,nodev,mode=0755 tmpfs /run
mount -t cgroup2 -o nosuid,nodev,noexec cgroup2 /sys/fs/cgroup
BOOT=$(cut -d ' ' -f 1 /proc/uptime)

# The result channel: ttyS1 (the host's results file).  No \r\n translation.
OUT=/dev/ttyS1
stty -F "$OUT" raw -echo 2> /dev/null
[ -c "$OUT" ] || OUT=/dev/console

result ()
{
  echo "$*" > "$OUT"
}

finish ()
{
  result "KIST-VM-EXIT $1"
  sync
  poweroff -f
  # Not reached; if poweroff failed, a panic (panic=-1) ends qemu (-no-reboot).
  exit "$1"
}

result "vm: kernel $(uname -r), /init reached after ${BOOT} s"
if ! echo "+cpu +memory +pids +io" > /sys/fs/cgroup/cgroup.subtree_control; then
  result "vm: cannot enable +cpu +memory +pids +io in /sys/fs/cgroup/cgroup.subtree_control"
fi
result "vm: cgroup.controllers: $(cat /sys/fs/cgroup/cgroup.controllers);" \
  "subtree_control: $(cat /sys/fs/cgroup/cgroup.subtree_control)"

# tests.sh runs as a child so that this shell (PID 1) reaps the orphans that
# detached containers leave behind while it waits.
rm -f /run/tests.status
(
  timeout -s KILL "${kist_vm_timeout:-240}" sh /tests/tests.sh /bin/kist /rootfs
  echo $? > /run/tests.status
) 2>&1 | tee "$OUT"
status=$(cat /run/tests.status 2> /dev/null)
case $status in
  '') status=99 ;;
  137) result "FAIL vm: tests.sh killed after ${kist_vm_timeout:-240} s (kist_vm_timeout)" ;;
esac
result "vm: tests.sh ended with $status after $(cut -d ' ' -f 1 /proc/uptime) s of uptime"
finish "$status"
