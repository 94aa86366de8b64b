/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: linux.sysctl (layer "sysctl").  Only keys that belong to a namespace
 * the container has its own copy of are allowed (like runc).  Each key is
 * written to the container's /proc/sys, resolved inside the root without
 * following symlinks, and read back. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "caps.h"
#include "container.h"
#include "resolve.h"
#include "util.h"

/* Largest value we read back (/proc/sys files are small). */
#define SYSCTL_MAX_VALUE 65536

int
kist_sysctl_key_path (const char *key, char **path, struct kist_error **err)
{
  if (key == NULL || *key == '\0')
    return kist_error_make (err, EINVAL, "linux.sysctl: empty key");
  for (const char *p = key; *p; p++)
    {
      unsigned char c = (unsigned char) *p;
      if (c == '/' || c <= ' ' || c == 0x7f)
        return kist_error_make (err, EINVAL,
                                "linux.sysctl: key `%s` contains '%s'; write keys with dots "
                                "(net.ipv4.ip_forward)",
                                key, c == '/' ? "/" : "a space or control character");
      if (c == '.' && (p == key || p[1] == '\0' || p[1] == '.'))
        return kist_error_make (err, EINVAL,
                                "linux.sysctl: key `%s` has an empty part (leading, trailing or "
                                "doubled dot)",
                                key);
    }
  char *s = xasprintf ("/proc/sys/%s", key);
  for (char *p = s + strlen ("/proc/sys/"); *p; p++)
    if (*p == '.')
      *p = '/';
  *path = s;
  return 0;
}

int
kist_sysctl_key_namespace (const char *key)
{
  static const char *const ipc_keys[]
      = { "kernel.msgmax", "kernel.msgmnb", "kernel.msgmni",          "kernel.sem",
          "kernel.shmall", "kernel.shmmax", "kernel.shm_rmid_forced", "kernel.shmmni" };
  if (key == NULL)
    return -1;
  for (size_t i = 0; i < KIST_ARRAY_SIZE (ipc_keys); i++)
    if (strcmp (key, ipc_keys[i]) == 0)
      return KIST_NS_IPC;
  if (strncmp (key, "fs.mqueue.", strlen ("fs.mqueue.")) == 0)
    return KIST_NS_IPC;
  if (strncmp (key, "net.", strlen ("net.")) == 0)
    return KIST_NS_NET;
  if (strcmp (key, "kernel.hostname") == 0 || strcmp (key, "kernel.domainname") == 0)
    return KIST_NS_UTS;
  return -1;
}

/* Next whitespace-separated token of *s: returns its start and length, or NULL. */
static const char *
next_token (const char **s, size_t *len)
{
  const char *p = *s;
  while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
    p++;
  if (*p == '\0')
    {
      *s = p;
      return NULL;
    }
  const char *start = p;
  while (*p && *p != ' ' && *p != '\t' && *p != '\n' && *p != '\r')
    p++;
  *len = (size_t) (p - start);
  *s = p;
  return start;
}

static bool
token_integer (const char *t, size_t len, long long *out)
{
  char buf[32];
  if (len == 0 || len >= sizeof buf)
    return false;
  memcpy (buf, t, len);
  buf[len] = '\0';
  char *end = NULL;
  errno = 0;
  long long v = strtoll (buf, &end, 10);
  if (errno || end == buf || *end != '\0')
    return false;
  *out = v;
  return true;
}

bool
kist_sysctl_value_equal (const char *written, const char *readback)
{
  const char *a = written ? written : "", *b = readback ? readback : "";
  for (;;)
    {
      size_t la = 0, lb = 0;
      const char *ta = next_token (&a, &la), *tb = next_token (&b, &lb);
      if (ta == NULL || tb == NULL)
        return ta == NULL && tb == NULL;
      if (la == lb && memcmp (ta, tb, la) == 0)
        continue;
      long long va, vb;
      if (token_integer (ta, la, &va) && token_integer (tb, lb, &vb) && va == vb)
        continue;
      return false;
    }
}

/* Whitespace runs -> one space, trimmed (for the report). */
static char *
normalise (const char *s)
{
  char *out = xmalloc (strlen (s) + 1), *o = out;
  size_t len;
  const char *t;
  while ((t = next_token (&s, &len)) != NULL)
    {
      if (o != out)
        *o++ = ' ';
      memcpy (o, t, len);
      o += len;
    }
  *o = '\0';
  return out;
}

/* Is the namespace we are in now the host's (as captured by the parent)?
 * 1 yes, 0 no, -1 unknown. */
static int
ns_is_host (const struct kist_ctx *ctx, int procfd, enum kist_ns_type t)
{
  if (ctx->host_ns_ino[t] == 0 || procfd < 0)
    return -1;
  char name[32];
  snprintf (name, sizeof name, "self/ns/%s", kist_ns_name (t));
  struct stat st;
  if (fstatat (procfd, name, &st, 0) < 0)
    return -1;
  return st.st_dev == ctx->host_ns_dev[t] && st.st_ino == ctx->host_ns_ino[t];
}

/* "not procfs" error: errno EXDEV for the report, without its confusing
 * strerror ("Invalid cross-device link") in the message. */
static int
not_procfs (struct kist_error **err, const char *path)
{
  bool created = err != NULL && *err == NULL;
  kist_error_make (err, 0,
                   "`%s` in the container root is not on procfs; mount proc at /proc "
                   "(config.mounts)",
                   path);
  if (created && *err)
    (*err)->errnum = EXDEV;
  return -EXDEV;
}

/* openat2 inside the root, no symlinks at all, and the file must be on procfs. */
static int
open_proc (const struct kist_ctx *ctx, const char *path, int flags, struct kist_error **err)
{
  struct open_how how = { .flags = (uint64_t) (flags | O_CLOEXEC), .mode = 0 };
  int dirfd = ctx->rootfs_fd;
  if (dirfd >= 0)
    how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  else
    {
      dirfd = AT_FDCWD;
      how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    }
  _cleanup_close_ int fd = (int) syscall (SYS_openat2, dirfd, path, &how, sizeof how);
  if (fd < 0)
    {
      int e = errno;
      if (e == ENOENT)
        return kist_error_make (err, e,
                                "open `%s` in the container root (no such sysctl on this "
                                "kernel, or no proc mounted at /proc)",
                                path);
      if (e == ELOOP)
        return kist_error_make (err, e, "open `%s` in the container root: a symlink is in the way",
                                path);
      return kist_error_make (err, e, "open `%s` in the container root", path);
    }
  struct statfs sfs;
  if (fstatfs (fd, &sfs) < 0)
    return kist_error_make (err, errno, "fstatfs `%s`", path);
  if (sfs.f_type != PROC_SUPER_MAGIC)
    return not_procfs (err, path);
  return steal_fd (&fd);
}

/* One key: check, write, read back.  Returns 0 with *readback, or -errno
 * with *why. */
static int
apply_one (const struct kist_ctx *ctx, int procfd, const struct kist_sysctl *s, char **readback,
           char **why)
{
  _cleanup_error_ struct kist_error *e = NULL;
  _cleanup_free_ char *path = NULL;
  if (kist_sysctl_key_path (s->key, &path, &e) < 0)
    {
      *why = xstrdup (e->msg);
      return -EINVAL;
    }

  int ns = kist_sysctl_key_namespace (s->key);
  if (ns < 0)
    {
      *why = xasprintf ("%s is not a namespaced sysctl: writing it would change the host; only "
                        "kernel.msg*, kernel.sem, kernel.shm*, fs.mqueue.* (IPC), net.* (network) "
                        "and kernel.hostname/domainname (UTS) are allowed",
                        s->key);
      return -EPERM;
    }
  const struct kist_linux *l = ctx->spec->linux_;
  if (l == NULL || !l->ns[ns].present)
    {
      *why = xasprintf ("%s needs a new %s namespace: add {\"type\": \"%s\"} to linux.namespaces",
                        s->key,
                        ns == KIST_NS_NET   ? "network"
                        : ns == KIST_NS_IPC ? "IPC"
                                            : "UTS",
                        kist_ns_name (ns));
      return -EPERM;
    }
  if (ns_is_host (ctx, procfd, ns) == 1)
    {
      *why = xasprintf ("%s: the %s namespace joined by linux.namespaces path is the host's",
                        s->key, kist_ns_name (ns));
      return -EPERM;
    }

  _cleanup_close_ int wfd = open_proc (ctx, path, O_WRONLY, &e);
  if (wfd < 0)
    {
      *why = xasprintf ("%s: %s", s->key, e->msg);
      return e->errnum > 0 ? -e->errnum : -EIO;
    }
  int ret = kist_write_all (wfd, s->value, strlen (s->value));
  if (ret < 0)
    {
      *why = xasprintf ("%s=%s: the kernel refused the value (write %s): %s", s->key, s->value,
                        path, strerror (-ret));
      return ret;
    }

  _cleanup_close_ int rfd = open_proc (ctx, path, O_RDONLY, &e);
  _cleanup_free_ char *got = NULL;
  if (rfd < 0 || kist_read_fd (rfd, SYSCTL_MAX_VALUE, &got, NULL, &e) < 0)
    {
      *why = xasprintf ("%s: reading back %s: %s", s->key, path, e->msg);
      return e->errnum > 0 ? -e->errnum : -EIO;
    }
  if (!kist_sysctl_value_equal (s->value, got))
    {
      _cleanup_free_ char *n = normalise (got);
      *why = xasprintf ("%s: wrote `%s` but %s reads back `%s`", s->key, s->value, path, n);
      return -EPROTO;
    }
  *readback = normalise (got);
  return 0;
}

static void
append (char **s, const char *sep, const char *item)
{
  char *n = *s ? xasprintf ("%s%s%s", *s, sep, item) : xstrdup (item);
  free (*s);
  *s = n;
}

int
kist_sysctl_apply (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err)
{
  const struct kist_linux *l = ctx->spec->linux_;
  if (l == NULL || l->n_sysctl == 0)
    {
      kist_report_skip (r, "sysctl", "none requested");
      return 0;
    }

  _cleanup_free_ char *requested = NULL;
  for (size_t i = 0; i < l->n_sysctl; i++)
    {
      _cleanup_free_ char *kv = xasprintf ("%s=%s", l->sysctl[i].key, l->sysctl[i].value);
      append (&requested, ",", kv);
    }

  /* The container's /proc, for the namespace identity checks (optional). */
  _cleanup_close_ int procfd = -1;
  {
    _cleanup_error_ struct kist_error *ignored = NULL;
    procfd = open_proc (ctx, "/proc", O_PATH | O_DIRECTORY, &ignored);
  }

  bool may_degrade = kist_report_may_degrade (r, "sysctl");
  _cleanup_free_ char *detail = NULL, *problems = NULL;
  int first_errno = 0;
  for (size_t i = 0; i < l->n_sysctl; i++)
    {
      _cleanup_free_ char *got = NULL, *why = NULL;
      int ret = apply_one (ctx, procfd, &l->sysctl[i], &got, &why);
      if (ret < 0)
        {
          if (first_errno == 0)
            first_errno = -ret;
          append (&problems, "; ", why);
          if (!may_degrade)
            break;
          continue;
        }
      _cleanup_free_ char *kv = xasprintf ("%s=%s", l->sysctl[i].key, got);
      append (&detail, ", ", kv);
    }

  if (problems)
    return kist_report_failed (r, "sysctl", requested, first_errno, err, "%s%s%s%s", problems,
                               detail ? " (applied: " : "", detail ? detail : "",
                               detail ? ")" : "");
  kist_report_applied (r, "sysctl", requested, "read back %s", detail);
  return 0;
}
