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
 * counted.
 *
 * Ownership (root only: an unprivileged kist cannot chown): an entry that
 * replaces one in DIR keeps the owner of the entry it replaces; a new entry
 * belongs to DIR's owner.  The upper dir's own ids never reach DIR.
 *
 * Who may write (kist_workspace_prepare): as root, when DIR's owner is not
 * the sandbox user, the lower layer is an idmapped bind of DIR (made by the
 * mounts layer, mounts_idmap.c) that shows DIR's owner as the sandbox user
 * and the sandbox user as DIR's owner (every other id as itself), and the
 * upper's root dir belongs to the sandbox user: the sandbox writes
 * everything DIR's owner may write.  Unprivileged, the sandbox user is the
 * caller: DIR must be the caller's (else an error names --commit never).
 *
 * Quotas (--workspace-size, --workspace-inodes): upper and work dir are on
 * a tmpfs of that size made by the mounts layer in the sandbox's mount
 * namespace, stacked at the workdir under the overlay:
 *   bind ROOT/~sandbox/ID/ws-layers  (upper/, ovl-work/, lower/: the skeleton)
 *   tmpfs, tmpcopyup, size=, nr_inodes=  (a copy of the skeleton)
 *   [bind DIR at WORKDIR/lower, idmapped]
 *   overlay lowerdir=DIR or ROOTFS/WORKDIR/lower, upperdir=ROOTFS/WORKDIR/upper
 * kist keeps that mount namespace (an fd of /proc/INIT/ns/mnt) and, after the
 * sandbox ended, reads the tmpfs from a child that enters it and lazily
 * unmounts the overlay there (kist_workspace_fetch); nothing is ever
 * mounted on the host.  An upper that is full (statfs), a file of
 * --max-file-size bytes or more in it, or the command killed by SIGXFSZ is
 * an overflow: the workspace is not committed (kist_workspace_overflow). */
#ifndef KIST_WORKSPACE_H
#define KIST_WORKSPACE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "error.h"
#include "spec.h"

#define KIST_WORKSPACE_UPPER "upper"
#define KIST_WORKSPACE_WORK "ovl-work"
#define KIST_WORKSPACE_LAYERS "ws-layers"
#define KIST_WORKSPACE_LOWER "lower"
/* nr_inodes of the tmpfs = --workspace-inodes + these (its root, upper,
 * ovl-work and its work and index dirs, lower, and spare for copy-up). */
#define KIST_WORKSPACE_INODE_OVERHEAD 8

/* How the workspace is mounted: the caller fills tmpfs and sb_uid/sb_gid,
 * kist_workspace_prepare the rest. */
struct kist_workspace_plan
{
  bool tmpfs;                     /* upper and work dir on a tmpfs (quotas) */
  bool idmap;                     /* the lower is an idmapped bind of DIR */
  uint32_t owner_uid, owner_gid;  /* DIR's owner */
  uint32_t sb_uid, sb_gid;        /* the sandbox user, as the host sees it */
};

/* The idmapped lower's mapping: on-disk a shown as b, b as a, every other
 * id as itself (a == b: the identity).  Returns the number of entries. */
size_t kist_workspace_swap_map (uint32_t a, uint32_t b, struct kist_idmap m[5]);

enum kist_workspace_commit
{
  KIST_COMMIT_ON_SUCCESS,   /* default */
  KIST_COMMIT_ALWAYS,
  KIST_COMMIT_NEVER
};

/* "on-success" | "always" | "never" -> *out; -EINVAL otherwise. */
int kist_workspace_parse_commit (const char *s, enum kist_workspace_commit *out);
const char *kist_workspace_commit_name (enum kist_workspace_commit c);

/* The stacked mounts need a workdir whose every component in the root is
 * a directory or missing, never a symlink (the overlay's options name host
 * paths under the root: the kernel would follow a symlink on the host, the
 * mounts layer inside the root), and a path an overlay option can carry. */
int kist_workspace_check_workdir (const char *rootfs, const char *workdir,
                                  struct kist_error **err);

/* The config's mounts at the workdir (the overlay, and what is stacked
 * under it: see above). */
struct kist_jgen;
struct kist_workspace_mounts
{
  const char *dir;               /* DIR */
  const char *workdir;           /* inside */
  const char *rootfs;            /* the root's host path */
  const char *upper, *ovl_work;  /* host dirs, or NULL with layers */
  const char *layers;            /* ROOT/~sandbox/ID/ws-layers, or NULL */
  uint64_t size, inodes;         /* of the tmpfs (0: the kernel's default) */
  bool userns;                   /* the sandbox has a user namespace: userxattr */
  const struct kist_workspace_plan *plan;
};
void kist_workspace_gen_mounts (struct kist_jgen *g, const struct kist_workspace_mounts *m);

/* --workspace DIR: *out = realpath (newly allocated).  DIR must exist, be a
 * directory, not be a symlink at its last component, and (as every overlay
 * option path) contain no ',', ':' or '\\'. */
int kist_workspace_resolve (const char *arg, char **out, struct kist_error **err);

/* An overlay option path must not contain ',', ':' or '\\' (what names the
 * path in the message). */
int kist_workspace_check_path (const char *path, const char *what, struct kist_error **err);

/* Decide plan->idmap and the owner, then create upper (the mode of ws; as
 * root owned by DIR's owner as the sandbox sees it) and ovl-work (0700) in
 * the sandbox directory sbfd (sb_path names it in messages), or with
 * plan->tmpfs ws-layers/ holding those and lower/.  commits: the workspace
 * may be committed (not --commit never): unprivileged, DIR must then be
 * the caller's.  On failure whatever was made is removed. */
int kist_workspace_prepare (int sbfd, const char *sb_path, const char *ws, bool commits,
                            struct kist_workspace_plan *plan, struct kist_error **err);

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

/* Merge the upper dir ufd (upper names it in messages) into the directory
 * ws (a path: opened once, O_NOFOLLOW).  set_owner: set uid/gid as the
 * header says (root only).  On error DIR may hold part of the changes; the
 * message names the entry. */
int kist_workspace_commit (int ufd, const char *upper, const char *ws, bool set_owner,
                           struct kist_workspace_stats *st, struct kist_error **err);

/* After the sandbox ended: enter its mount namespace mntns (its user
 * namespace userns first, unless -1) in a child, unmount the overlay at
 * workdir there (MNT_DETACH: that namespace only) and open the tmpfs under
 * it: *fsfd its root, *ufd its upper dir. */
int kist_workspace_fetch (int userns, int mntns, const char *workdir, int *fsfd, int *ufd,
                          struct kist_error **err);

struct kist_workspace_limits
{
  uint64_t size, inodes;   /* --workspace-size, --workspace-inodes (0: none) */
  uint64_t fsize;          /* --max-file-size / --fsize (0: none) */
  bool xfsz;               /* the command was killed by SIGXFSZ */
};
/* Did the workspace overflow?  fsfd: the tmpfs (-1: none), ufd: the upper
 * dir.  1 with *why (newly allocated: what overflowed) and *errnum (ENOSPC,
 * EDQUOT or EFBIG), 0 when not, negative with *err when ufd cannot be read. */
int kist_workspace_overflow (int fsfd, int ufd, const struct kist_workspace_limits *l,
                             char **why, int *errnum, struct kist_error **err);

/* Remove sbfd/upper, sbfd/ovl-work and sbfd/ws-layers (any depth, never following a
 * symlink, never crossing into another filesystem; directories owned by us
 * without search/write permission are chmod'ed first).  Missing is fine.
 * Returns 1 when something was removed, 0 when neither existed. */
int kist_workspace_remove (int sbfd, const char *sb_path, struct kist_error **err);

#endif
