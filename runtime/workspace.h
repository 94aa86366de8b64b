/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: `kist sandbox --workspace DIR` (issue 5): the host directory DIR is
 * the lower layer of an overlay mounted at the sandbox's workdir; the upper
 * layer lives in the sandbox directory on the state root's filesystem:
 *
 *   ROOT/~sandbox/ID/upper      the upper dir (mode of DIR; owner of DIR as root)
 *   ROOT/~sandbox/ID/ovl-work   the overlay work dir (0700)
 *
 * After the sandbox is gone (no process, no mount namespace: the upper dir
 * is stable) the upper dir is either merged into DIR (commit) or dropped
 * (discard), and both directories are removed.
 *
 * The merge never joins path strings and never follows a symlink: every
 * directory of DIR and of the upper dir is opened from its parent's fd with
 * O_NOFOLLOW | O_DIRECTORY.  Directories are made (an existing non-directory
 * is replaced); regular files are written to a temp file in the target
 * directory and renamed over the target (mode and times copied); symlinks
 * are recreated; whiteouts (char device 0:0, or an empty file with the
 * overlay.whiteout xattr) remove the entry from DIR (recursively, without
 * following symlinks and never crossing into another filesystem); an opaque
 * directory (trusted./user.overlay.opaque = "y") empties the DIR directory
 * first; other special files (fifos, sockets, devices) are skipped and
 * counted.  Ownership is copied only when running as root. */
#ifndef KIST_WORKSPACE_H
#define KIST_WORKSPACE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "error.h"

#define KIST_WORKSPACE_UPPER "upper"
#define KIST_WORKSPACE_WORK "ovl-work"

enum kist_workspace_commit
{
  KIST_COMMIT_ON_SUCCESS,   /* default */
  KIST_COMMIT_ALWAYS,
  KIST_COMMIT_NEVER
};

/* "on-success" | "always" | "never" -> *out; -EINVAL otherwise. */
int kist_workspace_parse_commit (const char *s, enum kist_workspace_commit *out);
const char *kist_workspace_commit_name (enum kist_workspace_commit c);

/* --workspace DIR: *out = realpath (newly allocated).  DIR must exist, be a
 * directory, not be a symlink at its last component, and (as every overlay
 * option path) contain no ',', ':' or '\\'. */
int kist_workspace_resolve (const char *arg, char **out, struct kist_error **err);

/* An overlay option path must not contain ',', ':' or '\\' (what names the
 * path in the message). */
int kist_workspace_check_path (const char *path, const char *what, struct kist_error **err);

/* Create upper (the mode of ws, and its owner when root) and ovl-work (0700)
 * in the sandbox directory sbfd (sb_path names it in messages).  On failure
 * whatever was made is removed. */
int kist_workspace_prepare (int sbfd, const char *sb_path, const char *ws,
                            struct kist_error **err);

/* Should the upper dir be merged?  status: the sandbox's exit status,
 * timed_out: the --timeout expired. */
bool kist_workspace_should_commit (enum kist_workspace_commit c, int status, bool timed_out);

struct kist_workspace_stats
{
  unsigned long files;       /* regular files and symlinks written */
  unsigned long dirs;        /* directories made */
  unsigned long deletions;   /* whiteouts applied (entries removed from DIR) */
  unsigned long skipped;     /* special files, and entries on another filesystem */
  char *first_skipped;       /* the first skipped path (relative to DIR), or NULL */
};
void kist_workspace_stats_clear (struct kist_workspace_stats *s);

/* Merge sbfd/upper into the directory ws (a path: opened once, O_NOFOLLOW).
 * copy_owner: copy uid/gid (root only).  On error DIR may hold part of the
 * changes; the message names the entry. */
int kist_workspace_commit (int sbfd, const char *sb_path, const char *ws, bool copy_owner,
                           struct kist_workspace_stats *st, struct kist_error **err);

/* Remove sbfd/upper and sbfd/ovl-work (any depth, never following a
 * symlink, never crossing into another filesystem; directories owned by us
 * without search/write permission are chmod'ed first).  Missing is fine.
 * Returns 1 when something was removed, 0 when neither existed. */
int kist_workspace_remove (int sbfd, const char *sb_path, struct kist_error **err);

#endif
