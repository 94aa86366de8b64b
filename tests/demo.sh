#!/bin/bash
# tests/demo.sh: install the dependencies, build kist, and run one container:
# a busybox rootfs, a config.json from `kist spec` whose process.args are
# changed to print who and where the container is, run with `--report -` so
# that the per-layer report (JSON) is printed before the container's output.
# Needs root.  Leaves nothing behind but _build/.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO"

if [ "$(id -u)" != 0 ]; then
  echo "demo.sh: run it as root: kist creates namespaces and mounts" >&2
  exit 1
fi

echo "== dependencies"
bash tests/deps.sh < /dev/null

echo "== build (_build/)"
if [ ! -x configure ]; then
  autoreconf -fi
fi
mkdir -p _build
(cd _build && { [ -f Makefile ] || ../configure --enable-werror -q; } && make -j"${JOBS:-2}" -s)
KIST=$REPO/_build/kist

TMP=$(mktemp -d /tmp/kist-demo.XXXXXX)
cleanup ()
{
  "$KIST" --root "$TMP/state" delete --force demo > /dev/null 2>&1 || true
  rm -rf --one-file-system "$TMP"
}
trap cleanup EXIT

echo "== bundle ($TMP/bundle)"
bash tests/integration/mkrootfs.sh "$TMP/bundle/rootfs"
"$KIST" spec --bundle "$TMP/bundle"

# process.args: ["sh"] -> the demo command.  The config is JSON, so it can be
# joined into one line first; then one sed replaces the args array.
CMD='echo hello from kist; id; hostname; ip link 2>/dev/null || cat /proc/net/dev'
tr '\n' ' ' < "$TMP/bundle/config.json" \
  | sed -E "s#\"args\" *: *\\[[^]]*\\]#\"args\": [\"sh\", \"-c\", \"$CMD\"]#" \
  > "$TMP/bundle/config.json.new"
mv "$TMP/bundle/config.json.new" "$TMP/bundle/config.json"
if ! grep -q 'hello from kist' "$TMP/bundle/config.json"; then
  echo "demo.sh: could not set process.args in the config.json from kist spec" >&2
  exit 1
fi

echo "== kist --root $TMP/state run --report - demo"
echo "   (stdout: the report as JSON, then the container's output)"
echo
# A private mount namespace around kist, so that nothing can leak onto the host
# even if kist had a bug (kist makes its own namespaces anyway).
cd "$TMP/bundle"
status=0
unshare -m --propagation private "$KIST" --root "$TMP/state" run --report - demo < /dev/null || status=$?
echo
echo "== the container exited with status $status"
exit "$status"
