/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fuzz target: the exec process JSON (kist exec --process FILE:
 * kist_process_parse). */
#include "fuzz.h"
#include "spec.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  if (size > KIST_SPEC_MAX_SIZE)
    return 0;
  char *json = fuzz_exact (data, size);
  struct kist_process *p = NULL;
  struct kist_error *e = NULL;
  int r = kist_process_parse (json, size, &p, &e);
  free (json);
  if (r < 0)
    {
      FUZZ_ASSERT (e != NULL);
      FUZZ_ASSERT (p == NULL);   /* exec.c does not free it after a failure */
      fuzz_error_check_free (&e);
      return 0;
    }
  FUZZ_ASSERT (p != NULL && e == NULL);
  FUZZ_ASSERT (p->args && p->args[0]);
  for (size_t i = 0; i < p->n_rlimits; i++)
    FUZZ_ASSERT (p->rlimits[i].type != NULL);
  kist_process_free (p);
  return 0;
}
