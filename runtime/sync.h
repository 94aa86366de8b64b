/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: the parent <-> container-init protocol over a SOCK_SEQPACKET pair.
 * Each message is one packet: a type byte followed by a payload. */
#ifndef KIST_SYNC_H
#define KIST_SYNC_H

#include <stddef.h>
#include <sys/types.h>

#include "error.h"
#include "report.h"

enum kist_sync_type
{
  KIST_SYNC_GO = 'G',      /* parent -> init: user namespace maps written, go on */
  KIST_SYNC_LAYER = 'L',   /* init -> parent: one encoded report entry */
  KIST_SYNC_ERROR = 'E',   /* init -> parent / start client: status, errno, message */
  KIST_SYNC_READY = 'R',   /* init -> parent: set up, waiting for start */
  KIST_SYNC_START = 'S',   /* start client -> init: exec now */
  KIST_SYNC_SECCOMP_FD = 'F', /* init -> parent: the seccomp listener fd (SCM_RIGHTS) */
  KIST_SYNC_PID = 'P'      /* exec helper -> kist: host pid of the final process */
};

#define KIST_SYNC_MAX 65536

int kist_sync_send (int fd, char type, const void *payload, size_t len);
/* Receive one packet: *type, payload copied into a new NUL-terminated buffer.
 * Returns 0, or -ECONNRESET on EOF (peer gone), or another -errno. */
int kist_sync_recv (int fd, char *type, char **payload, size_t *len);

/* Send an error (status, errnum, msg) / decode one into a kist_error. */
int kist_sync_send_error (int fd, const struct kist_error *e);
int kist_sync_decode_error (const char *payload, size_t len, struct kist_error **err);

/* Send report entries [from, r->n_layers) as LAYER packets; returns the new "from". */
int kist_sync_send_layers (int fd, const struct kist_report *r, size_t from, size_t *sent);

/* ---- additions (seccomp helper) ---- */

/* Send one packet with an fd attached (SCM_RIGHTS).  passfd stays open. */
int kist_sync_send_fd (int fd, char type, const void *payload, size_t len, int passfd);
/* Like kist_sync_recv, and *passfd gets the fd that came with the packet
 * (O_CLOEXEC), or -1.  Use it wherever an fd may come: kist_sync_recv
 * (plain recv) makes the kernel discard attached fds. */
int kist_sync_recv_fd (int fd, char *type, char **payload, size_t *len, int *passfd);

#endif
