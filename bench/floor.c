/* SPDX-License-Identifier: GPL-2.0-or-later */
/* floor: the least a container runtime must do to start /bin/true in a
 * container, the baseline of bench/startup.sh:
 *   clone (new mount, pid, net, uts, ipc namespaces)
 *   -> make / recursively private -> bind the rootfs onto itself
 *   -> pivot_root into it -> detach the old root -> exec /bin/true.
 * Usage: floor ROOTFS [COMMAND [ARG...]]  (COMMAND defaults to /bin/true).
 * Exit status: the command's, 128+N if killed by signal N, 125 on setup
 * failure.  Needs root (or run it inside `unshare -Ur`). */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define STACK_SIZE (256 * 1024)

struct child_args
{
  const char *rootfs;
  char **argv;
};

static int
fail (const char *what, const char *path)
{
  fprintf (stderr, "floor: %s %s: %s\n", what, path ? path : "", strerror (errno));
  return 125;
}

static int
child_main (void *arg)
{
  struct child_args *a = arg;

  if (mount (NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
    return fail ("making / private", NULL);
  if (mount (a->rootfs, a->rootfs, NULL, MS_BIND | MS_REC, NULL) < 0)
    return fail ("bind-mounting", a->rootfs);
  if (chdir (a->rootfs) < 0)
    return fail ("chdir", a->rootfs);
  /* pivot_root(".", "."): the old root ends up stacked under the new one. */
  if (syscall (SYS_pivot_root, ".", ".") < 0)
    return fail ("pivot_root into", a->rootfs);
  if (umount2 (".", MNT_DETACH) < 0)
    return fail ("detaching the old root", NULL);
  if (chdir ("/") < 0)
    return fail ("chdir", "/");
  execv (a->argv[0], a->argv);
  int exec_errno = errno;
  fail ("exec", a->argv[0]);
  return exec_errno == ENOENT ? 127 : 126;
}

int
main (int argc, char **argv)
{
  static char *default_argv[] = { (char *) "/bin/true", NULL };
  struct child_args a;
  char *stack;
  pid_t pid;
  int status;

  if (argc < 2)
    {
      fprintf (stderr, "usage: %s ROOTFS [COMMAND [ARG...]]\n", argv[0]);
      return 125;
    }
  a.rootfs = argv[1];
  a.argv = argc > 2 ? argv + 2 : default_argv;

  stack = malloc (STACK_SIZE);
  if (stack == NULL)
    return fail ("allocating the child stack", NULL);
  pid = clone (child_main, stack + STACK_SIZE,
               CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWUTS | CLONE_NEWIPC | SIGCHLD,
               &a);
  if (pid < 0)
    return fail ("clone", NULL);
  while (waitpid (pid, &status, 0) < 0)
    if (errno != EINTR)
      return fail ("waitpid", NULL);
  free (stack);
  if (WIFSIGNALED (status))
    return 128 + WTERMSIG (status);
  return WEXITSTATUS (status);
}
