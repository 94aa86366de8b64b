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

/* Read the helper's and the process's messages until the exec (EOF after
 * READY: 0), an error or a death (< 0).  *gpid gets the final pid. */
static int
collect_messages (struct exec_job *j, struct kist_report *r, pid_t *gpid,
                  struct kist_error **err)
{
  /* READY: the process waits for our word before execve; it gets it once
   * what it set was read from outside (verify.h).  The helper's PID may come
   * after the process's READY. */
  bool ready = false, confirmed = false;
#define CONFIRM()                                                                                \
  do                                                                                             \
    {                                                                                            \
      if (ready && !confirmed && *gpid > 0)                                                      \
        {                                                                                        \
          if (kist_verify_outside (&j->ctx, *gpid, r, err) < 0)                                  \
            return -1;                                                                           \
          confirmed = true;                                                                      \
          if (kist_sync_send (j->ctx.sync_fd, KIST_SYNC_GO, NULL, 0) < 0)                        \
            return kist_error_make (err, errno, "the exec'd process is gone before its exec");   \
        }                                                                                        \
    }                                                                                            \
  while (0)
  for (;;)
    {
      char type = 0;
      _cleanup_free_ char *payload = NULL;
      _cleanup_close_ int passed = -1;
      size_t len = 0;
      int ret = kist_sync_recv_fd (j->ctx.sync_fd, &type, &payload, &len, &passed);
      if (ret < 0)
        {
          if (confirmed)
            return 0;
          return kist_error_make (err, ret == -ECONNRESET ? 0 : -ret,
                                  "the exec helper of container `%s` died during setup without "
                                  "saying why, %s%s%s",
                                  j->ctx.id, r->n_layers ? "after the layer `" : "before any layer",
                                  r->n_layers ? r->layers[r->n_layers - 1].name : "",
                                  r->n_layers ? "` (see --report)" : "");
        }
      switch (type)
        {
        case KIST_SYNC_LAYER:
          if (kist_sync_add_layer (r, payload, len, "the exec helper", err) < 0)
            return -1;
          break;
        case KIST_SYNC_SECCOMP_FD:
          if (passed < 0)
            return kist_error_make (err, EPROTO, "the exec helper sent no seccomp listener fd");
          if (kist_seccomp_notify_forward (&j->ctx, passed, err) < 0)
            return -1;
          break;
        case KIST_EXEC_SYNC_PID:
          {
            int p = 0;
            if (kist_parse_int (payload, &p) < 0 || p <= 0)
              return kist_error_make (err, EPROTO, "malformed pid from the exec helper");
            *gpid = p;
            r->pid = p;
            /* Reap the helper now (unless it is the process itself): the
             * process is then reparented to us, the subreaper. */
            if (p != j->ctx.pid)
              {
                reap (j->ctx.pid);
                j->ctx.pid = 0;
              }
            CONFIRM ();
            break;
          }
        case KIST_SYNC_PTY:
          if (kist_terminal_take (&j->ctx, steal_fd (&passed), err) < 0)
            return -1;
          break;
        case KIST_SYNC_ERROR:
          return kist_sync_decode_error (payload, len, err);
        case KIST_SYNC_READY:
          ready = true;
          CONFIRM ();
          break;
        default:
          return kist_error_make (err, EPROTO, "unexpected message %d from the exec helper", type);
        }
    }
#undef CONFIRM
}

/* ... and on failure, no entry stays pending in the report written. */
static int
collect (struct exec_job *j, struct kist_report *r, pid_t *gpid, struct kist_error **err)
{
  int ret = collect_messages (j, r, gpid, err);
  if (ret < 0)
    kist_verify_abandon (r, "not verified from outside: the exec'd process failed or ended "
                            "before it was ready");
  return ret;
}


int
kist_exec (const struct kist_globals *g, const struct kist_exec_opts *o, pid_t *pid_out,
           struct kist_error **err)
{
  _cleanup_close_ int rootfd = -1, dirfd = -1, bundle_fd = -1, sync_child = -1;
  _cleanup_cgroup_ struct kist_cgroup *cg = NULL;
  _cleanup_close_ int sync_parent = -1;
  _cleanup_spec_ struct kist_spec *spec = NULL;
  _cleanup_seccomp_ struct kist_seccomp *seccomp = NULL;
  _cleanup_report_ struct kist_report *r = NULL;
  _cleanup_free_ char *root = NULL;
  struct kist_state st = { 0 };
  struct exec_job j = { .o = o };
  pid_t gpid = 0;
  int ret = -1;

  for (int t = 0; t < KIST_NS_COUNT; t++)
    j.nsfd[t] = -1;
  j.ctx = (struct kist_ctx){ .g = g, .id = o->id, .rootfs_fd = -1, .root_fd = -1, .exec_fd = -1, .sync_fd = -1, .start_fd = -1,
                             .state_dirfd = -1, .bundle_fd = -1, .preserve_fds = o->preserve_fds,
                             .pid_file = o->pid_file, .detach = o->detach,
                             .console_socket = o->console_socket,
                             .tty = { .slave = -1, .index = -1, .master = -1 } };
  if (o->pty_master)
    *o->pty_master = -1;
  if (g->systemd_cgroup)
    return kist_error_make (err, ENOTSUP,
                            "--systemd-cgroup: the systemd cgroup driver is not implemented by kist");
  if (kist_id_validate (o->id, err) < 0)
    return -1;
  rootfd = kist_state_root_open (g->root, &root, err);
  if (rootfd < 0)
    return -1;
  if (kist_state_open (rootfd, o->id, &dirfd, err) < 0)
    return -1;
  if (kist_state_read (dirfd, &st, err) < 0)
    goto out;
  if (kist_status_allows (kist_container_status (&st), KIST_OP_EXEC, o->id, err) < 0)
    goto out;
  j.init_pid = st.pid;

  /* The container's config, with the process replaced. */
  bundle_fd = open (st.bundle, O_DIRECTORY | O_CLOEXEC);
  if (bundle_fd < 0)
    {
      kist_error_make (err, errno, "bundle `%s` of container `%s`", st.bundle, o->id);
      goto out;
    }
  if (kist_spec_load (bundle_fd, &spec, err) < 0)
    {
      kist_error_wrap (err, "bundle `%s`", st.bundle);
      goto out;
    }
  if (load_process (spec, o, err) < 0)
    goto out;
  j.ctx.spec = spec;
  j.ctx.bundle = st.bundle;
  j.ctx.bundle_fd = bundle_fd;
  j.ctx.rootfs = st.rootfs;
  j.ctx.userns = spec->linux_ && spec->linux_->ns[KIST_NS_USER].present;

  r = kist_report_new (o->id, "exec", o->allow_degraded);
  /* PREPARE: the registry's parent layers for exec (layer.c). */
  j.ctx.root_fd = rootfd;
  j.ctx.cgroup_path = st.cgroup_path;
  j.ctx.tty.relay = !o->detach && o->pty_master;
  ret = kist_layers_run_parent (KIST_PHASE_PREPARE, KIST_FOR_EXEC, &j.ctx, r, err);
  seccomp = j.ctx.seccomp; /* owned here from now on, also on failure */
  cg = j.ctx.cgroup;
  if (ret < 0)
    goto fail;
  ret = -1;
  if (kist_ns_host_inodes (&j.ctx, err) < 0)
    goto fail;
  if (open_namespaces (&j, err) < 0)
    goto fail;

  int pair[2];
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) < 0)
    {
      kist_error_make (err, errno, "socketpair");
      goto fail;
    }
  sync_parent = pair[0];
  sync_child = pair[1];
  /* The final process is reparented to us when the helper exits. */
  if (prctl (PR_SET_CHILD_SUBREAPER, 1) < 0)
    {
      kist_error_make (err, errno, "prctl(PR_SET_CHILD_SUBREAPER)");
      goto fail;
    }

  pid_t pid = kist_cgroup_clone (0, cg ? cg->dirfd : -1, &j.ctx.cgroup_born_in);
  if (pid < 0)
    {
      kist_error_make (err, errno, "fork the exec helper");
      goto fail;
    }
  if (pid == 0)
    {
      /* dirfd carries the flock of this exec: not for the container. */
      close (sync_parent);
      close (dirfd);
      close (rootfd);
      if (cg)
        close (steal_fd (&cg->dirfd));
      j.ctx.root_fd = -1;
      j.ctx.sync_fd = sync_child;
      exec_helper (&j);
    }
  j.ctx.pid = pid;
  close (sync_child);
  sync_child = -1;
  j.ctx.sync_fd = sync_parent;
  for (int t = 0; t < KIST_NS_COUNT; t++)
    if (j.nsfd[t] >= 0)
      {
        close (j.nsfd[t]);
        j.nsfd[t] = -1;
      }

  /* ENTER: the registry's parent layers while the helper waits for GO. */
  if (kist_layers_run_parent (KIST_PHASE_ENTER, KIST_FOR_EXEC, &j.ctx, r, err) < 0)
    goto fail;
  if (kist_sync_send (sync_parent, KIST_SYNC_GO, NULL, 0) < 0)
    {
      kist_error_make (err, errno, "the exec helper is gone before setup");
      goto fail;
    }
  if (collect (&j, r, &gpid, err) < 0 || kist_terminal_deliver (&j.ctx, r, err) < 0)
    goto fail;
  kist_report_applied (r, "exec", NULL, "execve of `%s` succeeded (seen by the parent)",
                       spec->process->args[0]);
  /* The helper exited after sending the pid; reap it if not done yet. */
  if (j.ctx.pid > 0 && j.ctx.pid != gpid)
    reap (j.ctx.pid);
  j.ctx.pid = 0;
  /* The lock is for the setup only. */
  close (dirfd);
  dirfd = -1;
  if (o->pid_file && kist_write_pid_file (o->pid_file, gpid, err) < 0)
    {
      kill (gpid, SIGKILL);
      reap (gpid);
      goto fail;
    }
  if (write_reports (o, r, err) < 0)
    {
      kill (gpid, SIGKILL);
      reap (gpid);
      goto out;
    }
  {
    _cleanup_free_ char *ungranted = kist_caps_unknown_text (spec->process->capabilities);
    if (ungranted)
      kist_log_warn ("exec in container `%s`: capabilities not granted (a grant that cannot be "
                     "given leaves the process more confined): %s",
                     o->id, ungranted);
  }
  *pid_out = gpid;
  if (o->pty_master)
    {
      *o->pty_master = j.ctx.tty.master;
      j.ctx.tty.master = -1;
    }
  ret = 0;
  goto out;

fail:
  if (j.ctx.pid > 0)
    {
      kill (j.ctx.pid, SIGKILL);
      reap (j.ctx.pid);
    }
  if (gpid > 0 && gpid != j.ctx.pid)
    {
      /* An exec failure: the process exits by itself; make sure. */
      kill (gpid, SIGKILL);
      reap (gpid);
    }
  if (r)
    {
      _cleanup_error_ struct kist_error *werr = NULL;
      if (write_reports (o, r, &werr) < 0)
        kist_log_warn ("%s", werr->msg);
    }
out:
  if (j.ctx.tty.master >= 0)
    close (j.ctx.tty.master);
  for (int t = 0; t < KIST_NS_COUNT; t++)
    if (j.nsfd[t] >= 0)
      close (j.nsfd[t]);
  free (j.ctx.exec_path);
  kist_strv_free (j.ctx.envp);
  kist_state_clear (&st);
  return ret;
}
