/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist delete [--force] ID */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>

#include "cmd.h"
#include "util.h"

int
kist_cmd_delete (const struct kist_globals *g, int argc, char **argv, struct kist_error **err)
{
  bool force = false;
  const struct kist_cmd_opt opts[] = { { "force", 'f', &force, NULL, NULL } };
  const char *id = NULL;
  int r = kist_cmd_id_options ("delete", argc, argv, opts, KIST_ARRAY_SIZE (opts), &id, err);
  if (r < 0)
    return r == KIST_CMD_HELPED ? 0 : KIST_EXIT_USAGE;
  _cleanup_close_ int rootfd = kist_cmd_open_root (g, err);
  if (rootfd < 0)
    return KIST_EXIT_USAGE;
  if (kist_container_delete (rootfd, id, force, err) < 0)
    return KIST_EXIT_USAGE;
  return 0;
}
