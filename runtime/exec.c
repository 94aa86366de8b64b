/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: exec a new process in a running container (runc exec).
 *
 *   parent   check the container runs, load its config, replace the process,
 *            the registry's PREPARE layers for exec (layer.c: terminal,
 *            seccomp, the scope), open the init's /proc/PID/ns/ files, clone
 *            the helper into the scope, the ENTER layers (join, read back),
 *            then collect report entries; at READY it verifies from outside
 *            (verify.c) and gives the word to execve
 *   helper   joins every namespace of the init (user first, mount last) and
 *            verifies each; a pid namespace takes effect for children only,
 *            so it forks the final process, sends its pid and exits
 *   process  the registry's SETUP layers for exec, in the init's order, then
 *            kist_process_exec: READY, the parent's word, execve; the sync
 *            socket is close-on-exec, so the parent sees EOF exactly when
 *            execve succeeded.
 *
 * kist is a child subreaper while it waits, so that the final process (whose
 * parent, the helper, exits) is reparented to kist and can be waited for. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/sched.h>
#include <unistd.h>

#include "caps.h"
#include "cgroup.h"
#include "collect.h"
#include "exec.h"
#include "log.h"
#include "ns.h"
#include "seccomp.h"
#include "sync.h"
#include "terminal.h"
#include "util.h"
#include "verify.h"

/* helper -> parent: the host pid of the final process (decimal text).  A
 * private message type of this protocol (not in sync.h's enum). */
#define KIST_EXEC_SYNC_PID KIST_SYNC_PID

/* Join order: the user namespace first (it owns the others), the mount
 * namespace last (it changes what /proc means). */
static const enum kist_ns_type join_order[] = {
  KIST_NS_USER, KIST_NS_IPC,  KIST_NS_UTS,  KIST_NS_NET,
  KIST_NS_PID,  KIST_NS_CGROUP, KIST_NS_TIME, KIST_NS_MOUNT,
};

struct exec_job
{
  struct kist_ctx ctx;
  const struct kist_exec_opts *o;
  pid_t init_pid;
  int nsfd[KIST_NS_COUNT];       /* the init's namespace, -1: same as kist's */
  ino_t ns_ino[KIST_NS_COUNT];
  dev_t ns_dev[KIST_NS_COUNT];
};

/* ------------------------------------------------------------ process */

static int
append_env (char ***envp, const char *kv, struct kist_error **err)
{
  const char *eq = strchr (kv, '=');
  if (eq == NULL || eq == kv)
    return kist_error_make (err, EINVAL, "--env `%s`: expected KEY=VALUE", kv);
  size_t klen = (size_t) (eq - kv) + 1;
  char **v = *envp;
  size_t n = kist_strv_len (v);
  for (size_t i = 0; i < n; i++)
    if (strncmp (v[i], kv, klen) == 0)
      {
        free (v[i]);
        v[i] = xstrdup (kv);
        return 0;
      }
  v = xrealloc (v, (n + 2) * sizeof (char *));
  v[n] = xstrdup (kv);
  v[n + 1] = NULL;
  *envp = v;
  return 0;
}

static void
append_cap (char ***set, const char *cap)
{
  char **v = *set;
  size_t n = kist_strv_len (v);
  for (size_t i = 0; i < n; i++)
    if (strcmp (v[i], cap) == 0)
      return;
  v = xrealloc (v, (n + 2) * sizeof (char *));
  v[n] = xstrdup (cap);
  v[n + 1] = NULL;
  *set = v;
}

int
kist_exec_apply_flags (struct kist_process *p, const struct kist_exec_opts *o,
                       struct kist_error **err)
{
  if (o->args && o->args[0])
    {
      size_t n = kist_strv_len (o->args);
      char **v = xcalloc (n + 1, sizeof (char *));
      for (size_t i = 0; i < n; i++)
        v[i] = xstrdup (o->args[i]);
      kist_strv_free (p->args);
      p->args = v;
    }
  if (p->env == NULL)
    p->env = xcalloc (1, sizeof (char *));
  for (size_t i = 0; o->env && o->env[i]; i++)
    if (append_env (&p->env, o->env[i], err) < 0)
      return -1;
  if (o->cwd)
    {
      if (o->cwd[0] != '/')
        return kist_error_make (err, EINVAL, "--cwd `%s`: must be an absolute path in the container",
                                o->cwd);
      free (p->cwd);
      p->cwd = xstrdup (o->cwd);
    }
  if (o->has_user)
    {
      p->user.uid = o->uid;
      p->user.gid = o->gid;
      free (p->user.additional_gids);
      p->user.additional_gids = NULL;
      p->user.n_additional_gids = 0;
      p->user.has_additional_gids = false;
    }
  if (o->caps && o->caps[0])
    {
      if (p->capabilities == NULL)
        p->capabilities = xcalloc (1, sizeof *p->capabilities);
      struct kist_capabilities *c = p->capabilities;
      for (size_t i = 0; o->caps[i]; i++)
        {
          const char *name = o->caps[i];
          _cleanup_free_ char *full = NULL;
          if (strncasecmp (name, "CAP_", 4) != 0)
            name = full = xasprintf ("CAP_%s", name);
          _cleanup_free_ char *upper = xstrdup (name);
          for (char *s = upper; *s; s++)
            if (*s >= 'a' && *s <= 'z')
              *s = (char) (*s - 'a' + 'A');
          /* As runc since CVE-2022-29162: never inheritable, and ambient only
           * when the process config already has inheritable capabilities
           * (ambient ones need them); else a capability given to this one
           * process would survive into every program it executes. */
          append_cap (&c->bounding, upper);
          append_cap (&c->effective, upper);
          append_cap (&c->permitted, upper);
          if (c->inheritable && c->inheritable[0])
            append_cap (&c->ambient, upper);
        }
    }
  if (o->no_new_privs)
    p->no_new_privileges = true;
  p->terminal = o->tty;
  if (p->args == NULL || p->args[0] == NULL)
    return kist_error_make (err, EINVAL, "exec: no command: give COMMAND [ARG...] or --process FILE");
  return 0;
}

/* The process to run: --process FILE, or the config's with the flags applied. */
static int
load_process (struct kist_spec *spec, const struct kist_exec_opts *o, struct kist_error **err)
{
  if (o->process_file)
    {
      _cleanup_free_ char *json = NULL;
      size_t len = 0;
      struct kist_process *p = NULL;
      if (kist_read_file_at (AT_FDCWD, o->process_file, KIST_SPEC_MAX_SIZE, &json, &len, err) < 0)
        return kist_error_wrap (err, "--process `%s`", o->process_file);
      if (kist_process_parse (json, len, &p, err) < 0)
        return kist_error_wrap (err, "--process `%s`", o->process_file);
      kist_process_free (spec->process);
      spec->process = p;
      if (o->args && o->args[0])
        return kist_error_make (err, EINVAL,
                                "exec: give either --process FILE or COMMAND [ARG...], not both");
      if (o->tty)
        p->terminal = true; /* --tty adds a terminal to the file's process (runc) */
      return 0;
    }
  if (spec->process == NULL)
    spec->process = xcalloc (1, sizeof *spec->process);
  return kist_exec_apply_flags (spec->process, o, err);
}

/* ------------------------------------------------------------- helper */

static void __attribute__ ((noreturn))
child_fail (int fd, struct kist_error *e)
{
  kist_sync_send_error (fd, e);
  _exit (kist_error_exit_status (e));
}


/* Join the init's namespaces and verify each from /proc/self/ns (opened on
 * the host's procfs before the mount namespace changes). */
static int
join_namespaces (struct exec_job *j, struct kist_report *r, struct kist_error **err)
{
  /* O_PATH: a non-dumpable process cannot list its own ns dir when it is
   * not root (owner root), but it may look up its entries. */
  _cleanup_close_ int nsdir = open ("/proc/self/ns", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (nsdir < 0)
    return kist_error_make (err, errno, "open /proc/self/ns (host procfs)");
  for (size_t i = 0; i < KIST_ARRAY_SIZE (join_order); i++)
    {
      enum kist_ns_type t = join_order[i];
      _cleanup_free_ char *layer = xasprintf ("namespace.%s", kist_ns_name (t));
      if (j->nsfd[t] < 0)
        {
          kist_report_skip (r, layer, "the container shares kist's %s namespace",
                            kist_ns_name (t));
          continue;
        }
      if (setns (j->nsfd[t], (int) kist_ns_clone_flag (t)) < 0)
        {
          int e = errno;
          if (kist_report_failed (r, layer, "", e, err,
                                  "setns into /proc/%d/ns/%s (the container init's): %s",
                                  (int) j->init_pid, kist_ns_proc_name (t), strerror (e))
              < 0)
            return -1;
          continue;
        }
      close (j->nsfd[t]);
      j->nsfd[t] = -1;
      const char *name = t == KIST_NS_PID ? "pid_for_children" : kist_ns_proc_name (t);
      struct stat st;
      if (fstatat (nsdir, name, &st, 0) < 0)
        {
          int e = errno;
          if (kist_report_failed (r, layer, "", e, err, "read back /proc/self/ns/%s: %s", name,
                                  strerror (e))
              < 0)
            return -1;
          continue;
        }
      if (st.st_ino != j->ns_ino[t] || st.st_dev != j->ns_dev[t])
        {
          if (kist_report_failed (r, layer, "", EPROTO, err,
                                  "after setns /proc/self/ns/%s is inode %lu, the init's is %lu",
                                  name, (unsigned long) st.st_ino, (unsigned long) j->ns_ino[t])
              < 0)
            return -1;
          continue;
        }
      kist_report_applied (r, layer, "", "joined the init's (%s:[%lu])", kist_ns_proc_name (t),
                           (unsigned long) st.st_ino);
    }
  return 0;
}

static void __attribute__ ((noreturn))
final_process (struct exec_job *j, struct kist_report *r, size_t sent)
{
  struct kist_ctx *ctx = &j->ctx;
  int fd = ctx->sync_fd;
  _cleanup_error_ struct kist_error *err = NULL;

  /* After setns into the mount namespace, "/" is the container's root. */
  ctx->rootfs_fd = open ("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (ctx->rootfs_fd < 0)
    {
      kist_error_make (&err, errno, "open the container root after joining its mount namespace");
      child_fail (fd, err);
    }
  /* Every SETUP layer of the registry (layer.c) that exec runs, in order. */
  if (kist_layers_run (KIST_PHASE_SETUP, KIST_FOR_EXEC, ctx, r, &sent, &err) < 0)
    child_fail (fd, err);
  /* Session, no host fd, the filter, READY, execve by fd. */
  if (kist_process_exec (ctx, r, &sent, &err) < 0)
    {
      kist_sync_send_layers (fd, r, sent, &sent);
      child_fail (fd, err);
    }
  _exit (KIST_EXIT_FAILURE);
}

static void __attribute__ ((noreturn))
exec_helper (struct exec_job *j)
{
  int fd = j->ctx.sync_fd;
  _cleanup_error_ struct kist_error *err = NULL;

  if (prctl (PR_SET_PDEATHSIG, SIGKILL) < 0)
    _exit (KIST_EXIT_FAILURE);
  if (kist_prepare_exec_fds (j->o->preserve_fds, &err) < 0)
    child_fail (fd, err);
  /* Wait until the parent put us into the cgroup scope. */
  char type = 0;
  _cleanup_free_ char *payload = NULL;
  if (kist_sync_recv (fd, &type, &payload, NULL) < 0 || type != KIST_SYNC_GO)
    _exit (KIST_EXIT_FAILURE);

  struct kist_report *r = kist_report_new (j->ctx.id, "exec", j->o->allow_degraded);
  size_t sent = 0;
  bool join_pid = j->nsfd[KIST_NS_PID] >= 0;
  /* oom_score_adj while /proc/self is still ours to write (inherited by the
   * final process); then non-dumpable before joining anything, so that no
   * container process can reach the helper or the final process through
   * /proc/PID (fd, mem, ptrace) before execve (CVE-2016-9962); and no host
   * fd (bundle, log, the caller's) goes along: only the sync socket and the
   * namespaces to join. */
  int ret = kist_oom_apply (&j->ctx, r, &err);
  if (ret == 0 && (prctl (PR_SET_DUMPABLE, 0, 0, 0, 0) < 0 || prctl (PR_GET_DUMPABLE) != 0))
    ret = kist_error_make (&err, errno, "prctl(PR_SET_DUMPABLE, 0)");
  int keep[KIST_NS_COUNT + 1];
  size_t n_keep = 0;
  keep[n_keep++] = fd;
  for (int t = 0; t < KIST_NS_COUNT; t++)
    keep[n_keep++] = j->nsfd[t];
  if (ret == 0)
    ret = kist_close_fds_except (j->o->preserve_fds, keep, n_keep, &err);
  j->ctx.bundle_fd = -1;
  if (ret == 0)
    ret = join_namespaces (j, r, &err);
  if (kist_sync_send_layers (fd, r, sent, &sent) < 0)
    _exit (KIST_EXIT_FAILURE);
  if (ret < 0)
    child_fail (fd, err);

  pid_t pid = join_pid ? fork () : getpid ();
  if (pid < 0)
    {
      kist_error_make (&err, errno, "fork the process into the container's pid namespace");
      child_fail (fd, err);
    }
  if (pid == 0)
    final_process (j, r, sent);
  char buf[32];
  int n = snprintf (buf, sizeof buf, "%d", (int) pid);
  if (kist_sync_send (fd, KIST_EXEC_SYNC_PID, buf, (size_t) n) < 0)
    _exit (KIST_EXIT_FAILURE);
  if (!join_pid)
    final_process (j, r, sent);
  _exit (0);
}

/* ------------------------------------------------------------- parent */

static int
open_namespaces (struct exec_job *j, struct kist_error **err)
{
  for (int t = 0; t < KIST_NS_COUNT; t++)
    {
      const char *name = kist_ns_proc_name ((enum kist_ns_type) t);
      char path[64];
      snprintf (path, sizeof path, "/proc/%d/ns/%s", (int) j->init_pid, name);
      struct stat self, init;
      _cleanup_close_ int fd = open (path, O_RDONLY | O_CLOEXEC);
      if (fd < 0)
        {
          if (errno == ENOENT && t == KIST_NS_TIME)
            continue; /* a kernel without time namespaces */
          return kist_error_make (err, errno, "open %s (a namespace of the container init)", path);
        }
      if (fstat (fd, &init) < 0)
        return kist_error_make (err, errno, "fstat %s", path);
      snprintf (path, sizeof path, "/proc/self/ns/%s", name);
      if (stat (path, &self) < 0)
        return kist_error_make (err, errno, "stat %s", path);
      if (self.st_ino == init.st_ino && self.st_dev == init.st_dev)
        continue;
      j->ns_ino[t] = init.st_ino;
      j->ns_dev[t] = init.st_dev;
      j->nsfd[t] = steal_fd (&fd);
    }
  return 0;
}

static int
write_reports (const struct kist_exec_opts *o, const struct kist_report *r, struct kist_error **err)
{
  if (o->report_path && kist_report_write_path (r, o->report_path, err) < 0)
    return kist_error_wrap (err, "--report `%s`", o->report_path);
  if (o->report_fd >= 0 && kist_report_write_fd (r, o->report_fd, err) < 0)
    return kist_error_wrap (err, "--report-fd %d", o->report_fd);
  return 0;
}

static void
reap (pid_t pid)
{
  if (pid <= 0)
    return;
  while (waitpid (pid, NULL, 0) < 0 && errno == EINTR)
    ;
}

/* exec's collect: the helper's and the process's messages until the exec
 * (EOF after READY: 0), an error or a death (< 0).  READY: the process
 * waits for our word before execve; it gets it once what it set was read
 * from outside (verify.h).  The helper's PID may come after READY. */
struct exec_collect
{
  struct exec_job *j;
  pid_t *gpid;
  bool ready, confirmed;
};

static int
exec_confirm (struct exec_collect *e, struct kist_report *r, struct kist_error **err)
{
  if (!e->ready || e->confirmed || *e->gpid <= 0)
    return 0;
  if (kist_verify_outside (&e->j->ctx, *e->gpid, r, err) < 0)
    return -1;
  e->confirmed = true;
  if (kist_sync_send (e->j->ctx.sync_fd, KIST_SYNC_GO, NULL, 0) < 0)
    return kist_error_make (err, errno, "the exec'd process is gone before its exec");
  return 0;
}

static int
exec_ready (struct kist_collect *c, struct kist_report *r, struct kist_error **err)
{
  struct exec_collect *e = c->arg;
  e->ready = true;
  return exec_confirm (e, r, err);
}

static int
exec_pid (struct kist_collect *c, const char *payload, struct kist_report *r,
          struct kist_error **err)
{
  struct exec_collect *e = c->arg;
  int p = 0;
  if (kist_parse_int (payload, &p) < 0 || p <= 0)
    return kist_error_make (err, EPROTO, "malformed pid from the exec helper");
  *e->gpid = p;
  r->pid = p;
  /* Reap the helper now (unless it is the process itself): the process is
   * then reparented to us, the subreaper. */
  if (p != e->j->ctx.pid)
    {
      reap (e->j->ctx.pid);
      e->j->ctx.pid = 0;
    }
  return exec_confirm (e, r, err);
}

static int
exec_end (struct kist_collect *c, int ret, struct kist_report *r, struct kist_error **err)
{
  const struct exec_collect *e = c->arg;
  if (e->confirmed)
    return 0;
  return kist_error_make (err, ret == -ECONNRESET ? 0 : -ret,
                          "the exec helper of container `%s` died during setup without saying "
                          "why, %s%s%s",
                          e->j->ctx.id, r->n_layers ? "after the layer `" : "before any layer",
                          r->n_layers ? r->layers[r->n_layers - 1].name : "",
                          r->n_layers ? "` (see --report)" : "");
}

static int
collect (struct exec_job *j, struct kist_report *r, pid_t *gpid, struct kist_error **err)
{
  struct exec_collect e = { .j = j, .gpid = gpid };
  struct kist_collect c = { .who = "the exec helper", .ctx = &j->ctx, .on_ready = exec_ready,
                            .on_pid = exec_pid, .on_end = exec_end, .arg = &e,
                            .abandon = "not verified from outside: the exec'd process failed or "
                                       "ended before it was ready" };
  return kist_collect_run (j->ctx.sync_fd, &c, r, err);
}


/* What one exec holds on the parent's side, until it returns. */
struct exec_parent
{
  const struct kist_globals *g;
  struct exec_job j;
  struct kist_spec *spec;
  struct kist_report *r;
  struct kist_state st;
  char *root;
  int rootfd, dirfd, bundle_fd, sync_parent, sync_child;
  pid_t gpid;                    /* the final process, once the helper sent it */
  bool reports_written;
};

static void
exec_parent_free (struct exec_parent *p)
{
  kist_report_free (p->r);
  kist_spec_free (p->spec);
  kist_seccomp_free (p->j.ctx.seccomp);
  kist_cgroup_free (p->j.ctx.cgroup);
  if (p->j.ctx.tty.master >= 0)
    close (p->j.ctx.tty.master);
  for (int t = 0; t < KIST_NS_COUNT; t++)
    if (p->j.nsfd[t] >= 0)
      close (p->j.nsfd[t]);
  free (p->j.ctx.exec_path);
  kist_strv_free (p->j.ctx.envp);
  kist_state_clear (&p->st);
  free (p->root);
  const int fds[] = { p->rootfd, p->dirfd, p->bundle_fd, p->sync_parent, p->sync_child };
  for (size_t i = 0; i < KIST_ARRAY_SIZE (fds); i++)
    if (fds[i] >= 0)
      close (fds[i]);
}

/* The container (locked, running) and its config with the process
 * replaced. */
static int
exec_load (struct exec_parent *p, struct kist_error **err)
{
  const struct kist_exec_opts *o = p->j.o;
  struct kist_ctx *ctx = &p->j.ctx;
  if (p->g->systemd_cgroup)
    return kist_error_make (err, ENOTSUP,
                            "--systemd-cgroup: the systemd cgroup driver is not implemented by kist");
  if (kist_id_validate (o->id, err) < 0)
    return -1;
  p->rootfd = kist_state_root_open (p->g->root, &p->root, err);
  if (p->rootfd < 0 || kist_state_open (p->rootfd, o->id, &p->dirfd, err) < 0
      || kist_state_read (p->dirfd, &p->st, err) < 0
      || kist_status_allows (kist_container_status (&p->st), KIST_OP_EXEC, o->id, err) < 0)
    return -1;
  p->j.init_pid = p->st.pid;
  p->bundle_fd = open (p->st.bundle, O_DIRECTORY | O_CLOEXEC);
  if (p->bundle_fd < 0)
    return kist_error_make (err, errno, "bundle `%s` of container `%s`", p->st.bundle, o->id);
  if (kist_spec_load (p->bundle_fd, &p->spec, err) < 0)
    return kist_error_wrap (err, "bundle `%s`", p->st.bundle);
  if (load_process (p->spec, o, err) < 0
      || kist_seccomp_choose (p->spec, p->bundle_fd, &ctx->seccomp, err) < 0)
    return -1;
  ctx->spec = p->spec;
  ctx->bundle = p->st.bundle;
  ctx->bundle_fd = p->bundle_fd;
  ctx->rootfs = p->st.rootfs;
  ctx->userns = p->spec->linux_ && p->spec->linux_->ns[KIST_NS_USER].present;
  ctx->root_fd = p->rootfd;
  ctx->cgroup_path = p->st.cgroup_path;
  p->r = kist_report_new (o->id, "exec", o->allow_degraded);
  return 0;
}

/* The helper: the init's namespaces opened, the sync socket, kist a child
 * subreaper (the final process is reparented to us when the helper exits),
 * clone into the scope.  The child goes on in exec_helper. */
static int
exec_spawn (struct exec_parent *p, struct kist_error **err)
{
  struct kist_ctx *ctx = &p->j.ctx;
  if (kist_ns_host_inodes (ctx, err) < 0 || open_namespaces (&p->j, err) < 0)
    return -1;
  int pair[2];
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) < 0)
    return kist_error_make (err, errno, "socketpair");
  p->sync_parent = pair[0];
  p->sync_child = pair[1];
  if (prctl (PR_SET_CHILD_SUBREAPER, 1) < 0)
    return kist_error_make (err, errno, "prctl(PR_SET_CHILD_SUBREAPER)");
  struct kist_cgroup *cg = ctx->cgroup;
  pid_t pid = kist_cgroup_clone (0, cg ? cg->dirfd : -1, &ctx->cgroup_born_in);
  if (pid < 0)
    return kist_error_make (err, errno, "fork the exec helper");
  if (pid == 0)
    {
      /* dirfd carries the flock of this exec: not for the container. */
      kist_child_drop_parent_fds (ctx, p->sync_parent, p->dirfd, p->rootfd, p->sync_child);
      exec_helper (&p->j);
    }
  ctx->pid = pid;
  close (steal_fd (&p->sync_child));
  ctx->sync_fd = p->sync_parent;
  for (int t = 0; t < KIST_NS_COUNT; t++)
    if (p->j.nsfd[t] >= 0)
      close (steal_fd (&p->j.nsfd[t]));
  return 0;
}

/* The process runs: the exec entry, the helper reaped, the lock given up
 * (it is for the setup only), the pid file and the reports. */
static int
exec_finish (struct exec_parent *p, struct kist_error **err)
{
  const struct kist_exec_opts *o = p->j.o;
  kist_report_applied (p->r, "exec", NULL, "execve of `%s` succeeded (seen by the parent)",
                       p->spec->process->args[0]);
  kist_report_time_startup (p->r);
  if (p->j.ctx.pid > 0 && p->j.ctx.pid != p->gpid)
    reap (p->j.ctx.pid);
  p->j.ctx.pid = 0;
  close (steal_fd (&p->dirfd));
  if (o->pid_file && kist_write_pid_file (o->pid_file, p->gpid, err) < 0)
    return -1;
  if (write_reports (o, p->r, err) < 0)
    {
      p->reports_written = true; /* do not try (and fail) again when undoing */
      return -1;
    }
  _cleanup_free_ char *ungranted = kist_caps_unknown_text (p->spec->process->capabilities);
  if (ungranted)
    kist_log_warn ("exec in container `%s`: capabilities not granted (a grant that cannot be "
                   "given leaves the process more confined): %s",
                   o->id, ungranted);
  return 0;
}

/* A failed exec: the helper and the process killed, the report written. */
static void
exec_undo (struct exec_parent *p)
{
  pid_t helper = p->j.ctx.pid;
  if (helper > 0)
    {
      kill (helper, SIGKILL);
      reap (helper);
    }
  if (p->gpid > 0 && p->gpid != helper)
    {
      kill (p->gpid, SIGKILL);
      reap (p->gpid);
    }
  if (p->r && !p->reports_written)
    {
      _cleanup_error_ struct kist_error *werr = NULL;
      if (write_reports (p->j.o, p->r, &werr) < 0)
        kist_log_warn ("%s", werr->msg);
    }
}

/* The exec, as a table of contents: the registry's PREPARE layers for exec,
 * the helper, its ENTER layers, the process's SETUP layers (collected), the
 * finish. */
int
kist_exec (const struct kist_globals *g, const struct kist_exec_opts *o, pid_t *pid_out,
           struct kist_error **err)
{
  __attribute__ ((cleanup (exec_parent_free))) struct exec_parent p = {
    .g = g, .rootfd = -1, .dirfd = -1, .bundle_fd = -1, .sync_parent = -1, .sync_child = -1,
    .j = { .o = o,
           .ctx = { .g = g, .id = o->id, .rootfs_fd = -1, .root_fd = -1, .exec_fd = -1,
                    .sync_fd = -1, .start_fd = -1, .state_dirfd = -1, .bundle_fd = -1,
                    .preserve_fds = o->preserve_fds, .pid_file = o->pid_file, .detach = o->detach,
                    .console_socket = o->console_socket,
                    .tty = { .slave = -1, .index = -1, .master = -1,
                             .relay = !o->detach && o->pty_master } } }
  };
  for (int t = 0; t < KIST_NS_COUNT; t++)
    p.j.nsfd[t] = -1;
  if (o->pty_master)
    *o->pty_master = -1;
  if (exec_load (&p, err) < 0)
    return -1;
  struct kist_ctx *ctx = &p.j.ctx;
  if (kist_layers_run_parent (KIST_PHASE_PREPARE, KIST_FOR_EXEC, ctx, p.r, err) < 0
      || exec_spawn (&p, err) < 0
      || kist_layers_run_parent (KIST_PHASE_ENTER, KIST_FOR_EXEC, ctx, p.r, err) < 0)
    goto fail;
  if (kist_sync_send (p.sync_parent, KIST_SYNC_GO, NULL, 0) < 0)
    {
      kist_error_make (err, errno, "the exec helper is gone before setup");
      goto fail;
    }
  if (collect (&p.j, p.r, &p.gpid, err) < 0 || kist_terminal_deliver (ctx, p.r, err) < 0
      || exec_finish (&p, err) < 0)
    goto fail;
  *pid_out = p.gpid;
  if (o->pty_master)
    *o->pty_master = steal_fd (&ctx->tty.master);
  return 0;

fail:
  exec_undo (&p);
  return -1;
}
