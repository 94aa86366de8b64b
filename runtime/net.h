/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: what the network layers share: the rtnetlink helpers (net.c, over
 * libmnl) and the devices of linux.netDevices that a create moved
 * (net_devices.c), for its undo (container.c) and for delete
 * (lifecycle.c). */
#ifndef KIST_NET_H
#define KIST_NET_H

#include <libmnl/libmnl.h>
#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

struct kist_state;
struct kist_state_netdev;

/* ---- rtnetlink (net.c) */

/* Big enough for any dump message (libmnl's recommendation for dumps). */
#define KIST_NL_BUF_SIZE 32768

/* One NETLINK_ROUTE socket (in the network namespace it was opened in), its
 * port, the last sequence number and a receive buffer. */
struct kist_nl
{
  struct mnl_socket *nl;
  unsigned portid, seq;
  char *buf;
};

/* Open and bind (close-on-exec); *why on failure. */
int kist_nl_open (struct kist_nl *n, char **why);
void kist_nl_close (struct kist_nl *n);

/* A request of type with flags in n->buf, its fixed header of hdr_len
 * bytes (zeroed) in *hdr. */
struct nlmsghdr *kist_nl_msg (struct kist_nl *n, uint16_t type, uint16_t flags, size_t hdr_len,
                              void **hdr);

/* Send nlh and receive the answers (cb for each, may be NULL) until the ACK
 * or the end of the dump; *why names what (and eperm_hint after an EPERM)
 * on failure.  Returns 0 or -errno. */
int kist_nl_exchange (struct kist_nl *n, struct nlmsghdr *nlh, mnl_cb_t cb, void *arg,
                      const char *what, const char *eperm_hint, char **why);

/* A dump request of type (RTM_GETLINK, RTM_GETADDR ...) with a zeroed,
 * AF_UNSPEC fixed header of hdr_len bytes; cb for each answer. */
int kist_nl_dump (struct kist_nl *n, uint16_t type, size_t hdr_len, mnl_cb_t cb, void *arg,
                  const char *what, char **why);

/* A link as RTM_NEWLINK (the answer to RTM_GETLINK) describes it. */
struct kist_nl_link
{
  int index;
  unsigned flags;        /* IFF_* */
  char name[IFNAMSIZ];   /* "" when the message has none */
  unsigned char mac[32]; /* IFLA_ADDRESS */
  size_t mac_len;        /* 0: none */
  char kind[32];         /* IFLA_INFO_KIND, "" for a physical device */
};

/* Parse an RTM_NEWLINK message into *li: 0, or -1 when it is malformed. */
int kist_nl_link_parse (const struct nlmsghdr *nlh, struct kist_nl_link *li);

/* mnl_attr_parse's callback: every attribute up to max into tb. */
struct kist_nl_attrs
{
  const struct nlattr **tb;
  int max;
};
int kist_nl_attrs_cb (const struct nlattr *attr, void *data);

/* ---- linux.netDevices (net_devices.c) */

/* What a create moved: the container's network namespace, held open until
 * the create is committed or undone (so that a failed init cannot take a
 * virtual device down with its namespace), and each device moved. */
struct kist_net_devices
{
  int ns_fd;                       /* the container's network namespace */
  bool joined;                     /* joined by path: the devices stay there at delete */
  struct kist_state_netdev *moved; /* host name, name inside, ifindex inside, kind */
  size_t n_moved;
};

/* A failed create: every device moved goes back into kist's network
 * namespace under its host name (failures are logged). */
void kist_net_devices_undo (struct kist_net_devices *nd);
void kist_net_devices_free (struct kist_net_devices *nd);

/* delete: the devices state.json records go back into kist's network
 * namespace under their host names, while the init (and with it the
 * namespace) is alive; a stopped container's namespace is gone, and what
 * the kernel did with the devices is logged.  A device that cannot be moved
 * back fails the delete unless force (then it is logged). */
int kist_net_devices_release (const struct kist_state *st, bool force, struct kist_error **err);

#endif
