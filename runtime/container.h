/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: the container lifecycle and the context every layer works on. */
#ifndef KIST_CONTAINER_H
#define KIST_CONTAINER_H

#include <stdbool.h>
#include <sys/types.h>

#include "error.h"
#include "layer.h"
#include "lifecycle.h"
#include "report.h"
#include "spec.h"
#include "state.h"

/* Global options (runc-compatible, before the subcommand). */
struct kist_globals
{
  const char *root;        /* --root */
  const char *log;         /* --log */
  bool log_json;           /* --log-format json */
  bool debug;              /* --debug */
  bool systemd_cgroup;     /* --systemd-cgroup: refused until implemented */
  const char *allow_degraded; /* --allow-degraded LIST: added to every command's own policy */
  char **argv;             /* kist's whole command line, for a re-exec (selfexe.c) */
};

/* Lifecycle (container.c).  Each fills the report (r) where it makes one. */

/* run and sandbox: what kist_create hands over for the start of what it
 * created (opts.created), instead of leaving it for a later `kist start`:
 * the init's sync socket (no start.sock), the state dir with the create's
 * lock still held and the state as written, the state root, and the
 * create's memory (freed with the handle, after the wait: not on the
 * start path).  The init went on into its start right after its create's
 * READY, while kist verified and committed the create (no container code
 * runs before start's GO either way), unless the config has
 * startContainer hooks (they run only once the create is committed). */
struct kist_created;
void kist_created_free (struct kist_created *c);
static inline void
kist_created_freep (struct kist_created **c)
{
  kist_created_free (*c);
  *c = NULL;
}
#define _cleanup_created_ __attribute__ ((cleanup (kist_created_freep)))
/* The state root the create opened (owned by c). */
int kist_created_rootfd (const struct kist_created *c);
/* The cgroup scope the committed state names (absolute; NULL: none; owned by c). */
const char *kist_created_cgroup_path (const struct kist_created *c);

/* start: the init's last entries go into r (NULL: the stored report only);
 * on_ready (may be NULL) is called with them once the init is about to
 * execve (run and sandbox print --report - there, before the container's
 * own output).  created: what kist_create handed over (run and sandbox: its
 * socket and state dir are taken, closed here: the lock is released when
 * start returns), or NULL: open the container under rootfd and connect to
 * its start.sock (kist start). */
typedef void (*kist_start_ready_fn) (const struct kist_report *r, void *arg);
int kist_container_start (int rootfd, const char *id, struct kist_created *created,
                          struct kist_report *r_or_null, kist_start_ready_fn on_ready, void *arg,
                          struct kist_error **err);

/* process.c: in the child of the clone of create or exec, before anything
 * else: the parent's fds that are not for the container closed (its end of
 * the sync socket, the state dir that carries the operation's flock, the
 * state root, the host's cgroup directory); sync_child becomes ctx->sync_fd. */
void kist_child_drop_parent_fds (struct kist_ctx *ctx, int sync_parent, int state_dirfd,
                                 int rootfd, int sync_child);
/* process.c: close every fd above 2 but the --preserve-fds range and keep[]. */
int kist_close_fds_except (int preserve_fds, const int *keep, size_t n_keep,
                           struct kist_error **err);
/* process.c: the end of every container process (the init after start, an
 * exec'd process): a new session (layer "session"), every fd kist holds
 * closed but stdio, --preserve-fds and ctx->sync_fd, the seccomp filter
 * (kist_seccomp_apply_last), the entries sent over ctx->sync_fd (from
 * *sent on), READY, and execve of ctx->exec_fd.  Returns only on failure
 * (the error is not sent: the caller does). */
int kist_process_exec (struct kist_ctx *ctx, struct kist_report *r, size_t *sent,
                       struct kist_error **err);
/* unsupported.c (parent, before clone): everything requested that kist does
 * not implement (apparmor, selinux, intelRdt, ...), recorded and refused. */
int kist_unsupported_apply (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err);


/* ---- Operations used by the commands (container.c). */
struct kist_create_opts
{
  const char *id;
  const char *bundle;            /* NULL: current directory */
  const char *operation;         /* "create" or "run" */
  const char *pid_file;
  const char *console_socket;
  const char *report_path;       /* --report PATH|- */
  int report_fd;                 /* --report-fd N, -1 if none */
  const char *allow_degraded;    /* --allow-degraded csv or NULL */
  int preserve_fds;
  bool no_pivot, no_new_keyring;
  /* kist sandbox: the config built in memory (NULL: read BUNDLE/config.json),
   * and an init that dies with the kist process that made it, also after
   * start (PR_SET_PDEATHSIG, set again right before execve). */
  const char *config_json;
  size_t config_len;
  const struct kist_resources *resources; /* kist sandbox: replaces linux.resources (copied) */
  bool die_with_parent;
  bool with_init;                /* kist sandbox, --init: kist's init as PID 1 (init.c) */
  int init_status_fd;            /* with with_init: the write end of a pipe (O_CLOEXEC) for
                                    the init's last word, or -1 */
  bool exact_env;                /* kist sandbox: no HOME added to process.env */
  int *keep_ns;                  /* kist sandbox --workspace-size: receives fds of the init's
                                    mount ([0]) and user ([1]) namespaces, opened right after
                                    clone, while it still waits dumpable before its setup (an
                                    unprivileged kist cannot open them later); NULL: none */
  const struct kist_landlock_rules *landlock; /* kist sandbox: the Landlock rules (landlock.h),
                                                 NULL: not requested */
  /* kist sandbox --fallback landlock: a config without namespaces, created
   * as the caller (sandbox.h, sandbox_fallback.c); NULL: none. */
  const struct kist_sandbox_fallback *fallback;
  int64_t deadline;              /* unix seconds recorded in state.json, 0 = none */
  /* kist sandbox: the state root it opened already (kist_container_root_open)
   * and its resolved path, used through a dup of the fd; NULL: kist_create
   * opens the global --root itself. */
  const char *state_root;
  int state_root_fd;
  bool report_at_start;          /* run, sandbox: write --report/--report-fd, and store
                                    report.json, after start's entries (kist_create
                                    writes --report only on failure) */
  struct kist_created **created; /* run, sandbox: receives the handle for kist_container_start
                                    (no start.sock; an init whose kist dies before start's GO
                                    reads EOF and exits); NULL: kist create */
  int *pty_master;               /* run in the foreground: receives the pty master of
                                    process.terminal without --console-socket (-1 if
                                    none); NULL: kist create, which detaches */
};

/* Create a container and leave its init waiting for start.  The report is
 * returned in *report (also on failure, when one was started) and written to
 * --report / --report-fd / the state dir. */
int kist_create (const struct kist_globals *g, const struct kist_create_opts *o, pid_t *pid,
                 struct kist_report **report, struct kist_error **err);
/* Write the report to the places the options name (state dir copy separately). */
int kist_create_write_report (const struct kist_create_opts *o, const struct kist_report *r,
                              struct kist_error **err);
/* kill, delete, pause, ps, update, events, gc, signals and waiting:
 * lifecycle.h (lifecycle.c). */

/* In a process about to execve: keep fds 3..3+preserve_fds-1 open across
 * exec, mark everything above close-on-exec. */
int kist_prepare_exec_fds (int preserve_fds, struct kist_error **err);
/* The config's annotations as a JSON object (state.json; the hooks' state). */
char *kist_annotations_json (const struct kist_spec *s);
/* --pid-file: the pid in decimal, written atomically. */
int kist_write_pid_file (const char *file, pid_t pid, struct kist_error **err);

#endif
