/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fuzz target: the LinuxResources JSON of `kist update --resources FILE|-`
 * (and config.json linux.resources), parsed as cmd_update.c does: the plan
 * kist_cgroup_plan_build makes of it, and for linux.resources.devices the
 * BPF device program kist_cgroup_dev_program generates (checked here for
 * jumps that stay in the program and a final exit, which the kernel
 * verifier requires). */
#include <linux/bpf.h>

#include <yajl/yajl_tree.h>

#include "cgroup.h"
#include "fuzz.h"
#include "json.h"
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

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  if (size > RESOURCES_MAX)
    return 0;
  /* As cmd_update.c's parse_resources: NUL-terminated text, trailing
   * whitespace stripped, kist_json_parse, must be a JSON object. */
  char *text = fuzz_cstr (data, size);
  kist_rstrip (text);
  yajl_val v = NULL;
  struct kist_error *e = NULL;
  int r = text[0] ? kist_json_parse (text, strlen (text), "update: --resources: ", &v, &e) : -1;
  free (text);
  if (r < 0)
    {
      FUZZ_ASSERT (v == NULL);
      fuzz_error_check_free (&e);
      return 0;
    }
  if (!YAJL_IS_OBJECT (v))
    {
      yajl_tree_free (v);
      return 0;
    }
  struct kist_cgroup_plan *plan = NULL;
  if (kist_cgroup_plan_build (v, &plan, &e) < 0)
    {
      FUZZ_ASSERT (plan == NULL);
      FUZZ_ASSERT (e != NULL);
      fuzz_error_check_free (&e);
      yajl_tree_free (v);
      return 0;
    }
  FUZZ_ASSERT (plan != NULL && e == NULL);
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
  yajl_tree_free (v);
  return 0;
}
