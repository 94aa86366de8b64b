#!/bin/bash
# s_sync.sh: the parent <-> init sync protocol against the container
# (CVE-2021-43784 class; issue #8; the decoder itself is unit-tested in
# tests/unit/test_sync.c):
#   - no process of the container holds a socket fd (so none can send the
#     parent a forged or oversized message), after run and after exec;
#   - report entries too long for one packet (texts partly from the image)
#     cost detail, not the run: they arrive cut, and the run goes on.
. "$(dirname "$0")/../integration/lib.sh"

# The fds of the container's processes: every fd link of every process it can
# see (pid 1, the exec'd one, this shell), one a line.
FDS='for p in /proc/[0-9]*; do for f in $p/fd/*; do readlink "$f"; done; done 2> /dev/null; true'

# 1. run: no sockets in the container.
cfg_reset
sh_args "$FDS"
B=$(mkbundle fds)
id=$(new_id fds)
kc fds run --bundle "$B" "$id"
expect_eq "run: exits 0" 0 "$RC"
expect_match "run: the probe saw fds" "$OUT" '.'
expect_not_contains "run: no process of the container holds a socket" "$OUT" "socket:"

# exec into a running container: neither its init nor the exec'd process.
cfg_reset
C_ARGS='["sleep", "3141"]'
B=$(mkbundle fds-exec)
id=$(new_id fds-exec)
kc fds-exec-run run --detach --bundle "$B" "$id"
expect_eq "exec: run --detach exits 0" 0 "$RC"
kc fds-exec exec "$id" sh -c "$FDS"
expect_eq "exec: exits 0" 0 "$RC"
expect_match "exec: the probe saw fds" "$OUT" '.'
expect_not_contains "exec: no process of the container holds a socket" "$OUT" "socket:"
kc fds-exec-del delete --force "$id"

# 2. A report entry longer than a packet: masked paths that do not exist are
# listed in the entry's detail; 12 of nearly 4 KiB each are more than one
# packet holds.
long=$(printf 'a%.0s' $(seq 1 250))
p=/nonexistent
for i in $(seq 1 15); do p=$p/$long; done
list=
for i in $(seq 1 12); do list+="$(json_str "$p$i"), "; done
cfg_reset
C_MASKED="[$list\"/proc/keys\"]"
sh_args 'echo ran'
B=$(mkbundle longlayer)
id=$(new_id longlayer)
kc longlayer run --report "$T/longlayer.json" --bundle "$B" "$id"
expect_eq "long report entry: the run exits 0" 0 "$RC"
expect_eq "long report entry: the container ran" ran "$OUT"
expect_eq "long report entry: masked_paths applied" true \
  "$(layer_field "$T/longlayer.json" masked_paths applied)"
detail=$(layer_field "$T/longlayer.json" masked_paths detail)
expect_match "long report entry: its detail arrived, cut and marked so" "$detail" \
  '^[0-9]+ dirs .*\.\.\. \[[0-9]+ bytes cut\]; verified from outside \(/proc/[0-9]+/mountinfo\)$'
expect_eq "long report entry: the next entry arrived whole" true \
  "$(layer_field "$T/longlayer.json" readonly_paths applied)"

nothing_left "sync"
