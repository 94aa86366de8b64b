/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist run [create flags] [--detach] [--keep] ID: create, start, wait, delete. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>

#include "cmd.h"
#include "log.h"
#include "util.h"

static volatile sig_atomic_t forward_pid;

static void
forward_signal (int sig)
{
  if (forward_pid > 0)
    kill ((pid_t) forward_pid, sig);
}

static void
forward_signals (pid_t pid)
{
  static const int sigs[] = { SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGWINCH, SIGCONT };
  struct sigaction sa = { .sa_handler = forward_signal, .sa_flags = SA_RESTART };
  sigemptyset (&sa.sa_mask);
  forward_pid = pid;
  for (size_t i = 0; i < KIST_ARRAY_SIZE (sigs); i++)
    sigaction (sigs[i], &sa, NULL);
}

static int
wait_status (pid_t pid, struct kist_error **err)
{
  int status = 0;
  for (;;)
    {
      pid_t w = waitpid (pid, &status, 0);
      if (w == pid)
        break;
      if (w < 0 && errno != EINTR)
        return kist_error_make (err, errno, "wait for the container init (pid %d)", (int) pid);
    }
  if (WIFSIGNALED (status))
    return 128 + WTERMSIG (status);
  return WEXITSTATUS (status);
}

int
kist_cmd_run (const struct kist_globals *g, int argc, char **argv, struct kist_error **err)
{
  struct kist_create_opts o = { .operation = "run" };
  bool detach = false, keep = false;
  int first = kist_parse_create_flags (argc, argv, &o, true, &detach, &keep, err);
  if (first < 0 || kist_cmd_one_id ("run", argc, argv, first, &o.id, err) < 0)
    return KIST_EXIT_USAGE;

  _cleanup_report_ struct kist_report *r = NULL;
  pid_t pid = 0;
  if (kist_create (g, &o, &pid, &r, err) < 0)
    return kist_error_exit_status (*err);

  _cleanup_close_ int rootfd = kist_cmd_open_root (g, err);
  if (rootfd < 0)
    return KIST_EXIT_FAILURE;
  if (!detach)
    forward_signals (pid);
  if (kist_container_start (rootfd, o.id, r, err) < 0)
    {
      int status = kist_error_exit_status (*err);
      if (!detach)
        wait_status (pid, NULL);
      _cleanup_error_ struct kist_error *derr = NULL;
      if (!keep && kist_container_delete (rootfd, o.id, true, &derr) < 0)
        kist_log_error ("%s", derr->msg);
      return status;
    }
  /* The exec is recorded now: a report file is rewritten with it (stdout and
   * --report-fd already carry the report as it was before the exec). */
  if (o.report_path && strcmp (o.report_path, "-") != 0
      && kist_report_write_path (r, o.report_path, err) < 0)
    kist_log_warn ("%s", (*err)->msg), kist_error_freep (err);
  if (detach)
    return 0;

  int status = wait_status (pid, err);
  if (status < 0)
    return KIST_EXIT_FAILURE;
  if (!keep && kist_container_delete (rootfd, o.id, true, err) < 0)
    return KIST_EXIT_FAILURE;
  return status;
}
