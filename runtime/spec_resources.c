/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: linux.resources -> struct kist_resources (resources.h), with the
 * accessors of spec_json.h, so that errors name the JSON path as every
 * other config.json error does ("config.json: linux.resources.memory.limit:
 * expected an integer").  Used by spec_linux.c (config.json) and by `kist
 * update --resources FILE|-` (kist_resources_parse_json). */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <linux/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "resources.h"
#include "spec_json.h"
#include "util.h"

#define ACC_ALL (BPF_DEVCG_ACC_MKNOD | BPF_DEVCG_ACC_READ | BPF_DEVCG_ACC_WRITE)

/* ---- fields -------------------------------------------------------------- */

/* An optional integer >= 0 (above INT64_MAX kept as INT64_MAX). */
static int
get_u (struct jpath *p, yajl_val o, const char *key, uint64_t *out, bool *present,
       struct kist_error **err)
{
  int64_t v = 0;
  bool has = false;
  int r = spec_get_i64_sat (p, o, key, &v, &has, err);
  if (r < 0 || !has)
    return r;
  if (v < 0)
    {
      spec_jp_key (p, key);
      return spec_jp_err (p, err, "expected a non-negative integer, got %" PRId64, v);
    }
  *out = (uint64_t) v;
  if (present)
    *present = true;
  return 0;
}

/* A field's own value is wrong: the message at its path. */
static int
field_err (struct jpath *p, const char *key, struct kist_error **err, const char *what, int64_t v)
{
  spec_jp_key (p, key);
  return spec_jp_err (p, err, "%" PRId64 " is invalid%s", v, what);
}

/* Does o have key with a non-null value (the last duplicate, as the
 * accessors read it)? */
static bool
has_value (yajl_val o, const char *key)
{
  bool has = false;
  for (size_t i = 0; i < o->u.object.len; i++)
    if (strcmp (o->u.object.keys[i], key) == 0)
      has = !YAJL_IS_NULL (o->u.object.values[i]);
  return has;
}

static int
parse_memory (struct jpath *p, yajl_val m, struct kist_res_memory *mem, struct kist_error **err)
{
  int r;
  if ((r = spec_get_i64_sat (p, m, "limit", &mem->limit, NULL, err)) < 0
      || (r = spec_get_i64_sat (p, m, "reservation", &mem->reservation, NULL, err)) < 0
      || (r = spec_get_i64_sat (p, m, "swap", &mem->swap, &mem->has_swap, err)) < 0)
    return r;
  if (mem->limit < -1)
    return field_err (p, "limit", err, " (-1: unlimited)", mem->limit);
  if (mem->reservation < -1)
    return field_err (p, "reservation", err, " (-1: unlimited)", mem->reservation);
  if ((r = spec_get_i64_sat (p, m, "kernel", &mem->kernel, NULL, err)) < 0
      || (r = spec_get_i64_sat (p, m, "kernelTCP", &mem->kernel_tcp, NULL, err)) < 0
      || (r = get_u (p, m, "swappiness", &mem->swappiness, &mem->has_swappiness, err)) < 0
      || (r = spec_get_bool (p, m, "disableOOMKiller", &mem->disable_oom_killer, err)) < 0
      || (r = spec_get_bool (p, m, "checkBeforeUpdate", &mem->check_before_update, err)) < 0)
    return r;
  /* useHierarchy: nothing to do on cgroup v2 (always hierarchical).
   * checkBeforeUpdate is for `kist update` (cgroup_ops.c); at create it
   * is only recorded in the report. */
  mem->has_check_before_update = has_value (m, "checkBeforeUpdate");
  return 0;
}

static int
parse_cpu (struct jpath *p, yajl_val c, struct kist_res_cpu *cpu, struct kist_error **err)
{
  int r;
  if ((r = get_u (p, c, "shares", &cpu->shares, NULL, err)) < 0
      || (r = spec_get_i64_sat (p, c, "quota", &cpu->quota, NULL, err)) < 0
      || (r = get_u (p, c, "period", &cpu->period, NULL, err)) < 0
      || (r = get_u (p, c, "burst", &cpu->burst, NULL, err)) < 0
      || (r = spec_get_i64_sat (p, c, "realtimeRuntime", &cpu->realtime_runtime, NULL, err)) < 0
      || (r = spec_get_i64_sat (p, c, "realtimePeriod", &cpu->realtime_period, NULL, err)) < 0
      || (r = spec_get_str (p, c, "cpus", S_EMPTY_NULL, &cpu->cpus, err)) < 0
      || (r = spec_get_str (p, c, "mems", S_EMPTY_NULL, &cpu->mems, err)) < 0
      || (r = spec_get_i64_sat (p, c, "idle", &cpu->idle, NULL, err)) < 0)
    return r;
  return 0;
}

static int
parse_pids (struct jpath *p, yajl_val o, int64_t *limit, struct kist_error **err)
{
  return spec_get_i64_sat (p, o, "limit", limit, NULL, err);
}

/* ---- arrays of objects --------------------------------------------------- */

typedef int (*elem_fn) (struct jpath *p, yajl_val o, void *elem, struct kist_error **err);

/* obj[key], an optional array of objects, each parsed by fn into an element
 * of size bytes of the new *out (n elements; set before parsing them, so
 * that the caller's free sees what was made).  1 when present. */
static int
parse_array (struct jpath *p, yajl_val obj, const char *key, size_t size, elem_fn fn, void **out,
             size_t *n, struct kist_error **err)
{
  yajl_val a = NULL;
  size_t m = 0;
  if (spec_enter (p, obj, key, yajl_t_array, false, &a, &m, err) < 0)
    return -1;
  if (a == NULL)
    return 0;
  *n = a->u.array.len;
  *out = xcalloc (*n ? *n : 1, size);
  for (size_t i = 0; i < *n; i++)
    {
      yajl_val o = a->u.array.values[i];
      size_t mi = spec_jp_index (p, i);
      if (!YAJL_IS_OBJECT (o))
        return spec_jp_err (p, err, "expected object");
      int r = fn (p, o, (char *) *out + i * size, err);
      if (r < 0)
        return r;
      spec_jp_pop (p, mi);
    }
  spec_jp_pop (p, m);
  return 1;
}

/* major and minor, both required and >= 0, and the value key (rate or
 * weight); *has_value says whether it was given. */
static int
parse_dev_numbers (struct jpath *p, yajl_val d, int64_t *maj, int64_t *min, const char *key,
                   uint64_t *value, bool *has_value, struct kist_error **err)
{
  bool hmaj = false, hmin = false;
  int r;
  if ((r = spec_get_i64_sat (p, d, "major", maj, &hmaj, err)) < 0
      || (r = spec_get_i64_sat (p, d, "minor", min, &hmin, err)) < 0
      || (r = get_u (p, d, key, value, has_value, err)) < 0)
    return r;
  if (!hmaj || !hmin || *maj < 0 || *min < 0)
    return spec_jp_err (p, err, "major and minor are required (numbers >= 0)");
  return 0;
}

static int
parse_weight_device (struct jpath *p, yajl_val d, void *elem, struct kist_error **err)
{
  struct kist_res_weight_device *w = elem;
  bool has = false, has_leaf = false;
  int r = parse_dev_numbers (p, d, &w->major, &w->minor, "weight", &w->weight, &has, err);
  if (r < 0 || (r = get_u (p, d, "leafWeight", &w->leaf_weight, &has_leaf, err)) < 0)
    return r;
  /* config.md: "at least one of weight or leafWeight MUST be given". */
  if (!has && !has_leaf)
    return spec_jp_err (p, err, "weight or leafWeight is required");
  return 0;
}

static int
parse_throttle (struct jpath *p, yajl_val d, void *elem, struct kist_error **err)
{
  struct kist_res_throttle *t = elem;
  bool has = false;
  int r = parse_dev_numbers (p, d, &t->major, &t->minor, "rate", &t->rate, &has, err);
  if (r < 0)
    return r;
  if (!has)
    return spec_jp_err (p, err, "major, minor and rate are required");
  return 0;
}

static const char *const throttle_keys[KIST_RES_N_THROTTLE] = {
  [KIST_RES_THROTTLE_READ_BPS] = "throttleReadBpsDevice",
  [KIST_RES_THROTTLE_WRITE_BPS] = "throttleWriteBpsDevice",
  [KIST_RES_THROTTLE_READ_IOPS] = "throttleReadIOPSDevice",
  [KIST_RES_THROTTLE_WRITE_IOPS] = "throttleWriteIOPSDevice",
};

static int
parse_blockio (struct jpath *p, yajl_val b, struct kist_res_blockio *bio, struct kist_error **err)
{
  int r;
  if ((r = get_u (p, b, "weight", &bio->weight, NULL, err)) < 0
      || (r = get_u (p, b, "leafWeight", &bio->leaf_weight, NULL, err)) < 0
      || (r = parse_array (p, b, "weightDevice", sizeof *bio->weight_device, parse_weight_device,
                           (void **) &bio->weight_device, &bio->n_weight_device, err))
             < 0)
    return r;
  for (size_t t = 0; t < KIST_RES_N_THROTTLE; t++)
    if ((r = parse_array (p, b, throttle_keys[t], sizeof *bio->throttle[t], parse_throttle,
                          (void **) &bio->throttle[t], &bio->n_throttle[t], err))
        < 0)
      return r;
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
parse_hugepage (struct jpath *p, yajl_val h, void *elem, struct kist_error **err)
{
  struct kist_res_hugepage *hp = elem;
  bool has = false;
  int r;
  if ((r = spec_get_str (p, h, "pageSize", 0, &hp->page_size, err)) < 0
      || (r = get_u (p, h, "limit", &hp->limit, &has, err)) < 0)
    return r;
  if (hp->page_size == NULL || !has)
    return spec_jp_err (p, err, "pageSize and limit are required");
  if (!hugepage_bytes (hp->page_size, &hp->page_bytes))
    {
      spec_jp_key (p, "pageSize");
      return spec_jp_err (p, err, "`%s` is not a huge page size like 2MB or 1GB", hp->page_size);
    }
  return 0;
}

/* ---- objects of objects and maps ----------------------------------------- */

static int
parse_rdma (struct jpath *p, yajl_val o, struct kist_resources *res, struct kist_error **err)
{
  size_t len = o->u.object.len;
  res->rdma = xcalloc (len ? len : 1, sizeof *res->rdma);
  for (size_t i = 0; i < len; i++)
    {
      const char *dev = o->u.object.keys[i];
      yajl_val v = o->u.object.values[i];
      struct kist_res_rdma *rd = &res->rdma[res->n_rdma];
      size_t m = spec_jp_key (p, dev);
      int r;
      if (!YAJL_IS_OBJECT (v))
        return spec_jp_err (p, err, "expected object");
      if (dev[0] == '\0' || strpbrk (dev, " \t\n=") != NULL)
        return spec_jp_err (p, err, "invalid device name (no whitespace or '=')");
      rd->device = xstrdup (dev);
      res->n_rdma++;
      if ((r = get_u (p, v, "hcaHandles", &rd->hca_handles, &rd->has_hca_handles, err)) < 0
          || (r = get_u (p, v, "hcaObjects", &rd->hca_objects, &rd->has_hca_objects, err)) < 0)
        return r;
      /* config.md: "at least one of hcaHandles or hcaObjects MUST be given". */
      if (!rd->has_hca_handles && !rd->has_hca_objects)
        return spec_jp_err (p, err, "hcaHandles or hcaObjects is required");
      spec_jp_pop (p, m);
    }
  return 0;
}

static int
parse_network (struct jpath *p, yajl_val o, bool *has, struct kist_error **err)
{
  uint32_t id;
  yajl_val prio;
  int r;
  if ((r = spec_get_u32 (p, o, "classID", false, &id, has, err)) < 0
      || (r = spec_get_opt (p, o, "priorities", yajl_t_array, &prio, err)) < 0)
    return r;
  if (prio)
    *has = true;
  return 0;
}

/* linux.resources.unified: raw files; a key is a file name in the scope. */
static int
check_unified (struct jpath *p, const struct kist_resources *res, struct kist_error **err)
{
  static const char *const refused[]
      = { "cgroup.procs", "cgroup.threads", "cgroup.kill", "cgroup.freeze", "cgroup.subtree_control",
          "cgroup.type", "cgroup.events", "cgroup.controllers" };
  for (size_t i = 0; i < res->n_unified; i++)
    {
      const char *key = res->unified[2 * i];
      size_t m = spec_jp_key (p, "unified");
      if (key[0] == '\0' || key[0] == '.' || strchr (key, '/') || strstr (key, "..")
          || strchr (key, '.') == NULL || strlen (key) > 255)
        return spec_jp_err (p, err,
                            "key `%s` is not a cgroup file name (\"controller.file\", no '/' or "
                            "\"..\")",
                            key);
      for (size_t k = 0; k < KIST_ARRAY_SIZE (refused); k++)
        if (strcmp (key, refused[k]) == 0)
          return spec_jp_err (p, err, "`%s` is managed by kist and cannot be set", key);
      spec_jp_pop (p, m);
    }
  return 0;
}

/* ---- devices ------------------------------------------------------------- */

static int
parse_dev_rule (struct jpath *p, yajl_val d, void *elem, struct kist_error **err)
{
  struct kist_cgroup_dev_rule *rl = elem;
  _cleanup_free_ char *type = NULL, *access = NULL;
  bool has_major = false, has_minor = false;
  int r;
  if ((r = spec_get_bool_req (p, d, "allow", &rl->allow, err)) < 0
      || (r = spec_get_str (p, d, "type", 0, &type, err)) < 0
      || (r = spec_get_i64_sat (p, d, "major", &rl->major, &has_major, err)) < 0
      || (r = spec_get_i64_sat (p, d, "minor", &rl->minor, &has_minor, err)) < 0
      || (r = spec_get_str (p, d, "access", 0, &access, err)) < 0)
    return r;
  rl->type = 'a';
  if (type)
    {
      if (strlen (type) != 1 || strchr ("acb", type[0]) == NULL)
        {
          spec_jp_key (p, "type");
          return spec_jp_err (p, err, "\"%s\": expected \"a\", \"c\" or \"b\"", type);
        }
      rl->type = type[0];
    }
  const char *names[2] = { "major", "minor" };
  int64_t *vals[2] = { &rl->major, &rl->minor };
  bool has[2] = { has_major, has_minor };
  for (int k = 0; k < 2; k++)
    {
      if (!has[k])
        *vals[k] = -1;
      else if (*vals[k] < -1 || *vals[k] > UINT32_MAX)
        {
          spec_jp_key (p, names[k]);
          return spec_jp_err (p, err, "%" PRId64 " is out of range (-1 or absent: any)", *vals[k]);
        }
    }
  rl->access = ACC_ALL;
  if (access)
    {
      rl->access = 0;
      for (const char *c = access; *c; c++)
        switch (*c)
          {
          case 'r':
            rl->access |= BPF_DEVCG_ACC_READ;
            break;
          case 'w':
            rl->access |= BPF_DEVCG_ACC_WRITE;
            break;
          case 'm':
            rl->access |= BPF_DEVCG_ACC_MKNOD;
            break;
          default:
            spec_jp_key (p, "access");
            return spec_jp_err (p, err, "`%s` is not a combination of r, w and m", access);
          }
      if (rl->access == 0)
        rl->access = ACC_ALL;
    }
  return 0;
}

/* ---- the object ---------------------------------------------------------- */

static int
parse_resources (struct jpath *p, yajl_val v, struct kist_resources *res, struct kist_error **err)
{
  bool present = false;
  int r;
  if ((r = PARSE_OBJECT (p, v, "memory", &present, parse_memory, &res->memory, err)) < 0
      || (r = PARSE_OBJECT (p, v, "cpu", &present, parse_cpu, &res->cpu, err)) < 0
      || (r = PARSE_OBJECT (p, v, "pids", &present, parse_pids, &res->pids_limit, err)) < 0
      || (r = PARSE_OBJECT (p, v, "blockIO", &present, parse_blockio, &res->blockio, err)) < 0
      || (r = parse_array (p, v, "hugepageLimits", sizeof *res->hugepages, parse_hugepage,
                           (void **) &res->hugepages, &res->n_hugepages, err))
             < 0
      || (r = PARSE_OBJECT (p, v, "rdma", &present, parse_rdma, res, err)) < 0
      || (r = PARSE_OBJECT (p, v, "network", &present, parse_network, &res->has_network, err)) < 0
      || (r = spec_get_map (p, v, "unified", &res->unified, &res->n_unified, err)) < 0
      || (r = check_unified (p, res, err)) < 0)
    return r;
  r = parse_array (p, v, "devices", sizeof *res->devices, parse_dev_rule, (void **) &res->devices,
                   &res->n_devices, err);
  if (r < 0)
    return r;
  res->has_devices = r > 0;
  return 0;
}

int
kist_resources_parse_at (struct jpath *p, yajl_val v, struct kist_resources **out,
                         struct kist_error **err)
{
  *out = NULL;
  if (v == NULL || YAJL_IS_NULL (v))
    return 0;
  if (!YAJL_IS_OBJECT (v))
    return spec_jp_err (p, err, "expected object");
  _cleanup_resources_ struct kist_resources *res = xcalloc (1, sizeof *res);
  int r = parse_resources (p, v, res, err);
  if (r < 0)
    return r;
  *out = steal_pointer (&res);
  return 0;
}

int
kist_resources_parse (yajl_val v, const char *doc, const char *path, struct kist_resources **out,
                      struct kist_error **err)
{
  struct jpath p = { .doc = doc ? doc : "" };
  _cleanup_free_ char *copy = xstrdup (path ? path : "");
  for (char *save = NULL, *c = strtok_r (copy, ".", &save); c; c = strtok_r (NULL, ".", &save))
    spec_jp_key (&p, c);
  int r = kist_resources_parse_at (&p, v, out, err);
  free (p.buf);
  return r;
}

int
kist_resources_parse_json (const char *json, size_t len, const char *doc, const char *path,
                           struct kist_resources **out, struct kist_error **err)
{
  _cleanup_free_ char *text = xmalloc (len + 1);
  memcpy (text, json, len);
  text[len] = '\0';
  kist_rstrip (text);
  *out = NULL;
  if (*text == '\0')
    return kist_error_make (err, EINVAL,
                            "%sthe document is empty: expected an OCI LinuxResources JSON object",
                            doc);
  _cleanup_yajl_ yajl_val v = NULL;
  if (kist_json_parse (text, strlen (text), doc, &v, err) < 0)
    return -1;
  if (!YAJL_IS_OBJECT (v))
    return kist_error_make (err, EINVAL,
                            "%sexpected an OCI LinuxResources JSON object "
                            "(e.g. {\"memory\": {\"limit\": 67108864}})",
                            doc);
  return kist_resources_parse (v, doc, path, out, err);
}

/* ---- copy and free ------------------------------------------------------- */

static void *
memdup (const void *src, size_t n, size_t size)
{
  void *d = xcalloc (n ? n : 1, size);
  if (n)
    memcpy (d, src, n * size);
  return d;
}

struct kist_resources *
kist_resources_dup (const struct kist_resources *r)
{
  if (r == NULL)
    return NULL;
  struct kist_resources *d = memdup (r, 1, sizeof *r);
  d->cpu.cpus = xstrdup (r->cpu.cpus);
  d->cpu.mems = xstrdup (r->cpu.mems);
  d->blockio.weight_device
      = memdup (r->blockio.weight_device, r->blockio.n_weight_device, sizeof *r->blockio.weight_device);
  for (size_t t = 0; t < KIST_RES_N_THROTTLE; t++)
    d->blockio.throttle[t]
        = memdup (r->blockio.throttle[t], r->blockio.n_throttle[t], sizeof *r->blockio.throttle[t]);
  d->hugepages = memdup (r->hugepages, r->n_hugepages, sizeof *r->hugepages);
  for (size_t i = 0; i < r->n_hugepages; i++)
    d->hugepages[i].page_size = xstrdup (r->hugepages[i].page_size);
  d->rdma = memdup (r->rdma, r->n_rdma, sizeof *r->rdma);
  for (size_t i = 0; i < r->n_rdma; i++)
    d->rdma[i].device = xstrdup (r->rdma[i].device);
  d->unified = NULL;
  if (r->unified)
    {
      d->unified = xcalloc (2 * r->n_unified + 1, sizeof (char *));
      for (size_t i = 0; i < 2 * r->n_unified; i++)
        d->unified[i] = xstrdup (r->unified[i]);
    }
  d->devices = memdup (r->devices, r->n_devices, sizeof *r->devices);
  return d;
}

void
kist_resources_free (struct kist_resources *r)
{
  if (r == NULL)
    return;
  free (r->cpu.cpus);
  free (r->cpu.mems);
  free (r->blockio.weight_device);
  for (size_t t = 0; t < KIST_RES_N_THROTTLE; t++)
    free (r->blockio.throttle[t]);
  for (size_t i = 0; i < r->n_hugepages; i++)
    free (r->hugepages[i].page_size);
  free (r->hugepages);
  for (size_t i = 0; i < r->n_rdma; i++)
    free (r->rdma[i].device);
  free (r->rdma);
  kist_strv_free (r->unified);
  free (r->devices);
  free (r);
}
