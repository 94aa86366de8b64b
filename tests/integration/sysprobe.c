/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sysprobe: a test helper for kist's seccomp tests.  Built statically
 * (cc -static -O2) and copied into the busybox test rootfs.
 *
 *   sysprobe NAME [ARG...]
 *
 * tries one operation and prints one line, "NAME ok" or "NAME errno=ENAME"
 * (e.g. "mount errno=EPERM"; "NAME killed=SIGNAME" for the probes that make
 * the call in a child), and exits 0; it exits 2 on a usage error.
 * Every probe is harmless even where the kernel allows it: the arguments are
 * chosen so that the call fails after the permission checks (reboot with a
 * bad magic number, swapon of a missing file, kexec_load with an impossible
 * segment count, init_module of an empty image), or its effect is local to
 * the probe's process and undone before it exits (mount is unmounted again,
 * unshare only moves this process).  Still, run `mount` only inside a
 * container or a private mount namespace.  `sysprobe list` prints the probes. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/io_uring.h>
#include <linux/kexec.h>
#include <linux/keyctl.h>
#include <linux/perf_event.h>
#include <linux/reboot.h>
#include <linux/userfaultfd.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/swap.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <poll.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY 1
#endif
#ifndef SYS_clone3
#define SYS_clone3 435
#endif

#define MISSING "/sysprobe-nonexistent"

/* A probe returns the raw result: >= 0 success, -1 with errno set. */
typedef long (*probe_fn) (int argc, char **argv);

static long
close_result (long fd)
{
  if (fd >= 0)
    close ((int) fd);
  return fd;
}

static const char *
arg_or (int argc, char **argv, int i, const char *dflt)
{
  return argc > i ? argv[i] : dflt;
}

static unsigned long
num_arg (int argc, char **argv, int i, unsigned long dflt)
{
  if (argc <= i)
    return dflt;
  char *end;
  errno = 0;
  unsigned long v = strtoul (argv[i], &end, 0);
  if (errno || *end || end == argv[i])
    {
      fprintf (stderr, "sysprobe: not a number: %s\n", argv[i]);
      exit (2);
    }
  return v;
}

static long
p_getpid (int argc, char **argv)
{
  return syscall (SYS_getpid);
}

/* getpid through another system call ABI of the x86_64 kernel: the i386
 * one (int $0x80, getpid is 20) or the x32 one (the x86_64 number with bit
 * 30 set).  A filter can kill the caller for a foreign ABI, so the call is
 * made in a child: "ok" when it returned the child's pid, the errno it
 * returned, or killed=SIGNAME when the child died of a signal. */
static int probe_killed_by;

static long
getpid_abi (bool i386)
{
#if defined(__x86_64__)
  pid_t pid = fork ();
  if (pid < 0)
    return -1;
  if (pid == 0)
    {
      long r;
      if (i386)
        __asm__ volatile ("int $0x80" : "=a"(r) : "a"(20L) : "memory");
      else
        __asm__ volatile ("syscall" : "=a"(r) : "a"(0x40000000L | SYS_getpid) : "rcx", "r11", "memory");
      if (r == (long) getpid ())
        _exit (0);
      _exit (r < 0 && r > -256 ? (int) -r : 255);
    }
  int st;
  while (waitpid (pid, &st, 0) < 0)
    if (errno != EINTR)
      return -1;
  if (WIFSIGNALED (st))
    {
      probe_killed_by = WTERMSIG (st);
      return -2;
    }
  errno = WEXITSTATUS (st) == 255 ? EPROTO : WEXITSTATUS (st);
  return errno ? -1 : 0;
#else
  (void) i386;
  errno = ENOSYS;
  return -1;
#endif
}

static long
p_getpid_i386 (int argc, char **argv)
{
  return getpid_abi (true);
}

static long
p_getpid_x32 (int argc, char **argv)
{
  return getpid_abi (false);
}

/* mount [TARGET]: a small tmpfs on TARGET (default /tmp), unmounted again. */
static long
p_mount (int argc, char **argv)
{
  const char *target = arg_or (argc, argv, 2, "/tmp");
  if (mount ("sysprobe", target, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=64k") < 0)
    return -1;
  umount2 (target, MNT_DETACH);
  return 0;
}

/* umount2 [TARGET]: default a missing path (ENOENT when the kernel allows it). */
static long
p_umount2 (int argc, char **argv)
{
  return umount2 (arg_or (argc, argv, 2, MISSING), 0);
}

static long
p_pivot_root (int argc, char **argv)
{
  return syscall (SYS_pivot_root, MISSING, MISSING);
}

static long
p_unshare_user (int argc, char **argv)
{
  return unshare (CLONE_NEWUSER);
}

static long
p_unshare_net (int argc, char **argv)
{
  return unshare (CLONE_NEWNET);
}

/* New user and network namespaces at once: no capability needed. */
static long
p_unshare_usernet (int argc, char **argv)
{
  return unshare (CLONE_NEWUSER | CLONE_NEWNET);
}

/* A flag without a namespace: allowed by the profiles. */
static long
p_unshare_fs (int argc, char **argv)
{
  return unshare (CLONE_FS);
}

/* setns on an invalid fd: EBADF when the kernel sees it. */
static long
p_setns (int argc, char **argv)
{
  return setns (-1, CLONE_NEWNET);
}

/* fork + wait: a plain clone without namespace flags. */
static long
p_fork (int argc, char **argv)
{
  pid_t pid = fork ();
  if (pid < 0)
    return -1;
  if (pid == 0)
    _exit (0);
  int st;
  while (waitpid (pid, &st, 0) < 0)
    if (errno != EINTR)
      return -1;
  return 0;
}

/* clone(CLONE_NEWUSER): a child in a new user namespace, exits at once. */
static long
p_clone_newuser (int argc, char **argv)
{
  long pid = syscall (SYS_clone, (unsigned long) (CLONE_NEWUSER | SIGCHLD), 0UL, 0UL, 0UL, 0UL);
  if (pid < 0)
    return -1;
  if (pid == 0)
    _exit (0);
  int st;
  while (waitpid ((pid_t) pid, &st, 0) < 0)
    if (errno != EINTR)
      return -1;
  return 0;
}

/* clone3 with a size below CLONE_ARGS_SIZE_VER0: the kernel says EINVAL
 * without creating anything; the profiles answer ENOSYS. */
static long
p_clone3 (int argc, char **argv)
{
  uint64_t args[16] = { 0 };
  return syscall (SYS_clone3, args, (size_t) 1);
}

/* reboot with a wrong magic number: after the CAP_SYS_BOOT check the kernel
 * says EINVAL and does nothing. */
static long
p_reboot (int argc, char **argv)
{
  return syscall (SYS_reboot, 0, 0, LINUX_REBOOT_CMD_CAD_OFF, NULL);
}

static long
p_swapon (int argc, char **argv)
{
  return swapon (arg_or (argc, argv, 2, MISSING), 0);
}

static long
p_swapoff (int argc, char **argv)
{
  return swapoff (arg_or (argc, argv, 2, MISSING));
}

/* kexec_load of more segments than the kernel accepts, for a foreign
 * architecture: EINVAL after the permission check, nothing loaded. */
static long
p_kexec_load (int argc, char **argv)
{
  return syscall (SYS_kexec_load, 0UL, (unsigned long) KEXEC_SEGMENT_MAX + 1, NULL,
                  (unsigned long) KEXEC_ARCH_ARM);
}

static long
p_keyctl (int argc, char **argv)
{
  return syscall (SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0);
}

/* A key in the process keyring, gone when the probe exits. */
static long
p_add_key (int argc, char **argv)
{
  return syscall (SYS_add_key, "user", "kist-sysprobe", "x", (size_t) 1, KEY_SPEC_PROCESS_KEYRING);
}

/* BPF_PROG_LOAD of an empty socket filter: E2BIG (or EPERM without
 * CAP_BPF/CAP_SYS_ADMIN) from the kernel. */
static long
p_bpf (int argc, char **argv)
{
  union bpf_attr attr;
  memset (&attr, 0, sizeof attr);
  attr.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
  attr.insn_cnt = 0;
  attr.license = (uintptr_t) "GPL";
  return close_result (syscall (SYS_bpf, BPF_PROG_LOAD, &attr, sizeof attr));
}

/* An unknown bpf command: EINVAL from the kernel before any capability check. */
static long
p_bpf_badcmd (int argc, char **argv)
{
  union bpf_attr attr;
  memset (&attr, 0, sizeof attr);
  return syscall (SYS_bpf, 0x7fff, &attr, sizeof attr);
}

static void
perf_attr (struct perf_event_attr *a)
{
  memset (a, 0, sizeof *a);
  a->type = PERF_TYPE_SOFTWARE;
  a->size = sizeof *a;
  a->config = PERF_COUNT_SW_TASK_CLOCK;
  a->disabled = 1;
  a->exclude_kernel = 1;
  a->exclude_hv = 1;
}

/* A user-space-only software counter on this process. */
static long
p_perf_event_open (int argc, char **argv)
{
  struct perf_event_attr a;
  perf_attr (&a);
  return close_result (syscall (SYS_perf_event_open, &a, 0, -1, -1, 0UL));
}

/* Unknown flags: EINVAL from the kernel before any permission check. */
static long
p_perf_badflags (int argc, char **argv)
{
  struct perf_event_attr a;
  perf_attr (&a);
  return close_result (syscall (SYS_perf_event_open, &a, 0, -1, -1, ~0UL));
}

/* init_module of an empty image: ENOEXEC (or ENOSYS without module support). */
static long
p_init_module (int argc, char **argv)
{
  static char image[1];
  return syscall (SYS_init_module, image, 0UL, "");
}

/* PTRACE_PEEKDATA on pid 1, which this probe does not trace: ESRCH from the kernel. */
static long
p_ptrace (int argc, char **argv)
{
  long data = 0;
  return syscall (SYS_ptrace, PTRACE_PEEKDATA, 1, NULL, &data);
}

/* process_vm_readv of our own memory. */
static long
p_process_vm_readv (int argc, char **argv)
{
  char src[8] = "sysprob", dst[8];
  struct iovec l = { dst, sizeof dst }, r = { src, sizeof src };
  return syscall (SYS_process_vm_readv, getpid (), &l, 1UL, &r, 1UL, 0UL);
}

static long
p_io_uring_setup (int argc, char **argv)
{
  struct io_uring_params params;
  memset (&params, 0, sizeof params);
  return close_result (syscall (SYS_io_uring_setup, 1U, &params));
}

static long
p_userfaultfd (int argc, char **argv)
{
  return close_result (syscall (SYS_userfaultfd, O_CLOEXEC | UFFD_USER_MODE_ONLY));
}

/* socket FAMILY TYPE [PROTOCOL] */
static long
p_socket (int argc, char **argv)
{
  if (argc < 4)
    {
      fprintf (stderr, "usage: sysprobe socket FAMILY TYPE [PROTOCOL]\n");
      exit (2);
    }
  return close_result (socket ((int) num_arg (argc, argv, 2, 0),
                               (int) num_arg (argc, argv, 3, 0) | SOCK_CLOEXEC,
                               (int) num_arg (argc, argv, 4, 0)));
}

static long
sock (int family, int type, int protocol)
{
  return close_result (socket (family, type | SOCK_CLOEXEC, protocol));
}

static long
p_socket_unix (int argc, char **argv)
{
  return sock (AF_UNIX, SOCK_STREAM, 0);
}

static long
p_socket_inet (int argc, char **argv)
{
  return sock (AF_INET, SOCK_STREAM, 0);
}

static long
p_socket_inet6 (int argc, char **argv)
{
  return sock (AF_INET6, SOCK_DGRAM, 0);
}

static long
p_socket_netlink (int argc, char **argv)
{
  return sock (AF_NETLINK, SOCK_RAW, 0 /* NETLINK_ROUTE */);
}

static long
p_socket_packet (int argc, char **argv)
{
  return sock (AF_PACKET, SOCK_RAW, 0);
}

static long
p_socket_vsock (int argc, char **argv)
{
  return sock (AF_VSOCK, SOCK_STREAM, 0);
}

static long
p_socket_alg (int argc, char **argv)
{
  return sock (AF_ALG, SOCK_SEQPACKET, 0);
}

/* personality N (default 0xffffffff, the query): the raw syscall, so that
 * all 64 bits reach the filter. */
static long
p_personality (int argc, char **argv)
{
  return syscall (SYS_personality, num_arg (argc, argv, 2, 0xffffffffUL));
}

/* TIOCSTI [FD]: push "x" into the input queue of FD (default 0). */
static long
p_tiocsti (int argc, char **argv)
{
  char c = 'x';
  return ioctl ((int) num_arg (argc, argv, 2, 0), TIOCSTI, &c);
}

/* TIOCSTI with a high bit set in the request: the kernel only looks at the
 * low 32 bits, so a filter comparing all 64 would let it through. */
static long
p_tiocsti_hi (int argc, char **argv)
{
  char c = 'x';
  unsigned long req = (1UL << 32) | TIOCSTI;
  if (sizeof (long) < 8)
    req = TIOCSTI;
  return syscall (SYS_ioctl, (int) num_arg (argc, argv, 2, 0), req, &c);
}

/* TIOCSTI on a terminal where the kernel allows it: a new pty whose slave
 * is the controlling terminal of a child in a new session.  "ok" only when
 * the injected byte was read back from the terminal's input. */
static long
p_tiocsti_pty (int argc, char **argv)
{
  char name[128];
  int m = posix_openpt (O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (m < 0)
    return -1;
  if (grantpt (m) < 0 || unlockpt (m) < 0 || ptsname_r (m, name, sizeof name) != 0)
    {
      int e = errno;
      close (m);
      errno = e;
      return -1;
    }
  int pfd[2];
  if (pipe2 (pfd, O_CLOEXEC) < 0)
    return -1;
  pid_t pid = fork ();
  if (pid < 0)
    return -1;
  if (pid == 0)
    {
      int res = 0, s = -1;
      char c = 'x', got = 0;
      struct termios t;
      if (setsid () < 0)
        res = errno;
      /* A session leader without a terminal gets the first one it opens. */
      if (res == 0 && (s = open (name, O_RDWR | O_CLOEXEC)) < 0)
        res = errno;
      if (res == 0 && ioctl (s, TIOCSCTTY, 0) < 0)
        res = errno;
      if (res == 0 && tcgetattr (s, &t) == 0)
        {
          cfmakeraw (&t);
          tcsetattr (s, TCSANOW, &t);
        }
      if (res == 0 && ioctl (s, TIOCSTI, &c) < 0)
        res = errno;
      if (res == 0)
        {
          struct pollfd p = { s, POLLIN, 0 };
          if (poll (&p, 1, 2000) != 1 || read (s, &got, 1) != 1 || got != 'x')
            res = ENODATA;
        }
      if (write (pfd[1], &res, sizeof res) != sizeof res)
        _exit (1);
      _exit (0);
    }
  close (pfd[1]);
  int res = EPROTO;
  if (read (pfd[0], &res, sizeof res) != sizeof res)
    res = EPROTO;
  close (pfd[0]);
  close (m);
  int st;
  while (waitpid (pid, &st, 0) < 0 && errno == EINTR)
    ;
  if (res != 0)
    {
      errno = res;
      return -1;
    }
  return 0;
}

/* TCGETS [FD]: an ordinary ioctl that must pass the filter (ENOTTY on a non-tty). */
static long
p_tcgets (int argc, char **argv)
{
  char buf[256];
  return ioctl ((int) num_arg (argc, argv, 2, 0), TCGETS, buf);
}

/* Setting CLOCK_MONOTONIC: EINVAL from the kernel whatever the capabilities. */
static long
p_clock_settime (int argc, char **argv)
{
  struct timespec ts = { 1, 0 };
  return syscall (SYS_clock_settime, CLOCK_MONOTONIC, &ts);
}

/* SYSLOG_ACTION_SIZE_BUFFER: reads the size of the kernel log buffer. */
static long
p_syslog (int argc, char **argv)
{
  return syscall (SYS_syslog, 10, NULL, 0);
}

static long
p_acct (int argc, char **argv)
{
  return syscall (SYS_acct, MISSING);
}

/* An empty handle: EINVAL with CAP_DAC_READ_SEARCH, EPERM without. */
static long
p_open_by_handle_at (int argc, char **argv)
{
  struct
  {
    unsigned int handle_bytes;
    int handle_type;
    unsigned char f_handle[8];
  } h = { 0, 0, { 0 } };
  return close_result (syscall (SYS_open_by_handle_at, AT_FDCWD, &h, O_RDONLY | O_CLOEXEC));
}

static long
p_name_to_handle_at (int argc, char **argv)
{
  struct
  {
    unsigned int handle_bytes;
    int handle_type;
    unsigned char f_handle[128];
  } h = { 128, 0, { 0 } };
  int mount_id;
  return syscall (SYS_name_to_handle_at, AT_FDCWD, arg_or (argc, argv, 2, "/"), &h, &mount_id, 0);
}

/* set_mempolicy(MPOL_DEFAULT): resets this process's (default) policy. */
static long
p_set_mempolicy (int argc, char **argv)
{
  return syscall (SYS_set_mempolicy, 0 /* MPOL_DEFAULT */, NULL, 0UL);
}

/* mkdir PATH: the plain mkdir syscall where the architecture has one. */
static long
p_mkdir (int argc, char **argv)
{
  const char *path = arg_or (argc, argv, 2, "/tmp/sysprobe-dir");
#ifdef SYS_mkdir
  return syscall (SYS_mkdir, path, 0755);
#else
  return syscall (SYS_mkdirat, AT_FDCWD, path, 0755);
#endif
}

/* mknod-fifo PATH / mknod-chr PATH (a copy of /dev/null's device number). */
static long
p_mknod_fifo (int argc, char **argv)
{
  return mknod (arg_or (argc, argv, 2, "/tmp/sysprobe-fifo"), S_IFIFO | 0600, 0);
}

static long
p_mknod_chr (int argc, char **argv)
{
  return mknod (arg_or (argc, argv, 2, "/tmp/sysprobe-chr"), S_IFCHR | 0600, makedev (1, 3));
}

static long
p_chroot (int argc, char **argv)
{
  return chroot ("/");
}

struct probe
{
  const char *name;
  probe_fn fn;
  const char *what;
};

static const struct probe probes[] = {
  { "getpid", p_getpid, "getpid()" },
  { "getpid-i386", p_getpid_i386, "getpid by int $0x80 (the i386 ABI), in a child" },
  { "getpid-x32", p_getpid_x32, "getpid by its x32 number (bit 30 set), in a child" },
  { "mount", p_mount, "mount a tmpfs on ARG (default /tmp), then unmount it" },
  { "umount2", p_umount2, "umount2(ARG or a missing path)" },
  { "pivot_root", p_pivot_root, "pivot_root of a missing path" },
  { "unshare-user", p_unshare_user, "unshare(CLONE_NEWUSER)" },
  { "unshare-net", p_unshare_net, "unshare(CLONE_NEWNET)" },
  { "unshare-usernet", p_unshare_usernet, "unshare(CLONE_NEWUSER|CLONE_NEWNET)" },
  { "unshare-fs", p_unshare_fs, "unshare(CLONE_FS)" },
  { "setns", p_setns, "setns(-1, CLONE_NEWNET)" },
  { "fork", p_fork, "fork and wait" },
  { "clone-newuser", p_clone_newuser, "clone(CLONE_NEWUSER|SIGCHLD) and wait" },
  { "clone3", p_clone3, "clone3 with an invalid size" },
  { "reboot", p_reboot, "reboot(CAD_OFF) with a bad magic number" },
  { "swapon", p_swapon, "swapon(ARG or a missing path)" },
  { "swapoff", p_swapoff, "swapoff(ARG or a missing path)" },
  { "kexec_load", p_kexec_load, "kexec_load with too many segments" },
  { "keyctl", p_keyctl, "keyctl(KEYCTL_GET_KEYRING_ID, session)" },
  { "add_key", p_add_key, "add_key to the process keyring" },
  { "bpf", p_bpf, "bpf(BPF_PROG_LOAD) of an empty program" },
  { "bpf-badcmd", p_bpf_badcmd, "bpf with an unknown command" },
  { "perf_event_open", p_perf_event_open, "a user-only software counter" },
  { "perf_event_open-badflags", p_perf_badflags, "perf_event_open with unknown flags" },
  { "init_module", p_init_module, "init_module of an empty image" },
  { "ptrace", p_ptrace, "ptrace(PTRACE_PEEKDATA, 1)" },
  { "process_vm_readv", p_process_vm_readv, "process_vm_readv of our own memory" },
  { "io_uring_setup", p_io_uring_setup, "io_uring_setup(1)" },
  { "userfaultfd", p_userfaultfd, "userfaultfd(UFFD_USER_MODE_ONLY)" },
  { "socket", p_socket, "socket(FAMILY, TYPE, PROTOCOL)" },
  { "socket-unix", p_socket_unix, "socket(AF_UNIX, SOCK_STREAM)" },
  { "socket-inet", p_socket_inet, "socket(AF_INET, SOCK_STREAM)" },
  { "socket-inet6", p_socket_inet6, "socket(AF_INET6, SOCK_DGRAM)" },
  { "socket-netlink", p_socket_netlink, "socket(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE)" },
  { "socket-packet", p_socket_packet, "socket(AF_PACKET, SOCK_RAW)" },
  { "socket-vsock", p_socket_vsock, "socket(AF_VSOCK, SOCK_STREAM)" },
  { "socket-alg", p_socket_alg, "socket(AF_ALG, SOCK_SEQPACKET)" },
  { "personality", p_personality, "personality(ARG, default 0xffffffff)" },
  { "tiocsti", p_tiocsti, "ioctl(ARG or 0, TIOCSTI, \"x\")" },
  { "tiocsti-hi", p_tiocsti_hi, "ioctl(ARG or 0, (1 << 32) | TIOCSTI, \"x\")" },
  { "tiocsti-pty", p_tiocsti_pty, "TIOCSTI into a new pty (its controlling terminal), read back" },
  { "tcgets", p_tcgets, "ioctl(ARG or 0, TCGETS)" },
  { "clock_settime", p_clock_settime, "clock_settime(CLOCK_MONOTONIC)" },
  { "syslog", p_syslog, "syslog(SYSLOG_ACTION_SIZE_BUFFER)" },
  { "acct", p_acct, "acct of a missing path" },
  { "open_by_handle_at", p_open_by_handle_at, "open_by_handle_at of an empty handle" },
  { "name_to_handle_at", p_name_to_handle_at, "name_to_handle_at(ARG or /)" },
  { "set_mempolicy", p_set_mempolicy, "set_mempolicy(MPOL_DEFAULT)" },
  { "mkdir", p_mkdir, "mkdir(ARG or /tmp/sysprobe-dir)" },
  { "mknod-fifo", p_mknod_fifo, "mknod(ARG, S_IFIFO)" },
  { "mknod-chr", p_mknod_chr, "mknod(ARG, S_IFCHR 1:3)" },
  { "chroot", p_chroot, "chroot(\"/\")" },
};

static void
usage (FILE *f)
{
  fprintf (f, "usage: sysprobe NAME [ARG...]   (prints \"NAME ok\" or \"NAME errno=ENAME\")\n");
  for (size_t i = 0; i < sizeof probes / sizeof probes[0]; i++)
    fprintf (f, "  %-26s %s\n", probes[i].name, probes[i].what);
}

int
main (int argc, char **argv)
{
  if (argc < 2)
    {
      usage (stderr);
      return 2;
    }
  if (strcmp (argv[1], "list") == 0 || strcmp (argv[1], "--help") == 0)
    {
      usage (stdout);
      return 0;
    }
  for (size_t i = 0; i < sizeof probes / sizeof probes[0]; i++)
    {
      if (strcmp (argv[1], probes[i].name) != 0)
        continue;
      errno = 0;
      long r = probes[i].fn (argc, argv);
      if (r >= 0)
        printf ("%s ok\n", argv[1]);
      else if (r == -2)
        printf ("%s killed=SIG%s\n", argv[1], sigabbrev_np (probe_killed_by));
      else
        {
          int e = errno;
          const char *name = strerrorname_np (e);
          if (name)
            printf ("%s errno=%s\n", argv[1], name);
          else
            printf ("%s errno=%d\n", argv[1], e);
        }
      fflush (stdout);
      return 0;
    }
  fprintf (stderr, "sysprobe: unknown probe: %s\n", argv[1]);
  usage (stderr);
  return 2;
}
