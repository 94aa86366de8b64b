/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: linux.resources as typed structs (spec_resources.c).  config.json's
 * linux.resources is parsed into them with the rest of the config (so a bad
 * one fails before any state exists, with its JSON path: "config.json:
 * linux.resources.memory.limit: expected an integer"); `kist update
 * --resources FILE|-` parses its LinuxResources object the same way, and
 * update's flags and sandbox's --memory/--pids/--cpus fill the structs
 * directly.  cgroup_plan.c turns a struct kist_resources into the cgroup v2
 * writes; cgroup_devices.c the device rules into the BPF program.
 *
 * Conventions: null is absent; a field whose zero means "unset" (Docker
 * sends zero-valued fields) has no flag, the others a has_ flag; integers
 * above INT64_MAX (uint64 values) are kept as INT64_MAX.  Per-field checks
 * (memory.limit >= -1, pageSize, unified file names, rdma device names,
 * device access letters) are made here; the plan makes the conversions that
 * need several fields (memory.swap against memory.limit). */
#ifndef KIST_RESOURCES_H
#define KIST_RESOURCES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "json.h"

struct kist_res_memory
{
  int64_t limit;             /* 0: unset, -1: unlimited */
  int64_t reservation;       /* 0: unset, -1: unlimited */
  bool has_swap;             /* swap 0 still means "max" when limit is -1 */
  int64_t swap;              /* OCI: memory+swap; -1: unlimited */
  int64_t kernel, kernel_tcp; /* != 0: unsupported on cgroup v2 */
  bool has_swappiness;       /* any value: unsupported on cgroup v2 */
  uint64_t swappiness;
  bool disable_oom_killer;   /* true: unsupported on cgroup v2 */
  bool has_check_before_update; /* checkBeforeUpdate given (true or false) */
  bool check_before_update;  /* `kist update`: refuse a limit at or below the usage */
};

struct kist_res_cpu
{
  uint64_t shares;           /* 0: unset */
  int64_t quota;             /* 0: unset, < 0: "max" */
  uint64_t period, burst;    /* 0: unset */
  int64_t realtime_runtime, realtime_period; /* != 0: unsupported on cgroup v2 */
  char *cpus, *mems;         /* NULL (absent or ""): unset */
  int64_t idle;              /* 0: unset */
};

struct kist_res_weight_device
{
  int64_t major, minor;      /* required, >= 0 */
  uint64_t weight, leaf_weight; /* 0: unset */
};

struct kist_res_throttle
{
  int64_t major, minor;      /* required, >= 0 */
  uint64_t rate;             /* required; 0: "max" */
};

/* blockIO.throttle*Device, in this order. */
enum
{
  KIST_RES_THROTTLE_READ_BPS,
  KIST_RES_THROTTLE_WRITE_BPS,
  KIST_RES_THROTTLE_READ_IOPS,
  KIST_RES_THROTTLE_WRITE_IOPS,
  KIST_RES_N_THROTTLE
};

struct kist_res_blockio
{
  uint64_t weight, leaf_weight; /* 0: unset */
  struct kist_res_weight_device *weight_device;
  size_t n_weight_device;
  struct kist_res_throttle *throttle[KIST_RES_N_THROTTLE];
  size_t n_throttle[KIST_RES_N_THROTTLE];
};

struct kist_res_hugepage
{
  char *page_size;           /* "2MB", "1GB", "64KB" */
  uint64_t page_bytes;       /* page_size in bytes */
  uint64_t limit;
};

struct kist_res_rdma
{
  char *device;              /* the key: no whitespace or '=' */
  bool has_hca_handles, has_hca_objects; /* absent: "max" */
  uint64_t hca_handles, hca_objects;
};

/* One linux.resources.devices rule. */
struct kist_cgroup_dev_rule
{
  bool allow;
  char type;                 /* 'a', 'c' or 'b' */
  int64_t major, minor;      /* -1: any */
  unsigned access;           /* BPF_DEVCG_ACC_MKNOD | _READ | _WRITE */
};

struct kist_resources
{
  struct kist_res_memory memory;
  struct kist_res_cpu cpu;
  int64_t pids_limit;        /* 0: unset, < 0: "max" */
  struct kist_res_blockio blockio;
  struct kist_res_hugepage *hugepages;
  size_t n_hugepages;
  struct kist_res_rdma *rdma;
  size_t n_rdma;
  bool has_network;          /* network.classID or network.priorities given (v1 only) */
  char **unified;            /* flat key0, value0, key1, ...: n_unified pairs, in order */
  size_t n_unified;
  bool has_devices;          /* linux.resources.devices given (maybe empty) */
  struct kist_cgroup_dev_rule *devices;
  size_t n_devices;
};

/* Parse the LinuxResources object v (NULL or null: *out is NULL, 0).  doc
 * prefixes the messages ("config.json: "), path is v's JSON path
 * ("linux.resources"). */
int kist_resources_parse (yajl_val v, const char *doc, const char *path,
                          struct kist_resources **out, struct kist_error **err);

/* The same at p (config.json's parser, spec_linux.c: p is at
 * "linux.resources"). */
struct jpath;
int kist_resources_parse_at (struct jpath *p, yajl_val v, struct kist_resources **out,
                             struct kist_error **err);

/* The same from JSON text (`kist update --resources FILE|-`): trailing
 * whitespace is fine, empty text or a value other than an object is
 * refused.  doc as above ("update: --resources `f`: "). */
int kist_resources_parse_json (const char *json, size_t len, const char *doc, const char *path,
                               struct kist_resources **out, struct kist_error **err);

/* A deep copy (NULL: NULL). */
struct kist_resources *kist_resources_dup (const struct kist_resources *r);

void kist_resources_free (struct kist_resources *r);
static inline void
kist_resources_freep (struct kist_resources **r)
{
  kist_resources_free (*r);
  *r = NULL;
}
#define _cleanup_resources_ __attribute__ ((cleanup (kist_resources_freep)))

#endif
