/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: config.json `linux`: namespaces, id mappings, time offsets, devices,
 * sysctl, propagation, masked and read-only paths, personality, memory
 * policy, netDevices, and linux.resources (typed by spec_resources.c).  linux.seccomp
 * stays JSON here: the load step parses it (seccomp.h kist_seccomp_choose)
 * with the process's bounding set, before any state exists. */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "resources.h"
#include "spec.h"
#include "spec_int.h"
#include "util.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif
static const struct name_num personality_domains[] = {
  { "LINUX", 0x0000 }, { "LINUX32", 0x0008 },
};
static const struct name_num mpol_modes[] = {
  { "MPOL_DEFAULT", 0 },        { "MPOL_PREFERRED", 1 }, { "MPOL_BIND", 2 },
  { "MPOL_INTERLEAVE", 3 },     { "MPOL_LOCAL", 4 },     { "MPOL_PREFERRED_MANY", 5 },
  { "MPOL_WEIGHTED_INTERLEAVE", 6 },
};
static const struct name_num mpol_flag_names[] = {
  { "MPOL_F_STATIC_NODES", 1 << 15 },
  { "MPOL_F_RELATIVE_NODES", 1 << 14 },
  { "MPOL_F_NUMA_BALANCING", 1 << 13 },
};

const char *
kist_mempolicy_mode_name (int mode)
{
  return spec_name_of (mpol_modes, KIST_ARRAY_SIZE (mpol_modes), mode);
}

/* ---- linux.personality, memoryPolicy (the layers: personality.c, sched.c) ---- */

static int
parse_personality (struct jpath *p, yajl_val v, struct kist_personality *pers,
                   struct kist_error **err)
{
  long domain = 0;
  int r = spec_get_enum (p, v, "domain", personality_domains, KIST_ARRAY_SIZE (personality_domains),
                         &domain, err);
  if (r < 0)
    return r;
  yajl_val a;
  size_t m;
  r = spec_enter (p, v, "flags", yajl_t_array, false, &a, &m, err);
  if (r < 0)
    return r;
  if (r > 0)
    {
      if (a->u.array.len > 0)
        {
          spec_jp_index (p, 0);
          return spec_jp_err (p, err,
                              "runtime-spec defines no personality flags (kist sets the domain "
                              "only): remove the flags");
        }
      spec_jp_pop (p, m);
    }
  pers->domain = (unsigned long) domain;
  return 0;
}

static int
parse_memory_policy (struct jpath *p, yajl_val v, struct kist_memory_policy *mp,
                     struct kist_error **err)
{
  long mode = 0;
  uint64_t flags = 0;
  int r;
  if ((r = spec_get_enum (p, v, "mode", mpol_modes, KIST_ARRAY_SIZE (mpol_modes), &mode, err)) < 0
      || (r = spec_get_idlist (p, v, "nodes", "NUMA node", &mp->nodes, err)) < 0
      || (r = spec_get_enum_flags (p, v, "flags", mpol_flag_names,
                                        KIST_ARRAY_SIZE (mpol_flag_names),
                                   &flags, err))
             < 0)
    return r;
  if ((flags & (1 << 15)) && (flags & (1 << 14)))
    {
      spec_jp_key (p, "flags");
      return spec_jp_err (p, err,
                          "MPOL_F_STATIC_NODES and MPOL_F_RELATIVE_NODES exclude each other: keep "
                          "one");
    }
  mp->mode = (int) mode;
  mp->flags = (unsigned) flags;
  return 0;
}

/* ---- linux --------------------------------------------------------------- */

static const char *const ns_names[KIST_NS_COUNT] = {
  [KIST_NS_USER] = "user", [KIST_NS_MOUNT] = "mount", [KIST_NS_PID] = "pid",
  [KIST_NS_NET] = "net",   [KIST_NS_UTS] = "uts",     [KIST_NS_IPC] = "ipc",
  [KIST_NS_CGROUP] = "cgroup", [KIST_NS_TIME] = "time",
};

/* The names linux.namespaces[].type uses (OCI): "network", not "net". */
static const char *const ns_oci_names[KIST_NS_COUNT] = {
  [KIST_NS_USER] = "user", [KIST_NS_MOUNT] = "mount",   [KIST_NS_PID] = "pid",
  [KIST_NS_NET] = "network", [KIST_NS_UTS] = "uts",     [KIST_NS_IPC] = "ipc",
  [KIST_NS_CGROUP] = "cgroup", [KIST_NS_TIME] = "time",
};

static int
parse_namespaces (struct jpath *p, yajl_val a, struct kist_linux *l, struct kist_error **err)
{
  size_t first[KIST_NS_COUNT] = { 0 };
  int r;
  for (size_t i = 0; i < a->u.array.len; i++)
    {
      size_t m;
      yajl_val o = spec_elem_object (p, a, i, &m, err);
      if (o == NULL)
        return -1;
      _cleanup_free_ char *type = NULL;
      if ((r = spec_get_str (p, o, "type", S_REQUIRED, &type, err)) < 0)
        return r;
      int t = -1;
      for (int k = 0; k < KIST_NS_COUNT; k++)
        if (strcmp (type, ns_oci_names[k]) == 0)
          t = k;
      if (t < 0)
        {
          spec_jp_key (p, "type");
          return spec_jp_err (p, err,
                              "unknown namespace type \"%s\" (expected one of pid, network, mount, "
                              "ipc, uts, user, cgroup, time)",
                              type);
        }
      if (l->ns[t].present)
        {
          spec_jp_key (p, "type");
          return spec_jp_err (p, err, "duplicate namespace type \"%s\" (already listed at "
                              "linux.namespaces[%zu])", type, first[t]);
        }
      l->ns[t].present = true;
      first[t] = i;
      if ((r = spec_get_str (p, o, "path", S_EMPTY_NULL | S_ABSOLUTE, &l->ns[t].path, err)) < 0)
        return r;
      spec_jp_pop (p, m);
    }
  return 0;
}

int
spec_parse_idmaps (struct jpath *p, yajl_val a, struct kist_idmap **out, size_t *n_out,
              struct kist_error **err)
{
  size_t n = a->u.array.len;
  int r;
  *out = xcalloc (n, sizeof (struct kist_idmap));
  *n_out = n;
  for (size_t i = 0; i < n; i++)
    {
      struct kist_idmap *im = &(*out)[i];
      size_t m;
      yajl_val o = spec_elem_object (p, a, i, &m, err);
      if (o == NULL)
        return -1;
      if ((r = spec_get_u32 (p, o, "containerID", true, &im->container_id, NULL, err)) < 0
          || (r = spec_get_u32 (p, o, "hostID", true, &im->host_id, NULL, err)) < 0
          || (r = spec_get_u32 (p, o, "size", true, &im->size, NULL, err)) < 0)
        return r;
      if (im->size == 0)
        {
          spec_jp_key (p, "size");
          return spec_jp_err (p, err, "must be greater than 0");
        }
      spec_jp_pop (p, m);
    }
  return 0;
}

static int
parse_time_offsets (struct jpath *p, yajl_val o, struct kist_linux *l, struct kist_error **err)
{
  int r;
  for (size_t i = 0; i < o->u.object.len; i++)
    {
      const char *clock = o->u.object.keys[i];
      yajl_val v = o->u.object.values[i];
      struct kist_time_offset *t;
      size_t m = spec_jp_key (p, clock);
      if (strcmp (clock, "monotonic") == 0)
        t = &l->time_monotonic;
      else if (strcmp (clock, "boottime") == 0)
        t = &l->time_boottime;
      else
        return spec_jp_err (p, err, "unknown clock (expected monotonic or boottime)");
      if (v->type == yajl_t_null)
        {
          spec_jp_pop (p, m);
          continue;
        }
      if (!YAJL_IS_OBJECT (v))
        return spec_jp_err (p, err, "expected object");
      *t = (struct kist_time_offset){ 0 };
      if ((r = spec_get_i64 (p, v, "secs", false, &t->secs, err)) < 0
          || (r = spec_get_u32 (p, v, "nanosecs", false, &t->nanosecs, NULL, err)) < 0)
        return r;
      if (t->nanosecs >= 1000000000u)
        {
          spec_jp_key (p, "nanosecs");
          return spec_jp_err (p, err, "must be less than 1000000000, got %" PRIu32, t->nanosecs);
        }
      t->present = true;
      spec_jp_pop (p, m);
    }
  return 0;
}

static int
parse_devices (struct jpath *p, yajl_val a, struct kist_linux *l, struct kist_error **err)
{
  size_t n = a->u.array.len;
  int r;
  l->devices = xcalloc (n, sizeof (struct kist_device));
  l->n_devices = n;
  for (size_t i = 0; i < n; i++)
    {
      struct kist_device *d = &l->devices[i];
      size_t m;
      yajl_val o = spec_elem_object (p, a, i, &m, err);
      if (o == NULL)
        return -1;
      _cleanup_free_ char *type = NULL;
      if ((r = spec_get_str (p, o, "type", S_REQUIRED, &type, err)) < 0)
        return r;
      if (strlen (type) != 1 || strchr ("cbup", type[0]) == NULL)
        {
          spec_jp_key (p, "type");
          return spec_jp_err (p, err, "unknown device type \"%s\" (expected c, b, u or p)", type);
        }
      d->type = type[0];
      bool need_nums = d->type != 'p';
      if ((r = spec_get_str (p, o, "path", S_REQUIRED | S_ABSOLUTE, &d->path, err)) < 0
          || (r = spec_get_i64 (p, o, "major", need_nums, &d->major, err)) < 0
          || (r = spec_get_i64 (p, o, "minor", need_nums, &d->minor, err)) < 0
          || (r = spec_get_u32 (p, o, "fileMode", false, &d->file_mode, &d->has_file_mode, err)) < 0
          || (r = spec_get_u32 (p, o, "uid", false, &d->uid, &d->has_uid, err)) < 0
          || (r = spec_get_u32 (p, o, "gid", false, &d->gid, &d->has_gid, err)) < 0)
        return r;
      spec_jp_pop (p, m);
    }
  return 0;
}

/* ---- linux.netDevices (the layer: net_devices.c) ---- */

/* Why name is no network interface name the kernel takes (dev_valid_name):
 * 1 to IFNAMSIZ - 1 bytes, not "." or "..", no '/', ':' or white space;
 * NULL when it is one. */
static const char *
netdev_name_invalid (const char *name)
{
  if (name[0] == '\0')
    return "is empty";
  if (strlen (name) >= IFNAMSIZ)
    return "is longer than 15 bytes (IFNAMSIZ)";
  if (strcmp (name, ".") == 0 || strcmp (name, "..") == 0)
    return "is . or ..";
  for (const char *c = name; *c; c++)
    if (*c == '/' || *c == ':' || isspace ((unsigned char) *c))
      return "contains '/', ':' or white space";
  return NULL;
}

static int
parse_net_devices (struct jpath *p, yajl_val o, struct kist_linux *l, struct kist_error **err)
{
  size_t n = o->u.object.len;
  if (n == 0)
    return 0;
  if (!l->ns[KIST_NS_NET].present)
    {
      spec_jp_key (p, o->u.object.keys[0]);
      return spec_jp_err (p, err,
                          "a device can only be moved into a network namespace of the container, "
                          "and the config asks for none: add {\"type\": \"network\"} (or one "
                          "with a path) to linux.namespaces");
    }
  l->net_devices = xcalloc (n, sizeof *l->net_devices);
  for (size_t i = 0; i < n; i++)
    {
      const char *key = o->u.object.keys[i];
      yajl_val v = o->u.object.values[i];
      size_t m = spec_jp_key (p, key);
      const char *bad = netdev_name_invalid (key);
      if (bad)
        return spec_jp_err (p, err, "the device name \"%s\" %s: not a network interface name",
                            key, bad);
      if (!YAJL_IS_OBJECT (v))
        return spec_jp_err (p, err, "expected object");
      struct kist_net_device *d = &l->net_devices[l->n_net_devices++];
      d->host = xstrdup (key);
      int r = spec_get_str (p, v, "name", S_EMPTY_NULL, &d->name, err);
      if (r < 0)
        return r;
      if (d->name == NULL)
        d->name = xstrdup (key);
      else if ((bad = netdev_name_invalid (d->name)))
        {
          spec_jp_key (p, "name");
          return spec_jp_err (p, err, "\"%s\" %s: not a network interface name", d->name, bad);
        }
      for (size_t j = 0; j + 1 < l->n_net_devices; j++)
        if (strcmp (l->net_devices[j].name, d->name) == 0)
          return spec_jp_err (p, err,
                              "its name inside, \"%s\", is also that of linux.netDevices.%s: a "
                              "name must be unique in the container's network namespace",
                              d->name, l->net_devices[j].host);
      spec_jp_pop (p, m);
    }
  return 0;
}

static const char *const propagations[] = { "private", "rprivate", "slave",      "rslave",
                                            "shared",  "rshared",  "unbindable", "runbindable" };

int
spec_parse_linux (struct jpath *p, yajl_val v, struct kist_linux *l, struct kist_error **err)
{
  int r;

  if ((r = SPEC_PARSE_AT (p, v, "namespaces", yajl_t_array, a, parse_namespaces (p, a, l, err),
                          err))
          < 0
      || (r = SPEC_PARSE_AT (p, v, "uidMappings", yajl_t_array, a,
                             spec_parse_idmaps (p, a, &l->uid_mappings, &l->n_uid_mappings, err), err))
             < 0
      || (r = SPEC_PARSE_AT (p, v, "gidMappings", yajl_t_array, a,
                             spec_parse_idmaps (p, a, &l->gid_mappings, &l->n_gid_mappings, err), err))
             < 0
      || (r = SPEC_PARSE_AT (p, v, "timeOffsets", yajl_t_object, o,
                             parse_time_offsets (p, o, l, err), err))
             < 0
      || (r = SPEC_PARSE_AT (p, v, "devices", yajl_t_array, a, parse_devices (p, a, l, err), err))
             < 0)
    return r;

  _cleanup_free_ char **kv = NULL;
  size_t n;
  if ((r = spec_get_map (p, v, "sysctl", &kv, &n, err)) < 0)
    return r;
  if (kv)
    {
      l->sysctl = xcalloc (n, sizeof (struct kist_sysctl));
      l->n_sysctl = n;
      for (size_t i = 0; i < n; i++)
        l->sysctl[i] = (struct kist_sysctl){ .key = kv[2 * i], .value = kv[2 * i + 1] };
    }

  if ((r = spec_get_str (p, v, "cgroupsPath", S_EMPTY_NULL, &l->cgroups_path, err)) < 0)
    return r;

  bool has_resources = false;
  if ((r = PARSE_OBJECT (p, v, "resources", &has_resources, kist_resources_parse_at,
                         &l->resources, err)) < 0
      || (r = spec_get_opt (p, v, "seccomp", yajl_t_object, &l->seccomp, err)) < 0)
    return r;

  if ((r = spec_get_str (p, v, "rootfsPropagation", S_EMPTY_NULL, &l->rootfs_propagation, err)) < 0)
    return r;
  if (l->rootfs_propagation)
    {
      bool ok = false;
      for (size_t i = 0; i < KIST_ARRAY_SIZE (propagations); i++)
        ok = ok || strcmp (l->rootfs_propagation, propagations[i]) == 0;
      if (!ok)
        {
          spec_jp_key (p, "rootfsPropagation");
          return spec_jp_err (p, err,
                              "unknown propagation \"%s\" (expected one of private, rprivate, "
                              "slave, rslave, shared, rshared, unbindable, runbindable)",
                              l->rootfs_propagation);
        }
    }

  if ((r = spec_get_strv (p, v, "maskedPaths", S_ABSOLUTE, &l->masked_paths, err)) < 0
      || (r = spec_get_strv (p, v, "readonlyPaths", S_ABSOLUTE, &l->readonly_paths, err)) < 0
      || (r = spec_get_str (p, v, "mountLabel", S_EMPTY_NULL, &l->mount_label, err)) < 0)
    return r;

  if ((r = spec_get_present (p, v, "intelRdt", &l->has_intel_rdt, err)) < 0
      || (r = SPEC_PARSE_AT (p, v, "netDevices", yajl_t_object, o,
                             parse_net_devices (p, o, l, err), err))
             < 0
      || (r = PARSE_OBJECT (p, v, "personality", &l->has_personality, parse_personality,
                            &l->personality, err))
             < 0
      || (r = PARSE_OBJECT (p, v, "memoryPolicy", &l->has_memory_policy, parse_memory_policy,
                            &l->memory_policy, err))
             < 0)
    return r;
  return 0;
}

void
spec_linux_free (struct kist_linux *l)
{
  if (l == NULL)
    return;
  for (int i = 0; i < KIST_NS_COUNT; i++)
    free (l->ns[i].path);
  free (l->uid_mappings);
  free (l->gid_mappings);
  for (size_t i = 0; i < l->n_devices; i++)
    free (l->devices[i].path);
  free (l->devices);
  for (size_t i = 0; i < l->n_net_devices; i++)
    {
      free (l->net_devices[i].host);
      free (l->net_devices[i].name);
    }
  free (l->net_devices);
  for (size_t i = 0; i < l->n_sysctl; i++)
    {
      free (l->sysctl[i].key);
      free (l->sysctl[i].value);
    }
  free (l->sysctl);
  free (l->cgroups_path);
  kist_resources_free (l->resources);
  free (l->rootfs_propagation);
  kist_strv_free (l->masked_paths);
  kist_strv_free (l->readonly_paths);
  free (l->mount_label);
  free (l->memory_policy.nodes);
  free (l);
}

/* ---- namespace names ----------------------------------------------------- */

const char *
kist_ns_name (enum kist_ns_type t)
{
  if ((unsigned) t >= KIST_NS_COUNT)
    return "unknown";
  return ns_names[t];
}

unsigned long
kist_ns_clone_flag (enum kist_ns_type t)
{
  switch (t)
    {
    case KIST_NS_USER:
      return CLONE_NEWUSER;
    case KIST_NS_MOUNT:
      return CLONE_NEWNS;
    case KIST_NS_PID:
      return CLONE_NEWPID;
    case KIST_NS_NET:
      return CLONE_NEWNET;
    case KIST_NS_UTS:
      return CLONE_NEWUTS;
    case KIST_NS_IPC:
      return CLONE_NEWIPC;
    case KIST_NS_CGROUP:
      return CLONE_NEWCGROUP;
    case KIST_NS_TIME:
      return CLONE_NEWTIME;
    default:
      return 0;
    }
}
