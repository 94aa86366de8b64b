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
  bool all = false;
  const struct kist_cmd_opt opts[] = { { "all", 'a', &all, NULL, NULL } };
  int optind_ = kist_cmd_options ("kill", argc, argv, opts, KIST_ARRAY_SIZE (opts), err);
  if (optind_ < 0)
    return optind_ == KIST_CMD_HELPED ? 0 : KIST_EXIT_USAGE;
  if (argc - optind_ < 1 || argc - optind_ > 2)
    {
      kist_error_make (err, EINVAL, "usage: kist kill [--all] ID [SIGNAL]");
      return KIST_EXIT_USAGE;
    }
  const char *id = argv[optind_];
  int sig = SIGTERM;
  if (argc - optind_ == 2 && (sig = kist_parse_signal (argv[optind_ + 1])) < 0)
    {
      kist_error_make (err, EINVAL,
                       "kill: unknown signal `%s`: give a number from 0 to %d or a name with or "
                       "without SIG (TERM, SIGKILL, RTMIN+1, ...)",
                       argv[optind_ + 1], SIGRTMAX);
      return KIST_EXIT_USAGE;
    }
  _cleanup_close_ int rootfd = kist_cmd_open_root (g, err);
  if (rootfd < 0 || kist_container_kill (rootfd, id, sig, all, err) < 0)
    return KIST_EXIT_USAGE;
  return 0;
}
