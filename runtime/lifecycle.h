/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: the operations on an existing container (crun's libcrun shape: the
 * cmd_*.c files parse the command line, call one of these and print).
 *
 * Every operation on one container opens and locks its state dir
 * (state.h), reads state.json, asks kist_status_allows whether its status
 * allows the operation, and only then touches the container (its cgroup
 * through cgroup.h, its processes, its state dir).  The commands never see
 * the state dir or the cgroup themselves. */
#ifndef KIST_LIFECYCLE_H
#define KIST_LIFECYCLE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"
#include "resources.h"
#include "state.h"

/* ---- The state machine: which operation is allowed in which status. */

enum kist_op
{
  KIST_OP_START,        /* start: only a created container */
  KIST_OP_EXEC,         /* exec: only a running one */
  KIST_OP_SIGNAL,       /* kill ID SIG (not SIGKILL, no --all): a live init */
  KIST_OP_KILL_ALL,     /* kill --all, or SIGKILL: also a stopped container (what is left) */
  KIST_OP_DELETE,       /* delete without --force: created or stopped */
  KIST_OP_DELETE_FORCE, /* delete --force: any status */
  KIST_OP_PAUSE,        /* pause: only a running container */
  KIST_OP_RESUME,       /* resume: only a paused one */
  KIST_OP_UPDATE,       /* update: a live container (created, running, paused) */
  KIST_OP_EVENTS,       /* events: a live container */
  KIST_OP_PS,           /* ps: any status (a stopped one lists what is left in its cgroup) */
};

/* 0 if status st allows op on container id, else a negative value with
 * *err saying what the container is and what to do (the wording the
 * commands have always used).  One table in lifecycle.c decides, for every
 * command. */
int kist_status_allows (enum kist_status st, enum kist_op op, const char *id,
                        struct kist_error **err);
/* kist_status_allows for `kill [--all] ID SIG`: KIST_OP_KILL_ALL when all
 * or sig is SIGKILL, else KIST_OP_SIGNAL; the refusal names the signal. */
int kist_status_allows_signal (enum kist_status st, int sig, bool all, const char *id,
                               struct kist_error **err);

/* The live status of a container: kist_state_status, with a frozen cgroup
 * counted as paused. */
enum kist_status kist_container_status (const struct kist_state *st);

/* The prologue of every operation on container id: check id, open and lock
 * ROOT/ID into *dirfd (closed by the caller, also on failure), read its
 * state.json into *st (left cleared on failure) and its live status. */
int kist_container_open (int rootfd, const char *id, int *dirfd, struct kist_state *st,
                         enum kist_status *status, struct kist_error **err);

/* ---- Operations (each opens and locks ROOT/ID itself). */

int kist_container_kill (int rootfd, const char *id, int sig, bool all, struct kist_error **err);
int kist_container_delete (int rootfd, const char *id, bool force, struct kist_error **err);

/* pause / resume: freeze or thaw the cgroup (cgroup v2 cgroup.freeze),
 * waiting until cgroup.events says frozen 1 / 0. */
int kist_container_pause (int rootfd, const char *id, struct kist_error **err);
/* What the container's cgroup scope counted, each -1 where it has no such
 * file (no scope, or the controller is not enabled). */
struct kist_usage
{
  int64_t memory_peak;           /* memory.peak, bytes */
  int64_t pids_peak;             /* pids.peak */
  int64_t oom_kills;             /* memory.events oom_kill */
};
void kist_container_usage (int rootfd, const char *id, struct kist_usage *u);
/* The same for the scope at cgroup_path (absolute; NULL: no scope), for a
 * caller that has the container's state already. */
void kist_scope_usage (const char *cgroup_path, struct kist_usage *u);
int kist_container_resume (int rootfd, const char *id, struct kist_error **err);

/* ps: the host pids of the container's processes, sorted: its cgroup's
 * cgroup.procs, or without a cgroup the processes in the init's own pid
 * namespace (none when it is stopped).  *pids is malloc'd (may be NULL when
 * *n is 0). */
int kist_container_ps_pids (int rootfd, const char *id, pid_t **pids, size_t *n,
                            struct kist_error **err);

/* update: apply an OCI LinuxResources object to the live container's
 * cgroup (validated, written and read back by cgroup.c) under the
 * degradation policy (NULL: none); the entries applied, and the requested
 * ones the policy let degrade, replace the same-named entries of the stored
 * report.json.  Degraded entries are logged as warnings. */
int kist_container_update (int rootfd, const char *id,
                           const struct kist_resources *resources, const char *policy,
                           struct kist_error **err);

/* events: one call of fn per event, in order: type "stats" with data (runc's
 * stats JSON object) once with stats_once, else every interval_ns, and type
 * "oom" (data NULL) for every rise of memory.events oom_kill; the stream ends
 * (0) when the init exits.  The state lock is held only while the state is
 * read.  A negative return of fn ends the stream with its error. */
typedef int (*kist_event_fn) (const char *id, const char *type, const char *data, void *arg,
                              struct kist_error **err);
int kist_container_events (int rootfd, const char *id, bool stats_once, int64_t interval_ns,
                           kist_event_fn fn, void *arg, struct kist_error **err);

/* state: the OCI state JSON of ROOT/ID (runtime.md "State"), read without
 * the lock (a create in progress holds it; its intent record already
 * answers "creating"). */
int kist_container_state_json (int rootfd, const char *id, char **json, struct kist_error **err);
/* The stored report of container id (ROOT/ID/report.json), as written. */
int kist_container_report_json (int rootfd, const char *id, char **json, size_t *len,
                                struct kist_error **err);
/* The layers container id asked for and runs without (allowed to degrade),
 * from its stored report, as a JSON array of names; NULL when there are none
 * or no readable report (`kist state`'s "degraded"). */
char *kist_container_degraded_json (int rootfd, const char *id);
/* The OCI state JSON of a container read by kist_container_list (what
 * kist_container_state_json gives for one id). */
char *kist_container_oci_json (const struct kist_state *st, enum kist_status status);
/* The state root (--root, or the default): opened and checked as
 * kist_state_root_open says; *resolved is its path. */
int kist_container_root_open (const char *root, char **resolved, struct kist_error **err);

/* list: once the ids are listed, fn with st NULL (the caller's head), then
 * once per container under the root, in id order, read without the lock (a
 * container deleted meanwhile is left out). */
typedef void (*kist_list_fn) (const struct kist_state *st, enum kist_status status, void *arg);
int kist_container_list (int rootfd, kist_list_fn fn, void *arg, struct kist_error **err);

/* ---- gc: remove what is garbage under the state root (kist-gc(8)). */

enum kist_gc_kind
{
  KIST_GC_CONTAINER,   /* a state dir: a sandbox past its deadline or whose kist is gone, an
                          interrupted create, a state dir without state.json */
  KIST_GC_TEMP,        /* ROOT/@creating-*: the temporary dir of a create killed early */
  KIST_GC_SANDBOX_DIR, /* ROOT/~sandbox/NAME of a kist sandbox that left no state */
};

struct kist_gc_entry
{
  enum kist_gc_kind kind;
  const char *id;
  const char *reason;
  bool busy;            /* another kist command holds its lock: skipped */
  bool failed;
  bool killed, cgroup_removed, state_removed, scratch_removed;
  const char *kept;     /* the kept --keep work dir, or NULL */
  const char *error;    /* when failed */
  int64_t deadline;     /* from its state (0: none or unknown) */
  pid_t kist_pid;       /* its owning kist (0: none or unknown) */
};

/* Walk the root given by --root (NULL: the default), call fn for every
 * garbage entry (removed unless dry_run, or skipped when busy) in the order
 * handled: containers, temporary dirs, orphaned sandbox dirs.  Returns the
 * number of failures (>= 0), or negative with *err when
 * the root cannot be opened or listed. */
typedef void (*kist_gc_fn) (const struct kist_gc_entry *e, bool dry_run, void *arg);
int kist_gc (const char *root, bool dry_run, kist_gc_fn fn, void *arg, struct kist_error **err);

/* ---- Signals and waiting (run, exec, sandbox). */

/* Signal name or number -> number ("TERM", "SIGTERM", "15", "0": no signal,
 * the liveness probe); -1 if unknown. */
int kist_parse_signal (const char *s);

/* Forward HUP INT QUIT TERM USR1 USR2 WINCH CONT to pid (run, sandbox). */
void kist_forward_signals (pid_t pid);
/* The last of SIGHUP, SIGINT, SIGQUIT, SIGTERM that kist_forward_signals
 * passed on, 0 if none. */
int kist_forwarded_end (void);
/* Wait for our child pid: its exit status (128+N for signal N), or
 * KIST_WAIT_TIMEOUT when timeout_ms (>= 0) passed first (not reaped then),
 * or a negative value with *err. */
#define KIST_WAIT_TIMEOUT 1000
int kist_wait_status (pid_t pid, int timeout_ms, struct kist_error **err);

#endif
