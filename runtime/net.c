/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: the loopback interface of a new network namespace (layer
 * "network.loopback"): RTM_NEWLINK lo IFF_UP over rtnetlink (libmnl), then an
 * RTM_GETLINK dump proving the namespace holds lo, UP, and no other link
 * than the devices linux.netDevices moved in (net_devices.c).  And the
 * rtnetlink helpers every network layer uses (net.h). */
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
#include "net.h"
#include "util.h"

struct link_list
{
  char *names; /* "lo, eth0" */
  size_t n;
  bool lo_seen, lo_up;
  const struct kist_linux *lx; /* links named in linux.netDevices are the caller's */
};

/* ---- the rtnetlink helpers (net.h) */

int
kist_nl_open (struct kist_nl *n, char **why)
{
  *n = (struct kist_nl){ .seq = (unsigned) time (NULL) };
  n->nl = mnl_socket_open2 (NETLINK_ROUTE, SOCK_CLOEXEC);
  if (n->nl == NULL)
    {
      int e = errno;
      *why = xasprintf ("rtnetlink socket: %s", strerror (e));
      return -e;
    }
  if (mnl_socket_bind (n->nl, 0, MNL_SOCKET_AUTOPID) < 0)
    {
      int e = errno;
      *why = xasprintf ("rtnetlink bind: %s", strerror (e));
      kist_nl_close (n);
      return -e;
    }
  n->portid = mnl_socket_get_portid (n->nl);
  n->buf = xmalloc (KIST_NL_BUF_SIZE);
  return 0;
}

void
kist_nl_close (struct kist_nl *n)
{
  if (n->nl)
    mnl_socket_close (n->nl);
  free (n->buf);
  n->nl = NULL;
  n->buf = NULL;
}

static void
nl_closep (struct kist_nl *n)
{
  kist_nl_close (n);
}

/* Receive until the reply to seq is complete.  Returns 0, or -errno
 * (an NLMSG_ERROR from the kernel gives its errno). */
static int
receive (struct kist_nl *n, unsigned seq, mnl_cb_t cb, void *data)
{
  for (;;)
    {
      ssize_t len = mnl_socket_recvfrom (n->nl, n->buf, KIST_NL_BUF_SIZE);
      if (len < 0)
        {
          if (errno == EINTR)
            continue;
          return -errno;
        }
      int ret = mnl_cb_run (n->buf, (size_t) len, seq, n->portid, cb, data);
      if (ret < 0)
        return -errno;
      if (ret == MNL_CB_STOP)
        return 0;
    }
}

struct nlmsghdr *
kist_nl_msg (struct kist_nl *n, uint16_t type, uint16_t flags, size_t hdr_len, void **hdr)
{
  struct nlmsghdr *nlh = mnl_nlmsg_put_header (n->buf);
  nlh->nlmsg_type = type;
  nlh->nlmsg_flags = flags;
  nlh->nlmsg_seq = ++n->seq;
  *hdr = mnl_nlmsg_put_extra_header (nlh, hdr_len);
  return nlh;
}

int
kist_nl_exchange (struct kist_nl *n, struct nlmsghdr *nlh, mnl_cb_t cb, void *arg,
                  const char *what, const char *eperm_hint, char **why)
{
  if (mnl_socket_sendto (n->nl, nlh, nlh->nlmsg_len) < 0)
    {
      int e = errno;
      *why = xasprintf ("rtnetlink %s: send: %s", what, strerror (e));
      return -e;
    }
  int ret = receive (n, nlh->nlmsg_seq, cb, arg);
  if (ret < 0)
    {
      *why = xasprintf ("rtnetlink %s: %s%s", what, strerror (-ret),
                        ret == -EPERM && eperm_hint ? eperm_hint : "");
      return ret;
    }
  return 0;
}

/* ---- network.loopback */

/* Is name one that linux.netDevices moves into the container? */
static bool
net_device_inside (const struct kist_linux *lx, const char *name)
{
  for (size_t i = 0; lx && i < lx->n_net_devices; i++)
    if (strcmp (lx->net_devices[i].name, name) == 0)
      return true;
  return false;
}

int
kist_nl_attrs_cb (const struct nlattr *attr, void *data)
{
  struct kist_nl_attrs *a = data;
  int type = mnl_attr_get_type (attr);
  if (type <= a->max)
    a->tb[type] = attr;
  return MNL_CB_OK;
}

int
kist_nl_link_parse (const struct nlmsghdr *nlh, struct kist_nl_link *li)
{
  const struct ifinfomsg *ifi = mnl_nlmsg_get_payload (nlh);
  const struct nlattr *tb[IFLA_MAX + 1] = { NULL };
  if (mnl_attr_parse (nlh, sizeof *ifi, kist_nl_attrs_cb, &(struct kist_nl_attrs){ tb, IFLA_MAX })
      < 0)
    return -1;
  *li = (struct kist_nl_link){ .index = ifi->ifi_index, .flags = ifi->ifi_flags };
  if (tb[IFLA_IFNAME] && mnl_attr_validate (tb[IFLA_IFNAME], MNL_TYPE_NUL_STRING) >= 0)
    snprintf (li->name, sizeof li->name, "%s", mnl_attr_get_str (tb[IFLA_IFNAME]));
  if (tb[IFLA_ADDRESS] && mnl_attr_get_payload_len (tb[IFLA_ADDRESS]) <= sizeof li->mac)
    {
      li->mac_len = mnl_attr_get_payload_len (tb[IFLA_ADDRESS]);
      memcpy (li->mac, mnl_attr_get_payload (tb[IFLA_ADDRESS]), li->mac_len);
    }
  const struct nlattr *info[IFLA_INFO_MAX + 1] = { NULL };
  if (tb[IFLA_LINKINFO]
      && mnl_attr_parse_nested (tb[IFLA_LINKINFO], kist_nl_attrs_cb,
                                &(struct kist_nl_attrs){ info, IFLA_INFO_MAX })
             >= 0
      && info[IFLA_INFO_KIND] && mnl_attr_validate (info[IFLA_INFO_KIND], MNL_TYPE_NUL_STRING) >= 0)
    snprintf (li->kind, sizeof li->kind, "%s", mnl_attr_get_str (info[IFLA_INFO_KIND]));
  return 0;
}

static int
link_cb (const struct nlmsghdr *nlh, void *data)
{
  struct link_list *l = data;
  struct kist_nl_link li;
  if (kist_nl_link_parse (nlh, &li) < 0)
    return MNL_CB_ERROR;
  char idx[32];
  const char *name = li.name;
  if (name[0] == '\0')
    {
      snprintf (idx, sizeof idx, "(ifindex %d)", li.index);
      name = idx;
    }
  bool up = (li.flags & IFF_UP) != 0;
  char *item = xasprintf ("%s %s", name, up ? "UP" : "DOWN");
  char *n = l->names ? xasprintf ("%s, %s", l->names, item) : xstrdup (item);
  free (item);
  free (l->names);
  l->names = n;
  if (strcmp (name, "lo") != 0 && !net_device_inside (l->lx, name))
    l->n++;
  if (strcmp (name, "lo") == 0)
    {
      l->lo_seen = true;
      l->lo_up = up;
    }
  return MNL_CB_OK;
}

/* RTM_NEWLINK lo IFF_UP, wait for the ACK. */
static int
set_lo_up (struct kist_nl *n, char **why)
{
  struct ifinfomsg *ifi;
  struct nlmsghdr *nlh
      = kist_nl_msg (n, RTM_NEWLINK, NLM_F_REQUEST | NLM_F_ACK, sizeof *ifi, (void **) &ifi);
  ifi->ifi_family = AF_UNSPEC;
  ifi->ifi_index = 0;
  ifi->ifi_flags = IFF_UP;
  ifi->ifi_change = IFF_UP;
  /* The kernel looks the link up by name (no if_nametoindex: its socket and
   * ioctl are three more syscalls); the dump below reads the state back. */
  mnl_attr_put_strz (nlh, IFLA_IFNAME, "lo");
  return kist_nl_exchange (n, nlh, NULL, NULL, "RTM_NEWLINK lo up",
                           " (CAP_NET_ADMIN in the network namespace's owning user namespace is "
                           "needed)",
                           why);
}

int
kist_nl_dump (struct kist_nl *n, uint16_t type, size_t hdr_len, mnl_cb_t cb, void *arg,
              const char *what, char **why)
{
  void *hdr; /* zeroed: its family (the first byte of every such header) is AF_UNSPEC */
  struct nlmsghdr *nlh = kist_nl_msg (n, type, NLM_F_REQUEST | NLM_F_DUMP, hdr_len, &hdr);
  return kist_nl_exchange (n, nlh, cb, arg, what, NULL, why);
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

  _cleanup_free_ char *why = NULL;
  __attribute__ ((cleanup (nl_closep))) struct kist_nl n = { 0 };
  int ret = kist_nl_open (&n, &why);
  if (ret < 0)
    return kist_report_failed (r, layer, "", -ret, err, "%s", why);
  ret = set_lo_up (&n, &why);
  if (ret < 0)
    return kist_report_failed (r, layer, "", -ret, err, "%s", why);

  struct link_list links = { NULL, 0, false, false, lx };
  ret = kist_nl_dump (&n, RTM_GETLINK, sizeof (struct ifinfomsg), link_cb, &links,
                      "RTM_GETLINK dump", &why);
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
  if (links.n != 0)
    return kist_report_failed (r, layer, "", EEXIST, err,
                               "the new network namespace has %zu links besides lo (and the "
                               "devices of linux.netDevices): %s "
                               "(fallback tunnel devices appear when net.core."
                               "fb_tunnels_only_for_init_net is 0 and sit/ipip/gre are loaded)",
                               links.n, names);
  kist_report_applied (r, layer, "", "links: %s", names);
  kist_report_expect (r, layer, "lo=up"); /* and /proc/PID/net from outside */
  return 0;
}
