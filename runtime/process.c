/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: the container process itself: oom_score_adj, cwd, environment and the
 * executable lookup (kist_process_prepare), the user and groups
 * (kist_user_apply, layer "user") and no_new_privileges (kist_nnp_apply).
 * All of it runs in the container init after pivot_root, so "/" is the
 * container root and /proc is the container's proc. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/openat2.h>
#include <signal.h>
#include <poll.h>
#include <sys/uio.h>

#include "cgroup.h"
#include "container.h"
#include "layer.h"
#include "procfs.h"
#include "resolve.h"
#include "seccomp.h"
#include "terminal.h"
#include "sync.h"
#include "util.h"

#define DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

/* ---- oom_score_adj */

int
kist_oom_apply (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err)
{
  const char *layer = "oom_score_adj";
  const struct kist_process *p = ctx->spec->process;
  if (p == NULL)
    return kist_error_make (err, EINVAL, "config.json: no `process` object: nothing to run");
  if (!p->has_oom_score_adj)
    {
      kist_report_skip (r, layer, "not given");
      return 0;
    }
  char requested[16];
  snprintf (requested, sizeof requested, "%d", p->oom_score_adj);

  _cleanup_error_ struct kist_error *e = NULL;
  _cleanup_free_ char *before = NULL;
  if (kist_proc_read (ctx, "/proc/self/oom_score_adj", 0, &before, &e) < 0)
    return kist_report_failed (r, layer, requested, e->errnum, err, "%s", e->msg);
  kist_rstrip (before);

  _cleanup_close_ int fd = kist_proc_open (ctx, "/proc/self/oom_score_adj", O_WRONLY, &e);
  if (fd < 0)
    return kist_report_failed (r, layer, requested, e->errnum, err, "%s", e->msg);
  int ret = kist_write_all (fd, requested, strlen (requested));
  if (ret < 0)
    {
      const char *hint = "";
      if (ret == -EACCES || ret == -EPERM)
        hint = " (lowering oom_score_adj below its current value needs CAP_SYS_RESOURCE)";
      else if (ret == -EINVAL)
        hint = " (process.oomScoreAdj must be between -1000 and 1000)";
      return kist_report_failed (r, layer, requested, -ret, err,
                                 "write /proc/self/oom_score_adj (current %s): %s%s", before,
                                 strerror (-ret), hint);
    }

  _cleanup_free_ char *after = NULL;
  if (kist_proc_read (ctx, "/proc/self/oom_score_adj", 0, &after, &e) < 0)
    return kist_report_failed (r, layer, requested, e->errnum, err, "reading back: %s", e->msg);
  kist_rstrip (after);
  int got;
  if (kist_parse_int (after, &got) < 0 || got != p->oom_score_adj)
    return kist_report_failed (r, layer, requested, EPROTO, err,
                               "/proc/self/oom_score_adj reads back `%s`", after);
  kist_report_applied (r, layer, requested, "/proc/self/oom_score_adj reads back %d", got);
  kist_report_expect (r, layer, "adj=%d", got); /* and /proc/PID/oom_score_adj from outside */
  return 0;
}

/* ---- cwd */

static int
apply_cwd (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err)
{
  const char *layer = "cwd";
  const char *cwd = ctx->spec->process->cwd ? ctx->spec->process->cwd : "/";
  _cleanup_error_ struct kist_error *e = NULL;
  bool created = false;
  _cleanup_close_ int fd = -1;

  if (ctx->rootfs_fd >= 0)
    {
      fd = kist_resolve_open (ctx->rootfs_fd, cwd, O_PATH | O_DIRECTORY, 0, &e);
      if (fd == -ENOENT)
        {
          /* Missing: create it (like runc), each step resolved in the root. */
          kist_error_freep (&e);
          _cleanup_close_ int made
              = kist_resolve_mkpath (ctx->rootfs_fd, cwd, KIST_MKPATH_DIR, 0755, &e);
          if (made < 0)
            return kist_report_failed (r, layer, cwd, e->errnum, err,
                                       "process.cwd `%s` does not exist and cannot be created: %s",
                                       cwd, e->msg);
          created = true;
          fd = kist_resolve_open (ctx->rootfs_fd, cwd, O_PATH | O_DIRECTORY, 0, &e);
        }
    }
  else
    {
      fd = open (cwd, O_PATH | O_DIRECTORY | O_CLOEXEC);
      if (fd < 0)
        kist_error_make (&e, errno, "open `%s`", cwd);
    }
  if (fd < 0)
    return kist_report_failed (r, layer, cwd, e->errnum, err, "process.cwd `%s`: %s", cwd, e->msg);

  if (fchdir (fd) < 0)
    {
      int en = errno;
      return kist_report_failed (r, layer, cwd, en, err, "fchdir to process.cwd `%s`: %s", cwd,
                                 strerror (en));
    }
  struct stat want, got;
  if (fstat (fd, &want) < 0 || stat (".", &got) < 0)
    {
      int en = errno;
      return kist_report_failed (r, layer, cwd, en, err, "stat process.cwd `%s`: %s", cwd,
                                 strerror (en));
    }
  if (want.st_dev != got.st_dev || want.st_ino != got.st_ino)
    return kist_report_failed (r, layer, cwd, EPROTO, err,
                               "after fchdir, `.` is not process.cwd `%s`", cwd);
  kist_report_applied (r, layer, cwd, "%s; stat(\".\") is the directory resolved in the root",
                       created ? "created (was missing)" : "exists");
  if (ctx->rootfs_fd >= 0)
    kist_report_expect (r, layer, "in_root=1"); /* and /proc/PID/cwd from outside */
  return 0;
}

/* ---- environment */

/* The home directory of uid in the container's /etc/passwd (resolved in
 * the root; a regular file only, at most 4 MiB: the image is not trusted),
 * or NULL. */
static char *
passwd_home (int rootfd, uid_t uid)
{
  _cleanup_error_ struct kist_error *e = NULL;
  _cleanup_close_ int fd
      = kist_resolve_open (rootfd, "/etc/passwd", O_RDONLY | O_NONBLOCK | O_NOCTTY, 0, &e);
  struct stat st;
  if (fd < 0 || fstat (fd, &st) < 0 || !S_ISREG (st.st_mode))
    return NULL;
  _cleanup_free_ char *text = NULL;
  size_t len = 0;
  if (kist_read_fd (fd, 4u << 20, &text, &len, &e) < 0)
    return NULL;
  char *save = NULL;
  for (char *line = strtok_r (text, "\n", &save); line; line = strtok_r (NULL, "\n", &save))
    {
      /* name:password:uid:gid:gecos:home:shell */
      char *f[7] = { 0 };
      size_t n = 0;
      for (char *p = line; n < 7; n++)
        {
          f[n] = p;
          char *c = strchr (p, ':');
          if (c == NULL)
            {
              n++;
              break;
            }
          *c = '\0';
          p = c + 1;
        }
      uint64_t u;
      if (n >= 6 && kist_parse_u64 (f[2], &u) == 0 && u == uid && f[5][0] == '/')
        return xstrdup (f[5]);
    }
  return NULL;
}

static void
apply_environment (struct kist_ctx *ctx, struct kist_report *r)
{
  char *const *env = ctx->spec->process->env;
  size_t n = kist_strv_len (env);
  bool has_home = false;
  for (size_t i = 0; i < n; i++)
    has_home = has_home || strncmp (env[i], "HOME=", 5) == 0;
  char **v = xcalloc (n + 2, sizeof *v);
  for (size_t i = 0; i < n; i++)
    v[i] = xstrdup (env[i]);
  _cleanup_free_ char *home = NULL, *added = NULL;
  if (!has_home && !ctx->exact_env)
    {
      /* As runc: HOME from the user's entry in the container's
       * /etc/passwd, else "/". */
      uid_t uid = ctx->spec->process->user.uid;
      home = passwd_home (ctx->rootfs_fd, uid);
      v[n] = xasprintf ("HOME=%s", home ? home : "/");
      added = xasprintf ("; HOME=%s added (not in process.env; %s)", home ? home : "/",
                         home ? "uid's home in the container's /etc/passwd"
                              : "uid not in the container's /etc/passwd");
    }
  kist_strv_free (ctx->envp);
  ctx->envp = v;
  kist_report_applied (r, "environment", "",
                       "%zu variable%s, exactly process.env%s; nothing inherited from kist", n,
                       n == 1 ? "" : "s", added ? added : "");
}

/* ---- executable lookup */

enum candidate
{
  CAND_MISSING,
  CAND_NOT_EXEC,
  CAND_MAGIC,
  CAND_OK
};

/* Resolve a candidate the way execve would, from the process's root (the
 * container's: after pivot_root, chroot or setns into its mount namespace)
 * and cwd, but never through a magic link: an image symlink to
 * /proc/self/fd/N, /proc/self/exe or /proc/PID/root names something
 * outside the container (CVE-2024-21626, CVE-2019-5736).  *fd gets an
 * O_PATH fd of the file, which is what is executed. */
static enum candidate
check_candidate (const char *path, int *fd)
{
  *fd = -1;
  _cleanup_close_ int f = kist_openat2 (AT_FDCWD, path, O_PATH, 0, RESOLVE_NO_MAGICLINKS);
  if (f == -ELOOP)
    {
      /* A symlink loop (ELOOP again without the restriction), or a magic
       * link on the way. */
      _cleanup_close_ int any = kist_openat2 (AT_FDCWD, path, O_PATH, 0, 0);
      return any == -ELOOP ? CAND_MISSING : CAND_MAGIC;
    }
  struct stat st;
  if (f < 0 || fstat (f, &st) < 0)
    return CAND_MISSING;
  if (!S_ISREG (st.st_mode) || (st.st_mode & 0111) == 0)
    return CAND_NOT_EXEC;
  *fd = steal_fd (&f);
  return CAND_OK;
}

static int
exec_error (struct kist_error **err, int status, const char *fmt, const char *arg0,
            const char *extra)
{
  if (err == NULL || *err != NULL)
    return -1;
  int ret = kist_error_make (err, 0, fmt, arg0, extra);
  (*err)->status = status;
  return ret;
}

static void
set_exec (struct kist_ctx *ctx, char *path, int fd)
{
  free (ctx->exec_path);
  ctx->exec_path = path;
  if (ctx->exec_fd >= 0)
    close (ctx->exec_fd);
  ctx->exec_fd = fd;
}

static int
magic_error (struct kist_error **err, const char *arg0, const char *cand)
{
  _cleanup_free_ char *why
      = xasprintf ("`%s` resolves through a magic link (/proc/PID/fd, /proc/PID/exe, "
                   "/proc/PID/root ...), which could name a file outside the container; kist "
                   "refuses to execute it: point it at a file in the image",
                   cand);
  return exec_error (err, KIST_EXIT_NOEXEC, "exec: `%s`: %s", arg0, why);
}

static int
lookup_exec (struct kist_ctx *ctx, struct kist_error **err)
{
  const struct kist_process *p = ctx->spec->process;
  const char *arg0 = p->args ? p->args[0] : NULL;
  if (arg0 == NULL || *arg0 == '\0')
    return exec_error (err, KIST_EXIT_NOTFOUND, "exec: `%s`: process.args[0] is empty%s", "", "");

  int fd = -1;
  if (strchr (arg0, '/'))
    {
      switch (check_candidate (arg0, &fd))
        {
        case CAND_OK:
          set_exec (ctx, xstrdup (arg0), fd);
          return 0;
        case CAND_MAGIC:
          return magic_error (err, arg0, arg0);
        case CAND_NOT_EXEC:
          return exec_error (err, KIST_EXIT_NOEXEC, "exec: `%s`: permission denied (%s)", arg0,
                             "not an executable regular file in the container root");
        case CAND_MISSING:
        default:
          return exec_error (err, KIST_EXIT_NOTFOUND, "exec: `%s`: no such file or directory%s",
                             arg0, " in the container root");
        }
    }

  const char *path = NULL;
  for (char *const *e = p->env; e && *e; e++)
    if (strncmp (*e, "PATH=", 5) == 0)
      {
        path = *e + 5;
        break;
      }
  if (path == NULL)
    path = DEFAULT_PATH;

  _cleanup_free_ char *not_exec = NULL, *magic = NULL;
  const char *s = path;
  for (;;)
    {
      const char *colon = strchr (s, ':');
      size_t dl = colon ? (size_t) (colon - s) : strlen (s);
      /* An empty entry means the working directory (like execvp). */
      _cleanup_free_ char *cand
          = dl == 0 ? xasprintf ("./%s", arg0) : xasprintf ("%.*s/%s", (int) dl, s, arg0);
      enum candidate c = check_candidate (cand, &fd);
      if (c == CAND_OK)
        {
          set_exec (ctx, steal_pointer (&cand), fd);
          return 0;
        }
      if (c == CAND_NOT_EXEC && not_exec == NULL)
        not_exec = steal_pointer (&cand);
      else if (c == CAND_MAGIC && magic == NULL)
        magic = steal_pointer (&cand);
      if (colon == NULL)
        break;
      s = colon + 1;
    }
  if (magic)
    return magic_error (err, arg0, magic);
  if (not_exec)
    {
      _cleanup_free_ char *why = xasprintf ("%s is not an executable regular file", not_exec);
      return exec_error (err, KIST_EXIT_NOEXEC, "exec: `%s`: permission denied (%s)", arg0, why);
    }
  return exec_error (err, KIST_EXIT_NOTFOUND, "exec: `%s`: executable file not found in $PATH%s",
                     arg0, "");
}

int
kist_process_prepare (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err)
{
  if (ctx->spec->process == NULL)
    return kist_error_make (err, EINVAL, "config.json: no `process` object: nothing to run");
  int ret = apply_cwd (ctx, r, err);
  if (ret < 0)
    return ret;
  apply_environment (ctx, r);
  return lookup_exec (ctx, err);
}

/* ---- user */

static int
cmp_gid (const void *a, const void *b)
{
  gid_t x = *(const gid_t *) a, y = *(const gid_t *) b;
  return x < y ? -1 : x > y;
}

static char *
gid_list (const gid_t *g, size_t n)
{
  if (n == 0)
    return xstrdup ("none");
  char *s = xstrdup ("");
  for (size_t i = 0; i < n; i++)
    {
      char *t = xasprintf ("%s%s%u", s, i ? "," : "", (unsigned) g[i]);
      free (s);
      s = t;
    }
  return s;
}

/* setresgid (gid) or setresuid: all three ids to id.  1 when done, else
 * what kist_report_failed says (0: allowed to degrade); an id the user
 * namespace does not map (EINVAL) names the mapping to look at. */
static int
set_id (bool gid, unsigned id, struct kist_report *r, const char *layer, const char *requested,
        struct kist_error **err)
{
  if ((gid ? setresgid (id, id, id) : setresuid (id, id, id)) == 0)
    return 1;
  int e = errno;
  const char *w = gid ? "gid" : "uid";
  _cleanup_free_ char *hint
      = e == EINVAL ? xasprintf (" (process.user.%s is not mapped in the container's user "
                                 "namespace: see linux.%sMappings)",
                                 w, w)
                    : NULL;
  return kist_report_failed (r, layer, requested, e, err, "setres%s (%u): %s%s", w, id,
                             strerror (e), hint ? hint : "");
}

int
kist_user_apply (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err)
{
  const char *layer = "user";
  if (ctx->spec->process == NULL)
    return kist_error_make (err, EINVAL, "config.json: no `process` object: nothing to run");
  const struct kist_user *u = &ctx->spec->process->user;
  mode_t mask = u->has_umask ? (mode_t) (u->umask & 07777) : 0022;
  size_t ngroups = u->has_additional_gids ? u->n_additional_gids : 0;
  _cleanup_free_ gid_t *groups = xcalloc (ngroups ? ngroups : 1, sizeof (gid_t));
  for (size_t i = 0; i < ngroups; i++)
    groups[i] = (gid_t) u->additional_gids[i];
  _cleanup_free_ char *glist = gid_list (groups, ngroups);
  _cleanup_free_ char *requested
      = xasprintf ("uid=%u gid=%u groups=%s umask=%04o", (unsigned) u->uid, (unsigned) u->gid,
                   glist, (unsigned) mask);

  if (prctl (PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0)
    {
      int e = errno;
      return kist_report_failed (r, layer, requested, e, err, "prctl (PR_SET_KEEPCAPS, 1): %s",
                                 strerror (e));
    }

  /* setgroups is refused for good in a user namespace whose parent wrote
   * "deny" (an unprivileged kist).  Read before any filter was loaded
   * (kist_inside_status_open), never under it. */
  kist_inside_status_open (ctx);
  /* The Landlock fallback runs unprivileged in the host's user namespace:
   * setgroups needs CAP_SETGID there, so the groups stay the caller's. */
  bool denied = ctx->inside_status.setgroups == 2 || ctx->fallback;
  bool groups_set = false;
  if (denied && ngroups > 0)
    return kist_report_failed (r, layer, requested, EPERM, err,
                               "process.user.additionalGids (%s) cannot be set: setgroups is "
                               "denied in this user namespace (/proc/self/setgroups says deny, "
                               "as it must when kist is not root); drop additionalGids or run "
                               "kist as root",
                               glist);
  if (!denied)
    {
      if (setgroups (ngroups, groups) < 0)
        {
          int e = errno;
          return kist_report_failed (r, layer, requested, e, err,
                                     "setgroups (%s) from process.user.additionalGids: %s%s", glist,
                                     strerror (e),
                                     e == EINVAL ? " (a gid is not mapped in the container's "
                                                   "user namespace: see linux.gidMappings)"
                                                 : "");
        }
      groups_set = true;
    }

  int ret;
  if ((ret = set_id (true, u->gid, r, layer, requested, err)) != 1
      || (ret = set_id (false, u->uid, r, layer, requested, err)) != 1)
    return ret;
  umask (mask);

  /* Read back inside what the filter lets through (with noNewPrivileges
   * false the container's filter is loaded already); the parent reads Uid,
   * Gid, Groups and Umask of /proc/PID/status from outside in any case
   * (verify.c kist_user_verify). */
  _cleanup_free_ char *expect_groups = groups_set ? xstrdup (glist) : xstrdup ("unchanged");
  if (!kist_inside_allows (ctx, SYS_getresuid, NULL) || !kist_inside_allows (ctx, SYS_getresgid, NULL)
      || !kist_inside_allows (ctx, SYS_getgroups, NULL) || !kist_inside_allows (ctx, SYS_umask, NULL))
    {
      kist_report_applied (r, layer, requested,
                           "uid=%u gid=%u groups=%s umask=%04o (set; not read back inside: the "
                           "container's seccomp filter denies it)%s",
                           (unsigned) u->uid, (unsigned) u->gid, groups_set ? glist : "unchanged",
                           (unsigned) mask,
                           groups_set ? ""
                                      : "; setgroups is denied in this user namespace, so the "
                                        "supplementary groups are the ones kist had");
      kist_report_expect (r, layer, "uid=%u gid=%u groups=%s umask=%04o", (unsigned) u->uid,
                          (unsigned) u->gid, expect_groups, (unsigned) mask);
      return 0;
    }
  uid_t ru, eu, su;
  gid_t rg, eg, sg;
  if (getresuid (&ru, &eu, &su) < 0 || getresgid (&rg, &eg, &sg) < 0)
    {
      int e = errno;
      return kist_report_failed (r, layer, requested, e, err, "getresuid/getresgid: %s",
                                 strerror (e));
    }
  if (ru != u->uid || eu != u->uid || su != u->uid || rg != u->gid || eg != u->gid || sg != u->gid)
    return kist_report_failed (r, layer, requested, EPROTO, err,
                               "read back uid=%u/%u/%u gid=%u/%u/%u (real/effective/saved)",
                               (unsigned) ru, (unsigned) eu, (unsigned) su, (unsigned) rg,
                               (unsigned) eg, (unsigned) sg);
  int ng = getgroups (0, NULL);
  if (ng < 0)
    {
      int e = errno;
      return kist_report_failed (r, layer, requested, e, err, "getgroups: %s", strerror (e));
    }
  _cleanup_free_ gid_t *got = xcalloc ((size_t) ng + 1, sizeof (gid_t));
  ng = getgroups (ng, got);
  if (ng < 0)
    {
      int e = errno;
      return kist_report_failed (r, layer, requested, e, err, "getgroups: %s", strerror (e));
    }
  qsort (got, (size_t) ng, sizeof (gid_t), cmp_gid);
  _cleanup_free_ gid_t *want = xcalloc (ngroups ? ngroups : 1, sizeof (gid_t));
  memcpy (want, groups, ngroups * sizeof (gid_t));
  qsort (want, ngroups, sizeof (gid_t), cmp_gid);
  _cleanup_free_ char *got_list = gid_list (got, (size_t) ng);
  if (groups_set && ((size_t) ng != ngroups || memcmp (got, want, ngroups * sizeof (gid_t)) != 0))
    return kist_report_failed (r, layer, requested, EPROTO, err,
                               "getgroups reads back %s after setgroups", got_list);
  mode_t got_mask = umask (mask);
  umask (got_mask);
  if (got_mask != mask)
    return kist_report_failed (r, layer, requested, EPROTO, err, "umask reads back %04o",
                               (unsigned) got_mask);

  kist_report_applied (r, layer, requested, "uid=%u gid=%u groups=%s umask=%04o (read back)%s",
                       (unsigned) eu, (unsigned) eg, got_list, (unsigned) got_mask,
                       groups_set       ? ""
                       : ctx->fallback ? "; the Landlock fallback runs unprivileged (setgroups "
                                         "needs CAP_SETGID), so the supplementary groups are "
                                         "the caller's"
                                       : "; setgroups is denied in this user namespace, so the "
                                         "supplementary groups are the ones kist had (unmapped "
                                         "ones show as the overflow gid)");
  kist_report_expect (r, layer, "uid=%u gid=%u groups=%s umask=%04o", (unsigned) u->uid,
                      (unsigned) u->gid, expect_groups, (unsigned) mask);
  return 0;
}

/* ---- no_new_privileges */

int
kist_nnp_apply (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err)
{
  const char *layer = "no_new_privileges";
  if (ctx->spec->process == NULL || !ctx->spec->process->no_new_privileges)
    {
      kist_report_skip (r, layer, "not requested");
      return 0;
    }
  if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
    {
      int e = errno;
      return kist_report_failed (r, layer, "", e, err, "prctl (PR_SET_NO_NEW_PRIVS, 1): %s",
                                 strerror (e));
    }
  /* Read back inside as far as the filter lets it (with a notify listener
   * or noNewPrivileges false, kist's filter can be loaded already); the
   * parent reads NoNewPrivs of /proc/PID/status from outside in any case. */
  const uint64_t get_arg[6] = { PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0, 0 };
  bool by_prctl = kist_inside_allows (ctx, SYS_prctl, get_arg);
  int v = by_prctl ? prctl (PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) : 1;
  if (v != 1)
    return kist_report_failed (r, layer, "", v < 0 ? errno : EPROTO, err,
                               "PR_GET_NO_NEW_PRIVS reads back %d", v);
  char buf[16384];
  int why = 0;
  const char *status = kist_inside_status (ctx, buf, sizeof buf, &why);
  if (status == NULL)
    {
      /* No procfs at /proc in the container (or the filter denies reading
       * it): the prctl read-back stands. */
      if (by_prctl)
        kist_report_applied (r, layer, "", "PR_GET_NO_NEW_PRIVS 1 (%s)", kist_inside_why (why));
      else
        kist_report_applied (r, layer, "", "set; not read back inside (%s)",
                             kist_inside_why (why));
      kist_report_expect (r, layer, "nnp=1");
      return 0;
    }
  _cleanup_free_ char *line = kist_proc_status_field (status, "NoNewPrivs");
  if (line == NULL || strcmp (line, "1") != 0)
    return kist_report_failed (r, layer, "", EPROTO, err, "/proc/self/status says NoNewPrivs: %s",
                               line ? line : "(missing)");
  kist_report_applied (r, layer, "", "%s/proc/self/status NoNewPrivs: 1",
                       by_prctl ? "PR_GET_NO_NEW_PRIVS 1; " : "");
  kist_report_expect (r, layer, "nnp=1");
  return 0;
}

/* ---- the end: session, fds, the filter, execve */

/* A new session without a controlling terminal, so that nothing in the
 * container can push input into the caller's terminal with TIOCSTI
 * (bubblewrap CVE-2017-5226) or get its signals; with process.terminal, the
 * container's own pty becomes its controlling terminal and stdio.  A row of
 * its own before any filter (layer.c): an early filter (noNewPrivileges
 * false) may deny setsid or the TIOCSCTTY ioctl.  Read back inside with
 * getsid and tcgetsid, and from outside by the parent (NSsid of
 * /proc/PID/status, tty_nr of /proc/PID/stat: kist_session_verify). */
int
kist_session_apply (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err)
{
  const char *layer = "session";
  if (setsid () < 0)
    {
      int e = errno;
      return kist_report_failed (r, layer, "new", e, err, "setsid: %s", strerror (e));
    }
  pid_t got = getsid (0);
  if (got != getpid ())
    return kist_report_failed (r, layer, "new", EPROTO, err,
                               "after setsid, getsid(0) is %d, not the process (%d)", (int) got,
                               (int) getpid ());
  _cleanup_error_ struct kist_error *e = NULL;
  int pty = kist_terminal_attach (ctx, &e);
  if (pty < -1)
    return kist_report_failed (r, layer, "new", e->errnum, err, "%s", e->msg);
  if (pty >= 0)
    kist_report_applied (r, layer, "new",
                         "setsid: leader of a new session (getsid read back); controlling "
                         "terminal /dev/pts/%d of the container, also stdin, stdout and stderr "
                         "(TIOCSCTTY, tcgetsid read back)",
                         pty);
  else
    kist_report_applied (r, layer, "new",
                         "setsid: leader of a new session, no controlling terminal (getsid read "
                         "back)");
  /* tty_nr as /proc/PID/stat shows it: the pty slave is (136, N), encoded
   * as the kernel's new_encode_dev; 0 without a controlling terminal. */
  unsigned long tty_nr = 0;
  if (pty >= 0)
    {
      unsigned long maj = 136, min = (unsigned long) pty;
      tty_nr = (min & 0xff) | (maj << 8) | ((min & ~0xfful) << 12);
    }
  kist_report_expect (r, layer, "sid=self tty_nr=%lu", tty_nr);
  return 0;
}

void
kist_child_drop_parent_fds (struct kist_ctx *ctx, int sync_parent, int state_dirfd, int rootfd,
                            int sync_child)
{
  close (sync_parent);
  close (state_dirfd);
  close (rootfd);
  if (ctx->cgroup)
    close (steal_fd (&ctx->cgroup->dirfd));
  ctx->state_dirfd = ctx->root_fd = -1;
  ctx->sync_fd = sync_child;
}

/* Close every fd above 2 except the --preserve-fds range and keep[] (-1
 * entries ignored): no host fd (bundle, state, cgroup, log, an engine's
 * socket) may exist while the kernel resolves the program and its
 * interpreter (CVE-2024-21626), or while a process joins a container.  They
 * are close-on-exec already; closing them also takes them out of reach of
 * /proc/self/fd during the execve. */
int
kist_close_fds_except (int preserve_fds, const int *keep, size_t n_keep, struct kist_error **err)
{
  unsigned first = 3u + (unsigned) (preserve_fds > 0 ? preserve_fds : 0);
  int k[KIST_NS_COUNT + 4];
  size_t n = 0;
  for (size_t i = 0; i < n_keep; i++)
    {
      if (keep[i] < (int) first)
        continue;
      if (n == KIST_ARRAY_SIZE (k))
        return kist_error_make (err, E2BIG, "too many fds to keep before execve");
      k[n++] = keep[i];
    }
  for (size_t i = 1; i < n; i++)
    for (size_t j = i; j > 0 && k[j - 1] > k[j]; j--)
      {
        int t = k[j];
        k[j] = k[j - 1];
        k[j - 1] = t;
      }
  unsigned from = first;
  for (size_t i = 0; i <= n; i++)
    {
      if (i < n && (unsigned) k[i] < from)
        continue; /* a duplicate */
      unsigned to = i < n ? (unsigned) k[i] - 1 : ~0U;
      if (to >= from && syscall (SYS_close_range, from, to, 0) < 0)
        return kist_error_make (err, errno, "close_range(%u, %u)", from, to);
      if (i < n)
        from = (unsigned) k[i] + 1;
    }
  return 0;
}

/* How the process waits for the parent's word after READY: the first of
 * these syscalls the filter (loaded or to be loaded) lets through on the
 * sync socket, or -1 when it denies them all. */
static const int wait_syscalls[] = { SYS_recvfrom, SYS_recvmsg, SYS_read, SYS_ppoll, SYS_poll };

static int
pick_wait (const struct kist_seccomp *sc, int fd)
{
  const uint64_t a[6] = { (uint64_t) fd, 0, 0, 0, 0, 0 };
  for (size_t i = 0; i < KIST_ARRAY_SIZE (wait_syscalls); i++)
    if (sc == NULL || sc->insns == NULL
        || kist_seccomp_lets_through (sc->insns, sc->n_insns, wait_syscalls[i], a))
      return (int) i;
  return -1;
}

/* 0 when the parent's GO came; -ECONNRESET when the parent closed without
 * it (it ended, or found the report wrong), another -errno on failure.  Raw
 * syscalls into the stack: exactly the syscall pick_wait checked, no
 * allocation under the filter. */
static int
wait_parent (int how, int fd)
{
  char buf[16];
  for (;;)
    {
      long n;
      struct pollfd p = { .fd = fd, .events = POLLIN };
      struct iovec iov = { .iov_base = buf, .iov_len = sizeof buf };
      struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
      switch (wait_syscalls[how])
        {
        case SYS_recvfrom:
          n = syscall (SYS_recvfrom, fd, buf, sizeof buf, 0, NULL, NULL);
          break;
        case SYS_recvmsg:
          n = syscall (SYS_recvmsg, fd, &msg, 0);
          break;
        case SYS_read:
          n = syscall (SYS_read, fd, buf, sizeof buf);
          break;
        case SYS_ppoll:
          n = syscall (SYS_ppoll, &p, 1, NULL, NULL, (size_t) 8);
          break;
        default:
          n = syscall (SYS_poll, &p, 1, -1);
          break;
        }
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return -errno;
      if (wait_syscalls[how] == SYS_ppoll || wait_syscalls[how] == SYS_poll)
        /* The parent sends nothing but GO after READY. */
        return (p.revents & POLLIN) ? 0 : -ECONNRESET;
      if (n == 0)
        return -ECONNRESET;
      return buf[0] == KIST_SYNC_GO && n == 1 ? 0 : -EPROTO;
    }
}

/* The sweep read back inside, where the container's /proc and the filter
 * (one loaded early) let /proc/self/fd be listed: 1 when nothing above upto
 * is open without close-on-exec, 0 when it cannot be listed, -1 (fd in
 * *leak) when one is.  The parent also verifies from outside (verify.c);
 * a rootless kist cannot list a non-dumpable child's fds, then this is what
 * stands. */
static int
fds_read_back (int upto, long *leak)
{
  int dfd = open ("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR *d = dfd >= 0 ? fdopendir (dfd) : NULL;
  if (d == NULL)
    {
      if (dfd >= 0)
        close (dfd);
      return 0;
    }
  int ret = 1, self = dirfd (d);
  for (struct dirent *de; ret == 1 && (de = readdir (d));)
    {
      if (de->d_name[0] == '.')
        continue;
      long fd = strtol (de->d_name, NULL, 10);
      if (fd <= upto || fd == self)
        continue;
      int fl = fcntl ((int) fd, F_GETFD);
      if (fl >= 0 && !(fl & FD_CLOEXEC))
        {
          *leak = fd;
          ret = -1;
        }
    }
  closedir (d);
  return ret;
}

/* The rest of kist_process_exec after the init's entry: in the command
 * kist's init started (on its own stack), or inline without an init. */
struct exec_rest
{
  struct kist_ctx *ctx;
  struct kist_report *r;
  size_t *sent;
  struct kist_error **err;
  size_t from;
  int64_t t0;
};

static int process_exec_rest (void *arg);

int
kist_process_exec (struct kist_ctx *ctx, struct kist_report *r, size_t *sent,
                   struct kist_error **err)
{
  struct exec_rest a = { .ctx = ctx, .r = r, .sent = sent, .err = err,
                         .from = r ? r->n_layers : 0, .t0 = kist_monotonic_usec () };
  /* With an init, it never returns in the command (which runs the rest and
   * execs) nor in the init (PID 1 until the command ends), only with an
   * error; without one, this process goes on. */
  if (kist_init_fork (ctx, r, process_exec_rest, &a, err) < 0)
    return -1;
  return process_exec_rest (&a);
}

static int
process_exec_rest (void *arg)
{
  const struct exec_rest *a = arg;
  struct kist_ctx *ctx = a->ctx;
  struct kist_report *r = a->r;
  size_t *sent = a->sent;
  struct kist_error **err = a->err;
  size_t from = a->from;
  int64_t t0 = a->t0;
  int fd = ctx->sync_fd;
  /* A sandbox's init dies with its kist; the user switch cleared it. */
  if (ctx->die_with_parent)
    {
      int sig = 0;
      if (prctl (PR_SET_PDEATHSIG, SIGKILL) < 0 || prctl (PR_GET_PDEATHSIG, &sig) < 0)
        return kist_report_failed (r, "parent_death_signal", "SIGKILL", errno, err,
                                   "prctl(PR_SET_PDEATHSIG, SIGKILL): %s", strerror (errno));
      if (sig != SIGKILL)
        return kist_report_failed (r, "parent_death_signal", "SIGKILL", EPROTO, err,
                                   "PR_GET_PDEATHSIG reads back %d, not SIGKILL", sig);
      kist_report_applied (r, "parent_death_signal", "SIGKILL",
                           "the process is killed when the kist that started it exits "
                           "(PR_GET_PDEATHSIG reads back SIGKILL)");
    }
  else
    {
      /* An init that began its start on its own (run) still has the signal
       * its create set until the commit: cleared here, read back (a kist
       * that dies before start's GO leaves the wait below an EOF). */
      int sig = 0;
      if (ctx->start_at_ready
          && (prctl (PR_SET_PDEATHSIG, 0) < 0 || prctl (PR_GET_PDEATHSIG, &sig) < 0 || sig != 0))
        return kist_report_failed (r, "parent_death_signal", "", sig ? EPROTO : errno, err,
                                   "clear the parent-death signal (PR_SET_PDEATHSIG 0): %s",
                                   sig ? "PR_GET_PDEATHSIG still reads a signal"
                                       : strerror (errno));
      kist_report_skip (r, "parent_death_signal",
                        "none: the process outlives the kist command that started it");
    }
  if (ctx->rootfs_fd >= 0)
    {
      close (ctx->rootfs_fd);
      ctx->rootfs_fd = -1; /* the proc lookups below use the process's root */
    }
  const int keep[] = { fd, ctx->exec_fd };
  if (kist_close_fds_except (ctx->preserve_fds, keep, KIST_ARRAY_SIZE (keep), err) < 0)
    return kist_report_failed (r, "fds", "", (*err)->errnum, err, "%s", (*err)->msg);
  {
    /* Verified from outside at READY (verify.c): nothing above `upto` open
     * without close-on-exec. */
    int upto = 2 + (ctx->preserve_fds > 0 ? ctx->preserve_fds : 0);
    _cleanup_free_ char *req
        = ctx->preserve_fds > 0 ? xasprintf ("--preserve-fds %d", ctx->preserve_fds) : NULL;
    long leak = -1;
    int inside = fds_read_back (upto, &leak);
    if (inside < 0)
      return kist_report_failed (r, "fds", req ? req : "", EPROTO, err,
                                 "fd %ld is still open without close-on-exec after the sweep "
                                 "(/proc/self/fd)",
                                 leak);
    kist_report_applied (r, "fds", req ? req : "",
                         "fds 0-%d passed on; every other fd kist held or inherited closed, "
                         "kist's own (the sync socket, the executable) close at the execve%s",
                         upto, inside ? "; read back inside (/proc/self/fd)" : "");
    kist_report_expect (r, "fds", "upto=%d inside=%s", upto, inside ? "ok" : "no");
  }
  ctx->bundle_fd = ctx->state_dirfd = ctx->start_fd = -1;
  /* Closed with the rest: a filter loaded last opens it again, before it. */
  ctx->inside_status.tried = false;
  ctx->inside_status.fd = -1;

  /* Which execve the filter lets through, asked before it is loaded: a
   * filter that kills on execveat must not end the init after READY. */
  bool by_fd = ctx->exec_fd >= 0, by_path = true;
  const struct kist_seccomp *sc = ctx->seccomp;
  if (sc && sc->insns)
    {
      const uint64_t fa[6] = { (uint64_t) ctx->exec_fd, 0, 0, 0, AT_EMPTY_PATH, 0 };
      by_fd = by_fd && kist_seccomp_lets_through (sc->insns, sc->n_insns, SYS_execveat, fa);
      by_path = kist_seccomp_lets_through (sc->insns, sc->n_insns, SYS_execve, NULL);
      if (!by_fd && !by_path)
        {
          kist_error_make (err, EPERM,
                           "exec `%s` in container `%s`: the seccomp profile (%s) allows neither "
                           "execve nor execveat, so the process could never start; allow one of "
                           "them",
                           ctx->exec_path, ctx->id, sc->requested ? sc->requested : "");
          (*err)->status = KIST_EXIT_NOEXEC;
          return -1;
        }
    }
  /* After READY the process waits for the parent's word: the parent reads
   * its /proc/PID files first (verify.c), so that the report is final before
   * the program runs.  The wait must pass the filter too. */
  int how = pick_wait (sc, fd);
  if (how < 0)
    {
      kist_error_make (err, EPERM,
                       "exec `%s` in container `%s`: the seccomp profile (%s) denies every "
                       "syscall kist could wait with after loading it (recvfrom, recvmsg, read, "
                       "ppoll, poll) until its parent verified the report from outside; allow "
                       "one of them",
                       ctx->exec_path, ctx->id, sc && sc->requested ? sc->requested : "");
      return -1;
    }

  /* The filter is the last thing loaded: after it, only the READY packet,
   * the execve and, if that fails, the error packet. */
  int ret = kist_seccomp_apply_last (ctx, r, err);
  kist_report_time_step (r, from, kist_layer_step_of (KIST_PHASE_START, "fds"),
                         kist_monotonic_usec () - t0);
  if (kist_sync_send_layers (fd, r, *sent, sent) < 0 || ret < 0)
    return ret < 0 ? -1 : kist_error_make (err, EPIPE, "send the report entries before execve");
  if (kist_sync_send (fd, KIST_SYNC_READY, NULL, 0) < 0)
    return kist_error_make (err, EPIPE, "send READY before execve");
  /* The parent verifies what it can see from outside (and the start client
   * prints the report) now: the program runs only on its word. */
  int w = wait_parent (how, fd);
  if (w < 0)
    return kist_error_make (err, w == -ECONNRESET ? 0 : -w,
                            "exec `%s` in container `%s`: the parent did not confirm the "
                            "report (it ended, or could not verify it from outside): not "
                            "executed",
                            ctx->exec_path, ctx->id);

  char *const *argv = ctx->spec->process->args;
  int e = ENOENT;
  if (by_fd)
    {
      /* By fd: what was resolved and checked is what runs. */
      syscall (SYS_execveat, ctx->exec_fd, "", argv, ctx->envp, AT_EMPTY_PATH);
      e = errno;
    }
  /* A script run through a close-on-exec fd has no path its interpreter
   * could open (ENOENT), and a filter may allow execve only: run it by the
   * path that was resolved, with no host fd left to reach. */
  if (by_path && (e == ENOENT || e == EPERM || e == ENOSYS || e == EACCES))
    {
      execve (ctx->exec_path, argv, ctx->envp);
      e = errno;
    }
  kist_error_make (err, e, "exec `%s` in container `%s`", ctx->exec_path, ctx->id);
  (*err)->status = (e == ENOENT) ? KIST_EXIT_NOTFOUND : KIST_EXIT_NOEXEC;
  return -1;
}
