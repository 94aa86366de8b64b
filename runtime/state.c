/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: the state root, per-container state directories (locked with flock),
 * state.json, liveness and the OCI state JSON.  See design.md section 6. */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup.h"
#include "json.h"
#include "sha256.h"
#include "state.h"
#include "util.h"

#define KIST_STATE_FILE "state.json"
#define KIST_STATE_FILE_VERSION 1
/* state.json carries the config's annotations; the config itself is bounded
 * to 4 MiB (spec.h), so this is ample. */
#define KIST_STATE_MAX_SIZE (8u * 1024 * 1024)
#define KIST_DEFAULT_OCI_VERSION "1.2.0"

/* ---- small helpers ------------------------------------------------------ */

/* Make an error whose message does not end in strerror but keeps errnum. */
static int error_plain (struct kist_error **err, int errnum, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));
static int
error_plain (struct kist_error **err, int errnum, const char *fmt, ...)
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

/* The path of an open fd, for messages ("?" if /proc is unavailable). */
static char *
fd_path (int fd)
{
  char link[64], buf[PATH_MAX];
  snprintf (link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t n = readlink (link, buf, sizeof buf - 1);
  if (n <= 0)
    return xstrdup ("?");
  buf[n] = '\0';
  return xstrdup (buf);
}

/* An id as it may be shown in a message: non-printable bytes escaped,
 * long ids cut. */
static char *
id_for_message (const char *id)
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
    return error_plain (err, EINVAL, "invalid container id ``: it is empty; %s", rule);
  size_t n = strnlen (id, KIST_ID_MAX + 1);
  if (n > KIST_ID_MAX)
    {
      _cleanup_free_ char *shown = id_for_message (id);
      return error_plain (err, EINVAL, "invalid container id `%s`: it is %zu characters long; %s",
                          shown, strlen (id), rule);
    }
  if (strcmp (id, ".") == 0 || strcmp (id, "..") == 0)
    return error_plain (err, EINVAL, "invalid container id `%s`: %s", id, rule);
  for (size_t i = 0; i < n; i++)
    {
      unsigned char c = (unsigned char) id[i];
      if (!(isascii (c) && (isalnum (c) || c == '_' || c == '.' || c == '+' || c == '-')))
        {
          _cleanup_free_ char *shown = id_for_message (id);
          return error_plain (err, EINVAL,
                              "invalid container id `%s`: character %zu is not allowed; %s", shown,
                              i + 1, rule);
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
      _cleanup_free_ char *real = fd_path (fd);
      if (real[0] != '/')
        {
          free (real);
          real = realpath (path, NULL);
          if (real == NULL)
            return kist_error_make (err, errno, "state root `%s`: realpath", path);
        }
      *resolved = steal_pointer (&real);
    }
  return steal_fd (&fd);
}

/* ---- per-container directories ------------------------------------------ */

static int
lock_dir (int fd, const char *id, struct kist_error **err)
{
  while (flock (fd, LOCK_EX) < 0)
    {
      if (errno == EINTR)
        continue;
      _cleanup_free_ char *shown = id_for_message (id);
      return kist_error_make (err, errno, "lock the state directory of container `%s`", shown);
    }
  return 0;
}

/* The directory of a container in the state root.  Ids may be 1024
 * characters, file names only 255: an id longer than KIST_STATE_NAME_MAX is
 * stored under "@" + the hex SHA-256 of the id ('@' is not an id character,
 * so the two forms cannot collide); state.json keeps the real id. */
#define KIST_STATE_NAME_MAX 200
static const char *
dir_name (const char *id, char buf[static 2 * KIST_SHA256_LEN + 2])
{
  if (strlen (id) <= KIST_STATE_NAME_MAX)
    return id;
  uint8_t digest[KIST_SHA256_LEN];
  kist_sha256 (id, strlen (id), digest);
  buf[0] = '@';
  kist_sha256_hex (digest, buf + 1);
  return buf;
}

static bool
is_hashed_name (const char *name)
{
  if (name[0] != '@' || strlen (name) != 2 * KIST_SHA256_LEN + 1)
    return false;
  for (const char *p = name + 1; *p; p++)
    if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
      return false;
  return true;
}

/* A state dir (fd, just opened with O_NOFOLLOW) must be ours: a directory
 * owned by the euid that nobody else can write to.  One that another user
 * planted (the bubblewrap CVE-2019-12439 class) is refused, never used. */
static int
check_state_dir (int fd, int rootfd, const char *id, struct kist_error **err)
{
  struct stat st;
  if (fstat (fd, &st) < 0)
    return kist_error_make (err, errno, "stat the state directory of container `%s`", id);
  if (st.st_uid == geteuid () && !(st.st_mode & (S_IWGRP | S_IWOTH)))
    return 0;
  _cleanup_free_ char *root = fd_path (rootfd);
  _cleanup_free_ char *shown = id_for_message (id);
  if (st.st_uid != geteuid ())
    return error_plain (err, EPERM,
                        "state directory `%s/%s` is owned by uid %u, not by us (uid %u): kist "
                        "did not make it (another user may have planted it); kist refuses to "
                        "use it: inspect it and remove it by hand",
                        root, shown, (unsigned) st.st_uid, (unsigned) geteuid ());
  return error_plain (err, EPERM,
                      "state directory `%s/%s` is writable by group or others (mode %04o): kist "
                      "never makes it so and refuses to use it: inspect it and remove it by hand",
                      root, shown, (unsigned) (st.st_mode & 07777));
}

/* Why does ROOT/NAME already exist: a message for create. */
static int
exists_error (int rootfd, const char *name, const char *id, struct kist_error **err)
{
  struct stat st;
  _cleanup_free_ char *shown = id_for_message (id);
  if (fstatat (rootfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK (st.st_mode))
    {
      _cleanup_free_ char *root = fd_path (rootfd);
      return error_plain (err, EEXIST,
                          "container `%s` cannot be created: its state entry `%s/%s` is a "
                          "symbolic link, which kist never makes (planted?): remove it by hand",
                          shown, root, shown);
    }
  if (fstatat (rootfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_uid != geteuid ())
    {
      _cleanup_free_ char *root = fd_path (rootfd);
      return error_plain (err, EEXIST,
                          "container `%s` cannot be created: its state directory `%s/%s` "
                          "exists and is owned by uid %u, not by us (planted?): remove it by "
                          "hand",
                          shown, root, shown, (unsigned) st.st_uid);
    }
  return error_plain (err, EEXIST, "container `%s` already exists", shown);
}

#define KIST_STATE_TMP_PREFIX "@creating-"

static bool
is_temp_name (const char *name)
{
  return strncmp (name, KIST_STATE_TMP_PREFIX, strlen (KIST_STATE_TMP_PREFIX)) == 0;
}

/* The PID of a temporary dir name @creating-DIRNAME.PID.N, 0 if none. */
static pid_t
temp_name_pid (const char *name)
{
  const char *last = strrchr (name, '.');
  if (last == NULL || last == name)
    return 0;
  const char *p = last - 1;
  while (p > name && isdigit ((unsigned char) *p))
    p--;
  if (*p != '.' || p + 1 == last)
    return 0;
  int pid = 0;
  _cleanup_free_ char *num = strndup (p + 1, (size_t) (last - p - 1));
  if (num == NULL || kist_parse_int (num, &pid) < 0 || pid <= 0)
    return 0;
  return (pid_t) pid;
}

/* Is NAME the temporary dir of a create of ID: @creating-DIRNAME.PID.N? */
static bool
temp_name_of (const char *name, const char *id)
{
  char hb[2 * KIST_SHA256_LEN + 2];
  const char *dn = dir_name (id, hb);
  size_t pl = strlen (KIST_STATE_TMP_PREFIX), dl = strlen (dn);
  if (strncmp (name, KIST_STATE_TMP_PREFIX, pl) != 0 || strncmp (name + pl, dn, dl) != 0
      || name[pl + dl] != '.')
    return false;
  unsigned pid = 0, n = 0;
  int used = 0;
  return sscanf (name + pl + dl + 1, "%u.%u%n", &pid, &n, &used) == 2
         && name[pl + dl + 1 + used] == '\0' && isdigit ((unsigned char) name[pl + dl + 1]);
}

static int remove_state_dir (int rootfd, const char *name, const char *shown,
                             struct kist_error **err);

/* Without RENAME_NOREPLACE (a file system that lacks it): mkdir in place,
 * lock, write.  Between the mkdir and the flock `kist gc` may see the dir
 * unlocked and without state.json, and remove it: that is detected. */
static int
create_in_place (int rootfd, const char *name, const char *id, const struct kist_state *initial,
                 int *dirfd, struct kist_error **err)
{
  if (mkdirat (rootfd, name, 0700) < 0)
    {
      int e = errno;
      if (e == EEXIST)
        return exists_error (rootfd, name, id, err);
      _cleanup_free_ char *root = fd_path (rootfd);
      return kist_error_make (err, e, "create the state directory `%s/%s`", root, id);
    }
  _cleanup_close_ int fd = openat (rootfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    {
      int e = errno;
      unlinkat (rootfd, name, AT_REMOVEDIR);
      _cleanup_free_ char *root = fd_path (rootfd);
      return kist_error_make (err, e, "open the new state directory `%s/%s`", root, id);
    }
  if (lock_dir (fd, id, err) < 0)
    {
      unlinkat (rootfd, name, AT_REMOVEDIR);
      return -1;
    }
  /* `kist gc` may have removed it (unlocked, without state.json) before our
   * flock. */
  struct stat st;
  if (fstat (fd, &st) < 0 || st.st_nlink == 0)
    return error_plain (err, EAGAIN,
                        "the new state directory of container `%s` was removed concurrently (by "
                        "`kist gc`?): try again",
                        id);
  if (initial && kist_state_write (fd, initial, err) < 0)
    {
      remove_state_dir (rootfd, name, id, NULL);
      return -1;
    }
  *dirfd = steal_fd (&fd);
  return 0;
}

int
kist_state_create (int rootfd, const char *id, int *dirfd, struct kist_error **err)
{
  return kist_state_create_with (rootfd, id, NULL, dirfd, err);
}

int
kist_state_create_with (int rootfd, const char *id, const struct kist_state *initial, int *dirfd,
                        struct kist_error **err)
{
  static unsigned counter;
  char hb[2 * KIST_SHA256_LEN + 2];
  if (kist_id_validate (id, err) < 0)
    return -EINVAL;
  const char *name = dir_name (id, hb);
  struct stat st;
  if (fstatat (rootfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
    return exists_error (rootfd, name, id, err);

  _cleanup_free_ char *tmp
      = xasprintf (KIST_STATE_TMP_PREFIX "%s.%d.%u", name, (int) getpid (), counter++);
  if (mkdirat (rootfd, tmp, 0700) < 0)
    {
      int e = errno;
      _cleanup_free_ char *root = fd_path (rootfd);
      return kist_error_make (err, e,
                              "create the state directory of container `%s` in `%s`%s", id, root,
                              e == ENOSPC || e == EDQUOT
                                  ? ": the file system of the state root is full; free space "
                                    "there (or use another --root)"
                                  : "");
    }
  _cleanup_close_ int fd = openat (rootfd, tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    {
      int e = errno;
      unlinkat (rootfd, tmp, AT_REMOVEDIR);
      _cleanup_free_ char *root = fd_path (rootfd);
      return kist_error_make (err, e, "open the new state directory `%s/%s`", root, tmp);
    }
  if (lock_dir (fd, id, err) < 0 || (initial && kist_state_write (fd, initial, err) < 0))
    {
      _cleanup_error_ struct kist_error *rerr = NULL;
      if (remove_state_dir (rootfd, tmp, tmp, &rerr) < 0)
        kist_error_wrap (err, "(and its temporary state directory stays: %s)", rerr->msg);
      return -1;
    }
  if (renameat2 (rootfd, tmp, rootfd, name, RENAME_NOREPLACE) < 0)
    {
      int e = errno;
      remove_state_dir (rootfd, tmp, tmp, NULL);
      if (e == EEXIST || e == ENOTEMPTY)
        return exists_error (rootfd, name, id, err);
      if (e == EINVAL || e == ENOSYS)
        return create_in_place (rootfd, name, id, initial, dirfd, err);
      _cleanup_free_ char *root = fd_path (rootfd);
      return kist_error_make (err, e, "rename the new state directory `%s/%s` to `%s`", root, tmp,
                              id);
    }
  *dirfd = steal_fd (&fd);
  return 0;
}

int
kist_state_sweep_temp (int rootfd, const char *only_id, bool dry_run, char ***names,
                       struct kist_error **err)
{
  _cleanup_strv_ char **v = xcalloc (1, sizeof (char *));
  size_t n = 0;
  *names = NULL;
  int fd = openat (rootfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return kist_error_make (err, errno, "open the state root");
  _cleanup_dir_ DIR *d = fdopendir (fd);
  if (d == NULL)
    {
      int e = errno;
      close (fd);
      return kist_error_make (err, e, "read the state root");
    }
  struct dirent *de;
  while ((de = readdir (d)) != NULL)
    {
      if (!is_temp_name (de->d_name))
        continue;
      _cleanup_close_ int tfd
          = openat (rootfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (tfd < 0 || check_state_dir (tfd, rootfd, de->d_name, NULL) < 0)
        continue;
      /* Locked, or its kist still lives (between its mkdir and its flock):
       * its create is still running. */
      pid_t owner = temp_name_pid (de->d_name);
      if (owner > 0 && (kill (owner, 0) == 0 || errno == EPERM))
        continue;
      if (flock (tfd, LOCK_EX | LOCK_NB) < 0)
        continue;
      if (only_id && !temp_name_of (de->d_name, only_id))
        continue;
      if (!dry_run && remove_state_dir (rootfd, de->d_name, de->d_name, err) < 0)
        return -1;
      v = xrealloc (v, (n + 2) * sizeof (char *));
      v[n++] = xstrdup (de->d_name);
      v[n] = NULL;
    }
  *names = steal_pointer (&v);
  return 0;
}

int
kist_state_open (int rootfd, const char *id, int *dirfd, struct kist_error **err)
{
  char hb[2 * KIST_SHA256_LEN + 2];
  if (kist_id_validate (id, err) < 0)
    return -EINVAL;
  const char *name = dir_name (id, hb);
  _cleanup_close_ int fd = openat (rootfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    {
      int e = errno;
      if (e == ENOENT)
        return error_plain (err, ENOENT, "container `%s` does not exist", id);
      _cleanup_free_ char *root = fd_path (rootfd);
      if (e == ELOOP || e == ENOTDIR)
        return kist_error_make (err, e,
                                "state entry `%s/%s` is a symbolic link or not a directory, "
                                "which kist never makes (planted?): kist refuses to use it; "
                                "remove it by hand",
                                root, id);
      return kist_error_make (err, e, "open the state directory `%s/%s`", root, id);
    }
  if (check_state_dir (fd, rootfd, id, err) < 0 || lock_dir (fd, id, err) < 0)
    return -1;
  /* A concurrent delete may have removed it while we waited for the lock. */
  struct stat st;
  if (fstat (fd, &st) < 0)
    return kist_error_make (err, errno, "stat the state directory of container `%s`", id);
  if (st.st_nlink == 0)
    return error_plain (err, ENOENT, "container `%s` does not exist (it was just deleted)", id);
  *dirfd = steal_fd (&fd);
  return 0;
}

int
kist_state_remove (int rootfd, const char *id, struct kist_error **err)
{
  char hb[2 * KIST_SHA256_LEN + 2];
  if (kist_id_validate (id, err) < 0)
    return -EINVAL;
  return remove_state_dir (rootfd, dir_name (id, hb), id, err);
}

/* Remove ROOT/NAME (regular files only) and verify it is gone; id names it
 * in messages. */
static int
remove_state_dir (int rootfd, const char *name, const char *id, struct kist_error **err)
{
  _cleanup_free_ char *root = fd_path (rootfd);
  /* No lock here: the caller holds it through its own kist_state_open fd (a
   * second flock on another open file description would deadlock). */
  int fd = openat (rootfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    {
      int e = errno;
      if (e == ENOENT)
        return error_plain (err, ENOENT, "container `%s` does not exist", id);
      return kist_error_make (err, e, "open the state directory `%s/%s`", root, id);
    }
  _cleanup_dir_ DIR *d = fdopendir (fd);
  if (d == NULL)
    {
      int e = errno;
      close (fd);
      return kist_error_make (err, e, "read the state directory `%s/%s`", root, id);
    }

  /* First pass: refuse anything we would have to recurse into, before
   * removing anything. */
  for (int pass = 0; pass < 2; pass++)
    {
      rewinddir (d);
      for (;;)
        {
          errno = 0;
          struct dirent *de = readdir (d);
          if (de == NULL)
            break;
          if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
            continue;
          if (pass == 0)
            {
              struct stat st;
              if (fstatat (dirfd (d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                {
                  if (errno == ENOENT)
                    continue;
                  return kist_error_make (err, errno, "stat `%s/%s/%s`", root, id, de->d_name);
                }
              if (S_ISDIR (st.st_mode))
                return kist_error_make (err, EISDIR,
                                        "state directory `%s/%s` contains the directory `%s`, "
                                        "which kist never creates; refusing to remove it "
                                        "recursively (it may be a mount point): inspect and "
                                        "remove it by hand",
                                        root, id, de->d_name);
            }
          else if (strcmp (de->d_name, KIST_STATE_FILE) != 0
                   && unlinkat (dirfd (d), de->d_name, 0) < 0 && errno != ENOENT)
            return kist_error_make (err, errno, "remove `%s/%s/%s`", root, id, de->d_name);
        }
      if (errno != 0)
        return kist_error_make (err, errno, "read the state directory `%s/%s`", root, id);
    }
  /* state.json goes last: a kist killed in the middle leaves the record
   * (or an empty dir, which `kist gc` removes). */
  if (unlinkat (dirfd (d), KIST_STATE_FILE, 0) < 0 && errno != ENOENT)
    return kist_error_make (err, errno, "remove `%s/%s/%s`", root, id, KIST_STATE_FILE);

  if (unlinkat (rootfd, name, AT_REMOVEDIR) < 0)
    return kist_error_make (err, errno, "remove the state directory `%s/%s`", root, id);

  struct stat st;
  if (fstatat (rootfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
    return kist_error_make (err, EEXIST,
                            "state directory `%s/%s` still exists after removing it (recreated "
                            "concurrently?)",
                            root, id);
  if (errno != ENOENT)
    return kist_error_make (err, errno, "verify that `%s/%s` is gone", root, id);
  return 0;
}

int
kist_state_peek (int rootfd, const char *id, struct kist_state *s, struct kist_error **err)
{
  char hb[2 * KIST_SHA256_LEN + 2];
  memset (s, 0, sizeof *s);
  if (kist_id_validate (id, err) < 0)
    return -EINVAL;
  _cleanup_close_ int fd
      = openat (rootfd, dir_name (id, hb), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    {
      int e = errno;
      if (e == ENOENT)
        return error_plain (err, ENOENT, "container `%s` does not exist", id);
      _cleanup_free_ char *root = fd_path (rootfd);
      return kist_error_make (err, e, "open the state directory `%s/%s`", root, id);
    }
  if (check_state_dir (fd, rootfd, id, err) < 0)
    return -1;
  return kist_state_read (fd, s, err);
}

int
kist_state_busy (int rootfd, const char *id, struct kist_error **err)
{
  char hb[2 * KIST_SHA256_LEN + 2];
  if (kist_id_validate (id, err) < 0)
    return -EINVAL;
  _cleanup_close_ int fd
      = openat (rootfd, dir_name (id, hb), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    {
      _cleanup_free_ char *root = fd_path (rootfd);
      return kist_error_make (err, errno, "open the state directory `%s/%s`", root, id);
    }
  if (check_state_dir (fd, rootfd, id, err) < 0)
    return -1;
  /* A shared lock conflicts with the exclusive lock every command holds;
   * it is released when fd is closed. */
  if (flock (fd, LOCK_SH | LOCK_NB) == 0)
    return 0;
  if (errno == EWOULDBLOCK)
    return 1;
  return kist_error_make (err, errno, "test the lock of container `%s`", id);
}

/* ---- state.json ----------------------------------------------------------- */

/* yajl_gen_string with UTF-8 validation on: a field that is not UTF-8
 * cannot be stored (yajl_tree would refuse to read it back). */
static int
gen_field_str (yajl_gen g, const char *key, const char *val, struct kist_error **err)
{
  if (val == NULL)
    return 0;
  yajl_gen_string (g, (const unsigned char *) key, strlen (key));
  if (yajl_gen_string (g, (const unsigned char *) val, strlen (val)) != yajl_gen_status_ok)
    return kist_error_make (err, EILSEQ,
                            "state.json: field `%s` is not valid UTF-8; kist stores paths and "
                            "names as UTF-8 (rename the bundle or id)",
                            key);
  return 0;
}

static void
gen_field_int (yajl_gen g, const char *key, long long v)
{
  yajl_gen_string (g, (const unsigned char *) key, strlen (key));
  yajl_gen_integer (g, v);
}

/* Re-emit a parsed JSON value into g. */
static void
gen_tree (yajl_gen g, yajl_val v)
{
  if (v == NULL || YAJL_IS_NULL (v))
    yajl_gen_null (g);
  else if (YAJL_IS_TRUE (v))
    yajl_gen_bool (g, 1);
  else if (YAJL_IS_FALSE (v))
    yajl_gen_bool (g, 0);
  else if (YAJL_IS_STRING (v))
    yajl_gen_string (g, (const unsigned char *) v->u.string, strlen (v->u.string));
  else if (YAJL_IS_NUMBER (v))
    yajl_gen_number (g, v->u.number.r, strlen (v->u.number.r));
  else if (YAJL_IS_ARRAY (v))
    {
      yajl_gen_array_open (g);
      for (size_t i = 0; i < v->u.array.len; i++)
        gen_tree (g, v->u.array.values[i]);
      yajl_gen_array_close (g);
    }
  else if (YAJL_IS_OBJECT (v))
    {
      yajl_gen_map_open (g);
      for (size_t i = 0; i < v->u.object.len; i++)
        {
          yajl_gen_string (g, (const unsigned char *) v->u.object.keys[i],
                           strlen (v->u.object.keys[i]));
          gen_tree (g, v->u.object.values[i]);
        }
      yajl_gen_map_close (g);
    }
}

/* annotations_json (a JSON object as text) -> embedded object. */
static int
gen_annotations (yajl_gen g, const char *text, struct kist_error **err)
{
  _cleanup_yajl_ yajl_val v = NULL;
  if (text == NULL || text[0] == '\0')
    return 0;
  if (kist_json_parse (text, strlen (text), "state.json: annotations: ", &v, err) < 0)
    return -1;
  if (!YAJL_IS_OBJECT (v))
    return kist_error_make (err, EINVAL, "state.json: annotations are not a JSON object");
  yajl_gen_string (g, (const unsigned char *) "annotations", strlen ("annotations"));
  gen_tree (g, v);
  return 0;
}

int
kist_state_write (int dirfd, const struct kist_state *s, struct kist_error **err)
{
  _cleanup_yajl_gen_ yajl_gen g = kist_json_gen_new (true, true);

  yajl_gen_map_open (g);
  gen_field_int (g, "kistStateVersion", KIST_STATE_FILE_VERSION);
  if (gen_field_str (g, "id", s->id, err) < 0
      || gen_field_str (g, "ociVersion", s->oci_version, err) < 0
      || gen_field_str (g, "bundle", s->bundle, err) < 0
      || gen_field_str (g, "rootfs", s->rootfs, err) < 0)
    goto fail;
  gen_field_int (g, "pid", s->pid);
  gen_field_int (g, "pidStartTime", (long long) s->pid_start_time);
  yajl_gen_string (g, (const unsigned char *) "started", strlen ("started"));
  yajl_gen_bool (g, s->started);
  if (gen_field_str (g, "created", s->created, err) < 0
      || gen_field_str (g, "owner", s->owner, err) < 0
      || gen_field_str (g, "cgroupPath", s->cgroup_path, err) < 0
      || gen_field_str (g, "cgroupCreated", s->cgroup_created, err) < 0
      || gen_annotations (g, s->annotations_json, err) < 0)
    goto fail;
  gen_field_int (g, "deadline", s->deadline);
  gen_field_int (g, "kistPid", s->kist_pid);
  gen_field_int (g, "kistPidStartTime", (long long) s->kist_pid_start_time);
  if (s->creating)
    {
      yajl_gen_string (g, (const unsigned char *) "creating", strlen ("creating"));
      yajl_gen_bool (g, 1);
    }
  if (s->creator_pid > 0)
    {
      gen_field_int (g, "creatorPid", s->creator_pid);
      gen_field_int (g, "creatorPidStartTime", (long long) s->creator_start_time);
    }
  yajl_gen_map_close (g);

  {
    _cleanup_free_ char *json = kist_json_gen_take (g);
    size_t n = strlen (json);
    json = xrealloc (json, n + 2);
    json[n] = '\n';
    json[n + 1] = '\0';
    if (kist_write_file_atomic (dirfd, KIST_STATE_FILE, json, n + 1, 0600, err) < 0)
      goto fail;
  }
  return 0;

fail:
  {
    _cleanup_free_ char *dir = fd_path (dirfd);
    bool full = err && *err && ((*err)->errnum == ENOSPC || (*err)->errnum == EDQUOT);
    return kist_error_wrap (err, "write the state of container `%s` in `%s`%s", s->id ? s->id : "?",
                            dir,
                            full ? " (the file system of the state root is full: free space "
                                   "there or use another --root)"
                                 : "");
  }
}

static int
read_str (yajl_val root, const char *key, char **out, struct kist_error **err)
{
  yajl_val v = kist_json_obj_get (root, key);
  *out = NULL;
  if (v == NULL || YAJL_IS_NULL (v))
    return 0;
  if (!YAJL_IS_STRING (v))
    return kist_error_make (err, EINVAL, "field `%s`: expected a string", key);
  *out = xstrdup (v->u.string);
  return 0;
}

static int
read_int (yajl_val root, const char *key, long long min, long long max, long long *out,
          struct kist_error **err)
{
  yajl_val v = kist_json_obj_get (root, key);
  *out = 0;
  if (v == NULL || YAJL_IS_NULL (v))
    return 0;
  if (!YAJL_IS_INTEGER (v))
    return kist_error_make (err, EINVAL, "field `%s`: expected an integer", key);
  if (YAJL_GET_INTEGER (v) < min || YAJL_GET_INTEGER (v) > max)
    return kist_error_make (err, ERANGE, "field `%s`: %lld is out of range", key,
                            YAJL_GET_INTEGER (v));
  *out = YAJL_GET_INTEGER (v);
  return 0;
}

/* An optional boolean field (absent: false). */
static int
read_bool (yajl_val root, const char *key, bool *out, struct kist_error **err)
{
  yajl_val v = kist_json_obj_get (root, key);
  if (v != NULL && !YAJL_IS_TRUE (v) && !YAJL_IS_FALSE (v))
    return kist_error_make (err, EINVAL, "field `%s`: expected true or false", key);
  *out = YAJL_IS_TRUE (v);
  return 0;
}

void
kist_state_clear (struct kist_state *s)
{
  if (s == NULL)
    return;
  free (s->id);
  free (s->bundle);
  free (s->rootfs);
  free (s->created);
  free (s->owner);
  free (s->cgroup_path);
  free (s->cgroup_created);
  free (s->annotations_json);
  free (s->oci_version);
  memset (s, 0, sizeof *s);
}

static int
state_from_tree (yajl_val root, struct kist_state *s, struct kist_error **err)
{
  long long v;
  if (!YAJL_IS_OBJECT (root))
    return kist_error_make (err, EINVAL, "expected a JSON object");
  if (read_str (root, "id", &s->id, err) < 0
      || read_str (root, "ociVersion", &s->oci_version, err) < 0
      || read_str (root, "bundle", &s->bundle, err) < 0
      || read_str (root, "rootfs", &s->rootfs, err) < 0
      || read_str (root, "created", &s->created, err) < 0
      || read_str (root, "owner", &s->owner, err) < 0
      || read_str (root, "cgroupPath", &s->cgroup_path, err) < 0
      || read_str (root, "cgroupCreated", &s->cgroup_created, err) < 0)
    return -1;
  if (s->id == NULL)
    return kist_error_make (err, EINVAL, "field `id` is missing");

  if (read_int (root, "pid", 0, INT_MAX, &v, err) < 0)
    return -1;
  s->pid = (pid_t) v;
  if (read_int (root, "pidStartTime", 0, LLONG_MAX, &v, err) < 0)
    return -1;
  s->pid_start_time = (uint64_t) v;
  if (read_int (root, "deadline", LLONG_MIN, LLONG_MAX, &v, err) < 0)
    return -1;
  s->deadline = v;
  if (read_int (root, "kistPid", 0, INT_MAX, &v, err) < 0)
    return -1;
  s->kist_pid = (pid_t) v;
  if (read_int (root, "kistPidStartTime", 0, LLONG_MAX, &v, err) < 0)
    return -1;
  s->kist_pid_start_time = (uint64_t) v;

  if (read_bool (root, "started", &s->started, err) < 0
      || read_bool (root, "creating", &s->creating, err) < 0)
    return -1;
  if (read_int (root, "creatorPid", 0, INT_MAX, &v, err) < 0)
    return -1;
  s->creator_pid = (pid_t) v;
  if (read_int (root, "creatorPidStartTime", 0, LLONG_MAX, &v, err) < 0)
    return -1;
  s->creator_start_time = (uint64_t) v;

  yajl_val ann = kist_json_obj_get (root, "annotations");
  if (ann != NULL && !YAJL_IS_NULL (ann))
    {
      if (!YAJL_IS_OBJECT (ann))
        return kist_error_make (err, EINVAL, "field `annotations`: expected an object");
      _cleanup_yajl_gen_ yajl_gen g = kist_json_gen_new (false, false);
      gen_tree (g, ann);
      s->annotations_json = kist_json_gen_take (g);
    }
  return 0;
}

int
kist_state_read (int dirfd, struct kist_state *s, struct kist_error **err)
{
  _cleanup_free_ char *buf = NULL;
  _cleanup_yajl_ yajl_val root = NULL;
  size_t len = 0;
  int ret;

  memset (s, 0, sizeof *s);
  ret = kist_read_file_at (dirfd, KIST_STATE_FILE, KIST_STATE_MAX_SIZE, &buf, &len, err);
  if (ret < 0)
    goto fail;
  {
    _cleanup_free_ char *doc = xasprintf ("`%s`: ", KIST_STATE_FILE);
    if ((ret = kist_json_parse (buf, len, doc, &root, err)) < 0)
      goto fail;
  }
  ret = state_from_tree (root, s, err);
  if (ret < 0)
    {
      kist_error_wrap (err, "`%s`", KIST_STATE_FILE);
      goto fail;
    }
  return 0;

fail:
  kist_state_clear (s);
  {
    _cleanup_free_ char *dir = fd_path (dirfd);
    return kist_error_wrap (err, "read the container state in `%s`", dir);
  }
}

/* ---- liveness ------------------------------------------------------------- */

/* Parse /proc/PID/stat: state letter and start time.  0 on success. */
static int
read_proc_stat (pid_t pid, char *state, uint64_t *start)
{
  char path[64], buf[1024];
  snprintf (path, sizeof path, "/proc/%d/stat", (int) pid);
  _cleanup_close_ int fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -errno;
  ssize_t n = kist_read_all (fd, buf, sizeof buf - 1);
  if (n <= 0)
    return n < 0 ? (int) n : -EIO;
  buf[n] = '\0';
  /* comm may contain spaces and parentheses: the fields start after the
   * last ')'. */
  char *p = strrchr (buf, ')');
  if (p == NULL || p[1] != ' ' || p[2] == '\0')
    return -EIO;
  p += 2;
  *state = *p;
  /* p is field 3; advance to field 22. */
  for (int field = 3; field < 22; field++)
    {
      p = strchr (p, ' ');
      if (p == NULL)
        return -EIO;
      p++;
    }
  char *end = NULL;
  errno = 0;
  unsigned long long v = strtoull (p, &end, 10);
  if (errno || end == p || (*end != ' ' && *end != '\0' && *end != '\n'))
    return -EIO;
  *start = v;
  return 0;
}

uint64_t
kist_pid_start_time (pid_t pid)
{
  char st;
  uint64_t start = 0;
  if (pid <= 0 || read_proc_stat (pid, &st, &start) < 0)
    return 0;
  return start;
}

/* Is pid alive (no zombie) with this start time (0: any)? */
static bool
proc_alive (pid_t pid, uint64_t start_time)
{
  char st = 0;
  uint64_t start = 0;
  if (pid <= 0 || read_proc_stat (pid, &st, &start) < 0)
    return false;
  if (st == 'Z' || st == 'X' || st == 'x')
    return false;
  return start_time == 0 || start == start_time;
}

bool
kist_state_create_abandoned (const struct kist_state *s)
{
  return s != NULL && s->creating
         && !(s->creator_pid > 0 && s->creator_start_time != 0
              && proc_alive (s->creator_pid, s->creator_start_time));
}

bool
kist_state_init_alive (const struct kist_state *s)
{
  if (s == NULL || s->pid <= 0 || (s->creating && s->pid_start_time == 0))
    return false;
  return proc_alive (s->pid, s->pid_start_time);
}

enum kist_status
kist_state_status (const struct kist_state *s)
{
  char st = 0;
  uint64_t start = 0;
  if (s != NULL && s->creating)
    return kist_state_create_abandoned (s) ? KIST_STATUS_STOPPED : KIST_STATUS_CREATING;
  if (s == NULL || s->pid <= 0)
    return KIST_STATUS_STOPPED;
  if (read_proc_stat (s->pid, &st, &start) < 0)
    return KIST_STATUS_STOPPED;
  if (st == 'Z' || st == 'X' || st == 'x')
    return KIST_STATUS_STOPPED;
  if (s->pid_start_time != 0 && start != s->pid_start_time)
    return KIST_STATUS_STOPPED;
  if (s->cgroup_path != NULL && kist_cgroup_is_frozen (s->cgroup_path) == 1)
    return KIST_STATUS_PAUSED;
  return s->started ? KIST_STATUS_RUNNING : KIST_STATUS_CREATED;
}

bool
kist_state_owner_alive (const struct kist_state *s)
{
  char st = 0;
  uint64_t start = 0;
  if (s == NULL || s->kist_pid <= 0)
    return false;
  if (read_proc_stat (s->kist_pid, &st, &start) < 0)
    return false;
  if (st == 'Z' || st == 'X' || st == 'x')
    return false;
  if (s->kist_pid_start_time != 0 && start != s->kist_pid_start_time)
    return false;
  return true;
}

const char *
kist_status_name (enum kist_status st)
{
  switch (st)
    {
    case KIST_STATUS_CREATING:
      return "creating";
    case KIST_STATUS_CREATED:
      return "created";
    case KIST_STATUS_RUNNING:
      return "running";
    case KIST_STATUS_STOPPED:
      return "stopped";
    case KIST_STATUS_PAUSED:
      return "paused";
    }
  return "unknown";
}

/* ---- the cgroup intent ------------------------------------------------------ */

void
kist_state_cgroup_intent (const char *cgroups_path, const char *id, char **scope_abs,
                          char **top_abs)
{
  _cleanup_free_ char *mount = NULL, *own = NULL, *rel = NULL;
  *scope_abs = *top_abs = NULL;
  if (kist_cgroup_mount (&mount, NULL) < 0 || mount == NULL
      || kist_cgroup_own_path (&own, NULL) < 0
      || kist_cgroup_resolve_path (cgroups_path, own ? own : "", id, &rel, NULL) < 0
      || rel == NULL)
    return;
  _cleanup_free_ char *abs = xasprintf ("%s/%s", mount, rel);
  struct stat st;
  if (lstat (abs, &st) == 0 || errno != ENOENT)
    return;
  /* The topmost missing component. */
  _cleanup_free_ char *p = xstrdup (abs);
  for (char *s = p + strlen (mount) + 1; *s; s++)
    {
      if (*s != '/')
        continue;
      *s = '\0';
      if (lstat (p, &st) < 0 && errno == ENOENT)
        {
          *top_abs = steal_pointer (&p);
          break;
        }
      *s = '/';
    }
  if (*top_abs == NULL)
    *top_abs = xstrdup (abs);
  *scope_abs = steal_pointer (&abs);
}

/* ---- OCI state ------------------------------------------------------------ */

char *
kist_state_oci_json (const struct kist_state *s, enum kist_status st)
{
  if (s == NULL)
    return NULL;
  _cleanup_yajl_gen_ yajl_gen g = kist_json_gen_new (true, true);

  yajl_gen_map_open (g);
  kist_json_gen_str_lossy (g, "ociVersion");
  kist_json_gen_str_lossy (g, s->oci_version ? s->oci_version : KIST_DEFAULT_OCI_VERSION);
  kist_json_gen_str_lossy (g, "id");
  kist_json_gen_str_lossy (g, s->id);
  kist_json_gen_str_lossy (g, "status");
  kist_json_gen_str_lossy (g, kist_status_name (st));
  kist_json_gen_str_lossy (g, "pid");
  /* Like runc: 0 once the container is stopped. */
  yajl_gen_integer (g, st == KIST_STATUS_STOPPED ? 0 : s->pid);
  kist_json_gen_str_lossy (g, "bundle");
  kist_json_gen_str_lossy (g, s->bundle);
  kist_json_gen_str_lossy (g, "rootfs");
  kist_json_gen_str_lossy (g, s->rootfs);
  kist_json_gen_str_lossy (g, "created");
  kist_json_gen_str_lossy (g, s->created);
  kist_json_gen_str_lossy (g, "owner");
  kist_json_gen_str_lossy (g, s->owner ? s->owner : "");
  kist_json_gen_str_lossy (g, "annotations");
  {
    _cleanup_yajl_ yajl_val ann = NULL;
    _cleanup_error_ struct kist_error *aerr = NULL;
    if (s->annotations_json && s->annotations_json[0])
      kist_json_parse (s->annotations_json, strlen (s->annotations_json), "", &ann, &aerr);
    if (YAJL_IS_OBJECT (ann))
      gen_tree (g, ann);
    else
      {
        yajl_gen_map_open (g);
        yajl_gen_map_close (g);
      }
  }
  yajl_gen_map_close (g);
  return kist_json_gen_take (g);
}

/* ---- listing -------------------------------------------------------------- */

static int
cmp_str (const void *a, const void *b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

int
kist_state_list (int rootfd, char ***ids, struct kist_error **err)
{
  _cleanup_strv_ char **v = NULL;
  size_t n = 0, cap = 0;
  /* A fresh open file description: readdir must not move rootfd's offset. */
  int fd = openat (rootfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    {
      _cleanup_free_ char *root = fd_path (rootfd);
      return kist_error_make (err, errno, "open the state root `%s`", root);
    }
  _cleanup_dir_ DIR *d = fdopendir (fd);
  if (d == NULL)
    {
      int e = errno;
      close (fd);
      return kist_error_make (err, e, "read the state root");
    }
  v = xcalloc (1, sizeof (char *));
  for (;;)
    {
      struct stat st;
      errno = 0;
      struct dirent *de = readdir (d);
      if (de == NULL)
        break;
      bool hashed = is_hashed_name (de->d_name);
      if (!hashed && kist_id_validate (de->d_name, NULL) < 0)
        continue;
      if (fstatat (dirfd (d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR (st.st_mode))
        continue;
      char *id = NULL;
      if (hashed)
        {
          /* The real id is in state.json (read without the lock: a listing). */
          _cleanup_close_ int sfd
              = openat (dirfd (d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
          struct kist_state st2 = { 0 };
          if (sfd < 0 || kist_state_read (sfd, &st2, NULL) < 0 || st2.id == NULL)
            {
              kist_state_clear (&st2);
              continue;
            }
          id = steal_pointer (&st2.id);
          kist_state_clear (&st2);
        }
      if (n + 1 >= cap)
        {
          cap = cap ? cap * 2 : 16;
          v = xrealloc (v, cap * sizeof (char *));
        }
      v[n++] = id ? id : xstrdup (de->d_name);
      v[n] = NULL;
    }
  if (errno != 0)
    {
      _cleanup_free_ char *root = fd_path (rootfd);
      return kist_error_make (err, errno, "read the state root `%s`", root);
    }
  qsort (v, n, sizeof (char *), cmp_str);
  *ids = steal_pointer (&v);
  return 0;
}
