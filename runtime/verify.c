/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: the parent verifies from outside what the layers in the container
 * set (see verify.h).  Everything here runs in kist's own process, reading
 * the host's /proc of a process that waits for kist's word: the container's
 * configuration can take nothing away from it. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "caps.h"
#include "mountinfo.h"
#include "ns.h"
#include "procfs.h"
#include "resolve.h"
#include "verify.h"
#include "util.h"

/* The files of one waiting process, each read at most once. */
enum vfile
{
  VF_STATUS,
  VF_STAT,
  VF_LIMITS,
  VF_OOM,
  VF_UID_MAP,
  VF_GID_MAP,
  VF_COUNT
};
static const char *const vfile_name[VF_COUNT]
    = { "status", "stat", "limits", "oom_score_adj", "uid_map", "gid_map" };

struct kist_verify_cache
{
  pid_t pid;
  char *text[VF_COUNT];
  int errnum[VF_COUNT]; /* the read failed with this (text NULL) */
  struct kist_mountinfo mi;
  bool mi_read;
  int mi_errnum;
};

static void
cache_clear (struct kist_verify_cache *c)
{
  for (int i = 0; i < VF_COUNT; i++)
    {
      free (c->text[i]);
      c->text[i] = NULL;
      c->errnum[i] = 0;
    }
  kist_mountinfo_free (&c->mi);
  c->mi_read = false;
  c->mi_errnum = 0;
}

/* A verifier called on its own (not through kist_verify_outside) brings
 * its own cache. */
static bool
cache_begin (struct kist_ctx *ctx)
{
  if (ctx->verify_cache && ctx->verify_cache->pid == ctx->pid)
    return false;
  struct kist_verify_cache *c = xcalloc (1, sizeof *c);
  c->pid = ctx->pid;
  ctx->verify_cache = c;
  return true;
}

static void
cache_end (struct kist_ctx *ctx, struct kist_verify_cache *saved, bool owned)
{
  if (!owned)
    return;
  cache_clear (ctx->verify_cache);
  free (ctx->verify_cache);
  ctx->verify_cache = saved;
}

/* /proc/PID/FILE of the waiting process (borrowed), or NULL with *why. */
static const char *
proc_text (struct kist_ctx *ctx, enum vfile f, char **why)
{
  struct kist_verify_cache *c = ctx->verify_cache;
  if (c->text[f] == NULL && c->errnum[f] == 0)
    {
      if (c->pid <= 0)
        c->errnum[f] = ESRCH;
      else
        {
          char path[64];
          snprintf (path, sizeof path, "/proc/%d/%s", (int) c->pid, vfile_name[f]);
          _cleanup_error_ struct kist_error *e = NULL;
          if (kist_read_file_at (AT_FDCWD, path, 1u << 20, &c->text[f], NULL, &e) < 0)
            c->errnum[f] = e && e->errnum ? e->errnum : EIO;
        }
    }
  if (c->text[f] == NULL)
    {
      *why = xasprintf ("cannot read /proc/%d/%s of the waiting process from outside: %s",
                        (int) c->pid, vfile_name[f], strerror (c->errnum[f]));
      return NULL;
    }
  return c->text[f];
}

/* The value of key in "key=value key=value" (newly allocated), or NULL. */
static char *
expect_word (const char *expect, const char *key)
{
  size_t kl = strlen (key);
  for (const char *p = expect; p && *p;)
    {
      while (*p == ' ')
        p++;
      const char *end = p + strcspn (p, " ");
      if ((size_t) (end - p) > kl && strncmp (p, key, kl) == 0 && p[kl] == '=')
        return strndup (p + kl + 1, (size_t) (end - p) - kl - 1);
      p = end;
    }
  return NULL;
}

/* A status field (newly allocated) or NULL with *why. */
static char *
status_field (struct kist_ctx *ctx, const char *field, char **why)
{
  const char *status = proc_text (ctx, VF_STATUS, why);
  if (status == NULL)
    return NULL;
  char *v = kist_proc_status_field (status, field);
  if (v == NULL)
    *why = xasprintf ("/proc/%d/status has no %s line", (int) ctx->pid, field);
  return v;
}

/* Resolve entry i: applied when why is NULL (with note), else failed. */
static int
settle (struct kist_report *r, size_t i, int errnum, char *why, const char *note,
        struct kist_error **err)
{
  _cleanup_free_ char *w = why;
  if (w == NULL)
    {
      if (note)
        kist_report_verified (r, i, "%s", note);
      else
        kist_report_verified (r, i, NULL);
      return 0;
    }
  return kist_report_unverified (r, i, errnum, err, "%s", w);
}

static bool
is_pending (const struct kist_layer *l, const char *name)
{
  return l->expect != NULL && strcmp (l->name, name) == 0;
}

/* Split whitespace-separated numbers; at most max. */
static size_t
numbers (const char *s, uint64_t *out, size_t max)
{
  size_t n = 0;
  char *copy = xstrdup (s ? s : ""), *save = NULL;
  for (char *t = strtok_r (copy, " \t", &save); t && n < max; t = strtok_r (NULL, " \t", &save))
    if (kist_parse_u64 (t, &out[n]) == 0)
      n++;
  free (copy);
  return n;
}

/* What a rootless kist says of a /proc/PID link it may not follow: the
 * links of its non-dumpable child need ptrace access, and the child's mm
 * still belongs to kist's user namespace.  The read-back inside, made
 * before any filter or privilege drop, stands. */
static char *
unreadable_note (const char *link, const char *more)
{
  return xasprintf ("%s is not readable from outside (a non-dumpable child of a rootless kist): "
                    "the read-back inside stands%s",
                    link, more);
}

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
  struct stat got, want;
  bool unreadable = false; /* rootless: unreadable_note */
  if (stat (link, &got) < 0)
    {
      if (errno != EACCES && errno != EPERM)
        return xasprintf ("cannot stat %s from outside: %s", link, strerror (errno));
      unreadable = true;
    }
  _cleanup_free_ char *ino_w = expect_word (expect, "ino");
  uint64_t inside = 0;
  if (ino_w == NULL || kist_parse_u64 (ino_w, &inside) < 0)
    return xstrdup ("the entry names no inode to verify");
  if (!unreadable && (uint64_t) got.st_ino != inside)
    return xasprintf ("from outside, %s is inode %lu, not the inode %" PRIu64
                      " the container read inside",
                      link, (unsigned long) got.st_ino, inside);
  if (!unreadable && ns->path)
    {
      if (stat (ns->path, &want) < 0)
        return xasprintf ("cannot stat the joined `%s` from outside: %s", ns->path,
                          strerror (errno));
      if (got.st_ino != want.st_ino || got.st_dev != want.st_dev)
        return xasprintf ("from outside, %s is inode %lu, not the joined `%s` (inode %lu)", link,
                          (unsigned long) got.st_ino, ns->path, (unsigned long) want.st_ino);
    }
  if (!unreadable && !ns->path && got.st_ino == ctx->host_ns_ino[t]
      && got.st_dev == ctx->host_ns_dev[t])
    return xasprintf ("from outside, %s is kist's own namespace (inode %lu), not a new one", link,
                      (unsigned long) got.st_ino);
  bool pid1 = t == KIST_NS_PID && !ns->path;
  if (pid1)
    {
      /* /proc/PID/status needs no ptrace access: read even when rootless. */
      char *why = NULL;
      _cleanup_free_ char *nspid = status_field (ctx, "NSpid", &why);
      if (nspid == NULL)
        return why;
      const char *last = strrchr (kist_rstrip (nspid), '\t');
      if (last == NULL || strcmp (last + 1, "1") != 0)
        return xasprintf ("from outside, /proc/%d/status NSpid is `%s`: the process is not pid 1 "
                          "of a new pid namespace",
                          (int) ctx->pid, nspid);
    }
  if (unreadable)
    *note = unreadable_note (link, pid1 ? "; verified from outside: NSpid ends in 1" : "");
  else
    *note = xasprintf ("verified from outside (%s%s)", link, pid1 ? "; NSpid ends in 1" : "");
  return NULL;
}

int
kist_ns_verify (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err)
{
  struct kist_verify_cache *saved = ctx->verify_cache;
  bool owned = cache_begin (ctx);
  int ret = 0;
  for (int t = 0; ret == 0 && t < KIST_NS_COUNT; t++)
    {
      _cleanup_free_ char *layer = xasprintf ("namespace.%s", kist_ns_name (t));
      for (size_t i = 0; ret == 0 && i < r->n_layers; i++)
        {
          if (!is_pending (&r->layers[i], layer))
            continue;
          _cleanup_free_ char *note = NULL;
          char *why = ns_disagrees (ctx, t, r->layers[i].expect, &note);
          ret = settle (r, i, why ? EPROTO : 0, why, note, err);
        }
    }
  cache_end (ctx, saved, owned);
  return ret;
}

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
          *note = unreadable_note (link, "");
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
  _cleanup_free_ char *mnt_w = expect_word (l->expect, "mnt");
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

int
kist_rootfs_verify (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err)
{
  int ret = 0;
  for (size_t i = 0; ret == 0 && i < r->n_layers; i++)
    {
      if (!is_pending (&r->layers[i], "rootfs.pivot_root")
          && !is_pending (&r->layers[i], "rootfs.readonly"))
        continue;
      _cleanup_free_ char *note = NULL;
      char *why = root_disagrees (ctx, &r->layers[i], &note);
      ret = settle (r, i, why ? EPROTO : 0, why, note, err);
    }
  return ret;
}

/* ------------------------------------- mounts, masked_paths, readonly_paths */

/* /proc/PID/mountinfo of the waiting process, parsed once (borrowed), or
 * NULL with its errno in *errnum. */
static const struct kist_mountinfo *
mountinfo (struct kist_ctx *ctx, int *errnum)
{
  struct kist_verify_cache *c = ctx->verify_cache;
  if (!c->mi_read)
    {
      char path[64];
      snprintf (path, sizeof path, "/proc/%d/mountinfo", (int) c->pid);
      _cleanup_error_ struct kist_error *e = NULL;
      c->mi_read = true;
      if (kist_mountinfo_read (AT_FDCWD, path, &c->mi, &e) < 0)
        {
          kist_mountinfo_free (&c->mi);
          c->mi_errnum = e && e->errnum ? e->errnum : EIO;
        }
    }
  *errnum = c->mi_errnum;
  return c->mi_errnum ? NULL : &c->mi;
}

int
kist_mounts_verify (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err)
{
  struct kist_verify_cache *saved = ctx->verify_cache;
  bool owned = cache_begin (ctx);
  char what[64];
  snprintf (what, sizeof what, "/proc/%d/mountinfo", (int) ctx->pid);
  int ret = 0;
  for (size_t i = 0; ret == 0 && i < r->n_layers; i++)
    {
      const struct kist_layer *l = &r->layers[i];
      if (!is_pending (l, "mounts") && !is_pending (l, "masked_paths")
          && !is_pending (l, "readonly_paths"))
        continue;
      int errnum = 0;
      const struct kist_mountinfo *t = mountinfo (ctx, &errnum);
      _cleanup_free_ char *list = expect_word (l->expect, "mnts");
      _cleanup_free_ char *note = NULL;
      char *why = NULL;
      if (t == NULL && (errnum == EACCES || errnum == EPERM))
        note = unreadable_note (what, "");
      else if (t == NULL)
        why = xasprintf ("cannot read %s from outside: %s", what, strerror (errnum));
      else if ((why = kist_mountinfo_check (t, list, what)) == NULL)
        note = xasprintf ("verified from outside (%s)", what);
      ret = settle (r, i, why ? EPROTO : 0, why, note, err);
    }
  cache_end (ctx, saved, owned);
  return ret;
}

/* ---------------------------------------------------------- oom_score_adj */

int
kist_oom_verify (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err)
{
  struct kist_verify_cache *saved = ctx->verify_cache;
  bool owned = cache_begin (ctx);
  int ret = 0;
  for (size_t i = 0; ret == 0 && i < r->n_layers; i++)
    {
      if (!is_pending (&r->layers[i], "oom_score_adj"))
        continue;
      char *why = NULL;
      _cleanup_free_ char *want = expect_word (r->layers[i].expect, "adj");
      const char *text = proc_text (ctx, VF_OOM, &why);
      if (text)
        {
          _cleanup_free_ char *v = xstrdup (text);
          int got = 0, w = 0;
          if (want == NULL || kist_parse_int (want, &w) < 0)
            why = xstrdup ("the entry names no value to verify");
          else if (kist_parse_int (kist_rstrip (v), &got) < 0 || got != w)
            why = xasprintf ("from outside, /proc/%d/oom_score_adj reads `%s`, not %d",
                             (int) ctx->pid, v, w);
        }
      /* (the detail already says what was read back inside) */
      ret = settle (r, i, why ? EPROTO : 0, why, NULL, err);
    }
  cache_end (ctx, saved, owned);
  return ret;
}

/* ---------------------------------------------------------------- rlimit.* */

static const struct
{
  const char *name, *label;
} limit_rows[] = {
  { "RLIMIT_CPU", "Max cpu time" },          { "RLIMIT_FSIZE", "Max file size" },
  { "RLIMIT_DATA", "Max data size" },        { "RLIMIT_STACK", "Max stack size" },
  { "RLIMIT_CORE", "Max core file size" },   { "RLIMIT_RSS", "Max resident set" },
  { "RLIMIT_NPROC", "Max processes" },       { "RLIMIT_NOFILE", "Max open files" },
  { "RLIMIT_MEMLOCK", "Max locked memory" }, { "RLIMIT_AS", "Max address space" },
  { "RLIMIT_LOCKS", "Max file locks" },      { "RLIMIT_SIGPENDING", "Max pending signals" },
  { "RLIMIT_MSGQUEUE", "Max msgqueue size" }, { "RLIMIT_NICE", "Max nice priority" },
  { "RLIMIT_RTPRIO", "Max realtime priority" }, { "RLIMIT_RTTIME", "Max realtime timeout" },
};

/* "soft:hard" of the row for resource name in /proc/PID/limits text. */
static char *
limits_row (const char *text, const char *name)
{
  const char *label = NULL;
  for (size_t i = 0; i < KIST_ARRAY_SIZE (limit_rows); i++)
    if (strcmp (limit_rows[i].name, name) == 0)
      label = limit_rows[i].label;
  if (label == NULL)
    return NULL;
  size_t ll = strlen (label);
  for (const char *p = text; p && *p; p = strchr (p, '\n') ? strchr (p, '\n') + 1 : NULL)
    if (strncmp (p, label, ll) == 0 && p[ll] == ' ')
      {
        char soft[32], hard[32];
        if (sscanf (p + ll, " %31s %31s", soft, hard) == 2)
          return xasprintf ("%s:%s", soft, hard);
        return NULL;
      }
  return NULL;
}

int
kist_rlimits_verify (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err)
{
  struct kist_verify_cache *saved = ctx->verify_cache;
  bool owned = cache_begin (ctx);
  int ret = 0;
  for (size_t i = 0; ret == 0 && i < r->n_layers; i++)
    {
      const struct kist_layer *l = &r->layers[i];
      if (strncmp (l->name, "rlimit.", 7) != 0 || l->expect == NULL)
        continue;
      /* Applied inside (prlimit, getrlimit before any filter): read again. */
      char *why = NULL;
      _cleanup_free_ char *want = expect_word (l->expect, "limit");
      const char *text = proc_text (ctx, VF_LIMITS, &why);
      if (text)
        {
          _cleanup_free_ char *got = limits_row (text, l->name + 7);
          if (want == NULL)
            why = xstrdup ("the entry names no limit to verify");
          else if (got == NULL)
            why = xasprintf ("/proc/%d/limits has no row for %s", (int) ctx->pid, l->name + 7);
          else if (strcmp (got, want) != 0)
            why = xasprintf ("from outside, /proc/%d/limits says %s, not %s", (int) ctx->pid,
                             got, want);
        }
      _cleanup_free_ char *note
          = why ? NULL
                : xasprintf ("verified from outside: /proc/%d/limits says %s", (int) ctx->pid,
                             want);
      ret = settle (r, i, why ? EPROTO : 0, why, note, err);
    }
  cache_end (ctx, saved, owned);
  return ret;
}

/* ------------------------------------------------------------------- user */

/* id inside the process's user namespace -> the parent's view, by map text
 * (/proc/PID/uid_map read by the parent: the second column is in its user
 * namespace). */
static bool
map_id (const char *map, uint64_t id, uint64_t *out)
{
  struct kist_idmap *m = NULL;
  size_t n = 0;
  bool ok = false;
  if (map && kist_idmap_parse (map, &m, &n) == 0)
    for (size_t i = 0; i < n; i++)
      if (id >= m[i].container_id && id - m[i].container_id < m[i].size)
        {
          *out = m[i].host_id + (id - m[i].container_id);
          ok = true;
          break;
        }
  free (m);
  return ok;
}

static int
cmp_u64 (const void *a, const void *b)
{
  uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
  return x < y ? -1 : x > y;
}

/* Sorted, without repeats. */
static size_t
sort_unique (uint64_t *v, size_t n)
{
  qsort (v, n, sizeof *v, cmp_u64);
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    if (k == 0 || v[k - 1] != v[i])
      v[k++] = v[i];
  return k;
}

#define MAX_GROUPS 65536

/* The check of one user entry: NULL when the kernel agrees (*note set),
 * else why not. */
static char *
check_user (struct kist_ctx *ctx, const char *expect, char **note)
{
  char *why = NULL;
  _cleanup_free_ char *uid_s = expect_word (expect, "uid"), *gid_s = expect_word (expect, "gid");
  _cleanup_free_ char *groups_s = expect_word (expect, "groups");
  _cleanup_free_ char *umask_s = expect_word (expect, "umask");
  uint64_t uid, gid;
  if (uid_s == NULL || gid_s == NULL || groups_s == NULL || umask_s == NULL
      || kist_parse_u64 (uid_s, &uid) < 0 || kist_parse_u64 (gid_s, &gid) < 0)
    return xasprintf ("the entry's expectation `%s` is malformed", expect);
  const char *uid_map = proc_text (ctx, VF_UID_MAP, &why);
  if (uid_map == NULL)
    return why;
  const char *gid_map = proc_text (ctx, VF_GID_MAP, &why);
  if (gid_map == NULL)
    return why;
  uint64_t huid, hgid;
  if (!map_id (uid_map, uid, &huid))
    return xasprintf ("uid %" PRIu64 " is not mapped in /proc/%d/uid_map", uid, (int) ctx->pid);
  if (!map_id (gid_map, gid, &hgid))
    return xasprintf ("gid %" PRIu64 " is not mapped in /proc/%d/gid_map", gid, (int) ctx->pid);

  _cleanup_free_ char *uid_line = status_field (ctx, "Uid", &why);
  if (uid_line == NULL)
    return why;
  _cleanup_free_ char *gid_line = status_field (ctx, "Gid", &why);
  if (gid_line == NULL)
    return why;
  uint64_t v[4];
  if (numbers (uid_line, v, 4) != 4 || v[0] != huid || v[1] != huid || v[2] != huid
      || v[3] != huid)
    return xasprintf ("from outside, /proc/%d/status says Uid: %s (real, effective, saved, fs), "
                      "not %" PRIu64 " (uid %" PRIu64 " of the container)",
                      (int) ctx->pid, uid_line, huid, uid);
  if (numbers (gid_line, v, 4) != 4 || v[0] != hgid || v[1] != hgid || v[2] != hgid
      || v[3] != hgid)
    return xasprintf ("from outside, /proc/%d/status says Gid: %s (real, effective, saved, fs), "
                      "not %" PRIu64 " (gid %" PRIu64 " of the container)",
                      (int) ctx->pid, gid_line, hgid, gid);

  /* Groups: the requested ones mapped, or (setgroups denied) exactly the
   * groups kist had, which are the parent's own. */
  _cleanup_free_ char *groups_line = status_field (ctx, "Groups", &why);
  if (groups_line == NULL)
    return why;
  kist_rstrip (groups_line); /* "10 20 " */
  _cleanup_free_ uint64_t *got = xcalloc (MAX_GROUPS, sizeof (uint64_t));
  _cleanup_free_ uint64_t *want = xcalloc (MAX_GROUPS, sizeof (uint64_t));
  size_t ngot = sort_unique (got, numbers (groups_line, got, MAX_GROUPS)), nwant = 0;
  if (strcmp (groups_s, "unchanged") == 0)
    {
      _cleanup_free_ gid_t *mine = xcalloc (MAX_GROUPS, sizeof (gid_t));
      int n = getgroups (MAX_GROUPS, mine);
      if (n < 0)
        return xasprintf ("getgroups of kist itself: %s", strerror (errno));
      for (int i = 0; i < n; i++)
        want[nwant++] = mine[i];
    }
  else if (strcmp (groups_s, "none") != 0)
    {
      char *save = NULL;
      _cleanup_free_ char *copy = xstrdup (groups_s);
      for (char *t = strtok_r (copy, ",", &save); t && nwant < MAX_GROUPS;
           t = strtok_r (NULL, ",", &save))
        {
          uint64_t g, hg;
          if (kist_parse_u64 (t, &g) < 0)
            return xasprintf ("the entry's expectation `%s` is malformed", expect);
          if (!map_id (gid_map, g, &hg))
            return xasprintf ("additional gid %" PRIu64 " is not mapped in /proc/%d/gid_map", g,
                              (int) ctx->pid);
          want[nwant++] = hg;
        }
    }
  nwant = sort_unique (want, nwant);
  if (ngot != nwant || memcmp (got, want, ngot * sizeof (uint64_t)) != 0)
    return xasprintf ("from outside, /proc/%d/status says Groups: %s, expected %s%s",
                      (int) ctx->pid, groups_line[0] ? groups_line : "(none)", groups_s,
                      strcmp (groups_s, "unchanged") == 0 ? " (kist's own groups)"
                                                          : " (mapped through gid_map)");

  _cleanup_free_ char *umask_line = status_field (ctx, "Umask", &why);
  if (umask_line == NULL)
    return why;
  char *end = NULL, *end2 = NULL;
  unsigned long got_mask = strtoul (umask_line, &end, 8), want_mask = strtoul (umask_s, &end2, 8);
  if (end == umask_line || *end != '\0' || *end2 != '\0' || got_mask != want_mask)
    return xasprintf ("from outside, /proc/%d/status says Umask: %s, not %s", (int) ctx->pid,
                      umask_line, umask_s);
  *note = xasprintf ("verified from outside: /proc/%d/status Uid %" PRIu64 ", Gid %" PRIu64
                     ", Groups %s, Umask %s",
                     (int) ctx->pid, huid, hgid, groups_line[0] ? groups_line : "none",
                     umask_line);
  return NULL;
}

int
kist_user_verify (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err)
{
  struct kist_verify_cache *saved = ctx->verify_cache;
  bool owned = cache_begin (ctx);
  int ret = 0;
  for (size_t i = 0; ret == 0 && i < r->n_layers; i++)
    {
      if (!is_pending (&r->layers[i], "user"))
        continue;
      _cleanup_free_ char *note = NULL;
      char *why = check_user (ctx, r->layers[i].expect, &note);
      ret = settle (r, i, EPROTO, why, note, err);
    }
  cache_end (ctx, saved, owned);
  return ret;
}

/* ------------------------------------------------------------ capabilities */

int
kist_caps_verify (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err)
{
  static const char *const key[] = { "bnd", "eff", "prm", "inh", "amb" };
  static const char *const field[] = { "CapBnd", "CapEff", "CapPrm", "CapInh", "CapAmb" };
  struct kist_verify_cache *saved = ctx->verify_cache;
  bool owned = cache_begin (ctx);
  int ret = 0;
  for (size_t i = 0; ret == 0 && i < r->n_layers; i++)
    {
      if (!is_pending (&r->layers[i], "capabilities"))
        continue;
      char *why = NULL;
      _cleanup_free_ char *note = xasprintf ("verified from outside: /proc/%d/status",
                                             (int) ctx->pid);
      for (size_t s = 0; why == NULL && s < KIST_ARRAY_SIZE (key); s++)
        {
          _cleanup_free_ char *want = expect_word (r->layers[i].expect, key[s]);
          _cleanup_free_ char *got = status_field (ctx, field[s], &why);
          if (got == NULL)
            break;
          char *e1 = NULL, *e2 = NULL;
          unsigned long long g = strtoull (got, &e1, 16);
          unsigned long long w = want ? strtoull (want, &e2, 16) : 0;
          if (want == NULL || *e2 != '\0')
            why = xasprintf ("the entry's expectation `%s` is malformed", r->layers[i].expect);
          else if (e1 == got || *e1 != '\0' || g != w)
            why = xasprintf ("from outside, /proc/%d/status says %s: %s, expected %016llx",
                             (int) ctx->pid, field[s], got, w);
          else
            {
              char *n = xasprintf ("%s %s %s", note, field[s], got);
              free (note);
              note = n;
            }
        }
      ret = settle (r, i, EPROTO, why, note, err);
    }
  cache_end (ctx, saved, owned);
  return ret;
}

/* ------------------------------------------------------- no_new_privileges */

int
kist_nnp_verify (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err)
{
  struct kist_verify_cache *saved = ctx->verify_cache;
  bool owned = cache_begin (ctx);
  int ret = 0;
  for (size_t i = 0; ret == 0 && i < r->n_layers; i++)
    {
      if (!is_pending (&r->layers[i], "no_new_privileges"))
        continue;
      char *why = NULL;
      _cleanup_free_ char *want = expect_word (r->layers[i].expect, "nnp");
      _cleanup_free_ char *got = status_field (ctx, "NoNewPrivs", &why);
      if (got && (want == NULL || strcmp (got, want) != 0))
        why = xasprintf ("from outside, /proc/%d/status says NoNewPrivs: %s, not %s",
                         (int) ctx->pid, got, want ? want : "?");
      _cleanup_free_ char *note
          = xasprintf ("verified from outside: /proc/%d/status NoNewPrivs %s", (int) ctx->pid,
                       got ? got : "?");
      ret = settle (r, i, EPROTO, why, note, err);
    }
  cache_end (ctx, saved, owned);
  return ret;
}

/* ----------------------------------------------------------------- seccomp */

int
kist_seccomp_verify (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err)
{
  struct kist_verify_cache *saved = ctx->verify_cache;
  bool owned = cache_begin (ctx);
  int ret = 0;
  for (size_t i = 0; ret == 0 && i < r->n_layers; i++)
    {
      if (!is_pending (&r->layers[i], "seccomp"))
        continue;
      char *why = NULL;
      _cleanup_free_ char *mode_w = expect_word (r->layers[i].expect, "mode");
      _cleanup_free_ char *filters_w = expect_word (r->layers[i].expect, "filters");
      _cleanup_free_ char *mode = status_field (ctx, "Seccomp", &why);
      _cleanup_free_ char *filters = mode ? status_field (ctx, "Seccomp_filters", &why) : NULL;
      int nf = -1, wf = -1;
      if (mode && filters)
        {
          if (mode_w == NULL || strcmp (mode, mode_w) != 0)
            why = xasprintf ("from outside, /proc/%d/status says Seccomp: %s, not %s",
                             (int) ctx->pid, mode, mode_w ? mode_w : "?");
          else if (kist_parse_int (filters, &nf) < 0
                   || (filters_w ? kist_parse_int (filters_w, &wf) < 0 || nf != wf : nf < 1))
            why = xasprintf ("from outside, /proc/%d/status says Seccomp_filters: %s, %s %s",
                             (int) ctx->pid, filters, filters_w ? "not" : "not at least",
                             filters_w ? filters_w : "1");
        }
      _cleanup_free_ char *note = xasprintf (
          "verified from outside: /proc/%d/status Seccomp %s, Seccomp_filters %s%s",
          (int) ctx->pid, mode ? mode : "?", filters ? filters : "?",
          filters_w ? "" : " (the count before loading was not known)");
      ret = settle (r, i, EPROTO, why, note, err);
    }
  cache_end (ctx, saved, owned);
  return ret;
}

/* ----------------------------------------------------------------- session */

/* Field n (1-based, as in proc(5)) of /proc/PID/stat text; the comm field
 * (2) may hold anything, so counting starts after its last ')'. */
static char *
stat_field (const char *stat, int n)
{
  const char *p = strrchr (stat, ')');
  if (p == NULL || n < 3)
    return NULL;
  p++;
  for (int k = 3; *p; k++)
    {
      while (*p == ' ')
        p++;
      const char *end = p + strcspn (p, " \n");
      if (k == n)
        return strndup (p, (size_t) (end - p));
      p = end;
    }
  return NULL;
}

int
kist_session_verify (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err)
{
  struct kist_verify_cache *saved = ctx->verify_cache;
  bool owned = cache_begin (ctx);
  int ret = 0;
  for (size_t i = 0; ret == 0 && i < r->n_layers; i++)
    {
      if (!is_pending (&r->layers[i], "session"))
        continue;
      char *why = NULL;
      _cleanup_free_ char *tty_w = expect_word (r->layers[i].expect, "tty_nr");
      _cleanup_free_ char *nspid = status_field (ctx, "NSpid", &why);
      _cleanup_free_ char *nssid = nspid ? status_field (ctx, "NSsid", &why) : NULL;
      const char *stat = nssid ? proc_text (ctx, VF_STAT, &why) : NULL;
      _cleanup_free_ char *tty = stat ? stat_field (stat, 7) : NULL;
      uint64_t p[1] = { 0 }, s[1] = { 0 };
      if (stat && tty == NULL)
        why = xasprintf ("/proc/%d/stat has no tty_nr field", (int) ctx->pid);
      else if (stat && (numbers (nspid, p, 1) != 1 || numbers (nssid, s, 1) != 1 || p[0] != s[0]))
        why = xasprintf ("from outside, /proc/%d/status says NSsid: %s, NSpid: %s: not the "
                         "leader of its own session",
                         (int) ctx->pid, nssid, nspid);
      else if (stat && (tty_w == NULL || strcmp (tty, tty_w) != 0))
        why = xasprintf ("from outside, /proc/%d/stat says tty_nr %s, expected %s%s",
                         (int) ctx->pid, tty, tty_w ? tty_w : "?",
                         tty_w && strcmp (tty_w, "0") == 0 ? " (no controlling terminal)"
                                                           : " (the container's pty)");
      _cleanup_free_ char *note
          = why ? NULL
                : xasprintf ("verified from outside: /proc/%d/status NSsid = NSpid %" PRIu64
                             ", /proc/%d/stat tty_nr %s",
                             (int) ctx->pid, p[0], (int) ctx->pid, tty);
      ret = settle (r, i, EPROTO, why, note, err);
    }
  cache_end (ctx, saved, owned);
  return ret;
}

/* fds: nothing above fd `upto` is open without close-on-exec (fds 0-2 and
 * --preserve-fds are passed on; kist's own close at the execve).  Read from
 * /proc/PID/fd and fdinfo: the container's filter cannot hide them. */
int
kist_fds_verify (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err)
{
  int ret = 0;
  for (size_t i = 0; ret == 0 && i < r->n_layers; i++)
    {
      if (!is_pending (&r->layers[i], "fds"))
        continue;
      _cleanup_free_ char *upto_w = expect_word (r->layers[i].expect, "upto");
      long upto = upto_w ? strtol (upto_w, NULL, 10) : 2;
      _cleanup_free_ char *inside_w = expect_word (r->layers[i].expect, "inside");
      bool inside = inside_w && strcmp (inside_w, "ok") == 0;
      char path[64];
      snprintf (path, sizeof path, "/proc/%d/fd", (int) ctx->pid);
      char *why = NULL;
      size_t n_open = 0, n_cloexec = 0;
      int dfd = open (path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      DIR *d = dfd >= 0 ? fdopendir (dfd) : NULL;
      if (d == NULL)
        {
          int e = errno;
          if (dfd >= 0)
            close (dfd);
          if (e == EACCES)
            {
              /* A rootless kist may not list the fds of its non-dumpable
               * child (its mm still belongs to kist's user namespace): the
               * child's own read-back stands, or, where its filter or /proc
               * denied that too, the close_range that succeeded (it closes
               * the whole range or fails). */
              _cleanup_free_ char *n
                  = xasprintf ("%s is not readable from outside (a non-dumpable child of a "
                               "rootless kist): %s",
                               path,
                               inside ? "the read-back inside stands"
                                      : "not read back inside either (the container's filter "
                                        "or /proc denies it); close_range succeeded");
              ret = settle (r, i, EPROTO, NULL, n, err);
              continue;
            }
          why = xasprintf ("cannot list %s from outside: %s", path, strerror (e));
        }
      for (struct dirent *de; d && why == NULL && (de = readdir (d));)
        {
          if (de->d_name[0] == '.')
            continue;
          long fd = strtol (de->d_name, NULL, 10);
          n_open++;
          if (fd <= upto)
            continue;
          char info[64];
          snprintf (info, sizeof info, "/proc/%d/fdinfo/%ld", (int) ctx->pid, fd);
          _cleanup_free_ char *text = NULL;
          _cleanup_error_ struct kist_error *e = NULL;
          if (kist_read_file_at (AT_FDCWD, info, 4096, &text, NULL, &e) < 0)
            {
              why = xasprintf ("cannot read %s from outside: %s", info, e->msg);
              break;
            }
          const char *fl = strstr (text, "flags:");
          unsigned long flags = fl ? strtoul (fl + 6, NULL, 8) : 0;
          if (fl == NULL || !(flags & O_CLOEXEC))
            {
              char target[256] = "";
              char link[96];
              snprintf (link, sizeof link, "%s/%ld", path, fd);
              ssize_t tl = readlink (link, target, sizeof target - 1);
              target[tl > 0 ? tl : 0] = '\0';
              why = xasprintf ("from outside, fd %ld (%s) is open and not close-on-exec: it would "
                               "reach the container's program",
                               fd, target);
            }
          else
            n_cloexec++;
        }
      if (d)
        closedir (d);
      _cleanup_free_ char *note
          = why ? NULL
                : xasprintf ("verified from outside: /proc/%d/fd holds %zu fds, none above %ld "
                             "without close-on-exec (%zu close at the execve)",
                             (int) ctx->pid, n_open, upto, n_cloexec);
      ret = settle (r, i, EPROTO, why, note, err);
    }
  return ret;
}

/* ------------------------------------------------------------------- entry */

/* Each verifier the registry names (layer.c, its entries' verify column),
 * in table order, until one fails. */
struct verify_run
{
  struct kist_ctx *ctx;
  struct kist_report *r;
  struct kist_error **err;
  int ret;
};

static void
verify_one (kist_layer_fn verify, const char *name, void *arg)
{
  (void) name;
  struct verify_run *v = arg;
  if (v->ret == 0)
    v->ret = verify (v->ctx, v->r, v->err);
}

void
kist_verify_received (struct kist_layer *l)
{
  if (l->expect == NULL && l->applied && l->requested && strncmp (l->name, "rlimit.", 7) == 0
      && strchr (l->requested, ' ') == NULL)
    l->expect = xasprintf ("limit=%s", l->requested);
  kist_layer_make_pending (l);
}

void
kist_verify_abandon (struct kist_report *r, const char *why)
{
  if (r == NULL)
    return;
  for (size_t i = 0; i < r->n_layers; i++)
    if (r->layers[i].expect != NULL)
      {
        _cleanup_error_ struct kist_error *ignored = NULL;
        kist_report_unverified (r, i, 0, &ignored, "%s", why);
      }
}

int
kist_verify_outside (struct kist_ctx *ctx, pid_t pid, struct kist_report *r,
                     struct kist_error **err)
{
  if (r == NULL)
    return 0;
  pid_t saved_pid = ctx->pid;
  ctx->pid = pid;
  struct kist_verify_cache *saved_cache = ctx->verify_cache;
  bool owned = cache_begin (ctx);
  struct verify_run run = { ctx, r, err, 0 };
  kist_layer_verifiers (verify_one, &run);
  int ret = run.ret;
  for (size_t i = 0; ret == 0 && i < r->n_layers; i++)
    if (r->layers[i].expect != NULL)
      ret = kist_report_unverified (r, i, ENOSYS, err,
                                    "kist cannot verify this entry from outside (no verifier "
                                    "for `%s`)",
                                    r->layers[i].name);
  if (ret < 0)
    kist_verify_abandon (r, "not verified from outside: the verification of an earlier entry "
                            "failed");
  cache_end (ctx, saved_cache, owned);
  ctx->pid = saved_pid;
  return ret;
}
