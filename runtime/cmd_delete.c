/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist delete [--force] ID */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>

#include "cmd.h"
#include "util.h"

/* As runc, `delete` without --force removes a created container (its init
 * waits for `start` and never ran the container's code): it is killed and
 * removed, exit 0.  Running and paused ones still need --force.  runc reads
 * the status before it takes its lock too; a `start` between this read and
 * the delete's lock makes the delete kill a container that just started. */
static bool
created_not_started (int rootfd, const char *id)
{
  struct kist_state st = { 0 };
  _cleanup_error_ struct kist_error *e = NULL;
  bool created = kist_state_peek (rootfd, id, &st, &e) == 0 && !st.creating
                 && kist_state_status (&st) == KIST_STATUS_CREATED;
  kist_state_clear (&st);
  return created;
}

int
kist_cmd_delete (const struct kist_globals *g, int argc, char **argv, struct kist_error **err)
{
  static const struct option opts[] = { { "force", no_argument, NULL, 'f' },
                                        { "help", no_argument, NULL, 'h' },
                                        { NULL, 0, NULL, 0 } };
  bool force = false;
  int c;
  opterr = 0;
  while ((c = getopt_long (argc, argv, "+fh", opts, NULL)) != -1)
    {
      if (c == 'h')
        return kist_cmd_help ("delete");
      if (c != 'f')
        {
          kist_error_make (err, EINVAL, "delete: unknown option `%s`", argv[optind - 1]);
          return KIST_EXIT_USAGE;
        }
      force = true;
    }
  const char *id = NULL;
  if (kist_cmd_one_id ("delete", argc, argv, optind, &id, err) < 0)
    return KIST_EXIT_USAGE;
  _cleanup_close_ int rootfd = kist_cmd_open_root (g, err);
  if (rootfd < 0)
    return KIST_EXIT_USAGE;
  if (!force && created_not_started (rootfd, id))
    force = true;
  if (kist_container_delete (rootfd, id, force, err) < 0)
    return KIST_EXIT_USAGE;
  return 0;
}
