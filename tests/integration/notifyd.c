/* SPDX-License-Identifier: GPL-2.0-or-later */
/* notifyd: a minimal seccomp agent for kist's SCMP_ACT_NOTIFY test.
 *
 *   notifyd SOCKET [STATE_FILE]
 *
 * Listens on the unix stream socket SOCKET (linux.seccomp.listenerPath),
 * accepts one connection, receives the listener fd (SCM_RIGHTS) and the
 * runtime-spec container process state JSON (saved to STATE_FILE if given),
 * then answers ONE notification with a fake success (return value 0, the
 * syscall is not run) and exits.  Prints, one a line:
 *
 *   pid N             the state JSON's top-level "pid"
 *   metadata TEXT     its "metadata" (listenerMetadata)
 *   fds N             how many fds came with the message
 *   syscall NAME nr=N the notified syscall (NAME: mkdir, mkdirat or "other")
 *   answered          after SECCOMP_IOCTL_NOTIF_SEND succeeded
 *
 * Gives up (exit 1) after 30 seconds. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#define STATE_MAX (1 << 20)

static void
die (const char *what)
{
  fprintf (stderr, "notifyd: %s: %s\n", what, strerror (errno));
  exit (1);
}

/* The value of KEY at the top level of the JSON object TEXT: a number or
 * string (without quotes, escapes kept as is) copied into out.  Returns 0,
 * or -1 when absent. */
static int
top_level_value (const char *text, const char *key, char *out, size_t outlen)
{
  int depth = 0;
  size_t klen = strlen (key);
  for (const char *p = text; *p; p++)
    {
      if (*p == '"')
        {
          const char *start = p + 1, *q = start;
          while (*q && *q != '"')
            q += (*q == '\\' && q[1]) ? 2 : 1;
          if (!*q)
            return -1;
          const char *after = q + 1;
          while (*after == ' ' || *after == '\n' || *after == '\t' || *after == '\r')
            after++;
          if (depth == 1 && *after == ':' && (size_t) (q - start) == klen
              && strncmp (start, key, klen) == 0)
            {
              const char *v = after + 1, *e;
              while (*v == ' ' || *v == '\n' || *v == '\t' || *v == '\r')
                v++;
              if (*v == '"')
                {
                  v++;
                  for (e = v; *e && *e != '"'; e += (*e == '\\' && e[1]) ? 2 : 1)
                    ;
                }
              else
                for (e = v; *e && *e != ',' && *e != '}' && *e != ' ' && *e != '\n'; e++)
                  ;
              size_t n = (size_t) (e - v) < outlen - 1 ? (size_t) (e - v) : outlen - 1;
              memcpy (out, v, n);
              out[n] = '\0';
              return 0;
            }
          p = q;
          continue;
        }
      if (*p == '{' || *p == '[')
        depth++;
      else if (*p == '}' || *p == ']')
        depth--;
    }
  return -1;
}

int
main (int argc, char **argv)
{
  if (argc < 2 || argc > 3)
    {
      fprintf (stderr, "usage: notifyd SOCKET [STATE_FILE]\n");
      return 2;
    }
  alarm (30);
  setvbuf (stdout, NULL, _IOLBF, 0);

  struct sockaddr_un addr = { .sun_family = AF_UNIX };
  if (strlen (argv[1]) >= sizeof addr.sun_path)
    {
      fprintf (stderr, "notifyd: socket path too long: %s\n", argv[1]);
      return 2;
    }
  strcpy (addr.sun_path, argv[1]);
  int ls = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (ls < 0)
    die ("socket");
  unlink (argv[1]);
  if (bind (ls, (struct sockaddr *) &addr, sizeof addr) < 0)
    die ("bind");
  if (listen (ls, 1) < 0)
    die ("listen");
  int c = accept4 (ls, NULL, NULL, SOCK_CLOEXEC);
  if (c < 0)
    die ("accept");

  /* The first message carries the fd; the JSON may continue after it. */
  char *state = calloc (1, STATE_MAX + 1);
  if (state == NULL)
    die ("calloc");
  union
  {
    char buf[CMSG_SPACE (4 * sizeof (int))];
    struct cmsghdr align;
  } ctl;
  struct iovec iov = { state, STATE_MAX };
  struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
                        .msg_controllen = sizeof ctl.buf };
  ssize_t n = recvmsg (c, &msg, MSG_CMSG_CLOEXEC);
  if (n < 0)
    die ("recvmsg");
  int listener = -1, nfds = 0;
  for (struct cmsghdr *h = CMSG_FIRSTHDR (&msg); h; h = CMSG_NXTHDR (&msg, h))
    if (h->cmsg_level == SOL_SOCKET && h->cmsg_type == SCM_RIGHTS)
      {
        nfds = (int) ((h->cmsg_len - CMSG_LEN (0)) / sizeof (int));
        if (nfds > 0)
          memcpy (&listener, CMSG_DATA (h), sizeof (int));
      }
  size_t len = (size_t) n;
  while (len < STATE_MAX)
    {
      n = recv (c, state + len, STATE_MAX - len, 0);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        break;
      len += (size_t) n;
    }
  state[len] = '\0';
  close (c);
  close (ls);
  unlink (argv[1]);

  if (argc == 3)
    {
      FILE *f = fopen (argv[2], "we");
      if (f == NULL)
        die ("open the state file");
      fputs (state, f);
      fclose (f);
    }
  char val[4096];
  printf ("pid %s\n", top_level_value (state, "pid", val, sizeof val) == 0 ? val : "(none)");
  printf ("metadata %s\n",
          top_level_value (state, "metadata", val, sizeof val) == 0 ? val : "(none)");
  printf ("fds %d\n", nfds);
  if (listener < 0)
    {
      fprintf (stderr, "notifyd: no fd came with the state\n");
      return 1;
    }

  struct seccomp_notif_sizes sizes;
  if (syscall (SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes) < 0)
    die ("seccomp(SECCOMP_GET_NOTIF_SIZES)");
  struct seccomp_notif *req = calloc (1, sizes.seccomp_notif > sizeof *req
                                             ? sizes.seccomp_notif : sizeof *req);
  struct seccomp_notif_resp *resp = calloc (1, sizes.seccomp_notif_resp > sizeof *resp
                                                   ? sizes.seccomp_notif_resp : sizeof *resp);
  if (req == NULL || resp == NULL)
    die ("calloc");
  while (ioctl (listener, SECCOMP_IOCTL_NOTIF_RECV, req) < 0)
    if (errno != EINTR)
      die ("ioctl(SECCOMP_IOCTL_NOTIF_RECV)");

  const char *name = "other";
#ifdef SYS_mkdir
  if (req->data.nr == SYS_mkdir)
    name = "mkdir";
#endif
  if (req->data.nr == SYS_mkdirat)
    name = "mkdirat";
  printf ("syscall %s nr=%d\n", name, req->data.nr);

  /* A fake success: the syscall returns 0 without being run. */
  resp->id = req->id;
  resp->val = 0;
  resp->error = 0;
  resp->flags = 0;
  if (ioctl (listener, SECCOMP_IOCTL_NOTIF_SEND, resp) < 0)
    die ("ioctl(SECCOMP_IOCTL_NOTIF_SEND)");
  printf ("answered\n");
  close (listener);
  return 0;
}
