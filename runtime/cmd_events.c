/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist events [--stats] [--interval DURATION] ID: runc's event stream, one
 * JSON object a line:
 *   {"type":"stats","id":ID,"data":STATS}   every interval (default 5s), or
 *                                           once with --stats
 *   {"type":"oom","id":ID}                  whenever memory.events oom_kill
 *                                           rises (watched with inotify)
 * The stream ends (exit 0) when the container's init exits.  The state lock
 * is held only while the state is read, so that kill, pause and delete work
 * while events runs. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "cmd.h"
#include "util.h"

#define DEFAULT_INTERVAL_NS (5 * 1000000000LL)
/* Without a pidfd the init is checked this often. */
#define FALLBACK_CHECK_MS 100
/* At most this many oom lines for one observed rise (a flood guard). */
#define MAX_OOM_LINES 1000

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

static int64_t
now_ns (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (int64_t) ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Write one line and flush it (a reader sees each event as it happens).
 * The id needs no JSON escaping: kist_id_validate allows [A-Za-z0-9_.+-]. */
static int
emit (const char *id, const char *type, const char *data, struct kist_error **err)
{
  if (data)
    printf ("{\"type\":\"%s\",\"id\":\"%s\",\"data\":%s}\n", type, id, data);
  else
    printf ("{\"type\":\"%s\",\"id\":\"%s\"}\n", type, id);
  if (fflush (stdout) != 0 || ferror (stdout))
    return kist_error_make (err, errno, "events `%s`: write to stdout", id);
  return 0;
}

static int
emit_stats (const struct kist_state *st, struct kist_error **err)
{
  _cleanup_free_ char *data = kist_cgroup_stats_json (st->cgroup_path, err);
  if (data == NULL)
    return kist_error_wrap (err, "events `%s`: read the statistics of cgroup %s", st->id,
                            st->cgroup_path);
  return emit (st->id, "stats", data, err);
}

/* An oom line per oom_kill increment since *last. */
static int
check_oom (const struct kist_state *st, int64_t *last, struct kist_error **err)
{
  int64_t now = kist_cgroup_oom_kills (st->cgroup_path);
  if (now < 0)
    return 0;
  if (*last >= 0 && now > *last)
    {
      int64_t n = now - *last;
      for (int64_t i = 0; i < n && i < MAX_OOM_LINES; i++)
        if (emit (st->id, "oom", NULL, err) < 0)
          return -1;
    }
  *last = now;
  return 0;
}

static bool
container_stopped (const struct kist_state *st)
{
  return kist_state_status (st) == KIST_STATUS_STOPPED;
}

/* The stream: until the init exits. */
static int
event_loop (const struct kist_state *st, int64_t interval, struct kist_error **err)
{
  _cleanup_close_ int pidfd = (int) syscall (SYS_pidfd_open, st->pid, 0);
  /* The pid may have been reused between the state read and pidfd_open. */
  if (container_stopped (st))
    return 0;
  _cleanup_free_ char *events_path = xasprintf ("%s/memory.events", st->cgroup_path);
  _cleanup_close_ int ifd = inotify_init1 (IN_CLOEXEC | IN_NONBLOCK);
  if (ifd >= 0 && inotify_add_watch (ifd, events_path, IN_MODIFY) < 0)
    {
      /* No memory controller here (no memory.events): no oom events. */
      close (ifd);
      ifd = -1;
    }
  int64_t last_oom = kist_cgroup_oom_kills (st->cgroup_path);
  int64_t next = now_ns () + interval;
  for (;;)
    {
      struct pollfd fds[2];
      nfds_t n = 0;
      int pid_idx = -1, ino_idx = -1;
      if (pidfd >= 0)
        {
          fds[n] = (struct pollfd) { .fd = pidfd, .events = POLLIN };
          pid_idx = (int) n++;
        }
      if (ifd >= 0)
        {
          fds[n] = (struct pollfd) { .fd = ifd, .events = POLLIN };
          ino_idx = (int) n++;
        }
      int64_t left_ms = (next - now_ns () + 999999) / 1000000;
      if (left_ms < 0)
        left_ms = 0;
      if (pidfd < 0 && left_ms > FALLBACK_CHECK_MS)
        left_ms = FALLBACK_CHECK_MS;
      if (left_ms > 1000000000)
        left_ms = 1000000000;
      int r = poll (fds, n, (int) left_ms);
      if (r < 0)
        {
          if (errno == EINTR)
            continue;
          return kist_error_make (err, errno, "events `%s`: poll", st->id);
        }
      if (ino_idx >= 0 && (fds[ino_idx].revents & POLLIN))
        {
          char buf[4096] __attribute__ ((aligned (__alignof__ (struct inotify_event))));
          while (read (ifd, buf, sizeof buf) > 0)
            ;
          if (check_oom (st, &last_oom, err) < 0)
            return -1;
        }
      bool gone = (pid_idx >= 0 && (fds[pid_idx].revents & (POLLIN | POLLHUP)))
                  || (pidfd < 0 && container_stopped (st));
      if (gone)
        /* An oom kill of the init is reported before the stream ends. */
        return check_oom (st, &last_oom, err);
      if (now_ns () < next)
        continue;
      next += interval;
      if (next < now_ns ())
        next = now_ns () + interval; /* fell behind (suspend, slow reader): no burst */
      if (check_oom (st, &last_oom, err) < 0)
        return -1;
      if (emit_stats (st, err) < 0)
        {
          /* The container stopped while we read (its cgroup may be gone). */
          if (container_stopped (st))
            {
              kist_error_freep (err);
              return 0;
            }
          return -1;
        }
    }
}

int
kist_cmd_events (const struct kist_globals *g, int argc, char **argv, struct kist_error **err)
{
  static const struct option opts[] = { { "stats", no_argument, NULL, 's' },
                                        { "interval", required_argument, NULL, 'i' },
                                        { "help", no_argument, NULL, 'h' },
                                        { NULL, 0, NULL, 0 } };
  bool stats_once = false;
  int64_t interval = DEFAULT_INTERVAL_NS;
  int c;
  opterr = 0;
  while ((c = getopt_long (argc, argv, "+h", opts, NULL)) != -1)
    switch (c)
      {
      case 'h': return kist_cmd_help ("events");
      case 's': stats_once = true; break;
      case 'i':
        if (parse_duration (optarg, &interval, err) < 0)
          return KIST_EXIT_USAGE;
        break;
      default:
        kist_error_make (err, EINVAL, "events: unknown option or missing value: `%s`",
                         argv[optind - 1]);
        return KIST_EXIT_USAGE;
      }
  const char *id = NULL;
  if (kist_cmd_one_id ("events", argc, argv, optind, &id, err) < 0 || kist_id_validate (id, err) < 0)
    return KIST_EXIT_USAGE;
  _cleanup_close_ int rootfd = kist_cmd_open_root (g, err);
  if (rootfd < 0)
    return KIST_EXIT_USAGE;
  struct kist_state st = { 0 };
  int ret = KIST_EXIT_USAGE;
  {
    /* Hold the lock only while reading the state. */
    _cleanup_close_ int dirfd = -1;
    if (kist_state_open (rootfd, id, &dirfd, err) < 0)
      return KIST_EXIT_USAGE;
    if (kist_state_read (dirfd, &st, err) < 0)
      goto out;
  }
  if (container_stopped (&st))
    {
      kist_error_make (err, ESRCH, "events: container `%s` is not running (it is stopped)", id);
      goto out;
    }
  if (st.cgroup_path == NULL)
    {
      kist_error_make (err, EOPNOTSUPP,
                       "events: container `%s` has no cgroup (the state records no cgroup scope, "
                       "e.g. created rootless without a delegated cgroup v2 subtree), so there "
                       "are no statistics or oom events",
                       id);
      goto out;
    }
  if (stats_once ? emit_stats (&st, err) < 0 : event_loop (&st, interval, err) < 0)
    goto out;
  ret = 0;
out:
  kist_state_clear (&st);
  return ret;
}
