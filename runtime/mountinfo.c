/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: /proc/PID/mountinfo, parsed (mountinfo.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>

#include "mountinfo.h"
#include "util.h"

#define MOUNTINFO_MAX (64u * 1024 * 1024)

void
kist_mountinfo_free (struct kist_mountinfo *t)
{
  for (size_t i = 0; i < t->n; i++)
    free (t->e[i].root); /* the entry's one block (parse_line) */
  free (t->e);
  t->e = NULL;
  t->n = 0;
}

/* mountinfo escapes space, tab, newline and backslash as \ooo: s
 * unescaped into out (room for len + 1); returns the byte after its NUL. */
static char *
unescape (const char *s, size_t len, char *out)
{
  char *o = out;
  for (size_t i = 0; i < len; i++)
    {
      if (s[i] == '\\' && i + 3 < len && s[i + 1] >= '0' && s[i + 1] <= '3' && s[i + 2] >= '0'
          && s[i + 2] <= '7' && s[i + 3] >= '0' && s[i + 3] <= '7')
        {
          *o++ = (char) (((s[i + 1] - '0') << 6) | ((s[i + 2] - '0') << 3) | (s[i + 3] - '0'));
          i += 3;
        }
      else
        *o++ = s[i];
    }
  *o = '\0';
  return o + 1;
}

/* s[0..n) and a NUL at o; returns the byte after the NUL. */
static char *
put (char *o, const char *s, size_t n)
{
  memcpy (o, s, n);
  o[n] = '\0';
  return o + n + 1;
}

static char *
word (char **p)
{
  char *w = *p;
  while (*w == ' ')
    w++;
  if (*w == '\0')
    return NULL;
  char *end = strchr (w, ' ');
  if (end)
    {
      *end = '\0';
      *p = end + 1;
    }
  else
    *p = w + strlen (w);
  return w;
}

/* One line; false when it is malformed. */
static bool
parse_line (char *line, struct kist_mountinfo_entry *e)
{
  char *p = line, *f[6];
  for (int i = 0; i < 6; i++)
    if ((f[i] = word (&p)) == NULL)
      return false;
  /* The optional fields end at a lone "-". */
  char *sep = strstr (p, "- ");
  if (sep == NULL && strcmp (p, "-") != 0)
    return false;
  if (sep != NULL && sep != p && sep[-1] != ' ')
    return false;
  size_t olen = sep ? (size_t) (sep - p) : 0;
  while (olen > 0 && p[olen - 1] == ' ')
    olen--;
  char *after = sep ? sep + 2 : p + strlen (p);
  char *fstype = word (&after), *source = fstype ? word (&after) : NULL;
  char *super = source ? word (&after) : NULL;
  if (fstype == NULL || kist_parse_u64 (f[0], &e->id) < 0 || kist_parse_u64 (f[1], &e->parent) < 0)
    return false;
  /* Every string of the entry in one block, root first (what the free
   * releases): 7 fields, one allocation. */
  size_t l_root = strlen (f[3]), l_point = strlen (f[4]), l_opts = strlen (f[5]);
  size_t l_type = strlen (fstype), l_src = source ? strlen (source) : 0;
  size_t l_super = super ? strlen (super) : 0;
  char *o = xmalloc (l_root + l_point + l_opts + olen + l_type + l_src + l_super + 7);
  e->root = o;
  o = unescape (f[3], l_root, o);
  e->point = o;
  o = unescape (f[4], l_point, o);
  e->opts = o;
  o = put (o, f[5], l_opts);
  e->optional = o;
  o = put (o, p, olen);
  e->fstype = o;
  o = put (o, fstype, l_type);
  e->source = o;
  o = source ? unescape (source, l_src, o) : put (o, "", 0);
  e->super_opts = o;
  put (o, super ? super : "", l_super);
  return true;
}

int
kist_mountinfo_read (int dirfd, const char *path, struct kist_mountinfo *t,
                     struct kist_error **err)
{
  _cleanup_free_ char *buf = NULL;
  if (kist_read_file_at (dirfd, path, MOUNTINFO_MAX, &buf, NULL, err) < 0)
    return -1;
  size_t cap = 0;
  char *save = NULL;
  for (char *line = strtok_r (buf, "\n", &save); line; line = strtok_r (NULL, "\n", &save))
    {
      size_t len = strlen (line);
      struct kist_mountinfo_entry e = { 0 };
      if (!parse_line (line, &e))
        {
          /* The parse only cut the line at spaces: put them back. */
          for (size_t i = 0; i < len; i++)
            if (line[i] == '\0')
              line[i] = ' ';
          return kist_error_make (err, EINVAL, "malformed line in %s: `%s`", path, line);
        }
      if (t->n == cap)
        {
          cap = cap ? cap * 2 : 64;
          t->e = xrealloc (t->e, cap * sizeof *t->e);
        }
      t->e[t->n++] = e;
    }
  return 0;
}

const struct kist_mountinfo_entry *
kist_mountinfo_find (const struct kist_mountinfo *t, uint64_t id)
{
  for (size_t i = 0; i < t->n; i++)
    if (t->e[i].id == id)
      return &t->e[i];
  return NULL;
}

bool
kist_mountinfo_has_optional (const struct kist_mountinfo_entry *e, const char *tag)
{
  size_t tl = strlen (tag);
  bool prefix = tl > 0 && tag[tl - 1] == ':';
  for (const char *p = e->optional; p && *p;)
    {
      while (*p == ' ')
        p++;
      const char *end = strchr (p, ' ');
      size_t l = end ? (size_t) (end - p) : strlen (p);
      if (prefix ? (l > tl && strncmp (p, tag, tl) == 0) : (l == tl && strncmp (p, tag, tl) == 0))
        return true;
      p += l;
    }
  return false;
}

bool
kist_mountinfo_has_opt (const char *opts, const char *opt)
{
  size_t ol = strlen (opt);
  for (const char *p = opts; p && *p;)
    {
      const char *end = strchr (p, ',');
      size_t l = end ? (size_t) (end - p) : strlen (p);
      if (l == ol && strncmp (p, opt, ol) == 0)
        return true;
      p = end ? end + 1 : NULL;
    }
  return false;
}

/* ------------------------------------------------- expectations (verify.c) */

/* statfs(2): f_flags holds the ST_* mount flags when this bit is set (the
 * kernel's include/linux/statfs.h; not in the user headers). */
#ifndef ST_VALID
#define ST_VALID 0x0020
#endif

int
kist_fd_statfs_flags (int fd, struct statfs *sf, unsigned long *st_flags)
{
  if (fstatfs (fd, sf) < 0)
    return -1;
  if (sf->f_flags & ST_VALID)
    {
      *st_flags = (unsigned long) sf->f_flags & ~(unsigned long) ST_VALID;
      return 0;
    }
  struct statvfs sv;
  if (fstatvfs (fd, &sv) < 0)
    return -1;
  *st_flags = sv.f_flag;
  return 0;
}

void
kist_mountinfo_expect_add (char **list, uint64_t id, unsigned long st_flags, bool ro_later,
                           const char *fstype)
{
  char *next = xasprintf ("%s%s%llu:%c%s%s%s%s%s", *list ? *list : "", *list ? "," : "",
                          (unsigned long long) id,
                          ro_later ? '?' : (st_flags & ST_RDONLY) ? 'r' : 'w',
                          (st_flags & ST_NOSUID) ? "s" : "", (st_flags & ST_NODEV) ? "d" : "",
                          (st_flags & ST_NOEXEC) ? "x" : "", fstype ? ":" : "",
                          fstype ? fstype : "");
  free (*list);
  *list = next;
}

static const struct
{
  char letter;
  const char *opt;
} mount_flags[] = { { 's', "nosuid" }, { 'd', "nodev" }, { 'x', "noexec" } };

/* One "ID:FLAGS[:FSTYPE]" against t; NULL when it agrees. */
static char *
check_one (const struct kist_mountinfo *t, const char *item, const char *what)
{
  _cleanup_free_ char *copy = xstrdup (item);
  char *save = NULL;
  char *id_s = strtok_r (copy, ":", &save), *flags = strtok_r (NULL, ":", &save);
  char *fstype = strtok_r (NULL, ":", &save);
  uint64_t id;
  if (id_s == NULL || flags == NULL || kist_parse_u64 (id_s, &id) < 0
      || strchr ("rw?", flags[0]) == NULL)
    return xasprintf ("malformed mount expectation `%s`", item);
  const struct kist_mountinfo_entry *e = kist_mountinfo_find (t, id);
  if (e == NULL)
    return xasprintf ("mount %llu is not in %s", (unsigned long long) id, what);
  bool ro = kist_mountinfo_has_opt (e->opts, "ro") || kist_mountinfo_has_opt (e->super_opts, "ro");
  if (flags[0] != '?' && ro != (flags[0] == 'r'))
    return xasprintf ("%s shows mount %llu (%s) %s, not %s", what, (unsigned long long) id,
                      e->point, ro ? "read-only" : "writable",
                      ro ? "writable" : "read-only");
  for (size_t i = 0; i < KIST_ARRAY_SIZE (mount_flags); i++)
    {
      bool want = strchr (flags + 1, mount_flags[i].letter) != NULL;
      if (kist_mountinfo_has_opt (e->opts, mount_flags[i].opt) != want)
        return xasprintf ("%s shows mount %llu (%s) %s %s", what, (unsigned long long) id,
                          e->point, want ? "without" : "with", mount_flags[i].opt);
    }
  if (fstype && strcmp (fstype, e->fstype) != 0)
    return xasprintf ("%s shows mount %llu (%s) of type %s, not %s", what,
                      (unsigned long long) id, e->point, e->fstype, fstype);
  return NULL;
}

char *
kist_mountinfo_check (const struct kist_mountinfo *t, const char *list, const char *what)
{
  if (list == NULL)
    return xstrdup ("the entry names no mounts to verify");
  _cleanup_free_ char *copy = xstrdup (list);
  char *save = NULL;
  for (char *item = strtok_r (copy, ",", &save); item; item = strtok_r (NULL, ",", &save))
    {
      char *why = check_one (t, item, what);
      if (why)
        return why;
    }
  return NULL;
}
