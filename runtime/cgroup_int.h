/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: what the cgroup files share and nothing else uses (cgroup.c the
 * layer, cgroup_mount.c where cgroup v2 is, cgroup_plan.c the plan,
 * cgroup_ops.c the commands' operations).  The public interface is
 * cgroup.h. */
#ifndef KIST_CGROUP_INT_H
#define KIST_CGROUP_INT_H

#include <stdbool.h>
#include <linux/openat2.h>

#include "cgroup.h"
#include "error.h"

#define CG_FILE_MAX (1024 * 1024)
#define CG_RESOLVE (RESOLVE_BENEATH | RESOLVE_NO_XDEV | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)

/* At most this many distinct controllers in one plan (kist's own eight and
 * those of linux.resources.unified keys it does not know). */
#define CG_MAX_CONTROLLERS 16

/* ---- cgroup_mount.c */

/* A small cgroup file's text, NULL when it cannot be read. */
char *cg_read_small (int dirfd, const char *file);
/* Refuse "", ".", "..", empty components; the path has no leading '/'.
 * what names it in the error ("linux.cgroupsPath"). */
int cg_validate_rel (const char *p, const char *what, struct kist_error **err);
/* Open an existing scope given as an absolute path, checked to be on
 * cgroup2 (O_NOFOLLOW, O_DIRECTORY). */
int cg_open_scope (const char *abs_path, struct kist_error **err);
/* An existing scope's absolute path (state.json's cgroupPath) as the
 * cgroup2 mount and the clean path below it (validated). */
int cg_split_scope (const char *abs_path, char **mount, char **rel, struct kist_error **err);

/* ---- cgroup_plan.c */

/* Leading/trailing whitespace removed, inner runs collapsed to one space. */
char *cg_normalise (const char *s);
void cg_plan_freep (struct kist_cgroup_plan **p);

/* ---- cgroup.c: writing a plan into a scope (also for `kist update`). */

/* What became of each controller the plan needs while walking down. */
struct cg_ctl_state
{
  size_t n;                               /* the controllers the plan needs: */
  const char *need[CG_MAX_CONTROLLERS];   /* their names (the plan's strings: it must outlive st) */
  int enable_errno[CG_MAX_CONTROLLERS];
  char *enable_where[CG_MAX_CONTROLLERS];
  char *parent_controllers;      /* cgroup.controllers of the scope's parent */
};
void cg_ctl_state_clear (struct cg_ctl_state *st);

/* The controllers the plan's writes need, into st (cleared first): kist's
 * known ones in their enabling order, then any other controller named by a
 * linux.resources.unified key ("dmem.max": dmem), which is enabled the same
 * way where the kernel has it. */
void cg_plan_needs (const struct kist_cgroup_plan *p, struct cg_ctl_state *st);

/* Walk MOUNT/rel from the mount's fd, enabling the needed controllers in
 * every ancestor and (create) making missing directories.  Returns the scope
 * fd; *created_rel is the topmost directory made (NULL if none). */
int cg_walk_scope (const char *mount, const char *rel, bool create, struct cg_ctl_state *st,
                   char **created_rel, struct kist_error **err);

/* Write and read back every file of the plan (one cgroup.<file> entry each)
 * and the configured device rules (state_rootfd, fresh_scope:
 * kist_cgroup_dev_attach). */
int cg_apply_plan (int state_rootfd, int scope_fd, bool fresh_scope, const char *scope_abs,
                   const char *mount, const struct kist_cgroup_plan *p,
                   const struct cg_ctl_state *st, struct kist_report *r, struct kist_error **err);

/* ---- cgroup_ops.c */

/* The entry cgroup.memory.checkBeforeUpdate (requested "true" or "false",
 * applied): what later `kist update`s of the container do when their own
 * request does not say. */
void cg_record_check_before_update (struct kist_report *r, bool on);

#endif
