/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: the loopback interface of a new network namespace (layer
 * "network.loopback"): RTM_NEWLINK lo IFF_UP over rtnetlink (libmnl), then an
 * RTM_GETLINK dump proving the namespace holds exactly one link, lo, UP. */
#define _GNU_SOURCE
#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "layer.h"
#include "util.h"

/* Big enough for any dump message (libmnl's recommendation for dumps). */
#define NET_BUF_SIZE 32768

struct link_list
{
  char *names; /* "lo, eth0" */
  size_t n;
  bool lo_seen, lo_up;
};

static void
mnl_socket_closep (struct mnl_socket **nl)
{
  if (*nl)
    mnl_socket_close (*nl);
  *nl = NULL;
}

/* Receive until the reply to seq is complete.  Returns 0, or -errno
 * (an NLMSG_ERROR from the kernel gives its errno). */
static int
receive (struct mnl_socket *nl, char *buf, unsigned seq, unsigned portid, mnl_cb_t cb, void *data)
{
  for (;;)
    {
      ssize_t n = mnl_socket_recvfrom (nl, buf, NET_BUF_SIZE);
      if (n < 0)
        {
          if (errno == EINTR)
            continue;
          return -errno;
        }
      int ret = mnl_cb_run (buf, (size_t) n, seq, portid, cb, data);
      if (ret < 0)
        return -errno;
      if (ret == MNL_CB_STOP)
        return 0;
    }
}

static int
link_attr_cb (const struct nlattr *attr, void *data)
{
  const struct nlattr **tb = data;
  int type = mnl_attr_get_type (attr);
  if (type == IFLA_IFNAME && mnl_attr_validate (attr, MNL_TYPE_NUL_STRING) >= 0)
    tb[IFLA_IFNAME] = attr;
  return MNL_CB_OK;
}

static int
link_cb (const struct nlmsghdr *nlh, void *data)
{
  struct link_list *l = data;
  const struct ifinfomsg *ifi = mnl_nlmsg_get_payload (nlh);
  const struct nlattr *tb[IFLA_MAX + 1] = { NULL };
  if (mnl_attr_parse (nlh, sizeof *ifi, link_attr_cb, tb) < 0)
    return MNL_CB_ERROR;
  char idx[32];
  const char *name = tb[IFLA_IFNAME] ? mnl_attr_get_str (tb[IFLA_IFNAME]) : NULL;
  if (name == NULL)
    {
      snprintf (idx, sizeof idx, "(ifindex %d)", ifi->ifi_index);
      name = idx;
    }
  bool up = (ifi->ifi_flags & IFF_UP) != 0;
  char *item = xasprintf ("%s %s", name, up ? "UP" : "DOWN");
  char *n = l->names ? xasprintf ("%s, %s", l->names, item) : xstrdup (item);
  free (item);
  free (l->names);
  l->names = n;
  l->n++;
  if (strcmp (name, "lo") == 0)
    {
      l->lo_seen = true;
      l->lo_up = up;
    }
  return MNL_CB_OK;
}

/* A request for RTM_*LINK into buf, with an AF_UNSPEC ifinfomsg (*ifi). */
static struct nlmsghdr *
link_msg (char *buf, uint16_t type, uint16_t flags, unsigned *seq, struct ifinfomsg **ifi)
{
  struct nlmsghdr *nlh = mnl_nlmsg_put_header (buf);
  nlh->nlmsg_type = type;
  nlh->nlmsg_flags = flags;
  nlh->nlmsg_seq = ++*seq;
  *ifi = mnl_nlmsg_put_extra_header (nlh, sizeof **ifi);
  (*ifi)->ifi_family = AF_UNSPEC;
  return nlh;
}

/* Send nlh and receive the answers (cb for each); *why names what (and
 * eperm_hint after an EPERM) on failure. */
static int
link_exchange (struct mnl_socket *nl, struct nlmsghdr *nlh, char *buf, unsigned portid,
               mnl_cb_t cb, void *arg, const char *what, const char *eperm_hint, char **why)
{
  if (mnl_socket_sendto (nl, nlh, nlh->nlmsg_len) < 0)
    {
      int e = errno;
      *why = xasprintf ("rtnetlink %s: send: %s", what, strerror (e));
      return -e;
    }
  int ret = receive (nl, buf, nlh->nlmsg_seq, portid, cb, arg);
  if (ret < 0)
    {
      *why = xasprintf ("rtnetlink %s: %s%s", what, strerror (-ret),
                        ret == -EPERM && eperm_hint ? eperm_hint : "");
      return ret;
    }
  return 0;
}

/* RTM_NEWLINK lo IFF_UP, wait for the ACK. */
static int
set_lo_up (struct mnl_socket *nl, char *buf, unsigned *seq, unsigned portid, char **why)
{
  struct ifinfomsg *ifi;
  struct nlmsghdr *nlh = link_msg (buf, RTM_NEWLINK, NLM_F_REQUEST | NLM_F_ACK, seq, &ifi);
  ifi->ifi_index = (int) if_nametoindex ("lo");
  ifi->ifi_flags = IFF_UP;
  ifi->ifi_change = IFF_UP;
  if (ifi->ifi_index == 0)
    mnl_attr_put_strz (nlh, IFLA_IFNAME, "lo"); /* the kernel looks it up by name */
  return link_exchange (nl, nlh, buf, portid, NULL, NULL, "RTM_NEWLINK lo up",
                        " (CAP_NET_ADMIN in the network namespace's owning user namespace is "
                        "needed)",
                        why);
}

/* RTM_GETLINK dump of every link in the namespace. */
static int
dump_links (struct mnl_socket *nl, char *buf, unsigned *seq, unsigned portid, struct link_list *l,
            char **why)
{
  struct ifinfomsg *ifi;
  struct nlmsghdr *nlh = link_msg (buf, RTM_GETLINK, NLM_F_REQUEST | NLM_F_DUMP, seq, &ifi);
  return link_exchange (nl, nlh, buf, portid, link_cb, l, "RTM_GETLINK dump", NULL, why);
}

int
kist_net_apply (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err)
{
  const char *layer = "network.loopback";
  const struct kist_linux *lx = ctx->spec->linux_;
  if (lx == NULL || !lx->ns[KIST_NS_NET].present)
    {
      kist_report_skip (r, layer, "shared with the host");
      return 0;
    }
  if (lx->ns[KIST_NS_NET].path)
    {
      kist_report_skip (r, layer, "joined by path: left as it is");
      return 0;
    }

  __attribute__ ((cleanup (mnl_socket_closep))) struct mnl_socket *nl
      = mnl_socket_open2 (NETLINK_ROUTE, SOCK_CLOEXEC);
  if (nl == NULL)
    {
      int e = errno;
      return kist_report_failed (r, layer, "", e, err, "rtnetlink socket: %s", strerror (e));
    }
  if (mnl_socket_bind (nl, 0, MNL_SOCKET_AUTOPID) < 0)
    {
      int e = errno;
      return kist_report_failed (r, layer, "", e, err, "rtnetlink bind: %s", strerror (e));
    }
  unsigned portid = mnl_socket_get_portid (nl);
  unsigned seq = (unsigned) time (NULL);
  _cleanup_free_ char *buf = xmalloc (NET_BUF_SIZE);
  _cleanup_free_ char *why = NULL;

  int ret = set_lo_up (nl, buf, &seq, portid, &why);
  if (ret < 0)
    return kist_report_failed (r, layer, "", -ret, err, "%s", why);

  struct link_list links = { NULL, 0, false, false };
  ret = dump_links (nl, buf, &seq, portid, &links, &why);
  _cleanup_free_ char *names = links.names;
  if (ret < 0)
    return kist_report_failed (r, layer, "", -ret, err, "%s", why);

  if (!links.lo_seen)
    return kist_report_failed (r, layer, "", ENODEV, err,
                               "the new network namespace has no lo (links: %s)",
                               names ? names : "none");
  if (!links.lo_up)
    return kist_report_failed (r, layer, "", EPROTO, err,
                               "RTM_NEWLINK was acknowledged but lo is still DOWN (links: %s)",
                               names);
  if (links.n != 1)
    return kist_report_failed (r, layer, "", EEXIST, err,
                               "the new network namespace has %zu links, expected only lo: %s "
                               "(fallback tunnel devices appear when net.core."
                               "fb_tunnels_only_for_init_net is 0 and sit/ipip/gre are loaded)",
                               links.n, names);
  kist_report_applied (r, layer, "", "links: %s", names);
  kist_report_expect (r, layer, "lo=up"); /* and /proc/PID/net from outside */
  return 0;
}
