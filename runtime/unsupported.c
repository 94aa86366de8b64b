/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: what config.json can request and kist does not implement.  Each is
 * recorded as requested and not applied, so the fail-closed policy refuses the
 * run unless the caller lets that layer degrade.  Nothing is ignored silently. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>

#include "layer.h"
#include "mountinfo.h"
#include "util.h"

static int
refuse (struct kist_report *r, const char *layer, const char *requested, const char *what,
        struct kist_error **err)
{
  return kist_report_failed (r, layer, requested, ENOTSUP, err, "%s is not implemented by kist", what);
}

/* Does this machine have resctrl (Intel RDT / AMD PQoS): the kernel knows
 * the filesystem (/proc/filesystems), or one is mounted? */
static bool
has_resctrl (void)
{
  _cleanup_error_ struct kist_error *e = NULL;
  _cleanup_free_ char *fs = NULL;
  size_t len = 0;
  if (kist_read_file_at (AT_FDCWD, "/proc/filesystems", 1 << 20, &fs, &len, &e) == 0)
    for (char *line = fs, *nl; line && *line; line = nl ? nl + 1 : NULL)
      {
        nl = strchr (line, '\n');
        if (nl)
          *nl = '\0';
        const char *tab = strrchr (line, '\t');
        if (strcmp (tab ? tab + 1 : line, "resctrl") == 0)
          return true;
      }
  _cleanup_mountinfo_ struct kist_mountinfo mi = { 0 };
  if (kist_mountinfo_read (AT_FDCWD, "/proc/self/mountinfo", &mi, &e) == 0)
    for (size_t i = 0; i < mi.n; i++)
      if (strcmp (mi.e[i].fstype, "resctrl") == 0)
        return true;
  return false;
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
  if (l && l->has_intel_rdt && !has_resctrl ())
    {
      if ((ret = kist_report_failed (r, "intel_rdt", NULL, ENOTSUP, err,
                                     "linux.intelRdt: this machine has no resctrl (Intel RDT / "
                                     "AMD PQoS): remove linux.intelRdt"))
          < 0)
        return ret;
    }
  else
    REFUSE (l && l->has_intel_rdt, "intel_rdt", NULL, "linux.intelRdt");
  /* linux.netDevices: implemented (net_devices.c), recorded as net_devices. */
  /* hooks: implemented (hooks.c), each kind recorded as hooks.<kind> where it runs. */

#undef REFUSE
  return 0;
}
