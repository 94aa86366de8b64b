/* ttytool.c: the other end of kist's terminals, for t_terminal.sh.
 *
 *   ttytool recv SOCK STEP...           listen on the AF_UNIX stream socket
 *                                       SOCK, take one pty master (SCM_RIGHTS),
 *                                       run the steps on it, copy its output to
 *                                       stdout until the last slave is gone
 *   ttytool drive STEP... -- CMD ARG... run CMD on a fresh pty (its controlling
 *                                       terminal and stdio), run the steps on
 *                                       the master, exit with CMD's status
 *
 * Steps, in order:  size RxC     set the window size (TIOCSWINSZ)
 *                   wait STR     read until the output so far contains STR
 *                   input STR    write STR (\n, \r, \004 ... escapes)
 *                   sleep MS
 * On stderr: "ttytool: fd NAME isatty N" (recv), "ttytool: termios restored
 * yes|no" (drive: the pty's modes after CMD exited against before), and
 * "ttytool: timeout waiting for STR" when a wait takes more than 20 s (then
 * exit 124). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <stdbool.h>
#include <time.h>
#include <unistd.h>

static char *out;
static size_t out_len, seen;
static pid_t child = -1;
static int child_status = -1;

static long
now_ms (void)
{
  struct timespec t;
  clock_gettime (CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static void
reap (void)
{
  int st;
  if (child > 0 && child_status < 0 && waitpid (child, &st, WNOHANG) == child)
    child_status = WIFEXITED (st) ? WEXITSTATUS (st) : 128 + WTERMSIG (st);
}

/* Read what is there (up to ms); 0 when the master reads EIO/EOF. */
static int
pump (int m, int ms)
{
  struct pollfd p = { .fd = m, .events = POLLIN };
  int n = poll (&p, 1, ms);
  reap ();
  if (n <= 0)
    return 1;
  char buf[4096];
  ssize_t r = read (m, buf, sizeof buf);
  if (r < 0 && (errno == EINTR || errno == EAGAIN))
    return 1;
  if (r <= 0)
    return 0;
  out = realloc (out, out_len + (size_t) r + 1);
  memcpy (out + out_len, buf, (size_t) r);
  out_len += (size_t) r;
  out[out_len] = 0;
  fwrite (buf, 1, (size_t) r, stdout);
  fflush (stdout);
  return 1;
}

static char *
unescape (const char *s)
{
  char *d = malloc (strlen (s) + 1), *p = d;
  for (; *s; s++)
    {
      if (*s != '\\' || !s[1])
        {
          *p++ = *s;
          continue;
        }
      s++;
      if (*s == 'n')
        *p++ = '\n';
      else if (*s == 'r')
        *p++ = '\r';
      else if (*s >= '0' && *s <= '7')
        {
          int v = 0, k = 0;
          while (k < 3 && *s >= '0' && *s <= '7')
            v = v * 8 + (*s++ - '0'), k++;
          s--;
          *p++ = (char) v;
        }
      else
        *p++ = *s;
    }
  *p = 0;
  return d;
}

static int
set_size (int fd, const char *rc)
{
  unsigned r = 0, c = 0;
  if (sscanf (rc, "%ux%u", &r, &c) != 2)
    return -1;
  struct winsize ws = { .ws_row = (unsigned short) r, .ws_col = (unsigned short) c };
  return ioctl (fd, TIOCSWINSZ, &ws);
}

static int
run_steps (int m, char **st, int n)
{
  for (int i = 0; i < n; i++)
    {
      const char *a = i + 1 < n ? st[i + 1] : "";
      if (strcmp (st[i], "size") == 0 || strcmp (st[i], "resize") == 0)
        {
          if (set_size (m, a) < 0)
            return fprintf (stderr, "ttytool: bad size %s\n", a), 2;
        }
      else if (strcmp (st[i], "wait") == 0)
        {
          long end = now_ms () + 20000;
          char *want = unescape (a);
          for (;;)
            {
              char *hit = out ? strstr (out + seen, want) : NULL;
              if (hit)
                {
                  seen = (size_t) (hit - out) + strlen (want);
                  break;
                }
              if (now_ms () > end || !pump (m, 100))
                {
                  fprintf (stderr, "ttytool: timeout waiting for %s\n", a);
                  return 124;
                }
            }
          free (want);
        }
      else if (strcmp (st[i], "input") == 0)
        {
          char *s = unescape (a);
          if (write (m, s, strlen (s)) < 0)
            return perror ("ttytool: write"), 2;
          free (s);
        }
      else if (strcmp (st[i], "sleep") == 0)
        {
          long end = now_ms () + atol (a);
          while (now_ms () < end)
            pump (m, 10);
        }
      else
        return fprintf (stderr, "ttytool: unknown step %s\n", st[i]), 2;
      i++;
    }
  return 0;
}

static int
recv_fd (const char *path)
{
  int l = socket (AF_UNIX, SOCK_STREAM, 0);
  struct sockaddr_un a = { .sun_family = AF_UNIX };
  snprintf (a.sun_path, sizeof a.sun_path, "%s", path);
  if (l < 0 || bind (l, (struct sockaddr *) &a, sizeof a) < 0 || listen (l, 1) < 0)
    return perror ("ttytool: listen"), -1;
  int c = accept (l, NULL, NULL);
  if (c < 0)
    return perror ("ttytool: accept"), -1;
  char name[256] = { 0 };
  union
  {
    char buf[CMSG_SPACE (sizeof (int))];
    struct cmsghdr align;
  } ctl;
  struct iovec iov = { .iov_base = name, .iov_len = sizeof name - 1 };
  struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
                        .msg_controllen = sizeof ctl.buf };
  if (recvmsg (c, &msg, 0) < 0)
    return perror ("ttytool: recvmsg"), -1;
  struct cmsghdr *h = CMSG_FIRSTHDR (&msg);
  if (h == NULL || h->cmsg_type != SCM_RIGHTS)
    return fprintf (stderr, "ttytool: no fd received\n"), -1;
  int fd;
  memcpy (&fd, CMSG_DATA (h), sizeof fd);
  fprintf (stderr, "ttytool: fd %s isatty %d\n", name, isatty (fd));
  close (c);
  close (l);
  return fd;
}

int
main (int argc, char **argv)
{
  if (argc < 2)
    return 2;
  signal (SIGPIPE, SIG_IGN);
  if (strcmp (argv[1], "recv") == 0 && argc >= 3)
    {
      int m = recv_fd (argv[2]);
      if (m < 0)
        return 1;
      int r = run_steps (m, argv + 3, argc - 3);
      if (r)
        return r;
      long end = now_ms () + 20000;
      while (now_ms () < end && pump (m, 100))
        ;
      return 0;
    }
  if (strcmp (argv[1], "drive") != 0)
    return 2;
  int dd = 2;
  while (dd < argc && strcmp (argv[dd], "--") != 0)
    dd++;
  if (dd + 1 >= argc)
    return 2;
  int m = posix_openpt (O_RDWR | O_NOCTTY);
  if (m < 0 || grantpt (m) < 0 || unlockpt (m) < 0)
    return 2;
  int s = open (ptsname (m), O_RDWR | O_NOCTTY);
  struct termios before, after;
  if (s < 0 || tcgetattr (s, &before) < 0)
    return 2;
  /* A first size, before the command starts (a "size" step changes it). */
  struct winsize ws0 = { .ws_row = 24, .ws_col = 80 };
  ioctl (m, TIOCSWINSZ, &ws0);
  child = fork ();
  if (child == 0)
    {
      setsid ();
      if (ioctl (s, TIOCSCTTY, 0) < 0)
        _exit (2);
      dup2 (s, 0), dup2 (s, 1), dup2 (s, 2);
      close (m);
      if (s > 2)
        close (s);
      execvp (argv[dd + 1], argv + dd + 1);
      _exit (127);
    }
  int r = run_steps (m, argv + 2, dd - 2);
  long end = now_ms () + 20000;
  while (child_status < 0 && now_ms () < end)
    pump (m, 50);
  /* What came before the exit, then no more than 300 ms of silence. */
  long quiet = now_ms () + 300;
  while (now_ms () < quiet)
    pump (m, 50);
  if (child_status < 0)
    {
      kill (child, SIGKILL);
      fprintf (stderr, "ttytool: the command did not exit\n");
      return 124;
    }
  tcgetattr (s, &after);
  bool same = before.c_iflag == after.c_iflag && before.c_oflag == after.c_oflag
              && before.c_lflag == after.c_lflag && before.c_cflag == after.c_cflag;
  fprintf (stderr, "ttytool: termios restored %s\n", same ? "yes" : "no");
  return r ? r : child_status;
}
