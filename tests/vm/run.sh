#!/bin/bash
# tests/vm/run.sh [KIST_BINARY]: run kist's cgroup v2 limit tests in a VM.
#
# This machine's cgroup2 has no resource controllers, so the limits are proven
# inside qemu-system-x86_64 (TCG) booting a Debian cloud kernel with a pure
# cgroup v2 hierarchy (design.md section 8):
#   1. kernel: the package linux-image-cloud-amd64 depends on
#      (linux-image-6.1.0-*-cloud-amd64), fetched with `apt-get download` and
#      unpacked with `dpkg -x` into the cache dir $KIST_VM_CACHE (default
#      /var/cache/kist-vm); never into the host's /boot or /lib/modules.
#   2. initramfs (uncompressed newc cpio): busybox-static and its applet
#      symlinks, KIST_BINARY with the libraries ldd lists and the dynamic
#      loader, brd.ko (and its deps), a busybox container rootfs with the
#      static tests/vm/alloc.c, tests/vm/tests.sh and tests/vm/init.sh as /init;
#      for tests/vm/engine.sh the host's containerd, containerd-shim-runc-v2
#      and ctr (with their libraries), a docker-archive image of that rootfs
#      and a spec for `ctr run --config` (about 85 MiB more, 3 s more boot).
#   3. qemu -M pc (bzImage) with TCG, 2 CPUs, 1 GiB; console (ttyS0) to a log,
#      results (ttyS1) to a file; a hard timeout.
# Prints the VM's results and ends with "N passed, N failed"; exits 0 only if
# the VM ran every test and none failed.  A VM that does not finish (timeout,
# panic, kernel download failure ...) counts as one failure and prints the
# tail of the console log.
#
# Needs (tests/deps.sh installs them): qemu-system-x86, busybox-static, a C
# compiler with static glibc (build-essential), apt-get/dpkg, jq; containerd
# (apt-get install containerd; without it the engine check fails, saying so);
# network access
# to the Debian mirror the first time (the kernel stays in the cache).
# Environment:
#   KIST_VM_CACHE     kernel cache dir (default /var/cache/kist-vm)
#   KIST_VM_TIMEOUT   seconds before qemu is killed (default 420; the whole
#                     stage takes about 75 s on an idle machine)
#   KIST_VM_KEEP=1    keep the temp dir (initramfs, logs) and print its path
#   KIST_VM_TESTS     run this script in the VM instead of tests/vm/tests.sh
#                     (same arguments: KIST ROOTFS)
set -uo pipefail
export LC_ALL=C

VM_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$VM_DIR/../.." && pwd)
KIST=${1:-$REPO/_build/kist}
CACHE=${KIST_VM_CACHE:-/var/cache/kist-vm}
QEMU_TIMEOUT=${KIST_VM_TIMEOUT:-420}
# The in-VM limit for tests.sh: leave time for boot and power-off.
VM_TEST_TIMEOUT=$((QEMU_TIMEOUT > 60 ? QEMU_TIMEOUT - 30 : QEMU_TIMEOUT / 2))
META=linux-image-cloud-amd64

# give_up WHY: the VM stage could not run; it counts as one failure.
give_up ()
{
  echo "FAIL vm: $*"
  echo "0 passed, 1 failed"
  exit 1
}

# ---- 0. checks ------------------------------------------------------------------------
[ -x "$KIST" ] && [ -f "$KIST" ] || give_up "kist binary \`$KIST\` not found or not executable (build it, or pass its path)"
KIST=$(realpath "$KIST")
for tool in qemu-system-x86_64 apt-get apt-cache dpkg ldd cc flock timeout; do
  command -v "$tool" > /dev/null || give_up "\`$tool\` not found (run tests/deps.sh)"
done
BUSYBOX=
for b in /bin/busybox /usr/bin/busybox; do
  if [ -x "$b" ] && grep -qE 'not a dynamic|statically linked' <<< "$(ldd "$b" 2>&1)"; then
    BUSYBOX=$b
    break
  fi
done
[ -n "$BUSYBOX" ] || give_up "no static busybox (apt-get install busybox-static, or run tests/deps.sh)"
[ -x "$REPO/tests/integration/mkrootfs.sh" ] || [ -f "$REPO/tests/integration/mkrootfs.sh" ] \
  || give_up "tests/integration/mkrootfs.sh is missing"
case "$(realpath -m "$CACHE")/" in
  "$REPO"/*) give_up "KIST_VM_CACHE ($CACHE) must be outside the source tree" ;;
esac

W=$(mktemp -d /tmp/kist-vm.XXXXXX) || give_up "mktemp failed"
cleanup ()
{
  if [ -n "${KIST_VM_KEEP:-}" ]; then
    echo "vm: kept $W"
  else
    rm -rf "$W"
  fi
}
trap cleanup EXIT

# ---- 1. kernel ------------------------------------------------------------------------
# fetch_kernel PKG: download and unpack PKG into $CACHE/PKG (atomically: a
# half-done download never looks like a cached kernel).
fetch_kernel ()
{
  local pkg=$1 tmp
  tmp=$(mktemp -d "$CACHE/.fetch.XXXXXX") || return 1
  echo "vm: downloading $pkg into $CACHE"
  if ! (cd "$tmp" && apt-get -q -o APT::Sandbox::User=root download "$pkg" > download.log 2>&1); then
    cat "$tmp/download.log" >&2
    rm -rf "$tmp"
    return 1
  fi
  if ! dpkg -x "$tmp"/"$pkg"_*.deb "$tmp/x"; then
    rm -rf "$tmp"
    return 1
  fi
  rm -rf "$tmp/x/usr/share" "$tmp"/*.deb
  if ! ls "$tmp"/x/boot/vmlinuz-* > /dev/null 2>&1; then
    echo "vm: $pkg has no /boot/vmlinuz-*" >&2
    rm -rf "$tmp"
    return 1
  fi
  rm -rf "${CACHE:?}/$pkg"
  mv "$tmp/x" "$CACHE/$pkg" && rm -rf "$tmp"
}

mkdir -p "$CACHE" || give_up "cannot create the kernel cache $CACHE (set KIST_VM_CACHE)"
exec 9> "$CACHE/.lock"
flock -w 600 9 || give_up "cannot lock $CACHE/.lock"
PKG=$(apt-cache depends "$META" 2> /dev/null \
        | sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*-cloud-amd64\)$/\1/p' | head -n 1)
if [ -z "$PKG" ]; then
  # No package lists (no apt-get update yet, or offline): use a cached kernel.
  PKG=$(cd "$CACHE" && ls -d linux-image-[0-9]*-cloud-amd64 2> /dev/null | sort -V | tail -n 1)
  [ -n "$PKG" ] || give_up "apt-cache cannot resolve $META's kernel package and $CACHE has none (run apt-get update)"
  echo "vm: apt-cache does not know $META; using the cached $PKG"
elif [ ! -d "$CACHE/$PKG/boot" ]; then
  fetch_kernel "$PKG" || give_up "could not download/unpack $PKG into $CACHE"
  # Older kernels are not needed any more.
  for old in "$CACHE"/linux-image-*; do
    [ "$old" = "$CACHE/$PKG" ] || rm -rf "$old"
  done
fi
flock -u 9
exec 9>&-
KVER=${PKG#linux-image-}
KERNEL=$CACHE/$PKG/boot/vmlinuz-$KVER
MODDIR=$CACHE/$PKG/lib/modules/$KVER
[ -f "$KERNEL" ] || give_up "$KERNEL is missing (remove $CACHE/$PKG to fetch it again)"
[ -d "$MODDIR" ] || give_up "$MODDIR is missing (remove $CACHE/$PKG to fetch it again)"

# ---- 2. initramfs ---------------------------------------------------------------------
R=$W/root
mkdir -p "$R"/{bin,sbin,usr/bin,usr/sbin,proc,sys,dev,tmp,run,newroot,lib/modules,tests} \
  || give_up "cannot create $R"
chmod 1777 "$R/tmp"

# busybox and one symlink per applet.
cp "$BUSYBOX" "$R/bin/busybox" || give_up "cannot copy $BUSYBOX"
while IFS= read -r applet; do
  case $applet in
    bin/busybox | '') continue ;;
    bin/*) target=busybox ;;
    sbin/*) target=../bin/busybox ;;
    usr/bin/* | usr/sbin/*) target=../../bin/busybox ;;
    *) continue ;;
  esac
  [ -e "$R/$applet" ] || ln -s "$target" "$R/$applet"
done < <("$BUSYBOX" --list-full)
[ -e "$R/bin/sh" ] || ln -s busybox "$R/bin/sh"

# kist, its libraries and the dynamic loader, at the paths ldd names.
cp "$KIST" "$R/bin/kist" || give_up "cannot copy $KIST"
libs=$(ldd "$KIST" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }')
for lib in $libs; do
  mkdir -p "$R$(dirname "$lib")" && cp -L "$lib" "$R$lib" || give_up "cannot copy $lib (ldd $KIST)"
done

# Modules (and what they depend on, from their .modinfo).
# add_module NAME: copy NAME.ko (decompressed) and its dependencies.
add_module ()
{
  local name=$1 f dep
  [ -e "$R/lib/modules/$name.ko" ] && return 0
  f=$(find "$MODDIR" \( -name "$name.ko" -o -name "$name.ko.xz" -o -name "$name.ko.zst" \
        -o -name "$name.ko.gz" \) -print -quit)
  if [ -z "$f" ]; then
    f=$(find "$MODDIR" \( -name "${name//_/-}.ko*" -o -name "${name//-/_}.ko*" \) -print -quit)
  fi
  [ -n "$f" ] || { echo "vm: module $name not found in $MODDIR" >&2; return 1; }
  case $f in
    *.xz) xz -dc "$f" > "$R/lib/modules/$name.ko" ;;
    *.zst) zstd -qdc "$f" > "$R/lib/modules/$name.ko" ;;
    *.gz) gzip -dc "$f" > "$R/lib/modules/$name.ko" ;;
    *) cp "$f" "$R/lib/modules/$name.ko" ;;
  esac || return 1
  for dep in $(tr '\0' '\n' < "$R/lib/modules/$name.ko" | sed -n 's/^depends=//p' | tr ',' ' '); do
    add_module "$dep" || return 1
    # tests.sh loads them in this order.
    echo "$dep" >> "$R/lib/modules/order"
  done
}
: > "$R/lib/modules/order"
MODULES="brd" # brd: a RAM block device for the io.max test
for m in $MODULES; do
  add_module "$m" || give_up "cannot add the module $m from $MODDIR"
  echo "$m" >> "$R/lib/modules/order"
done

# The container rootfs: busybox (tests/integration/mkrootfs.sh), /out for a
# bind mount, and the static allocator.
bash "$REPO/tests/integration/mkrootfs.sh" "$R/rootfs" > /dev/null || give_up "mkrootfs.sh failed"
mkdir -p "$R/rootfs/out"
cc -static -O2 -Wall -Wextra -o "$R/rootfs/bin/alloc" "$VM_DIR/alloc.c" \
  || give_up "cannot build tests/vm/alloc.c statically (needs libc6-dev)"

# The engine (tests/vm/engine.sh): containerd, its runc shim and ctr with the
# libraries ldd lists, a docker-archive image of the container rootfs, and
# ctr's default OCI spec with a pids limit (ctr 1.6 has no pids flag; `ctr
# run --config FILE` takes the whole spec from FILE, without image or
# snapshot: the root is the VM's /rootfs, read-only, /out a bind mount of the
# directory engine.sh puts in place of @OUT@, the command /out/bomb.sh).  What is missing on the host is written to
# /engine/missing, which the VM reports as a failure.
mkdir -p "$R/engine"
eng_missing=
for b in containerd containerd-shim-runc-v2 ctr; do
  p=$(command -v "$b") || { eng_missing="$eng_missing $b"; continue; }
  cp "$p" "$R/usr/bin/$b" || give_up "cannot copy $p"
  for lib in $(ldd "$p" 2> /dev/null | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }'); do
    [ -e "$R$lib" ] && continue
    mkdir -p "$R$(dirname "$lib")" && cp -L "$lib" "$R$lib" || give_up "cannot copy $lib (ldd $p)"
  done
done
if [ -n "$eng_missing" ]; then
  echo "the host has no$eng_missing (apt-get install containerd)" > "$R/engine/missing"
elif ! command -v jq > /dev/null; then
  echo "the host has no jq to write the pids spec (apt-get install jq, or run tests/deps.sh)" > "$R/engine/missing"
else
  img=$W/image
  mkdir -p "$img"
  tar -C "$R/rootfs" --numeric-owner --owner=0 --group=0 --sort=name -cf "$img/layer.tar" . \
    || give_up "cannot tar the rootfs into the image layer"
  diff_id=$(sha256sum "$img/layer.tar" | cut -d ' ' -f 1)
  printf '{"architecture":"amd64","os":"linux","config":{"Env":["PATH=/usr/sbin:/usr/bin:/sbin:/bin"],"Cmd":["sh"]},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}\n' \
    "$diff_id" > "$img/config.json"
  echo '[{"Config":"config.json","RepoTags":["localhost/kistvm:latest"],"Layers":["layer.tar"]}]' > "$img/manifest.json"
  tar -C "$img" --numeric-owner --owner=0 --group=0 -cf "$R/engine/image.tar" manifest.json config.json layer.tar \
    || give_up "cannot write the docker-archive image"
  rm -rf "$img"
  ctr oci spec 2> "$W/ctr-spec.log" \
    | jq '.root = { "path": "/rootfs", "readonly": true } | .process.args = [ "sh", "/out/bomb.sh" ]
          | .process.env = [ "PATH=/usr/sbin:/usr/bin:/sbin:/bin" ]
          | .mounts += [ { "destination": "/out", "type": "bind", "source": "@OUT@", "options": [ "rbind", "rw" ] } ]
          | .linux.cgroupsPath = "/default/ct-pids" | .linux.resources.pids = { "limit": 20 }' \
        > "$R/engine/pids-spec.json" && [ -s "$R/engine/pids-spec.json" ] \
    || { cat "$W/ctr-spec.log"; give_up "cannot write the pids spec with ctr oci spec and jq"; }
fi
cp "$VM_DIR/engine.sh" "$R/tests/engine.sh" || give_up "cannot copy engine.sh"

cp "${KIST_VM_TESTS:-$VM_DIR/tests.sh}" "$R/tests/tests.sh" || give_up "cannot copy tests.sh"
cp "$VM_DIR/init.sh" "$R/init" && chmod 0755 "$R/init" || give_up "cannot copy init.sh"

(cd "$R" && find . -mindepth 1 | "$BUSYBOX" cpio -o -H newc -R 0:0 > "$W/initramfs.cpio") 2> "$W/cpio.log" \
  || { cat "$W/cpio.log"; give_up "cpio failed"; }
rm -rf "$R"

# ---- 3. boot --------------------------------------------------------------------------
: > "$W/results"
echo "vm: booting $PKG ($(du -k "$W/initramfs.cpio" | cut -f 1) KiB initramfs, timeout ${QEMU_TIMEOUT} s)"
start=$(date +%s.%N)
timeout -k 5 "$QEMU_TIMEOUT" qemu-system-x86_64 \
  -M pc -cpu max -accel tcg -m 1024 -smp 2 \
  -nodefaults -no-user-config -display none -no-reboot \
  -kernel "$KERNEL" -initrd "$W/initramfs.cpio" \
  -append "console=ttyS0 quiet loglevel=3 panic=-1 tsc=reliable no_timer_check mitigations=off kist_vm_timeout=$VM_TEST_TIMEOUT" \
  -serial "file:$W/console" -serial "file:$W/results" < /dev/null > "$W/qemu.log" 2>&1
qemu_rc=$?
end=$(date +%s.%N)
secs=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')

tr -d '\r' < "$W/results" > "$W/results.txt"
grep -v '^KIST-VM-EXIT ' "$W/results.txt"
vm_rc=$(sed -n 's/^KIST-VM-EXIT \([0-9]*\)$/\1/p' "$W/results.txt" | tail -n 1)
line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$W/results.txt" | tail -n 1)
if [ -n "$line" ]; then
  passed=$(sed -E 's/^([0-9]+) passed.*/\1/' <<< "$line")
  failed=$(sed -E 's/^[0-9]+ passed, ([0-9]+) failed.*/\1/' <<< "$line")
else
  # No summary: count the checks that did report.
  passed=$(grep -c '^ok ' "$W/results.txt")
  failed=$(grep -c '^FAIL ' "$W/results.txt")
fi

if [ -z "$vm_rc" ] || [ -z "$line" ]; then
  if [ "$qemu_rc" = 124 ] || [ "$qemu_rc" = 137 ]; then
    why="qemu killed after the ${QEMU_TIMEOUT} s timeout"
  else
    why="qemu exited with $qemu_rc"
  fi
  echo "---- qemu: $(tail -c 2000 "$W/qemu.log")"
  echo "---- console (ttyS0), last 40 lines:"
  tr -d '\r' < "$W/console" | tail -n 40
  echo "FAIL vm: the VM did not finish its tests ($why, after $secs s)"
  failed=$((failed + 1))
elif [ "$vm_rc" != 0 ] && [ "$failed" = 0 ]; then
  echo "FAIL vm: tests.sh exited with $vm_rc"
  failed=$((failed + 1))
fi
echo "vm: stage took $secs s (qemu exit $qemu_rc)"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
