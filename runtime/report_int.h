/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: what report.c and report_text.c share. */
#ifndef KIST_REPORT_INT_H
#define KIST_REPORT_INT_H

#include <yajl/yajl_tree.h>

/* One entry of "layers" as stored; a member is NULL when absent. */
struct layer_json
{
  yajl_val name, req, applied, detail, eno, reason;
};

struct layer_json
report_layer_json_get (yajl_val l);

#endif
