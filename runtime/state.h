/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: the state directory (design.md section 6).
 *
 * Layout: ROOT/ID/ with
 *   state.json   our state (atomic replace), see struct kist_state
 *   .state.json.next  the previous state.json, rewritten as the next one
 *   report.json  the last report (atomic replace)
 *   start.sock   the socket the waiting init of a `create` accepts `start` on
 *                (run and sandbox start their init over its sync socket)
 * Every operation on one id holds an flock on ROOT/ID/ (the directory fd). */
#ifndef KIST_STATE_H
#define KIST_STATE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"

#define KIST_ID_MAX 1024

enum kist_status
{
  KIST_STATUS_CREATING,
  KIST_STATUS_CREATED,
  KIST_STATUS_RUNNING,
  KIST_STATUS_STOPPED,
  KIST_STATUS_PAUSED
};

/* A device of linux.netDevices that create moved into the container's new
 * network namespace (state.json "netDevices"): delete moves it back while the
 * init is alive (net_devices.c). */
struct kist_state_netdev
{
  char *host; /* its name in the runtime's network namespace, restored at delete */
  char *name; /* its name inside */
  int ifindex; /* its ifindex inside */
  char *kind;  /* IFLA_INFO_KIND ("ifb", "veth" ...), NULL: a physical device */
};

struct kist_state
{
  char *id;
  char *bundle;            /* absolute path */
  char *rootfs;            /* absolute path of the container root */
  pid_t pid;               /* container init pid on the host, 0 before clone */
  uint64_t pid_start_time; /* /proc/PID/stat field 22, guards against pid reuse */
  bool started;            /* `start` succeeded (the exec happened) */
  char *created;           /* RFC 3339 */
  char *owner;             /* uid of the creator, as a string */
  char *cgroup_path;       /* may be NULL */
  char *cgroup_created;    /* topmost cgroup dir kist created (absolute), removed on delete; NULL if none */
  char *annotations_json;  /* the config's annotations object as JSON text, may be NULL */
  char *oci_version;
  int64_t deadline;        /* unix seconds, 0 = none (sandbox) */
  pid_t kist_pid;          /* pid of the kist process that owns the container (run/sandbox), 0 = none */
  uint64_t kist_pid_start_time; /* /proc/KIST_PID/stat field 22 (0 = unknown): tells a dead
                                 * owner from a reused pid */
  /* Crash safety (issue #8): while `create` runs, state.json is an intent
   * record with creating = true, rewritten before each resource is made (the
   * cgroup scope it is about to create, the init pid as soon as it is known).
   * A create killed midway leaves creating = true: `delete` and `kist gc`
   * then kill the recorded init (only if its start time matches) and remove
   * the recorded scope and the state dir. */
  bool creating;
  pid_t creator_pid;             /* the kist process running the create */
  uint64_t creator_start_time;   /* its /proc/PID/stat field 22 */
  struct kist_state_netdev *net_devices; /* absent in the state of an older kist: none */
  size_t n_net_devices;
};

/* Validate an id: 1..1024 chars of [A-Za-z0-9_.+-], not "." or "..". */
int kist_id_validate (const char *id, struct kist_error **err);

/* The state root: --root if given, else /run/kist for root, and for
 * another user kist_state_user_root ("/tmp").  Created (mode 0700) if
 * missing; verified to be a directory owned by us, not writable by group or
 * others and not a symlink.  The path is walked one component at a time
 * with O_NOFOLLOW ("." skipped, ".." refused), so `--root LINK/.` is refused
 * too; a symlink in a parent component is followed only when it is owned by
 * root or by us and sits in a directory others cannot write (or a sticky one),
 * e.g. /var/run -> /run.
 * Returns an O_PATH-free directory fd (O_DIRECTORY|O_CLOEXEC). */
int kist_state_root_open (const char *root, char **resolved, struct kist_error **err);

/* The default state root of a user without --root (used for euid != 0):
 * $XDG_RUNTIME_DIR/kist when XDG_RUNTIME_DIR is set (it must be an absolute
 * path to a real directory, not a symlink, owned by the euid), else
 * TMPBASE/kist-EUID, created with mode 0700 if missing, and refused unless
 * it is a real directory owned by the euid without group or other
 * permission bits (another user may have planted it).  The caller opens
 * and verifies *path again (kist_state_root_open).  TMPBASE is "/tmp";
 * tests pass their own. */
int kist_state_user_root (const char *tmpbase, char **path, struct kist_error **err);

/* Create ROOT/ID exclusively (EEXIST -> "container ID already exists"), lock it.
 * The directory appears atomically, already locked and (when initial is not
 * NULL) already holding state.json: it is made as ROOT/@creating-ID.PID.N, locked,
 * filled, and renamed into place with RENAME_NOREPLACE.  A temporary dir left by
 * a killed create holds no resource; kist_state_sweep_temp removes it. */
int kist_state_create_with (int rootfd, const char *id, const struct kist_state *initial,
                            int *dirfd, struct kist_error **err);
/* kist_state_create_with without an initial state.json. */
int kist_state_create (int rootfd, const char *id, int *dirfd, struct kist_error **err);
/* Remove the temporary dirs of interrupted creates (ROOT/@creating-*) that no
 * process holds locked; with only_id, just those of that id.  *names (NULL-terminated, may be empty) lists them; with dry_run
 * nothing is removed. */
int kist_state_sweep_temp (int rootfd, const char *only_id, bool dry_run, char ***names,
                           struct kist_error **err);
/* Open and lock ROOT/ID (ENOENT -> "container ID does not exist").  A state
 * dir that is a symlink, not owned by us or writable by others is refused
 * (never used: another user may have planted it). */
int kist_state_open (int rootfd, const char *id, int *dirfd, struct kist_error **err);
/* Remove ROOT/ID and everything in it (files, sockets, symlinks: never
 * followed; a directory in it, which kist never makes, is refused before
 * anything is removed), state.json last, and verify it is gone
 * (kist_remove_tree_at). */
int kist_state_remove (int rootfd, const char *id, struct kist_error **err);

int kist_state_write (int dirfd, const struct kist_state *s, struct kist_error **err);
int kist_state_read (int dirfd, struct kist_state *s, struct kist_error **err);
void kist_state_clear (struct kist_state *s);

/* Live status: creating while s->creating and its creator is alive (stopped
 * once the creator is gone: an interrupted create); else stopped if the pid is gone or was reused (start time differs),
 * a zombie, or 0; created if alive and !started; running if alive and started;
 * paused if the cgroup is frozen (later). */
enum kist_status kist_state_status (const struct kist_state *s);
const char *kist_status_name (enum kist_status st);

/* Is the recorded init (s->pid) alive: it exists, is no zombie and its start
 * time matches s->pid_start_time (an intent record without a start time
 * never matches)? */
bool kist_state_init_alive (const struct kist_state *s);

/* An interrupted create: s->creating and its creator process is gone. */
bool kist_state_create_abandoned (const struct kist_state *s);

/* /proc/PID/stat start time (field 22), 0 if unavailable. */
uint64_t kist_pid_start_time (pid_t pid);

/* Is the kist process that owns the container (s->kist_pid) still alive?
 * False when s->kist_pid is 0, the pid is gone or a zombie, or its start
 * time differs from s->kist_pid_start_time (when that is known). */
bool kist_state_owner_alive (const struct kist_state *s);

/* Read ROOT/ID/state.json without taking the lock (a listing, `kist gc`
 * deciding what to remove).  ENOENT in *err when the state dir or its
 * state.json (a container being created) is missing. */
int kist_state_peek (int rootfd, const char *id, struct kist_state *s, struct kist_error **err);

/* Is ROOT/ID locked by another process right now (a command in progress)?
 * 1 yes, 0 no, negative with *err on error. */
int kist_state_busy (int rootfd, const char *id, struct kist_error **err);

/* For the intent record of create, before the cgroup scope is made: the
 * absolute scope path that kist_cgroup_apply will create for this
 * cgroupsPath (NULL: kist default kist/ID) and the topmost missing component
 * (what kist_cgroup_remove must remove up to).  Both NULL when the scope
 * exists already (kist_cgroup_apply verifies it is empty; it is recorded
 * after that) or when no scope can be resolved (no cgroup2, a bad path:
 * kist_cgroup_apply reports it). */
void kist_state_cgroup_intent (const char *cgroups_path, const char *id, char **scope_abs,
                               char **top_abs);

/* OCI state JSON (runtime.md "State") for `kist state`. */
char *kist_state_oci_json (const struct kist_state *s, enum kist_status st);

/* List the ids under the root (sorted).  NULL-terminated vector. */
int kist_state_list (int rootfd, char ***ids, struct kist_error **err);

#endif
