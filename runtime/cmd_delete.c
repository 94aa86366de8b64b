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
  if (kist_container_delete (rootfd, id, force, err) < 0)
    return KIST_EXIT_USAGE;
  return 0;
}
