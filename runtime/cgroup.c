/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: cgroup v2 scopes and limits (layers "cgroup", "cgroup.<file>" and
 * "cgroup.v1").
 *
 * Only cgroup v2: the cgroup2 mount comes from /proc/self/mountinfo
 * (cgroup_mount.c), every lookup below it is an openat2 with RESOLVE_BENEATH
 * | RESOLVE_NO_XDEV | RESOLVE_NO_SYMLINKS from the mount's directory fd, and
 * every removal checks that the directory is on cgroup2 first, so kist never
 * writes to a cgroup v1 hierarchy or outside the cgroup2 mount.
 *
 * linux.resources is first turned into a plan (cgroup_plan.c: one write per
 * file, with the config path it came from), then the controllers the plan
 * needs are enabled in each ancestor's cgroup.subtree_control (only those,
 * and only where the ancestor has them), then every file is written and read
 * back.  Then the one way into the scope, for create and exec alike:
 * kist_cgroup_clone (born in it by clone3) and kist_cgroup_join (moved in
 * if not, and read back from /proc/PID/cgroup by kist, outside the
 * process).  `kist update` and the other commands are cgroup_ops.c. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <linux/sched.h>
#include <unistd.h>

#include "cgroup.h"
#include "cgroup_int.h"
#include "log.h"
#include "resolve.h"
#include "util.h"

/* The controllers kist's own limits use, in the order it enables them. */
static const char *const controllers[] = { "cpuset", "cpu", "io", "memory", "hugetlb", "pids", "rdma", "misc" };

/* The index of a needed controller in st, -1 if it is not one. */
static int
controller_index (const struct cg_ctl_state *st, const char *name)
{
  for (size_t i = 0; i < st->n; i++)
    if (strcmp (st->need[i], name) == 0)
      return (int) i;
  return -1;
}

void
kist_cgroup_free (struct kist_cgroup *cg)
{
  if (cg == NULL)
    return;
  free (cg->mount);
  free (cg->path);
  free (cg->created_from);
  if (cg->dirfd >= 0)
    close (cg->dirfd);
  free (cg);
}

/* ---------------------------------------------------------------- scope */

static bool
word_in (const char *list, const char *word)
{
  size_t n = strlen (word);
  for (const char *p = list; p && *p;)
    {
      while (*p == ' ' || *p == '\n')
        p++;
      const char *e = p;
      while (*e && *e != ' ' && *e != '\n')
        e++;
      if ((size_t) (e - p) == n && strncmp (p, word, n) == 0)
        return true;
      p = e;
    }
  return false;
}

void
cg_ctl_state_clear (struct cg_ctl_state *st)
{
  for (size_t i = 0; i < st->n; i++)
    free (st->enable_where[i]);
  free (st->parent_controllers);
  memset (st, 0, sizeof *st);
}

/* Enable the needed controllers in dirfd's cgroup.subtree_control (only
 * those it has and has not enabled yet).  Failures are remembered per
 * controller: the layer entries of that controller say why. */
static void
enable_in (int dirfd, const char *where, struct cg_ctl_state *st)
{
  _cleanup_free_ char *have = cg_read_small (dirfd, "cgroup.controllers");
  _cleanup_free_ char *on = cg_read_small (dirfd, "cgroup.subtree_control");
  for (size_t i = 0; i < st->n; i++)
    {
      if (st->enable_errno[i])
        continue;
      if (have == NULL || !word_in (have, st->need[i]))
        continue; /* not available here: reported from the parent's list */
      if (on && word_in (on, st->need[i]))
        continue;
      _cleanup_free_ char *cmd = xasprintf ("+%s", st->need[i]);
      struct kist_error *e = NULL;
      if (kist_write_file_at (dirfd, "cgroup.subtree_control", cmd, strlen (cmd), &e) < 0)
        {
          st->enable_errno[i] = e && e->errnum ? e->errnum : EIO;
          st->enable_where[i] = xasprintf ("%s/cgroup.subtree_control", where);
        }
      kist_error_free (e);
    }
}

/* Walk MOUNT/rel from the mount's fd, enabling the needed controllers in
 * every ancestor and (create) making missing directories.  Returns the scope
 * fd; *created_rel is the topmost directory made (NULL if none). */
int
cg_walk_scope (const char *mount, const char *rel, bool create, struct cg_ctl_state *st,
            char **created_rel, struct kist_error **err)
{
  if (created_rel)
    *created_rel = NULL;
  _cleanup_close_ int cur = open (mount, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (cur < 0)
    return kist_error_make (err, errno, "cgroup: open the cgroup2 mount `%s`", mount);
  struct statfs sfs;
  if (fstatfs (cur, &sfs) < 0 || sfs.f_type != CGROUP2_SUPER_MAGIC)
    return kist_error_make (err, EXDEV, "cgroup: `%s` is not a cgroup2 filesystem", mount);

  _cleanup_free_ char *path = xstrdup (rel);
  _cleanup_free_ char *where = xstrdup (mount);
  char *save = NULL;
  char *comp = strtok_r (path, "/", &save);
  while (comp)
    {
      /* No controller needed (no limit asked for): nothing to read or enable. */
      if (st->n > 0)
        enable_in (cur, where, st);
      char *next_comp = strtok_r (NULL, "/", &save);
      if (next_comp == NULL && st->n > 0)
        {
          free (st->parent_controllers);
          st->parent_controllers = cg_read_small (cur, "cgroup.controllers");
          if (st->parent_controllers)
            kist_rstrip (st->parent_controllers);
        }
      int fd = kist_openat2 (cur, comp, O_RDONLY | O_DIRECTORY, 0, CG_RESOLVE);
      if (fd == -ENOENT && create)
        {
          if (mkdirat (cur, comp, 0755) < 0 && errno != EEXIST)
            {
              int e = errno;
              return kist_error_make (err, e, "cgroup: create `%s/%s`%s", where, comp,
                                      e == EACCES || e == EPERM || e == EROFS
                                          ? " (the cgroup2 hierarchy is not writable: rootless "
                                            "needs a delegated cgroup, e.g. systemd Delegate=yes)"
                                          : "");
            }
          if (created_rel && *created_rel == NULL)
            {
              const char *base = where + strlen (mount);
              while (*base == '/')
                base++;
              *created_rel = base[0] ? xasprintf ("%s/%s", base, comp) : xstrdup (comp);
            }
          fd = kist_openat2 (cur, comp, O_RDONLY | O_DIRECTORY, 0, CG_RESOLVE);
        }
      if (fd < 0)
        return kist_error_make (err, -fd, "cgroup: open `%s/%s`", where, comp);
      close (cur);
      cur = fd;
      char *w = xasprintf ("%s/%s", where, comp);
      free (where);
      where = w;
      comp = next_comp;
    }
  return steal_fd (&cur);
}

/* rmdir MOUNT/rel and its parents up to MOUNT/top (inclusive) while empty. */
static void
remove_created (const char *mount, const char *rel, const char *top)
{
  if (top == NULL)
    return;
  _cleanup_free_ char *abs = xasprintf ("%s/%s", mount, rel);
  _cleanup_free_ char *abs_top = xasprintf ("%s/%s", mount, top);
  struct kist_error *e = NULL;
  kist_cgroup_remove (abs, abs_top, &e);
  kist_error_free (e);
}

/* ---------------------------------------------------------------- writes */

/* Every written line found in the read-back text?  For keyed files (io.max,
 * io.weight, rdma.max) the line with the same first word must carry each
 * written key=value. */
static bool
keyed_matches (const char *line, const char *got)
{
  _cleanup_free_ char *want = cg_normalise (line);
  char *sp = strchr (want, ' ');
  if (sp == NULL)
    return false;
  *sp = '\0';
  const char *key = want, *vals = sp + 1;
  _cleanup_free_ char *copy = xstrdup (got);
  char *save = NULL;
  for (char *l = strtok_r (copy, "\n", &save); l; l = strtok_r (NULL, "\n", &save))
    {
      _cleanup_free_ char *n = cg_normalise (l);
      char *s2 = strchr (n, ' ');
      if (s2 == NULL)
        continue;
      *s2 = '\0';
      if (strcmp (n, key) != 0)
        continue;
      /* Each token of vals must be a token of the read-back line. */
      _cleanup_free_ char *v = xstrdup (vals);
      char *s3 = NULL;
      for (char *t = strtok_r (v, " ", &s3); t; t = strtok_r (NULL, " ", &s3))
        if (!word_in (s2 + 1, t))
          return false;
      return true;
    }
  /* io.max drops a line whose limits are all "max". */
  if (strstr (vals, "=") && strstr (vals, "=max") && !strpbrk (vals, "0123456789"))
    return true;
  return false;
}

static bool
readback_ok (const struct kist_cgroup_write *w, const char *got, bool *rounded)
{
  *rounded = false;
  if (strncmp (w->file, "cpuset.", 7) == 0)
    return kist_cgroup_cpulist_equal (w->lines[0], got);
  if (strcmp (w->file, "io.max") == 0 || strcmp (w->file, "io.weight") == 0
      || strcmp (w->file, "rdma.max") == 0 || strcmp (w->file, "io.bfq.weight") == 0)
    {
      for (char **l = w->lines; *l; l++)
        if (!keyed_matches (*l, got))
          return false;
      return true;
    }
  if (strcmp (w->file, "cpu.max") == 0)
    {
      /* "max" or "max 100000": compare the words given. */
      _cleanup_free_ char *a = cg_normalise (w->lines[0]);
      _cleanup_free_ char *b = cg_normalise (got);
      char *sa = strchr (a, ' '), *sb = strchr (b, ' ');
      if (sa)
        *sa++ = '\0';
      if (sb)
        *sb++ = '\0';
      if (strcmp (a, b) != 0)
        return false;
      return sa == NULL || (sb != NULL && strcmp (sa, sb) == 0);
    }
  const char *last = w->lines[0];
  for (char **l = w->lines; *l; l++)
    last = *l;
  return kist_cgroup_value_matches (last, got, w->unit, rounded);
}

static char *
one_line (const char *s)
{
  _cleanup_free_ char *n = xstrdup (s);
  kist_rstrip (n);
  for (char *p = n; *p; p++)
    if (*p == '\n')
      *p = ';';
  return cg_normalise (n);
}

/* Write one planned file in the scope and read it back; one report entry. */
static int
apply_write (int scope_fd, const char *scope_abs, const char *mount,
             const struct kist_cgroup_write *w, const struct cg_ctl_state *st,
             const char *scope_controllers, struct kist_report *r, struct kist_error **err)
{
  _cleanup_free_ char *name = xasprintf ("cgroup.%s", w->file);
  const char *req = w->requested ? w->requested : "";

  if (w->unsupported)
    return kist_report_failed (r, name, req, w->unsupported, err, "%s", w->reason);

  if (w->controller)
    {
      int ci = controller_index (st, w->controller);
      if (scope_controllers == NULL || !word_in (scope_controllers, w->controller))
        {
          const char *pc = st->parent_controllers ? st->parent_controllers : "";
          if (ci >= 0 && st->enable_errno[ci] && word_in (pc, w->controller))
            return kist_report_failed (r, name, req, st->enable_errno[ci], err,
                                       "%s: could not enable the %s controller in %s",
                                       w->config, w->controller, st->enable_where[ci]);
          return kist_report_failed (r, name, req, ENOTSUP, err,
                                     "%s: %s controller not available in the cgroup2 hierarchy "
                                     "at %s (cgroup.controllers: %s)",
                                     w->config, w->controller, mount, pc[0] ? pc : "none");
        }
    }

  _cleanup_close_ int fd = openat (scope_fd, w->file, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0)
    {
      int e = errno;
      return kist_report_failed (r, name, req, e, err, "%s: open %s/%s%s", w->config, scope_abs,
                                 w->file,
                                 e == ENOENT ? ": no such file in this kernel's cgroup2 "
                                               "(controller or feature missing)"
                                             : "");
    }
  for (char **l = w->lines; *l; l++)
    {
      int rc = kist_write_all (fd, *l, strlen (*l));
      if (rc < 0)
        return kist_report_failed (r, name, req, -rc, err, "%s: write `%s` to %s/%s", w->config,
                                   *l, scope_abs, w->file);
    }
  close (steal_fd (&fd));

  _cleanup_free_ char *got = NULL;
  struct kist_error *e = NULL;
  int rc = kist_read_file_at (scope_fd, w->file, CG_FILE_MAX, &got, NULL, &e);
  kist_error_free (e);
  if (rc < 0)
    {
      if (-rc == EINVAL || -rc == EACCES || -rc == EPERM)
        {
          /* A write-only file: nothing to read back. */
          kist_report_applied (r, name, req, "written; %s is write-only (no read back)", w->file);
          return 0;
        }
      return kist_report_failed (r, name, req, -rc, err, "%s: read back %s/%s", w->config,
                                 scope_abs, w->file);
    }
  _cleanup_free_ char *shown = one_line (got);
  bool rounded = false;
  if (!readback_ok (w, got, &rounded))
    return kist_report_failed (r, name, req, EIO, err,
                               "%s: wrote `%s` to %s/%s but read back `%s`", w->config, req,
                               scope_abs, w->file, shown);
  if (rounded)
    kist_report_applied (r, name, req, "read back %s (the kernel rounded down to a multiple of %" PRIu64
                         " bytes)", shown, w->unit);
  else
    kist_report_applied (r, name, req, "read back %s", shown);
  return 0;
}

/* Is kist root in the initial user namespace (uid_map "0 0 4294967295")?
 * Only then can it load a device program (CAP_SYS_ADMIN or CAP_BPF there). */
static bool
host_root (void)
{
  if (geteuid () != 0)
    return false;
  _cleanup_free_ char *map = cg_read_small (AT_FDCWD, "/proc/self/uid_map");
  unsigned long long in = 1, out = 1, len = 0;
  return map && sscanf (map, "%llu %llu %llu", &in, &out, &len) == 3 && in == 0 && out == 0
         && len == 4294967295ull;
}

/* The device program: the configured rules (none when defaults_only) and
 * runc's default rules after them.  Without linux.resources.devices kist
 * installs the defaults alone, as runc does: a container with CAP_MKNOD
 * may mknod any node but opens only the default devices (a host disk's
 * node is EPERM).  Where kist cannot load a program (rootless, or root in
 * a user namespace: no CAP_SYS_ADMIN in the initial one), runc ignores
 * device cgroup errors; so does kist for the defaults (recorded as not
 * requested, with the reason; the container's user namespace keeps it
 * from making device nodes).  Configured rules that cannot be installed
 * fail as any requested limit. */
static int
apply_devices (int state_rootfd, int scope_fd, bool fresh_scope, const struct kist_cgroup_plan *p,
               bool defaults_only, struct kist_report *r, struct kist_error **err)
{
  _cleanup_free_ struct bpf_insn *insns = NULL;
  _cleanup_free_ char *detail = NULL;
  _cleanup_free_ char *req = defaults_only ? xstrdup ("default") : xasprintf ("%zu rules", p->n_dev);
  const char *what = defaults_only ? "runc's default device rules (no linux.resources.devices)"
                                   : "linux.resources.devices";
  size_t n = 0;
  struct kist_error *e = NULL;

  if (kist_cgroup_dev_program (defaults_only ? NULL : p->dev, defaults_only ? 0 : p->n_dev, &insns,
                               &n, err)
      < 0)
    return -1;
  if (kist_cgroup_dev_attach (state_rootfd, scope_fd, fresh_scope, insns, n, &detail, &e) < 0)
    {
      int errnum = e && e->errnum ? e->errnum : EIO;
      _cleanup_free_ char *msg = xstrdup (e && e->msg ? e->msg : "attach failed");
      kist_error_free (e);
      if (defaults_only && (errnum == EPERM || errnum == EACCES) && !host_root ())
        {
          kist_report_skip (r, "cgroup.devices",
                            "not requested; %s not installed: %s (kist is not root in the "
                            "initial user namespace; as runc, rootless containers get no device "
                            "cgroup)",
                            what, msg);
          return 0;
        }
      return kist_report_failed (r, "cgroup.devices", req, errnum, err, "%s: %s", what, msg);
    }
  kist_report_applied (r, "cgroup.devices", req, "%s", detail);
  return 0;
}

/* Add name to st's needed controllers (once). */
static void
need_controller (struct cg_ctl_state *st, const char *name)
{
  if (controller_index (st, name) < 0 && st->n < CG_MAX_CONTROLLERS)
    st->need[st->n++] = name;
}

void
cg_plan_needs (const struct kist_cgroup_plan *p, struct cg_ctl_state *st)
{
  cg_ctl_state_clear (st);
  for (size_t k = 0; k < KIST_ARRAY_SIZE (controllers); k++)
    for (size_t i = 0; i < p->n; i++)
      if (p->w[i].controller && !p->w[i].unsupported
          && strcmp (p->w[i].controller, controllers[k]) == 0)
        {
          need_controller (st, controllers[k]);
          break;
        }
  for (size_t i = 0; i < p->n; i++)
    if (p->w[i].controller && !p->w[i].unsupported)
      need_controller (st, p->w[i].controller);
}

int
cg_apply_plan (int state_rootfd, int scope_fd, bool fresh_scope, const char *scope_abs,
               const char *mount, const struct kist_cgroup_plan *p, const struct cg_ctl_state *st,
               struct kist_report *r, struct kist_error **err)
{
  /* Read only when a write needs a controller (st->n counts them). */
  _cleanup_free_ char *scope_ctl = st->n > 0 ? cg_read_small (scope_fd, "cgroup.controllers")
                                             : NULL;
  for (size_t i = 0; i < p->n; i++)
    if (apply_write (scope_fd, scope_abs, mount, &p->w[i], st, scope_ctl, r, err) < 0)
      return -1;
  if (p->has_devices && apply_devices (state_rootfd, scope_fd, fresh_scope, p, false, r, err) < 0)
    return -1;
  return 0;
}

/* Record every planned entry as not applied for the same reason (no scope). */
static int
fail_all (const struct kist_cgroup_plan *p, struct kist_report *r, int errnum, const char *why,
          struct kist_error **err)
{
  for (size_t i = 0; i < p->n; i++)
    {
      _cleanup_free_ char *name = xasprintf ("cgroup.%s", p->w[i].file);
      if (kist_report_failed (r, name, p->w[i].requested ? p->w[i].requested : "", errnum, err,
                              "%s: %s", p->w[i].config, why)
          < 0)
        return -1;
    }
  if (p->has_devices
      && kist_report_failed (r, "cgroup.devices", "", errnum, err, "linux.resources.devices: %s",
                             why)
             < 0)
    return -1;
  return 0;
}

int
kist_cgroup_apply (struct kist_ctx *ctx, struct kist_report *r, struct kist_cgroup **out,
                   struct kist_error **err)
{
  struct kist_linux *lx = ctx->spec ? ctx->spec->linux_ : NULL;
  const char *cgroups_path = lx ? lx->cgroups_path : NULL;
  const struct kist_resources *resources = lx ? lx->resources : NULL;
  __attribute__ ((cleanup (cg_plan_freep))) struct kist_cgroup_plan *plan = NULL;
  _cleanup_free_ char *mount = NULL, *own = NULL, *rel = NULL, *created = NULL;
  _cleanup_free_ char *requested = NULL;
  struct cg_ctl_state st;

  *out = NULL;
  memset (&st, 0, sizeof st);

  if (kist_cgroup_plan_build (resources, &plan, err) < 0)
    return kist_error_wrap (err, "config.json");
  if (kist_cgroup_own_path (&own, err) < 0)
    return -1;
  if (kist_cgroup_resolve_path (cgroups_path, own, ctx->id, &rel, err) < 0)
    return -1;
  requested = xstrdup (cgroups_path && cgroups_path[0] ? cgroups_path : rel);
  /* Nothing asked for (no resources, no cgroupsPath): kist still makes a
   * scope, for freeze and kill, but where it cannot (no cgroup2, a
   * hierarchy not delegated to a rootless caller) that is no failure. */
  bool asked = (cgroups_path && cgroups_path[0]) || plan->n > 0 || plan->has_devices;

  struct kist_error *me = NULL;
  if (kist_cgroup_mount (&mount, &me) < 0 && !asked)
    {
      kist_report_skip (r, "cgroup", "not requested; no scope: %s",
                        me && me->msg ? me->msg : "no cgroup2 mount");
      kist_error_free (me);
      return 0;
    }
  if (mount == NULL)
    {
      int rc = kist_report_failed (r, "cgroup", requested, ENOENT, err, "%s",
                                   me && me->msg ? me->msg : "no cgroup2 mount");
      kist_error_free (me);
      if (rc < 0 || fail_all (plan, r, ENOENT, "no cgroup2 hierarchy", err) < 0)
        return -1;
      return 0;
    }

  cg_plan_needs (plan, &st);
  _cleanup_close_ int scope_fd = -1;
  {
    struct kist_error *e = NULL;
    scope_fd = cg_walk_scope (mount, rel, true, &st, &created, &e);
    if (scope_fd < 0)
      {
        int errnum = e && e->errnum ? e->errnum : EIO;
        _cleanup_free_ char *msg = xstrdup (e && e->msg ? e->msg : "cgroup: walk failed");
        kist_error_free (e);
        remove_created (mount, rel, created);
        cg_ctl_state_clear (&st);
        if (!asked)
          {
            kist_report_skip (r, "cgroup", "not requested; no scope: %s", msg);
            return 0;
          }
        if (kist_report_failed (r, "cgroup", requested, errnum, err, "%s", msg) < 0)
          return -1;
        return fail_all (plan, r, errnum, "no cgroup scope", err);
      }
  }

  _cleanup_free_ char *abs = xasprintf ("%s/%s", mount, rel);
  if (created == NULL)
    {
      /* An existing scope must not already hold processes. */
      _cleanup_free_ char *procs = cg_read_small (scope_fd, "cgroup.procs");
      if (procs && kist_rstrip (procs)[0] != '\0')
        {
          cg_ctl_state_clear (&st);
          return kist_error_make (err, EBUSY,
                                  "cgroup: %s already has processes; linux.cgroupsPath must "
                                  "name an empty or new cgroup",
                                  abs);
        }
    }
  if (cg_apply_plan (ctx->root_fd, scope_fd, created != NULL, abs, mount, plan, &st, r, err) < 0)
    {
      /* The scope goes again, and no process was in it: no "cgroup" entry
       * (the report ends with the limit that failed). */
      cg_ctl_state_clear (&st);
      close (steal_fd (&scope_fd));
      remove_created (mount, rel, created);
      return -1;
    }
  cg_ctl_state_clear (&st);
  if (resources && resources->memory.has_check_before_update)
    cg_record_check_before_update (r, resources->memory.check_before_update);

  /* The scope with its limits: requested is linux.cgroupsPath, else the
   * scope kist chose; applied only once kist_cgroup_join has found the
   * process in it. */
  {
    _cleanup_free_ char *detail
        = xasprintf ("scope %s (%s)%s", abs, created ? "created" : "existing, empty",
                     asked ? "" : "; kist's default (no linux.cgroupsPath, no linux.resources), "
                                  "for pause, kill --all and ps");
    struct kist_layer l = { .name = (char *) "cgroup", .requested = requested, .applied = false,
                            .reason = (char *) "not joined: the container's init was not started",
                            .detail = detail };
    kist_report_add_unfinished (r, &l); /* logged by kist_cgroup_join, once final */
  }

  struct kist_cgroup *cg = xcalloc (1, sizeof *cg);
  cg->mount = steal_pointer (&mount);
  cg->path = steal_pointer (&rel);
  cg->dirfd = steal_fd (&scope_fd);
  cg->created_from = steal_pointer (&created);
  cg->default_devices = !plan->has_devices; /* kist_cgroup_default_devices */
  *out = cg;
  return 0;
}

int
kist_cgroup_default_devices (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err)
{
  struct kist_cgroup *cg = ctx->cgroup;
  if (cg == NULL || !cg->default_devices)
    return 0;
  cg->default_devices = false;
  return apply_devices (ctx->root_fd, cg->dirfd, cg->created_from != NULL, NULL, true, r, err);
}

/* ---------------------------------------------------------------- joining */

pid_t
kist_cgroup_clone (unsigned long flags, int cgroup_fd, bool *into)
{
  fflush (NULL);
  *into = false;
  if (cgroup_fd >= 0)
    {
      struct clone_args args = { .flags = flags | CLONE_INTO_CGROUP, .exit_signal = SIGCHLD,
                                 .cgroup = (uint64_t) cgroup_fd };
      pid_t pid = (pid_t) syscall (SYS_clone3, &args, sizeof args);
      if (pid >= 0)
        {
          *into = true;
          return pid;
        }
      if (errno != ENOSYS && errno != E2BIG && errno != EINVAL)
        return -1;
    }
  return (pid_t) syscall (SYS_clone, flags | SIGCHLD, NULL, NULL, NULL, NULL);
}

int
kist_cgroup_open (const char *abs_path, struct kist_report *r, struct kist_cgroup **out,
                  struct kist_error **err)
{
  *out = NULL;
  if (abs_path == NULL)
    return 0;
  _cleanup_free_ char *mount = NULL, *rel = NULL;
  _cleanup_error_ struct kist_error *e = NULL;
  int fd = -1;
  if (cg_split_scope (abs_path, &mount, &rel, &e) == 0)
    fd = cg_open_scope (abs_path, &e);
  if (fd < 0)
    return kist_report_failed (r, "cgroup", abs_path, e && e->errnum ? e->errnum : EIO, err,
                               "the container's cgroup scope cannot be opened: %s",
                               e && e->msg ? e->msg : "unknown error");
  struct kist_cgroup *cg = xcalloc (1, sizeof *cg);
  cg->mount = steal_pointer (&mount);
  cg->path = steal_pointer (&rel);
  cg->dirfd = fd;
  *out = cg;
  return 0;
}

/* Write pid to the scope's cgroup.procs. */
static int
move_in (const struct kist_cgroup *cg, pid_t pid, struct kist_error **err)
{
  char buf[32];
  int n = snprintf (buf, sizeof buf, "%d", (int) pid);
  if (cg == NULL || cg->dirfd < 0)
    return kist_error_make (err, EINVAL, "cgroup: no scope to move pid %d into", (int) pid);
  kist_cgroup_own_path_forget (); /* pid may be kist's own */
  if (kist_write_file_at (cg->dirfd, "cgroup.procs", buf, (size_t) n, err) < 0)
    return kist_error_wrap (err, "cgroup: move pid %d into %s/%s", (int) pid, cg->mount, cg->path);
  return 0;
}

/* /proc/PID/cgroup, read by kist (outside the process): *v2 is the path of
 * the "0::" line (NULL if none), *v1 the other lines (the cgroup v1
 * hierarchies, "ID:CONTROLLERS:PATH"), NULL-terminated. */
static int
proc_cgroup (pid_t pid, char **v2, char ***v1, struct kist_error **err)
{
  char path[64];
  _cleanup_free_ char *text = NULL;
  size_t n = 0;
  *v2 = NULL;
  *v1 = xcalloc (1, sizeof (char *));
  snprintf (path, sizeof path, "/proc/%d/cgroup", (int) pid);
  if (kist_read_file_at (AT_FDCWD, path, CG_FILE_MAX, &text, NULL, err) < 0)
    return kist_error_wrap (err, "cgroup: read back the cgroups of pid %d", (int) pid);
  char *save = NULL;
  for (char *l = strtok_r (text, "\n", &save); l; l = strtok_r (NULL, "\n", &save))
    if (strncmp (l, "0::", 3) == 0)
      {
        free (*v2);
        *v2 = xstrdup (l + 3);
      }
    else
      {
        *v1 = xrealloc (*v1, (n + 2) * sizeof (char *));
        (*v1)[n++] = xstrdup (l);
        (*v1)[n] = NULL;
      }
  return 0;
}

/* Is the v2 path read back (with its leading '/') the scope? */
static bool
is_scope (const struct kist_cgroup *cg, const char *v2)
{
  return v2 && v2[0] == '/' && strcmp (v2 + 1, cg->path) == 0;
}

int
kist_cgroup_enter (const struct kist_cgroup *cg, pid_t pid, struct kist_error **err)
{
  _cleanup_free_ char *v2 = NULL;
  _cleanup_strv_ char **v1 = NULL;
  if (move_in (cg, pid, err) < 0 || proc_cgroup (pid, &v2, &v1, err) < 0)
    return -1;
  if (!is_scope (cg, v2))
    return kist_error_make (err, EPROTO, "cgroup: pid %d is in `%s` after joining, not `/%s`",
                            (int) pid, v2 ? v2 : "(no cgroup v2 line)", cg->path);
  return 0;
}

/* The latest "cgroup" entry of r, to complete (NULL if none). */
static struct kist_layer *
cgroup_entry (struct kist_report *r)
{
  for (size_t i = r ? r->n_layers : 0; i > 0; i--)
    if (strcmp (r->layers[i - 1].name, "cgroup") == 0)
      return &r->layers[i - 1];
  return NULL;
}

/* The entry kist_cgroup_apply recorded is not true after all: not applied,
 * and the operation fails (the limits it wrote are not on the process). */
static int
entry_failed (struct kist_layer *l, int errnum, const char *why, struct kist_error **err)
{
  l->applied = false;
  l->errnum = errnum;
  free (l->reason);
  l->reason = xstrdup (why);
  kist_log_layer (l->name, l->requested, l->applied, l->errnum, l->reason, l->detail);
  bool created = err != NULL && *err == NULL;
  kist_error_make (err, 0, "layer cgroup not applied: %s", why);
  if (created && *err)
    (*err)->errnum = errnum;
  return -errnum;
}

/* "ID:CONTROLLERS:PATH, ..." */
static char *
join_lines (char **v)
{
  char *out = xstrdup ("");
  for (char **p = v; *p; p++)
    {
      char *n = xasprintf ("%s%s%s", out, out[0] ? ", " : "", *p);
      free (out);
      out = n;
    }
  return out;
}

int
kist_cgroup_join (struct kist_report *r, const struct kist_cgroup *cg, pid_t pid, bool into,
                  struct kist_error **err)
{
  struct kist_layer *l = cgroup_entry (r);
  _cleanup_free_ char *v2 = NULL, *why = NULL;
  _cleanup_free_ char *abs = cg ? xasprintf ("%s/%s", cg->mount, cg->path) : NULL;
  _cleanup_strv_ char **v1 = NULL;
  _cleanup_error_ struct kist_error *e = NULL;
  int errnum = 0;

  /* Into the scope, then where the kernel says the process is. */
  if (cg != NULL && ((!into && move_in (cg, pid, &e) < 0) || proc_cgroup (pid, &v2, &v1, &e) < 0))
    {
      errnum = e->errnum ? e->errnum : EIO;
      why = xstrdup (e->msg);
    }
  else if (cg != NULL && !is_scope (cg, v2))
    {
      errnum = EPROTO;
      why = xasprintf ("/proc/%d/cgroup names `%s`, not the scope `/%s`", (int) pid,
                       v2 ? v2 : "(no cgroup v2 line)", cg->path);
    }
  else if (cg == NULL && proc_cgroup (pid, &v2, &v1, &e) < 0)
    kist_error_freep (&e); /* no scope: only to say where the process is */
  if (why != NULL)
    return l ? entry_failed (l, errnum, why, err)
             : kist_report_failed (r, "cgroup", abs, errnum, err, "%s", why);

  const char *how = into ? "born in it (clone3 CLONE_INTO_CGROUP)"
                         : "moved in via cgroup.procs (no clone3)";
  _cleanup_free_ char *seen
      = v2 ? xasprintf ("/proc/%d/cgroup: 0::%s", (int) pid, v2) : xstrdup ("no cgroup v2 line");
  if (cg != NULL && l != NULL)
    {
      /* The create's entry (kist_cgroup_apply): true only now. */
      l->applied = true;
      l->errnum = 0;
      free (l->reason);
      l->reason = NULL;
      kist_report_note (r, "cgroup", "; %s; %s", how, seen);
      kist_log_layer (l->name, l->requested, l->applied, l->errnum, l->reason, l->detail);
    }
  else if (cg != NULL)
    kist_report_applied (r, "cgroup", abs, "joined the container's scope %s: %s; %s", abs, how,
                         seen);
  else if (l != NULL)
    kist_report_note (r, "cgroup", "; the process is in kist's own cgroup (%s)", seen);
  else
    kist_report_skip (r, "cgroup", "the container has no cgroup scope; the process is in kist's "
                      "own cgroup (%s)", seen);

  /* What kist does not manage but the process is in: the cgroup v1
   * hierarchies of a hybrid host, inherited from kist. */
  if (v1 != NULL && v1[0] != NULL)
    {
      _cleanup_free_ char *list = join_lines (v1);
      kist_report_skip (r, "cgroup.v1",
                        "not requested; not managed by kist (cgroup v2 only: it never writes to "
                        "or mounts cgroup v1); the process inherited kist's cgroup v1 "
                        "hierarchies, and any limit set there applies to it (/proc/%d/cgroup): %s",
                        (int) pid, list);
    }
  return 0;
}
