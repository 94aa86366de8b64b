/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: kist_container_update and kist_container_events (lifecycle.h): the
 * operations on a live container's cgroup limits and statistics. */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "lifecycle.h"
#include "log.h"
#include "report.h"
#include "util.h"

/* ---------------------------------------------------------------- update */

#define REPORT_MAX (16u << 20)

/* Remove every entry named name (it is superseded). */
static void
drop_layer (struct kist_report *r, const char *name)
{
  size_t i = 0;
  while (i < r->n_layers)
    {
      if (strcmp (r->layers[i].name, name) != 0)
        {
          i++;
          continue;
        }
      kist_layer_clear (&r->layers[i]);
      memmove (&r->layers[i], &r->layers[i + 1], (r->n_layers - i - 1) * sizeof r->layers[0]);
      r->n_layers--;
    }
}

/* Is tok one of the comma-separated tokens of list? */
static bool
has_token (const char *list, const char *tok, size_t len)
{
  for (const char *p = list; p && *p;)
    {
      const char *c = strchr (p, ',');
      size_t l = c ? (size_t) (c - p) : strlen (p);
      if (l == len && strncmp (p, tok, len) == 0)
        return true;
      p = c ? c + 1 : NULL;
    }
  return false;
}

/* The stored report's policy gains the update's tokens (an entry that the
 * update let degrade is then covered by the report's allowDegraded). */
static void
merge_policy (struct kist_report *stored, const char *add)
{
  for (const char *p = add; p && *p;)
    {
      const char *c = strchr (p, ',');
      size_t l = c ? (size_t) (c - p) : strlen (p);
      if (l > 0 && !has_token (stored->allow_degraded, p, l))
        {
          char *next = stored->allow_degraded && *stored->allow_degraded
                           ? xasprintf ("%s,%.*s", stored->allow_degraded, (int) l, p)
                           : xasprintf ("%.*s", (int) l, p);
          free (stored->allow_degraded);
          stored->allow_degraded = next;
        }
      p = c ? c + 1 : NULL;
    }
}

/* Does the update's entry go into the stored report?  Applied ones (now in
 * force), and requested ones that the policy let degrade: the update
 * succeeded without them, and the report must say what is not applied.  An
 * entry whose failure failed the update is left out (the caller got the
 * error; the stored entry, still in force, stays). */
static bool
stored_entry (const struct kist_report *upd, const struct kist_layer *l)
{
  return l->applied || (l->requested && kist_report_may_degrade (upd, l->name));
}

/* The entries of the update replace the stored ones of the same name
 * (appended: the report lists layers in the order they were applied).  A
 * degraded entry that replaces an applied one says that the old value is
 * still in force.  The entries are moved, not added with kist_report_add:
 * they were recorded (and logged with --debug) once already, in upd. */
static int
store_report (int dirfd, const char *id, struct kist_report *upd, struct kist_error **err)
{
  size_t n_stored = 0;
  for (size_t i = 0; i < upd->n_layers; i++)
    n_stored += stored_entry (upd, &upd->layers[i]);
  if (n_stored == 0)
    return 0;
  _cleanup_free_ char *json = NULL;
  size_t len = 0;
  _cleanup_report_ struct kist_report *stored = NULL;
  struct kist_error *e = NULL;
  if (kist_read_file_at (dirfd, "report.json", REPORT_MAX, &json, &len, &e) < 0)
    {
      if (e->errnum != ENOENT)
        {
          *err = e;
          return kist_error_wrap (err, "read the stored report");
        }
      kist_error_free (e);
      stored = kist_report_new (id, "update", NULL);
    }
  else if ((stored = kist_report_from_json (json, len, err)) == NULL)
    return kist_error_wrap (err, "the stored report");
  for (size_t i = 0; i < upd->n_layers; i++)
    {
      struct kist_layer *l = &upd->layers[i];
      if (!stored_entry (upd, l))
        continue;
      if (!l->applied)
        {
          const struct kist_layer *old = kist_report_find (stored, l->name);
          if (old && old->applied)
            {
              char *reason = xasprintf ("%s; kist update let it degrade: the earlier value (%s) "
                                        "is still in force",
                                        l->reason ? l->reason : "not applied",
                                        old->requested && *old->requested ? old->requested
                                                                          : "requested");
              free (l->reason);
              l->reason = reason;
            }
          merge_policy (stored, upd->allow_degraded);
        }
      drop_layer (stored, l->name);
      if (stored->n_layers == stored->cap_layers)
        {
          stored->cap_layers = stored->cap_layers ? stored->cap_layers * 2 : 32;
          stored->layers = xrealloc (stored->layers, stored->cap_layers * sizeof *stored->layers);
        }
      stored->layers[stored->n_layers++] = *l;
      memset (l, 0, sizeof *l);
    }
  return kist_report_write_at (stored, dirfd, "report.json", 0600, err);
}

int
kist_container_update (int rootfd, const char *id,
                       const struct kist_resources *resources, const char *policy,
                       struct kist_error **err)
{
  _cleanup_close_ int dirfd = -1;
  if (kist_id_validate (id, err) < 0 || kist_state_open (rootfd, id, &dirfd, err) < 0)
    return -1;
  struct kist_state st = { 0 };
  _cleanup_report_ struct kist_report *upd = NULL;
  int ret = -1;
  if (kist_state_read (dirfd, &st, err) < 0)
    goto out;
  if (kist_status_allows (kist_container_status (&st), KIST_OP_UPDATE, id, err) < 0)
    goto out;
  if (st.cgroup_path == NULL)
    {
      kist_error_make (err, EOPNOTSUPP,
                       "update: container `%s` has no cgroup (the state records no cgroup scope, "
                       "e.g. created rootless without a delegated cgroup v2 subtree), so its "
                       "limits cannot be changed",
                       id);
      goto out;
    }
  upd = kist_report_new (id, "update", policy);
  int r = kist_cgroup_update (st.cgroup_path, resources, upd, err);
  if (r < 0)
    kist_error_wrap (err, "update container `%s` (cgroup %s)", id, st.cgroup_path);
  else
    for (size_t i = 0; i < upd->n_layers; i++)
      if (upd->layers[i].requested && !upd->layers[i].applied)
        kist_log_warn ("update container `%s`: layer %s not applied (allowed to degrade): %s", id,
                       upd->layers[i].name,
                       upd->layers[i].reason ? upd->layers[i].reason : "unknown reason");
  /* Whatever was applied is in force now, also after a later failure. */
  struct kist_error *e2 = NULL;
  if (store_report (dirfd, id, upd, &e2) < 0)
    {
      if (r < 0)
        {
          kist_log_warn ("update container `%s`: %s", id, e2->msg);
          kist_error_free (e2);
        }
      else
        {
          *err = e2;
          kist_error_wrap (err,
                           "update container `%s`: the limits were changed, but the stored "
                           "report.json was not updated",
                           id);
        }
      goto out;
    }
  if (r < 0)
    goto out;
  ret = 0;
out:
  kist_state_clear (&st);
  return ret;
}

/* ---------------------------------------------------------------- events */

/* Without a pidfd the init is checked this often. */
#define FALLBACK_CHECK_MS 100
/* At most this many oom events for one observed rise (a flood guard). */
#define MAX_OOM_EVENTS 1000

struct events
{
  const struct kist_state *st;
  kist_event_fn fn;
  void *arg;
};

static int64_t
now_ns (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (int64_t) ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int
emit_stats (const struct events *ev, struct kist_error **err)
{
  _cleanup_free_ char *data = kist_cgroup_stats_json (ev->st->cgroup_path, err);
  if (data == NULL)
    return kist_error_wrap (err, "events `%s`: read the statistics of cgroup %s", ev->st->id,
                            ev->st->cgroup_path);
  return ev->fn (ev->st->id, "stats", data, ev->arg, err);
}

/* An oom event per oom_kill increment since *last. */
static int
check_oom (const struct events *ev, int64_t *last, struct kist_error **err)
{
  int64_t now = kist_cgroup_oom_kills (ev->st->cgroup_path);
  if (now < 0)
    return 0;
  if (*last >= 0 && now > *last)
    {
      int64_t n = now - *last;
      for (int64_t i = 0; i < n && i < MAX_OOM_EVENTS; i++)
        if (ev->fn (ev->st->id, "oom", NULL, ev->arg, err) < 0)
          return -1;
    }
  *last = now;
  return 0;
}

static bool
container_stopped (const struct kist_state *st)
{
  return kist_container_status (st) == KIST_STATUS_STOPPED;
}

/* The stream: until the init exits. */
static int
event_loop (const struct events *ev, int64_t interval, struct kist_error **err)
{
  const struct kist_state *st = ev->st;
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
          if (check_oom (ev, &last_oom, err) < 0)
            return -1;
        }
      bool gone = (pid_idx >= 0 && (fds[pid_idx].revents & (POLLIN | POLLHUP)))
                  || (pidfd < 0 && container_stopped (st));
      if (gone)
        /* An oom kill of the init is reported before the stream ends. */
        return check_oom (ev, &last_oom, err);
      if (now_ns () < next)
        continue;
      next += interval;
      if (next < now_ns ())
        next = now_ns () + interval; /* fell behind (suspend, slow reader): no burst */
      if (check_oom (ev, &last_oom, err) < 0)
        return -1;
      if (emit_stats (ev, err) < 0)
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
kist_container_events (int rootfd, const char *id, bool stats_once, int64_t interval_ns,
                       kist_event_fn fn, void *arg, struct kist_error **err)
{
  struct kist_state st = { 0 };
  int ret = -1;
  if (kist_id_validate (id, err) < 0)
    return -1;
  {
    /* Hold the lock only while reading the state. */
    _cleanup_close_ int dirfd = -1;
    if (kist_state_open (rootfd, id, &dirfd, err) < 0)
      return -1;
    if (kist_state_read (dirfd, &st, err) < 0)
      goto out;
  }
  if (kist_status_allows (kist_container_status (&st), KIST_OP_EVENTS, id, err) < 0)
    goto out;
  if (st.cgroup_path == NULL)
    {
      kist_error_make (err, EOPNOTSUPP,
                       "events: container `%s` has no cgroup (the state records no cgroup scope, "
                       "e.g. created rootless without a delegated cgroup v2 subtree), so there "
                       "are no statistics or oom events",
                       id);
      goto out;
    }
  struct events ev = { .st = &st, .fn = fn, .arg = arg };
  if (stats_once ? emit_stats (&ev, err) < 0 : event_loop (&ev, interval_ns, err) < 0)
    goto out;
  ret = 0;
out:
  kist_state_clear (&st);
  return ret;
}

/* ---------------------------------------------------------------- usage */

void
kist_container_usage (int rootfd, const char *id, struct kist_usage *u)
{
  *u = (struct kist_usage){ -1, -1, -1 };
  _cleanup_close_ int dirfd = -1;
  struct kist_state st = { 0 };
  _cleanup_error_ struct kist_error *e = NULL;
  enum kist_status status;
  if (kist_container_open (rootfd, id, &dirfd, &st, &status, &e) < 0)
    return;
  kist_scope_usage (st.cgroup_path, u);
  kist_state_clear (&st);
}

void
kist_scope_usage (const char *cgroup_path, struct kist_usage *u)
{
  *u = (struct kist_usage){ -1, -1, -1 };
  if (cgroup_path == NULL)
    return;
  u->memory_peak = kist_cgroup_value (cgroup_path, "memory.peak", NULL);
  u->pids_peak = kist_cgroup_value (cgroup_path, "pids.peak", NULL);
  u->oom_kills = kist_cgroup_oom_kills (cgroup_path);
}
