/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for runtime/spec_resources.c: linux.resources parsed into
 * struct kist_resources with config.json's path-aware errors, absent versus
 * present fields, the device rules, the update file's checks, the copy, and
 * the plan of a struct filled directly (as `kist update`'s flags and `kist
 * sandbox` do), and sandbox's flags as that struct. */
#define _GNU_SOURCE
#include <check.h>
#include <linux/bpf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup.h"
#include "resources.h"
#include "sandbox.h"
#include "spec.h"
#include "util.h"
#include "unit.h"

#define ACC_ALL (BPF_DEVCG_ACC_MKNOD | BPF_DEVCG_ACC_READ | BPF_DEVCG_ACC_WRITE)

/* A config.json with linux.resources = res (JSON text). */
static char *
config_with (const char *res)
{
  return xasprintf ("{\"ociVersion\":\"1.2.0\",\"root\":{\"path\":\"rootfs\"},"
                    "\"process\":{\"args\":[\"sh\"],\"cwd\":\"/\"},"
                    "\"linux\":{\"resources\":%s}}",
                    res);
}

/* kist_spec_parse of that config: NULL on success (*out kept when out), else
 * the message. */
static char *
spec_msg (const char *res, struct kist_spec **out)
{
  _cleanup_free_ char *json = config_with (res);
  struct kist_spec *s = NULL;
  struct kist_error *err = NULL;
  if (kist_spec_parse (json, strlen (json), &s, &err) == 0)
    {
      ck_assert_ptr_null (err);
      if (out)
        *out = s;
      else
        kist_spec_free (s);
      return NULL;
    }
  ck_assert_ptr_null (s);
  ck_assert_ptr_nonnull (err);
  char *m = xstrdup (err->msg);
  kist_error_free (err);
  return m;
}

static struct kist_resources *
parse_ok (const char *json)
{
  struct kist_resources *r = NULL;
  struct kist_error *err = NULL;
  ck_assert_msg (kist_resources_parse_json (json, strlen (json), "t: ", "linux.resources", &r, &err)
                     == 0,
                 "%s: %s", json, err ? err->msg : "");
  ck_assert_ptr_nonnull (r);
  return r;
}

static const struct
{
  const char *res, *msg;
} bad[] = {
  { "[]", "config.json: linux.resources: expected object" },
  { "{\"memory\":[]}", "config.json: linux.resources.memory: expected object" },
  { "{\"memory\":{\"limit\":\"x\"}}", "config.json: linux.resources.memory.limit: expected an integer" },
  { "{\"memory\":{\"limit\":1.5}}", "config.json: linux.resources.memory.limit: expected an integer" },
  { "{\"memory\":{\"limit\":-5}}",
    "config.json: linux.resources.memory.limit: -5 is invalid (-1: unlimited)" },
  { "{\"memory\":{\"reservation\":-2}}",
    "config.json: linux.resources.memory.reservation: -2 is invalid (-1: unlimited)" },
  { "{\"memory\":{\"swap\":-9223372036854775809}}",
    "config.json: linux.resources.memory.swap: -9223372036854775809 is below the smallest 64-bit "
    "integer" },
  { "{\"memory\":{\"swappiness\":-1}}",
    "config.json: linux.resources.memory.swappiness: expected a non-negative integer, got -1" },
  { "{\"memory\":{\"disableOOMKiller\":\"yes\"}}",
    "config.json: linux.resources.memory.disableOOMKiller: expected boolean" },
  { "{\"memory\":{\"checkBeforeUpdate\":1}}",
    "config.json: linux.resources.memory.checkBeforeUpdate: expected boolean" },
  { "{\"cpu\":{\"shares\":-1}}",
    "config.json: linux.resources.cpu.shares: expected a non-negative integer, got -1" },
  { "{\"cpu\":{\"cpus\":1}}", "config.json: linux.resources.cpu.cpus: expected string" },
  { "{\"pids\":{\"limit\":true}}", "config.json: linux.resources.pids.limit: expected an integer" },
  { "{\"blockIO\":{\"weightDevice\":[{\"major\":8}]}}",
    "config.json: linux.resources.blockIO.weightDevice[0]: major and minor are required (numbers "
    ">= 0)" },
  { "{\"blockIO\":{\"throttleReadBpsDevice\":[{\"major\":8,\"minor\":0,\"rate\":1},"
    "{\"major\":8,\"minor\":0}]}}",
    "config.json: linux.resources.blockIO.throttleReadBpsDevice[1]: major, minor and rate are "
    "required" },
  { "{\"blockIO\":{\"throttleWriteIOPSDevice\":[7]}}",
    "config.json: linux.resources.blockIO.throttleWriteIOPSDevice[0]: expected object" },
  { "{\"hugepageLimits\":[{\"limit\":1}]}",
    "config.json: linux.resources.hugepageLimits[0]: pageSize and limit are required" },
  { "{\"hugepageLimits\":[{\"pageSize\":\"2XB\",\"limit\":1}]}",
    "config.json: linux.resources.hugepageLimits[0].pageSize: `2XB` is not a huge page size like "
    "2MB or 1GB" },
  { "{\"rdma\":{\"mlx 0\":{}}}",
    "config.json: linux.resources.rdma[\"mlx 0\"]: invalid device name (no whitespace or '=')" },
  { "{\"rdma\":{\"mlx0\":{\"hcaHandles\":\"1\"}}}",
    "config.json: linux.resources.rdma.mlx0.hcaHandles: expected an integer" },
  /* config.md: an rdma entry MUST give hcaHandles or hcaObjects. */
  { "{\"rdma\":{\"mlx0\":{}}}",
    "config.json: linux.resources.rdma.mlx0: hcaHandles or hcaObjects is required" },
  /* config.md: a weightDevice entry MUST give weight or leafWeight. */
  { "{\"blockIO\":{\"weightDevice\":[{\"major\":8,\"minor\":0,\"weight\":10},"
    "{\"major\":8,\"minor\":16}]}}",
    "config.json: linux.resources.blockIO.weightDevice[1]: weight or leafWeight is required" },
  { "{\"network\":{\"classID\":\"x\"}}",
    "config.json: linux.resources.network.classID: expected unsigned 32-bit integer" },
  { "{\"unified\":{\"memory.high\":1}}",
    "config.json: linux.resources.unified[\"memory.high\"]: expected string" },
  { "{\"unified\":{\"a/b.c\":\"1\"}}",
    "config.json: linux.resources.unified: key `a/b.c` is not a cgroup file name "
    "(\"controller.file\", no '/' or \"..\")" },
  { "{\"unified\":{\"nodot\":\"1\"}}",
    "config.json: linux.resources.unified: key `nodot` is not a cgroup file name "
    "(\"controller.file\", no '/' or \"..\")" },
  { "{\"unified\":{\"cgroup.procs\":\"1\"}}",
    "config.json: linux.resources.unified: `cgroup.procs` is managed by kist and cannot be set" },
  { "{\"devices\":{}}", "config.json: linux.resources.devices: expected array" },
  { "{\"devices\":[1]}", "config.json: linux.resources.devices[0]: expected object" },
  { "{\"devices\":[{\"type\":\"c\"}]}",
    "config.json: linux.resources.devices[0].allow: required field is missing" },
  { "{\"devices\":[{\"allow\":1}]}", "config.json: linux.resources.devices[0].allow: expected boolean" },
  { "{\"devices\":[{\"allow\":true},{\"allow\":true,\"type\":\"x\"}]}",
    "config.json: linux.resources.devices[1].type: \"x\": expected \"a\", \"c\" or \"b\"" },
  { "{\"devices\":[{\"allow\":true,\"major\":-2}]}",
    "config.json: linux.resources.devices[0].major: -2 is out of range (-1 or absent: any)" },
  { "{\"devices\":[{\"allow\":true,\"minor\":4294967296}]}",
    "config.json: linux.resources.devices[0].minor: 4294967296 is out of range (-1 or absent: any)" },
  { "{\"devices\":[{\"allow\":true,\"access\":\"rwx\"}]}",
    "config.json: linux.resources.devices[0].access: `rwx` is not a combination of r, w and m" },
};

/* Every bad linux.resources fails config loading (kist_spec_parse, before
 * any state exists) with its JSON path, exactly. */
START_TEST (test_errors)
{
  for (size_t i = 0; i < KIST_ARRAY_SIZE (bad); i++)
    {
      _cleanup_free_ char *m = spec_msg (bad[i].res, NULL);
      ck_assert_msg (m != NULL, "%s accepted", bad[i].res);
      ck_assert_str_eq (m, bad[i].msg);
    }
  /* What needs two fields is the plan's (kist_cgroup_plan_check): parsing
   * accepts it. */
  ck_assert_ptr_null (spec_msg ("{\"memory\":{\"limit\":100,\"swap\":50}}", NULL));
}
END_TEST

/* Absent, null, zero and present. */
START_TEST (test_fields)
{
  struct kist_spec *s = NULL;
  ck_assert_ptr_null (spec_msg ("null", &s));
  ck_assert_ptr_null (s->linux_->resources);
  kist_spec_free (s);

  struct kist_resources *r = parse_ok ("{\"memory\":null,\"devices\":null,\"cpu\":{\"cpus\":\"\"}}");
  ck_assert (!r->has_devices);
  ck_assert (!r->memory.has_swap && !r->memory.has_swappiness);
  ck_assert (!r->memory.check_before_update && !r->memory.has_check_before_update);
  ck_assert_ptr_null (r->cpu.cpus);
  kist_resources_free (r);

  /* checkBeforeUpdate: kept (for `kist update`), copied, and it plans no write. */
  r = parse_ok ("{\"memory\":{\"limit\":1048576,\"checkBeforeUpdate\":true}}");
  ck_assert (r->memory.check_before_update && r->memory.has_check_before_update);
  {
    struct kist_resources *c = kist_resources_dup (r);
    ck_assert (c->memory.check_before_update);
    struct kist_cgroup_plan *p = NULL;
    struct kist_error *e = NULL;
    ck_assert_int_eq (kist_cgroup_plan_build (c, &p, &e), 0);
    ck_assert_uint_eq (p->n, 1);
    ck_assert_str_eq (p->w[0].file, "memory.max");
    kist_cgroup_plan_free (p);
    kist_resources_free (c);
  }
  kist_resources_free (r);
  r = parse_ok ("{\"memory\":{\"checkBeforeUpdate\":false}}");
  ck_assert (!r->memory.check_before_update && r->memory.has_check_before_update);
  kist_resources_free (r);
  /* null is absent; the last duplicate counts. */
  r = parse_ok ("{\"memory\":{\"checkBeforeUpdate\":null}}");
  ck_assert (!r->memory.check_before_update && !r->memory.has_check_before_update);
  kist_resources_free (r);
  r = parse_ok ("{\"memory\":{\"checkBeforeUpdate\":null,\"checkBeforeUpdate\":true}}");
  ck_assert (r->memory.check_before_update && r->memory.has_check_before_update);
  kist_resources_free (r);

  r = parse_ok ("{\"memory\":{\"limit\":-1,\"swap\":0,\"swappiness\":0,\"disableOOMKiller\":true},"
                "\"cpu\":{\"shares\":1024,\"quota\":-1,\"period\":100000,\"cpus\":\"0-1\"},"
                "\"pids\":{\"limit\":5,\"limit\":7},\"devices\":[],"
                "\"rdma\":{\"mlx0\":{\"hcaHandles\":3}},\"network\":{\"priorities\":[]},"
                "\"blockIO\":{\"weight\":500,\"throttleWriteBpsDevice\":[{\"major\":8,\"minor\":16,"
                "\"rate\":0}]},"
                "\"hugepageLimits\":[{\"pageSize\":\"1GB\",\"limit\":0}],"
                "\"unified\":{\"memory.high\":\"1G\"}}  \n");
  ck_assert_int_eq (r->memory.limit, -1);
  ck_assert (r->memory.has_swap && r->memory.swap == 0);
  ck_assert (r->memory.has_swappiness && r->memory.disable_oom_killer);
  ck_assert_uint_eq (r->cpu.shares, 1024);
  ck_assert_int_eq (r->cpu.quota, -1);
  ck_assert_str_eq (r->cpu.cpus, "0-1");
  ck_assert_int_eq (r->pids_limit, 7); /* the last duplicate wins, as everywhere in config.json */
  ck_assert (r->has_devices);
  ck_assert_uint_eq (r->n_devices, 0);
  ck_assert_uint_eq (r->n_rdma, 1);
  ck_assert (r->rdma[0].has_hca_handles && !r->rdma[0].has_hca_objects);
  ck_assert (r->has_network);
  ck_assert_uint_eq (r->blockio.n_throttle[KIST_RES_THROTTLE_WRITE_BPS], 1);
  ck_assert_int_eq (r->blockio.throttle[KIST_RES_THROTTLE_WRITE_BPS][0].minor, 16);
  ck_assert_uint_eq (r->n_hugepages, 1);
  ck_assert_uint_eq (r->hugepages[0].page_bytes, 1ull << 30);
  ck_assert_uint_eq (r->n_unified, 1);
  ck_assert_str_eq (r->unified[1], "1G");

  /* A copy plans the same writes. */
  struct kist_resources *c = kist_resources_dup (r);
  struct kist_cgroup_plan *p1 = NULL, *p2 = NULL;
  struct kist_error *err = NULL;
  ck_assert_int_eq (kist_cgroup_plan_build (r, &p1, &err), 0);
  kist_resources_free (r);
  ck_assert_int_eq (kist_cgroup_plan_build (c, &p2, &err), 0);
  kist_resources_free (c);
  ck_assert_uint_eq (p1->n, p2->n);
  for (size_t i = 0; i < p1->n; i++)
    {
      ck_assert_str_eq (p1->w[i].file, p2->w[i].file);
      ck_assert_str_eq (p1->w[i].requested ? p1->w[i].requested : "",
                        p2->w[i].requested ? p2->w[i].requested : "");
    }
  ck_assert (p1->has_devices && p1->n_dev == 0);
  kist_cgroup_plan_free (p1);
  kist_cgroup_plan_free (p2);

  /* uint64 values above INT64_MAX are kept as INT64_MAX. */
  r = parse_ok ("{\"memory\":{\"limit\":18446744073709551615},\"cpu\":{\"period\":"
                "99999999999999999999}}");
  ck_assert_int_eq (r->memory.limit, INT64_MAX);
  ck_assert_uint_eq (r->cpu.period, INT64_MAX);
  kist_resources_free (r);
  ck_assert_ptr_null (kist_resources_dup (NULL));
}
END_TEST

START_TEST (test_devices)
{
  struct kist_resources *r
      = parse_ok ("{\"devices\":[{\"allow\":false,\"access\":\"rwm\"},"
                  "{\"allow\":true,\"type\":\"c\",\"major\":1,\"minor\":3,\"access\":\"rw\"},"
                  "{\"allow\":true,\"type\":\"b\",\"major\":-1,\"minor\":null,\"access\":\"\"},"
                  "{\"allow\":true,\"major\":4294967295,\"access\":\"m\"}]}");
  ck_assert (r->has_devices);
  ck_assert_uint_eq (r->n_devices, 4);
  ck_assert (!r->devices[0].allow);
  ck_assert_int_eq (r->devices[0].type, 'a');
  ck_assert_int_eq (r->devices[0].major, -1);
  ck_assert_int_eq (r->devices[0].minor, -1);
  ck_assert_uint_eq (r->devices[0].access, ACC_ALL);
  ck_assert (r->devices[1].allow);
  ck_assert_int_eq (r->devices[1].type, 'c');
  ck_assert_int_eq (r->devices[1].major, 1);
  ck_assert_int_eq (r->devices[1].minor, 3);
  ck_assert_uint_eq (r->devices[1].access, BPF_DEVCG_ACC_READ | BPF_DEVCG_ACC_WRITE);
  ck_assert_int_eq (r->devices[2].type, 'b');
  ck_assert_int_eq (r->devices[2].minor, -1);
  ck_assert_uint_eq (r->devices[2].access, ACC_ALL); /* "": everything */
  ck_assert_int_eq (r->devices[3].major, 4294967295);
  ck_assert_uint_eq (r->devices[3].access, BPF_DEVCG_ACC_MKNOD);
  kist_resources_free (r);
}
END_TEST

/* `kist update --resources FILE|-`: the document's own errors, under the
 * given prefix. */
START_TEST (test_update_file)
{
  const struct
  {
    const char *json, *msg;
  } cases[] = {
    { " \n", "update: --resources `f`: the document is empty: expected an OCI LinuxResources JSON "
             "object: Invalid argument" },
    { "[1]", "update: --resources `f`: expected an OCI LinuxResources JSON object (e.g. "
             "{\"memory\": {\"limit\": 67108864}}): Invalid argument" },
    { "{\"pids\":{\"limit\":\"x\"}}",
      "update: --resources `f`: linux.resources.pids.limit: expected an integer" },
    { "{\"memory\":{\"limit\":-3}}",
      "update: --resources `f`: linux.resources.memory.limit: -3 is invalid (-1: unlimited)" },
  };
  for (size_t i = 0; i < KIST_ARRAY_SIZE (cases); i++)
    {
      struct kist_resources *r = NULL;
      struct kist_error *err = NULL;
      ck_assert_int_lt (kist_resources_parse_json (cases[i].json, strlen (cases[i].json),
                                                   "update: --resources `f`: ", "linux.resources",
                                                   &r, &err),
                        0);
      ck_assert_ptr_null (r);
      ck_assert_str_eq (err->msg, cases[i].msg);
      kist_error_free (err);
    }
  struct kist_resources *r = NULL;
  struct kist_error *err = NULL;
  ck_assert_int_lt (kist_resources_parse_json ("{", 1, "update: x: ", "linux.resources", &r, &err),
                    0);
  ck_assert_msg (strncmp (err->msg, "update: x: malformed JSON", 25) == 0, "%s", err->msg);
  kist_error_free (err);
}
END_TEST

/* A struct filled directly (update's flags, sandbox's --memory/--pids/--cpus)
 * plans as the same JSON would, and the plan still checks what needs several
 * fields. */
START_TEST (test_filled)
{
  struct kist_resources r = { 0 };
  struct kist_cgroup_plan *p = NULL;
  struct kist_error *err = NULL;
  r.memory.limit = 67108864;
  r.memory.has_swap = true;
  r.memory.swap = -1;
  r.cpu.quota = 50000;
  r.cpu.period = 100000;
  r.pids_limit = 20;
  ck_assert_int_eq (kist_cgroup_plan_build (&r, &p, &err), 0);
  ck_assert_uint_eq (p->n, 4);
  ck_assert_str_eq (p->w[0].file, "memory.max");
  ck_assert_str_eq (p->w[0].lines[0], "67108864");
  ck_assert_str_eq (p->w[1].file, "memory.swap.max");
  ck_assert_str_eq (p->w[1].lines[0], "max");
  ck_assert_str_eq (p->w[2].lines[0], "50000 100000");
  ck_assert_str_eq (p->w[3].lines[0], "20");
  ck_assert (!p->has_devices);
  kist_cgroup_plan_free (p);

  r.memory.swap = 1024; /* below the limit: OCI swap is memory+swap */
  ck_assert_int_lt (kist_cgroup_plan_build (&r, &p, &err), 0);
  ck_assert_ptr_null (p);
  ck_assert_msg (strstr (err->msg, "linux.resources.memory.swap (1024) must be >= memory.limit")
                     != NULL,
                 "%s", err->msg);
  kist_error_free (err);
  err = NULL;

  /* Nothing set: no writes. */
  struct kist_resources none = { 0 };
  ck_assert_int_eq (kist_cgroup_plan_build (&none, &p, &err), 0);
  ck_assert_uint_eq (p->n, 0);
  kist_cgroup_plan_free (p);
}
END_TEST

/* kist sandbox --memory/--pids/--cpus: the struct, not config JSON. */
START_TEST (test_sandbox)
{
  struct kist_sandbox_opts o;
  kist_sandbox_opts_init (&o);
  ck_assert_ptr_null (kist_sandbox_resources (&o));
  o.has_memory = true;
  o.memory = 33554432;
  o.has_cpus = true;
  o.cpus = 0.5;
  o.has_pids = true;
  o.pids = 64;
  struct kist_resources *r = kist_sandbox_resources (&o);
  ck_assert_int_eq (r->memory.limit, 33554432);
  ck_assert (!r->memory.has_swap);
  ck_assert_int_eq (r->cpu.quota, 50000);
  ck_assert_uint_eq (r->cpu.period, 100000);
  ck_assert_int_eq (r->pids_limit, 64);
  kist_resources_free (r);
  o.has_memory = o.has_pids = false;
  o.cpus = 0.001; /* the smallest quota the kernel takes */
  r = kist_sandbox_resources (&o);
  ck_assert_int_eq (r->cpu.quota, 1000);
  ck_assert_int_eq (r->memory.limit, 0);
  ck_assert_int_eq (r->pids_limit, 0);
  kist_resources_free (r);
  kist_sandbox_opts_clear (&o);
}
END_TEST

static Suite *
resources_suite (void)
{
  Suite *s = suite_create ("resources");
  TCase *tc = tcase_create ("core");
  tcase_add_test (tc, test_errors);
  tcase_add_test (tc, test_fields);
  tcase_add_test (tc, test_devices);
  tcase_add_test (tc, test_update_file);
  tcase_add_test (tc, test_filled);
  tcase_add_test (tc, test_sandbox);
  suite_add_tcase (s, tc);
  return s;
}

int
main (void)
{
  return kist_unit_run (resources_suite ());
}
