/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist ps [--format table|json] ID [-- PS-ARGS]: the container's processes,
 * from its cgroup's cgroup.procs.  json prints a JSON array of host pids like
 * runc ("[16182]").  runc's table runs ps(1); kist never runs another
 * program, so it prints its own "PID CMD" table from /proc/PID/cmdline and
 * refuses ps(1) arguments. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup.h"
#include "cmd.h"
#include "util.h"

static int
cmp_pid (const void *a, const void *b)
{
  pid_t x = *(const pid_t *) a, y = *(const pid_t *) b;
  return (x > y) - (x < y);
}

static ino_t
pid_ns_of (pid_t pid)
{
  char path[64];
  struct stat sb;
  snprintf (path, sizeof path, "/proc/%d/ns/pid", (int) pid);
  return stat (path, &sb) == 0 ? sb.st_ino : 0;
}

/* Without a cgroup: the processes in the init's own pid namespace (only
 * when it has one; a container sharing ours cannot be told apart). */
static int
pids_in_pidns (const char *id, pid_t init, pid_t **out, size_t *n, struct kist_error **err)
{
  ino_t ns = pid_ns_of (init);
  if (ns == 0)
    return kist_error_make (err, errno, "ps `%s`: read /proc/%d/ns/pid", id, (int) init);
  if (ns == pid_ns_of (getpid ()))
    return kist_error_make (err, EOPNOTSUPP,
                            "ps `%s`: the container has no cgroup and shares the host's pid "
                            "namespace, so its processes cannot be told apart",
                            id);
  DIR *d = opendir ("/proc");
  if (d == NULL)
    return kist_error_make (err, errno, "ps `%s`: open /proc", id);
  size_t cap = 16;
  _cleanup_free_ pid_t *pids = xmalloc (cap * sizeof *pids);
  *n = 0;
  struct dirent *de;
  while ((de = readdir (d)))
    {
      int p = 0;
      if (kist_parse_int (de->d_name, &p) < 0 || p <= 0 || pid_ns_of (p) != ns)
        continue;
      if (*n == cap)
        pids = xrealloc (pids, (cap *= 2) * sizeof *pids);
      pids[(*n)++] = p;
    }
  closedir (d);
  *out = steal_pointer (&pids);
  return 0;
}

/* One table row: the command line with NULs as spaces and control bytes as
 * '?' (it is the container's data), "[comm]" when empty (a zombie). */
static void
print_row (pid_t pid)
{
  char path[64];
  _cleanup_free_ char *buf = NULL;
  size_t len = 0;
  struct kist_error *e = NULL;
  snprintf (path, sizeof path, "/proc/%d/cmdline", (int) pid);
  if (kist_read_file_at (AT_FDCWD, path, 1u << 20, &buf, &len, &e) < 0)
    {
      /* Gone, or an absurdly long command line: try the command name. */
      kist_error_free (e);
      e = NULL;
      free (buf);
      buf = NULL;
      len = 0;
    }
  while (len > 0 && buf[len - 1] == '\0')
    len--;
  if (len == 0)
    {
      free (buf);
      buf = NULL;
      snprintf (path, sizeof path, "/proc/%d/comm", (int) pid);
      if (kist_read_file_at (AT_FDCWD, path, 256, &buf, &len, &e) < 0)
        {
          kist_error_free (e);
          printf ("%-8d ?\n", (int) pid);
          return;
        }
      kist_rstrip (buf);
      len = strlen (buf);
      for (size_t i = 0; i < len; i++)
        if ((unsigned char) buf[i] < 0x20 || buf[i] == 0x7f)
          buf[i] = '?';
      printf ("%-8d [%s]\n", (int) pid, buf);
      return;
    }
  for (size_t i = 0; i < len; i++)
    if (buf[i] == '\0')
      buf[i] = ' ';
    else if ((unsigned char) buf[i] < 0x20 || buf[i] == 0x7f)
      buf[i] = '?';
  printf ("%-8d %.*s\n", (int) pid, (int) len, buf);
}

int
kist_cmd_ps (const struct kist_globals *g, int argc, char **argv, struct kist_error **err)
{
  static const struct option opts[] = { { "format", required_argument, NULL, 'f' },
                                        { "help", no_argument, NULL, 'h' },
                                        { NULL, 0, NULL, 0 } };
  const char *format = "table";
  int c;
  opterr = 0;
  while ((c = getopt_long (argc, argv, "+f:h", opts, NULL)) != -1)
    {
      if (c == 'h')
        return kist_cmd_help ("ps");
      if (c != 'f')
        {
          kist_error_make (err, EINVAL, "ps: unknown option or missing value: `%s`",
                           argv[optind - 1]);
          return KIST_EXIT_USAGE;
        }
      format = optarg;
    }
  bool json = strcmp (format, "json") == 0;
  if (!json && strcmp (format, "table") != 0)
    {
      kist_error_make (err, EINVAL, "ps: --format `%s`: expected table or json", format);
      return KIST_EXIT_USAGE;
    }
  if (optind >= argc)
    {
      kist_error_make (err, EINVAL, "usage: kist ps [--format table|json] ID [-- PS-ARGS]");
      return KIST_EXIT_USAGE;
    }
  const char *id = argv[optind];
  int rest = optind + 1;
  if (rest < argc && strcmp (argv[rest], "--") == 0)
    rest++;
  /* runc passes these to ps(1) for the table and ignores them for json. */
  if (rest < argc && !json)
    {
      kist_error_make (err, EINVAL,
                       "ps: arguments for ps(1) (`%s`) are not supported: kist does not run ps(1) "
                       "and prints its own PID/CMD table; drop them, or use --format json",
                       argv[rest]);
      return KIST_EXIT_USAGE;
    }
  if (kist_id_validate (id, err) < 0)
    return KIST_EXIT_USAGE;
  _cleanup_close_ int rootfd = kist_cmd_open_root (g, err);
  _cleanup_close_ int dirfd = -1;
  if (rootfd < 0 || kist_state_open (rootfd, id, &dirfd, err) < 0)
    return KIST_EXIT_USAGE;
  struct kist_state st = { 0 };
  if (kist_state_read (dirfd, &st, err) < 0)
    return KIST_EXIT_USAGE;
  _cleanup_free_ pid_t *pids = NULL;
  size_t n = 0;
  int r;
  if (st.cgroup_path != NULL)
    {
      r = kist_cgroup_pids (st.cgroup_path, &pids, &n, err);
      if (r < 0)
        kist_error_wrap (err, "ps `%s`: list the processes of cgroup %s", id, st.cgroup_path);
    }
  else if (kist_state_status (&st) == KIST_STATUS_STOPPED)
    r = 0; /* no cgroup and no init: nothing runs */
  else
    r = pids_in_pidns (id, st.pid, &pids, &n, err);
  kist_state_clear (&st);
  if (r < 0)
    return KIST_EXIT_USAGE;
  if (n > 1)
    qsort (pids, n, sizeof *pids, cmp_pid);

  if (json)
    {
      fputc ('[', stdout);
      for (size_t i = 0; i < n; i++)
        printf ("%s%d", i ? "," : "", (int) pids[i]);
      fputs ("]\n", stdout);
    }
  else
    {
      printf ("%-8s %s\n", "PID", "CMD");
      for (size_t i = 0; i < n; i++)
        print_row (pids[i]);
    }
  if (fflush (stdout) != 0)
    {
      kist_error_make (err, errno, "ps `%s`: write to stdout", id);
      return KIST_EXIT_USAGE;
    }
  return 0;
}
