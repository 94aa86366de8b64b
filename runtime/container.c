/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: the container lifecycle.
 *
 *   kist_create        parent: validate, state dir, clone the init, idmaps,
 *                      collect the init's report entries until it is ready
 *   init_main          container init: the layers, in order (init_layers),
 *                      then wait on start.sock and execve
 *   kist_container_start / _kill / _delete
 *
 * The init waits for `start` by accepting on ROOT/ID/start.sock (bound by the
 * parent before clone).  The accepted connection is close-on-exec, so the
 * start client sees EOF exactly when execve succeeded, or an error message
 * when it failed. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <linux/sched.h>
#include <unistd.h>

#include "container.h"
#include "hooks.h"
#include "json.h"
#include "log.h"
#include "caps.h"
#include "cgroup.h"
#include "ns.h"
#include "seccomp.h"
#include "sync.h"
#include "terminal.h"
#include "util.h"


/* From here on no process in the container can reach the init through
 * /proc/PID (fd, mem, ptrace): it becomes non-dumpable before it joins or
 * creates anything, and stays so until execve (CVE-2016-9962).  The
 * rootless parent wrote the id maps before GO, while it still could. */
static int
kist_nondumpable (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err)
{
  (void) ctx;
  (void) r;
  if (prctl (PR_SET_DUMPABLE, 0, 0, 0, 0) < 0 || prctl (PR_GET_DUMPABLE, 0, 0, 0, 0) != 0)
    return kist_error_make (err, errno, "prctl(PR_SET_DUMPABLE, 0)");
  return 0;
}

/* The container init's table of contents: every layer, in the order applied.
 * The end of it (session, fds, the filter, execve) is kist_process_exec,
 * after `start`. */
static const kist_layer_fn init_layers[] = {
  kist_oom_apply,       /* oom_score_adj: while the init has kist's credentials and
                           /proc/self is still its own to write */
  kist_nondumpable,     /* (no entry) */
  kist_ns_apply,        /* namespace.*: joins, the time namespace, read back */
  kist_net_apply,       /* network.loopback: before the hooks, which may add links (docker's
                           prestart moves eth0 in) */
  kist_rootfs_prepare,  /* rootfs.propagation, rootfs.bind */
  kist_mounts_apply,    /* mounts */
  kist_terminal_apply,  /* terminal: the pty of the container's devpts, /dev/console */
  kist_dev_apply,       /* dev (last: a read-only /dev tmpfs goes read-only here) */
  kist_hooks_create_apply, /* hooks.prestart, hooks.createRuntime (run by the parent),
                              hooks.createContainer */
  kist_rootfs_pivot,    /* rootfs.pivot_root */
  kist_uts_apply,       /* hostname, domainname */
  kist_sysctl_apply,    /* sysctl */
  kist_paths_apply,     /* masked_paths, readonly_paths */
  kist_process_prepare, /* cwd (created before the root goes read-only), environment,
                           executable lookup */
  kist_rootfs_readonly, /* rootfs.readonly */
  kist_rlimits_apply,   /* rlimit.* */
  kist_io_priority_apply, /* io_priority: before the user switch and any filter */
  kist_scheduler_apply, /* scheduler: likewise (SCHED_FIFO needs CAP_SYS_NICE) */
  kist_personality_apply, /* personality */
  kist_memory_policy_apply, /* memory_policy */
  kist_seccomp_apply_early, /* seccomp, here only without no_new_privileges (needs
                               CAP_SYS_ADMIN, as runc does) */
  kist_user_apply,      /* user */
  kist_caps_apply,      /* capabilities */
  kist_nnp_apply,       /* no_new_privileges */
  kist_seccomp_apply,   /* seccomp: here only a filter with a notify listener (its fd
                           goes to the waiting parent); else kist_process_exec */
  kist_exec_cpu_affinity_apply, /* exec_cpu_affinity: not for the init (says so) */
};

/* ------------------------------------------------------------------ init */

static void __attribute__ ((noreturn))
init_fail (int fd, struct kist_error *e)
{
  kist_sync_send_error (fd, e);
  _exit (kist_error_exit_status (e));
}

int
kist_prepare_exec_fds (int preserve_fds, struct kist_error **err)
{
  /* fds 3..3+N-1 are passed on (--preserve-fds); everything else above 2 is
   * closed at exec: our own fds are O_CLOEXEC already, and whatever kist
   * inherited (an engine's sockets, conmon's pipes) gets the flag here. */
  int first = 3 + (preserve_fds > 0 ? preserve_fds : 0);
  for (int fd = 3; fd < first; fd++)
    {
      int fl = fcntl (fd, F_GETFD);
      if (fl >= 0 && fcntl (fd, F_SETFD, fl & ~FD_CLOEXEC) < 0)
        return kist_error_make (err, errno, "--preserve-fds: clear close-on-exec on fd %d", fd);
    }
  if (syscall (SYS_close_range, (unsigned) first, ~0U, CLOSE_RANGE_CLOEXEC) < 0)
    return kist_error_make (err, errno, "close_range(%d, ~0, CLOSE_RANGE_CLOEXEC)", first);
  return 0;
}

/* Accept connections on the start socket until one sends START; returns it.
 * A connection that closes without a word is dropped; any other failure
 * (a filter loaded early that denies accept or recv, say) ends the init,
 * with the error sent on the connection when there is one, so that `start`
 * never waits for nothing. */
static int
wait_start (int start_fd, bool *ack)
{
  for (;;)
    {
      int conn = accept4 (start_fd, NULL, NULL, SOCK_CLOEXEC);
      if (conn < 0)
        {
          if (errno == EINTR || errno == ECONNABORTED)
            continue;
          _exit (KIST_EXIT_FAILURE);
        }
      char c[2] = { 0, 0 };
      ssize_t n;
      do
        n = recv (conn, c, sizeof c, 0);
      while (n < 0 && errno == EINTR);
      if (n >= 1 && c[0] == KIST_SYNC_START)
        {
          *ack = n == 2 && c[1] == 'A';
          return conn;
        }
      if (n < 0)
        {
          _cleanup_error_ struct kist_error *e = NULL;
          kist_error_make (&e, errno,
                           "the container init cannot read the start message (does the seccomp "
                           "profile, loaded before the user switch because noNewPrivileges is "
                           "false, deny recvfrom?)");
          init_fail (conn, e);
        }
      close (conn);
    }
}

static void __attribute__ ((noreturn))
init_main (struct kist_ctx *ctx, const char *operation, const char *allow_degraded)
{
  int fd = ctx->sync_fd;
  _cleanup_error_ struct kist_error *err = NULL;

  /* Until it is ready, the init dies with the kist process that made it.  If
   * the parent died before this prctl, the GO below reads EOF. */
  if (prctl (PR_SET_PDEATHSIG, SIGKILL) < 0)
    _exit (KIST_EXIT_FAILURE);
  /* Nothing the caller of create handed down stays with the waiting init
   * (an engine's sockets and pipes: the shim reads its pipes until EOF), only
   * stdio, --preserve-fds and kist's own. */
  const int keep[] = { fd, ctx->start_fd, ctx->bundle_fd, kist_log_fd () };
  if (kist_close_fds_except (ctx->preserve_fds, keep, KIST_ARRAY_SIZE (keep), &err) < 0
      || kist_prepare_exec_fds (ctx->preserve_fds, &err) < 0)
    init_fail (fd, err);

  /* Wait for the parent: the uid/gid maps are written when GO comes. */
  char type = 0;
  _cleanup_free_ char *payload = NULL;
  if (kist_sync_recv (fd, &type, &payload, NULL) < 0 || type != KIST_SYNC_GO)
    _exit (KIST_EXIT_FAILURE);

  struct kist_report *r = kist_report_new (ctx->id, operation, allow_degraded);
  size_t sent = 0;
  for (size_t i = 0; i < KIST_ARRAY_SIZE (init_layers); i++)
    {
      int ret = init_layers[i](ctx, r, &err);
      if (kist_sync_send_layers (fd, r, sent, &sent) < 0)
        _exit (KIST_EXIT_FAILURE);
      if (ret < 0)
        init_fail (fd, err);
    }
  /* With a terminal, the waiting init already has the pty as its stdio (as
   * runc): what made the create (an engine's shim) reads its output until
   * EOF and must not wait for the start. */
  kist_terminal_stdio (ctx);

  /* Ready.  Until kist_create has written the state (COMMIT), the init dies
   * with it: the user switch cleared the parent-death signal, so set it
   * again; a parent that died before that leaves the COMMIT recv an EOF. */
  if (prctl (PR_SET_PDEATHSIG, SIGKILL) < 0)
    {
      kist_error_make (&err, errno, "prctl(PR_SET_PDEATHSIG, SIGKILL)");
      init_fail (fd, err);
    }
  if (kist_sync_send (fd, KIST_SYNC_READY, NULL, 0) < 0)
    _exit (KIST_EXIT_FAILURE);
  _cleanup_free_ char *commit = NULL;
  if (kist_sync_recv (fd, &type, &commit, NULL) < 0 || type != KIST_SYNC_GO)
    _exit (KIST_EXIT_FAILURE);
  /* Committed: from now on the init outlives the kist process that created
   * it (except in a sandbox, which dies with its kist). */
  if (!ctx->die_with_parent && prctl (PR_SET_PDEATHSIG, 0) < 0)
    _exit (KIST_EXIT_FAILURE);
  /* Acknowledged: kist_create returns only now, so that its exit cannot
   * kill an init that had not cleared the signal yet. */
  if (kist_sync_send (fd, KIST_SYNC_READY, NULL, 0) < 0)
    _exit (KIST_EXIT_FAILURE);
  close (fd);

  int conn = wait_start (ctx->start_fd, &ctx->start_ack);
  close (ctx->start_fd);
  ctx->start_fd = -1;

  /* `start`: the rest is reported to the start client over conn, and the
   * filter is loaded only now, so that it cannot deny anything kist still
   * needed (accept, recv) and the client sees READY only right before the
   * execve. */
  ctx->sync_fd = conn;
  struct kist_report *rs = kist_report_new (ctx->id, operation, allow_degraded);
  size_t rs_sent = 0;
  if (kist_hooks_start_container (ctx, rs, &err) < 0
      || kist_process_exec (ctx, rs, &rs_sent, &err) < 0)
    {
      kist_sync_send_layers (conn, rs, rs_sent, &rs_sent);
      init_fail (conn, err);
    }
  _exit (KIST_EXIT_FAILURE);
}
/* ---------------------------------------------------------------- parent */

/* ROOT/ID/start.sock, addressed through the state dir fd (a path of any
 * length fits): the parent listens on it before clone, `start` connects. */
static int
start_socket (int state_dirfd, bool server, struct kist_error **err)
{
  struct sockaddr_un addr = { .sun_family = AF_UNIX };
  snprintf (addr.sun_path, sizeof addr.sun_path, "/proc/self/fd/%d/start.sock", state_dirfd);
  _cleanup_close_ int s = socket (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (s < 0)
    return kist_error_make (err, errno, "socket(AF_UNIX)");
  if (server && (bind (s, (struct sockaddr *) &addr, sizeof addr) < 0 || listen (s, 4) < 0))
    return kist_error_make (err, errno, "listen on the start socket in the state directory");
  if (!server && connect (s, (struct sockaddr *) &addr, sizeof addr) < 0)
    return kist_error_make (err, errno, "connect to the container's start socket");
  return steal_fd (&s);
}

static int
resolve_rootfs (struct kist_ctx *ctx, struct kist_error **err)
{
  const char *root = ctx->spec->root_path;
  _cleanup_free_ char *path
      = root[0] == '/' ? xstrdup (root) : xasprintf ("%s/%s", ctx->bundle, root);
  struct stat st;
  if (lstat (path, &st) < 0)
    return kist_error_make (err, errno, "root.path `%s` (rootfs directory `%s`)", root, path);
  if (S_ISLNK (st.st_mode))
    return kist_error_make (err, ELOOP,
                            "root.path `%s` is a symlink; kist refuses a symlinked rootfs: point "
                            "root.path at the real directory",
                            root);
  if (!S_ISDIR (st.st_mode))
    return kist_error_make (err, ENOTDIR, "root.path `%s` is not a directory", root);
  char *real = realpath (path, NULL);
  if (real == NULL)
    return kist_error_make (err, errno, "root.path `%s`: realpath", root);
  ctx->rootfs = real;
  return 0;
}

int
kist_write_pid_file (const char *file, pid_t pid, struct kist_error **err)
{
  char buf[32];
  int n = snprintf (buf, sizeof buf, "%d", (int) pid);
  if (kist_write_file_atomic_path (file, buf, (size_t) n, 0644, err) < 0)
    return kist_error_wrap (err, "--pid-file `%s`", file);
  return 0;
}

int
kist_create_write_report (const struct kist_create_opts *o, const struct kist_report *r,
                          struct kist_error **err)
{
  if (r == NULL)
    return 0;
  if (o->report_path && kist_report_write_path (r, o->report_path, err) < 0)
    return -1;
  if (o->report_fd >= 0 && kist_report_write_fd (r, o->report_fd, err) < 0)
    return kist_error_wrap (err, "--report-fd %d", o->report_fd);
  return 0;
}

static int
store_report (int state_dirfd, const struct kist_report *r, struct kist_error **err)
{
  return kist_report_write_at (r, state_dirfd, "report.json", 0600, err);
}

/* Read the init's messages until READY (0), an ERROR or its death (< 0). */
static int
collect_init (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err)
{
  for (;;)
    {
      char type = 0;
      _cleanup_free_ char *payload = NULL;
      _cleanup_close_ int passed_fd = -1;
      size_t len = 0;
      int ret = kist_sync_recv_fd (ctx->sync_fd, &type, &payload, &len, &passed_fd);
      if (ret < 0)
        {
          int status = 0;
          pid_t w;
          do
            w = waitpid (ctx->pid, &status, 0);
          while (w < 0 && errno == EINTR);
          ctx->pid = 0;
          /* No error came: name the last layer it reported, the place to look. */
          _cleanup_free_ char *after
              = r->n_layers ? xasprintf (", after the layer `%s` (see the report)",
                                         r->layers[r->n_layers - 1].name)
                            : xstrdup (" before it reported any layer");
          if (w > 0 && WIFSIGNALED (status))
            return kist_error_make (err, 0,
                                    "the container init died during setup (signal %d%s)%s",
                                    WTERMSIG (status),
                                    WTERMSIG (status) == SIGSYS ? ": killed by its seccomp filter"
                                                                : "",
                                    after);
          return kist_error_make (err, 0,
                                  "the container init exited during setup (status %d) without "
                                  "saying why%s",
                                  w > 0 ? WEXITSTATUS (status) : -1, after);
        }
      switch (type)
        {
        case KIST_SYNC_LAYER:
          if (kist_sync_add_layer (r, payload, len, "the container init", err) < 0)
            return -1;
          break;
        case KIST_SYNC_SECCOMP_FD:
          if (passed_fd < 0)
            return kist_error_make (err, EPROTO, "the container init sent no seccomp listener fd");
          if (kist_seccomp_notify_forward (ctx, passed_fd, err) < 0)
            return -1;
          break;
        case KIST_SYNC_PTY:
          if (kist_terminal_take (ctx, steal_fd (&passed_fd), err) < 0)
            return -1;
          break;
        case KIST_SYNC_ERROR:
          return kist_sync_decode_error (payload, len, err);
        case KIST_SYNC_GO: /* the init waits before pivot_root: prestart, createRuntime */
          if (kist_hooks_parent_create (ctx, r, err) < 0)
            return -1;
          break;
        case KIST_SYNC_READY:
          return 0;
        default:
          return kist_error_make (err, EPROTO, "unexpected message %d from the container init", type);
        }
    }
}

char *
kist_annotations_json (const struct kist_spec *s)
{
  _cleanup_yajl_gen_ yajl_gen gen = kist_json_gen_new (false, false);
  yajl_gen_map_open (gen);
  for (size_t i = 0; i < s->n_annotations; i++)
    {
      kist_json_gen_str_lossy (gen, s->annotations[i].key);
      kist_json_gen_str_lossy (gen, s->annotations[i].value);
    }
  yajl_gen_map_close (gen);
  return kist_json_gen_take (gen);
}

/* Clone the init with its new namespaces.  With a cgroup scope, clone3 with
 * CLONE_INTO_CGROUP makes it born in the scope (no later move, which can wait
 * for an RCU grace period); *into_cgroup says whether that happened. */
static pid_t
clone_init (unsigned long flags, int cgroup_fd, bool *into_cgroup)
{
  fflush (NULL);
  *into_cgroup = false;
  if (cgroup_fd >= 0)
    {
      struct clone_args args = { .flags = flags | CLONE_INTO_CGROUP, .exit_signal = SIGCHLD,
                                 .cgroup = (uint64_t) cgroup_fd };
      pid_t pid = (pid_t) syscall (SYS_clone3, &args, sizeof args);
      if (pid >= 0)
        {
          *into_cgroup = true;
          return pid;
        }
      if (errno != ENOSYS && errno != E2BIG && errno != EINVAL)
        return -1;
    }
  return (pid_t) syscall (SYS_clone, flags | SIGCHLD, NULL, NULL, NULL, NULL);
}

static int
join_pid_ns_for_children (const struct kist_spec *s, struct kist_error **err)
{
  const struct kist_namespace *pid = s->linux_ ? &s->linux_->ns[KIST_NS_PID] : NULL;
  if (pid == NULL || !pid->present || pid->path == NULL)
    return 0;
  _cleanup_close_ int fd = open (pid->path, O_RDONLY | O_CLOEXEC);
  if (fd < 0 || setns (fd, CLONE_NEWPID) < 0)
    return kist_error_make (err, errno, "linux.namespaces: join the pid namespace `%s`", pid->path);
  return 0;
}

int
kist_create (const struct kist_globals *g, const struct kist_create_opts *o, pid_t *pid_out,
             struct kist_report **report, struct kist_error **err)
{
  _cleanup_spec_ struct kist_spec *spec = NULL;
  _cleanup_free_ char *root = NULL;
  _cleanup_close_ int rootfd = -1, bundle_fd = -1, state_dirfd = -1, sync_parent = -1, sync_child = -1;
  _cleanup_close_ int start_fd = -1;
  _cleanup_free_ char *bundle_owned = NULL, *rootfs_owned = NULL, *created = NULL, *owner = NULL,
                        *annotations = NULL;
  struct kist_ctx ctx = { .g = g, .id = o->id, .rootfs_fd = -1, .dev_ro_fd = -1, .exec_fd = -1, .sync_fd = -1, .start_fd = -1,
                          .state_dirfd = -1, .preserve_fds = o->preserve_fds,
                          .no_pivot = o->no_pivot, .no_new_keyring = o->no_new_keyring,
                          .console_socket = o->console_socket, .pid_file = o->pid_file,
                          .die_with_parent = o->die_with_parent, .exact_env = o->exact_env,
                          .tty = { .slave = -1, .index = -1, .master = -1, .console = true } };
  struct kist_report *r = NULL;
  _cleanup_seccomp_ struct kist_seccomp *seccomp = NULL;
  _cleanup_cgroup_ struct kist_cgroup *cgroup = NULL;
  _cleanup_free_ char *cgroup_abs = NULL, *cgroup_created_abs = NULL;
  bool state_created = false, report_written = false;
  int ret;

  if (kist_id_validate (o->id, err) < 0)
    return -1;
  if (g->systemd_cgroup)
    return kist_error_make (err, ENOTSUP,
                            "--systemd-cgroup: the systemd cgroup driver is not implemented by kist; "
                            "drop the flag (kist uses cgroupfs paths)");
  if (o->pty_master)
    *o->pty_master = -1;

  /* The bundle and its config. */
  const char *bundle = o->bundle ? o->bundle : ".";
  ctx.bundle = realpath (bundle, NULL);
  if (ctx.bundle == NULL)
    return kist_error_make (err, errno, "bundle `%s`", bundle);
  bundle_owned = ctx.bundle;
  bundle_fd = open (ctx.bundle, O_DIRECTORY | O_CLOEXEC);
  if (bundle_fd < 0)
    return kist_error_make (err, errno, "bundle `%s`", ctx.bundle);
  ctx.bundle_fd = bundle_fd;
  if (o->config_json ? kist_spec_parse (o->config_json, o->config_len, &spec, err) < 0
                     : kist_spec_load (bundle_fd, &spec, err) < 0)
    return kist_error_wrap (err, "bundle `%s`", ctx.bundle);
  ctx.spec = spec;
  if (spec->process == NULL)
    return kist_error_make (err, EINVAL, "config.json: process: required to create a container");
  if (spec->linux_ == NULL || !spec->linux_->ns[KIST_NS_MOUNT].present)
    return kist_error_make (err, EINVAL,
                            "config.json: linux.namespaces: kist needs a mount namespace (add "
                            "{\"type\": \"mount\"}); it never mounts in the caller's namespace");
  if (kist_ns_check (spec, err) < 0)
    return -1;
  if (geteuid () != 0 && !spec->linux_->ns[KIST_NS_USER].present)
    return kist_error_make (err, EPERM,
                            "config.json: linux.namespaces: kist runs as uid %u, not root, and the "
                            "config asks for no user namespace; a rootless container needs one "
                            "(write the config with `kist spec --rootless`)",
                            (unsigned) geteuid ());
  if (resolve_rootfs (&ctx, err) < 0)
    return -1;
  rootfs_owned = ctx.rootfs;
  ctx.userns = spec->linux_->ns[KIST_NS_USER].present;

  /* The state directory: from here on, a failure removes it again. */
  rootfd = kist_state_root_open (g->root, &root, err);
  if (rootfd < 0)
    return -1;
  /* Until the init is ready, state.json is an intent record (creating): it
   * is rewritten before each resource is made (the cgroup scope kist is about
   * to create, the init pid and start time as soon as clone returned), so that
   * `delete` and `kist gc` find and remove what a killed create left.  The
   * state dir appears already locked and holding it (kist_state_create). */
  created = kist_time_rfc3339 ();
  owner = xasprintf ("%u", (unsigned) geteuid ());
  struct kist_state intent = { .id = (char *) o->id, .bundle = ctx.bundle, .rootfs = ctx.rootfs,
                               .created = created, .owner = owner,
                               .oci_version = spec->oci_version, .deadline = o->deadline,
                               .kist_pid = o->die_with_parent ? getpid () : 0,
                               .kist_pid_start_time
                               = o->die_with_parent ? kist_pid_start_time (getpid ()) : 0,
                               .creating = true, .creator_pid = getpid (),
                               .creator_start_time = kist_pid_start_time (getpid ()) };
  if (kist_state_create_with (rootfd, o->id, &intent, &state_dirfd, err) < 0)
    return -1;
  state_created = true;
  ctx.state_dirfd = state_dirfd;

  r = kist_report_new (o->id, o->operation, o->allow_degraded);
  *report = r;
  if ((ret = kist_hooks_store (&ctx, err)) < 0)
    goto fail;

  if ((ret = kist_unsupported_apply (&ctx, r, err)) < 0
      || (ret = kist_terminal_prepare (&ctx, r, o->pty_master != NULL, err)) < 0)
    goto fail;
  /* The filter is compiled (or taken from the cache) here, once, so that the
   * init only loads a ready program. */
  if ((ret = kist_seccomp_prepare (&ctx, rootfd, &seccomp, r, err)) < 0)
    goto fail;
  ctx.seccomp = seccomp;
  {
    const char *cgp = spec->linux_ ? spec->linux_->cgroups_path : NULL;
    kist_state_cgroup_intent (cgp, o->id, &cgroup_abs, &cgroup_created_abs);
    if (cgroup_abs != NULL)
      {
        intent.cgroup_path = cgroup_abs;
        intent.cgroup_created = cgroup_created_abs;
        if ((ret = kist_state_write (state_dirfd, &intent, err)) < 0)
          goto fail;
      }
  }
  if ((ret = kist_cgroup_apply (&ctx, r, &cgroup, err)) < 0)
    goto fail;
  free (cgroup_abs);
  free (cgroup_created_abs);
  cgroup_abs = cgroup_created_abs = NULL;
  if (cgroup)
    {
      cgroup_abs = xasprintf ("%s/%s", cgroup->mount, cgroup->path);
      if (cgroup->created_from)
        cgroup_created_abs = xasprintf ("%s/%s", cgroup->mount, cgroup->created_from);
    }
  intent.cgroup_path = cgroup_abs;
  intent.cgroup_created = cgroup_created_abs;
  if ((ret = kist_state_write (state_dirfd, &intent, err)) < 0)
    goto fail;
  if ((ret = kist_ns_host_inodes (&ctx, err)) < 0)
    goto fail;
  int pair[2];
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) < 0)
    {
      ret = kist_error_make (err, errno, "socketpair");
      goto fail;
    }
  sync_parent = pair[0];
  sync_child = pair[1];
  start_fd = start_socket (state_dirfd, true, err);
  if (start_fd < 0)
    {
      ret = -1;
      goto fail;
    }
  if ((ret = join_pid_ns_for_children (spec, err)) < 0)
    goto fail;

  bool into_cgroup = false;
  pid_t pid = clone_init (kist_ns_clone_flags (spec), cgroup ? cgroup->dirfd : -1, &into_cgroup);
  if (pid < 0)
    {
      int e = errno;
      _cleanup_free_ char *hint
          = (kist_ns_clone_flags (spec) & CLONE_NEWUSER) ? kist_ns_userns_hint () : NULL;
      ret = kist_error_make (err, e, "clone the container init (namespaces: 0x%lx)%s%s",
                             kist_ns_clone_flags (spec), hint ? ": " : "", hint ? hint : "");
      goto fail;
    }
  if (pid == 0)
    {
      /* The state dir fd carries the flock of this create: the init must not
       * keep it (nor the state root) open while it waits for start. */
      close (sync_parent);
      close (state_dirfd);
      close (rootfd);
      if (cgroup)
        close (cgroup->dirfd); /* the host's cgroup directory: not for the container */
      ctx.state_dirfd = -1;
      ctx.sync_fd = sync_child;
      ctx.start_fd = start_fd;
      init_main (&ctx, o->operation, o->allow_degraded);
    }
  ctx.pid = pid;
  intent.pid = pid;
  intent.pid_start_time = kist_pid_start_time (pid);
  if ((ret = kist_state_write (state_dirfd, &intent, err)) < 0)
    goto fail;
  if (cgroup && !into_cgroup && (ret = kist_cgroup_enter (cgroup, pid, err)) < 0)
    goto fail;
  if (cgroup)
    kist_report_note (r, "cgroup", into_cgroup ? "; born in it (clone3 CLONE_INTO_CGROUP)"
                                                : "; moved in via cgroup.procs (no clone3)");
  close (sync_child);
  sync_child = -1;
  ctx.sync_fd = sync_parent;
  r->pid = pid;

  if ((ret = kist_idmap_apply (&ctx, r, err)) < 0)
    goto fail;
  if (kist_sync_send (ctx.sync_fd, KIST_SYNC_GO, NULL, 0) < 0)
    {
      ret = kist_error_make (err, errno, "the container init is gone before setup");
      goto fail;
    }
  if ((ret = collect_init (&ctx, r, err)) < 0
      || (ret = kist_terminal_deliver (&ctx, r, err)) < 0)
    goto fail;

  /* Ready.  Record the state, the report, the pid file. */
  struct kist_state st = intent;
  st.creating = false;
  st.annotations_json = annotations = kist_annotations_json (spec);
  if ((ret = kist_state_write (state_dirfd, &st, err)) < 0)
    goto fail;
  if ((ret = store_report (state_dirfd, r, err)) < 0)
    {
      kist_error_wrap (err, "store the report in the state directory of container `%s` under `%s`",
                       o->id, root);
      goto fail;
    }
  if (o->pid_file && (ret = kist_write_pid_file (o->pid_file, pid, err)) < 0)
    goto fail;
  if (!o->report_at_start && (ret = kist_create_write_report (o, r, err)) < 0)
    {
      report_written = true; /* do not try (and fail) again below */
      goto fail;
    }
  /* COMMIT: the state is on disk, so the init may now outlive us; it
   * acknowledges once its parent-death signal is cleared. */
  {
    char ack = 0;
    _cleanup_free_ char *ackp = NULL;
    if (kist_sync_send (ctx.sync_fd, KIST_SYNC_GO, NULL, 0) < 0
        || kist_sync_recv (ctx.sync_fd, &ack, &ackp, NULL) < 0 || ack != KIST_SYNC_READY)
      {
        ret = kist_error_make (err, errno,
                               "the container init died before the create was committed");
        goto fail;
      }
  }
  {
    /* What an engine's user sees in its log: allowed to degrade is not silent. */
    _cleanup_free_ char *missing = kist_report_missing_text (r),
                        *ungranted = kist_caps_unknown_text (spec->process->capabilities);
    if (ungranted)
      kist_log_warn ("container `%s`: capabilities not granted (a grant that cannot be given "
                     "leaves it more confined): %s",
                     o->id, ungranted);
    if (missing)
      kist_log_warn ("container `%s` runs without part of its configuration (allowed to "
                     "degrade): %s; `kist report %s` has the details",
                     o->id, missing, o->id);
  }
  *pid_out = pid;
  if (o->pty_master)
    *o->pty_master = ctx.tty.master;
  return 0;

fail:
  if (ctx.tty.master >= 0)
    close (ctx.tty.master);
  if (ctx.pid > 0)
    {
      kill (ctx.pid, SIGKILL);
      while (waitpid (ctx.pid, NULL, 0) < 0 && errno == EINTR)
        ;
    }
  if (cgroup)
    {
      _cleanup_free_ char *abs = xasprintf ("%s/%s", cgroup->mount, cgroup->path);
      _cleanup_free_ char *top = cgroup->created_from
                                     ? xasprintf ("%s/%s", cgroup->mount, cgroup->created_from)
                                     : NULL;
      _cleanup_error_ struct kist_error *cerr = NULL;
      if (kist_cgroup_remove (abs, top, &cerr) < 0)
        {
          /* Keep the intent record: `kist delete --force ID` or `kist gc`
           * retries once this kist is gone. */
          kist_log_error ("cleanup after a failed create: %s; the state dir is kept: remove the "
                          "rest with `kist delete --force %s`",
                          cerr->msg, o->id);
          state_created = false;
        }
    }
  kist_hooks_create_failed (&ctx, r); /* a failed hook: poststop after the destroy */
  if (r && !report_written)
    {
      /* The report says what was applied and what failed; write it anyway. */
      _cleanup_error_ struct kist_error *werr = NULL;
      kist_create_write_report (o, r, &werr);
      if (werr)
        kist_log_warn ("%s", werr->msg);
    }
  if (state_created)
    {
      _cleanup_error_ struct kist_error *rerr = NULL;
      if (kist_state_remove (rootfd, o->id, &rerr) < 0)
        kist_log_error ("cleanup after a failed create: %s", rerr->msg);
    }
  return ret < 0 ? ret : -1;
}

/* ------------------------------------------------------------- commands */

/* The start client's side: the init's last entries (session, seccomp), then
 * READY right before its execve, then EOF (the close-on-exec connection
 * closed: the execve succeeded) or the exec error.  EOF before READY means
 * the init died before it could exec: never a success. */
static int
collect_start (int conn, struct kist_report *r, const char *id, kist_start_ready_fn on_ready,
               void *arg, struct kist_error **err)
{
  bool ready = false;
  for (;;)
    {
      char type = 0;
      _cleanup_free_ char *payload = NULL;
      size_t len = 0;
      int ret = kist_sync_recv (conn, &type, &payload, &len);
      if (ret == -ECONNRESET && ready)
        return 0;
      if (ret < 0)
        return kist_error_make (err, ret == -ECONNRESET ? 0 : -ret,
                                "the init of container `%s` exited before it could exec its "
                                "process (see the report: `kist report %s`)",
                                id, id);
      switch (type)
        {
        case KIST_SYNC_LAYER:
          if (kist_sync_add_layer (r, payload, len, "the container init", err) < 0)
            return -1;
          break;
        case KIST_SYNC_READY:
          ready = true;
          if (on_ready && r)
            on_ready (r, arg);
          if (on_ready)
            kist_sync_send (conn, KIST_SYNC_GO, NULL, 0); /* the init may be gone: no error */
          break;
        case KIST_SYNC_ERROR:
          return kist_sync_decode_error (payload, len, err);
        default:
          return kist_error_make (err, EPROTO, "unexpected message %d from the container init",
                                  type);
        }
    }
}

int
kist_container_start (int rootfd, const char *id, struct kist_report *r,
                      kist_start_ready_fn on_ready, void *arg, struct kist_error **err)
{
  _cleanup_close_ int dirfd = -1, conn = -1;
  _cleanup_report_ struct kist_report *stored = NULL;
  struct kist_state st = { 0 };
  int ret;

  if (kist_id_validate (id, err) < 0 || kist_state_open (rootfd, id, &dirfd, err) < 0)
    return -1;
  if ((ret = kist_state_read (dirfd, &st, err)) < 0)
    goto out;
  enum kist_status status = kist_state_status (&st);
  if (status != KIST_STATUS_CREATED)
    {
      ret = kist_error_make (err, EINVAL, "container `%s` cannot be started: it is %s, not created",
                             id, kist_status_name (status));
      goto out;
    }
  /* The entries of the end of the init's setup go into the stored report
   * (and the caller's, for run). */
  if (r == NULL)
    {
      _cleanup_free_ char *json = NULL;
      size_t len = 0;
      _cleanup_error_ struct kist_error *e1 = NULL;
      if (kist_read_file_at (dirfd, "report.json", 16u << 20, &json, &len, &e1) == 0)
        stored = r = kist_report_from_json (json, len, &e1);
      if (e1)
        kist_log_warn ("report.json of `%s`: %s", id, e1->msg);
    }
  conn = start_socket (dirfd, false, err);
  if (conn < 0)
    {
      ret = -1;
      goto out;
    }
  /* "A": this client prints the report at READY and acknowledges it, so
   * that the report comes before the container's own output. */
  if (kist_sync_send (conn, KIST_SYNC_START, on_ready ? "A" : NULL, on_ready ? 1 : 0) < 0)
    {
      ret = kist_error_make (err, errno, "send start to the container init");
      goto out;
    }
  ret = collect_start (conn, r, id, on_ready, arg, err);
  if (r && ret == 0)
    kist_report_applied (r, "exec", NULL,
                         "execve of process.args[0] succeeded (seen by the parent)");
  if (ret == 0)
    {
      _cleanup_hooks_ struct kist_hooks *hooks = kist_hooks_load (dirfd, id);
      kist_hooks_poststart (hooks, &st, r); /* after the exec, before start returns */
    }
  if (r)
    {
      _cleanup_error_ struct kist_error *e2 = NULL;
      if (store_report (dirfd, r, &e2) < 0)
        kist_log_warn ("%s", e2->msg);
    }
  if (ret < 0 && kist_hooks_failed (r, KIST_HOOK_START_CONTAINER))
    {
      /* runtime.md step 7: stop the container, then destroy it and run
       * poststop (steps 12, 13), as delete --force does (it needs the lock). */
      _cleanup_error_ struct kist_error *derr = NULL;
      close (dirfd);
      dirfd = -1;
      if (kist_container_delete (rootfd, id, true, &derr) < 0)
        kist_log_error ("remove container `%s` after its failed startContainer hook: %s", id,
                        derr->msg);
    }
  if (ret < 0)
    goto out;
  st.started = true;
  if ((ret = kist_state_write (dirfd, &st, err)) < 0)
    goto out;
  ret = 0;
out:
  kist_state_clear (&st);
  return ret;
}

static ino_t
pid_ns_inode (pid_t pid)
{
  char p[64];
  struct stat s;
  snprintf (p, sizeof p, "/proc/%d/ns/pid", (int) pid);
  return stat (p, &s) == 0 ? s.st_ino : 0;
}

/* Signal every process in the container's pid namespace (--all). */
static int
kill_all_in_pidns (pid_t init, int sig, struct kist_error **err)
{
  ino_t ns = pid_ns_inode (init), self = pid_ns_inode (getpid ());
  if (ns == 0 || ns == self)
    return kill (init, sig) < 0 ? kist_error_make (err, errno, "kill(%d, %d)", (int) init, sig) : 0;
  _cleanup_close_ int pfd = open ("/proc", O_DIRECTORY | O_RDONLY | O_CLOEXEC);
  DIR *d = pfd >= 0 ? fdopendir (dup (pfd)) : NULL;
  if (d == NULL)
    return kist_error_make (err, errno, "open /proc");
  struct dirent *de;
  while ((de = readdir (d)))
    {
      int p = 0;
      if (kist_parse_int (de->d_name, &p) < 0 || p <= 0)
        continue;
      if (pid_ns_inode (p) == ns)
        kill (p, sig);
    }
  closedir (d);
  return 0;
}

/* Every process of the container's cgroup scope (cgroup.kill for SIGKILL). */
static int
signal_cgroup (const char *scope, int sig, struct kist_error **err)
{
  if (sig == SIGKILL)
    return kist_cgroup_kill_all (scope, err);
  _cleanup_free_ pid_t *pids = NULL;
  size_t n = 0;
  if (kist_cgroup_pids (scope, &pids, &n, err) < 0)
    return -1;
  for (size_t i = 0; i < n; i++)
    kill (pids[i], sig);
  return 0;
}

int
kist_container_kill (int rootfd, const char *id, int sig, bool all, struct kist_error **err)
{
  _cleanup_close_ int dirfd = -1;
  struct kist_state st = { 0 };
  int ret;
  if (kist_id_validate (id, err) < 0 || kist_state_open (rootfd, id, &dirfd, err) < 0)
    return -1;
  if ((ret = kist_state_read (dirfd, &st, err)) < 0)
    goto out;
  enum kist_status status = kist_state_status (&st);
  if (status == KIST_STATUS_STOPPED)
    {
      /* As runc: --all signals whatever is left in the scope (usually
       * nothing) and succeeds.  Unlike runc 1.1 ("container not running"),
       * SIGKILL succeeds too: containerd sends `kill ID 9` at teardown also
       * to stopped containers and expects success; the init is gone, which
       * is what SIGKILL asks for.  Other signals fail, as with runc. */
      if (all && st.cgroup_path && access (st.cgroup_path, F_OK) == 0)
        ret = signal_cgroup (st.cgroup_path, sig, err);
      else if (all || sig == SIGKILL)
        ret = 0;
      else
        ret = kist_error_make (err, ESRCH,
                               "container `%s` is not running (it is stopped): signal %d was not "
                               "sent (only SIGKILL or --all succeed on a stopped container); "
                               "remove it with `kist delete %s`",
                               id, sig, id);
      goto out;
    }
  if (all && st.cgroup_path)
    ret = signal_cgroup (st.cgroup_path, sig, err);
  else if (all)
    ret = kill_all_in_pidns (st.pid, sig, err);
  else if (kill (st.pid, sig) < 0)
    ret = kist_error_make (err, errno, "kill container `%s` (pid %d) with signal %d", id, (int) st.pid,
                           sig);
  else
    ret = 0;
out:
  kist_state_clear (&st);
  return ret;
}

/* Wait until pid is gone (or a zombie someone else must reap). */
static int
wait_gone (const struct kist_state *st, struct kist_error **err)
{
  int pfd = (int) syscall (SYS_pidfd_open, st->pid, 0);
  if (pfd >= 0)
    {
      struct pollfd p = { .fd = pfd, .events = POLLIN };
      int n;
      do
        n = poll (&p, 1, 10000);
      while (n < 0 && errno == EINTR);
      close (pfd);
      if (n == 0)
        return kist_error_make (err, ETIMEDOUT, "pid %d did not exit within 10 s after SIGKILL",
                                (int) st->pid);
      return 0;
    }
  for (int i = 0; i < 1000 && kist_state_status (st) != KIST_STATUS_STOPPED; i++)
    usleep (10000);
  if (kist_state_status (st) != KIST_STATUS_STOPPED)
    return kist_error_make (err, ETIMEDOUT, "pid %d did not exit after SIGKILL", (int) st->pid);
  return 0;
}

int
kist_container_delete (int rootfd, const char *id, bool force, struct kist_error **err)
{
  _cleanup_close_ int dirfd = -1;
  _cleanup_hooks_ struct kist_hooks *hooks = NULL;
  struct kist_state st = { 0 };
  int ret;
  if (kist_id_validate (id, err) < 0)
    return -1;
  if (kist_state_open (rootfd, id, &dirfd, err) < 0)
    {
      if (force && *err && (*err)->errnum == ENOENT)
        {
          /* A create killed before its state dir appeared leaves only an
           * unlocked temporary dir (no resource): remove that too. */
          _cleanup_strv_ char **tmp = NULL;
          kist_error_freep (err);
          kist_state_sweep_temp (rootfd, id, false, &tmp, NULL);
          return 0;
        }
      return -1;
    }
  if ((ret = kist_state_read (dirfd, &st, err)) < 0)
    {
      if (!force)
        {
          kist_error_wrap (err, "container `%s` has no readable state (a create interrupted by "
                                "an older kist?): remove it with `kist delete --force %s`",
                           id, id);
          goto out;
        }
      /* A state dir without a readable state.json (a crash mid-create): remove it. */
      kist_error_freep (err);
      st.pid = 0;
    }
  if (st.creating)
    {
      /* An interrupted create (we hold the lock its kist held: it is gone).
       * Its init never ran the container's code: kill it (only if its start
       * time matches), then remove the scope it recorded (if made at all) and
       * the state dir.  Nothing else in the scope is killed: the record names
       * the scope before kist makes it, so a scope that holds other
       * processes may not be this create's.  (An init cloned into the scope
       * before its pid was recorded exits by itself: its parent is gone.) */
      if (kist_state_init_alive (&st))
        {
          if (kill (st.pid, SIGKILL) < 0 && errno != ESRCH)
            {
              ret = kist_error_make (err, errno, "kill the init (pid %d) of the interrupted "
                                                 "create of container `%s`",
                                     (int) st.pid, id);
              goto out;
            }
          if ((ret = wait_gone (&st, err)) < 0)
            goto out;
        }
      if (st.cgroup_path && (ret = kist_cgroup_remove (st.cgroup_path, st.cgroup_created, err)) < 0)
        {
          kist_error_wrap (err, "the interrupted create of container `%s` recorded the cgroup "
                                "`%s`, which still holds processes that are not its init (not "
                                "made by it?); kist does not kill them: check and remove that "
                                "cgroup, then run `kist delete --force %s` again",
                           id, st.cgroup_path, id);
          goto out;
        }
      ret = kist_state_remove (rootfd, id, err);
      goto out;
    }
  hooks = kist_hooks_load (dirfd, id); /* poststop, stored by create */
  enum kist_status status = st.pid > 0 ? kist_state_status (&st) : KIST_STATUS_STOPPED;
  if (status != KIST_STATUS_STOPPED)
    {
      /* A created container (never started) goes without --force, as runc:
       * decided here, under the lock, so that a start cannot slip between. */
      if (!force && status != KIST_STATUS_CREATED)
        {
          ret = kist_error_make (err, EBUSY,
                                 "container `%s` is %s; stop it first or use `kist delete --force`",
                                 id, kist_status_name (status));
          goto out;
        }
      /* (A delete killed after removing the scope leaves no scope to signal.) */
      struct stat sb;
      bool scope = st.cgroup_path && lstat (st.cgroup_path, &sb) == 0;
      if ((ret = scope ? signal_cgroup (st.cgroup_path, SIGKILL, err)
                       : kill_all_in_pidns (st.pid, SIGKILL, err))
          < 0)
        {
          /* It exited in between: nothing left to kill. */
          if ((*err)->errnum != ESRCH)
            goto out;
          kist_error_freep (err);
        }
      if ((ret = wait_gone (&st, err)) < 0)
        goto out;
    }
  /* The scope must be empty (processes outside a pid namespace can outlive
   * the init: --force killed them above) and is verified gone. */
  if (st.cgroup_path)
    {
      struct stat sb;
      if (force && lstat (st.cgroup_path, &sb) == 0
          && (ret = signal_cgroup (st.cgroup_path, SIGKILL, err)) < 0)
        goto out;
      if ((ret = kist_cgroup_remove (st.cgroup_path, st.cgroup_created, err)) < 0)
        goto out;
    }
  /* Remove while holding the lock: a concurrent command waiting for it then
   * finds the directory gone (st_nlink 0) instead of a half-removed one. */
  ret = kist_state_remove (rootfd, id, err);
  if (ret == 0)
    kist_hooks_poststop (hooks, &st); /* the container is gone; delete has not returned */
out:
  kist_state_clear (&st);
  return ret;
}

int
kist_parse_signal (const char *s)
{
  static const struct
  {
    const char *name;
    int sig;
  } sigs[] = {
    { "HUP", SIGHUP },     { "INT", SIGINT },     { "QUIT", SIGQUIT },     { "ILL", SIGILL },
    { "TRAP", SIGTRAP },   { "ABRT", SIGABRT },   { "IOT", SIGIOT },       { "BUS", SIGBUS },
    { "FPE", SIGFPE },     { "KILL", SIGKILL },   { "USR1", SIGUSR1 },     { "SEGV", SIGSEGV },
    { "USR2", SIGUSR2 },   { "PIPE", SIGPIPE },   { "ALRM", SIGALRM },     { "TERM", SIGTERM },
    { "STKFLT", SIGSTKFLT }, { "CHLD", SIGCHLD }, { "CONT", SIGCONT },     { "STOP", SIGSTOP },
    { "TSTP", SIGTSTP },   { "TTIN", SIGTTIN },   { "TTOU", SIGTTOU },     { "URG", SIGURG },
    { "XCPU", SIGXCPU },   { "XFSZ", SIGXFSZ },   { "VTALRM", SIGVTALRM }, { "PROF", SIGPROF },
    { "WINCH", SIGWINCH }, { "IO", SIGIO },       { "POLL", SIGPOLL },     { "PWR", SIGPWR },
    { "SYS", SIGSYS },
  };
  int n;
  if (s == NULL || *s == '\0')
    return -1;
  if (kist_parse_int (s, &n) == 0)
    return n >= 0 && n < NSIG ? n : -1; /* 0: the liveness probe (kill ID 0, as runc) */
  if (strncasecmp (s, "SIG", 3) == 0)
    s += 3;
  for (size_t i = 0; i < KIST_ARRAY_SIZE (sigs); i++)
    if (strcasecmp (s, sigs[i].name) == 0)
      return sigs[i].sig;
  if (strncasecmp (s, "RTMIN+", 6) == 0 && kist_parse_int (s + 6, &n) == 0 && SIGRTMIN + n <= SIGRTMAX)
    return SIGRTMIN + n;
  return -1;
}

/* ------------------------------------------------- waiting and signals */

static volatile sig_atomic_t forward_pid;

static void
forward_signal (int sig)
{
  if (forward_pid > 0)
    kill ((pid_t) forward_pid, sig);
}

void
kist_forward_signals (pid_t pid)
{
  static const int sigs[] = { SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGWINCH, SIGCONT };
  struct sigaction sa = { .sa_handler = forward_signal, .sa_flags = SA_RESTART };
  sigemptyset (&sa.sa_mask);
  forward_pid = pid;
  for (size_t i = 0; i < KIST_ARRAY_SIZE (sigs); i++)
    sigaction (sigs[i], &sa, NULL);
}

int
kist_wait_status (pid_t pid, int timeout_ms, struct kist_error **err)
{
  int status = 0;
  if (timeout_ms >= 0)
    {
      int pfd = (int) syscall (SYS_pidfd_open, pid, 0);
      if (pfd < 0)
        return kist_error_make (err, errno, "pidfd_open(%d)", (int) pid);
      struct pollfd p = { .fd = pfd, .events = POLLIN };
      int n;
      do
        n = poll (&p, 1, timeout_ms);
      while (n < 0 && errno == EINTR);
      close (pfd);
      if (n == 0)
        return KIST_WAIT_TIMEOUT;
    }
  for (;;)
    {
      pid_t w = waitpid (pid, &status, 0);
      if (w == pid)
        break;
      if (w < 0 && errno != EINTR)
        return kist_error_make (err, errno, "wait for the container init (pid %d)", (int) pid);
    }
  if (WIFSIGNALED (status))
    return 128 + WTERMSIG (status);
  return WEXITSTATUS (status);
}
