/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist run [create flags] [--detach] [--keep] ID: create, start, wait, delete. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd.h"
#include "terminal.h"
#include "log.h"
#include "util.h"
#include "selfexe.h"

/* The report as it is right before the exec, where --report and
 * --report-fd send it (a file is rewritten with the exec afterwards). */
struct run_report
{
  const struct kist_create_opts *o;
  bool written;
};

static void
report_ready (const struct kist_report *r, void *arg)
{
  struct run_report *rr = arg;
  _cleanup_error_ struct kist_error *e = NULL;
  if (rr->written)
    return;
  rr->written = true;
  if (kist_create_write_report (rr->o, r, &e) < 0)
    kist_log_warn ("%s", e->msg);
}

int
kist_cmd_run (const struct kist_globals *g, int argc, char **argv, struct kist_error **err)
{
  struct kist_create_opts o = { .operation = "run", .report_at_start = true };
  bool detach = false, keep = false;
  _cleanup_free_ char *policy = NULL;
  if (kist_parse_create_flags (g, argc, argv, &o, true, &detach, &keep, &policy, err) < 0)
    return KIST_EXIT_USAGE;

  _cleanup_report_ struct kist_report *r = NULL;
  pid_t pid = 0;
  int pty = -1;
  _cleanup_created_ struct kist_created *created = NULL;
  o.created = &created; /* run starts what it created: no start.sock */
  if (!detach)
    o.pty_master = &pty; /* a terminal without --console-socket: relayed below */
  if (kist_create (g, &o, &pid, &r, err) < 0)
    return kist_error_exit_status (*err);

  const int rootfd = kist_created_rootfd (created);
  if (!detach)
    kist_forward_signals (pid);
  struct run_report rr = { .o = &o };
  if (kist_container_start (rootfd, o.id, created, r, report_ready, &rr, err) < 0)
    {
      int status = kist_error_exit_status (*err);
      if (pty >= 0)
        close (pty);
      report_ready (r, &rr);
      if (!detach)
        kist_wait_status (pid, -1, NULL);
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

  kist_self_protect_settle (); /* its grace period while the container runs */
  if (pty >= 0 && kist_terminal_relay (pty, pid, err) < 0)
    kist_log_warn ("%s", (*err)->msg), kist_error_freep (err);
  int status = kist_wait_status (pid, -1, err);
  if (status < 0)
    return KIST_EXIT_FAILURE;
  if (!keep && kist_container_delete (rootfd, o.id, true, err) < 0)
    return KIST_EXIT_FAILURE;
  return status;
}
