/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: logging to stderr and to the --log file (text or JSON lines, the
 * format engines read: {"level":"error","msg":"...","time":"..."}).
 * Every line is built in memory first and written with a single write(), so
 * lines from several processes (parent, container init) never interleave. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "json.h"
#include "log.h"
#include "util.h"

static int log_fd = -1;

int
kist_log_fd (void)
{
  return log_fd;
}
static bool log_json;
static bool log_debug;
/* The process that logs report entries (kist_log_layer): its pid and, when
 * that is 1 (kist as the init of a pid namespace, where a container init in
 * a new pid namespace is pid 1 too), its pid namespace. */
static pid_t log_pid;
static ino_t log_pidns;

static ino_t
pidns_inode (void)
{
  struct stat st;
  return stat ("/proc/self/ns/pid", &st) == 0 ? st.st_ino : 0;
}

void
kist_log_init (const char *path, bool json, bool debug)
{
  log_json = json;
  log_debug = debug;
  log_pid = getpid ();
  log_pidns = debug && log_pid == 1 ? pidns_inode () : 0;
  if (log_fd >= 0)
    {
      close (log_fd);
      log_fd = -1;
    }
  if (path == NULL || path[0] == '\0')
    return;
  log_fd = open (path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
  if (log_fd < 0)
    {
      _cleanup_free_ char *line
          = xasprintf ("kist: warning: cannot open the log file `%s`: %s; logging to stderr only\n",
                       path, strerror (errno));
      kist_write_all (STDERR_FILENO, line, strlen (line));
    }
}

/* {"level":"...","msg":"...",["layer":"...","applied":B,]"time":"..."}\n */
static char *
json_line (const char *level, const char *msg, const char *layer, bool applied, size_t *len)
{
  _cleanup_free_ char *now = kist_time_rfc3339 ();
  const unsigned char *buf = NULL;
  size_t n = 0;
  /* Invalid UTF-8 would make the line unparseable for the engine: the
   * lossy strings degrade the offending bytes to '?' instead. */
  yajl_gen g = kist_json_gen_new (false, true);
  yajl_gen_map_open (g);
  kist_json_gen_str_lossy (g, "level");
  kist_json_gen_str_lossy (g, level);
  kist_json_gen_str_lossy (g, "msg");
  kist_json_gen_str_lossy (g, msg);
  if (layer)
    {
      kist_json_gen_str_lossy (g, "layer");
      kist_json_gen_str_lossy (g, layer);
      kist_json_gen_str_lossy (g, "applied");
      yajl_gen_bool (g, applied);
    }
  kist_json_gen_str_lossy (g, "time");
  kist_json_gen_str_lossy (g, now);
  yajl_gen_map_close (g);
  yajl_gen_get_buf (g, &buf, &n);
  char *line = xmalloc (n + 2);
  memcpy (line, buf, n);
  line[n] = '\n';
  line[n + 1] = '\0';
  yajl_gen_free (g);
  *len = n + 1;
  return line;
}

static void
log_msg (const char *level, bool to_stderr, char *msg, const char *layer, bool applied)
{
  int saved = errno;
  kist_rstrip (msg);
  _cleanup_free_ char *text = xasprintf ("kist: %s: %s\n", level, msg);

  if (to_stderr)
    kist_write_all (STDERR_FILENO, text, strlen (text));
  if (log_fd >= 0)
    {
      if (log_json)
        {
          size_t len = 0;
          _cleanup_free_ char *line = json_line (level, msg, layer, applied, &len);
          kist_write_all (log_fd, line, len);
        }
      else
        kist_write_all (log_fd, text, strlen (text));
    }
  errno = saved;
}

static void
log_line (const char *level, bool to_stderr, const char *fmt, va_list ap)
{
  _cleanup_free_ char *msg = xvasprintf (fmt, ap);
  log_msg (level, to_stderr, msg, NULL, false);
}

void
kist_log_error (const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  log_line ("error", true, fmt, ap);
  va_end (ap);
}

void
kist_log_warn (const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  log_line ("warning", true, fmt, ap);
  va_end (ap);
}

void
kist_log_debug (const char *fmt, ...)
{
  va_list ap;
  if (!log_debug)
    return;
  va_start (ap, fmt);
  /* Debug output goes to the log file when there is one (so that it does
   * not mix with the container's stderr), else to stderr. */
  log_line ("debug", log_fd < 0, fmt, ap);
  va_end (ap);
}

void
kist_log_layer (const char *name, const char *requested, bool applied, int errnum,
                const char *reason, const char *detail)
{
  /* Cheapest test first: this runs for every entry, also in a container's
   * init (where the pid differs, or the pid namespace does). */
  if (!log_debug || name == NULL)
    return;
  if (getpid () != log_pid || (log_pidns != 0 && pidns_inode () != log_pidns))
    return;
  const char *value = requested && requested[0] ? requested : NULL;
  _cleanup_free_ char *msg = NULL;
  if (detail && detail[0] == '\0')
    detail = NULL;
  if (applied)
    msg = xasprintf ("layer %s: applied%s%s%s%s", name, value ? " (requested " : "",
                     value ? value : "", value ? ")" : "", detail ? ": " : "");
  else if (requested == NULL)
    {
      /* Most details of a skip start by saying so themselves. */
      static const char skipped[] = "not requested";
      if (detail && strncmp (detail, skipped, sizeof skipped - 1) == 0)
        {
          detail += sizeof skipped - 1;
          detail += strspn (detail, ":; ");
          if (*detail == '\0')
            detail = NULL;
        }
      msg = xasprintf ("layer %s: not requested%s", name, detail ? ": " : "");
    }
  else
    msg = xasprintf ("layer %s: NOT applied%s%s%s%s%s: %s%s", name, value ? " (requested " : "",
                     value ? value : "", value ? ")" : "", errnum > 0 ? ", " : "",
                     errnum > 0 ? kist_errno_name (errnum) : "", reason ? reason : "unknown reason",
                     detail ? "; " : "");
  if (detail)
    {
      char *full = xasprintf ("%s%s", msg, detail);
      free (msg);
      msg = full;
    }
  /* Like kist_log_debug: to the log file when there is one, else stderr. */
  log_msg ("debug", log_fd < 0, msg, name, applied);
}
