/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist spec [--bundle DIR] [--rootless]: write a default config.json. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "util.h"

int
kist_cmd_spec (const struct kist_globals *g, int argc, char **argv, struct kist_error **err)
{
  static const struct option opts[] = { { "bundle", required_argument, NULL, 'b' },
                                        { "rootless", no_argument, NULL, 'r' },
                                        { "help", no_argument, NULL, 'h' },
                                        { NULL, 0, NULL, 0 } };
  const char *bundle = ".";
  bool rootless = false;
  int c;
  opterr = 0;
  while ((c = getopt_long (argc, argv, "+b:h", opts, NULL)) != -1)
    switch (c)
      {
      case 'h': return kist_cmd_help ("spec");
      case 'b': bundle = optarg; break;
      case 'r': rootless = true; break;
      default:
        kist_error_make (err, EINVAL, "spec: unknown option `%s`", argv[optind - 1]);
        return KIST_EXIT_USAGE;
      }
  if (optind != argc)
    {
      kist_error_make (err, EINVAL, "spec: unexpected argument `%s`", argv[optind]);
      return KIST_EXIT_USAGE;
    }
  _cleanup_close_ int dfd = open (bundle, O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0)
    {
      kist_error_make (err, errno, "spec: bundle directory `%s`", bundle);
      return KIST_EXIT_USAGE;
    }
  _cleanup_free_ char *json = kist_spec_default_json (rootless);
  _cleanup_close_ int fd
      = openat (dfd, "config.json", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0)
    {
      if (errno == EEXIST)
        kist_error_make (err, EEXIST, "spec: `%s/config.json` exists; remove it first", bundle);
      else
        kist_error_make (err, errno, "spec: create `%s/config.json`", bundle);
      return KIST_EXIT_USAGE;
    }
  if (kist_write_all (fd, json, strlen (json)) < 0)
    {
      kist_error_make (err, errno, "spec: write `%s/config.json`", bundle);
      return KIST_EXIT_USAGE;
    }
  return 0;
}
