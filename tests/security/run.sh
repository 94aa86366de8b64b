#!/bin/bash
# tests/security/run.sh [s_NAME.sh ...]: one test per published runtime
# vulnerability class (THREAT_MODEL.md), run by the integration harness (each
# file in a private mount namespace, then a check that nothing was left on
# the host).  Prints "N passed, N failed, N skipped".
exec bash "$(dirname "${BASH_SOURCE[0]}")/../integration/run.sh" --suite "$(dirname "${BASH_SOURCE[0]}")" "$@"
