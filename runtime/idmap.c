/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: the uid and gid maps of a new user namespace (layers "idmap.uid",
 * "idmap.gid").  Runs in the parent while the child waits: writes
 * /proc/PID/uid_map, setgroups ("deny" when kist is not root), gid_map, and
 * reads both maps back.
 *
 * Without privilege the kernel accepts only one map entry: the caller's own
 * id, size 1.  Any other map of an unprivileged caller goes through the
 * setuid helpers newuidmap/newgidmap (shadow's uidmap package), which check
 * the ranges against /etc/subuid and /etc/subgid.  That is one fork+execve
 * of a fixed absolute path, with an empty environment, per map: the kernel
 * offers no other way to multi-range maps for an unprivileged user (runc and
 * crun do the same). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "caps.h"
#include "layer.h"
#include "spec.h"
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

/* The setuid helper (newuidmap or newgidmap) at a fixed absolute path, or
 * NULL when it is not installed.  Never looked up in $PATH. */
static const char *
find_helper (const char *name)
{
  static const char *const dirs[] = { "/usr/bin", "/bin" };
  static char found[2][32];
  int slot = strcmp (name, "newuidmap") == 0 ? 0 : 1;
  for (size_t i = 0; i < KIST_ARRAY_SIZE (dirs); i++)
    {
      snprintf (found[slot], sizeof found[slot], "%s/%s", dirs[i], name);
      struct stat st;
      if (stat (found[slot], &st) == 0 && S_ISREG (st.st_mode))
        return found[slot];
    }
  return NULL;
}

/* The caller's user name (or its number when it has none), for messages. */
static char *
caller_name (void)
{
  struct passwd *pw = getpwuid (geteuid ());
  if (pw && pw->pw_name)
    return xstrdup (pw->pw_name);
  return xasprintf ("%u", (unsigned) geteuid ());
}

/* Run `HELPER PID cid hid size ...` with an empty environment, stdin and
 * stdout on /dev/null, stderr captured.  Returns 0, or an errno value with
 * *why saying what went wrong (the helper's own complaint when it has one). */
static int
run_helper (const char *helper, pid_t pid, const struct kist_idmap *m, size_t n, char **why)
{
  const char *base = strrchr (helper, '/') + 1;
  size_t argc = 2 + 3 * n;
  _cleanup_strv_ char **argv = xcalloc (argc + 1, sizeof (char *));
  argv[0] = xstrdup (base);
  argv[1] = xasprintf ("%d", (int) pid);
  for (size_t i = 0; i < n; i++)
    {
      argv[2 + 3 * i] = xasprintf ("%" PRIu32, m[i].container_id);
      argv[3 + 3 * i] = xasprintf ("%" PRIu32, m[i].host_id);
      argv[4 + 3 * i] = xasprintf ("%" PRIu32, m[i].size);
    }
  char *const envp[] = { NULL };

  _cleanup_close_ int devnull = open ("/dev/null", O_RDWR | O_CLOEXEC);
  if (devnull < 0)
    {
      int e = errno;
      *why = xasprintf ("open /dev/null: %s", strerror (e));
      return e;
    }
  int p[2];
  if (pipe2 (p, O_CLOEXEC) < 0)
    {
      int e = errno;
      *why = xasprintf ("pipe: %s", strerror (e));
      return e;
    }
  _cleanup_close_ int rd = p[0];
  _cleanup_close_ int wr = p[1];

  pid_t child = fork ();
  if (child < 0)
    {
      int e = errno;
      *why = xasprintf ("fork for %s: %s", helper, strerror (e));
      return e;
    }
  if (child == 0)
    {
      /* Only async-signal-safe calls from here on.  dup2 clears O_CLOEXEC
       * on the targets; every other fd of kist is O_CLOEXEC. */
      sigset_t all;
      sigemptyset (&all);
      sigprocmask (SIG_SETMASK, &all, NULL);
      if (dup2 (devnull, 0) < 0 || dup2 (devnull, 1) < 0 || dup2 (wr, 2) < 0)
        _exit (127);
      execve (helper, argv, envp);
      static const char msg[] = "cannot execute the helper\n";
      (void) !write (2, msg, sizeof msg - 1);
      _exit (127);
    }
  close (steal_fd (&wr));

  char buf[2048];
  size_t len = 0;
  for (;;)
    {
      ssize_t k = read (rd, buf + len, sizeof buf - 1 - len);
      if (k < 0 && errno == EINTR)
        continue;
      if (k <= 0)
        break;
      len += (size_t) k;
      if (len == sizeof buf - 1)
        {
          /* Drain the rest so that the helper never blocks on a full pipe. */
          char sink[512];
          while (read (rd, sink, sizeof sink) > 0 || errno == EINTR)
            ;
          break;
        }
    }
  buf[len] = '\0';
  kist_rstrip (buf);
  for (char *c = buf; *c; c++)
    if (*c == '\n')
      *c = ' ';

  int status = 0;
  pid_t w;
  while ((w = waitpid (child, &status, 0)) < 0 && errno == EINTR)
    ;
  if (w < 0)
    {
      int e = errno;
      *why = xasprintf ("waiting for %s: %s", helper, strerror (e));
      return e;
    }
  if (WIFEXITED (status) && WEXITSTATUS (status) == 0)
    return 0;
  _cleanup_free_ char *how = WIFEXITED (status)
                                 ? xasprintf ("exit status %d", WEXITSTATUS (status))
                                 : xasprintf ("killed by signal %d", WTERMSIG (status));
  _cleanup_free_ char *args = kist_idmap_requested (m, n);
  *why = xasprintf ("`%s %d` for %s failed (%s)%s%s", base, (int) pid, args, how,
                    buf[0] ? ": " : " without a message", buf);
  return EPERM;
}

/* Write one map file of /proc/PID (procfd), either directly in a single
 * write or, when helper is set, with the setuid helper; then read it back
 * and record the layer. */
static int
write_map (struct kist_report *r, int procfd, pid_t pid, const char *layer, const char *file,
           const char *config_path, const struct kist_idmap *m, size_t n, const char *helper,
           const char *note, const char *extra, struct kist_error **err)
{
  bool uid = strcmp (file, "uid_map") == 0;
  _cleanup_free_ char *requested = kist_idmap_requested (m, n);
  if (n == 0)
    return kist_report_failed (
        r, layer, "", EINVAL, err,
        "the config asks for a new user namespace but %s is empty or "
        "missing; add e.g. {\"containerID\": 0, \"hostID\": %u, "
        "\"size\": 1}",
        config_path, uid ? (unsigned) geteuid () : (unsigned) getegid ());

  const char *writer = "the parent";
  if (helper)
    {
      _cleanup_free_ char *why = NULL;
      int e = run_helper (helper, pid, m, n, &why);
      if (e != 0)
        {
          _cleanup_free_ char *user = caller_name ();
          const char *db = uid ? "/etc/subuid" : "/etc/subgid";
          return kist_report_failed (
              r, layer, requested, e, err,
              "%s (%s): %s; an unprivileged caller may map only its own %s (%u, size 1) "
              "or ranges listed for it in %s: add a range for %s to %s (e.g. `%s:100000:65536`) "
              "and install the uidmap package",
              helper, config_path, why, uid ? "uid" : "gid",
              uid ? (unsigned) geteuid () : (unsigned) getegid (), db, user, db, user);
        }
      writer = strrchr (helper, '/') + 1;
    }
  else
    {
      _cleanup_free_ char *text = kist_idmap_format (m, n);
      _cleanup_close_ int fd = openat (procfd, file, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
      if (fd < 0)
        {
          int e = errno;
          return kist_report_failed (r, layer, requested, e, err, "open /proc/%d/%s: %s",
                                     (int) pid, file, strerror (e));
        }
      ssize_t w = write (fd, text, strlen (text));
      if (w < 0 || (size_t) w != strlen (text))
        {
          int e = w < 0 ? errno : EIO;
          const char *hint = "";
          if (e == EPERM)
            hint = geteuid () == 0 ? " (the host ids must be mapped in kist's own user namespace)"
                                   : " (without privilege kist can map only its own id, once, "
                                     "with setgroups denied; wider maps need newuidmap and "
                                     "newgidmap from the uidmap package)";
          else if (e == EINVAL)
            hint = " (entries overlap, a size is 0, a range overflows, or there are more than "
                   "340)";
          return kist_report_failed (r, layer, requested, e, err, "write /proc/%d/%s (%s): %s%s",
                                     (int) pid, file, config_path, strerror (e), hint);
        }
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
                               "/proc/%d/%s reads back `%s`, not what was written by %s",
                               (int) pid, file, got_text, writer);

  kist_report_applied (r, layer, requested, "written by %s; read back %s%s%s%s", writer, got_text,
                       note ? note : "", extra ? "; " : "", extra ? extra : "");
  return 0;
}

/* Which way a map goes: NULL (write it directly) or the helper's path.
 * Root writes any map itself; without privilege the kernel takes only the
 * caller's own id, size 1.  *missing is set when the helper is needed but
 * not installed. */
static const char *
map_writer (const struct kist_idmap *m, size_t n, uint32_t self, const char *name, bool *missing)
{
  *missing = false;
  if (geteuid () == 0 || n == 0 || (n == 1 && m[0].size == 1 && m[0].host_id == self))
    return NULL;
  const char *h = find_helper (name);
  if (h == NULL)
    *missing = true;
  return h;
}

static int
helper_missing (struct kist_report *r, const char *layer, const char *config_path,
                const struct kist_idmap *m, size_t n, const char *name, bool uid,
                struct kist_error **err)
{
  _cleanup_free_ char *requested = kist_idmap_requested (m, n);
  _cleanup_free_ char *user = caller_name ();
  return kist_report_failed (r, layer, requested, ENOENT, err,
                             "%s maps more than the caller's own %s (%u, size 1), which needs the "
                             "setuid helper %s, not found in /usr/bin or /bin: install the uidmap "
                             "package and add a range for %s to %s, or map only the caller's %s",
                             config_path, uid ? "uid" : "gid",
                             uid ? (unsigned) geteuid () : (unsigned) getegid (), name, user,
                             uid ? "/etc/subuid" : "/etc/subgid", uid ? "uid" : "gid");
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
  /* The caller may say why it chose the maps (kist sandbox does). */
  const char *extra = kist_spec_annotation (ctx->spec, KIST_IDMAP_NOTE_ANNOTATION);

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

  bool missing;
  const char *uhelper = map_writer (l->uid_mappings, l->n_uid_mappings, (uint32_t) geteuid (),
                                    "newuidmap", &missing);
  int ret;
  if (missing)
    ret = helper_missing (r, "idmap.uid", "linux.uidMappings", l->uid_mappings,
                          l->n_uid_mappings, "newuidmap", true, err);
  else
    ret = write_map (r, procfd, ctx->pid, "idmap.uid", "uid_map", "linux.uidMappings",
                     l->uid_mappings, l->n_uid_mappings, uhelper, NULL, extra, err);
  if (ret < 0)
    return ret;

  const char *ghelper = map_writer (l->gid_mappings, l->n_gid_mappings, (uint32_t) getegid (),
                                    "newgidmap", &missing);
  if (missing)
    return helper_missing (r, "idmap.gid", "linux.gidMappings", l->gid_mappings,
                           l->n_gid_mappings, "newgidmap", false, err);

  /* Without privilege the kernel accepts a gid_map only after setgroups is
   * denied; as root we keep setgroups usable (process.user.additionalGids).
   * newgidmap handles setgroups itself. */
  const char *note = NULL;
  if (geteuid () != 0 && ghelper == NULL)
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
                    l->gid_mappings, l->n_gid_mappings, ghelper, note, extra, err);
}
