/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist kill [--all] ID [SIGNAL] */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <signal.h>

#include "cmd.h"
#include "util.h"

int
kist_cmd_kill (const struct kist_globals *g, int argc, char **argv, struct kist_error **err)
{
  static const struct option opts[] = { { "all", no_argument, NULL, 'a' },
                                        { "help", no_argument, NULL, 'h' },
                                        { NULL, 0, NULL, 0 } };
  bool all = false;
  int c;
  opterr = 0;
  while ((c = getopt_long (argc, argv, "+ah", opts, NULL)) != -1)
    {
      if (c == 'h')
        return kist_cmd_help ("kill");
      if (c != 'a')
        {
          kist_error_make (err, EINVAL, "kill: unknown option `%s`", argv[optind - 1]);
          return KIST_EXIT_USAGE;
        }
      all = true;
    }
  if (argc - optind < 1 || argc - optind > 2)
    {
      kist_error_make (err, EINVAL, "usage: kist kill [--all] ID [SIGNAL]");
      return KIST_EXIT_USAGE;
    }
  const char *id = argv[optind];
  int sig = SIGTERM;
  if (argc - optind == 2 && (sig = kist_parse_signal (argv[optind + 1])) < 0)
    {
      kist_error_make (err, EINVAL,
                       "kill: unknown signal `%s`: give a number from 0 to %d or a name with or "
                       "without SIG (TERM, SIGKILL, RTMIN+1, ...)",
                       argv[optind + 1], SIGRTMAX);
      return KIST_EXIT_USAGE;
    }
  _cleanup_close_ int rootfd = kist_cmd_open_root (g, err);
  if (rootfd < 0 || kist_container_kill (rootfd, id, sig, all, err) < 0)
    return KIST_EXIT_USAGE;
  return 0;
}
