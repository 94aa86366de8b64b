/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist create [--bundle DIR] [--pid-file F] [--report F|-] [--report-fd N] [--allow-degraded L] ID
 * (kist create --help lists every flag). */
#define _GNU_SOURCE
#include "cmd.h"
#include "util.h"

int
kist_cmd_create (const struct kist_globals *g, int argc, char **argv, struct kist_error **err)
{
  struct kist_create_opts o = { .operation = "create" };
  bool detach = false, keep = false;
  _cleanup_free_ char *policy = NULL;
  if (kist_parse_create_flags (g, argc, argv, &o, false, &detach, &keep, &policy, err) < 0)
    return KIST_EXIT_USAGE;
  _cleanup_report_ struct kist_report *r = NULL;
  pid_t pid = 0;
  if (kist_create (g, &o, &pid, &r, err) < 0)
    return kist_error_exit_status (*err);
  return 0;
}
