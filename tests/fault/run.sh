#!/bin/bash
# tests/fault/run.sh [f_NAME.sh ...]: kist's fault-injection tests (issue #8):
# kill -9 at every step (f_kill), concurrency (f_concurrent) and a full disk
# under the state root (f_disk).  Run by the integration harness
# (tests/integration/run.sh: each file in a private mount namespace, then a
# check that nothing was left on the host).  Prints "N passed, N failed, N
# skipped".  Needs strace for f_kill (skipped without it).
set -u
FAULT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if [ $# -gt 0 ]; then
  tests=()
  for t in "$@"; do
    case $t in */*) tests+=("$t") ;; *) tests+=("$FAULT_DIR/$t") ;; esac
  done
else
  tests=("$FAULT_DIR"/f_*.sh)
fi
exec bash "$FAULT_DIR/../integration/run.sh" "${tests[@]}"
