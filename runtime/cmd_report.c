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
  const char *format = "json";
  const struct kist_cmd_opt opts[] = { { "format", 'f', NULL, &format, "json|text" } };
  const char *id = NULL;
  int r = kist_cmd_id_options ("report", argc, argv, opts, KIST_ARRAY_SIZE (opts), &id, err);
  if (r < 0)
    return r == KIST_CMD_HELPED ? 0 : KIST_EXIT_USAGE;
  bool text = strcmp (format, "text") == 0;
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
