/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist sandbox: the exit channel.  How the command ended (its status or
 * signal, the timeout, --grace, an OOM kill) and what it used (wall and CPU
 * time, peak RSS, the scope's memory.peak and pids.peak), as the report's
 * entries "exit" and "usage" and, with --status-fd, as one JSON object per
 * line when the command started and when it ended (bubblewrap's
 * --json-status-fd keys where bwrap has them), so that a harness needs no
 * report file.
 *
 * The status comes from kist's init (init.c), which writes the command's
 * wait status and getrusage(RUSAGE_CHILDREN) to a pipe before it exits: its
 * own exit code cannot tell "exit 139" from "killed by SIGSEGV". */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "json.h"
#include "sandbox.h"
#include "util.h"

static void
gen_i64 (yajl_gen g, const char *key, int64_t v)
{
  if (v < 0)
    return;
  kist_json_gen_str_lossy (g, key);
  kist_json_gen_integer (g, (long long) v);
}

static void
emit_line (int fd, yajl_gen g)
{
  yajl_gen_map_close (g);
  _cleanup_free_ char *json = kist_json_gen_take (g);
  dprintf (fd, "%s\n", json);
}

void
kist_sb_status_started (int fd, pid_t init)
{
  static const struct
  {
    const char *ns, *key;
  } nss[] = {
    { "cgroup", "cgroup-namespace" }, { "ipc", "ipc-namespace" }, { "mnt", "mnt-namespace" },
    { "net", "net-namespace" },       { "pid", "pid-namespace" }, { "uts", "uts-namespace" },
    { "user", "user-namespace" },     { "time", "time-namespace" },
  };
  if (fd < 0)
    return;
  _cleanup_yajl_gen_ yajl_gen g = kist_json_gen_new (false, false);
  yajl_gen_map_open (g);
  kist_json_gen_str_lossy (g, "event");
  kist_json_gen_str_lossy (g, "started");
  gen_i64 (g, "child-pid", init);
  char path[64];
  snprintf (path, sizeof path, "/proc/%d/task/%d/children", (int) init, (int) init);
  _cleanup_free_ char *kids = NULL;
  _cleanup_error_ struct kist_error *e = NULL;
  long long cmd = 0;
  if (kist_read_file_at (AT_FDCWD, path, 4096, &kids, NULL, &e) == 0 && sscanf (kids, "%lld", &cmd) == 1)
    gen_i64 (g, "command-pid", cmd);
  for (size_t i = 0; i < KIST_ARRAY_SIZE (nss); i++)
    {
      struct stat st;
      snprintf (path, sizeof path, "/proc/%d/ns/%s", (int) init, nss[i].ns);
      if (stat (path, &st) == 0)
        gen_i64 (g, nss[i].key, (int64_t) st.st_ino);
    }
  emit_line (fd, g);
}

/* How the command ended, in words (the exit entry) and as the status
 * object's "how". */
static const char *
how_ended (const struct kist_sb_end *e, int *sig)
{
  *sig = 0;
  if (e->timed_out)
    return "timeout";
  if (e->graced)
    return "grace";
  if (!e->init.known)
    return "unknown";
  if (WIFSIGNALED (e->init.wstatus))
    {
      *sig = WTERMSIG (e->init.wstatus);
      return "signal";
    }
  return "exit";
}

static char *
signame (int sig)
{
  const char *a = sigabbrev_np (sig);
  return xasprintf ("SIG%s", a ? a : "?");
}

void
kist_sb_record_end (struct kist_report *r, const struct kist_sb_end *e, int status_fd)
{
  int sig = 0;
  const char *how = how_ended (e, &sig);
  bool oom = e->cg.oom_kills > 0;
  _cleanup_free_ char *sn = sig ? signame (sig) : NULL;
  _cleanup_free_ char *oom_text
      = oom ? xasprintf ("; OOM-killed (memory.events oom_kill %" PRId64 ")", e->cg.oom_kills)
            : xstrdup (e->cg.oom_kills == 0 ? "; not OOM-killed (memory.events oom_kill 0)" : "");
  _cleanup_free_ char *what = NULL;
  if (strcmp (how, "exit") == 0)
    what = xasprintf ("exited with status %d", WEXITSTATUS (e->init.wstatus));
  else if (strcmp (how, "signal") == 0)
    what = xasprintf ("killed by signal %d (%s): status %d", sig, sn, e->status);
  else if (strcmp (how, "timeout") == 0)
    what = xasprintf ("killed at --timeout: status %d", e->status);
  else if (strcmp (how, "grace") == 0)
    what = xasprintf ("killed --grace after the signal kist passed on: status %d", e->status);
  else
    what = xasprintf ("status %d from kist's init, which ended before it could say how the "
                      "command did",
                      e->status);
  if (r)
    kist_report_applied (r, "exit", how, "%s%s (from kist's init)", what, oom_text);

  _cleanup_free_ char *cpu = e->init.known
                                 ? xasprintf ("; cpu user %.3f s, system %.3f s, max RSS %ld KiB "
                                              "(getrusage of kist's init: the command and every "
                                              "process it reaped)",
                                              (double) e->init.utime_us / 1e6,
                                              (double) e->init.stime_us / 1e6, e->init.maxrss_kb)
                                 : xstrdup ("; cpu time unknown (kist's init was killed)");
  _cleanup_free_ char *mem = e->cg.memory_peak >= 0
                                 ? xasprintf ("; memory.peak %" PRId64 " bytes", e->cg.memory_peak)
                                 : xstrdup ("; no memory.peak (no scope with the memory "
                                            "controller)");
  _cleanup_free_ char *pids = e->cg.pids_peak >= 0
                                  ? xasprintf ("; pids.peak %" PRId64, e->cg.pids_peak)
                                  : xstrdup ("; no pids.peak (no scope with the pids controller)");
  if (r)
    kist_report_applied (r, "usage", NULL, "wall %.3f s%s%s%s", (double) e->wall_ms / 1000.0, cpu,
                         mem, pids);

  if (status_fd < 0)
    return;
  _cleanup_yajl_gen_ yajl_gen g = kist_json_gen_new (false, false);
  yajl_gen_map_open (g);
  kist_json_gen_str_lossy (g, "event");
  kist_json_gen_str_lossy (g, "exited");
  gen_i64 (g, "exit-code", e->status);
  kist_json_gen_str_lossy (g, "how");
  kist_json_gen_str_lossy (g, how);
  if (sig)
    gen_i64 (g, "signal", sig);
  if (e->cg.oom_kills >= 0)
    {
      kist_json_gen_str_lossy (g, "oom-killed");
      yajl_gen_bool (g, oom);
    }
  gen_i64 (g, "wall-ms", e->wall_ms);
  if (e->init.known)
    {
      gen_i64 (g, "cpu-user-us", e->init.utime_us);
      gen_i64 (g, "cpu-system-us", e->init.stime_us);
      gen_i64 (g, "max-rss-kb", e->init.maxrss_kb);
    }
  gen_i64 (g, "memory-peak", e->cg.memory_peak);
  gen_i64 (g, "pids-peak", e->cg.pids_peak);
  emit_line (status_fd, g);
}
