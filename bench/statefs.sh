# bench/statefs.sh: sourced by the benchmarks, inside their private mount
# namespace.  bench_state_fs DIR: makes DIR, the parent of every runtime's
# state root, and with KIST_BENCH_STATE=tmpfs (the default) mounts a tmpfs
# on it (mode 0700, visible only in this mount namespace), as /run is on a
# systemd host; KIST_BENCH_STATE=disk leaves it on the file system of the
# temp dir.  Sets STATE_FS_NOTE (what the state roots are on) and
# STATE_FS_MOUNT (the tmpfs to unmount at exit, or "").
bench_fs_of ()
{
  findmnt -n -o FSTYPE,OPTIONS --target "$1" 2> /dev/null | sed 's/  */ (/; s/$/)/' || echo unknown
}

bench_state_fs ()
{
  local dir=$1
  mkdir -p "$dir"
  STATE_FS_MOUNT=
  case ${KIST_BENCH_STATE:-tmpfs} in
    tmpfs)
      mount -t tmpfs -o mode=0700,size=64m kist-bench-state "$dir"
      STATE_FS_MOUNT=$dir
      STATE_FS_NOTE="state roots on a tmpfs (as /run on a systemd host; KIST_BENCH_STATE=disk: on $(bench_fs_of "$(dirname "$dir")"))"
      ;;
    disk)
      STATE_FS_NOTE="state roots on $(bench_fs_of "$dir")"
      ;;
    *)
      echo "KIST_BENCH_STATE must be tmpfs or disk, not \`$KIST_BENCH_STATE'" >&2
      return 1
      ;;
  esac
}
