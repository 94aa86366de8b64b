/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: process.rlimits (layers "rlimit.<TYPE>"): prlimit, read back with
 * getrlimit. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "caps.h"
#include "layer.h"
#include "util.h"

static const struct
{
  const char *name;
  int resource;
} rlimit_names[] = {
  { "RLIMIT_CPU", RLIMIT_CPU },           { "RLIMIT_FSIZE", RLIMIT_FSIZE },
  { "RLIMIT_DATA", RLIMIT_DATA },         { "RLIMIT_STACK", RLIMIT_STACK },
  { "RLIMIT_CORE", RLIMIT_CORE },         { "RLIMIT_RSS", RLIMIT_RSS },
  { "RLIMIT_NPROC", RLIMIT_NPROC },       { "RLIMIT_NOFILE", RLIMIT_NOFILE },
  { "RLIMIT_MEMLOCK", RLIMIT_MEMLOCK },   { "RLIMIT_AS", RLIMIT_AS },
  { "RLIMIT_LOCKS", RLIMIT_LOCKS },       { "RLIMIT_SIGPENDING", RLIMIT_SIGPENDING },
  { "RLIMIT_MSGQUEUE", RLIMIT_MSGQUEUE }, { "RLIMIT_NICE", RLIMIT_NICE },
  { "RLIMIT_RTPRIO", RLIMIT_RTPRIO },     { "RLIMIT_RTTIME", RLIMIT_RTTIME },
};

int
kist_rlimit_from_name (const char *name)
{
  if (name == NULL)
    return -1;
  for (size_t i = 0; i < KIST_ARRAY_SIZE (rlimit_names); i++)
    if (strcmp (rlimit_names[i].name, name) == 0)
      return rlimit_names[i].resource;
  return -1;
}

const char *
kist_rlimit_name (int resource)
{
  for (size_t i = 0; i < KIST_ARRAY_SIZE (rlimit_names); i++)
    if (rlimit_names[i].resource == resource)
      return rlimit_names[i].name;
  return NULL;
}

static void
format_limit (char *buf, size_t n, uint64_t v)
{
  if (v == (uint64_t) RLIM_INFINITY)
    snprintf (buf, n, "unlimited");
  else
    snprintf (buf, n, "%" PRIu64, v);
}

char *
kist_rlimit_format (uint64_t soft, uint64_t hard)
{
  char s[32], h[32];
  format_limit (s, sizeof s, soft);
  format_limit (h, sizeof h, hard);
  return xasprintf ("%s:%s", s, h);
}

/* One entry of process.rlimits. */
static int
apply_one (struct kist_report *r, const struct kist_rlimit *rl, size_t idx, size_t times,
           struct kist_error **err)
{
  _cleanup_free_ char *layer = xasprintf ("rlimit.%s", rl->type);
  _cleanup_free_ char *requested = kist_rlimit_format (rl->soft, rl->hard);

  int res = kist_rlimit_from_name (rl->type);
  if (res < 0)
    return kist_report_failed (r, layer, requested, EINVAL, err,
                               "process.rlimits[%zu]: unknown rlimit type `%s` (known: "
                               "RLIMIT_CPU ... RLIMIT_RTTIME, see getrlimit(2))",
                               idx, rl->type);

  if (rl->soft > rl->hard)
    return kist_report_failed (r, layer, requested, EINVAL, err,
                               "process.rlimits[%zu]: soft limit %s is above the hard limit", idx,
                               requested);

  struct rlimit cur = { 0, 0 };
  getrlimit (res, &cur);
  struct rlimit want = { .rlim_cur = (rlim_t) rl->soft, .rlim_max = (rlim_t) rl->hard };
  if (prlimit (0, res, &want, NULL) < 0)
    {
      int e = errno;
      _cleanup_free_ char *now = kist_rlimit_format (cur.rlim_cur, cur.rlim_max);
      if (e == EPERM)
        {
          char hard[32];
          format_limit (hard, sizeof hard, cur.rlim_max);
          return kist_report_failed (
              r, layer, requested, e, err,
              "prlimit %s %s: raising the hard limit above the current hard limit %s needs "
              "CAP_SYS_RESOURCE in the initial user namespace, which kist does not have here; "
              "lower process.rlimits[%zu].hard to at most %s",
              rl->type, requested, hard, idx, hard);
        }
      if (e == EINVAL && res == RLIMIT_NOFILE)
        return kist_report_failed (r, layer, requested, e, err,
                                   "prlimit %s %s (current %s): the hard limit is above "
                                   "fs.nr_open",
                                   rl->type, requested, now);
      return kist_report_failed (r, layer, requested, e, err, "prlimit %s %s (current %s): %s",
                                 rl->type, requested, now, strerror (e));
    }

  struct rlimit got;
  if (getrlimit (res, &got) < 0)
    {
      int e = errno;
      return kist_report_failed (r, layer, requested, e, err, "getrlimit %s: %s", rl->type,
                                 strerror (e));
    }
  _cleanup_free_ char *readback = kist_rlimit_format (got.rlim_cur, got.rlim_max);
  if ((uint64_t) got.rlim_cur != rl->soft || (uint64_t) got.rlim_max != rl->hard)
    return kist_report_failed (r, layer, requested, EPROTO, err,
                               "prlimit succeeded but getrlimit reads back %s", readback);

  if (times > 1)
    kist_report_applied (r, layer, requested,
                         "read back %s (process.rlimits lists %s %zu times; the last entry, "
                         "[%zu], wins, like runc)",
                         readback, rl->type, times, idx);
  else
    kist_report_applied (r, layer, requested, "read back %s", readback);
  return 0;
}

int
kist_rlimits_apply (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err)
{
  const struct kist_process *p = ctx->spec->process;
  if (p == NULL || p->n_rlimits == 0)
    {
      kist_report_skip (r, "rlimit", "none requested");
      return 0;
    }
  for (size_t i = 0; i < p->n_rlimits; i++)
    {
      /* One report entry per type: a type listed twice is applied once, with
       * its last entry (runc applies them in order, so the last one wins). */
      bool later = false;
      size_t times = 1;
      for (size_t j = 0; j < p->n_rlimits; j++)
        if (j != i && strcmp (p->rlimits[j].type, p->rlimits[i].type) == 0)
          {
            times++;
            later = later || j > i;
          }
      if (later)
        continue;
      int ret = apply_one (r, &p->rlimits[i], i, times, err);
      if (ret < 0)
        return ret;
    }
  return 0;
}
