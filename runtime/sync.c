/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: the parent <-> container-init protocol (see sync.h).  The receiving
 * side trusts nothing about a packet: kist_sync_decode checks its size and
 * type before anything is copied (CVE-2021-43784 class). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "layer.h"
#include "sync.h"
#include "util.h"
#include "verify.h"

/* Every packet type and what its payload may be. */
enum payload_kind
{
  PAYLOAD_NONE,   /* empty */
  PAYLOAD_ANY,    /* anything (ignored) */
  PAYLOAD_LAYER,  /* a kist_layer_encode()d entry (its own NUL separators) */
  PAYLOAD_TEXT,   /* non-empty, no NUL */
  PAYLOAD_PID,    /* 1-10 decimal digits */
  PAYLOAD_BATCH   /* "COUNT" NUL, COUNT frames "LEN" NUL ENTRY (sync.h) */
};

/* A decimal of 1..max without a leading zero, ended by a NUL, at [*p, end):
 * *v, *p past the NUL; -1 when malformed or out of range (no overflow). */
static int
take_count (const char **p, const char *end, size_t max, size_t *v)
{
  const char *q = *p;
  size_t n = 0;
  if (q >= end || *q < '1' || *q > '9')
    return -1;
  while (q < end && *q >= '0' && *q <= '9')
    {
      n = n * 10 + (size_t) (*q++ - '0');
      if (n > max)
        return -1;
    }
  if (q >= end || *q != '\0')
    return -1;
  *p = q + 1;
  *v = n;
  return 0;
}

/* Check a BATCH payload's framing (each entry is checked when it is decoded,
 * kist_layer_decode): 0, -EMSGSIZE (an entry longer than any sender writes)
 * or -EPROTO (empty, truncated, a count that does not match, bytes after). */
static int
batch_check (const char *p, size_t plen)
{
  const char *end = p + plen;
  size_t count, n;
  if (take_count (&p, end, KIST_SYNC_BATCH_MAX, &count) < 0)
    return -EPROTO;
  for (size_t i = 0; i < count; i++)
    {
      if (take_count (&p, end, SIZE_MAX / 2, &n) < 0)
        return -EPROTO;
      if (n > KIST_LAYER_ENCODED_MAX)
        return -EMSGSIZE;
      if (n > (size_t) (end - p))
        return -EPROTO;
      p += n;
    }
  return p == end ? 0 : -EPROTO;
}

static int
payload_kind (char type)
{
  switch (type)
    {
    case KIST_SYNC_GO:
    case KIST_SYNC_READY:
    case KIST_SYNC_START:
      return PAYLOAD_NONE;
    case KIST_SYNC_SECCOMP_FD: /* (what counts is the fd) */
    case KIST_SYNC_PTY:
      return PAYLOAD_ANY;
    case KIST_SYNC_LAYER:
      return PAYLOAD_LAYER;
    case KIST_SYNC_ERROR:
      return PAYLOAD_TEXT;
    case KIST_SYNC_PID:
      return PAYLOAD_PID;
    case KIST_SYNC_BATCH:
      return PAYLOAD_BATCH;
    default:
      return -1;
    }
}

int
kist_sync_decode (const void *buf, size_t n, int msg_flags, char *type, char **payload,
                  size_t *len)
{
  if ((msg_flags & MSG_TRUNC) || n > KIST_SYNC_MAX)
    return -EMSGSIZE;
  if (n == 0)
    return -EPROTO;
  const char *b = buf;
  const char *p = b + 1;
  size_t plen = n - 1;
  switch (payload_kind (b[0]))
    {
    case PAYLOAD_NONE:
      if (plen != 0)
        return -EPROTO;
      break;
    case PAYLOAD_ANY:
      break;
    case PAYLOAD_LAYER:
      if (plen > KIST_LAYER_ENCODED_MAX)
        return -EMSGSIZE;
      if (plen == 0)
        return -EPROTO;
      break;
    case PAYLOAD_TEXT:
      if (plen == 0 || memchr (p, '\0', plen) != NULL)
        return -EPROTO;
      break;
    case PAYLOAD_PID:
      if (plen == 0 || plen > 10)
        return -EPROTO;
      for (size_t i = 0; i < plen; i++)
        if (p[i] < '0' || p[i] > '9')
          return -EPROTO;
      break;
    case PAYLOAD_BATCH:
      {
        int ret = batch_check (p, plen);
        if (ret < 0)
          return ret;
      }
      break;
    default:
      return -EPROTO;
    }
  char *out = xmalloc (plen + 1);
  if (plen)
    memcpy (out, p, plen);
  out[plen] = '\0';
  *type = b[0];
  *payload = out;
  if (len)
    *len = plen;
  return 0;
}

/* The child's held report entries (sync.h): sent as one BATCH right before
 * the next other packet on the same fd. */
static struct
{
  int fd;
  const struct kist_report *r;
  size_t *sent;
} outbox = { .fd = -1 };

void
kist_sync_outbox (int fd, const struct kist_report *r, size_t *sent)
{
  outbox.fd = r && sent ? fd : -1;
  outbox.r = r;
  outbox.sent = sent;
}

int
kist_sync_flush (void)
{
  if (outbox.fd < 0 || *outbox.sent >= outbox.r->n_layers)
    return 0;
  return kist_sync_send_layers (outbox.fd, outbox.r, *outbox.sent, outbox.sent);
}

/* sendmsg of [type, payload) with an optional control message. */
static int
send_packet (int fd, char type, const void *payload, size_t len, void *control,
             size_t controllen)
{
  /* (Written so that no len, SIZE_MAX included, can wrap around.) */
  if (len > KIST_SYNC_MAX - 1)
    return -EMSGSIZE;
  if (len && payload == NULL)
    return -EINVAL;
  /* Whatever the process sends next (it waits for the parent, fails or is
   * about to exec), the entries it recorded go first, in order. */
  if (fd == outbox.fd && type != KIST_SYNC_BATCH)
    {
      int ret = kist_sync_flush ();
      if (ret < 0)
        return ret;
    }
  struct iovec iov[2] = { { .iov_base = &type, .iov_len = 1 },
                          { .iov_base = (void *) payload, .iov_len = len } };
  struct msghdr msg = { .msg_iov = iov, .msg_iovlen = len ? 2 : 1, .msg_control = control,
                        .msg_controllen = controllen };
  for (;;)
    {
      ssize_t w = sendmsg (fd, &msg, MSG_NOSIGNAL);
      if (w < 0 && errno == EINTR)
        continue;
      if (w < 0)
        return -errno;
      if ((size_t) w != len + 1)
        return -EMSGSIZE;
      return 0;
    }
}

int
kist_sync_send (int fd, char type, const void *payload, size_t len)
{
  return send_packet (fd, type, payload, len, NULL, 0);
}

/* The one receive buffer of this thread (KIST_SYNC_MAX bytes, allocated
 * at the first packet and reused: not one 64 KB allocation per message;
 * kist_sync_decode copies the payload out). */
static char *
recv_buffer (void)
{
  static __thread char *buf;
  if (buf == NULL)
    buf = xmalloc (KIST_SYNC_MAX);
  return buf;
}

/* recvmsg of one packet into buf (KIST_SYNC_MAX bytes), with room ctl for
 * control messages (NULL: none), retried on EINTR: the byte count, or
 * -errno.  *msg keeps the flags and the control messages (not the iovec). */
static ssize_t
recv_packet (int fd, char *buf, void *ctl, size_t ctllen, struct msghdr *msg)
{
  struct iovec iov = { .iov_base = buf, .iov_len = KIST_SYNC_MAX };
  ssize_t r;
  do
    {
      *msg = (struct msghdr){
        .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = ctllen
      };
      r = recvmsg (fd, msg, MSG_CMSG_CLOEXEC);
    }
  while (r < 0 && errno == EINTR);
  msg->msg_iov = NULL;
  msg->msg_iovlen = 0;
  return r < 0 ? -errno : r;
}

int
kist_sync_recv (int fd, char *type, char **payload, size_t *len)
{
  char *buf = recv_buffer ();
  struct msghdr msg;
  ssize_t r = recv_packet (fd, buf, NULL, 0, &msg);
  if (r < 0)
    return (int) r;
  if (r == 0 && !(msg.msg_flags & MSG_TRUNC))
    return -ECONNRESET;
  return kist_sync_decode (buf, (size_t) r, msg.msg_flags, type, payload, len);
}

/* Up to 4 decimal digits of [*p, end) into *v; 0, or -1 when there are
 * none or more than 4 (no overflow). */
static int
take_small_number (const char **p, const char *end, int *v)
{
  int n = 0, digits = 0;
  while (*p < end && **p >= '0' && **p <= '9')
    {
      if (++digits > 4)
        return -1;
      n = n * 10 + (**p - '0');
      (*p)++;
    }
  if (digits == 0)
    return -1;
  *v = n;
  return 0;
}

int
kist_sync_send_error (int fd, const struct kist_error *e)
{
  int status = e ? kist_error_exit_status (e) : 125;
  int errnum = e ? e->errnum : 0;
  if (status < 0 || status > 255)
    status = 125;
  if (errnum < 0 || errnum > 4095)
    errnum = 0;
  const char *m = e && e->msg && e->msg[0] ? e->msg : "unknown error";
  char head[16];
  int hl = snprintf (head, sizeof head, "%d %d ", status, errnum);
  size_t room = KIST_SYNC_MAX - 1 - (size_t) hl, ml = strnlen (m, room + 1);
  if (ml > room)
    {
      /* Cut at a character boundary: never in a UTF-8 sequence. */
      ml = room;
      while (ml > 0 && ((unsigned char) m[ml] & 0xc0) == 0x80)
        ml--;
    }
  _cleanup_free_ char *msg = xmalloc ((size_t) hl + ml);
  memcpy (msg, head, (size_t) hl);
  memcpy (msg + hl, m, ml);
  return kist_sync_send (fd, KIST_SYNC_ERROR, msg, (size_t) hl + ml);
}

int
kist_sync_decode_error (const char *payload, size_t len, struct kist_error **err)
{
  const char *p = payload, *end = payload ? payload + len : NULL;
  int status = 0, errnum = 0;
  if (payload == NULL || len == 0 || len > KIST_SYNC_MAX || memchr (payload, '\0', len) != NULL
      || take_small_number (&p, end, &status) < 0 || p >= end || *p++ != ' '
      || take_small_number (&p, end, &errnum) < 0 || p >= end || *p++ != ' ' || p >= end
      || status > 255 || errnum > 4095)
    return kist_error_make (err, EPROTO, "container init sent a malformed error message");
  int ret = kist_error_make (err, 0, "%.*s", (int) (end - p), p);
  if (*err)
    {
      (*err)->errnum = errnum;
      (*err)->status = status;
    }
  return ret;
}

/* s, cut to at most max bytes of whole UTF-8 characters, with a note of the
 * cut (newly allocated). */
static char *
cut_text (const char *s, size_t max)
{
  size_t n = strlen (s);
  if (n <= max)
    return xstrdup (s);
  while (max > 0 && ((unsigned char) s[max] & 0xc0) == 0x80)
    max--;
  return xasprintf ("%.*s... [%zu bytes cut]", (int) max, s, n - max);
}

/* kist_layer_encode, with the text fields cut until the entry fits in
 * KIST_LAYER_ENCODED_MAX: the strings come partly from the image (paths,
 * symlink targets), and a long one must cost it detail, not the run. */
static int
encode_fitting (const struct kist_layer *l, char **buf, size_t *len)
{
  int ret = kist_layer_encode (l, buf, len);
  for (size_t budget = KIST_LAYER_ENCODED_MAX / 4; ret == -EMSGSIZE && budget >= 64; budget /= 2)
    {
      _cleanup_free_ char *requested = l->requested ? cut_text (l->requested, budget) : NULL;
      _cleanup_free_ char *reason = l->reason ? cut_text (l->reason, budget) : NULL;
      _cleanup_free_ char *detail = l->detail ? cut_text (l->detail, budget) : NULL;
      struct kist_layer c = *l;
      c.requested = requested;
      c.reason = reason;
      c.detail = detail;
      ret = kist_layer_encode (&c, buf, len);
    }
  return ret;
}

/* Send the frames [body, body + blen) of count entries as one BATCH. */
static int
send_batch (int fd, const char *body, size_t blen, size_t count)
{
  char head[24];
  int hl = snprintf (head, sizeof head, "%zu", count);
  _cleanup_free_ char *p = xmalloc ((size_t) hl + 1 + blen);
  memcpy (p, head, (size_t) hl + 1);
  memcpy (p + hl + 1, body, blen);
  return kist_sync_send (fd, KIST_SYNC_BATCH, p, (size_t) hl + 1 + blen);
}

int
kist_sync_send_layers (int fd, const struct kist_report *r, size_t from, size_t *sent)
{
  /* Room for the frames of one packet: the type byte and the header out. */
  const size_t room = KIST_SYNC_MAX - 1 - 24;
  _cleanup_free_ char *body = NULL;
  size_t blen = 0, cap = 0, count = 0;
  for (size_t i = from; i < r->n_layers; i++)
    {
      _cleanup_free_ char *buf = NULL;
      size_t len = 0;
      if (encode_fitting (&r->layers[i], &buf, &len) < 0)
        return -EINVAL;
      char lenbuf[24];
      int ll = snprintf (lenbuf, sizeof lenbuf, "%zu", len);
      size_t frame = (size_t) ll + 1 + len;
      if (count > 0 && (blen + frame > room || count == KIST_SYNC_BATCH_MAX))
        {
          int ret = send_batch (fd, body, blen, count);
          if (ret < 0)
            return ret;
          blen = count = 0;
        }
      if (blen + frame > cap)
        {
          cap = (blen + frame) * 2;
          body = xrealloc (body, cap);
        }
      memcpy (body + blen, lenbuf, (size_t) ll + 1);
      memcpy (body + blen + ll + 1, buf, len);
      blen += frame;
      count++;
    }
  if (count > 0)
    {
      int ret = send_batch (fd, body, blen, count);
      if (ret < 0)
        return ret;
    }
  *sent = r->n_layers;
  return 0;
}

/* ---- fds over the sync socket (SCM_RIGHTS) */

int
kist_sync_send_fd (int fd, char type, const void *payload, size_t len, int passfd)
{
  if (passfd < 0)
    return -EBADF;
  union
  {
    char buf[CMSG_SPACE (sizeof (int))];
    struct cmsghdr align;
  } ctl;
  memset (&ctl, 0, sizeof ctl);
  struct msghdr msg = { .msg_control = ctl.buf, .msg_controllen = sizeof ctl.buf };
  struct cmsghdr *c = CMSG_FIRSTHDR (&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN (sizeof (int));
  memcpy (CMSG_DATA (c), &passfd, sizeof (int));
  return send_packet (fd, type, payload, len, ctl.buf, sizeof ctl.buf);
}

int
kist_sync_recv_fd (int fd, char *type, char **payload, size_t *len, int *passfd)
{
  char *buf = recv_buffer ();
  union
  {
    char buf[CMSG_SPACE (4 * sizeof (int))];
    struct cmsghdr align;
  } ctl;
  struct msghdr msg;
  *passfd = -1;
  ssize_t r = recv_packet (fd, buf, ctl.buf, sizeof ctl.buf, &msg);
  if (r < 0)
    return (int) r;
  /* Keep the first fd that came; close any others (never leak them). */
  for (struct cmsghdr *c = CMSG_FIRSTHDR (&msg); c; c = CMSG_NXTHDR (&msg, c))
    {
      if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS
          || c->cmsg_len < CMSG_LEN (0))
        continue;
      size_t n = (c->cmsg_len - CMSG_LEN (0)) / sizeof (int);
      size_t room = (size_t) (ctl.buf + sizeof ctl.buf - (char *) CMSG_DATA (c)) / sizeof (int);
      if (n > room)
        n = room;
      for (size_t i = 0; i < n; i++)
        {
          int got;
          memcpy (&got, CMSG_DATA (c) + i * sizeof (int), sizeof (int));
          if (*passfd < 0)
            *passfd = got;
          else
            close (got);
        }
    }
  int ret;
  if (r == 0 && !(msg.msg_flags & MSG_TRUNC))
    ret = -ECONNRESET;
  else if (msg.msg_flags & MSG_CTRUNC)
    ret = -EPROTO;
  else
    ret = kist_sync_decode (buf, (size_t) r, msg.msg_flags, type, payload, len);
  if (ret < 0 && *passfd >= 0)
    {
      close (*passfd);
      *passfd = -1;
    }
  return ret;
}

int
kist_sync_add_layer (struct kist_report *r, const char *payload, size_t len, const char *from,
                     struct kist_error **err)
{
  struct kist_layer l;
  if (kist_layer_decode (payload, len, &l) < 0)
    return kist_error_make (err, EPROTO, "malformed report entry from %s", from);
  /* The wire is input: a name the registry does not declare, or one the
   * report holds already, is refused (never kist's internal-error abort). */
  if (!kist_layer_known (l.name) || (r && kist_report_find (r, l.name)))
    {
      int ret = kist_error_make (err, EPROTO, "%s report entry `%.64s` from %s",
                                 kist_layer_known (l.name) ? "a second" : "an unknown", l.name,
                                 from);
      kist_layer_clear (&l);
      return ret;
    }
  /* An entry to be verified from outside is held as not applied until the
   * parent read what the kernel says (verify.c). */
  kist_verify_received (&l);
  kist_report_add_moved (r, &l);
  return 0;
}

int
kist_sync_add_batch (struct kist_report *r, const char *payload, size_t len, const char *from,
                     struct kist_error **err)
{
  if (payload == NULL || batch_check (payload, len) < 0)
    return kist_error_make (err, EPROTO, "malformed batch of report entries from %s", from);
  const char *p = payload, *end = payload + len;
  size_t count, n;
  take_count (&p, end, KIST_SYNC_BATCH_MAX, &count);
  for (size_t i = 0; i < count; i++)
    {
      take_count (&p, end, SIZE_MAX / 2, &n);
      if (kist_sync_add_layer (r, p, n, from, err) < 0)
        return -1;
      p += n;
    }
  return 0;
}
