/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: what the commands do to an existing scope (state.json's
 * cgroupPath): update (the same plan and read-back as create), freeze and
 * thaw, the list of its processes, kill, removal, stats and OOM counts. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/magic.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>
#include <time.h>

#include "cgroup.h"
#include "cgroup_int.h"
#include "json.h"
#include "util.h"

/* ---------------------------------------------------------------- update */

/* A one-number file of the scope (memory.current): false when it is absent
 * or not a number. */
static bool
scope_u64 (int dfd, const char *file, uint64_t *v)
{
  _cleanup_free_ char *text = cg_read_small (dfd, file);
  char *end = NULL;
  if (text == NULL)
    return false;
  errno = 0;
  unsigned long long x = strtoull (text, &end, 10);
  if (errno != 0 || end == text || (*end != '\0' && *end != '\n'))
    return false;
  *v = x;
  return true;
}

void
cg_record_check_before_update (struct kist_report *r, bool on)
{
  if (on)
    kist_report_applied (r, "cgroup.memory.checkBeforeUpdate", "true",
                         "kist update refuses a memory.limit at or below memory.current and a "
                         "memory.swap at or below memory.current + memory.swap.current, before "
                         "writing anything, unless its request sets checkBeforeUpdate false");
  else
    kist_report_applied (r, "cgroup.memory.checkBeforeUpdate", "false",
                         "kist update applies a memory limit below the usage (the kernel then "
                         "reclaims or OOM-kills), unless its request sets checkBeforeUpdate true");
}

/* linux.resources.memory.checkBeforeUpdate (the update's request, or the
 * value recorded in the container's report, see cmd_update.c):
 * before anything is written, refuse a memory.limit at or below
 * memory.current (as runc), and a memory.swap (OCI: memory+swap) at or
 * below memory.current + memory.swap.current (runc compares it with
 * memory.current alone).  Where memory.current cannot be read (no memory
 * controller in the scope) there is no usage to compare; the memory.max
 * write then fails with its own reason. */
static int
check_memory_usage (const char *abs_path, const struct kist_res_memory *m, struct kist_error **err)
{
  if (!m->check_before_update || (m->limit <= 0 && m->swap <= 0))
    return 0;
  _cleanup_close_ int dfd = cg_open_scope (abs_path, err);
  if (dfd < 0)
    return -1;
  uint64_t mem = 0, swap = 0;
  if (!scope_u64 (dfd, "memory.current", &mem))
    return 0;
  if (!scope_u64 (dfd, "memory.swap.current", &swap))
    swap = 0;
  const char *what = NULL, *file = NULL;
  int64_t want = 0;
  uint64_t used = 0;
  if (m->limit > 0 && (uint64_t) m->limit <= mem)
    what = "memory.limit", file = "memory.max", want = m->limit, used = mem;
  else if (m->swap > 0 && (uint64_t) m->swap <= mem + swap)
    what = "memory.swap (memory+swap)", file = "memory.swap.max", want = m->swap,
    used = mem + swap;
  if (what == NULL)
    return 0;
  _cleanup_free_ char *now = cg_read_small (dfd, file);
  return kist_error_make (err, EBUSY,
                          "linux.resources.%s %" PRId64 " is at or below the container's "
                          "current usage of %" PRIu64 " bytes (memory.current %" PRIu64
                          ", memory.swap.current %" PRIu64 " in %s) and "
                          "memory.checkBeforeUpdate is true: nothing was changed (%s stays %s); "
                          "give a limit above the usage, or checkBeforeUpdate false to apply it "
                          "anyway (the kernel then reclaims or OOM-kills)",
                          what, want, used, mem, swap, abs_path, file,
                          now ? kist_rstrip (now) : "unknown");
}

int
kist_cgroup_update (const char *abs_path, const struct kist_resources *resources,
                    struct kist_report *r, struct kist_error **err)
{
  __attribute__ ((cleanup (cg_plan_freep))) struct kist_cgroup_plan *plan = NULL;
  _cleanup_free_ char *mount = NULL, *rel_clean = NULL;
  struct cg_ctl_state st;
  memset (&st, 0, sizeof st);

  if (kist_cgroup_plan_build (resources, &plan, err) < 0)
    return kist_error_wrap (err, "update");
  if (cg_split_scope (abs_path, &mount, &rel_clean, err) < 0)
    return -1;
  if (resources && check_memory_usage (abs_path, &resources->memory, err) < 0)
    return kist_error_wrap (err, "update");

  cg_plan_needs (plan, &st);
  _cleanup_close_ int fd = cg_walk_scope (mount, rel_clean, false, &st, NULL, err);
  if (fd < 0)
    {
      cg_ctl_state_clear (&st);
      return -1;
    }
  int rc = cg_apply_plan (-1, fd, false, abs_path, mount, plan, &st, r, err);
  cg_ctl_state_clear (&st);
  /* The request's own value is remembered for later updates (only after
   * success: a failed update leaves the stored report as it was). */
  if (rc == 0 && resources && resources->memory.has_check_before_update)
    cg_record_check_before_update (r, resources->memory.check_before_update);
  return rc;
}

/* ---------------------------------------------------------------- operations */

/* "key N" from a flat keyed file; false when absent. */
static bool
kv_get (const char *text, const char *key, uint64_t *v)
{
  size_t n = strlen (key);
  for (const char *p = text; p && *p;)
    {
      if (strncmp (p, key, n) == 0 && p[n] == ' ')
        {
          char *end;
          errno = 0;
          unsigned long long x = strtoull (p + n + 1, &end, 10);
          if (errno || end == p + n + 1)
            return false;
          *v = x;
          return true;
        }
      p = strchr (p, '\n');
      if (p)
        p++;
    }
  return false;
}

/* ABS_PATH/FILE, a small file of a scope (cgroup.events, memory.events),
 * read in one open: NULL when it is absent or not on cgroup2.  This is on
 * the path of every `kist list` row and every status (the frozen test), so
 * the file is opened directly instead of through the scope's directory:
 * cgroupfs has no symbolic links, and fstatfs on the file checks that it is
 * cgroup2's (what cg_open_scope checks of the directory).  Read until a
 * short read (kernfs returns the whole small file at once), not until a
 * second read returns 0. */
static char *
scope_read_small (const char *abs_path, const char *file)
{
  if (abs_path == NULL || abs_path[0] != '/')
    return NULL;
  char path[PATH_MAX];
  if ((size_t) snprintf (path, sizeof path, "%s/%s", abs_path, file) >= sizeof path)
    return NULL;
  _cleanup_close_ int fd = open (path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  struct statfs sfs;
  if (fd < 0 || fstatfs (fd, &sfs) < 0 || sfs.f_type != CGROUP2_SUPER_MAGIC)
    return NULL;
  size_t cap = 512, used = 0;
  _cleanup_free_ char *buf = xmalloc (cap + 1);
  for (;;)
    {
      ssize_t n = read (fd, buf + used, cap - used);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return NULL;
      used += (size_t) n;
      if (used < cap)
        break;
      if (cap >= CG_FILE_MAX)
        return NULL;
      cap *= 2;
      buf = xrealloc (buf, cap + 1);
    }
  buf[used] = '\0';
  return steal_pointer (&buf);
}

/* "key N" of a flat keyed file of the scope; -1 when unknown. */
static int64_t
scope_kv (const char *abs_path, const char *file, const char *key)
{
  _cleanup_free_ char *text = scope_read_small (abs_path, file);
  uint64_t v;
  if (text == NULL)
    return -1;
  if (key == NULL) /* a file holding one number */
    return kist_parse_u64 (kist_rstrip (text), &v) == 0 && v <= INT64_MAX ? (int64_t) v : -1;
  if (!kv_get (text, key, &v) || v > INT64_MAX)
    return -1;
  return (int64_t) v;
}

static int64_t
monotonic_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int
kist_cgroup_freeze (const char *abs_path, bool freeze, struct kist_error **err)
{
  _cleanup_close_ int dfd = cg_open_scope (abs_path, err);
  if (dfd < 0)
    return -1;
  if (kist_write_file_at (dfd, "cgroup.freeze", freeze ? "1" : "0", 1, err) < 0)
    return kist_error_wrap (err, "cgroup: %s %s", freeze ? "freeze" : "thaw", abs_path);

  _cleanup_close_ int efd = openat (dfd, "cgroup.events", O_RDONLY | O_CLOEXEC);
  if (efd < 0)
    return kist_error_make (err, errno, "cgroup: open %s/cgroup.events", abs_path);
  int64_t deadline = monotonic_ms () + 5000;
  for (;;)
    {
      char buf[512];
      ssize_t n = pread (efd, buf, sizeof buf - 1, 0);
      if (n < 0)
        return kist_error_make (err, errno, "cgroup: read %s/cgroup.events", abs_path);
      buf[n] = '\0';
      uint64_t frozen;
      if (!kv_get (buf, "frozen", &frozen))
        return kist_error_make (err, ENOTSUP,
                                "cgroup: %s/cgroup.events has no `frozen` key (kernel < 5.2?)",
                                abs_path);
      if (frozen == (freeze ? 1u : 0u))
        return 0;
      int64_t left = deadline - monotonic_ms ();
      if (left <= 0)
        return kist_error_make (err, ETIMEDOUT,
                                "cgroup: %s did not report `frozen %d` in cgroup.events within "
                                "5 s",
                                abs_path, freeze ? 1 : 0);
      struct pollfd pfd = { .fd = efd, .events = POLLPRI };
      if (poll (&pfd, 1, (int) (left < 100 ? left : 100)) < 0 && errno != EINTR)
        return kist_error_make (err, errno, "cgroup: poll %s/cgroup.events", abs_path);
    }
}

int
kist_cgroup_is_frozen (const char *abs_path)
{
  int64_t v = scope_kv (abs_path, "cgroup.events", "frozen");
  return v < 0 ? -1 : v ? 1 : 0;
}

static int
pids_at (int dfd, const char *abs_path, pid_t **pids, size_t *n, struct kist_error **err)
{
  _cleanup_free_ char *text = NULL;
  *pids = NULL;
  *n = 0;
  if (kist_read_file_at (dfd, "cgroup.procs", 16 * CG_FILE_MAX, &text, NULL, err) < 0)
    return kist_error_wrap (err, "cgroup: list the processes of %s", abs_path);
  size_t cap = 0, cnt = 0;
  _cleanup_free_ pid_t *v = NULL;
  char *save = NULL;
  for (char *l = strtok_r (text, "\n", &save); l; l = strtok_r (NULL, "\n", &save))
    {
      int pid;
      if (kist_parse_int (l, &pid) < 0 || pid <= 0)
        continue;
      if (cnt == cap)
        {
          cap = cap ? cap * 2 : 16;
          v = xrealloc (v, cap * sizeof *v);
        }
      v[cnt++] = pid;
    }
  *pids = steal_pointer (&v);
  *n = cnt;
  return 0;
}

int
kist_cgroup_pids (const char *abs_path, pid_t **pids, size_t *n, struct kist_error **err)
{
  _cleanup_close_ int dfd = cg_open_scope (abs_path, err);
  if (dfd < 0)
    return -1;
  return pids_at (dfd, abs_path, pids, n, err);
}

int
kist_cgroup_kill_all (const char *abs_path, struct kist_error **err)
{
  _cleanup_close_ int dfd = cg_open_scope (abs_path, err);
  if (dfd < 0)
    return -1;
  int fd = openat (dfd, "cgroup.kill", O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd >= 0)
    {
      int rc = kist_write_all (fd, "1", 1);
      close (fd);
      if (rc < 0)
        return kist_error_make (err, -rc, "cgroup: write 1 to %s/cgroup.kill", abs_path);
      return 0;
    }
  if (errno != ENOENT)
    return kist_error_make (err, errno, "cgroup: open %s/cgroup.kill", abs_path);

  /* Kernels before 5.14: SIGKILL every process until none is left. */
  int64_t deadline = monotonic_ms () + 2000;
  for (;;)
    {
      _cleanup_free_ pid_t *pids = NULL;
      size_t n;
      if (pids_at (dfd, abs_path, &pids, &n, err) < 0)
        return -1;
      if (n == 0)
        return 0;
      for (size_t i = 0; i < n; i++)
        if (kill (pids[i], SIGKILL) < 0 && errno != ESRCH)
          return kist_error_make (err, errno, "cgroup: kill pid %d of %s", (int) pids[i],
                                  abs_path);
      if (monotonic_ms () > deadline)
        return kist_error_make (err, ETIMEDOUT,
                                "cgroup: %s still has %zu processes after SIGKILL for 2 s",
                                abs_path, n);
      usleep (10000);
    }
}

/* rmdir one cgroup directory, checked to be on cgroup2 first, and verify
 * it is gone.  ENOENT is success. */
static int
rmdir_cgroup (const char *abs, struct kist_error **err)
{
  struct statfs sfs;
  if (statfs (abs, &sfs) < 0)
    {
      if (errno == ENOENT)
        return 0;
      return kist_error_make (err, errno, "cgroup: statfs %s", abs);
    }
  if (sfs.f_type != CGROUP2_SUPER_MAGIC)
    return kist_error_make (err, EXDEV, "cgroup: refusing to remove %s: not on cgroup2", abs);
  if (rmdir (abs) < 0 && errno != ENOENT)
    return -errno;
  struct stat s;
  if (stat (abs, &s) == 0)
    return kist_error_make (err, EEXIST, "cgroup: %s still exists after rmdir", abs);
  if (errno != ENOENT)
    return kist_error_make (err, errno, "cgroup: verify %s is gone", abs);
  return 0;
}

int
kist_cgroup_remove (const char *abs_path, const char *created_from_abs, struct kist_error **err)
{
  if (abs_path == NULL || abs_path[0] != '/')
    return kist_error_make (err, EINVAL, "cgroup: remove: `%s` is not absolute",
                            abs_path ? abs_path : "(null)");
  size_t cl = created_from_abs ? strlen (created_from_abs) : 0;
  if (created_from_abs
      && (strncmp (abs_path, created_from_abs, cl) != 0
          || (abs_path[cl] != '/' && abs_path[cl] != '\0') || cl < 2))
    return kist_error_make (err, EINVAL,
                            "cgroup: remove: `%s` (created by kist) is not an ancestor of the "
                            "scope `%s`",
                            created_from_abs, abs_path);

  /* Wait up to 2 s for exiting tasks to leave. */
  int64_t deadline = monotonic_ms () + 2000;
  for (;;)
    {
      struct kist_error *e = NULL;
      int dfd = cg_open_scope (abs_path, &e);
      if (dfd < 0)
        {
          int en = e ? e->errnum : 0;
          if (en == ENOENT)
            {
              kist_error_free (e);
              break;
            }
          if (err && *err == NULL)
            *err = e;
          else
            kist_error_free (e);
          return -1;
        }
      _cleanup_free_ pid_t *pids = NULL;
      size_t n = 0;
      int rc = pids_at (dfd, abs_path, &pids, &n, err);
      close (dfd);
      if (rc < 0)
        return -1;
      if (n == 0)
        {
          rc = rmdir_cgroup (abs_path, err);
          if (rc == 0)
            break;
          if (rc != -EBUSY)
            return rc == -1 ? -1 : kist_error_make (err, -rc, "cgroup: rmdir %s", abs_path);
        }
      if (monotonic_ms () > deadline)
        return kist_error_make (err, EBUSY,
                                "cgroup: %s is not empty after 2 s (%zu processes%s%d); kill "
                                "them first (kist kill --all, or delete --force)",
                                abs_path, n, n ? ", first pid " : "", n ? (int) pids[0] : 0);
      usleep (10000);
    }

  if (created_from_abs == NULL)
    return 0;
  _cleanup_free_ char *p = xstrdup (abs_path);
  for (;;)
    {
      char *slash = strrchr (p, '/');
      if (slash == NULL || (size_t) (slash - p) < cl)
        break;
      *slash = '\0';
      if (strlen (p) < cl)
        break;
      int rc = rmdir_cgroup (p, err);
      if (rc == -EBUSY || rc == -ENOTEMPTY)
        break; /* still used by someone else */
      if (rc < 0)
        return rc == -1 ? -1 : kist_error_make (err, -rc, "cgroup: rmdir %s", p);
    }
  return 0;
}

/* ---------------------------------------------------------------- stats */

static void
gen_key (yajl_gen g, const char *k)
{
  yajl_gen_string (g, (const unsigned char *) k, strlen (k));
}

static void
gen_u64 (yajl_gen g, const char *k, uint64_t v)
{
  char buf[32];
  int n = snprintf (buf, sizeof buf, "%" PRIu64, v);
  gen_key (g, k);
  yajl_gen_number (g, buf, (size_t) n);
}

char *
kist_cgroup_stats_json (const char *abs_path, struct kist_error **err)
{
  _cleanup_close_ int dfd = cg_open_scope (abs_path, err);
  if (dfd < 0)
    return NULL;
  _cleanup_yajl_gen_ yajl_gen g = kist_json_gen_new (false, true);
  uint64_t v;

  yajl_gen_map_open (g);

  _cleanup_free_ char *cpu = cg_read_small (dfd, "cpu.stat");
  if (cpu)
    {
      gen_key (g, "cpu");
      yajl_gen_map_open (g);
      gen_key (g, "usage");
      yajl_gen_map_open (g);
      if (kv_get (cpu, "usage_usec", &v))
        gen_u64 (g, "total", v * 1000);
      if (kv_get (cpu, "system_usec", &v))
        gen_u64 (g, "kernel", v * 1000);
      if (kv_get (cpu, "user_usec", &v))
        gen_u64 (g, "user", v * 1000);
      yajl_gen_map_close (g);
      gen_key (g, "throttling");
      yajl_gen_map_open (g);
      if (kv_get (cpu, "nr_periods", &v))
        gen_u64 (g, "periods", v);
      if (kv_get (cpu, "nr_throttled", &v))
        gen_u64 (g, "throttledPeriods", v);
      if (kv_get (cpu, "throttled_usec", &v))
        gen_u64 (g, "throttledTime", v * 1000);
      yajl_gen_map_close (g);
      yajl_gen_map_close (g);
    }

  _cleanup_free_ char *cur = cg_read_small (dfd, "memory.current");
  _cleanup_free_ char *max = cg_read_small (dfd, "memory.max");
  _cleanup_free_ char *peak = cg_read_small (dfd, "memory.peak");
  _cleanup_free_ char *mstat = cg_read_small (dfd, "memory.stat");
  if (cur || max || peak || mstat)
    {
      gen_key (g, "memory");
      yajl_gen_map_open (g);
      gen_key (g, "usage");
      yajl_gen_map_open (g);
      if (cur && kist_parse_u64 (kist_rstrip (cur), &v) == 0)
        gen_u64 (g, "usage", v);
      if (max)
        {
          kist_rstrip (max);
          if (strcmp (max, "max") == 0)
            gen_u64 (g, "limit", UINT64_MAX);
          else if (kist_parse_u64 (max, &v) == 0)
            gen_u64 (g, "limit", v);
        }
      if (peak && kist_parse_u64 (kist_rstrip (peak), &v) == 0)
        gen_u64 (g, "max", v);
      yajl_gen_map_close (g);
      if (mstat)
        {
          gen_key (g, "raw");
          yajl_gen_map_open (g);
          char *save = NULL;
          for (char *l = strtok_r (mstat, "\n", &save); l; l = strtok_r (NULL, "\n", &save))
            {
              char *sp = strchr (l, ' ');
              if (sp == NULL)
                continue;
              *sp = '\0';
              if (kist_parse_u64 (sp + 1, &v) == 0)
                gen_u64 (g, l, v);
            }
          yajl_gen_map_close (g);
        }
      yajl_gen_map_close (g);
    }

  _cleanup_free_ char *pc = cg_read_small (dfd, "pids.current");
  _cleanup_free_ char *pm = cg_read_small (dfd, "pids.max");
  if (pc || pm)
    {
      gen_key (g, "pids");
      yajl_gen_map_open (g);
      if (pc && kist_parse_u64 (kist_rstrip (pc), &v) == 0)
        gen_u64 (g, "current", v);
      if (pm)
        {
          kist_rstrip (pm);
          if (strcmp (pm, "max") == 0)
            gen_u64 (g, "limit", 0);
          else if (kist_parse_u64 (pm, &v) == 0)
            gen_u64 (g, "limit", v);
        }
      yajl_gen_map_close (g);
    }

  yajl_gen_map_close (g);
  return kist_json_gen_take (g);
}

int64_t
kist_cgroup_oom_kills (const char *abs_path)
{
  return scope_kv (abs_path, "memory.events", "oom_kill");
}

int64_t
kist_cgroup_value (const char *abs_path, const char *file, const char *key)
{
  return scope_kv (abs_path, file, key);
}
