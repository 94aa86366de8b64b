/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: the init of a sandbox (entry "init").  Without one, the command is
 * PID 1 of its pid namespace, and the kernel drops every signal PID 1 has
 * no handler for: SIGTERM and Ctrl-C do nothing to a program that never
 * installed one, `kill -SEGV $$` is ignored, and orphans are reaped by
 * nobody.  So the container's setup process, once every layer up to the
 * filter is applied, starts the command: a clone that shares its memory
 * (CLONE_VM | CLONE_VFORK, on a stack of its own, as posix_spawn) goes on to
 * load the filter and exec the command; the setup process stays behind as
 * PID 1 (no exec of another binary, no helper process), waits until that
 * execve, then forwards every signal it gets to the command, reaps
 * whatever ends, and exits with the command's status (128+N when it died of
 * signal N), which ends the pid namespace and everything left in it.
 *
 * The init runs only this loop: it holds no fd, has the command's user,
 * capabilities and no_new_privileges (applied before the fork), and is
 * non-dumpable, so the command cannot ptrace it or open its /proc files.
 * It is not under the command's seccomp filter, which is loaded in the
 * command (a filter may deny wait4 or kill): kist sandbox always sets
 * no_new_privileges, so no filter is loaded before the command starts.
 *
 * Verified from outside (kist_init_verify): the command's parent is the
 * pid namespace's PID 1, and it is not. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "layer.h"
#include "util.h"
#include "verify.h"
#include "verify_int.h"

#define LAYER "init"

/* The Landlock fallback has no pid namespace whose end would take every
 * process with it: the init is a child subreaper instead, and kills what is
 * left itself (the kist that waits for it, too, after a timeout). */
static bool init_subreaper;
static pid_t init_kist;          /* the init's parent: kist */

int
kist_kill_children (pid_t watch, int *wstatus)
{
  char path[64];
  snprintf (path, sizeof path, "/proc/self/task/%d/children", (int) getpid ());
  for (int rounds = 0;; rounds++)
    {
      /* Every pid listed is a child not reaped yet (a zombie holds its
       * pid): only this process reaps it, so no pid here is anyone else's. */
      _cleanup_free_ char *text = NULL;
      _cleanup_error_ struct kist_error *e = NULL;
      if (kist_read_file_at (AT_FDCWD, path, 1u << 20, &text, NULL, &e) < 0)
        return -(e && e->errnum ? e->errnum : EIO);
      uint64_t pids[256];
      size_t n = vf_numbers (text, pids, KIST_ARRAY_SIZE (pids));
      if (n == 0)
        return rounds;
      for (size_t i = 0; i < n; i++)
        kill ((pid_t) pids[i], SIGKILL);
      /* At least one of them ends: reap it, then whatever else is dead. */
      for (int flags = 0;; flags = WNOHANG)
        {
          int st = 0;
          pid_t w = waitpid (-1, &st, flags);
          if (w < 0 && errno == EINTR)
            continue;
          if (w <= 0)
            break;
          if (w == watch && wstatus)
            *wstatus = st;
        }
    }
}

/* The command ended: its status, and what it used, for kist (status_fd). */
static void __attribute__ ((noreturn))
init_end (int status_fd, int st)
{
  struct rusage ru = { 0 };
  if (init_subreaper)
    kist_kill_children (0, NULL);
  if (status_fd >= 0)
    {
      getrusage (RUSAGE_CHILDREN, &ru);
      dprintf (status_fd, "wstatus=%d utime_us=%lld stime_us=%lld maxrss_kb=%ld\n", st,
               (long long) ru.ru_utime.tv_sec * 1000000 + ru.ru_utime.tv_usec,
               (long long) ru.ru_stime.tv_sec * 1000000 + ru.ru_stime.tv_usec, ru.ru_maxrss);
    }
  _exit (WIFSIGNALED (st) ? 128 + WTERMSIG (st) : WEXITSTATUS (st));
}

static void __attribute__ ((noreturn))
init_loop (pid_t child, const sigset_t *all, int status_fd)
{
  for (;;)
    {
      siginfo_t si;
      int sig = sigwaitinfo (all, &si);
      if (sig < 0)
        {
          if (errno == EINTR)
            continue;
          _exit (KIST_EXIT_FAILURE);
        }
      if (sig != SIGCHLD && init_subreaper && getppid () != init_kist)
        {
          /* kist is gone (the parent-death signal): nothing of the sandbox
           * may outlive it. */
          kist_kill_children (0, NULL);
          _exit (128 + SIGKILL);
        }
      if (sig != SIGCHLD)
        {
          kill (child, sig);
          continue;
        }
      for (;;)
        {
          int st = 0;
          pid_t w = waitpid (-1, &st, WNOHANG);
          if (w <= 0)
            break;
          if (w == child)
            init_end (status_fd, st);
        }
    }
}

/* The command of the Landlock fallback: its parent is the init (no pid
 * namespace: not PID 1); checked by the caller, as its own session. */
static int
fallback_child (struct kist_report *r, pid_t init_pid)
{
  kist_report_applied (r, LAYER, "subreaper",
                       "no pid namespace (the Landlock fallback): kist's init (pid %d) is a "
                       "child subreaper (PR_GET_CHILD_SUBREAPER reads back 1) in a process "
                       "group of its own and the command "
                       "its child (pid %d, leader of its own session): every signal but "
                       "SIGCHLD forwarded to it, orphans reaped, its status passed on; when "
                       "the command ends, on --timeout and when kist dies, every process left "
                       "under the init is killed (SIGKILL, until none is left); getppid read "
                       "back",
                       (int) init_pid, (int) getpid ());
  kist_report_expect (r, LAYER, "parent=subreaper");
  return 0;
}

/* What the command's side of the clone needs: it runs on a stack of its
 * own, in the init's memory (CLONE_VM), while the init waits (CLONE_VFORK)
 * until it has exec'd or exited. */
struct command_start
{
  struct kist_report *r;
  struct kist_error **err;
  int (*rest) (void *);
  void *rest_arg;
  const sigset_t *old;
  pid_t init_pid;
  int failed; /* set by the command before it exits without its execve */
};

/* The command: its own session (the init leads the one the session entry
 * describes), the signal mask it had, then the rest of the start (which
 * ends in the execve).  A failure is left in *cs->err (the init's memory)
 * for the init to send: the command only exits. */
static int
command_main (void *arg)
{
  struct command_start *cs = arg;
  struct kist_report *r = cs->r;
  struct kist_error **err = cs->err;
  const char *req = init_subreaper ? "subreaper" : "pid 1";
  pid_t ppid = getppid ();
  if (sigprocmask (SIG_SETMASK, cs->old, NULL) < 0)
    kist_report_failed (r, LAYER, "pid 1", errno, err, "sigprocmask: %s", strerror (errno));
  else if (ppid != (init_subreaper ? cs->init_pid : 1))
    kist_report_failed (r, LAYER, req, EPROTO, err, "the command's parent is pid %d, not %s",
                        (int) ppid,
                        init_subreaper ? "kist's init"
                                       : "PID 1 of the pid namespace (does the config "
                                         "have a new pid namespace?)");
  else if (setsid () < 0 || getsid (0) != getpid ())
    kist_report_failed (r, LAYER, req, errno ? errno : EPROTO, err,
                        "setsid in the command: %s", strerror (errno));
  else
    {
      if (init_subreaper)
        fallback_child (r, cs->init_pid);
      else
        {
          kist_report_applied (r, LAYER, "pid 1",
                               "kist's init is PID 1 of the pid namespace and the command its "
                               "child (pid %d there, leader of its own session): every signal "
                               "but SIGCHLD forwarded to it, orphans reaped, its status passed "
                               "on (128+N when it died of signal N); getppid read back",
                               (int) getpid ());
          kist_report_expect (r, LAYER, "parent=nsinit");
        }
      cs->rest (cs->rest_arg); /* returns only when it did not exec */
    }
  cs->failed = 1;
  _exit (KIST_EXIT_FAILURE);
}

/* The command's stack while it shares the init's memory: its own mapping
 * with a guard page below, so an overflow faults instead of writing over
 * the init's. */
#define COMMAND_STACK (256u << 10)
#define STACK_GUARD 4096u

int
kist_init_fork (struct kist_ctx *ctx, struct kist_report *r, int (*rest) (void *), void *rest_arg,
                struct kist_error **err)
{
  if (!ctx->with_init)
    {
      kist_report_skip (r, LAYER, "not requested: the process itself is the container's init "
                                  "(or an exec'd process); kist sandbox and --init run kist's init");
      return 0;
    }
  /* Every disposition back to the default first: a signal the caller of
   * kist ignored (a shell's background job ignores SIGINT and SIGQUIT)
   * would be discarded even while blocked, and the command would inherit
   * SIG_IGN through its execve.  Only those not at the default already
   * (the parent read them before the clone).  Then blocked before the
   * fork: a signal that comes before the loop waits is pending, not lost.
   * (No handler is left, either: nothing runs a handler in the memory the
   * command shares until its execve.) */
  for (int s = 1; s < NSIG; s++)
    if (s != SIGKILL && s != SIGSTOP && (s > 64 || (ctx->sig_not_default >> (s - 1)) & 1))
      signal (s, SIG_DFL);
  /* Without a pid namespace (the Landlock fallback), orphans come to the
   * init, not to some host process: a child subreaper. */
  init_subreaper = ctx->fallback != NULL;
  init_kist = getppid ();
  int subreaper = 0;
  if (init_subreaper
      && (prctl (PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0
          || prctl (PR_GET_CHILD_SUBREAPER, &subreaper, 0, 0, 0) < 0 || subreaper != 1))
    return kist_report_failed (r, LAYER, "subreaper", errno ? errno : EPROTO, err,
                               "prctl(PR_SET_CHILD_SUBREAPER): %s", strerror (errno));
  /* Its own process group (it leads its session already: the session
   * entry): a SIGKILL to kist's group (timeout -s KILL) must leave the init
   * alive to kill what is left once kist is gone. */
  if (init_subreaper && getpgrp () != getpid ()
      && (setpgid (0, 0) < 0 || getpgrp () != getpid ()))
    return kist_report_failed (r, LAYER, "subreaper", errno ? errno : EPROTO, err,
                               "setpgid (0, 0): %s", strerror (errno));
  char *stack = mmap (NULL, COMMAND_STACK, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
  if (stack == MAP_FAILED)
    return kist_report_failed (r, LAYER, "pid 1", errno, err,
                               "mmap the command's stack (%u KiB): %s", COMMAND_STACK >> 10,
                               strerror (errno));
  if (mprotect (stack, STACK_GUARD, PROT_NONE) < 0)
    {
      int e = errno;
      munmap (stack, COMMAND_STACK);
      return kist_report_failed (r, LAYER, "pid 1", e, err, "mprotect the command's stack guard: %s",
                                 strerror (e));
    }
  sigset_t all, old;
  sigfillset (&all);
  if (sigprocmask (SIG_BLOCK, &all, &old) < 0)
    {
      int e = errno;
      munmap (stack, COMMAND_STACK);
      return kist_report_failed (r, LAYER, "pid 1", e, err, "sigprocmask: %s", strerror (e));
    }
  /* Not a fork: the command shares the init's memory until its execve
   * (the init is stopped until then), as posix_spawn does.  A fork copied
   * kist's page tables a third time, for a process that only sets up the
   * last layers and execs, and its execve tore the copy down again. */
  struct command_start cs = { .r = r, .err = err, .rest = rest,
                              .rest_arg = rest_arg, .old = &old, .init_pid = getpid () };
  pid_t child = clone (command_main, stack + COMMAND_STACK, CLONE_VM | CLONE_VFORK | SIGCHLD, &cs);
  int e = errno;
  munmap (stack, COMMAND_STACK);
  if (child < 0)
    {
      sigprocmask (SIG_SETMASK, &old, NULL);
      return kist_report_failed (r, LAYER, "pid 1", e, err,
                                 "start the command from kist's init (clone): %s", strerror (e));
    }
  if (__atomic_load_n (&cs.failed, __ATOMIC_ACQUIRE))
    {
      /* It exited before its execve, its error in *err: this process (the
       * container's PID 1) sends it, as the command would have. */
      while (waitpid (child, NULL, 0) < 0 && errno == EINTR)
        ;
      sigprocmask (SIG_SETMASK, &old, NULL);
      if (*err == NULL)
        kist_error_make (err, EPROTO, "the command (pid %d) exited before its execve",
                         (int) child);
      return -1;
    }

  /* The init: nothing of kist's stays open (the sync and start sockets
   * must close with the command's execve alone), and it dies with the
   * kist that waits for it, as the command would have. */
  int sfd = ctx->init_status_fd;
  if (sfd < 0)
    syscall (SYS_close_range, 0U, ~0U, 0U);
  else
    {
      if (sfd > 0)
        syscall (SYS_close_range, 0U, (unsigned) sfd - 1, 0U);
      syscall (SYS_close_range, (unsigned) sfd + 1, ~0U, 0U);
    }
  /* A subreaper must outlive kist long enough to kill what is left:
   * a signal it can catch (and tell from one kist passed on: then
   * its parent is still kist). */
  if (ctx->die_with_parent
      && (prctl (PR_SET_PDEATHSIG, init_subreaper ? SIGTERM : SIGKILL) < 0
          || (init_subreaper && getppid () != init_kist)))
    _exit (KIST_EXIT_FAILURE);
  init_loop (child, &all, sfd);
}

pid_t
kist_init_command_pid (pid_t init, const struct kist_report *r, struct kist_error **err)
{
  const struct kist_layer *l = r ? kist_report_find (r, LAYER) : NULL;
  if (l == NULL || l->expect == NULL)
    return init;
  char path[64];
  snprintf (path, sizeof path, "/proc/%d/task/%d/children", (int) init, (int) init);
  _cleanup_free_ char *text = NULL;
  if (kist_read_file_at (AT_FDCWD, path, 1 << 16, &text, NULL, err) < 0)
    return kist_error_wrap (err, "find the command under kist's init (pid %d)", (int) init);
  uint64_t pids[2] = { 0 };
  size_t n = vf_numbers (text, pids, 2);
  if (n != 1)
    return kist_error_make (err, EPROTO,
                            "kist's init (pid %d) has %zu children at READY, expected the "
                            "command alone (%s)",
                            (int) init, n, path);
  return (pid_t) pids[0];
}

void
kist_init_status_read (int fd, struct kist_init_status *s)
{
  *s = (struct kist_init_status){ 0 };
  char buf[256];
  ssize_t n = fd >= 0 ? read (fd, buf, sizeof buf - 1) : -1;
  if (n <= 0)
    return;
  buf[n] = '\0';
  s->known = sscanf (buf, "wstatus=%d utime_us=%lld stime_us=%lld maxrss_kb=%ld", &s->wstatus,
                     &s->utime_us, &s->stime_us, &s->maxrss_kb)
             == 4;
}

/* Of the command (ctx->pid): its parent, read from outside, is PID 1 of the
 * pid namespace; the command is not, and leads its own session. */
/* The fallback's: the command's parent is kist's init, whose parent is the
 * kist verifying it (this process); the command leads its own session. */
static char *
subreaper_check (struct kist_ctx *ctx, char **note)
{
  char *why = NULL;
  _cleanup_free_ char *ppid = vf_status_field (ctx, "PPid", &why);
  if (ppid == NULL)
    return why;
  char path[64];
  snprintf (path, sizeof path, "/proc/%d/stat", (int) ctx->pid);
  _cleanup_free_ char *stat = NULL;
  _cleanup_error_ struct kist_error *e = NULL;
  if (kist_read_file_at (AT_FDCWD, path, 1 << 16, &stat, NULL, &e) < 0)
    return xasprintf ("from outside, %s: %s", path, e->msg);
  /* pid (comm) state ppid pgrp session ...: after the last ')'. */
  const char *rp = strrchr (stat, ')');
  int st_ppid = 0, pgrp = 0, session = 0;
  char state = 0;
  if (rp == NULL || sscanf (rp + 1, " %c %d %d %d", &state, &st_ppid, &pgrp, &session) != 4
      || session != (int) ctx->pid)
    return xasprintf ("from outside, %s: the command (pid %d) does not lead its own session",
                      path, (int) ctx->pid);
  snprintf (path, sizeof path, "/proc/%s/status", ppid);
  _cleanup_free_ char *text = NULL;
  if (kist_read_file_at (AT_FDCWD, path, 1 << 16, &text, NULL, &e) < 0)
    return xasprintf ("from outside, %s (the command's parent): %s", path, e->msg);
  const char *line = strstr (text, "\nPPid:");
  if (line == NULL || atoi (line + 6) != (int) getpid ())
    return xasprintf ("from outside, the command's parent (pid %s) is not kist's init, the "
                      "child of this kist (pid %d): %s",
                      ppid, (int) getpid (), path);
  *note = xasprintf ("verified from outside: the command (pid %d) leads its session and is the "
                     "child of kist's init (pid %s), the child of this kist",
                     (int) ctx->pid, ppid);
  return NULL;
}

static char *
init_check (struct kist_ctx *ctx, const struct kist_layer *l, char **note)
{
  if (l && l->expect && strcmp (l->expect, "parent=subreaper") == 0)
    return subreaper_check (ctx, note);
  char *why = NULL;
  _cleanup_free_ char *ppid = vf_status_field (ctx, "PPid", &why);
  if (ppid == NULL)
    return why;
  _cleanup_free_ char *nspid = vf_status_field (ctx, "NSpid", &why);
  if (nspid == NULL)
    return why;
  _cleanup_free_ char *nssid = vf_status_field (ctx, "NSsid", &why);
  if (nssid == NULL)
    return why;
  uint64_t own[8] = { 0 }, sid[8] = { 0 };
  size_t n = vf_numbers (nspid, own, 8), ns = vf_numbers (nssid, sid, 8);
  if (n < 2 || own[n - 1] == 1)
    return xasprintf ("from outside, /proc/%d/status says NSpid: %s: the command is PID 1 of "
                      "its namespace (or shares kist's)",
                      (int) ctx->pid, nspid);
  if (ns != n || sid[ns - 1] != own[n - 1])
    return xasprintf ("from outside, /proc/%d/status says NSsid: %s, NSpid: %s: the command "
                      "does not lead its own session",
                      (int) ctx->pid, nssid, nspid);
  char path[64];
  snprintf (path, sizeof path, "/proc/%s/status", ppid);
  _cleanup_free_ char *text = NULL;
  _cleanup_error_ struct kist_error *e = NULL;
  if (kist_read_file_at (AT_FDCWD, path, 1 << 16, &text, NULL, &e) < 0)
    return xasprintf ("from outside, %s (the command's parent): %s", path, e->msg);
  char *line = strstr (text, "\nNSpid:");
  if (line && strchr (line + 1, '\n'))
    *strchr (line + 1, '\n') = '\0';
  uint64_t par[8] = { 0 };
  size_t np = line ? vf_numbers (line + 7, par, 8) : 0;
  if (np != n || par[np - 1] != 1)
    return xasprintf ("from outside, the command's parent (pid %s) is not PID 1 of its pid "
                      "namespace (%s)",
                      ppid, path);
  *note = xasprintf ("verified from outside: the command (pid %d, %" PRIu64
                     " in its namespace) is the child of kist's init (pid %s, PID 1 there)",
                     (int) ctx->pid, own[n - 1], ppid);
  return NULL;
}

VERIFIER (kist_init_verify, init_check, LAYER)
