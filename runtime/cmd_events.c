/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist events [--stats] [--interval DURATION] ID: runc's event stream, one
 * JSON object a line:
 *   {"type":"stats","id":ID,"data":STATS}   every interval (default 5s), or
 *                                           once with --stats
 *   {"type":"oom","id":ID}                  whenever memory.events oom_kill
 *                                           rises (watched with inotify)
 * The stream ends (exit 0) when the container's init exits.  The state lock
 * is held only while the state is read, so that kill, pause and delete work
 * while events runs.  The stream is kist_container_events (lifecycle.c);
 * this file parses the flags and prints each event. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "util.h"

#define DEFAULT_INTERVAL_NS (5 * 1000000000LL)

/* A Go duration (time.ParseDuration, which runc uses): one or more
 * NUMBER[.FRACTION]UNIT with units ns, us (µs), ms, s, m, h, e.g. "5s",
 * "1m30s", "0.5s", "250ms".  Must be positive. */
static int
parse_duration (const char *s, int64_t *ns_out, struct kist_error **err)
{
  static const struct
  {
    const char *name;
    double ns;
  } units[] = {
    { "ns", 1 },          { "us", 1e3 },  { "\xc2\xb5s", 1e3 }, { "\xce\xbcs", 1e3 },
    { "ms", 1e6 },        { "s", 1e9 },   { "m", 60e9 },        { "h", 3600e9 },
  };
  const char *p = s;
  double total = 0;
  if (*p == '\0')
    goto bad;
  while (*p)
    {
      char *end = NULL;
      if ((*p < '0' || *p > '9') && *p != '.')
        goto bad;
      errno = 0;
      double v = strtod (p, &end);
      if (end == p || errno != 0 || (size_t) (end - p) != strspn (p, "0123456789."))
        goto bad;
      p = end;
      size_t best = 0, best_len = 0;
      for (size_t i = 0; i < KIST_ARRAY_SIZE (units); i++)
        {
          size_t l = strlen (units[i].name);
          if (l > best_len && strncmp (p, units[i].name, l) == 0)
            best = i, best_len = l;
        }
      if (best_len == 0)
        goto bad;
      p += best_len;
      total += v * units[best].ns;
    }
  if (!(total >= 1) || total > 9.2e18)
    return kist_error_make (err, EINVAL,
                            "events: --interval `%s`: must be more than 0 and at most 292 years",
                            s);
  *ns_out = (int64_t) total;
  return 0;
bad:
  return kist_error_make (err, EINVAL,
                          "events: --interval `%s`: expected a duration like 5s, 500ms, 1m30s "
                          "(units ns, us, ms, s, m, h)",
                          s);
}

/* Write one line and flush it (a reader sees each event as it happens).
 * The id needs no JSON escaping: kist_id_validate allows [A-Za-z0-9_.+-]. */
static int
emit (const char *id, const char *type, const char *data, void *arg, struct kist_error **err)
{
  (void) arg;
  if (data)
    printf ("{\"type\":\"%s\",\"id\":\"%s\",\"data\":%s}\n", type, id, data);
  else
    printf ("{\"type\":\"%s\",\"id\":\"%s\"}\n", type, id);
  if (fflush (stdout) != 0 || ferror (stdout))
    return kist_error_make (err, errno, "events `%s`: write to stdout", id);
  return 0;
}

int
kist_cmd_events (const struct kist_globals *g, int argc, char **argv, struct kist_error **err)
{
  bool stats_once = false;
  const char *interval_arg = NULL;
  const struct kist_cmd_opt opts[] = { { "stats", 0, &stats_once, NULL, NULL },
                                       { "interval", 0, NULL, &interval_arg, NULL } };
  const char *id = NULL;
  int r = kist_cmd_id_options ("events", argc, argv, opts, KIST_ARRAY_SIZE (opts), &id, err);
  if (r < 0)
    return r == KIST_CMD_HELPED ? 0 : KIST_EXIT_USAGE;
  int64_t interval = DEFAULT_INTERVAL_NS;
  if (interval_arg && parse_duration (interval_arg, &interval, err) < 0)
    return KIST_EXIT_USAGE;
  _cleanup_close_ int rootfd = kist_cmd_open_root (g, err);
  if (rootfd < 0 || kist_container_events (rootfd, id, stats_once, interval, emit, NULL, err) < 0)
    return KIST_EXIT_USAGE;
  return 0;
}
