/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: the one tree remover that never follows a symlink and never crosses
 * a mount (see fsremove.h). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsremove.h"
#include "resolve.h"
#include "util.h"

/* Removing while reading a directory may skip entries: read it again until
 * a pass finds nothing left to remove. */
#define REMOVE_PASSES 16

struct walk
{
  const struct kist_remove_opts *o;
  const char *pre;   /* "WHAT: " or "" */
  const char *top;   /* for the fix in messages */
  dev_t dev;         /* the filesystem the whole tree must be on */
};

void
kist_own_chmod (int dirfd, const char *name, const struct stat *st, mode_t need)
{
  if (st->st_uid == geteuid () && (st->st_mode & need) != need)
    fchmodat (dirfd, name, (st->st_mode & 07777) | need, AT_SYMLINK_NOFOLLOW);
}

/* parentfd/name as a directory fd, without following a symlink and without
 * crossing into another mount; -errno on failure (EXDEV: a mount point). */
static int
open_level (int parentfd, const char *name)
{
  int fd = kist_openat2 (parentfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW, 0,
                         RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS
                             | RESOLVE_NO_XDEV);
  if (fd != -ENOSYS)
    return fd;
  /* A kernel before 5.6: the mount-root test and the device check of the
   * caller stand in for RESOLVE_NO_XDEV. */
  fd = openat (parentfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  return fd < 0 ? -errno : fd;
}

static int remove_dir_entries (const struct walk *w, int fd, const char *path, int depth,
                               bool is_top, char **kept_path, struct kist_error **err);

/* Remove parentfd/name (any type; a directory with all of its content).
 * known: its lstat, just read by the caller (NULL: read it here).
 * 1: removed, 2: all of it but the kept directory (see remove_dir_entries),
 * 0: was not there. */
static int
remove_entry (const struct walk *w, int parentfd, const char *name, const char *path, int depth,
              bool is_top, const struct stat *known, struct kist_error **err)
{
  const struct kist_remove_opts *o = w->o;
  struct stat st;
  if (known)
    st = *known;
  else if (fstatat (parentfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    {
      if (errno == ENOENT)
        return 0;
      return kist_error_make (err, errno, "%sstat `%s`", w->pre, path);
    }
  if (!S_ISDIR (st.st_mode))
    {
      if (is_top && !o->any_type)
        return kist_error_make (err, ENOTDIR,
                                "%s`%s` is not a directory (a symbolic link?), which kist never "
                                "makes there; refusing to remove it: inspect and remove it by "
                                "hand",
                                w->pre, path);
      if (unlinkat (parentfd, name, 0) < 0 && errno != ENOENT)
        return kist_error_make (err, errno, "%sremove `%s`", w->pre, path);
      return 1;
    }
  if (depth > o->max_depth)
    return kist_error_make (err, ELOOP,
                            "%s`%s` is nested more than %d levels deep, which kist never makes; "
                            "refusing to remove it: inspect and remove `%s` by hand",
                            w->pre, path, o->max_depth, w->top);
  if (st.st_dev != w->dev || kist_is_mount_root (parentfd, name))
    return kist_error_make (err, EBUSY,
                            "%s`%s` is a mount point; refusing to remove across it: unmount it "
                            "(`umount %s`), then remove what is left of `%s` by hand",
                            w->pre, path, path, w->top);
  if (o->chmod_own)
    kist_own_chmod (parentfd, name, &st, S_IRWXU);
  _cleanup_close_ int fd = open_level (parentfd, name);
  if (fd == -EACCES && o->chmod_own)
    {
      kist_own_chmod (parentfd, name, &st, S_IRWXU);
      fd = open_level (parentfd, name);
    }
  if (fd == -ENOENT)
    return 0;
  if (fd == -EXDEV)
    return kist_error_make (err, EBUSY,
                            "%s`%s` became a mount point while kist removed it; refusing to "
                            "remove across it: unmount it (`umount %s`), then remove what is "
                            "left of `%s` by hand",
                            w->pre, path, path, w->top);
  if (fd == -ELOOP || fd == -ENOTDIR)
    return kist_error_make (err, -fd,
                            "%s`%s` became a symbolic link or a file while kist removed it; "
                            "refusing to follow it: inspect and remove `%s` by hand",
                            w->pre, path, w->top);
  if (fd < 0)
    return kist_error_make (err, -fd, "%sopen the directory `%s`", w->pre, path);
  struct stat fst;
  if (fstat (fd, &fst) < 0)
    return kist_error_make (err, errno, "%sstat `%s`", w->pre, path);
  if (fst.st_dev != w->dev || fst.st_ino != st.st_ino)
    return kist_error_make (err, EXDEV,
                            "%s`%s` is on another filesystem or was replaced while kist removed "
                            "it; refusing to remove it: inspect and remove `%s` by hand",
                            w->pre, path, w->top);
  _cleanup_free_ char *kept_path = NULL;
  int r = remove_dir_entries (w, fd, path, depth, is_top, &kept_path, err);
  if (r < 0)
    return r;
  if (kept_path)
    {
      if (o->kept)
        *o->kept = steal_pointer (&kept_path);
      return 2;
    }
  if (unlinkat (parentfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
    return kist_error_make (err, errno, "%sremove the directory `%s`", w->pre, path);
  return 1;
}

/* Is name an entry of the top that this pass must leave alone? */
static bool
spared (const struct kist_remove_opts *o, bool is_top, const char *name, bool is_dir)
{
  if (!is_top)
    return false;
  if (o->keep && is_dir && strcmp (name, o->keep) == 0)
    return true;
  return o->last && strcmp (name, o->last) == 0;
}

/* Remove the entries of the directory fd (path names it, at depth).  At the
 * top, o->keep stays (*kept_path is then its path) and o->last goes last. */
static int
remove_dir_entries (const struct walk *w, int fd, const char *path, int depth, bool is_top,
                    char **kept_path, struct kist_error **err)
{
  const struct kist_remove_opts *o = w->o;
  int dfd = fcntl (fd, F_DUPFD_CLOEXEC, 3);
  if (dfd < 0)
    return kist_error_make (err, errno, "%sread `%s`", w->pre, path);
  _cleanup_dir_ DIR *d = fdopendir (dfd);
  if (d == NULL)
    {
      int e = errno;
      close (dfd);
      return kist_error_make (err, e, "%sread `%s`", w->pre, path);
    }
  bool kept = false;
  /* At the depth limit, a directory in it is refused before anything here
   * is removed. */
  bool check_first = depth >= o->max_depth;
  for (int pass = check_first ? -1 : 0; pass < REMOVE_PASSES; pass++)
    {
      bool any = false;
      rewinddir (d);
      for (;;)
        {
          struct dirent *de = kist_readdir (d);
          if (de == NULL)
            break;
          const char *name = de->d_name;
          _cleanup_free_ char *sub = xasprintf ("%s/%s", path, name);
          struct stat st;
          bool is_dir;
          /* "A directory?" from the entry's type where the file system
           * gives it.  The check pass asks nothing more; the removal passes
           * unlink what is not a directory by name (unlinkat without
           * AT_REMOVEDIR never removes a directory: one that replaced the
           * entry since is looked at again, below) and lstat each directory,
           * which remove_entry goes by. */
          if (de->d_type != DT_UNKNOWN && de->d_type != DT_DIR)
            {
              is_dir = false;
              if (spared (o, is_top, name, false))
                continue;
              if (pass < 0)
                continue;
              any = true;
              if (unlinkat (fd, name, 0) == 0 || errno == ENOENT)
                continue;
              if (errno != EISDIR)
                return kist_error_make (err, errno, "%sremove `%s`", w->pre, sub);
              /* Now a directory: by its lstat, as any other. */
            }
          if (pass < 0 && de->d_type == DT_DIR)
            is_dir = true;
          else if (fstatat (fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
            {
              if (errno == ENOENT)
                continue;
              return kist_error_make (err, errno, "%sstat `%s`", w->pre, sub);
            }
          else
            is_dir = S_ISDIR (st.st_mode);
          if (spared (o, is_top, name, is_dir))
            {
              kept = kept || (o->keep && is_dir && strcmp (name, o->keep) == 0);
              continue;
            }
          if (pass < 0)
            {
              if (is_dir && o->max_depth == 0)
                return kist_error_make (err, EISDIR,
                                        "%s`%s` contains the directory `%s`, which kist never "
                                        "creates there; refusing to remove it recursively (it "
                                        "may be a mount point): inspect and remove it by hand",
                                        w->pre, path, name);
              if (is_dir)
                return kist_error_make (err, ELOOP,
                                        "%s`%s` is nested more than %d levels deep, which kist "
                                        "never makes; refusing to remove it: inspect and remove "
                                        "`%s` by hand",
                                        w->pre, sub, o->max_depth, w->top);
              continue;
            }
          any = true;
          int r = remove_entry (w, fd, name, sub, depth + 1, false, &st, err);
          if (r < 0)
            return r;
        }
      if (errno != 0)
        return kist_error_make (err, errno, "%sread `%s`", w->pre, path);
      if (pass >= 0 && !any)
        break;
      if (pass == REMOVE_PASSES - 1)
        return kist_error_make (err, ENOTEMPTY,
                                "%s`%s` is still not empty after removing its entries",
                                w->pre, path);
    }
  if (is_top && o->last && unlinkat (fd, o->last, 0) < 0 && errno != ENOENT)
    {
      _cleanup_free_ char *sub = xasprintf ("%s/%s", path, o->last);
      return kist_error_make (err, errno, "%sremove `%s`", w->pre, sub);
    }
  if (kept)
    *kept_path = xasprintf ("%s/%s", path, o->keep);
  return 0;
}

/* Set up a walk of the tree at (or in) the directory fd; *pre is the
 * message prefix, for the caller to free. */
static int
walk_init (struct walk *w, const struct kist_remove_opts *o, int fd, char **pre,
           struct kist_error **err)
{
  struct stat st;
  *pre = xasprintf ("%s%s", o->what ? o->what : "", o->what ? ": " : "");
  if (o->kept)
    *o->kept = NULL;
  *w = (struct walk){ .o = o, .pre = *pre, .top = o->top ? o->top : o->path };
  if (fstat (fd, &st) < 0)
    return kist_error_make (err, errno, "%sstat the directory of `%s`", *pre, o->path);
  w->dev = st.st_dev;
  return 0;
}

int
kist_remove_tree_at (int parentfd, const char *name, const struct kist_remove_opts *o,
                     struct kist_error **err)
{
  struct walk w;
  _cleanup_free_ char *pre = NULL;
  int r = walk_init (&w, o, parentfd, &pre, err);
  if (r < 0)
    return r;
  r = remove_entry (&w, parentfd, name, o->path, o->depth, true, NULL, err);
  if (r <= 0)
    return r;
  if (r == 2)
    return 1;
  struct stat st;
  if (fstatat (parentfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
    return kist_error_make (err, EEXIST,
                            "%s`%s` still exists after removing it (recreated concurrently?)",
                            w.pre, o->path);
  if (errno != ENOENT)
    return kist_error_make (err, errno, "%sverify that `%s` is gone", w.pre, o->path);
  return 1;
}

int
kist_remove_children (int dirfd, const struct kist_remove_opts *o, struct kist_error **err)
{
  struct walk w;
  _cleanup_free_ char *pre = NULL, *kept_path = NULL;
  int r = walk_init (&w, o, dirfd, &pre, err);
  if (r < 0)
    return r;
  r = remove_dir_entries (&w, dirfd, o->path, o->depth, true, &kept_path, err);
  if (r < 0)
    return r;
  if (kept_path && o->kept)
    *o->kept = steal_pointer (&kept_path);
  return 0;
}
