/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: namespaces.  The new ones are created by the clone in container.c
 * (kist_ns_clone_flags); this layer joins the ones given by path, creates the
 * time namespace (its offsets must be written before any process enters it),
 * and proves every namespace by comparing /proc/self/ns/ inodes with the
 * host's (captured by the parent before clone) or with the joined path. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup.h"
#include "layer.h"
#include "ns.h"
#include "util.h"

static const char *const proc_ns_names[KIST_NS_COUNT] = {
  [KIST_NS_USER] = "user", [KIST_NS_MOUNT] = "mnt", [KIST_NS_PID] = "pid",
  [KIST_NS_NET] = "net",   [KIST_NS_UTS] = "uts",   [KIST_NS_IPC] = "ipc",
  [KIST_NS_CGROUP] = "cgroup", [KIST_NS_TIME] = "time",
};

const char *
kist_ns_proc_name (enum kist_ns_type t)
{
  return proc_ns_names[t];
}

static const struct kist_namespace *
ns_of (const struct kist_spec *s, enum kist_ns_type t)
{
  static const struct kist_namespace none;
  return s->linux_ ? &s->linux_->ns[t] : &none;
}

unsigned long
kist_ns_clone_flags (const struct kist_spec *s)
{
  unsigned long flags = 0;
  /* Joining a user namespace by path: every new namespace must be created
   * after the setns, by unshare in the init (kist_ns_apply). */
  if (ns_of (s, KIST_NS_USER)->present && ns_of (s, KIST_NS_USER)->path)
    return 0;
  for (int t = 0; t < KIST_NS_COUNT; t++)
    if (t != KIST_NS_TIME && ns_of (s, t)->present && ns_of (s, t)->path == NULL)
      flags |= kist_ns_clone_flag (t);
  return flags;
}

int
kist_ns_check (const struct kist_spec *s, struct kist_error **err)
{
  const struct kist_namespace *user = ns_of (s, KIST_NS_USER), *pid = ns_of (s, KIST_NS_PID);
  if (user->present && user->path && pid->present && pid->path == NULL)
    return kist_error_make (err, ENOTSUP,
                            "linux.namespaces: joining a user namespace by path together with a new "
                            "pid namespace is not supported by kist yet; join the pid namespace by "
                            "path too, or let kist create the user namespace");
  const struct kist_time_offset *m = s->linux_ ? &s->linux_->time_monotonic : NULL;
  const struct kist_time_offset *b = s->linux_ ? &s->linux_->time_boottime : NULL;
  if (((m && m->present) || (b && b->present)) && !ns_of (s, KIST_NS_TIME)->present)
    return kist_error_make (err, EINVAL,
                            "linux.timeOffsets: time offsets need a new time namespace; add "
                            "{\"type\": \"time\"} to linux.namespaces");
  if (((m && m->present) || (b && b->present)) && ns_of (s, KIST_NS_TIME)->path)
    return kist_error_make (err, EINVAL,
                            "linux.timeOffsets: offsets cannot be set on a time namespace joined by path");
  return 0;
}

/* A namespace's identity, read from the text of its /proc/PID/ns link
 * ("net:[4026531840]") rather than by a stat through it: every stat of the
 * link makes an nsfs inode and dentry for the namespace and frees them at the
 * last reference, while the text comes straight from the namespace
 * (readlink: 1.3-1.7 us against 2.5-3.5 us a call here, and a sandbox reads
 * about 20).  Every namespace is an inode of the one nsfs instance, unique
 * while the namespace lives, so its number alone tells two apart.  The
 * readlink needs the same ptrace access as the stat (EACCES alike). */
int
kist_ns_ino (int dirfd, const char *path, uint64_t *ino)
{
  char buf[64];
  ssize_t n = readlinkat (dirfd, path, buf, sizeof buf - 1);
  if (n < 0)
    return -errno;
  buf[n] = '\0';
  char *open_ = strchr (buf, '[');
  char *close_ = open_ ? strchr (open_, ']') : NULL;
  if (close_ == NULL || close_[1] != '\0')
    return -EPROTO;
  *close_ = '\0';
  if (kist_parse_u64 (open_ + 1, ino) < 0 || *ino == 0)
    return -EPROTO;
  return 0;
}

int
kist_ns_host_inodes (struct kist_ctx *ctx, struct kist_error **err)
{
  (void) err;
  _cleanup_close_ int dir = open ("/proc/self/ns", O_PATH | O_DIRECTORY | O_CLOEXEC);
  for (int t = 0; t < KIST_NS_COUNT; t++)
    {
      /* A kernel without this namespace type: leave 0; asking for it fails later. */
      uint64_t ino = 0;
      ctx->host_ns_ino[t] = dir >= 0 && kist_ns_ino (dir, proc_ns_names[t], &ino) == 0 ? ino : 0;
    }
  return 0;
}

static int
join_one (struct kist_ctx *ctx, enum kist_ns_type t, struct kist_report *r, struct kist_error **err)
{
  const struct kist_namespace *ns = ns_of (ctx->spec, t);
  _cleanup_free_ char *layer = xasprintf ("namespace.%s", kist_ns_name (t));
  _cleanup_close_ int fd = open (ns->path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return kist_report_failed (r, layer, ns->path, errno, err, "open namespace path `%s`: %s",
                               ns->path, strerror (errno));
  /* The pid namespace was joined by the parent before clone (setns on a pid
   * namespace only affects children); here we only verify it. */
  if (t != KIST_NS_PID && setns (fd, (int) kist_ns_clone_flag (t)) < 0)
    return kist_report_failed (r, layer, ns->path, errno, err, "setns `%s`: %s", ns->path,
                               strerror (errno));
  return 0;
}

static int
verify_one (struct kist_ctx *ctx, enum kist_ns_type t, int self_dir, struct kist_report *r,
            struct kist_error **err)
{
  const struct kist_namespace *ns = ns_of (ctx->spec, t);
  _cleanup_free_ char *layer = xasprintf ("namespace.%s", kist_ns_name (t));
  char self[64];
  snprintf (self, sizeof self, "/proc/self/ns/%s", proc_ns_names[t]);

  if (!ns->present)
    {
      kist_report_skip (r, layer, "not requested: shared with the host");
      return 0;
    }
  if (ns->path)
    {
      /* A joined path is a file of its own (a bind mount of the namespace):
       * both stat, the same inode of the same file system. */
      struct stat st, want;
      if (stat (self, &st) < 0)
        return kist_report_failed (r, layer, ns->path, errno, err, "read back %s: %s", self,
                                   strerror (errno));
      if (stat (ns->path, &want) < 0)
        return kist_report_failed (r, layer, ns->path, errno, err, "stat `%s`: %s", ns->path,
                                   strerror (errno));
      if (st.st_ino != want.st_ino || st.st_dev != want.st_dev)
        return kist_report_failed (r, layer, ns->path, EINVAL, err,
                                   "read back %s is inode %lu, not the joined `%s` (inode %lu)", self,
                                   (unsigned long) st.st_ino, ns->path, (unsigned long) want.st_ino);
      kist_report_applied (r, layer, ns->path, "joined %s; read back inode %lu", ns->path,
                           (unsigned long) st.st_ino);
      kist_report_expect (r, layer, "ino=%lu", (unsigned long) st.st_ino);
      return 0;
    }
  uint64_t ino = 0;
  int ret = self_dir >= 0 ? kist_ns_ino (self_dir, proc_ns_names[t], &ino) : -EBADF;
  if (ret < 0)
    return kist_report_failed (r, layer, NULL, -ret, err, "read back %s: %s", self,
                               strerror (-ret));
  if (ino == ctx->host_ns_ino[t])
    return kist_report_failed (r, layer, NULL, EINVAL, err,
                               "read back %s is still the host's namespace (inode %" PRIu64 ")",
                               self, ino);
  if (t == KIST_NS_PID && getpid () != 1)
    return kist_report_failed (r, layer, NULL, EINVAL, err,
                               "new pid namespace, but the init is pid %d, not 1", (int) getpid ());
  /* A new cgroup namespace is rooted where the init was when it was made:
   * its scope, or (no scope: rootless without delegation) kist's own
   * cgroup, perhaps the cgroup2 root.  Say which, as the init sees it. */
  _cleanup_free_ char *root = t == KIST_NS_CGROUP ? kist_cgroup_ns_root_note () : NULL;
  kist_report_applied (r, layer, NULL, "new; inode %" PRIu64 " (host %" PRIu64 ")%s%s", ino,
                       ctx->host_ns_ino[t], root ? "; " : "", root ? root : "");
  /* and /proc/PID/ns from outside (verify.c) */
  kist_report_expect (r, layer, "ino=%" PRIu64, ino);
  return 0;
}

static int
time_ns_create (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err)
{
  const struct kist_linux *l = ctx->spec->linux_;
  if (unshare (CLONE_NEWTIME) < 0)
    return kist_report_failed (r, "namespace.time", NULL, errno, err, "unshare(CLONE_NEWTIME): %s",
                               strerror (errno));
  char buf[128];
  size_t n = 0;
  if (l->time_monotonic.present)
    n += (size_t) snprintf (buf + n, sizeof buf - n, "monotonic %lld %u\n",
                            (long long) l->time_monotonic.secs, l->time_monotonic.nanosecs);
  if (l->time_boottime.present)
    n += (size_t) snprintf (buf + n, sizeof buf - n, "boottime %lld %u\n",
                            (long long) l->time_boottime.secs, l->time_boottime.nanosecs);
  if (n > 0)
    {
      /* One write per line: the kernel parses a single offset per write. */
      char *line = buf;
      while (*line)
        {
          char *nl = strchr (line, '\n');
          _cleanup_error_ struct kist_error *we = NULL;
          if (kist_write_file_at (AT_FDCWD, "/proc/self/timens_offsets", line,
                                  (size_t) (nl - line + 1), &we) < 0)
            return kist_report_failed (r, "namespace.time", NULL, we->errnum, err,
                                       "linux.timeOffsets: %s", we->msg);
          line = nl + 1;
        }
    }
  _cleanup_close_ int fd = open ("/proc/self/ns/time_for_children", O_RDONLY | O_CLOEXEC);
  if (fd < 0 || setns (fd, CLONE_NEWTIME) < 0)
    return kist_report_failed (r, "namespace.time", NULL, errno, err,
                               "enter the new time namespace: %s", strerror (errno));
  return 0;
}

static uint32_t
mapped_id (const struct kist_idmap *m, size_t n)
{
  for (size_t i = 0; i < n; i++)
    if (m[i].container_id == 0)
      return 0;
  return n > 0 ? m[0].container_id : 0;
}

int
kist_ns_apply (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err)
{
  const struct kist_spec *s = ctx->spec;
  int ret;

  /* 0. In a new user namespace, become its root: until now the init runs
   * with the host's ids, which the namespace does not map (files it creates
   * would fail with EOVERFLOW).  The maps were written before GO. */
  if (ns_of (s, KIST_NS_USER)->present && !ns_of (s, KIST_NS_USER)->path)
    {
      /* Root of the namespace when it is mapped; else the first mapped id
       * (a rootless sandbox maps only the caller, e.g. as 65534).  The init
       * keeps the capabilities it has in the namespace either way. */
      uid_t uid = mapped_id (s->linux_->uid_mappings, s->linux_->n_uid_mappings);
      gid_t gid = mapped_id (s->linux_->gid_mappings, s->linux_->n_gid_mappings);
      if (setresgid (gid, gid, gid) < 0 || setresuid (uid, uid, uid) < 0)
        return kist_report_failed (r, "namespace.user", NULL, errno, err,
                                   "become uid %u gid %u in the new user namespace: %s (check "
                                   "linux.uidMappings and gidMappings)",
                                   (unsigned) uid, (unsigned) gid, strerror (errno));
    }

  /* 1. Joins: the user namespace first, so that the others are joined with
   * the privileges it gives. */
  if (ns_of (s, KIST_NS_USER)->present && ns_of (s, KIST_NS_USER)->path)
    {
      if ((ret = join_one (ctx, KIST_NS_USER, r, err)) < 0)
        return ret;
      unsigned long later = 0;
      for (int t = 0; t < KIST_NS_COUNT; t++)
        if (t != KIST_NS_USER && t != KIST_NS_TIME && ns_of (s, t)->present && !ns_of (s, t)->path)
          later |= kist_ns_clone_flag (t);
      if (later && unshare ((int) later) < 0)
        return kist_report_failed (r, "namespace.user", ns_of (s, KIST_NS_USER)->path, errno, err,
                                   "unshare the new namespaces inside the joined user namespace: %s",
                                   strerror (errno));
    }
  for (int t = 0; t < KIST_NS_COUNT; t++)
    if (t != KIST_NS_USER && ns_of (s, t)->present && ns_of (s, t)->path)
      if ((ret = join_one (ctx, t, r, err)) < 0)
        return ret;

  /* 2. The time namespace, with its offsets. */
  if (ns_of (s, KIST_NS_TIME)->present && !ns_of (s, KIST_NS_TIME)->path)
    if ((ret = time_ns_create (ctx, r, err)) < 0)
      return ret;

  /* 3. Read every namespace back (one open of the directory: each path
   * through /proc/self walks it again). */
  _cleanup_close_ int self_dir = open ("/proc/self/ns", O_PATH | O_DIRECTORY | O_CLOEXEC);
  for (int t = 0; t < KIST_NS_COUNT; t++)
    if ((ret = verify_one (ctx, t, self_dir, r, err)) < 0)
      return ret;
  return 0;
}

/* Why creating a user namespace may have failed: the sysctls that restrict
 * it, with the fix.  NULL when none of them is set. */
char *
kist_ns_userns_hint (void)
{
  static const struct
  {
    const char *file, *bad, *text;
  } knobs[] = {
    { "/proc/sys/user/max_user_namespaces", "0",
      "user.max_user_namespaces is 0 here: raise it (sysctl -w user.max_user_namespaces=15000)" },
    { "/proc/sys/kernel/apparmor_restrict_unprivileged_userns", "1",
      "AppArmor restricts unprivileged user namespaces "
      "(kernel.apparmor_restrict_unprivileged_userns=1): set it to 0, or give kist an AppArmor "
      "profile with the userns permission" },
    { "/proc/sys/kernel/unprivileged_userns_clone", "0",
      "unprivileged user namespaces are disabled (kernel.unprivileged_userns_clone=0): set it to 1" },
  };
  for (size_t i = 0; i < KIST_ARRAY_SIZE (knobs); i++)
    {
      _cleanup_free_ char *v = NULL;
      if (kist_read_file_at (AT_FDCWD, knobs[i].file, 64, &v, NULL, NULL) == 0
          && strcmp (kist_rstrip (v), knobs[i].bad) == 0)
        return xstrdup (knobs[i].text);
    }
  return NULL;
}
