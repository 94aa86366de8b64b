/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: the plan of a linux.resources object (issue 4): one write per
 * cgroup v2 file, with the config path it came from and the value
 * conversions (OCI's v1 values to v2 files), and the comparisons the
 * read-back uses.  Pure: no file system I/O, so that the lifecycle can
 * refuse a bad linux.resources before any state exists
 * (kist_cgroup_plan_check); cgroup.c writes the plan, cgroup_ops.c's update
 * writes it on a live scope. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroup.h"
#include "cgroup_int.h"
#include "json.h"
#include "util.h"

/* ---------------------------------------------------------------- values */

uint64_t
kist_cgroup_shares_to_weight (uint64_t shares)
{
  if (shares == 0)
    return 0;
  if (shares < 2)
    shares = 2;
  if (shares > 262144)
    shares = 262144;
  return 1 + ((shares - 2) * 9999) / 262142;
}

uint64_t
kist_cgroup_blkio_to_io_weight (uint64_t weight)
{
  if (weight == 0)
    return 0;
  if (weight < 10)
    weight = 10;
  if (weight > 1000)
    weight = 1000;
  return 1 + (weight - 10) * 9999 / 990;
}

int
kist_cgroup_swap_max (int64_t limit, int64_t swap, int64_t *out, bool *set,
                      struct kist_error **err)
{
  *set = false;
  *out = 0;
  if (swap == 0)
    {
      if (limit == -1)
        {
          /* No memory limit and no swap value: no swap limit either. */
          *set = true;
          *out = -1;
        }
      return 0;
    }
  if (swap == -1)
    {
      *set = true;
      *out = -1;
      return 0;
    }
  if (swap < -1)
    return kist_error_make (err, EINVAL, "linux.resources.memory.swap: %" PRId64 " is invalid",
                            swap);
  if (limit == 0)
    return kist_error_make (err, EINVAL,
                            "linux.resources.memory.swap: a swap limit needs memory.limit too "
                            "(OCI swap is memory+swap)");
  if (limit == -1)
    {
      /* Unlimited memory: memory+swap cannot be split; follow runc and
       * refuse. */
      return kist_error_make (err, EINVAL,
                              "linux.resources.memory.swap: %" PRId64 " with an unlimited "
                              "memory.limit cannot be converted (OCI swap is memory+swap)",
                              swap);
    }
  if (limit < -1)
    return kist_error_make (err, EINVAL, "linux.resources.memory.limit: %" PRId64 " is invalid",
                            limit);
  if (swap < limit)
    return kist_error_make (err, EINVAL,
                            "linux.resources.memory.swap (%" PRId64 ") must be >= "
                            "memory.limit (%" PRId64 "): OCI swap is memory+swap",
                            swap, limit);
  *set = true;
  *out = swap - limit;
  return 0;
}

/* Copy with leading/trailing whitespace removed and inner runs of
 * whitespace collapsed to one space. */
char *
cg_normalise (const char *s)
{
  char *out = xmalloc (strlen (s) + 1), *w = out;
  bool space = false;
  for (const char *p = s; *p; p++)
    {
      if (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
        space = w != out;
      else
        {
          if (space)
            *w++ = ' ';
          space = false;
          *w++ = *p;
        }
    }
  *w = '\0';
  return out;
}

/* A number as memparse reads it: digits with an optional K/M/G/T/P/E suffix. */
static bool
parse_size (const char *s, uint64_t *v)
{
  if (s == NULL || *s < '0' || *s > '9')
    return false;
  errno = 0;
  char *end = NULL;
  unsigned long long n = strtoull (s, &end, 10);
  if (errno)
    return false;
  int shift = 0;
  switch (*end)
    {
    case '\0':
      break;
    case 'k': case 'K': shift = 10; break;
    case 'm': case 'M': shift = 20; break;
    case 'g': case 'G': shift = 30; break;
    case 't': case 'T': shift = 40; break;
    case 'p': case 'P': shift = 50; break;
    case 'e': case 'E': shift = 60; break;
    default:
      return false;
    }
  if (shift && end[1] != '\0')
    return false;
  if (shift && n > (UINT64_MAX >> shift))
    return false;
  *v = (uint64_t) n << shift;
  return true;
}

bool
kist_cgroup_value_matches (const char *want, const char *got, uint64_t unit, bool *rounded)
{
  _cleanup_free_ char *w = cg_normalise (want ? want : "");
  _cleanup_free_ char *g = cg_normalise (got ? got : "");
  uint64_t wn, gn;
  if (rounded)
    *rounded = false;
  if (strcmp (w, g) == 0)
    return true;
  if (!parse_size (w, &wn) || !parse_size (g, &gn))
    return false;
  if (wn == gn)
    return true;
  if (unit > 0 && gn == wn - wn % unit)
    {
      if (rounded)
        *rounded = true;
      return true;
    }
  return false;
}

#define CPU_BITS 8192

static bool
cpulist_parse (const char *s, uint64_t *bits)
{
  memset (bits, 0, CPU_BITS / 8);
  _cleanup_free_ char *n = cg_normalise (s ? s : "");
  const char *p = n;
  if (*p == '\0')
    return true;
  for (;;)
    {
      char *end;
      if (*p < '0' || *p > '9')
        return false;
      unsigned long a = strtoul (p, &end, 10), b = a;
      p = end;
      if (*p == '-')
        {
          p++;
          if (*p < '0' || *p > '9')
            return false;
          b = strtoul (p, &end, 10);
          p = end;
        }
      if (b < a || b >= CPU_BITS)
        return false;
      for (unsigned long i = a; i <= b; i++)
        bits[i / 64] |= 1ULL << (i % 64);
      if (*p == '\0')
        return true;
      if (*p != ',')
        return false;
      p++;
    }
}

bool
kist_cgroup_cpulist_equal (const char *a, const char *b)
{
  uint64_t x[CPU_BITS / 64], y[CPU_BITS / 64];
  if (!cpulist_parse (a, x) || !cpulist_parse (b, y))
    return false;
  return memcmp (x, y, sizeof x) == 0;
}

/* ---------------------------------------------------------------- plan */

void
kist_cgroup_plan_free (struct kist_cgroup_plan *p)
{
  if (p == NULL)
    return;
  for (size_t i = 0; i < p->n; i++)
    {
      free (p->w[i].file);
      free (p->w[i].controller);
      kist_strv_free (p->w[i].lines);
      free (p->w[i].requested);
      free (p->w[i].config);
      free (p->w[i].reason);
    }
  free (p->w);
  free (p->dev);
  free (p);
}

void
cg_plan_freep (struct kist_cgroup_plan **p)
{
  kist_cgroup_plan_free (*p);
  *p = NULL;
}

static struct kist_cgroup_write *
plan_find (struct kist_cgroup_plan *p, const char *file)
{
  for (size_t i = 0; i < p->n; i++)
    if (strcmp (p->w[i].file, file) == 0)
      return &p->w[i];
  return NULL;
}

/* The write for file (a new one, or the existing one to append lines to). */
static struct kist_cgroup_write *
plan_get (struct kist_cgroup_plan *p, const char *file, const char *config, uint64_t unit)
{
  struct kist_cgroup_write *w = plan_find (p, file);
  if (w)
    return w;
  p->w = xrealloc (p->w, (p->n + 1) * sizeof *p->w);
  w = &p->w[p->n++];
  memset (w, 0, sizeof *w);
  w->file = xstrdup (file);
  const char *dot = strchr (file, '.');
  _cleanup_free_ char *ctl = xstrdup (file);
  if (dot)
    ctl[dot - file] = '\0';
  if (strcmp (ctl, "cgroup") != 0)
    w->controller = steal_pointer (&ctl);
  w->config = xstrdup (config);
  w->unit = unit;
  w->lines = xcalloc (1, sizeof (char *));
  return w;
}

static void
write_add_line (struct kist_cgroup_write *w, const char *line)
{
  size_t n = kist_strv_len (w->lines);
  w->lines = xrealloc (w->lines, (n + 2) * sizeof (char *));
  w->lines[n] = xstrdup (line);
  w->lines[n + 1] = NULL;
  char *req = w->requested ? xasprintf ("%s; %s", w->requested, line) : xstrdup (line);
  free (w->requested);
  w->requested = req;
}

static void
plan_add (struct kist_cgroup_plan *p, const char *file, const char *config, uint64_t unit,
          const char *fmt, ...) __attribute__ ((format (printf, 5, 6)));
static void
plan_add (struct kist_cgroup_plan *p, const char *file, const char *config, uint64_t unit,
          const char *fmt, ...)
{
  va_list ap;
  _cleanup_free_ char *line = NULL;
  va_start (ap, fmt);
  if (vasprintf (&line, fmt, ap) < 0)
    abort ();
  va_end (ap);
  write_add_line (plan_get (p, file, config, unit), line);
}

/* A request that cgroup v2 cannot express: recorded as not applied. */
static void
plan_unsupported (struct kist_cgroup_plan *p, const char *name, const char *config,
                  const char *requested, const char *reason)
{
  struct kist_cgroup_write *w = plan_get (p, name, config, 0);
  free (w->controller);
  w->controller = NULL;
  free (w->requested);
  w->requested = xstrdup (requested);
  w->unsupported = ENOTSUP;
  free (w->reason);
  w->reason = xasprintf ("%s: %s", config, reason);
}

/* Typed field lookups; *present is false when absent or null. */
static int
get_int (yajl_val o, const char *key, const char *path, bool *present, int64_t *v,
         struct kist_error **err)
{
  yajl_val x = kist_json_obj_get (o, key);
  *present = false;
  *v = 0;
  if (x == NULL || YAJL_IS_NULL (x))
    return 0;
  if (!YAJL_IS_INTEGER (x))
    {
      /* uint64 values above INT64_MAX arrive as doubles. */
      if (YAJL_IS_DOUBLE (x) && x->u.number.d >= 9.2e18)
        {
          *present = true;
          *v = INT64_MAX;
          return 0;
        }
      return kist_error_make (err, EINVAL, "%s.%s: expected an integer", path, key);
    }
  *present = true;
  *v = YAJL_GET_INTEGER (x);
  return 0;
}

static int
get_uint (yajl_val o, const char *key, const char *path, bool *present, uint64_t *v,
          struct kist_error **err)
{
  int64_t s;
  if (get_int (o, key, path, present, &s, err) < 0)
    return -1;
  if (*present && s < 0)
    return kist_error_make (err, EINVAL, "%s.%s: expected a non-negative integer", path, key);
  *v = (uint64_t) s;
  return 0;
}

static int
get_obj (yajl_val o, const char *key, const char *path, yajl_val *v, struct kist_error **err)
{
  yajl_val x = kist_json_obj_get (o, key);
  *v = NULL;
  if (x == NULL || YAJL_IS_NULL (x))
    return 0;
  if (!YAJL_IS_OBJECT (x))
    return kist_error_make (err, EINVAL, "%s.%s: expected an object", path, key);
  *v = x;
  return 0;
}

static int
get_arr (yajl_val o, const char *key, const char *path, yajl_val *v, struct kist_error **err)
{
  yajl_val x = kist_json_obj_get (o, key);
  *v = NULL;
  if (x == NULL || YAJL_IS_NULL (x))
    return 0;
  if (!YAJL_IS_ARRAY (x))
    return kist_error_make (err, EINVAL, "%s.%s: expected an array", path, key);
  *v = x;
  return 0;
}

static int
get_str (yajl_val o, const char *key, const char *path, const char **v, struct kist_error **err)
{
  yajl_val x = kist_json_obj_get (o, key);
  *v = NULL;
  if (x == NULL || YAJL_IS_NULL (x))
    return 0;
  if (!YAJL_IS_STRING (x))
    return kist_error_make (err, EINVAL, "%s.%s: expected a string", path, key);
  *v = x->u.string;
  return 0;
}

static uint64_t
page_size (void)
{
  long n = sysconf (_SC_PAGESIZE);
  return n > 0 ? (uint64_t) n : 4096;
}

static int
plan_memory (struct kist_cgroup_plan *p, yajl_val m, struct kist_error **err)
{
  const char *P = "linux.resources.memory";
  bool has_limit, has_res, has_swap, has;
  int64_t limit, res, swap, v;
  uint64_t u;

  if (get_int (m, "limit", P, &has_limit, &limit, err) < 0
      || get_int (m, "reservation", P, &has_res, &res, err) < 0
      || get_int (m, "swap", P, &has_swap, &swap, err) < 0)
    return -1;
  if (has_limit && limit != 0)
    {
      if (limit < -1)
        return kist_error_make (err, EINVAL, "%s.limit: %" PRId64 " is invalid (-1: unlimited)",
                                P, limit);
      if (limit == -1)
        plan_add (p, "memory.max", "linux.resources.memory.limit", 0, "max");
      else
        plan_add (p, "memory.max", "linux.resources.memory.limit", page_size (), "%" PRId64,
                  limit);
    }
  if (has_res && res != 0)
    {
      if (res < -1)
        return kist_error_make (err, EINVAL, "%s.reservation: %" PRId64 " is invalid", P, res);
      if (res == -1)
        plan_add (p, "memory.low", "linux.resources.memory.reservation", 0, "max");
      else
        plan_add (p, "memory.low", "linux.resources.memory.reservation", page_size (),
                  "%" PRId64, res);
    }
  if (has_swap)
    {
      int64_t sw;
      bool set;
      if (kist_cgroup_swap_max (has_limit ? limit : 0, swap, &sw, &set, err) < 0)
        return -1;
      if (set && sw == -1)
        plan_add (p, "memory.swap.max", "linux.resources.memory.swap", 0, "max");
      else if (set)
        plan_add (p, "memory.swap.max", "linux.resources.memory.swap", page_size (),
                  "%" PRId64, sw);
    }
  if (get_int (m, "kernel", P, &has, &v, err) < 0)
    return -1;
  if (has && v != 0)
    plan_unsupported (p, "memory.kernel", "linux.resources.memory.kernel", "",
                      "kernel memory limits do not exist on cgroup v2 (it is part of memory.max)");
  if (get_int (m, "kernelTCP", P, &has, &v, err) < 0)
    return -1;
  if (has && v != 0)
    plan_unsupported (p, "memory.kernelTCP", "linux.resources.memory.kernelTCP", "",
                      "kernel TCP memory limits do not exist on cgroup v2");
  if (get_uint (m, "swappiness", P, &has, &u, err) < 0)
    return -1;
  if (has)
    plan_unsupported (p, "memory.swappiness", "linux.resources.memory.swappiness", "",
                      "cgroup v2 has no per-cgroup swappiness");
  yajl_val oom = kist_json_obj_get (m, "disableOOMKiller");
  if (oom != NULL && !YAJL_IS_NULL (oom) && !YAJL_IS_TRUE (oom) && !YAJL_IS_FALSE (oom))
    return kist_error_make (err, EINVAL, "%s.disableOOMKiller: expected a boolean", P);
  if (YAJL_IS_TRUE (oom))
    plan_unsupported (p, "memory.disableOOMKiller", "linux.resources.memory.disableOOMKiller", "",
                      "the OOM killer cannot be disabled on cgroup v2 (memory.oom_control is "
                      "v1 only)");
  /* useHierarchy and checkBeforeUpdate: nothing to do on cgroup v2. */
  return 0;
}

static int
plan_cpu (struct kist_cgroup_plan *p, yajl_val c, struct kist_error **err)
{
  const char *P = "linux.resources.cpu";
  bool has_shares, has_quota, has_period, has;
  uint64_t shares, period, burst;
  int64_t quota, v;
  const char *s;

  if (get_uint (c, "shares", P, &has_shares, &shares, err) < 0
      || get_int (c, "quota", P, &has_quota, &quota, err) < 0
      || get_uint (c, "period", P, &has_period, &period, err) < 0)
    return -1;
  if (has_shares && shares != 0)
    plan_add (p, "cpu.weight", "linux.resources.cpu.shares", 0, "%" PRIu64,
              kist_cgroup_shares_to_weight (shares));
  if ((has_quota && quota != 0) || (has_period && period != 0))
    {
      char q[32];
      if (has_quota && quota > 0)
        snprintf (q, sizeof q, "%" PRId64, quota);
      else
        snprintf (q, sizeof q, "max");
      if (has_period && period != 0)
        plan_add (p, "cpu.max", "linux.resources.cpu.quota", 0, "%s %" PRIu64, q, period);
      else
        plan_add (p, "cpu.max", "linux.resources.cpu.quota", 0, "%s", q);
    }
  if (get_uint (c, "burst", P, &has, &burst, err) < 0)
    return -1;
  if (has && burst > 0) /* 0: unset (Docker sends zero-valued fields) */
    plan_add (p, "cpu.max.burst", "linux.resources.cpu.burst", 0, "%" PRIu64, burst);
  if (get_int (c, "realtimeRuntime", P, &has, &v, err) < 0)
    return -1;
  if (has && v != 0)
    plan_unsupported (p, "cpu.rt_runtime", "linux.resources.cpu.realtimeRuntime", "",
                      "realtime CPU bandwidth is cgroup v1 only");
  if (get_int (c, "realtimePeriod", P, &has, &v, err) < 0)
    return -1;
  if (has && v != 0)
    plan_unsupported (p, "cpu.rt_period", "linux.resources.cpu.realtimePeriod", "",
                      "realtime CPU bandwidth is cgroup v1 only");
  if (get_str (c, "cpus", P, &s, err) < 0)
    return -1;
  if (s && s[0])
    plan_add (p, "cpuset.cpus", "linux.resources.cpu.cpus", 0, "%s", s);
  if (get_str (c, "mems", P, &s, err) < 0)
    return -1;
  if (s && s[0])
    plan_add (p, "cpuset.mems", "linux.resources.cpu.mems", 0, "%s", s);
  if (get_int (c, "idle", P, &has, &v, err) < 0)
    return -1;
  if (has && v != 0) /* 0: unset, the kernel's default */
    plan_add (p, "cpu.idle", "linux.resources.cpu.idle", 0, "%" PRId64, v);
  return 0;
}

static int
plan_blockio (struct kist_cgroup_plan *p, yajl_val b, struct kist_error **err)
{
  const char *P = "linux.resources.blockIO";
  bool has;
  uint64_t v;
  yajl_val arr;

  if (get_uint (b, "weight", P, &has, &v, err) < 0)
    return -1;
  if (has && v != 0)
    plan_add (p, "io.weight", "linux.resources.blockIO.weight", 0, "default %" PRIu64,
              kist_cgroup_blkio_to_io_weight (v));
  if (get_uint (b, "leafWeight", P, &has, &v, err) < 0)
    return -1;
  if (has && v != 0)
    plan_unsupported (p, "io.leafWeight", "linux.resources.blockIO.leafWeight", "",
                      "leaf weights are cgroup v1 only");

  if (get_arr (b, "weightDevice", P, &arr, err) < 0)
    return -1;
  for (size_t i = 0; arr && i < arr->u.array.len; i++)
    {
      yajl_val d = arr->u.array.values[i];
      _cleanup_free_ char *path = xasprintf ("%s.weightDevice[%zu]", P, i);
      bool hmaj, hmin, hw;
      int64_t maj, min;
      uint64_t w;
      if (!YAJL_IS_OBJECT (d))
        return kist_error_make (err, EINVAL, "%s: expected an object", path);
      if (get_int (d, "major", path, &hmaj, &maj, err) < 0
          || get_int (d, "minor", path, &hmin, &min, err) < 0
          || get_uint (d, "weight", path, &hw, &w, err) < 0)
        return -1;
      if (!hmaj || !hmin || maj < 0 || min < 0)
        return kist_error_make (err, EINVAL, "%s: major and minor are required", path);
      if (hw && w != 0)
        plan_add (p, "io.weight", "linux.resources.blockIO.weightDevice", 0,
                  "%" PRId64 ":%" PRId64 " %" PRIu64, maj, min, kist_cgroup_blkio_to_io_weight (w));
      if (get_uint (d, "leafWeight", path, &hw, &w, err) < 0)
        return -1;
      if (hw && w != 0)
        plan_unsupported (p, "io.leafWeight", "linux.resources.blockIO.weightDevice", "",
                          "leaf weights are cgroup v1 only");
    }

  static const struct
  {
    const char *key, *io;
  } thr[] = {
    { "throttleReadBpsDevice", "rbps" },
    { "throttleWriteBpsDevice", "wbps" },
    { "throttleReadIOPSDevice", "riops" },
    { "throttleWriteIOPSDevice", "wiops" },
  };
  for (size_t t = 0; t < KIST_ARRAY_SIZE (thr); t++)
    {
      if (get_arr (b, thr[t].key, P, &arr, err) < 0)
        return -1;
      for (size_t i = 0; arr && i < arr->u.array.len; i++)
        {
          yajl_val d = arr->u.array.values[i];
          _cleanup_free_ char *path = xasprintf ("%s.%s[%zu]", P, thr[t].key, i);
          _cleanup_free_ char *config = xasprintf ("%s.%s", P, thr[t].key);
          bool hmaj, hmin, hr;
          int64_t maj, min;
          uint64_t rate;
          if (!YAJL_IS_OBJECT (d))
            return kist_error_make (err, EINVAL, "%s: expected an object", path);
          if (get_int (d, "major", path, &hmaj, &maj, err) < 0
              || get_int (d, "minor", path, &hmin, &min, err) < 0
              || get_uint (d, "rate", path, &hr, &rate, err) < 0)
            return -1;
          if (!hmaj || !hmin || !hr || maj < 0 || min < 0)
            return kist_error_make (err, EINVAL, "%s: major, minor and rate are required", path);
          if (rate == 0)
            plan_add (p, "io.max", config, 0, "%" PRId64 ":%" PRId64 " %s=max", maj, min,
                      thr[t].io);
          else
            plan_add (p, "io.max", config, 0, "%" PRId64 ":%" PRId64 " %s=%" PRIu64, maj, min,
                      thr[t].io, rate);
        }
    }
  return 0;
}

/* "2MB" -> 2097152; "1GB"; "64KB". */
static bool
hugepage_bytes (const char *s, uint64_t *out)
{
  char *end;
  if (s == NULL || *s < '0' || *s > '9')
    return false;
  unsigned long long n = strtoull (s, &end, 10);
  int shift;
  if (strcmp (end, "KB") == 0)
    shift = 10;
  else if (strcmp (end, "MB") == 0)
    shift = 20;
  else if (strcmp (end, "GB") == 0)
    shift = 30;
  else
    return false;
  if (n == 0 || n > (1ULL << 20))
    return false;
  *out = (uint64_t) n << shift;
  return true;
}

static int
plan_hugetlb (struct kist_cgroup_plan *p, yajl_val arr, struct kist_error **err)
{
  for (size_t i = 0; i < arr->u.array.len; i++)
    {
      yajl_val h = arr->u.array.values[i];
      _cleanup_free_ char *path = xasprintf ("linux.resources.hugepageLimits[%zu]", i);
      const char *size;
      bool has;
      uint64_t limit, unit;
      if (!YAJL_IS_OBJECT (h))
        return kist_error_make (err, EINVAL, "%s: expected an object", path);
      if (get_str (h, "pageSize", path, &size, err) < 0
          || get_uint (h, "limit", path, &has, &limit, err) < 0)
        return -1;
      if (size == NULL || !has)
        return kist_error_make (err, EINVAL, "%s: pageSize and limit are required", path);
      if (!hugepage_bytes (size, &unit))
        return kist_error_make (err, EINVAL,
                                "%s.pageSize: `%s` is not a huge page size like 2MB or 1GB", path,
                                size);
      _cleanup_free_ char *file = xasprintf ("hugetlb.%s.max", size);
      plan_add (p, file, path, unit, "%" PRIu64, limit);
    }
  return 0;
}

static int
plan_rdma (struct kist_cgroup_plan *p, yajl_val o, struct kist_error **err)
{
  for (size_t i = 0; i < o->u.object.len; i++)
    {
      const char *dev = o->u.object.keys[i];
      yajl_val v = o->u.object.values[i];
      _cleanup_free_ char *path = xasprintf ("linux.resources.rdma.%s", dev);
      bool hh, ho;
      uint64_t h, ob;
      if (!YAJL_IS_OBJECT (v))
        return kist_error_make (err, EINVAL, "%s: expected an object", path);
      if (dev[0] == '\0' || strpbrk (dev, " \t\n=") != NULL)
        return kist_error_make (err, EINVAL, "%s: invalid device name", path);
      if (get_uint (v, "hcaHandles", path, &hh, &h, err) < 0
          || get_uint (v, "hcaObjects", path, &ho, &ob, err) < 0)
        return -1;
      if (!hh && !ho)
        continue;
      char hs[32] = "max", os[32] = "max";
      if (hh)
        snprintf (hs, sizeof hs, "%" PRIu64, h);
      if (ho)
        snprintf (os, sizeof os, "%" PRIu64, ob);
      plan_add (p, "rdma.max", "linux.resources.rdma", 0, "%s hca_handle=%s hca_object=%s", dev,
                hs, os);
    }
  return 0;
}

/* linux.resources.unified: raw files; the key is a file name in the scope. */
static int
plan_unified (struct kist_cgroup_plan *p, yajl_val o, struct kist_error **err)
{
  static const char *const refused[]
      = { "cgroup.procs", "cgroup.threads", "cgroup.kill", "cgroup.freeze", "cgroup.subtree_control",
          "cgroup.type", "cgroup.events", "cgroup.controllers" };
  for (size_t i = 0; i < o->u.object.len; i++)
    {
      const char *key = o->u.object.keys[i];
      yajl_val v = o->u.object.values[i];
      _cleanup_free_ char *path = xasprintf ("linux.resources.unified.%s", key);
      if (!YAJL_IS_STRING (v))
        return kist_error_make (err, EINVAL, "%s: expected a string", path);
      if (key[0] == '\0' || key[0] == '.' || strchr (key, '/') || strstr (key, "..")
          || strchr (key, '.') == NULL || strlen (key) > 255)
        return kist_error_make (err, EINVAL,
                                "linux.resources.unified: key `%s` is not a cgroup file name "
                                "(\"controller.file\", no '/' or \"..\")",
                                key);
      for (size_t k = 0; k < KIST_ARRAY_SIZE (refused); k++)
        if (strcmp (key, refused[k]) == 0)
          return kist_error_make (err, EPERM,
                                  "linux.resources.unified: `%s` is managed by kist and cannot "
                                  "be set",
                                  key);
      /* unified overrides the structured value for the same file. */
      struct kist_cgroup_write *w = plan_find (p, key);
      if (w)
        {
          kist_strv_free (w->lines);
          w->lines = xcalloc (1, sizeof (char *));
          free (w->requested);
          w->requested = NULL;
          free (w->config);
          w->config = xstrdup (path);
          w->unit = 0;
        }
      w = plan_get (p, key, path, 0);
      if (strncmp (key, "memory.", 7) == 0)
        w->unit = page_size ();
      write_add_line (w, v->u.string);
    }
  return 0;
}

int
kist_cgroup_plan_build (yajl_val res, struct kist_cgroup_plan **out, struct kist_error **err)
{
  __attribute__ ((cleanup (cg_plan_freep))) struct kist_cgroup_plan *p = xcalloc (1, sizeof *p);
  yajl_val o;
  *out = NULL;

  if (res == NULL || YAJL_IS_NULL (res))
    {
      *out = steal_pointer (&p);
      return 0;
    }
  if (!YAJL_IS_OBJECT (res))
    return kist_error_make (err, EINVAL, "linux.resources: expected an object");

  if (get_obj (res, "memory", "linux.resources", &o, err) < 0 || (o && plan_memory (p, o, err) < 0))
    return -1;
  if (get_obj (res, "cpu", "linux.resources", &o, err) < 0 || (o && plan_cpu (p, o, err) < 0))
    return -1;
  if (get_obj (res, "pids", "linux.resources", &o, err) < 0)
    return -1;
  if (o)
    {
      bool has;
      int64_t limit;
      if (get_int (o, "limit", "linux.resources.pids", &has, &limit, err) < 0)
        return -1;
      /* > 0: the limit; -1: explicitly unlimited; 0: unset (Docker, runc). */
      if (has && limit > 0)
        plan_add (p, "pids.max", "linux.resources.pids.limit", 0, "%" PRId64, limit);
      else if (has && limit < 0)
        plan_add (p, "pids.max", "linux.resources.pids.limit", 0, "max");
    }
  if (get_obj (res, "blockIO", "linux.resources", &o, err) < 0
      || (o && plan_blockio (p, o, err) < 0))
    return -1;
  if (get_arr (res, "hugepageLimits", "linux.resources", &o, err) < 0
      || (o && plan_hugetlb (p, o, err) < 0))
    return -1;
  if (get_obj (res, "rdma", "linux.resources", &o, err) < 0 || (o && plan_rdma (p, o, err) < 0))
    return -1;
  if (get_obj (res, "network", "linux.resources", &o, err) < 0)
    return -1;
  if (o && (kist_json_obj_get (o, "classID") || kist_json_obj_get (o, "priorities")))
    plan_unsupported (p, "network", "linux.resources.network", "",
                      "net_cls and net_prio are cgroup v1 only");
  if (get_obj (res, "unified", "linux.resources", &o, err) < 0
      || (o && plan_unified (p, o, err) < 0))
    return -1;

  yajl_val dev = kist_json_obj_get (res, "devices");
  if (dev != NULL && !YAJL_IS_NULL (dev))
    {
      if (kist_cgroup_dev_rules_parse (dev, &p->dev, &p->n_dev, err) < 0)
        return -1;
      p->has_devices = true;
    }
  *out = steal_pointer (&p);
  return 0;
}

int
kist_cgroup_plan_check (const struct kist_spec *spec, struct kist_error **err)
{
  yajl_val res = spec && spec->linux_ ? spec->linux_->resources : NULL;
  __attribute__ ((cleanup (cg_plan_freep))) struct kist_cgroup_plan *plan = NULL;
  if (kist_cgroup_plan_build (res, &plan, err) < 0)
    return kist_error_wrap (err, "config.json");
  return 0;
}
