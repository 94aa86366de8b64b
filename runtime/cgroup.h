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
 * "slice:prefix:name" systemd form is refused until a systemd driver exists. */
#ifndef KIST_CGROUP_H
#define KIST_CGROUP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <yajl/yajl_tree.h>

#include "layer.h"

struct kist_cgroup
{
  char *mount;        /* the cgroup2 mount point, e.g. /sys/fs/cgroup/unified */
  char *path;         /* the scope relative to the mount, no leading '/': "kist/c1" */
  int dirfd;          /* O_DIRECTORY|O_PATH-free dir fd of the scope (CLONE_INTO_CGROUP), -1 if none */
  char *created_from; /* the topmost directory kist created (removed on delete), relative, or NULL */
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
 * requested = cgroupsPath or "kist/<id>", detail = the path and how the init
 * joins it) and one "cgroup.<file>" entry per resource written (memory.max,
 * memory.low, memory.swap.max, memory.oom.group, cpu.weight, cpu.max,
 * cpu.max.burst, cpuset.cpus, cpuset.mems, cpu.idle, pids.max, io.weight,
 * io.max, hugetlb.<size>.max, unified keys, devices), each read back.  A
 * missing controller makes that entry not applied with the reason.  On
 * success *out holds the scope (dirfd for clone3 CLONE_INTO_CGROUP).  With
 * no resources and no cgroupsPath it still creates kist/<id> (freeze and kill
 * need no controller); if the cgroup2 hierarchy is not writable (rootless
 * without delegation) that is recorded as not applied. */
int kist_cgroup_apply (struct kist_ctx *ctx, struct kist_report *r, struct kist_cgroup **out,
                       struct kist_error **err);

/* PARENT, after clone, only when clone3 with CLONE_INTO_CGROUP was not
 * possible: move pid into the scope via cgroup.procs and verify it.  The
 * "cgroup" entry's detail says which way the init joined. */
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
int kist_cgroup_update (const char *abs_path, yajl_val resources, struct kist_report *r,
                        struct kist_error **err);
/* `kist events --stats`: runc's stats JSON object (memory, pids, cpu, ...). */
char *kist_cgroup_stats_json (const char *abs_path, struct kist_error **err);
/* memory.events oom_kill count (for `kist events` OOM notifications), -1 if unknown. */
int64_t kist_cgroup_oom_kills (const char *abs_path);

/* ---- additions (cgroup helper) ---- */

/* The cgroup of the calling process relative to the cgroup2 root, from the
 * "0::/path" line of /proc/self/cgroup, without the leading '/' ("" for the
 * root). */
int kist_cgroup_own_path (char **path, struct kist_error **err);

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

struct kist_cgroup_dev_rule
{
  bool allow;
  char type;           /* 'a', 'c' or 'b' */
  int64_t major, minor;  /* -1: any */
  unsigned access;     /* BPF_DEVCG_ACC_MKNOD | _READ | _WRITE */
};

struct kist_cgroup_plan
{
  struct kist_cgroup_write *w;
  size_t n;
  bool has_devices;    /* linux.resources.devices present */
  struct kist_cgroup_dev_rule *dev;
  size_t n_dev;
};

/* Parse + validate linux.resources (NULL: nothing).  Errors name the config
 * path ("linux.resources.memory.swap: ..."). */
int kist_cgroup_plan_build (yajl_val resources, struct kist_cgroup_plan **out,
                            struct kist_error **err);
void kist_cgroup_plan_free (struct kist_cgroup_plan *p);

/* cgroup_devices.c: the device allowlist as a BPF_PROG_TYPE_CGROUP_DEVICE
 * program.  Rules are OCI linux.resources.devices entries; default deny, the
 * last matching rule wins. */
struct bpf_insn;
int kist_cgroup_dev_rules_parse (yajl_val devices, struct kist_cgroup_dev_rule **rules,
                                 size_t *n, struct kist_error **err);
int kist_cgroup_dev_program (const struct kist_cgroup_dev_rule *rules, size_t n,
                             struct bpf_insn **insns, size_t *n_insns, struct kist_error **err);
/* Load the program and attach it to the scope (BPF_F_ALLOW_MULTI), verify
 * with BPF_PROG_QUERY that it is attached, then detach the programs that
 * were attached before (an update replaces the allowlist).  *detail says
 * what was verified (newly allocated). */
int kist_cgroup_dev_attach (int scope_fd, const struct bpf_insn *insns, size_t n, char **detail,
                            struct kist_error **err);

#endif
