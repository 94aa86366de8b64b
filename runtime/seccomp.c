/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: the seccomp layer.  The filter itself is not implemented yet: a
 * config that asks for one fails closed unless `seccomp` may degrade. */
#define _GNU_SOURCE
#include <errno.h>

#include "container.h"

int
kist_seccomp_apply (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err)
{
  const struct kist_spec *s = ctx->spec;
  const char *profile = kist_spec_annotation (s, "run.kist.seccomp.profile");
  if ((s->linux_ && s->linux_->seccomp) || profile)
    return kist_report_failed (r, "seccomp", profile, ENOTSUP, err,
                               "the seccomp filter is not implemented by kist yet");
  kist_report_skip (r, "seccomp", "not requested: no syscall filter");
  return 0;
}
