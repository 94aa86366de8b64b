#!/bin/bash
# tests/engines/run.sh [e_NAME.sh ...]: container engines (podman, containerd,
# docker) with kist as their OCI runtime, run by the integration harness
# (each file in a private mount namespace, then a check that nothing was left
# on the host).  Prints "N passed, N failed, N skipped".
# KIST_ENGINE_RUNTIME=/usr/sbin/runc runs the same checks against runc.
exec bash "$(dirname "${BASH_SOURCE[0]}")/../integration/run.sh" --suite "$(dirname "${BASH_SOURCE[0]}")" "$@"
