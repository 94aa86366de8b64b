/* ptyrun.c: ptyrun OUT COMMAND [ARG...]: run COMMAND as the leader of a new
 * session whose controlling terminal is a fresh pty (its stdin, stdout and
 * stderr), wait for it, then write to OUT whatever is left unread in the
 * terminal's input queue (what TIOCSTI pushed) and exit with COMMAND's
 * status. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

int
main (int argc, char **argv)
{
  if (argc < 3)
    return 2;
  int m = posix_openpt (O_RDWR | O_NOCTTY);
  if (m < 0 || grantpt (m) < 0 || unlockpt (m) < 0)
    return 2;
  const char *name = ptsname (m);
  pid_t pid = fork ();
  if (pid == 0)
    {
      setsid ();
      int s = open (name, O_RDWR);
      if (s < 0 || ioctl (s, TIOCSCTTY, 0) < 0)
        _exit (2);
      dup2 (s, 0), dup2 (s, 1), dup2 (s, 2);
      execvp (argv[2], argv + 2);
      _exit (127);
    }
  int st = 0;
  waitpid (pid, &st, 0);
  int s = open (name, O_RDONLY | O_NONBLOCK | O_NOCTTY);
  FILE *out = fopen (argv[1], "w");
  if (s >= 0 && out)
    {
      struct termios t;
      if (tcgetattr (s, &t) == 0)
        {
          t.c_lflag &= ~(tcflag_t) ICANON;
          tcsetattr (s, TCSANOW, &t);
        }
      char buf[256];
      ssize_t n = read (s, buf, sizeof buf);
      if (n > 0)
        fwrite (buf, 1, (size_t) n, out);
    }
  if (out)
    fclose (out);
  /* The command's output went to the pty: drain it to our stdout. */
  char buf[4096];
  fcntl (m, F_SETFL, O_NONBLOCK);
  ssize_t n;
  while ((n = read (m, buf, sizeof buf)) > 0)
    fwrite (buf, 1, (size_t) n, stdout);
  return WIFEXITED (st) ? WEXITSTATUS (st) : 128 + WTERMSIG (st);
}
