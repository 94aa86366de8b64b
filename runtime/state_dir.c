/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: the per-container state directories ROOT/ID: exclusive create
 * (through a locked temporary dir renamed into place), open with the flock,
 * removal, and the lock-free peek and busy test.  See design.md section 6. */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsremove.h"
#include "sha256.h"
#include "state.h"
#include "state_int.h"
#include "util.h"

/* ---- per-container directories ------------------------------------------ */

static int
lock_dir (int fd, const char *id, struct kist_error **err)
{
  while (flock (fd, LOCK_EX) < 0)
    {
      if (errno == EINTR)
        continue;
      _cleanup_free_ char *shown = state_id_for_message (id);
      return kist_error_make (err, errno, "lock the state directory of container `%s`", shown);
    }
  return 0;
}

/* The directory of a container in the state root.  Ids may be 1024
 * characters, file names only 255: an id longer than KIST_STATE_NAME_MAX is
 * stored under "@" + the hex SHA-256 of the id ('@' is not an id character,
 * so the two forms cannot collide); state.json keeps the real id. */
#define KIST_STATE_NAME_MAX 200
const char *
state_dir_name (const char *id, char buf[static 2 * KIST_SHA256_LEN + 2])
{
  if (strlen (id) <= KIST_STATE_NAME_MAX)
    return id;
  uint8_t digest[KIST_SHA256_LEN];
  kist_sha256 (id, strlen (id), digest);
  buf[0] = '@';
  kist_sha256_hex (digest, buf + 1);
  return buf;
}

bool
state_is_hashed_name (const char *name)
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
state_check_dir (int fd, int rootfd, const char *id, struct kist_error **err)
{
  struct stat st;
  if (fstat (fd, &st) < 0)
    return kist_error_make (err, errno, "stat the state directory of container `%s`", id);
  if (st.st_uid == geteuid () && !(st.st_mode & (S_IWGRP | S_IWOTH)))
    return 0;
  _cleanup_free_ char *root = state_fd_path (rootfd);
  _cleanup_free_ char *shown = state_id_for_message (id);
  if (st.st_uid != geteuid ())
    return state_error_plain (err, EPERM,
                              "state directory `%s/%s` is owned by uid %u, not by us (uid %u): "
                              "kist did not make it (another user may have planted it); kist "
                              "refuses to use it: inspect it and remove it by hand",
                              root, shown, (unsigned) st.st_uid, (unsigned) geteuid ());
  return state_error_plain (err, EPERM,
                            "state directory `%s/%s` is writable by group or others (mode %04o): "
                            "kist never makes it so and refuses to use it: inspect it and remove "
                            "it by hand",
                            root, shown, (unsigned) (st.st_mode & 07777));
}

/* Why does ROOT/NAME already exist: a message for create. */
static int
exists_error (int rootfd, const char *name, const char *id, struct kist_error **err)
{
  struct stat st;
  _cleanup_free_ char *shown = state_id_for_message (id);
  if (fstatat (rootfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK (st.st_mode))
    {
      _cleanup_free_ char *root = state_fd_path (rootfd);
      return state_error_plain (err, EEXIST,
                                "container `%s` cannot be created: its state entry `%s/%s` is a "
                                "symbolic link, which kist never makes (planted?): remove it by "
                                "hand",
                                shown, root, shown);
    }
  if (fstatat (rootfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_uid != geteuid ())
    {
      _cleanup_free_ char *root = state_fd_path (rootfd);
      return state_error_plain (err, EEXIST,
                                "container `%s` cannot be created: its state directory `%s/%s` "
                                "exists and is owned by uid %u, not by us (planted?): remove it by "
                                "hand",
                                shown, root, shown, (unsigned) st.st_uid);
    }
  return state_error_plain (err, EEXIST, "container `%s` already exists", shown);
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
  const char *dn = state_dir_name (id, hb);
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

/* The directory name just made under rootfd, opened; on failure it is
 * removed again and the error names ROOT/shown. */
static int
open_new_dir (int rootfd, const char *name, const char *shown, struct kist_error **err)
{
  int fd = openat (rootfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    {
      int e = errno;
      unlinkat (rootfd, name, AT_REMOVEDIR);
      _cleanup_free_ char *root = state_fd_path (rootfd);
      return kist_error_make (err, e, "open the new state directory `%s/%s`", root, shown);
    }
  return fd;
}

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
      _cleanup_free_ char *root = state_fd_path (rootfd);
      return kist_error_make (err, e, "create the state directory `%s/%s`", root, id);
    }
  _cleanup_close_ int fd = open_new_dir (rootfd, name, id, err);
  if (fd < 0)
    return fd;
  if (lock_dir (fd, id, err) < 0)
    {
      unlinkat (rootfd, name, AT_REMOVEDIR);
      return -1;
    }
  /* `kist gc` may have removed it (unlocked, without state.json) before our
   * flock. */
  struct stat st;
  if (fstat (fd, &st) < 0 || st.st_nlink == 0)
    return state_error_plain (err, EAGAIN,
                              "the new state directory of container `%s` was removed concurrently "
                              "(by `kist gc`?): try again",
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
  const char *name = state_dir_name (id, hb);
  struct stat st;
  if (fstatat (rootfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
    return exists_error (rootfd, name, id, err);

  _cleanup_free_ char *tmp
      = xasprintf (KIST_STATE_TMP_PREFIX "%s.%d.%u", name, (int) getpid (), counter++);
  if (mkdirat (rootfd, tmp, 0700) < 0)
    {
      int e = errno;
      _cleanup_free_ char *root = state_fd_path (rootfd);
      return kist_error_make (err, e,
                              "create the state directory of container `%s` in `%s`%s", id, root,
                              e == ENOSPC || e == EDQUOT
                                  ? ": the file system of the state root is full; free space "
                                    "there (or use another --root)"
                                  : "");
    }
  _cleanup_close_ int fd = open_new_dir (rootfd, tmp, tmp, err);
  if (fd < 0)
    return fd;
  if (lock_dir (fd, id, err) < 0 || (initial && state_write_new (fd, initial, err) < 0))
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
      _cleanup_free_ char *root = state_fd_path (rootfd);
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
      if (tfd < 0 || state_check_dir (tfd, rootfd, de->d_name, NULL) < 0)
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
  const char *name = state_dir_name (id, hb);
  _cleanup_close_ int fd = openat (rootfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    {
      int e = errno;
      if (e == ENOENT)
        return state_error_plain (err, ENOENT, "container `%s` does not exist", id);
      _cleanup_free_ char *root = state_fd_path (rootfd);
      if (e == ELOOP || e == ENOTDIR)
        return kist_error_make (err, e,
                                "state entry `%s/%s` is a symbolic link or not a directory, "
                                "which kist never makes (planted?): kist refuses to use it; "
                                "remove it by hand",
                                root, id);
      return kist_error_make (err, e, "open the state directory `%s/%s`", root, id);
    }
  if (state_check_dir (fd, rootfd, id, err) < 0 || lock_dir (fd, id, err) < 0)
    return -1;
  /* A concurrent delete may have removed it while we waited for the lock. */
  struct stat st;
  if (fstat (fd, &st) < 0)
    return kist_error_make (err, errno, "stat the state directory of container `%s`", id);
  if (st.st_nlink == 0)
    return state_error_plain (err, ENOENT, "container `%s` does not exist (it was just deleted)",
                                    id);
  *dirfd = steal_fd (&fd);
  return 0;
}

int
kist_state_remove (int rootfd, const char *id, struct kist_error **err)
{
  char hb[2 * KIST_SHA256_LEN + 2];
  if (kist_id_validate (id, err) < 0)
    return -EINVAL;
  return remove_state_dir (rootfd, state_dir_name (id, hb), id, err);
}

/* Remove ROOT/NAME (no directories in it) and verify it is gone; id names
 * it in messages. */
static int
remove_state_dir (int rootfd, const char *name, const char *id, struct kist_error **err)
{
  _cleanup_free_ char *root = state_fd_path (rootfd);
  _cleanup_free_ char *path = xasprintf ("%s/%s", root, id);
  /* No lock here: the caller holds it through its own kist_state_open fd (a
   * second flock on another open file description would deadlock).
   * max_depth 0: kist never makes a directory in a state dir, so one there
   * (a mount point?) is refused before anything is removed.  state.json
   * goes last: a kist killed in the middle leaves the record (or an empty
   * dir, which `kist gc` removes). */
  const struct kist_remove_opts o = {
    .path = path, .what = "remove the state directory", .max_depth = 0, .last = KIST_STATE_FILE,
  };
  int r = kist_remove_tree_at (rootfd, name, &o, err);
  if (r == 0)
    return state_error_plain (err, ENOENT, "container `%s` does not exist", id);
  return r < 0 ? r : 0;
}

int
kist_state_peek (int rootfd, const char *id, struct kist_state *s, struct kist_error **err)
{
  char hb[2 * KIST_SHA256_LEN + 2];
  memset (s, 0, sizeof *s);
  if (kist_id_validate (id, err) < 0)
    return -EINVAL;
  _cleanup_close_ int fd
      = openat (rootfd, state_dir_name (id, hb), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    {
      int e = errno;
      if (e == ENOENT)
        return state_error_plain (err, ENOENT, "container `%s` does not exist", id);
      _cleanup_free_ char *root = state_fd_path (rootfd);
      return kist_error_make (err, e, "open the state directory `%s/%s`", root, id);
    }
  if (state_check_dir (fd, rootfd, id, err) < 0)
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
      = openat (rootfd, state_dir_name (id, hb), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    {
      _cleanup_free_ char *root = state_fd_path (rootfd);
      return kist_error_make (err, errno, "open the state directory `%s/%s`", root, id);
    }
  if (state_check_dir (fd, rootfd, id, err) < 0)
    return -1;
  /* A shared lock conflicts with the exclusive lock every command holds;
   * it is released when fd is closed. */
  if (flock (fd, LOCK_SH | LOCK_NB) == 0)
    return 0;
  if (errno == EWOULDBLOCK)
    return 1;
  return kist_error_make (err, errno, "test the lock of container `%s`", id);
}
