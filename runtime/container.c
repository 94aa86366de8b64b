/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: the container lifecycle.
 *
 *   kist_create        parent: validate, state dir, the PREPARE layers, clone
 *                      the init, the ENTER layers, collect the init's report
 *                      entries until it is ready
 *   init_main          container init: the SETUP layers, then wait on
 *                      start.sock, the START layers and execve
 *   kist_container_start
 *
 * Which layers, in which order: the registry (layer.c), the one owner.
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
#include "net.h"
#include "caps.h"
#include "cgroup.h"
#include "collect.h"
#include "ns.h"
#include "procfs.h"
#include "seccomp.h"
#include "sync.h"
#include "terminal.h"
#include "util.h"
#include "verify.h"


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

/* Did CONN send START?  A failure to read (a filter loaded early that
 * denies recv, say) ends the init, with the error sent on CONN, so that
 * `start` never waits for nothing. */
static bool
start_word (int conn)
{
  char c[2] = { 0, 0 };
  ssize_t n;
  do
    n = recv (conn, c, sizeof c, 0);
  while (n < 0 && errno == EINTR);
  if (n < 0)
    {
      _cleanup_error_ struct kist_error *e = NULL;
      kist_error_make (&e, errno,
                       "the container init cannot read the start message (does the seccomp "
                       "profile, loaded before the user switch because noNewPrivileges is "
                       "false, deny recvfrom?)");
      init_fail (conn, e);
    }
  return n >= 1 && c[0] == KIST_SYNC_START;
}

/* Accept connections on the start socket until one sends START; returns it.
 * A connection that closes without a word is dropped; a failure to accept
 * ends the init.  Without a start socket (run, sandbox: start_fd -1) START
 * comes on the sync socket SYNC, and anything else (EOF: the kist that made
 * the init is gone) ends the init. */
static int
wait_start (int start_fd, int sync)
{
  if (start_fd < 0)
    {
      if (start_word (sync))
        return sync;
      _exit (KIST_EXIT_FAILURE);
    }
  close (sync);
  for (;;)
    {
      int conn = accept4 (start_fd, NULL, NULL, SOCK_CLOEXEC);
      if (conn < 0)
        {
          if (errno == EINTR || errno == ECONNABORTED)
            continue;
          _exit (KIST_EXIT_FAILURE);
        }
      if (start_word (conn))
        {
          close (start_fd);
          return conn;
        }
      close (conn);
    }
}

/* create: the COMMIT (the state is written: from now on the init outlives
 * the kist process that created it, except in a sandbox, which dies with its
 * kist), its acknowledgement, then `start`'s connection (wait_start). */
static int
init_wait_commit_and_start (struct kist_ctx *ctx, int fd)
{
  char type = 0;
  _cleanup_free_ char *commit = NULL;
  if (kist_sync_recv (fd, &type, &commit, NULL) < 0 || type != KIST_SYNC_GO)
    _exit (KIST_EXIT_FAILURE);
  if (!ctx->die_with_parent && prctl (PR_SET_PDEATHSIG, 0) < 0)
    _exit (KIST_EXIT_FAILURE);
  /* Acknowledged: kist_create returns only now, so that its exit cannot
   * kill an init that had not cleared the signal yet. */
  if (kist_sync_send (fd, KIST_SYNC_READY, NULL, 0) < 0)
    _exit (KIST_EXIT_FAILURE);
  int conn = wait_start (ctx->start_fd, fd);
  ctx->start_fd = -1;
  return conn;
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
  const int keep[] = { fd, ctx->start_fd, ctx->bundle_fd, kist_log_fd (), ctx->init_status_fd,
                       kist_mounts_idmap_keep_fd (ctx) };
  if (kist_close_fds_except (ctx->preserve_fds, keep, KIST_ARRAY_SIZE (keep), &err) < 0
      || kist_prepare_exec_fds (ctx->preserve_fds, &err) < 0)
    init_fail (fd, err);

  /* Wait for the parent: the uid/gid maps are written when GO comes. */
  char type = 0;
  _cleanup_free_ char *payload = NULL;
  if (kist_sync_recv (fd, &type, &payload, NULL) < 0 || type != KIST_SYNC_GO)
    _exit (KIST_EXIT_FAILURE);

  /* Every SETUP layer of the registry (layer.c), in order. */
  struct kist_report *r = kist_report_new (ctx->id, operation, allow_degraded);
  size_t sent = 0;
  if (kist_layers_run (KIST_PHASE_SETUP, KIST_FOR_CREATE, ctx, r, &sent, &err) < 0)
    init_fail (fd, err);
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
  /* run and sandbox go on into the start at once (nothing runs before
   * start's GO anyway); create waits for its commit and for `start`. */
  int conn = ctx->start_at_ready ? fd : init_wait_commit_and_start (ctx, fd);

  /* `start`: the rest is reported to the start client over conn, and the
   * filter is loaded only now, so that it cannot deny anything kist still
   * needed (accept, recv) and the client sees READY only right before the
   * execve. */
  ctx->sync_fd = conn;
  struct kist_report *rs = kist_report_new (ctx->id, operation, allow_degraded);
  size_t rs_sent = 0;
  if (kist_layers_run (KIST_PHASE_START, KIST_FOR_CREATE, ctx, rs, &rs_sent, &err) < 0
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
  char *real = kist_realpath (path);
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

/* create's collect hooks.  The init died without an error: name the last
 * layer it reported, the place to look. */
static int
init_end (struct kist_collect *c, int ret, struct kist_report *r, struct kist_error **err)
{
  (void) ret;
  struct kist_ctx *ctx = c->ctx;
  int status = 0;
  pid_t w;
  do
    w = waitpid (ctx->pid, &status, 0);
  while (w < 0 && errno == EINTR);
  ctx->pid = 0;
  _cleanup_free_ char *after
      = r->n_layers ? xasprintf (", after the layer `%s` (see the report)",
                                 r->layers[r->n_layers - 1].name)
                    : xstrdup (" before it reported any layer");
  if (w > 0 && WIFSIGNALED (status))
    return kist_error_make (err, 0, "the container init died during setup (signal %d%s)%s",
                            WTERMSIG (status),
                            WTERMSIG (status) == SIGSYS ? ": killed by its seccomp filter" : "",
                            after);
  return kist_error_make (err, 0,
                          "the container init exited during setup (status %d) without saying "
                          "why%s",
                          w > 0 ? WEXITSTATUS (status) : -1, after);
}

/* The init waits before pivot_root: prestart, createRuntime. */
static int
init_go (struct kist_collect *c, struct kist_report *r, struct kist_error **err)
{
  return kist_hooks_parent_create (c->ctx, r, err);
}

static int
drain_ready (struct kist_collect *c, struct kist_report *r, struct kist_error **err)
{
  (void) c, (void) r, (void) err;
  return 1;
}

static int
drain_end (struct kist_collect *c, int ret, struct kist_report *r, struct kist_error **err)
{
  (void) c, (void) ret, (void) r, (void) err;
  return 1;
}

/* An init that begins its start right after READY (run, sandbox) may fail
 * in it while kist still verifies the create, and a read from outside of
 * an init that is exiting fails for that reason only: its own error (sent
 * before it exits) explains the failure better.  Its messages are read up to
 * its next READY (it waits then), its ERROR or its end; the start's entries
 * stay unverified. */
static int
init_error_first (struct kist_collect *c, struct kist_report *r, struct kist_error **err)
{
  struct kist_collect d = { .who = c->who, .on_ready = drain_ready, .on_end = drain_end,
                            .abandon = c->abandon };
  _cleanup_error_ struct kist_error *own = NULL;
  if (kist_collect_run (c->ctx->sync_fd, &d, r, &own) < 0 && own)
    {
      kist_error_freep (err);
      *err = own;
      own = NULL;
    }
  return -1;
}

/* The init waits for the COMMIT: what it set is read from outside now,
 * before any entry counts as applied (verify.h). */
static int
init_ready (struct kist_collect *c, struct kist_report *r, struct kist_error **err)
{
  if (kist_verify_outside (c->ctx, c->ctx->pid, r, err) == 0)
    return 1;
  return c->ctx->start_at_ready ? init_error_first (c, r, err) : -1;
}

/* Read the init's messages until READY (0), an ERROR or its death (< 0). */
static int
collect_init (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err)
{
  struct kist_collect c = { .who = "the container init", .ctx = ctx, .on_ready = init_ready,
                            .on_go = init_go, .on_end = init_end,
                            .abandon = "not verified from outside: the container init failed "
                                       "or ended before it was ready" };
  return kist_collect_run (ctx->sync_fd, &c, r, err);
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

/* Everything one create holds until it is committed or undone. */
struct create_job
{
  const struct kist_globals *g;
  const struct kist_create_opts *o;
  struct kist_ctx ctx;
  struct kist_spec *spec;
  struct kist_report *r;         /* handed to the caller (*report) once made */
  struct kist_state intent;      /* state.json while creating: an intent record */
  char *root, *bundle, *rootfs, *created, *owner, *annotations, *cgroup_abs, *cgroup_created_abs;
  int rootfd, bundle_fd, state_dirfd, sync_parent, sync_child, start_fd;
  bool state_created, report_written;
  bool pid_recorded;             /* the intent record names the init (create_record_pid) */
};

/* The job's memory and fds are someone else's now (kist_created). */
static void
create_job_disown (struct create_job *j)
{
  memset (j, 0, sizeof *j);
  j->rootfd = j->bundle_fd = j->state_dirfd = j->sync_parent = j->sync_child = j->start_fd = -1;
}

static void
create_job_free (struct create_job *j)
{
  kist_spec_free (j->spec);
  kist_seccomp_free (j->ctx.seccomp);
  kist_cgroup_free (j->ctx.cgroup);
  kist_net_devices_free (j->ctx.net_devices);
  free (j->root);
  free (j->bundle);
  free (j->rootfs);
  free (j->created);
  free (j->owner);
  free (j->annotations);
  free (j->cgroup_abs);
  free (j->cgroup_created_abs);
  const int fds[] = { j->rootfd, j->bundle_fd, j->state_dirfd, j->sync_parent, j->sync_child,
                      j->start_fd };
  for (size_t i = 0; i < KIST_ARRAY_SIZE (fds); i++)
    if (fds[i] >= 0)
      close (fds[i]);
}

struct kist_created
{
  struct create_job j;
};

void
kist_created_free (struct kist_created *c)
{
  if (c == NULL)
    return;
  create_job_free (&c->j);
  free (c);
}

int
kist_created_rootfd (const struct kist_created *c)
{
  return c->j.rootfd;
}

const char *
kist_created_cgroup_path (const struct kist_created *c)
{
  return c ? c->j.intent.cgroup_path : NULL;
}

/* The signals this process ignores or catches (SigIgn | SigCgt of
 * /proc/self/status), which kist's init, a clone of it, resets to the
 * default: one read instead of a sigaction per signal.  All ones (every
 * signal reset) when the file cannot tell. */
static uint64_t
signals_not_default (void)
{
  _cleanup_free_ char *text = NULL;
  if (kist_read_file_at (AT_FDCWD, "/proc/self/status", 1u << 16, &text, NULL, NULL) < 0)
    return UINT64_MAX;
  uint64_t mask = 0;
  static const char *const fields[] = { "SigIgn", "SigCgt" };
  for (size_t i = 0; i < KIST_ARRAY_SIZE (fields); i++)
    {
      _cleanup_free_ char *v = kist_proc_status_field (text, fields[i]);
      char *end = NULL;
      errno = 0;
      unsigned long long m = v ? strtoull (v, &end, 16) : 0;
      if (v == NULL || end == v || *end != '\0' || errno != 0)
        return UINT64_MAX;
      mask |= (uint64_t) m;
    }
  return mask;
}

/* The bundle and its config, checked whole before any state exists: a
 * config error leaves nothing to clean up. */
static int
create_load (struct create_job *j, struct kist_error **err)
{
  const struct kist_create_opts *o = j->o;
  if (kist_id_validate (o->id, err) < 0)
    return -1;
  if (j->g->systemd_cgroup)
    return kist_error_make (err, ENOTSUP,
                            "--systemd-cgroup: the systemd cgroup driver is not implemented by kist; "
                            "drop the flag (kist uses cgroupfs paths)");
  const char *bundle = o->bundle ? o->bundle : ".";
  /* The directory opened once; its canonical path read from the fd (no
   * second resolution that could land elsewhere). */
  j->ctx.bundle_fd = j->bundle_fd = open (bundle, O_DIRECTORY | O_CLOEXEC);
  if (j->bundle_fd < 0)
    return kist_error_make (err, errno, "bundle `%s`", bundle);
  j->bundle = kist_fd_realpath (j->bundle_fd);
  if (j->bundle == NULL && (j->bundle = realpath (bundle, NULL)) == NULL)
    return kist_error_make (err, errno, "bundle `%s`", bundle);
  j->ctx.bundle = j->bundle;
  if (o->config_json ? kist_spec_parse (o->config_json, o->config_len, &j->spec, err) < 0
                     : kist_spec_load (j->bundle_fd, &j->spec, err) < 0)
    return kist_error_wrap (err, "bundle `%s`", j->bundle);
  struct kist_spec *spec = j->ctx.spec = j->spec;
  if (spec->process == NULL)
    return kist_error_make (err, EINVAL, "config.json: process: required to create a container");
  /* Only kist sandbox's Landlock fallback runs without one: it mounts
   * nothing (its rows that need one are not run, layer.c). */
  if (spec->linux_ == NULL || (!spec->linux_->ns[KIST_NS_MOUNT].present && !o->fallback))
    return kist_error_make (err, EINVAL,
                            "config.json: linux.namespaces: kist needs a mount namespace (add "
                            "{\"type\": \"mount\"}); it never mounts in the caller's namespace");
  if (kist_ns_check (spec, err) < 0)
    return -1;
  const struct kist_namespace *pidns = &spec->linux_->ns[KIST_NS_PID];
  if (o->with_init && !o->fallback && (!pidns->present || pidns->path))
    return kist_error_make (err, EINVAL,
                            "--init: kist's init must be PID 1 of a new pid namespace, and "
                            "config.json's linux.namespaces %s: add {\"type\": \"pid\"} or drop "
                            "--init",
                            pidns->present ? "joins one by path" : "has no pid namespace");
  if (o->resources)
    {
      kist_resources_free (spec->linux_->resources);
      spec->linux_->resources = kist_resources_dup (o->resources);
    }
  /* What linux.resources asks of several fields (the cgroup layer builds
   * the same plan); the fields themselves were checked by kist_spec_parse. */
  if (kist_cgroup_plan_check (spec, err) < 0)
    return -1;
  /* The seccomp profile, parsed (the PREPARE layer only compiles it). */
  if (kist_seccomp_choose (spec, j->bundle_fd, &j->ctx.seccomp, err) < 0)
    return -1;
  if (geteuid () != 0 && !spec->linux_->ns[KIST_NS_USER].present && !o->fallback)
    return kist_error_make (err, EPERM,
                            "config.json: linux.namespaces: kist runs as uid %u, not root, and the "
                            "config asks for no user namespace; a rootless container needs one "
                            "(write the config with `kist spec --rootless`)",
                            (unsigned) geteuid ());
  if (resolve_rootfs (&j->ctx, err) < 0)
    return -1;
  j->rootfs = j->ctx.rootfs;
  j->ctx.userns = spec->linux_->ns[KIST_NS_USER].present;
  return 0;
}

/* The intent record names the scope: before the cgroup layer makes it (the
 * path kist is about to create: in the first write of the record, so that a
 * create killed at any point leaves it named), and after (the one it made, if
 * any: create_record_scope, a rewrite only when it differs). */
static void
create_scope_intent (struct create_job *j)
{
  kist_state_cgroup_intent (j->spec->linux_->cgroups_path, j->o->id, &j->cgroup_abs,
                            &j->cgroup_created_abs);
  j->intent.cgroup_path = j->cgroup_abs;
  j->intent.cgroup_created = j->cgroup_created_abs;
}

/* The state directory, locked, with state.json as an intent record
 * (creating): it names the cgroup scope kist is about to create from its
 * first write, and is rewritten as each resource is made (the scope made,
 * the init pid and start time once the init has its GO: until then it dies
 * with kist, create_record_pid), so that `delete` and `kist gc` find and
 * remove what a killed create left.  From here on,
 * a failure removes it again.  Then the report and the hooks kept for
 * later. */
static int
create_state (struct create_job *j, struct kist_report **report, struct kist_error **err)
{
  const struct kist_create_opts *o = j->o;
  if (o->state_root != NULL)
    {
      j->rootfd = fcntl (o->state_root_fd, F_DUPFD_CLOEXEC, 3);
      if (j->rootfd < 0)
        return kist_error_make (err, errno, "state root `%s`: dup its fd", o->state_root);
      j->root = xstrdup (o->state_root);
    }
  else if ((j->rootfd = kist_state_root_open (j->g->root, &j->root, err)) < 0)
    return -1;
  j->created = kist_time_rfc3339 ();
  j->owner = xasprintf ("%u", (unsigned) geteuid ());
  uint64_t self_start = kist_pid_start_time (getpid ());
  j->intent = (struct kist_state){ .id = (char *) o->id, .bundle = j->bundle,
                                   .rootfs = j->rootfs, .created = j->created,
                                   .owner = j->owner, .oci_version = j->spec->oci_version,
                                   .deadline = o->deadline,
                                   .kist_pid = o->die_with_parent ? getpid () : 0,
                                   .kist_pid_start_time = o->die_with_parent ? self_start : 0,
                                   .creating = true, .creator_pid = getpid (),
                                   .creator_start_time = self_start };
  create_scope_intent (j);
  if (kist_state_create_with (j->rootfd, o->id, &j->intent, &j->state_dirfd, err) < 0)
    return -1;
  j->state_created = true;
  j->ctx.state_dirfd = j->state_dirfd;
  *report = j->r = kist_report_new (o->id, o->operation, o->allow_degraded);
  return kist_hooks_store (&j->ctx, err);
}

static int
create_record_scope (struct create_job *j, struct kist_error **err)
{
  free (j->cgroup_abs);
  free (j->cgroup_created_abs);
  j->cgroup_abs = j->cgroup_created_abs = NULL;
  const struct kist_cgroup *cg = j->ctx.cgroup;
  if (cg)
    {
      j->cgroup_abs = xasprintf ("%s/%s", cg->mount, cg->path);
      if (cg->created_from)
        j->cgroup_created_abs = xasprintf ("%s/%s", cg->mount, cg->created_from);
    }
  j->intent.cgroup_path = j->cgroup_abs;
  j->intent.cgroup_created = j->cgroup_created_abs;
  return kist_state_write (j->state_dirfd, &j->intent, err);
}

/* The init: the sync socket, the start socket, a pid namespace joined for
 * children, clone (into the scope), and its pid in the intent record.  The
 * child goes on in init_main and never returns here. */
static int
create_spawn (struct create_job *j, struct kist_error **err)
{
  struct kist_ctx *ctx = &j->ctx;
  if (kist_ns_host_inodes (ctx, err) < 0)
    return -1;
  int pair[2];
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) < 0)
    return kist_error_make (err, errno, "socketpair");
  j->sync_parent = pair[0];
  j->sync_child = pair[1];
  if (j->o->created == NULL && (j->start_fd = start_socket (j->state_dirfd, true, err)) < 0)
    return -1;
  if (join_pid_ns_for_children (j->spec, err) < 0)
    return -1;

  unsigned long flags = kist_ns_clone_flags (j->spec);
  pid_t pid = kist_cgroup_clone (flags, ctx->cgroup ? ctx->cgroup->dirfd : -1,
                                 &ctx->cgroup_born_in);
  if (pid < 0)
    {
      int e = errno;
      _cleanup_free_ char *hint = (flags & CLONE_NEWUSER) ? kist_ns_userns_hint () : NULL;
      return kist_error_make (err, e, "clone the container init (namespaces: 0x%lx)%s%s", flags,
                              hint ? ": " : "", hint ? hint : "");
    }
  if (pid == 0)
    {
      /* The state dir fd carries the flock of this create: the init must not
       * keep it (nor the state root) open while it waits for start. */
      kist_child_drop_parent_fds (ctx, j->sync_parent, j->state_dirfd, j->rootfd, j->sync_child);
      ctx->start_fd = j->start_fd;
      init_main (ctx, j->o->operation, j->o->allow_degraded);
    }
  kist_mounts_idmap_release (ctx); /* the init has its copy of the idmapped trees */
  ctx->pid = j->r->pid = j->intent.pid = pid;
  j->intent.pid_start_time = kist_pid_start_time (pid);
  close (j->sync_child);
  j->sync_child = -1;
  ctx->sync_fd = j->sync_parent;
  return 0;
}

/* The init pid and its start time in the intent record, written right after
 * GO, while the init does its setup (not before: it waits for GO with its
 * parent-death signal set, so a kist killed before this leaves no init;
 * once GO is sent the init runs on through its user switch, which clears
 * the signal until the init sets it again).  Already there when an ENTER
 * row had the record rewritten. */
static int
create_record_pid (struct create_job *j, struct kist_error **err)
{
  if (j->pid_recorded)
    return 0;
  j->pid_recorded = true;
  return kist_state_write (j->state_dirfd, &j->intent, err);
}

/* The intent record names the devices linux.netDevices moved into a new
 * network namespace, for delete to move them back (net.h). */
static int
create_record_net_devices (struct create_job *j, struct kist_error **err)
{
  const struct kist_net_devices *nd = j->ctx.net_devices;
  if (nd == NULL || nd->joined || nd->n_moved == 0)
    return 0;
  j->intent.net_devices = nd->moved;
  j->intent.n_net_devices = nd->n_moved;
  j->pid_recorded = true; /* the record has the pid too */
  return kist_state_write (j->state_dirfd, &j->intent, err);
}

/* Ready: the state, the report, the pid file, then COMMIT: the init may
 * outlive us from now on; it acknowledges once its parent-death signal is
 * cleared. */
static int
create_commit (struct create_job *j, struct kist_error **err)
{
  const struct kist_create_opts *o = j->o;
  j->intent.creating = false;
  j->intent.annotations_json = j->annotations = kist_annotations_json (j->spec);
  /* A sandbox (an init that dies with this kist, started by it right
   * away): the commit goes to disk with start's record (started), one
   * replacement fewer.  Until then state.json is the intent record with the
   * init's pid, which delete and gc clean up as they would a committed one:
   * nothing of it outlives this kist. */
  bool with_start = o->die_with_parent && o->created != NULL;
  if (!with_start && kist_state_write (j->state_dirfd, &j->intent, err) < 0)
    return -1;
  /* run stores the report once, with start's entries (kist_container_start):
   * a file fewer to create on the state root per run.  A run killed between
   * here and its start leaves a created container without a report.json
   * (`kist report` says so; delete and gc need none). */
  if (!o->report_at_start && store_report (j->state_dirfd, j->r, err) < 0)
    return kist_error_wrap (err,
                            "store the report in the state directory of container `%s` under `%s`",
                            o->id, j->root);
  if (o->pid_file && kist_write_pid_file (o->pid_file, j->ctx.pid, err) < 0)
    return -1;
  if (!o->report_at_start && kist_create_write_report (o, j->r, err) < 0)
    {
      j->report_written = true; /* do not try (and fail) again when undoing */
      return -1;
    }
  char ack = 0;
  _cleanup_free_ char *ackp = NULL;
  if (!j->ctx.start_at_ready /* went on into its start: no COMMIT to wait for */
      && (kist_sync_send (j->ctx.sync_fd, KIST_SYNC_GO, NULL, 0) < 0
          || kist_sync_recv (j->ctx.sync_fd, &ack, &ackp, NULL) < 0 || ack != KIST_SYNC_READY))
    return kist_error_make (err, errno, "the container init died before the create was committed");

  /* What an engine's user sees in its log: allowed to degrade is not silent. */
  _cleanup_free_ char *missing = kist_report_missing_text (j->r),
                      *ungranted = kist_caps_unknown_text (j->spec->process->capabilities);
  if (ungranted)
    kist_log_warn ("container `%s`: capabilities not granted (a grant that cannot be given "
                   "leaves it more confined): %s",
                   o->id, ungranted);
  if (missing)
    kist_log_warn ("container `%s` runs without part of its configuration (allowed to "
                   "degrade): %s; `kist report %s` has the details",
                   o->id, missing, o->id);
  return 0;
}

/* A create that failed: the init killed, the scope and the state dir
 * removed, the failed hooks' poststop run, the report written anyway (it
 * says what was applied and what failed). */
static void
create_undo (struct create_job *j)
{
  const struct kist_create_opts *o = j->o;
  struct kist_ctx *ctx = &j->ctx;
  if (ctx->tty.master >= 0)
    close (steal_fd (&ctx->tty.master));
  /* Before the init dies: its network namespace (held open) would destroy
   * a virtual device moved into it. */
  kist_net_devices_undo (ctx->net_devices);
  if (ctx->pid > 0)
    {
      kill (ctx->pid, SIGKILL);
      while (waitpid (ctx->pid, NULL, 0) < 0 && errno == EINTR)
        ;
    }
  const struct kist_cgroup *cg = ctx->cgroup;
  if (cg)
    {
      _cleanup_free_ char *abs = xasprintf ("%s/%s", cg->mount, cg->path);
      _cleanup_free_ char *top
          = cg->created_from ? xasprintf ("%s/%s", cg->mount, cg->created_from) : NULL;
      _cleanup_error_ struct kist_error *cerr = NULL;
      if (kist_cgroup_remove (abs, top, &cerr) < 0)
        {
          /* Keep the intent record: `kist delete --force ID` or `kist gc`
           * retries once this kist is gone. */
          kist_log_error ("cleanup after a failed create: %s; the state dir is kept: remove the "
                          "rest with `kist delete --force %s`",
                          cerr->msg, o->id);
          j->state_created = false;
        }
    }
  kist_hooks_create_failed (ctx, j->r); /* a failed hook: poststop after the destroy */
  if (j->r && !j->report_written)
    {
      _cleanup_error_ struct kist_error *werr = NULL;
      kist_create_write_report (o, j->r, &werr);
      if (werr)
        kist_log_warn ("%s", werr->msg);
    }
  if (j->state_created)
    {
      _cleanup_error_ struct kist_error *rerr = NULL;
      if (kist_state_remove (j->rootfd, o->id, &rerr) < 0)
        kist_log_error ("cleanup after a failed create: %s", rerr->msg);
    }
}

/* o->keep_ns: the init's mount and user namespaces, while it waits for GO
 * (dumpable: its setup makes it non-dumpable first of all). */
static int
create_keep_ns (struct create_job *j, struct kist_error **err)
{
  static const char *const names[] = { "mnt", "user" };
  if (j->o->keep_ns == NULL)
    return 0;
  for (int i = 0; i < 2; i++)
    {
      char path[64];
      snprintf (path, sizeof path, "/proc/%d/ns/%s", (int) j->ctx.pid, names[i]);
      if ((j->o->keep_ns[i] = open (path, O_RDONLY | O_CLOEXEC)) < 0)
        {
          int e = errno;
          if (i == 1)
            close (steal_fd (&j->o->keep_ns[0]));
          return kist_error_make (err, e, "open %s (kept to read the workspace tmpfs after the "
                                          "end)", path);
        }
    }
  return 0;
}

/* The create, as a table of contents: the registry's PREPARE layers, the
 * init, its ENTER layers, its SETUP layers (collected), the commit. */
int
kist_create (const struct kist_globals *g, const struct kist_create_opts *o, pid_t *pid_out,
             struct kist_report **report, struct kist_error **err)
{
  __attribute__ ((cleanup (create_job_free))) struct create_job j = {
    .g = g, .o = o, .rootfd = -1, .bundle_fd = -1, .state_dirfd = -1, .sync_parent = -1,
    .sync_child = -1, .start_fd = -1,
    .ctx = { .g = g, .id = o->id, .rootfs_fd = -1, .root_fd = -1, .dev_ro_fd = -1, .exec_fd = -1,
             .sync_fd = -1, .start_fd = -1, .state_dirfd = -1, .bundle_fd = -1,
             .preserve_fds = o->preserve_fds, .no_pivot = o->no_pivot,
             .no_new_keyring = o->no_new_keyring, .console_socket = o->console_socket,
             .pid_file = o->pid_file, .die_with_parent = o->die_with_parent,
             .with_init = o->with_init,
             .init_status_fd = o->with_init ? o->init_status_fd : -1,
             .exact_env = o->exact_env, .landlock = o->landlock, .fallback = o->fallback,
             .tty = { .slave = -1, .index = -1, .master = -1, .console = true,
                      .relay = o->pty_master != NULL } }
  };
  if (o->pty_master)
    *o->pty_master = -1;
  if (create_load (&j, err) < 0)
    return -1;
  if (o->with_init)
    j.ctx.sig_not_default = signals_not_default ();
  /* run, sandbox: the init begins its start right after READY, unless
   * startContainer hooks must wait for the commit. */
  j.ctx.start_at_ready
      = o->created && (j.spec->hooks == NULL || j.spec->hooks->n_start_container == 0);
  if (create_state (&j, report, err) < 0)
    goto fail;
  j.ctx.root_fd = j.rootfd;
  if (kist_layers_run_parent (KIST_PHASE_PREPARE, KIST_FOR_CREATE, &j.ctx, j.r, err) < 0
      || create_record_scope (&j, err) < 0 || create_spawn (&j, err) < 0
      || create_keep_ns (&j, err) < 0
      || kist_layers_run_parent (KIST_PHASE_ENTER, KIST_FOR_CREATE, &j.ctx, j.r, err) < 0
      || create_record_net_devices (&j, err) < 0)
    goto fail;
  if (kist_sync_send (j.ctx.sync_fd, KIST_SYNC_GO, NULL, 0) < 0)
    {
      kist_error_make (err, errno, "the container init is gone before setup");
      goto fail;
    }
  if (create_record_pid (&j, err) < 0
      || kist_layers_run_parent (KIST_PHASE_BESIDE, KIST_FOR_CREATE, &j.ctx, j.r, err) < 0
      || collect_init (&j.ctx, j.r, err) < 0 || kist_terminal_deliver (&j.ctx, j.r, err) < 0
      || create_commit (&j, err) < 0)
    goto fail;
  *pid_out = j.ctx.pid;
  if (o->pty_master)
    *o->pty_master = steal_fd (&j.ctx.tty.master);
  if (o->created)
    {
      /* The job goes with the handle: its memory is freed after the wait,
       * its state dir (locked) and socket are start's. */
      struct kist_created *c = xmalloc (sizeof *c);
      c->j = j;
      create_job_disown (&j);
      *o->created = c;
    }
  return 0;

fail:
  create_undo (&j);
  return -1;
}

/* ------------------------------------------------------------- commands */

/* start's collect: the init's last entries (session, seccomp), then READY
 * right before its execve, then EOF (the close-on-exec connection closed:
 * the execve succeeded) or the exec error.  EOF before READY means the init
 * died before it could exec: never a success. */
struct start_collect
{
  const char *id;
  pid_t pid;
  bool ready, scratch;
  kist_start_ready_fn on_ready;
  void *arg;
  int conn;
};

static int
start_end (struct kist_collect *c, int ret, struct kist_report *r, struct kist_error **err)
{
  (void) r;
  const struct start_collect *s = c->arg;
  if (ret == -ECONNRESET && s->ready)
    return 0;
  return kist_error_make (err, ret == -ECONNRESET ? 0 : -ret,
                          "the init of container `%s` exited before it could exec its process "
                          "(see the report: `kist report %s`)",
                          s->id, s->id);
}

/* The init waits for our word before execve: read what it set from outside
 * first (verify.h); on a failure it gets none. */
static int
start_ready (struct kist_collect *c, struct kist_report *r, struct kist_error **err)
{
  struct start_collect *s = c->arg;
  struct kist_ctx v = { .id = s->id, .pid = s->pid, .rootfs_fd = -1, .sync_fd = -1,
                        .start_fd = -1, .state_dirfd = -1, .bundle_fd = -1, .exec_fd = -1 };
  pid_t vpid = kist_init_command_pid (s->pid, r, err);
  if (vpid < 0 || kist_verify_outside (&v, vpid, r, err) < 0)
    return -1;
  s->ready = true;
  if (s->on_ready && !s->scratch)
    s->on_ready (r, s->arg);
  kist_sync_send (s->conn, KIST_SYNC_GO, NULL, 0); /* the init may be gone: no error */
  return 0;
}

static int
collect_start (int conn, pid_t pid, struct kist_report *r, const char *id,
               kist_start_ready_fn on_ready, void *arg, struct kist_error **err)
{
  /* Without the stored report (unreadable), the entries are verified all
   * the same, in a scratch one. */
  _cleanup_report_ struct kist_report *scratch = r ? NULL : kist_report_new (id, "start", NULL);
  struct start_collect s = { .id = id, .pid = pid, .scratch = r == NULL, .on_ready = on_ready,
                             .arg = arg, .conn = conn };
  struct kist_collect c = { .who = "the container init", .on_ready = start_ready,
                            .on_end = start_end, .arg = &s,
                            .abandon = "not verified from outside: the container init failed "
                                       "or ended before it was ready to exec" };
  return kist_collect_run (conn, &c, r ? r : scratch, err);
}

int
kist_container_start (int rootfd, const char *id, struct kist_created *created,
                      struct kist_report *r, kist_start_ready_fn on_ready, void *arg,
                      struct kist_error **err)
{
  _cleanup_close_ int dirfd = -1, conn = -1;
  _cleanup_report_ struct kist_report *stored = NULL;
  struct kist_state st = { 0 };
  bool begun = false;
  int ret;

  if (created)
    {
      /* What this process just created and committed, still under the
       * create's lock: the state is the one it wrote (its strings stay the
       * handle's), the status `created`. */
      struct create_job *j = &created->j;
      dirfd = steal_fd (&j->state_dirfd);
      conn = steal_fd (&j->sync_parent);
      begun = j->ctx.start_at_ready;
      st = j->intent;
    }
  else
    {
      enum kist_status status;
      if (kist_container_open (rootfd, id, &dirfd, &st, &status, err) < 0)
        return -1;
      if ((ret = kist_status_allows (status, KIST_OP_START, id, err)) < 0)
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
  if (conn < 0 && (conn = start_socket (dirfd, false, err)) < 0)
    {
      ret = -1;
      goto out;
    }
  /* The init always waits for this client's GO after READY (the entries are
   * verified from outside first, and a report printed at READY comes before
   * the container's own output).  One that began on its own needs no START. */
  if (!begun && kist_sync_send (conn, KIST_SYNC_START, NULL, 0) < 0)
    {
      ret = kist_error_make (err, errno, "send start to the container init");
      goto out;
    }
  ret = collect_start (conn, st.pid, r, id, on_ready, arg, err);
  if (r && ret == 0)
    {
      kist_report_applied (r, "exec", NULL,
                           "execve of process.args[0] succeeded (seen by the parent)");
      kist_report_time_startup (r);
    }
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
  if (created == NULL)
    kist_state_clear (&st);
  return ret;
}
