/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: device nodes and the /dev symlinks (layer "dev").
 *
 * Runs in the container init after the mounts (so on the container's /dev
 * tmpfs) and before pivot_root (so the host's nodes are still reachable for
 * the fallback).  The default nodes null, zero, full, random, urandom and tty
 * plus linux.devices are made with mknodat in their resolved parent
 * directory (no component of which may be a symlink in the image: an image
 * /dev pointing at a host-looking path or a volume gets nothing); when mknod
 * is not permitted (a user namespace), the host's node at the same path is
 * bind-mounted onto an empty file instead, as runc does.  The init is
 * already in its cgroup here, so a device program that denied mknod would
 * look the same; kist's own program always allows mknod (runc's default
 * rules c/b *:* m, cgroup_devices.c).
 * Every node is read back with fstatat (type and device number).
 * Making a node does not make it usable: like runc, kist gives linux.devices
 * entries no rule in the device cgroup; only linux.resources.devices and the
 * default rules decide who may open them. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "layer.h"
#include "resolve.h"
#include "util.h"

struct node
{
  const char *path;   /* absolute, inside the container */
  char type;          /* 'c', 'b', 'p' */
  unsigned maj, min;
  mode_t mode;
  uid_t uid;
  gid_t gid;
  bool is_default;
};

static const struct node default_nodes[] = {
  { "/dev/null", 'c', 1, 3, 0666, 0, 0, true },    { "/dev/zero", 'c', 1, 5, 0666, 0, 0, true },
  { "/dev/full", 'c', 1, 7, 0666, 0, 0, true },    { "/dev/random", 'c', 1, 8, 0666, 0, 0, true },
  { "/dev/urandom", 'c', 1, 9, 0666, 0, 0, true }, { "/dev/tty", 'c', 5, 0, 0666, 0, 0, true },
};

enum how
{
  HOW_MKNOD,
  HOW_BIND,
  HOW_EXISTING
};

static mode_t
node_ifmt (char type)
{
  return type == 'b' ? S_IFBLK : type == 'p' ? S_IFIFO : S_IFCHR;
}

static bool
node_matches (const struct node *n, const struct stat *st)
{
  if ((st->st_mode & S_IFMT) != node_ifmt (n->type))
    return false;
  return n->type == 'p' || st->st_rdev == makedev (n->maj, n->min);
}

static const char *
type_name (char type)
{
  return type == 'b' ? "block device" : type == 'p' ? "fifo" : "character device";
}

/* What st_mode is, for messages. */
static const char *
file_kind (mode_t m)
{
  switch (m & S_IFMT)
    {
    case S_IFREG:
      return "regular file";
    case S_IFLNK:
      return "symlink";
    case S_IFCHR:
      return "character device";
    case S_IFBLK:
      return "block device";
    case S_IFIFO:
      return "fifo";
    case S_IFSOCK:
      return "socket";
    default:
      return "file of another kind";
    }
}

/* Split "/dev/x/y" into a new parent string "/dev/x" and a pointer to "y". */
static int
split_path (const char *path, char **parent, const char **name, struct kist_error **err)
{
  size_t l = strlen (path);
  while (l > 1 && path[l - 1] == '/')
    l--;
  const char *slash = memrchr (path, '/', l);
  if (slash == NULL || (size_t) (slash - path) + 1 >= l)
    return kist_error_make (err, EINVAL, "device path `%s` has no file name", path);
  *parent = xasprintf ("%.*s", (int) (slash - path), path);
  if ((*parent)[0] == '\0')
    {
      free (*parent);
      *parent = xstrdup ("/");
    }
  *name = slash + 1;
  if (strcmp (*name, "..") == 0 || strcmp (*name, ".") == 0)
    return kist_error_make (err, EINVAL, "device path `%s` must name a file", path);
  return 0;
}

/* The host's node at the same path, bind-mounted onto an empty file. */
static int
bind_host_node (int parentfd, const char *name, const struct node *n, struct kist_error **err)
{
  struct stat hst;
  if (stat (n->path, &hst) < 0 || !node_matches (n, &hst))
    return kist_error_make (err, EPERM,
                            "%s: mknod is not permitted here (a user namespace, or a device "
                            "cgroup of an ancestor that denies mknod) and the host has no %s "
                            "%u:%u at %s to bind-mount instead",
                            n->path, type_name (n->type), n->maj, n->min, n->path);
  if (mknodat (parentfd, name, S_IFREG | 0644, 0) < 0)
    {
      struct stat st;
      if (errno != EEXIST)
        return kist_error_make (err, errno, "%s: create the bind target", n->path);
      if (fstatat (parentfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return kist_error_make (err, errno, "%s: stat", n->path);
      if (S_ISDIR (st.st_mode) || S_ISLNK (st.st_mode))
        return kist_error_make (err, EEXIST, "%s exists in the image and is a %s", n->path,
                                S_ISDIR (st.st_mode) ? "directory" : "symlink");
    }
  _cleanup_close_ int target = openat (parentfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (target < 0)
    return kist_error_make (err, errno, "%s: open the bind target", n->path);
  struct stat tst;
  if (fstat (target, &tst) < 0)
    return kist_error_make (err, errno, "%s: stat the bind target", n->path);
  if (S_ISDIR (tst.st_mode) || S_ISLNK (tst.st_mode))
    return kist_error_make (err, EEXIST, "%s was replaced by a %s while kist made it", n->path,
                            S_ISDIR (tst.st_mode) ? "directory" : "symlink");
  _cleanup_close_ int tree = open_tree (AT_FDCWD, n->path, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
  if (tree < 0)
    return kist_error_make (err, errno, "%s: open_tree of the host node", n->path);
  if (move_mount (tree, "", target, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
    return kist_error_make (err, errno, "%s: move_mount of the host node", n->path);
  return 0;
}

/* The directory fd of path (made if missing) for nodes and symlinks: no
 * component may be a symlink in the image, so that an image whose /dev points
 * elsewhere (a host-looking path, a shared volume) gets nothing made there. */
static int
dev_dir (int rootfd, const char *path, struct kist_error **err)
{
  int fd = kist_resolve_mkpath_exact (rootfd, path, KIST_MKPATH_DIR, 0755, err);
  if (fd == -ELOOP)
    return kist_error_wrap (err, "device nodes and the /dev symlinks are made only in ordinary "
                                 "directories");
  return fd;
}

/* devfd: /dev from dev_dir, reused for every node directly in /dev (the
 * directory stays the one resolved: nothing renames it while the layer
 * runs); a node deeper down resolves its own parent. */
static int
make_node (int rootfd, int devfd, const struct node *n, enum how *how, struct kist_error **err)
{
  _cleanup_free_ char *parent = NULL;
  const char *name = NULL;
  if (split_path (n->path, &parent, &name, err) < 0)
    return -1;
  _cleanup_close_ int own = -1;
  int dirfd = devfd;
  if (strcmp (parent, "/dev") != 0)
    {
      dirfd = own = dev_dir (rootfd, parent, err);
      if (dirfd < 0)
        return kist_error_wrap (err, "%s", n->path);
    }

  dev_t dev = n->type == 'p' ? 0 : makedev (n->maj, n->min);
  mode_t perm = n->mode & 07777;
  struct stat st;
  *how = HOW_MKNOD;
  for (int attempt = 0;; attempt++)
    {
      if (mknodat (dirfd, name, node_ifmt (n->type) | perm, dev) == 0)
        break;
      if (errno == EPERM)
        {
          *how = HOW_BIND;
          if (bind_host_node (dirfd, name, n, err) < 0)
            return -1;
          goto verify;
        }
      if (errno != EEXIST || attempt > 0)
        return kist_error_make (err, errno, "mknod %s (%s %u:%u)", n->path, type_name (n->type),
                                n->maj, n->min);
      /* Something is there already: keep it if it is the right node,
       * replace it if it is not a directory. */
      if (fstatat (dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return kist_error_make (err, errno, "stat %s", n->path);
      if (node_matches (n, &st))
        {
          *how = HOW_EXISTING; /* keep it; owner and mode are set below */
          break;
        }
      if (S_ISDIR (st.st_mode))
        return kist_error_make (err, EEXIST, "%s exists in the container and is a directory",
                                n->path);
      /* runtime-spec: a file at a linux.devices path that does not match
       * the device is an error.  (A default node replaces what the image
       * has: s_dev.sh.) */
      if (!n->is_default)
        return kist_error_make (err, EEXIST,
                                "linux.devices: %s exists in the container and is a %s, not "
                                "the %s %u:%u the entry asks for: remove it from the image, "
                                "or change the entry's path",
                                n->path, file_kind (st.st_mode), type_name (n->type), n->maj,
                                n->min);
      if (unlinkat (dirfd, name, 0) < 0)
        return kist_error_make (err, errno, "remove the existing %s to make the device node",
                                n->path);
    }
  /* A node just made by this process is usually exactly right already
   * (its owner is kist's fsuid, which the default nodes ask for): read
   * back, it needs no chown or chmod. */
  if (*how == HOW_MKNOD && fstatat (dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0
      && node_matches (n, &st) && (st.st_mode & 07777) == perm && st.st_uid == n->uid
      && st.st_gid == n->gid)
    return 0;
  if (fchownat (dirfd, name, n->uid, n->gid, AT_SYMLINK_NOFOLLOW) < 0)
    return kist_error_make (err, errno, "chown %s to %u:%u", n->path, (unsigned) n->uid,
                            (unsigned) n->gid);
  /* The node is a device node or fifo we made or checked just now (not a
   * symlink): fchmodat follows nothing. */
  if (fchmodat (dirfd, name, perm, 0) < 0)
    return kist_error_make (err, errno, "chmod %s to %04o", n->path, (unsigned) perm);

verify:
  if (fstatat (dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return kist_error_make (err, errno, "verify %s", n->path);
  if (!node_matches (n, &st))
    return kist_error_make (err, EIO, "verify %s: not a %s %u:%u (mode %o, rdev %u:%u)", n->path,
                            type_name (n->type), n->maj, n->min, (unsigned) st.st_mode,
                            major (st.st_rdev), minor (st.st_rdev));
  if (*how != HOW_BIND
      && ((st.st_mode & 07777) != perm || st.st_uid != n->uid || st.st_gid != n->gid))
    return kist_error_make (err, EIO, "verify %s: mode %04o owner %u:%u, expected %04o %u:%u",
                            n->path, (unsigned) (st.st_mode & 07777), (unsigned) st.st_uid,
                            (unsigned) st.st_gid, (unsigned) perm, (unsigned) n->uid,
                            (unsigned) n->gid);
  return 0;
}

/* ------------------------------------------------------------ symlinks */

struct devlink
{
  const char *name, *target;
};

static const struct devlink dev_links[] = {
  { "ptmx", "pts/ptmx" },
  { "fd", "/proc/self/fd" },
  { "stdin", "/proc/self/fd/0" },
  { "stdout", "/proc/self/fd/1" },
  { "stderr", "/proc/self/fd/2" },
  { "core", "/proc/kcore" },
};

static bool
link_is (int dirfd, const char *name, const char *target)
{
  char buf[256];
  ssize_t n = readlinkat (dirfd, name, buf, sizeof buf - 1);
  if (n < 0)
    return false;
  buf[n] = '\0';
  return strcmp (buf, target) == 0;
}

static int
make_links (int dirfd, char **made, struct kist_error **err)
{
  _cleanup_free_ char *list = NULL, *kept = NULL;
  for (size_t i = 0; i < KIST_ARRAY_SIZE (dev_links); i++)
    {
      const struct devlink *l = &dev_links[i];
      bool ptmx = strcmp (l->name, "ptmx") == 0;
      /* /dev/core only where the host kernel has /proc/kcore (runc). */
      if (strcmp (l->name, "core") == 0 && access ("/proc/kcore", F_OK) < 0)
        continue;
      if (symlinkat (l->target, dirfd, l->name) < 0)
        {
          struct stat st;
          if (errno != EEXIST)
            return kist_error_make (err, errno, "symlink /dev/%s -> %s", l->name, l->target);
          if (fstatat (dirfd, l->name, &st, AT_SYMLINK_NOFOLLOW) < 0)
            return kist_error_make (err, errno, "stat /dev/%s", l->name);
          if (ptmx && (S_ISREG (st.st_mode) || S_ISDIR (st.st_mode)))
            return kist_error_make (err, EEXIST,
                                    "/dev/ptmx exists in the container and is a %s, not a "
                                    "symlink to pts/ptmx: remove it from the image",
                                    S_ISDIR (st.st_mode) ? "directory" : "regular file");
          if (ptmx && !link_is (dirfd, l->name, l->target))
            {
              /* A device node or another symlink: the container's ptmx
               * must be its own devpts instance's. */
              if (unlinkat (dirfd, l->name, 0) < 0
                  || symlinkat (l->target, dirfd, l->name) < 0)
                return kist_error_make (err, errno, "replace /dev/ptmx by a symlink to pts/ptmx");
            }
          else if (!ptmx && !link_is (dirfd, l->name, l->target))
            {
              char *next = xasprintf ("%s%s/dev/%s", kept ? kept : "", kept ? " " : "", l->name);
              free (kept);
              kept = next;
              continue;
            }
        }
      if (!link_is (dirfd, l->name, l->target))
        return kist_error_make (err, EIO, "verify: /dev/%s is not a symlink to %s", l->name,
                                l->target);
      char *next = xasprintf ("%s%s%s", list ? list : "", list ? " " : "", l->name);
      free (list);
      list = next;
    }
  if (kept)
    *made = xasprintf ("symlinks %s; existing entries kept: %s", list ? list : "(none)", kept);
  else
    *made = xasprintf ("symlinks %s", list ? list : "(none)");
  return 0;
}

/* ------------------------------------------------------------- the layer */

static const char *
dev_bind_mount (const struct kist_spec *spec)
{
  for (size_t i = 0; i < spec->n_mounts; i++)
    {
      const struct kist_mount *m = &spec->mounts[i];
      const char *d = m->destination;
      if (d == NULL || strncmp (d, "/dev", 4) != 0 || d[4 + strspn (d + 4, "/")] != '\0')
        continue;
      bool bind = m->type && strcmp (m->type, "bind") == 0;
      for (char **o = m->options; o && *o; o++)
        if (strcmp (*o, "bind") == 0 || strcmp (*o, "rbind") == 0)
          bind = true;
      if (bind)
        return m->source ? m->source : "?";
    }
  return NULL;
}

/* The nodes /dev gets: the defaults a linux.devices entry does not
 * replace, then linux.devices (a path listed again: the first entry wins,
 * as in runc).  *out is newly allocated; its paths are borrowed. */
static int
dev_nodes (const struct kist_spec *spec, struct node **out, size_t *n_out, size_t *n_default_out,
           size_t *n_dup_out, struct kist_error **err)
{
  size_t n_dev = spec->linux_ ? spec->linux_->n_devices : 0;
  struct node *nodes = xcalloc (KIST_ARRAY_SIZE (default_nodes) + n_dev, sizeof *nodes);
  _cleanup_free_ struct node *nodes_owned = nodes;
  size_t n = 0, n_default = 0, n_dup = 0;

  /* linux.devices entries replace a default node with the same path. */
  for (size_t i = 0; i < KIST_ARRAY_SIZE (default_nodes); i++)
    {
      bool overridden = false;
      for (size_t j = 0; j < n_dev; j++)
        if (strcmp (spec->linux_->devices[j].path, default_nodes[i].path) == 0)
          overridden = true;
      if (!overridden)
        {
          nodes[n++] = default_nodes[i];
          n_default++;
        }
    }
  for (size_t j = 0; j < n_dev; j++)
    {
      const struct kist_device *d = &spec->linux_->devices[j];
      if (d->path == NULL || d->path[0] != '/')
        return kist_error_make (err, EINVAL, "linux.devices[%zu].path must be absolute", j);
      if (d->type != 'c' && d->type != 'u' && d->type != 'b' && d->type != 'p')
        return kist_error_make (err, EINVAL, "linux.devices[%zu] (%s): unknown type `%c`", j,
                                d->path, d->type);
      if (d->type != 'p'
          && (d->major < 0 || d->minor < 0 || d->major > 0xfff || d->minor > 0xfffff))
        return kist_error_make (err, ERANGE, "linux.devices[%zu] (%s): major/minor out of range",
                                j, d->path);
      /* A path listed again: the first entry wins, as in runc. */
      bool again = false;
      for (size_t k = 0; k < j && !again; k++)
        again = strcmp (spec->linux_->devices[k].path, d->path) == 0;
      if (again)
        {
          n_dup++;
          continue;
        }
      nodes[n++] = (struct node){
        .path = d->path,
        .type = d->type == 'u' ? 'c' : d->type,
        .maj = (unsigned) d->major,
        .min = (unsigned) d->minor,
        .mode = d->has_file_mode ? (mode_t) (d->file_mode & 07777) : 0666,
        .uid = d->has_uid ? d->uid : 0,
        .gid = d->has_gid ? d->gid : 0,
      };
    }
  *out = steal_pointer (&nodes_owned);
  *n_out = n;
  *n_default_out = n_default;
  *n_dup_out = n_dup;
  return 0;
}

static int
dev_apply (struct kist_ctx *ctx, char **detail, struct kist_error **err)
{
  const struct kist_spec *spec = ctx->spec;
  size_t n_dev = spec->linux_ ? spec->linux_->n_devices : 0;
  _cleanup_free_ struct node *nodes = NULL;
  size_t n = 0, n_default = 0, n_dup = 0;
  if (dev_nodes (spec, &nodes, &n, &n_default, &n_dup, err) < 0)
    return -1;

  /* One fd of /dev for its nodes and symlinks (resolved once, exactly). */
  _cleanup_close_ int devfd = dev_dir (ctx->rootfs_fd, "/dev", err);
  if (devfd < 0)
    return -1;
  size_t counts[3] = { 0 };
  /* No umask while the nodes are made: mknod gives them their mode at
   * once, and a node read back as asked needs no chown or chmod. */
  mode_t mask = umask (0);
  for (size_t i = 0; i < n; i++)
    {
      enum how how = HOW_MKNOD;
      if (make_node (ctx->rootfs_fd, devfd, &nodes[i], &how, err) < 0)
        {
          umask (mask);
          return -1;
        }
      counts[how]++;
    }
  umask (mask);

  _cleanup_free_ char *links = NULL;
  if (make_links (devfd, &links, err) < 0)
    return -1;

  _cleanup_free_ char *method = NULL;
  static const char *names[3] = { "mknod", "bind", "existing" };
  for (int i = 0; i < 3; i++)
    if (counts[i])
      {
        char *next = xasprintf ("%s%s%s", method ? method : "", method ? "+" : "", names[i]);
        free (method);
        method = next;
      }
  *detail = xasprintf ("%zu default nodes + %zu devices (%s), %s%s", n_default, n_dev - n_dup,
                       method ? method : "none", links,
                       n_dup ? "; a path listed again in linux.devices: the first entry kept (as "
                               "runc)"
                             : "");
  return 0;
}

char *
kist_dev_disagrees (const struct kist_spec *spec, int rootfd, size_t *n_checked)
{
  _cleanup_free_ struct node *nodes = NULL;
  size_t n = 0, n_default = 0, n_dup = 0;
  _cleanup_error_ struct kist_error *e = NULL;
  if (dev_nodes (spec, &nodes, &n, &n_default, &n_dup, &e) < 0)
    return xstrdup (e->msg);
  /* /dev resolved once: a node directly in it is an fstatat there (not
   * followed), the same look-up as resolving its whole path; if /dev does
   * not open, each node's own resolution says why. */
  _cleanup_close_ int devfd = kist_resolve_open (rootfd, "/dev", O_PATH | O_DIRECTORY, 0, NULL);
  for (size_t i = 0; i < n; i++)
    {
      kist_error_freep (&e);
      struct stat st;
      const char *name = nodes[i].path + 5;
      if (devfd >= 0 && strncmp (nodes[i].path, "/dev/", 5) == 0 && *name
          && strchr (name, '/') == NULL && strcmp (name, "..") != 0 && strcmp (name, ".") != 0)
        {
          if (fstatat (devfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
            return xasprintf ("%s: %s", nodes[i].path, strerror (errno));
        }
      else
        {
          _cleanup_close_ int fd
              = kist_resolve_open (rootfd, nodes[i].path, O_PATH | O_NOFOLLOW, 0, &e);
          if (fd < 0)
            return xasprintf ("%s: %s", nodes[i].path, e->msg);
          if (fstat (fd, &st) < 0)
            return xasprintf ("stat %s: %s", nodes[i].path, strerror (errno));
        }
      if (!node_matches (&nodes[i], &st))
        return xasprintf ("%s is not a %s %u:%u (mode %o, rdev %u:%u)", nodes[i].path,
                          type_name (nodes[i].type), nodes[i].maj, nodes[i].min,
                          (unsigned) st.st_mode, major (st.st_rdev), minor (st.st_rdev));
    }
  *n_checked = n;
  return NULL;
}

int
kist_dev_apply (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err)
{
  const struct kist_spec *spec = ctx->spec;
  size_t n_dev = spec->linux_ ? spec->linux_->n_devices : 0;
  const char *bound = dev_bind_mount (spec);
  if (bound)
    {
      /* /dev comes from the host (like runc, kist then creates nothing). */
      if (n_dev)
        return kist_report_failed (r, "dev", "", EINVAL, err,
                                   "linux.devices requested, but /dev is a bind mount of `%s`: "
                                   "kist does not create nodes in a host directory",
                                   bound);
      kist_report_skip (r, "dev", "/dev is a bind mount of %s: no nodes or symlinks created",
                        bound);
      return 0;
    }
  if (ctx->rootfs_fd < 0)
    return kist_report_failed (r, "dev", "", EBADF, err, "the rootfs was not prepared");

  _cleanup_error_ struct kist_error *e = NULL;
  _cleanup_free_ char *detail = NULL;
  if (dev_apply (ctx, &detail, &e) < 0)
    return kist_report_failed (r, "dev", "", e->errnum ? e->errnum : EIO, err, "%s", e->msg);
  if (ctx->dev_ro_fd >= 0)
    {
      /* The read-only /dev tmpfs (mounts.c): now that everything is in it. */
      _cleanup_close_ int fd = steal_fd (&ctx->dev_ro_fd);
      struct mount_attr ro = { .attr_set = MOUNT_ATTR_RDONLY };
      struct statvfs sv;
      if (mount_setattr (fd, "", AT_EMPTY_PATH, &ro, sizeof ro) < 0)
        return kist_report_failed (r, "dev", "", errno, err,
                                   "make the /dev tmpfs read-only (its mount options say ro): %s",
                                   strerror (errno));
      if (fstatvfs (fd, &sv) < 0 || !(sv.f_flag & ST_RDONLY))
        return kist_report_failed (r, "dev", "", EIO, err,
                                   "the /dev tmpfs is not read-only after mount_setattr "
                                   "(fstatvfs read back)");
      kist_report_applied (r, "dev", "", "%s; then /dev made read-only as its mount options ask "
                                         "(fstatvfs read back)",
                           detail);
    }
  else
    kist_report_applied (r, "dev", "", "%s", detail);
  kist_report_expect (r, "dev", "nodes=1"); /* and from outside (verify_view.c) */
  return 0;
}
