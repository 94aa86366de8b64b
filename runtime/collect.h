/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: the parent's side of the sync socket while a container process sets
 * itself up: one loop for create (the init), start (the init after `start`)
 * and exec (the helper, then the process).  What differs is in the hooks. */
#ifndef KIST_COLLECT_H
#define KIST_COLLECT_H

#include "error.h"
#include "layer.h"
#include "report.h"

struct kist_collect
{
  const char *who;         /* "the container init", "the exec helper" (messages) */
  struct kist_ctx *ctx;    /* for a seccomp listener or a pty passed up; NULL: none expected */
  /* READY: 1 when collecting ends here, 0 to go on, < 0 on failure. */
  int (*on_ready) (struct kist_collect *c, struct kist_report *r, struct kist_error **err);
  /* GO from the child (the init waits for the parent's hooks); NULL: unexpected. */
  int (*on_go) (struct kist_collect *c, struct kist_report *r, struct kist_error **err);
  /* PID (exec's helper sends the final process's pid), as ready; NULL: unexpected. */
  int (*on_pid) (struct kist_collect *c, const char *payload, struct kist_report *r,
                 struct kist_error **err);
  /* The socket ended (recv's negative errno): 0 when that is the success
   * (the close-on-exec socket closed at execve), else the error. */
  int (*on_end) (struct kist_collect *c, int ret, struct kist_report *r, struct kist_error **err);
  const char *abandon;     /* why pending entries stay unverified on a failure */
  void *arg;               /* the caller's */
};

/* Read fd's messages until a hook ends it: every LAYER entry into r (from
 * who), seccomp listeners forwarded, the pty taken, ERROR decoded.  On a
 * failure no entry stays pending in r (kist_verify_abandon). */
int kist_collect_run (int fd, struct kist_collect *c, struct kist_report *r,
                      struct kist_error **err);

#endif
