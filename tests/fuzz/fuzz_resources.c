/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fuzz target: the LinuxResources JSON of `kist update --resources FILE|-`
 * (and config.json linux.resources), parsed as cmd_update.c does
 * (kist_resources_parse_json, spec_resources.c), the invariants of the
 * struct it fills, the plan kist_cgroup_plan_build makes of it (and of a
 * kist_resources_dup copy), and for linux.resources.devices the
 * BPF device program kist_cgroup_dev_program generates (checked here for
 * jumps that stay in the program and a final exit, which the kernel
 * verifier requires). */
#include <linux/bpf.h>

#include "cgroup.h"
#include "fuzz.h"
#include "util.h"

#define RESOURCES_MAX (1024 * 1024)

static void
check_program (const struct bpf_insn *insns, size_t n)
{
  FUZZ_ASSERT (n > 0);
  FUZZ_ASSERT (insns[n - 1].code == (BPF_JMP | BPF_EXIT));
  for (size_t i = 0; i < n; i++)
    {
      uint8_t cls = BPF_CLASS (insns[i].code), op = BPF_OP (insns[i].code);
      if (cls != BPF_JMP && cls != BPF_JMP32)
        continue;
      if (op == BPF_EXIT || op == BPF_CALL)
        continue;
      long long target = (long long) i + 1 + insns[i].off;
      FUZZ_ASSERT (target > (long long) i && target < (long long) n);
    }
}

/* The struct's invariants: what spec_resources.c promises the plan. */
static void
check_resources (const struct kist_resources *res)
{
  FUZZ_ASSERT (res->memory.limit >= -1 && res->memory.reservation >= -1);
  FUZZ_ASSERT (res->memory.has_swap || res->memory.swap == 0);
  FUZZ_ASSERT (res->cpu.cpus == NULL || res->cpu.cpus[0] != '\0');
  for (size_t i = 0; i < res->n_hugepages; i++)
    FUZZ_ASSERT (res->hugepages[i].page_size != NULL && res->hugepages[i].page_bytes >= 1024);
  for (size_t i = 0; i < res->n_rdma; i++)
    FUZZ_ASSERT (res->rdma[i].device[0] != '\0' && strpbrk (res->rdma[i].device, " \t\n=") == NULL);
  for (size_t i = 0; i < res->n_unified; i++)
    FUZZ_ASSERT (strchr (res->unified[2 * i], '/') == NULL && res->unified[2 * i + 1] != NULL);
  FUZZ_ASSERT (res->has_devices || res->n_devices == 0);
  for (size_t i = 0; i < res->n_devices; i++)
    {
      const struct kist_cgroup_dev_rule *d = &res->devices[i];
      FUZZ_ASSERT (d->type == 'a' || d->type == 'b' || d->type == 'c');
      FUZZ_ASSERT (d->major >= -1 && d->major <= UINT32_MAX);
      FUZZ_ASSERT (d->minor >= -1 && d->minor <= UINT32_MAX);
      FUZZ_ASSERT (d->access != 0);
    }
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  if (size > RESOURCES_MAX)
    return 0;
  /* As cmd_update.c's read_resources: NUL-terminated text, then
   * kist_resources_parse_json (trailing whitespace stripped, must be an
   * object, the fields typed and checked). */
  char *text = fuzz_cstr (data, size);
  struct kist_resources *res = NULL;
  struct kist_error *e = NULL;
  int r = kist_resources_parse_json (text, strlen (text), "update: --resources: ",
                                     "linux.resources", &res, &e);
  free (text);
  if (r < 0)
    {
      FUZZ_ASSERT (res == NULL && e != NULL);
      fuzz_error_check_free (&e);
      return 0;
    }
  FUZZ_ASSERT (res != NULL && e == NULL);
  check_resources (res);
  /* A copy (kist sandbox's override) plans the same. */
  struct kist_resources *copy = kist_resources_dup (res);
  struct kist_cgroup_plan *plan = NULL, *plan2 = NULL;
  int r2 = kist_cgroup_plan_build (copy, &plan2, &e);
  fuzz_error_check_free (&e);
  kist_resources_free (copy);
  if (kist_cgroup_plan_build (res, &plan, &e) < 0)
    {
      FUZZ_ASSERT (plan == NULL && r2 < 0);
      FUZZ_ASSERT (e != NULL);
      fuzz_error_check_free (&e);
      kist_resources_free (res);
      return 0;
    }
  FUZZ_ASSERT (plan != NULL && e == NULL && r2 == 0 && plan2->n == plan->n);
  kist_cgroup_plan_free (plan2);
  for (size_t i = 0; i < plan->n; i++)
    {
      const struct kist_cgroup_write *w = &plan->w[i];
      FUZZ_ASSERT (w->file != NULL && w->file[0] != '\0');
      FUZZ_ASSERT (strchr (w->file, '/') == NULL);   /* a file of the scope, never a path */
      FUZZ_ASSERT (w->lines != NULL || w->unsupported);
      FUZZ_ASSERT (!w->unsupported || w->reason != NULL);
    }
  if (plan->has_devices)
    {
      struct bpf_insn *insns = NULL;
      size_t n = 0;
      if (kist_cgroup_dev_program (plan->dev, plan->n_dev, &insns, &n, &e) == 0)
        {
          check_program (insns, n);
          free (insns);
        }
      fuzz_error_check_free (&e);
    }
  kist_cgroup_plan_free (plan);
  kist_resources_free (res);
  return 0;
}
