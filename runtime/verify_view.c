/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: verified from outside, what the container sees: its namespaces
 * (/proc/PID/ns), its root (/proc/PID/root), its mounts
 * (/proc/PID/mountinfo), its cwd and its network (/proc/PID/net). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "layer.h"
#include "mountinfo.h"
#include "ns.h"
#include "resolve.h"
#include "verify_int.h"
#include "util.h"

/* ------------------------------------------------------------ namespace.* */

/* One namespace entry against /proc/PID/ns/NAME: the joined path's
 * namespace, or (new) not kist's own; a new pid namespace also makes the
 * process pid 1 in it (the last NSpid of /proc/PID/status).  Returns the
 * reason it disagrees (newly allocated), NULL when it agrees; *note says
 * what was read. */
static char *
ns_disagrees (struct kist_ctx *ctx, enum kist_ns_type t, const char *expect, char **note)
{
  const struct kist_namespace *ns = &ctx->spec->linux_->ns[t];
  char link[64];
  snprintf (link, sizeof link, "/proc/%d/ns/%s", (int) ctx->pid, kist_ns_proc_name (t));
  uint64_t got = 0;
  bool unreadable = false; /* rootless: unreadable_note */
  int ret = kist_ns_ino (AT_FDCWD, link, &got);
  if (ret < 0)
    {
      if (ret != -EACCES && ret != -EPERM)
        return xasprintf ("cannot read %s from outside: %s", link, strerror (-ret));
      unreadable = true;
    }
  _cleanup_free_ char *ino_w = vf_expect_word (expect, "ino");
  uint64_t inside = 0;
  if (ino_w == NULL || kist_parse_u64 (ino_w, &inside) < 0)
    return xstrdup ("the entry names no inode to verify");
  if (!unreadable && got != inside)
    return xasprintf ("from outside, %s is inode %" PRIu64 ", not the inode %" PRIu64
                      " the container read inside",
                      link, got, inside);
  if (!unreadable && ns->path)
    {
      /* A joined path is a file of its own: both stat, the same inode of
       * the same file system. */
      struct stat st, want;
      if (stat (link, &st) < 0)
        return xasprintf ("cannot stat %s from outside: %s", link, strerror (errno));
      if (stat (ns->path, &want) < 0)
        return xasprintf ("cannot stat the joined `%s` from outside: %s", ns->path,
                          strerror (errno));
      if (st.st_ino != want.st_ino || st.st_dev != want.st_dev)
        return xasprintf ("from outside, %s is inode %lu, not the joined `%s` (inode %lu)", link,
                          (unsigned long) st.st_ino, ns->path, (unsigned long) want.st_ino);
    }
  if (!unreadable && !ns->path && got == ctx->host_ns_ino[t])
    return xasprintf ("from outside, %s is kist's own namespace (inode %" PRIu64 "), not a new one",
                      link, got);
  bool pid1 = t == KIST_NS_PID && !ns->path;
  if (pid1)
    {
      /* /proc/PID/status needs no ptrace access: read even when rootless. */
      char *why = NULL;
      _cleanup_free_ char *nspid = vf_status_field (ctx, "NSpid", &why);
      if (nspid == NULL)
        return why;
      const char *last = strrchr (kist_rstrip (nspid), '\t');
      if (last == NULL || strcmp (last + 1, "1") != 0)
        return xasprintf ("from outside, /proc/%d/status NSpid is `%s`: the process is not pid 1 "
                          "of a new pid namespace",
                          (int) ctx->pid, nspid);
    }
  if (unreadable)
    *note = vf_unreadable_note (link, pid1 ? "; verified from outside: NSpid ends in 1" : "");
  else
    *note = xasprintf ("verified from outside (%s%s)", link, pid1 ? "; NSpid ends in 1" : "");
  return NULL;
}

static char *
ns_check (struct kist_ctx *ctx, const struct kist_layer *l, char **note)
{
  for (int t = 0; t < KIST_NS_COUNT; t++)
    if (strcmp (l->name + strlen ("namespace."), kist_ns_name (t)) == 0)
      return ns_disagrees (ctx, t, l->expect, note);
  return xasprintf ("`%s` is no namespace kist knows", l->name);
}

VERIFIER (kist_ns_verify, ns_check, "namespace.user", "namespace.mount", "namespace.pid",
          "namespace.net", "namespace.uts", "namespace.ipc", "namespace.cgroup", "namespace.time")

/* --------------------------------------------- rootfs.pivot_root, readonly */

/* The process's root, /proc/PID/root from outside: the rootfs (the same
 * inode as root.path seen by kist), the mount the init found at / after
 * pivot_root, and, for rootfs.readonly, a read-only mount. */
static char *
root_disagrees (struct kist_ctx *ctx, const struct kist_layer *l, char **note)
{
  char link[64];
  snprintf (link, sizeof link, "/proc/%d/root", (int) ctx->pid);
  bool readonly = strcmp (l->name, "rootfs.readonly") == 0;
  struct stat got, want;
  struct statvfs sv;
  if (readonly ? statvfs (link, &sv) < 0 : stat (link, &got) < 0)
    {
      if (errno == EACCES || errno == EPERM)
        {
          *note = vf_unreadable_note (link, "");
          return NULL;
        }
      return xasprintf ("cannot stat %s from outside: %s", link, strerror (errno));
    }
  if (readonly)
    {
      if (!(sv.f_flag & ST_RDONLY))
        return xasprintf ("from outside, the mount at %s is not read-only (statvfs)", link);
      *note = xasprintf ("verified from outside (statvfs %s: ST_RDONLY)", link);
      return NULL;
    }
  if (ctx->rootfs == NULL || stat (ctx->rootfs, &want) < 0)
    return xasprintf ("cannot stat the rootfs `%s` from outside: %s",
                      ctx->rootfs ? ctx->rootfs : "(none)", strerror (errno));
  if (got.st_dev != want.st_dev || got.st_ino != want.st_ino)
    return xasprintf ("from outside, %s is not the rootfs `%s` (dev/inode differ)", link,
                      ctx->rootfs);
  _cleanup_free_ char *mnt_w = vf_expect_word (l->expect, "mnt");
  uint64_t inside = 0, mnt = 0;
  _cleanup_error_ struct kist_error *e = NULL;
  if (mnt_w == NULL || kist_parse_u64 (mnt_w, &inside) < 0)
    return xstrdup ("the entry names no mount to verify");
  if (kist_mnt_id_at (AT_FDCWD, link, 0, &mnt, &e) < 0)
    return xasprintf ("the mount id of %s from outside: %s", link, e->msg);
  if (mnt != inside)
    return xasprintf ("from outside, %s is mount %" PRIu64 ", not mount %" PRIu64
                      " the init found at /",
                      link, mnt, inside);
  *note = xasprintf ("verified from outside (%s: the rootfs, mount %" PRIu64 ")", link, mnt);
  return NULL;
}

VERIFIER (kist_rootfs_verify, root_disagrees, "rootfs.pivot_root", "rootfs.readonly")

/* ------------------------------------- mounts, masked_paths, readonly_paths */

static void
idmap_owner_note (char **owners, const char *point, unsigned uid, unsigned gid)
{
  char *next = xasprintf ("%s%s%s owned %u:%u (idmapped)", *owners ? *owners : "",
                          *owners ? ", " : "", point, uid, gid);
  free (*owners);
  *owners = next;
}

/* "ID/UID/GID,...": each idmapped mount says `idmapped` in mountinfo, and
 * its root, seen from outside through /proc/PID/root where it is not
 * covered, has the owner the parent saw through the mapping. */
static char *
idmapped_check (struct kist_ctx *ctx, const struct kist_mountinfo *t, const char *list,
                const char *what, char **owners)
{
  char root[64];
  snprintf (root, sizeof root, "/proc/%d/root", (int) ctx->pid);
  _cleanup_close_ int rootfd = open (root, O_PATH | O_DIRECTORY | O_CLOEXEC);
  _cleanup_free_ char *copy = xstrdup (list);
  char *save = NULL;
  for (char *item = strtok_r (copy, ",", &save); item; item = strtok_r (NULL, ",", &save))
    {
      unsigned long long id;
      unsigned uid, gid;
      if (sscanf (item, "%llu/%u/%u", &id, &uid, &gid) != 3)
        return xasprintf ("malformed idmapped expectation `%s`", item);
      const struct kist_mountinfo_entry *e = kist_mountinfo_find (t, id);
      if (e == NULL || !kist_mountinfo_has_opt (e->opts, "idmapped"))
        return xasprintf ("%s shows mount %llu %s", what, id,
                          e ? "without `idmapped` in its options" : "nowhere");
      _cleanup_error_ struct kist_error *err = NULL;
      _cleanup_close_ int fd = rootfd < 0 ? -1 : kist_resolve_open (rootfd, e->point, O_PATH, 0, &err);
      uint64_t at = 0;
      struct stat st;
      if (fd < 0 || kist_mnt_id_at (fd, "", 0, &at, NULL) < 0 || at != id || fstat (fd, &st) < 0)
        continue; /* covered by a later mount, or not reachable: mountinfo said enough */
      if (st.st_uid != uid || st.st_gid != gid)
        return xasprintf ("from outside, %s%s (idmapped mount %llu) is owned by %u:%u, expected "
                          "%u:%u through the mapping",
                          root, e->point, id, (unsigned) st.st_uid, (unsigned) st.st_gid, uid, gid);
      idmap_owner_note (owners, e->point, uid, gid);
    }
  return NULL;
}

static char *
mounts_check (struct kist_ctx *ctx, const struct kist_layer *l, char **note)
{
  char what[64];
  snprintf (what, sizeof what, "/proc/%d/mountinfo", (int) ctx->pid);
  int errnum = 0;
  const struct kist_mountinfo *t = vf_mountinfo (ctx, &errnum);
  if (t == NULL && (errnum == EACCES || errnum == EPERM))
    {
      *note = vf_unreadable_note (what, "");
      return NULL;
    }
  if (t == NULL)
    return xasprintf ("cannot read %s from outside: %s", what, strerror (errnum));
  _cleanup_free_ char *list = vf_expect_word (l->expect, "mnts");
  char *why = kist_mountinfo_check (t, list, what);
  _cleanup_free_ char *idmapped = vf_expect_word (l->expect, "idmapped");
  _cleanup_free_ char *owners = NULL;
  if (why == NULL && idmapped)
    why = idmapped_check (ctx, t, idmapped, what, &owners);
  if (why == NULL)
    *note = xasprintf ("verified from outside (%s%s%s)", what, owners ? "; " : "",
                       owners ? owners : "");
  return why;
}

VERIFIER (kist_mounts_verify, mounts_check, "mounts", "masked_paths", "readonly_paths")

/* -------------------------------------------------------------------- dev */

/* Every node /dev was to get is that device in /proc/PID/root (dev.c). */
static char *
dev_check (struct kist_ctx *ctx, const struct kist_layer *l, char **note)
{
  (void) l;
  char root[64];
  snprintf (root, sizeof root, "/proc/%d/root", (int) ctx->pid);
  _cleanup_close_ int rootfd = open (root, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (rootfd < 0 && (errno == EACCES || errno == EPERM))
    {
      *note = vf_unreadable_note (root, "");
      return NULL;
    }
  if (rootfd < 0)
    return xasprintf ("cannot open %s from outside: %s", root, strerror (errno));
  size_t n = 0;
  char *why = kist_dev_disagrees (ctx->spec, rootfd, &n);
  if (why)
    {
      char *w = xasprintf ("from outside, in %s: %s", root, why);
      free (why);
      return w;
    }
  *note = xasprintf ("verified from outside (%zu nodes in %s/dev)", n, root);
  return NULL;
}

VERIFIER (kist_dev_verify, dev_check, "dev")

/* -------------------------------------------------------------------- cwd */

/* /proc/PID/cwd is process.cwd as kist resolves it in /proc/PID/root
 * (openat2 RESOLVE_IN_ROOT: the image's symlinks cannot send it out). */
static char *
cwd_check (struct kist_ctx *ctx, const struct kist_layer *l, char **note)
{
  char root[64], cwd[64];
  snprintf (root, sizeof root, "/proc/%d/root", (int) ctx->pid);
  snprintf (cwd, sizeof cwd, "/proc/%d/cwd", (int) ctx->pid);
  const char *path = l->requested && l->requested[0] ? l->requested : "/";
  _cleanup_close_ int rootfd = open (root, O_PATH | O_DIRECTORY | O_CLOEXEC);
  struct stat got, want;
  if (rootfd < 0 || stat (cwd, &got) < 0)
    {
      if (errno == EACCES || errno == EPERM)
        {
          *note = vf_unreadable_note (rootfd < 0 ? root : cwd, "");
          return NULL;
        }
      return xasprintf ("cannot open %s from outside: %s", rootfd < 0 ? root : cwd,
                        strerror (errno));
    }
  _cleanup_error_ struct kist_error *e = NULL;
  _cleanup_close_ int fd = kist_resolve_open (rootfd, path, O_PATH | O_DIRECTORY, 0, &e);
  if (fd < 0)
    return xasprintf ("from outside, process.cwd `%s` in %s: %s", path, root, e->msg);
  if (fstat (fd, &want) < 0)
    return xasprintf ("from outside, stat process.cwd `%s`: %s", path, strerror (errno));
  if (got.st_dev != want.st_dev || got.st_ino != want.st_ino)
    return xasprintf ("from outside, %s is not process.cwd `%s` resolved in %s", cwd, path, root);
  *note = xasprintf ("verified from outside (%s)", cwd);
  return NULL;
}

VERIFIER (kist_cwd_verify, cwd_check, "cwd")

/* -------------------------------------------------------- network.loopback */

/* The container's network namespace from outside, /proc/PID/net: dev lists
 * lo, and fib_trie has 127.0.0.1's local host route, which the kernel
 * holds only while lo is up. */
static char *
net_check (struct kist_ctx *ctx, const struct kist_layer *l, char **note)
{
  (void) l;
  char path[64];
  _cleanup_free_ char *dev = NULL, *trie = NULL;
  _cleanup_error_ struct kist_error *e = NULL;
  snprintf (path, sizeof path, "/proc/%d/net/dev", (int) ctx->pid);
  if (kist_read_file_at (AT_FDCWD, path, 1u << 20, &dev, NULL, &e) < 0)
    return xasprintf ("cannot read %s from outside: %s", path, e->msg);
  bool lo = false;
  for (char *p = dev; p && *p && !lo; p = strchr (p, '\n') ? strchr (p, '\n') + 1 : NULL)
    {
      p += strspn (p, " ");
      lo = strncmp (p, "lo:", 3) == 0;
    }
  if (!lo)
    return xasprintf ("from outside, %s lists no lo", path);
  snprintf (path, sizeof path, "/proc/%d/net/fib_trie", (int) ctx->pid);
  if (kist_read_file_at (AT_FDCWD, path, 4u << 20, &trie, NULL, &e) < 0)
    return xasprintf ("cannot read %s from outside: %s", path, e->msg);
  bool up = false;
  for (char *p = strstr (trie, "-- 127.0.0.1\n"); p && !up; p = strstr (p + 1, "-- 127.0.0.1\n"))
    {
      char *next = strchr (p, '\n') + 1;
      char *end = strchr (next, '\n');
      up = end && memmem (next, (size_t) (end - next), "/32 host LOCAL", 14) != NULL;
    }
  if (!up)
    return xasprintf ("from outside, %s has no local route for 127.0.0.1: lo is not up", path);
  *note = xasprintf ("verified from outside (/proc/%d/net: lo up)", (int) ctx->pid);
  return NULL;
}

VERIFIER (kist_net_verify, net_check, "network.loopback")
