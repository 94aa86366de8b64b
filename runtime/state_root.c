/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: the state root (--root, /run/kist, the per-user default) and container
 * ids, with the small helpers the state files share (state_int.h).  See
 * design.md section 6. */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "resolve.h"
#include "state.h"
#include "state_int.h"
#include "util.h"

/* ---- small helpers ------------------------------------------------------ */

int
state_error_plain (struct kist_error **err, int errnum, const char *fmt, ...)
{
  va_list ap;
  bool created = err != NULL && *err == NULL;
  va_start (ap, fmt);
  kist_error_makev (err, 0, fmt, ap);
  va_end (ap);
  if (created && *err)
    (*err)->errnum = errnum;
  return errnum > 0 ? -errnum : -1;
}

char *
state_fd_path (int fd)
{
  char *p = kist_fd_link (fd);
  return p ? p : xstrdup ("?");
}

char *
state_id_for_message (const char *id)
{
  size_t n = strlen (id);
  size_t show = n > 64 ? 64 : n;
  char *out = xmalloc (show * 4 + 8);
  size_t o = 0;
  for (size_t i = 0; i < show; i++)
    {
      unsigned char c = (unsigned char) id[i];
      if (c < 0x20 || c >= 0x7f || c == '`' || c == '\\')
        o += (size_t) sprintf (out + o, "\\x%02x", c);
      else
        out[o++] = (char) c;
    }
  if (show < n)
    {
      memcpy (out + o, "...", 3);
      o += 3;
    }
  out[o] = '\0';
  return out;
}

/* ---- ids ------------------------------------------------------------------ */

int
kist_id_validate (const char *id, struct kist_error **err)
{
  static const char rule[]
      = "an id is 1 to 1024 characters of A-Z a-z 0-9 _ . + - and is not `.` or `..`";
  if (id == NULL || id[0] == '\0')
    return state_error_plain (err, EINVAL, "invalid container id ``: it is empty; %s", rule);
  size_t n = strnlen (id, KIST_ID_MAX + 1);
  if (n > KIST_ID_MAX)
    {
      _cleanup_free_ char *shown = state_id_for_message (id);
      return state_error_plain (err, EINVAL,
                                      "invalid container id `%s`: it is %zu characters long; %s",
                                shown, strlen (id), rule);
    }
  if (strcmp (id, ".") == 0 || strcmp (id, "..") == 0)
    return state_error_plain (err, EINVAL, "invalid container id `%s`: %s", id, rule);
  for (size_t i = 0; i < n; i++)
    {
      unsigned char c = (unsigned char) id[i];
      if (!(isascii (c) && (isalnum (c) || c == '_' || c == '.' || c == '+' || c == '-')))
        {
          _cleanup_free_ char *shown = state_id_for_message (id);
          return state_error_plain (err, EINVAL,
                                    "invalid container id `%s`: character %zu is not allowed; %s",
                                    shown, i + 1, rule);
        }
    }
  return 0;
}

/* ---- the state root ------------------------------------------------------- */

/* May a symlink that is a parent component of the state root be followed?
 * Only one that root or we own, in a directory (dirfd) that root or we own
 * and that others cannot write to (or that is sticky, so that only the
 * link's owner can replace it): then nobody else can have planted it. */
static bool
trusted_link (int dirfd, const struct stat *link)
{
  struct stat d;
  uid_t me = geteuid ();
  if (link->st_uid != 0 && link->st_uid != me)
    return false;
  if (fstat (dirfd, &d) < 0 || (d.st_uid != 0 && d.st_uid != me))
    return false;
  return !(d.st_mode & (S_IWGRP | S_IWOTH)) || (d.st_mode & S_ISVTX);
}

/* Open the state root, creating missing components (parents 0711, the root
 * itself 0700), one component at a time from / (or the cwd) with O_NOFOLLOW:
 * no symlink is followed except a trusted parent link (trusted_link), and
 * never the last component, so `--root LINK/.` cannot name the target of
 * LINK.  "." components are skipped and ".." is refused. */
static int
walk_root (const char *path, struct kist_error **err)
{
  _cleanup_free_ char *copy = xstrdup (path);
  _cleanup_free_ char **comp = xcalloc (strlen (path) + 1, sizeof (char *));
  size_t n = 0;
  char *save = NULL;
  for (char *c = strtok_r (copy, "/", &save); c; c = strtok_r (NULL, "/", &save))
    {
      if (strcmp (c, ".") == 0)
        continue;
      if (strcmp (c, "..") == 0)
        return kist_error_make (err, EINVAL,
                                "state root `%s`: kist refuses `..` in the path of the state "
                                "root (it could lead through a symbolic link): pass the real "
                                "path with --root",
                                path);
      comp[n++] = c;
    }
  /* Every component there and no symbolic link anywhere (the usual case):
   * one openat2 opens what the walk below would.  Anything else (a missing
   * component to create, a trusted parent link, an error to explain, a
   * kernel before 5.6): the walk. */
  int fast = kist_openat2 (AT_FDCWD, path, O_RDONLY | O_DIRECTORY, 0, RESOLVE_NO_SYMLINKS);
  if (fast >= 0)
    return fast;
  /* Parents are opened O_PATH: walking needs only search permission on
   * them, as path lookup does. */
  _cleanup_close_ int fd = open (path[0] == '/' ? "/" : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return kist_error_make (err, errno, "state root `%s`: open `%s`", path,
                            path[0] == '/' ? "/" : ".");
  if (n == 0)
    {
      /* `--root /` or `--root .`: the directory itself, readable. */
      close (fd);
      fd = open (path[0] == '/' ? "/" : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (fd < 0)
        return kist_error_make (err, errno, "open the state root `%s`", path);
    }
  /* The path up to the current component, for messages. */
  _cleanup_free_ char *so_far = xstrdup (path[0] == '/' ? "" : ".");
  for (size_t i = 0; i < n; i++)
    {
      bool last = i + 1 == n;
      char *next = xasprintf ("%s/%s", so_far, comp[i]);
      free (so_far);
      so_far = next;
      struct stat st;
      int tries = 0;
      while (fstatat (fd, comp[i], &st, AT_SYMLINK_NOFOLLOW) < 0)
        {
          int e = errno;
          if (e != ENOENT || tries++ > 2)
            return kist_error_make (err, e, "state root `%s`: stat `%s`", path, so_far);
          if (mkdirat (fd, comp[i], last ? 0700 : 0711) < 0 && errno != EEXIST)
            return kist_error_make (err, errno, "state root `%s`: create the directory `%s`",
                                    path, so_far);
        }
      int flags = (last ? O_RDONLY : O_PATH) | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW;
      if (S_ISLNK (st.st_mode))
        {
          char target[PATH_MAX];
          ssize_t tl = readlinkat (fd, comp[i], target, sizeof target - 1);
          target[tl > 0 ? tl : 0] = '\0';
          if (last)
            return kist_error_make (err, ELOOP,
                                    "state root `%s` is a symbolic link (`%s` -> `%s`); kist "
                                    "refuses to follow it: pass the real directory with --root "
                                    "(e.g. --root \"$(realpath %s)\")",
                                    path, so_far, target, so_far);
          if (!trusted_link (fd, &st))
            return kist_error_make (err, ELOOP,
                                    "state root `%s`: the component `%s` is a symbolic link "
                                    "(-> `%s`) owned by uid %u or in a directory others can "
                                    "write; kist follows only links owned by root or by itself "
                                    "in directories nobody else can write: pass the real path "
                                    "with --root",
                                    path, so_far, target, (unsigned) st.st_uid);
          flags &= ~O_NOFOLLOW;
        }
      else if (!S_ISDIR (st.st_mode))
        return kist_error_make (err, ENOTDIR, "state root `%s`: `%s` is not a directory", path,
                                so_far);
      int nfd = openat (fd, comp[i], flags);
      if (nfd < 0)
        {
          int e = errno;
          if (e == ELOOP)
            return kist_error_make (err, e,
                                    "state root `%s`: `%s` became a symbolic link while kist "
                                    "opened it; kist refuses to follow it",
                                    path, so_far);
          return kist_error_make (err, e, "open the state root `%s` (at `%s`)", path, so_far);
        }
      close (fd);
      fd = nfd;
    }
  return steal_fd (&fd);
}

/* XDG_RUNTIME_DIR must be an absolute path to a real directory (not a
 * symlink) that we own. */
static int
check_xdg_runtime_dir (const char *xdg, struct kist_error **err)
{
  uid_t uid = geteuid ();
  struct stat st;
  if (xdg[0] != '/')
    return kist_error_make (err, 0,
                            "no state root: XDG_RUNTIME_DIR=`%s` is not an absolute path; fix "
                            "XDG_RUNTIME_DIR, unset it (kist then uses /tmp/kist-%u) or pass "
                            "--root DIR",
                            xdg, (unsigned) uid);
  if (lstat (xdg, &st) < 0)
    return kist_error_make (err, errno,
                            "no state root: XDG_RUNTIME_DIR=`%s`; create it, unset "
                            "XDG_RUNTIME_DIR (kist then uses /tmp/kist-%u) or pass --root DIR",
                            xdg, (unsigned) uid);
  if (S_ISLNK (st.st_mode))
    return kist_error_make (err, ELOOP,
                            "no state root: XDG_RUNTIME_DIR=`%s` is a symbolic link; kist refuses "
                            "to follow it: set XDG_RUNTIME_DIR to the real directory or pass "
                            "--root DIR",
                            xdg);
  if (!S_ISDIR (st.st_mode))
    return kist_error_make (err, ENOTDIR, "no state root: XDG_RUNTIME_DIR=`%s` is not a directory",
                            xdg);
  if (st.st_uid != uid)
    return kist_error_make (err, EPERM,
                            "no state root: XDG_RUNTIME_DIR=`%s` is owned by uid %u, not by us "
                            "(uid %u; inherited from another user, e.g. through su?): unset it "
                            "(kist then uses /tmp/kist-%u), set it to your own runtime directory "
                            "or pass --root DIR",
                            xdg, (unsigned) st.st_uid, (unsigned) uid, (unsigned) uid);
  return 0;
}

/* TMPBASE/kist-UID: created 0700 if missing; an existing one must be a real
 * directory owned by uid with no group/other bits. */
static int
check_tmp_root (const char *path, struct kist_error **err)
{
  uid_t uid = geteuid ();
  struct stat st;
  if (mkdir (path, 0700) < 0 && errno != EEXIST)
    return kist_error_make (err, errno,
                            "state root: create the per-user directory `%s` (XDG_RUNTIME_DIR "
                            "is not set); set XDG_RUNTIME_DIR or pass --root DIR",
                            path);
  _cleanup_close_ int fd = open (path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    {
      int e = errno;
      if (e == ELOOP || e == ENOTDIR)
        {
          bool link = lstat (path, &st) == 0 && S_ISLNK (st.st_mode);
          return kist_error_make (err, e,
                                  "state root `%s` is %s, not a directory kist made: another "
                                  "user may have planted it; remove it (`rm %s`) or set "
                                  "XDG_RUNTIME_DIR or pass --root DIR",
                                  path, link ? "a symbolic link" : "not a directory", path);
        }
      return kist_error_make (err, e, "open the state root `%s`", path);
    }
  if (fstat (fd, &st) < 0)
    return kist_error_make (err, errno, "stat the state root `%s`", path);
  if (st.st_uid != uid)
    return kist_error_make (err, EPERM,
                            "state root `%s` is owned by uid %u, not by us (uid %u): another "
                            "user may have planted it; have it removed, or set XDG_RUNTIME_DIR "
                            "or pass --root DIR",
                            path, (unsigned) st.st_uid, (unsigned) uid);
  if (st.st_mode & 077)
    return kist_error_make (err, EPERM,
                            "state root `%s` has group or other permissions (mode %04o): run "
                            "`chmod 0700 %s`, or set XDG_RUNTIME_DIR or pass --root DIR",
                            path, (unsigned) (st.st_mode & 07777), path);
  return 0;
}

int
kist_state_user_root (const char *tmpbase, char **path, struct kist_error **err)
{
  const char *xdg = getenv ("XDG_RUNTIME_DIR");
  *path = NULL;
  if (xdg != NULL && xdg[0] != '\0')
    {
      if (check_xdg_runtime_dir (xdg, err) < 0)
        return -1;
      *path = xasprintf ("%s%skist", xdg, xdg[strlen (xdg) - 1] == '/' ? "" : "/");
      return 0;
    }
  _cleanup_free_ char *p = xasprintf ("%s/kist-%u", tmpbase, (unsigned) geteuid ());
  if (check_tmp_root (p, err) < 0)
    return -1;
  *path = steal_pointer (&p);
  return 0;
}

int
kist_state_root_open (const char *root, char **resolved, struct kist_error **err)
{
  _cleanup_free_ char *path = NULL;

  if (root != NULL && root[0] != '\0')
    path = xstrdup (root);
  else if (geteuid () == 0)
    path = xstrdup ("/run/kist");
  else if (kist_state_user_root ("/tmp", &path, err) < 0)
    return -1;

  /* Trailing slashes would make the kernel follow a final symlink even with
   * O_NOFOLLOW. */
  size_t n = strlen (path);
  while (n > 1 && path[n - 1] == '/')
    path[--n] = '\0';

  _cleanup_close_ int fd = walk_root (path, err);
  if (fd < 0)
    return -1;

  struct stat st;
  if (fstat (fd, &st) < 0)
    return kist_error_make (err, errno, "stat the state root `%s`", path);
  if (!S_ISDIR (st.st_mode))
    return kist_error_make (err, ENOTDIR, "state root `%s`", path);
  if (st.st_uid != geteuid ())
    return kist_error_make (err, EPERM,
                            "state root `%s` is owned by uid %u, not by us (uid %u): use --root "
                            "with a directory you own",
                            path, (unsigned) st.st_uid, (unsigned) geteuid ());
  if (st.st_mode & (S_IWGRP | S_IWOTH))
    return kist_error_make (err, EPERM,
                            "state root `%s` is writable by group or others (mode %04o): run "
                            "`chmod go-w %s` or use another --root",
                            path, (unsigned) (st.st_mode & 07777), path);

  if (resolved)
    {
      /* The canonical path of what we actually opened. */
      char *real = kist_fd_realpath (fd);
      if (real == NULL && (real = realpath (path, NULL)) == NULL)
        return kist_error_make (err, errno, "state root `%s`: realpath", path);
      *resolved = real;
    }
  return steal_fd (&fd);
}
