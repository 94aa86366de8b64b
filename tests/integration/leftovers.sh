# leftovers.sh: find what kist tests may leave behind.  Sourced by lib.sh
# (per test) and run.sh (after all tests).  Parameters (variables):
#   LO_DIR      a directory prefix: every test path is below it
#   LO_MARK     the KIST_IT_MARK value every container's environment carries
#   LO_BUSYBOX  the rootfs's busybox; bundles hard-link it, so a container
#               process still running it is found by inode
#   LO_PREFIX   the prefix of every container id
# Pure bash where it loops over /proc, so no helper process matches itself.

LO_CG2=$(awk '{ for (i = 7; i <= NF; i++) if ($i == "-") { if ($(i + 1) == "cgroup2") print $5; break } }' \
  /proc/self/mountinfo | head -n 1)

# leftover_pids: processes of the tests: kist (or anything) whose argv mentions
# LO_DIR, a container process (marker in its environment), or a process whose
# executable is the test rootfs's busybox.
leftover_pids ()
{
  local p d a cmd env
  for d in /proc/[0-9]*; do
    p=${d#/proc/}
    [ "$p" = $$ ] || [ "$p" = "$BASHPID" ] && continue
    a=()
    { mapfile -d "" -t a < "$d/cmdline"; } 2> /dev/null || continue
    [ ${#a[@]} -gt 0 ] || continue     # kernel thread or zombie
    cmd="${a[*]}"
    if [[ "$cmd" == *"$LO_DIR/"* ]]; then
      echo "$p"
      continue
    fi
    if [ -n "${LO_BUSYBOX:-}" ] && [ "$d/exe" -ef "$LO_BUSYBOX" ]; then
      echo "$p"
      continue
    fi
    a=()
    { mapfile -d "" -t a < "$d/environ"; } 2> /dev/null || continue
    for env in "${a[@]}"; do
      if [ "$env" == "KIST_IT_MARK=$LO_MARK" ]; then
        echo "$p"
        break
      fi
    done
  done
}

# describe_pids PID...: "pid(comm: argv)" for messages.
describe_pids ()
{
  local p a comm
  for p in "$@"; do
    a=()
    { mapfile -d "" -t a < "/proc/$p/cmdline"; } 2> /dev/null
    comm=$(cat "/proc/$p/comm" 2> /dev/null)
    printf '%s(%s: %s) ' "$p" "$comm" "${a[*]}"
  done
}

# leftover_mounts [MOUNTINFO]: mount points below LO_DIR.
leftover_mounts ()
{
  awk -v t="$LO_DIR" '$5 == t || index($5, t "/") == 1 { print $5 }' "${1:-/proc/self/mountinfo}"
}

# leftover_cgroups: cgroup2 directories named after a test id.
leftover_cgroups ()
{
  [ -n "$LO_CG2" ] && [ -d "$LO_CG2" ] || return 0
  find "$LO_CG2" -mindepth 1 -maxdepth 5 -type d -name "*$LO_PREFIX*" 2> /dev/null
}
