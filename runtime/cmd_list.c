/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist list [--format table|json] [--quiet] */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "util.h"

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
  _cleanup_strv_ char **ids = NULL;
  if (kist_state_list (rootfd, &ids, err) < 0)
    return KIST_EXIT_USAGE;
  if (json)
    fputs ("[", stdout);
  else if (!quiet)
    printf ("%-20s %-8s %-8s %-40s %-30s %s\n", "ID", "PID", "STATUS", "BUNDLE", "CREATED", "OWNER");
  bool firstrow = true;
  for (char **id = ids; id && *id; id++)
    {
      _cleanup_error_ struct kist_error *e = NULL;
      struct kist_state st = { 0 };
      /* Without the lock: a create, start or delete in progress holds it
       * (a create for as long as its hooks and layers take); its intent
       * record says "creating". */
      if (kist_state_peek (rootfd, *id, &st, &e) < 0)
        {
          kist_state_clear (&st);
          continue; /* deleted right now */
        }
      enum kist_status status = kist_state_status (&st);
      if (json)
        {
          _cleanup_free_ char *s = kist_state_oci_json (&st, status);
          printf ("%s%s", firstrow ? "" : ",", s);
        }
      else if (quiet)
        printf ("%s\n", st.id);
      else
        printf ("%-20s %-8d %-8s %-40s %-30s %s\n", st.id,
                status == KIST_STATUS_STOPPED ? 0 : (int) st.pid, kist_status_name (status),
                st.bundle ? st.bundle : "", st.created ? st.created : "", st.owner ? st.owner : "");
      firstrow = false;
      kist_state_clear (&st);
    }
  if (json)
    fputs ("]\n", stdout);
  return 0;
}
