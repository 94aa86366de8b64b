/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist list [--format table|json] [--quiet] */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "util.h"

struct list_out
{
  bool json, quiet, first;
};

/* kist_container_list's callback: the head, then one row per container. */
static void
print_row (const struct kist_state *st, enum kist_status status, void *arg)
{
  struct list_out *o = arg;
  if (st == NULL) /* the ids were listed: the head */
    {
      if (o->json)
        fputs ("[", stdout);
      else if (!o->quiet)
        printf ("%-20s %-8s %-8s %-40s %-30s %s\n", "ID", "PID", "STATUS", "BUNDLE", "CREATED",
                "OWNER");
      return;
    }
  if (o->json)
    {
      _cleanup_free_ char *s = kist_container_oci_json (st, status);
      printf ("%s%s", o->first ? "" : ",", s);
    }
  else if (o->quiet)
    printf ("%s\n", st->id);
  else
    printf ("%-20s %-8d %-8s %-40s %-30s %s\n", st->id,
            status == KIST_STATUS_STOPPED ? 0 : (int) st->pid, kist_status_name (status),
            st->bundle ? st->bundle : "", st->created ? st->created : "", st->owner ? st->owner : "");
  o->first = false;
}

int
kist_cmd_list (const struct kist_globals *g, int argc, char **argv, struct kist_error **err)
{
  const char *format = "table";
  bool quiet = false;
  const struct kist_cmd_opt opts[] = { { "format", 'f', NULL, &format, "table|json" },
                                       { "quiet", 'q', &quiet, NULL, NULL } };
  int r = kist_cmd_options ("list", argc, argv, opts, KIST_ARRAY_SIZE (opts), err);
  if (r < 0)
    return r == KIST_CMD_HELPED ? 0 : KIST_EXIT_USAGE;
  bool json = strcmp (format, "json") == 0;
  _cleanup_close_ int rootfd = kist_cmd_open_root (g, err);
  if (rootfd < 0)
    return KIST_EXIT_USAGE;
  struct list_out out = { .json = json, .quiet = quiet, .first = true };
  if (kist_container_list (rootfd, print_row, &out, err) < 0)
    return KIST_EXIT_USAGE;
  if (json)
    fputs ("]\n", stdout);
  return 0;
}
