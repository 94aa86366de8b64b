/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: exec a new process inside a running container (runc exec). */
#ifndef KIST_EXEC_H
#define KIST_EXEC_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "container.h"

struct kist_exec_opts
{
  const char *id;
  const char *process_file;      /* --process FILE: an OCI process object */
  char **args;                   /* COMMAND [ARG...] (NULL-terminated) or NULL */
  bool detach;                   /* --detach */
  const char *pid_file;          /* --pid-file */
  bool tty;                      /* --tty: process.terminal true */
  const char *console_socket;    /* --console-socket: receives the pty master */
  int preserve_fds;              /* --preserve-fds N */
  const char *cwd;               /* --cwd */
  char **env;                    /* --env K=V (NULL-terminated) or NULL */
  bool has_user;                 /* --user UID[:GID] */
  uint32_t uid, gid;
  char **caps;                   /* --cap CAP (NULL-terminated) or NULL: added to every set */
  bool no_new_privs;             /* --no-new-privs */
  const char *report_path;       /* --report PATH|- */
  int report_fd;                 /* --report-fd N, -1 if none */
  const char *allow_degraded;    /* --allow-degraded csv or NULL */
  int *pty_master;               /* not detached: receives the pty master of a terminal
                                    without --console-socket (-1 if none), which the
                                    caller relays; NULL: no relay possible */
};

/* Run a process in the running container o->id: join every namespace of its
 * init and its cgroup scope, apply the process layers, exec.  Without
 * o->detach, waits and returns the process's exit status (128+N for signal
 * N); with o->detach, returns 0 once the exec succeeded.  *pid gets the host
 * pid of the process.  On failure: negative with *err (its status 126/127
 * when the exec itself failed).  The report (operation "exec") goes to
 * --report / --report-fd; the container's stored report is not changed. */
int kist_exec (const struct kist_globals *g, const struct kist_exec_opts *o, pid_t *pid,
               struct kist_error **err);

/* Apply the exec flags (args, env, cwd, user, caps, nnp) to a process object. */
int kist_exec_apply_flags (struct kist_process *p, const struct kist_exec_opts *o,
                           struct kist_error **err);

#endif
