/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: what config.json can request and kist does not implement.  Each is
 * recorded as requested and not applied, so the fail-closed policy refuses the
 * run unless the caller lets that layer degrade.  Nothing is ignored silently. */
#define _GNU_SOURCE
#include <errno.h>

#include "layer.h"

static int
refuse (struct kist_report *r, const char *layer, const char *requested, const char *what,
        struct kist_error **err)
{
  return kist_report_failed (r, layer, requested, ENOTSUP, err, "%s is not implemented by kist", what);
}

int
kist_unsupported_apply (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err)
{
  const struct kist_spec *s = ctx->spec;
  const struct kist_process *p = s->process;
  const struct kist_linux *l = s->linux_;
  int ret = 0;

#define REFUSE(cond, layer, req, what)                                                             \
  do                                                                                               \
    if ((cond) && (ret = refuse (r, layer, req, what, err)) < 0)                                   \
      return ret;                                                                                  \
  while (0)

  if (p && p->apparmor_profile)
    REFUSE (1, "apparmor", p->apparmor_profile, "process.apparmorProfile (AppArmor)");
  else
    kist_report_skip (r, "apparmor", "not requested");
  if ((p && p->selinux_label) || (l && l->mount_label))
    REFUSE (1, "selinux", p && p->selinux_label ? p->selinux_label : l->mount_label,
            "process.selinuxLabel / linux.mountLabel (SELinux)");
  else
    kist_report_skip (r, "selinux", "not requested");
  REFUSE (l && l->has_intel_rdt, "intel_rdt", NULL, "linux.intelRdt");
  /* linux.netDevices: implemented (net_devices.c), recorded as net_devices. */
  /* hooks: implemented (hooks.c), each kind recorded as hooks.<kind> where it runs. */

#undef REFUSE
  return 0;
}
