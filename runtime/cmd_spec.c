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
  const char *bundle = ".";
  bool rootless = false;
  const struct kist_cmd_opt opts[] = { { "bundle", 'b', NULL, &bundle, NULL },
                                       { "rootless", 0, &rootless, NULL, NULL } };
  int first = kist_cmd_options ("spec", argc, argv, opts, KIST_ARRAY_SIZE (opts), err);
  if (first < 0)
    return first == KIST_CMD_HELPED ? 0 : KIST_EXIT_USAGE;
  if (first != argc)
    {
      kist_error_make (err, EINVAL, "spec: unexpected argument `%s`", argv[first]);
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
