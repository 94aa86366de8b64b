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
  static const struct option opts[] = { { "format", required_argument, NULL, 'f' },
                                        { "quiet", no_argument, NULL, 'q' },
                                        { "help", no_argument, NULL, 'h' },
                                        { NULL, 0, NULL, 0 } };
  const char *format = "table";
  bool quiet = false;
  int c;
  opterr = 0;
  while ((c = getopt_long (argc, argv, "+f:qh", opts, NULL)) != -1)
    switch (c)
      {
      case 'h': return kist_cmd_help ("list");
      case 'f': format = optarg; break;
      case 'q': quiet = true; break;
      default:
        kist_error_make (err, EINVAL, "list: unknown option `%s`", argv[optind - 1]);
        return KIST_EXIT_USAGE;
      }
  bool json = strcmp (format, "json") == 0;
  if (!json && strcmp (format, "table") != 0)
    {
      kist_error_make (err, EINVAL, "list: --format `%s`: expected table or json", format);
      return KIST_EXIT_USAGE;
    }
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
