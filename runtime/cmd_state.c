/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist state ID: the OCI state JSON. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "json.h"
#include "report.h"
#include "util.h"

/* The layers the container asked for and runs without (allowed to
 * degrade), from its stored report, as a JSON array of names; NULL when
 * there are none or no report. */
static char *
degraded_field (int rootfd, const char *id)
{
  _cleanup_free_ char *path = xasprintf ("%s/report.json", id), *text = NULL;
  size_t len = 0;
  _cleanup_error_ struct kist_error *e = NULL;
  if (kist_read_file_at (rootfd, path, 16u << 20, &text, &len, &e) < 0)
    return NULL;
  _cleanup_report_ struct kist_report *r = kist_report_from_json (text, len, &e);
  if (r == NULL)
    return NULL;
  _cleanup_yajl_gen_ yajl_gen g = kist_json_gen_new (false, false);
  size_t n = 0;
  yajl_gen_array_open (g);
  for (size_t i = 0; i < r->n_layers; i++)
    if (r->layers[i].requested && !r->layers[i].applied)
      {
        kist_json_gen_str_lossy (g, r->layers[i].name);
        n++;
      }
  yajl_gen_array_close (g);
  return n ? kist_json_gen_take (g) : NULL;
}

int
kist_cmd_state (const struct kist_globals *g, int argc, char **argv, struct kist_error **err)
{
  const char *id = NULL;
  if (kist_cmd_one_id ("state", argc, argv, 1, &id, err) < 0)
    return KIST_EXIT_USAGE;
  if (kist_id_validate (id, err) < 0)
    return KIST_EXIT_USAGE;
  _cleanup_close_ int rootfd = kist_cmd_open_root (g, err);
  if (rootfd < 0)
    return KIST_EXIT_USAGE;
  /* Without the lock (as runc): a create in progress holds it for as long
   * as it takes, and its intent record already answers "creating". */
  _cleanup_free_ char *json = NULL;
  if (kist_container_state_json (rootfd, id, &json, err) < 0)
    return KIST_EXIT_USAGE;
  _cleanup_free_ char *degraded = degraded_field (rootfd, id);
  char *end = degraded ? strrchr (json, '}') : NULL;
  if (end)
    {
      /* The OCI state plus one field of kist's own, before the closing brace. */
      while (end > json && (end[-1] == '\n' || end[-1] == ' '))
        end--;
      fwrite (json, 1, (size_t) (end - json), stdout);
      fprintf (stdout, ",\n  \"degraded\": %s\n}\n", degraded);
      return 0;
    }
  fputs (json, stdout);
  fputc ('\n', stdout);
  return 0;
}
