/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: what report.c and report_text.c share. */
#ifndef KIST_REPORT_INT_H
#define KIST_REPORT_INT_H

#include <stdbool.h>
#include <yajl/yajl_tree.h>

/* One entry of "layers" as stored, read leniently (spec_json.h's peeks):
 * a string member is NULL when absent or not a string. */
struct layer_json
{
  const char *name, *req, *detail, *eno, *reason;
  bool req_true;  /* "requested": true */
  bool req_given; /* "requested" present, not null and not false */
  bool applied;   /* "applied": true */
  long long step; /* "step", 0 when absent */
  long long usec; /* "usec", -1 when absent */
};

struct layer_json report_layer_json_get (yajl_val l);

#endif
