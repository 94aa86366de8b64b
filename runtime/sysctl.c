/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: linux.sysctl (layer "sysctl").  Only keys that belong to a namespace
 * the container has its own copy of are allowed (like runc).  Each key is
 * written to the container's /proc/sys, resolved inside the root without
 * following symlinks, and read back. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "caps.h"
#include "layer.h"
#include "procfs.h"
#include "util.h"

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

/* One key: check, write, read back.  Returns 0 with *readback, or -errno
 * with *why. */
static int
apply_one (const struct kist_ctx *ctx, const struct kist_sysctl *s, char **readback, char **why)
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
  if (kist_proc_ns_is_host (ctx, ns) == 1)
    {
      *why = xasprintf ("%s: the %s namespace joined by linux.namespaces path is the host's",
                        s->key, kist_ns_name (ns));
      return -EPERM;
    }

  _cleanup_close_ int wfd = kist_proc_open (ctx, path, O_WRONLY | O_NOFOLLOW, &e);
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

  _cleanup_free_ char *got = NULL;
  if (kist_proc_read (ctx, path, O_NOFOLLOW, &got, &e) < 0)
    {
      *why = xasprintf ("%s: reading back: %s", s->key, e->msg);
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

  bool may_degrade = kist_report_may_degrade (r, "sysctl");
  _cleanup_free_ char *detail = NULL, *problems = NULL;
  int first_errno = 0;
  for (size_t i = 0; i < l->n_sysctl; i++)
    {
      _cleanup_free_ char *got = NULL, *why = NULL;
      int ret = apply_one (ctx, &l->sysctl[i], &got, &why);
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
