/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: cgroup v2 scopes and limits (layers "cgroup" and "cgroup.<file>").
 *
 * Only cgroup v2: the cgroup2 mount comes from /proc/self/mountinfo, every
 * lookup below it is an openat2 with RESOLVE_BENEATH | RESOLVE_NO_XDEV |
 * RESOLVE_NO_SYMLINKS from the mount's directory fd, and every removal
 * checks that the directory is on cgroup2 first, so kist never writes to a
 * cgroup v1 hierarchy or outside the cgroup2 mount.
 *
 * linux.resources is first turned into a plan (one write per file, with the
 * config path it came from), then the controllers the plan needs are enabled
 * in each ancestor's cgroup.subtree_control (only those, and only where the
 * ancestor has them), then every file is written and read back.  `kist
 * update` runs the same plan code on a live scope. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "sha256.h"
#include "json.h"
#include "resolve.h"
#include "util.h"

#define CG_FILE_MAX (1024 * 1024)
#define CG_RESOLVE (RESOLVE_BENEATH | RESOLVE_NO_XDEV | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)

/* Controllers kist knows how to enable (bit i = controllers[i]). */
static const char *const controllers[] = { "cpuset", "cpu", "io", "memory", "hugetlb", "pids", "rdma", "misc" };

static int
controller_index (const char *name)
{
  for (size_t i = 0; i < KIST_ARRAY_SIZE (controllers); i++)
    if (strcmp (controllers[i], name) == 0)
      return (int) i;
  return -1;
}

void
kist_cgroup_free (struct kist_cgroup *cg)
{
  if (cg == NULL)
    return;
  free (cg->mount);
  free (cg->path);
  free (cg->created_from);
  if (cg->dirfd >= 0)
    close (cg->dirfd);
  free (cg);
}

/* ---------------------------------------------------------------- paths */

/* Undo the octal escapes of mountinfo (\040 for a space). */
static void
unescape_mountinfo (char *s)
{
  char *w = s;
  for (char *p = s; *p; p++)
    {
      if (p[0] == '\\' && p[1] >= '0' && p[1] <= '7' && p[2] >= '0' && p[2] <= '7' && p[3] >= '0'
          && p[3] <= '7')
        {
          *w++ = (char) (((p[1] - '0') << 6) | ((p[2] - '0') << 3) | (p[3] - '0'));
          p += 3;
        }
      else
        *w++ = *p;
    }
  *w = '\0';
}

int
kist_cgroup_mount (char **mount, struct kist_error **err)
{
  _cleanup_free_ char *text = NULL;
  *mount = NULL;
  if (kist_read_file_at (AT_FDCWD, "/proc/self/mountinfo", 16 * CG_FILE_MAX, &text, NULL, err) < 0)
    return kist_error_wrap (err, "cgroup: find the cgroup2 mount");

  char *save = NULL;
  for (char *line = strtok_r (text, "\n", &save); line; line = strtok_r (NULL, "\n", &save))
    {
      /* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [OPTIONAL...] - FSTYPE SOURCE SUPER */
      char *sep = strstr (line, " - ");
      if (sep == NULL)
        continue;
      if (strncmp (sep + 3, "cgroup2 ", 8) != 0)
        continue;
      char *f[5];
      char *s2 = NULL, *p = line;
      int i;
      for (i = 0; i < 5; i++, p = NULL)
        if ((f[i] = strtok_r (p, " ", &s2)) == NULL)
          break;
      if (i < 5)
        continue;
      unescape_mountinfo (f[4]);
      /* Only a mount that is what its path shows now: one hidden by a later
       * mount over its path (the engines' cgroup2 bind over /sys/fs/cgroup
       * hides /sys/fs/cgroup/unified) is not reachable there. */
      uint64_t id = 0, at = 0;
      _cleanup_error_ struct kist_error *e = NULL;
      if (kist_parse_u64 (f[0], &id) < 0 || kist_mnt_id_at (AT_FDCWD, f[4], 0, &at, &e) < 0
          || at != id)
        continue;
      *mount = xstrdup (f[4]);
      return 0;
    }
  return kist_error_make (err, ENOENT,
                          "cgroup: no cgroup2 filesystem is mounted (/proc/self/mountinfo); kist "
                          "supports cgroup v2 only: mount one with `mount -t cgroup2 none "
                          "/sys/fs/cgroup` or boot with systemd.unified_cgroup_hierarchy=1");
}

int
kist_cgroup_own_path (char **path, struct kist_error **err)
{
  _cleanup_free_ char *text = NULL;
  *path = NULL;
  if (kist_read_file_at (AT_FDCWD, "/proc/self/cgroup", CG_FILE_MAX, &text, NULL, err) < 0)
    return kist_error_wrap (err, "cgroup: find kist's own cgroup");
  char *save = NULL;
  for (char *line = strtok_r (text, "\n", &save); line; line = strtok_r (NULL, "\n", &save))
    if (strncmp (line, "0::", 3) == 0)
      {
        const char *p = line + 3;
        while (*p == '/')
          p++;
        char *v = xstrdup (p);
        size_t n = strlen (v);
        while (n > 0 && v[n - 1] == '/')
          v[--n] = '\0';
        /* A cgroup that was removed under us reads "/... (deleted)". */
        if (n > 10 && strcmp (v + n - 10, " (deleted)") == 0)
          {
            free (v);
            return kist_error_make (err, ENOENT, "cgroup: kist's own cgroup /%s was removed", p);
          }
        *path = v;
        return 0;
      }
  return kist_error_make (err, ENOENT,
                          "cgroup: /proc/self/cgroup has no cgroup v2 line (\"0::/path\"); kist "
                          "supports cgroup v2 only");
}

/* Refuse "", ".", "..", empty components; the path has no leading '/'. */
static int
validate_rel (const char *p, const char *what, struct kist_error **err)
{
  if (strlen (p) > 4096)
    return kist_error_make (err, ENAMETOOLONG, "%s: the cgroup path is too long", what);
  const char *c = p;
  while (*c)
    {
      const char *e = strchrnul (c, '/');
      size_t n = (size_t) (e - c);
      if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
        return kist_error_make (err, EINVAL,
                                "%s: `%s` has an empty, `.` or `..` component; give a clean path "
                                "below the cgroup2 root such as /kist/c1",
                                what, p);
      if (n > 255)
        return kist_error_make (err, ENAMETOOLONG, "%s: a component of `%s` is too long", what, p);
      c = *e ? e + 1 : e;
      if (*e && *c == '\0')
        return kist_error_make (err, EINVAL, "%s: `%s` ends with '/'", what, p);
    }
  return 0;
}

int
kist_cgroup_resolve_path (const char *cgroups_path, const char *own, const char *id, char **rel,
                          struct kist_error **err)
{
  const char *what = "linux.cgroupsPath";
  _cleanup_free_ char *out = NULL;
  *rel = NULL;
  own = own ? own : "";
  while (*own == '/')
    own++;

  if (cgroups_path == NULL || cgroups_path[0] == '\0')
    {
      if (id == NULL || id[0] == '\0' || strchr (id, '/') || strcmp (id, ".") == 0
          || strcmp (id, "..") == 0)
        return kist_error_make (err, EINVAL, "cgroup: the container id cannot name a cgroup");
      /* Ids may be 1024 characters, cgroup names only 255: a long id gets
       * "@" + its SHA-256, as its state directory does. */
      char hashed[2 * KIST_SHA256_LEN + 2];
      if (strlen (id) > 200)
        {
          uint8_t digest[KIST_SHA256_LEN];
          kist_sha256 (id, strlen (id), digest);
          hashed[0] = '@';
          kist_sha256_hex (digest, hashed + 1);
          id = hashed;
        }
      out = own[0] ? xasprintf ("%s/kist/%s", own, id) : xasprintf ("kist/%s", id);
      what = "cgroup scope";
    }
  else
    {
      if (strchr (cgroups_path, ':') != NULL && cgroups_path[0] != '/')
        return kist_error_make (err, ENOTSUP,
                                "linux.cgroupsPath `%s`: the systemd cgroup driver is not "
                                "implemented; use a path (absolute: below the cgroup2 root, "
                                "relative: below kist's own cgroup)",
                                cgroups_path);
      if (cgroups_path[0] == '/')
        {
          const char *p = cgroups_path;
          while (*p == '/')
            p++;
          out = xstrdup (p);
        }
      else
        out = own[0] ? xasprintf ("%s/%s", own, cgroups_path) : xstrdup (cgroups_path);
    }
  if (out[0] == '\0')
    return kist_error_make (err, EINVAL,
                            "%s: `%s` names the cgroup2 root, which cannot hold a container", what,
                            cgroups_path ? cgroups_path : "");
  if (validate_rel (out, what, err) < 0)
    return -EINVAL;
  *rel = steal_pointer (&out);
  return 0;
}

/* ---------------------------------------------------------------- values */

uint64_t
kist_cgroup_shares_to_weight (uint64_t shares)
{
  if (shares == 0)
    return 0;
  if (shares < 2)
    shares = 2;
  if (shares > 262144)
    shares = 262144;
  return 1 + ((shares - 2) * 9999) / 262142;
}

uint64_t
kist_cgroup_blkio_to_io_weight (uint64_t weight)
{
  if (weight == 0)
    return 0;
  if (weight < 10)
    weight = 10;
  if (weight > 1000)
    weight = 1000;
  return 1 + (weight - 10) * 9999 / 990;
}

int
kist_cgroup_swap_max (int64_t limit, int64_t swap, int64_t *out, bool *set,
                      struct kist_error **err)
{
  *set = false;
  *out = 0;
  if (swap == 0)
    {
      if (limit == -1)
        {
          /* No memory limit and no swap value: no swap limit either. */
          *set = true;
          *out = -1;
        }
      return 0;
    }
  if (swap == -1)
    {
      *set = true;
      *out = -1;
      return 0;
    }
  if (swap < -1)
    return kist_error_make (err, EINVAL, "linux.resources.memory.swap: %" PRId64 " is invalid",
                            swap);
  if (limit == 0)
    return kist_error_make (err, EINVAL,
                            "linux.resources.memory.swap: a swap limit needs memory.limit too "
                            "(OCI swap is memory+swap)");
  if (limit == -1)
    {
      /* Unlimited memory: memory+swap cannot be split; follow runc and
       * refuse. */
      return kist_error_make (err, EINVAL,
                              "linux.resources.memory.swap: %" PRId64 " with an unlimited "
                              "memory.limit cannot be converted (OCI swap is memory+swap)",
                              swap);
    }
  if (limit < -1)
    return kist_error_make (err, EINVAL, "linux.resources.memory.limit: %" PRId64 " is invalid",
                            limit);
  if (swap < limit)
    return kist_error_make (err, EINVAL,
                            "linux.resources.memory.swap (%" PRId64 ") must be >= "
                            "memory.limit (%" PRId64 "): OCI swap is memory+swap",
                            swap, limit);
  *set = true;
  *out = swap - limit;
  return 0;
}

/* Copy with leading/trailing whitespace removed and inner runs of
 * whitespace collapsed to one space. */
static char *
normalise (const char *s)
{
  char *out = xmalloc (strlen (s) + 1), *w = out;
  bool space = false;
  for (const char *p = s; *p; p++)
    {
      if (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
        space = w != out;
      else
        {
          if (space)
            *w++ = ' ';
          space = false;
          *w++ = *p;
        }
    }
  *w = '\0';
  return out;
}

/* A number as memparse reads it: digits with an optional K/M/G/T/P/E suffix. */
static bool
parse_size (const char *s, uint64_t *v)
{
  if (s == NULL || *s < '0' || *s > '9')
    return false;
  errno = 0;
  char *end = NULL;
  unsigned long long n = strtoull (s, &end, 10);
  if (errno)
    return false;
  int shift = 0;
  switch (*end)
    {
    case '\0':
      break;
    case 'k': case 'K': shift = 10; break;
    case 'm': case 'M': shift = 20; break;
    case 'g': case 'G': shift = 30; break;
    case 't': case 'T': shift = 40; break;
    case 'p': case 'P': shift = 50; break;
    case 'e': case 'E': shift = 60; break;
    default:
      return false;
    }
  if (shift && end[1] != '\0')
    return false;
  if (shift && n > (UINT64_MAX >> shift))
    return false;
  *v = (uint64_t) n << shift;
  return true;
}

bool
kist_cgroup_value_matches (const char *want, const char *got, uint64_t unit, bool *rounded)
{
  _cleanup_free_ char *w = normalise (want ? want : "");
  _cleanup_free_ char *g = normalise (got ? got : "");
  uint64_t wn, gn;
  if (rounded)
    *rounded = false;
  if (strcmp (w, g) == 0)
    return true;
  if (!parse_size (w, &wn) || !parse_size (g, &gn))
    return false;
  if (wn == gn)
    return true;
  if (unit > 0 && gn == wn - wn % unit)
    {
      if (rounded)
        *rounded = true;
      return true;
    }
  return false;
}

#define CPU_BITS 8192

static bool
cpulist_parse (const char *s, uint64_t *bits)
{
  memset (bits, 0, CPU_BITS / 8);
  _cleanup_free_ char *n = normalise (s ? s : "");
  const char *p = n;
  if (*p == '\0')
    return true;
  for (;;)
    {
      char *end;
      if (*p < '0' || *p > '9')
        return false;
      unsigned long a = strtoul (p, &end, 10), b = a;
      p = end;
      if (*p == '-')
        {
          p++;
          if (*p < '0' || *p > '9')
            return false;
          b = strtoul (p, &end, 10);
          p = end;
        }
      if (b < a || b >= CPU_BITS)
        return false;
      for (unsigned long i = a; i <= b; i++)
        bits[i / 64] |= 1ULL << (i % 64);
      if (*p == '\0')
        return true;
      if (*p != ',')
        return false;
      p++;
    }
}

bool
kist_cgroup_cpulist_equal (const char *a, const char *b)
{
  uint64_t x[CPU_BITS / 64], y[CPU_BITS / 64];
  if (!cpulist_parse (a, x) || !cpulist_parse (b, y))
    return false;
  return memcmp (x, y, sizeof x) == 0;
}

/* ---------------------------------------------------------------- plan */

void
kist_cgroup_plan_free (struct kist_cgroup_plan *p)
{
  if (p == NULL)
    return;
  for (size_t i = 0; i < p->n; i++)
    {
      free (p->w[i].file);
      free (p->w[i].controller);
      kist_strv_free (p->w[i].lines);
      free (p->w[i].requested);
      free (p->w[i].config);
      free (p->w[i].reason);
    }
  free (p->w);
  free (p->dev);
  free (p);
}

static void
plan_freep (struct kist_cgroup_plan **p)
{
  kist_cgroup_plan_free (*p);
  *p = NULL;
}

static struct kist_cgroup_write *
plan_find (struct kist_cgroup_plan *p, const char *file)
{
  for (size_t i = 0; i < p->n; i++)
    if (strcmp (p->w[i].file, file) == 0)
      return &p->w[i];
  return NULL;
}

/* The write for file (a new one, or the existing one to append lines to). */
static struct kist_cgroup_write *
plan_get (struct kist_cgroup_plan *p, const char *file, const char *config, uint64_t unit)
{
  struct kist_cgroup_write *w = plan_find (p, file);
  if (w)
    return w;
  p->w = xrealloc (p->w, (p->n + 1) * sizeof *p->w);
  w = &p->w[p->n++];
  memset (w, 0, sizeof *w);
  w->file = xstrdup (file);
  const char *dot = strchr (file, '.');
  _cleanup_free_ char *ctl = xstrdup (file);
  if (dot)
    ctl[dot - file] = '\0';
  if (strcmp (ctl, "cgroup") != 0)
    w->controller = steal_pointer (&ctl);
  w->config = xstrdup (config);
  w->unit = unit;
  w->lines = xcalloc (1, sizeof (char *));
  return w;
}

static void
write_add_line (struct kist_cgroup_write *w, const char *line)
{
  size_t n = kist_strv_len (w->lines);
  w->lines = xrealloc (w->lines, (n + 2) * sizeof (char *));
  w->lines[n] = xstrdup (line);
  w->lines[n + 1] = NULL;
  char *req = w->requested ? xasprintf ("%s; %s", w->requested, line) : xstrdup (line);
  free (w->requested);
  w->requested = req;
}

static void
plan_add (struct kist_cgroup_plan *p, const char *file, const char *config, uint64_t unit,
          const char *fmt, ...) __attribute__ ((format (printf, 5, 6)));
static void
plan_add (struct kist_cgroup_plan *p, const char *file, const char *config, uint64_t unit,
          const char *fmt, ...)
{
  va_list ap;
  _cleanup_free_ char *line = NULL;
  va_start (ap, fmt);
  if (vasprintf (&line, fmt, ap) < 0)
    abort ();
  va_end (ap);
  write_add_line (plan_get (p, file, config, unit), line);
}

/* A request that cgroup v2 cannot express: recorded as not applied. */
static void
plan_unsupported (struct kist_cgroup_plan *p, const char *name, const char *config,
                  const char *requested, const char *reason)
{
  struct kist_cgroup_write *w = plan_get (p, name, config, 0);
  free (w->controller);
  w->controller = NULL;
  free (w->requested);
  w->requested = xstrdup (requested);
  w->unsupported = ENOTSUP;
  free (w->reason);
  w->reason = xasprintf ("%s: %s", config, reason);
}

/* Typed field lookups; *present is false when absent or null. */
static int
get_int (yajl_val o, const char *key, const char *path, bool *present, int64_t *v,
         struct kist_error **err)
{
  yajl_val x = kist_json_obj_get (o, key);
  *present = false;
  *v = 0;
  if (x == NULL || YAJL_IS_NULL (x))
    return 0;
  if (!YAJL_IS_INTEGER (x))
    {
      /* uint64 values above INT64_MAX arrive as doubles. */
      if (YAJL_IS_DOUBLE (x) && x->u.number.d >= 9.2e18)
        {
          *present = true;
          *v = INT64_MAX;
          return 0;
        }
      return kist_error_make (err, EINVAL, "%s.%s: expected an integer", path, key);
    }
  *present = true;
  *v = YAJL_GET_INTEGER (x);
  return 0;
}

static int
get_uint (yajl_val o, const char *key, const char *path, bool *present, uint64_t *v,
          struct kist_error **err)
{
  int64_t s;
  if (get_int (o, key, path, present, &s, err) < 0)
    return -1;
  if (*present && s < 0)
    return kist_error_make (err, EINVAL, "%s.%s: expected a non-negative integer", path, key);
  *v = (uint64_t) s;
  return 0;
}

static int
get_obj (yajl_val o, const char *key, const char *path, yajl_val *v, struct kist_error **err)
{
  yajl_val x = kist_json_obj_get (o, key);
  *v = NULL;
  if (x == NULL || YAJL_IS_NULL (x))
    return 0;
  if (!YAJL_IS_OBJECT (x))
    return kist_error_make (err, EINVAL, "%s.%s: expected an object", path, key);
  *v = x;
  return 0;
}

static int
get_arr (yajl_val o, const char *key, const char *path, yajl_val *v, struct kist_error **err)
{
  yajl_val x = kist_json_obj_get (o, key);
  *v = NULL;
  if (x == NULL || YAJL_IS_NULL (x))
    return 0;
  if (!YAJL_IS_ARRAY (x))
    return kist_error_make (err, EINVAL, "%s.%s: expected an array", path, key);
  *v = x;
  return 0;
}

static int
get_str (yajl_val o, const char *key, const char *path, const char **v, struct kist_error **err)
{
  yajl_val x = kist_json_obj_get (o, key);
  *v = NULL;
  if (x == NULL || YAJL_IS_NULL (x))
    return 0;
  if (!YAJL_IS_STRING (x))
    return kist_error_make (err, EINVAL, "%s.%s: expected a string", path, key);
  *v = x->u.string;
  return 0;
}

static uint64_t
page_size (void)
{
  long n = sysconf (_SC_PAGESIZE);
  return n > 0 ? (uint64_t) n : 4096;
}

static int
plan_memory (struct kist_cgroup_plan *p, yajl_val m, struct kist_error **err)
{
  const char *P = "linux.resources.memory";
  bool has_limit, has_res, has_swap, has;
  int64_t limit, res, swap, v;
  uint64_t u;

  if (get_int (m, "limit", P, &has_limit, &limit, err) < 0
      || get_int (m, "reservation", P, &has_res, &res, err) < 0
      || get_int (m, "swap", P, &has_swap, &swap, err) < 0)
    return -1;
  if (has_limit && limit != 0)
    {
      if (limit < -1)
        return kist_error_make (err, EINVAL, "%s.limit: %" PRId64 " is invalid (-1: unlimited)",
                                P, limit);
      if (limit == -1)
        plan_add (p, "memory.max", "linux.resources.memory.limit", 0, "max");
      else
        plan_add (p, "memory.max", "linux.resources.memory.limit", page_size (), "%" PRId64,
                  limit);
    }
  if (has_res && res != 0)
    {
      if (res < -1)
        return kist_error_make (err, EINVAL, "%s.reservation: %" PRId64 " is invalid", P, res);
      if (res == -1)
        plan_add (p, "memory.low", "linux.resources.memory.reservation", 0, "max");
      else
        plan_add (p, "memory.low", "linux.resources.memory.reservation", page_size (),
                  "%" PRId64, res);
    }
  if (has_swap)
    {
      int64_t sw;
      bool set;
      if (kist_cgroup_swap_max (has_limit ? limit : 0, swap, &sw, &set, err) < 0)
        return -1;
      if (set && sw == -1)
        plan_add (p, "memory.swap.max", "linux.resources.memory.swap", 0, "max");
      else if (set)
        plan_add (p, "memory.swap.max", "linux.resources.memory.swap", page_size (),
                  "%" PRId64, sw);
    }
  if (get_int (m, "kernel", P, &has, &v, err) < 0)
    return -1;
  if (has && v != 0)
    plan_unsupported (p, "memory.kernel", "linux.resources.memory.kernel", "",
                      "kernel memory limits do not exist on cgroup v2 (it is part of memory.max)");
  if (get_int (m, "kernelTCP", P, &has, &v, err) < 0)
    return -1;
  if (has && v != 0)
    plan_unsupported (p, "memory.kernelTCP", "linux.resources.memory.kernelTCP", "",
                      "kernel TCP memory limits do not exist on cgroup v2");
  if (get_uint (m, "swappiness", P, &has, &u, err) < 0)
    return -1;
  if (has)
    plan_unsupported (p, "memory.swappiness", "linux.resources.memory.swappiness", "",
                      "cgroup v2 has no per-cgroup swappiness");
  yajl_val oom = kist_json_obj_get (m, "disableOOMKiller");
  if (oom != NULL && !YAJL_IS_NULL (oom) && !YAJL_IS_TRUE (oom) && !YAJL_IS_FALSE (oom))
    return kist_error_make (err, EINVAL, "%s.disableOOMKiller: expected a boolean", P);
  if (YAJL_IS_TRUE (oom))
    plan_unsupported (p, "memory.disableOOMKiller", "linux.resources.memory.disableOOMKiller", "",
                      "the OOM killer cannot be disabled on cgroup v2 (memory.oom_control is "
                      "v1 only)");
  /* useHierarchy and checkBeforeUpdate: nothing to do on cgroup v2. */
  return 0;
}

static int
plan_cpu (struct kist_cgroup_plan *p, yajl_val c, struct kist_error **err)
{
  const char *P = "linux.resources.cpu";
  bool has_shares, has_quota, has_period, has;
  uint64_t shares, period, burst;
  int64_t quota, v;
  const char *s;

  if (get_uint (c, "shares", P, &has_shares, &shares, err) < 0
      || get_int (c, "quota", P, &has_quota, &quota, err) < 0
      || get_uint (c, "period", P, &has_period, &period, err) < 0)
    return -1;
  if (has_shares && shares != 0)
    plan_add (p, "cpu.weight", "linux.resources.cpu.shares", 0, "%" PRIu64,
              kist_cgroup_shares_to_weight (shares));
  if ((has_quota && quota != 0) || (has_period && period != 0))
    {
      char q[32];
      if (has_quota && quota > 0)
        snprintf (q, sizeof q, "%" PRId64, quota);
      else
        snprintf (q, sizeof q, "max");
      if (has_period && period != 0)
        plan_add (p, "cpu.max", "linux.resources.cpu.quota", 0, "%s %" PRIu64, q, period);
      else
        plan_add (p, "cpu.max", "linux.resources.cpu.quota", 0, "%s", q);
    }
  if (get_uint (c, "burst", P, &has, &burst, err) < 0)
    return -1;
  if (has && burst > 0) /* 0: unset (Docker sends zero-valued fields) */
    plan_add (p, "cpu.max.burst", "linux.resources.cpu.burst", 0, "%" PRIu64, burst);
  if (get_int (c, "realtimeRuntime", P, &has, &v, err) < 0)
    return -1;
  if (has && v != 0)
    plan_unsupported (p, "cpu.rt_runtime", "linux.resources.cpu.realtimeRuntime", "",
                      "realtime CPU bandwidth is cgroup v1 only");
  if (get_int (c, "realtimePeriod", P, &has, &v, err) < 0)
    return -1;
  if (has && v != 0)
    plan_unsupported (p, "cpu.rt_period", "linux.resources.cpu.realtimePeriod", "",
                      "realtime CPU bandwidth is cgroup v1 only");
  if (get_str (c, "cpus", P, &s, err) < 0)
    return -1;
  if (s && s[0])
    plan_add (p, "cpuset.cpus", "linux.resources.cpu.cpus", 0, "%s", s);
  if (get_str (c, "mems", P, &s, err) < 0)
    return -1;
  if (s && s[0])
    plan_add (p, "cpuset.mems", "linux.resources.cpu.mems", 0, "%s", s);
  if (get_int (c, "idle", P, &has, &v, err) < 0)
    return -1;
  if (has && v != 0) /* 0: unset, the kernel's default */
    plan_add (p, "cpu.idle", "linux.resources.cpu.idle", 0, "%" PRId64, v);
  return 0;
}

static int
plan_blockio (struct kist_cgroup_plan *p, yajl_val b, struct kist_error **err)
{
  const char *P = "linux.resources.blockIO";
  bool has;
  uint64_t v;
  yajl_val arr;

  if (get_uint (b, "weight", P, &has, &v, err) < 0)
    return -1;
  if (has && v != 0)
    plan_add (p, "io.weight", "linux.resources.blockIO.weight", 0, "default %" PRIu64,
              kist_cgroup_blkio_to_io_weight (v));
  if (get_uint (b, "leafWeight", P, &has, &v, err) < 0)
    return -1;
  if (has && v != 0)
    plan_unsupported (p, "io.leafWeight", "linux.resources.blockIO.leafWeight", "",
                      "leaf weights are cgroup v1 only");

  if (get_arr (b, "weightDevice", P, &arr, err) < 0)
    return -1;
  for (size_t i = 0; arr && i < arr->u.array.len; i++)
    {
      yajl_val d = arr->u.array.values[i];
      _cleanup_free_ char *path = xasprintf ("%s.weightDevice[%zu]", P, i);
      bool hmaj, hmin, hw;
      int64_t maj, min;
      uint64_t w;
      if (!YAJL_IS_OBJECT (d))
        return kist_error_make (err, EINVAL, "%s: expected an object", path);
      if (get_int (d, "major", path, &hmaj, &maj, err) < 0
          || get_int (d, "minor", path, &hmin, &min, err) < 0
          || get_uint (d, "weight", path, &hw, &w, err) < 0)
        return -1;
      if (!hmaj || !hmin || maj < 0 || min < 0)
        return kist_error_make (err, EINVAL, "%s: major and minor are required", path);
      if (hw && w != 0)
        plan_add (p, "io.weight", "linux.resources.blockIO.weightDevice", 0,
                  "%" PRId64 ":%" PRId64 " %" PRIu64, maj, min, kist_cgroup_blkio_to_io_weight (w));
      if (get_uint (d, "leafWeight", path, &hw, &w, err) < 0)
        return -1;
      if (hw && w != 0)
        plan_unsupported (p, "io.leafWeight", "linux.resources.blockIO.weightDevice", "",
                          "leaf weights are cgroup v1 only");
    }

  static const struct
  {
    const char *key, *io;
  } thr[] = {
    { "throttleReadBpsDevice", "rbps" },
    { "throttleWriteBpsDevice", "wbps" },
    { "throttleReadIOPSDevice", "riops" },
    { "throttleWriteIOPSDevice", "wiops" },
  };
  for (size_t t = 0; t < KIST_ARRAY_SIZE (thr); t++)
    {
      if (get_arr (b, thr[t].key, P, &arr, err) < 0)
        return -1;
      for (size_t i = 0; arr && i < arr->u.array.len; i++)
        {
          yajl_val d = arr->u.array.values[i];
          _cleanup_free_ char *path = xasprintf ("%s.%s[%zu]", P, thr[t].key, i);
          _cleanup_free_ char *config = xasprintf ("%s.%s", P, thr[t].key);
          bool hmaj, hmin, hr;
          int64_t maj, min;
          uint64_t rate;
          if (!YAJL_IS_OBJECT (d))
            return kist_error_make (err, EINVAL, "%s: expected an object", path);
          if (get_int (d, "major", path, &hmaj, &maj, err) < 0
              || get_int (d, "minor", path, &hmin, &min, err) < 0
              || get_uint (d, "rate", path, &hr, &rate, err) < 0)
            return -1;
          if (!hmaj || !hmin || !hr || maj < 0 || min < 0)
            return kist_error_make (err, EINVAL, "%s: major, minor and rate are required", path);
          if (rate == 0)
            plan_add (p, "io.max", config, 0, "%" PRId64 ":%" PRId64 " %s=max", maj, min,
                      thr[t].io);
          else
            plan_add (p, "io.max", config, 0, "%" PRId64 ":%" PRId64 " %s=%" PRIu64, maj, min,
                      thr[t].io, rate);
        }
    }
  return 0;
}

/* "2MB" -> 2097152; "1GB"; "64KB". */
static bool
hugepage_bytes (const char *s, uint64_t *out)
{
  char *end;
  if (s == NULL || *s < '0' || *s > '9')
    return false;
  unsigned long long n = strtoull (s, &end, 10);
  int shift;
  if (strcmp (end, "KB") == 0)
    shift = 10;
  else if (strcmp (end, "MB") == 0)
    shift = 20;
  else if (strcmp (end, "GB") == 0)
    shift = 30;
  else
    return false;
  if (n == 0 || n > (1ULL << 20))
    return false;
  *out = (uint64_t) n << shift;
  return true;
}

static int
plan_hugetlb (struct kist_cgroup_plan *p, yajl_val arr, struct kist_error **err)
{
  for (size_t i = 0; i < arr->u.array.len; i++)
    {
      yajl_val h = arr->u.array.values[i];
      _cleanup_free_ char *path = xasprintf ("linux.resources.hugepageLimits[%zu]", i);
      const char *size;
      bool has;
      uint64_t limit, unit;
      if (!YAJL_IS_OBJECT (h))
        return kist_error_make (err, EINVAL, "%s: expected an object", path);
      if (get_str (h, "pageSize", path, &size, err) < 0
          || get_uint (h, "limit", path, &has, &limit, err) < 0)
        return -1;
      if (size == NULL || !has)
        return kist_error_make (err, EINVAL, "%s: pageSize and limit are required", path);
      if (!hugepage_bytes (size, &unit))
        return kist_error_make (err, EINVAL,
                                "%s.pageSize: `%s` is not a huge page size like 2MB or 1GB", path,
                                size);
      _cleanup_free_ char *file = xasprintf ("hugetlb.%s.max", size);
      plan_add (p, file, path, unit, "%" PRIu64, limit);
    }
  return 0;
}

static int
plan_rdma (struct kist_cgroup_plan *p, yajl_val o, struct kist_error **err)
{
  for (size_t i = 0; i < o->u.object.len; i++)
    {
      const char *dev = o->u.object.keys[i];
      yajl_val v = o->u.object.values[i];
      _cleanup_free_ char *path = xasprintf ("linux.resources.rdma.%s", dev);
      bool hh, ho;
      uint64_t h, ob;
      if (!YAJL_IS_OBJECT (v))
        return kist_error_make (err, EINVAL, "%s: expected an object", path);
      if (dev[0] == '\0' || strpbrk (dev, " \t\n=") != NULL)
        return kist_error_make (err, EINVAL, "%s: invalid device name", path);
      if (get_uint (v, "hcaHandles", path, &hh, &h, err) < 0
          || get_uint (v, "hcaObjects", path, &ho, &ob, err) < 0)
        return -1;
      if (!hh && !ho)
        continue;
      char hs[32] = "max", os[32] = "max";
      if (hh)
        snprintf (hs, sizeof hs, "%" PRIu64, h);
      if (ho)
        snprintf (os, sizeof os, "%" PRIu64, ob);
      plan_add (p, "rdma.max", "linux.resources.rdma", 0, "%s hca_handle=%s hca_object=%s", dev,
                hs, os);
    }
  return 0;
}

/* linux.resources.unified: raw files; the key is a file name in the scope. */
static int
plan_unified (struct kist_cgroup_plan *p, yajl_val o, struct kist_error **err)
{
  static const char *const refused[]
      = { "cgroup.procs", "cgroup.threads", "cgroup.kill", "cgroup.freeze", "cgroup.subtree_control",
          "cgroup.type", "cgroup.events", "cgroup.controllers" };
  for (size_t i = 0; i < o->u.object.len; i++)
    {
      const char *key = o->u.object.keys[i];
      yajl_val v = o->u.object.values[i];
      _cleanup_free_ char *path = xasprintf ("linux.resources.unified.%s", key);
      if (!YAJL_IS_STRING (v))
        return kist_error_make (err, EINVAL, "%s: expected a string", path);
      if (key[0] == '\0' || key[0] == '.' || strchr (key, '/') || strstr (key, "..")
          || strchr (key, '.') == NULL || strlen (key) > 255)
        return kist_error_make (err, EINVAL,
                                "linux.resources.unified: key `%s` is not a cgroup file name "
                                "(\"controller.file\", no '/' or \"..\")",
                                key);
      for (size_t k = 0; k < KIST_ARRAY_SIZE (refused); k++)
        if (strcmp (key, refused[k]) == 0)
          return kist_error_make (err, EPERM,
                                  "linux.resources.unified: `%s` is managed by kist and cannot "
                                  "be set",
                                  key);
      /* unified overrides the structured value for the same file. */
      struct kist_cgroup_write *w = plan_find (p, key);
      if (w)
        {
          kist_strv_free (w->lines);
          w->lines = xcalloc (1, sizeof (char *));
          free (w->requested);
          w->requested = NULL;
          free (w->config);
          w->config = xstrdup (path);
          w->unit = 0;
        }
      w = plan_get (p, key, path, 0);
      if (strncmp (key, "memory.", 7) == 0)
        w->unit = page_size ();
      write_add_line (w, v->u.string);
    }
  return 0;
}

int
kist_cgroup_plan_build (yajl_val res, struct kist_cgroup_plan **out, struct kist_error **err)
{
  __attribute__ ((cleanup (plan_freep))) struct kist_cgroup_plan *p = xcalloc (1, sizeof *p);
  yajl_val o;
  *out = NULL;

  if (res == NULL || YAJL_IS_NULL (res))
    {
      *out = steal_pointer (&p);
      return 0;
    }
  if (!YAJL_IS_OBJECT (res))
    return kist_error_make (err, EINVAL, "linux.resources: expected an object");

  if (get_obj (res, "memory", "linux.resources", &o, err) < 0 || (o && plan_memory (p, o, err) < 0))
    return -1;
  if (get_obj (res, "cpu", "linux.resources", &o, err) < 0 || (o && plan_cpu (p, o, err) < 0))
    return -1;
  if (get_obj (res, "pids", "linux.resources", &o, err) < 0)
    return -1;
  if (o)
    {
      bool has;
      int64_t limit;
      if (get_int (o, "limit", "linux.resources.pids", &has, &limit, err) < 0)
        return -1;
      /* > 0: the limit; -1: explicitly unlimited; 0: unset (Docker, runc). */
      if (has && limit > 0)
        plan_add (p, "pids.max", "linux.resources.pids.limit", 0, "%" PRId64, limit);
      else if (has && limit < 0)
        plan_add (p, "pids.max", "linux.resources.pids.limit", 0, "max");
    }
  if (get_obj (res, "blockIO", "linux.resources", &o, err) < 0
      || (o && plan_blockio (p, o, err) < 0))
    return -1;
  if (get_arr (res, "hugepageLimits", "linux.resources", &o, err) < 0
      || (o && plan_hugetlb (p, o, err) < 0))
    return -1;
  if (get_obj (res, "rdma", "linux.resources", &o, err) < 0 || (o && plan_rdma (p, o, err) < 0))
    return -1;
  if (get_obj (res, "network", "linux.resources", &o, err) < 0)
    return -1;
  if (o && (kist_json_obj_get (o, "classID") || kist_json_obj_get (o, "priorities")))
    plan_unsupported (p, "network", "linux.resources.network", "",
                      "net_cls and net_prio are cgroup v1 only");
  if (get_obj (res, "unified", "linux.resources", &o, err) < 0
      || (o && plan_unified (p, o, err) < 0))
    return -1;

  yajl_val dev = kist_json_obj_get (res, "devices");
  if (dev != NULL && !YAJL_IS_NULL (dev))
    {
      if (kist_cgroup_dev_rules_parse (dev, &p->dev, &p->n_dev, err) < 0)
        return -1;
      p->has_devices = true;
    }
  *out = steal_pointer (&p);
  return 0;
}

/* ---------------------------------------------------------------- scope */

static bool
word_in (const char *list, const char *word)
{
  size_t n = strlen (word);
  for (const char *p = list; p && *p;)
    {
      while (*p == ' ' || *p == '\n')
        p++;
      const char *e = p;
      while (*e && *e != ' ' && *e != '\n')
        e++;
      if ((size_t) (e - p) == n && strncmp (p, word, n) == 0)
        return true;
      p = e;
    }
  return false;
}

static char *
read_small (int dirfd, const char *file)
{
  char *text = NULL;
  struct kist_error *e = NULL;
  if (kist_read_file_at (dirfd, file, CG_FILE_MAX, &text, NULL, &e) < 0)
    {
      kist_error_free (e);
      return NULL;
    }
  return text;
}

/* What became of each controller the plan needs while walking down. */
struct ctl_state
{
  unsigned need;                 /* bits of controllers[] */
  int enable_errno[KIST_ARRAY_SIZE (controllers)];
  char *enable_where[KIST_ARRAY_SIZE (controllers)];
  char *parent_controllers;      /* cgroup.controllers of the scope's parent */
};

static void
ctl_state_clear (struct ctl_state *st)
{
  for (size_t i = 0; i < KIST_ARRAY_SIZE (controllers); i++)
    free (st->enable_where[i]);
  free (st->parent_controllers);
  memset (st, 0, sizeof *st);
}

/* Enable the needed controllers in dirfd's cgroup.subtree_control (only
 * those it has and has not enabled yet).  Failures are remembered per
 * controller: the layer entries of that controller say why. */
static void
enable_in (int dirfd, const char *where, struct ctl_state *st)
{
  _cleanup_free_ char *have = read_small (dirfd, "cgroup.controllers");
  _cleanup_free_ char *on = read_small (dirfd, "cgroup.subtree_control");
  for (size_t i = 0; i < KIST_ARRAY_SIZE (controllers); i++)
    {
      if (!(st->need & (1u << i)) || st->enable_errno[i])
        continue;
      if (have == NULL || !word_in (have, controllers[i]))
        continue; /* not available here: reported from the parent's list */
      if (on && word_in (on, controllers[i]))
        continue;
      _cleanup_free_ char *cmd = xasprintf ("+%s", controllers[i]);
      struct kist_error *e = NULL;
      if (kist_write_file_at (dirfd, "cgroup.subtree_control", cmd, strlen (cmd), &e) < 0)
        {
          st->enable_errno[i] = e && e->errnum ? e->errnum : EIO;
          st->enable_where[i] = xasprintf ("%s/cgroup.subtree_control", where);
        }
      kist_error_free (e);
    }
}

/* Walk MOUNT/rel from the mount's fd, enabling the needed controllers in
 * every ancestor and (create) making missing directories.  Returns the scope
 * fd; *created_rel is the topmost directory made (NULL if none). */
static int
walk_scope (const char *mount, const char *rel, bool create, struct ctl_state *st,
            char **created_rel, struct kist_error **err)
{
  if (created_rel)
    *created_rel = NULL;
  _cleanup_close_ int cur = open (mount, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (cur < 0)
    return kist_error_make (err, errno, "cgroup: open the cgroup2 mount `%s`", mount);
  struct statfs sfs;
  if (fstatfs (cur, &sfs) < 0 || sfs.f_type != CGROUP2_SUPER_MAGIC)
    return kist_error_make (err, EXDEV, "cgroup: `%s` is not a cgroup2 filesystem", mount);

  _cleanup_free_ char *path = xstrdup (rel);
  _cleanup_free_ char *where = xstrdup (mount);
  char *save = NULL;
  char *comp = strtok_r (path, "/", &save);
  while (comp)
    {
      enable_in (cur, where, st);
      char *next_comp = strtok_r (NULL, "/", &save);
      if (next_comp == NULL)
        {
          free (st->parent_controllers);
          st->parent_controllers = read_small (cur, "cgroup.controllers");
          if (st->parent_controllers)
            kist_rstrip (st->parent_controllers);
        }
      int fd = kist_openat2 (cur, comp, O_RDONLY | O_DIRECTORY, 0, CG_RESOLVE);
      if (fd == -ENOENT && create)
        {
          if (mkdirat (cur, comp, 0755) < 0 && errno != EEXIST)
            {
              int e = errno;
              return kist_error_make (err, e, "cgroup: create `%s/%s`%s", where, comp,
                                      e == EACCES || e == EPERM || e == EROFS
                                          ? " (the cgroup2 hierarchy is not writable: rootless "
                                            "needs a delegated cgroup, e.g. systemd Delegate=yes)"
                                          : "");
            }
          if (created_rel && *created_rel == NULL)
            {
              const char *base = where + strlen (mount);
              while (*base == '/')
                base++;
              *created_rel = base[0] ? xasprintf ("%s/%s", base, comp) : xstrdup (comp);
            }
          fd = kist_openat2 (cur, comp, O_RDONLY | O_DIRECTORY, 0, CG_RESOLVE);
        }
      if (fd < 0)
        return kist_error_make (err, -fd, "cgroup: open `%s/%s`", where, comp);
      close (cur);
      cur = fd;
      char *w = xasprintf ("%s/%s", where, comp);
      free (where);
      where = w;
      comp = next_comp;
    }
  return steal_fd (&cur);
}

/* rmdir MOUNT/rel and its parents up to MOUNT/top (inclusive) while empty. */
static void
remove_created (const char *mount, const char *rel, const char *top)
{
  if (top == NULL)
    return;
  _cleanup_free_ char *abs = xasprintf ("%s/%s", mount, rel);
  _cleanup_free_ char *abs_top = xasprintf ("%s/%s", mount, top);
  struct kist_error *e = NULL;
  kist_cgroup_remove (abs, abs_top, &e);
  kist_error_free (e);
}

/* Open an existing scope given as an absolute path; check it is cgroup2. */
static int
open_scope (const char *abs_path, struct kist_error **err)
{
  if (abs_path == NULL || abs_path[0] != '/')
    return kist_error_make (err, EINVAL, "cgroup: `%s` is not an absolute cgroup path",
                            abs_path ? abs_path : "(null)");
  _cleanup_close_ int fd = open (abs_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0)
    return kist_error_make (err, errno, "cgroup: open the scope `%s`", abs_path);
  struct statfs sfs;
  if (fstatfs (fd, &sfs) < 0 || sfs.f_type != CGROUP2_SUPER_MAGIC)
    return kist_error_make (err, EXDEV, "cgroup: `%s` is not on a cgroup2 filesystem", abs_path);
  return steal_fd (&fd);
}

/* ---------------------------------------------------------------- writes */

/* Every written line found in the read-back text?  For keyed files (io.max,
 * io.weight, rdma.max) the line with the same first word must carry each
 * written key=value. */
static bool
keyed_matches (const char *line, const char *got)
{
  _cleanup_free_ char *want = normalise (line);
  char *sp = strchr (want, ' ');
  if (sp == NULL)
    return false;
  *sp = '\0';
  const char *key = want, *vals = sp + 1;
  _cleanup_free_ char *copy = xstrdup (got);
  char *save = NULL;
  for (char *l = strtok_r (copy, "\n", &save); l; l = strtok_r (NULL, "\n", &save))
    {
      _cleanup_free_ char *n = normalise (l);
      char *s2 = strchr (n, ' ');
      if (s2 == NULL)
        continue;
      *s2 = '\0';
      if (strcmp (n, key) != 0)
        continue;
      /* Each token of vals must be a token of the read-back line. */
      _cleanup_free_ char *v = xstrdup (vals);
      char *s3 = NULL;
      for (char *t = strtok_r (v, " ", &s3); t; t = strtok_r (NULL, " ", &s3))
        if (!word_in (s2 + 1, t))
          return false;
      return true;
    }
  /* io.max drops a line whose limits are all "max". */
  if (strstr (vals, "=") && strstr (vals, "=max") && !strpbrk (vals, "0123456789"))
    return true;
  return false;
}

static bool
readback_ok (const struct kist_cgroup_write *w, const char *got, bool *rounded)
{
  *rounded = false;
  if (strncmp (w->file, "cpuset.", 7) == 0)
    return kist_cgroup_cpulist_equal (w->lines[0], got);
  if (strcmp (w->file, "io.max") == 0 || strcmp (w->file, "io.weight") == 0
      || strcmp (w->file, "rdma.max") == 0 || strcmp (w->file, "io.bfq.weight") == 0)
    {
      for (char **l = w->lines; *l; l++)
        if (!keyed_matches (*l, got))
          return false;
      return true;
    }
  if (strcmp (w->file, "cpu.max") == 0)
    {
      /* "max" or "max 100000": compare the words given. */
      _cleanup_free_ char *a = normalise (w->lines[0]);
      _cleanup_free_ char *b = normalise (got);
      char *sa = strchr (a, ' '), *sb = strchr (b, ' ');
      if (sa)
        *sa++ = '\0';
      if (sb)
        *sb++ = '\0';
      if (strcmp (a, b) != 0)
        return false;
      return sa == NULL || (sb != NULL && strcmp (sa, sb) == 0);
    }
  const char *last = w->lines[0];
  for (char **l = w->lines; *l; l++)
    last = *l;
  return kist_cgroup_value_matches (last, got, w->unit, rounded);
}

static char *
one_line (const char *s)
{
  _cleanup_free_ char *n = xstrdup (s);
  kist_rstrip (n);
  for (char *p = n; *p; p++)
    if (*p == '\n')
      *p = ';';
  return normalise (n);
}

/* Write one planned file in the scope and read it back; one report entry. */
static int
apply_write (int scope_fd, const char *scope_abs, const char *mount,
             const struct kist_cgroup_write *w, const struct ctl_state *st,
             const char *scope_controllers, struct kist_report *r, struct kist_error **err)
{
  _cleanup_free_ char *name = xasprintf ("cgroup.%s", w->file);
  const char *req = w->requested ? w->requested : "";

  if (w->unsupported)
    return kist_report_failed (r, name, req, w->unsupported, err, "%s", w->reason);

  if (w->controller)
    {
      int ci = controller_index (w->controller);
      if (scope_controllers == NULL || !word_in (scope_controllers, w->controller))
        {
          const char *pc = st->parent_controllers ? st->parent_controllers : "";
          if (ci >= 0 && st->enable_errno[ci] && word_in (pc, w->controller))
            return kist_report_failed (r, name, req, st->enable_errno[ci], err,
                                       "%s: could not enable the %s controller in %s",
                                       w->config, w->controller, st->enable_where[ci]);
          return kist_report_failed (r, name, req, ENOTSUP, err,
                                     "%s: %s controller not available in the cgroup2 hierarchy "
                                     "at %s (cgroup.controllers: %s)",
                                     w->config, w->controller, mount, pc[0] ? pc : "none");
        }
    }

  _cleanup_close_ int fd = openat (scope_fd, w->file, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0)
    {
      int e = errno;
      return kist_report_failed (r, name, req, e, err, "%s: open %s/%s%s", w->config, scope_abs,
                                 w->file,
                                 e == ENOENT ? ": no such file in this kernel's cgroup2 "
                                               "(controller or feature missing)"
                                             : "");
    }
  for (char **l = w->lines; *l; l++)
    {
      int rc = kist_write_all (fd, *l, strlen (*l));
      if (rc < 0)
        return kist_report_failed (r, name, req, -rc, err, "%s: write `%s` to %s/%s", w->config,
                                   *l, scope_abs, w->file);
    }
  close (steal_fd (&fd));

  _cleanup_free_ char *got = NULL;
  struct kist_error *e = NULL;
  int rc = kist_read_file_at (scope_fd, w->file, CG_FILE_MAX, &got, NULL, &e);
  kist_error_free (e);
  if (rc < 0)
    {
      if (-rc == EINVAL || -rc == EACCES || -rc == EPERM)
        {
          /* A write-only file: nothing to read back. */
          kist_report_applied (r, name, req, "written; %s is write-only (no read back)", w->file);
          return 0;
        }
      return kist_report_failed (r, name, req, -rc, err, "%s: read back %s/%s", w->config,
                                 scope_abs, w->file);
    }
  _cleanup_free_ char *shown = one_line (got);
  bool rounded = false;
  if (!readback_ok (w, got, &rounded))
    return kist_report_failed (r, name, req, EIO, err,
                               "%s: wrote `%s` to %s/%s but read back `%s`", w->config, req,
                               scope_abs, w->file, shown);
  if (rounded)
    kist_report_applied (r, name, req, "read back %s (the kernel rounded down to a multiple of %" PRIu64
                         " bytes)", shown, w->unit);
  else
    kist_report_applied (r, name, req, "read back %s", shown);
  return 0;
}

/* Is kist root in the initial user namespace (uid_map "0 0 4294967295")?
 * Only then can it load a device program (CAP_SYS_ADMIN or CAP_BPF there). */
static bool
host_root (void)
{
  if (geteuid () != 0)
    return false;
  _cleanup_free_ char *map = read_small (AT_FDCWD, "/proc/self/uid_map");
  unsigned long long in = 1, out = 1, len = 0;
  return map && sscanf (map, "%llu %llu %llu", &in, &out, &len) == 3 && in == 0 && out == 0
         && len == 4294967295ull;
}

/* The device program: the configured rules (none when defaults_only) and
 * runc's default rules after them.  Without linux.resources.devices kist
 * installs the defaults alone, as runc does: a container with CAP_MKNOD
 * may mknod any node but opens only the default devices (a host disk's
 * node is EPERM).  Where kist cannot load a program (rootless, or root in
 * a user namespace: no CAP_SYS_ADMIN in the initial one), runc ignores
 * device cgroup errors; so does kist for the defaults (recorded as not
 * requested, with the reason; the container's user namespace keeps it
 * from making device nodes).  Configured rules that cannot be installed
 * fail as any requested limit. */
static int
apply_devices (int scope_fd, const struct kist_cgroup_plan *p, bool defaults_only,
               struct kist_report *r, struct kist_error **err)
{
  _cleanup_free_ struct bpf_insn *insns = NULL;
  _cleanup_free_ char *detail = NULL;
  _cleanup_free_ char *req = defaults_only ? xstrdup ("default") : xasprintf ("%zu rules", p->n_dev);
  const char *what = defaults_only ? "runc's default device rules (no linux.resources.devices)"
                                   : "linux.resources.devices";
  size_t n = 0;
  struct kist_error *e = NULL;

  if (kist_cgroup_dev_program (defaults_only ? NULL : p->dev, defaults_only ? 0 : p->n_dev, &insns,
                               &n, err)
      < 0)
    return -1;
  if (kist_cgroup_dev_attach (scope_fd, insns, n, &detail, &e) < 0)
    {
      int errnum = e && e->errnum ? e->errnum : EIO;
      _cleanup_free_ char *msg = xstrdup (e && e->msg ? e->msg : "attach failed");
      kist_error_free (e);
      if (defaults_only && (errnum == EPERM || errnum == EACCES) && !host_root ())
        {
          kist_report_skip (r, "cgroup.devices",
                            "not requested; %s not installed: %s (kist is not root in the "
                            "initial user namespace; as runc, rootless containers get no device "
                            "cgroup)",
                            what, msg);
          return 0;
        }
      return kist_report_failed (r, "cgroup.devices", req, errnum, err, "%s: %s", what, msg);
    }
  kist_report_applied (r, "cgroup.devices", req, "%s", detail);
  return 0;
}

static unsigned
plan_needs (const struct kist_cgroup_plan *p)
{
  unsigned need = 0;
  for (size_t i = 0; i < p->n; i++)
    if (p->w[i].controller && !p->w[i].unsupported)
      {
        int ci = controller_index (p->w[i].controller);
        if (ci >= 0)
          need |= 1u << ci;
      }
  return need;
}

static int
apply_plan (int scope_fd, const char *scope_abs, const char *mount,
            const struct kist_cgroup_plan *p, const struct ctl_state *st, struct kist_report *r,
            struct kist_error **err)
{
  _cleanup_free_ char *scope_ctl = read_small (scope_fd, "cgroup.controllers");
  for (size_t i = 0; i < p->n; i++)
    if (apply_write (scope_fd, scope_abs, mount, &p->w[i], st, scope_ctl, r, err) < 0)
      return -1;
  if (p->has_devices && apply_devices (scope_fd, p, false, r, err) < 0)
    return -1;
  return 0;
}

/* Record every planned entry as not applied for the same reason (no scope). */
static int
fail_all (const struct kist_cgroup_plan *p, struct kist_report *r, int errnum, const char *why,
          struct kist_error **err)
{
  for (size_t i = 0; i < p->n; i++)
    {
      _cleanup_free_ char *name = xasprintf ("cgroup.%s", p->w[i].file);
      if (kist_report_failed (r, name, p->w[i].requested ? p->w[i].requested : "", errnum, err,
                              "%s: %s", p->w[i].config, why)
          < 0)
        return -1;
    }
  if (p->has_devices
      && kist_report_failed (r, "cgroup.devices", "", errnum, err, "linux.resources.devices: %s",
                             why)
             < 0)
    return -1;
  return 0;
}

int
kist_cgroup_apply (struct kist_ctx *ctx, struct kist_report *r, struct kist_cgroup **out,
                   struct kist_error **err)
{
  struct kist_linux *lx = ctx->spec ? ctx->spec->linux_ : NULL;
  const char *cgroups_path = lx ? lx->cgroups_path : NULL;
  yajl_val resources = lx ? lx->resources : NULL;
  __attribute__ ((cleanup (plan_freep))) struct kist_cgroup_plan *plan = NULL;
  _cleanup_free_ char *mount = NULL, *own = NULL, *rel = NULL, *created = NULL;
  _cleanup_free_ char *requested = NULL;
  struct ctl_state st;

  *out = NULL;
  memset (&st, 0, sizeof st);

  if (kist_cgroup_plan_build (resources, &plan, err) < 0)
    return kist_error_wrap (err, "config.json");
  if (kist_cgroup_own_path (&own, err) < 0)
    return -1;
  if (kist_cgroup_resolve_path (cgroups_path, own, ctx->id, &rel, err) < 0)
    return -1;
  requested = xstrdup (cgroups_path && cgroups_path[0] ? cgroups_path : rel);
  /* Nothing asked for (no resources, no cgroupsPath): kist still makes a
   * scope, for freeze and kill, but where it cannot (no cgroup2, a
   * hierarchy not delegated to a rootless caller) that is no failure. */
  bool asked = (cgroups_path && cgroups_path[0]) || plan->n > 0 || plan->has_devices;

  struct kist_error *me = NULL;
  if (kist_cgroup_mount (&mount, &me) < 0 && !asked)
    {
      kist_report_skip (r, "cgroup", "not requested; no scope: %s",
                        me && me->msg ? me->msg : "no cgroup2 mount");
      kist_error_free (me);
      return 0;
    }
  if (mount == NULL)
    {
      int rc = kist_report_failed (r, "cgroup", requested, ENOENT, err, "%s",
                                   me && me->msg ? me->msg : "no cgroup2 mount");
      kist_error_free (me);
      if (rc < 0 || fail_all (plan, r, ENOENT, "no cgroup2 hierarchy", err) < 0)
        return -1;
      return 0;
    }

  st.need = plan_needs (plan);
  _cleanup_close_ int scope_fd = -1;
  {
    struct kist_error *e = NULL;
    scope_fd = walk_scope (mount, rel, true, &st, &created, &e);
    if (scope_fd < 0)
      {
        int errnum = e && e->errnum ? e->errnum : EIO;
        _cleanup_free_ char *msg = xstrdup (e && e->msg ? e->msg : "cgroup: walk failed");
        kist_error_free (e);
        remove_created (mount, rel, created);
        ctl_state_clear (&st);
        if (!asked)
          {
            kist_report_skip (r, "cgroup", "not requested; no scope: %s", msg);
            return 0;
          }
        if (kist_report_failed (r, "cgroup", requested, errnum, err, "%s", msg) < 0)
          return -1;
        return fail_all (plan, r, errnum, "no cgroup scope", err);
      }
  }

  _cleanup_free_ char *abs = xasprintf ("%s/%s", mount, rel);
  if (created == NULL)
    {
      /* An existing scope must not already hold processes. */
      _cleanup_free_ char *procs = read_small (scope_fd, "cgroup.procs");
      if (procs && kist_rstrip (procs)[0] != '\0')
        {
          ctl_state_clear (&st);
          return kist_error_make (err, EBUSY,
                                  "cgroup: %s already has processes; linux.cgroupsPath must "
                                  "name an empty or new cgroup",
                                  abs);
        }
    }
  if (asked)
    kist_report_applied (r, "cgroup", requested, "scope %s (%s)", abs,
                         created ? "created" : "existing, empty");
  else
    kist_report_skip (r, "cgroup", "not requested; kist's default scope %s (%s), for freeze and kill",
                      abs, created ? "created" : "existing, empty");

  if (apply_plan (scope_fd, abs, mount, plan, &st, r, err) < 0
      || (!plan->has_devices && apply_devices (scope_fd, plan, true, r, err) < 0))
    {
      ctl_state_clear (&st);
      close (steal_fd (&scope_fd));
      remove_created (mount, rel, created);
      return -1;
    }
  ctl_state_clear (&st);

  struct kist_cgroup *cg = xcalloc (1, sizeof *cg);
  cg->mount = steal_pointer (&mount);
  cg->path = steal_pointer (&rel);
  cg->dirfd = steal_fd (&scope_fd);
  cg->created_from = steal_pointer (&created);
  *out = cg;
  return 0;
}

int
kist_cgroup_update (const char *abs_path, yajl_val resources, struct kist_report *r,
                    struct kist_error **err)
{
  __attribute__ ((cleanup (plan_freep))) struct kist_cgroup_plan *plan = NULL;
  _cleanup_free_ char *mount = NULL;
  struct ctl_state st;
  memset (&st, 0, sizeof st);

  if (kist_cgroup_plan_build (resources, &plan, err) < 0)
    return kist_error_wrap (err, "update");
  if (kist_cgroup_mount (&mount, err) < 0)
    return -1;
  size_t ml = strlen (mount);
  if (abs_path == NULL || strncmp (abs_path, mount, ml) != 0 || abs_path[ml] != '/')
    return kist_error_make (err, EINVAL, "cgroup: `%s` is not below the cgroup2 mount %s",
                            abs_path ? abs_path : "(null)", mount);
  const char *rel = abs_path + ml;
  while (*rel == '/')
    rel++;
  _cleanup_free_ char *rel_clean = xstrdup (rel);
  size_t n = strlen (rel_clean);
  while (n > 0 && rel_clean[n - 1] == '/')
    rel_clean[--n] = '\0';
  if (validate_rel (rel_clean, "cgroup scope", err) < 0)
    return -1;

  st.need = plan_needs (plan);
  _cleanup_close_ int fd = walk_scope (mount, rel_clean, false, &st, NULL, err);
  if (fd < 0)
    {
      ctl_state_clear (&st);
      return -1;
    }
  int rc = apply_plan (fd, abs_path, mount, plan, &st, r, err);
  ctl_state_clear (&st);
  return rc;
}

/* ---------------------------------------------------------------- operations */

int
kist_cgroup_enter (const struct kist_cgroup *cg, pid_t pid, struct kist_error **err)
{
  char buf[32];
  int n = snprintf (buf, sizeof buf, "%d", (int) pid);
  if (cg == NULL || cg->dirfd < 0)
    return kist_error_make (err, EINVAL, "cgroup: no scope to move pid %d into", (int) pid);
  if (kist_write_file_at (cg->dirfd, "cgroup.procs", buf, (size_t) n, err) < 0)
    return kist_error_wrap (err, "cgroup: move pid %d into %s/%s", (int) pid, cg->mount,
                            cg->path);

  /* Verify from the process's side. */
  _cleanup_free_ char *procfile = xasprintf ("/proc/%d/cgroup", (int) pid);
  _cleanup_free_ char *text = NULL;
  if (kist_read_file_at (AT_FDCWD, procfile, CG_FILE_MAX, &text, NULL, err) < 0)
    return kist_error_wrap (err, "cgroup: verify pid %d joined its scope", (int) pid);
  _cleanup_free_ char *want = xasprintf ("0::/%s", cg->path);
  char *save = NULL;
  for (char *l = strtok_r (text, "\n", &save); l; l = strtok_r (NULL, "\n", &save))
    if (strncmp (l, "0::", 3) == 0)
      {
        if (strcmp (l, want) == 0)
          return 0;
        return kist_error_make (err, EIO, "cgroup: pid %d is in `%s` after joining, not `%s`",
                                (int) pid, l + 3, want + 3);
      }
  return kist_error_make (err, EIO, "cgroup: %s has no cgroup v2 line", procfile);
}

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
  _cleanup_close_ int dfd = open_scope (abs_path, err);
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
  struct kist_error *e = NULL;
  _cleanup_close_ int dfd = open_scope (abs_path, &e);
  kist_error_free (e);
  if (dfd < 0)
    return -1;
  _cleanup_free_ char *text = read_small (dfd, "cgroup.events");
  uint64_t v;
  if (text == NULL || !kv_get (text, "frozen", &v))
    return -1;
  return v ? 1 : 0;
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
  _cleanup_close_ int dfd = open_scope (abs_path, err);
  if (dfd < 0)
    return -1;
  return pids_at (dfd, abs_path, pids, n, err);
}

int
kist_cgroup_kill_all (const char *abs_path, struct kist_error **err)
{
  _cleanup_close_ int dfd = open_scope (abs_path, err);
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
      int dfd = open_scope (abs_path, &e);
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
  _cleanup_close_ int dfd = open_scope (abs_path, err);
  if (dfd < 0)
    return NULL;
  _cleanup_yajl_gen_ yajl_gen g = kist_json_gen_new (false, true);
  uint64_t v;

  yajl_gen_map_open (g);

  _cleanup_free_ char *cpu = read_small (dfd, "cpu.stat");
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

  _cleanup_free_ char *cur = read_small (dfd, "memory.current");
  _cleanup_free_ char *max = read_small (dfd, "memory.max");
  _cleanup_free_ char *peak = read_small (dfd, "memory.peak");
  _cleanup_free_ char *mstat = read_small (dfd, "memory.stat");
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

  _cleanup_free_ char *pc = read_small (dfd, "pids.current");
  _cleanup_free_ char *pm = read_small (dfd, "pids.max");
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
  struct kist_error *e = NULL;
  _cleanup_close_ int dfd = open_scope (abs_path, &e);
  kist_error_free (e);
  if (dfd < 0)
    return -1;
  _cleanup_free_ char *text = read_small (dfd, "memory.events");
  uint64_t v;
  if (text == NULL || !kv_get (text, "oom_kill", &v))
    return -1;
  return (int64_t) v;
}
