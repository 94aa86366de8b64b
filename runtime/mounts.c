/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: config.json "mounts" (layer "mounts").
 *
 * Runs in the container init before pivot_root.  Each entry, in order:
 *   - the destination is resolved (and created) inside the root with
 *     kist_resolve_mkpath, so a symlink in the image cannot point it outside;
 *     proc, sysfs and anything at /proc, /sys, /dev or below /proc with
 *     kist_resolve_mkpath_exact: no symlink at all (runc: "must be mounted on
 *     ordinary directory"), and no other mount may reach procfs or sysfs
 *     through a symlink (see dest_exactness);
 *   - a bind ("bind" type, or a "bind"/"rbind" option) is an open_tree clone
 *     of the source, its attributes set with mount_setattr while it is still
 *     detached, then move_mount onto the destination fd;
 *   - an idmapped bind (idmap, ridmap, a mount's uidMappings/gidMappings)
 *     is the same, but its tree was made, idmapped and given its attributes
 *     by the parent before clone (mounts_idmap.c): here it is only moved,
 *     and mountinfo must say "idmapped";
 *   - anything else is fsopen(type) + fsconfig(source, options) + fsmount
 *     with the attribute flags + move_mount;
 *   - propagation options are applied after the move (mount_setattr);
 *   - read back: the destination is reopened and must be the new mount
 *     (statx mount id), with the requested flags (fstatvfs) and the expected
 *     filesystem (fstatfs magic, or the source's st_dev for a bind).
 * Options that are mount flags never reach the filesystem; every other
 * option is passed to fsconfig ("key=value" as a string, a bare word as a
 * flag), so the filesystem itself rejects what it does not know.  On a bind
 * those other options (mode=, size=, ...) mean nothing: accepted and
 * ignored, as runc does, and the report lists them.  tmpcopyup on a tmpfs
 * copies the image's content of the destination into it (see copyup);
 * cgroup2 refused in a user namespace without a cgroup namespace becomes a
 * read-only bind of the container's own cgroup, as sysfs refused in a user
 * namespace becomes a read-only rbind of the host's /sys.
 *
 * This file applies one mount and runs the layer; mounts_opts.c turns an
 * entry's options into a plan, mounts_special.c has tmpcopyup and the
 * cgroup2 and sysfs fallbacks, mounts_idmap.c the idmapped trees (shared
 * declarations: mounts_int.h). */
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
#include <sys/statvfs.h>
#include <unistd.h>

#include "cgroup.h"
#include "layer.h"
#include "mounts_int.h"
#include "mountinfo.h"
#include "ns.h"
#include "resolve.h"
#include "util.h"

/* ------------------------------------------------------------ helpers */

/* The messages the kernel queued on an fs context ("e tmpfs: Bad value for
 * 'size'"), joined with "; ".  NULL when there are none. */
static char *
fs_log (int fsfd)
{
  char *out = NULL;
  char buf[1024];
  for (int i = 0; i < 16; i++)
    {
      ssize_t n = read (fsfd, buf, sizeof buf - 1);
      if (n <= 0)
        break;
      buf[n] = '\0';
      kist_rstrip (buf);
      const char *msg = (n > 2 && buf[1] == ' ') ? buf + 2 : buf;
      char *next = out ? xasprintf ("%s; %s", out, msg) : xstrdup (msg);
      free (out);
      out = next;
    }
  return out;
}

static int
fs_error (struct kist_error **err, int fsfd, int errnum, const char *what)
{
  _cleanup_free_ char *log = fs_log (fsfd);
  if (log == NULL)
    return kist_error_make (err, errnum, "%s", what);
  /* strerror first, then what the kernel said. */
  int ret = kist_error_make (err, 0, "%s: %s (kernel: %s)", what, strerror (errnum), log);
  if (err && *err && (*err)->errnum == 0)
    {
      (*err)->errnum = errnum;
      ret = -errnum;
    }
  return ret;
}

static unsigned long
fs_magic (const char *type)
{
  static const struct
  {
    const char *name;
    unsigned long magic;
  } m[] = {
    { "proc", PROC_SUPER_MAGIC },       { "sysfs", SYSFS_MAGIC },
    { "tmpfs", TMPFS_MAGIC },           { "devpts", DEVPTS_SUPER_MAGIC },
    { "mqueue", MQUEUE_MAGIC },         { "cgroup2", CGROUP2_SUPER_MAGIC },
  };
  for (size_t i = 0; i < KIST_ARRAY_SIZE (m); i++)
    if (strcmp (m[i].name, type) == 0)
      return m[i].magic;
  return 0;
}

/* The mountinfo entry of mntfd (*id), read into *t from the host's /proc:
 * we are before pivot_root.  NULL with *err. */
static const struct kist_mountinfo_entry *
self_entry (int mntfd, struct kist_mountinfo *t, uint64_t *id, const char *what,
            struct kist_error **err)
{
  if (kist_mnt_id_at (mntfd, "", 0, id, err) < 0
      || kist_mountinfo_read (AT_FDCWD, "/proc/self/mountinfo", t, err) < 0)
    {
      kist_error_wrap (err, "verify %s", what);
      return NULL;
    }
  const struct kist_mountinfo_entry *e = kist_mountinfo_find (t, *id);
  if (e == NULL)
    kist_error_make (err, ENOENT, "verify %s: mount %llu is not in /proc/self/mountinfo", what,
                     (unsigned long long) *id);
  return e;
}

int
mnt_apply_propagation (int mntfd, const struct plan *p, struct kist_error **err)
{
  if (p->prop == 0)
    return 0;
  struct mount_attr attr = { .propagation = p->prop };
  if (mount_setattr (mntfd, "", AT_EMPTY_PATH | (p->prop_rec ? AT_RECURSIVE : 0), &attr,
                     sizeof attr)
      < 0)
    return kist_error_make (err, errno, "set the propagation");
  uint64_t id;
  _cleanup_mountinfo_ struct kist_mountinfo t = { 0 };
  const struct kist_mountinfo_entry *e = self_entry (mntfd, &t, &id, "the propagation", err);
  if (e == NULL)
    return -1;
  const char *fields = e->optional;
  bool shared = kist_mountinfo_has_optional (e, "shared:");
  bool master = kist_mountinfo_has_optional (e, "master:");
  bool unbindable = kist_mountinfo_has_optional (e, "unbindable");
  bool ok = true;
  switch (p->prop)
    {
    case MS_SHARED:
      ok = shared;
      break;
    case MS_SLAVE:
      ok = !shared; /* a private mount made a slave stays private */
      break;
    case MS_PRIVATE:
      ok = !shared && !master && !unbindable;
      break;
    case MS_UNBINDABLE:
      ok = unbindable;
      break;
    }
  if (!ok)
    return kist_error_make (err, EIO, "propagation not applied: mountinfo says `%s`",
                            fields[0] ? fields : "private");
  return 0;
}

struct flag_check
{
  uint64_t attr;
  unsigned long st;
  const char *set_name, *clr_name;
};

static const struct flag_check flag_checks[] = {
  { MOUNT_ATTR_RDONLY, ST_RDONLY, "ro", "rw" },
  { MOUNT_ATTR_NOSUID, ST_NOSUID, "nosuid", "suid" },
  { MOUNT_ATTR_NODEV, ST_NODEV, "nodev", "dev" },
  { MOUNT_ATTR_NOEXEC, ST_NOEXEC, "noexec", "exec" },
  { MOUNT_ATTR_NODIRATIME, ST_NODIRATIME, "nodiratime", "diratime" },
  { MOUNT_ATTR_NOSYMFOLLOW, ST_NOSYMFOLLOW, "nosymfollow", "symfollow" },
};

int
mnt_verify_mount (struct kist_ctx *ctx, const char *dest, int mntfd, int targetfd,
                  const struct plan *p, unsigned long magic, dev_t src_dev, bool check_dev,
                  struct kist_error **err)
{
  _cleanup_close_ int fd = p->exact == EXACT_ALL
                               ? kist_resolve_open_exact (ctx->rootfs_fd, p->clean, O_PATH, 0, err)
                               : kist_resolve_open (ctx->rootfs_fd, dest, O_PATH, 0, err);
  if (fd < 0)
    return kist_error_wrap (err, "verify: reopen the destination");
  uint64_t id, want, under;
  if (kist_mnt_id_at (fd, "", 0, &id, err) < 0 || kist_mnt_id_at (mntfd, "", 0, &want, err) < 0
      || kist_mnt_id_at (targetfd, "", 0, &under, err) < 0)
    return kist_error_wrap (err, "verify");
  if (id != want || id == under)
    return kist_error_make (err, EIO,
                            "verify: the destination is mount %llu, not the new mount %llu (on "
                            "%llu): it was renamed or replaced while kist mounted on it (a "
                            "concurrent change in the image or a shared volume?)",
                            (unsigned long long) id, (unsigned long long) want,
                            (unsigned long long) under);

  struct attrs exp = p->rec;
  mnt_attrs_apply (&exp, p->top.set, p->top.clr);
  /* One fstatfs for the flags and the magic. */
  struct statfs sf;
  struct statvfs sv = { 0 };
  if (kist_fd_statfs_flags (fd, &sf, &sv.f_flag) < 0)
    return kist_error_make (err, errno, "verify: fstatfs");
  for (size_t i = 0; i < KIST_ARRAY_SIZE (flag_checks); i++)
    {
      const struct flag_check *c = &flag_checks[i];
      if ((exp.set & c->attr) && !(sv.f_flag & c->st))
        return kist_error_make (err, EIO, "verify: `%s` requested but the mount is not %s",
                                c->set_name, c->set_name);
      if ((exp.clr & c->attr) && (sv.f_flag & c->st))
        return kist_error_make (err, EIO, "verify: `%s` requested but the mount is %s",
                                c->clr_name, c->set_name);
    }
  if (exp.clr & MOUNT_ATTR__ATIME)
    {
      uint64_t mode = exp.set & MOUNT_ATTR__ATIME;
      bool ok = mode == MOUNT_ATTR_NOATIME     ? (sv.f_flag & ST_NOATIME) != 0
                : mode == MOUNT_ATTR_STRICTATIME ? !(sv.f_flag & (ST_NOATIME | ST_RELATIME))
                                                 : (sv.f_flag & ST_RELATIME) != 0;
      if (!ok)
        return kist_error_make (err, EIO, "verify: the atime mode of the mount is not the one "
                                          "requested");
    }

  if (magic)
    {
      if ((unsigned long) sf.f_type != magic)
        return kist_error_make (err, EIO, "verify: filesystem magic is 0x%lx, expected 0x%lx",
                                (unsigned long) sf.f_type, magic);
    }
  if (check_dev)
    {
      struct stat st;
      if (fstat (fd, &st) < 0)
        return kist_error_make (err, errno, "verify: stat");
      if (st.st_dev != src_dev)
        return kist_error_make (err, EIO, "verify: the destination is not on the source's "
                                          "device");
    }
  /* and from outside, in the waiting process's mountinfo (verify.c) */
  if (p->expect)
    kist_mountinfo_expect_add (p->expect, id, sv.f_flag, p->ro_later, magic ? p->fstype : NULL);
  return 0;
}

int
mnt_setattr_tree (int tree, const struct attrs *a, bool recursive, struct kist_error **err)
{
  if (a->set == 0 && a->clr == 0)
    return 0;
  struct mount_attr attr = { .attr_set = a->set, .attr_clr = a->clr };
  if (mount_setattr (tree, "", AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0), &attr, sizeof attr)
      < 0)
    return kist_error_make (err, errno, "mount_setattr (%s flags)%s",
                            recursive ? "recursive" : "top-level",
                            errno == EPERM && a->clr
                                ? " (a flag the source has cannot be cleared here: it is locked "
                                  "by the user namespace)"
                                : "");
  return 0;
}

/* ------------------------------------------------ exact destinations */

static bool
is_procfs_type (const struct plan *p)
{
  return !p->bind && (strcmp (p->fstype, "proc") == 0 || strcmp (p->fstype, "sysfs") == 0);
}

enum exactness
mnt_dest_exactness (const struct plan *p)
{
  if (is_procfs_type (p) || kist_path_is_or_under (p->clean, "/proc")
      || strcmp (p->clean, "/sys") == 0 || strcmp (p->clean, "/dev") == 0)
    return EXACT_ALL;
  if (kist_path_is_or_under (p->clean, "/sys") || kist_path_is_or_under (p->clean, "/dev"))
    return EXACT_TOP;
  return EXACT_NONE;
}

static int
exact_error (const struct plan *p, struct kist_error **err)
{
  if (is_procfs_type (p))
    return kist_error_wrap (err, "%s must be mounted on an ordinary directory at exactly `%s`",
                            p->fstype, p->clean);
  return kist_error_wrap (err, "a mount at `%s` must land on an ordinary directory at exactly "
                               "that path",
                          p->clean);
}

static bool
on_procfs (int fd)
{
  struct statfs sf;
  return fstatfs (fd, &sf) == 0
         && ((unsigned long) sf.f_type == PROC_SUPER_MAGIC
             || (unsigned long) sf.f_type == SYSFS_MAGIC);
}

/* A target reached by following symlinks must not be on procfs or sysfs
 * unless the same directory is reached with none: a symlink in the image
 * may not point a mount into /proc or /sys. */
static int
check_not_redirected (struct kist_ctx *ctx, const struct plan *p, int target,
                      struct kist_error **err)
{
  if (!on_procfs (target))
    return 0;
  _cleanup_error_ struct kist_error *e = NULL;
  _cleanup_close_ int fd = kist_resolve_open_exact (ctx->rootfs_fd, p->clean, O_PATH, 0, &e);
  struct stat a, b;
  uint64_t ida = 0, idb = 1;
  if (fd >= 0 && fstat (fd, &a) == 0 && fstat (target, &b) == 0
      && kist_mnt_id_at (fd, "", 0, &ida, NULL) == 0
      && kist_mnt_id_at (target, "", 0, &idb, NULL) == 0 && a.st_dev == b.st_dev
      && a.st_ino == b.st_ino && ida == idb)
    return 0;
  return kist_error_make (err, ELOOP,
                          "`%s` leads through a symlink in the image into procfs or sysfs; a "
                          "mount lands there only at its exact path: remove the symlink from the "
                          "image or give the real path as the destination",
                          p->clean);
}

/* The destination's fd (O_PATH), created if missing, resolved as the plan's
 * exactness says. */
static int
resolve_target (struct kist_ctx *ctx, const struct kist_mount *m, const struct plan *p,
                enum kist_mkpath_kind kind, mode_t mode, struct kist_error **err)
{
  if (p->exact == EXACT_ALL)
    {
      int fd = kist_resolve_mkpath_exact (ctx->rootfs_fd, p->clean, kind, mode, err);
      if (fd == -ELOOP)
        return exact_error (p, err);
      return fd;
    }
  if (p->exact == EXACT_TOP)
    {
      const char *top = kist_path_is_or_under (p->clean, "/sys") ? "/sys" : "/dev";
      _cleanup_close_ int fd
          = kist_resolve_mkpath_exact (ctx->rootfs_fd, top, KIST_MKPATH_DIR, 0755, err);
      if (fd == -ELOOP)
        return exact_error (p, err);
      if (fd < 0)
        return fd;
    }
  _cleanup_close_ int target = kist_resolve_mkpath (ctx->rootfs_fd, m->destination, kind, mode,
                                                    err);
  if (target < 0)
    return target;
  if (check_not_redirected (ctx, p, target, err) < 0)
    return -1;
  return steal_fd (&target);
}

/* ------------------------------------------------------------- one mount */

/* The idmapped tree the parent made for mounts[i] (mounts_idmap.c), or -1
 * with *err. */
static int
take_idmap_tree (struct kist_ctx *ctx, size_t i, struct kist_error **err)
{
  struct kist_idmap_tree *t = i < ctx->n_idmap_trees ? &ctx->idmap_trees[i] : NULL;
  if (t && t->fd >= 0)
    return steal_fd (&t->fd);
  if (t && t->why)
    return kist_error_make (err, EIO, "%s", t->why);
  return kist_error_make (err, EIO, "the idmapped tree was not prepared before clone (internal "
                                    "error)");
}

/* The mount's options in mountinfo (the host's /proc: before pivot_root)
 * must say idmapped. */
static int
verify_idmapped (int mntfd, struct plan *p, struct kist_error **err)
{
  uint64_t id;
  _cleanup_mountinfo_ struct kist_mountinfo t = { 0 };
  const struct kist_mountinfo_entry *e = self_entry (mntfd, &t, &id, "the idmap", err);
  if (e == NULL)
    return -1;
  if (!kist_mountinfo_has_opt (e->opts, "idmapped"))
    return kist_error_make (err, EIO, "verify: mountinfo shows mount %llu with options `%s`, "
                                      "without `idmapped`",
                            (unsigned long long) id, e->opts);
  p->idmap_mnt_id = id;
  return 0;
}

static int
mount_bind (struct kist_ctx *ctx, size_t i, const struct kist_mount *m, struct plan *p,
            struct kist_error **err)
{
  if (m->source == NULL || m->source[0] == '\0')
    return kist_error_make (err, EINVAL, "a bind mount needs a source");
  unsigned flags = OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | (p->rbind ? AT_RECURSIVE : 0);
  int dirfd = AT_FDCWD;
  _cleanup_free_ char *joined = NULL;
  const char *src = m->source;
  /* A relative source is relative to the bundle (as runc).  By its path in
   * this mount namespace: the bundle fd was opened in the caller's, and
   * open_tree(OPEN_TREE_CLONE) refuses a mount of another namespace. */
  if (src[0] != '/')
    src = joined = xasprintf ("%s/%s", ctx->bundle, m->source);
  /* An idmapped tree was made, with its attributes, by the parent. */
  _cleanup_close_ int tree = p->idmap ? take_idmap_tree (ctx, i, err) : open_tree (dirfd, src, flags);
  if (tree < 0 && p->idmap)
    return -1;
  if (tree < 0)
    {
      int e = errno;
      if (e == EINVAL && !p->rbind && ctx->userns)
        return kist_error_make (err, e,
                                "open_tree: the source has submounts locked by the user "
                                "namespace; use rbind");
      /* The reason reads "mounts[N] DEST (bind of SRC): No such file or directory". */
      kist_error_make (err, 0, "%s", strerror (e));
      if (err && *err && (*err)->errnum == 0)
        (*err)->errnum = e;
      return -e;
    }
  struct stat st;
  if (fstat (tree, &st) < 0)
    return kist_error_make (err, errno, "stat the source");

  _cleanup_close_ int target
      = resolve_target (ctx, m, p, S_ISDIR (st.st_mode) ? KIST_MKPATH_DIR : KIST_MKPATH_FILE,
                        S_ISDIR (st.st_mode) ? 0755 : 0644, err);
  if (target < 0)
    return target;
  if (!p->idmap
      && (mnt_setattr_tree (tree, &p->rec, true, err) < 0
          || mnt_setattr_tree (tree, &p->top, false, err) < 0))
    return -1;
  if (move_mount (tree, "", target, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
    return kist_error_make (err, errno, "move_mount onto the destination");
  if (mnt_apply_propagation (tree, p, err) < 0 || (p->idmap && verify_idmapped (tree, p, err) < 0))
    return -1;
  return mnt_verify_mount (ctx, m->destination, tree, target, p, 0, st.st_dev, true, err);
}

/* Is the caller still in the host's namespace of type t (captured before
 * clone)?  /proc is the host's here: we are before pivot_root. */
static bool
same_ns_as_host (const struct kist_ctx *ctx, enum kist_ns_type t)
{
  char path[64];
  snprintf (path, sizeof path, "/proc/self/ns/%s", kist_ns_proc_name (t));
  uint64_t ino = 0;
  return kist_ns_ino (AT_FDCWD, path, &ino) == 0 && ino == ctx->host_ns_ino[t];
}

static const char sysfs_fallback_note[]
    = "sysfs refused in the user namespace (EPERM), rbind of the host /sys instead, as runc "
      "does, read-only with every submount";

static int
mount_fs (struct kist_ctx *ctx, const struct kist_mount *m, struct plan *p,
          struct kist_error **err)
{
  _cleanup_close_ int target = resolve_target (ctx, m, p, KIST_MKPATH_DIR, 0755, err);
  if (target < 0)
    return target;

  bool sysfs_fallback_ok = ctx->userns && strcmp (p->fstype, "sysfs") == 0;
  /* No cgroup namespace of its own: the container shares the host's. */
  bool cgroup_fallback_ok = ctx->userns && strcmp (p->fstype, "cgroup2") == 0
                            && ctx->host_ns_ino[KIST_NS_CGROUP] != 0
                            && same_ns_as_host (ctx, KIST_NS_CGROUP);
  _cleanup_close_ int fsfd = fsopen (p->fstype, FSOPEN_CLOEXEC);
  if (fsfd < 0)
    {
      if (errno == EPERM && sysfs_fallback_ok)
        {
          mnt_append (&p->note, "; ", xasprintf ("%s: %s", m->destination, sysfs_fallback_note));
          return mnt_mount_sysfs_fallback (ctx, m, p, target, err);
        }
      if (errno == ENODEV)
        return kist_error_make (err, ENODEV, "filesystem type `%s` is not supported by this kernel",
                                p->fstype);
      return kist_error_make (err, errno, "fsopen(`%s`)", p->fstype);
    }
  if (m->source && m->source[0]
      && fsconfig (fsfd, FSCONFIG_SET_STRING, "source", m->source, 0) < 0)
    {
      _cleanup_free_ char *what = xasprintf ("source `%s` rejected by %s", m->source, p->fstype);
      return fs_error (err, fsfd, errno, what);
    }
  for (size_t i = 0; i < p->n_fsopts; i++)
    {
      const char *o = p->fsopts[i];
      const char *eq = strchr (o, '=');
      int r;
      if (eq)
        {
          _cleanup_free_ char *key = xasprintf ("%.*s", (int) (eq - o), o);
          r = fsconfig (fsfd, FSCONFIG_SET_STRING, key, eq + 1, 0);
        }
      else
        r = fsconfig (fsfd, FSCONFIG_SET_FLAG, o, NULL, 0);
      if (r < 0)
        {
          _cleanup_free_ char *what = xasprintf ("option `%s` rejected by %s", o, p->fstype);
          return fs_error (err, fsfd, errno, what);
        }
    }
  if (fsconfig (fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
    {
      int e = errno;
      if (e == EPERM && sysfs_fallback_ok)
        {
          mnt_append (&p->note, "; ", xasprintf ("%s: %s", m->destination, sysfs_fallback_note));
          return mnt_mount_sysfs_fallback (ctx, m, p, target, err);
        }
      if (e == EPERM && cgroup_fallback_ok)
        return mnt_mount_cgroup_fallback (ctx, m, p, target, err);
      const char *hint = "";
      if (e == EPERM && ctx->userns && strcmp (p->fstype, "cgroup2") == 0)
        hint = " (in a user namespace, cgroup2 needs a cgroup namespace it owns: add \"cgroup\" "
               "to linux.namespaces)";
      else if (e == EPERM && ctx->userns && strcmp (p->fstype, "proc") == 0)
        hint = " (in a user namespace, proc needs a pid namespace it owns: add \"pid\" to "
               "linux.namespaces)";
      _cleanup_free_ char *what = xasprintf ("create the %s filesystem%s", p->fstype, hint);
      return fs_error (err, fsfd, e, what);
    }
  /* New mounts have no submounts: recursive and top-level flags are one. */
  struct attrs a = p->rec;
  mnt_attrs_apply (&a, p->top.set, p->top.clr);
  /* A read-only tmpfs is filled first and made read-only after. */
  uint64_t late_rdonly = p->copyup ? (a.set & MOUNT_ATTR_RDONLY) : 0;
  /* A read-only /dev tmpfs (as runc): writable for the mounts, nodes and
   * console that go under it, made read-only at the end of the dev layer
   * (ctx->dev_ro_fd), and verified there. */
  bool dev_late = !p->copyup && strcmp (p->fstype, "tmpfs") == 0 && strcmp (p->clean, "/dev") == 0
                  && (a.set & MOUNT_ATTR_RDONLY) && ctx->dev_ro_fd < 0;
  if (dev_late)
    {
      p->ro_later = true;
      a.set &= ~(uint64_t) MOUNT_ATTR_RDONLY;
      p->rec.set &= ~(uint64_t) MOUNT_ATTR_RDONLY;
      p->top.set &= ~(uint64_t) MOUNT_ATTR_RDONLY;
      mnt_append (&p->note, "; ",
                  xstrdup ("/dev: read-only once its submounts, nodes and console exist (the dev "
                           "layer makes and verifies it, as runc)"));
    }
  _cleanup_close_ int mnt = fsmount (fsfd, FSMOUNT_CLOEXEC, (unsigned) (a.set & ~late_rdonly));
  if (mnt < 0)
    {
      int e = errno;
      if (e == EPERM && sysfs_fallback_ok)
        {
          mnt_append (&p->note, "; ", xasprintf ("%s: %s", m->destination, sysfs_fallback_note));
          return mnt_mount_sysfs_fallback (ctx, m, p, target, err);
        }
      return fs_error (err, fsfd, e, "fsmount");
    }
  if (p->copyup)
    {
      struct copyup c = { 0 };
      const struct attrs ro = { .set = late_rdonly };
      if (mnt_copyup (p, target, mnt, &c, err) < 0 || mnt_setattr_tree (mnt, &ro, false, err) < 0)
        return -1;
      mnt_append (&p->note, "; ",
                  xasprintf ("%s: tmpcopyup: copied %lu files (%llu bytes), %lu directories, %lu "
                             "symlinks, %lu fifos/devices from the image (%lu sockets skipped)",
                             m->destination, c.files, c.bytes, c.dirs, c.links, c.nodes,
                             c.sockets));
    }
  if (move_mount (mnt, "", target, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
    return kist_error_make (err, errno, "move_mount onto the destination");
  if (mnt_apply_propagation (mnt, p, err) < 0)
    return -1;
  int ret = mnt_verify_mount (ctx, m->destination, mnt, target, p, fs_magic (p->fstype), 0, false,
                                  err);
  if (ret == 0 && dev_late)
    ctx->dev_ro_fd = steal_fd (&mnt);
  return ret;
}

/* ------------------------------------------------------------- the layer */

static char *
mount_desc (const struct kist_mount *m)
{
  bool rec = false;
  bool bind = m->type && strcmp (m->type, "bind") == 0, rbind = false;
  for (char **o = m->options; o && *o; o++)
    {
      const struct flag_opt *f = mnt_opt_lookup (*o, &rec);
      if (f && f->kind == OPT_BIND)
        bind = true;
      else if (f && f->kind == OPT_RBIND)
        bind = rbind = true;
    }
  if (bind)
    return xasprintf ("%s of %s", rbind ? "rbind" : "bind", m->source ? m->source : "(no source)");
  return xstrdup (m->type ? m->type : "(no type)");
}

char *
mnt_reason (size_t i, const struct kist_mount *m, const char *msg)
{
  _cleanup_free_ char *desc = mount_desc (m);
  return xasprintf ("mounts[%zu] %s (%s): %s", i, m->destination ? m->destination : "(none)", desc,
                    msg ? msg : "failed");
}

/* " idmapped uid 0:1000:1 gid 0:1000:1" and how (the report's list). */
static char *
idmap_desc (const struct kist_ctx *ctx, size_t i, const struct plan *p)
{
  _cleanup_free_ char *u = NULL, *g = NULL;
  for (size_t k = 0; k < p->n_uids; k++)
    mnt_append (&u, " ", xasprintf ("%u:%u:%u", p->uids[k].container_id, p->uids[k].host_id,
                                    p->uids[k].size));
  for (size_t k = 0; k < p->n_gids; k++)
    mnt_append (&g, " ", xasprintf ("%u:%u:%u", p->gids[k].container_id, p->gids[k].host_id,
                                    p->gids[k].size));
  const struct kist_idmap_tree *t = &ctx->idmap_trees[i];
  return xasprintf (": %sidmapped uid %s gid %s%s (root owned %u:%u through it, mountinfo says "
                    "idmapped)",
                    p->idmap_rec ? "recursively " : "", u, g,
                    p->idmap_implied ? " (the user namespace's, linux.uidMappings/gidMappings)"
                                     : "",
                    t->uid, t->gid);
}

static int
mounts_apply (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err)
{
  const struct kist_spec *spec = ctx->spec;
  if (spec->n_mounts == 0)
    {
      kist_report_skip (r, "mounts", "no mounts in config.json");
      return 0;
    }
  if (ctx->rootfs_fd < 0)
    return kist_report_failed (r, "mounts", "", EBADF, err, "the rootfs was not prepared");
  _cleanup_error_ struct kist_error *recv_err = NULL;
  if (kist_mounts_idmap_receive (ctx, &recv_err) < 0)
    return kist_report_failed (r, "mounts", "", recv_err->errnum, err, "%s", recv_err->msg);

  bool may_degrade = kist_report_may_degrade (r, "mounts");
  _cleanup_free_ char *list = NULL, *notes = NULL, *failures = NULL, *expect = NULL;
  _cleanup_free_ char *idmapped = NULL;
  int first_errno = 0;
  size_t n_ok = 0, n_failed = 0;

  for (size_t i = 0; i < spec->n_mounts; i++)
    {
      const struct kist_mount *m = &spec->mounts[i];
      _cleanup_error_ struct kist_error *e = NULL;
      _cleanup_plan_ struct plan p = { .expect = &expect };
      int ret;

      if (m->destination == NULL || m->destination[0] != '/')
        ret = kist_error_make (&e, EINVAL, "the destination must be an absolute path");
      else if (m->destination[strspn (m->destination, "/")] == '\0')
        ret = kist_error_make (&e, EINVAL, "mounting over the container root is not supported "
                                           "(set root.path instead)");
      else if ((ret = mnt_plan_build (spec, m, &p, &e)) == 0
               && (ret = kist_resolve_clean (m->destination, &p.clean, &e)) == 0)
        {
          p.exact = mnt_dest_exactness (&p);
          ret = p.bind ? mount_bind (ctx, i, m, &p, &e) : mount_fs (ctx, m, &p, &e);
        }

      if (ret < 0)
        {
          _cleanup_free_ char *reason = mnt_reason (i, m, e ? e->msg : NULL);
          int errnum = e && e->errnum ? e->errnum : EIO;
          if (!may_degrade)
            return kist_report_failed (r, "mounts", "", errnum, err, "%s", reason);
          if (first_errno == 0)
            first_errno = errnum;
          mnt_append (&failures, "; ", xstrdup (reason));
          n_failed++;
          continue;
        }
      n_ok++;
      _cleanup_free_ char *how = p.idmap ? idmap_desc (ctx, i, &p) : NULL;
      mnt_append (&list, ", ",
                  xasprintf ("%s %s%s", m->destination,
                             p.bind ? (p.rbind ? "rbind" : "bind") : p.fstype, how ? how : ""));
      if (p.idmap)
        mnt_append (&idmapped, ",",
                    xasprintf ("%llu/%u/%u", (unsigned long long) p.idmap_mnt_id,
                               ctx->idmap_trees[i].uid, ctx->idmap_trees[i].gid));
      if (p.cgroup_mapped)
        mnt_append (&notes, "; ",
                    xasprintf ("%s: type cgroup mounted as cgroup2 (kist supports cgroup v2 only)",
                               m->destination));
      if (p.ignored)
        mnt_append (&notes, "; ",
                    xasprintf ("%s: options %s ignored (filesystem data options mean nothing on a "
                               "bind mount, tmpcopyup only on a tmpfs; runc ignores them too)",
                               m->destination, p.ignored));
      if (p.note)
        mnt_append (&notes, "; ", xstrdup (p.note));
    }

  if (n_failed)
    return kist_report_failed (r, "mounts", "", first_errno, err, "%s (%zu of %zu mounts applied)",
                               failures, n_ok, spec->n_mounts);
  kist_report_applied (r, "mounts", "", "%zu mounts: %s (flags verified)%s%s", n_ok, list,
                       notes ? "; " : "", notes ? notes : "");
  if (expect)
    kist_report_expect (r, "mounts", "mnts=%s%s%s", expect, idmapped ? " idmapped=" : "",
                        idmapped ? idmapped : "");
  return 0;
}

int
kist_mounts_apply (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err)
{
  int ret = mounts_apply (ctx, r, err);
  kist_mounts_idmap_release (ctx); /* what the parent made and no entry used */
  return ret;
}
