/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: opening and reading the container's procfs (see procfs.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "procfs.h"
#include "resolve.h"
#include "util.h"

#define PROC_MAX_READ (1u << 20)

/* openat2 as kist_proc_open describes it; returns the fd or -errno. */
static int
proc_openat2 (const struct kist_ctx *ctx, const char *path, int flags)
{
  uint64_t resolve = RESOLVE_NO_MAGICLINKS;
  if (flags & O_NOFOLLOW)
    resolve |= RESOLVE_NO_SYMLINKS;
  if (ctx->rootfs_fd >= 0)
    return kist_openat2 (ctx->rootfs_fd, path, flags, 0, resolve | RESOLVE_IN_ROOT);
  return kist_openat2 (AT_FDCWD, path, flags, 0, resolve);
}

int
kist_proc_open (const struct kist_ctx *ctx, const char *path, int flags, struct kist_error **err)
{
  _cleanup_close_ int fd = proc_openat2 (ctx, path, flags);
  if (fd == -ENOSYS)
    return kist_error_make (err, ENOSYS,
                            "open `%s` in the container root: openat2 is not available (kist "
                            "needs Linux >= 5.6)",
                            path);
  if (fd == -ENOENT)
    return kist_error_make (err, ENOENT,
                            "open `%s` in the container root (no such entry on this kernel, "
                            "or no proc mounted at /proc)",
                            path);
  if (fd == -ELOOP && (flags & O_NOFOLLOW))
    return kist_error_make (err, ELOOP,
                            "open `%s` in the container root: a symlink is in the way", path);
  if (fd < 0)
    return kist_error_make (err, -fd, "open `%s` in the container root", path);

  struct statfs sfs;
  if (fstatfs (fd, &sfs) < 0)
    return kist_error_make (err, errno, "fstatfs `%s`", path);
  if (sfs.f_type != PROC_SUPER_MAGIC)
    {
      /* errno EXDEV for the report, without its confusing strerror
       * ("Invalid cross-device link") in the message. */
      bool created = err != NULL && *err == NULL;
      kist_error_make (err, 0,
                       "`%s` in the container root is not on procfs; mount proc at /proc "
                       "(config.mounts)",
                       path);
      if (created && *err)
        (*err)->errnum = EXDEV;
      return -EXDEV;
    }
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
  snprintf (name, sizeof name, "ns/%s", kist_ns_name (t));
  struct stat st;
  if (fstatat (procfd, name, &st, 0) < 0)
    return -1;
  return st.st_dev == ctx->host_ns_dev[t] && st.st_ino == ctx->host_ns_ino[t];
}
