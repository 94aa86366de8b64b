# tests/engines/lib.sh: shared pieces of the engine tests (podman, containerd,
# docker calling kist as their OCI runtime).  Source it from an e_*.sh:
#   . "$(dirname "$0")/lib.sh"
# It sources tests/integration/lib.sh first (ok/fail/skip, expect_*, $T, the
# private mount namespace, the leftover checks), then:
#
#   eng_init NAME     once, first: checks the engine binaries, mounts the host's
#                     cgroup2 hierarchy over /sys/fs/cgroup in this (private)
#                     mount namespace, makes $E (= $T/NAME, all engine state),
#                     sets ENG_CGROUP (a cgroup parent named after the test
#                     prefix, e.g. /kit123r456-podman; give it to the engine)
#                     and registers the cleanup.  Records a skip (with the
#                     reason) and exits when the machine lacks what engines
#                     need.
#   RT, RT_NAME       the OCI runtime under test: KIST_ENGINE_RUNTIME (e.g.
#                     /usr/sbin/runc, to prove a check right) or $KIST;
#                     RT_NAME is its basename.  eng_is_kist: RT is kist.
#   RT_GLOBAL         global flags for the runtime (array): for kist
#                     --allow-degraded=cgroup.* (this host's cgroup2 has no
#                     controllers), nothing for runc.
#   eng_rootfs DIR    a busybox-static rootfs (tests/integration/mkrootfs.sh).
#   eng_rootfs_tar OUT          a plain tar of that rootfs (podman import).
#   eng_docker_archive OUT [REF]  a docker-archive (docker load, ctr images
#                     import, podman load) of that rootfs, image REF
#                     (default localhost/busybox:latest), with the leftover
#                     marker KIST_IT_MARK in its Env and sh as its Cmd.
#   ENG_IMAGE_ENV     the image's environment (the marker included): podman
#                     import --change "ENV ..." uses it.
#   eng_wrapper OUT LOG [ARG...]  an executable OUT that logs its argv (one
#                     line) to LOG and execs $RT "${RT_GLOBAL[@]}" ARG... "$@"
#                     (for ctr --runc-binary, or PATH=dir-with-runc).
#   eng_on_cleanup CMD...        run CMD at exit (last registered first),
#                     before tests/integration/lib.sh's own cleanup.
#   eng_bg_pid PID    a daemon the test started: killed (TERM, then KILL) at
#                     exit if still alive.
#   eng_tmux_start NAME COLS ROWS CMD  run CMD (a shell command line) in a
#                     detached tmux session on its own server ($T/tmux.sock);
#                     its exit status goes to $T/NAME.rc.  eng_tmux_wait NAME
#                     TEXT [SECONDS]: wait until the pane shows TEXT.
#                     eng_tmux_screen NAME: the pane's text.  eng_tmux_keys
#                     NAME KEYS...: tmux send-keys.  eng_tmux_resize NAME
#                     COLS ROWS.  eng_tmux_done NAME [SECONDS]: wait for CMD
#                     to end, prints its status (the pane stays readable).
#                     eng_tmux_stop: kill the tmux server (also done at exit).
#   eng_wait_gone_matching STR [SECONDS]  wait until no process's argv
#                     contains STR; prints the pids still there on timeout.
#   eng_umount_under DIR  unmount (lazily, deepest first) every mount below
#                     DIR in this namespace; prints what it unmounted.
#   eng_cgroup_remove DIR  remove a cgroup tree (deepest first); prints the
#                     cgroups that still had processes (killed) or stayed.
#   eng_netns_snapshot / eng_netns_new: /run/netns entries that appeared since.
#   eng_check_clean WHAT  ok/fail: no process of the test, no mount under $T,
#                     no cgroup under ENG_CGROUP, no new /run/netns entry.
#
# Everything an engine creates must live under $E (or ENG_CGROUP) so that the
# cleanup and the harness's leftover checks find it.

. "$(dirname "${BASH_SOURCE[0]}")/../integration/lib.sh"

ENG_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RT=${KIST_ENGINE_RUNTIME:-$KIST}
case $RT in /*) ;; *) RT=$(command -v "$RT" 2> /dev/null || echo "$PWD/$RT") ;; esac
RT_NAME=$(basename "$RT")
RT_GLOBAL=()

eng_is_kist ()
{
  [ "$RT" -ef "$KIST" ]
}
eng_is_kist && RT_GLOBAL=("--allow-degraded=cgroup.*")

# --- cleanup chain ------------------------------------------------------------------

ENG_CLEANUPS=()
ENG_BG_PIDS=()

eng_on_cleanup ()
{
  local q
  printf -v q '%q ' "$@"
  ENG_CLEANUPS+=("$q")
}

eng_bg_pid ()
{
  ENG_BG_PIDS+=("$1")
}

# tests/integration/lib.sh's _cleanup calls test_cleanup first.
test_cleanup ()
{
  local i p
  for ((i = ${#ENG_CLEANUPS[@]} - 1; i >= 0; i--)); do
    eval "${ENG_CLEANUPS[i]}"
  done
  for p in "${ENG_BG_PIDS[@]}"; do
    pid_alive "$p" || continue
    kill -TERM "$p" 2> /dev/null
    wait_gone "$p" 10 || kill -KILL "$p" 2> /dev/null
  done
  eng_tmux_stop
  if [ -n "${ENG_CGROUP:-}" ] && [ -d "/sys/fs/cgroup$ENG_CGROUP" ]; then
    local left
    left=$(eng_cgroup_remove "/sys/fs/cgroup$ENG_CGROUP")
    [ -n "$left" ] && fail "cleanup: no process left in the engine's cgroups" "$left"
  fi
  if [ -n "${E:-}" ]; then
    eng_umount_under "$E" > /dev/null
  fi
}

# --- processes, mounts, cgroups, netns ---------------------------------------------

# eng_pids_matching STR: pids whose argv contains STR (not this shell).
eng_pids_matching ()
{
  local d a
  for d in /proc/[0-9]*; do
    [ "${d#/proc/}" = $$ ] || [ "${d#/proc/}" = "$BASHPID" ] && continue
    a=()
    { mapfile -d "" -t a < "$d/cmdline"; } 2> /dev/null || continue
    [ ${#a[@]} -gt 0 ] || continue
    [[ "${a[*]}" == *"$1"* ]] && echo "${d#/proc/}"
  done
}

eng_wait_gone_matching ()
{
  local i p n=$(( ${2:-10} * 10 ))
  for ((i = 0; i < n; i++)); do
    p=$(eng_pids_matching "$1")
    [ -z "$p" ] && return 0
    sleep 0.1
  done
  echo $p
  return 1
}

eng_umount_under ()
{
  local m
  for m in $(awk -v t="$1" '$5 == t || index($5, t "/") == 1 { print $5 }' /proc/self/mountinfo | sort -r); do
    umount -l "$m" 2> /dev/null && echo "$m"
  done
}

eng_cgroup_remove ()
{
  local d procs
  [ -d "$1" ] || return 0
  while read -r d; do
    procs=$(cat "$d/cgroup.procs" 2> /dev/null)
    if [ -n "$procs" ]; then
      echo "$d: $(describe_pids $procs)"
      [ -e "$d/cgroup.kill" ] && echo 1 > "$d/cgroup.kill" 2> /dev/null
      for p in $procs; do kill -KILL "$p" 2> /dev/null; done
      sleep 0.2
    fi
    rmdir "$d" 2> /dev/null || { [ -d "$d" ] && echo "$d: could not be removed"; }
  done < <(find "$1" -depth -type d 2> /dev/null)
}

eng_netns_snapshot ()
{
  ENG_NETNS_BEFORE=$(ls -A /run/netns 2> /dev/null)
}

eng_netns_new ()
{
  comm -13 <(printf '%s\n' "${ENG_NETNS_BEFORE:-}" | sort) <(ls -A /run/netns 2> /dev/null | sort) | sed '/^$/d'
}

# eng_check_clean WHAT: the engine left nothing: processes (argv naming $T,
# the image's marker), mounts below $T, cgroups below ENG_CGROUP other than
# the (empty) parent itself, new /run/netns entries.
eng_check_clean ()
{
  local p m c n
  p=$(leftover_pids)
  m=$(leftover_mounts)
  c=
  [ -n "${ENG_CGROUP:-}" ] && [ -d "/sys/fs/cgroup$ENG_CGROUP" ] \
    && c=$(find "/sys/fs/cgroup$ENG_CGROUP" -mindepth 1 -type d -exec sh -c \
         '[ -s "$1/cgroup.procs" ] && echo "$1 (with processes)" || echo "$1"' _ {} \; 2> /dev/null)
  n=$(eng_netns_new)
  if [ -z "$p$m$n" ] && ! grep -q 'with processes' <<< "$c"; then
    ok "$1: nothing left behind"
  else
    fail "$1: nothing left behind" "${p:+processes: $(describe_pids $p)}" \
      "${m:+mounts: $m}" "${c:+cgroups: $c}" "${n:+netns: $n}"
  fi
}

# --- the cgroup2 view -----------------------------------------------------------------

# Engines create cgroups under every v1 controller of this hybrid host when
# they see it; in this private mount namespace they see only cgroup2.
_eng_cgroup2_view ()
{
  local cg2
  cg2=$(awk '{ for (i = 7; i <= NF; i++) if ($i == "-") { if ($(i + 1) == "cgroup2") print $5; break } }' \
    /proc/self/mountinfo | head -n 1)
  if [ -z "$cg2" ]; then
    echo "eng_init: no cgroup2 hierarchy is mounted" >&2
    return 1
  fi
  if [ "$cg2" != /sys/fs/cgroup ]; then
    mount --bind "$cg2" /sys/fs/cgroup || return 1
  fi
  [ "$(stat -f -c %T /sys/fs/cgroup)" = cgroup2fs ] || return 1
  # leftovers.sh looks for cgroups named after the test prefix here.
  LO_CG2=/sys/fs/cgroup
}

# eng_init NAME [BINARY...]
eng_init ()
{
  local name=$1 b
  shift
  if [ -z "${KIST_IT_IN_NS:-}" ] || [ "$(readlink /proc/self/ns/mnt)" = "$(readlink /proc/1/ns/mnt)" ]; then
    fail "eng_init: runs in a private mount namespace" "$(readlink /proc/self/ns/mnt)"
    exit 1
  fi
  for b in "$@"; do
    if ! command -v "$b" > /dev/null; then
      skip "$TEST_NAME" "$b is not installed (tests/deps.sh installs it)"
      exit 0
    fi
  done
  if [ ! -x "$RT" ]; then
    fail "the runtime under test exists" "not executable: $RT"
    exit 1
  fi
  if ! _eng_cgroup2_view; then
    skip "$TEST_NAME" "no cgroup2 hierarchy to show the engine"
    exit 0
  fi
  E=$T/$name
  mkdir -p "$E"
  chmod 0711 "$E"
  ENG_CGROUP=/$PREFIX-$name
  eng_netns_snapshot
  echo "engine test $name: runtime $RT ${RT_GLOBAL[*]}"
}

# --- the image --------------------------------------------------------------------------

ENG_IMAGE_ENV=("PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" "KIST_IT_MARK=$MARK")

eng_rootfs ()
{
  if [ -n "${ROOTFS_SRC:-}" ] && [ -x "$ROOTFS_SRC/bin/busybox" ]; then
    mkdir -p "$1" && cp -a "$ROOTFS_SRC/." "$1/"
  else
    bash "$IT_DIR/mkrootfs.sh" "$1"
  fi
}

eng_rootfs_tar ()
{
  local d=$T/.eng-rootfs
  [ -d "$d" ] || eng_rootfs "$d" || return 1
  tar --numeric-owner -C "$d" -cf "$1" .
}

eng_docker_archive ()
{
  local out=$1 ref=${2:-localhost/busybox:latest} w=$T/.eng-archive layer_sha cfg_sha
  rm -rf "$w"
  mkdir -p "$w/layer"
  eng_rootfs_tar "$w/layer.tar" || return 1
  layer_sha=$(sha256sum "$w/layer.tar" | cut -d' ' -f1)
  mkdir -p "$w/img/$layer_sha"
  mv "$w/layer.tar" "$w/img/$layer_sha/layer.tar"
  printf '{"architecture":"%s","os":"linux","created":"2024-01-01T00:00:00Z","config":{"Env":%s,"Cmd":["sh"]},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]},"history":[{"created":"2024-01-01T00:00:00Z","created_by":"tests/engines/lib.sh"}]}' \
    "$(dpkg --print-architecture 2> /dev/null || echo amd64)" "$(json_arr "${ENG_IMAGE_ENV[@]}")" \
    "$layer_sha" > "$w/config.json"
  cfg_sha=$(sha256sum "$w/config.json" | cut -d' ' -f1)
  mv "$w/config.json" "$w/img/$cfg_sha.json"
  printf '[{"Config":"%s.json","RepoTags":["%s"],"Layers":["%s/layer.tar"]}]' \
    "$cfg_sha" "$ref" "$layer_sha" > "$w/img/manifest.json"
  local name=${ref%:*} tag=${ref##*:}
  printf '{"%s":{"%s":"%s"}}' "$name" "$tag" "$layer_sha" > "$w/img/repositories"
  tar --numeric-owner -C "$w/img" -cf "$out" $(ls "$w/img") && rm -rf "$w"
}

# --- a logging wrapper around the runtime ---------------------------------------------------

eng_wrapper ()
{
  local out=$1 log=$2 q=
  shift 2
  [ $# -gt 0 ] && printf -v q '%q ' "$@"
  local g=
  [ ${#RT_GLOBAL[@]} -gt 0 ] && printf -v g '%q ' "${RT_GLOBAL[@]}"
  cat > "$out" <<EOF
#!/bin/sh
echo "\$*" >> $(printf '%q' "$log")
exec $(printf '%q' "$RT") $g$q"\$@"
EOF
  chmod 0755 "$out"
}

# --- pseudo-terminals (tmux) ------------------------------------------------------------------

_eng_tmux ()
{
  tmux -S "$T/tmux.sock" -f /dev/null "$@"
}

eng_tmux_start ()
{
  local name=$1 cols=$2 rows=$3 cmd=$4
  ENG_TMUX_USED=1
  rm -f "$T/$name.rc"
  printf '%s\n' "$cmd" > "$T/$name.tmux-cmd"
  # (No `set-option -g window-size`: tmux 3.3a's server dies at the next
  # new-session after it; resize-window alone makes the size manual.)
  _eng_tmux new-session -d -s "$name" -x "$cols" -y "$rows" \
    "bash $(printf '%q' "$T/$name.tmux-cmd"); echo \$? > $(printf '%q' "$T/$name.rc"); sleep 3600"
}

eng_tmux_stop ()
{
  local pid
  [ -n "${ENG_TMUX_USED:-}" ] || return 0
  pid=$(_eng_tmux display-message -p '#{pid}' 2> /dev/null)
  _eng_tmux kill-server > /dev/null 2>&1
  [ -n "$pid" ] && ! wait_gone "$pid" 5 && kill -KILL "$pid" 2> /dev/null
  ENG_TMUX_USED=
  return 0
}

eng_tmux_screen ()
{
  _eng_tmux capture-pane -p -J -S -200 -t "$1" 2> /dev/null
}

eng_tmux_wait ()
{
  local i n=$(( ${3:-20} * 10 ))
  for ((i = 0; i < n; i++)); do
    [[ "$(eng_tmux_screen "$1")" == *"$2"* ]] && return 0
    sleep 0.1
  done
  return 1
}

eng_tmux_keys ()
{
  local name=$1
  shift
  _eng_tmux send-keys -t "$name" "$@"
}

eng_tmux_resize ()
{
  _eng_tmux resize-window -t "$1" -x "$2" -y "$3"
}

eng_tmux_done ()
{
  local i n=$(( ${2:-20} * 10 ))
  for ((i = 0; i < n; i++)); do
    if [ -s "$T/$1.rc" ]; then
      cat "$T/$1.rc"
      return 0
    fi
    sleep 0.1
  done
  echo timeout
  return 1
}
