/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: the container root (layers rootfs.propagation, rootfs.bind,
 * rootfs.pivot_root and rootfs.readonly).
 *
 * Runs in the container init, inside its new mount namespace:
 *   prepare   propagation of "/", then root.path bound recursively onto
 *             itself so that it is a mount point (pivot_root needs one);
 *   pivot     pivot_root(".", ".") and a lazy detach of the old root (or,
 *             with --no-pivot, MS_MOVE onto "/" and chroot);
 *   readonly  root.readonly as a mount attribute of the new "/".
 * Every step is read back from statx(STATX_MNT_ID) and /proc/self/mountinfo. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "layer.h"
#include "mountinfo.h"
#include "ns.h"
#include "resolve.h"
#include "util.h"

/* ---------------------------------------------------------- propagation */

struct prop_type
{
  const char *name;
  unsigned long flags;
};

static const struct prop_type prop_types[] = {
  { "private", MS_PRIVATE },       { "rprivate", MS_PRIVATE | MS_REC },
  { "slave", MS_SLAVE },           { "rslave", MS_SLAVE | MS_REC },
  { "shared", MS_SHARED },         { "rshared", MS_SHARED | MS_REC },
  { "unbindable", MS_UNBINDABLE }, { "runbindable", MS_UNBINDABLE | MS_REC },
};

static const struct prop_type *
prop_lookup (const char *name)
{
  for (size_t i = 0; i < KIST_ARRAY_SIZE (prop_types); i++)
    if (strcmp (prop_types[i].name, name) == 0)
      return &prop_types[i];
  return NULL;
}

/* Check one mount against the propagation asked for.  Returns NULL when it
 * matches, else a short description of what the kernel says. */
static const char *
prop_mismatch (const struct kist_mountinfo_entry *e, unsigned long flags)
{
  bool shared = kist_mountinfo_has_optional (e, "shared:"), master = kist_mountinfo_has_optional (e, "master:");
  bool unbindable = kist_mountinfo_has_optional (e, "unbindable");
  if (flags & MS_SHARED)
    return shared ? NULL : "not shared";
  if (flags & MS_SLAVE)
    /* A private mount made a slave stays private (it has no master). */
    return shared ? "still shared" : NULL;
  if (flags & MS_PRIVATE)
    return (shared || master || unbindable) ? "still has a peer group or master" : NULL;
  if (flags & MS_UNBINDABLE)
    return unbindable ? NULL : "not unbindable";
  return NULL;
}

/* Verify the propagation of the mount that "/" is (and, for MS_REC, of every
 * mount visible).  procfd: a /proc/PID fd or -1.  *desc gets the optional
 * fields of the root mount. */
static int
prop_verify_keep (int procfd, unsigned long flags, const char *name, char **desc,
                  struct kist_mountinfo *t, struct kist_error **err)
{
  uint64_t root_id;
  if (kist_mnt_id_at (AT_FDCWD, "/", 0, &root_id, err) < 0)
    return -1;
  if (kist_mountinfo_read (procfd >= 0 ? procfd : AT_FDCWD,
                           procfd >= 0 ? "mountinfo" : "/proc/self/mountinfo", t, err)
      < 0)
    return -1;
  const struct kist_mountinfo_entry *root = kist_mountinfo_find (t, root_id);
  if (root == NULL)
    return kist_error_make (err, ENOENT, "the root mount (id %llu) is not in mountinfo",
                            (unsigned long long) root_id);
  const char *why = prop_mismatch (root, flags);
  if (why)
    return kist_error_make (err, EIO, "%s requested, but mountinfo says the root mount is %s (%s)",
                            name, why, root->optional[0] ? root->optional : "private");
  if (flags & MS_REC)
    for (size_t i = 0; i < t->n; i++)
      if ((why = prop_mismatch (&t->e[i], flags)))
        return kist_error_make (err, EIO, "%s requested, but mountinfo says mount %s is %s (%s)",
                                name, t->e[i].point, why,
                                t->e[i].optional[0] ? t->e[i].optional : "private");
  *desc = xstrdup (root->optional[0] ? root->optional : "private");
  return 0;
}

static int
prop_verify (int procfd, unsigned long flags, const char *name, char **desc,
             struct kist_error **err)
{
  _cleanup_mountinfo_ struct kist_mountinfo t = { 0 };
  return prop_verify_keep (procfd, flags, name, desc, &t, err);
}

static const char *
root_propagation (const struct kist_ctx *ctx)
{
  return ctx->spec && ctx->spec->linux_ ? ctx->spec->linux_->rootfs_propagation : NULL;
}

/* *t: the mountinfo read to verify an rprivate "/" (after the last mount
 * change of this layer), for rootfs.bind's look-up of the rootfs's parent
 * mount: with every mount private nothing propagates in before the bind.
 * Left empty otherwise (rootfs.bind then reads its own). */
static int
apply_propagation (struct kist_ctx *ctx, struct kist_report *r, struct kist_mountinfo *t,
                   struct kist_error **err)
{
  const char *value = root_propagation (ctx);
  _cleanup_error_ struct kist_error *e = NULL;
  _cleanup_free_ char *desc = NULL;

  if (value == NULL)
    {
      if (mount (NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
        return kist_report_failed (r, "rootfs.propagation", "rprivate", errno, err,
                                   "kist default rprivate: mount(\"/\", MS_REC|MS_PRIVATE): %s",
                                   strerror (errno));
      if (prop_verify_keep (-1, MS_REC | MS_PRIVATE, "rprivate", &desc, t, &e) < 0)
        {
          kist_mountinfo_free (t); /* possibly partial: rootfs.bind reads its own */
          return kist_report_failed (r, "rootfs.propagation", "rprivate", e->errnum, err,
                                     "kist default rprivate: %s", e->msg);
        }
      kist_report_skip (r, "rootfs.propagation", "kist default: rprivate");
      return 0;
    }

  const struct prop_type *pt = prop_lookup (value);
  if (pt == NULL)
    return kist_report_failed (r, "rootfs.propagation", value, EINVAL, err,
                               "linux.rootfsPropagation `%s` is not one of private, rprivate, "
                               "slave, rslave, shared, rshared, unbindable, runbindable",
                               value);
  /* shared and unbindable are applied to the new root later (see
   * apply_deferred_propagation).  Until then "/" is shared (as runc does, so
   * that the submounts keep their peers) or, for unbindable, rprivate: an
   * unbindable "/" could not be bound as the rootfs. */
  unsigned long now = (pt->flags & MS_UNBINDABLE) ? MS_REC | MS_PRIVATE : pt->flags;
  const char *now_name = (pt->flags & MS_UNBINDABLE) ? "rprivate" : value;
  if (mount (NULL, "/", NULL, now, NULL) < 0)
    return kist_report_failed (r, "rootfs.propagation", value, errno, err,
                               "linux.rootfsPropagation %s: mount(\"/\", %s): %s", value,
                               now_name, strerror (errno));
  _cleanup_mountinfo_ struct kist_mountinfo own = { 0 };
  struct kist_mountinfo *keep = now == (MS_REC | MS_PRIVATE) ? t : &own;
  if (prop_verify_keep (-1, now, now_name, &desc, keep, &e) < 0)
    {
      kist_mountinfo_free (keep);
      return kist_report_failed (r, "rootfs.propagation", value, e->errnum, err,
                                 "linux.rootfsPropagation: %s", e->msg);
    }
  if (!(pt->flags & (MS_SHARED | MS_UNBINDABLE)))
    kist_report_applied (r, "rootfs.propagation", value, "root mount: %s", desc);
  return 0;
}

/* linux.rootfsPropagation shared/rshared is applied to the new root right
 * after pivot_root (as runc does: pivot_root refuses a shared new root);
 * unbindable/runbindable at the very end, in kist_rootfs_readonly, because
 * masked and read-only paths are binds from the root's own mounts.  A
 * degraded failure earlier already recorded the entry: then nothing is done. */
static int
apply_deferred_propagation (struct kist_ctx *ctx, unsigned long which, int procfd,
                            struct kist_report *r, struct kist_error **err)
{
  const char *value = root_propagation (ctx);
  const struct prop_type *pt = value ? prop_lookup (value) : NULL;
  if (pt == NULL || !(pt->flags & which) || kist_report_find (r, "rootfs.propagation"))
    return 0;
  _cleanup_error_ struct kist_error *e = NULL;
  _cleanup_free_ char *desc = NULL;
  if (mount (NULL, "/", NULL, pt->flags, NULL) < 0)
    return kist_report_failed (r, "rootfs.propagation", value, errno, err,
                               "linux.rootfsPropagation %s on the new root: %s", value,
                               strerror (errno));
  if (prop_verify (procfd, pt->flags, value, &desc, &e) < 0)
    return kist_report_failed (r, "rootfs.propagation", value, e->errnum, err,
                               "linux.rootfsPropagation: %s", e->msg);
  kist_report_applied (r, "rootfs.propagation", value, "new root mount: %s", desc);
  return 0;
}

/* pivot_root and the bind below refuse / would propagate through a shared
 * parent: make the mount that holds root.path private (runc does the same).
 * *note says what was done (may stay NULL). */
static int
make_parent_private (struct kist_ctx *ctx, struct kist_mountinfo *t, char **note,
                     struct kist_error **err)
{
  uint64_t id;
  if (kist_mnt_id_at (AT_FDCWD, ctx->rootfs, 0, &id, err) < 0)
    return -1;
  if (t->n == 0 && kist_mountinfo_read (AT_FDCWD, "/proc/self/mountinfo", t, err) < 0)
    return -1;
  const struct kist_mountinfo_entry *m = kist_mountinfo_find (t, id);
  if (m == NULL)
    return kist_error_make (err, ENOENT, "the mount holding `%s` (id %llu) is not in mountinfo",
                            ctx->rootfs, (unsigned long long) id);
  if (!kist_mountinfo_has_optional (m, "shared:"))
    return 0;
  if (mount (NULL, m->point, NULL, MS_PRIVATE, NULL) < 0)
    return kist_error_make (err, errno, "make the parent mount `%s` of the rootfs private",
                            m->point);
  *note = xasprintf ("; parent mount %s was shared, made private", m->point);
  return 0;
}

/* ----------------------------------------------------------- rootfs.bind */

static int
bind_rootfs (struct kist_ctx *ctx, struct kist_mountinfo *t, char **detail,
             struct kist_error **err)
{
  _cleanup_free_ char *note = NULL;
  if (make_parent_private (ctx, t, &note, err) < 0)
    return -1;

  _cleanup_close_ int tree
      = open_tree (AT_FDCWD, ctx->rootfs, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
  if (tree < 0)
    return kist_error_make (err, errno, "open_tree(OPEN_TREE_CLONE|AT_RECURSIVE) `%s`",
                            ctx->rootfs);
  if (move_mount (tree, "", AT_FDCWD, ctx->rootfs, MOVE_MOUNT_F_EMPTY_PATH) < 0)
    return kist_error_make (err, errno, "move_mount the rootfs bind onto `%s`", ctx->rootfs);

  _cleanup_close_ int fd = open (ctx->rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return kist_error_make (err, errno, "open `%s` after the bind", ctx->rootfs);

  uint64_t tree_id, fd_id, parent_id;
  if (kist_mnt_id_at (tree, "", 0, &tree_id, err) < 0 || kist_mnt_id_at (fd, "", 0, &fd_id, err) < 0
      || kist_mnt_id_at (fd, "..", 0, &parent_id, err) < 0)
    return kist_error_wrap (err, "verify the rootfs bind");
  if (fd_id != tree_id || fd_id == parent_id)
    return kist_error_make (err, EIO,
                            "verify the rootfs bind: `%s` is mount %llu, expected the new bind "
                            "%llu on top of its parent %llu",
                            ctx->rootfs, (unsigned long long) fd_id,
                            (unsigned long long) tree_id, (unsigned long long) parent_id);
  if (ctx->rootfs_fd >= 0)
    close (ctx->rootfs_fd);
  ctx->rootfs_fd = steal_fd (&fd);
  *detail = xasprintf ("%s bound recursively onto itself (mount %llu on %llu)%s", ctx->rootfs,
                       (unsigned long long) fd_id, (unsigned long long) parent_id,
                       note ? note : "");
  return 0;
}

/* Every mount change below must happen in the container's own mount
 * namespace: never, whatever the policy, in the host's. */
static int
check_own_mount_ns (struct kist_ctx *ctx, struct kist_error **err)
{
  uint64_t ino = 0;
  int ret = kist_ns_ino (AT_FDCWD, "/proc/self/ns/mnt", &ino);
  if (ret < 0)
    return kist_error_make (err, -ret, "read /proc/self/ns/mnt");
  if (ctx->host_ns_ino[KIST_NS_MOUNT] == 0)
    return kist_error_make (err, EINVAL,
                            "the host's mount namespace was not recorded before clone; refusing "
                            "to change any mount");
  if (ino == ctx->host_ns_ino[KIST_NS_MOUNT])
    return kist_error_make (err, EPERM,
                            "the container init is still in the host's mount namespace; kist "
                            "sets up the root only in a new one: add {\"type\": \"mount\"} to "
                            "linux.namespaces");
  return 0;
}

int
kist_rootfs_prepare (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err)
{
  if (ctx->rootfs == NULL)
    return kist_error_make (err, EINVAL, "rootfs: no root path");
  _cleanup_error_ struct kist_error *nserr = NULL;
  if (check_own_mount_ns (ctx, &nserr) < 0)
    {
      /* Recorded, but never allowed to degrade. */
      kist_report_failed (r, "rootfs.bind", "", nserr->errnum, NULL, "%s", nserr->msg);
      return kist_error_make (err, 0, "rootfs: %s", nserr->msg);
    }
  _cleanup_mountinfo_ struct kist_mountinfo t = { 0 };
  int ret = apply_propagation (ctx, r, &t, err);
  if (ret < 0)
    return ret;

  _cleanup_error_ struct kist_error *e = NULL;
  _cleanup_free_ char *detail = NULL;
  if (bind_rootfs (ctx, &t, &detail, &e) < 0)
    {
      ret = kist_report_failed (r, "rootfs.bind", "", e->errnum, err, "%s", e->msg);
      if (ret < 0)
        return ret;
      /* Degraded: go on with the plain directory (pivot_root will refuse it
       * and say so in its own entry). */
      if (ctx->rootfs_fd < 0)
        ctx->rootfs_fd = open (ctx->rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
      if (ctx->rootfs_fd < 0)
        return kist_error_make (err, errno, "open the rootfs `%s`", ctx->rootfs);
      return 0;
    }
  kist_report_applied (r, "rootfs.bind", "", "%s", detail);
  return 0;
}

/* ------------------------------------------------------ rootfs.pivot_root */

/* --no-pivot: hide the host's full proc and sysfs mounts (outside the rootfs)
 * before moving the root, as runc does: with chroot they stay in the mount
 * namespace.  Returns the number detached. */
static int
detach_host_procfs (struct kist_ctx *ctx, size_t *n, struct kist_error **err)
{
  _cleanup_mountinfo_ struct kist_mountinfo t = { 0 };
  if (kist_mountinfo_read (AT_FDCWD, "/proc/self/mountinfo", &t, err) < 0)
    return -1;
  *n = 0;
  for (size_t i = t.n; i-- > 0;)
    {
      const struct kist_mountinfo_entry *m = &t.e[i];
      if (strcmp (m->root, "/") != 0
          || (strcmp (m->fstype, "proc") != 0 && strcmp (m->fstype, "sysfs") != 0)
          || kist_path_is_or_under (m->point, ctx->rootfs))
        continue;
      if (mount (NULL, m->point, NULL, MS_SLAVE | MS_REC, NULL) < 0)
        {
          if (errno == ENOENT)
            continue;
          return kist_error_make (err, errno, "--no-pivot: make `%s` a slave", m->point);
        }
      if (umount2 (m->point, MNT_DETACH) < 0)
        {
          if (errno != EINVAL && errno != EPERM)
            return kist_error_make (err, errno, "--no-pivot: detach `%s`", m->point);
          /* Locked (user namespace): cover it instead. */
          if (mount ("tmpfs", m->point, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
                     "size=4k")
              < 0)
            return kist_error_make (err, errno, "--no-pivot: cover `%s` with a tmpfs", m->point);
        }
      (*n)++;
    }
  return 0;
}

static int
do_pivot (struct kist_ctx *ctx, int procfd, char **detail, uint64_t *root_mnt,
          struct kist_error **err)
{
  uint64_t old_root_id, new_root_id;
  struct stat want, got;

  if (fstat (ctx->rootfs_fd, &want) < 0)
    return kist_error_make (err, errno, "stat the rootfs fd");
  if (kist_mnt_id_at (AT_FDCWD, "/", 0, &old_root_id, err) < 0
      || kist_mnt_id_at (ctx->rootfs_fd, "", 0, &new_root_id, err) < 0)
    return -1;

  size_t detached = 0;
  if (ctx->no_pivot && detach_host_procfs (ctx, &detached, err) < 0)
    return -1;

  if (fchdir (ctx->rootfs_fd) < 0)
    return kist_error_make (err, errno, "chdir into the rootfs `%s`", ctx->rootfs);

  if (ctx->no_pivot)
    {
      if (mount (".", "/", NULL, MS_MOVE, NULL) < 0)
        return kist_error_make (err, errno, "--no-pivot: mount(MS_MOVE) `%s` onto /", ctx->rootfs);
      if (chroot (".") < 0)
        return kist_error_make (err, errno, "--no-pivot: chroot `%s`", ctx->rootfs);
    }
  else
    {
      _cleanup_close_ int oldroot = open ("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
      if (oldroot < 0)
        return kist_error_make (err, errno, "open the old root / before pivot_root");
      if (syscall (SYS_pivot_root, ".", ".") < 0)
        return kist_error_make (err, errno,
                                "pivot_root `%s`%s", ctx->rootfs,
                                errno == EINVAL ? " (is the rootfs on a ramfs/initramfs? then use "
                                                  "--no-pivot)"
                                                : "");
      /* The old root is now stacked on the new one.  Go into it explicitly
       * (the kernel does not promise where the cwd is after pivot_root),
       * keep its unmount from propagating anywhere, then detach it. */
      if (fchdir (oldroot) < 0)
        return kist_error_make (err, errno, "chdir into the old root after pivot_root");
      if (mount (NULL, ".", NULL, MS_SLAVE | MS_REC, NULL) < 0)
        return kist_error_make (err, errno, "make the old root a slave after pivot_root");
      if (umount2 (".", MNT_DETACH) < 0)
        return kist_error_make (err, errno, "detach the old root after pivot_root");
    }
  if (chdir ("/") < 0)
    return kist_error_make (err, errno, "chdir / in the new root");

  /* Verify: "/" is the rootfs, the old root is gone from our view. */
  if (stat ("/", &got) < 0)
    return kist_error_make (err, errno, "stat / after pivot");
  if (got.st_dev != want.st_dev || got.st_ino != want.st_ino)
    return kist_error_make (err, EIO, "after %s, / is not the rootfs `%s` (dev/inode differ)",
                            ctx->no_pivot ? "chroot" : "pivot_root", ctx->rootfs);
  _cleanup_mountinfo_ struct kist_mountinfo t = { 0 };
  if (kist_mountinfo_read (procfd, "mountinfo", &t, err) < 0)
    return kist_error_wrap (err, "verify %s", ctx->no_pivot ? "chroot" : "pivot_root");
  if (kist_mountinfo_find (&t, old_root_id))
    return kist_error_make (err, EIO, "after %s, the old root mount %llu is still visible",
                            ctx->no_pivot ? "chroot" : "pivot_root",
                            (unsigned long long) old_root_id);
  uint64_t root_id;
  if (kist_mnt_id_at (AT_FDCWD, "/", 0, &root_id, err) < 0)
    return -1;
  if (root_id != new_root_id)
    return kist_error_make (err, EIO, "after %s, / is mount %llu, not the rootfs bind %llu",
                            ctx->no_pivot ? "chroot" : "pivot_root", (unsigned long long) root_id,
                            (unsigned long long) new_root_id);
  for (size_t i = 0; i < t.n; i++)
    if (t.e[i].point[0] != '/')
      return kist_error_make (err, EIO, "after pivot, mount %llu lies outside the root (`%s`)",
                              (unsigned long long) t.e[i].id, t.e[i].point);
  *root_mnt = root_id;
  if (ctx->no_pivot)
    *detail = xasprintf ("chroot (--no-pivot): root moved onto / and chrooted; %zu host "
                         "proc/sysfs mount(s) detached; %zu mounts visible",
                         detached, t.n);
  else
    *detail = xasprintf ("pivot_root; old root (mount %llu) detached; / is mount %llu; %zu mounts "
                         "visible",
                         (unsigned long long) old_root_id, (unsigned long long) new_root_id, t.n);
  return 0;
}

int
kist_rootfs_pivot (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err)
{
  _cleanup_error_ struct kist_error *e = NULL;
  _cleanup_free_ char *detail = NULL;
  const char *requested = ctx->no_pivot ? "chroot" : "";

  if (ctx->rootfs_fd < 0)
    return kist_report_failed (r, "rootfs.pivot_root", requested, EBADF, err,
                               "the rootfs was not prepared (no rootfs fd)");
  /* Our /proc/PID directory, opened before the old root goes: it lets us read
   * the new mountinfo even if the container has no /proc. */
  _cleanup_close_ int procfd = open ("/proc/self", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (procfd < 0)
    return kist_report_failed (r, "rootfs.pivot_root", requested, errno, err,
                               "open /proc/self to verify the pivot: %s", strerror (errno));
  uint64_t root_mnt = 0;
  if (do_pivot (ctx, procfd, &detail, &root_mnt, &e) < 0)
    return kist_report_failed (r, "rootfs.pivot_root", requested, e->errnum, err, "%s", e->msg);
  kist_report_applied (r, "rootfs.pivot_root", requested, "%s", detail);
  /* and /proc/PID/root from outside (verify.c) */
  kist_report_expect (r, "rootfs.pivot_root", "mnt=%llu", (unsigned long long) root_mnt);

  return apply_deferred_propagation (ctx, MS_SHARED, procfd, r, err);
}

/* ------------------------------------------------------- rootfs.readonly */

static int
make_root_readonly (char **detail, struct kist_error **err)
{
  struct mount_attr attr = { .attr_set = MOUNT_ATTR_RDONLY };
  if (mount_setattr (AT_FDCWD, "/", 0, &attr, sizeof attr) < 0)
    return kist_error_make (err, errno, "mount_setattr(\"/\", MOUNT_ATTR_RDONLY)");

  struct statvfs sv;
  if (statvfs ("/", &sv) < 0)
    return kist_error_make (err, errno, "statvfs /");
  if (!(sv.f_flag & ST_RDONLY))
    return kist_error_make (err, EIO, "after mount_setattr, statvfs(\"/\") does not say ST_RDONLY");

  char probe[64];
  snprintf (probe, sizeof probe, "/.kist-readonly-probe-%d", (int) getpid ());
  int fd = open (probe, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd >= 0)
    {
      close (fd);
      unlink (probe);
      return kist_error_make (err, EIO, "the root is still writable: creating %s succeeded",
                              probe);
    }
  if (errno != EROFS)
    return kist_error_make (err, errno, "probe: creating %s failed, but not with EROFS", probe);
  *detail = xstrdup ("/ mounted read-only (statvfs ST_RDONLY; create fails with EROFS)");
  return 0;
}

int
kist_rootfs_readonly (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err)
{
  int ret = apply_deferred_propagation (ctx, MS_UNBINDABLE, -1, r, err);
  if (ret < 0)
    return ret;
  if (!ctx->spec->root_readonly)
    {
      kist_report_skip (r, "rootfs.readonly", "root is writable");
      return 0;
    }
  _cleanup_error_ struct kist_error *e = NULL;
  _cleanup_free_ char *detail = NULL;
  if (make_root_readonly (&detail, &e) < 0)
    return kist_report_failed (r, "rootfs.readonly", "", e->errnum, err, "root.readonly: %s",
                               e->msg);
  kist_report_applied (r, "rootfs.readonly", "", "%s", detail);
  kist_report_expect (r, "rootfs.readonly", "rdonly=1"); /* and from outside */
  return 0;
}
