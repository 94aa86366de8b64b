#!/bin/bash
# tests/fault/run.sh [f_NAME.sh ...]: kist's fault-injection tests: kill -9 at
# every step (f_kill), concurrency (f_concurrent) and a full disk under the
# state root (f_disk), run by the integration harness (each file in a
# private mount namespace, then a check that nothing was left on the host).
# Prints "N passed, N failed, N skipped".  f_kill needs strace.
exec bash "$(dirname "${BASH_SOURCE[0]}")/../integration/run.sh" --suite "$(dirname "${BASH_SOURCE[0]}")" "$@"
