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
  KIST_SYNC_BATCH = 'B',   /* init -> parent: report entries in one packet (below) */
  KIST_SYNC_ERROR = 'E',   /* init -> parent / start client: status, errno, message */
  KIST_SYNC_READY = 'R',   /* init -> parent: set up, waiting for start */
  KIST_SYNC_START = 'S',   /* start client -> init: exec now */
  KIST_SYNC_SECCOMP_FD = 'F', /* init -> parent: the seccomp listener fd (SCM_RIGHTS) */
  KIST_SYNC_PID = 'P',     /* exec helper -> kist: host pid of the final process */
  KIST_SYNC_PTY = 'T'      /* init / exec process -> kist: the pty master (SCM_RIGHTS) */
};

/* The largest packet (type byte + payload) either side sends or accepts. */
#define KIST_SYNC_MAX 65536

/* Send one packet.  Returns 0, -EMSGSIZE when 1 + len > KIST_SYNC_MAX
 * (nothing is sent: a packet is never cut short), or another -errno. */
int kist_sync_send (int fd, char type, const void *payload, size_t len);
/* Receive one packet: *type, payload copied into a new NUL-terminated buffer.
 * Returns 0, or -ECONNRESET on EOF (peer gone), or another -errno; a packet
 * kist_sync_decode refuses is consumed and its error returned (-EMSGSIZE,
 * -EPROTO). */
int kist_sync_recv (int fd, char *type, char **payload, size_t *len);

/* Check one received packet of n bytes (msg_flags: what recvmsg said, for
 * MSG_TRUNC) and split it into *type and a new NUL-terminated *payload of
 * *len bytes.  Refuses, without allocating anything: a truncated or oversized
 * packet (n > KIST_SYNC_MAX, MSG_TRUNC, a LAYER payload longer than
 * KIST_LAYER_ENCODED_MAX) with -EMSGSIZE; an empty packet, an unknown type, a
 * payload on a type that has none (GO, READY, START), an empty
 * LAYER or ERROR, a NUL inside an ERROR or PID, a PID that is not 1-10
 * decimal digits, a BATCH whose framing is not the one below (empty, a bad
 * count, a frame cut short, bytes after the last) with -EPROTO; a BATCH frame
 * longer than KIST_LAYER_ENCODED_MAX with -EMSGSIZE. */
int kist_sync_decode (const void *buf, size_t n, int msg_flags, char *type, char **payload,
                      size_t *len);

/* Send an error (status, errnum, msg; a message too long for one packet is
 * cut at a UTF-8 character boundary) / decode one into a kist_error:
 * "STATUS ERRNUM MESSAGE", STATUS 0-255 and ERRNUM 0-4095 in decimal (at most
 * 4 digits each), MESSAGE non-empty, no NUL in the len bytes.  A malformed
 * one gives the error "container init sent a malformed error message". */
int kist_sync_send_error (int fd, const struct kist_error *e);
int kist_sync_decode_error (const char *payload, size_t len, struct kist_error **err);

/* A BATCH payload: a header "COUNT" and a NUL, then COUNT frames, each
 * "LEN" and a NUL followed by LEN bytes of one kist_layer_encode()d entry;
 * nothing after the last frame.  COUNT 1..KIST_SYNC_BATCH_MAX and LEN
 * 1..KIST_LAYER_ENCODED_MAX, both decimal without leading zeros (each entry
 * carries its own step).  kist_sync_decode refuses a malformed one (-EPROTO; a LEN
 * over KIST_LAYER_ENCODED_MAX: -EMSGSIZE). */
#define KIST_SYNC_BATCH_MAX 1024

/* Send report entries [from, r->n_layers) as BATCH packets (as few as fit in
 * KIST_SYNC_MAX each; nothing when there are none); *sent gets the new
 * "from".  An entry too long for a packet is sent with its requested, reason
 * and detail texts cut (marked "... [N bytes cut]"). */
int kist_sync_send_layers (int fd, const struct kist_report *r, size_t from, size_t *sent);

/* The child's outbox: entries of r from *sent on are held, not sent one
 * packet each, and go out (kist_sync_send_layers) right before any other
 * packet the process sends on fd (GO, READY, ERROR, an fd), i.e. before every
 * wait for the parent, before the execve and with any error.  r and sent
 * must live as long as the outbox is set (the child's main never returns);
 * kist_sync_outbox (-1, NULL, NULL) clears it. */
void kist_sync_outbox (int fd, const struct kist_report *r, size_t *sent);
/* Send what the outbox holds (0 when it is empty or not set), or -errno. */
int kist_sync_flush (void);

/* Every entry of a BATCH payload (checked by kist_sync_decode) into r
 * through kist_sync_add_layer; stops at the first refused. */
int kist_sync_add_batch (struct kist_report *r, const char *payload, size_t len, const char *from,
                         struct kist_error **err);

/* ---- additions (seccomp helper) ---- */

/* Send one packet with an fd attached (SCM_RIGHTS).  passfd stays open. */
int kist_sync_send_fd (int fd, char type, const void *payload, size_t len, int passfd);
/* Like kist_sync_recv, and *passfd gets the fd that came with the packet
 * (O_CLOEXEC), or -1.  Use it wherever an fd may come: kist_sync_recv
 * (plain recv) makes the kernel discard attached fds. */
int kist_sync_recv_fd (int fd, char *type, char **payload, size_t *len, int *passfd);

/* A LAYER packet's payload into r (NULL: decoded and dropped); from names
 * the sender in the error ("the container init", "the exec helper").  An
 * applied entry that carries an expectation arrives pending (not applied
 * until kist_verify_outside agreed, verify.h). */
int kist_sync_add_layer (struct kist_report *r, const char *payload, size_t len, const char *from,
                         struct kist_error **err);

#endif
