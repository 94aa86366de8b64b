/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: cgroup v2 scopes and limits (issue 4).
 *
 * kist supports cgroup v2 only.  The cgroup2 mount is found in
 * /proc/self/mountinfo (never assumed at /sys/fs/cgroup: on hybrid hosts it is
 * e.g. /sys/fs/cgroup/unified).  A container's scope is
 *   linux.cgroupsPath absolute  -> MOUNT/<path>
 *   linux.cgroupsPath relative  -> MOUNT/<kist parent>/<path>
 *   none                        -> MOUNT/<kist parent>/kist/<id>
 * where <kist parent> is the cgroup of the kist process itself.  The
 * "slice:prefix:name" systemd form is refused until a systemd driver exists.
 *
 * The files: cgroup_mount.c (the mount, kist's own cgroup, cgroupsPath),
 * cgroup_plan.c (linux.resources -> the writes, no I/O), cgroup.c (the
 * layer: scope, apply and read-back, clone into it and join),
 * cgroup_devices.c (the device program), cgroup_ops.c (update, freeze, pids,
 * kill, remove, stats); cgroup_int.h is what they share. */
#ifndef KIST_CGROUP_H
#define KIST_CGROUP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "layer.h"
#include "resources.h"

struct kist_cgroup
{
  char *mount;        /* the cgroup2 mount point, e.g. /sys/fs/cgroup/unified */
  char *path;         /* the scope relative to the mount, no leading '/': "kist/c1" */
  int dirfd;          /* O_DIRECTORY|O_PATH-free dir fd of the scope (CLONE_INTO_CGROUP), -1 if none */
  char *created_from; /* the topmost directory kist created (removed on delete), relative, or NULL */
  bool default_devices; /* no linux.resources.devices: runc's default device rules are still to
                           be attached (kist_cgroup_default_devices) */
};

void kist_cgroup_free (struct kist_cgroup *cg);
static inline void
kist_cgroup_freep (struct kist_cgroup **cg)
{
  kist_cgroup_free (*cg);
  *cg = NULL;
}
#define _cleanup_cgroup_ __attribute__ ((cleanup (kist_cgroup_freep)))

/* The cgroup2 mount point from /proc/self/mountinfo. */
int kist_cgroup_mount (char **mount, struct kist_error **err);

/* PARENT, before clone: the layer entry point.  Records "cgroup" (the scope:
 * requested = cgroupsPath or the path kist chose, "kist/<id>"; not applied
 * until kist_cgroup_join has found the process in it, which completes the
 * detail) and one "cgroup.<file>" entry per resource written (memory.max,
 * memory.low, memory.swap.max, memory.oom.group, cpu.weight, cpu.max,
 * cpu.max.burst, cpuset.cpus, cpuset.mems, cpu.idle, pids.max, io.weight,
 * io.max, hugetlb.<size>.max, unified keys, devices), each read back.  A
 * missing controller makes that entry not applied with the reason.  On
 * success *out holds the scope (dirfd for clone3 CLONE_INTO_CGROUP).  With
 * no resources and no cgroupsPath it still creates kist/<id> (freeze and kill
 * need no controller), a requested entry like any other; if the cgroup2
 * hierarchy is not writable (rootless without delegation) the entry is not
 * requested ("no scope: ...") and *out is NULL. */
int kist_cgroup_apply (struct kist_ctx *ctx, struct kist_report *r, struct kist_cgroup **out,
                       struct kist_error **err);

/* PARENT, after GO, while the init does its setup: without
 * linux.resources.devices, runc's default device rules attached to
 * ctx->cgroup ("cgroup.devices", read back; not requested, with the reason,
 * where kist cannot load a device program and runc ignores that too).  Those
 * rules let every mknod and every device the setup opens through, so the
 * setup is the same before and after they are attached; the configured
 * rules of linux.resources.devices are attached by kist_cgroup_apply, before
 * clone.  Nothing to do without a scope or with configured rules. */
int kist_cgroup_default_devices (struct kist_ctx *ctx, struct kist_report *r,
                                 struct kist_error **err);

/* ---- The one way into a scope, for the container's init (create) and for
 * exec's helper: kist_cgroup_clone, then kist_cgroup_join. */

/* Like fork(2) (0 in the child, -1 with errno), with the clone flags given
 * (new namespaces; SIGCHLD is added).  With cgroup_fd >= 0 (the scope's
 * directory) clone3 with CLONE_INTO_CGROUP makes the child born in the scope
 * (no later move, which can wait for an RCU grace period); where the kernel
 * refuses that (ENOSYS, E2BIG, EINVAL), or with cgroup_fd -1, a plain clone.
 * *into says whether the child was born in the scope. */
pid_t kist_cgroup_clone (unsigned long flags, int cgroup_fd, bool *into);

/* PARENT (exec): the existing scope abs_path (state.json's cgroupPath) as a
 * struct kist_cgroup (mount, path, dirfd; created_from NULL).  abs_path NULL:
 * *out NULL and 0.  When it cannot be opened the "cgroup" entry fails (0 when
 * the policy lets it degrade, with *out NULL). */
int kist_cgroup_open (const char *abs_path, struct kist_report *r, struct kist_cgroup **out,
                      struct kist_error **err);

/* PARENT, right after kist_cgroup_clone, while the child waits: with a scope
 * (cg), write pid to its cgroup.procs unless the child was born in it
 * (into), then read /proc/PID/cgroup from outside and check that its "0::"
 * line is the scope.  Then the "cgroup" entry: the one kist_cgroup_apply
 * recorded (create) becomes applied only now, its detail completed with how
 * the process joined ("born in it (clone3 CLONE_INTO_CGROUP)" or "moved in
 * via cgroup.procs (no clone3)") and the line read back; without one (exec)
 * it is recorded here.  Without a scope the detail says the process stays in
 * kist's own cgroup.  The v1 lines of /proc/PID/cgroup (a hybrid host), if
 * any, become the entry "cgroup.v1" (not requested: kist never manages v1;
 * the detail lists them).  Call it after every clone, scope or not. */
int kist_cgroup_join (struct kist_report *r, const struct kist_cgroup *cg, pid_t pid, bool into,
                      struct kist_error **err);

/* Move pid into the scope via cgroup.procs and verify it in /proc/PID/cgroup
 * (no report entry; kist_cgroup_join is what create and exec use). */
int kist_cgroup_enter (const struct kist_cgroup *cg, pid_t pid, struct kist_error **err);

/* Operations on an existing scope (state.json keeps mount + path as one
 * absolute path in cgroup_path). */
int kist_cgroup_freeze (const char *abs_path, bool freeze, struct kist_error **err); /* waits for cgroup.events frozen 0/1 */
int kist_cgroup_is_frozen (const char *abs_path);  /* 1, 0, or -1 when unknown */
int kist_cgroup_kill_all (const char *abs_path, struct kist_error **err);  /* cgroup.kill, else SIGKILL each pid */
int kist_cgroup_pids (const char *abs_path, pid_t **pids, size_t *n, struct kist_error **err);
/* Verify empty (waiting briefly for exiting tasks), rmdir, verify gone; then
 * rmdir the parents kist created (up to created_from) if empty. */
int kist_cgroup_remove (const char *abs_path, const char *created_from_abs, struct kist_error **err);
/* `kist update`: apply a LinuxResources object to a live scope, with the same
 * validation and read-back; entries go to r. */
int kist_cgroup_update (const char *abs_path, const struct kist_resources *resources,
                        struct kist_report *r, struct kist_error **err);
/* `kist events --stats`: runc's stats JSON object (memory, pids, cpu, ...). */
char *kist_cgroup_stats_json (const char *abs_path, struct kist_error **err);
/* memory.events oom_kill count (for `kist events` OOM notifications), -1 if unknown. */
int64_t kist_cgroup_oom_kills (const char *abs_path);
/* A scope file's value: KEY's in a flat-keyed file (key NULL: a file
 * holding one number, such as memory.peak); -1 if unknown. */
int64_t kist_cgroup_value (const char *abs_path, const char *file, const char *key);

/* ---- additions (cgroup helper) ---- */

/* CONTAINER INIT (namespace.cgroup, in a new cgroup namespace): where the
 * namespace is rooted, from the root field of the cgroup2 mount in
 * /proc/self/mountinfo as the init sees it ("/": at the cgroup2 root, so the
 * container sees the whole hierarchy; "/../..": two levels below).  A
 * phrase for the entry's detail, or NULL when mountinfo does not tell. */
char *kist_cgroup_ns_root_note (void);

/* The cgroup of the calling process relative to the cgroup2 root, from the
 * "0::/path" line of /proc/self/cgroup, without the leading '/' ("" for the
 * root). */
int kist_cgroup_own_path (char **path, struct kist_error **err);
/* Read kist's own cgroup again at the next kist_cgroup_own_path. */
void kist_cgroup_own_path_forget (void);

/* The scope relative to the cgroup2 root (no leading '/'): cgroups_path
 * absolute -> itself; relative -> OWN/cgroups_path; NULL -> OWN/kist/ID.
 * Refuses "..", ".", empty components and the systemd "slice:prefix:name"
 * form. */
int kist_cgroup_resolve_path (const char *cgroups_path, const char *own, const char *id,
                              char **rel, struct kist_error **err);

/* Conversions (OCI v1 values -> cgroup v2 files). */
uint64_t kist_cgroup_shares_to_weight (uint64_t shares);      /* 0 -> 0 (unset) */
uint64_t kist_cgroup_blkio_to_io_weight (uint64_t weight);    /* 10..1000 -> 1..10000, 0 -> 0 */
/* OCI memory.swap (memory+swap) -> memory.swap.max: *out = swap - limit,
 * -1 for "max", 0 with *set = false when swap is unset.  EINVAL when
 * swap < limit or swap is set without a limit. */
int kist_cgroup_swap_max (int64_t limit, int64_t swap, int64_t *out, bool *set,
                          struct kist_error **err);

/* Does the value read back (got) agree with what was written (want)?
 * Whitespace is normalised, "max" compares with "max", numbers may carry a
 * K/M/G/T suffix in want, and a number the kernel rounded down to a
 * multiple of unit (page size, huge page size; 0: exact) matches.  *rounded
 * is set when it matched only after rounding. */
bool kist_cgroup_value_matches (const char *want, const char *got, uint64_t unit, bool *rounded);
/* Do two cpu lists ("0-3,8") name the same set? */
bool kist_cgroup_cpulist_equal (const char *a, const char *b);

/* The writes a linux.resources object asks for (one per file). */
struct kist_cgroup_write
{
  char *file;          /* "memory.max", relative to the scope */
  char *controller;    /* "memory"; NULL for core cgroup.* files */
  char **lines;        /* NULL-terminated; each is written by one write(2) */
  char *requested;     /* for the report: the lines joined by "; " */
  char *config;        /* the config path it came from ("linux.resources.memory.limit") */
  uint64_t unit;       /* kernel rounding unit for numbers (0: exact) */
  int unsupported;     /* errno when the request cannot be met on cgroup v2 (then reason set) */
  char *reason;
};

struct kist_cgroup_plan
{
  struct kist_cgroup_write *w;
  size_t n;
  bool has_devices;    /* linux.resources.devices present */
  struct kist_cgroup_dev_rule *dev;
  size_t n_dev;
};

/* cgroup_plan.c: the writes of a parsed linux.resources (NULL: nothing; its
 * fields were checked by spec_resources.c), no file system I/O.  What needs
 * several fields is checked here; errors name the config path
 * ("linux.resources.memory.swap: ..."). */
int kist_cgroup_plan_build (const struct kist_resources *resources, struct kist_cgroup_plan **out,
                            struct kist_error **err);
void kist_cgroup_plan_free (struct kist_cgroup_plan *p);
/* The same for a whole config, before anything exists (kist_create, before
 * the state dir): 0, or the config error ("config.json:
 * linux.resources.memory.swap: ..."), the one kist_cgroup_apply would
 * give. */
int kist_cgroup_plan_check (const struct kist_spec *spec, struct kist_error **err);

/* cgroup_devices.c: the device allowlist as a BPF_PROG_TYPE_CGROUP_DEVICE
 * program.  Rules are OCI linux.resources.devices entries (resources.h);
 * default deny, the last matching rule wins. */
struct bpf_insn;
int kist_cgroup_dev_program (const struct kist_cgroup_dev_rule *rules, size_t n,
                             struct bpf_insn **insns, size_t *n_insns, struct kist_error **err);
/* Load the program (or share the live one STATE_ROOT/~device-program
 * names, if it reads back as this program; state_rootfd -1: never) and
 * attach it to the scope (BPF_F_ALLOW_MULTI), verify with BPF_PROG_QUERY
 * that it is attached, then detach the programs that were attached before
 * (an update replaces the allowlist; fresh_scope: a scope kist has just
 * made, which has none to replace).  *detail says what was verified
 * (newly allocated). */
#define KIST_DEVICE_PROGRAM_HINT "~device-program"
int kist_cgroup_dev_attach (int state_rootfd, int scope_fd, bool fresh_scope,
                            const struct bpf_insn *insns, size_t n, char **detail,
                            struct kist_error **err);

#endif
