/* SPDX-License-Identifier: GPL-2.0-or-later */
/* floor_full: the fair floor of bench/startup.sh -- the kernel work that
 * `kist run` does for the bench bundle (the `kist spec` config, cgroup
 * namespace dropped, args /bin/true), in kist's order, with no checks, no
 * state, no report and no parent/child round trips.  kist / this floor is
 * kist's own overhead.  The list was taken from `strace -f` of `kist run` of
 * that bundle (kist 0.1.0, 2026-12-02); see bench/README.md.
 *
 * Usage: floor_full ROOTFS CGROUP_PARENT SECCOMP_BPF [COMMAND [ARG...]]
 *   ROOTFS         the bundle's rootfs (bound onto itself, becomes /)
 *   CGROUP_PARENT  a directory of the cgroup2 hierarchy: the scope is
 *                  CGROUP_PARENT/ff-PID, created and removed (kist: the
 *                  cgroup2 mount's kist/ID)
 *   SECCOMP_BPF    an entry of kist's seccomp cache (STATE_ROOT/
 *                  ~seccomp-cache/HASH.bpf, format in runtime/seccomp_cache.c):
 *                  the very program kist loads.  It is read here, in the
 *                  timed run, as kist reads it on a cache hit (open, fstat,
 *                  read); the 80-byte header is skipped, nothing is hashed.
 *   COMMAND        default /bin/true; environment PATH, TERM=xterm, HOME=/root
 *                  (what kist gives the bench's process).
 * Two helper modes for the script's checks (never timed):
 *   floor_full --devprog-tag        load the device program, print its tag
 *   floor_full --cgroup-tags DIR    tags of the device programs on DIR
 * Exit status: the command's, 128+N if killed by signal N, 125 on setup
 * failure.  Needs root.
 *
 * Done, in kist's order:
 *   parent: read the cached seccomp BPF; mkdir the scope; BPF_PROG_LOAD of
 *     the cgroup device program (runtime/cgroup_devices.c with no configured
 *     rule: runc's 10 default rules, 38 insns) and BPF_PROG_ATTACH
 *     (BPF_F_ALLOW_MULTI) to the scope; clone3 with CLONE_NEWNS|NEWUTS|
 *     NEWIPC|NEWPID|NEWNET|NEWCGROUP|CLONE_INTO_CGROUP (kist spec's namespaces).
 *   child: PR_SET_DUMPABLE 0; lo up (rtnetlink RTM_NEWLINK IFF_UP + ACK);
 *     / rprivate; the rootfs bound recursively onto itself (open_tree +
 *     move_mount); config.mounts with fsopen/fsconfig/fsmount/move_mount and
 *     their options and flags (proc, /dev tmpfs, mkdir + devpts, mkdir + shm,
 *     mkdir + mqueue, sysfs ro, cgroup2 ro); in /dev mknod+chown+chmod of
 *     null zero full random urandom tty, the symlinks ptmx fd stdin stdout
 *     stderr (and core if the host has /proc/kcore); pivot_root(".", "."),
 *     the old root made rslave and detached; sethostname; masked paths (an
 *     empty read-only 4k tmpfs on a directory, a bind of /dev/null on a
 *     file, nothing on a missing path); read-only paths (recursive bind
 *     clone, mount_setattr RDONLY, moved onto itself); chdir cwd; / remounted
 *     read-only (mount_setattr); RLIMIT_NOFILE; setsid; KEEPCAPS, setgroups,
 *     setresgid, setresuid, umask; PR_CAPBSET_DROP of every capability not
 *     in the bounding set, capset of effective/permitted, ambient cleared,
 *     KEEPCAPS off; no_new_privs; seccomp(SECCOMP_SET_MODE_FILTER, 0); execve.
 *   parent: waitpid, rmdir the scope (kist's delete of a foreground run).
 *
 * Left out on purpose (kist's overhead by definition): kist's re-exec from a
 * sealed/read-only copy (bench/startup.sh's kistro row isolates it), parsing
 * and resolving config.json, the state dir and its state.json/report.json
 * writes, renames and unlinks, the lock, the start socket and the sync
 * socketpair round trips, every read back and verification (mountinfo,
 * statx/fstatfs of each mount, getdents of masked dirs, RTM_GETLINK, uname,
 * /proc/self/status, getres[ug]id, PR_CAPBSET_READ, the device program's
 * BPF_OBJ_GET_INFO_BY_FD/PROG_QUERY and the verifier-log load, the read-only
 * probe file), the cgroup.controllers/subtree_control/events reads, the
 * openat2 RESOLVE_IN_ROOT lookups (plain paths here), PR_SET_PDEATHSIG, the
 * no-op capget/capset raise (kist runs as root with a full effective set
 * here), close_range of inherited fds (everything here is O_CLOEXEC),
 * SIOCGIFINDEX of lo (ifindex 1 in a new netns), the seccomp cache's key
 * (hash of the profile) and checksum. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/filter.h>
#include <linux/rtnetlink.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <net/if.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <grp.h>
#include <time.h>
#include <unistd.h>

#define SETUP_FAILED 125

static void
die (const char *what, const char *path)
{
  fprintf (stderr, "floor_full: %s%s%s: %s\n", what, path ? " " : "", path ? path : "",
           strerror (errno));
  _exit (SETUP_FAILED);
}

/* ---- the cgroup device program (runc's default rules) ------------------- */


#define I(c, d, s, o, k) ((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (k) })
#define JEQ32(reg, k, to) I (BPF_JMP32 | BPF_JEQ | BPF_K, reg, 0, to, k)
#define JNE32(reg, k, to) I (BPF_JMP32 | BPF_JNE | BPF_K, reg, 0, to, k)

/* The program runtime/cgroup_devices.c builds for runc's default rules and
 * no configured one (startup.sh checks that both have the same tag): tested
 * from runc's last rule to its first, as three blocks of rules with the same
 * outcome, type and access:
 *   c 5:2, 136:*, 1:9, 1:5, 5:0, 1:7, 1:8, 1:3 rwm (one type test, then
 *     the pairs, those of one major under one test of it: 5 {2, 0}, 136,
 *     1 {9, 5, 7, 8, 3});
 *   b *:* m; c *:* m (type, then "nothing asked for but mknod");
 * then deny. */
static size_t
dev_program (struct bpf_insn *p)
{
  static const struct bpf_insn prog[] = {
    I (BPF_LDX | BPF_MEM | BPF_W, 2, 1, 0, 0), I (BPF_ALU | BPF_AND | BPF_K, 2, 0, 0, 0xffff),
    I (BPF_JMP | BPF_JNE | BPF_K, 2, 0, 15, BPF_DEVCG_DEV_CHAR),
    I (BPF_LDX | BPF_MEM | BPF_W, 4, 1, 4, 0), I (BPF_LDX | BPF_MEM | BPF_W, 5, 1, 8, 0),
    JNE32 (4, 5, 2), JEQ32 (5, 2, 9), JEQ32 (5, 0, 8),
    JEQ32 (4, 136, 7),
    JNE32 (4, 1, 5), JEQ32 (5, 9, 5), JEQ32 (5, 5, 4), JEQ32 (5, 7, 3), JEQ32 (5, 8, 2),
    JEQ32 (5, 3, 1),
    I (BPF_JMP | BPF_JA, 0, 0, 2, 0),
    I (BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 1), I (BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
    /* b *:* m */
    I (BPF_LDX | BPF_MEM | BPF_W, 2, 1, 0, 0), I (BPF_ALU | BPF_AND | BPF_K, 2, 0, 0, 0xffff),
    I (BPF_JMP | BPF_JNE | BPF_K, 2, 0, 6, BPF_DEVCG_DEV_BLOCK),
    I (BPF_LDX | BPF_MEM | BPF_W, 2, 1, 0, 0), I (BPF_ALU | BPF_RSH | BPF_K, 2, 0, 0, 16),
    I (BPF_ALU | BPF_AND | BPF_K, 2, 0, 0, BPF_DEVCG_ACC_READ | BPF_DEVCG_ACC_WRITE),
    I (BPF_JMP | BPF_JNE | BPF_K, 2, 0, 2, 0),
    I (BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 1), I (BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
    /* c *:* m */
    I (BPF_LDX | BPF_MEM | BPF_W, 2, 1, 0, 0), I (BPF_ALU | BPF_AND | BPF_K, 2, 0, 0, 0xffff),
    I (BPF_JMP | BPF_JNE | BPF_K, 2, 0, 6, BPF_DEVCG_DEV_CHAR),
    I (BPF_LDX | BPF_MEM | BPF_W, 2, 1, 0, 0), I (BPF_ALU | BPF_RSH | BPF_K, 2, 0, 0, 16),
    I (BPF_ALU | BPF_AND | BPF_K, 2, 0, 0, BPF_DEVCG_ACC_READ | BPF_DEVCG_ACC_WRITE),
    I (BPF_JMP | BPF_JNE | BPF_K, 2, 0, 2, 0),
    I (BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 1), I (BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
    I (BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 0), I (BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
  };
  memcpy (p, prog, sizeof prog);
  return sizeof prog / sizeof prog[0];
}

static int
sys_bpf (int cmd, union bpf_attr *a)
{
  return (int) syscall (SYS_bpf, cmd, a, sizeof *a);
}

static int
load_dev_program (void)
{
  struct bpf_insn prog[128];
  union bpf_attr a;
  memset (&a, 0, sizeof a);
  a.prog_type = BPF_PROG_TYPE_CGROUP_DEVICE;
  a.insns = (uint64_t) (uintptr_t) prog;
  a.insn_cnt = (uint32_t) dev_program (prog);
  a.license = (uint64_t) (uintptr_t) "GPL";
  return sys_bpf (BPF_PROG_LOAD, &a);
}

/* Load the program and attach it to the scope (as kist: BPF_F_ALLOW_MULTI). */
static void
attach_dev_program (int scope_fd, const char *scope)
{
  union bpf_attr a;
  int prog = load_dev_program ();
  if (prog < 0)
    die ("BPF_PROG_LOAD of the device program", NULL);
  memset (&a, 0, sizeof a);
  a.attach_type = BPF_CGROUP_DEVICE, a.attach_flags = BPF_F_ALLOW_MULTI;
  a.target_fd = (uint32_t) scope_fd, a.attach_bpf_fd = (uint32_t) prog;
  if (sys_bpf (BPF_PROG_ATTACH, &a) < 0)
    die ("BPF_PROG_ATTACH to", scope);
  close (prog);
}

static void
print_tag (int prog_fd)
{
  struct bpf_prog_info info;
  union bpf_attr a;
  memset (&info, 0, sizeof info);
  memset (&a, 0, sizeof a);
  a.info.bpf_fd = (uint32_t) prog_fd;
  a.info.info_len = sizeof info;
  a.info.info = (uint64_t) (uintptr_t) &info;
  if (sys_bpf (BPF_OBJ_GET_INFO_BY_FD, &a) < 0)
    die ("BPF_OBJ_GET_INFO_BY_FD", NULL);
  for (size_t i = 0; i < sizeof info.tag; i++)
    printf ("%02x", info.tag[i]);
  printf (" %u\n", info.xlated_prog_len / 8);
}

static int
helper_mode (int argc, char **argv)
{
  if (strcmp (argv[1], "--devprog-tag") == 0)
    {
      int fd = load_dev_program ();
      if (fd < 0)
        die ("BPF_PROG_LOAD of the device program", NULL);
      print_tag (fd);
      return 0;
    }
  if (argc < 3)
    return SETUP_FAILED;
  int cg = open (argv[2], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (cg < 0)
    die ("open", argv[2]);
  uint32_t ids[64];
  union bpf_attr a;
  memset (&a, 0, sizeof a);
  a.query.target_fd = (uint32_t) cg;
  a.query.attach_type = BPF_CGROUP_DEVICE;
  a.query.prog_ids = (uint64_t) (uintptr_t) ids;
  a.query.prog_cnt = 64;
  if (sys_bpf (BPF_PROG_QUERY, &a) < 0)
    die ("BPF_PROG_QUERY", argv[2]);
  for (uint32_t i = 0; i < a.query.prog_cnt && i < 64; i++)
    {
      union bpf_attr g;
      memset (&g, 0, sizeof g);
      g.prog_id = ids[i];
      int fd = sys_bpf (BPF_PROG_GET_FD_BY_ID, &g);
      if (fd < 0)
        die ("BPF_PROG_GET_FD_BY_ID", NULL);
      print_tag (fd);
    }
  return 0;
}

/* ---- mounts ----------------------------------------------------------- */

/* fsopen TYPE, the string options ("key=value" or a bare flag), create,
 * fsmount with ATTRS, move onto AT/PATH. */
static void
fs_mount (const char *type, const char *const *opts, unsigned attrs, int at, const char *path)
{
  int fs = fsopen (type, FSOPEN_CLOEXEC);
  if (fs < 0)
    die ("fsopen", type);
  for (; *opts; opts++)
    {
      char key[64];
      const char *eq = strchr (*opts, '=');
      int r;
      if (eq == NULL)
        r = fsconfig (fs, FSCONFIG_SET_FLAG, *opts, NULL, 0);
      else
        {
          snprintf (key, sizeof key, "%.*s", (int) (eq - *opts), *opts);
          r = fsconfig (fs, FSCONFIG_SET_STRING, key, eq + 1, 0);
        }
      if (r < 0)
        die ("fsconfig", *opts);
    }
  if (fsconfig (fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
    die ("creating a superblock of", type);
  int mnt = fsmount (fs, FSMOUNT_CLOEXEC, attrs);
  if (mnt < 0)
    die ("fsmount", type);
  if (move_mount (mnt, "", at, path, MOVE_MOUNT_F_EMPTY_PATH) < 0)
    die ("move_mount onto", path);
  close (mnt);
  close (fs);
}

#define OPTS(...) ((const char *const[]){ __VA_ARGS__, NULL })
#define NOSUID MOUNT_ATTR_NOSUID
#define NODEV MOUNT_ATTR_NODEV
#define NOEXEC MOUNT_ATTR_NOEXEC
#define RDONLY MOUNT_ATTR_RDONLY

static void
config_mounts (int root)
{
  fs_mount ("proc", OPTS ("source=proc"), 0, root, "proc");
  fs_mount ("tmpfs", OPTS ("source=tmpfs", "mode=755", "size=65536k"),
            NOSUID | MOUNT_ATTR_STRICTATIME, root, "dev");
  if (mkdirat (root, "dev/pts", 0755) < 0)
    die ("mkdir", "dev/pts");
  fs_mount ("devpts",
            OPTS ("source=devpts", "newinstance", "ptmxmode=0666", "mode=0620", "gid=5"),
            NOSUID | NOEXEC, root, "dev/pts");
  if (mkdirat (root, "dev/shm", 0755) < 0)
    die ("mkdir", "dev/shm");
  fs_mount ("tmpfs", OPTS ("source=shm", "mode=1777", "size=65536k"), NOSUID | NODEV | NOEXEC,
            root, "dev/shm");
  if (mkdirat (root, "dev/mqueue", 0755) < 0)
    die ("mkdir", "dev/mqueue");
  fs_mount ("mqueue", OPTS ("source=mqueue"), NOSUID | NODEV | NOEXEC, root, "dev/mqueue");
  fs_mount ("sysfs", OPTS ("source=sysfs"), RDONLY | NOSUID | NODEV | NOEXEC, root, "sys");
  fs_mount ("cgroup2", OPTS ("source=cgroup"), RDONLY | NOSUID | NODEV | NOEXEC, root,
            "sys/fs/cgroup");
}

/* runtime/dev.c's default nodes and symlinks. */
static void
dev_nodes (int root)
{
  static const struct
  {
    const char *name;
    unsigned major, minor;
  } nodes[] = { { "null", 1, 3 },    { "zero", 1, 5 }, { "full", 1, 7 },
                { "random", 1, 8 }, { "urandom", 1, 9 }, { "tty", 5, 0 } };
  static const char *const links[][2] = { { "pts/ptmx", "ptmx" },
                                          { "/proc/self/fd", "fd" },
                                          { "/proc/self/fd/0", "stdin" },
                                          { "/proc/self/fd/1", "stdout" },
                                          { "/proc/self/fd/2", "stderr" } };
  int dev = openat (root, "dev", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (dev < 0)
    die ("open", "dev");
  for (size_t i = 0; i < sizeof nodes / sizeof nodes[0]; i++)
    {
      if (mknodat (dev, nodes[i].name, S_IFCHR | 0666, makedev (nodes[i].major, nodes[i].minor)) < 0
          || fchownat (dev, nodes[i].name, 0, 0, AT_SYMLINK_NOFOLLOW) < 0
          || fchmodat (dev, nodes[i].name, 0666, 0) < 0)
        die ("mknod /dev/", nodes[i].name);
    }
  for (size_t i = 0; i < sizeof links / sizeof links[0]; i++)
    if (symlinkat (links[i][0], dev, links[i][1]) < 0)
      die ("symlink /dev/", links[i][1]);
  if (access ("/proc/kcore", F_OK) == 0 && symlinkat ("/proc/kcore", dev, "core") < 0)
    die ("symlink /dev/", "core");
  close (dev);
}

static void
pivot (int root)
{
  if (fchdir (root) < 0)
    die ("fchdir", "the rootfs");
  int old = open ("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (old < 0)
    die ("open", "/");
  if (syscall (SYS_pivot_root, ".", ".") < 0)
    die ("pivot_root", NULL);
  if (fchdir (old) < 0)
    die ("fchdir", "the old root");
  if (mount (NULL, ".", NULL, MS_REC | MS_SLAVE, NULL) < 0)
    die ("making the old root rslave", NULL);
  if (umount2 (".", MNT_DETACH) < 0)
    die ("detaching the old root", NULL);
  close (old);
  if (chdir ("/") < 0)
    die ("chdir", "/");
}

static void
masked_paths (void)
{
  static const char *const paths[] = { "/proc/acpi",        "/proc/asound",     "/proc/kcore",
                                       "/proc/keys",        "/proc/latency_stats",
                                       "/proc/timer_list",  "/proc/timer_stats",
                                       "/proc/sched_debug", "/sys/firmware",    "/proc/scsi" };
  for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++)
    {
      struct stat st;
      if (stat (paths[i], &st) < 0)
        {
          if (errno == ENOENT)
            continue;
          die ("stat", paths[i]);
        }
      if (S_ISDIR (st.st_mode))
        {
          fs_mount ("tmpfs", OPTS ("size=4k", "mode=0755"), RDONLY | NOSUID | NODEV | NOEXEC,
                    AT_FDCWD, paths[i]);
          continue;
        }
      int null = open_tree (AT_FDCWD, "/dev/null", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
      if (null < 0 || move_mount (null, "", AT_FDCWD, paths[i], MOVE_MOUNT_F_EMPTY_PATH) < 0)
        die ("binding /dev/null onto", paths[i]);
      close (null);
    }
}

static void
readonly_paths (void)
{
  static const char *const paths[]
      = { "/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger" };
  struct mount_attr ro = { .attr_set = MOUNT_ATTR_RDONLY };
  for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++)
    {
      int fd = open_tree (AT_FDCWD, paths[i], OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
      if (fd < 0 && errno == ENOENT)
        continue;
      if (fd < 0 || mount_setattr (fd, "", AT_EMPTY_PATH | AT_RECURSIVE, &ro, sizeof ro) < 0
          || move_mount (fd, "", AT_FDCWD, paths[i], MOVE_MOUNT_F_EMPTY_PATH) < 0)
        die ("making read-only", paths[i]);
      close (fd);
    }
}

/* ---- the process --------------------------------------------------------- */

static void
loopback_up (void)
{
  struct
  {
    struct nlmsghdr h;
    struct ifinfomsg i;
  } req = { .h = { .nlmsg_len = sizeof req, .nlmsg_type = RTM_NEWLINK,
                   .nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK, .nlmsg_seq = 1 },
            .i = { .ifi_family = AF_UNSPEC, .ifi_index = 1, .ifi_flags = IFF_UP,
                   .ifi_change = IFF_UP } };
  char ack[256];
  int nl = socket (AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  if (nl < 0 || send (nl, &req, sizeof req, 0) < 0 || recv (nl, ack, sizeof ack, 0) < 0)
    die ("RTM_NEWLINK lo up", NULL);
  struct nlmsgerr *e = NLMSG_DATA ((struct nlmsghdr *) ack);
  if (((struct nlmsghdr *) ack)->nlmsg_type != NLMSG_ERROR || e->error != 0)
    {
      errno = -e->error;
      die ("RTM_NEWLINK lo up: no ACK", NULL);
    }
  close (nl);
}

static const unsigned long kept_caps
    = (1UL << 29) | (1UL << 5) | (1UL << 10); /* AUDIT_WRITE, KILL, NET_BIND_SERVICE */

static void
credentials (void)
{
  if (prctl (PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0 || setgroups (0, NULL) < 0 || setresgid (0, 0, 0) < 0
      || setresuid (0, 0, 0) < 0)
    die ("setting uid/gid 0", NULL);
  umask (022);
  for (int c = 0; c < 64; c++)
    if (!(kept_caps & (1UL << c)) && prctl (PR_CAPBSET_DROP, c, 0, 0, 0) < 0)
      {
        if (errno == EINVAL)
          break; /* past cap_last_cap */
        die ("PR_CAPBSET_DROP", NULL);
      }
  struct
  {
    uint32_t version;
    int pid;
  } hdr = { 0x20080522 /* _LINUX_CAPABILITY_VERSION_3 */, 0 };
  struct
  {
    uint32_t effective, permitted, inheritable;
  } data[2] = { { (uint32_t) kept_caps, (uint32_t) kept_caps, 0 }, { 0, 0, 0 } };
  if (syscall (SYS_capset, &hdr, data) < 0)
    die ("capset", NULL);
  if (prctl (PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0
      || prctl (PR_SET_KEEPCAPS, 0, 0, 0, 0) < 0)
    die ("ambient/keepcaps", NULL);
}

struct child_args
{
  const char *rootfs;
  char **argv;
  struct sock_fprog *seccomp;
};

static void
child (const struct child_args *a)
{
  static char *envp[] = { (char *) "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                          (char *) "TERM=xterm", (char *) "HOME=/root", NULL };
  struct mount_attr ro = { .attr_set = MOUNT_ATTR_RDONLY };
  struct rlimit nofile = { 1024, 1024 };

  if (prctl (PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
    die ("PR_SET_DUMPABLE", NULL);
  loopback_up ();
  if (mount (NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
    die ("making / rprivate", NULL);
  int bind = open_tree (AT_FDCWD, a->rootfs, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
  if (bind < 0 || move_mount (bind, "", AT_FDCWD, a->rootfs, MOVE_MOUNT_F_EMPTY_PATH) < 0)
    die ("binding the rootfs onto itself", a->rootfs);
  close (bind);
  int root = open (a->rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root < 0)
    die ("open", a->rootfs);
  config_mounts (root);
  dev_nodes (root);
  pivot (root);
  close (root);
  if (sethostname ("kist", 4) < 0)
    die ("sethostname", NULL);
  masked_paths ();
  readonly_paths ();
  if (chdir ("/") < 0) /* process.cwd */
    die ("chdir", "/");
  if (mount_setattr (AT_FDCWD, "/", 0, &ro, sizeof ro) < 0)
    die ("making / read-only", NULL);
  if (setrlimit (RLIMIT_NOFILE, &nofile) < 0)
    die ("RLIMIT_NOFILE", NULL);
  if (setsid () < 0)
    die ("setsid", NULL);
  credentials ();
  if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
    die ("PR_SET_NO_NEW_PRIVS", NULL);
  if (syscall (SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, a->seccomp) < 0)
    die ("seccomp", NULL);
  execve (a->argv[0], a->argv, envp);
  int e = errno;
  fprintf (stderr, "floor_full: exec %s: %s\n", a->argv[0], strerror (e));
  _exit (e == ENOENT ? 127 : 126);
}

/* kist's cache entry (format 2): 80-byte header (magic, version, n_insns,
 * key, checksum), the program, then kist's meta part (not needed here). */
static struct sock_fprog *
read_seccomp (const char *path)
{
  static struct sock_fprog fprog;
  struct stat st;
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0 || fstat (fd, &st) < 0)
    die ("open", path);
  size_t size = (size_t) st.st_size;
  unsigned char *buf = malloc (size);
  if (buf == NULL || size < 80 || read (fd, buf, size) != (ssize_t) size
      || memcmp (buf, "KISTBPF\n", 8) != 0)
    {
      errno = EINVAL;
      die ("not a kist seccomp cache entry:", path);
    }
  uint32_t n;
  memcpy (&n, buf + 12, sizeof n);
  if (n == 0 || size < 80 + (size_t) n * sizeof (struct sock_filter) + 32)
    {
      errno = EINVAL;
      die ("size does not match the instruction count:", path);
    }
  close (fd);
  fprog.len = (unsigned short) n;
  fprog.filter = (struct sock_filter *) (buf + 80);
  return &fprog;
}

int
main (int argc, char **argv)
{
  static char *default_argv[] = { (char *) "/bin/true", NULL };
  struct child_args a;
  char scope[4096];
  int status;

  if (argc >= 2 && strncmp (argv[1], "--", 2) == 0)
    return helper_mode (argc, argv);
  if (argc < 4)
    {
      fprintf (stderr, "usage: %s ROOTFS CGROUP_PARENT SECCOMP_BPF [COMMAND [ARG...]]\n", argv[0]);
      return SETUP_FAILED;
    }
  a.rootfs = argv[1];
  a.argv = argc > 4 ? argv + 4 : default_argv;
  a.seccomp = read_seccomp (argv[3]);

  snprintf (scope, sizeof scope, "%s/ff-%d", argv[2], (int) getpid ());
  if (mkdir (scope, 0755) < 0)
    die ("mkdir", scope);
  int cg = open (scope, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (cg < 0)
    die ("open", scope);
  attach_dev_program (cg, scope);

  struct clone_args ca = { .flags = CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWPID
                                    | CLONE_NEWNET | CLONE_NEWCGROUP | CLONE_INTO_CGROUP,
                           .exit_signal = SIGCHLD,
                           .cgroup = (uint64_t) cg };
  long pid = syscall (SYS_clone3, &ca, sizeof ca);
  if (pid < 0)
    die ("clone3", NULL);
  if (pid == 0)
    child (&a);
  close (cg);
  while (waitpid ((pid_t) pid, &status, 0) < 0)
    if (errno != EINTR)
      die ("waitpid", NULL);
  /* The scope empties when the reaped child's css_set is released. */
  for (int i = 0; rmdir (scope) < 0; i++)
    {
      struct timespec ms = { 0, 1000000 };
      if (errno != EBUSY || i == 1000)
        die ("rmdir", scope);
      nanosleep (&ms, NULL);
    }
  if (WIFSIGNALED (status))
    return 128 + WTERMSIG (status);
  return WEXITSTATUS (status);
}
