/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: the operations on an existing container (lifecycle.h): the state
 * machine (one table), kill, delete, pause, resume, ps, update, events,
 * state, list and gc, and the signal and wait helpers of run, exec and
 * sandbox.  The commands (cmd_*.c) parse their flags, call one of these and
 * print: they open no state dir and touch no cgroup themselves.  Which
 * operation each status allows is decided by op_table below, for every
 * command (also start in container.c and exec in exec.c). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <yajl/yajl_parse.h>

#include "cgroup.h"
#include "container.h"
#include "hooks.h"
#include "json.h"
#include "lifecycle.h"
#include "log.h"
#include "net.h"
#include "report.h"
#include "sandbox.h"
#include "util.h"

/* ------------------------------------------------------ the state machine */

#define ST(s) (1u << (s))
#define LIVE (ST (KIST_STATUS_CREATED) | ST (KIST_STATUS_RUNNING) | ST (KIST_STATUS_PAUSED))
#define ANY (LIVE | ST (KIST_STATUS_CREATING) | ST (KIST_STATUS_STOPPED))

/* Which operation is allowed in which status, and what a refusal says.  The
 * refusal is a template: {id} the container id, {status} its status,
 * {signal} "signal N" (kill), {hint} the row's hint for that status (may
 * itself use {id} and {signal}).  kist_error_make appends ": strerror(errnum)".
 *
 * CREATING: every operation but delete waits for the state lock, which a
 * create holds from its first step to its last, and a create whose kist died
 * counts as stopped; an operation therefore sees creating only in a race
 * with a pid reused by another process.  It is refused by every operation
 * that acts on the container (the recorded init pid may still be 0), and
 * delete handles it as an interrupted create. */
static const struct
{
  enum kist_op op;
  unsigned allowed;
  int errnum;
  const char *refusal;
  const char *hint[KIST_STATUS_PAUSED + 1];
} op_table[] = {
  { KIST_OP_START, ST (KIST_STATUS_CREATED), EINVAL,
    "container `{id}` cannot be started: it is {status}, not created", { NULL } },
  { KIST_OP_EXEC, ST (KIST_STATUS_RUNNING), EINVAL,
    "cannot exec in container `{id}`: it is {status}, not running{hint}",
    { [KIST_STATUS_CREATED] = " (start it first: `kist start`)" } },
  { KIST_OP_SIGNAL, LIVE, ESRCH, "container `{id}` is not running (it is {status}){hint}",
    { [KIST_STATUS_STOPPED] = ": {signal} was not sent (only SIGKILL or --all succeed on a "
                              "stopped container); remove it with `kist delete {id}`",
      [KIST_STATUS_CREATING] = ": its create has not finished; {signal} was not sent" } },
  { KIST_OP_KILL_ALL, LIVE | ST (KIST_STATUS_STOPPED), ESRCH,
    "container `{id}` is {status}: its create has not finished; {signal} was not sent",
    { NULL } },
  { KIST_OP_DELETE, ST (KIST_STATUS_CREATING) | ST (KIST_STATUS_CREATED) | ST (KIST_STATUS_STOPPED),
    EBUSY, "container `{id}` is {status}; stop it first or use `kist delete --force`", { NULL } },
  { KIST_OP_DELETE_FORCE, ANY, 0, NULL, { NULL } },
  { KIST_OP_PAUSE, ST (KIST_STATUS_RUNNING), EINVAL, "container `{id}` is not running (it is {status})",
    { NULL } },
  { KIST_OP_RESUME, ST (KIST_STATUS_PAUSED), EINVAL, "container `{id}` is not paused (it is {status})",
    { NULL } },
  { KIST_OP_UPDATE, LIVE, EINVAL, "update: container `{id}` is not running (it is {status})",
    { NULL } },
  { KIST_OP_EVENTS, LIVE, ESRCH, "events: container `{id}` is not running (it is {status})",
    { NULL } },
  { KIST_OP_PS, ANY, 0, NULL, { NULL } },
};

/* tmpl with its {placeholders} replaced, appended to *buf. */
static void
expand (char **buf, const char *tmpl, const char *id, enum kist_status st, int sig, const char *hint)
{
  for (const char *p = tmpl; p && *p;)
    {
      const char *open = strchr (p, '{');
      size_t lit = open ? (size_t) (open - p) : strlen (p);
      char *next = xasprintf ("%s%.*s", *buf, (int) lit, p);
      free (*buf);
      *buf = next;
      if (open == NULL)
        break;
      const char *close = strchr (open, '}');
      if (close == NULL)
        {
          next = xasprintf ("%s%s", *buf, open);
          free (*buf);
          *buf = next;
          break;
        }
      size_t klen = (size_t) (close - open - 1);
      const char *key = open + 1;
      char *val = NULL;
      if (klen == 2 && strncmp (key, "id", 2) == 0)
        val = xstrdup (id);
      else if (klen == 6 && strncmp (key, "status", 6) == 0)
        val = xstrdup (kist_status_name (st));
      else if (klen == 6 && strncmp (key, "signal", 6) == 0)
        val = sig >= 0 ? xasprintf ("signal %d", sig) : xstrdup ("the signal");
      else if (klen == 4 && strncmp (key, "hint", 4) == 0)
        {
          val = xstrdup ("");
          expand (&val, hint, id, st, sig, NULL);
        }
      else
        val = xasprintf ("{%.*s}", (int) klen, key);
      next = xasprintf ("%s%s", *buf, val);
      free (val);
      free (*buf);
      *buf = next;
      p = close + 1;
    }
}

static int
status_check (enum kist_status st, enum kist_op op, const char *id, int sig,
              struct kist_error **err)
{
  for (size_t i = 0; i < KIST_ARRAY_SIZE (op_table); i++)
    {
      if (op_table[i].op != op)
        continue;
      if ((unsigned) st < 32 && (op_table[i].allowed & ST (st)))
        return 0;
      const char *hint = (unsigned) st < KIST_ARRAY_SIZE (op_table[i].hint) ? op_table[i].hint[st]
                                                                             : NULL;
      _cleanup_free_ char *msg = xstrdup ("");
      expand (&msg, op_table[i].refusal, id ? id : "?", st, sig, hint);
      return kist_error_make (err, op_table[i].errnum, "%s", msg);
    }
  return kist_error_make (err, EINVAL, "internal error: operation %d is not in the state table",
                          (int) op);
}

int
kist_status_allows (enum kist_status st, enum kist_op op, const char *id, struct kist_error **err)
{
  return status_check (st, op, id, -1, err);
}

int
kist_status_allows_signal (enum kist_status st, int sig, bool all, const char *id,
                           struct kist_error **err)
{
  return status_check (st, all || sig == SIGKILL ? KIST_OP_KILL_ALL : KIST_OP_SIGNAL, id, sig, err);
}

/* kist_state_status tells paused from running or created itself (the
 * scope's cgroup.events): asking the cgroup a second time here cost every
 * list row and every command a second open and read of cgroup.events. */
enum kist_status
kist_container_status (const struct kist_state *st)
{
  return kist_state_status (st);
}

int
kist_container_open (int rootfd, const char *id, int *dirfd, struct kist_state *st,
                     enum kist_status *status, struct kist_error **err)
{
  if (kist_id_validate (id, err) < 0 || kist_state_open (rootfd, id, dirfd, err) < 0)
    return -1;
  if (kist_state_read (*dirfd, st, err) < 0)
    {
      kist_state_clear (st);
      return -1;
    }
  *status = kist_container_status (st);
  return 0;
}

/* ------------------------------------------------------- kill and delete */

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
  enum kist_status status;
  int ret;
  if (kist_container_open (rootfd, id, &dirfd, &st, &status, err) < 0)
    return -1;
  /* As runc: --all signals whatever is left in the scope (usually
   * nothing) and succeeds.  Unlike runc 1.1 ("container not running"),
   * SIGKILL succeeds too: containerd sends `kill ID 9` at teardown also
   * to stopped containers and expects success; the init is gone, which
   * is what SIGKILL asks for.  Other signals fail, as with runc (the state
   * table: KIST_OP_SIGNAL and KIST_OP_KILL_ALL). */
  if ((ret = kist_status_allows_signal (status, sig, all, id, err)) < 0)
    goto out;
  if (status == KIST_STATUS_STOPPED)
    {
      if (all && st.cgroup_path && access (st.cgroup_path, F_OK) == 0)
        ret = signal_cgroup (st.cgroup_path, sig, err);
      else
        ret = 0;
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
          kist_net_devices_release (&st, true, NULL); /* (failures are logged) */
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
  enum kist_status status = st.pid > 0 ? kist_container_status (&st) : KIST_STATUS_STOPPED;
  /* A created container (never started) goes without --force, as runc:
   * decided here, under the lock, so that a start cannot slip between. */
  if ((ret = kist_status_allows (status, force ? KIST_OP_DELETE_FORCE : KIST_OP_DELETE, id, err))
      < 0)
    goto out;
  /* linux.netDevices back into kist's network namespace before the init
   * (and with it the container's namespace) is killed. */
  if ((ret = kist_net_devices_release (&st, force, err)) < 0)
    goto out;
  if (status != KIST_STATUS_STOPPED)
    {
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

static volatile sig_atomic_t forward_pid, forwarded_end;

static void
forward_signal (int sig)
{
  if (forward_pid > 0)
    kill ((pid_t) forward_pid, sig);
  if (sig == SIGHUP || sig == SIGINT || sig == SIGQUIT || sig == SIGTERM)
    forwarded_end = sig;
}

int
kist_forwarded_end (void)
{
  return forwarded_end;
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

/* ------------------------------------------------------ pause and resume */

static int
freeze_or_thaw (int rootfd, const char *id, bool freeze, struct kist_error **err)
{
  const char *cmd = freeze ? "pause" : "resume";
  _cleanup_close_ int dirfd = -1;
  struct kist_state st = { 0 };
  enum kist_status status;
  int ret = -1;
  if (kist_container_open (rootfd, id, &dirfd, &st, &status, err) < 0)
    return -1;
  if (kist_status_allows (status, freeze ? KIST_OP_PAUSE : KIST_OP_RESUME, id, err) < 0)
    goto out;
  if (st.cgroup_path == NULL)
    {
      kist_error_make (err, EOPNOTSUPP,
                       "%s container `%s`: it has no cgroup (the state records no cgroup scope, "
                       "e.g. created rootless without a delegated cgroup v2 subtree), and "
                       "pausing needs the cgroup v2 freezer",
                       cmd, id);
      goto out;
    }
  if (kist_cgroup_freeze (st.cgroup_path, freeze, err) < 0)
    {
      kist_error_wrap (err, "%s container `%s` (cgroup %s)", cmd, id, st.cgroup_path);
      goto out;
    }
  ret = 0;
out:
  kist_state_clear (&st);
  return ret;
}

int
kist_container_pause (int rootfd, const char *id, struct kist_error **err)
{
  return freeze_or_thaw (rootfd, id, true, err);
}

int
kist_container_resume (int rootfd, const char *id, struct kist_error **err)
{
  return freeze_or_thaw (rootfd, id, false, err);
}

/* -------------------------------------------------------------------- ps */

static int
cmp_pid (const void *a, const void *b)
{
  pid_t x = *(const pid_t *) a, y = *(const pid_t *) b;
  return (x > y) - (x < y);
}

/* Without a cgroup: the processes in the init's own pid namespace (only
 * when it has one; a container sharing ours cannot be told apart). */
static int
pids_in_pidns (const char *id, pid_t init, pid_t **out, size_t *n, struct kist_error **err)
{
  ino_t ns = pid_ns_inode (init);
  if (ns == 0)
    return kist_error_make (err, errno, "ps `%s`: read /proc/%d/ns/pid", id, (int) init);
  if (ns == pid_ns_inode (getpid ()))
    return kist_error_make (err, EOPNOTSUPP,
                            "ps `%s`: the container has no cgroup and shares the host's pid "
                            "namespace, so its processes cannot be told apart",
                            id);
  DIR *d = opendir ("/proc");
  if (d == NULL)
    return kist_error_make (err, errno, "ps `%s`: open /proc", id);
  size_t cap = 16;
  _cleanup_free_ pid_t *pids = xmalloc (cap * sizeof *pids);
  *n = 0;
  struct dirent *de;
  while ((de = readdir (d)))
    {
      int p = 0;
      if (kist_parse_int (de->d_name, &p) < 0 || p <= 0 || pid_ns_inode (p) != ns)
        continue;
      if (*n == cap)
        pids = xrealloc (pids, (cap *= 2) * sizeof *pids);
      pids[(*n)++] = p;
    }
  closedir (d);
  *out = steal_pointer (&pids);
  return 0;
}

int
kist_container_ps_pids (int rootfd, const char *id, pid_t **out, size_t *n,
                        struct kist_error **err)
{
  _cleanup_close_ int dirfd = -1;
  *out = NULL;
  *n = 0;
  struct kist_state st = { 0 };
  enum kist_status status;
  if (kist_container_open (rootfd, id, &dirfd, &st, &status, err) < 0)
    return -1;
  _cleanup_free_ pid_t *pids = NULL;
  int r = kist_status_allows (status, KIST_OP_PS, id, err);
  if (r < 0)
    ; /* *err says why */
  else if (st.cgroup_path != NULL)
    {
      r = kist_cgroup_pids (st.cgroup_path, &pids, n, err);
      if (r < 0)
        kist_error_wrap (err, "ps `%s`: list the processes of cgroup %s", id, st.cgroup_path);
    }
  else if (status == KIST_STATUS_STOPPED)
    r = 0; /* no cgroup and no init: nothing runs */
  else
    r = pids_in_pidns (id, st.pid, &pids, n, err);
  kist_state_clear (&st);
  if (r < 0)
    {
      *n = 0;
      return -1;
    }
  if (*n > 1)
    qsort (pids, *n, sizeof *pids, cmp_pid);
  *out = steal_pointer (&pids);
  return 0;
}

/* ---------------------------------------------------------- state, list */

int
kist_container_state_json (int rootfd, const char *id, char **json, struct kist_error **err)
{
  if (kist_id_validate (id, err) < 0)
    return -1;
  struct kist_state st = { 0 };
  _cleanup_error_ struct kist_error *e = NULL;
  if (kist_state_peek (rootfd, id, &st, &e) < 0)
    {
      kist_state_clear (&st);
      /* A delete removed its state.json or dir while we read (no lock). */
      if (e && e->errnum == ENOENT)
        return kist_error_make (err, 0, "container `%s` does not exist", id);
      if (err)
        {
          *err = e;
          e = NULL;
        }
      return -1;
    }
  *json = kist_container_oci_json (&st, kist_container_status (&st));
  kist_state_clear (&st);
  return 0;
}

int
kist_container_report_json (int rootfd, const char *id, char **json, size_t *len,
                            struct kist_error **err)
{
  _cleanup_close_ int dirfd = -1;
  if (kist_id_validate (id, err) < 0 || kist_state_open (rootfd, id, &dirfd, err) < 0)
    return -1;
  return kist_read_file_at (dirfd, "report.json", 16u << 20, json, len, err);
}

/* The degraded list from the stored report, read by one streaming pass of
 * yajl (no tree, no report model: `kist state` needs three fields of each
 * "layers" entry).  It answers as kist_report_from_json would: a document
 * that function refuses (malformed JSON, a NUL byte or \u0000 in a string,
 * nesting deeper than KIST_JSON_MAX_DEPTH, no top-level object, id or
 * operation not a string, layers not an array) gives no list; of a key given
 * twice the last counts; null counts as absent. */
enum dg_key
{
  DG_OTHER,
  DG_ID,
  DG_OPERATION,
  DG_LAYERS,
  DG_LAYER,
  DG_REQUESTED,
  DG_APPLIED,
};

enum dg_kind
{
  DG_STR,
  DG_TRUE,
  DG_SCALAR, /* false, null, a number */
  DG_MAP,
  DG_ARRAY,
};

struct dg_parse
{
  unsigned depth;
  enum dg_key key1, key3; /* the last key at depth 1 (the report), 3 (an entry) */
  bool id_ok, op_ok, layers_ok, layers_open, in_entry, bad;
  char *name;
  bool requested, applied;
  yajl_gen out;
  size_t n_out;
};

static void
dg_value (struct dg_parse *p, enum dg_kind k, const unsigned char *s, size_t len)
{
  if (p->depth == 0 && k != DG_MAP)
    p->bad = true;
  else if (p->depth == 1)
    switch (p->key1)
      {
      case DG_ID:
        p->id_ok = k == DG_STR;
        break;
      case DG_OPERATION:
        p->op_ok = k == DG_STR;
        break;
      case DG_LAYERS:
        /* The last "layers" counts: what an earlier one gave is dropped. */
        if (p->out)
          yajl_gen_free (p->out);
        p->out = kist_json_gen_new (false, false);
        yajl_gen_array_open (p->out);
        p->n_out = 0;
        p->layers_ok = k == DG_ARRAY;
        break;
      default:
        break;
      }
  else if (p->depth == 3 && p->in_entry)
    switch (p->key3)
      {
      case DG_LAYER:
        free (p->name);
        p->name = k == DG_STR ? xasprintf ("%.*s", (int) len, (const char *) s) : NULL;
        break;
      case DG_REQUESTED:
        p->requested = k == DG_STR || k == DG_TRUE;
        break;
      case DG_APPLIED:
        p->applied = k == DG_TRUE;
        break;
      default:
        break;
      }
}

static int
dg_null (void *ctx)
{
  dg_value (ctx, DG_SCALAR, NULL, 0);
  return 1;
}

static int
dg_bool (void *ctx, int b)
{
  dg_value (ctx, b ? DG_TRUE : DG_SCALAR, NULL, 0);
  return 1;
}

static int
dg_number (void *ctx, const char *s, size_t len)
{
  (void) s, (void) len;
  dg_value (ctx, DG_SCALAR, NULL, 0);
  return 1;
}

static int
dg_string (void *ctx, const unsigned char *s, size_t len)
{
  struct dg_parse *p = ctx;
  if (memchr (s, '\0', len) != NULL)
    return p->bad = true, 0;
  dg_value (p, DG_STR, s, len);
  return 1;
}

static int
dg_map_key (void *ctx, const unsigned char *s, size_t len)
{
  struct dg_parse *p = ctx;
  if (memchr (s, '\0', len) != NULL)
    return p->bad = true, 0;
#define DG_IS(word) (len == strlen (word) && memcmp (s, word, len) == 0)
  if (p->depth == 1)
    p->key1 = DG_IS ("id")          ? DG_ID
              : DG_IS ("operation") ? DG_OPERATION
              : DG_IS ("layers")    ? DG_LAYERS
                                    : DG_OTHER;
  else if (p->depth == 3)
    p->key3 = DG_IS ("layer")       ? DG_LAYER
              : DG_IS ("requested") ? DG_REQUESTED
              : DG_IS ("applied")   ? DG_APPLIED
                                    : DG_OTHER;
#undef DG_IS
  return 1;
}

static int
dg_open (struct dg_parse *p, enum dg_kind k)
{
  dg_value (p, k, NULL, 0);
  if (p->bad || ++p->depth > KIST_JSON_MAX_DEPTH)
    return p->bad = true, 0;
  if (k == DG_ARRAY && p->depth == 2 && p->key1 == DG_LAYERS)
    p->layers_open = true;
  else if (k == DG_MAP && p->depth == 3 && p->layers_open)
    {
      p->in_entry = true;
      free (p->name);
      p->name = NULL;
      p->requested = p->applied = false;
      p->key3 = DG_OTHER;
    }
  return 1;
}

static int
dg_start_map (void *ctx)
{
  return dg_open (ctx, DG_MAP);
}

static int
dg_start_array (void *ctx)
{
  return dg_open (ctx, DG_ARRAY);
}

static int
dg_end_map (void *ctx)
{
  struct dg_parse *p = ctx;
  if (p->depth == 3 && p->in_entry)
    {
      if (p->name && p->requested && !p->applied)
        {
          kist_json_gen_str_lossy (p->out, p->name);
          p->n_out++;
        }
      p->in_entry = false;
    }
  p->depth--;
  return 1;
}

static int
dg_end_array (void *ctx)
{
  struct dg_parse *p = ctx;
  if (p->depth == 2 && p->layers_open)
    p->layers_open = false;
  p->depth--;
  return 1;
}

static const yajl_callbacks dg_callbacks = {
  .yajl_null = dg_null,
  .yajl_boolean = dg_bool,
  .yajl_number = dg_number,
  .yajl_string = dg_string,
  .yajl_start_map = dg_start_map,
  .yajl_map_key = dg_map_key,
  .yajl_end_map = dg_end_map,
  .yajl_start_array = dg_start_array,
  .yajl_end_array = dg_end_array,
};

char *
kist_container_degraded_json (int rootfd, const char *id)
{
  _cleanup_free_ char *path = xasprintf ("%s/report.json", id), *text = NULL;
  size_t len = 0;
  _cleanup_error_ struct kist_error *e = NULL;
  if (kist_read_file_at (rootfd, path, 16u << 20, &text, &len, &e) < 0 || len == 0
      || memchr (text, '\0', len) != NULL)
    return NULL;
  struct dg_parse p = { .bad = false };
  yajl_handle h = yajl_alloc (&dg_callbacks, NULL, &p);
  yajl_config (h, yajl_allow_comments, 1); /* as yajl_tree_parse */
  bool ok = yajl_parse (h, (const unsigned char *) text, len) == yajl_status_ok
            && yajl_complete_parse (h) == yajl_status_ok;
  yajl_free (h);
  free (p.name);
  char *res = NULL;
  if (ok && !p.bad && p.id_ok && p.op_ok && p.layers_ok && p.n_out > 0)
    {
      yajl_gen_array_close (p.out);
      res = kist_json_gen_take (p.out);
    }
  if (p.out)
    yajl_gen_free (p.out);
  return res;
}

char *
kist_container_oci_json (const struct kist_state *st, enum kist_status status)
{
  return kist_state_oci_json (st, status);
}

int
kist_container_root_open (const char *root, char **resolved, struct kist_error **err)
{
  return kist_state_root_open (root, resolved, err);
}

int
kist_container_list (int rootfd, kist_list_fn fn, void *arg, struct kist_error **err)
{
  _cleanup_strv_ char **ids = NULL;
  if (kist_state_list (rootfd, &ids, err) < 0)
    return -1;
  fn (NULL, KIST_STATUS_STOPPED, arg);
  for (char **id = ids; id && *id; id++)
    {
      _cleanup_error_ struct kist_error *e = NULL;
      struct kist_state st = { 0 };
      /* Without the lock: a create, start or delete in progress holds it
       * (a create for as long as its hooks and layers take); its intent
       * record says "creating". */
      if (kist_state_peek (rootfd, *id, &st, &e) < 0)
        {
          kist_state_clear (&st);
          continue; /* deleted right now */
        }
      fn (&st, kist_container_status (&st), arg);
      kist_state_clear (&st);
    }
  return 0;
}
