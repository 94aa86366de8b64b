/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: linux.netDevices (layer "net_devices", a grant: the container is
 * given devices of the runtime's network namespace).  The parent does it
 * after clone, while the init waits (ENTER): each device is moved into the
 * container's network namespace and renamed by one RTM_NEWLINK
 * (IFLA_NET_NS_FD, IFLA_IFNAME).  The kernel flushes a moved device's
 * addresses: its permanent addresses of global scope are dumped first and
 * added again inside, and it is brought up there if it was up.  Then the
 * read-back from outside, through a socket opened in the container's
 * namespace: the device is there under its name inside (the same MAC),
 * with every address, and kist's namespace no longer has it.
 *
 * A failed create and delete move the devices back the same way (net.h):
 * a namespace that dies destroys virtual devices and hands physical ones to
 * the initial namespace, under whatever name they had inside. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <libmnl/libmnl.h>
#include <linux/if_addr.h>
#include <linux/if_link.h>
#include <linux/nsfs.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "layer.h"
#include "log.h"
#include "net.h"
#include "ns.h"
#include "state.h"
#include "util.h"

#define LAYER "net_devices"
#define MAX_ADDRS 64

struct addr
{
  unsigned char family, prefixlen, scope;
  uint32_t flags;
  unsigned char local[16], address[16], broadcast[16];
  bool has_local, has_address, has_broadcast;
};

struct addr_list
{
  int index;
  bool all; /* every address, not only the permanent ones of global scope */
  bool overflow;
  size_t n;
  struct addr a[MAX_ADDRS];
};

/* One side of a move: a socket in a network namespace and an fd of it. */
struct side
{
  struct kist_nl nl;
  int ns_fd;
  const char *what; /* "kist's", "the container's" */
};

static void
side_close (struct side *s)
{
  kist_nl_close (&s->nl);
  if (s->ns_fd >= 0)
    close (s->ns_fd);
  s->ns_fd = -1;
}

/* ---- rtnetlink messages */

static int
link_cb (const struct nlmsghdr *nlh, void *data)
{
  return kist_nl_link_parse (nlh, data) < 0 ? MNL_CB_ERROR : MNL_CB_OK;
}

/* RTM_GETLINK of the device index (or, with index 0, name): 0, -ENODEV when
 * there is none, another -errno with *why. */
static int
get_link (struct kist_nl *n, int index, const char *name, struct kist_nl_link *li, char **why)
{
  struct ifinfomsg *ifi;
  struct nlmsghdr *nlh
      = kist_nl_msg (n, RTM_GETLINK, NLM_F_REQUEST | NLM_F_ACK, sizeof *ifi, (void **) &ifi);
  ifi->ifi_family = AF_UNSPEC;
  ifi->ifi_index = index;
  if (index == 0)
    mnl_attr_put_strz (nlh, IFLA_IFNAME, name);
  _cleanup_free_ char *w = NULL;
  int ret = kist_nl_exchange (n, nlh, link_cb, li, "RTM_GETLINK", NULL, &w);
  if (ret < 0 && ret != -ENODEV)
    *why = steal_pointer (&w);
  return ret;
}

static int
addr_cb (const struct nlmsghdr *nlh, void *data)
{
  struct addr_list *l = data;
  const struct ifaddrmsg *ifa = mnl_nlmsg_get_payload (nlh);
  if ((int) ifa->ifa_index != l->index || (ifa->ifa_family != AF_INET && ifa->ifa_family != AF_INET6))
    return MNL_CB_OK;
  const struct nlattr *tb[IFA_MAX + 1] = { NULL };
  if (mnl_attr_parse (nlh, sizeof *ifa, kist_nl_attrs_cb, &(struct kist_nl_attrs){ tb, IFA_MAX }) < 0)
    return MNL_CB_ERROR;
  uint32_t flags = tb[IFA_FLAGS] && mnl_attr_get_payload_len (tb[IFA_FLAGS]) == 4
                       ? mnl_attr_get_u32 (tb[IFA_FLAGS])
                       : ifa->ifa_flags;
  if (!l->all && (!(flags & IFA_F_PERMANENT) || ifa->ifa_scope != RT_SCOPE_UNIVERSE))
    return MNL_CB_OK;
  if (l->n == MAX_ADDRS)
    {
      l->overflow = true;
      return MNL_CB_OK;
    }
  struct addr *a = &l->a[l->n++];
  *a = (struct addr){ .family = ifa->ifa_family, .prefixlen = ifa->ifa_prefixlen,
                      .scope = ifa->ifa_scope, .flags = flags };
  size_t len = a->family == AF_INET ? 4 : 16;
  const struct
  {
    int type;
    unsigned char *out;
    bool *has;
  } parts[] = { { IFA_LOCAL, a->local, &a->has_local },
                { IFA_ADDRESS, a->address, &a->has_address },
                { IFA_BROADCAST, a->broadcast, &a->has_broadcast } };
  for (size_t i = 0; i < KIST_ARRAY_SIZE (parts); i++)
    if (tb[parts[i].type] && mnl_attr_get_payload_len (tb[parts[i].type]) == len)
      {
        memcpy (parts[i].out, mnl_attr_get_payload (tb[parts[i].type]), len);
        *parts[i].has = true;
      }
  return MNL_CB_OK;
}

static int
dump_addrs (struct kist_nl *n, struct addr_list *l, char **why)
{
  return kist_nl_dump (n, RTM_GETADDR, sizeof (struct ifaddrmsg), addr_cb, l, "RTM_GETADDR dump",
                       why);
}

static const unsigned char *
addr_key (const struct addr *a)
{
  return a->has_local ? a->local : a->address;
}

static char *
addr_text (const struct addr *a)
{
  char buf[INET6_ADDRSTRLEN] = "?";
  inet_ntop (a->family, addr_key (a), buf, sizeof buf);
  return xasprintf ("%s/%u", buf, a->prefixlen);
}

/* "10.99.0.1/24, fd00::1/64" or "none". */
static char *
addrs_text (const struct addr_list *l)
{
  char *s = xstrdup (l->n ? "" : "none");
  for (size_t i = 0; i < l->n; i++)
    {
      _cleanup_free_ char *a = addr_text (&l->a[i]);
      char *next = xasprintf ("%s%s%s", s, i ? ", " : "", a);
      free (s);
      s = next;
    }
  return s;
}

static int
add_addr (struct kist_nl *n, int index, const struct addr *a, char **why)
{
  struct ifaddrmsg *ifa;
  struct nlmsghdr *nlh
      = kist_nl_msg (n, RTM_NEWADDR, NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL,
                     sizeof *ifa, (void **) &ifa);
  ifa->ifa_family = a->family;
  ifa->ifa_prefixlen = a->prefixlen;
  ifa->ifa_scope = a->scope;
  ifa->ifa_index = (unsigned) index;
  size_t len = a->family == AF_INET ? 4 : 16;
  if (a->has_local)
    mnl_attr_put (nlh, IFA_LOCAL, len, a->local);
  if (a->has_address)
    mnl_attr_put (nlh, IFA_ADDRESS, len, a->address);
  if (a->has_broadcast)
    mnl_attr_put (nlh, IFA_BROADCAST, len, a->broadcast);
  /* What the address was configured with (not its state: tentative, ...). */
  uint32_t keep = a->flags
                  & (IFA_F_NODAD | IFA_F_NOPREFIXROUTE | IFA_F_MANAGETEMPADDR | IFA_F_MCAUTOJOIN
                     | IFA_F_HOMEADDRESS);
  ifa->ifa_flags = (unsigned char) (keep & 0xff);
  if (keep)
    mnl_attr_put_u32 (nlh, IFA_FLAGS, keep);
  _cleanup_free_ char *text = addr_text (a);
  _cleanup_free_ char *what = xasprintf ("RTM_NEWADDR %s", text);
  return kist_nl_exchange (n, nlh, NULL, NULL, what, NULL, why);
}

static int
set_up (struct kist_nl *n, int index, char **why)
{
  struct ifinfomsg *ifi;
  struct nlmsghdr *nlh
      = kist_nl_msg (n, RTM_NEWLINK, NLM_F_REQUEST | NLM_F_ACK, sizeof *ifi, (void **) &ifi);
  ifi->ifi_family = AF_UNSPEC;
  ifi->ifi_index = index;
  ifi->ifi_flags = IFF_UP;
  ifi->ifi_change = IFF_UP;
  return kist_nl_exchange (n, nlh, NULL, NULL, "RTM_NEWLINK up", NULL, why);
}

/* One RTM_NEWLINK moves the device index (seen through from) into the
 * namespace ns_fd and names it name there. */
static int
move_link (struct kist_nl *from, int index, int ns_fd, const char *name, const char *eperm_hint,
           char **why)
{
  struct ifinfomsg *ifi;
  struct nlmsghdr *nlh
      = kist_nl_msg (from, RTM_NEWLINK, NLM_F_REQUEST | NLM_F_ACK, sizeof *ifi, (void **) &ifi);
  ifi->ifi_family = AF_UNSPEC;
  ifi->ifi_index = index;
  mnl_attr_put_u32 (nlh, IFLA_NET_NS_FD, (uint32_t) ns_fd);
  mnl_attr_put_strz (nlh, IFLA_IFNAME, name);
  int ret = kist_nl_exchange (from, nlh, NULL, NULL, "RTM_NEWLINK (IFLA_NET_NS_FD, IFLA_IFNAME)",
                              eperm_hint, why);
  if (ret == -EINVAL)
    {
      char *w = xasprintf ("%s (the kernel refuses to move it: a device bound to its network "
                           "namespace, such as lo, a bridge or a vxlan device, cannot be moved)",
                           *why);
      free (*why);
      *why = w;
    }
  return ret;
}

/* ---- one device */

struct move
{
  int index;    /* its ifindex in `to` */
  bool moved;   /* it left `from` */
  char *detail; /* "HOST -> NAME (ifindex N, KIND, UP); addresses ..." */
};

/* Read back in `to`: the device index is called name, is up if it was, and
 * has every address of saved; `from` no longer has it. */
static int
read_back (struct side *from, struct side *to, const struct kist_nl_link *before, const char *name,
           int index, const struct addr_list *saved, char **why)
{
  struct kist_nl_link li;
  int ret = get_link (&to->nl, index, NULL, &li, why);
  if (ret == -ENODEV || (ret == 0 && strcmp (li.name, name) != 0))
    {
      *why = xasprintf ("read back: %s network namespace has no device %s at ifindex %d", to->what,
                        name, index);
      return -EPROTO;
    }
  if (ret < 0)
    return ret;
  if ((li.flags & IFF_UP) != (before->flags & IFF_UP))
    {
      *why = xasprintf ("read back: %s is %s in %s network namespace, it was %s", name,
                        li.flags & IFF_UP ? "UP" : "DOWN", to->what,
                        before->flags & IFF_UP ? "UP" : "DOWN");
      return -EPROTO;
    }
  _cleanup_free_ struct addr_list *now = xcalloc (1, sizeof *now);
  now->index = index;
  now->all = true;
  if ((ret = dump_addrs (&to->nl, now, why)) < 0)
    return ret;
  for (size_t i = 0; i < saved->n; i++)
    {
      const struct addr *a = &saved->a[i];
      size_t len = a->family == AF_INET ? 4 : 16;
      bool found = false;
      for (size_t j = 0; j < now->n && !found; j++)
        found = now->a[j].family == a->family && now->a[j].prefixlen == a->prefixlen
                && memcmp (addr_key (&now->a[j]), addr_key (a), len) == 0;
      if (!found)
        {
          _cleanup_free_ char *t = addr_text (a);
          *why = xasprintf ("read back: %s in %s network namespace lacks the address %s", name,
                            to->what, t);
          return -EPROTO;
        }
    }
  /* Gone from `from`: its old ifindex is free there, and its old name, if
   * taken again, is another device's. */
  struct kist_nl_link old;
  bool by_index = get_link (&from->nl, before->index, NULL, &old, why) == 0;
  bool by_name = !by_index && get_link (&from->nl, 0, before->name, &old, why) == 0
                 && old.index == before->index;
  if (by_index || by_name)
    {
      free (*why);
      *why = xasprintf ("read back: %s network namespace still has %s (ifindex %d)", from->what,
                        before->name, before->index);
      return -EPROTO;
    }
  free (*why);
  *why = NULL;
  return 0;
}

/* Move the device before (of `from`) into `to` as name, with its permanent
 * global addresses, up again if it was, and read it back.  *m says whether
 * it moved (even on a failure after that) and where it is. */
static int
move_device (struct side *from, struct side *to, const struct kist_nl_link *before, const char *name,
             const char *eperm_hint, struct move *m, char **why)
{
  _cleanup_free_ struct addr_list *saved = xcalloc (1, sizeof *saved);
  saved->index = before->index;
  int ret = dump_addrs (&from->nl, saved, why);
  if (ret < 0)
    return ret;
  if (saved->overflow)
    {
      *why = xasprintf ("it has more than %d permanent addresses of global scope; kist moves at "
                        "most %d with a device",
                        MAX_ADDRS, MAX_ADDRS);
      return -E2BIG;
    }
  if ((ret = move_link (&from->nl, before->index, to->ns_fd, name, eperm_hint, why)) < 0)
    return ret;
  m->moved = true;
  m->index = before->index;
  struct kist_nl_link after;
  if ((ret = get_link (&to->nl, 0, name, &after, why)) < 0)
    {
      if (ret == -ENODEV)
        *why = xasprintf ("moved, but %s network namespace has no device %s", to->what, name);
      return ret;
    }
  m->index = after.index;
  if (before->mac_len && (after.mac_len != before->mac_len
                          || memcmp (after.mac, before->mac, before->mac_len) != 0))
    {
      *why = xasprintf ("moved, but the device %s in %s network namespace has another MAC "
                        "address",
                        name, to->what);
      return -EPROTO;
    }
  for (size_t i = 0; i < saved->n; i++)
    if ((ret = add_addr (&to->nl, after.index, &saved->a[i], why)) < 0)
      return ret;
  if ((before->flags & IFF_UP) && (ret = set_up (&to->nl, after.index, why)) < 0)
    return ret;
  if ((ret = read_back (from, to, before, name, after.index, saved, why)) < 0)
    return ret;
  _cleanup_free_ char *addrs = addrs_text (saved);
  m->detail = xasprintf ("%s -> %s (ifindex %d, %s, %s); addresses %s", before->name, name,
                         after.index, before->kind[0] ? before->kind : "physical",
                         before->flags & IFF_UP ? "UP" : "DOWN", addrs);
  return 0;
}

/* ---- the namespaces */

/* A socket in the network namespace ns_fd: this process (single-threaded)
 * enters it, opens the socket and goes back into its own (self_fd).  If it
 * cannot go back it aborts: every later step would act on the container's
 * namespace as if it were kist's. */
static int
nl_open_in (int ns_fd, int self_fd, struct kist_nl *n, char **why)
{
  if (setns (ns_fd, CLONE_NEWNET) < 0)
    {
      int e = errno;
      *why = xasprintf ("setns into the container's network namespace: %s", strerror (e));
      return -e;
    }
  int ret = kist_nl_open (n, why);
  if (setns (self_fd, CLONE_NEWNET) < 0)
    {
      kist_log_error ("linux.netDevices: cannot go back into kist's own network namespace after "
                      "opening a socket in the container's: %s; aborting",
                      strerror (errno));
      abort ();
    }
  return ret;
}

/* kist's side (its namespace, a socket there) and the container's (ns_fd,
 * taken over). */
static int
open_sides (int ns_fd, struct side *host, struct side *cont, char **why)
{
  *host = (struct side){ .ns_fd = -1, .what = "kist's" };
  *cont = (struct side){ .ns_fd = ns_fd, .what = "the container's" };
  host->ns_fd = open ("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
  if (host->ns_fd < 0)
    {
      int e = errno;
      *why = xasprintf ("open /proc/thread-self/ns/net: %s", strerror (e));
      return -e;
    }
  int ret = kist_nl_open (&host->nl, why);
  if (ret == 0)
    ret = nl_open_in (ns_fd, host->ns_fd, &cont->nl, why);
  return ret;
}

/* The device recorded as d, in the container's namespace: at its ifindex,
 * else under its name; -ENODEV when it is in neither. */
static int
find_inside (struct side *cont, const struct kist_state_netdev *d, struct kist_nl_link *li, char **why)
{
  int ret = d->ifindex > 0 ? get_link (&cont->nl, d->ifindex, NULL, li, why) : -ENODEV;
  if (ret == -ENODEV)
    ret = get_link (&cont->nl, 0, d->name, li, why);
  return ret;
}

/* Move the n devices of devs (in the container's namespace ns_fd) back into
 * kist's under their host names, the last moved first.  keep_going: a
 * failure is logged and the others are still moved; else the first one is
 * returned.  stuck (may be NULL): set for each device still in the
 * container's namespace. */
static int
move_back (int ns_fd, const char *id, const struct kist_state_netdev *devs, size_t n,
           bool keep_going, bool *stuck, char **why)
{
  struct side host, cont;
  int dup_fd = fcntl (ns_fd, F_DUPFD_CLOEXEC, 3);
  for (size_t i = 0; stuck && i < n; i++)
    stuck[i] = true;
  if (dup_fd < 0)
    {
      int e = errno;
      *why = xasprintf ("dup the container's network namespace fd: %s", strerror (e));
      return -e;
    }
  int ret = open_sides (dup_fd, &host, &cont, why);
  for (size_t i = n; ret == 0 && i-- > 0;)
    {
      const struct kist_state_netdev *d = &devs[i];
      struct kist_nl_link li;
      _cleanup_free_ char *w = NULL;
      struct move m = { 0 };
      int r = find_inside (&cont, d, &li, &w);
      if (r == -ENODEV)
        {
          kist_log_warn ("container `%s`: the network device %s (%s inside) is no longer in the "
                         "container's network namespace (removed or moved by the container): "
                         "not moved back",
                         id, d->host, d->name);
          if (stuck)
            stuck[i] = false;
          continue;
        }
      if (r == 0)
        r = move_device (&cont, &host, &li, d->host, NULL, &m, &w);
      free (m.detail);
      if (r == 0 || m.moved)
        {
          if (r == 0)
            kist_log_debug ("container `%s`: network device %s (%s inside) moved back into kist's "
                            "network namespace",
                            id, d->host, li.name);
          else
            kist_log_warn ("container `%s`: network device %s moved back, but: %s", id, d->host, w);
          if (stuck)
            stuck[i] = false;
          continue;
        }
      if (!keep_going)
        {
          *why = xasprintf ("move the network device %s (%s inside) back into kist's network "
                            "namespace: %s",
                            d->host, d->name, w);
          ret = r;
          break;
        }
      kist_log_error ("container `%s`: cannot move the network device %s (%s inside) back into "
                      "kist's network namespace: %s; it goes with the container's namespace "
                      "(a virtual device is destroyed, a physical one goes to the initial "
                      "namespace)",
                      id, d->host, d->name, w);
    }
  side_close (&cont);
  side_close (&host);
  return ret;
}

/* ---- the layer */

static void
netdev_clear (struct kist_state_netdev *d)
{
  free (d->host);
  free (d->name);
  free (d->kind);
  *d = (struct kist_state_netdev){ 0 };
}

/* Forget the devices of nd from keep on. */
static void
moved_truncate (struct kist_net_devices *nd, size_t keep)
{
  while (nd->n_moved > keep)
    netdev_clear (&nd->moved[--nd->n_moved]);
}

void
kist_net_devices_free (struct kist_net_devices *nd)
{
  if (nd)
    {
      moved_truncate (nd, 0);
      free (nd->moved);
      if (nd->ns_fd >= 0)
        close (nd->ns_fd);
    }
  free (nd);
}

void
kist_net_devices_undo (struct kist_net_devices *nd)
{
  if (nd == NULL || nd->n_moved == 0)
    return;
  _cleanup_free_ char *why = NULL;
  _cleanup_free_ bool *stuck = xcalloc (nd->n_moved, sizeof *stuck);
  if (move_back (nd->ns_fd, "(failed create)", nd->moved, nd->n_moved, true, stuck, &why) < 0)
    kist_log_error ("cleanup after a failed create: linux.netDevices: %s; the devices go with the "
                    "container's network namespace",
                    why);
  size_t kept = 0;
  for (size_t i = 0; i < nd->n_moved; i++)
    {
      struct kist_state_netdev d = nd->moved[i];
      nd->moved[i] = (struct kist_state_netdev){ 0 };
      if (stuck[i])
        nd->moved[kept++] = d;
      else
        netdev_clear (&d);
    }
  moved_truncate (nd, kept);
}

/* The container's network namespace: its path, or the waiting init's new
 * one; refused when it is kist's own or not made yet. */
static int
open_target (const struct kist_ctx *ctx, int *fd, char **why)
{
  const struct kist_namespace *net = &ctx->spec->linux_->ns[KIST_NS_NET];
  if (!net->present)
    {
      *why = xstrdup ("the container has no network namespace of its own");
      return -EINVAL;
    }
  if (net->path == NULL && !(kist_ns_clone_flags (ctx->spec) & CLONE_NEWNET))
    {
      *why = xstrdup ("the new network namespace is made inside the user namespace joined by "
                      "path, after the devices would be moved: give the network namespace by "
                      "path too");
      return -ENOTSUP;
    }
  char proc[64];
  snprintf (proc, sizeof proc, "/proc/%d/ns/net", (int) ctx->pid);
  const char *path = net->path ? net->path : proc;
  *fd = open (path, O_RDONLY | O_CLOEXEC);
  if (*fd < 0)
    {
      int e = errno;
      *why = xasprintf ("open the container's network namespace `%s`: %s", path, strerror (e));
      return -e;
    }
  struct stat a, b;
  if (ioctl (*fd, NS_GET_NSTYPE) != CLONE_NEWNET)
    {
      *why = xasprintf ("`%s` is not a network namespace", path);
      return -EINVAL;
    }
  if (fstat (*fd, &a) < 0 || stat ("/proc/thread-self/ns/net", &b) < 0
      || (a.st_dev == b.st_dev && a.st_ino == b.st_ino))
    {
      *why = xasprintf ("the container's network namespace `%s` is kist's own: there is nothing "
                        "to move the devices into",
                        path);
      return -EINVAL;
    }
  return 0;
}

/* "kistnd0 -> eth7, eth1 -> eth1" */
static char *
requested_text (const struct kist_linux *lx)
{
  char *s = xstrdup ("");
  for (size_t i = 0; i < lx->n_net_devices; i++)
    {
      char *next = xasprintf ("%s%s%s -> %s", s, i ? ", " : "", lx->net_devices[i].host,
                              lx->net_devices[i].name);
      free (s);
      s = next;
    }
  return s;
}

/* Every device exists in kist's namespace and its name inside is free. */
static int
check_all (const struct kist_linux *lx, struct side *host, struct side *cont,
           struct kist_nl_link *before, size_t *at, char **why)
{
  for (*at = 0; *at < lx->n_net_devices; ++*at)
    {
      const struct kist_net_device *d = &lx->net_devices[*at];
      struct kist_nl_link li;
      int ret = get_link (&host->nl, 0, d->host, &before[*at], why);
      if (ret == -ENODEV)
        *why = xasprintf ("kist's network namespace has no device %s", d->host);
      if (ret < 0)
        return ret;
      ret = get_link (&cont->nl, 0, d->name, &li, why);
      if (ret == 0)
        {
          *why = xasprintf ("the container's network namespace already has a device named %s "
                            "(ifindex %d): a name must be unique there",
                            d->name, li.index);
          return -EEXIST;
        }
      if (ret != -ENODEV)
        return ret;
    }
  return 0;
}

int
kist_net_devices_apply (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err)
{
  const struct kist_linux *lx = ctx->spec->linux_;
  if (lx == NULL || lx->n_net_devices == 0)
    return 0; /* listed only when requested */
  _cleanup_free_ char *requested = requested_text (lx), *why = NULL, *detail = NULL;
  _cleanup_free_ struct kist_nl_link *before = xcalloc (lx->n_net_devices, sizeof *before);
  struct kist_net_devices *nd = ctx->net_devices = xcalloc (1, sizeof *nd);
  nd->ns_fd = -1;
  nd->joined = lx->ns[KIST_NS_NET].path != NULL;
  nd->moved = xcalloc (lx->n_net_devices, sizeof *nd->moved);
  _cleanup_free_ char *hint
      = xasprintf (" (moving a device needs CAP_NET_ADMIN in kist's network namespace%s; run kist "
                   "as root, or drop linux.netDevices)",
                   geteuid () != 0 ? ", and kist runs as an unprivileged user" : "");
  struct side host = { .ns_fd = -1 }, cont = { .ns_fd = -1 };
  size_t at = lx->n_net_devices; /* the device a failure concerns, n: all */
  int ret = open_target (ctx, &nd->ns_fd, &why);
  int cont_fd = ret == 0 ? fcntl (nd->ns_fd, F_DUPFD_CLOEXEC, 3) : -1;
  if (ret == 0 && cont_fd < 0)
    {
      ret = -errno;
      why = xasprintf ("dup the container's network namespace fd: %s", strerror (-ret));
    }
  if (ret == 0 && (ret = open_sides (cont_fd, &host, &cont, &why)) == -EPERM)
    {
      char *w = xasprintf ("%s%s", why, hint);
      free (why);
      why = w;
    }
  if (ret == 0)
    ret = check_all (lx, &host, &cont, before, &at, &why);
  for (size_t i = 0; ret == 0 && i < lx->n_net_devices; i++)
    {
      at = i;
      const struct kist_net_device *d = &lx->net_devices[at];
      struct move m = { 0 };
      ret = move_device (&host, &cont, &before[at], d->name, hint, &m, &why);
      if (m.moved)
        nd->moved[nd->n_moved++]
            = (struct kist_state_netdev){ .host = xstrdup (d->host), .name = xstrdup (d->name),
                                          .ifindex = m.index,
                                          .kind = before[at].kind[0] ? xstrdup (before[at].kind)
                                                                     : NULL };
      if (ret == 0)
        {
          char *next = detail ? xasprintf ("%s; %s", detail, m.detail) : xstrdup (m.detail);
          free (detail);
          detail = next;
        }
      free (m.detail);
    }
  side_close (&cont);
  side_close (&host);
  if (ret < 0)
    {
      kist_net_devices_undo (nd); /* all or none: the moved ones go back */
      if (at < lx->n_net_devices)
        return kist_report_failed (r, LAYER, requested, -ret, err, "linux.netDevices.%s: %s",
                                   lx->net_devices[at].host, why);
      return kist_report_failed (r, LAYER, requested, -ret, err, "linux.netDevices: %s", why);
    }
  kist_report_applied (r, LAYER, requested,
                       "%s; read back from outside: in the container's network namespace under "
                       "its name inside (same MAC) with its addresses, gone from kist's",
                       detail);
  return 0;
}

/* ---- delete */

int
kist_net_devices_release (const struct kist_state *st, bool force, struct kist_error **err)
{
  if (st->n_net_devices == 0)
    return 0;
  char proc[64];
  snprintf (proc, sizeof proc, "/proc/%d/ns/net", (int) st->pid);
  _cleanup_close_ int fd = kist_state_init_alive (st) ? open (proc, O_RDONLY | O_CLOEXEC) : -1;
  if (fd < 0 || !kist_state_init_alive (st)) /* (checked again: the pid may be reused) */
    {
      for (size_t i = 0; i < st->n_net_devices; i++)
        {
          const struct kist_state_netdev *d = &st->net_devices[i];
          if (d->kind)
            kist_log_debug ("container `%s`: its network namespace is gone with its init: the "
                            "kernel destroyed the %s device %s (%s inside) with it",
                            st->id, d->kind, d->host, d->name);
          else
            kist_log_debug ("container `%s`: its network namespace is gone with its init: the "
                            "kernel returned the physical device %s to the initial network "
                            "namespace (named %s, as inside, if that name was free)",
                            st->id, d->host, d->name);
        }
      return 0;
    }
  _cleanup_free_ char *why = NULL;
  int ret = move_back (fd, st->id, st->net_devices, st->n_net_devices, force, NULL, &why);
  if (ret < 0 && force)
    kist_log_error ("delete container `%s`: linux.netDevices: %s; the devices go with the "
                    "container's network namespace",
                    st->id, why);
  else if (ret < 0)
    return kist_error_make (err, -ret,
                            "delete container `%s`: linux.netDevices: %s; fix that and delete "
                            "again, or `kist delete --force %s` (the device then goes with the "
                            "container's network namespace)",
                            st->id, why, st->id);
  return 0;
}
