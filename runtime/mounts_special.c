/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: the special cases of the mounts layer (see mounts.c): tmpcopyup
 * (the image's content of the destination copied into the new tmpfs), and
 * the read-only binds that stand in for cgroup2 and sysfs where a user
 * namespace refuses a new superblock. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "cgroup.h"
#include "layer.h"
#include "mounts_int.h"
#include "resolve.h"
#include "util.h"

/* ------------------------------------------------------------ tmpcopyup */

/* tmpcopyup (podman --read-only, as crun and runc do it): the image's
 * content of the destination is copied into the new tmpfs while it is still
 * detached.  The source is read only through fds: every entry is opened from
 * its parent's fd by its single name with RESOLVE_BENEATH |
 * RESOLVE_NO_SYMLINKS, and must still be the inode fstatat saw, so a symlink
 * in the image is copied as a symlink and never followed, and nothing
 * outside the destination is read.  Regular files, directories, symlinks,
 * fifos and device nodes are copied with their mode, owner and times;
 * sockets are skipped (counted); hard links become separate files. */

#define COPYUP_MAX_DEPTH 128
#define COPYUP_RESOLVE (RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)

static int
copyup_error (struct kist_error **err, int errnum, const char *rel, const char *name,
              const char *what)
{
  const char *hint = errnum == ENOSPC   ? " (the tmpfs is full: raise its size= option)"
                     : errnum == EINVAL && strstr (what, "owner")
                         ? " (the owner is not mapped in the container's user namespace: give "
                           "the image's files ids that uidMappings/gidMappings map)"
                     : errnum == EPERM && strstr (what, "device")
                         ? " (device nodes cannot be made here, e.g. in a user namespace: remove "
                           "them from the image)"
                         : "";
  return kist_error_make (err, errnum, "tmpcopyup: %s `%s/%s`%s", what, rel, name, hint);
}

/* Owner, mode (after the owner: chown clears set-id bits) and times of the
 * copy dst/name (fd: the copy itself, -1 for a symlink). */
static int
copyup_meta (int dst, const char *name, int fd, const struct stat *st, const char *rel,
             struct kist_error **err)
{
  const struct timespec ts[2] = { st->st_atim, st->st_mtim };
  if (fd >= 0)
    {
      if (fchown (fd, st->st_uid, st->st_gid) < 0)
        return copyup_error (err, errno, rel, name, "set the owner of");
      if (fchmod (fd, st->st_mode & 07777) < 0)
        return copyup_error (err, errno, rel, name, "set the mode of");
      if (futimens (fd, ts) < 0)
        return copyup_error (err, errno, rel, name, "set the times of");
      return 0;
    }
  if (fchownat (dst, name, st->st_uid, st->st_gid, AT_SYMLINK_NOFOLLOW) < 0)
    return copyup_error (err, errno, rel, name, "set the owner of");
  if (!S_ISLNK (st->st_mode) && fchmodat (dst, name, st->st_mode & 07777, 0) < 0)
    return copyup_error (err, errno, rel, name, "set the mode of");
  if (utimensat (dst, name, ts, AT_SYMLINK_NOFOLLOW) < 0)
    return copyup_error (err, errno, rel, name, "set the times of");
  return 0;
}

/* Open src/name (one component, no symlink, not above src) and check it is
 * still the inode *st describes. */
static int
copyup_open (int src, const char *name, int flags, const struct stat *st, const char *rel,
             struct kist_error **err)
{
  int fd = kist_openat2 (src, name, flags | O_NOFOLLOW | O_NOCTTY, 0, COPYUP_RESOLVE);
  if (fd < 0)
    return copyup_error (err, -fd, rel, name, "open the image's");
  struct stat now;
  if (fstat (fd, &now) < 0 || now.st_dev != st->st_dev || now.st_ino != st->st_ino
      || (now.st_mode & S_IFMT) != (st->st_mode & S_IFMT))
    {
      close (fd);
      return copyup_error (err, EAGAIN, rel, name,
                           "the image changed while kist copied it (a concurrent change?):");
    }
  return fd;
}

static int
copyup_file (int src, int dst, const char *name, const struct stat *st, const char *rel,
             struct copyup *c, struct kist_error **err)
{
  _cleanup_close_ int in = copyup_open (src, name, O_RDONLY | O_NONBLOCK, st, rel, err);
  if (in < 0)
    return -1;
  _cleanup_close_ int out
      = openat (dst, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (out < 0)
    return copyup_error (err, errno, rel, name, "create the copy of");
  bool plain = false; /* copy_file_range refused: read and write */
  for (;;)
    {
      ssize_t n = plain ? -1 : copy_file_range (in, NULL, out, NULL, 1u << 30, 0);
      if (n < 0 && !plain
          && (errno == EXDEV || errno == EINVAL || errno == ENOSYS || errno == EOPNOTSUPP))
        plain = true;
      if (plain)
        {
          char buf[65536];
          int w;
          n = read (in, buf, sizeof buf);
          if (n > 0 && (w = kist_write_all (out, buf, (size_t) n)) < 0)
            return copyup_error (err, -w, rel, name, "write the copy of");
        }
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return copyup_error (err, errno, rel, name, "copy");
      if (n == 0)
        break;
      c->bytes += (unsigned long long) n;
    }
  c->files++;
  return copyup_meta (dst, name, out, st, rel, err);
}

static int copyup_dir (int src, int dst, const char *rel, int depth, struct copyup *c,
                       struct kist_error **err);

static int
copyup_entry (int src, int dst, const char *name, const char *rel, int depth, struct copyup *c,
              struct kist_error **err)
{
  struct stat st;
  if (fstatat (src, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return copyup_error (err, errno, rel, name, "stat the image's");
  switch (st.st_mode & S_IFMT)
    {
    case S_IFREG:
      return copyup_file (src, dst, name, &st, rel, c, err);
    case S_IFDIR:
      {
        if (depth >= COPYUP_MAX_DEPTH)
          return copyup_error (err, ELOOP, rel, name,
                               "more than 128 (COPYUP_MAX_DEPTH) directory levels below "
                               "the destination at");
        _cleanup_close_ int in = copyup_open (src, name, O_RDONLY | O_DIRECTORY, &st, rel, err);
        if (in < 0)
          return -1;
        if (mkdirat (dst, name, 0700) < 0)
          return copyup_error (err, errno, rel, name, "create the copy of");
        _cleanup_close_ int out
            = kist_openat2 (dst, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW, 0, COPYUP_RESOLVE);
        if (out < 0)
          return copyup_error (err, -out, rel, name, "open the copy of");
        _cleanup_free_ char *sub = xasprintf ("%s/%s", rel, name);
        if (copyup_dir (in, out, sub, depth + 1, c, err) < 0)
          return -1;
        c->dirs++;
        return copyup_meta (dst, name, out, &st, rel, err);
      }
    case S_IFLNK:
      {
        size_t sz = (size_t) st.st_size + 1;
        if (sz < 2 || sz > 65536)
          sz = 65536;
        _cleanup_free_ char *target = xmalloc (sz);
        ssize_t n = readlinkat (src, name, target, sz);
        if (n < 0)
          return copyup_error (err, errno, rel, name, "read the image's symlink");
        if ((size_t) n >= sz)
          return copyup_error (err, ENAMETOOLONG, rel, name, "read the image's symlink");
        target[n] = '\0';
        if (symlinkat (target, dst, name) < 0)
          return copyup_error (err, errno, rel, name, "create the copy of the symlink");
        c->links++;
        return copyup_meta (dst, name, -1, &st, rel, err);
      }
    case S_IFIFO:
    case S_IFCHR:
    case S_IFBLK:
      if (mknodat (dst, name, (st.st_mode & S_IFMT) | 0600, st.st_rdev) < 0)
        return copyup_error (err, errno, rel, name, "create the copy of the device or fifo");
      c->nodes++;
      return copyup_meta (dst, name, -1, &st, rel, err);
    default:
      c->sockets++; /* a socket means nothing without its process */
      return 0;
    }
}

static int
copyup_dir (int src, int dst, const char *rel, int depth, struct copyup *c,
            struct kist_error **err)
{
  int dfd = fcntl (src, F_DUPFD_CLOEXEC, 3);
  if (dfd < 0)
    return kist_error_make (err, errno, "tmpcopyup: dup");
  _cleanup_dir_ DIR *d = fdopendir (dfd);
  if (d == NULL)
    {
      close (dfd);
      return kist_error_make (err, errno, "tmpcopyup: read the image's directory `%s`", rel);
    }
  rewinddir (d);
  struct dirent *de;
  for (errno = 0; (de = readdir (d)) != NULL; errno = 0)
    {
      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
        continue;
      if (copyup_entry (src, dst, de->d_name, rel, depth, c, err) < 0)
        return -1;
    }
  if (errno != 0)
    return kist_error_make (err, errno, "tmpcopyup: read the image's directory `%s`", rel);
  return 0;
}

int
mnt_copyup (const struct plan *p, int target, int mnt, struct copyup *c, struct kist_error **err)
{
  _cleanup_close_ int src = kist_openat2 (target, ".", O_RDONLY | O_DIRECTORY, 0, COPYUP_RESOLVE);
  if (src < 0)
    return kist_error_make (err, -src, "tmpcopyup: open the image's `%s`", p->clean);
  _cleanup_close_ int dst = kist_openat2 (mnt, ".", O_RDONLY | O_DIRECTORY, 0, COPYUP_RESOLVE);
  if (dst < 0)
    return kist_error_make (err, -dst, "tmpcopyup: open the new tmpfs");
  const char *rel = strcmp (p->clean, "/") == 0 ? "" : p->clean;
  if (copyup_dir (src, dst, rel, 0, c, err) < 0)
    return -1;
  struct stat st;
  if (fstat (src, &st) < 0)
    return kist_error_make (err, errno, "tmpcopyup: stat the image's `%s`", p->clean);
  if (!p->has_owner && fchown (dst, st.st_uid, st.st_gid) < 0)
    return kist_error_make (err, errno, "tmpcopyup: set the owner of the tmpfs at `%s`",
                            p->clean);
  if (!p->has_mode && fchmod (dst, st.st_mode & 07777) < 0)
    return kist_error_make (err, errno, "tmpcopyup: set the mode of the tmpfs at `%s`", p->clean);
  return 0;
}

/* ------------------------------------------------ the cgroup fallback */

/* A fallback's detached tree (a clone of a host directory) onto target:
 * every mount of it read-only plus the mount's flags, recursively, the
 * propagation, then verified (magic; the source's device when src_dev). */
static int
place_readonly_tree (struct kist_ctx *ctx, const struct kist_mount *m, const struct plan *p,
                     int tree, int target, const char *what, unsigned long magic,
                     const dev_t *src_dev, struct kist_error **err)
{
  struct plan rp = *p;
  mnt_attrs_apply (&rp.rec, p->top.set, p->top.clr);
  mnt_attrs_apply (&rp.rec, MOUNT_ATTR_RDONLY, 0);
  rp.top = (struct attrs){ 0 };
  if (mnt_setattr_tree (tree, &rp.rec, true, err) < 0)
    return kist_error_wrap (err, "%s", what);
  if (move_mount (tree, "", target, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
    return kist_error_make (err, errno, "%s: move_mount", what);
  if (mnt_apply_propagation (tree, p, err) < 0)
    return -1;
  return mnt_verify_mount (ctx, m->destination, tree, target, &rp, magic, src_dev ? *src_dev : 0,
                           src_dev != NULL, err);
}

int
mnt_mount_cgroup_fallback (struct kist_ctx *ctx, const struct kist_mount *m, struct plan *p,
                           int target, struct kist_error **err)
{
  _cleanup_free_ char *root = NULL, *own = NULL;
  if (kist_cgroup_mount (&root, err) < 0 || kist_cgroup_own_path (&own, err) < 0)
    return kist_error_wrap (err, "cgroup fallback: find the container's cgroup");
  _cleanup_close_ int rootfd = open (root, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (rootfd < 0)
    return kist_error_make (err, errno, "cgroup fallback: open the cgroup2 mount `%s`", root);
  struct statfs sf;
  if (fstatfs (rootfd, &sf) < 0 || (unsigned long) sf.f_type != CGROUP2_SUPER_MAGIC)
    return kist_error_make (err, EIO, "cgroup fallback: `%s` is not a cgroup2 mount", root);
  _cleanup_close_ int scope
      = own[0] ? kist_openat2 (rootfd, own, O_PATH | O_DIRECTORY, 0,
                               COPYUP_RESOLVE | RESOLVE_NO_XDEV)
               : fcntl (rootfd, F_DUPFD_CLOEXEC, 3);
  if (scope < 0)
    return kist_error_make (err, own[0] ? -scope : errno,
                            "cgroup fallback: open the container's cgroup `%s/%s`", root, own);
  struct stat sst;
  if (fstat (scope, &sst) < 0)
    return kist_error_make (err, errno, "cgroup fallback: stat the container's cgroup");
  _cleanup_close_ int tree = open_tree (scope, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC
                                                       | AT_EMPTY_PATH | AT_RECURSIVE);
  if (tree < 0)
    return kist_error_make (err, errno, "cgroup fallback: open_tree(`%s/%s`, AT_RECURSIVE)", root,
                            own);
  if (place_readonly_tree (ctx, m, p, tree, target, "cgroup fallback", CGROUP2_SUPER_MAGIC,
                           &sst.st_dev, err)
      < 0)
    return -1;
  /* The root of the new mount must be the container's cgroup itself. */
  _cleanup_close_ int fd = p->exact == EXACT_ALL
                               ? kist_resolve_open_exact (ctx->rootfs_fd, p->clean, O_PATH, 0, err)
                               : kist_resolve_open (ctx->rootfs_fd, m->destination, O_PATH, 0, err);
  struct stat dst;
  if (fd < 0 || fstat (fd, &dst) < 0)
    return kist_error_wrap (err, "cgroup fallback: verify");
  if (dst.st_ino != sst.st_ino || dst.st_dev != sst.st_dev)
    return kist_error_make (err, EIO, "cgroup fallback: verify: the destination is not the "
                                      "container's cgroup");
  mnt_append (&p->note, "; ",
              xasprintf ("%s: cgroup2 refused in the user namespace without a cgroup namespace "
                         "(EPERM), bind of the container's own cgroup %s/%s instead (runc binds "
                         "the whole hierarchy), read-only with every submount",
                         m->destination, root, own));
  return 0;
}

int
mnt_mount_sysfs_fallback (struct kist_ctx *ctx, const struct kist_mount *m, const struct plan *p,
                          int target, struct kist_error **err)
{
  _cleanup_close_ int tree
      = open_tree (AT_FDCWD, "/sys", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
  if (tree < 0)
    return kist_error_make (err, errno, "sysfs fallback: open_tree(/sys, AT_RECURSIVE)");
  /* Always read-only, whatever the options: the host's /sys holds files the
   * caller owns (a cgroup delegated to it), which the container must not
   * write (CVE-2023-25809). */
  return place_readonly_tree (ctx, m, p, tree, target, "sysfs fallback", SYSFS_MAGIC, NULL, err);
}
