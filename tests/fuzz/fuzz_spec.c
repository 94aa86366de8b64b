/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fuzz target: config.json (kist_spec_parse), then what create does next with
 * the parsed config without touching the system: the seccomp choice and
 * profile parse (linux.seccomp), the linux.resources plan and the
 * cgroupsPath resolution. */
#include <stdbool.h>

#include <yajl/yajl_tree.h>

#include "cgroup.h"
#include "fuzz.h"
#include "seccomp.h"
#include "spec.h"
#include "util.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  if (size > KIST_SPEC_MAX_SIZE)
    return 0;
  char *json = fuzz_exact (data, size);   /* "need not be NUL-terminated" */
  struct kist_spec *s = NULL;
  struct kist_error *e = NULL;
  int r = kist_spec_parse (json, size, &s, &e);
  free (json);
  if (r < 0)
    {
      FUZZ_ASSERT (s == NULL);
      FUZZ_ASSERT (e != NULL);
      fuzz_error_check_free (&e);
      return 0;
    }
  FUZZ_ASSERT (s != NULL && e == NULL);
  if (s->process)
    {
      FUZZ_ASSERT (s->process->args && s->process->args[0]);
      FUZZ_ASSERT (s->process->cwd && s->process->cwd[0] == '/');
    }
  for (size_t i = 0; i < s->n_mounts; i++)
    FUZZ_ASSERT (s->mounts[i].destination != NULL);

  const char *what = NULL;
  if (kist_seccomp_requested (s, &what))
    FUZZ_ASSERT (what != NULL);
  if (s->linux_ && s->linux_->seccomp && !YAJL_IS_NULL (s->linux_->seccomp))
    {
      struct kist_seccomp_env env = { .kernel = "6.1.0" };
      if (s->process && s->process->capabilities)
        env.bounding = s->process->capabilities->bounding;
      struct kist_seccomp_profile *p = NULL;
      if (kist_seccomp_profile_parse (s->linux_->seccomp, "config.json: linux.seccomp.", &env,
                                      &p, &e)
          == 0)
        {
          size_t len = 0;
          free (kist_seccomp_canonical (p, &len));
          kist_seccomp_profile_free (p);
        }
      fuzz_error_check_free (&e);
    }
  if (s->linux_)
    {
      struct kist_cgroup_plan *plan = NULL;
      if (kist_cgroup_plan_build (s->linux_->resources, &plan, &e) == 0)
        kist_cgroup_plan_free (plan);
      fuzz_error_check_free (&e);
      char *rel = NULL;
      if (kist_cgroup_resolve_path (s->linux_->cgroups_path, "user.slice/session-1.scope", "c1",
                                    &rel, &e)
          == 0)
        free (rel);
      fuzz_error_check_free (&e);
    }
  kist_spec_free (s);
  return 0;
}
