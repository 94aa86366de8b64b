/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: where cgroup v2 is (issue 4): the cgroup2 mount from
 * /proc/self/mountinfo (never assumed at /sys/fs/cgroup: on a hybrid host it
 * is e.g. /sys/fs/cgroup/unified), kist's own cgroup, and the scope a
 * container's linux.cgroupsPath names (the rules are in cgroup.h).  Also the
 * small file helpers the other cgroup files share (cgroup_int.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cgroup.h"
#include "cgroup_int.h"
#include "mountinfo.h"
#include "sha256.h"
#include "resolve.h"
#include "util.h"

/* ---------------------------------------------------------------- paths */

/* The visible cgroup2 mount of /proc/self/mountinfo: its mount point and
 * (if root) its root field, as the calling process's cgroup namespace shows
 * it. */
/* What find_mount found, for the process that found it: a create asks two
 * or three times (the intent record's scope, the cgroup layer, the cgroup
 * namespace's note), and each read of mountinfo cost 0.1-0.2 ms here.  A
 * forked child (the container's setup process, in new namespaces) looks
 * again, and so does anyone after an error. */
static struct
{
  pid_t pid;
  char *mount, *root;
} found;

/* statmount(2) and listmount(2) (Linux 6.8; the headers here are older):
 * one mount's fields as the caller's namespaces show it, without the whole
 * mountinfo table (0.15-0.2 ms here in a new mount namespace). */
#ifndef SYS_statmount
#define SYS_statmount 457
#endif
#ifndef SYS_listmount
#define SYS_listmount 458
#endif
#define KIST_STATX_MNT_ID_UNIQUE 0x4000U
#define KIST_STATMOUNT_SB_BASIC 0x1U
#define KIST_STATMOUNT_MNT_ROOT 0x8U
#define KIST_STATMOUNT_MNT_POINT 0x10U
#define KIST_LSMT_ROOT 0xffffffffffffffffULL
struct kist_mnt_id_req
{
  uint32_t size, spare;
  uint64_t mnt_id, param;
};
struct kist_statmount
{
  uint32_t size, spare1;
  uint64_t mask;
  uint32_t sb_dev_major, sb_dev_minor;
  uint64_t sb_magic;
  uint32_t sb_flags, fs_type;
  uint64_t mnt_id, mnt_parent_id;
  uint32_t mnt_id_old, mnt_parent_id_old;
  uint64_t mnt_attr, mnt_propagation, mnt_peer_group, mnt_master, propagate_from;
  uint32_t mnt_root, mnt_point;
  uint64_t spare2[50];
  char str[];
};
union kist_statmount_buf
{
  struct kist_statmount sm;
  char buf[sizeof (struct kist_statmount) + 2 * PATH_MAX];
};

/* statmount of the mount with the unique id, asking for mask; false when
 * the kernel has no statmount or does not give every field asked for. */
static bool
statmount_get (uint64_t id, uint64_t mask, union kist_statmount_buf *u)
{
  struct kist_mnt_id_req req = { .size = sizeof req, .mnt_id = id, .param = mask };
  long n = syscall (SYS_statmount, &req, &u->sm, sizeof *u, 0);
  return n >= 0 && (u->sm.mask & mask) == mask && u->sm.size <= sizeof *u
         && u->sm.size >= offsetof (struct kist_statmount, str);
}

/* A string field (its offset in str) of what statmount_get returned, or
 * NULL when it does not lie whole in the answer. */
static const char *
statmount_str (const union kist_statmount_buf *u, uint32_t off)
{
  size_t len = u->sm.size - offsetof (struct kist_statmount, str);
  if (off >= len || memchr (u->sm.str + off, '\0', len - off) == NULL)
    return NULL;
  return u->sm.str + off;
}

/* The unique id of the mount PATH shows now (statx, Linux 6.8), 0 if unknown. */
static uint64_t
mnt_id_unique_at (const char *path)
{
  struct statx stx;
  if (statx (AT_FDCWD, path, AT_NO_AUTOMOUNT, KIST_STATX_MNT_ID_UNIQUE, &stx) < 0
      || !(stx.stx_mask & KIST_STATX_MNT_ID_UNIQUE))
    return 0;
  return stx.stx_mnt_id;
}

/* The cgroup2 mount by listmount and statmount, chosen as from mountinfo
 * (find_mount_read): the first, in mount id order, that its mount point
 * shows now.  1: found; 0: the kernel cannot say (before Linux 6.8, a
 * mount table too large for one call) or there is none: mountinfo decides,
 * and explains. */
static int
find_mount_statmount (char **mount, char **root)
{
  uint64_t ids[128];
  struct kist_mnt_id_req req = { .size = sizeof req, .mnt_id = KIST_LSMT_ROOT };
  long n = syscall (SYS_listmount, &req, ids, KIST_ARRAY_SIZE (ids), 0);
  if (n <= 0 || (size_t) n >= KIST_ARRAY_SIZE (ids))
    return 0;
  union kist_statmount_buf u;
  for (long i = 0; i < n; i++)
    {
      if (!statmount_get (ids[i], KIST_STATMOUNT_SB_BASIC, &u))
        return 0;
      if (u.sm.sb_magic != CGROUP2_SUPER_MAGIC)
        continue;
      if (!statmount_get (ids[i], KIST_STATMOUNT_SB_BASIC | KIST_STATMOUNT_MNT_POINT
                                      | KIST_STATMOUNT_MNT_ROOT, &u))
        return 0;
      const char *point = statmount_str (&u, u.sm.mnt_point);
      const char *r = statmount_str (&u, u.sm.mnt_root);
      if (point == NULL || r == NULL)
        return 0;
      /* Hidden by a later mount over its path: not reachable there. */
      if (mnt_id_unique_at (point) != ids[i])
        continue;
      *mount = xstrdup (point);
      if (root)
        *root = xstrdup (r);
      return 1;
    }
  return 0;
}

/* The root field of the cgroup2 mount at MOUNT (the one visible there), or
 * NULL when the kernel has no statmount or says something else. */
static char *
statmount_cgroup2_root (const char *mount)
{
  uint64_t id = mnt_id_unique_at (mount);
  union kist_statmount_buf u;
  if (id == 0 || !statmount_get (id, KIST_STATMOUNT_SB_BASIC | KIST_STATMOUNT_MNT_ROOT, &u)
      || u.sm.sb_magic != CGROUP2_SUPER_MAGIC)
    return NULL;
  const char *root = statmount_str (&u, u.sm.mnt_root);
  return root ? xstrdup (root) : NULL;
}

static int
find_mount_read (char **mount, char **root, struct kist_error **err);

static int
find_mount (char **mount, char **root, struct kist_error **err)
{
  if (found.mount == NULL || found.pid != getpid ())
    {
      free (found.mount);
      free (found.root);
      found.mount = found.root = NULL;
      if (find_mount_read (&found.mount, &found.root, err) < 0)
        {
          *mount = NULL;
          if (root)
            *root = NULL;
          return -1;
        }
      found.pid = getpid ();
    }
  *mount = xstrdup (found.mount);
  if (root)
    *root = xstrdup (found.root);
  return 0;
}

static int
find_mount_read (char **mount, char **root, struct kist_error **err)
{
  _cleanup_mountinfo_ struct kist_mountinfo t = { 0 };
  *mount = NULL;
  if (root)
    *root = NULL;
  if (find_mount_statmount (mount, root) == 1)
    return 0;
  if (kist_mountinfo_read (AT_FDCWD, "/proc/self/mountinfo", &t, err) < 0)
    return kist_error_wrap (err, "cgroup: find the cgroup2 mount");
  for (size_t i = 0; i < t.n; i++)
    {
      const struct kist_mountinfo_entry *m = &t.e[i];
      if (strcmp (m->fstype, "cgroup2") != 0)
        continue;
      /* Only a mount that is what its path shows now: one hidden by a later
       * mount over its path (the engines' cgroup2 bind over /sys/fs/cgroup
       * hides /sys/fs/cgroup/unified) is not reachable there. */
      uint64_t at = 0;
      _cleanup_error_ struct kist_error *e = NULL;
      if (kist_mnt_id_at (AT_FDCWD, m->point, 0, &at, &e) < 0 || at != m->id)
        continue;
      *mount = xstrdup (m->point);
      if (root)
        *root = xstrdup (m->root);
      return 0;
    }
  return kist_error_make (err, ENOENT,
                          "cgroup: no cgroup2 filesystem is mounted (/proc/self/mountinfo); kist "
                          "supports cgroup v2 only: mount one with `mount -t cgroup2 none "
                          "/sys/fs/cgroup` or boot with systemd.unified_cgroup_hierarchy=1");
}

int
kist_cgroup_mount (char **mount, struct kist_error **err)
{
  return find_mount (mount, NULL, err);
}

char *
kist_cgroup_ns_root_note (void)
{
  _cleanup_free_ char *mount = NULL, *root = NULL;
  /* The mount point is the one this process (or the kist it was forked
   * from, before the namespaces changed its view of the root) found. */
  if (found.mount)
    {
      mount = xstrdup (found.mount);
      root = statmount_cgroup2_root (mount);
      if (root == NULL)
        {
          free (mount);
          mount = NULL;
        }
    }
  if (root == NULL && find_mount (&mount, &root, NULL) < 0)
    return NULL;
  /* The root of the hierarchy, shown from the namespace's root: "/" at it,
   * "/.." one level below it, and so on. */
  if (strcmp (root, "/") == 0)
    return xasprintf ("rooted at the cgroup2 root (the root of %s reads / in mountinfo): the "
                      "container sees the whole cgroup2 hierarchy, not a scope of its own",
                      mount);
  int up = 0;
  const char *p = root;
  while (strncmp (p, "/..", 3) == 0 && (p[3] == '/' || p[3] == '\0'))
    {
      up++;
      p += 3;
    }
  if (up == 0 || *p != '\0')
    return NULL; /* a mount of a subtree: nothing to say about the namespace */
  return xasprintf ("rooted %d level%s below the cgroup2 root (the root of %s reads %s in "
                    "mountinfo)",
                    up, up == 1 ? "" : "s", mount, root);
}

/* kist's own cgroup, for the process that read it: a create asks twice (the
 * intent record's scope, the cgroup layer).  A forked child (born in the
 * scope) reads again, and so does a process after it moved a process into a
 * scope (kist_cgroup_own_path_forget), which may have been itself. */
static struct
{
  pid_t pid;
  char *path;
} own;

void
kist_cgroup_own_path_forget (void)
{
  free (own.path);
  own.path = NULL;
}

static int
own_path_read (char **path, struct kist_error **err);

int
kist_cgroup_own_path (char **path, struct kist_error **err)
{
  *path = NULL;
  if (own.path == NULL || own.pid != getpid ())
    {
      kist_cgroup_own_path_forget ();
      if (own_path_read (&own.path, err) < 0)
        return -1;
      own.pid = getpid ();
    }
  *path = xstrdup (own.path);
  return 0;
}

static int
own_path_read (char **path, struct kist_error **err)
{
  _cleanup_free_ char *text = NULL;
  *path = NULL;
  if (kist_read_file_at (AT_FDCWD, "/proc/self/cgroup", CG_FILE_MAX, &text, NULL, err) < 0)
    return kist_error_wrap (err, "cgroup: find kist's own cgroup");
  char *save = NULL;
  for (char *line = strtok_r (text, "\n", &save); line; line = strtok_r (NULL, "\n", &save))
    if (strncmp (line, "0::", 3) == 0)
      {
        const char *p = line + 3;
        while (*p == '/')
          p++;
        char *v = xstrdup (p);
        size_t n = strlen (v);
        while (n > 0 && v[n - 1] == '/')
          v[--n] = '\0';
        /* A cgroup that was removed under us reads "/... (deleted)". */
        if (n > 10 && strcmp (v + n - 10, " (deleted)") == 0)
          {
            free (v);
            return kist_error_make (err, ENOENT, "cgroup: kist's own cgroup /%s was removed", p);
          }
        *path = v;
        return 0;
      }
  return kist_error_make (err, ENOENT,
                          "cgroup: /proc/self/cgroup has no cgroup v2 line (\"0::/path\"); kist "
                          "supports cgroup v2 only");
}

/* Refuse "", ".", "..", empty components; the path has no leading '/'. */
int
cg_validate_rel (const char *p, const char *what, struct kist_error **err)
{
  if (strlen (p) > 4096)
    return kist_error_make (err, ENAMETOOLONG, "%s: the cgroup path is too long", what);
  const char *c = p;
  while (*c)
    {
      const char *e = strchrnul (c, '/');
      size_t n = (size_t) (e - c);
      if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
        return kist_error_make (err, EINVAL,
                                "%s: `%s` has an empty, `.` or `..` component; give a clean path "
                                "below the cgroup2 root such as /kist/c1",
                                what, p);
      if (n > 255)
        return kist_error_make (err, ENAMETOOLONG, "%s: a component of `%s` is too long", what, p);
      c = *e ? e + 1 : e;
      if (*e && *c == '\0')
        return kist_error_make (err, EINVAL, "%s: `%s` ends with '/'", what, p);
    }
  return 0;
}

int
kist_cgroup_resolve_path (const char *cgroups_path, const char *own, const char *id, char **rel,
                          struct kist_error **err)
{
  const char *what = "linux.cgroupsPath";
  _cleanup_free_ char *out = NULL;
  *rel = NULL;
  own = own ? own : "";
  while (*own == '/')
    own++;

  if (cgroups_path == NULL || cgroups_path[0] == '\0')
    {
      if (id == NULL || id[0] == '\0' || strchr (id, '/') || strcmp (id, ".") == 0
          || strcmp (id, "..") == 0)
        return kist_error_make (err, EINVAL, "cgroup: the container id cannot name a cgroup");
      /* Ids may be 1024 characters, cgroup names only 255: a long id gets
       * "@" + its SHA-256, as its state directory does. */
      char hashed[2 * KIST_SHA256_LEN + 2];
      if (strlen (id) > 200)
        {
          uint8_t digest[KIST_SHA256_LEN];
          kist_sha256 (id, strlen (id), digest);
          hashed[0] = '@';
          kist_sha256_hex (digest, hashed + 1);
          id = hashed;
        }
      out = own[0] ? xasprintf ("%s/kist/%s", own, id) : xasprintf ("kist/%s", id);
      what = "cgroup scope";
    }
  else
    {
      if (strchr (cgroups_path, ':') != NULL && cgroups_path[0] != '/')
        return kist_error_make (err, ENOTSUP,
                                "linux.cgroupsPath `%s`: the systemd cgroup driver is not "
                                "implemented; use a path (absolute: below the cgroup2 root, "
                                "relative: below kist's own cgroup)",
                                cgroups_path);
      if (cgroups_path[0] == '/')
        {
          const char *p = cgroups_path;
          while (*p == '/')
            p++;
          out = xstrdup (p);
        }
      else
        out = own[0] ? xasprintf ("%s/%s", own, cgroups_path) : xstrdup (cgroups_path);
    }
  if (out[0] == '\0')
    return kist_error_make (err, EINVAL,
                            "%s: `%s` names the cgroup2 root, which cannot hold a container", what,
                            cgroups_path ? cgroups_path : "");
  if (cg_validate_rel (out, what, err) < 0)
    return -EINVAL;
  *rel = steal_pointer (&out);
  return 0;
}

char *
cg_read_small (int dirfd, const char *file)
{
  char *text = NULL;
  struct kist_error *e = NULL;
  if (kist_read_file_at (dirfd, file, CG_FILE_MAX, &text, NULL, &e) < 0)
    {
      kist_error_free (e);
      return NULL;
    }
  return text;
}

/* Open an existing scope given as an absolute path; check it is cgroup2. */
int
cg_open_scope (const char *abs_path, struct kist_error **err)
{
  if (abs_path == NULL || abs_path[0] != '/')
    return kist_error_make (err, EINVAL, "cgroup: `%s` is not an absolute cgroup path",
                            abs_path ? abs_path : "(null)");
  _cleanup_close_ int fd = open (abs_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0)
    return kist_error_make (err, errno, "cgroup: open the scope `%s`", abs_path);
  struct statfs sfs;
  if (fstatfs (fd, &sfs) < 0 || sfs.f_type != CGROUP2_SUPER_MAGIC)
    return kist_error_make (err, EXDEV, "cgroup: `%s` is not on a cgroup2 filesystem", abs_path);
  return steal_fd (&fd);
}

int
cg_split_scope (const char *abs_path, char **mount, char **rel, struct kist_error **err)
{
  _cleanup_free_ char *m = NULL, *r = NULL;
  *mount = *rel = NULL;
  if (kist_cgroup_mount (&m, err) < 0)
    return -1;
  size_t ml = strlen (m);
  if (abs_path == NULL || strncmp (abs_path, m, ml) != 0 || abs_path[ml] != '/')
    return kist_error_make (err, EINVAL, "cgroup: `%s` is not below the cgroup2 mount %s",
                            abs_path ? abs_path : "(null)", m);
  const char *p = abs_path + ml;
  while (*p == '/')
    p++;
  r = xstrdup (p);
  size_t n = strlen (r);
  while (n > 0 && r[n - 1] == '/')
    r[--n] = '\0';
  if (cg_validate_rel (r, "cgroup scope", err) < 0)
    return -1;
  *mount = steal_pointer (&m);
  *rel = steal_pointer (&r);
  return 0;
}
