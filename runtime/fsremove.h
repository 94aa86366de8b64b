/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: the one tree remover (state dirs, sandbox dirs, the --workspace
 * overlay dirs).  It never follows a symlink (a symlink is unlinked, its
 * target is left alone) and never crosses into another mount: every level is
 * opened from its parent's fd with openat2(O_NOFOLLOW | O_DIRECTORY,
 * RESOLVE_NO_SYMLINKS | RESOLVE_NO_XDEV | RESOLVE_BENEATH), and checked to be
 * the directory that was looked at (same device and inode, the device of the
 * top's parent).  A mount point, another filesystem or a tree deeper than
 * the caller allows is refused with an error naming the path, never removed
 * across. */
#ifndef KIST_FSREMOVE_H
#define KIST_FSREMOVE_H

#include <stdbool.h>
#include <sys/stat.h>

#include "error.h"

struct kist_remove_opts
{
  const char *path;  /* the top (parentfd/name, or dirfd) as messages name it; required */
  const char *what;  /* prefix of every message ("commit: ..."), or NULL */
  const char *top;   /* what a refusal asks to remove by hand; NULL: path */
  int max_depth;     /* directories nested deeper than this below the top are refused
                      * (ELOOP).  0: the top may hold no directory at all (EISDIR),
                      * checked before anything in it is removed */
  int depth;         /* how deep the top itself already is (counts toward max_depth) */
  const char *keep;  /* a directory of this name directly in the top stays, and so does
                      * the top; NULL: none */
  char **kept;       /* with keep, when not NULL: set to the kept directory's path
                      * (malloc'd) when it was there, else NULL */
  const char *last;  /* an entry directly in the top removed after all the others
                      * (state.json: a remover killed midway leaves the record); or NULL */
  bool any_type;     /* the top may be a non-directory (it is unlinked); else ENOTDIR */
  bool chmod_own;    /* directories we own without u+rwx get it first (an overlay's
                      * upper dir may hold such) */
};

/* Remove parentfd/name and everything in it (see the top of this file),
 * then verify it is gone.  Returns 1 when it was there (removed, or all of
 * it but o->keep), 0 when it was not, negative with *err. */
int kist_remove_tree_at (int parentfd, const char *name, const struct kist_remove_opts *o,
                         struct kist_error **err);

/* Remove everything in the directory dirfd (o->path names it), which
 * itself stays; o->keep and o->last apply to its entries.  0 or negative
 * with *err. */
int kist_remove_children (int dirfd, const struct kist_remove_opts *o, struct kist_error **err);

/* Our own directory (or file) without the permission bits we need: add them
 * (never following a symlink).  Only for entries owned by us (st: its
 * fstatat, AT_SYMLINK_NOFOLLOW); nothing else is touched. */
void kist_own_chmod (int dirfd, const char *name, const struct stat *st, mode_t need);

#endif
