#!/bin/bash
# mkrootfs.sh DIR: a minimal busybox-static root filesystem for kist tests.
#   DIR/bin/busybox (from the busybox-static package) and one relative
#   symlink per applet, /etc/passwd and /etc/group (root, nobody 65534 and a
#   test user 1000), /etc/hostname, empty /proc /sys /dev /tmp.
set -euo pipefail

if [ $# -ne 1 ] || [ -z "$1" ]; then
  echo "usage: $0 DIR" >&2
  exit 2
fi
dir=$1

busybox=
for b in /bin/busybox /usr/bin/busybox; do
  if [ -x "$b" ] && file_is_static=$(LC_ALL=C ldd "$b" 2>&1 || true) \
     && case $file_is_static in *"not a dynamic"*|*"statically linked"*) true ;; *) false ;; esac; then
    busybox=$b
    break
  fi
done
if [ -z "$busybox" ]; then
  echo "mkrootfs.sh: no static busybox found (install it with: apt-get install busybox-static)" >&2
  exit 1
fi

mkdir -p "$dir"
cd "$dir"
mkdir -p bin sbin usr/bin usr/sbin etc proc sys dev tmp root home/test mark
chmod 1777 tmp
cp "$busybox" bin/busybox
chmod 0755 bin/busybox

# One symlink per applet, relative to its directory.  `busybox --list-full`
# gives the canonical location (bin/sh, sbin/ip, usr/bin/env ...).
"$busybox" --list-full | while IFS= read -r applet; do
  [ -n "$applet" ] || continue
  case $applet in
    bin/busybox) continue ;;
    bin/*) target=busybox ;;
    sbin/*) target=../bin/busybox ;;
    usr/bin/* | usr/sbin/*) target=../../bin/busybox ;;
    *) continue ;;
  esac
  [ -e "$applet" ] || [ -L "$applet" ] || ln -s "$target" "$applet"
done
# Both /bin/true and /usr/bin/env are used by the tests and the benchmark.
for a in sh true env; do
  [ -e "bin/$a" ] || ln -s busybox "bin/$a"
done

cat > etc/passwd <<'P'
root:x:0:0:root:/root:/bin/sh
test:x:1000:1000:test user:/home/test:/bin/sh
nobody:x:65534:65534:nobody:/nonexistent:/bin/false
P
cat > etc/group <<'G'
root:x:0:
wheel:x:10:test
uucp:x:20:test
test:x:1000:
nogroup:x:65534:
G
echo kist-rootfs > etc/hostname
chown 1000:1000 home/test 2>/dev/null || true
