/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: the uid and gid maps of a new user namespace (layers "idmap.uid",
 * "idmap.gid").  Runs in the parent while the child waits: writes
 * /proc/PID/uid_map, setgroups ("deny" when kist is not root), gid_map, and
 * reads both maps back. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "caps.h"
#include "container.h"
#include "util.h"

static char *
join_entries (const struct kist_idmap *m, size_t n, const char *fmt, const char *sep)
{
  char *s = xstrdup ("");
  for (size_t i = 0; i < n; i++)
    {
      char item[96];
      snprintf (item, sizeof item, fmt, m[i].container_id, m[i].host_id, m[i].size);
      char *t = xasprintf ("%s%s%s", s, i ? sep : "", item);
      free (s);
      s = t;
    }
  return s;
}

char *
kist_idmap_format (const struct kist_idmap *m, size_t n)
{
  char *s = join_entries (m, n, "%" PRIu32 " %" PRIu32 " %" PRIu32 "\n", "");
  return s;
}

char *
kist_idmap_requested (const struct kist_idmap *m, size_t n)
{
  return join_entries (m, n, "%" PRIu32 ":%" PRIu32 ":%" PRIu32, ",");
}

int
kist_idmap_parse (const char *text, struct kist_idmap **out, size_t *n)
{
  struct kist_idmap *v = NULL;
  size_t len = 0;
  const char *p = text;
  while (p && *p)
    {
      const char *eol = strchr (p, '\n');
      size_t ll = eol ? (size_t) (eol - p) : strlen (p);
      char line[128];
      if (ll >= sizeof line)
        goto bad;
      memcpy (line, p, ll);
      line[ll] = '\0';
      p = eol ? eol + 1 : p + ll;

      unsigned long long a, b, c;
      char extra;
      int k = sscanf (line, "%llu %llu %llu %c", &a, &b, &c, &extra);
      if (k == EOF)
        continue; /* blank line */
      if (k != 3 || a > UINT32_MAX || b > UINT32_MAX || c > UINT32_MAX)
        goto bad;
      v = xrealloc (v, (len + 1) * sizeof *v);
      v[len].container_id = (uint32_t) a;
      v[len].host_id = (uint32_t) b;
      v[len].size = (uint32_t) c;
      len++;
    }
  *out = v;
  *n = len;
  return 0;
bad:
  free (v);
  return -EINVAL;
}

bool
kist_idmap_same (const struct kist_idmap *a, size_t na, const struct kist_idmap *b, size_t nb)
{
  if (na != nb)
    return false;
  for (size_t i = 0; i < na; i++)
    {
      /* Count equal entries on both sides so duplicates are matched exactly. */
      size_t ca = 0, cb = 0;
      for (size_t j = 0; j < na; j++)
        {
          if (memcmp (&a[i], &a[j], sizeof a[i]) == 0)
            ca++;
          if (memcmp (&a[i], &b[j], sizeof a[i]) == 0)
            cb++;
        }
      if (ca != cb)
        return false;
    }
  return true;
}

/* Write one map file of /proc/PID (procfd) in a single write, read it back
 * and record the layer. */
static int
write_map (struct kist_report *r, int procfd, pid_t pid, const char *layer, const char *file,
           const char *config_path, const struct kist_idmap *m, size_t n, const char *note,
           struct kist_error **err)
{
  _cleanup_free_ char *requested = kist_idmap_requested (m, n);
  if (n == 0)
    return kist_report_failed (
        r, layer, "", EINVAL, err,
        "the config asks for a new user namespace but %s is empty or "
        "missing; add e.g. {\"containerID\": 0, \"hostID\": %u, "
        "\"size\": 1}",
        config_path, strcmp (file, "uid_map") == 0 ? (unsigned) geteuid () : (unsigned) getegid ());

  _cleanup_free_ char *text = kist_idmap_format (m, n);
  _cleanup_close_ int fd = openat (procfd, file, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0)
    {
      int e = errno;
      return kist_report_failed (r, layer, requested, e, err, "open /proc/%d/%s: %s", (int) pid,
                                 file, strerror (e));
    }
  ssize_t w = write (fd, text, strlen (text));
  if (w < 0 || (size_t) w != strlen (text))
    {
      int e = w < 0 ? errno : EIO;
      const char *hint = "";
      if (e == EPERM)
        hint = geteuid () == 0 ? " (the host ids must be mapped in kist's own user namespace)"
                               : " (without privilege kist can map only its own id, once, "
                                 "with setgroups denied; run kist as root for wider maps)";
      else if (e == EINVAL)
        hint = " (entries overlap, a size is 0, a range overflows, or there are more than 340)";
      return kist_report_failed (r, layer, requested, e, err, "write /proc/%d/%s (%s): %s%s",
                                 (int) pid, file, config_path, strerror (e), hint);
    }

  _cleanup_free_ char *back = NULL;
  _cleanup_error_ struct kist_error *rerr = NULL;
  if (kist_read_file_at (procfd, file, 1 << 20, &back, NULL, &rerr) < 0)
    return kist_report_failed (r, layer, requested, rerr->errnum, err,
                               "reading /proc/%d/%s back: %s", (int) pid, file, rerr->msg);
  _cleanup_free_ struct kist_idmap *got = NULL;
  size_t ngot = 0;
  if (kist_idmap_parse (back, &got, &ngot) < 0)
    return kist_report_failed (r, layer, requested, EPROTO, err,
                               "/proc/%d/%s reads back unparsable text", (int) pid, file);
  _cleanup_free_ char *got_text
      = join_entries (got, ngot, "%" PRIu32 " %" PRIu32 " %" PRIu32, ", ");
  if (!kist_idmap_same (m, n, got, ngot))
    return kist_report_failed (r, layer, requested, EPROTO, err,
                               "/proc/%d/%s reads back `%s`, not what was written", (int) pid, file,
                               got_text);

  kist_report_applied (r, layer, requested, "written by the parent; read back %s%s", got_text,
                       note ? note : "");
  return 0;
}

int
kist_idmap_apply (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err)
{
  const struct kist_linux *l = ctx->spec->linux_;
  if (l == NULL || !l->ns[KIST_NS_USER].present)
    {
      kist_report_skip (r, "idmap.uid", "no new user namespace");
      kist_report_skip (r, "idmap.gid", "no new user namespace");
      return 0;
    }
  if (l->ns[KIST_NS_USER].path)
    {
      kist_report_skip (r, "idmap.uid", "joined by path: its maps are left as they are");
      kist_report_skip (r, "idmap.gid", "joined by path: its maps are left as they are");
      return 0;
    }

  char procpath[32];
  snprintf (procpath, sizeof procpath, "/proc/%d", (int) ctx->pid);
  _cleanup_close_ int procfd = open (procpath, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (procfd < 0)
    {
      int e = errno;
      int ret
          = kist_report_failed (r, "idmap.uid", "", e, err, "open %s: %s", procpath, strerror (e));
      if (ret < 0)
        return ret;
      return kist_report_failed (r, "idmap.gid", "", e, err, "open %s: %s", procpath, strerror (e));
    }

  int ret = write_map (r, procfd, ctx->pid, "idmap.uid", "uid_map", "linux.uidMappings",
                       l->uid_mappings, l->n_uid_mappings, NULL, err);
  if (ret < 0)
    return ret;

  /* Without privilege the kernel accepts a gid_map only after setgroups is
   * denied; as root we keep setgroups usable (process.user.additionalGids). */
  const char *note = NULL;
  if (geteuid () != 0)
    {
      _cleanup_close_ int fd = openat (procfd, "setgroups", O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
      int e = fd < 0 ? errno : -kist_write_all (fd, "deny", 4);
      if (e != 0)
        {
          return kist_report_failed (r, "idmap.gid", "", e, err,
                                     "writing `deny` to /proc/%d/setgroups: %s", (int) ctx->pid,
                                     strerror (e));
        }
      note = "; setgroups denied (kist is not root)";
    }
  return write_map (r, procfd, ctx->pid, "idmap.gid", "gid_map", "linux.gidMappings",
                    l->gid_mappings, l->n_gid_mappings, note, err);
}
