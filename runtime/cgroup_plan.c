/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: the plan of a parsed linux.resources (struct kist_resources,
 * resources.h; issue 4): one write per cgroup v2 file, with the config path
 * it came from and the value conversions (OCI's v1 values to v2 files), and
 * the comparisons the read-back uses.  Pure: no file system I/O, so that the
 * lifecycle can refuse what needs several fields (memory.swap against
 * memory.limit) before any state exists (kist_cgroup_plan_check); cgroup.c
 * writes the plan, cgroup_ops.c's update writes it on a live scope. */
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
  va_start (ap, fmt);
  _cleanup_free_ char *line = xvasprintf (fmt, ap);
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

static uint64_t
page_size (void)
{
  long n = sysconf (_SC_PAGESIZE);
  return n > 0 ? (uint64_t) n : 4096;
}

static int
plan_memory (struct kist_cgroup_plan *p, const struct kist_res_memory *m, struct kist_error **err)
{
  if (m->limit == -1)
    plan_add (p, "memory.max", "linux.resources.memory.limit", 0, "max");
  else if (m->limit != 0)
    plan_add (p, "memory.max", "linux.resources.memory.limit", page_size (), "%" PRId64, m->limit);
  if (m->reservation == -1)
    plan_add (p, "memory.low", "linux.resources.memory.reservation", 0, "max");
  else if (m->reservation != 0)
    plan_add (p, "memory.low", "linux.resources.memory.reservation", page_size (), "%" PRId64,
              m->reservation);
  if (m->has_swap)
    {
      int64_t sw;
      bool set;
      if (kist_cgroup_swap_max (m->limit, m->swap, &sw, &set, err) < 0)
        return -1;
      if (set && sw == -1)
        plan_add (p, "memory.swap.max", "linux.resources.memory.swap", 0, "max");
      else if (set)
        plan_add (p, "memory.swap.max", "linux.resources.memory.swap", page_size (),
                  "%" PRId64, sw);
    }
  if (m->kernel != 0)
    plan_unsupported (p, "memory.kernel", "linux.resources.memory.kernel", "",
                      "kernel memory limits do not exist on cgroup v2 (it is part of memory.max)");
  if (m->kernel_tcp != 0)
    plan_unsupported (p, "memory.kernelTCP", "linux.resources.memory.kernelTCP", "",
                      "kernel TCP memory limits do not exist on cgroup v2");
  if (m->has_swappiness)
    plan_unsupported (p, "memory.swappiness", "linux.resources.memory.swappiness", "",
                      "cgroup v2 has no per-cgroup swappiness");
  if (m->disable_oom_killer)
    plan_unsupported (p, "memory.disableOOMKiller", "linux.resources.memory.disableOOMKiller", "",
                      "the OOM killer cannot be disabled on cgroup v2 (memory.oom_control is "
                      "v1 only)");
  return 0;
}

static void
plan_cpu (struct kist_cgroup_plan *p, const struct kist_res_cpu *c)
{
  if (c->shares != 0)
    plan_add (p, "cpu.weight", "linux.resources.cpu.shares", 0, "%" PRIu64,
              kist_cgroup_shares_to_weight (c->shares));
  if (c->quota != 0 || c->period != 0)
    {
      char q[32];
      if (c->quota > 0)
        snprintf (q, sizeof q, "%" PRId64, c->quota);
      else
        snprintf (q, sizeof q, "max");
      if (c->period != 0)
        plan_add (p, "cpu.max", "linux.resources.cpu.quota", 0, "%s %" PRIu64, q, c->period);
      else
        plan_add (p, "cpu.max", "linux.resources.cpu.quota", 0, "%s", q);
    }
  if (c->burst > 0) /* 0: unset (Docker sends zero-valued fields) */
    plan_add (p, "cpu.max.burst", "linux.resources.cpu.burst", 0, "%" PRIu64, c->burst);
  if (c->realtime_runtime != 0)
    plan_unsupported (p, "cpu.rt_runtime", "linux.resources.cpu.realtimeRuntime", "",
                      "realtime CPU bandwidth is cgroup v1 only");
  if (c->realtime_period != 0)
    plan_unsupported (p, "cpu.rt_period", "linux.resources.cpu.realtimePeriod", "",
                      "realtime CPU bandwidth is cgroup v1 only");
  if (c->cpus && c->cpus[0])
    plan_add (p, "cpuset.cpus", "linux.resources.cpu.cpus", 0, "%s", c->cpus);
  if (c->mems && c->mems[0])
    plan_add (p, "cpuset.mems", "linux.resources.cpu.mems", 0, "%s", c->mems);
  if (c->idle != 0) /* 0: unset, the kernel's default */
    plan_add (p, "cpu.idle", "linux.resources.cpu.idle", 0, "%" PRId64, c->idle);
}

static void
plan_blockio (struct kist_cgroup_plan *p, const struct kist_res_blockio *b)
{
  static const char *const io[KIST_RES_N_THROTTLE] = {
    [KIST_RES_THROTTLE_READ_BPS] = "rbps",
    [KIST_RES_THROTTLE_WRITE_BPS] = "wbps",
    [KIST_RES_THROTTLE_READ_IOPS] = "riops",
    [KIST_RES_THROTTLE_WRITE_IOPS] = "wiops",
  };
  static const char *const config[KIST_RES_N_THROTTLE] = {
    [KIST_RES_THROTTLE_READ_BPS] = "linux.resources.blockIO.throttleReadBpsDevice",
    [KIST_RES_THROTTLE_WRITE_BPS] = "linux.resources.blockIO.throttleWriteBpsDevice",
    [KIST_RES_THROTTLE_READ_IOPS] = "linux.resources.blockIO.throttleReadIOPSDevice",
    [KIST_RES_THROTTLE_WRITE_IOPS] = "linux.resources.blockIO.throttleWriteIOPSDevice",
  };
  if (b->weight != 0)
    plan_add (p, "io.weight", "linux.resources.blockIO.weight", 0, "default %" PRIu64,
              kist_cgroup_blkio_to_io_weight (b->weight));
  if (b->leaf_weight != 0)
    plan_unsupported (p, "io.leafWeight", "linux.resources.blockIO.leafWeight", "",
                      "leaf weights are cgroup v1 only");
  for (size_t i = 0; i < b->n_weight_device; i++)
    {
      const struct kist_res_weight_device *d = &b->weight_device[i];
      if (d->weight != 0)
        plan_add (p, "io.weight", "linux.resources.blockIO.weightDevice", 0,
                  "%" PRId64 ":%" PRId64 " %" PRIu64, d->major, d->minor,
                  kist_cgroup_blkio_to_io_weight (d->weight));
      if (d->leaf_weight != 0)
        plan_unsupported (p, "io.leafWeight", "linux.resources.blockIO.weightDevice", "",
                          "leaf weights are cgroup v1 only");
    }
  for (size_t t = 0; t < KIST_RES_N_THROTTLE; t++)
    for (size_t i = 0; i < b->n_throttle[t]; i++)
      {
        const struct kist_res_throttle *d = &b->throttle[t][i];
        if (d->rate == 0)
          plan_add (p, "io.max", config[t], 0, "%" PRId64 ":%" PRId64 " %s=max", d->major,
                    d->minor, io[t]);
        else
          plan_add (p, "io.max", config[t], 0, "%" PRId64 ":%" PRId64 " %s=%" PRIu64, d->major,
                    d->minor, io[t], d->rate);
      }
}

static void
plan_hugetlb (struct kist_cgroup_plan *p, const struct kist_resources *res)
{
  for (size_t i = 0; i < res->n_hugepages; i++)
    {
      const struct kist_res_hugepage *h = &res->hugepages[i];
      _cleanup_free_ char *path = xasprintf ("linux.resources.hugepageLimits[%zu]", i);
      _cleanup_free_ char *file = xasprintf ("hugetlb.%s.max", h->page_size);
      plan_add (p, file, path, h->page_bytes, "%" PRIu64, h->limit);
    }
}

static void
plan_rdma (struct kist_cgroup_plan *p, const struct kist_resources *res)
{
  for (size_t i = 0; i < res->n_rdma; i++)
    {
      const struct kist_res_rdma *d = &res->rdma[i];
      if (!d->has_hca_handles && !d->has_hca_objects)
        continue;
      char hs[32] = "max", os[32] = "max";
      if (d->has_hca_handles)
        snprintf (hs, sizeof hs, "%" PRIu64, d->hca_handles);
      if (d->has_hca_objects)
        snprintf (os, sizeof os, "%" PRIu64, d->hca_objects);
      plan_add (p, "rdma.max", "linux.resources.rdma", 0, "%s hca_handle=%s hca_object=%s",
                d->device, hs, os);
    }
}

/* linux.resources.unified: raw files (the keys were checked by
 * spec_resources.c); unified overrides the structured value for the same
 * file. */
static void
plan_unified (struct kist_cgroup_plan *p, const struct kist_resources *res)
{
  for (size_t i = 0; i < res->n_unified; i++)
    {
      const char *key = res->unified[2 * i];
      _cleanup_free_ char *path = xasprintf ("linux.resources.unified.%s", key);
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
      write_add_line (w, res->unified[2 * i + 1]);
    }
}

int
kist_cgroup_plan_build (const struct kist_resources *res, struct kist_cgroup_plan **out,
                        struct kist_error **err)
{
  __attribute__ ((cleanup (cg_plan_freep))) struct kist_cgroup_plan *p = xcalloc (1, sizeof *p);
  *out = NULL;
  if (res == NULL)
    {
      *out = steal_pointer (&p);
      return 0;
    }
  if (plan_memory (p, &res->memory, err) < 0)
    return -1;
  plan_cpu (p, &res->cpu);
  /* > 0: the limit; -1: explicitly unlimited; 0: unset (Docker, runc). */
  if (res->pids_limit > 0)
    plan_add (p, "pids.max", "linux.resources.pids.limit", 0, "%" PRId64, res->pids_limit);
  else if (res->pids_limit < 0)
    plan_add (p, "pids.max", "linux.resources.pids.limit", 0, "max");
  plan_blockio (p, &res->blockio);
  plan_hugetlb (p, res);
  plan_rdma (p, res);
  if (res->has_network)
    plan_unsupported (p, "network", "linux.resources.network", "",
                      "net_cls and net_prio are cgroup v1 only");
  plan_unified (p, res);
  if (res->has_devices)
    {
      p->dev = xcalloc (res->n_devices ? res->n_devices : 1, sizeof *p->dev);
      if (res->n_devices)
        memcpy (p->dev, res->devices, res->n_devices * sizeof *p->dev);
      p->n_dev = res->n_devices;
      p->has_devices = true;
    }
  *out = steal_pointer (&p);
  return 0;
}

int
kist_cgroup_plan_check (const struct kist_spec *spec, struct kist_error **err)
{
  const struct kist_resources *res = spec && spec->linux_ ? spec->linux_->resources : NULL;
  __attribute__ ((cleanup (cg_plan_freep))) struct kist_cgroup_plan *plan = NULL;
  if (kist_cgroup_plan_build (res, &plan, err) < 0)
    return kist_error_wrap (err, "config.json");
  return 0;
}
