/* SPDX-License-Identifier: GPL-2.0-or-later */
/* STUB: to be replaced. */
#define _GNU_SOURCE
#include <errno.h>
#include "container.h"

int
kist_mounts_apply (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err)
{
  return kist_report_failed (r, "mounts", "", ENOSYS, err, "not implemented yet");
}
