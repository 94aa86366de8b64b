/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: the --workspace overlay of `kist sandbox`: its directories, and the
 * merge of the upper dir back into the host directory (see workspace.h). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "fsremove.h"
#include "json.h"
#include "sync.h"
#include "workspace.h"
#include "util.h"

/* Deeper trees are refused (each level holds a directory fd open). */
#define WS_MAX_DEPTH 256

int
kist_workspace_parse_commit (const char *s, enum kist_workspace_commit *out)
{
  if (strcmp (s, "on-success") == 0)
    *out = KIST_COMMIT_ON_SUCCESS;
  else if (strcmp (s, "always") == 0)
    *out = KIST_COMMIT_ALWAYS;
  else if (strcmp (s, "never") == 0)
    *out = KIST_COMMIT_NEVER;
  else
    return -EINVAL;
  return 0;
}

const char *
kist_workspace_commit_name (enum kist_workspace_commit c)
{
  switch (c)
    {
    case KIST_COMMIT_ALWAYS: return "always";
    case KIST_COMMIT_NEVER: return "never";
    default: return "on-success";
    }
}

bool
kist_workspace_should_commit (enum kist_workspace_commit c, int status, bool timed_out)
{
  switch (c)
    {
    case KIST_COMMIT_ALWAYS: return true;
    case KIST_COMMIT_NEVER: return false;
    default: return !timed_out && status == 0;
    }
}

void
kist_workspace_stats_clear (struct kist_workspace_stats *s)
{
  free (s->first_skipped);
  memset (s, 0, sizeof *s);
}

int
kist_workspace_check_path (const char *path, const char *what, struct kist_error **err)
{
  const char *bad = strpbrk (path, ",:\\");
  if (bad)
    return kist_error_make (err, EINVAL,
                            "%s `%s` contains `%c`, which the overlay mount options cannot "
                            "carry; use a path without ',', ':' or '\\'",
                            what, path, *bad);
  return 0;
}

int
kist_workspace_resolve (const char *arg, char **out, struct kist_error **err)
{
  struct stat st;
  *out = NULL;
  if (arg[0] == '\0')
    return kist_error_make (err, EINVAL, "--workspace: empty path");
  if (lstat (arg, &st) < 0)
    return kist_error_make (err, errno, "--workspace `%s`: it must be an existing directory",
                            arg);
  if (S_ISLNK (st.st_mode))
    return kist_error_make (err, ELOOP,
                            "--workspace `%s` is a symlink; give the directory it points to",
                            arg);
  if (!S_ISDIR (st.st_mode))
    return kist_error_make (err, ENOTDIR, "--workspace `%s` is not a directory", arg);
  _cleanup_free_ char *real = realpath (arg, NULL);
  if (real == NULL)
    return kist_error_make (err, errno, "--workspace `%s`: realpath", arg);
  if (strcmp (real, "/") == 0)
    return kist_error_make (err, EINVAL, "--workspace `%s`: not the host's root directory", arg);
  if (kist_workspace_check_path (real, "--workspace", err) < 0)
    return -1;
  *out = steal_pointer (&real);
  return 0;
}

int
kist_workspace_check_workdir (const char *rootfs, const char *workdir, struct kist_error **err)
{
  _cleanup_free_ char *w = xasprintf ("%s%s", rootfs, workdir);
  if (kist_workspace_check_path (w, "--workdir in the root", err) < 0)
    return -1;
  _cleanup_free_ char *copy = xstrdup (workdir);
  _cleanup_close_ int fd = open (rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return kist_error_make (err, errno, "--workspace: open the root `%s`", rootfs);
  char *save = NULL;
  for (char *name = strtok_r (copy, "/", &save); name; name = strtok_r (NULL, "/", &save))
    {
      int sub = openat (fd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (sub < 0 && errno == ENOENT)
        return 0;
      if (sub < 0)
        return kist_error_make (err, errno == ELOOP ? ENOTDIR : errno,
                                "--workspace with --workspace-size/--workspace-inodes or a "
                                "workspace not owned by the sandbox user: `%s` of --workdir `%s` "
                                "in the root `%s` must be a directory, not a symlink (choose "
                                "another --workdir)",
                                name, workdir, rootfs);
      close (fd);
      fd = sub;
    }
  return 0;
}

/* The idmapped bind of DIR at dest (DIR's owner shown as the sandbox
 * user), for mounts_idmap.c to make. */
static void
gen_idmapped_lower (struct kist_jgen *g, const char *dest, const char *src,
                    const struct kist_workspace_plan *p)
{
  static const char *const opts[] = { "bind", "ro", "idmap", "nosuid", "nodev", NULL };
  struct kist_idmap um[5], gm[5];
  size_t nu = kist_workspace_swap_map (p->owner_uid, p->sb_uid, um);
  size_t ng = kist_workspace_swap_map (p->owner_gid, p->sb_gid, gm);
  kist_jgen_map_open (g);
  kist_jgen_kstr (g, "destination", dest);
  kist_jgen_kstr (g, "type", "bind");
  kist_jgen_kstr (g, "source", src);
  kist_jgen_kstrv (g, "options", opts);
  kist_spec_gen_idmaps (g, "uidMappings", um, nu);
  kist_spec_gen_idmaps (g, "gidMappings", gm, ng);
  kist_jgen_map_close (g);
}

/* DIR is the lower layer, never written by the sandbox.  In a user
 * namespace the overlay keeps its metadata in user.* xattrs. */
void
kist_workspace_gen_mounts (struct kist_jgen *g, const struct kist_workspace_mounts *m)
{
  static const char *const skel_opts[] = { "bind", "ro", "nosuid", "nodev", NULL };
  _cleanup_free_ char *w = xasprintf ("%s%s", m->rootfs, m->workdir);
  _cleanup_free_ char *upper = NULL, *work = NULL, *lower = NULL, *lower_dest = NULL;
  if (m->layers)
    {
      _cleanup_free_ char *sz = m->size ? xasprintf ("size=%llu", (unsigned long long) m->size)
                                        : NULL;
      _cleanup_free_ char *ino
          = m->inodes ? xasprintf ("nr_inodes=%llu", (unsigned long long) m->inodes
                                                         + KIST_WORKSPACE_INODE_OVERHEAD)
                      : NULL;
      const char *tmpfs_opts[] = { "nosuid", "nodev", "tmpcopyup", sz ? sz : ino, sz ? ino : NULL,
                                   NULL };
      kist_spec_gen_mount (g, m->workdir, "bind", m->layers, skel_opts);
      kist_spec_gen_mount (g, m->workdir, "tmpfs", "workspace", tmpfs_opts);
      upper = xasprintf ("upperdir=%s/%s", w, KIST_WORKSPACE_UPPER);
      work = xasprintf ("workdir=%s/%s", w, KIST_WORKSPACE_WORK);
      lower_dest = xasprintf ("%s/%s", m->workdir, KIST_WORKSPACE_LOWER);
    }
  else
    {
      upper = xasprintf ("upperdir=%s", m->upper);
      work = xasprintf ("workdir=%s", m->ovl_work);
      lower_dest = xstrdup (m->workdir);
    }
  if (m->plan->idmap)
    {
      gen_idmapped_lower (g, lower_dest, m->dir, m->plan);
      lower = xasprintf ("lowerdir=%s%s", m->rootfs, lower_dest);
    }
  else
    lower = xasprintf ("lowerdir=%s", m->dir);
  const char *ovl_opts[] = { "nosuid", "nodev", lower, upper, work,
                             m->userns ? "userxattr" : NULL, NULL };
  kist_spec_gen_mount (g, m->workdir, "overlay", "overlay", ovl_opts);
}

/* ------------------------------------------------------------ helpers */

static int
open_dir_at (int dirfd, const char *name, const struct stat *st)
{
  int fd = openat (dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 && errno == EACCES && st)
    {
      kist_own_chmod (dirfd, name, st, S_IRWXU);
      fd = openat (dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    }
  return fd;
}

/* ------------------------------------------------------------ removal */

struct rm_ctx
{
  const char *what;       /* "the workspace" / "the upper dir", for messages */
};

/* Remove parentfd/name (any type, at depth in the tree being walked; our
 * own directories without u+rwx are chmod'ed first), never following a
 * symlink and never leaving the filesystem (kist_remove_tree_at).
 * 1: removed, 0: was not there. */
static int
remove_entry (const struct rm_ctx *c, int parentfd, const char *name, const char *path,
              int depth, struct kist_error **err)
{
  const struct kist_remove_opts o = {
    .path = path, .what = c->what, .max_depth = WS_MAX_DEPTH, .depth = depth,
    .any_type = true, .chmod_own = true,
  };
  return kist_remove_tree_at (parentfd, name, &o, err);
}

/* Remove everything in the directory fd (path names it). */
static int
remove_children (const struct rm_ctx *c, int fd, const char *path, int depth,
                 struct kist_error **err)
{
  const struct kist_remove_opts o = {
    .path = path, .what = c->what, .max_depth = WS_MAX_DEPTH, .depth = depth,
    .chmod_own = true,
  };
  return kist_remove_children (fd, &o, err);
}

int
kist_workspace_remove (int sbfd, const char *sb_path, struct kist_error **err)
{
  static const char *const names[] = { KIST_WORKSPACE_UPPER, KIST_WORKSPACE_WORK,
                                       KIST_WORKSPACE_LAYERS };
  struct rm_ctx c = { .what = "remove the workspace overlay dirs" };
  int removed = 0;
  for (size_t i = 0; i < KIST_ARRAY_SIZE (names); i++)
    {
      _cleanup_free_ char *path = xasprintf ("%s/%s", sb_path, names[i]);
      int r = remove_entry (&c, sbfd, names[i], path, 0, err);
      if (r < 0)
        return -1;
      if (r > 0)
        removed = 1;
    }
  return removed;
}

/* ------------------------------------------------------------ prepare */

size_t
kist_workspace_swap_map (uint32_t a, uint32_t b, struct kist_idmap m[5])
{
  uint32_t lo = a < b ? a : b, hi = a < b ? b : a;
  size_t n = 0;
  if (lo == hi)
    {
      m[n++] = (struct kist_idmap){ .container_id = 0, .host_id = 0, .size = UINT32_MAX };
      return n;
    }
  if (lo > 0)
    m[n++] = (struct kist_idmap){ .container_id = 0, .host_id = 0, .size = lo };
  m[n++] = (struct kist_idmap){ .container_id = lo, .host_id = hi, .size = 1 };
  if (hi - lo > 1)
    m[n++] = (struct kist_idmap){ .container_id = lo + 1, .host_id = lo + 1, .size = hi - lo - 1 };
  m[n++] = (struct kist_idmap){ .container_id = hi, .host_id = lo, .size = 1 };
  if (hi < UINT32_MAX - 1)   /* ids up to 4294967294: (uid_t) -1 is never mapped */
    m[n++] = (struct kist_idmap){ .container_id = hi + 1, .host_id = hi + 1,
                                  .size = UINT32_MAX - 1 - hi };
  return n;
}

/* The unprivileged caller's workspace must be its own (see workspace.h). */
static int
check_rootless_owner (const char *ws, const struct stat *wst, bool commits,
                      struct kist_error **err)
{
  if (geteuid () == 0 || !commits || wst->st_uid == geteuid ())
    return 0;
  return kist_error_make (err, EACCES,
                          "--workspace `%s` belongs to uid %u, not to you (uid %u): an "
                          "unprivileged kist cannot show it to the sandbox as the sandbox "
                          "user's nor commit into it with its owner's ids; use a directory you "
                          "own, run kist as root (DIR's owner is then mapped to the sandbox "
                          "user), or give --commit never to only read it",
                          ws, (unsigned) wst->st_uid, (unsigned) geteuid ());
}

int
kist_workspace_prepare (int sbfd, const char *sb_path, const char *ws, bool commits,
                        struct kist_workspace_plan *plan, struct kist_error **err)
{
  struct stat wst;
  _cleanup_close_ int wsfd = open (ws, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (wsfd < 0 || fstat (wsfd, &wst) < 0)
    return kist_error_make (err, errno, "--workspace `%s`: open the directory", ws);
  if (kist_workspace_check_path (sb_path, "the sandbox directory", err) < 0)
    return kist_error_wrap (err, "--workspace (choose a --root without those characters)");
  if (check_rootless_owner (ws, &wst, commits, err) < 0)
    return -1;
  bool root = geteuid () == 0;
  plan->owner_uid = (uint32_t) wst.st_uid;
  plan->owner_gid = (uint32_t) wst.st_gid;
  plan->idmap = root && (plan->owner_uid != plan->sb_uid || plan->owner_gid != plan->sb_gid);
  /* The overlay's root directory shows the upper dir's owner and mode:
   * DIR's owner as the sandbox sees it, DIR's mode. */
  uid_t u = plan->idmap ? plan->sb_uid : wst.st_uid;
  gid_t g = plan->idmap ? plan->sb_gid : wst.st_gid;

  _cleanup_free_ char *base = plan->tmpfs ? xasprintf ("%s/%s", sb_path, KIST_WORKSPACE_LAYERS)
                                          : xstrdup (sb_path);
  _cleanup_close_ int lfd = -1;
  int dirfd = sbfd;
  if (plan->tmpfs)
    {
      if (mkdirat (sbfd, KIST_WORKSPACE_LAYERS, 0700) < 0
          || (lfd = openat (sbfd, KIST_WORKSPACE_LAYERS,
                            O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
        {
          kist_error_make (err, errno, "--workspace: create `%s`", base);
          goto fail;
        }
      dirfd = lfd;
    }
  static const char *const names[] = { KIST_WORKSPACE_UPPER, KIST_WORKSPACE_WORK,
                                       KIST_WORKSPACE_LOWER };
  for (size_t i = 0; i < KIST_ARRAY_SIZE (names) - (plan->tmpfs ? 0 : 1); i++)
    {
      if (mkdirat (dirfd, names[i], 0700) < 0)
        {
          kist_error_make (err, errno, "--workspace: create `%s/%s`", base, names[i]);
          goto fail;
        }
      _cleanup_close_ int fd
          = openat (dirfd, names[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0)
        {
          kist_error_make (err, errno, "--workspace: open `%s/%s`", base, names[i]);
          goto fail;
        }
      if (i > 0)
        continue;
      if (root && fchown (fd, u, g) < 0)
        {
          kist_error_make (err, errno, "--workspace: chown `%s/%s` to %u:%u", base, names[i],
                           (unsigned) u, (unsigned) g);
          goto fail;
        }
      if (fchmod (fd, wst.st_mode & 07777) < 0)
        {
          kist_error_make (err, errno, "--workspace: chmod `%s/%s`", base, names[i]);
          goto fail;
        }
    }
  return 0;

fail:
  {
    _cleanup_error_ struct kist_error *e = NULL;
    kist_workspace_remove (sbfd, sb_path, &e);
    return -1;
  }
}

/* ------------------------------------------------------------- commit */

struct merge_ctx
{
  dev_t dev;           /* the workspace's filesystem */
  bool copy_owner;     /* set the owner (root): the replaced entry's, else uid:gid */
  uid_t uid;           /* DIR's owner: of every new entry */
  gid_t gid;
  const char *ws;      /* for messages */
  struct kist_workspace_stats *st;
  struct rm_ctx rm;
};

static bool
xattr_is (int fd, const char *name, const char *value)
{
  char buf[8];
  ssize_t n = fgetxattr (fd, name, buf, sizeof buf);
  size_t vl = strlen (value);
  return n == (ssize_t) vl && memcmp (buf, value, vl) == 0;
}

static bool
is_opaque (int fd)
{
  return xattr_is (fd, "trusted.overlay.opaque", "y") || xattr_is (fd, "user.overlay.opaque", "y");
}

static bool
has_xattr (int fd, const char *name)
{
  return fgetxattr (fd, name, NULL, 0) >= 0;
}

/* The owner of the entry written in place of ds (exists) or new. */
static void
owner_for (const struct merge_ctx *c, const struct stat *ds, bool exists, uid_t *u, gid_t *g)
{
  *u = exists ? ds->st_uid : c->uid;
  *g = exists ? ds->st_gid : c->gid;
}

static void
skip (struct merge_ctx *c, const char *rel)
{
  c->st->skipped++;
  if (c->st->first_skipped == NULL)
    c->st->first_skipped = xstrdup (rel);
}

/* A fresh temp name in dfd: ".kist-ws-XXXXXXXXXXXXXXXX". */
static void
temp_name (char buf[32])
{
  unsigned long long r = 0;
  if (getrandom (&r, sizeof r, 0) != (ssize_t) sizeof r)
    r = (unsigned long long) getpid () * 2654435761u ^ (unsigned long long) (uintptr_t) buf;
  snprintf (buf, 32, ".kist-ws-%016llx", r);
}

static int
copy_data (int in, int out)
{
  for (;;)
    {
      ssize_t n = copy_file_range (in, NULL, out, NULL, 1 << 30, 0);
      if (n == 0)
        return 0;
      if (n > 0)
        continue;
      if (errno == EINTR)
        continue;
      if (errno != EXDEV && errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP)
        return -errno;
      break;
    }
  char buf[65536];
  for (;;)
    {
      ssize_t n = read (in, buf, sizeof buf);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return -errno;
      if (n == 0)
        return 0;
      if (kist_write_all (out, buf, (size_t) n) < 0)
        return -errno;
    }
}

/* Put the temp entry dfd/tmp in place of dfd/name (an existing directory
 * there is removed first: rename cannot replace it with a non-directory). */
static int
replace_with (struct merge_ctx *c, int dfd, const char *tmp, const char *name, const char *rel,
              const struct stat *ds, bool exists, struct kist_error **err)
{
  if (exists && S_ISDIR (ds->st_mode) && remove_entry (&c->rm, dfd, name, rel, 0, err) < 0)
    goto fail;
  if (renameat (dfd, tmp, dfd, name) < 0)
    {
      kist_error_make (err, errno, "commit: rename the new `%s` into place", rel);
      goto fail;
    }
  c->st->files++;
  return 0;
fail:
  unlinkat (dfd, tmp, 0);
  return -1;
}

static int
merge_file (struct merge_ctx *c, int ufd, int dfd, const char *name, const char *rel,
            const struct stat *us, const struct stat *ds, bool exists, struct kist_error **err)
{
  _cleanup_close_ int in = openat (ufd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (in < 0 && errno == EACCES)
    {
      kist_own_chmod (ufd, name, us, S_IRUSR);
      in = openat (ufd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    }
  if (in < 0)
    return kist_error_make (err, errno, "commit: open the changed file `%s` in the upper dir", rel);
  if (us->st_size == 0
      && (has_xattr (in, "trusted.overlay.whiteout") || has_xattr (in, "user.overlay.whiteout")))
    {
      int r = remove_entry (&c->rm, dfd, name, rel, 0, err);
      if (r < 0)
        return -1;
      c->st->deletions += (unsigned long) r;
      return 0;
    }
  char tmp[32];
  _cleanup_close_ int out = -1;
  for (int i = 0; i < 8 && out < 0; i++)
    {
      temp_name (tmp);
      out = openat (dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
      if (out < 0 && errno != EEXIST)
        break;
    }
  if (out < 0)
    return kist_error_make (err, errno, "commit: create a temp file next to `%s`", rel);
  int r = copy_data (in, out);
  if (r < 0)
    {
      kist_error_make (err, -r, "commit: copy `%s`", rel);
      goto fail;
    }
  uid_t ou;
  gid_t og;
  owner_for (c, ds, exists, &ou, &og);
  if (c->copy_owner && fchown (out, ou, og) < 0)
    {
      kist_error_make (err, errno, "commit: chown `%s` to %u:%u", rel, (unsigned) ou,
                       (unsigned) og);
      goto fail;
    }
  if (fchmod (out, us->st_mode & 07777) < 0)
    {
      kist_error_make (err, errno, "commit: chmod `%s`", rel);
      goto fail;
    }
  struct timespec ts[2] = { us->st_atim, us->st_mtim };
  futimens (out, ts);
  return replace_with (c, dfd, tmp, name, rel, ds, exists, err);
fail:
  unlinkat (dfd, tmp, 0);
  return -1;
}

static int
merge_symlink (struct merge_ctx *c, int ufd, int dfd, const char *name, const char *rel,
               const struct stat *us, const struct stat *ds, bool exists, struct kist_error **err)
{
  size_t cap = (size_t) us->st_size + 2;
  if (cap < 64)
    cap = 64;
  _cleanup_free_ char *target = xmalloc (cap);
  ssize_t n = readlinkat (ufd, name, target, cap);
  if (n < 0)
    return kist_error_make (err, errno, "commit: read the symlink `%s`", rel);
  if ((size_t) n >= cap)
    return kist_error_make (err, ENAMETOOLONG, "commit: the symlink `%s` changed while reading it",
                            rel);
  target[n] = '\0';
  char tmp[32];
  int r = -1;
  for (int i = 0; i < 8 && r < 0; i++)
    {
      temp_name (tmp);
      r = symlinkat (target, dfd, tmp);
      if (r < 0 && errno != EEXIST)
        break;
    }
  if (r < 0)
    return kist_error_make (err, errno, "commit: create a temp symlink next to `%s`", rel);
  uid_t ou;
  gid_t og;
  owner_for (c, ds, exists, &ou, &og);
  if (c->copy_owner && fchownat (dfd, tmp, ou, og, AT_SYMLINK_NOFOLLOW) < 0)
    {
      kist_error_make (err, errno, "commit: chown the symlink `%s`", rel);
      unlinkat (dfd, tmp, 0);
      return -1;
    }
  return replace_with (c, dfd, tmp, name, rel, ds, exists, err);
}

static int merge_dir (struct merge_ctx *c, int ufd, int dfd, const char *rel, int depth,
                      struct kist_error **err);

static int
merge_subdir (struct merge_ctx *c, int ufd, int dfd, const char *name, const char *rel,
              const struct stat *us, const struct stat *ds, bool exists, int depth,
              struct kist_error **err)
{
  _cleanup_close_ int usub = open_dir_at (ufd, name, us);
  if (usub < 0)
    return kist_error_make (err, errno, "commit: open the directory `%s` in the upper dir", rel);
  bool opaque = is_opaque (usub);
  uid_t ou;
  gid_t og;
  owner_for (c, ds, exists, &ou, &og);
  if (exists && !S_ISDIR (ds->st_mode))
    {
      if (unlinkat (dfd, name, 0) < 0 && errno != ENOENT)
        return kist_error_make (err, errno, "commit: replace `%s` with a directory", rel);
      exists = false;
    }
  if (!exists)
    {
      if (mkdirat (dfd, name, 0700) < 0)
        return kist_error_make (err, errno, "commit: create the directory `%s`", rel);
      c->st->dirs++;
    }
  struct stat cur;
  if (fstatat (dfd, name, &cur, AT_SYMLINK_NOFOLLOW) < 0)
    return kist_error_make (err, errno, "commit: stat `%s`", rel);
  if (!c->copy_owner)
    kist_own_chmod (dfd, name, &cur, S_IRWXU);
  _cleanup_close_ int dsub = open_dir_at (dfd, name, &cur);
  if (dsub < 0)
    return kist_error_make (err, errno == ELOOP ? ENOTDIR : errno,
                            "commit: open the directory `%s` in the workspace", rel);
  struct stat fst;
  if (fstat (dsub, &fst) < 0)
    return kist_error_make (err, errno, "commit: stat `%s`", rel);
  if (fst.st_dev != c->dev)
    {
      skip (c, rel);
      return 0;
    }
  if (opaque && exists && remove_children (&c->rm, dsub, rel, depth, err) < 0)
    return -1;
  if (merge_dir (c, usub, dsub, rel, depth + 1, err) < 0)
    return -1;
  if (c->copy_owner && fchown (dsub, ou, og) < 0)
    return kist_error_make (err, errno, "commit: chown the directory `%s`", rel);
  if (fchmod (dsub, us->st_mode & 07777) < 0)
    return kist_error_make (err, errno, "commit: chmod the directory `%s`", rel);
  struct timespec ts[2] = { us->st_atim, us->st_mtim };
  futimens (dsub, ts);
  return 0;
}

/* Merge the upper directory ufd into the workspace directory dfd. */
static int
merge_dir (struct merge_ctx *c, int ufd, int dfd, const char *rel, int depth,
           struct kist_error **err)
{
  if (depth > WS_MAX_DEPTH)
    return kist_error_make (err, ELOOP, "commit: `%s` is nested more than %d levels deep; refusing",
                            rel, WS_MAX_DEPTH);
  int rfd = fcntl (ufd, F_DUPFD_CLOEXEC, 3);
  if (rfd < 0)
    return kist_error_make (err, errno, "commit: dup");
  _cleanup_dir_ DIR *d = fdopendir (rfd);
  if (d == NULL)
    {
      int e = errno;
      close (rfd);
      return kist_error_make (err, e, "commit: read the upper dir at `%s`", rel);
    }
  for (;;)
    {
      struct dirent *de = kist_readdir (d);
      if (de == NULL)
        break;
      const char *name = de->d_name;
      _cleanup_free_ char *sub = rel[0] ? xasprintf ("%s/%s", rel, name) : xstrdup (name);
      struct stat us, ds;
      if (fstatat (ufd, name, &us, AT_SYMLINK_NOFOLLOW) < 0)
        return kist_error_make (err, errno, "commit: stat `%s` in the upper dir", sub);
      bool exists = fstatat (dfd, name, &ds, AT_SYMLINK_NOFOLLOW) == 0;
      if (!exists && errno != ENOENT)
        return kist_error_make (err, errno, "commit: stat `%s` in the workspace", sub);
      /* Whiteout: the entry was deleted in the sandbox. */
      if (S_ISCHR (us.st_mode) && us.st_rdev == 0)
        {
          if (exists && (ds.st_dev != c->dev || kist_is_mount_root (dfd, name)))
            {
              skip (c, sub);
              continue;
            }
          int r = remove_entry (&c->rm, dfd, name, sub, depth, err);
          if (r < 0)
            return -1;
          c->st->deletions += (unsigned long) r;
          continue;
        }
      /* Never write across a mount point in the workspace: the sandbox saw
       * the directory under it (the overlay's lower layer has no submounts). */
      if (exists && (ds.st_dev != c->dev || kist_is_mount_root (dfd, name)))
        {
          skip (c, sub);
          continue;
        }
      int r;
      if (S_ISDIR (us.st_mode))
        r = merge_subdir (c, ufd, dfd, name, sub, &us, &ds, exists, depth, err);
      else if (S_ISREG (us.st_mode))
        r = merge_file (c, ufd, dfd, name, sub, &us, &ds, exists, err);
      else if (S_ISLNK (us.st_mode))
        r = merge_symlink (c, ufd, dfd, name, sub, &us, &ds, exists, err);
      else
        {
          skip (c, sub);
          r = 0;
        }
      if (r < 0)
        return -1;
    }
  if (errno != 0)
    return kist_error_make (err, errno, "commit: read the upper dir at `%s`", rel);
  return 0;
}

int
kist_workspace_commit (int ufd, const char *upper, const char *ws, bool set_owner,
                       struct kist_workspace_stats *st, struct kist_error **err)
{
  memset (st, 0, sizeof *st);
  _cleanup_close_ int dfd = open (ws, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  struct stat dst, ust;
  if (dfd < 0 || fstat (dfd, &dst) < 0)
    return kist_error_make (err, errno, "commit into the workspace `%s`: open it", ws);
  if (fstat (ufd, &ust) < 0)
    return kist_error_make (err, errno, "commit into the workspace `%s`: stat the upper dir %s",
                            ws, upper);
  struct merge_ctx c = {
    .dev = dst.st_dev, .copy_owner = set_owner, .uid = dst.st_uid, .gid = dst.st_gid, .ws = ws,
    .st = st, .rm = { .what = "commit" },
  };
  if (merge_dir (&c, ufd, dfd, "", 0, err) < 0)
    return kist_error_wrap (err, "commit into the workspace `%s` (it may hold part of the changes)",
                            ws);
  /* The workdir itself: a chmod inside the sandbox is in the upper root. */
  if ((ust.st_mode & 07777) != (dst.st_mode & 07777) && fchmod (dfd, ust.st_mode & 07777) < 0)
    return kist_error_make (err, errno, "commit into the workspace `%s`: chmod it", ws);
  return 0;
}

/* ------------------------------------------------------------- quotas */

/* The child of kist_workspace_fetch: never returns. */
static void __attribute__ ((noreturn))
fetch_child (int sock, int userns, int mntns, const char *workdir)
{
  struct statfs sf;
  const char *step = NULL;
  int fd = -1;
  errno = 0;
  if (userns >= 0 && setns (userns, CLONE_NEWUSER) < 0)
    step = "enter the sandbox's user namespace";
  else if (setns (mntns, CLONE_NEWNS) < 0)
    step = "enter the sandbox's mount namespace";
  else if (statfs (workdir, &sf) < 0 || (sf.f_type != OVERLAYFS_SUPER_MAGIC && (errno = EINVAL)))
    step = "find the overlay at the workdir";
  else if (umount2 (workdir, MNT_DETACH) < 0)
    step = "unmount the overlay at the workdir (in the sandbox's mount namespace)";
  else if ((fd = open (workdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
    step = "open the workdir under the overlay";
  else if (fstatfs (fd, &sf) < 0 || (sf.f_type != TMPFS_MAGIC && (errno = EINVAL)))
    step = "find the workspace tmpfs under the overlay";
  if (step == NULL && kist_sync_send_fd (sock, KIST_SYNC_SECCOMP_FD, "ws", 2, fd) == 0)
    _exit (0);
  struct kist_error e = { .errnum = errno ? errno : EIO, .status = KIST_EXIT_FAILURE };
  char msg[160];
  snprintf (msg, sizeof msg, "%s", step ? step : "send the tmpfs to kist");
  e.msg = msg;
  kist_sync_send_error (sock, &e);
  _exit (1);
}

int
kist_workspace_fetch (int userns, int mntns, const char *workdir, int *fsfd, int *ufd,
                      struct kist_error **err)
{
  *fsfd = *ufd = -1;
  int sv[2];
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
    return kist_error_make (err, errno, "--workspace: socketpair");
  pid_t pid = fork ();
  if (pid == 0)
    {
      close (sv[0]);
      fetch_child (sv[1], userns, mntns, workdir);
    }
  close (sv[1]);
  _cleanup_close_ int sock = sv[0];
  if (pid < 0)
    return kist_error_make (err, errno, "--workspace: fork to read the workspace tmpfs");
  char type = 0;
  _cleanup_free_ char *payload = NULL;
  size_t len = 0;
  int fd = -1;
  int r = kist_sync_recv_fd (sock, &type, &payload, &len, &fd);
  while (waitpid (pid, NULL, 0) < 0 && errno == EINTR)
    ;
  if (r == 0 && type == KIST_SYNC_ERROR)
    {
      kist_sync_decode_error (payload, len, err);
      return kist_error_wrap (err, "--workspace: read the workspace tmpfs in the sandbox's mount "
                                   "namespace");
    }
  if (r < 0 || fd < 0)
    {
      if (fd >= 0)
        close (fd);
      return kist_error_make (err, r < 0 ? -r : EPROTO,
                              "--workspace: the workspace tmpfs did not arrive from the sandbox's "
                              "mount namespace");
    }
  *fsfd = fd;
  *ufd = openat (fd, KIST_WORKSPACE_UPPER, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (*ufd < 0)
    {
      close (steal_fd (fsfd));
      return kist_error_make (err, errno, "--workspace: open the upper dir in the workspace tmpfs");
    }
  return 0;
}

/* The first regular file of fsize bytes or more under fd (rel names it). */
static int
find_big (int fd, const char *rel, uint64_t fsize, int depth, char **found, off_t *size)
{
  if (depth > WS_MAX_DEPTH)
    return -ELOOP;
  /* Its own open file (not a dup: the merge reads fd's directory later). */
  int rfd = openat (fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (rfd < 0)
    return -errno;
  _cleanup_dir_ DIR *d = fdopendir (rfd);
  if (d == NULL)
    {
      int e = errno;
      close (rfd);
      return -e;
    }
  struct dirent *de;
  while (*found == NULL && (de = kist_readdir (d)) != NULL)
    {
      struct stat st;
      if (fstatat (fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return -errno;
      _cleanup_free_ char *sub = rel[0] ? xasprintf ("%s/%s", rel, de->d_name)
                                        : xstrdup (de->d_name);
      if (S_ISREG (st.st_mode) && (uint64_t) st.st_size >= fsize)
        {
          *found = steal_pointer (&sub);
          *size = st.st_size;
        }
      else if (S_ISDIR (st.st_mode))
        {
          _cleanup_close_ int sfd = open_dir_at (fd, de->d_name, &st);
          if (sfd < 0)
            return -errno;
          int r = find_big (sfd, sub, fsize, depth + 1, found, size);
          if (r < 0)
            return r;
        }
    }
  return 0;
}

int
kist_workspace_overflow (int fsfd, int ufd, const struct kist_workspace_limits *l, char **why,
                         int *errnum, struct kist_error **err)
{
  *why = NULL;
  struct statfs sf;
  if (fsfd >= 0 && fstatfs (fsfd, &sf) == 0)
    {
      unsigned long long bs = (unsigned long long) sf.f_bsize;
      if (sf.f_bfree == 0)
        {
          *errnum = ENOSPC;
          *why = l->size ? xasprintf ("its upper layer is full: %llu bytes of --workspace-size "
                                      "%llu",
                                      (unsigned long long) sf.f_blocks * bs,
                                      (unsigned long long) l->size)
                         : xasprintf ("its upper layer is full: %llu bytes (the tmpfs's default "
                                      "size; give --workspace-size)",
                                      (unsigned long long) sf.f_blocks * bs);
          return 1;
        }
      if (sf.f_ffree == 0)
        {
          unsigned long long used = (unsigned long long) sf.f_files;
          used = used > KIST_WORKSPACE_INODE_OVERHEAD ? used - KIST_WORKSPACE_INODE_OVERHEAD : 0;
          *errnum = EDQUOT;
          *why = xasprintf ("its upper layer has no inodes left: %llu of --workspace-inodes %llu",
                            used, (unsigned long long) (l->inodes ? l->inodes : sf.f_files));
          return 1;
        }
    }
  if (l->fsize)
    {
      _cleanup_free_ char *found = NULL;
      off_t size = 0;
      int r = find_big (ufd, "", l->fsize, 0, &found, &size);
      if (r < 0)
        return kist_error_make (err, -r, "--workspace: look for files of --max-file-size in the "
                                         "upper dir");
      if (found)
        {
          *errnum = EFBIG;
          *why = xasprintf ("a file reached --max-file-size %llu: `%s` (%lld bytes)",
                            (unsigned long long) l->fsize, found, (long long) size);
          return 1;
        }
    }
  if (l->xfsz)
    {
      *errnum = EFBIG;
      *why = xstrdup ("the command was killed by SIGXFSZ (a file reached --max-file-size)");
      return 1;
    }
  return 0;
}
