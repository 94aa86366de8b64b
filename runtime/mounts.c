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
 * namespace becomes a read-only rbind of the host's /sys. */
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
#include "ns.h"
#include "resolve.h"
#include "util.h"

#ifndef MQUEUE_MAGIC
#define MQUEUE_MAGIC 0x19800202
#endif
#ifndef ST_NOSYMFOLLOW
#define ST_NOSYMFOLLOW 0x2000
#endif

/* ------------------------------------------------------------- options */

struct attrs
{
  uint64_t set, clr;
};

enum opt_kind
{
  OPT_ATTR,        /* a mount attribute (mount_setattr / fsmount) */
  OPT_SB,          /* a superblock flag (sync, async, dirsync): fsconfig, not for binds */
  OPT_PROP,        /* propagation */
  OPT_BIND,
  OPT_RBIND,
  OPT_COPYUP,      /* tmpcopyup: the image's content of the destination into the new tmpfs */
  OPT_UNSUPPORTED
};

struct flag_opt
{
  const char *name;
  enum opt_kind kind;
  uint64_t set, clr;     /* OPT_ATTR */
  unsigned long prop;    /* OPT_PROP: MS_PRIVATE, ... */
  bool rec;              /* OPT_PROP: recursive variant */
  const char *why;       /* OPT_UNSUPPORTED */
};

/* The atime family is one field in the mount attributes: "atime",
 * "nostrictatime" and "relatime" mean the kernel default (relatime);
 * "norelatime" means always update (strictatime).  The "r" prefix of every
 * OPT_ATTR option gives its recursive variant (rro, rnosuid, ratime, ...). */
static const struct flag_opt flag_opts[] = {
  { "ro", OPT_ATTR, MOUNT_ATTR_RDONLY, 0 },
  { "rw", OPT_ATTR, 0, MOUNT_ATTR_RDONLY },
  { "nosuid", OPT_ATTR, MOUNT_ATTR_NOSUID, 0 },
  { "suid", OPT_ATTR, 0, MOUNT_ATTR_NOSUID },
  { "nodev", OPT_ATTR, MOUNT_ATTR_NODEV, 0 },
  { "dev", OPT_ATTR, 0, MOUNT_ATTR_NODEV },
  { "noexec", OPT_ATTR, MOUNT_ATTR_NOEXEC, 0 },
  { "exec", OPT_ATTR, 0, MOUNT_ATTR_NOEXEC },
  { "noatime", OPT_ATTR, MOUNT_ATTR_NOATIME, MOUNT_ATTR__ATIME },
  { "atime", OPT_ATTR, MOUNT_ATTR_RELATIME, MOUNT_ATTR__ATIME },
  { "relatime", OPT_ATTR, MOUNT_ATTR_RELATIME, MOUNT_ATTR__ATIME },
  { "norelatime", OPT_ATTR, MOUNT_ATTR_STRICTATIME, MOUNT_ATTR__ATIME },
  { "strictatime", OPT_ATTR, MOUNT_ATTR_STRICTATIME, MOUNT_ATTR__ATIME },
  { "nostrictatime", OPT_ATTR, MOUNT_ATTR_RELATIME, MOUNT_ATTR__ATIME },
  { "nodiratime", OPT_ATTR, MOUNT_ATTR_NODIRATIME, 0 },
  { "diratime", OPT_ATTR, 0, MOUNT_ATTR_NODIRATIME },
  { "nosymfollow", OPT_ATTR, MOUNT_ATTR_NOSYMFOLLOW, 0 },
  { "symfollow", OPT_ATTR, 0, MOUNT_ATTR_NOSYMFOLLOW },
  { "sync", OPT_SB },
  { "async", OPT_SB },
  { "dirsync", OPT_SB },
  { "private", OPT_PROP, .prop = MS_PRIVATE },
  { "rprivate", OPT_PROP, .prop = MS_PRIVATE, .rec = true },
  { "shared", OPT_PROP, .prop = MS_SHARED },
  { "rshared", OPT_PROP, .prop = MS_SHARED, .rec = true },
  { "slave", OPT_PROP, .prop = MS_SLAVE },
  { "rslave", OPT_PROP, .prop = MS_SLAVE, .rec = true },
  { "unbindable", OPT_PROP, .prop = MS_UNBINDABLE },
  { "runbindable", OPT_PROP, .prop = MS_UNBINDABLE, .rec = true },
  { "bind", OPT_BIND },
  { "rbind", OPT_RBIND },
  { "idmap", OPT_UNSUPPORTED,
    .why = "idmapped mounts are not supported by kist: remove the option (podman: the `idmap` "
           "volume option) and give the files the ids the container uses" },
  { "ridmap", OPT_UNSUPPORTED,
    .why = "idmapped mounts are not supported by kist: remove the option (podman: the `idmap` "
           "volume option) and give the files the ids the container uses" },
  { "tmpcopyup", OPT_COPYUP },
};

/* Look an option up; *rec is set for the "r" variant of an attribute. */
static const struct flag_opt *
opt_lookup (const char *name, bool *rec)
{
  *rec = false;
  for (size_t i = 0; i < KIST_ARRAY_SIZE (flag_opts); i++)
    if (strcmp (flag_opts[i].name, name) == 0)
      return &flag_opts[i];
  if (name[0] == 'r')
    for (size_t i = 0; i < KIST_ARRAY_SIZE (flag_opts); i++)
      if (flag_opts[i].kind == OPT_ATTR && strcmp (flag_opts[i].name, name + 1) == 0)
        {
          *rec = true;
          return &flag_opts[i];
        }
  return NULL;
}

static void
attrs_apply (struct attrs *a, uint64_t set, uint64_t clr)
{
  if (clr & MOUNT_ATTR__ATIME)
    a->set &= ~(uint64_t) MOUNT_ATTR__ATIME;
  a->set = (a->set & ~clr) | set;
  a->clr = (a->clr & ~set) | clr;
}

/* How a destination is resolved in the image (see dest_exactness). */
enum exactness
{
  EXACT_NONE,    /* symlinks are followed, inside the root (as runc does) */
  EXACT_TOP,     /* the top directory (/sys, /dev) must not be a symlink */
  EXACT_ALL      /* no component may be a symlink */
};

struct plan
{
  bool bind, rbind;
  struct attrs top, rec;     /* rec: applied with AT_RECURSIVE (binds only) */
  unsigned long prop;
  bool prop_rec;
  const char **fsopts;       /* borrowed from the mount's options */
  size_t n_fsopts;
  const char *fstype;        /* after mapping */
  bool cgroup_mapped;
  bool copyup;               /* tmpcopyup on a tmpfs */
  bool has_mode, has_owner;  /* mode=, uid=/gid= among the filesystem options */
  char *ignored;             /* options accepted and ignored, as runc does ("mode=755, size=1k") */
  char *clean;               /* the destination, lexically cleaned */
  enum exactness exact;
  char *note;                /* what the report detail says about this mount, or NULL */
};

static void
plan_clear (struct plan *p)
{
  free (p->fsopts);
  p->fsopts = NULL;
  free (p->ignored);
  p->ignored = NULL;
  free (p->clean);
  p->clean = NULL;
  free (p->note);
  p->note = NULL;
}

/* *s += sep + piece (no separator before the first piece).  Takes piece. */
static void
append (char **s, const char *sep, char *piece)
{
  char *next = *s ? xasprintf ("%s%s%s", *s, sep, piece) : xstrdup (piece);
  free (piece);
  free (*s);
  *s = next;
}
#define _cleanup_plan_ __attribute__ ((cleanup (plan_clear)))

static int
plan_build (const struct kist_mount *m, struct plan *p, struct kist_error **err)
{
  bool rec;
  if (m->n_uid_mappings || m->n_gid_mappings)
    return kist_error_make (err, ENOTSUP,
                            "uidMappings/gidMappings (idmapped mounts) are not supported by kist");
  p->bind = m->type && strcmp (m->type, "bind") == 0;
  for (char **o = m->options; o && *o; o++)
    {
      const struct flag_opt *f = opt_lookup (*o, &rec);
      if (f && f->kind == OPT_BIND)
        p->bind = true;
      else if (f && f->kind == OPT_RBIND)
        p->bind = p->rbind = true;
    }
  if (!p->bind)
    {
      if (m->type == NULL || m->type[0] == '\0')
        return kist_error_make (err, EINVAL,
                                "no type and no bind/rbind option: say which filesystem to mount");
      p->fstype = m->type;
      if (strcmp (m->type, "cgroup") == 0)
        {
          p->fstype = "cgroup2";
          p->cgroup_mapped = true;
        }
    }

  p->fsopts = xcalloc (kist_strv_len (m->options) + 1, sizeof *p->fsopts);
  for (char **o = m->options; o && *o; o++)
    {
      const struct flag_opt *f = opt_lookup (*o, &rec);
      if (f == NULL)
        {
          /* runc passes these as mount(2) data, which a bind ignores:
           * accepted, and the report says they were ignored. */
          if (p->bind)
            {
              append (&p->ignored, ", ", xstrdup (*o));
              continue;
            }
          if (strncmp (*o, "mode=", 5) == 0)
            p->has_mode = true;
          else if (strncmp (*o, "uid=", 4) == 0 || strncmp (*o, "gid=", 4) == 0)
            p->has_owner = true;
          p->fsopts[p->n_fsopts++] = *o;
          continue;
        }
      switch (f->kind)
        {
        case OPT_ATTR:
          attrs_apply ((p->bind && (rec || p->rbind)) ? &p->rec : &p->top, f->set, f->clr);
          break;
        case OPT_SB:
          if (!p->bind)
            p->fsopts[p->n_fsopts++] = *o;
          else if (strcmp (f->name, "async") != 0)
            return kist_error_make (err, EINVAL,
                                    "option `%s` is a superblock flag and cannot be set on a bind "
                                    "mount",
                                    *o);
          break;
        case OPT_PROP:
          p->prop = f->prop;
          p->prop_rec = f->rec;
          break;
        case OPT_BIND:
        case OPT_RBIND:
          break;
        case OPT_COPYUP:
          /* As runc and crun: only a tmpfs copies up; elsewhere it means nothing. */
          if (!p->bind && strcmp (p->fstype, "tmpfs") == 0)
            p->copyup = true;
          else
            append (&p->ignored, ", ", xstrdup (*o));
          break;
        case OPT_UNSUPPORTED:
          return kist_error_make (err, ENOTSUP, "option `%s`: %s", *o, f->why);
        }
    }
  return 0;
}

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

/* Read the optional fields (shared:N master:N ...) of a mount from
 * /proc/self/mountinfo (the host's /proc: we are before pivot_root). */
static int
mount_optional_fields (uint64_t id, char **out, struct kist_error **err)
{
  _cleanup_free_ char *buf = NULL;
  if (kist_read_file_at (AT_FDCWD, "/proc/self/mountinfo", 64u * 1024 * 1024, &buf, NULL, err) < 0)
    return -1;
  char *save = NULL;
  for (char *line = strtok_r (buf, "\n", &save); line; line = strtok_r (NULL, "\n", &save))
    {
      uint64_t lid;
      char *sp = strchr (line, ' ');
      if (sp == NULL)
        continue;
      *sp = '\0';
      if (kist_parse_u64 (line, &lid) < 0 || lid != id)
        continue;
      /* Skip: parent major:minor root mountpoint options. */
      char *p = sp + 1;
      for (int i = 0; i < 5 && p; i++)
        {
          p = strchr (p, ' ');
          if (p)
            p++;
        }
      char *dash = p ? strstr (p, "- ") : NULL;
      if (dash == NULL)
        break;
      size_t l = (size_t) (dash - p);
      while (l > 0 && p[l - 1] == ' ')
        l--;
      *out = xasprintf ("%.*s", (int) l, p);
      return 0;
    }
  return kist_error_make (err, ENOENT, "mount %llu is not in /proc/self/mountinfo",
                          (unsigned long long) id);
}

static bool
has_field (const char *fields, const char *prefix)
{
  size_t pl = strlen (prefix);
  for (const char *p = fields; p && *p;)
    {
      while (*p == ' ')
        p++;
      if (strncmp (p, prefix, pl) == 0)
        return true;
      p = strchr (p, ' ');
    }
  return false;
}

static int
apply_propagation (int mntfd, const struct plan *p, struct kist_error **err)
{
  if (p->prop == 0)
    return 0;
  struct mount_attr attr = { .propagation = p->prop };
  if (mount_setattr (mntfd, "", AT_EMPTY_PATH | (p->prop_rec ? AT_RECURSIVE : 0), &attr,
                     sizeof attr)
      < 0)
    return kist_error_make (err, errno, "set the propagation");
  uint64_t id;
  _cleanup_free_ char *fields = NULL;
  if (kist_mnt_id_at (mntfd, "", 0, &id, err) < 0 || mount_optional_fields (id, &fields, err) < 0)
    return kist_error_wrap (err, "verify the propagation");
  bool shared = has_field (fields, "shared:"), master = has_field (fields, "master:");
  bool unbindable = has_field (fields, "unbindable");
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

/* The destination, reopened, must be the new mount with the flags asked for
 * and the expected filesystem. */
static int
verify_mount (struct kist_ctx *ctx, const char *dest, int mntfd, int targetfd,
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
  attrs_apply (&exp, p->top.set, p->top.clr);
  struct statvfs sv;
  if (fstatvfs (fd, &sv) < 0)
    return kist_error_make (err, errno, "verify: fstatvfs");
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
      struct statfs sf;
      if (fstatfs (fd, &sf) < 0)
        return kist_error_make (err, errno, "verify: fstatfs");
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
  return 0;
}

static int
setattr_tree (int tree, const struct attrs *a, bool recursive, struct kist_error **err)
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

/* Where the image may not redirect a mount with a symlink (runc: "must be
 * mounted on ordinary directory"; a symlinked /proc would otherwise get
 * procfs mounted wherever it points, and the container no /proc of its
 * own at the path it expects): proc and sysfs anywhere, anything at /proc,
 * /sys or /dev, and anything below /proc resolve with no symlink at all;
 * below /sys and /dev, the top directory itself must not be a symlink. */
static enum exactness
dest_exactness (const struct plan *p)
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

/* ------------------------------------------------------------ tmpcopyup */

/* tmpcopyup (podman --read-only, as crun and runc do it): the image's
 * content of the destination is copied into the new tmpfs while it is still
 * detached.  The source is read only through fds: every entry is opened from
 * its parent's fd by its single name with RESOLVE_BENEATH |
 * RESOLVE_NO_SYMLINKS, and must still be the inode fstatat saw, so a symlink
 * in the image is copied as a symlink and never followed, and nothing
 * outside the destination is read.  Regular files, directories, symlinks,
 * fifos and device nodes are copied with their mode, owner and times;
 * sockets are skipped (counted); hard links become separate files. */

#define COPYUP_MAX_DEPTH 128
#define COPYUP_RESOLVE (RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)

struct copyup
{
  unsigned long files, dirs, links, nodes, sockets;
  unsigned long long bytes;
};

static int
copyup_error (struct kist_error **err, int errnum, const char *rel, const char *name,
              const char *what)
{
  const char *hint = errnum == ENOSPC   ? " (the tmpfs is full: raise its size= option)"
                     : errnum == EINVAL && strstr (what, "owner")
                         ? " (the owner is not mapped in the container's user namespace: give "
                           "the image's files ids that uidMappings/gidMappings map)"
                     : errnum == EPERM && strstr (what, "device")
                         ? " (device nodes cannot be made here, e.g. in a user namespace: remove "
                           "them from the image)"
                         : "";
  return kist_error_make (err, errnum, "tmpcopyup: %s `%s/%s`%s", what, rel, name, hint);
}

/* Owner, mode (after the owner: chown clears set-id bits) and times of the
 * copy dst/name (fd: the copy itself, -1 for a symlink). */
static int
copyup_meta (int dst, const char *name, int fd, const struct stat *st, const char *rel,
             struct kist_error **err)
{
  const struct timespec ts[2] = { st->st_atim, st->st_mtim };
  if (fd >= 0)
    {
      if (fchown (fd, st->st_uid, st->st_gid) < 0)
        return copyup_error (err, errno, rel, name, "set the owner of");
      if (fchmod (fd, st->st_mode & 07777) < 0)
        return copyup_error (err, errno, rel, name, "set the mode of");
      if (futimens (fd, ts) < 0)
        return copyup_error (err, errno, rel, name, "set the times of");
      return 0;
    }
  if (fchownat (dst, name, st->st_uid, st->st_gid, AT_SYMLINK_NOFOLLOW) < 0)
    return copyup_error (err, errno, rel, name, "set the owner of");
  if (!S_ISLNK (st->st_mode) && fchmodat (dst, name, st->st_mode & 07777, 0) < 0)
    return copyup_error (err, errno, rel, name, "set the mode of");
  if (utimensat (dst, name, ts, AT_SYMLINK_NOFOLLOW) < 0)
    return copyup_error (err, errno, rel, name, "set the times of");
  return 0;
}

/* Open src/name (one component, no symlink, not above src) and check it is
 * still the inode *st describes. */
static int
copyup_open (int src, const char *name, int flags, const struct stat *st, const char *rel,
             struct kist_error **err)
{
  int fd = kist_openat2 (src, name, flags | O_NOFOLLOW | O_NOCTTY, 0, COPYUP_RESOLVE);
  if (fd < 0)
    return copyup_error (err, -fd, rel, name, "open the image's");
  struct stat now;
  if (fstat (fd, &now) < 0 || now.st_dev != st->st_dev || now.st_ino != st->st_ino
      || (now.st_mode & S_IFMT) != (st->st_mode & S_IFMT))
    {
      close (fd);
      return copyup_error (err, EAGAIN, rel, name,
                           "the image changed while kist copied it (a concurrent change?):");
    }
  return fd;
}

static int
copyup_file (int src, int dst, const char *name, const struct stat *st, const char *rel,
             struct copyup *c, struct kist_error **err)
{
  _cleanup_close_ int in = copyup_open (src, name, O_RDONLY | O_NONBLOCK, st, rel, err);
  if (in < 0)
    return -1;
  _cleanup_close_ int out
      = openat (dst, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (out < 0)
    return copyup_error (err, errno, rel, name, "create the copy of");
  bool plain = false; /* copy_file_range refused: read and write */
  for (;;)
    {
      ssize_t n = plain ? -1 : copy_file_range (in, NULL, out, NULL, 1u << 30, 0);
      if (n < 0 && !plain
          && (errno == EXDEV || errno == EINVAL || errno == ENOSYS || errno == EOPNOTSUPP))
        plain = true;
      if (plain)
        {
          char buf[65536];
          int w;
          n = read (in, buf, sizeof buf);
          if (n > 0 && (w = kist_write_all (out, buf, (size_t) n)) < 0)
            return copyup_error (err, -w, rel, name, "write the copy of");
        }
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return copyup_error (err, errno, rel, name, "copy");
      if (n == 0)
        break;
      c->bytes += (unsigned long long) n;
    }
  c->files++;
  return copyup_meta (dst, name, out, st, rel, err);
}

static int copyup_dir (int src, int dst, const char *rel, int depth, struct copyup *c,
                       struct kist_error **err);

static int
copyup_entry (int src, int dst, const char *name, const char *rel, int depth, struct copyup *c,
              struct kist_error **err)
{
  struct stat st;
  if (fstatat (src, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return copyup_error (err, errno, rel, name, "stat the image's");
  switch (st.st_mode & S_IFMT)
    {
    case S_IFREG:
      return copyup_file (src, dst, name, &st, rel, c, err);
    case S_IFDIR:
      {
        if (depth >= COPYUP_MAX_DEPTH)
          return copyup_error (err, ELOOP, rel, name,
                               "more than 128 (COPYUP_MAX_DEPTH) directory levels below "
                               "the destination at");
        _cleanup_close_ int in = copyup_open (src, name, O_RDONLY | O_DIRECTORY, &st, rel, err);
        if (in < 0)
          return -1;
        if (mkdirat (dst, name, 0700) < 0)
          return copyup_error (err, errno, rel, name, "create the copy of");
        _cleanup_close_ int out
            = kist_openat2 (dst, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW, 0, COPYUP_RESOLVE);
        if (out < 0)
          return copyup_error (err, -out, rel, name, "open the copy of");
        _cleanup_free_ char *sub = xasprintf ("%s/%s", rel, name);
        if (copyup_dir (in, out, sub, depth + 1, c, err) < 0)
          return -1;
        c->dirs++;
        return copyup_meta (dst, name, out, &st, rel, err);
      }
    case S_IFLNK:
      {
        size_t sz = (size_t) st.st_size + 1;
        if (sz < 2 || sz > 65536)
          sz = 65536;
        _cleanup_free_ char *target = xmalloc (sz);
        ssize_t n = readlinkat (src, name, target, sz);
        if (n < 0)
          return copyup_error (err, errno, rel, name, "read the image's symlink");
        if ((size_t) n >= sz)
          return copyup_error (err, ENAMETOOLONG, rel, name, "read the image's symlink");
        target[n] = '\0';
        if (symlinkat (target, dst, name) < 0)
          return copyup_error (err, errno, rel, name, "create the copy of the symlink");
        c->links++;
        return copyup_meta (dst, name, -1, &st, rel, err);
      }
    case S_IFIFO:
    case S_IFCHR:
    case S_IFBLK:
      if (mknodat (dst, name, (st.st_mode & S_IFMT) | 0600, st.st_rdev) < 0)
        return copyup_error (err, errno, rel, name, "create the copy of the device or fifo");
      c->nodes++;
      return copyup_meta (dst, name, -1, &st, rel, err);
    default:
      c->sockets++; /* a socket means nothing without its process */
      return 0;
    }
}

static int
copyup_dir (int src, int dst, const char *rel, int depth, struct copyup *c,
            struct kist_error **err)
{
  int dfd = fcntl (src, F_DUPFD_CLOEXEC, 3);
  if (dfd < 0)
    return kist_error_make (err, errno, "tmpcopyup: dup");
  _cleanup_dir_ DIR *d = fdopendir (dfd);
  if (d == NULL)
    {
      close (dfd);
      return kist_error_make (err, errno, "tmpcopyup: read the image's directory `%s`", rel);
    }
  rewinddir (d);
  struct dirent *de;
  for (errno = 0; (de = readdir (d)) != NULL; errno = 0)
    {
      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
        continue;
      if (copyup_entry (src, dst, de->d_name, rel, depth, c, err) < 0)
        return -1;
    }
  if (errno != 0)
    return kist_error_make (err, errno, "tmpcopyup: read the image's directory `%s`", rel);
  return 0;
}

/* Copy the image's directory at target into the detached tmpfs mnt; its
 * root takes the source's mode and owner unless mode=, uid= or gid= says
 * otherwise. */
static int
copyup (const struct plan *p, int target, int mnt, struct copyup *c, struct kist_error **err)
{
  _cleanup_close_ int src = kist_openat2 (target, ".", O_RDONLY | O_DIRECTORY, 0, COPYUP_RESOLVE);
  if (src < 0)
    return kist_error_make (err, -src, "tmpcopyup: open the image's `%s`", p->clean);
  _cleanup_close_ int dst = kist_openat2 (mnt, ".", O_RDONLY | O_DIRECTORY, 0, COPYUP_RESOLVE);
  if (dst < 0)
    return kist_error_make (err, -dst, "tmpcopyup: open the new tmpfs");
  const char *rel = strcmp (p->clean, "/") == 0 ? "" : p->clean;
  if (copyup_dir (src, dst, rel, 0, c, err) < 0)
    return -1;
  struct stat st;
  if (fstat (src, &st) < 0)
    return kist_error_make (err, errno, "tmpcopyup: stat the image's `%s`", p->clean);
  if (!p->has_owner && fchown (dst, st.st_uid, st.st_gid) < 0)
    return kist_error_make (err, errno, "tmpcopyup: set the owner of the tmpfs at `%s`",
                            p->clean);
  if (!p->has_mode && fchmod (dst, st.st_mode & 07777) < 0)
    return kist_error_make (err, errno, "tmpcopyup: set the mode of the tmpfs at `%s`", p->clean);
  return 0;
}

/* ------------------------------------------------ the cgroup fallback */

/* A fallback's detached tree (a clone of a host directory) onto target:
 * every mount of it read-only plus the mount's flags, recursively, the
 * propagation, then verified (magic; the source's device when src_dev). */
static int
place_readonly_tree (struct kist_ctx *ctx, const struct kist_mount *m, const struct plan *p,
                     int tree, int target, const char *what, unsigned long magic,
                     const dev_t *src_dev, struct kist_error **err)
{
  struct plan rp = *p;
  attrs_apply (&rp.rec, p->top.set, p->top.clr);
  attrs_apply (&rp.rec, MOUNT_ATTR_RDONLY, 0);
  rp.top = (struct attrs){ 0 };
  if (setattr_tree (tree, &rp.rec, true, err) < 0)
    return kist_error_wrap (err, "%s", what);
  if (move_mount (tree, "", target, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
    return kist_error_make (err, errno, "%s: move_mount", what);
  if (apply_propagation (tree, p, err) < 0)
    return -1;
  return verify_mount (ctx, m->destination, tree, target, &rp, magic, src_dev ? *src_dev : 0,
                       src_dev != NULL, err);
}

/* cgroup2 in a user namespace without a cgroup namespace of its own (podman
 * --uidmap): the kernel refuses a new cgroup2 superblock (EPERM).  runc then
 * binds the cgroup2 hierarchy it sees; kist binds only the container's own
 * cgroup (the scope the init was put in, else the cgroup2 root), always
 * read-only with every submount: the container must not write its limits. */
static int
mount_cgroup_fallback (struct kist_ctx *ctx, const struct kist_mount *m, struct plan *p,
                       int target, struct kist_error **err)
{
  _cleanup_free_ char *root = NULL, *own = NULL;
  if (kist_cgroup_mount (&root, err) < 0 || kist_cgroup_own_path (&own, err) < 0)
    return kist_error_wrap (err, "cgroup fallback: find the container's cgroup");
  _cleanup_close_ int rootfd = open (root, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (rootfd < 0)
    return kist_error_make (err, errno, "cgroup fallback: open the cgroup2 mount `%s`", root);
  struct statfs sf;
  if (fstatfs (rootfd, &sf) < 0 || (unsigned long) sf.f_type != CGROUP2_SUPER_MAGIC)
    return kist_error_make (err, EIO, "cgroup fallback: `%s` is not a cgroup2 mount", root);
  _cleanup_close_ int scope
      = own[0] ? kist_openat2 (rootfd, own, O_PATH | O_DIRECTORY, 0,
                               COPYUP_RESOLVE | RESOLVE_NO_XDEV)
               : fcntl (rootfd, F_DUPFD_CLOEXEC, 3);
  if (scope < 0)
    return kist_error_make (err, own[0] ? -scope : errno,
                            "cgroup fallback: open the container's cgroup `%s/%s`", root, own);
  struct stat sst;
  if (fstat (scope, &sst) < 0)
    return kist_error_make (err, errno, "cgroup fallback: stat the container's cgroup");
  _cleanup_close_ int tree = open_tree (scope, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC
                                                       | AT_EMPTY_PATH | AT_RECURSIVE);
  if (tree < 0)
    return kist_error_make (err, errno, "cgroup fallback: open_tree(`%s/%s`, AT_RECURSIVE)", root,
                            own);
  if (place_readonly_tree (ctx, m, p, tree, target, "cgroup fallback", CGROUP2_SUPER_MAGIC,
                           &sst.st_dev, err)
      < 0)
    return -1;
  /* The root of the new mount must be the container's cgroup itself. */
  _cleanup_close_ int fd = p->exact == EXACT_ALL
                               ? kist_resolve_open_exact (ctx->rootfs_fd, p->clean, O_PATH, 0, err)
                               : kist_resolve_open (ctx->rootfs_fd, m->destination, O_PATH, 0, err);
  struct stat dst;
  if (fd < 0 || fstat (fd, &dst) < 0)
    return kist_error_wrap (err, "cgroup fallback: verify");
  if (dst.st_ino != sst.st_ino || dst.st_dev != sst.st_dev)
    return kist_error_make (err, EIO, "cgroup fallback: verify: the destination is not the "
                                      "container's cgroup");
  append (&p->note, "; ",
          xasprintf ("%s: cgroup2 refused in the user namespace without a cgroup namespace "
                     "(EPERM), bind of the container's own cgroup %s/%s instead (runc binds the "
                     "whole hierarchy), read-only with every submount",
                     m->destination, root, own));
  return 0;
}

/* ------------------------------------------------------------- one mount */

static int
mount_bind (struct kist_ctx *ctx, const struct kist_mount *m, const struct plan *p,
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
  _cleanup_close_ int tree = open_tree (dirfd, src, flags);
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
  if (setattr_tree (tree, &p->rec, true, err) < 0 || setattr_tree (tree, &p->top, false, err) < 0)
    return -1;
  if (move_mount (tree, "", target, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
    return kist_error_make (err, errno, "move_mount onto the destination");
  if (apply_propagation (tree, p, err) < 0)
    return -1;
  return verify_mount (ctx, m->destination, tree, target, p, 0, st.st_dev, true, err);
}

/* sysfs in a user namespace that does not own the network namespace:
 * rbind the host's /sys instead (as runc does). */
static int
mount_sysfs_fallback (struct kist_ctx *ctx, const struct kist_mount *m, const struct plan *p,
                      int target, struct kist_error **err)
{
  _cleanup_close_ int tree
      = open_tree (AT_FDCWD, "/sys", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
  if (tree < 0)
    return kist_error_make (err, errno, "sysfs fallback: open_tree(/sys, AT_RECURSIVE)");
  /* Always read-only, whatever the options: the host's /sys holds files the
   * caller owns (a cgroup delegated to it), which the container must not
   * write (CVE-2023-25809). */
  return place_readonly_tree (ctx, m, p, tree, target, "sysfs fallback", SYSFS_MAGIC, NULL, err);
}

/* Is the caller still in the host's namespace of type t (captured before
 * clone)?  /proc is the host's here: we are before pivot_root. */
static bool
same_ns_as_host (const struct kist_ctx *ctx, enum kist_ns_type t)
{
  _cleanup_free_ char *path = xasprintf ("/proc/self/ns/%s", kist_ns_proc_name (t));
  struct stat st;
  return stat (path, &st) == 0 && st.st_ino == ctx->host_ns_ino[t]
         && st.st_dev == ctx->host_ns_dev[t];
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
          append (&p->note, "; ", xasprintf ("%s: %s", m->destination, sysfs_fallback_note));
          return mount_sysfs_fallback (ctx, m, p, target, err);
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
          append (&p->note, "; ", xasprintf ("%s: %s", m->destination, sysfs_fallback_note));
          return mount_sysfs_fallback (ctx, m, p, target, err);
        }
      if (e == EPERM && cgroup_fallback_ok)
        return mount_cgroup_fallback (ctx, m, p, target, err);
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
  attrs_apply (&a, p->top.set, p->top.clr);
  /* A read-only tmpfs is filled first and made read-only after. */
  uint64_t late_rdonly = p->copyup ? (a.set & MOUNT_ATTR_RDONLY) : 0;
  /* A read-only /dev tmpfs (as runc): writable for the mounts, nodes and
   * console that go under it, made read-only at the end of the dev layer
   * (ctx->dev_ro_fd), and verified there. */
  bool dev_late = !p->copyup && strcmp (p->fstype, "tmpfs") == 0 && strcmp (p->clean, "/dev") == 0
                  && (a.set & MOUNT_ATTR_RDONLY) && ctx->dev_ro_fd < 0;
  if (dev_late)
    {
      a.set &= ~(uint64_t) MOUNT_ATTR_RDONLY;
      p->rec.set &= ~(uint64_t) MOUNT_ATTR_RDONLY;
      p->top.set &= ~(uint64_t) MOUNT_ATTR_RDONLY;
      append (&p->note, "; ",
              xstrdup ("/dev: read-only once its submounts, nodes and console exist (the dev "
                       "layer makes and verifies it, as runc)"));
    }
  _cleanup_close_ int mnt = fsmount (fsfd, FSMOUNT_CLOEXEC, (unsigned) (a.set & ~late_rdonly));
  if (mnt < 0)
    {
      int e = errno;
      if (e == EPERM && sysfs_fallback_ok)
        {
          append (&p->note, "; ", xasprintf ("%s: %s", m->destination, sysfs_fallback_note));
          return mount_sysfs_fallback (ctx, m, p, target, err);
        }
      return fs_error (err, fsfd, e, "fsmount");
    }
  if (p->copyup)
    {
      struct copyup c = { 0 };
      const struct attrs ro = { .set = late_rdonly };
      if (copyup (p, target, mnt, &c, err) < 0 || setattr_tree (mnt, &ro, false, err) < 0)
        return -1;
      append (&p->note, "; ",
              xasprintf ("%s: tmpcopyup: copied %lu files (%llu bytes), %lu directories, %lu "
                         "symlinks, %lu fifos/devices from the image (%lu sockets skipped)",
                         m->destination, c.files, c.bytes, c.dirs, c.links, c.nodes,
                         c.sockets));
    }
  if (move_mount (mnt, "", target, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
    return kist_error_make (err, errno, "move_mount onto the destination");
  if (apply_propagation (mnt, p, err) < 0)
    return -1;
  int ret = verify_mount (ctx, m->destination, mnt, target, p, fs_magic (p->fstype), 0, false, err);
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
      const struct flag_opt *f = opt_lookup (*o, &rec);
      if (f && f->kind == OPT_BIND)
        bind = true;
      else if (f && f->kind == OPT_RBIND)
        bind = rbind = true;
    }
  if (bind)
    return xasprintf ("%s of %s", rbind ? "rbind" : "bind", m->source ? m->source : "(no source)");
  return xstrdup (m->type ? m->type : "(no type)");
}

int
kist_mounts_apply (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err)
{
  const struct kist_spec *spec = ctx->spec;
  if (spec->n_mounts == 0)
    {
      kist_report_skip (r, "mounts", "no mounts in config.json");
      return 0;
    }
  if (ctx->rootfs_fd < 0)
    return kist_report_failed (r, "mounts", "", EBADF, err, "the rootfs was not prepared");

  bool may_degrade = kist_report_may_degrade (r, "mounts");
  _cleanup_free_ char *list = NULL, *notes = NULL, *failures = NULL;
  int first_errno = 0;
  size_t n_ok = 0, n_failed = 0;

  for (size_t i = 0; i < spec->n_mounts; i++)
    {
      const struct kist_mount *m = &spec->mounts[i];
      _cleanup_error_ struct kist_error *e = NULL;
      _cleanup_plan_ struct plan p = { 0 };
      _cleanup_free_ char *desc = mount_desc (m);
      int ret;

      if (m->destination == NULL || m->destination[0] != '/')
        ret = kist_error_make (&e, EINVAL, "the destination must be an absolute path");
      else if (m->destination[strspn (m->destination, "/")] == '\0')
        ret = kist_error_make (&e, EINVAL, "mounting over the container root is not supported "
                                           "(set root.path instead)");
      else if ((ret = plan_build (m, &p, &e)) == 0
               && (ret = kist_resolve_clean (m->destination, &p.clean, &e)) == 0)
        {
          p.exact = dest_exactness (&p);
          ret = p.bind ? mount_bind (ctx, m, &p, &e) : mount_fs (ctx, m, &p, &e);
        }

      if (ret < 0)
        {
          _cleanup_free_ char *reason = xasprintf ("mounts[%zu] %s (%s): %s", i,
                                                   m->destination ? m->destination : "(none)",
                                                   desc, e ? e->msg : "failed");
          int errnum = e && e->errnum ? e->errnum : EIO;
          if (!may_degrade)
            return kist_report_failed (r, "mounts", "", errnum, err, "%s", reason);
          if (first_errno == 0)
            first_errno = errnum;
          append (&failures, "; ", xstrdup (reason));
          n_failed++;
          continue;
        }
      n_ok++;
      append (&list, ", ",
              xasprintf ("%s %s", m->destination, p.bind ? (p.rbind ? "rbind" : "bind") : p.fstype));
      if (p.cgroup_mapped)
        append (&notes, "; ",
                xasprintf ("%s: type cgroup mounted as cgroup2 (kist supports cgroup v2 only)",
                           m->destination));
      if (p.ignored)
        append (&notes, "; ",
                xasprintf ("%s: options %s ignored (filesystem data options mean nothing on a "
                           "bind mount, tmpcopyup only on a tmpfs; runc ignores them too)",
                           m->destination, p.ignored));
      if (p.note)
        append (&notes, "; ", xstrdup (p.note));
    }

  if (n_failed)
    return kist_report_failed (r, "mounts", "", first_errno, err, "%s (%zu of %zu mounts applied)",
                               failures, n_ok, spec->n_mounts);
  kist_report_applied (r, "mounts", "", "%zu mounts: %s (flags verified)%s%s", n_ok, list,
                       notes ? "; " : "", notes ? notes : "");
  return 0;
}
