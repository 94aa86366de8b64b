/* SPDX-License-Identifier: GPL-2.0-or-later */
/* peek: the facts tests/truth/observe.sh cannot read from a file.
 *
 *   peek cgdev DIR    the BPF_CGROUP_DEVICE programs attached to the cgroup
 *                     DIR: one line "ID INSNS" each (BPF_PROG_QUERY, then
 *                     BPF_OBJ_GET_INFO_BY_FD: the kernel's translated length)
 *   peek seccomp PID  the seccomp filters of PID, newest first: one line
 *                     "INDEX INSNS" each (PTRACE_SEIZE + PTRACE_INTERRUPT,
 *                     PTRACE_SECCOMP_GET_FILTER, PTRACE_DETACH)
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
#include <sys/ptrace.h>
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

int
main (int argc, char **argv)
{
  if (argc == 3 && strcmp (argv[1], "cgdev") == 0)
    return cgdev (argv[2]);
  if (argc == 3 && strcmp (argv[1], "seccomp") == 0)
    return seccomp_filters ((pid_t) atoi (argv[2]));
  fprintf (stderr, "usage: peek cgdev CGROUPDIR | peek seccomp PID\n");
  return 2;
}
