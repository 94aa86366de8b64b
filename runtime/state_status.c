/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: what the state says about the world: liveness of the recorded
 * processes, the container status, the cgroup intent of create, and the
 * listing of the state root.  See design.md section 6. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup.h"
#include "state.h"
#include "state_int.h"
#include "util.h"

/* ---- liveness ------------------------------------------------------------- */

/* Parse /proc/PID/stat: state letter and start time.  0 on success. */
static int
read_proc_stat (pid_t pid, char *state, uint64_t *start)
{
  char path[64], buf[1024];
  snprintf (path, sizeof path, "/proc/%d/stat", (int) pid);
  _cleanup_close_ int fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -errno;
  /* One read: procfs returns the whole (short) stat line at once, so a
   * second read only to see the end would cost every status another
   * syscall. */
  ssize_t n;
  do
    n = read (fd, buf, sizeof buf - 1);
  while (n < 0 && errno == EINTR);
  if (n <= 0)
    return n < 0 ? -errno : -EIO;
  buf[n] = '\0';
  /* comm may contain spaces and parentheses: the fields start after the
   * last ')'. */
  char *p = strrchr (buf, ')');
  if (p == NULL || p[1] != ' ' || p[2] == '\0')
    return -EIO;
  p += 2;
  *state = *p;
  /* p is field 3; advance to field 22. */
  for (int field = 3; field < 22; field++)
    {
      p = strchr (p, ' ');
      if (p == NULL)
        return -EIO;
      p++;
    }
  char *end = NULL;
  errno = 0;
  unsigned long long v = strtoull (p, &end, 10);
  if (errno || end == p || (*end != ' ' && *end != '\0' && *end != '\n'))
    return -EIO;
  *start = v;
  return 0;
}

uint64_t
kist_pid_start_time (pid_t pid)
{
  char st;
  uint64_t start = 0;
  if (pid <= 0 || read_proc_stat (pid, &st, &start) < 0)
    return 0;
  return start;
}

/* Is pid alive (no zombie) with this start time (0: any)? */
static bool
proc_alive (pid_t pid, uint64_t start_time)
{
  char st = 0;
  uint64_t start = 0;
  if (pid <= 0 || read_proc_stat (pid, &st, &start) < 0)
    return false;
  if (st == 'Z' || st == 'X' || st == 'x')
    return false;
  return start_time == 0 || start == start_time;
}

bool
kist_state_create_abandoned (const struct kist_state *s)
{
  return s != NULL && s->creating
         && !(s->creator_pid > 0 && s->creator_start_time != 0
              && proc_alive (s->creator_pid, s->creator_start_time));
}

bool
kist_state_init_alive (const struct kist_state *s)
{
  if (s == NULL || s->pid <= 0 || (s->creating && s->pid_start_time == 0))
    return false;
  return proc_alive (s->pid, s->pid_start_time);
}

enum kist_status
kist_state_status (const struct kist_state *s)
{
  if (s != NULL && s->creating)
    return kist_state_create_abandoned (s) ? KIST_STATUS_STOPPED : KIST_STATUS_CREATING;
  if (s == NULL || !proc_alive (s->pid, s->pid_start_time))
    return KIST_STATUS_STOPPED;
  if (s->cgroup_path != NULL && kist_cgroup_is_frozen (s->cgroup_path) == 1)
    return KIST_STATUS_PAUSED;
  return s->started ? KIST_STATUS_RUNNING : KIST_STATUS_CREATED;
}

bool
kist_state_owner_alive (const struct kist_state *s)
{
  return s != NULL && proc_alive (s->kist_pid, s->kist_pid_start_time);
}

const char *
kist_status_name (enum kist_status st)
{
  switch (st)
    {
    case KIST_STATUS_CREATING:
      return "creating";
    case KIST_STATUS_CREATED:
      return "created";
    case KIST_STATUS_RUNNING:
      return "running";
    case KIST_STATUS_STOPPED:
      return "stopped";
    case KIST_STATUS_PAUSED:
      return "paused";
    }
  return "unknown";
}

/* ---- the cgroup intent ------------------------------------------------------ */

void
kist_state_cgroup_intent (const char *cgroups_path, const char *id, char **scope_abs,
                          char **top_abs)
{
  _cleanup_free_ char *mount = NULL, *own = NULL, *rel = NULL;
  *scope_abs = *top_abs = NULL;
  if (kist_cgroup_mount (&mount, NULL) < 0 || mount == NULL
      || kist_cgroup_own_path (&own, NULL) < 0
      || kist_cgroup_resolve_path (cgroups_path, own ? own : "", id, &rel, NULL) < 0
      || rel == NULL)
    return;
  _cleanup_free_ char *abs = xasprintf ("%s/%s", mount, rel);
  struct stat st;
  if (lstat (abs, &st) == 0 || errno != ENOENT)
    return;
  /* The topmost missing component. */
  _cleanup_free_ char *p = xstrdup (abs);
  for (char *s = p + strlen (mount) + 1; *s; s++)
    {
      if (*s != '/')
        continue;
      *s = '\0';
      if (lstat (p, &st) < 0 && errno == ENOENT)
        {
          *top_abs = steal_pointer (&p);
          break;
        }
      *s = '/';
    }
  if (*top_abs == NULL)
    *top_abs = xstrdup (abs);
  *scope_abs = steal_pointer (&abs);
}

/* ---- listing -------------------------------------------------------------- */

static int
cmp_str (const void *a, const void *b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

int
kist_state_list (int rootfd, char ***ids, struct kist_error **err)
{
  _cleanup_strv_ char **v = NULL;
  size_t n = 0, cap = 0;
  /* A fresh open file description: readdir must not move rootfd's offset. */
  int fd = openat (rootfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    {
      _cleanup_free_ char *root = state_fd_path (rootfd);
      return kist_error_make (err, errno, "open the state root `%s`", root);
    }
  _cleanup_dir_ DIR *d = fdopendir (fd);
  if (d == NULL)
    {
      int e = errno;
      close (fd);
      return kist_error_make (err, e, "read the state root");
    }
  v = xcalloc (1, sizeof (char *));
  for (;;)
    {
      struct stat st;
      errno = 0;
      struct dirent *de = readdir (d);
      if (de == NULL)
        break;
      bool hashed = state_is_hashed_name (de->d_name);
      if (!hashed && kist_id_validate (de->d_name, NULL) < 0)
        continue;
      /* The type from the directory entry where the file system gives it
       * (no stat per entry: a listing of 1,000 containers); else lstat. */
      if (de->d_type != DT_UNKNOWN ? de->d_type != DT_DIR
                                   : fstatat (dirfd (d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0
                                         || !S_ISDIR (st.st_mode))
        continue;
      char *id = NULL;
      if (hashed)
        {
          /* The real id is in state.json (read without the lock: a listing). */
          _cleanup_close_ int sfd
              = openat (dirfd (d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
          struct kist_state st2 = { 0 };
          if (sfd < 0 || kist_state_read (sfd, &st2, NULL) < 0 || st2.id == NULL)
            {
              kist_state_clear (&st2);
              continue;
            }
          id = steal_pointer (&st2.id);
          kist_state_clear (&st2);
        }
      if (n + 1 >= cap)
        {
          cap = cap ? cap * 2 : 16;
          v = xrealloc (v, cap * sizeof (char *));
        }
      v[n++] = id ? id : xstrdup (de->d_name);
      v[n] = NULL;
    }
  if (errno != 0)
    {
      _cleanup_free_ char *root = state_fd_path (rootfd);
      return kist_error_make (err, errno, "read the state root `%s`", root);
    }
  qsort (v, n, sizeof (char *), cmp_str);
  *ids = steal_pointer (&v);
  return 0;
}
