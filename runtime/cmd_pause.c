/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist pause ID, kist resume ID: freeze and thaw the container's cgroup
 * (kist_container_pause / kist_container_resume, lifecycle.c). */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>

#include "cmd.h"
#include "util.h"

static int
pause_or_resume (const struct kist_globals *g, int argc, char **argv, bool freeze,
                 struct kist_error **err)
{
  const char *cmd = freeze ? "pause" : "resume";
  const char *id = NULL;
  int r = kist_cmd_id_options (cmd, argc, argv, NULL, 0, &id, err);
  if (r < 0)
    return r == KIST_CMD_HELPED ? 0 : KIST_EXIT_USAGE;
  _cleanup_close_ int rootfd = kist_cmd_open_root (g, err);
  if (rootfd < 0)
    return KIST_EXIT_USAGE;
  if ((freeze ? kist_container_pause (rootfd, id, err) : kist_container_resume (rootfd, id, err))
      < 0)
    return KIST_EXIT_USAGE;
  return 0;
}

int
kist_cmd_pause (const struct kist_globals *g, int argc, char **argv, struct kist_error **err)
{
  return pause_or_resume (g, argc, argv, true, err);
}

int
kist_cmd_resume (const struct kist_globals *g, int argc, char **argv, struct kist_error **err)
{
  return pause_or_resume (g, argc, argv, false, err);
}
