/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: verified from outside, the process's own attributes:
 * oom_score_adj, rlimits, user, capabilities, no_new_privileges, seccomp,
 * session and the fds it keeps, from /proc/PID/status, stat, limits,
 * oom_score_adj, uid_map, gid_map, fd and fdinfo. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "caps.h"
#include "procfs.h"
#include "verify_int.h"
#include "util.h"

/* Status fields f1 and f2 (newly allocated, into *v1 and *v2), or false
 * with *why (f2 is not read when f1 fails). */
static bool
status_fields (struct kist_ctx *ctx, const char *f1, char **v1, const char *f2, char **v2,
               char **why)
{
  *v1 = vf_status_field (ctx, f1, why);
  *v2 = *v1 ? vf_status_field (ctx, f2, why) : NULL;
  return *v2 != NULL;
}

/* ---------------------------------------------------------- oom_score_adj */

/* (No note: the detail already says what was read back inside.) */
static char *
oom_check (struct kist_ctx *ctx, const struct kist_layer *l, char **note)
{
  (void) note;
  char *why = NULL;
  _cleanup_free_ char *want = vf_expect_word (l->expect, "adj");
  const char *text = vf_proc_text (ctx, VF_OOM, &why);
  if (text == NULL)
    return why;
  _cleanup_free_ char *v = xstrdup (text);
  int got = 0, w = 0;
  if (want == NULL || kist_parse_int (want, &w) < 0)
    return xstrdup ("the entry names no value to verify");
  if (kist_parse_int (kist_rstrip (v), &got) < 0 || got != w)
    return xasprintf ("from outside, /proc/%d/oom_score_adj reads `%s`, not %d", (int) ctx->pid,
                      v, w);
  return NULL;
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

/* Applied inside (prlimit, getrlimit before any filter): read again. */
static char *
rlimit_check (struct kist_ctx *ctx, const struct kist_layer *l, char **note)
{
  char *why = NULL;
  _cleanup_free_ char *want = vf_expect_word (l->expect, "limit");
  const char *text = vf_proc_text (ctx, VF_LIMITS, &why);
  if (text == NULL)
    return why;
  _cleanup_free_ char *got = limits_row (text, l->name + 7);
  if (want == NULL)
    return xstrdup ("the entry names no limit to verify");
  if (got == NULL)
    return xasprintf ("/proc/%d/limits has no row for %s", (int) ctx->pid, l->name + 7);
  if (strcmp (got, want) != 0)
    return xasprintf ("from outside, /proc/%d/limits says %s, not %s", (int) ctx->pid, got,
                      want);
  *note = xasprintf ("verified from outside: /proc/%d/limits says %s", (int) ctx->pid, want);
  return NULL;
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
user_check (struct kist_ctx *ctx, const struct kist_layer *l, char **note)
{
  const char *expect = l->expect;
  char *why = NULL;
  _cleanup_free_ char *uid_s = vf_expect_word (expect, "uid"), *gid_s = vf_expect_word (expect, "gid");
  _cleanup_free_ char *groups_s = vf_expect_word (expect, "groups");
  _cleanup_free_ char *umask_s = vf_expect_word (expect, "umask");
  uint64_t uid, gid;
  if (uid_s == NULL || gid_s == NULL || groups_s == NULL || umask_s == NULL
      || kist_parse_u64 (uid_s, &uid) < 0 || kist_parse_u64 (gid_s, &gid) < 0)
    return xasprintf ("the entry's expectation `%s` is malformed", expect);
  const char *uid_map = vf_proc_text (ctx, VF_UID_MAP, &why);
  if (uid_map == NULL)
    return why;
  const char *gid_map = vf_proc_text (ctx, VF_GID_MAP, &why);
  if (gid_map == NULL)
    return why;
  uint64_t huid, hgid;
  if (!map_id (uid_map, uid, &huid))
    return xasprintf ("uid %" PRIu64 " is not mapped in /proc/%d/uid_map", uid, (int) ctx->pid);
  if (!map_id (gid_map, gid, &hgid))
    return xasprintf ("gid %" PRIu64 " is not mapped in /proc/%d/gid_map", gid, (int) ctx->pid);

  _cleanup_free_ char *uid_line = NULL, *gid_line = NULL;
  if (!status_fields (ctx, "Uid", &uid_line, "Gid", &gid_line, &why))
    return why;
  uint64_t v[4];
  if (vf_numbers (uid_line, v, 4) != 4 || v[0] != huid || v[1] != huid || v[2] != huid
      || v[3] != huid)
    return xasprintf ("from outside, /proc/%d/status says Uid: %s (real, effective, saved, fs), "
                      "not %" PRIu64 " (uid %" PRIu64 " of the container)",
                      (int) ctx->pid, uid_line, huid, uid);
  if (vf_numbers (gid_line, v, 4) != 4 || v[0] != hgid || v[1] != hgid || v[2] != hgid
      || v[3] != hgid)
    return xasprintf ("from outside, /proc/%d/status says Gid: %s (real, effective, saved, fs), "
                      "not %" PRIu64 " (gid %" PRIu64 " of the container)",
                      (int) ctx->pid, gid_line, hgid, gid);

  /* Groups: the requested ones mapped, or (setgroups denied) exactly the
   * groups kist had, which are the parent's own. */
  _cleanup_free_ char *groups_line = vf_status_field (ctx, "Groups", &why);
  if (groups_line == NULL)
    return why;
  kist_rstrip (groups_line); /* "10 20 " */
  /* Arrays as long as the lists can be (a number per space or comma),
   * not MAX_GROUPS each: 512 KB twice was an mmap and munmap per run. */
  int n_mine = strcmp (groups_s, "unchanged") == 0 ? getgroups (0, NULL) : 0;
  if (n_mine < 0)
    return xasprintf ("getgroups of kist itself: %s", strerror (errno));
  size_t cap_got = 1, cap_want = 1 + (size_t) n_mine;
  for (const char *c = groups_line; *c; c++)
    cap_got += *c == ' ' || *c == '\t';
  for (const char *c = groups_s; *c; c++)
    cap_want += *c == ',';
  cap_got = cap_got < MAX_GROUPS ? cap_got : MAX_GROUPS;
  cap_want = cap_want < MAX_GROUPS ? cap_want : MAX_GROUPS;
  _cleanup_free_ uint64_t *got = xcalloc (cap_got, sizeof (uint64_t));
  _cleanup_free_ uint64_t *want = xcalloc (cap_want, sizeof (uint64_t));
  size_t ngot = sort_unique (got, vf_numbers (groups_line, got, cap_got)), nwant = 0;
  if (strcmp (groups_s, "unchanged") == 0)
    {
      _cleanup_free_ gid_t *mine = xcalloc ((size_t) n_mine + 1, sizeof (gid_t));
      int n = getgroups (n_mine, mine);
      if (n < 0)
        return xasprintf ("getgroups of kist itself: %s", strerror (errno));
      for (int i = 0; i < n; i++)
        want[nwant++] = mine[i];
    }
  else if (strcmp (groups_s, "none") != 0)
    {
      char *save = NULL;
      _cleanup_free_ char *copy = xstrdup (groups_s);
      for (char *t = strtok_r (copy, ",", &save); t && nwant < cap_want;
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

  _cleanup_free_ char *umask_line = vf_status_field (ctx, "Umask", &why);
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

/* ------------------------------------------------------------ capabilities */

static char *
caps_check (struct kist_ctx *ctx, const struct kist_layer *l, char **note)
{
  static const char *const key[] = { "bnd", "eff", "prm", "inh", "amb" };
  static const char *const field[] = { "CapBnd", "CapEff", "CapPrm", "CapInh", "CapAmb" };
  char *why = NULL;
  _cleanup_free_ char *seen = xasprintf ("verified from outside: /proc/%d/status", (int) ctx->pid);
  for (size_t s = 0; s < KIST_ARRAY_SIZE (key); s++)
    {
      _cleanup_free_ char *want = vf_expect_word (l->expect, key[s]);
      _cleanup_free_ char *got = vf_status_field (ctx, field[s], &why);
      if (got == NULL)
        return why;
      char *e1 = NULL, *e2 = NULL;
      unsigned long long g = strtoull (got, &e1, 16);
      unsigned long long w = want ? strtoull (want, &e2, 16) : 0;
      if (want == NULL || *e2 != '\0')
        return xasprintf ("the entry's expectation `%s` is malformed", l->expect);
      if (e1 == got || *e1 != '\0' || g != w)
        return xasprintf ("from outside, /proc/%d/status says %s: %s, expected %016llx",
                          (int) ctx->pid, field[s], got, w);
      char *more = xasprintf ("%s %s %s", seen, field[s], got);
      free (seen);
      seen = more;
    }
  *note = steal_pointer (&seen);
  return NULL;
}

/* ------------------------------------------------------- no_new_privileges */

static char *
nnp_check (struct kist_ctx *ctx, const struct kist_layer *l, char **note)
{
  char *why = NULL;
  _cleanup_free_ char *got = vf_status_field (ctx, "NoNewPrivs", &why);
  if (got == NULL)
    return why;
  _cleanup_free_ char *want = vf_expect_word (l->expect, "nnp");
  if (want == NULL || strcmp (got, want) != 0)
    return xasprintf ("from outside, /proc/%d/status says NoNewPrivs: %s, not %s",
                      (int) ctx->pid, got, want ? want : "?");
  *note = xasprintf ("verified from outside: /proc/%d/status NoNewPrivs %s", (int) ctx->pid, got);
  return NULL;
}

/* ----------------------------------------------------------------- seccomp */

static char *
seccomp_check (struct kist_ctx *ctx, const struct kist_layer *l, char **note)
{
  char *why = NULL;
  _cleanup_free_ char *mode_w = vf_expect_word (l->expect, "mode");
  _cleanup_free_ char *filters_w = vf_expect_word (l->expect, "filters");
  _cleanup_free_ char *mode = NULL, *filters = NULL;
  if (!status_fields (ctx, "Seccomp", &mode, "Seccomp_filters", &filters, &why))
    return why;
  int nf = -1, wf = -1;
  if (mode_w == NULL || strcmp (mode, mode_w) != 0)
    return xasprintf ("from outside, /proc/%d/status says Seccomp: %s, not %s", (int) ctx->pid,
                      mode, mode_w ? mode_w : "?");
  if (kist_parse_int (filters, &nf) < 0
      || (filters_w ? kist_parse_int (filters_w, &wf) < 0 || nf != wf : nf < 1))
    return xasprintf ("from outside, /proc/%d/status says Seccomp_filters: %s, %s %s",
                      (int) ctx->pid, filters, filters_w ? "not" : "not at least",
                      filters_w ? filters_w : "1");
  *note = xasprintf ("verified from outside: /proc/%d/status Seccomp %s, Seccomp_filters %s%s",
                     (int) ctx->pid, mode, filters,
                     filters_w ? "" : " (the count before loading was not known)");
  return NULL;
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

static char *
session_check (struct kist_ctx *ctx, const struct kist_layer *l, char **note)
{
  char *why = NULL;
  _cleanup_free_ char *tty_w = vf_expect_word (l->expect, "tty_nr");
  _cleanup_free_ char *nspid = NULL, *nssid = NULL;
  if (!status_fields (ctx, "NSpid", &nspid, "NSsid", &nssid, &why))
    return why;
  const char *stat = vf_proc_text (ctx, VF_STAT, &why);
  if (stat == NULL)
    return why;
  _cleanup_free_ char *tty = stat_field (stat, 7);
  uint64_t p[1] = { 0 }, s[1] = { 0 };
  if (tty == NULL)
    return xasprintf ("/proc/%d/stat has no tty_nr field", (int) ctx->pid);
  if (vf_numbers (nspid, p, 1) != 1 || vf_numbers (nssid, s, 1) != 1 || p[0] != s[0])
    return xasprintf ("from outside, /proc/%d/status says NSsid: %s, NSpid: %s: not the "
                      "leader of its own session",
                      (int) ctx->pid, nssid, nspid);
  if (tty_w == NULL || strcmp (tty, tty_w) != 0)
    return xasprintf ("from outside, /proc/%d/stat says tty_nr %s, expected %s%s",
                      (int) ctx->pid, tty, tty_w ? tty_w : "?",
                      tty_w && strcmp (tty_w, "0") == 0 ? " (no controlling terminal)"
                                                        : " (the container's pty)");
  *note = xasprintf ("verified from outside: /proc/%d/status NSsid = NSpid %" PRIu64
                     ", /proc/%d/stat tty_nr %s",
                     (int) ctx->pid, p[0], (int) ctx->pid, tty);
  return NULL;
}

/* fds: nothing above fd `upto` is open without close-on-exec (fds 0-2 and
 * --preserve-fds are passed on; kist's own close at the execve).  Read from
 * /proc/PID/fd and fdinfo: the container's filter cannot hide them. */
static char *
fds_check (struct kist_ctx *ctx, const struct kist_layer *l, char **note)
{
  _cleanup_free_ char *upto_w = vf_expect_word (l->expect, "upto");
  long upto = upto_w ? strtol (upto_w, NULL, 10) : 2;
  _cleanup_free_ char *inside_w = vf_expect_word (l->expect, "inside");
  bool inside = inside_w && strcmp (inside_w, "ok") == 0;
  char path[64];
  snprintf (path, sizeof path, "/proc/%d/fd", (int) ctx->pid);
  int dfd = open (path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR *d = dfd >= 0 ? fdopendir (dfd) : NULL;
  if (d == NULL)
    {
      int e = errno;
      if (dfd >= 0)
        close (dfd);
      if (e != EACCES)
        return xasprintf ("cannot list %s from outside: %s", path, strerror (e));
      /* A rootless kist may not list the fds of its non-dumpable child (its
       * mm still belongs to kist's user namespace): the child's own
       * read-back stands, or, where its filter or /proc denied that too,
       * the close_range that succeeded (it closes the whole range or
       * fails). */
      *note = xasprintf ("%s is not readable from outside (a non-dumpable child of a rootless "
                         "kist): %s",
                         path,
                         inside ? "the read-back inside stands"
                                : "not read back inside either (the container's filter or "
                                  "/proc denies it); close_range succeeded");
      return NULL;
    }
  char *why = NULL;
  size_t n_open = 0, n_cloexec = 0;
  for (struct dirent *de; why == NULL && (de = readdir (d));)
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
  closedir (d);
  if (why)
    return why;
  *note = xasprintf ("verified from outside: /proc/%d/fd holds %zu fds, none above %ld "
                     "without close-on-exec (%zu close at the execve)",
                     (int) ctx->pid, n_open, upto, n_cloexec);
  return NULL;
}

/* ------------------------------------------------------------ entry points */

/* The verifiers of verify.h (layer.c names them): every pending entry of
 * name, checked by check (vf_each). */
VERIFIER (kist_oom_verify, oom_check, "oom_score_adj")
VERIFIER (kist_rlimits_verify, rlimit_check, "rlimit.*")
VERIFIER (kist_user_verify, user_check, "user")
VERIFIER (kist_caps_verify, caps_check, "capabilities")
VERIFIER (kist_nnp_verify, nnp_check, "no_new_privileges")
VERIFIER (kist_seccomp_verify, seccomp_check, "seccomp")
VERIFIER (kist_session_verify, session_check, "session")
VERIFIER (kist_fds_verify, fds_check, "fds")
