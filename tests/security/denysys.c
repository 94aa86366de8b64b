/* SPDX-License-Identifier: GPL-2.0-or-later */
/* denysys NR ERRNO CMD [ARGS...]: run CMD with a seccomp filter that makes
 * syscall NR fail with ERRNO (x86_64 and the native arch only; everything
 * else allowed).  s_escape.sh uses it to make the kernel refuse a step kist
 * takes (mremap, for the rebind of its image) and to see what kist does
 * then; t_fallback to make Landlock unavailable.  As root: no no_new_privs,
 * so the command keeps what it would have. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

int
main (int argc, char **argv)
{
  if (argc < 4)
    {
      fprintf (stderr, "usage: denysys NR ERRNO CMD [ARGS...]\n");
      return 2;
    }
  unsigned nr = (unsigned) strtoul (argv[1], NULL, 0);
  unsigned e = (unsigned) strtoul (argv[2], NULL, 0);
  struct sock_filter f[] = {
    BPF_STMT (BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, arch)),
    BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 0, 3),
    BPF_STMT (BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, nr)),
    BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, nr, 0, 1),
    BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (e & SECCOMP_RET_DATA)),
    BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog prog = { .len = sizeof f / sizeof f[0], .filter = f };
  /* Unprivileged, a filter needs no_new_privs (t_fallback runs it as nobody). */
  if (geteuid () != 0 && prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
    {
      perror ("denysys: PR_SET_NO_NEW_PRIVS");
      return 1;
    }
  if (syscall (SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0)
    {
      perror ("denysys: seccomp");
      return 1;
    }
  execvp (argv[3], argv + 3);
  perror ("denysys: execvp");
  return 127;
}
