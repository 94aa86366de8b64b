/* SPDX-License-Identifier: GPL-2.0-or-later */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "sync.h"
#include "util.h"

int
kist_sync_send (int fd, char type, const void *payload, size_t len)
{
  if (len + 1 > KIST_SYNC_MAX)
    len = KIST_SYNC_MAX - 1;
  _cleanup_free_ char *buf = xmalloc (len + 1);
  buf[0] = type;
  if (len)
    memcpy (buf + 1, payload, len);
  for (;;)
    {
      ssize_t w = send (fd, buf, len + 1, MSG_NOSIGNAL);
      if (w < 0 && errno == EINTR)
        continue;
      if (w < 0)
        return -errno;
      return 0;
    }
}

int
kist_sync_recv (int fd, char *type, char **payload, size_t *len)
{
  _cleanup_free_ char *buf = xmalloc (KIST_SYNC_MAX + 1);
  ssize_t r;
  do
    r = recv (fd, buf, KIST_SYNC_MAX, 0);
  while (r < 0 && errno == EINTR);
  if (r < 0)
    return -errno;
  if (r == 0)
    return -ECONNRESET;
  *type = buf[0];
  size_t n = (size_t) r - 1;
  char *p = xmalloc (n + 1);
  memcpy (p, buf + 1, n);
  p[n] = '\0';
  *payload = p;
  if (len)
    *len = n;
  return 0;
}

int
kist_sync_send_error (int fd, const struct kist_error *e)
{
  _cleanup_free_ char *msg
      = xasprintf ("%d %d %s", e ? kist_error_exit_status (e) : 125, e ? e->errnum : 0,
                   e && e->msg ? e->msg : "unknown error");
  return kist_sync_send (fd, KIST_SYNC_ERROR, msg, strlen (msg));
}

int
kist_sync_decode_error (const char *payload, size_t len, struct kist_error **err)
{
  int status = 0, errnum = 0, off = 0;
  if (sscanf (payload, "%d %d %n", &status, &errnum, &off) < 2 || off <= 0 || (size_t) off > len)
    return kist_error_make (err, 0, "container init sent a malformed error message");
  int ret = kist_error_make (err, 0, "%s", payload + off);
  if (*err)
    {
      (*err)->errnum = errnum > 0 && errnum < 4096 ? errnum : 0;
      (*err)->status = status > 0 && status < 256 ? status : 0;
    }
  return ret;
}

int
kist_sync_send_layers (int fd, const struct kist_report *r, size_t from, size_t *sent)
{
  for (size_t i = from; i < r->n_layers; i++)
    {
      _cleanup_free_ char *buf = NULL;
      size_t len = 0;
      if (kist_layer_encode (&r->layers[i], &buf, &len) < 0)
        return -EINVAL;
      int ret = kist_sync_send (fd, KIST_SYNC_LAYER, buf, len);
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
  if (len + 1 > KIST_SYNC_MAX)
    return -EMSGSIZE;
  _cleanup_free_ char *buf = xmalloc (len + 1);
  buf[0] = type;
  if (len)
    memcpy (buf + 1, payload, len);
  struct iovec iov = { .iov_base = buf, .iov_len = len + 1 };
  union
  {
    char buf[CMSG_SPACE (sizeof (int))];
    struct cmsghdr align;
  } ctl;
  memset (&ctl, 0, sizeof ctl);
  struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
                        .msg_controllen = sizeof ctl.buf };
  struct cmsghdr *c = CMSG_FIRSTHDR (&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN (sizeof (int));
  memcpy (CMSG_DATA (c), &passfd, sizeof (int));
  for (;;)
    {
      ssize_t w = sendmsg (fd, &msg, MSG_NOSIGNAL);
      if (w < 0 && errno == EINTR)
        continue;
      if (w < 0)
        return -errno;
      return 0;
    }
}

int
kist_sync_recv_fd (int fd, char *type, char **payload, size_t *len, int *passfd)
{
  _cleanup_free_ char *buf = xmalloc (KIST_SYNC_MAX + 1);
  union
  {
    char buf[CMSG_SPACE (4 * sizeof (int))];
    struct cmsghdr align;
  } ctl;
  struct iovec iov = { .iov_base = buf, .iov_len = KIST_SYNC_MAX };
  struct msghdr msg;
  ssize_t r;
  *passfd = -1;
  do
    {
      memset (&msg, 0, sizeof msg);
      msg.msg_iov = &iov;
      msg.msg_iovlen = 1;
      msg.msg_control = ctl.buf;
      msg.msg_controllen = sizeof ctl.buf;
      r = recvmsg (fd, &msg, MSG_CMSG_CLOEXEC);
    }
  while (r < 0 && errno == EINTR);
  if (r < 0)
    return -errno;
  /* Keep the first fd that came; close any others (never leak them). */
  for (struct cmsghdr *c = CMSG_FIRSTHDR (&msg); c; c = CMSG_NXTHDR (&msg, c))
    {
      if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
        continue;
      size_t n = (c->cmsg_len - CMSG_LEN (0)) / sizeof (int);
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
  if (r == 0)
    {
      if (*passfd >= 0)
        close (*passfd);
      *passfd = -1;
      return -ECONNRESET;
    }
  if (msg.msg_flags & MSG_CTRUNC)
    {
      if (*passfd >= 0)
        close (*passfd);
      *passfd = -1;
      return -EPROTO;
    }
  *type = buf[0];
  size_t n = (size_t) r - 1;
  char *p = xmalloc (n + 1);
  memcpy (p, buf + 1, n);
  p[n] = '\0';
  *payload = p;
  if (len)
    *len = n;
  return 0;
}
