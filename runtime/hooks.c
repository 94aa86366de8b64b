/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: OCI hooks, see hooks.h for who runs which kind and when. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/close_range.h>

#include "hooks.h"
#include "json.h"
#include "log.h"
#include "sync.h"
#include "util.h"

/* The state dir's copy of the poststart and poststop hooks. */
#define HOOKS_FILE "hooks.json"

static const char *const kind_names[KIST_HOOK_KINDS + 1]
    = { "prestart", "createRuntime", "createContainer", "startContainer", "poststart", "poststop",
        NULL };
static const char *const layer_names[KIST_HOOK_KINDS + 1]
    = { "hooks.prestart",       "hooks.createRuntime", "hooks.createContainer",
        "hooks.startContainer", "hooks.poststart",     "hooks.poststop",      NULL };

const char *
kist_hook_kind_name (enum kist_hook_kind k)
{
  return (unsigned) k < KIST_HOOK_KINDS ? kind_names[k] : NULL;
}

static size_t
hook_list (const struct kist_hooks *h, enum kist_hook_kind k, const struct kist_hook **list)
{
  *list = NULL;
  if (h == NULL)
    return 0;
  switch (k)
    {
    case KIST_HOOK_PRESTART:
      *list = h->prestart;
      return h->n_prestart;
    case KIST_HOOK_CREATE_RUNTIME:
      *list = h->create_runtime;
      return h->n_create_runtime;
    case KIST_HOOK_CREATE_CONTAINER:
      *list = h->create_container;
      return h->n_create_container;
    case KIST_HOOK_START_CONTAINER:
      *list = h->start_container;
      return h->n_start_container;
    case KIST_HOOK_POSTSTART:
      *list = h->poststart;
      return h->n_poststart;
    case KIST_HOOK_POSTSTOP:
      *list = h->poststop;
      return h->n_poststop;
    case KIST_HOOK_KINDS:
      break;
    }
  return 0;
}

/* Milliseconds since start (CLOCK_MONOTONIC). */
static int64_t
since_ms (const struct timespec *start)
{
  struct timespec now;
  clock_gettime (CLOCK_MONOTONIC, &now);
  return (int64_t) (now.tv_sec - start->tv_sec) * 1000 + (now.tv_nsec - start->tv_nsec) / 1000000;
}

/* Milliseconds left of timeout_s seconds from start (-1: no timeout), at least 0. */
static int
left_ms (const struct timespec *start, int timeout_s)
{
  if (timeout_s <= 0)
    return -1;
  int64_t l = (int64_t) timeout_s * 1000 - since_ms (start);
  return l < 0 ? 0 : l > INT32_MAX ? INT32_MAX : (int) l;
}

/* The hook process: its own process group (a timeout kills what it
 * started too), stdin the state pipe, stdout and stderr kist's stderr,
 * nothing else open across the exec, exactly its args and env.  An exec
 * failure is told through ep (close-on-exec: EOF means the exec worked). */
static void __attribute__ ((noreturn))
hook_child (const struct kist_hook *hk, int in, int ep)
{
  char *const default_argv[] = { hk->path, NULL };
  char *const empty_env[] = { NULL };
  char *const *argv = hk->args && hk->args[0] ? hk->args : default_argv;
  char *const *envp = hk->env ? hk->env : empty_env;
  sigset_t none;
  sigemptyset (&none);
  sigprocmask (SIG_SETMASK, &none, NULL);
  /* An ignored signal stays ignored across execve: give the hook defaults. */
  for (int sig = 1; sig < NSIG; sig++)
    if (sig != SIGKILL && sig != SIGSTOP)
      signal (sig, SIG_DFL);
  setpgid (0, 0);
  int e = 0;
  if (dup2 (in, STDIN_FILENO) < 0)
    e = errno;
  if (e == 0 && dup2 (STDERR_FILENO, STDOUT_FILENO) < 0)
    {
      int devnull = open ("/dev/null", O_WRONLY | O_CLOEXEC);
      if (devnull < 0 || dup3 (devnull, STDOUT_FILENO, 0) < 0)
        e = errno;
    }
  if (e == 0 && syscall (SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC) < 0)
    e = errno;
  if (e == 0)
    {
      execve (hk->path, argv, envp);
      e = errno;
    }
  (void) !write (ep, &e, sizeof e);
  _exit (127);
}

/* Feed the state to the hook's stdin without blocking on a hook that does
 * not read it; stop at the deadline or when the hook is gone.  Returns 1
 * when the deadline passed. */
static int
feed_state (int in, int pidfd, const char *state, const struct timespec *start, int timeout_s)
{
  size_t off = 0, len = strlen (state);
  struct sigaction ign = { .sa_handler = SIG_IGN }, old;
  sigemptyset (&ign.sa_mask);
  sigaction (SIGPIPE, &ign, &old);
  int timed_out = 0;
  while (off < len)
    {
      ssize_t n = write (in, state + off, len - off);
      if (n > 0)
        {
          off += (size_t) n;
          continue;
        }
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0 && errno == EAGAIN)
        {
          struct pollfd p[2]
              = { { .fd = in, .events = POLLOUT }, { .fd = pidfd, .events = POLLIN } };
          int pr = poll (p, pidfd >= 0 ? 2 : 1, left_ms (start, timeout_s));
          if (pr == 0)
            {
              timed_out = 1;
              break;
            }
          if (pr > 0 && (p[1].revents & POLLIN))
            break; /* the hook exited without reading all of it */
          continue;
        }
      break; /* EPIPE: the hook closed its stdin; that is its business */
    }
  sigaction (SIGPIPE, &old, NULL);
  return timed_out;
}

/* Run one hook.  Returns 0 when it exited with status 0; otherwise -1 with
 * *errnum and *what saying how it failed.  *what also holds the outcome of
 * a success ("exit 0"); *ms the time it took. */
static int
run_one (const struct kist_hook *hk, const char *state, char **what, int *errnum, int64_t *ms)
{
  struct timespec start;
  clock_gettime (CLOCK_MONOTONIC, &start);
  int timeout_s = hk->has_timeout ? hk->timeout : 0;
  int in[2], ep[2];
  *ms = 0;
  if (pipe2 (in, O_CLOEXEC) < 0)
    {
      *errnum = errno;
      *what = xasprintf ("cannot make its stdin pipe: %s", strerror (errno));
      return -1;
    }
  if (pipe2 (ep, O_CLOEXEC) < 0)
    {
      *errnum = errno;
      *what = xasprintf ("cannot make a pipe: %s", strerror (errno));
      close (in[0]);
      close (in[1]);
      return -1;
    }
  fflush (NULL);
  pid_t pid = fork ();
  if (pid == 0)
    {
      close (in[1]);
      close (ep[0]);
      hook_child (hk, in[0], ep[1]);
    }
  int fork_errno = errno;
  close (in[0]);
  close (ep[1]);
  _cleanup_close_ int w = in[1], epr = ep[0];
  if (pid < 0)
    {
      *errnum = fork_errno;
      *what = xasprintf ("cannot fork: %s", strerror (fork_errno));
      return -1;
    }
  setpgid (pid, pid);
  _cleanup_close_ int pidfd = (int) syscall (SYS_pidfd_open, pid, 0);
  fcntl (w, F_SETFL, O_NONBLOCK);
  int timed_out = feed_state (w, pidfd, state, &start, timeout_s);
  close (w);
  w = -1;
  if (!timed_out && pidfd >= 0)
    {
      struct pollfd p = { .fd = pidfd, .events = POLLIN };
      int pr;
      do
        pr = poll (&p, 1, left_ms (&start, timeout_s));
      while (pr < 0 && errno == EINTR);
      timed_out = pr == 0;
    }
  else if (!timed_out && timeout_s > 0)
    {
      /* No pidfd (an old kernel, a filter): poll for the exit instead. */
      siginfo_t si;
      for (;;)
        {
          si.si_pid = 0;
          if (waitid (P_PID, (id_t) pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == pid)
            break;
          if (left_ms (&start, timeout_s) == 0)
            {
              timed_out = 1;
              break;
            }
          usleep (10000);
        }
    }
  if (timed_out)
    {
      kill (-pid, SIGKILL);
      kill (pid, SIGKILL);
    }
  int status = 0;
  while (waitpid (pid, &status, 0) < 0 && errno == EINTR)
    ;
  *ms = since_ms (&start);
  int exec_errno = 0;
  bool exec_failed = read (epr, &exec_errno, sizeof exec_errno) == (ssize_t) sizeof exec_errno;
  if (timed_out)
    {
      *errnum = ETIMEDOUT;
      *what = xasprintf ("did not finish within its timeout of %d s: killed (SIGKILL)",
                         hk->timeout);
      return -1;
    }
  if (exec_failed)
    {
      *errnum = exec_errno;
      *what = xasprintf ("could not be executed: %s", strerror (exec_errno));
      return -1;
    }
  /* (ECANCELED: the report's errno for a hook that ran and failed.) */
  if (WIFSIGNALED (status))
    {
      *errnum = ECANCELED;
      *what = xasprintf ("was killed by signal %d (%s)", WTERMSIG (status),
                         strsignal (WTERMSIG (status)));
      return -1;
    }
  if (WEXITSTATUS (status) != 0)
    {
      *errnum = ECANCELED;
      *what = xasprintf ("exited with status %d", WEXITSTATUS (status));
      return -1;
    }
  *what = xstrdup ("exit 0");
  return 0;
}

int
kist_hooks_run (const struct kist_hooks *h, enum kist_hook_kind kind, const char *state_json,
                struct kist_report *r, struct kist_error **err)
{
  if ((unsigned) kind >= KIST_HOOK_KINDS)
    return kist_error_make (err, EINVAL, "hooks: unknown hook kind %d", (int) kind);
  const struct kist_hook *list;
  size_t n = hook_list (h, kind, &list);
  const char *layer = layer_names[kind], *name = kind_names[kind];
  bool fatal = kind < KIST_HOOK_POSTSTART;
  if (n == 0)
    {
      kist_report_skip (r, layer, "none requested");
      return 0;
    }
  /* requested: the paths; detail: each one's outcome and duration. */
  _cleanup_free_ char *requested = NULL, *detail = NULL, *failures = NULL;
  size_t rl = 0, dl = 0, fl = 0;
  FILE *req = open_memstream (&requested, &rl), *det = open_memstream (&detail, &dl),
       *fails = open_memstream (&failures, &fl);
  if (req == NULL || det == NULL || fails == NULL)
    abort ();
  int first_errnum = 0, ret = 0;
  bool failed = false;
  size_t i;
  for (i = 0; i < n; i++)
    {
      fprintf (req, "%s%s", i ? ", " : "", list[i].path);
      _cleanup_free_ char *what = NULL;
      int errnum = 0;
      int64_t ms = 0;
      int ok = run_one (&list[i], state_json ? state_json : "{}", &what, &errnum, &ms);
      fprintf (det, "%s[%zu] %s: %s, %lld ms", i ? "; " : "", i, list[i].path, what,
               (long long) ms);
      if (ok == 0)
        continue;
      fprintf (fails, "%shooks.%s[%zu].path `%s` %s after %lld ms", failed ? "; " : "", name, i,
               list[i].path, what, (long long) ms);
      if (!failed)
        first_errnum = errnum;
      failed = true;
      if (!fatal || kist_report_may_degrade (r, layer))
        {
          kist_log_warn ("%s hook hooks.%s[%zu].path `%s` %s after %lld ms (ignored: %s)", name,
                         name, i, list[i].path, what, (long long) ms,
                         fatal ? "--allow-degraded lets it degrade"
                               : "runtime.md: a failure of this kind is a warning");
          continue;
        }
      /* Fail closed: the hooks after it do not run. */
      break;
    }
  fclose (req);
  fclose (det);
  fclose (fails);
  if (!failed)
    {
      kist_report_applied (r, layer, requested, "%s", detail);
      return 0;
    }
  if (fatal)
    {
      /* The hooks before it ran and succeeded: say so. */
      ret = kist_report_failed (r, layer, requested, first_errnum, err,
                                "%s; fix the hook or remove it from config.json%s%s%s", failures,
                                i > 0 ? " (all hooks: " : "", i > 0 ? detail : "",
                                i > 0 ? ")" : "");
      return ret;
    }
  struct kist_layer l = { .name = (char *) layer, .requested = requested, .applied = false,
                          .errnum = first_errnum, .reason = failures, .detail = detail };
  kist_report_add (r, &l);
  return 0;
}

/* ---- the OCI state on the hooks' stdin ----------------------------------- */

static char *
state_json_of (const struct kist_ctx *ctx, pid_t pid, enum kist_status status)
{
  const struct kist_spec *s = ctx->spec;
  _cleanup_free_ char *ann = kist_annotations_json (s);
  _cleanup_free_ char *created = kist_time_rfc3339 ();
  struct kist_state st = { .id = (char *) ctx->id, .bundle = ctx->bundle, .rootfs = ctx->rootfs,
                           .pid = pid, .created = created, .oci_version = s->oci_version,
                           .annotations_json = ann };
  return kist_state_oci_json (&st, status);
}

static bool
has_hooks (const struct kist_hooks *h, enum kist_hook_kind k)
{
  const struct kist_hook *list;
  return hook_list (h, k, &list) > 0;
}

int
kist_hooks_create_apply (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err)
{
  const struct kist_hooks *h = ctx->spec->hooks;
  if (has_hooks (h, KIST_HOOK_PRESTART) || has_hooks (h, KIST_HOOK_CREATE_RUNTIME))
    {
      /* The parent runs them now (its report gets their entries) and
       * answers GO; on a failure it ends the create and this init. */
      char type = 0;
      _cleanup_free_ char *payload = NULL;
      if (kist_sync_send (ctx->sync_fd, KIST_SYNC_GO, NULL, 0) < 0)
        return kist_error_make (err, EPIPE,
                                "ask kist to run the prestart and createRuntime hooks");
      if (kist_sync_recv (ctx->sync_fd, &type, &payload, NULL) < 0 || type != KIST_SYNC_GO)
        _exit (KIST_EXIT_FAILURE);
    }
  else
    {
      kist_report_skip (r, layer_names[KIST_HOOK_PRESTART], "none requested");
      kist_report_skip (r, layer_names[KIST_HOOK_CREATE_RUNTIME], "none requested");
    }
  if (!has_hooks (h, KIST_HOOK_CREATE_CONTAINER))
    return kist_hooks_run (h, KIST_HOOK_CREATE_CONTAINER, NULL, r, err);
  /* In the container's namespaces, before pivot_root: the pid as the
   * container sees it (runtime.md "State"). */
  _cleanup_free_ char *json = state_json_of (ctx, getpid (), KIST_STATUS_CREATING);
  return kist_hooks_run (h, KIST_HOOK_CREATE_CONTAINER, json, r, err);
}

int
kist_hooks_parent_create (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err)
{
  const struct kist_hooks *h = ctx->spec->hooks;
  if (!has_hooks (h, KIST_HOOK_PRESTART) && !has_hooks (h, KIST_HOOK_CREATE_RUNTIME))
    return kist_error_make (err, EPROTO, "unexpected message GO from the container init");
  _cleanup_free_ char *json = state_json_of (ctx, ctx->pid, KIST_STATUS_CREATING);
  if (kist_hooks_run (h, KIST_HOOK_PRESTART, json, r, err) < 0
      || kist_hooks_run (h, KIST_HOOK_CREATE_RUNTIME, json, r, err) < 0)
    return -1;
  if (kist_sync_send (ctx->sync_fd, KIST_SYNC_GO, NULL, 0) < 0)
    return kist_error_make (err, errno, "the container init is gone during the createRuntime "
                                        "hooks");
  return 0;
}

int
kist_hooks_start_container (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err)
{
  const struct kist_hooks *h = ctx->spec->hooks;
  if (!has_hooks (h, KIST_HOOK_START_CONTAINER))
    return kist_hooks_run (h, KIST_HOOK_START_CONTAINER, NULL, r, err);
  _cleanup_free_ char *json = state_json_of (ctx, getpid (), KIST_STATUS_CREATED);
  return kist_hooks_run (h, KIST_HOOK_START_CONTAINER, json, r, err);
}

/* ---- poststart and poststop: stored at create ------------------------------ */

static void
gen_hook_list (struct kist_jgen *j, const char *key, const struct kist_hook *list, size_t n)
{
  if (n == 0)
    return;
  kist_jgen_str (j, key);
  kist_jgen_array_open (j);
  for (size_t i = 0; i < n; i++)
    {
      kist_jgen_map_open (j);
      kist_jgen_kstr (j, "path", list[i].path);
      if (list[i].args)
        kist_jgen_kstrv (j, "args", (const char *const *) list[i].args);
      if (list[i].env)
        kist_jgen_kstrv (j, "env", (const char *const *) list[i].env);
      if (list[i].has_timeout)
        kist_jgen_kint (j, "timeout", list[i].timeout);
      kist_jgen_map_close (j);
    }
  kist_jgen_array_close (j);
}

int
kist_hooks_store (const struct kist_ctx *ctx, struct kist_error **err)
{
  const struct kist_hooks *h = ctx->spec->hooks;
  if (!has_hooks (h, KIST_HOOK_POSTSTART) && !has_hooks (h, KIST_HOOK_POSTSTOP))
    return 0;
  struct kist_jgen j = { .g = kist_json_gen_new (true, false) };
  kist_jgen_map_open (&j);
  gen_hook_list (&j, "poststart", h->poststart, h->n_poststart);
  gen_hook_list (&j, "poststop", h->poststop, h->n_poststop);
  kist_jgen_map_close (&j);
  _cleanup_free_ char *json = kist_json_gen_take (j.g);
  yajl_gen_free (j.g);
  if (j.failed || json == NULL)
    return kist_error_make (err, EINVAL, "hooks: cannot serialise the poststart and poststop "
                                         "hooks (a string that is not UTF-8?)");
  if (kist_write_file_atomic (ctx->state_dirfd, HOOKS_FILE, json, strlen (json), 0600, err) < 0)
    return kist_error_wrap (err, "store the poststart and poststop hooks of container `%s`",
                            ctx->id);
  return 0;
}

struct kist_hooks *
kist_hooks_load (int state_dirfd, const char *id)
{
  _cleanup_close_ int fd = openat (state_dirfd, HOOKS_FILE, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0)
    {
      if (errno != ENOENT)
        kist_log_warn ("container `%s`: open %s in its state dir: %s; its poststart and "
                       "poststop hooks do not run",
                       id, HOOKS_FILE, strerror (errno));
      return NULL;
    }
  _cleanup_free_ char *json = NULL;
  size_t len = 0;
  _cleanup_error_ struct kist_error *e = NULL;
  struct kist_hooks *h = NULL;
  if (kist_read_fd (fd, KIST_SPEC_MAX_SIZE, &json, &len, &e) < 0
      || kist_hooks_parse (json, len, HOOKS_FILE, &h, &e) < 0)
    {
      kist_log_warn ("container `%s`: %s; its poststart and poststop hooks do not run", id,
                     e ? e->msg : HOOKS_FILE);
      return NULL;
    }
  return h;
}

void
kist_hooks_poststart (const struct kist_hooks *h, const struct kist_state *st,
                      struct kist_report *r)
{
  _cleanup_free_ char *json
      = has_hooks (h, KIST_HOOK_POSTSTART) ? kist_state_oci_json (st, KIST_STATUS_RUNNING) : NULL;
  kist_hooks_run (h, KIST_HOOK_POSTSTART, json, r, NULL);
}

void
kist_hooks_poststop (const struct kist_hooks *h, const struct kist_state *st)
{
  if (!has_hooks (h, KIST_HOOK_POSTSTOP))
    return;
  _cleanup_free_ char *json = kist_state_oci_json (st, KIST_STATUS_STOPPED);
  _cleanup_report_ struct kist_report *r = kist_report_new (st->id, "delete", NULL);
  kist_hooks_run (h, KIST_HOOK_POSTSTOP, json, r, NULL);
}

bool
kist_hooks_failed (const struct kist_report *r, enum kist_hook_kind k)
{
  const struct kist_layer *l = (unsigned) k < KIST_HOOK_KINDS ? kist_report_find (r, layer_names[k])
                                                              : NULL;
  return l && l->requested && !l->applied;
}

void
kist_hooks_create_failed (const struct kist_ctx *ctx, struct kist_report *r)
{
  if (ctx->spec == NULL || !has_hooks (ctx->spec->hooks, KIST_HOOK_POSTSTOP))
    return;
  if (!kist_hooks_failed (r, KIST_HOOK_PRESTART) && !kist_hooks_failed (r, KIST_HOOK_CREATE_RUNTIME)
      && !kist_hooks_failed (r, KIST_HOOK_CREATE_CONTAINER))
    return;
  _cleanup_free_ char *json = state_json_of (ctx, 0, KIST_STATUS_STOPPED);
  kist_hooks_run (ctx->spec->hooks, KIST_HOOK_POSTSTOP, json, r, NULL);
}
