/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: the Landlock fallback of kist sandbox (kist-sandbox(8), FALLBACK).
 *
 * Where an unprivileged caller cannot make a user namespace (a sysctl
 * restricts them, or a seccomp filter of its own container denies unshare),
 * and only when the caller allows it (--fallback landlock, or
 * --allow-degraded naming every namespace.* the sandbox would have), the
 * sandbox runs without any namespace: in the host's root, as the caller,
 * confined by Landlock (/ read-only, the scratch dir and --rw writable),
 * the seccomp profile, rlimits, a new session, a cleared environment,
 * no_new_privileges and no capabilities, with kist's init as a child
 * subreaper that kills whatever is left.  Weaker than the namespaced
 * sandbox, and the report says so: every namespace.* entry the sandbox would
 * have had is requested and not applied, with why and what replaced it.
 *
 * The lifecycle is the same (kist_create, start, delete): the rows of the
 * registry that need a mount namespace of their own (KIST_NEEDS_MOUNT_NS)
 * are not run; kist_fallback_row records their entries instead. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "caps.h"
#include "json.h"
#include "landlock.h"
#include "layer.h"
#include "ns.h"
#include "sandbox.h"
#include "spec.h"
#include "util.h"

void
kist_sandbox_fallback_clear (struct kist_sandbox_fallback *fb)
{
  free (fb->why);
  free (fb->replaced);
  memset (fb, 0, sizeof *fb);
}

int
kist_sandbox_userns_probe (void)
{
  pid_t pid = fork ();
  if (pid < 0)
    return errno;
  if (pid == 0)
    {
      /* CLONE_NEWNS too: under kernel.apparmor_restrict_unprivileged_userns
       * the user namespace is made, but without the capabilities a mount
       * namespace in it needs. */
      if (unshare (CLONE_NEWUSER | CLONE_NEWNS) == 0)
        _exit (0);
      _exit (errno > 0 && errno < 256 ? errno : EPERM);
    }
  int st = 0;
  while (waitpid (pid, &st, 0) < 0)
    if (errno != EINTR)
      return errno;
  if (WIFEXITED (st))
    return WEXITSTATUS (st);
  return EPROTO;
}

/* An option the fallback cannot honour. */
static int
refuse (struct kist_error **err, const char *opt, const char *why)
{
  kist_error_make (err, EINVAL,
                   "%s: not available in the Landlock fallback (%s); the fallback runs without "
                   "namespaces, in the host's root, as the caller",
                   opt, why);
  (*err)->status = KIST_EXIT_FAILURE;
  return -1;
}

int
kist_sandbox_fallback_check (const struct kist_sandbox_opts *o, bool uid_set, bool gid_set,
                             bool hostname_set, struct kist_error **err)
{
  if (o->workspace)
    return refuse (err, "--workspace", "its overlay needs a mount namespace");
  if (o->rootfs)
    return refuse (err, "--rootfs", "the root is the host's, read-only through Landlock");
  if (o->n_tmpfs)
    return refuse (err, "--tmpfs", "a tmpfs needs a mount namespace");
  if (o->n_links || o->n_dirs)
    return refuse (err, "--symlink and --dir", "there is no root of the sandbox's own to make "
                                                "them in");
  if (hostname_set)
    return refuse (err, "--hostname", "no UTS namespace: the hostname is the host's");
  if ((uid_set && o->uid != geteuid ()) || (gid_set && o->gid != getegid ()))
    return refuse (err, "--uid/--gid", "without a user namespace the sandbox runs as the "
                                       "caller's own uid and gid");
  if (strcmp (o->workdir, "/work") != 0)
    return refuse (err, "--workdir", "the scratch dir is a host directory under the sandbox "
                                     "dir, the command's cwd");
  if (o->scratch_size != 256ull * 1024 * 1024 || o->scratch_inodes != 65536)
    return refuse (err, "--scratch-size/--scratch-inodes",
                   "the scratch dir is a host directory, not a bounded tmpfs: bound one file "
                   "with --fsize, the whole sandbox with --memory");
  for (size_t i = 0; i < o->n_binds; i++)
    {
      const struct kist_sandbox_bind *b = &o->binds[i];
      _cleanup_free_ char *dest = realpath (b->dest, NULL);
      if (dest == NULL || strcmp (dest, b->src) != 0)
        {
          kist_error_make (err, EINVAL,
                           "%s `%s:%s`: in the Landlock fallback a path is the host's own (no "
                           "mount namespace to bind it elsewhere): give it without :DEST, or "
                           "with DEST equal to SRC",
                           b->rw ? "--rw" : "--ro", b->src, b->dest);
          (*err)->status = KIST_EXIT_FAILURE;
          return -1;
        }
    }
  return 0;
}

/* The bounding set this process has: an unprivileged one cannot drop any
 * (PR_CAPBSET_DROP needs CAP_SETPCAP), so the config keeps it. */
static char **
bounding_now (void)
{
  int last = kist_cap_last_cap ();
  char **v = xcalloc ((size_t) last + 2, sizeof *v);
  size_t n = 0;
  for (int c = 0; c <= last; c++)
    if (prctl (PR_CAPBSET_READ, c, 0, 0, 0) == 1 && kist_cap_name (c))
      v[n++] = xstrdup (kist_cap_name (c));
  return v;
}

char *
kist_sandbox_fallback_config_json (const struct kist_sandbox_opts *o,
                                   const struct kist_sandbox_dir *d, size_t *len,
                                   struct kist_error **err)
{
  if (o->args == NULL || o->args[0] == NULL || d->work == NULL)
    {
      kist_error_make (err, EINVAL, "kist sandbox: no COMMAND given (kist sandbox [OPTIONS] -- "
                                    "COMMAND [ARG...])");
      return NULL;
    }
  _cleanup_strv_ char **bnd = bounding_now ();
  struct kist_jgen g = { .g = kist_json_gen_new (false, true) };
  kist_jgen_map_open (&g);
  kist_jgen_kstr (&g, "ociVersion", "1.2.0");
  kist_sandbox_gen_process (&g, o, o->cwd ? o->cwd : d->work, (const char *const *) bnd);
  kist_jgen_str (&g, "root");
  kist_jgen_map_open (&g);
  kist_jgen_kstr (&g, "path", "/");
  kist_jgen_map_close (&g);
  kist_jgen_str (&g, "annotations");
  kist_jgen_map_open (&g);
  kist_jgen_kstr (&g, "run.kist.seccomp.profile", o->seccomp);
  kist_jgen_kstr (&g, "run.kist.sandbox", "1");
  kist_jgen_kstr (&g, "run.kist.sandbox.fallback", "landlock");
  kist_jgen_map_close (&g);
  kist_jgen_str (&g, "linux");
  kist_jgen_map_open (&g);
  kist_jgen_str (&g, "namespaces");
  kist_jgen_array_open (&g);
  kist_jgen_array_close (&g);
  kist_jgen_map_close (&g);
  kist_jgen_map_close (&g);
  return kist_sandbox_gen_take (&g, len, err);
}

/* ------------------------------------------------ the rows not run */

/* What stands in for an entry of a row that needs a namespace. */
static const struct
{
  const char *name, *why;
} instead[] = {
  { "hostname", "no UTS namespace: the host's hostname" },
  { "domainname", "no UTS namespace: the host's domain name" },
  { "network.loopback", "no network namespace: the host's network (TCP bind and connect denied "
                        "by Landlock unless --net host)" },
  { "sysctl", "no namespaces: the host's sysctls" },
  { "dev", "no mount namespace: the host's /dev, reached only as Landlock allows" },
};

int
kist_fallback_row (struct kist_ctx *ctx, const struct kist_layer_def *d, struct kist_report *r,
                   struct kist_error **err)
{
  const struct kist_sandbox_fallback *fb = ctx->fallback;
  for (const struct kist_entry_def *e = d->entries; e && e->name; e++)
    {
      if (strcmp (e->name, "fallback") == 0)
        {
          kist_report_applied (r, e->name, "landlock",
                               "confinement degraded, allowed by the caller: no namespaces, "
                               "because %s; confined instead by %s; weaker than the namespaced "
                               "sandbox: the command shares the host's pid, IPC, UTS, cgroup "
                               "and mount namespaces%s, sees the host's processes and files "
                               "(reading whatever Landlock and the file modes let it), and "
                               "keeps the caller's uid, groups and bounding set",
                               fb->why, fb->replaced,
                               fb->wanted_ns & (1u << KIST_NS_NET) ? " and network" : "");
          continue;
        }
      if (strncmp (e->name, "namespace.", 10) == 0)
        {
          int t = 0;
          while (t < KIST_NS_COUNT && strcmp (kist_ns_name ((enum kist_ns_type) t), e->name + 10))
            t++;
          if (t < KIST_NS_COUNT && (fb->wanted_ns & (1u << t)))
            {
              if (kist_report_failed (r, e->name, NULL, fb->errnum, err,
                                      "confinement degraded: %s; replaced by the Landlock "
                                      "fallback (entry fallback)",
                                      t == KIST_NS_USER ? fb->why
                                                        : "no user namespace to make it in")
                  < 0)
                return -1;
            }
          else
            kist_report_skip (r, e->name, "not requested: shared with the host (the Landlock "
                                          "fallback makes no namespace)");
          continue;
        }
      const char *why = "no mount namespace: the host's root, not pivoted; Landlock allows it "
                        "read-only but the scratch dir and --rw";
      for (size_t i = 0; i < KIST_ARRAY_SIZE (instead); i++)
        if (strcmp (instead[i].name, e->name) == 0)
          why = instead[i].why;
      kist_report_skip (r, e->name, "not requested in the Landlock fallback: %s", why);
    }
  return 0;
}

/* ------------------------------------------------------ the decision */

/* Does the policy let every namespace the sandbox would have degrade? */
static bool
policy_allows (const char *policy, unsigned wanted)
{
  struct kist_report probe = { .allow_degraded = (char *) policy };
  for (int t = 0; t < KIST_NS_COUNT; t++)
    if (wanted & (1u << t))
      {
        _cleanup_free_ char *name = xasprintf ("namespace.%s", kist_ns_name ((enum kist_ns_type) t));
        if (!kist_report_may_degrade (&probe, name))
          return false;
      }
  return true;
}

int
kist_sandbox_fallback_decide (struct kist_sandbox_opts *o, bool requested, const char *policy,
                              bool uid_set, bool gid_set, bool hostname_set,
                              struct kist_sandbox_fallback *fb, struct kist_error **err)
{
  memset (fb, 0, sizeof *fb);
  if (geteuid () == 0)
    return 0; /* root makes its namespaces without a user namespace */
  const enum kist_ns_type ns[] = { KIST_NS_USER, KIST_NS_MOUNT, KIST_NS_PID, KIST_NS_IPC,
                                   KIST_NS_UTS, KIST_NS_CGROUP, KIST_NS_NET };
  unsigned wanted = 0;
  for (size_t i = 0; i < KIST_ARRAY_SIZE (ns); i++)
    if (ns[i] != KIST_NS_NET || !o->net_host)
      wanted |= 1u << ns[i];
  if (!requested && !policy_allows (policy, wanted))
    return 0; /* not allowed: the real attempt fails as it always did */
  int e = kist_sandbox_userns_probe ();
  if (e == 0)
    return 0;
  _cleanup_free_ char *hint = kist_ns_userns_hint ();
  _cleanup_free_ char *why = xasprintf ("this user cannot make a user namespace here "
                                        "(unshare(CLONE_NEWUSER|CLONE_NEWNS) in a probe: %s)%s%s",
                                        strerror (e), hint ? ": " : "", hint ? hint : "");
  int abi = kist_landlock_abi ();
  if (abi < 0)
    {
      kist_error_make (err, -abi,
                       "kist sandbox: %s; the Landlock fallback needs Landlock, which this "
                       "kernel does not offer",
                       why);
      (*err)->status = KIST_EXIT_FAILURE;
      return -1;
    }
  if (!o->net_host && abi < 4)
    {
      kist_error_make (err, EOPNOTSUPP,
                       "kist sandbox: %s; the Landlock fallback shares the host's network and "
                       "denies TCP bind and connect with Landlock ABI >= 4, but this kernel has "
                       "ABI %d: pass --net host to share the network knowingly",
                       why, abi);
      (*err)->status = KIST_EXIT_FAILURE;
      return -1;
    }
  /* Without a pid namespace, the end of the sandbox is kist_kill_children:
   * it must be able to list children (CONFIG_PROC_CHILDREN). */
  char kids[64];
  snprintf (kids, sizeof kids, "/proc/self/task/%d/children", (int) getpid ());
  if (access (kids, R_OK) < 0)
    {
      kist_error_make (err, errno,
                       "kist sandbox: %s; the Landlock fallback kills what is left of the "
                       "sandbox through %s, which this kernel does not offer",
                       why, kids);
      (*err)->status = KIST_EXIT_FAILURE;
      return -1;
    }
  if (kist_sandbox_fallback_check (o, uid_set, gid_set, hostname_set, err) < 0)
    return kist_error_wrap (err, "kist sandbox --fallback landlock");
  o->fallback = true;
  o->uid = geteuid ();
  o->gid = getegid ();
  fb->wanted_ns = wanted;
  fb->errnum = e;
  fb->why = steal_pointer (&why);
  fb->replaced = xasprintf ("landlock ABI %d (/ and /proc read-only; the scratch dir and --rw "
                            "writable; %s; signals and abstract unix sockets scoped), seccomp %s, "
                            "rlimits, a new session, a cleared environment, no_new_privileges, "
                            "no capabilities, kist's init as a child subreaper, a scratch dir "
                            "removed afterwards",
                            abi, o->net_host ? "the host's network (--net host)"
                                             : "the host's network with TCP bind and connect "
                                               "denied",
                            o->seccomp);
  return 1;
}

struct kist_landlock_rules *
kist_sandbox_fallback_landlock (const struct kist_sandbox_opts *o,
                                const struct kist_sandbox_dir *d)
{
  /* As the namespaced sandbox's own paths (kist_sandbox_landlock), but the
   * host's: no /tmp and no /dev/shm, which other users share, and /proc
   * read-only: it is the host's, where the files of the caller's other
   * processes (oom_score_adj, coredump_filter, clear_refs) are writable by
   * the same uid without the ptrace check Landlock scopes. */
  static const struct
  {
    const char *path;
    uint64_t access;
  } own[] = {
    { "/proc", KIST_LL_FS_READ },
    { "/dev", KIST_LL_FS_READ | KIST_LL_FS_WRITE_FILE },
    { "/dev/tty", KIST_LL_FS_READ | KIST_LL_FS_WRITE_FILE | KIST_LL_FS_IOCTL_DEV },
    { "/dev/pts", KIST_LL_FS_READ | KIST_LL_FS_WRITE_FILE | KIST_LL_FS_IOCTL_DEV },
  };
  struct kist_landlock_rules *r = xcalloc (1, sizeof *r);
  kist_landlock_rules_add (r, "/", false, false);
  for (size_t i = 0; i < o->n_binds; i++)
    kist_landlock_rules_add (r, o->binds[i].src, o->binds[i].rw, false);
  kist_landlock_rules_add (r, d->work, true, false);
  for (size_t i = 0; i < KIST_ARRAY_SIZE (own); i++)
    kist_landlock_rules_add (r, own[i].path, false, true)->access = own[i].access;
  /* The filesystem probe: the sandbox dir, the caller's own (0700), which
   * Landlock leaves read-only: a mkdir there must fail with EACCES. */
  struct kist_landlock_path *p = kist_landlock_rules_add (r, d->path, false, false);
  p->access = KIST_LL_FS_READ;
  p->probe = true;
  r->deny_tcp = !o->net_host;
  r->scope = true;
  return r;
}

/* ---- kist sandbox's side of the fallback (cmd_sandbox.c) */

/* The policy with every namespace.* allowed to degrade: the fallback's
 * namespace entries are requested and not applied (sandbox_fallback.c). */
const char *
kist_sandbox_fallback_policy (const char *pol, char **storage)
{
  char *p = pol && *pol ? xasprintf ("%s,namespace.*", pol) : xstrdup ("namespace.*");
  free (*storage);
  *storage = p;
  return p;
}

/* Refused for want of a user namespace: name the fallback, too. */
void
kist_sandbox_fallback_hint (struct kist_error **err)
{
  if (geteuid () == 0 || *err == NULL
      || strstr ((*err)->msg, "clone the container init") == NULL)
    return;
  char *m = xasprintf ("%s; or let kist sandbox run without namespaces, confined by Landlock "
                       "(weaker; kist-sandbox(8), Landlock fallback): --fallback landlock",
                       (*err)->msg);
  free ((*err)->msg);
  (*err)->msg = m;
  (*err)->status = KIST_EXIT_FAILURE;
}

/* The fallback never runs without its Landlock domain, whatever the policy
 * lets degrade: true (with *err) when the entry is not applied. */
bool
kist_sandbox_fallback_unconfined (const struct kist_report *r, struct kist_error **err)
{
  const struct kist_layer *l = kist_report_find (r, "landlock");
  if (l && l->applied)
    return false;
  kist_error_make (err, l && l->errnum ? l->errnum : EPERM,
                   "kist sandbox --fallback landlock: the landlock entry is not applied (%s); "
                   "without namespaces the sandbox never runs without it",
                   l && l->reason ? l->reason : "not recorded");
  (*err)->status = KIST_EXIT_FAILURE;
  return true;
}

/* --timeout or --grace in the fallback: the init (killed already) and
 * everything under it, which comes to kist as the subreaper; the init's
 * status (128+N). */
int
kist_sandbox_fallback_kill_all (pid_t init)
{
  int st = 0;
  if (kist_kill_children (init, &st) < 0)
    return kist_wait_status (init, -1, NULL);
  return WIFSIGNALED (st) ? 128 + WTERMSIG (st) : WEXITSTATUS (st);
}
