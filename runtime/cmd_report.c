/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist report [--format json|text] ID */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "util.h"

int
kist_cmd_report (const struct kist_globals *g, int argc, char **argv, struct kist_error **err)
{
  static const struct option opts[] = { { "format", required_argument, NULL, 'f' },
                                        { "help", no_argument, NULL, 'h' },
                                        { NULL, 0, NULL, 0 } };
  const char *format = "json";
  int c;
  opterr = 0;
  while ((c = getopt_long (argc, argv, "+f:h", opts, NULL)) != -1)
    {
      if (c == 'h')
        return kist_cmd_help ("report");
      if (c != 'f')
        {
          kist_error_make (err, EINVAL, "report: unknown option `%s`", argv[optind - 1]);
          return KIST_EXIT_USAGE;
        }
      format = optarg;
    }
  bool text = strcmp (format, "text") == 0;
  if (!text && strcmp (format, "json") != 0)
    {
      kist_error_make (err, EINVAL, "report: --format `%s`: expected json or text", format);
      return KIST_EXIT_USAGE;
    }
  const char *id = NULL;
  if (kist_cmd_one_id ("report", argc, argv, optind, &id, err) < 0 || kist_id_validate (id, err) < 0)
    return KIST_EXIT_USAGE;
  _cleanup_close_ int rootfd = kist_cmd_open_root (g, err);
  _cleanup_free_ char *json = NULL;
  size_t len = 0;
  if (rootfd < 0 || kist_container_report_json (rootfd, id, &json, &len, err) < 0)
    return KIST_EXIT_USAGE;
  if (!text)
    {
      fwrite (json, 1, len, stdout);
      if (len == 0 || json[len - 1] != '\n')
        fputc ('\n', stdout);
      return 0;
    }
  _cleanup_free_ char *table = kist_report_json_to_text (json, len, err);
  if (table == NULL)
    return KIST_EXIT_USAGE;
  fputs (table, stdout);
  return 0;
}
