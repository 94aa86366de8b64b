/* SPDX-License-Identifier: GPL-2.0-or-later */
/* peek: the facts tests/truth/observe.sh cannot read from a file.
 *
 *   peek cgdev DIR    the BPF_CGROUP_DEVICE programs attached to the cgroup
 *                     DIR: one line "ID INSNS" each (BPF_PROG_QUERY, then
 *                     BPF_OBJ_GET_INFO_BY_FD: the kernel's translated length)
 *   peek seccomp PID  the seccomp filters of PID, newest first: one line
 *                     "INDEX INSNS" each (PTRACE_SEIZE + PTRACE_INTERRUPT,
 *                     PTRACE_SECCOMP_GET_FILTER, PTRACE_DETACH)
 *   peek landlock PID DIR
 *                     what the Landlock domain of PID lets it do, by system
 *                     calls injected into it (x86_64; PTRACE_SEIZE +
 *                     PTRACE_INTERRUPT while it waits in a system call, each
 *                     call single-stepped on that syscall instruction, then
 *                     its registers and stack restored and PTRACE_DETACH):
 *                     "abi N mkdir E bind E", N the kernel's ABI, E 0 or the
 *                     errno name of mkdirat(DIR/.kist-truth-probe) and of a
 *                     TCP bind to 127.0.0.1:0 (a directory made is removed)
 *
 * Run as root from outside the container.  Exit 0 on success, 1 on error
 * (message on stderr). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/filter.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/user.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef PTRACE_SECCOMP_GET_FILTER
#define PTRACE_SECCOMP_GET_FILTER 0x420c
#endif

static long
bpf (int cmd, union bpf_attr *a)
{
  return syscall (SYS_bpf, cmd, a, sizeof *a);
}

static int
cgdev (const char *dir)
{
  int cg = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (cg < 0)
    {
      fprintf (stderr, "peek: open %s: %s\n", dir, strerror (errno));
      return 1;
    }
  __u32 ids[64];
  union bpf_attr a;
  memset (&a, 0, sizeof a);
  a.query.target_fd = cg;
  a.query.attach_type = BPF_CGROUP_DEVICE;
  a.query.prog_ids = (__u64) (unsigned long) ids;
  a.query.prog_cnt = 64;
  if (bpf (BPF_PROG_QUERY, &a) < 0)
    {
      fprintf (stderr, "peek: BPF_PROG_QUERY %s: %s\n", dir, strerror (errno));
      return 1;
    }
  for (__u32 i = 0; i < a.query.prog_cnt; i++)
    {
      union bpf_attr g;
      memset (&g, 0, sizeof g);
      g.prog_id = ids[i];
      int fd = (int) bpf (BPF_PROG_GET_FD_BY_ID, &g);
      if (fd < 0)
        {
          fprintf (stderr, "peek: BPF_PROG_GET_FD_BY_ID %u: %s\n", ids[i], strerror (errno));
          return 1;
        }
      struct bpf_prog_info info;
      memset (&info, 0, sizeof info);
      union bpf_attr q;
      memset (&q, 0, sizeof q);
      q.info.bpf_fd = fd;
      q.info.info_len = sizeof info;
      q.info.info = (__u64) (unsigned long) &info;
      if (bpf (BPF_OBJ_GET_INFO_BY_FD, &q) < 0)
        {
          fprintf (stderr, "peek: BPF_OBJ_GET_INFO_BY_FD %u: %s\n", ids[i], strerror (errno));
          return 1;
        }
      printf ("%u %u\n", ids[i], info.xlated_prog_len / 8);
      close (fd);
    }
  return 0;
}

static int
seccomp_filters (pid_t pid)
{
  if (ptrace (PTRACE_SEIZE, pid, 0, 0) < 0)
    {
      fprintf (stderr, "peek: PTRACE_SEIZE %d: %s\n", pid, strerror (errno));
      return 1;
    }
  if (ptrace (PTRACE_INTERRUPT, pid, 0, 0) < 0)
    {
      fprintf (stderr, "peek: PTRACE_INTERRUPT %d: %s\n", pid, strerror (errno));
      return 1;
    }
  int st;
  if (waitpid (pid, &st, __WALL) < 0)
    {
      fprintf (stderr, "peek: waitpid %d: %s\n", pid, strerror (errno));
      return 1;
    }
  int rc = 0;
  for (long i = 0;; i++)
    {
      long n = ptrace (PTRACE_SECCOMP_GET_FILTER, pid, (void *) i, NULL);
      if (n < 0)
        {
          /* ENOENT: no filter at this index; EINVAL at 0: no filter mode */
          if (errno != ENOENT && !(errno == EINVAL && i == 0))
            {
              fprintf (stderr, "peek: PTRACE_SECCOMP_GET_FILTER %d %ld: %s\n", pid, i,
                       strerror (errno));
              rc = 1;
            }
          break;
        }
      printf ("%ld %ld\n", i, n);
    }
  if (ptrace (PTRACE_DETACH, pid, 0, 0) < 0)
    {
      fprintf (stderr, "peek: PTRACE_DETACH %d: %s\n", pid, strerror (errno));
      rc = 1;
    }
  return rc;
}

#ifdef __x86_64__
/* One system call in the stopped tracee: at ip (a syscall instruction),
 * with the registers of base otherwise; its result in *ret. */
static int
inject (pid_t pid, const struct user_regs_struct *base, unsigned long ip, long nr,
        const long a[6], long *ret)
{
  struct user_regs_struct r = *base;
  r.rip = ip;
  r.rax = (unsigned long) nr;
  r.orig_rax = (unsigned long) -1; /* no syscall restart for this stop */
  r.rdi = a[0], r.rsi = a[1], r.rdx = a[2], r.r10 = a[3], r.r8 = a[4], r.r9 = a[5];
  int st;
  if (ptrace (PTRACE_SETREGS, pid, 0, &r) < 0 || ptrace (PTRACE_SINGLESTEP, pid, 0, 0) < 0
      || waitpid (pid, &st, __WALL) < 0 || !WIFSTOPPED (st)
      || ptrace (PTRACE_GETREGS, pid, 0, &r) < 0)
    {
      fprintf (stderr, "peek: injecting syscall %ld into %d: %s\n", nr, pid, strerror (errno));
      return -1;
    }
  *ret = (long) r.rax;
  return 0;
}

static const char *
result (long ret)
{
  static char buf[4][32];
  static int n;
  if (ret >= 0)
    return "0";
  const char *name = strerrorname_np ((int) -ret);
  snprintf (buf[n % 4], sizeof buf[0], "%s", name ? name : "E?");
  return buf[n++ % 4];
}

static int
landlock_view (pid_t pid, const char *dir)
{
  long abi = syscall (444 /* landlock_create_ruleset */, NULL, 0, 1UL);
  if (ptrace (PTRACE_SEIZE, pid, 0, 0) < 0 || ptrace (PTRACE_INTERRUPT, pid, 0, 0) < 0)
    {
      fprintf (stderr, "peek: PTRACE_SEIZE/INTERRUPT %d: %s\n", pid, strerror (errno));
      return 1;
    }
  int st;
  struct user_regs_struct base;
  if (waitpid (pid, &st, __WALL) < 0 || ptrace (PTRACE_GETREGS, pid, 0, &base) < 0)
    {
      fprintf (stderr, "peek: waitpid/PTRACE_GETREGS %d: %s\n", pid, strerror (errno));
      return 1;
    }
  int rc = 1;
  /* The tracee waits in a system call: the instruction before rip is it. */
  unsigned long ip = base.rip - 2;
  errno = 0;
  long insn = ptrace (PTRACE_PEEKTEXT, pid, (void *) ip, 0);
  /* Scratch memory well below the stack pointer (and its red zone). */
  unsigned long mem = (base.rsp - 4096) & ~15UL;
  long saved[8];
  for (int i = 0; i < 8; i++)
    saved[i] = ptrace (PTRACE_PEEKDATA, pid, (void *) (mem + 8 * i), 0);
  if (errno != 0 || (insn & 0xffff) != 0x050f)
    {
      fprintf (stderr, "peek: %d does not wait in a system call (rip %#llx)\n", pid, base.rip);
      goto detach;
    }
  union
  {
    long w[8];
    struct
    {
      struct sockaddr_in sin;
      char path[48];
    } d;
  } u;
  memset (&u, 0, sizeof u);
  u.d.sin.sin_family = AF_INET;
  u.d.sin.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
  snprintf (u.d.path, sizeof u.d.path, "%s/.kist-truth-probe", dir);
  for (int i = 0; i < 8; i++)
    if (ptrace (PTRACE_POKEDATA, pid, (void *) (mem + 8 * i), (void *) u.w[i]) < 0)
      goto restore;
  long mk, sock, bd = -EBADF, ignored;
  long a_mk[6] = { AT_FDCWD, (long) mem + (u.d.path - (char *) &u), 0700 };
  long a_sock[6] = { AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0 };
  if (inject (pid, &base, ip, SYS_mkdirat, a_mk, &mk) < 0
      || inject (pid, &base, ip, SYS_socket, a_sock, &sock) < 0)
    goto restore;
  if (sock >= 0)
    {
      long a_bind[6] = { sock, (long) mem, sizeof u.d.sin };
      long a_close[6] = { sock };
      if (inject (pid, &base, ip, SYS_bind, a_bind, &bd) < 0
          || inject (pid, &base, ip, SYS_close, a_close, &ignored) < 0)
        goto restore;
    }
  if (mk == 0)
    {
      long a_rm[6] = { AT_FDCWD, (long) mem + (u.d.path - (char *) &u), AT_REMOVEDIR };
      inject (pid, &base, ip, SYS_unlinkat, a_rm, &ignored);
    }
  printf ("abi %ld mkdir %s bind %s\n", abi < 0 ? -1 : abi, result (mk),
          sock < 0 ? result (sock) : result (bd));
  rc = 0;
restore:
  for (int i = 0; i < 8; i++)
    ptrace (PTRACE_POKEDATA, pid, (void *) (mem + 8 * i), (void *) saved[i]);
  if (ptrace (PTRACE_SETREGS, pid, 0, &base) < 0)
    rc = 1;
detach:
  if (ptrace (PTRACE_DETACH, pid, 0, 0) < 0)
    {
      fprintf (stderr, "peek: PTRACE_DETACH %d: %s\n", pid, strerror (errno));
      rc = 1;
    }
  return rc;
}
#else
static int
landlock_view (pid_t pid, const char *dir)
{
  (void) pid;
  (void) dir;
  fprintf (stderr, "peek: landlock: system call injection is x86_64 only\n");
  return 1;
}
#endif

int
main (int argc, char **argv)
{
  if (argc == 3 && strcmp (argv[1], "cgdev") == 0)
    return cgdev (argv[2]);
  if (argc == 3 && strcmp (argv[1], "seccomp") == 0)
    return seccomp_filters ((pid_t) atoi (argv[2]));
  if (argc == 4 && strcmp (argv[1], "landlock") == 0)
    return landlock_view ((pid_t) atoi (argv[2]), argv[3]);
  fprintf (stderr, "usage: peek cgdev CGROUPDIR | peek seccomp PID | peek landlock PID DIR\n");
  return 2;
}
