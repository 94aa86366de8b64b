/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: the Landlock layer (landlock.h).  Raw syscalls: the system headers
 * may be older than the kernel, so the constants of later ABIs are defined
 * here, and the ruleset asks only for what the kernel's ABI knows (the
 * kernel documentation's best-effort pattern), saying in the detail what an
 * older ABI could not enforce.
 *
 * Verification: Landlock has no read-back of a domain (no /proc line), so
 * the layer proves it by doing, right before and right after
 * landlock_restrict_self, operations the ruleset denies and nothing else
 * does: the same call working before and failing with Landlock's errno after
 * can only be the new domain.  All of it happens before any seccomp filter
 * (the row stands before the seccomp rows), in the process itself:
 *   - fs:   mkdir in the rules' probe directory (rights without MAKE_DIR,
 *           where the file system allows it): EACCES;
 *   - tcp:  bind of a TCP socket to 127.0.0.1:0 (deny_tcp, ABI >= 4): EACCES;
 *   - unix: connect to an abstract unix socket bound before the restriction,
 *           outside the new domain (scope, ABI >= 6): EPERM.
 * A probe that worked after the restriction fails the layer; at least one
 * must show the domain in force. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <linux/landlock.h>
#include <linux/openat2.h>

#include "landlock.h"
#include "layer.h"
#include "report.h"
#include "resolve.h"
#include "seccomp.h"
#include "util.h"

#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER (1ULL << 13)
#endif
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15)
#endif
#ifndef LANDLOCK_RULE_NET_PORT
#define LANDLOCK_RULE_NET_PORT 2
#endif
#ifndef LANDLOCK_ACCESS_NET_BIND_TCP
#define LANDLOCK_ACCESS_NET_BIND_TCP (1ULL << 0)
#endif
#ifndef LANDLOCK_ACCESS_NET_CONNECT_TCP
#define LANDLOCK_ACCESS_NET_CONNECT_TCP (1ULL << 1)
#endif
#ifndef LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
#define LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#endif
#ifndef LANDLOCK_SCOPE_SIGNAL
#define LANDLOCK_SCOPE_SIGNAL (1ULL << 1)
#endif
#ifndef LANDLOCK_RESTRICT_SELF_LOG_SAME_EXEC_OFF
#define LANDLOCK_RESTRICT_SELF_LOG_SAME_EXEC_OFF (1U << 0) /* ABI 7 */
#endif

_Static_assert (KIST_LL_FS_EXECUTE == LANDLOCK_ACCESS_FS_EXECUTE, "UAPI");
_Static_assert (KIST_LL_FS_WRITE_FILE == LANDLOCK_ACCESS_FS_WRITE_FILE, "UAPI");
_Static_assert (KIST_LL_FS_READ_FILE == LANDLOCK_ACCESS_FS_READ_FILE, "UAPI");
_Static_assert (KIST_LL_FS_READ_DIR == LANDLOCK_ACCESS_FS_READ_DIR, "UAPI");
_Static_assert (KIST_LL_FS_REMOVE_FILE == LANDLOCK_ACCESS_FS_REMOVE_FILE, "UAPI");
_Static_assert (KIST_LL_FS_MAKE_DIR == LANDLOCK_ACCESS_FS_MAKE_DIR, "UAPI");
_Static_assert (KIST_LL_FS_MAKE_REG == LANDLOCK_ACCESS_FS_MAKE_REG, "UAPI");
_Static_assert (KIST_LL_FS_REFER == LANDLOCK_ACCESS_FS_REFER, "UAPI");
_Static_assert (KIST_LL_FS_TRUNCATE == LANDLOCK_ACCESS_FS_TRUNCATE, "UAPI");
_Static_assert (KIST_LL_FS_IOCTL_DEV == LANDLOCK_ACCESS_FS_IOCTL_DEV, "UAPI");

/* struct landlock_ruleset_attr of ABI 6 (the system's may stop at
 * handled_access_fs); the kernel takes the size given and checks that what
 * it does not know is zero. */
struct ll_ruleset_attr
{
  uint64_t handled_access_fs;
  uint64_t handled_access_net; /* ABI 4 */
  uint64_t scoped;             /* ABI 6 */
};

/* The rights a non-directory can carry (the kernel refuses the others). */
#define LL_FILE_RIGHTS                                                                             \
  (KIST_LL_FS_EXECUTE | KIST_LL_FS_WRITE_FILE | KIST_LL_FS_READ_FILE | KIST_LL_FS_TRUNCATE        \
   | KIST_LL_FS_IOCTL_DEV)

/* ---------------------------------------------------------------- rules */

void
kist_landlock_rules_free (struct kist_landlock_rules *r)
{
  if (r == NULL)
    return;
  for (size_t i = 0; i < r->n_paths; i++)
    free (r->paths[i].path);
  free (r->paths);
  free (r);
}

struct kist_landlock_path *
kist_landlock_rules_add (struct kist_landlock_rules *r, const char *path, bool write, bool optional)
{
  r->paths = xrealloc (r->paths, (r->n_paths + 1) * sizeof *r->paths);
  struct kist_landlock_path *p = &r->paths[r->n_paths++];
  *p = (struct kist_landlock_path){ .path = xstrdup (path), .write = write, .optional = optional };
  return p;
}

uint64_t
kist_landlock_fs_rights (int abi)
{
  if (abi < 1)
    return 0;
  uint64_t a = (1ULL << 13) - 1; /* ABI 1: EXECUTE .. MAKE_SYM */
  if (abi >= 2)
    a |= KIST_LL_FS_REFER;
  if (abi >= 3)
    a |= KIST_LL_FS_TRUNCATE;
  if (abi >= 5)
    a |= KIST_LL_FS_IOCTL_DEV;
  return a;
}

uint64_t
kist_landlock_access_for (const struct kist_landlock_path *p, int abi, bool is_dir)
{
  uint64_t a = p->access ? p->access : p->write ? kist_landlock_fs_rights (abi) : KIST_LL_FS_READ;
  a &= kist_landlock_fs_rights (abi);
  return is_dir ? a : a & LL_FILE_RIGHTS;
}

uint64_t
kist_landlock_net_rights (const struct kist_landlock_rules *r, int abi)
{
  return r->deny_tcp && abi >= 4 ? LANDLOCK_ACCESS_NET_BIND_TCP | LANDLOCK_ACCESS_NET_CONNECT_TCP
                                 : 0;
}

uint64_t
kist_landlock_scopes (const struct kist_landlock_rules *r, int abi)
{
  return r->scope && abi >= 6 ? LANDLOCK_SCOPE_SIGNAL | LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET : 0;
}

static const struct
{
  uint64_t bit;
  const char *name;
} fs_names[] = {
  { 1ULL << 0, "execute" },      { 1ULL << 1, "write_file" },  { 1ULL << 2, "read_file" },
  { 1ULL << 3, "read_dir" },     { 1ULL << 4, "remove_dir" },  { 1ULL << 5, "remove_file" },
  { 1ULL << 6, "make_char" },    { 1ULL << 7, "make_dir" },    { 1ULL << 8, "make_reg" },
  { 1ULL << 9, "make_sock" },    { 1ULL << 10, "make_fifo" },  { 1ULL << 11, "make_block" },
  { 1ULL << 12, "make_sym" },    { 1ULL << 13, "refer" },      { 1ULL << 14, "truncate" },
  { 1ULL << 15, "ioctl_dev" },
};

char *
kist_landlock_access_name (uint64_t access, int abi)
{
  uint64_t all = kist_landlock_fs_rights (abi);
  access &= all;
  /* A rule of a file carries only the file rights. */
  if (access == all || access == (all & LL_FILE_RIGHTS))
    return xstrdup ("rw");
  char *s = NULL;
  uint64_t rest = access;
  if ((access & (KIST_LL_FS_EXECUTE | KIST_LL_FS_READ_FILE))
      == (KIST_LL_FS_EXECUTE | KIST_LL_FS_READ_FILE))
    {
      s = xstrdup ("ro");
      rest &= ~KIST_LL_FS_READ;
    }
  for (size_t i = 0; i < KIST_ARRAY_SIZE (fs_names); i++)
    if (rest & fs_names[i].bit)
      {
        char *n = xasprintf ("%s%s%s", s ? s : "", s ? "+" : "", fs_names[i].name);
        free (s);
        s = n;
      }
  return s ? s : xstrdup ("none");
}

int
kist_landlock_abi (void)
{
  long v = syscall (SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
  return v < 0 ? -errno : (int) v;
}

/* ---------------------------------------------------------------- detail */

/* The rules as the detail lists them: "ro / /usr; rw /work /tmp; ro+write_file /dev". */
struct ll_text
{
  char *groups;      /* "ro / /usr; rw /work" */
  char *skipped;     /* optional paths that were missing, or NULL */
  size_t n_rules;
};

static void
text_add (char **s, const char *sep, const char *add)
{
  char *n = xasprintf ("%s%s%s", *s ? *s : "", *s ? sep : "", add);
  free (*s);
  *s = n;
}

static void
ll_text_clear (struct ll_text *t)
{
  free (t->groups);
  free (t->skipped);
}

/* One "NAME p1 p2" group per distinct name of the rights, in the order of
 * first use. */
static void
ll_text_groups (struct ll_text *t, const struct kist_landlock_rules *rules,
                const uint64_t *access, int abi)
{
  _cleanup_strv_ char **names = xcalloc (rules->n_paths + 1, sizeof *names);
  for (size_t i = 0; i < rules->n_paths; i++)
    names[i] = kist_landlock_access_name (access[i], abi);
  for (size_t i = 0; i < rules->n_paths; i++)
    {
      bool seen = access[i] == 0;
      for (size_t j = 0; j < i && !seen; j++)
        seen = access[j] != 0 && strcmp (names[j], names[i]) == 0;
      if (seen)
        continue;
      _cleanup_free_ char *g = xstrdup (names[i]);
      for (size_t j = i; j < rules->n_paths; j++)
        if (access[j] != 0 && strcmp (names[j], names[i]) == 0)
          text_add (&g, " ", rules->paths[j].path);
      text_add (&t->groups, "; ", g);
    }
}

/* ---------------------------------------------------------------- probes */

enum probe_state
{
  PROBE_NOT_RUN,    /* not asked for, or the ABI has no such right */
  PROBE_UNAVAILABLE, /* the operation failed before the restriction: it cannot tell */
  PROBE_READY,      /* worked before the restriction */
  PROBE_DENIED,     /* worked before, denied with Landlock's errno after: in force */
  PROBE_ALLOWED,    /* worked after the restriction too: not in force */
  PROBE_ODD,        /* failed after with another errno */
};

struct probe
{
  const char *what; /* "mkdir in /dev/shm" */
  enum probe_state state;
  int errnum;       /* UNAVAILABLE, ODD: what the call gave */
  int want;         /* the errno Landlock gives */
};

struct probes
{
  struct probe fs, tcp, unx;
  int fs_dir;              /* O_PATH fd of the probe dir, or -1 */
  char fs_name[48];
  char *fs_what;
  int unix_listen;         /* the socket bound before the restriction, or -1 */
  struct sockaddr_un unix_addr;
  socklen_t unix_len;
};

static void
probe_done (struct probe *p, int ret)
{
  if (ret == 0)
    p->state = PROBE_ALLOWED;
  else if (errno == p->want)
    p->state = PROBE_DENIED;
  else
    {
      p->state = PROBE_ODD;
      p->errnum = errno;
    }
}

static void
probe_before (struct probe *p, int ret)
{
  p->state = ret == 0 ? PROBE_READY : PROBE_UNAVAILABLE;
  p->errnum = ret == 0 ? 0 : errno;
}

static int
fs_mkdir (struct probes *pr)
{
  return mkdirat (pr->fs_dir, pr->fs_name, 0700);
}

static int
tcp_bind (void)
{
  _cleanup_close_ int s = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0)
    return -1;
  struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = 0,
                           .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
  return bind (s, (struct sockaddr *) &a, sizeof a);
}

static int
unix_connect (struct probes *pr)
{
  _cleanup_close_ int s = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0)
    return -1;
  return connect (s, (struct sockaddr *) &pr->unix_addr, pr->unix_len);
}

static void
probes_before (struct probes *pr, bool tcp, bool unx)
{
  uint32_t rnd = 0;
  if (getrandom (&rnd, sizeof rnd, GRND_NONBLOCK) != (ssize_t) sizeof rnd)
    rnd = (uint32_t) getpid () ^ (uint32_t) time (NULL);
  if (pr->fs_dir >= 0)
    {
      snprintf (pr->fs_name, sizeof pr->fs_name, ".kist-landlock-probe.%08x", rnd);
      probe_before (&pr->fs, fs_mkdir (pr));
      if (pr->fs.state == PROBE_READY && unlinkat (pr->fs_dir, pr->fs_name, AT_REMOVEDIR) < 0)
        probe_before (&pr->fs, -1);
    }
  if (tcp)
    probe_before (&pr->tcp, tcp_bind ());
  if (unx)
    {
      pr->unix_addr.sun_family = AF_UNIX;
      int n = snprintf (pr->unix_addr.sun_path + 1, sizeof pr->unix_addr.sun_path - 1,
                        "kist-landlock-probe.%d.%08x", (int) getpid (), rnd);
      pr->unix_len = (socklen_t) (offsetof (struct sockaddr_un, sun_path) + 1 + (size_t) n);
      pr->unix_listen = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
      int ret = pr->unix_listen < 0 ? -1 : 0;
      if (ret == 0)
        ret = bind (pr->unix_listen, (struct sockaddr *) &pr->unix_addr, pr->unix_len);
      if (ret == 0)
        ret = listen (pr->unix_listen, 4);
      if (ret == 0)
        ret = unix_connect (pr);
      probe_before (&pr->unx, ret);
    }
}

static void
probes_after (struct probes *pr)
{
  if (pr->fs.state == PROBE_READY)
    {
      int ret = fs_mkdir (pr);
      probe_done (&pr->fs, ret);
      if (ret == 0)
        unlinkat (pr->fs_dir, pr->fs_name, AT_REMOVEDIR);
    }
  if (pr->tcp.state == PROBE_READY)
    probe_done (&pr->tcp, tcp_bind ());
  if (pr->unx.state == PROBE_READY)
    probe_done (&pr->unx, unix_connect (pr));
}

static void
probes_clear (struct probes *pr)
{
  if (pr->fs_dir >= 0)
    close (pr->fs_dir);
  if (pr->unix_listen >= 0)
    close (pr->unix_listen);
  pr->fs_dir = pr->unix_listen = -1;
  free (pr->fs_what);
  pr->fs_what = NULL;
}

/* "mkdir in /dev/shm denied (EACCES; allowed before)" and the like, "; "
 * separated, into *text; the first probe that disproves the domain, or
 * NULL. */
static const struct probe *
probes_text (const struct probes *pr, char **text, bool *proven)
{
  const struct probe *all[] = { &pr->fs, &pr->tcp, &pr->unx };
  const struct probe *bad = NULL;
  *proven = false;
  for (size_t i = 0; i < KIST_ARRAY_SIZE (all); i++)
    {
      const struct probe *p = all[i];
      _cleanup_free_ char *s = NULL;
      switch (p->state)
        {
        case PROBE_NOT_RUN:
        case PROBE_READY:
          continue;
        case PROBE_UNAVAILABLE:
          s = xasprintf ("%s not tried (%s before the restriction)", p->what,
                         strerrorname_np (p->errnum) ?: "?");
          break;
        case PROBE_DENIED:
          s = xasprintf ("%s denied (%s; allowed before)", p->what, strerrorname_np (p->want));
          *proven = true;
          break;
        case PROBE_ALLOWED:
          s = xasprintf ("%s still allowed after landlock_restrict_self", p->what);
          bad = bad ? bad : p;
          break;
        case PROBE_ODD:
          s = xasprintf ("%s failed with %s, not Landlock's %s", p->what,
                         strerrorname_np (p->errnum) ?: "?", strerrorname_np (p->want));
          bad = bad ? bad : p;
          break;
        }
      text_add (text, "; ", s);
    }
  return bad;
}

/* ---------------------------------------------------------------- the layer */

static const char *
no_landlock_why (int e)
{
  if (e == ENOSYS)
    return "this kernel has no Landlock (landlock_create_ruleset: ENOSYS; Linux >= 5.13 built "
           "with CONFIG_SECURITY_LANDLOCK)";
  if (e == EOPNOTSUPP)
    return "Landlock is built in but disabled at boot (landlock_create_ruleset: EOPNOTSUPP; add "
           "landlock to the kernel's lsm= parameter)";
  return "landlock_create_ruleset(LANDLOCK_CREATE_RULESET_VERSION) failed";
}

/* The rules into ruleset fd rfd: every path opened O_PATH (symlinks
 * followed, magic links refused).  access[i]: what path i got (0: skipped).
 * The probe directory's fd goes to pr->fs_dir.  0, or 1 when a failure was
 * recorded and may degrade, or negative with *err. */
static int
add_fs_rules (int rfd, const struct kist_landlock_rules *rules, int abi, uint64_t *access,
              struct ll_text *t, struct probes *pr, struct kist_report *r, struct kist_error **err)
{
  for (size_t i = 0; i < rules->n_paths; i++)
    {
      const struct kist_landlock_path *p = &rules->paths[i];
      _cleanup_close_ int fd = kist_openat2 (AT_FDCWD, p->path, O_PATH, 0, RESOLVE_NO_MAGICLINKS);
      if (fd < 0 && fd == -ENOENT && p->optional)
        {
          text_add (&t->skipped, " ", p->path);
          continue;
        }
      struct stat st;
      if (fd < 0 || fstat (fd, &st) < 0)
        {
          int e = fd < 0 ? -fd : errno;
          int rf = kist_report_failed (r, "landlock", "", e, err,
                                     "cannot open `%s` for its rule (O_PATH, no magic links): %s; "
                                     "the sandbox names it (--ro, --rw, --tmpfs or its own paths)",
                                     p->path, strerror (e));
          return rf < 0 ? rf : 1;
        }
      access[i] = kist_landlock_access_for (p, abi, S_ISDIR (st.st_mode));
      if (access[i] == 0)
        continue;
      struct landlock_path_beneath_attr pb = { .allowed_access = access[i], .parent_fd = fd };
      if (syscall (SYS_landlock_add_rule, rfd, LANDLOCK_RULE_PATH_BENEATH, &pb, 0) < 0)
        {
          int e = errno;
          _cleanup_free_ char *name = kist_landlock_access_name (access[i], abi);
          int rf = kist_report_failed (r, "landlock", "", e, err,
                                       "landlock_add_rule for `%s` (%s): %s", p->path, name,
                                       strerror (e));
          return rf < 0 ? rf : 1;
        }
      t->n_rules++;
      if (p->probe && S_ISDIR (st.st_mode) && pr->fs_dir < 0
          && !(access[i] & KIST_LL_FS_MAKE_DIR))
        {
          pr->fs_dir = steal_fd (&fd);
          pr->fs_what = xasprintf ("mkdir in %s", p->path);
          pr->fs.what = pr->fs_what;
        }
    }
  return 0;
}

int
kist_landlock_apply (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err)
{
  const char *layer = "landlock";
  const struct kist_landlock_rules *rules = ctx->landlock;
  if (rules == NULL)
    {
      kist_report_skip (r, layer, "not requested (kist sandbox only)");
      return 0;
    }
  int abi = kist_landlock_abi ();
  if (abi < 0)
    return kist_report_failed (r, layer, "", -abi, err, "%s", no_landlock_why (-abi));
  for (size_t i = 0; i < rules->n_paths && abi < 2; i++)
    if (rules->paths[i].write)
      return kist_report_failed (r, layer, "", EOPNOTSUPP, err,
                                 "Landlock ABI %d denies every rename or link across "
                                 "directories, also in the writable paths (LANDLOCK_ACCESS_FS_"
                                 "REFER needs ABI 2, Linux >= 5.19)",
                                 abi);
  const int sys[] = { SYS_landlock_create_ruleset, SYS_landlock_add_rule,
                      SYS_landlock_restrict_self };
  for (size_t i = 0; i < KIST_ARRAY_SIZE (sys); i++)
    if (!kist_inside_allows (ctx, sys[i], NULL))
      return kist_report_failed (r, layer, "", EPERM, err,
                                 "the seccomp filter loaded before this layer denies the "
                                 "Landlock syscalls");

  struct ll_ruleset_attr attr = { .handled_access_fs = kist_landlock_fs_rights (abi),
                                  .handled_access_net = kist_landlock_net_rights (rules, abi),
                                  .scoped = kist_landlock_scopes (rules, abi) };
  size_t attr_size = abi >= 6 ? sizeof attr : abi >= 4 ? 2 * sizeof (uint64_t) : sizeof (uint64_t);
  _cleanup_close_ int rfd = (int) syscall (SYS_landlock_create_ruleset, &attr, attr_size, 0);
  if (rfd < 0)
    {
      int e = errno;
      return kist_report_failed (r, layer, "", e, err, "landlock_create_ruleset (ABI %d): %s",
                                 abi, strerror (e));
    }
  /* Everything the exit frees is set before the first goto. */
  _cleanup_free_ uint64_t *access = xcalloc (rules->n_paths + 1, sizeof *access);
  _cleanup_free_ char *ptext = NULL, *net = NULL, *scope = NULL;
  struct ll_text t = { 0 };
  struct probes pr = { .fs = { .want = EACCES }, .tcp = { .what = "TCP bind 127.0.0.1:0",
                                                          .want = EACCES },
                       .unx = { .what = "connect to an abstract unix socket bound outside the "
                                        "domain",
                                .want = EPERM },
                       .fs_dir = -1, .unix_listen = -1 };
  int ret = add_fs_rules (rfd, rules, abi, access, &t, &pr, r, err);
  if (ret != 0)
    {
      ret = ret < 0 ? ret : 0;
      goto out;
    }

  probes_before (&pr, attr.handled_access_net != 0, attr.scoped != 0);
  /* ABI 7 audits denials; the probes' own, made by kist before the exec,
   * are not worth an audit record each, the command's are. */
  unsigned flags = abi >= 7 ? LANDLOCK_RESTRICT_SELF_LOG_SAME_EXEC_OFF : 0;
  if (syscall (SYS_landlock_restrict_self, rfd, flags) < 0)
    {
      int e = errno;
      bool nnp = prctl (PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1;
      ret = kist_report_failed (r, layer, "", e, err, "landlock_restrict_self: %s%s",
                                strerror (e),
                                e == EPERM && !nnp ? " (it needs no_new_privileges or "
                                                     "CAP_SYS_ADMIN)"
                                                   : "");
      goto out;
    }
  probes_after (&pr);

  bool proven = false;
  const struct probe *bad = probes_text (&pr, &ptext, &proven);
  if (bad || !proven)
    {
      ret = kist_report_failed (r, layer, "", bad ? EPROTO : ENODATA, err,
                                "the domain is not shown in force: %s",
                                ptext ? ptext : "no probe could run");
      goto out;
    }
  ll_text_groups (&t, rules, access, abi);
  net = attr.handled_access_net ? xstrdup ("tcp bind+connect denied")
        : rules->deny_tcp ? xasprintf ("tcp not restricted (ABI %d < 4)", abi)
                          : xstrdup ("tcp not restricted (network shared)");
  scope = attr.scoped ? xstrdup ("scoped: signal, abstract unix")
        : rules->scope ? xasprintf ("not scoped (ABI %d < 6)", abi) : xstrdup ("not scoped");
  kist_report_applied (r, layer, "", "ABI %d; fs: %zu rules (%s)%s%s; %s; %s; probes: %s", abi,
                       t.n_rules, t.groups ? t.groups : "none",
                       t.skipped ? "; missing, skipped: " : "", t.skipped ? t.skipped : "", net,
                       scope, ptext);
  ret = 0;
out:
  probes_clear (&pr);
  ll_text_clear (&t);
  return ret;
}
