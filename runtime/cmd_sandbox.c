/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist sandbox [OPTIONS] -- COMMAND [ARG...]: one disposable sandbox.
 *
 * The same lifecycle as `kist run` (kist_create with a config built in
 * memory, start, wait, delete --force), plus a wall-clock timeout that kills
 * the whole sandbox (exit 124) and a teardown that always runs and removes
 * the sandbox directory ROOT/~sandbox/ID. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd.h"
#include "layer.h"
#include "landlock.h"
#include "log.h"
#include "sandbox.h"
#include "selfexe.h"
#include "sandbox_probe.h"
#include "util.h"
#include "workspace.h"

#define DEFAULT_DEADLINE_SECS (24 * 3600)

struct sb_flags
{
  struct kist_sandbox_opts o;
  const char *report_path;
  int report_fd;
  int status_fd;        /* --status-fd: JSON lines at the start and the end, -1 */
  pid_t init;           /* the sandbox's init, once created */
  bool report_text;
  const char *allow_degraded;
  const char *timeout_arg;
  int64_t timeout_ms;   /* 0: none */
  const char *grace_arg;
  int64_t grace_ms;     /* after SIGINT/SIGTERM/SIGHUP/SIGQUIT: then the scope is killed */
  const char *probe;    /* --probe[=table|json]: only say what this host can enforce */
  bool fallback_landlock;          /* --fallback landlock */
  bool uid_set, gid_set, hostname_set;
};

static int
usage_error (struct kist_error **err, const char *fmt, const char *arg)
{
  /* A harness must tell kist's failure from the command's exit 1: 125. */
  kist_error_make (err, EINVAL, fmt, arg);
  (*err)->status = KIST_EXIT_FAILURE;
  return -1;
}

static int
parse_u32 (const char *s, uint32_t *out)
{
  uint64_t v;
  if (kist_parse_u64 (s, &v) < 0 || v > UINT32_MAX)
    return -EINVAL;
  *out = (uint32_t) v;
  return 0;
}

static char *
absolute_path (const char *flag, const char *arg, bool dir, struct kist_error **err)
{
  char *real = realpath (arg, NULL);
  if (real == NULL)
    {
      kist_error_make (err, errno, "%s `%s`", flag, arg);
      return NULL;
    }
  if (dir)
    {
      _cleanup_close_ int fd = open (real, O_PATH | O_DIRECTORY | O_CLOEXEC);
      if (fd < 0)
        {
          kist_error_make (err, errno, "%s `%s`: expected a directory", flag, arg);
          free (real);
          return NULL;
        }
    }
  return real;
}

/* Is --probe among the options (before COMMAND)? */
static bool
probe_given (int argc, char **argv)
{
  for (int i = 1; i < argc && strcmp (argv[i], "--") != 0; i++)
    if (strcmp (argv[i], "--probe") == 0 || strncmp (argv[i], "--probe=", 8) == 0)
      return true;
  return false;
}

/* Parse the options; returns the index of COMMAND or -1 with *err. */
static int
parse_flags (int argc, char **argv, struct sb_flags *f, struct kist_error **err)
{
  enum
  {
    O_ROOTFS = 256, O_RO, O_RW, O_ROTRY, O_RWTRY, O_SYMLINK, O_DIR, O_TMPFS, O_WORKDIR, O_SCRATCH_SIZE, O_SCRATCH_INODES, O_KEEP,
    O_SETENV, O_ENVFILE, O_UID, O_GID, O_HOSTNAME, O_SECCOMP, O_NET, O_USERNS, O_CWD, O_MEMORY,
    O_PIDS, O_CPUS, O_NOFILE, O_FSIZE, O_NPROC, O_CORE, O_CPUTIME, O_TIMEOUT, O_GRACE, O_REPORT,
    O_REPORTFD, O_STATUSFD, O_REPORTFMT, O_DEGRADE, O_WORKSPACE, O_COMMIT, O_WSSIZE, O_WSINODES,
    O_MAXFSIZE, O_FILE, O_CHMOD, O_DEV, O_PROBE, O_FALLBACK
  };
  static const struct option opts[] = {
    { "rootfs", required_argument, NULL, O_ROOTFS },
    { "ro", required_argument, NULL, O_RO },
    { "rw", required_argument, NULL, O_RW },
    { "ro-try", required_argument, NULL, O_ROTRY },
    { "rw-try", required_argument, NULL, O_RWTRY },
    { "symlink", required_argument, NULL, O_SYMLINK },
    { "dir", required_argument, NULL, O_DIR },
    { "tmpfs", required_argument, NULL, O_TMPFS },
    { "workdir", required_argument, NULL, O_WORKDIR },
    { "scratch-size", required_argument, NULL, O_SCRATCH_SIZE },
    { "scratch-inodes", required_argument, NULL, O_SCRATCH_INODES },
    { "keep", no_argument, NULL, O_KEEP },
    { "workspace", required_argument, NULL, O_WORKSPACE },
    { "commit", required_argument, NULL, O_COMMIT },
    { "setenv", required_argument, NULL, O_SETENV },
    { "env-file", required_argument, NULL, O_ENVFILE },
    { "uid", required_argument, NULL, O_UID },
    { "gid", required_argument, NULL, O_GID },
    { "hostname", required_argument, NULL, O_HOSTNAME },
    { "seccomp", required_argument, NULL, O_SECCOMP },
    { "net", required_argument, NULL, O_NET },
    { "userns", no_argument, NULL, O_USERNS },
    { "cwd", required_argument, NULL, O_CWD },
    { "memory", required_argument, NULL, O_MEMORY },
    { "pids", required_argument, NULL, O_PIDS },
    { "cpus", required_argument, NULL, O_CPUS },
    { "nofile", required_argument, NULL, O_NOFILE },
    { "fsize", required_argument, NULL, O_FSIZE },
    { "nproc", required_argument, NULL, O_NPROC },
    { "core", required_argument, NULL, O_CORE },
    { "cpu-time", required_argument, NULL, O_CPUTIME },
    { "timeout", required_argument, NULL, O_TIMEOUT },
    { "grace", required_argument, NULL, O_GRACE },
    { "report", required_argument, NULL, O_REPORT },
    { "report-fd", required_argument, NULL, O_REPORTFD },
    { "status-fd", required_argument, NULL, O_STATUSFD },
    { "report-format", required_argument, NULL, O_REPORTFMT },
    { "allow-degraded", required_argument, NULL, O_DEGRADE },
    { "workspace-size", required_argument, NULL, O_WSSIZE },
    { "workspace-inodes", required_argument, NULL, O_WSINODES },
    { "max-file-size", required_argument, NULL, O_MAXFSIZE },
    { "file", required_argument, NULL, O_FILE },
    { "chmod", required_argument, NULL, O_CHMOD },
    { "dev", required_argument, NULL, O_DEV },
    { "probe", optional_argument, NULL, O_PROBE },
    { "fallback", required_argument, NULL, O_FALLBACK },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  struct kist_sandbox_opts *o = &f->o;
  int c, n;
  uint64_t u;
  opterr = 0;
  while ((c = getopt_long (argc, argv, "+h", opts, NULL)) != -1)
    switch (c)
      {
      case O_ROOTFS:
        free (o->rootfs);
        if ((o->rootfs = absolute_path ("--rootfs", optarg, true, err)) == NULL)
          return -1;
        break;
      case O_RO:
      case O_RW:
      case O_ROTRY:
      case O_RWTRY:
        if (kist_sandbox_add_bind (o, optarg, c == O_RW || c == O_RWTRY,
                                   c == O_ROTRY || c == O_RWTRY, err) < 0)
          return -1;
        break;
      case O_SYMLINK:
        /* Two arguments, as bwrap: TARGET DEST. */
        if (optind >= argc || strcmp (argv[optind], "--") == 0)
          return usage_error (err, "--symlink `%s`: expected TARGET DEST", optarg);
        if (kist_sandbox_add_link (o, optarg, argv[optind++], err) < 0)
          return -1;
        break;
      case O_DIR:
      case O_DEV:
        if ((c == O_DIR ? kist_sandbox_add_dir : kist_sandbox_add_dev) (o, optarg, err) < 0)
          return -1;
        break;
      case O_FILE:
      case O_CHMOD:
        /* Two arguments, as bwrap: FD DEST, OCTAL PATH. */
        if (optind >= argc || strcmp (argv[optind], "--") == 0)
          return usage_error (err, c == O_FILE ? "--file `%s`: expected FD DEST"
                                               : "--chmod `%s`: expected OCTAL PATH",
                              optarg);
        if ((c == O_FILE ? kist_sandbox_add_file : kist_sandbox_add_chmod) (o, optarg,
                                                                            argv[optind++], err)
            < 0)
          return -1;
        break;
      case O_TMPFS:
        if (kist_sandbox_add_tmpfs (o, optarg, err) < 0)
          return -1;
        break;
      case O_WORKDIR:
        if (optarg[0] != '/' || optarg[1] == '\0' || strstr (optarg, "/..") != NULL)
          return usage_error (err, "--workdir `%s`: expected an absolute path other than /",
                              optarg);
        free (o->workdir);
        o->workdir = xstrdup (optarg);
        break;
      case O_SCRATCH_SIZE:
        if (kist_parse_size (optarg, false, &o->scratch_size) < 0 || o->scratch_size == 0)
          return usage_error (err, "--scratch-size `%s`: expected a size such as 256m", optarg);
        break;
      case O_SCRATCH_INODES:
        if (kist_parse_u64 (optarg, &o->scratch_inodes) < 0 || o->scratch_inodes == 0)
          return usage_error (err, "--scratch-inodes `%s`: expected a number > 0", optarg);
        break;
      case O_KEEP: o->keep = true; break;
      case O_WORKSPACE:
        free (o->workspace);
        if (kist_workspace_resolve (optarg, &o->workspace, err) < 0)
          {
            (*err)->status = KIST_EXIT_FAILURE;
            return -1;
          }
        break;
      case O_COMMIT:
        {
          enum kist_workspace_commit cm;
          if (kist_workspace_parse_commit (optarg, &cm) < 0)
            return usage_error (err, "--commit `%s`: expected on-success, always or never",
                                optarg);
          o->commit = (int) cm;
          break;
        }
      case O_SETENV:
        if (kist_sandbox_env_add (o, optarg, "--setenv", err) < 0)
          return -1;
        break;
      case O_ENVFILE:
        if (kist_sandbox_env_file (o, optarg, err) < 0)
          return -1;
        break;
      case O_UID:
        if (parse_u32 (optarg, &o->uid) < 0)
          return usage_error (err, "--uid `%s`: expected a number", optarg);
        f->uid_set = true;
        break;
      case O_GID:
        if (parse_u32 (optarg, &o->gid) < 0)
          return usage_error (err, "--gid `%s`: expected a number", optarg);
        f->gid_set = true;
        break;
      case O_HOSTNAME:
        free (o->hostname);
        o->hostname = xstrdup (optarg);
        f->hostname_set = true;
        break;
      case O_SECCOMP:
        free (o->seccomp);
        o->seccomp = NULL;
        if (strchr (optarg, '/') != NULL)
          {
            if ((o->seccomp = absolute_path ("--seccomp", optarg, false, err)) == NULL)
              return -1;
          }
        else
          o->seccomp = xstrdup (optarg);
        break;
      case O_NET:
        if (strcmp (optarg, "none") == 0)
          o->net_host = false;
        else if (strcmp (optarg, "host") == 0)
          o->net_host = true;
        else
          return usage_error (err, "--net `%s`: expected none or host", optarg);
        break;
      case O_USERNS:
        /* The shifted root (host uid 100000) cannot reach the sandbox root
         * under the 0700 state root; refuse instead of failing later
         * (--probe says so as its namespace.user). */
        o->userns = true;
        if (probe_given (argc, argv))
          break;
        return usage_error (err, "%s",
                            "--userns: not implemented yet for root (the sandbox root under the "
                            "0700 state root is not reachable from a shifted user namespace); "
                            "run kist sandbox as an unprivileged user for a user namespace");
      case O_CWD:
        if (optarg[0] != '/')
          return usage_error (err, "--cwd `%s`: expected an absolute path", optarg);
        free (o->cwd);
        o->cwd = xstrdup (optarg);
        break;
      case O_MEMORY:
        if (kist_parse_size (optarg, false, &o->memory) < 0 || o->memory == 0
            || o->memory > INT64_MAX)
          return usage_error (err, "--memory `%s`: expected a size such as 512m", optarg);
        o->has_memory = true;
        break;
      case O_PIDS:
        if (kist_parse_int (optarg, &n) < 0 || n <= 0)
          return usage_error (err, "--pids `%s`: expected a number > 0", optarg);
        o->pids = n;
        o->has_pids = true;
        break;
      case O_CPUS:
        {
          char *end = NULL;
          errno = 0;
          o->cpus = strtod (optarg, &end);
          if (errno || end == optarg || *end || !(o->cpus >= 0.01) || o->cpus > 100000)
            return usage_error (err, "--cpus `%s`: expected a number of CPUs such as 0.5 (at "
                                     "least 0.01)",
                                optarg);
          o->has_cpus = true;
          break;
        }
      case O_NOFILE:
      case O_NPROC:
        if (kist_parse_u64 (optarg, &u) < 0)
          return usage_error (err, "`%s`: expected a number", optarg);
        n = c == O_NOFILE ? KIST_SB_RLIMIT_NOFILE : KIST_SB_RLIMIT_NPROC;
        o->rlimit[n] = u, o->has_rlimit[n] = true;
        break;
      case O_FSIZE:
      case O_MAXFSIZE:   /* the same RLIMIT_FSIZE: --max-file-size is its workspace name */
      case O_CORE:
        if (kist_parse_size (optarg, false, &u) < 0 || u > INT64_MAX)
          return usage_error (err, "`%s`: expected a size such as 10m", optarg);
        n = c == O_CORE ? KIST_SB_RLIMIT_CORE : KIST_SB_RLIMIT_FSIZE;
        o->rlimit[n] = u, o->has_rlimit[n] = true;
        break;
      case O_CPUTIME:
        if (kist_parse_u64 (optarg, &u) < 0 || u == 0)
          return usage_error (err, "--cpu-time `%s`: expected seconds > 0", optarg);
        o->rlimit[KIST_SB_RLIMIT_CPU] = u, o->has_rlimit[KIST_SB_RLIMIT_CPU] = true;
        break;
      case O_TIMEOUT:
      case O_GRACE:
        if (kist_sandbox_parse_duration (optarg, c == O_TIMEOUT ? &f->timeout_ms : &f->grace_ms) < 0)
          return usage_error (err,
                              c == O_TIMEOUT ? "--timeout `%s`: expected a duration such as 30, "
                                               "1.5s, 500ms or 2m"
                                             : "--grace `%s`: expected a duration such as 3, "
                                               "1.5s, 500ms or 0",
                              optarg);
        *(c == O_TIMEOUT ? &f->timeout_arg : &f->grace_arg) = optarg;
        break;
      case O_REPORT: f->report_path = optarg; break;
      case O_REPORTFD:
      case O_STATUSFD:
        if (kist_parse_int (optarg, &n) < 0 || n < 0)
          return usage_error (err,
                              c == O_REPORTFD ? "--report-fd `%s`: expected a file descriptor number"
                                              : "--status-fd `%s`: expected a file descriptor number",
                              optarg);
        if (fcntl (n, F_GETFD) < 0)
          return usage_error (err,
                              c == O_REPORTFD ? "--report-fd `%s`: not an open file descriptor"
                                              : "--status-fd `%s`: not an open file descriptor",
                              optarg);
        *(c == O_REPORTFD ? &f->report_fd : &f->status_fd) = n;
        break;
      case O_REPORTFMT:
        if (strcmp (optarg, "json") == 0)
          f->report_text = false;
        else if (strcmp (optarg, "text") == 0)
          f->report_text = true;
        else
          return usage_error (err, "--report-format `%s`: expected json or text", optarg);
        break;
      case O_WSSIZE:
        if (kist_parse_size (optarg, false, &o->ws_size) < 0 || o->ws_size == 0)
          return usage_error (err, "--workspace-size `%s`: expected a size such as 100m", optarg);
        break;
      case O_WSINODES:
        if (kist_parse_u64 (optarg, &o->ws_inodes) < 0 || o->ws_inodes == 0
            || o->ws_inodes > UINT32_MAX)
          return usage_error (err, "--workspace-inodes `%s`: expected a number > 0", optarg);
        break;
      case O_DEGRADE: f->allow_degraded = optarg; break;
      case O_PROBE:
        if (optarg && strcmp (optarg, "table") != 0 && strcmp (optarg, "json") != 0)
          return usage_error (err, "--probe=%s: expected --probe, --probe=table or --probe=json",
                              optarg);
        f->probe = optarg ? optarg : "table";
        break;
      case O_FALLBACK:
        if (strcmp (optarg, "landlock") != 0 && strcmp (optarg, "none") != 0)
          return usage_error (err, "--fallback `%s`: expected landlock or none", optarg);
        f->fallback_landlock = strcmp (optarg, "landlock") == 0;
        break;
      case 'h': kist_sandbox_help (); exit (0);
      default:
        return usage_error (err, "unknown option or missing value: `%s` (see kist-sandbox(8))",
                            argv[optind - 1]);
      }
  if (optind >= argc && f->probe == NULL)
    return usage_error (err, "%s", "no COMMAND given: kist sandbox [OPTIONS] -- COMMAND [ARG...]");
  if (kist_sandbox_check_entries (o, err) < 0)
    return -1;
  for (size_t i = 0; i < o->n_files; i++)
    if (o->files[i].fd == f->report_fd || o->files[i].fd == f->status_fd)
      return usage_error (err, "--file %s: its fd is also --report-fd or --status-fd",
                          o->files[i].dest);
  if ((o->ws_size || o->ws_inodes) && o->workspace == NULL)
    return usage_error (err, "%s",
                        "--workspace-size and --workspace-inodes bound the upper layer of "
                        "--workspace DIR: give --workspace (the scratch dir has --scratch-size "
                        "and --scratch-inodes)");
  if (o->userns && geteuid () == 0 && f->probe == NULL)
    return usage_error (err, "%s", "--userns: not implemented yet for root (see --probe)");
  if (o->userns && geteuid () != 0 && f->probe == NULL)
    return usage_error (err, "%s",
                        "--userns: only for root; an unprivileged caller always gets a user "
                        "namespace mapping the --uid/--gid to itself");
  return optind;
}

/* ------------------------------------------------------------ report */

static char *
report_text (const struct sb_flags *f, const struct kist_report *r, size_t *len,
             struct kist_error **err)
{
  _cleanup_free_ char *json = kist_report_to_json (r, true);
  char *out;
  if (f->report_text)
    {
      out = kist_report_json_to_text (json, strlen (json), err);
      if (out == NULL)
        return NULL;
    }
  else
    out = steal_pointer (&json);
  size_t n = strlen (out);
  if (n == 0 || out[n - 1] != '\n')
    {
      out = xrealloc (out, n + 2);
      out[n++] = '\n';
      out[n] = '\0';
    }
  *len = n;
  return out;
}

/* first: the report as it is before the command runs (stdout, --report-fd
 * and --report PATH); later calls only rewrite --report PATH (with the exec,
 * the timeout and the teardown recorded). */
static void
emit_report (const struct sb_flags *f, const struct kist_report *r, bool first)
{
  if (r == NULL || (f->report_path == NULL && f->report_fd < 0))
    return;
  _cleanup_error_ struct kist_error *e = NULL;
  size_t len = 0;
  _cleanup_free_ char *text = report_text (f, r, &len, &e);
  if (text == NULL)
    {
      kist_log_warn ("report: %s", e ? e->msg : "cannot serialise");
      return;
    }
  if (f->report_path && strcmp (f->report_path, "-") == 0)
    {
      if (first)
        {
          fflush (stdout);
          if (kist_write_all (STDOUT_FILENO, text, len) < 0)
            kist_log_warn ("--report -: write to stdout failed");
        }
    }
  else if (f->report_path
           && kist_write_file_atomic_path (f->report_path, text, len, 0644, &e) < 0)
    kist_log_warn ("--report `%s`: %s", f->report_path, e->msg);
  if (first && f->report_fd >= 0 && kist_write_all (f->report_fd, text, len) < 0)
    kist_log_warn ("--report-fd %d: write failed", f->report_fd);
}

/* start's callback: the report right before the exec, first time. */
static void
sandbox_report_ready (const struct kist_report *r, void *arg)
{
  const struct sb_flags *f = arg;
  emit_report (f, r, true);
  /* Verified, right before the command's execve: it and every namespace
   * are there to be read. */
  kist_sb_status_started (f->status_fd, f->init);
}

/* ---------------------------------------------------------- run loop */

static int64_t
now_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Wait for the init, at most until deadline_ms (monotonic; 0 = forever),
 * or until grace_ms after kist passed on a signal that asks the command to
 * end (*ended: that signal; KIST_WAIT_GRACE).  Slices of at most 100 ms
 * notice the signal and keep it (EINTR) from stretching the timeout. */
#define KIST_WAIT_GRACE (KIST_WAIT_TIMEOUT - 1)
static int
wait_until (pid_t pid, int64_t deadline_ms, int64_t grace_ms, int *ended, struct kist_error **err)
{
  int64_t grace_end = 0;
  kist_self_protect_settle (); /* its grace period while the command runs */
  for (;;)
    {
      int64_t now = now_ms ();
      if (deadline_ms && now >= deadline_ms)
        return KIST_WAIT_TIMEOUT;
      if (grace_end == 0 && (*ended = kist_forwarded_end ()) != 0)
        grace_end = now + grace_ms;
      if (grace_end && now >= grace_end)
        return KIST_WAIT_GRACE;
      int64_t left = 100;
      if (deadline_ms && deadline_ms - now < left)
        left = deadline_ms - now;
      if (grace_end && grace_end - now < left)
        left = grace_end - now;
      int st = kist_wait_status (pid, (int) left, err);
      if (st != KIST_WAIT_TIMEOUT)
        return st;
    }
}

/* What workspace_finish needs from the run: the sandbox's namespaces (the
 * workspace tmpfs lives in its mount namespace) and how the command ended. */
struct ws_run
{
  int userns, mntns;   /* -1: none */
  bool xfsz;           /* killed by SIGXFSZ */
};

/* The upper dir (and the tmpfs holding it, else -1), once the sandbox is gone. */
static int
ws_open_upper (int sbfd, const char *sb_path, const struct kist_sandbox_opts *o,
               const struct kist_sandbox_dir *d, const struct ws_run *w, int *fsfd, int *ufd,
               struct kist_error **err)
{
  *fsfd = *ufd = -1;
  if (d->layers)
    {
      if (w->mntns < 0)
        return kist_error_make (err, EBADF, "--workspace: the sandbox's mount namespace was not "
                                            "kept");
      return kist_workspace_fetch (w->userns, w->mntns, o->workdir, fsfd, ufd, err);
    }
  *ufd = openat (sbfd, KIST_WORKSPACE_UPPER, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (*ufd < 0)
    return kist_error_make (err, errno, "--workspace: open the upper dir `%s/%s`", sb_path,
                            KIST_WORKSPACE_UPPER);
  return 0;
}

/* --workspace, after the sandbox is gone (no process, no mount namespace:
 * the upper dir is stable): merge the upper dir into DIR or drop it, and
 * record "workspace".  ran: the command was started.  An overflow of the
 * quotas is never committed. */
static int
workspace_finish (int rootfd, const char *root, const char *id, const struct kist_sandbox_opts *o,
                  const struct kist_sandbox_dir *d, bool ran, int status, bool timed_out,
                  const struct ws_run *w, struct kist_report *r, const struct kist_globals *g,
                  struct kist_error **err)
{
  _cleanup_free_ char *sb_path = xasprintf ("%s/%s/%s", root, KIST_SANDBOX_DIR, id);
  _cleanup_free_ char *rel = xasprintf ("%s/%s", KIST_SANDBOX_DIR, id);
  _cleanup_close_ int sbfd = openat (rootfd, rel, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (sbfd < 0)
    return kist_error_make (err, errno, "--workspace: open the sandbox dir `%s`", sb_path);
  enum kist_workspace_commit cm = (enum kist_workspace_commit) o->commit;
  _cleanup_free_ char *why = NULL;
  _cleanup_close_ int fsfd = -1, ufd = -1;
  _cleanup_error_ struct kist_error *e = NULL;
  int en = 0;
  struct kist_workspace_limits lim = {
    .size = o->ws_size, .inodes = o->ws_inodes, .xfsz = w->xfsz,
    .fsize = o->has_rlimit[KIST_SB_RLIMIT_FSIZE] ? o->rlimit[KIST_SB_RLIMIT_FSIZE] : 0,
  };
  if (!ran)
    why = xstrdup ("discarded (the command did not run)");
  else if (ws_open_upper (sbfd, sb_path, o, d, w, &fsfd, &ufd, &e) < 0)
    goto failed;
  else if (kist_workspace_overflow (fsfd, ufd, &lim, &why, &en, &e) < 0)
    goto failed;
  else if (why)
    {
      kist_error_make (&e, en, "--workspace `%s`: not committed (an overflow): %s", o->workspace, why);
      goto failed;
    }
  else if (kist_workspace_should_commit (cm, status, timed_out))
    {
      struct kist_workspace_stats st;
      _cleanup_free_ char *upath = d->upper ? xstrdup (d->upper)
                                            : xasprintf ("(the workspace tmpfs)");
      if (kist_workspace_commit (ufd, upath, o->workspace, geteuid () == 0, &st, &e) < 0)
        {
          kist_workspace_stats_clear (&st);
          goto failed;
        }
      if (r)
        {
          _cleanup_free_ char *sk = st.skipped ? xasprintf ("; %lu skipped (special files or "
                                                            "mount points, first: %s)",
                                                            st.skipped, st.first_skipped)
                                               : xstrdup ("");
          kist_report_applied (r, "workspace", o->workspace, "committed %lu files, %lu deletions%s",
                               st.files, st.deletions, sk);
        }
      if (st.skipped)
        kist_log_warn ("--workspace `%s`: %lu entries not committed (special files or mount "
                       "points), first: %s",
                       o->workspace, st.skipped, st.first_skipped);
      kist_workspace_stats_clear (&st);
    }
  else if (timed_out)
    why = xstrdup ("discarded (timeout)");
  else if (cm == KIST_COMMIT_NEVER)
    why = xasprintf ("discarded (--commit never, exit %d)", status);
  else
    why = xasprintf ("discarded (exit %d)", status);
  if (why)
    {
      if (r)
        kist_report_applied (r, "workspace", o->workspace, "%s", why);
      if (g->debug)
        dprintf (STDERR_FILENO, "kist: --workspace %s: changes %s\n", o->workspace, why);
    }
  if (kist_workspace_remove (sbfd, sb_path, err) < 0)
    return kist_error_wrap (err, "--workspace");
  return 0;

failed:
  if (r)
    {
      _cleanup_error_ struct kist_error *ignored = NULL;
      kist_report_failed (r, "workspace", o->workspace, e->errnum, &ignored, "%s", e->msg);
    }
  kist_workspace_remove (sbfd, sb_path, NULL);
  if (*err == NULL)
    *err = steal_pointer (&e);
  return -1;
}

/* Teardown: delete --force (kills whatever is left, removes the cgroup scope
 * and the state dir, verified), the --workspace commit or discard, then the
 * sandbox directory.  Recorded in the report as "teardown". */
static int
teardown (int rootfd, const char *root, const char *id, const struct kist_sandbox_opts *o,
          const struct kist_sandbox_dir *d, bool ran, int *status, bool timed_out,
          const struct ws_run *w, struct kist_report *r, const struct kist_globals *g,
          struct kist_error **err)
{
  _cleanup_error_ struct kist_error *e1 = NULL, *e2 = NULL, *e3 = NULL;
  bool deleted = kist_container_delete (rootfd, id, true, &e1) == 0;
  /* Only once every process is gone is the upper dir stable. */
  if (o->workspace && deleted
      && workspace_finish (rootfd, root, id, o, d, ran, *status, timed_out, w, r, g, &e3) < 0)
    {
      kist_log_error ("%s", e3->msg);
      if (*status == 0)
        *status = KIST_EXIT_FAILURE;   /* a harness must see that the commit failed */
    }
  else if (o->workspace && !deleted && r)
    {
      _cleanup_error_ struct kist_error *ignored = NULL;
      kist_report_failed (r, "workspace", o->workspace, EBUSY, &ignored,
                          "discarded (the sandbox could not be torn down)");
    }
  bool removed = d->dirless || kist_sandbox_dir_remove (rootfd, root, id, o->keep, NULL, &e2) >= 0;
  if (!removed)
    kist_error_wrap (&e2, "sandbox teardown");
  if (r)
    {
      if (deleted && removed)
        kist_report_applied (r, "teardown", NULL,
                             "processes killed, cgroup scope and state dir removed (delete "
                             "--force, verified); sandbox dir %s",
                             d->dirless ? "none made (shared empty root or --rootfs)"
                             : d->work && o->keep ? "root removed, work dir kept, verified gone"
                                                  : "removed, verified gone");
      else
        {
          _cleanup_error_ struct kist_error *ignored = NULL;
          kist_report_failed (r, "teardown", NULL, (e1 ? e1 : e2)->errnum, &ignored, "%s%s%s",
                              e1 ? e1->msg : "", e1 && e2 ? "; " : "", e2 ? e2->msg : "");
        }
    }
  if (e1)
    return kist_error_make (err, e1->errnum, "sandbox teardown: %s%s%s", e1->msg,
                            e2 ? "; " : "", e2 ? e2->msg : "");
  if (e2)
    return kist_error_make (err, e2->errnum, "%s", e2->msg);
  return 0;
}

/* The "signal" entry: which signal that asks the command to end kist
 * passed on (to the init, which passes it to the command), and whether the
 * command ended within --grace or the sandbox was killed. */
static void
record_signal (struct kist_report *r, const struct sb_flags *f, int ended, bool graced,
               int status)
{
  if (ended == 0)
    {
      kist_report_skip (r, "signal", "none: kist passed on no signal that asks the command to end");
      return;
    }
  const char *abbrev = sigabbrev_np (ended);
  _cleanup_free_ char *sig = xasprintf ("SIG%s", abbrev ? abbrev : "?");
  if (!graced)
    {
      kist_report_applied (r, "signal", sig,
                           "passed on to the command, which ended within --grace %s (status %d)",
                           f->grace_arg, status);
      return;
    }
  kist_report_applied (r, "signal", sig,
                       "passed on to the command, which had not ended after --grace %s: every "
                       "process of the sandbox was killed (SIGKILL)",
                       f->grace_arg);
  dprintf (STDERR_FILENO,
           "kist: the sandbox still ran --grace %s after %s: every process was killed\n",
           f->grace_arg, sig);
}

int
kist_cmd_sandbox (const struct kist_globals *g, int argc, char **argv, struct kist_error **err)
{
  struct sb_flags f = { .report_fd = -1, .status_fd = -1, .grace_ms = 3000, .grace_arg = "3s" };
  kist_sandbox_opts_init (&f.o);
  int status = KIST_EXIT_FAILURE;
  _cleanup_free_ char *id = NULL, *root = NULL, *config = NULL, *policy = NULL;
  _cleanup_close_ int rootfd = -1, init_rd = -1, init_wr = -1;
  _cleanup_created_ struct kist_created *created = NULL;
  _cleanup_report_ struct kist_report *r = NULL;
  _cleanup_resources_ struct kist_resources *sb_res = NULL;
  _cleanup_landlock_ struct kist_landlock_rules *sb_landlock = NULL;
  struct kist_sandbox_dir dir = { 0 };
  struct kist_sandbox_fallback fb = { 0 };
  bool dir_made = false, ran = false, timed_out = false;
  size_t config_len = 0;
  struct ws_run ws = { .userns = -1, .mntns = -1 };
  int ws_ns[2] = { -1, -1 };

  /* A pipe on kist's stdout or stderr that closes (`| head`) must not end
   * kist between creating the sandbox and tearing it down: its writes fail
   * with EPIPE instead.  The command gets SIGPIPE at its default: kist's
   * init resets every signal kist's process ignores. */
  signal (SIGPIPE, SIG_IGN);
  int first = parse_flags (argc, argv, &f, err);
  if (first < 0)
    goto out;
  f.o.args = argv + first;
  if (f.probe)
    {
      if (kist_self_protect (g->argv, err) < 0)
        goto out;
      /* Before anything exists: no state root, no sandbox dir, no scope. */
      status = kist_sandbox_probe (&f.o, g->root, kist_cmd_policy (g, f.allow_degraded, &policy),
                                   strcmp (f.probe, "json") == 0, err);
      if (status < 0)
        status = kist_error_exit_status (*err);
      goto out;
    }
  /* Before anything is made: the namespaced sandbox, or (allowed, and no
   * user namespace to be had) the Landlock fallback. */
  const char *pol = kist_cmd_policy (g, f.allow_degraded, &policy);
  if (kist_sandbox_fallback_decide (&f.o, f.fallback_landlock, pol, f.uid_set, f.gid_set,
                                    f.hostname_set, &fb, err)
      < 0)
    goto out;
  if (f.o.fallback)
    {
      pol = kist_sandbox_fallback_policy (pol, &policy);
      /* Orphans of a killed init come to kist, which kills them too. */
      if (prctl (PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0)
        {
          kist_error_make (err, errno, "kist sandbox --fallback landlock: "
                                       "prctl(PR_SET_CHILD_SUBREAPER)");
          goto out;
        }
    }

  /* kist's binary protected before anything enters the sandbox (main.c
   * leaves that to sandbox): as root, with no user namespace and the
   * fallback not taken, the processes inside are o->uid/o->gid without any
   * capability, and where they cannot write the binary nothing is needed. */
  {
    uid_t in_uid;
    gid_t in_gid;
    kist_sandbox_owner (&f.o, &in_uid, &in_gid);
    struct kist_inside_creds in = { .uid = in_uid, .gid = in_gid };
    bool known = geteuid () == 0 && !f.o.fallback && !f.o.userns;
    if (kist_self_protect_for (g->argv, known ? &in : NULL, err) < 0)
      goto out;
  }

  id = kist_sandbox_new_id ();
  rootfd = kist_container_root_open (g->root, &root, err);
  if (rootfd < 0)
    goto out;
  if (kist_sandbox_dir_create (rootfd, root, id, &f.o, &dir, err) < 0)
    goto out;
  dir_made = true;
  config = f.o.fallback ? kist_sandbox_fallback_config_json (&f.o, &dir, &config_len, err)
                        : kist_sandbox_config_json (&f.o, &dir, geteuid (), getegid (),
                                                    &config_len, err);
  if (config == NULL)
    goto teardown;

  int64_t start_ms = now_ms ();
  sb_res = kist_sandbox_resources (&f.o);
  sb_landlock = f.o.fallback ? kist_sandbox_fallback_landlock (&f.o, &dir)
                             : kist_sandbox_landlock (&f.o, &dir, err);
  if (sb_landlock == NULL)
    goto teardown;
  /* kist's init writes how the command ended here (init.c). */
  int init_pipe[2];
  if (pipe2 (init_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
    {
      kist_error_make (err, errno, "sandbox: pipe for kist's init");
      goto teardown;
    }
  init_rd = init_pipe[0];
  init_wr = init_pipe[1];
  struct kist_create_opts co = {
    .id = id, .bundle = dir.path, .operation = "sandbox", .report_fd = -1,
    .allow_degraded = pol, .config_json = config, .fallback = f.o.fallback ? &fb : NULL,
    .config_len = config_len,
    .resources = sb_res,
    .landlock = sb_landlock,
    .die_with_parent = true,
    .created = &created,
    .report_at_start = true, /* report.json stored once, with start's entries */
    .with_init = true,
    .init_status_fd = init_wr,
    .exact_env = true,
    .keep_ns = dir.layers ? ws_ns : NULL,
    .deadline = (int64_t) time (NULL)
                + (f.timeout_ms ? (f.timeout_ms + 999) / 1000 : DEFAULT_DEADLINE_SECS),
    .state_root = root, .state_root_fd = rootfd,
  };
  pid_t pid = 0;
  int cr = kist_create (g, &co, &pid, &r, err);
  /* The mount namespace, and the user namespace to enter it by when kist
   * is unprivileged (as root the sandbox has none of its own). */
  ws.mntns = ws_ns[0];
  ws.userns = ws_ns[1];
  if (ws.userns >= 0 && geteuid () == 0)
    close (steal_fd (&ws.userns));
  close (init_wr);
  init_wr = -1;
  if (cr < 0)
    {
      const struct kist_workspace_plan *wp = &dir.ws;
      if (f.o.workspace && *err && wp->idmap && strstr ((*err)->msg, "MOUNT_ATTR_IDMAP") != NULL)
        kist_error_wrap (err,
                         "--workspace `%s` belongs to %u:%u, not to the sandbox user %u:%u, and "
                         "the idmapped mount that shows it as the sandbox user's failed; give "
                         "--uid %u --gid %u (its owner) or chown it to the sandbox user",
                         f.o.workspace, wp->owner_uid, wp->owner_gid, wp->sb_uid, wp->sb_gid,
                         wp->owner_uid, wp->owner_gid);
      else if (f.o.workspace && *err && strstr ((*err)->msg, "overlay") != NULL)
        kist_error_wrap (err, "--workspace `%s` (the overlay at %s%s)", f.o.workspace,
                         f.o.workdir,
                         geteuid () != 0 ? "; an overlay in a user namespace needs Linux >= 5.11 "
                                           "(userxattr) and a state root filesystem with user "
                                           "xattrs"
                                         : "");
      if (!f.o.fallback)
        kist_sandbox_fallback_hint (err);
      emit_report (&f, r, true);
      status = kist_error_exit_status (*err);
      goto teardown;
    }
  if (f.o.fallback && kist_sandbox_fallback_unconfined (r, err))
    {
      emit_report (&f, r, true);
      goto teardown;
    }
  kist_forward_signals (pid);
  f.init = pid;
  if (kist_container_start (rootfd, id, created, r, sandbox_report_ready, &f, err)
      < 0)
    {
      emit_report (&f, r, true);
      status = kist_error_exit_status (*err);
      kist_wait_status (pid, -1, NULL);
      goto teardown;
    }
  emit_report (&f, r, false);
  ran = true;
  int64_t ran_ms = now_ms ();

  int64_t deadline = f.timeout_ms ? start_ms + f.timeout_ms : 0;
  int ended = 0;
  status = wait_until (pid, deadline, f.grace_ms, &ended, err);
  bool graced = status == KIST_WAIT_GRACE;
  if (!graced)
    ended = kist_forwarded_end ();
  if (status == KIST_WAIT_TIMEOUT || graced)
    {
      _cleanup_error_ struct kist_error *kerr = NULL;
      if (kist_container_kill (rootfd, id, SIGKILL, true, &kerr) < 0)
        kist_log_warn ("sandbox %s: %s", graced ? "--grace" : "timeout", kerr->msg);
      kill (pid, SIGKILL);   /* the init itself, in any case */
      int st = f.o.fallback ? kist_sandbox_fallback_kill_all (pid) : kist_wait_status (pid, -1, NULL);
      if (graced)
        status = st;
    }
  if (status == KIST_WAIT_TIMEOUT)
    {
      kist_report_applied (r, "timeout", f.timeout_arg, "expired: every process of the sandbox "
                                                         "was killed (SIGKILL)");
      dprintf (STDERR_FILENO,
               "kist: sandbox timed out after %gs (--timeout %s): every process was killed\n",
               (double) f.timeout_ms / 1000.0, f.timeout_arg);
      status = KIST_EXIT_TIMEOUT;
      timed_out = true;
    }
  else if (status < 0)
    status = KIST_EXIT_FAILURE;
  else if (f.timeout_ms)
    kist_report_applied (r, "timeout", f.timeout_arg, "not reached (the command exited after %.3f s)",
                         (double) (now_ms () - start_ms) / 1000.0);
  else
    kist_report_skip (r, "timeout", "no --timeout; deadline for kist gc: start + 24 h");
  record_signal (r, &f, ended, graced, status);
  {
    struct kist_sb_end end = { .status = status, .timed_out = timed_out, .graced = graced,
                               .wall_ms = now_ms () - ran_ms };
    kist_init_status_read (init_rd, &end.init);
    ws.xfsz = end.init.known && WIFSIGNALED (end.init.wstatus)
              && WTERMSIG (end.init.wstatus) == SIGXFSZ;
    /* The scope the create committed: no second open of the state. */
    if (created)
      kist_scope_usage (kist_created_cgroup_path (created), &end.cg);
    else
      kist_container_usage (rootfd, id, &end.cg);
    kist_sb_record_end (r, &end, f.status_fd);
  }

teardown:
  /* Until a start took them, the create's handle holds the state dir's lock,
   * which the teardown's delete takes, and the init's socket: let both go. */
  kist_created_freep (&created);
  {
    /* A failure here does not change the command's status: it is printed
     * (and recorded in the report as "teardown", not applied). */
    _cleanup_error_ struct kist_error *terr = NULL;
    if (f.o.fallback)
      kist_kill_children (0, NULL); /* whatever came to kist, as a subreaper */
    if (dir_made
        && teardown (rootfd, root, id, &f.o, &dir, ran, &status, timed_out, &ws, r, g, &terr) < 0)
      kist_log_error ("%s", terr->msg);
    if (r && r->n_layers > 0)
      emit_report (&f, r, false);
    if (dir_made && dir.work && f.o.keep)
      dprintf (STDERR_FILENO, "kist: sandbox work dir kept at %s\n", dir.work);
  }

out:
  if (ws.userns >= 0)
    close (ws.userns);
  if (ws.mntns >= 0)
    close (ws.mntns);
  kist_sandbox_fallback_clear (&fb);
  kist_sandbox_dir_clear (&dir);
  kist_sandbox_opts_clear (&f.o);
  return status;
}
