/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist start ID */
#define _GNU_SOURCE
#include <getopt.h>

#include "cmd.h"
#include "util.h"

int
kist_cmd_start (const struct kist_globals *g, int argc, char **argv, struct kist_error **err)
{
  const char *id = NULL;
  optind = 1;
  if (kist_cmd_one_id ("start", argc, argv, 1, &id, err) < 0)
    return KIST_EXIT_USAGE;
  _cleanup_close_ int rootfd = kist_cmd_open_root (g, err);
  if (rootfd < 0)
    return KIST_EXIT_FAILURE;
  if (kist_container_start (rootfd, id, NULL, NULL, NULL, NULL, err) < 0)
    return kist_error_exit_status (*err);
  return 0;
}
