/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist ps [--format table|json] ID [-- PS-ARGS]: the container's processes,
 * from its cgroup's cgroup.procs (kist_container_ps_pids, lifecycle.c).
 * json prints a JSON array of host pids like runc ("[16182]").  runc's table runs ps(1) with PS-ARGS (default -ef) and
 * keeps the container's lines; kist never runs another program, so it reads
 * /proc itself and understands the ps(1) options that choose columns: -f,
 * -o/o FORMAT (keywords pid ppid uid user gid group comm args stat tty time
 * etime stime c rss vsz nlwp ni and their aliases, KEYWORD=HEADER), u, and
 * the selection options (-e -A -a -x ...), which change nothing: only the
 * container's processes are listed. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <pwd.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "util.h"

/* What /proc says of one process. */
struct proc
{
  pid_t pid, ppid;
  char state;
  char comm[64];
  char *args;             /* the command line, NULs as spaces; "[comm]" when empty */
  unsigned tty_nr;
  unsigned long long utime, stime, start; /* clock ticks */
  long nice, nlwp;
  unsigned long long vsize, rss_pages;
  uid_t uid;
  gid_t gid;
};

static void
sanitize (char *s, size_t len)
{
  for (size_t i = 0; i < len; i++)
    if (s[i] == '\0')
      s[i] = ' ';
    else if ((unsigned char) s[i] < 0x20 || s[i] == 0x7f)
      s[i] = '?';
}

/* false when the process is gone. */
static bool
proc_read (pid_t pid, struct proc *p)
{
  char path[64], *buf = NULL;
  size_t len = 0;
  struct kist_error *e = NULL;
  memset (p, 0, sizeof *p);
  p->pid = pid;
  snprintf (path, sizeof path, "/proc/%d/stat", (int) pid);
  if (kist_read_file_at (AT_FDCWD, path, 4096, &buf, &len, &e) < 0)
    {
      kist_error_free (e);
      return false;
    }
  /* comm is in parentheses and may hold anything: the last ')' ends it. */
  char *l = strchr (buf, '('), *r = strrchr (buf, ')');
  if (l == NULL || r == NULL || r < l)
    {
      free (buf);
      return false;
    }
  size_t cl = (size_t) (r - l - 1) < sizeof p->comm - 1 ? (size_t) (r - l - 1) : sizeof p->comm - 1;
  memcpy (p->comm, l + 1, cl);
  sanitize (p->comm, cl);
  /* fields from 3 on: state ppid pgrp session tty_nr tpgid flags minflt
   * cminflt majflt cmajflt utime stime cutime cstime priority nice
   * num_threads itrealvalue starttime vsize rss */
  int ppid = 0;
  long long dummy;
  if (sscanf (r + 2, "%c %d %lld %lld %u %lld %lld %lld %lld %lld %lld %llu %llu %lld %lld %lld %ld %ld %lld %llu %llu %llu",
              &p->state, &ppid, &dummy, &dummy, &p->tty_nr, &dummy, &dummy, &dummy, &dummy, &dummy,
              &dummy, &p->utime, &p->stime, &dummy, &dummy, &dummy, &p->nice, &p->nlwp, &dummy,
              &p->start, &p->vsize, &p->rss_pages)
      != 22)
    {
      free (buf);
      return false;
    }
  free (buf);
  buf = NULL;
  p->ppid = ppid;
  snprintf (path, sizeof path, "/proc/%d/status", (int) pid);
  if (kist_read_file_at (AT_FDCWD, path, 1u << 16, &buf, &len, &e) == 0)
    {
      char *u = strstr (buf, "\nUid:"), *g = strstr (buf, "\nGid:");
      unsigned ru, eu, rg, eg;
      if (u && sscanf (u + 5, "%u %u", &ru, &eu) == 2)
        p->uid = eu;
      if (g && sscanf (g + 5, "%u %u", &rg, &eg) == 2)
        p->gid = eg;
    }
  else
    kist_error_free (e), e = NULL;
  free (buf);
  buf = NULL;
  snprintf (path, sizeof path, "/proc/%d/cmdline", (int) pid);
  if (kist_read_file_at (AT_FDCWD, path, 1u << 20, &buf, &len, &e) < 0)
    kist_error_free (e), len = 0;
  while (len > 0 && buf[len - 1] == '\0')
    len--;
  if (len == 0)
    {
      free (buf);
      p->args = xasprintf ("[%s]", p->comm);
    }
  else
    {
      sanitize (buf, len);
      buf[len] = '\0';
      p->args = buf;
    }
  return true;
}

static void
fmt_duration (char *out, size_t n, unsigned long long secs, bool ps_time)
{
  unsigned long long d = secs / 86400, h = secs / 3600 % 24, m = secs / 60 % 60, s = secs % 60;
  if (ps_time) /* TIME: [DD-]HH:MM:SS */
    {
      if (d)
        snprintf (out, n, "%llu-%02llu:%02llu:%02llu", d, h, m, s);
      else
        snprintf (out, n, "%02llu:%02llu:%02llu", h, m, s);
    }
  else if (d) /* ELAPSED: [[DD-]HH:]MM:SS */
    snprintf (out, n, "%llu-%02llu:%02llu:%02llu", d, h, m, s);
  else if (h)
    snprintf (out, n, "%02llu:%02llu:%02llu", h, m, s);
  else
    snprintf (out, n, "%02llu:%02llu", m, s);
}

enum col
{
  C_PID, C_PPID, C_UID, C_USER, C_GID, C_GROUP, C_COMM, C_ARGS, C_STAT, C_TTY, C_TIME,
  C_ETIME, C_STIME, C_C, C_RSS, C_VSZ, C_NLWP, C_NI
};

static const struct
{
  const char *names; /* space-separated keyword and aliases */
  const char *header;
  enum col col;
  bool left;
} keywords[] = {
  { "pid tgid", "PID", C_PID, false },        { "ppid", "PPID", C_PPID, false },
  { "uid euid", "UID", C_UID, false },        { "user euser uname", "USER", C_USER, true },
  { "gid egid", "GID", C_GID, false },        { "group egroup", "GROUP", C_GROUP, true },
  { "comm ucmd ucomm", "COMMAND", C_COMM, true },
  { "args cmd command", "COMMAND", C_ARGS, true },
  { "stat s state", "S", C_STAT, true },      { "tty tt tname", "TT", C_TTY, true },
  { "time cputime", "TIME", C_TIME, false },  { "etime", "ELAPSED", C_ETIME, false },
  { "stime start start_time lstart bsdstart", "STIME", C_STIME, false },
  { "c cp", "C", C_C, false },                { "rss rssize rsz", "RSS", C_RSS, false },
  { "vsz vsize", "VSZ", C_VSZ, false },       { "nlwp thcount", "NLWP", C_NLWP, false },
  { "ni nice", "NI", C_NI, false },
};

struct column
{
  int kw;                 /* index in keywords */
  char *header;
};

struct columns
{
  struct column *v;
  size_t n;
};

static void
columns_clear (struct columns *c)
{
  for (size_t j = 0; j < c->n; j++)
    free (c->v[j].header);
  free (c->v);
  c->v = NULL;
  c->n = 0;
}

static int
add_column (struct column **cols, size_t *n, const char *spec, struct kist_error **err)
{
  _cleanup_free_ char *name = xstrdup (spec);
  char *eq = strchr (name, '=');
  const char *header = NULL;
  if (eq)
    *eq = '\0', header = eq + 1;
  for (size_t k = 0; k < KIST_ARRAY_SIZE (keywords); k++)
    {
      const char *w = keywords[k].names;
      size_t l = strlen (name);
      for (const char *q = w; q && *q; q = strchr (q, ' ') ? strchr (q, ' ') + 1 : NULL)
        if (strncmp (q, name, l) == 0 && (q[l] == ' ' || q[l] == '\0'))
          {
            *cols = xrealloc (*cols, (*n + 1) * sizeof **cols);
            (*cols)[*n].kw = (int) k;
            (*cols)[(*n)++].header = xstrdup (header ? header : keywords[k].header);
            return 0;
          }
    }
  return kist_error_make (err, EINVAL,
                          "ps: format keyword `%s` is not one kist knows (pid ppid uid user gid "
                          "group comm args stat tty time etime stime c rss vsz nlwp ni)",
                          name);
}

/* The columns for ps(1) arguments, as procps reads them.  Returns 0 or
 * -1 with *err. */
static int
parse_ps_args (char **args, int n, struct column **cols, size_t *n_cols, struct kist_error **err)
{
  bool full = false, user_fmt = false, own = false;
  for (int i = 0; i < n; i++)
    {
      const char *a = args[i];
      bool dash = a[0] == '-';
      const char *f = dash ? a + 1 : a;
      for (; *f; f++)
        {
          if (*f == 'o')
            {
              const char *list = f[1] ? f + 1 : (i + 1 < n ? args[++i] : NULL);
              if (list == NULL)
                return kist_error_make (err, EINVAL, "ps: -o needs a format list");
              _cleanup_free_ char *copy = xstrdup (list);
              char *save = NULL;
              for (char *t = strtok_r (copy, ", ", &save); t; t = strtok_r (NULL, ", ", &save))
                if (add_column (cols, n_cols, t, err) < 0)
                  return -1;
              own = true;
              break;
            }
          else if (*f == 'f' && dash)
            full = true;
          else if (*f == 'u' && !dash)
            user_fmt = true;
          else if (strchr ("eAaxdNTrwl", *f) == NULL || (*f == 'l' && dash))
            return kist_error_make (err, EINVAL,
                                    "ps: option `%s` is not one kist understands (kist reads "
                                    "/proc itself: -e -A -a -x select, -f, u and -o FORMAT choose "
                                    "the columns)",
                                    a);
        }
    }
  if (own)
    return 0;
  const char *fmt = user_fmt ? "user,pid,vsz,rss,tty,stat,start,time,args"
                    : full   ? "uid=UID,pid,ppid,c,stime,tty=TTY,time,args=CMD"
                             : "pid,tty=TTY,time,comm=CMD";
  _cleanup_free_ char *copy = xstrdup (fmt);
  char *save = NULL;
  for (char *t = strtok_r (copy, ",", &save); t; t = strtok_r (NULL, ",", &save))
    if (add_column (cols, n_cols, t, err) < 0)
      return -1;
  /* -f shows the user name in UID, as procps does. */
  if (full && !user_fmt)
    (*cols)[0].kw = 3;
  return 0;
}

static char *
cell (const struct proc *p, enum col c, unsigned long long now_ticks, long hz, time_t boot)
{
  char b[64];
  switch (c)
    {
    case C_PID: return xasprintf ("%d", (int) p->pid);
    case C_PPID: return xasprintf ("%d", (int) p->ppid);
    case C_UID: return xasprintf ("%u", (unsigned) p->uid);
    case C_GID: return xasprintf ("%u", (unsigned) p->gid);
    case C_USER:
      {
        struct passwd *pw = getpwuid (p->uid);
        return pw ? xstrdup (pw->pw_name) : xasprintf ("%u", (unsigned) p->uid);
      }
    case C_GROUP:
      {
        struct group *gr = getgrgid (p->gid);
        return gr ? xstrdup (gr->gr_name) : xasprintf ("%u", (unsigned) p->gid);
      }
    case C_COMM: return xstrdup (p->comm);
    case C_ARGS: return xstrdup (p->args);
    case C_STAT: return xasprintf ("%c", p->state);
    case C_TTY:
      {
        unsigned maj = (p->tty_nr >> 8) & 0xfff, min = (p->tty_nr & 0xff) | ((p->tty_nr >> 12) & 0xfff00);
        if (p->tty_nr == 0)
          return xstrdup ("?");
        if (maj >= 136 && maj <= 143)
          return xasprintf ("pts/%u", (maj - 136) * 256 + min);
        if (maj == 4 && min < 64)
          return xasprintf ("tty%u", min);
        if (maj == 4)
          return xasprintf ("ttyS%u", min - 64);
        return xasprintf ("%u,%u", maj, min);
      }
    case C_TIME:
      fmt_duration (b, sizeof b, (p->utime + p->stime) / (unsigned long long) hz, true);
      return xstrdup (b);
    case C_ETIME:
      fmt_duration (b, sizeof b, now_ticks > p->start ? (now_ticks - p->start) / (unsigned long long) hz : 0, false);
      return xstrdup (b);
    case C_STIME:
      {
        time_t t = boot + (time_t) (p->start / (unsigned long long) hz), now = time (NULL);
        struct tm tm, tn;
        localtime_r (&t, &tm);
        localtime_r (&now, &tn);
        strftime (b, sizeof b, tm.tm_yday == tn.tm_yday && tm.tm_year == tn.tm_year ? "%H:%M" : "%b%d", &tm);
        return xstrdup (b);
      }
    case C_C:
      {
        unsigned long long el = now_ticks > p->start ? now_ticks - p->start : 0;
        return xasprintf ("%llu", el ? (p->utime + p->stime) * 100 / el : 0);
      }
    case C_RSS: return xasprintf ("%llu", p->rss_pages * (unsigned long long) (sysconf (_SC_PAGESIZE) / 1024));
    case C_VSZ: return xasprintf ("%llu", p->vsize / 1024);
    case C_NLWP: return xasprintf ("%ld", p->nlwp);
    case C_NI: return xasprintf ("%ld", p->nice);
    }
  return xstrdup ("?");
}

/* The table: a header, one row per process, columns as wide as their
 * widest cell, numbers right-aligned, the last column unpadded. */
static void
print_table (const pid_t *pids, size_t n, const struct column *cols, size_t nc)
{
  long hz = sysconf (_SC_CLK_TCK);
  struct timespec up;
  clock_gettime (CLOCK_BOOTTIME, &up);
  unsigned long long now_ticks = (unsigned long long) up.tv_sec * (unsigned long long) hz
                                 + (unsigned long long) up.tv_nsec * (unsigned long long) hz / 1000000000ull;
  time_t boot = time (NULL) - up.tv_sec;
  char ***rows = xcalloc (n + 1, sizeof *rows);
  size_t *w = xcalloc (nc, sizeof *w), nr = 0;
  for (size_t j = 0; j < nc; j++)
    w[j] = strlen (cols[j].header);
  for (size_t i = 0; i < n; i++)
    {
      struct proc p;
      if (!proc_read (pids[i], &p))
        continue;
      rows[nr] = xcalloc (nc, sizeof (char *));
      for (size_t j = 0; j < nc; j++)
        {
          rows[nr][j] = cell (&p, (enum col) keywords[cols[j].kw].col, now_ticks, hz, boot);
          if (strlen (rows[nr][j]) > w[j])
            w[j] = strlen (rows[nr][j]);
        }
      free (p.args);
      nr++;
    }
  for (size_t i = 0; i <= nr; i++)
    {
      for (size_t j = 0; j < nc; j++)
        {
          const char *v = i == 0 ? cols[j].header : rows[i - 1][j];
          bool last = j + 1 == nc, left = keywords[cols[j].kw].left;
          if (last && left)
            printf ("%s", v);
          else
            printf (left ? "%-*s" : "%*s", (int) w[j], v);
          if (!last)
            putchar (' ');
        }
      putchar ('\n');
    }
  for (size_t i = 0; i < nr; i++)
    {
      for (size_t j = 0; j < nc; j++)
        free (rows[i][j]);
      free (rows[i]);
    }
  free (rows);
  free (w);
}

int
kist_cmd_ps (const struct kist_globals *g, int argc, char **argv, struct kist_error **err)
{
  const char *format = "table";
  const struct kist_cmd_opt opts[] = { { "format", 'f', NULL, &format, "table|json" } };
  int optind_ = kist_cmd_options ("ps", argc, argv, opts, KIST_ARRAY_SIZE (opts), err);
  if (optind_ < 0)
    return optind_ == KIST_CMD_HELPED ? 0 : KIST_EXIT_USAGE;
  bool json = strcmp (format, "json") == 0;
  if (optind_ >= argc)
    {
      kist_error_make (err, EINVAL, "usage: kist ps [--format table|json] ID [-- PS-ARGS]");
      return KIST_EXIT_USAGE;
    }
  const char *id = argv[optind_];
  int rest = optind_ + 1;
  if (rest < argc && strcmp (argv[rest], "--") == 0)
    rest++;
  /* runc passes these to ps(1) for the table (default -ef) and ignores them
   * for json. */
  __attribute__ ((cleanup (columns_clear))) struct columns cols = { 0 };
  static char *default_args[] = { "-ef", NULL };
  if (!json
      && (rest < argc ? parse_ps_args (argv + rest, argc - rest, &cols.v, &cols.n, err)
                      : parse_ps_args (default_args, 1, &cols.v, &cols.n, err))
             < 0)
    return KIST_EXIT_USAGE;
  if (kist_id_validate (id, err) < 0)
    return KIST_EXIT_USAGE;
  _cleanup_close_ int rootfd = kist_cmd_open_root (g, err);
  _cleanup_free_ pid_t *pids = NULL;
  size_t n = 0;
  if (rootfd < 0 || kist_container_ps_pids (rootfd, id, &pids, &n, err) < 0)
    return KIST_EXIT_USAGE;

  if (json)
    {
      fputc ('[', stdout);
      for (size_t i = 0; i < n; i++)
        printf ("%s%d", i ? "," : "", (int) pids[i]);
      fputs ("]\n", stdout);
    }
  else
    print_table (pids, n, cols.v, cols.n);
  if (fflush (stdout) != 0)
    {
      kist_error_make (err, errno, "ps `%s`: write to stdout", id);
      return KIST_EXIT_USAGE;
    }
  return 0;
}
