/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: the state directory (design.md section 6).
 *
 * Layout: ROOT/ID/ with
 *   state.json   our state (atomic replace), see struct kist_state
 *   report.json  the last report (atomic replace)
 *   start.sock   the socket the waiting container init accepts `start` on
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
};

/* Validate an id: 1..1024 chars of [A-Za-z0-9_.+-], not "." or "..". */
int kist_id_validate (const char *id, struct kist_error **err);

/* The state root: --root if given, else /run/kist for root, and for
 * another user kist_state_user_root ("/tmp").  Created (mode 0700) if
 * missing; verified to be a directory owned by us and not a symlink.
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

/* Create ROOT/ID exclusively (EEXIST -> "container ID already exists"), lock it. */
int kist_state_create (int rootfd, const char *id, int *dirfd, struct kist_error **err);
/* Open and lock ROOT/ID (ENOENT -> "container ID does not exist"). */
int kist_state_open (int rootfd, const char *id, int *dirfd, struct kist_error **err);
/* Remove ROOT/ID and everything in it (regular files only, no recursion
 * into mounts), verify it is gone. */
int kist_state_remove (int rootfd, const char *id, struct kist_error **err);

int kist_state_write (int dirfd, const struct kist_state *s, struct kist_error **err);
int kist_state_read (int dirfd, struct kist_state *s, struct kist_error **err);
void kist_state_clear (struct kist_state *s);

/* Live status: stopped if the pid is gone or was reused (start time differs),
 * a zombie, or 0; created if alive and !started; running if alive and started;
 * paused if the cgroup is frozen (later). */
enum kist_status kist_state_status (const struct kist_state *s);
const char *kist_status_name (enum kist_status st);

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

/* OCI state JSON (runtime.md "State") for `kist state`. */
char *kist_state_oci_json (const struct kist_state *s, enum kist_status st);

/* List the ids under the root (sorted).  NULL-terminated vector. */
int kist_state_list (int rootfd, char ***ids, struct kist_error **err);

#endif
