/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist state ID: the OCI state JSON. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>

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
  struct kist_state st = { 0 };
  _cleanup_error_ struct kist_error *e = NULL;
  if (kist_state_peek (rootfd, id, &st, &e) < 0)
    {
      kist_state_clear (&st);
      /* A delete removed its state.json or dir while we read (no lock). */
      if (e && e->errnum == ENOENT)
        kist_error_make (err, 0, "container `%s` does not exist", id);
      else if (err)
        {
          *err = e;
          e = NULL;
        }
      return KIST_EXIT_USAGE;
    }
  _cleanup_free_ char *json = kist_state_oci_json (&st, kist_state_status (&st));
  kist_state_clear (&st);
  fputs (json, stdout);
  fputc ('\n', stdout);
  return 0;
}
