/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fuzz target: the report JSON readers: kist_report_from_json (the stored
 * report.json that `kist start` and `kist update` extend) and
 * kist_report_json_to_text (`kist report --format text`).  A report that
 * reads is written again (kist_report_to_json) and must read back with the
 * same id, operation and entries. */
#include "fuzz.h"
#include "report.h"

#define REPORT_MAX (16u * 1024 * 1024)

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  if (size > REPORT_MAX)
    return 0;
  char *json = fuzz_exact (data, size);
  struct kist_error *e = NULL;
  char *text = kist_report_json_to_text (json, size, &e);
  FUZZ_ASSERT ((text == NULL) == (e != NULL));
  free (text);
  fuzz_error_check_free (&e);

  struct kist_report *r = kist_report_from_json (json, size, &e);
  free (json);
  if (r == NULL)
    {
      FUZZ_ASSERT (e != NULL);
      fuzz_error_check_free (&e);
      return 0;
    }
  FUZZ_ASSERT (e == NULL);
  char *out = kist_report_to_json (r, size % 2);
  FUZZ_ASSERT (out != NULL);
  struct kist_report *back = kist_report_from_json (out, strlen (out), &e);
  if (back == NULL)
    {
      fprintf (stderr, "kist_report_to_json output does not read back: %s\n%s\n",
               e && e->msg ? e->msg : "?", out);
      abort ();
    }
  FUZZ_ASSERT (back->n_layers == r->n_layers);
  for (size_t i = 0; i < r->n_layers; i++)
    {
      FUZZ_ASSERT (back->layers[i].applied == r->layers[i].applied);
      FUZZ_ASSERT ((back->layers[i].requested == NULL) == (r->layers[i].requested == NULL));
    }
  text = kist_report_json_to_text (out, strlen (out), &e);
  FUZZ_ASSERT (text != NULL);
  free (text);
  fuzz_error_check_free (&e);
  kist_report_free (back);
  free (out);
  kist_report_free (r);
  return 0;
}
