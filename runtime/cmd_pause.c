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
  static const struct option opts[] = { { "help", no_argument, NULL, 'h' },
                                        { NULL, 0, NULL, 0 } };
  const char *cmd = freeze ? "pause" : "resume";
  opterr = 0;
  int c = getopt_long (argc, argv, "+h", opts, NULL);
  if (c == 'h')
    return kist_cmd_help (cmd);
  if (c != -1)
    {
      kist_error_make (err, EINVAL, "%s: unknown option `%s` (usage: kist %s ID)", cmd,
                       argv[optind - 1], cmd);
      return KIST_EXIT_USAGE;
    }
  const char *id = NULL;
  if (kist_cmd_one_id (cmd, argc, argv, optind, &id, err) < 0 || kist_id_validate (id, err) < 0)
    return KIST_EXIT_USAGE;
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
