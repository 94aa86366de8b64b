#!/bin/bash
# tests/deps.sh: install kist's build and test dependencies (Debian, Ubuntu).
# Re-runs are fast: apt is not touched when everything is installed already.
# Works without a terminal (CI=true, no stdin).  strace (tests/fault), clang
# and its libFuzzer runtime (tests/fuzz), runc (side-by-side checks), and
# podman, conmon, containerd, docker.io and tmux (tests/engines) are required;
# no daemon is started by their installation (a temporary policy-rc.d denies
# it: the engine tests start their own, with state in a temp dir); crun and bubblewrap are optional (only bench/ uses them): failing
# to install them is not an error.
set -euo pipefail

REQUIRED=(build-essential autoconf automake libtool pkg-config libmnl-dev libseccomp-dev
  libyajl-dev check busybox-static mandoc iproute2 procps util-linux
  qemu-system-x86 uidmap strace clang libclang-rt-14-dev runc jq python3
  podman conmon containerd docker.io tmux)
OPTIONAL=(crun bubblewrap)

installed ()
{
  [ "$(dpkg-query -W -f='${db:Status-Status}' "$1" 2> /dev/null)" = installed ]
}

missing_of ()
{
  local p
  for p in "$@"; do
    installed "$p" || echo "$p"
  done
}

if ! command -v dpkg-query > /dev/null || ! command -v apt-get > /dev/null; then
  echo "deps.sh: not a Debian-like system (no dpkg/apt-get); install by hand: ${REQUIRED[*]}" >&2
  exit 1
fi

mapfile -t missing < <(missing_of "${REQUIRED[@]}")
mapfile -t missing_opt < <(missing_of "${OPTIONAL[@]}")
if [ ${#missing[@]} -eq 0 ] && [ ${#missing_opt[@]} -eq 0 ]; then
  echo "deps.sh: all dependencies are installed"
  exit 0
fi

SUDO=()
if [ "$(id -u)" != 0 ]; then
  if command -v sudo > /dev/null; then
    SUDO=(sudo -n)
  elif [ ${#missing[@]} -gt 0 ]; then
    echo "deps.sh: missing ${missing[*]}; run as root or install sudo" >&2
    exit 1
  else
    echo "deps.sh: optional ${missing_opt[*]} not installed (needs root); skipping" >&2
    exit 0
  fi
fi

export DEBIAN_FRONTEND=noninteractive
APT=("${SUDO[@]}" apt-get -q -y -o Dpkg::Use-Pty=0 -o APT::Color=0)

echo "deps.sh: installing ${missing[*]} ${missing_opt[*]}"
if ! "${APT[@]}" update -qq < /dev/null; then
  echo "deps.sh: apt-get update failed; trying with the current package lists" >&2
fi
# Installing containerd and docker.io must not start their daemons (on the
# host, outside any test's namespace): invoke-rc.d and deb-systemd-invoke ask
# /usr/sbin/policy-rc.d, and 101 means "do not start".  An existing policy is
# kept as it is.
POLICY_RC=/usr/sbin/policy-rc.d
policy_made=
if [ ! -e "$POLICY_RC" ] && [ ${#missing[@]} -gt 0 ]; then
  printf '#!/bin/sh\n# written by kist tests/deps.sh for the duration of apt-get install\nexit 101\n' \
    | "${SUDO[@]}" tee "$POLICY_RC" > /dev/null && "${SUDO[@]}" chmod 0755 "$POLICY_RC" && policy_made=1
  trap '[ -n "$policy_made" ] && "${SUDO[@]}" rm -f "$POLICY_RC"' EXIT
fi
if [ ${#missing[@]} -gt 0 ]; then
  if ! "${APT[@]}" install --no-install-recommends "${missing[@]}" < /dev/null; then
    echo "deps.sh: could not install: ${missing[*]}" >&2
    exit 1
  fi
fi
for p in "${missing_opt[@]}"; do
  "${APT[@]}" install --no-install-recommends "$p" < /dev/null \
    || echo "deps.sh: optional package $p could not be installed (only bench/ uses it)" >&2
done

mapfile -t still < <(missing_of "${REQUIRED[@]}")
if [ ${#still[@]} -gt 0 ]; then
  echo "deps.sh: still missing after apt-get: ${still[*]}" >&2
  exit 1
fi
echo "deps.sh: done"
