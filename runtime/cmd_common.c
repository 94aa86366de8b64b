/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: flag parsing shared by the subcommands. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "util.h"

static int
usage_error (struct kist_error **err, const char *fmt, const char *arg)
{
  kist_error_make (err, EINVAL, fmt, arg);
  (*err)->status = KIST_EXIT_USAGE;
  return -1;
}

int
kist_parse_create_flags (int argc, char **argv, struct kist_create_opts *o, bool run, bool *detach,
                         bool *keep, struct kist_error **err)
{
  enum
  {
    O_PIDFILE = 256, O_CONSOLE, O_PRESERVE, O_NOPIVOT, O_NOKEYRING, O_REPORT, O_REPORTFD, O_DEGRADE,
    O_KEEP, O_NOSUBREAPER
  };
  static const struct option opts[] = {
    { "bundle", required_argument, NULL, 'b' },
    { "pid-file", required_argument, NULL, O_PIDFILE },
    { "console-socket", required_argument, NULL, O_CONSOLE },
    { "preserve-fds", required_argument, NULL, O_PRESERVE },
    { "no-pivot", no_argument, NULL, O_NOPIVOT },
    { "no-new-keyring", no_argument, NULL, O_NOKEYRING },
    { "no-subreaper", no_argument, NULL, O_NOSUBREAPER },
    { "report", required_argument, NULL, O_REPORT },
    { "report-fd", required_argument, NULL, O_REPORTFD },
    { "allow-degraded", required_argument, NULL, O_DEGRADE },
    { "detach", no_argument, NULL, 'd' },
    { "keep", no_argument, NULL, O_KEEP },
    { NULL, 0, NULL, 0 },
  };
  int c, n;
  o->report_fd = -1;
  opterr = 0;
  while ((c = getopt_long (argc, argv, run ? "+b:d" : "+b:", opts, NULL)) != -1)
    switch (c)
      {
      case 'b': o->bundle = optarg; break;
      case O_PIDFILE: o->pid_file = optarg; break;
      case O_CONSOLE: o->console_socket = optarg; break;
      case O_PRESERVE:
        if (kist_parse_int (optarg, &n) < 0 || n < 0)
          return usage_error (err, "--preserve-fds `%s`: expected a number >= 0", optarg);
        o->preserve_fds = n;
        break;
      case O_NOPIVOT: o->no_pivot = true; break;
      case O_NOKEYRING: o->no_new_keyring = true; break;
      case O_NOSUBREAPER: break;
      case O_REPORT: o->report_path = optarg; break;
      case O_REPORTFD:
        if (kist_parse_int (optarg, &n) < 0 || n < 0)
          return usage_error (err, "--report-fd `%s`: expected a file descriptor number", optarg);
        o->report_fd = n;
        break;
      case O_DEGRADE: o->allow_degraded = optarg; break;
      case 'd':
        if (!run)
          return usage_error (err, "unknown option `%s`", "--detach");
        *detach = true;
        break;
      case O_KEEP:
        if (!run)
          return usage_error (err, "unknown option `%s`", "--keep");
        *keep = true;
        break;
      default:
        return usage_error (err, "unknown option or missing value: `%s`", argv[optind - 1]);
      }
  return optind;
}

int
kist_cmd_one_id (const char *cmd, int argc, char **argv, int optind_, const char **id,
                 struct kist_error **err)
{
  if (argc - optind_ != 1)
    {
      kist_error_make (err, EINVAL, "`kist %s` takes exactly one container id (got %d arguments)", cmd,
                       argc - optind_);
      (*err)->status = KIST_EXIT_USAGE;
      return -1;
    }
  *id = argv[optind_];
  return 0;
}

int
kist_cmd_open_root (const struct kist_globals *g, struct kist_error **err)
{
  _cleanup_free_ char *resolved = NULL;
  return kist_state_root_open (g->root, &resolved, err);
}
