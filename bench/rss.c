/* SPDX-License-Identifier: GPL-2.0-or-later */
/* rss: peak resident set size of every process a command starts
 * (bench/memory.sh; method in bench/README.md).
 *
 * Usage: rss [-s|-S] COMMAND [ARG...]
 *
 * Runs COMMAND under ptrace (PTRACE_O_TRACEFORK/VFORK/CLONE/EXEC/EXIT), so
 * that every descendant is followed, and for each process prints one line at
 * its exit:
 *
 *   rss ROLE PID PPID hwm=KB max=KB rss=KB anon=KB file=KB shmem=KB EXE[>EXE...]
 *
 *   ROLE  "top" for COMMAND's own process, "desc" for its descendants.
 *   hwm   VmHWM of /proc/PID/status, read at the PTRACE_EVENT_EXIT stop (the
 *         process has called exit, its memory is still mapped): the peak of the
 *         process's last program image (after its last execve).
 *   max   ru_maxrss of the wait4 that reaps it (the tracer's wait gets the
 *         tracee's RUSAGE_BOTH): the peak over every image it ran (the kernel
 *         keeps the pre-execve peak across execve) and over the children it
 *         reaped itself.
 *   rss/anon/file/shmem  VmRSS, RssAnon, RssFile, RssShmem at the exit stop.
 *   EXE   /proc/PID/exe at the start and after each execve.
 * With -s also, on an indented line, Pss, Shared_Clean, Shared_Dirty,
 * Private_Clean, Private_Dirty and Anonymous of /proc/PID/smaps_rollup at
 * the exit stop (KB).  -S: -s, and before that every mapping of COMMAND's
 * own process with its Rss and Private_Dirty at its exit stop (/proc/PID/smaps), to see where
 * the peak goes.
 * Threads are followed but not printed (one line per thread group).
 * Exit status: COMMAND's, 128+N if killed by signal N, 125 on failure.
 * Output on stderr (COMMAND keeps stdout). */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAXP 4096

struct proc {
  pid_t pid, ppid;
  int seen, leader, reported;
  long hwm, vrss, anon, file, shmem;
  char exe[512];
  char smaps[2048];
};

static struct proc procs[MAXP];
static int nprocs;
static int want_smaps;
static pid_t top;

static struct proc *find (pid_t pid, int create)
{
  for (int i = 0; i < nprocs; i++)
    if (procs[i].pid == pid)
      return &procs[i];
  if (!create || nprocs == MAXP)
    return NULL;
  struct proc *p = &procs[nprocs++];
  memset (p, 0, sizeof *p);
  p->pid = pid;
  p->hwm = p->vrss = p->anon = p->file = p->shmem = -1;
  return p;
}

static void add_exe (struct proc *p)
{
  char link[64], buf[256];
  snprintf (link, sizeof link, "/proc/%d/exe", p->pid);
  ssize_t n = readlink (link, buf, sizeof buf - 1);
  if (n < 0)
    return;
  buf[n] = 0;
  size_t len = strlen (p->exe);
  snprintf (p->exe + len, sizeof p->exe - len, "%s%s", len ? ">" : "", buf);
}

static void read_status (struct proc *p)
{
  char path[64], line[256];
  snprintf (path, sizeof path, "/proc/%d/status", p->pid);
  FILE *f = fopen (path, "re");
  if (!f)
    return;
  long tgid = -1;
  while (fgets (line, sizeof line, f)) {
    sscanf (line, "Tgid: %ld", &tgid);
    sscanf (line, "PPid: %d", &p->ppid);
    sscanf (line, "VmHWM: %ld", &p->hwm);
    sscanf (line, "VmRSS: %ld", &p->vrss);
    sscanf (line, "RssAnon: %ld", &p->anon);
    sscanf (line, "RssFile: %ld", &p->file);
    sscanf (line, "RssShmem: %ld", &p->shmem);
  }
  fclose (f);
  p->leader = tgid == p->pid;
  if (want_smaps == 2 && p->pid == top) { /* -S: every mapping's Rss */
    snprintf (path, sizeof path, "/proc/%d/smaps", p->pid);
    f = fopen (path, "re");
    if (f) {
      char range[256] = "";
      long rss = 0, kb;
      while (fgets (line, sizeof line, f)) {
        if (strchr (line, '-') && strchr (line, '-') < strchr (line, ' ') && line[0] != ' ')
          snprintf (range, sizeof range, "%s", line);
        else if (sscanf (line, "Rss: %ld", &kb) == 1)
          rss = kb;
        else if (sscanf (line, "Private_Dirty: %ld", &kb) == 1 && rss > 0)
          fprintf (stderr, "  map rss %5ld dirty %5ld KB %s", rss, kb, range);
      }
      fclose (f);
    }
  }
  if (!want_smaps || !p->leader)
    return;
  snprintf (path, sizeof path, "/proc/%d/smaps_rollup", p->pid);
  f = fopen (path, "re");
  if (!f)
    return;
  static const char *const keys[] = { "Pss", "Shared_Clean", "Shared_Dirty", "Private_Clean",
                                      "Private_Dirty", "Anonymous" };
  size_t len = (size_t) snprintf (p->smaps, sizeof p->smaps, "  smaps_rollup");
  while (fgets (line, sizeof line, f)) {
    char key[64];
    long kb;
    if (sscanf (line, "%63[^:]: %ld", key, &kb) != 2)
      continue;
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
      if (strcmp (key, keys[k]) == 0 && len < sizeof p->smaps)
        len += (size_t) snprintf (p->smaps + len, sizeof p->smaps - len, " %s=%ld", key, kb);
  }
  if (len < sizeof p->smaps - 1)
    strcat (p->smaps, "\n");
  fclose (f);
}

static void report (struct proc *p, long maxrss)
{
  if (p->reported || !p->leader)
    return;
  p->reported = 1;
  fprintf (stderr, "rss %s %d %d hwm=%ld max=%ld rss=%ld anon=%ld file=%ld shmem=%ld %s\n", p->pid == top ? "top" : "desc", p->pid, p->ppid,
           p->hwm, maxrss, p->vrss, p->anon, p->file, p->shmem, p->exe[0] ? p->exe : "?");
  if (p->smaps[0])
    fputs (p->smaps, stderr);
}

int main (int argc, char **argv)
{
  int i = 1;
  if (i < argc && (strcmp (argv[i], "-s") == 0 || strcmp (argv[i], "-S") == 0)) {
    want_smaps = argv[i][1] == 'S' ? 2 : 1;
    i++;
  }
  if (i >= argc) {
    fprintf (stderr, "usage: rss [-s|-S] COMMAND [ARG...]\n");
    return 125;
  }
  top = fork ();
  if (top < 0) {
    perror ("rss: fork");
    return 125;
  }
  if (top == 0) {
    if (ptrace (PTRACE_TRACEME, 0, NULL, NULL) < 0) {
      perror ("rss: PTRACE_TRACEME");
      _exit (125);
    }
    raise (SIGSTOP);
    execvp (argv[i], argv + i);
    fprintf (stderr, "rss: execvp %s: %s\n", argv[i], strerror (errno));
    _exit (125);
  }
  int st;
  if (waitpid (top, &st, 0) != top || !WIFSTOPPED (st)) {
    fprintf (stderr, "rss: the child did not stop\n");
    return 125;
  }
  long opts = PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK | PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXEC
              | PTRACE_O_TRACEEXIT | PTRACE_O_EXITKILL;
  if (ptrace (PTRACE_SETOPTIONS, top, NULL, (void *) opts) < 0) {
    perror ("rss: PTRACE_SETOPTIONS");
    return 125;
  }
  struct proc *tp = find (top, 1);
  tp->seen = 1;
  ptrace (PTRACE_CONT, top, NULL, NULL);
  int top_status = 125;
  for (;;) {
    struct rusage ru;
    pid_t pid = wait4 (-1, &st, __WALL, &ru);
    if (pid < 0) {
      if (errno == EINTR)
        continue;
      break; /* ECHILD: all done */
    }
    struct proc *p = find (pid, 1);
    if (!p)
      continue;
    if (WIFEXITED (st) || WIFSIGNALED (st)) {
      report (p, ru.ru_maxrss);
      if (pid == top)
        top_status = WIFEXITED (st) ? WEXITSTATUS (st) : 128 + WTERMSIG (st);
      continue;
    }
    if (!WIFSTOPPED (st))
      continue;
    int sig = WSTOPSIG (st), event = st >> 16, inject = 0;
    if (sig == SIGTRAP && event) {
      if (event == PTRACE_EVENT_EXEC) {
        add_exe (p);
      } else if (event == PTRACE_EVENT_EXIT) {
        read_status (p);
      } else { /* fork, vfork, clone: the new tracee */
        unsigned long child;
        if (ptrace (PTRACE_GETEVENTMSG, pid, NULL, &child) == 0) {
          struct proc *c = find ((pid_t) child, 1);
          const char *last = strrchr (p->exe, '>');
          if (c && !c->exe[0])
            snprintf (c->exe, sizeof c->exe, "%s", last ? last + 1 : p->exe);
        }
      }
    } else if (!p->seen && sig == SIGSTOP) {
      if (!p->exe[0])
        add_exe (p);
    } else if (sig != SIGTRAP) {
      inject = sig;
    }
    p->seen = 1;
    ptrace (PTRACE_CONT, pid, NULL, (void *) (long) inject);
  }
  return top_status;
}
