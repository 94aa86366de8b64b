/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist state ID: the OCI state JSON. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "util.h"

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
  _cleanup_free_ char *degraded = kist_container_degraded_json (rootfd, id);
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
