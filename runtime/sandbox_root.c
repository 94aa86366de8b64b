/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: the shared empty root of `kist sandbox` (sandbox.h):
 * ROOT/~sandbox-root/KEY, made once and verified on every use instead of
 * making and removing a private root of a dozen inodes per run. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fsremove.h"
#include "log.h"
#include "resolve.h"
#include "sandbox.h"
#include "util.h"

#define ROOT_MAX_ENTRIES 64
#define N_FIXED 5 /* the mounts of g_mounts before the binds */

struct root_entry
{
  char name[NAME_MAX + 1];
  char *target; /* a symlink's target; "" for a directory (owned) */
};

/* 64 entries of a name and a target pointer (~17 KB): the targets are
 * allocated, so that the plan is not 64 PATH_MAX buffers (278 KB) on the
 * stack. */
struct root_plan
{
  struct root_entry e[ROOT_MAX_ENTRIES];
  size_t n;
};

static void
root_plan_clear (struct root_plan *p)
{
  for (size_t i = 0; i < p->n; i++)
    free (p->e[i].target);
  p->n = 0;
}

static struct root_entry *
plan_find (struct root_plan *p, const char *name)
{
  for (size_t i = 0; i < p->n; i++)
    if (strcmp (p->e[i].name, name) == 0)
      return &p->e[i];
  return NULL;
}

static bool
plan_add (struct root_plan *p, const char *name, size_t len, const char *target)
{
  char buf[NAME_MAX + 1];
  if (len == 0 || len > NAME_MAX)
    return false;
  memcpy (buf, name, len);
  buf[len] = '\0';
  struct root_entry *e = plan_find (p, buf);
  if (e)
    return strcmp (e->target, target) == 0; /* a dir twice is fine; a clash is not */
  if (p->n == ROOT_MAX_ENTRIES)
    return false;
  e = &p->e[p->n++];
  memcpy (e->name, buf, len + 1);
  e->target = xstrdup (target);
  return true;
}

/* The destinations of g_mounts (sandbox.c), in its order. */
static size_t
mount_dests (const struct kist_sandbox_opts *o, const char **dests, bool *is_bind, size_t max)
{
  static const char *const fixed[N_FIXED] = { "/proc", "/dev", "/dev/pts", "/dev/shm", "/tmp" };
  size_t n = 0;
  for (size_t i = 0; i < KIST_ARRAY_SIZE (fixed) && n < max; i++, n++)
    dests[n] = fixed[i], is_bind[n] = false;
  for (size_t i = 0; i < o->n_binds && n < max; i++, n++)
    dests[n] = o->binds[i].dest, is_bind[n] = true;
  for (size_t i = 0; i < o->n_tmpfs && n < max; i++, n++)
    dests[n] = o->tmpfs[i].dest, is_bind[n] = false;
  if (n < max)
    dests[n] = o->workdir, is_bind[n++] = false;
  return n;
}

/* What the empty root holds: the merged-usr symlinks and one directory per
 * top-level mount point.  False when the root is not that simple (then a
 * private root is made): --rootfs, --workspace, the Landlock fallback,
 * --dir/--symlink/--file/--chmod, a mount point that would be made below
 * another one in the root itself, a bind of a non-directory at the top. */
static bool
root_plan (const struct kist_sandbox_opts *o, struct root_plan *p)
{
  p->n = 0;
  if (o->rootfs || o->workspace || o->fallback || o->n_dirs || o->n_links || o->n_files
      || o->n_chmods || o->workdir == NULL)
    return false;
  static const char *const names[] = { "bin", "lib", "lib32", "lib64", "libx32", "sbin" };
  for (size_t i = 0; i < KIST_ARRAY_SIZE (names); i++)
    {
      char target[PATH_MAX];
      if (kist_sandbox_usr_link (o, names[i], target, sizeof target)
          && !plan_add (p, names[i], strlen (names[i]), target))
        return false;
    }
  const char *dests[ROOT_MAX_ENTRIES * 2];
  bool is_bind[ROOT_MAX_ENTRIES * 2];
  size_t nd = mount_dests (o, dests, is_bind, KIST_ARRAY_SIZE (dests));
  if (nd == KIST_ARRAY_SIZE (dests))
    return false;
  for (size_t i = 0; i < nd; i++)
    {
      const char *d = dests[i];
      if (d[0] != '/' || d[1] == '\0')
        return false;
      const char *slash = strchr (d + 1, '/');
      if (slash == NULL)
        {
          if (is_bind[i])
            {
              struct stat st;
              /* The mount point's type follows the source's. */
              if (stat (o->binds[i - N_FIXED].src, &st) < 0 || !S_ISDIR (st.st_mode))
                return false;
            }
          if (!plan_add (p, d + 1, strlen (d + 1), ""))
            return false;
          continue;
        }
      /* Deeper: only on a mount made earlier (then not in the root). */
      bool on_mount = false;
      for (size_t j = 0; j < i && !on_mount; j++)
        on_mount = strcmp (dests[j], d) != 0 && kist_path_is_or_under (d, dests[j]);
      if (!on_mount)
        return false;
    }
  return true;
}

/* KEY: FNV-1a 64 of the sorted entries (the content, checked on use). */
static int
entry_cmp (const void *a, const void *b)
{
  return strcmp (((const struct root_entry *) a)->name, ((const struct root_entry *) b)->name);
}

static void
root_key (struct root_plan *p, char key[17])
{
  qsort (p->e, p->n, sizeof p->e[0], entry_cmp);
  uint64_t h = 0xcbf29ce484222325ull;
  const char *tag = "kist-sandbox-root-1";
  for (const char *c = tag; *c; c++)
    h = (h ^ (unsigned char) *c) * 0x100000001b3ull;
  for (size_t i = 0; i < p->n; i++)
    {
      for (const char *c = p->e[i].name; ; c++)
        {
          h = (h ^ (unsigned char) *c) * 0x100000001b3ull;
          if (*c == '\0')
            break;
        }
      for (const char *c = p->e[i].target; ; c++)
        {
          h = (h ^ (unsigned char) *c) * 0x100000001b3ull;
          if (*c == '\0')
            break;
        }
    }
  snprintf (key, 17, "%016llx", (unsigned long long) h);
}

/* Does fd (ROOT/~sandbox-root/name, locked) hold exactly the plan: a
 * directory of ours, mode 0755, still linked at name, with exactly the
 * planned entries (directories of ours, 0755; symlinks with their target)? */
static bool
root_verify (int srfd, const char *name, int fd, const struct root_plan *p)
{
  struct stat st, at;
  uid_t euid = geteuid ();
  if (fstat (fd, &st) < 0 || !S_ISDIR (st.st_mode) || st.st_uid != euid
      || (st.st_mode & 07777) != 0755)
    return false;
  if (fstatat (srfd, name, &at, AT_SYMLINK_NOFOLLOW) < 0 || at.st_dev != st.st_dev
      || at.st_ino != st.st_ino)
    return false; /* removed (kist gc) or replaced since it was opened */
  int dfd = openat (fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  _cleanup_dir_ DIR *dir = dfd >= 0 ? fdopendir (dfd) : NULL;
  if (dir == NULL)
    {
      if (dfd >= 0)
        close (dfd);
      return false;
    }
  size_t seen = 0;
  struct dirent *de;
  while ((de = readdir (dir)) != NULL)
    {
      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
        continue;
      const struct root_entry *e = plan_find ((struct root_plan *) p, de->d_name);
      if (e == NULL)
        return false; /* an extra entry */
      seen++;
      if (e->target[0] == '\0')
        {
          struct stat es;
          if (fstatat (fd, e->name, &es, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR (es.st_mode)
              || es.st_uid != euid || (es.st_mode & 07777) != 0755)
            return false;
        }
      else
        {
          /* readlinkat fails (EINVAL) on anything but a symlink. */
          char t[PATH_MAX];
          ssize_t n = readlinkat (fd, e->name, t, sizeof t - 1);
          if (n < 0)
            return false;
          t[n] = '\0';
          if (strcmp (t, e->target) != 0)
            return false;
        }
    }
  return seen == p->n;
}

/* Make the root in a temporary name (locked shared from the start, so that
 * kist gc leaves it alone), then rename it to key.  Returns the locked fd of
 * ROOT/~sandbox-root/key (ours or one made at the same time), or -1. */
static int
root_make (int srfd, const char *key, const struct root_plan *p)
{
  uint32_t rnd = 0;
  if (getrandom (&rnd, sizeof rnd, GRND_NONBLOCK) < 0)
    rnd = (uint32_t) time (NULL);
  char tmp[64];
  snprintf (tmp, sizeof tmp, "tmp-%ld-%08x", (long) getpid (), (unsigned) rnd);
  if (mkdirat (srfd, tmp, 0700) < 0)
    return -1;
  _cleanup_close_ int fd = openat (srfd, tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  bool ok = fd >= 0 && flock (fd, LOCK_SH) == 0;
  for (size_t i = 0; ok && i < p->n; i++)
    {
      const struct root_entry *e = &p->e[i];
      if (e->target[0])
        ok = symlinkat (e->target, fd, e->name) == 0;
      else
        {
          ok = mkdirat (fd, e->name, 0755) == 0;
          _cleanup_close_ int efd
              = ok ? openat (fd, e->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
          ok = efd >= 0 && fchmod (efd, 0755) == 0;   /* mkdir applies the umask */
        }
    }
  ok = ok && fchmod (fd, 0755) == 0;
  if (ok && renameat2 (srfd, tmp, srfd, key, RENAME_NOREPLACE) == 0)
    return steal_fd (&fd);
  /* Another kist made it first (or this failed): drop ours. */
  _cleanup_error_ struct kist_error *e = NULL;
  const struct kist_remove_opts ro = { .path = tmp, .max_depth = 1 };
  kist_remove_tree_at (srfd, tmp, &ro, &e);
  return -1;
}

int
kist_sandbox_shared_root (int rootfd, const char *root_path, const struct kist_sandbox_opts *o,
                          char **path, int *lock_fd)
{
  __attribute__ ((cleanup (root_plan_clear))) struct root_plan p = { .n = 0 };
  *path = NULL;
  *lock_fd = -1;
  if (!root_plan (o, &p))
    return 0;
  char key[17];
  root_key (&p, key);
  _cleanup_free_ char *what = xasprintf ("%s/%s", root_path, KIST_SANDBOX_ROOT_DIR);
  _cleanup_error_ struct kist_error *err = NULL;
  _cleanup_close_ int srfd
      = kist_sandbox_open_own_dir (rootfd, KIST_SANDBOX_ROOT_DIR, 0700, what, &err);
  if (srfd < 0)
    {
      kist_log_debug ("sandbox: no shared root: %s", err->msg);
      return 0;
    }
  for (int attempt = 0; attempt < 3; attempt++)
    {
      _cleanup_close_ int fd
          = openat (srfd, key, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (fd >= 0 && flock (fd, LOCK_SH) < 0)
        return 0;
      if (fd < 0)
        {
          if (errno != ENOENT)
            break;
          fd = root_make (srfd, key, &p);
          if (fd < 0)
            continue; /* made by another kist at the same time: open that one */
        }
      if (root_verify (srfd, key, fd, &p))
        {
          *path = xasprintf ("%s/%s", what, key);
          *lock_fd = steal_fd (&fd);
          return 1;
        }
      struct stat st;
      if (fstat (fd, &st) == 0 && st.st_nlink > 0)
        break; /* there, but not what it should be: leave it (kist gc) */
    }
  kist_log_debug ("sandbox: the shared root %s/%s does not verify: a private root", what, key);
  return 0;
}

int
kist_sandbox_root_sweep (int rootfd, bool dry_run, kist_sandbox_root_fn fn, void *arg)
{
  _cleanup_close_ int srfd
      = openat (rootfd, KIST_SANDBOX_ROOT_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (srfd < 0)
    return 0;
  int lfd = dup (srfd);
  _cleanup_dir_ DIR *d = lfd >= 0 ? fdopendir (lfd) : NULL;
  if (d == NULL)
    {
      if (lfd >= 0)
        close (lfd);
      return 0;
    }
  int failed = 0;
  struct dirent *de;
  while ((de = readdir (d)) != NULL)
    {
      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
        continue;
      _cleanup_free_ char *name = xasprintf ("%s/%s", KIST_SANDBOX_ROOT_DIR, de->d_name);
      _cleanup_close_ int fd
          = openat (srfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0)
        {
          _cleanup_free_ char *msg = xasprintf ("open: %s (kist makes only directories there: "
                                                "inspect and remove it by hand)",
                                                strerror (errno));
          fn (name, msg, arg);
          failed = 1;
          continue;
        }
      /* In use by a sandbox (a shared lock) or being made: stays. */
      if (flock (fd, LOCK_EX | LOCK_NB) < 0)
        continue;
      if (dry_run)
        {
          fn (name, NULL, arg);
          continue;
        }
      _cleanup_error_ struct kist_error *err = NULL;
      const struct kist_remove_opts ro = { .path = name, .max_depth = 1, .chmod_own = true };
      if (kist_remove_tree_at (srfd, de->d_name, &ro, &err) < 0)
        {
          fn (name, err->msg, arg);
          failed = 1;
        }
      else
        fn (name, NULL, arg);
    }
  unlinkat (rootfd, KIST_SANDBOX_ROOT_DIR, AT_REMOVEDIR); /* when empty */
  return failed;
}
