/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: hostname and domainname (layers "hostname", "domainname"), set in
 * the container's own UTS namespace and read back with uname(2). */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "layer.h"
#include "procfs.h"
#include "util.h"

/* Why the hostname/domainname may not be set here, or NULL when it may. */
static const char *
not_private (const struct kist_ctx *ctx)
{
  const struct kist_linux *l = ctx->spec->linux_;
  if (l == NULL || !l->ns[KIST_NS_UTS].present)
    return "no private UTS namespace: add {\"type\": \"uts\"} to linux.namespaces";
  if (kist_proc_ns_is_host (ctx, KIST_NS_UTS) == 1)
    return "the UTS namespace joined by linux.namespaces path is the host's";
  return NULL;
}

static int
set_one (struct kist_ctx *ctx, struct kist_report *r, bool domain, const char *value,
         struct kist_error **err)
{
  const char *layer = domain ? "domainname" : "hostname";
  const char *field = domain ? "domainname" : "hostname";

  const char *why = not_private (ctx);
  if (why)
    return kist_report_failed (r, layer, value, EPERM, err, "unable to set %s (%s): %s", field,
                               value, why);

  size_t len = strlen (value);
  int ret = domain ? setdomainname (value, len) : sethostname (value, len);
  if (ret < 0)
    {
      int e = errno;
      if (e == EINVAL)
        return kist_report_failed (r, layer, value, e, err,
                                   "%s `%s` is %zu bytes; the kernel allows at most %d", field,
                                   value, len, HOST_NAME_MAX);
      return kist_report_failed (r, layer, value, e, err, "%s (`%s`): %s",
                                 domain ? "setdomainname" : "sethostname", value, strerror (e));
    }

  struct utsname u;
  if (uname (&u) < 0)
    {
      int e = errno;
      return kist_report_failed (r, layer, value, e, err, "uname: %s", strerror (e));
    }
  const char *got = domain ? u.domainname : u.nodename;
  if (strcmp (got, value) != 0)
    return kist_report_failed (r, layer, value, EPROTO, err,
                               "%s succeeded but uname reads back `%s`",
                               domain ? "setdomainname" : "sethostname", got);

  const struct kist_namespace *ns = &ctx->spec->linux_->ns[KIST_NS_UTS];
  if (ns->path)
    kist_report_applied (r, layer, value, "uname reads back `%s` (UTS namespace joined from %s)",
                         got, ns->path);
  else
    kist_report_applied (r, layer, value, "uname reads back `%s` (new UTS namespace)", got);
  return 0;
}

int
kist_uts_apply (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err)
{
  const char *host = ctx->spec->hostname, *domain = ctx->spec->domainname;
  int ret;

  /* An empty string means "not given", like runc. */
  if (host == NULL || *host == '\0')
    kist_report_skip (r, "hostname", "not given");
  else if ((ret = set_one (ctx, r, false, host, err)) < 0)
    return ret;

  if (domain == NULL || *domain == '\0')
    kist_report_skip (r, "domainname", "not given");
  else if ((ret = set_one (ctx, r, true, domain, err)) < 0)
    return ret;
  return 0;
}
