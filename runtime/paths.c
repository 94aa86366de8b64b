/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: linux.maskedPaths and linux.readonlyPaths (layers "masked_paths"
 * and "readonly_paths").
 *
 * Runs in the container init after pivot_root; paths are resolved from
 * ctx->rootfs_fd (still the container root) with openat2(RESOLVE_IN_ROOT).
 *   masked directory  -> an empty, read-only tmpfs;
 *   masked other      -> a bind of the container's /dev/null (checked to be
 *                        the null device first);
 *   read-only path    -> bound recursively onto itself with MOUNT_ATTR_RDONLY
 *                        set recursively (nosuid/nodev/noexec are kept).
 * Missing paths are skipped and listed in the detail.  Each mount is read
 * back from the reopened path (statx mount id, fstatfs, fstatvfs, fstat). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "layer.h"
#include "mountinfo.h"
#include "resolve.h"
#include "util.h"

static void
append_word (char **s, const char *w)
{
  char *next = xasprintf ("%s%s%s", *s ? *s : "", *s ? " " : "", w);
  free (*s);
  *s = next;
}

/* The reopened path must be the mount that mntfd is; the mount goes to
 * *expect (mountinfo.h), for the parent to find it from outside. */
static int
verify_is_mount (int rootfd, const char *path, int mntfd, int *out, struct statfs *sf,
                 unsigned long *st_flags, char **expect, struct kist_error **err)
{
  _cleanup_close_ int fd = kist_resolve_open (rootfd, path, O_PATH, 0, err);
  if (fd < 0)
    return kist_error_wrap (err, "verify");
  uint64_t id, want;
  if (kist_mnt_id_at (fd, "", 0, &id, err) < 0 || kist_mnt_id_at (mntfd, "", 0, &want, err) < 0)
    return kist_error_wrap (err, "verify `%s`", path);
  if (id != want)
    return kist_error_make (err, EIO, "verify: `%s` is mount %llu, not the new mount %llu", path,
                            (unsigned long long) id, (unsigned long long) want);
  if (kist_fd_statfs_flags (fd, sf, st_flags) < 0)
    return kist_error_make (err, errno, "verify: statfs `%s`", path);
  kist_mountinfo_expect_add (expect, id, *st_flags, false, NULL);
  *out = steal_fd (&fd);
  return 0;
}

static int
dir_is_empty (int rootfd, const char *path, struct kist_error **err)
{
  _cleanup_close_ int fd = kist_resolve_open (rootfd, path, O_RDONLY | O_DIRECTORY, 0, err);
  if (fd < 0)
    return -1;
  DIR *d = fdopendir (fd);
  if (d == NULL)
    return kist_error_make (err, errno, "fdopendir `%s`", path);
  fd = -1; /* owned by d now */
  struct dirent *de;
  int ret = 0;
  while ((de = readdir (d)))
    if (strcmp (de->d_name, ".") != 0 && strcmp (de->d_name, "..") != 0)
      {
        ret = kist_error_make (err, EIO, "verify: masked `%s` is not empty (`%s`)", path,
                               de->d_name);
        break;
      }
  closedir (d);
  return ret;
}

/* Open an entry of the layer's list as the mount target (O_PATH, resolved in
 * the root) into *fd.  A missing path is not an error: it is added to
 * *skipped and *fd stays -1. */
static int
open_target (int rootfd, const char *layer, const char *path, int *fd, char **skipped,
             struct kist_error **err)
{
  /* Most images lack some of the default paths (a sandbox: 8 of 15): no
   * message is made for them, only for a real failure, resolved again. */
  *fd = kist_resolve_open (rootfd, path, O_PATH, 0, NULL);
  if (*fd >= 0)
    return 0;
  _cleanup_error_ struct kist_error *e = NULL;
  if (*fd != -ENOENT)
    *fd = kist_resolve_open (rootfd, path, O_PATH, 0, &e);
  if (*fd >= 0)
    return 0;
  if (*fd == -ENOENT)
    {
      *fd = -1;
      append_word (skipped, path);
      return 0;
    }
  *fd = -1;
  return kist_error_make (err, e->errnum, "%s: %s", layer, e->msg);
}

/* ---------------------------------------------------------- masked_paths */

static int
mask_dir (int rootfd, const char *path, int target, char **expect, struct kist_error **err)
{
  _cleanup_close_ int fsfd = fsopen ("tmpfs", FSOPEN_CLOEXEC);
  if (fsfd < 0)
    return kist_error_make (err, errno, "fsopen(tmpfs) to mask `%s`", path);
  if (fsconfig (fsfd, FSCONFIG_SET_STRING, "size", "4k", 0) < 0
      || fsconfig (fsfd, FSCONFIG_SET_STRING, "mode", "0755", 0) < 0
      || fsconfig (fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
    return kist_error_make (err, errno, "create the tmpfs to mask `%s`", path);
  _cleanup_close_ int mnt = fsmount (fsfd, FSMOUNT_CLOEXEC,
                                     MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV
                                         | MOUNT_ATTR_NOEXEC);
  if (mnt < 0)
    return kist_error_make (err, errno, "fsmount the tmpfs to mask `%s`", path);
  if (move_mount (mnt, "", target, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
    return kist_error_make (err, errno, "mount the empty tmpfs over `%s`", path);

  _cleanup_close_ int fd = -1;
  struct statfs sf;
  unsigned long st_flags = 0;
  if (verify_is_mount (rootfd, path, mnt, &fd, &sf, &st_flags, expect, err) < 0)
    return -1;
  if ((unsigned long) sf.f_type != TMPFS_MAGIC || !(st_flags & ST_RDONLY))
    return kist_error_make (err, EIO, "verify: `%s` is not a read-only tmpfs", path);
  return dir_is_empty (rootfd, path, err);
}

static int
mask_file (int rootfd, const char *path, int target, int nullfd, char **expect,
           struct kist_error **err)
{
  _cleanup_close_ int tree
      = open_tree (nullfd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
  if (tree < 0)
    return kist_error_make (err, errno, "open_tree of the container's /dev/null");
  if (move_mount (tree, "", target, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
    return kist_error_make (err, errno, "bind /dev/null over `%s`", path);
  _cleanup_close_ int fd = -1;
  struct statfs sf;
  unsigned long st_flags = 0;
  if (verify_is_mount (rootfd, path, tree, &fd, &sf, &st_flags, expect, err) < 0)
    return -1;
  struct stat st;
  if (fstat (fd, &st) < 0)
    return kist_error_make (err, errno, "verify: stat `%s`", path);
  if (!S_ISCHR (st.st_mode) || st.st_rdev != makedev (1, 3))
    return kist_error_make (err, EIO, "verify: masked `%s` is not the null device", path);
  return 0;
}

/* The container's /dev/null, checked to be char 1:3 (O_PATH, not followed if
 * it is a symlink). */
static int
open_null (int rootfd, struct kist_error **err)
{
  _cleanup_close_ int fd = kist_resolve_open (rootfd, "/dev/null", O_PATH | O_NOFOLLOW, 0, err);
  if (fd < 0)
    return kist_error_wrap (err, "masked_paths: /dev/null in the container");
  struct stat st;
  if (fstat (fd, &st) < 0)
    return kist_error_make (err, errno, "masked_paths: stat /dev/null in the container");
  if (!S_ISCHR (st.st_mode) || st.st_rdev != makedev (1, 3))
    return kist_error_make (err, ENODEV,
                            "masked_paths: /dev/null in the container is not the null device");
  return steal_fd (&fd);
}

static int
masked_apply (struct kist_ctx *ctx, char **masked, char **detail, char **expect,
              struct kist_error **err)
{
  _cleanup_free_ char *dirs = NULL, *files = NULL, *skipped = NULL;
  _cleanup_close_ int nullfd = -1;
  size_t n_dirs = 0, n_files = 0;

  for (char **p = masked; *p; p++)
    {
      _cleanup_close_ int target = -1;
      if (open_target (ctx->rootfs_fd, "masked_paths", *p, &target, &skipped, err) < 0)
        return -1;
      if (target < 0)
        continue;
      struct stat st;
      if (fstat (target, &st) < 0)
        return kist_error_make (err, errno, "masked_paths: stat `%s`", *p);
      if (S_ISDIR (st.st_mode))
        {
          if (mask_dir (ctx->rootfs_fd, *p, target, expect, err) < 0)
            return kist_error_wrap (err, "masked_paths");
          append_word (&dirs, *p);
          n_dirs++;
        }
      else
        {
          if (nullfd < 0 && (nullfd = open_null (ctx->rootfs_fd, err)) < 0)
            return -1;
          if (mask_file (ctx->rootfs_fd, *p, target, nullfd, expect, err) < 0)
            return kist_error_wrap (err, "masked_paths");
          append_word (&files, *p);
          n_files++;
        }
    }
  *detail = xasprintf ("%zu dirs (empty read-only tmpfs)%s%s; %zu files (/dev/null)%s%s%s%s",
                       n_dirs, dirs ? ": " : "", dirs ? dirs : "", n_files, files ? ": " : "",
                       files ? files : "", skipped ? "; missing, skipped: " : "",
                       skipped ? skipped : "");
  return 0;
}

/* -------------------------------------------------------- readonly_paths */

static int
readonly_one (int rootfd, const char *path, int target, char **expect, struct kist_error **err)
{
  _cleanup_close_ int tree = open_tree (target, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC
                                                        | AT_RECURSIVE | AT_EMPTY_PATH);
  if (tree < 0)
    return kist_error_make (err, errno, "open_tree `%s`", path);
  struct mount_attr attr = { .attr_set = MOUNT_ATTR_RDONLY };
  if (mount_setattr (tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof attr) < 0)
    return kist_error_make (err, errno, "mount_setattr(MOUNT_ATTR_RDONLY) `%s`", path);
  if (move_mount (tree, "", target, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
    return kist_error_make (err, errno, "bind `%s` onto itself", path);
  _cleanup_close_ int fd = -1;
  struct statfs sf;
  unsigned long st_flags = 0;
  if (verify_is_mount (rootfd, path, tree, &fd, &sf, &st_flags, expect, err) < 0)
    return -1;
  if (!(st_flags & ST_RDONLY))
    return kist_error_make (err, EIO, "verify: `%s` is not read-only after the bind", path);
  return 0;
}

static int
readonly_apply (struct kist_ctx *ctx, char **paths, char **detail, char **expect,
                struct kist_error **err)
{
  _cleanup_free_ char *done = NULL, *skipped = NULL;
  size_t n = 0;
  for (char **p = paths; *p; p++)
    {
      _cleanup_close_ int target = -1;
      if (open_target (ctx->rootfs_fd, "readonly_paths", *p, &target, &skipped, err) < 0)
        return -1;
      if (target < 0)
        continue;
      if (readonly_one (ctx->rootfs_fd, *p, target, expect, err) < 0)
        return kist_error_wrap (err, "readonly_paths");
      append_word (&done, *p);
      n++;
    }
  *detail = xasprintf ("%zu read-only (recursive bind, ST_RDONLY verified)%s%s%s%s", n,
                       done ? ": " : "", done ? done : "",
                       skipped ? "; missing, skipped: " : "", skipped ? skipped : "");
  return 0;
}

/* ------------------------------------------------------------- the layer */

typedef int (*paths_apply_fn) (struct kist_ctx *ctx, char **paths, char **detail, char **expect,
                               struct kist_error **err);

/* One layer: record it as not requested, failed or applied. */
static int
paths_layer (struct kist_ctx *ctx, struct kist_report *r, const char *layer, char **paths,
             const char *not_requested, paths_apply_fn apply, struct kist_error **err)
{
  _cleanup_error_ struct kist_error *e = NULL;
  _cleanup_free_ char *detail = NULL, *expect = NULL;
  if (paths == NULL || paths[0] == NULL)
    kist_report_skip (r, layer, "%s", not_requested);
  else if (ctx->rootfs_fd < 0)
    return kist_report_failed (r, layer, "", EBADF, err, "the rootfs was not prepared");
  else if (apply (ctx, paths, &detail, &expect, &e) < 0)
    return kist_report_failed (r, layer, "", e->errnum ? e->errnum : EIO, err, "%s", e->msg);
  else
    {
      kist_report_applied (r, layer, "", "%s", detail);
      if (expect) /* and from outside (verify.c) */
        kist_report_expect (r, layer, "mnts=%s", expect);
    }
  return 0;
}

int
kist_paths_apply (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err)
{
  const struct kist_linux *lx = ctx->spec->linux_;
  int ret = paths_layer (ctx, r, "masked_paths", lx ? lx->masked_paths : NULL,
                         "no linux.maskedPaths", masked_apply, err);
  if (ret < 0)
    return ret;
  return paths_layer (ctx, r, "readonly_paths", lx ? lx->readonly_paths : NULL,
                      "no linux.readonlyPaths", readonly_apply, err);
}
