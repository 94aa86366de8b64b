/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: resolving paths inside the container root (see resolve.h).
 *
 * Every lookup is one openat2(RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS) from
 * the root's directory fd: an absolute or ".." symlink in the image is
 * resolved against the container root, never against the host's.  Missing
 * components are created with mkdirat/mknodat in the directory fd that the
 * previous lookup returned, so nothing is ever built from host path strings. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "resolve.h"
#include "util.h"

/* openat2 fails with EAGAIN when a rename or mount raced the lookup. */
#define RESOLVE_RETRIES 32
/* Symlinks followed by hand in kist_resolve_mkpath (dangling ones only). */
#define MKPATH_MAX_LINKS 40

int
kist_openat2 (int dirfd, const char *path, int flags, mode_t mode, uint64_t resolve)
{
  struct open_how how = { .flags = (uint64_t) (flags | O_CLOEXEC), .resolve = resolve };
  if ((flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE)
    how.mode = mode;
  for (int i = 0; i < RESOLVE_RETRIES; i++)
    {
      long fd = syscall (SYS_openat2, dirfd, path, &how, sizeof how);
      if (fd >= 0)
        return (int) fd;
      if (errno != EAGAIN && errno != EINTR)
        break;
    }
  return -errno;
}

/* openat2 in the root (plus the extra RESOLVE_* flags); returns the fd or
 * -errno. */
static int
resolve_raw_x (int rootfd, const char *path, int flags, mode_t mode, uint64_t extra)
{
  if (path == NULL || path[0] == '\0')
    path = ".";
  return kist_openat2 (rootfd, path, flags, mode,
                       RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS | extra);
}

static int
resolve_open_x (int rootfd, const char *path, int flags, mode_t mode, uint64_t extra,
                struct kist_error **err)
{
  int fd = resolve_raw_x (rootfd, path, flags, mode, extra);
  if (fd < 0)
    {
      if (fd == -ELOOP && (extra & RESOLVE_NO_SYMLINKS))
        return kist_error_make (err, ELOOP,
                                "open `%s` inside the container root: a component is a symlink, "
                                "and none may be on the way here",
                                path);
      if (fd == -ENOSYS)
        return kist_error_make (err, ENOSYS,
                                "open `%s` inside the container root: openat2 is not available "
                                "(kist needs Linux >= 5.6)",
                                path);
      return kist_error_make (err, -fd, "open `%s` inside the container root", path);
    }
  return fd;
}

int
kist_resolve_open (int rootfd, const char *path, int flags, mode_t mode, struct kist_error **err)
{
  return resolve_open_x (rootfd, path, flags, mode, 0, err);
}

const char *
kist_fd_path (int fd, char buf[static 32])
{
  snprintf (buf, 32, "/proc/self/fd/%d", fd);
  return buf;
}

int
kist_mnt_id_at (int dirfd, const char *path, int flags, uint64_t *mnt_id, struct kist_error **err)
{
  struct statx stx;
  if (path == NULL)
    path = "";
  if (path[0] == '\0')
    flags |= AT_EMPTY_PATH;
  if (statx (dirfd, path, flags | AT_NO_AUTOMOUNT, STATX_MNT_ID, &stx) < 0)
    return kist_error_make (err, errno, "statx(STATX_MNT_ID) `%s`", path[0] ? path : "(fd)");
  if (!(stx.stx_mask & STATX_MNT_ID))
    return kist_error_make (err, ENOTSUP, "statx did not return a mount id for `%s`",
                            path[0] ? path : "(fd)");
  *mnt_id = stx.stx_mnt_id;
  return 0;
}

/* Check that the final fd is of the kind asked for. */
static int
check_kind (int fd, const char *path, enum kist_mkpath_kind kind, struct kist_error **err)
{
  struct stat st;
  if (fstat (fd, &st) < 0)
    return kist_error_make (err, errno, "stat `%s` inside the container root", path);
  if (kind == KIST_MKPATH_DIR && !S_ISDIR (st.st_mode))
    return kist_error_make (err, ENOTDIR,
                            "`%s` exists inside the container root and is not a directory", path);
  if (kind == KIST_MKPATH_FILE && S_ISDIR (st.st_mode))
    return kist_error_make (err, EISDIR,
                            "`%s` exists inside the container root and is a directory, but a "
                            "file is needed here",
                            path);
  return 0;
}

/* Replace cur[comp_start, comp_end) (a dangling symlink) by its target:
 * absolute targets restart from the root, relative ones from the
 * component's parent.  The new string is only ever resolved with openat2
 * in the root, so a ".." or absolute target cannot leave it. */
static char *
splice_link (const char *cur, size_t comp_start, size_t comp_end, const char *target)
{
  const char *rest = cur + comp_end;
  if (target[0] == '/')
    return xasprintf ("%s%s", target, rest);
  return xasprintf ("%.*s/%s%s", (int) comp_start, cur, target, rest);
}

/* One walk over cur.  Returns the final fd (>= 0), a negative error, or
 * MKPATH_RESTART with *next set to a new path to walk (a dangling symlink
 * was replaced by its target). */
#define MKPATH_RESTART (-4096)

/* The error for a symlink met where none may be (RESOLVE_NO_SYMLINKS):
 * names it and, if it still is one, its target.  parent: the fd of the
 * directory holding comp; prefix: the path up to and including comp. */
static int
symlink_error (struct kist_error **err, int parent, const char *comp, const char *prefix,
               const char *path)
{
  char target[PATH_MAX];
  ssize_t n = readlinkat (parent, comp, target, sizeof target - 1);
  int ret;
  if (n >= 0)
    {
      target[n] = '\0';
      ret = kist_error_make (err, 0,
                             "`%s` in the container root is a symlink (to `%s`), and no "
                             "symlink may be on the way to `%s`: make it a plain directory in "
                             "the image",
                             prefix, target, path);
    }
  else
    ret = kist_error_make (err, 0,
                           "a component of `%s` in the container root is a symlink (or was "
                           "swapped for one while kist resolved it), and no symlink may be on "
                           "the way to `%s`: make every component a plain directory in the image",
                           prefix, path);
  if (err && *err && (*err)->errnum == 0)
    {
      (*err)->errnum = ELOOP;
      ret = -ELOOP;
    }
  return ret;
}

static int
mkpath_walk (int rootfd, const char *path, const char *cur, enum kist_mkpath_kind kind,
             mode_t mode, uint64_t extra, char **next, struct kist_error **err)
{
  bool nofollow = (extra & RESOLVE_NO_SYMLINKS) != 0;
  _cleanup_close_ int parent_owned = -1;
  int parent = rootfd;
  size_t len = strlen (cur), pos = 0;

  for (;;)
    {
      while (pos < len && cur[pos] == '/')
        pos++;
      if (pos >= len)
        break;
      size_t start = pos;
      while (pos < len && cur[pos] != '/')
        pos++;
      size_t end = pos, after = pos;
      while (after < len && cur[after] == '/')
        after++;
      bool last = after >= len;

      _cleanup_free_ char *prefix = xasprintf ("%s%.*s", cur[0] == '/' ? "" : "/", (int) end, cur);
      _cleanup_free_ char *comp = xasprintf ("%.*s", (int) (end - start), cur + start);
      int fd = -ENOENT;
      for (int attempt = 0; attempt < RESOLVE_RETRIES; attempt++)
        {
          fd = resolve_raw_x (rootfd, prefix, last ? O_PATH : O_PATH | O_DIRECTORY, 0, extra);
          if (fd >= 0)
            break;
          if (fd == -ELOOP && nofollow)
            return symlink_error (err, parent, comp, prefix, path);
          if (fd == -ENOTDIR)
            return kist_error_make (err, ENOTDIR,
                                    "`%s` inside the container root is not a directory (needed "
                                    "for `%s`)",
                                    prefix, path);
          if (fd != -ENOENT)
            return kist_error_make (err, -fd, "open `%s` inside the container root", prefix);

          /* Missing: create it in the resolved parent directory. */
          int r;
          if (last && kind == KIST_MKPATH_FILE)
            r = mknodat (parent, comp, S_IFREG | (mode & 07777), 0);
          else
            r = mkdirat (parent, comp, last ? mode : 0755);
          if (r == 0)
            continue;
          if (errno != EEXIST)
            return kist_error_make (err, errno, "create `%s` inside the container root%s", prefix,
                                    errno == EROFS ? " (the image is read-only there)" : "");
          /* EEXIST although the lookup said ENOENT: a dangling symlink.
           * Follow it by hand and create its target, as runc does. */
          char target[PATH_MAX];
          ssize_t n = readlinkat (parent, comp, target, sizeof target - 1);
          if (n < 0)
            {
              if (errno == EINVAL)
                continue; /* not a symlink: raced with a creation; look again */
              return kist_error_make (err, errno, "readlink `%s` inside the container root",
                                      prefix);
            }
          target[n] = '\0';
          if (nofollow)
            return symlink_error (err, parent, comp, prefix, path);
          *next = splice_link (cur, start, end, target);
          return MKPATH_RESTART;
        }
      if (fd < 0)
        return kist_error_make (err, -fd, "resolve `%s` inside the container root", prefix);

      if (last)
        {
          _cleanup_close_ int out = fd;
          int r = check_kind (out, path, kind, err);
          if (r < 0)
            return r;
          return steal_fd (&out);
        }
      if (parent_owned >= 0)
        close (parent_owned);
      parent_owned = fd;
      parent = fd;
    }

  /* No component at all: "/" itself. */
  _cleanup_close_ int fd = resolve_raw_x (rootfd, "/", O_PATH | O_DIRECTORY, 0, extra);
  if (fd < 0)
    return kist_error_make (err, -fd, "open the container root");
  int r = check_kind (fd, "/", kind, err);
  if (r < 0)
    return r;
  return steal_fd (&fd);
}

static int
mkpath (int rootfd, const char *path, enum kist_mkpath_kind kind, mode_t mode, uint64_t extra,
        struct kist_error **err)
{
  if (path == NULL)
    return kist_error_make (err, EINVAL, "kist_resolve_mkpath: no path");
  _cleanup_free_ char *cur = xstrdup (path);
  for (int links = 0; links <= MKPATH_MAX_LINKS; links++)
    {
      char *next = NULL;
      int r = mkpath_walk (rootfd, path, cur, kind, mode, extra, &next, err);
      if (r != MKPATH_RESTART)
        return r;
      free (cur);
      cur = next;
    }
  return kist_error_make (err, ELOOP, "resolve `%s` inside the container root", path);
}

int
kist_resolve_mkpath (int rootfd, const char *path, enum kist_mkpath_kind kind, mode_t mode,
                     struct kist_error **err)
{
  return mkpath (rootfd, path, kind, mode, 0, err);
}

int
kist_resolve_mkpath_exact (int rootfd, const char *path, enum kist_mkpath_kind kind, mode_t mode,
                           struct kist_error **err)
{
  return mkpath (rootfd, path, kind, mode, RESOLVE_NO_SYMLINKS, err);
}

int
kist_resolve_open_exact (int rootfd, const char *path, int flags, mode_t mode,
                         struct kist_error **err)
{
  return resolve_open_x (rootfd, path, flags, mode, RESOLVE_NO_SYMLINKS, err);
}

int
kist_resolve_clean (const char *path, char **out, struct kist_error **err)
{
  if (path == NULL || path[0] != '/')
    return kist_error_make (err, EINVAL, "`%s` is not an absolute path", path ? path : "(none)");
  size_t len = strlen (path);
  char *buf = xmalloc (len + 2);
  size_t o = 0;
  for (size_t i = 0; i < len;)
    {
      while (i < len && path[i] == '/')
        i++;
      size_t start = i;
      while (i < len && path[i] != '/')
        i++;
      size_t l = i - start;
      if (l == 0 || (l == 1 && path[start] == '.'))
        continue;
      if (l == 2 && path[start] == '.' && path[start + 1] == '.')
        {
          /* Lexically, as RESOLVE_IN_ROOT does at the root: "/.." is "/". */
          while (o > 0 && buf[o - 1] != '/')
            o--;
          if (o > 0)
            o--;
          continue;
        }
      buf[o++] = '/';
      memcpy (buf + o, path + start, l);
      o += l;
    }
  if (o == 0)
    buf[o++] = '/';
  buf[o] = '\0';
  *out = buf;
  return 0;
}

bool
kist_path_is_or_under (const char *p, const char *dir)
{
  size_t l = strlen (dir);
  while (l > 1 && dir[l - 1] == '/')
    l--;
  if (l == 1 && dir[0] == '/')
    return true;
  return strncmp (p, dir, l) == 0 && (p[l] == '\0' || p[l] == '/');
}
