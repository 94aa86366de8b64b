/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist sandbox --probe: what this host can enforce for a sandbox with the
 * given options, without running anything (sandbox_probe.h).
 *
 * The sandbox's config is built in memory exactly as `kist sandbox` builds
 * it (kist_sandbox_config_json, with the paths it would use, none of them
 * made) and parsed (kist_spec_parse): the namespaces, id maps, mounts,
 * rlimits, capabilities and the seccomp profile come from it.  Then:
 *   - a child process tries the namespaces (unshare), its own size-1 id map,
 *     the scratch tmpfs and the --workspace overlay in its own mount
 *     namespace (made private first) and lo in its own network namespace,
 *     and exits: nothing of it outlives it;
 *   - cgroup: the cgroup2 mount from /proc/self/mountinfo, the scope kist
 *     would make (kist_cgroup_resolve_path) and, without creating it, whether
 *     this user may create it (write access where the first missing
 *     directory would be made) and enable each controller --memory, --pids
 *     and --cpus need in every ancestor (cgroup.controllers,
 *     cgroup.subtree_control, the no-internal-processes rule);
 *   - seccomp: the profile parsed and compiled by the seccomp code, its
 *     flags and actions asked of the kernel (SECCOMP_GET_ACTION_AVAIL);
 *   - rlimits against the current hard limits, Landlock's ABI version. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <net/if.h>
#include <pwd.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "caps.h"
#include "cgroup.h"
#include "json.h"
#include "ns.h"
#include "report.h"
#include "sandbox_probe.h"
#include "landlock.h"
#include "seccomp.h"
#include "spec.h"
#include "util.h"

/* --------------------------------------------------- the probe child */

/* What the child found: 0 done, an errno, or -1 not tried. */
struct child_result
{
  int ns[KIST_NS_COUNT];
  int maps;       /* its own size-1 uid/gid map */
  int private_;   /* mount --make-rprivate / in its mount namespace */
  int scratch;    /* the scratch tmpfs */
  int overlay;    /* the --workspace overlay */
  int bind;       /* the first --ro/--rw source that cannot be bound so */
  size_t bind_idx;
  int lo;         /* lo up and read back */
};

static int
err_of (int rc)
{
  return rc < 0 ? (errno ? errno : EIO) : 0;
}

static int
write_str (const char *file, const char *s)
{
  _cleanup_close_ int fd = open (file, O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    return errno;
  return kist_write_all (fd, s, strlen (s)) < 0 ? (errno ? errno : EIO) : 0;
}

static int
lo_up (void)
{
  _cleanup_close_ int s = socket (AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  struct ifreq ifr;
  memset (&ifr, 0, sizeof ifr);
  snprintf (ifr.ifr_name, sizeof ifr.ifr_name, "lo");
  if (s < 0 || ioctl (s, SIOCGIFFLAGS, &ifr) < 0)
    return errno;
  ifr.ifr_flags |= IFF_UP;
  if (ioctl (s, SIOCSIFFLAGS, &ifr) < 0 || ioctl (s, SIOCGIFFLAGS, &ifr) < 0)
    return errno;
  return (ifr.ifr_flags & IFF_UP) ? 0 : EIO;
}

/* Each --ro/--rw source as the sandbox binds it: a detached recursive
 * clone (open_tree) given the bind's attributes (mount_setattr), then
 * dropped; never attached anywhere. */
static void
child_binds (const struct kist_sandbox_opts *o, struct child_result *r)
{
  r->bind = 0;
  for (size_t i = 0; i < o->n_binds && r->bind == 0; i++)
    {
      _cleanup_close_ int t = open_tree (AT_FDCWD, o->binds[i].src,
                                         OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
      struct mount_attr a = { .attr_set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV
                                          | (o->binds[i].rw ? 0 : MOUNT_ATTR_RDONLY) };
      if (t < 0 || mount_setattr (t, "", AT_EMPTY_PATH | AT_RECURSIVE, &a, sizeof a) < 0)
        r->bind = errno ? errno : EIO, r->bind_idx = i;
    }
}

/* The mounts, in the child's own (private) mount namespace, over /tmp. */
static void
child_mounts (const struct kist_sandbox_opts *o, bool userns, struct child_result *r)
{
  r->private_ = err_of (mount (NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL));
  if (r->private_)
    return; /* never mount where it could propagate */
  child_binds (o, r);
  /* The workspace may lie under /tmp, which the tmpfs hides. */
  _cleanup_close_ int lower = o->workspace ? open (o->workspace, O_PATH | O_DIRECTORY | O_CLOEXEC)
                                           : -1;
  _cleanup_free_ char *data = xasprintf ("size=%llu,nr_inodes=%llu,mode=1777",
                                         (unsigned long long) o->scratch_size,
                                         (unsigned long long) o->scratch_inodes);
  r->scratch = err_of (mount ("scratch", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, data));
  if (r->scratch || o->workspace == NULL)
    return;
  if (mkdir ("/tmp/u", 0755) < 0 || mkdir ("/tmp/w", 0755) < 0 || mkdir ("/tmp/m", 0755) < 0)
    {
      r->overlay = errno;
      return;
    }
  _cleanup_free_ char *ovl = xasprintf ("lowerdir=/proc/self/fd/%d,upperdir=/tmp/u,workdir=/tmp/w%s",
                                        lower, userns ? ",userxattr" : "");
  r->overlay = err_of (mount ("overlay", "/tmp/m", "overlay", MS_NOSUID | MS_NODEV, ovl));
}

static void __attribute__ ((noreturn))
child_main (int wfd, const struct kist_spec *s, const struct kist_sandbox_opts *o)
{
  struct child_result r;
  memset (&r, -1, sizeof r);
  const struct kist_linux *lx = s->linux_;
  bool userns = lx->ns[KIST_NS_USER].present;
  if (userns)
    {
      r.ns[KIST_NS_USER] = err_of (unshare (CLONE_NEWUSER));
      if (r.ns[KIST_NS_USER] == 0)
        {
          _cleanup_free_ char *um = xasprintf ("%u %u 1\n", (unsigned) o->uid, (unsigned) geteuid ());
          _cleanup_free_ char *gm = xasprintf ("%u %u 1\n", (unsigned) o->gid, (unsigned) getegid ());
          int e = write_str ("/proc/self/setgroups", "deny");
          r.maps = e ? e : write_str ("/proc/self/uid_map", um);
          r.maps = r.maps ? r.maps : write_str ("/proc/self/gid_map", gm);
        }
    }
  if (!userns || r.ns[KIST_NS_USER] == 0)
    for (int t = 0; t < KIST_NS_COUNT; t++)
      if (t != KIST_NS_USER && lx->ns[t].present)
        r.ns[t] = err_of (unshare ((int) kist_ns_clone_flag (t)));
  if (r.ns[KIST_NS_MOUNT] == 0)
    child_mounts (o, userns, &r);
  if (r.ns[KIST_NS_NET] == 0)
    r.lo = lo_up ();
  _exit (kist_write_all (wfd, &r, sizeof r) < 0 ? 1 : 0);
}

static int
run_child (const struct kist_spec *s, const struct kist_sandbox_opts *o, struct child_result *r,
           struct kist_error **err)
{
  int fds[2];
  if (pipe2 (fds, O_CLOEXEC) < 0)
    return kist_error_make (err, errno, "sandbox --probe: pipe");
  _cleanup_close_ int rfd = fds[0], wfd = fds[1];
  fflush (NULL);
  pid_t pid = fork ();
  if (pid < 0)
    return kist_error_make (err, errno, "sandbox --probe: fork the probe child");
  if (pid == 0)
    child_main (wfd, s, o);
  close (steal_fd (&wfd));
  ssize_t n = kist_read_all (rfd, r, sizeof *r);
  int st = 0;
  while (waitpid (pid, &st, 0) < 0 && errno == EINTR)
    ;
  if (n != (ssize_t) sizeof *r)
    return kist_error_make (err, EIO, "sandbox --probe: the probe child (pid %d) ended without "
                                      "its answer (wait status %d)",
                            (int) pid, st);
  return 0;
}

/* ------------------------------------------------------- namespaces */

static const char *const ns_layer[KIST_NS_COUNT] = {
  [KIST_NS_USER] = "namespace.user",   [KIST_NS_MOUNT] = "namespace.mount",
  [KIST_NS_PID] = "namespace.pid",     [KIST_NS_NET] = "namespace.net",
  [KIST_NS_UTS] = "namespace.uts",     [KIST_NS_IPC] = "namespace.ipc",
  [KIST_NS_CGROUP] = "namespace.cgroup", [KIST_NS_TIME] = "namespace.time",
};

static bool
landlock_abi (int *abi)
{
  int v = kist_landlock_abi (); /* the landlock layer's own question */
  *abi = v < 0 ? -v : v;
  return v >= 0;
}

static void
probe_userns (struct kist_probe *p, const struct kist_sandbox_opts *o, const struct child_result *r)
{
  const char *L = ns_layer[KIST_NS_USER];
  if (p->uid == 0 && !o->userns)
    {
      kist_probe_add (p, L, false, true, NULL,
                      "as root: not needed (the sandbox shares the host's user namespace and runs "
                      "as uid %u without capabilities)",
                      (unsigned) o->uid);
      return;
    }
  if (p->uid == 0)
    {
      kist_probe_add (p, L, true, false,
                      "leave out --userns, or run kist sandbox as an unprivileged user (it always "
                      "gets a user namespace)",
                      "--userns: not implemented yet for root (the sandbox root under the 0700 "
                      "state root is not reachable from a shifted user namespace)");
      return;
    }
  int e = r->ns[KIST_NS_USER];
  if (e == 0)
    {
      kist_probe_add (p, L, true, true, NULL,
                      "a new user namespace can be created here (a probe child's "
                      "unshare(CLONE_NEWUSER) succeeded)");
      return;
    }
  _cleanup_free_ char *hint = kist_ns_userns_hint (), *reason = NULL, *fix = NULL;
  if (hint)
    kist_probe_split_hint (hint, &reason, &fix);
  else
    {
      reason = xasprintf ("unshare(CLONE_NEWUSER): %s", strerror (e));
      fix = xstrdup ("allow unprivileged user namespaces here (the sysctls "
                     "user.max_user_namespaces, kernel.apparmor_restrict_unprivileged_userns, or "
                     "the seccomp filter of the container kist runs in)");
    }
  int abi;
  _cleanup_free_ char *full = landlock_abi (&abi)
                                  ? xasprintf ("%s; or accept weaker confinement: `--fallback "
                                               "landlock` runs the sandbox without namespaces, "
                                               "under Landlock (ABI %d here)",
                                               fix, abi)
                                  : xstrdup (fix);
  kist_probe_add (p, L, true, false, full, "%s (unshare(CLONE_NEWUSER): %s)", reason, strerror (e));
}

static void
probe_namespaces (struct kist_probe *p, const struct kist_spec *s, const struct kist_sandbox_opts *o,
                  const struct child_result *r)
{
  for (int t = 1; t < KIST_NS_COUNT; t++)
    {
      const char *L = ns_layer[t];
      if (!s->linux_->ns[t].present)
        {
          kist_probe_add (p, L, false, true, NULL, "%s",
                          t == KIST_NS_NET ? "--net host: the host's network is shared"
                                           : "shared with the host");
          continue;
        }
      if (r->ns[t] == 0)
        kist_probe_add (p, L, true, true, NULL, "can be created (unshare in a probe child)");
      else if (r->ns[t] < 0)
        kist_probe_add (p, L, true, false, "see namespace.user", "not tried: needs namespace.user");
      else
        kist_probe_add (p, L, true, false,
                        "run kist where it may create namespaces (a container kist runs in must "
                        "allow unshare: CAP_SYS_ADMIN, or no seccomp filter denying it)",
                        "unshare(%s): %s", kist_ns_proc_name (t), strerror (r->ns[t]));
    }
  (void) o;
}

static void
probe_idmap (struct kist_probe *p, const struct kist_spec *s, const struct child_result *r)
{
  const struct kist_linux *lx = s->linux_;
  const char *note = kist_spec_annotation (s, KIST_SANDBOX_IDMAP_ANNOTATION);
  for (int g = 0; g < 2; g++)
    {
      const char *L = g ? "idmap.gid" : "idmap.uid";
      const struct kist_idmap *m = g ? lx->gid_mappings : lx->uid_mappings;
      size_t n = g ? lx->n_gid_mappings : lx->n_uid_mappings;
      if (!lx->ns[KIST_NS_USER].present)
        {
          kist_probe_add (p, L, false, true, NULL, "no new user namespace");
          continue;
        }
      if (p->uid == 0)
        {
          kist_probe_add (p, L, true, false, "see namespace.user", "--userns is refused for root");
          continue;
        }
      if (r->ns[KIST_NS_USER] != 0)
        {
          kist_probe_add (p, L, true, false, "see namespace.user", "needs namespace.user");
          continue;
        }
      _cleanup_free_ char *maps = xstrdup ("");
      for (size_t i = 0; i < n; i++)
        {
          char *more = xasprintf ("%s%s%u->%u size %u", maps, i ? ", " : "",
                                  m[i].container_id, m[i].host_id, m[i].size);
          free (maps);
          maps = more;
        }
      if (n == 1 && r->maps != 0)
        {
          kist_probe_add (p, L, true, false, NULL, "%s: a probe child could not write it: %s", maps,
                          strerror (r->maps));
          continue;
        }
      _cleanup_free_ char *fix
          = n == 1 ? xasprintf ("for every inside id to exist: a range in /etc/subuid and "
                                "/etc/subgid for %s (usermod --add-subuids 100000-165535 "
                                "--add-subgids 100000-165535 %s) and newuidmap/newgidmap (the "
                                "uidmap package)",
                                p->user, p->user)
                   : NULL;
      kist_probe_add (p, L, true, true, fix,
                      "%s (%s)%s", maps, note ? note : "sandbox",
                      n == 1 ? "; written by a probe child into its own user namespace"
                             : "; written by newuidmap/newgidmap, not run by the probe");
      p->rows[p->n - 1].degraded = n == 1;
    }
}

/* ------------------------------------------------------- mounts, lo */

/* The state root the sandbox would use (without creating it, as
 * kist_state_root_open chooses it), or the nearest existing directory above
 * it: where the --workspace upper dir would live.  NULL when its filesystem
 * has user xattrs (an overlay in a user namespace keeps its metadata in
 * user.overlay.*), else why not. */
static char *
upper_xattr_why (const char *root)
{
  const char *xdg = getenv ("XDG_RUNTIME_DIR");
  _cleanup_free_ char *path = root && root[0] ? xstrdup (root)
                              : xdg && xdg[0] == '/' ? xasprintf ("%s/kist", xdg)
                                                     : xasprintf ("/tmp/kist-%u", (unsigned) geteuid ());
  _cleanup_free_ char *at = xstrdup (path);
  struct stat st;
  while (stat (at, &st) < 0 && strrchr (at, '/') != NULL && at[1] != '\0')
    {
      char *slash = strrchr (at, '/');
      if (slash == at)
        slash[1] = '\0';
      else
        *slash = '\0';
    }
  if (lgetxattr (at, "user.kist.probe", NULL, 0) >= 0 || errno != EOPNOTSUPP)
    return NULL;
  return xasprintf ("the upper dir would be under the state root %s, whose filesystem (at %s) has "
                    "no user xattrs (an overlay in a user namespace keeps its metadata there)",
                    path, at);
}

static void
probe_mounts (struct kist_probe *p, const struct kist_sandbox_opts *o, const char *root,
              const struct child_result *r)
{
  if (r->ns[KIST_NS_MOUNT] != 0)
    {
      kist_probe_add (p, "mounts", true, false, "see namespace.mount", "needs namespace.mount");
      return;
    }
  if (r->private_ != 0)
    {
      kist_probe_add (p, "mounts", true, false, NULL,
                      "make / private in a probe child's mount namespace: %s", strerror (r->private_));
      return;
    }
  _cleanup_free_ char *work
      = o->workspace ? xasprintf ("--workspace %s: an overlay at %s (lower %s, upper in the "
                                  "sandbox dir)",
                                  o->workspace, o->workdir, o->workspace)
        : o->keep    ? xasprintf ("--keep: a kept host dir bound at %s", o->workdir)
                     : xasprintf ("the scratch tmpfs at %s (%llu bytes, %llu inodes)", o->workdir,
                                  (unsigned long long) o->scratch_size,
                                  (unsigned long long) o->scratch_inodes);
  if (r->scratch != 0)
    {
      kist_probe_add (p, "mounts", true, false, NULL,
                      "%s: a probe child could not mount a tmpfs in its own mount namespace: %s",
                      work, strerror (r->scratch));
      return;
    }
  if (r->bind > 0)
    {
      const struct kist_sandbox_bind *b = &o->binds[r->bind_idx];
      kist_probe_add (p, "mounts", true, false,
                      "bind a source this user can bind (in a user namespace, a tree with mounts "
                      "locked by another user namespace may not be cloned), or leave it out",
                      "--%s %s:%s: a probe child could not clone it recursively with the bind's "
                      "flags (open_tree, mount_setattr): %s",
                      b->rw ? "rw" : "ro", b->src, b->dest, strerror (r->bind));
      return;
    }
  _cleanup_free_ char *xattr_why = o->workspace && p->uid != 0 ? upper_xattr_why (root) : NULL;
  if (xattr_why)
    {
      kist_probe_add (p, "mounts", true, false,
                      "--root DIR on a filesystem with user xattrs (ext4, xfs, btrfs, tmpfs on "
                      "Linux >= 6.6)",
                      "%s: %s", work, xattr_why);
      return;
    }
  if (o->workspace && r->overlay != 0)
    {
      kist_probe_add (p, "mounts", true, false,
                      p->uid != 0 ? "an overlay in a user namespace needs Linux >= 5.11 "
                                    "(userxattr) and a lower dir the kernel accepts: run as root, "
                                    "or use --keep or the scratch tmpfs instead of --workspace"
                                  : "use a --workspace directory on a filesystem overlayfs accepts "
                                    "as its lower layer",
                      "%s: a probe child could not mount the overlay (on a tmpfs upper): %s", work,
                      strerror (r->overlay));
      return;
    }
  kist_probe_add (p, "mounts", true, true, NULL,
                  "%s; %zu --ro/--rw binds (cloned with their flags), %zu --tmpfs; mounted by "
                  "a probe child in its own mount namespace: %s",
                  work, o->n_binds, o->n_tmpfs,
                  o->workspace ? "a tmpfs and the overlay on it (the real upper dir lives under "
                                 "the state root)"
                               : "a tmpfs with those limits");
}

static void
probe_loopback (struct kist_probe *p, const struct kist_spec *s, const struct child_result *r)
{
  const char *L = "network.loopback";
  if (!s->linux_->ns[KIST_NS_NET].present)
    kist_probe_add (p, L, false, true, NULL, "--net host: no network namespace of its own");
  else if (r->ns[KIST_NS_NET] != 0)
    kist_probe_add (p, L, true, false, "see namespace.net", "needs namespace.net");
  else if (r->lo != 0)
    kist_probe_add (p, L, true, false, NULL, "lo up in a new network namespace: %s",
                    strerror (r->lo));
  else
    kist_probe_add (p, L, true, true, NULL,
                    "lo set up and read back in a probe child's own network namespace");
}

/* --------------------------------------------------------- cgroup */

static char *
read_at (int dirfd, const char *file)
{
  char *v = NULL;
  _cleanup_error_ struct kist_error *e = NULL;
  if (kist_read_file_at (dirfd, file, 65536, &v, NULL, &e) < 0)
    return NULL;
  return kist_rstrip (v);
}

static bool
writable_at (int dirfd, const char *file)
{
  return faccessat (dirfd, file, W_OK, AT_EACCESS) == 0;
}

/* Is ctl bound to a cgroup v1 hierarchy (a "N:...,ctl,...:/path" line of
 * /proc/self/cgroup)? */
static bool
in_v1 (const char *ctl)
{
  _cleanup_free_ char *text = read_at (AT_FDCWD, "/proc/self/cgroup");
  char *save = NULL;
  for (char *l = text ? strtok_r (text, "\n", &save) : NULL; l; l = strtok_r (NULL, "\n", &save))
    {
      char *c1 = strchr (l, ':'), *c2 = c1 ? strchr (c1 + 1, ':') : NULL;
      if (c2 == NULL || c2 == c1 + 1)
        continue;
      *c2 = '\0';
      for (char *t = c1 + 1; t;)
        {
          char *comma = strchr (t, ',');
          if (comma)
            *comma = '\0';
          if (strcmp (t, ctl) == 0)
            return true;
          t = comma ? comma + 1 : NULL;
        }
    }
  return false;
}

struct cg_walk
{
  const char *mount;
  char *scope;          /* the absolute scope path */
  char *no_scope;       /* why kist cannot create the scope, or NULL */
  char *ctl_why[16];    /* per needed controller: why it cannot be had, or NULL */
  const char *ctl[16];
  size_t n_ctl;
};

/* At the existing directory dirfd (where: its absolute path; top: the
 * mount's root): can each needed controller be had below it? */
static void
walk_enable (struct cg_walk *w, int dirfd, const char *where, bool top, uid_t uid)
{
  _cleanup_free_ char *have = read_at (dirfd, "cgroup.controllers");
  _cleanup_free_ char *on = read_at (dirfd, "cgroup.subtree_control");
  _cleanup_free_ char *procs = top ? NULL : read_at (dirfd, "cgroup.procs");
  for (size_t i = 0; i < w->n_ctl; i++)
    {
      const char *c = w->ctl[i];
      if (w->ctl_why[i] || kist_probe_word_in (on, c))
        continue;
      if (!kist_probe_word_in (have, c))
        w->ctl_why[i] = xasprintf ("%s controller not available in the cgroup2 hierarchy at %s "
                                   "(cgroup.controllers of %s: %s)%s",
                                   c, w->mount, where, have && have[0] ? have : "none",
                                   in_v1 (c) ? "; it is bound to a cgroup v1 hierarchy here" : "");
      else if (!writable_at (dirfd, "cgroup.subtree_control"))
        w->ctl_why[i] = xasprintf ("%s controller: %s/cgroup.subtree_control is not writable by "
                                   "uid %u (no delegation)",
                                   c, where, (unsigned) uid);
      else if (procs && procs[0])
        w->ctl_why[i] = xasprintf ("%s controller: %s holds processes, and cgroup v2 enables no "
                                   "controller below a cgroup with processes of its own",
                                   c, where);
    }
}

/* Follow MOUNT/rel without creating anything. */
static void
walk_scope (struct cg_walk *w, const char *rel, uid_t uid)
{
  _cleanup_close_ int cur = open (w->mount, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  _cleanup_free_ char *path = xstrdup (rel), *where = xstrdup (w->mount);
  if (cur < 0)
    {
      w->no_scope = xasprintf ("open %s: %s", w->mount, strerror (errno));
      return;
    }
  bool top = true;
  char *save = NULL;
  for (char *comp = strtok_r (path, "/", &save); comp; comp = strtok_r (NULL, "/", &save))
    {
      walk_enable (w, cur, where, top, uid);
      top = false;
      int fd = openat (cur, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0)
        {
          /* kist would mkdir from here on: the rest is its own. */
          if (!writable_at (cur, "."))
            w->no_scope = xasprintf ("kist cannot create its scope %s: %s is not writable by uid "
                                     "%u (the cgroup2 hierarchy is not delegated to this user)",
                                     w->scope, where, (unsigned) uid);
          return;
        }
      close (cur);
      cur = fd;
      char *next = xasprintf ("%s/%s", where, comp);
      free (where);
      where = next;
    }
  w->no_scope = xasprintf ("%s exists already (a new sandbox gets a new id)", w->scope);
}

#define CG_FIX_DELEGATE                                                                          \
  "run kist in a cgroup delegated to this user (e.g. systemd-run --user --scope -p "             \
  "Delegate=yes kist sandbox ...), or as root"

static void
probe_cgroup (struct kist_probe *p, const struct kist_sandbox_opts *o)
{
  _cleanup_resources_ struct kist_resources *res = kist_sandbox_resources (o);
  struct kist_cgroup_plan *plan = NULL;
  _cleanup_error_ struct kist_error *e = NULL;
  if (kist_cgroup_plan_build (res, &plan, &e) < 0)
    {
      kist_probe_add (p, "cgroup", true, false, NULL, "%s", e->msg);
      return;
    }
  struct cg_walk w = { 0 };
  for (size_t i = 0; i < plan->n; i++)
    {
      const char *c = plan->w[i].controller;
      bool seen = c == NULL;
      for (size_t k = 0; k < w.n_ctl && !seen; k++)
        seen = strcmp (w.ctl[k], c) == 0;
      if (!seen && w.n_ctl < KIST_ARRAY_SIZE (w.ctl))
        w.ctl[w.n_ctl++] = c;
    }
  bool asked = plan->n > 0;
  _cleanup_free_ char *mount = NULL, *own = NULL, *rel = NULL;
  _cleanup_free_ char *why = NULL;
  if (kist_cgroup_mount (&mount, &e) < 0 || kist_cgroup_own_path (&own, &e) < 0
      || kist_cgroup_resolve_path (NULL, own, "sandbox-ID", &rel, &e) < 0)
    why = xstrdup (e->msg);
  else
    {
      w.mount = mount;
      w.scope = xasprintf ("%s/%s", mount, rel);
      walk_scope (&w, rel, p->uid);
      why = xstrdup (w.no_scope);
    }
  if (why)
    kist_probe_add (p, "cgroup", asked, false, CG_FIX_DELEGATE, "%s%s", why,
                    asked ? "" : " (without --memory, --pids or --cpus the sandbox runs without "
                                 "a scope: no cgroup limit, the timeout kills the processes it "
                                 "knows)");
  else
    kist_probe_add (p, "cgroup", asked, true, NULL,
                    "scope %s can be created by uid %u (cgroup2 at %s, found in "
                    "/proc/self/mountinfo)",
                    w.scope, (unsigned) p->uid, mount);
  for (size_t i = 0; i < plan->n; i++)
    {
      const struct kist_cgroup_write *cw = &plan->w[i];
      _cleanup_free_ char *L = xasprintf ("cgroup.%s", cw->file);
      const char *ctl = NULL;
      for (size_t k = 0; k < w.n_ctl && cw->controller; k++)
        if (strcmp (w.ctl[k], cw->controller) == 0)
          ctl = w.ctl_why[k];
      /* Both when both: a delegated scope still lacks a missing controller. */
      _cleanup_free_ char *cwhy = why && ctl ? xasprintf ("%s; and the %s", why, ctl)
                                             : xstrdup (why ? why : ctl);
      if (cwhy == NULL)
        kist_probe_add (p, L, true, true, NULL, "%s %s: the %s controller can be enabled for the "
                                                "scope", cw->file, cw->requested,
                        cw->controller ? cw->controller : "core");
      else
        kist_probe_add (p, L, true, false,
                        why ? CG_FIX_DELEGATE
                            : "a host whose cgroup2 hierarchy has the controller (pure cgroup v2: "
                              "boot with systemd.unified_cgroup_hierarchy=1), or leave the option "
                              "out (--allow-degraded LAYER runs without it)",
                        "%s: %s", cw->config, cwhy);
    }
  for (size_t k = 0; k < w.n_ctl; k++)
    free (w.ctl_why[k]);
  free (w.scope);
  free (w.no_scope);
  kist_cgroup_plan_free (plan);
}

/* ------------------------------------------- rlimits, caps, nnp, seccomp */

static void
probe_rlimits (struct kist_probe *p, const struct kist_spec *s)
{
  const struct kist_process *pr = s->process;
  if (pr->n_rlimits == 0)
    kist_probe_add (p, "rlimit", false, true, NULL,
                    "none given (--nofile, --fsize, --nproc, --core, --cpu-time)");
  for (size_t i = 0; i < pr->n_rlimits; i++)
    {
      const struct kist_rlimit *rl = &pr->rlimits[i];
      _cleanup_free_ char *L = xasprintf ("rlimit.%s", rl->type);
      struct rlimit cur;
      int res = kist_rlimit_from_name (rl->type);
      if (res < 0 || getrlimit (res, &cur) < 0)
        {
          kist_probe_add (p, L, true, false, NULL, "getrlimit: %s", strerror (errno));
          continue;
        }
      if (p->uid == 0 || cur.rlim_max == RLIM_INFINITY || rl->hard <= cur.rlim_max)
        kist_probe_add (p, L, true, true, NULL, "soft %llu, hard %llu (the hard limit here: %s)",
                        (unsigned long long) rl->soft, (unsigned long long) rl->hard,
                        cur.rlim_max == RLIM_INFINITY ? "unlimited"
                        : p->uid == 0                 ? "root may raise it"
                                                      : "not above it");
      else
        kist_probe_add (p, L, true, false,
                        "ask for less, or raise the hard limit kist inherits (ulimit -H, "
                        "/etc/security/limits.conf)",
                        "hard %llu is above this process's hard limit %llu, which an "
                        "unprivileged caller cannot raise",
                        (unsigned long long) rl->hard, (unsigned long long) cur.rlim_max);
    }
}

/* Every action the profile uses, asked of the kernel: the first it does
 * not have, or 0. */
static uint32_t
missing_action (const struct kist_seccomp_profile *pf)
{
  for (size_t i = 0; i <= pf->n_rules; i++)
    {
      uint32_t a = (i == pf->n_rules ? pf->default_action : pf->rules[i].action)
                   & SECCOMP_RET_ACTION_FULL;
      if (syscall (SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &a) < 0)
        return a ? a : SECCOMP_RET_ACTION_FULL;
    }
  return 0;
}

static void
probe_seccomp (struct kist_probe *p, const struct kist_spec *s)
{
  const char *what = NULL;
  if (!kist_seccomp_requested (s, &what))
    {
      kist_probe_add (p, "seccomp", false, true, NULL, "--seccomp none: no filter");
      return;
    }
  _cleanup_seccomp_ struct kist_seccomp *sc = NULL;
  _cleanup_error_ struct kist_error *e = NULL;
  struct sock_filter *insns = NULL;
  size_t n = 0;
  const char *fix = "fix the profile (kist-seccomp-profile(5)), or use --seccomp default or strict";
  if (kist_seccomp_choose (s, -1, &sc, &e) < 0 || kist_seccomp_compile (sc->profile, &insns, &n, &e) < 0)
    {
      kist_probe_add (p, "seccomp", true, false, fix, "profile %s: %s", what, e->msg);
      return;
    }
  free (insns);
  uint32_t a = missing_action (sc->profile);
  char buf[32];
  if (a)
    kist_probe_add (p, "seccomp", true, false, "a newer kernel, or a profile without that action",
                    "profile %s: this kernel has no action %s (SECCOMP_GET_ACTION_AVAIL)", what,
                    kist_seccomp_action_str (a, buf));
  else if (sc->profile->flags && !kist_seccomp_flags_supported (sc->profile->flags))
    kist_probe_add (p, "seccomp", true, false, fix,
                    "profile %s: this kernel refuses its filter flags 0x%x", what,
                    (unsigned) sc->profile->flags);
  else
    kist_probe_add (p, "seccomp", true, true, NULL,
                    "profile %s compiles (%zu BPF insns, not cached by the probe); every action "
                    "it uses is available (SECCOMP_GET_ACTION_AVAIL)",
                    what, n);
}

static void
probe_privileges (struct kist_probe *p, const struct kist_spec *s)
{
  kist_probe_add (p, "capabilities", true, true, NULL,
                  "none: every set empty (dropping needs no privilege)");
  int nnp = prctl (PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0);
  if (!s->process->no_new_privileges)
    kist_probe_add (p, "no_new_privileges", false, true, NULL, "not set");
  else if (nnp < 0)
    kist_probe_add (p, "no_new_privileges", true, false, "Linux >= 3.5", "PR_GET_NO_NEW_PRIVS: %s",
                    strerror (errno));
  else
    kist_probe_add (p, "no_new_privileges", true, true, NULL, "PR_SET_NO_NEW_PRIVS is there");
}

static void
probe_landlock (struct kist_probe *p)
{
  int abi;
  bool have = landlock_abi (&abi);
  if (have)
    kist_probe_add (p, "landlock", true, true, NULL, "Landlock ABI %d", abi);
  else
    kist_probe_add (p, "landlock", true, false,
                    abi == EOPNOTSUPP ? "enable the Landlock LSM at boot (lsm=...,landlock)"
                                      : "a kernel with Landlock (Linux >= 5.13, CONFIG_SECURITY_LANDLOCK)",
                    "landlock_create_ruleset(LANDLOCK_CREATE_RULESET_VERSION): %s%s",
                    strerror (abi), abi == EOPNOTSUPP ? " (disabled at boot)" : "");
}

/* ------------------------------------------------------------ entry */

int
kist_sandbox_probe (const struct kist_sandbox_opts *o, const char *root, const char *policy,
                    bool json, struct kist_error **err)
{
  /* The config the sandbox would get, with the paths it would use. */
  static char *const no_args[] = { (char *) "true", NULL };
  struct kist_sandbox_opts so = *o;
  if (so.args == NULL || so.args[0] == NULL)
    so.args = (char **) no_args;
  _cleanup_free_ char *base = xasprintf ("%s/%s/ID", root ? root : "STATE_ROOT", KIST_SANDBOX_DIR);
  _cleanup_free_ char *rootfs = xasprintf ("%s/rootfs", base);
  _cleanup_free_ char *work = xasprintf ("%s/work", base), *upper = xasprintf ("%s/upper", base);
  _cleanup_free_ char *ovl = xasprintf ("%s/ovl-work", base);
  struct kist_sandbox_dir d = { .path = base, .rootfs = o->rootfs ? o->rootfs : rootfs,
                                .work = o->keep ? work : NULL,
                                .upper = o->workspace ? upper : NULL,
                                .ovl_work = o->workspace ? ovl : NULL };
  size_t len = 0;
  _cleanup_free_ char *config = kist_sandbox_config_json (&so, &d, geteuid (), getegid (), &len, err);
  _cleanup_spec_ struct kist_spec *s = NULL;
  if (config == NULL || kist_spec_parse (config, len, &s, err) < 0)
    return kist_error_wrap (err, "sandbox --probe: the sandbox's config");

  struct kist_probe p = { .uid = geteuid (), .gid = getegid (), .policy = policy };
  struct passwd *pw = getpwuid (p.uid);
  p.user = pw && pw->pw_name ? xstrdup (pw->pw_name) : xasprintf ("%u", (unsigned) p.uid);
  struct child_result r;
  if (run_child (s, o, &r, err) < 0)
    {
      kist_probe_clear (&p);
      return -1;
    }
  probe_userns (&p, o, &r);
  probe_idmap (&p, s, &r);
  probe_namespaces (&p, s, o, &r);
  probe_loopback (&p, s, &r);
  probe_mounts (&p, o, root, &r);
  probe_cgroup (&p, o);
  probe_rlimits (&p, s);
  probe_privileges (&p, s);
  probe_seccomp (&p, s);
  probe_landlock (&p);

  _cleanup_free_ char *out = json ? kist_probe_json (&p) : kist_probe_table (&p);
  int status = kist_probe_status (&p);
  kist_probe_clear (&p);
  fflush (stdout);
  if (kist_write_all (STDOUT_FILENO, out, strlen (out)) < 0)
    return kist_error_make (err, errno, "sandbox --probe: write to stdout");
  return status;
}
