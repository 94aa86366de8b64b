/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: opening and reading the container's procfs (see procfs.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "ns.h"
#include "procfs.h"
#include "resolve.h"
#include "util.h"

#define PROC_MAX_READ (1u << 20)

/* The inode number of a procfs root directory (PROC_ROOT_INO in the kernel). */
#define PROC_ROOT_INO 1

/* errno EXDEV for the report, without its confusing strerror ("Invalid
 * cross-device link") in the message. */
static int __attribute__ ((format (printf, 2, 3)))
proc_exdev (struct kist_error **err, const char *fmt, ...)
{
  bool created = err != NULL && *err == NULL;
  va_list ap;
  va_start (ap, fmt);
  kist_error_makev (err, 0, fmt, ap);
  va_end (ap);
  if (created && *err)
    (*err)->errnum = EXDEV;
  return -EXDEV;
}

/* An O_PATH fd of the container's /proc, resolved in the root without magic
 * links and checked to be the root directory of a procfs: not a directory of
 * an image or a volume (CVE-2019-16884), not a procfs subdirectory bound
 * there.  Returns the fd or a negative errno with *err filled. */
static int
proc_root_open (const struct kist_ctx *ctx, const char *path, struct kist_error **err)
{
  int dirfd = ctx->rootfs_fd >= 0 ? ctx->rootfs_fd : AT_FDCWD;
  uint64_t resolve = RESOLVE_NO_MAGICLINKS | (ctx->rootfs_fd >= 0 ? RESOLVE_IN_ROOT : 0);
  _cleanup_close_ int fd = kist_openat2 (dirfd, "/proc", O_PATH | O_DIRECTORY, 0, resolve);
  if (fd == -ENOSYS)
    return kist_error_make (err, ENOSYS,
                            "open `%s` in the container root: openat2 is not available (kist "
                            "needs Linux >= 5.6)",
                            path);
  if (fd == -ENOENT || fd == -ENOTDIR)
    return kist_error_make (err, ENOENT,
                            "open `%s` in the container root: no /proc directory; mount proc "
                            "at /proc (config.mounts)",
                            path);
  if (fd < 0)
    return kist_error_make (err, -fd, "open /proc in the container root (for `%s`)", path);

  struct statfs sfs;
  struct stat st;
  if (fstatfs (fd, &sfs) < 0 || fstat (fd, &st) < 0)
    return kist_error_make (err, errno, "stat /proc in the container root (for `%s`)", path);
  if (sfs.f_type != PROC_SUPER_MAGIC)
    return proc_exdev (err,
                       "`%s` in the container root is not on procfs (/proc is a plain directory "
                       "or another file system mounted there); mount proc at /proc "
                       "(config.mounts)",
                       path);
  if (st.st_ino != PROC_ROOT_INO)
    return proc_exdev (err,
                       "`%s` in the container root: /proc is a directory inside a procfs, not "
                       "the root of one; mount proc at /proc (config.mounts)",
                       path);
  return steal_fd (&fd);
}

int
kist_proc_open (const struct kist_ctx *ctx, const char *path, int flags, struct kist_error **err)
{
  if (strncmp (path, "/proc", 5) != 0 || (path[5] != '\0' && path[5] != '/'))
    return kist_error_make (err, EINVAL, "kist_proc_open: `%s` is not under /proc", path);
  _cleanup_close_ int procfd = proc_root_open (ctx, path, err);
  if (procfd < 0)
    return procfd;

  /* From the verified procfs root: never above it, never across a mount (a
   * file or directory bound over a procfs entry, CVE-2025-52881: the write
   * would land on whatever was bound there), never through a magic link;
   * with O_NOFOLLOW through no symlink at all. */
  const char *rel = path + 5;
  while (*rel == '/')
    rel++;
  uint64_t resolve = RESOLVE_BENEATH | RESOLVE_NO_XDEV | RESOLVE_NO_MAGICLINKS;
  if (flags & O_NOFOLLOW)
    resolve |= RESOLVE_NO_SYMLINKS;
  _cleanup_close_ int fd = kist_openat2 (procfd, *rel ? rel : ".", flags, 0, resolve);
  if (fd == -ENOENT)
    return kist_error_make (err, ENOENT,
                            "open `%s` in the container root (no such entry on this kernel, "
                            "or no proc mounted at /proc)",
                            path);
  if (fd == -EXDEV)
    return proc_exdev (err,
                       "`%s` in the container root: a mount is in the way (something is "
                       "mounted over it or over a directory on its path inside the procfs at "
                       "/proc); kist reads and writes /proc files only on that procfs itself: "
                       "remove the mount from config.mounts",
                       path);
  if (fd == -ELOOP)
    return kist_error_make (err, ELOOP,
                            "open `%s` in the container root: a symlink is in the way", path);
  if (fd < 0)
    return kist_error_make (err, -fd, "open `%s` in the container root", path);

  struct statfs sfs;
  if (fstatfs (fd, &sfs) < 0)
    return kist_error_make (err, errno, "fstatfs `%s`", path);
  if (sfs.f_type != PROC_SUPER_MAGIC)
    return proc_exdev (err,
                       "`%s` in the container root is not on procfs; mount proc at /proc "
                       "(config.mounts)",
                       path);
  return steal_fd (&fd);
}

int
kist_proc_read (const struct kist_ctx *ctx, const char *path, int flags, char **out,
                struct kist_error **err)
{
  _cleanup_close_ int fd = kist_proc_open (ctx, path, O_RDONLY | flags, err);
  if (fd < 0)
    return fd;
  if (kist_read_fd (fd, PROC_MAX_READ, out, NULL, err) < 0)
    return kist_error_wrap (err, "`%s`", path);
  return 0;
}

char *
kist_proc_status_field (const char *status, const char *field)
{
  size_t fl = strlen (field);
  for (const char *p = status; p && *p; p = strchr (p, '\n') ? strchr (p, '\n') + 1 : NULL)
    if (strncmp (p, field, fl) == 0 && p[fl] == ':')
      {
        const char *v = p + fl + 1;
        while (*v == ' ' || *v == '\t')
          v++;
        const char *eol = strchr (v, '\n');
        char *r = strndup (v, eol ? (size_t) (eol - v) : strlen (v));
        if (r == NULL)
          abort ();
        return r;
      }
  return NULL;
}

int
kist_proc_ns_is_host (const struct kist_ctx *ctx, enum kist_ns_type t)
{
  if (ctx->host_ns_ino[t] == 0)
    return -1;
  _cleanup_error_ struct kist_error *ignored = NULL;
  _cleanup_close_ int procfd = kist_proc_open (ctx, "/proc/self", O_PATH | O_DIRECTORY, &ignored);
  if (procfd < 0)
    return -1;
  char name[32];
  snprintf (name, sizeof name, "ns/%s", kist_ns_proc_name (t));
  uint64_t ino = 0;
  if (kist_ns_ino (procfd, name, &ino) < 0)
    return -1;
  return ino == ctx->host_ns_ino[t];
}
