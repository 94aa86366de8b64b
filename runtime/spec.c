/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: config.json (OCI runtime-spec 1.2) -> typed structs, with validation.
 *
 * Conventions (beyond spec.h):
 *   - Every error names the JSON path of the offending value
 *     ("config.json: process.rlimits[0].hard: expected unsigned 64-bit integer").
 *   - Unknown keys are ignored (forward compatibility, as the spec asks).
 *   - A JSON null is treated like an absent key (what Go's encoding/json, and
 *     so runc, does); for a required key it is "missing".
 *   - When a key appears twice in one object, the last one wins (Go again).
 *   - Empty strings mean "not requested" for hostname, domainname,
 *     apparmorProfile, selinuxLabel, mountLabel, cgroupsPath,
 *     rootfsPropagation and linux.namespaces[].path (runc treats them so);
 *     those fields are then NULL.
 *   - Integers are taken from the number's text, so the whole uint64 range is
 *     accepted; fractions and exponents are refused (as Go does).
 *   - Documents nested deeper than KIST_JSON_MAX_DEPTH, containing NUL bytes
 *     or the escape \u0000 (which would silently cut a string short) are
 *     refused before they reach yajl_tree. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "json.h"
#include "spec.h"
#include "util.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

/* No real config nests deeper than ~8 (linux.seccomp.syscalls[].args[]);
 * KIST_JSON_MAX_DEPTH (json.h) protects the recursive yajl_tree_free. */

/* ---- JSON paths for error messages ------------------------------------ */

struct jpath
{
  const char *doc;     /* "config.json: " or "" */
  char *buf;
  size_t len, cap;
};

static void
jp_reserve (struct jpath *p, size_t extra)
{
  if (p->len + extra + 1 <= p->cap)
    return;
  size_t cap = p->cap ? p->cap : 64;
  while (cap < p->len + extra + 1)
    cap *= 2;
  p->buf = xrealloc (p->buf, cap);
  p->cap = cap;
}

static bool
is_ident (const char *s)
{
  if (*s == '\0')
    return false;
  for (; *s; s++)
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9')
          || *s == '_'))
      return false;
  return true;
}

/* Append ".key" (or ["key"] when key is not a plain identifier); returns the
 * previous length for jp_pop. */
static size_t
jp_key (struct jpath *p, const char *key)
{
  size_t old = p->len;
  size_t kl = strlen (key);
  jp_reserve (p, kl + 5);
  if (is_ident (key))
    {
      if (p->len > 0)
        p->buf[p->len++] = '.';
      memcpy (p->buf + p->len, key, kl);
      p->len += kl;
    }
  else
    {
      p->buf[p->len++] = '[';
      p->buf[p->len++] = '"';
      for (const char *s = key; *s; s++)
        {
          unsigned char c = (unsigned char) *s;
          p->buf[p->len++] = (c < 0x20 || c == 0x7f || c == '"' || c == '\\') ? '?' : (char) c;
        }
      p->buf[p->len++] = '"';
      p->buf[p->len++] = ']';
    }
  p->buf[p->len] = '\0';
  return old;
}

static size_t
jp_index (struct jpath *p, size_t i)
{
  size_t old = p->len;
  jp_reserve (p, 24);
  p->len += (size_t) sprintf (p->buf + p->len, "[%zu]", i);
  return old;
}

static void
jp_pop (struct jpath *p, size_t old)
{
  p->len = old;
  if (p->buf)
    p->buf[old] = '\0';
}

static int jp_err (struct jpath *p, struct kist_error **err, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

static int
jp_err (struct jpath *p, struct kist_error **err, const char *fmt, ...)
{
  va_list ap;
  _cleanup_free_ char *msg = NULL;
  va_start (ap, fmt);
  if (vasprintf (&msg, fmt, ap) < 0)
    abort ();
  va_end (ap);
  return kist_error_make (err, 0, "%s%s: %s", p->doc, p->len ? p->buf : "top level", msg);
}

/* ---- typed accessors ---------------------------------------------------- */

/* obj[key]; the last one when the key repeats; NULL when absent or null
 * (Go's encoding/json semantics, see the top; kist_json_obj_get returns the
 * first one and keeps null). */
static yajl_val
obj_get (yajl_val obj, const char *key)
{
  yajl_val r = NULL;
  for (size_t i = 0; i < obj->u.object.len; i++)
    if (strcmp (obj->u.object.keys[i], key) == 0)
      r = obj->u.object.values[i];
  if (r != NULL && r->type == yajl_t_null)
    return NULL;
  return r;
}

static const char *
type_word (yajl_type t)
{
  return t == yajl_t_object ? "object" : t == yajl_t_array ? "array" : "?";
}

/* Look key up in obj and push it onto the path.  Returns 1 when present (the
 * caller pops *mark when done), 0 when absent (nothing pushed), negative when
 * it is required and missing. */
static int
find (struct jpath *p, yajl_val obj, const char *key, bool required, yajl_val *out,
      size_t *mark, struct kist_error **err)
{
  *out = obj_get (obj, key);
  if (*out == NULL && !required)
    return 0;
  *mark = jp_key (p, key);
  if (*out == NULL)
    return jp_err (p, err, "required field is missing");
  return 1;
}

/* find, and check the type: *out is NULL unless it returns 1. */
static int
enter (struct jpath *p, yajl_val obj, const char *key, yajl_type t, bool required, yajl_val *out,
       size_t *mark, struct kist_error **err)
{
  int r = find (p, obj, key, required, out, mark, err);
  if (r > 0 && (*out)->type != t)
    {
      *out = NULL;
      return jp_err (p, err, "expected %s", type_word (t));
    }
  return r;
}

/* obj[key] of type t in *out, or NULL when absent; nothing stays pushed. */
static int
get_opt (struct jpath *p, yajl_val obj, const char *key, yajl_type t, yajl_val *out,
         struct kist_error **err)
{
  size_t m;
  int r = enter (p, obj, key, t, false, out, &m, err);
  if (r > 0)
    jp_pop (p, m);
  return r < 0 ? r : 0;
}

/* Sets *present when obj has an object at key: for the parts kist only has
 * to notice, so that unsupported.c can refuse them. */
static int
get_present (struct jpath *p, yajl_val obj, const char *key, bool *present,
             struct kist_error **err)
{
  yajl_val v;
  int r = get_opt (p, obj, key, yajl_t_object, &v, err);
  if (v != NULL)
    *present = true;
  return r;
}

#define S_REQUIRED 0x01
#define S_NONEMPTY 0x02
#define S_ABSOLUTE 0x04
#define S_EMPTY_NULL 0x08   /* "" -> NULL */
#define S_ENV 0x10          /* must be KEY=VALUE */

static int
val_str (struct jpath *p, yajl_val v, int flags, char **out, struct kist_error **err)
{
  if (!YAJL_IS_STRING (v))
    return jp_err (p, err, "expected string");
  const char *s = v->u.string;
  if (*s == '\0' && (flags & S_EMPTY_NULL))
    {
      *out = NULL;
      return 0;
    }
  if (*s == '\0' && (flags & S_NONEMPTY))
    return jp_err (p, err, "must not be empty");
  if ((flags & S_ABSOLUTE) && s[0] != '/')
    return jp_err (p, err, "must be an absolute path, got \"%s\"", s);
  if ((flags & S_ENV) && strchr (s, '=') == NULL)
    return jp_err (p, err, "\"%s\" is not of the form KEY=VALUE", s);
  *out = xstrdup (s);
  return 0;
}

static int
get_str (struct jpath *p, yajl_val obj, const char *key, int flags, char **out,
         struct kist_error **err)
{
  yajl_val v;
  size_t m;
  *out = NULL;
  int r = find (p, obj, key, flags & S_REQUIRED, &v, &m, err);
  if (r <= 0)
    return r;
  if ((r = val_str (p, v, flags, out, err)) < 0)
    return r;
  jp_pop (p, m);
  return 0;
}

static int
get_bool (struct jpath *p, yajl_val obj, const char *key, bool *out, struct kist_error **err)
{
  yajl_val v = obj_get (obj, key);
  if (v == NULL)
    return 0;
  if (v->type != yajl_t_true && v->type != yajl_t_false)
    {
      jp_key (p, key);
      return jp_err (p, err, "expected boolean");
    }
  *out = v->type == yajl_t_true;
  return 0;
}

/* The number's text as sign + digits, or false when it is not an integer
 * literal (fraction, exponent, not a number). */
static bool
int_text (yajl_val v, bool *neg, const char **digits)
{
  if (!YAJL_IS_NUMBER (v) || v->u.number.r == NULL)
    return false;
  const char *s = v->u.number.r;
  *neg = *s == '-';
  if (*neg)
    s++;
  if (*s == '\0')
    return false;
  for (const char *c = s; *c; c++)
    if (*c < '0' || *c > '9')
      return false;
  *digits = s;
  return true;
}

static bool
num_u64 (yajl_val v, uint64_t *out)
{
  bool neg;
  const char *d;
  if (!int_text (v, &neg, &d) || neg)
    return false;
  errno = 0;
  unsigned long long x = strtoull (d, NULL, 10);
  if (errno == ERANGE)
    return false;
  *out = x;
  return true;
}

static bool
num_i64 (yajl_val v, int64_t *out)
{
  bool neg;
  const char *d;
  if (!int_text (v, &neg, &d))
    return false;
  errno = 0;
  long long x = strtoll (v->u.number.r, NULL, 10);
  if (errno == ERANGE)
    return false;
  *out = x;
  return true;
}

static int
val_u64 (struct jpath *p, yajl_val v, uint64_t *out, struct kist_error **err)
{
  if (!num_u64 (v, out))
    return jp_err (p, err, "expected unsigned 64-bit integer");
  return 0;
}

static int
val_u32 (struct jpath *p, yajl_val v, uint32_t *out, struct kist_error **err)
{
  uint64_t x;
  if (!num_u64 (v, &x) || x > UINT32_MAX)
    return jp_err (p, err, "expected unsigned 32-bit integer");
  *out = (uint32_t) x;
  return 0;
}

static int
val_i64 (struct jpath *p, yajl_val v, int64_t *out, struct kist_error **err)
{
  if (!num_i64 (v, out))
    return jp_err (p, err, "expected 64-bit integer");
  return 0;
}

/* Numbers at obj[key].  present may be NULL; *present is set only when found. */
static int
get_u32 (struct jpath *p, yajl_val obj, const char *key, bool required, uint32_t *out,
         bool *present, struct kist_error **err)
{
  yajl_val v;
  size_t m;
  int r = find (p, obj, key, required, &v, &m, err);
  if (r <= 0)
    return r;
  if ((r = val_u32 (p, v, out, err)) < 0)
    return r;
  jp_pop (p, m);
  if (present)
    *present = true;
  return 0;
}

static int
get_u64 (struct jpath *p, yajl_val obj, const char *key, bool required, uint64_t *out,
         struct kist_error **err)
{
  yajl_val v;
  size_t m;
  int r = find (p, obj, key, required, &v, &m, err);
  if (r <= 0)
    return r;
  if ((r = val_u64 (p, v, out, err)) < 0)
    return r;
  jp_pop (p, m);
  return 0;
}

static int
get_i64 (struct jpath *p, yajl_val obj, const char *key, bool required, int64_t *out,
         struct kist_error **err)
{
  yajl_val v;
  size_t m;
  int r = find (p, obj, key, required, &v, &m, err);
  if (r <= 0)
    return r;
  if ((r = val_i64 (p, v, out, err)) < 0)
    return r;
  jp_pop (p, m);
  return 0;
}

/* An int in [min, max] at obj[key] (optional). */
static int
get_int_range (struct jpath *p, yajl_val obj, const char *key, int64_t min, int64_t max,
               int *out, bool *present, struct kist_error **err)
{
  yajl_val v;
  size_t m;
  int r = find (p, obj, key, false, &v, &m, err);
  if (r <= 0)
    return r;
  int64_t x;
  if (!num_i64 (v, &x))
    return jp_err (p, err, "expected integer");
  if (x < min || x > max)
    {
      if (max == INT32_MAX)
        return jp_err (p, err, "must be greater than %" PRId64 " and fit in an int, got %s",
                       min - 1, v->u.number.r);
      return jp_err (p, err, "must be between %" PRId64 " and %" PRId64 ", got %" PRId64, min,
                     max, x);
    }
  jp_pop (p, m);
  *out = (int) x;
  if (present)
    *present = true;
  return 0;
}

/* An array of strings -> NULL-terminated vector (each element checked with flags). */
static int
val_strv (struct jpath *p, yajl_val a, int flags, char ***out, struct kist_error **err)
{
  if (!YAJL_IS_ARRAY (a))
    return jp_err (p, err, "expected array");
  size_t n = a->u.array.len;
  _cleanup_strv_ char **v = xcalloc (n + 1, sizeof (char *));
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    {
      size_t m = jp_index (p, i);
      char *s = NULL;
      int r = val_str (p, a->u.array.values[i], flags & ~(S_EMPTY_NULL | S_REQUIRED), &s, err);
      if (r < 0)
        return r;
      v[k++] = s;
      jp_pop (p, m);
    }
  *out = steal_pointer (&v);
  return 0;
}

static int
get_strv (struct jpath *p, yajl_val obj, const char *key, int flags, char ***out,
          struct kist_error **err)
{
  yajl_val v;
  size_t m;
  *out = NULL;
  int r = find (p, obj, key, false, &v, &m, err);
  if (r <= 0)
    return r;
  if ((r = val_strv (p, v, flags, out, err)) < 0)
    return r;
  jp_pop (p, m);
  return 0;
}

/* An object of string values -> flat vector key0, value0, key1, ... (n pairs). */
static int
get_map (struct jpath *p, yajl_val obj, const char *key, char ***flat, size_t *n,
         struct kist_error **err)
{
  yajl_val v;
  size_t m;
  *flat = NULL;
  *n = 0;
  int r = enter (p, obj, key, yajl_t_object, false, &v, &m, err);
  if (r <= 0)
    return r;
  size_t len = v->u.object.len;
  _cleanup_strv_ char **kv = xcalloc (2 * len + 1, sizeof (char *));
  for (size_t i = 0; i < len; i++)
    {
      size_t m2 = jp_key (p, v->u.object.keys[i]);
      char *val = NULL;
      r = val_str (p, v->u.object.values[i], 0, &val, err);
      if (r < 0)
        return r;
      kv[2 * i] = xstrdup (v->u.object.keys[i]);
      kv[2 * i + 1] = val;
      jp_pop (p, m2);
    }
  jp_pop (p, m);
  *flat = steal_pointer (&kv);
  *n = len;
  return 0;
}

/* ---- process.ioPriority, scheduler, execCPUAffinity; linux.personality,
 * memoryPolicy (the layers: sched.c, personality.c) ---------------------- */

struct name_num
{
  const char *name;
  long value;
};

static const struct name_num ioprio_classes[] = {
  { "IOPRIO_CLASS_RT", 1 }, { "IOPRIO_CLASS_BE", 2 }, { "IOPRIO_CLASS_IDLE", 3 },
};
static const struct name_num sched_policies[] = {
  { "SCHED_OTHER", 0 }, { "SCHED_FIFO", 1 }, { "SCHED_RR", 2 },       { "SCHED_BATCH", 3 },
  { "SCHED_ISO", 4 },   { "SCHED_IDLE", 5 }, { "SCHED_DEADLINE", 6 },
};
static const struct name_num sched_flag_names[] = {
  { "SCHED_FLAG_RESET_ON_FORK", 0x01 }, { "SCHED_FLAG_RECLAIM", 0x02 },
  { "SCHED_FLAG_DL_OVERRUN", 0x04 },    { "SCHED_FLAG_KEEP_POLICY", 0x08 },
  { "SCHED_FLAG_KEEP_PARAMS", 0x10 },   { "SCHED_FLAG_UTIL_CLAMP_MIN", 0x20 },
  { "SCHED_FLAG_UTIL_CLAMP_MAX", 0x40 },
};
static const struct name_num personality_domains[] = {
  { "LINUX", 0x0000 }, { "LINUX32", 0x0008 },
};
static const struct name_num mpol_modes[] = {
  { "MPOL_DEFAULT", 0 },        { "MPOL_PREFERRED", 1 }, { "MPOL_BIND", 2 },
  { "MPOL_INTERLEAVE", 3 },     { "MPOL_LOCAL", 4 },     { "MPOL_PREFERRED_MANY", 5 },
  { "MPOL_WEIGHTED_INTERLEAVE", 6 },
};
static const struct name_num mpol_flag_names[] = {
  { "MPOL_F_STATIC_NODES", 1 << 15 },
  { "MPOL_F_RELATIVE_NODES", 1 << 14 },
  { "MPOL_F_NUMA_BALANCING", 1 << 13 },
};

static const char *
name_of (const struct name_num *t, size_t n, long value)
{
  for (size_t i = 0; i < n; i++)
    if (t[i].value == value)
      return t[i].name;
  return NULL;
}

const char *
kist_sched_policy_name (int policy)
{
  return name_of (sched_policies, KIST_ARRAY_SIZE (sched_policies), policy);
}

const char *
kist_ioprio_class_name (int klass)
{
  return name_of (ioprio_classes, KIST_ARRAY_SIZE (ioprio_classes), klass);
}

const char *
kist_mempolicy_mode_name (int mode)
{
  return name_of (mpol_modes, KIST_ARRAY_SIZE (mpol_modes), mode);
}

/* The string v is one of the names in t: its value, else an error listing them. */
static int
val_enum (struct jpath *p, yajl_val v, const struct name_num *t, size_t n, long *out,
          struct kist_error **err)
{
  if (!YAJL_IS_STRING (v))
    return jp_err (p, err, "expected string");
  for (size_t i = 0; i < n; i++)
    if (strcmp (v->u.string, t[i].name) == 0)
      {
        *out = t[i].value;
        return 0;
      }
  _cleanup_free_ char *list = xstrdup ("");
  for (size_t i = 0; i < n; i++)
    {
      char *l = xasprintf ("%s%s%s", list, i ? ", " : "", t[i].name);
      free (list);
      list = l;
    }
  return jp_err (p, err, "unknown value \"%s\" (expected one of %s)", v->u.string, list);
}

static int
get_enum (struct jpath *p, yajl_val obj, const char *key, const struct name_num *t, size_t n,
          long *out, struct kist_error **err)
{
  yajl_val v;
  size_t m;
  int r = find (p, obj, key, true, &v, &m, err);
  if (r <= 0)
    return r;
  if ((r = val_enum (p, v, t, n, out, err)) < 0)
    return r;
  jp_pop (p, m);
  return 0;
}

/* An optional array of names from t -> the OR of their values. */
static int
get_enum_flags (struct jpath *p, yajl_val obj, const char *key, const struct name_num *t,
                size_t n, uint64_t *out, struct kist_error **err)
{
  yajl_val a;
  size_t m;
  *out = 0;
  int r = enter (p, obj, key, yajl_t_array, false, &a, &m, err);
  if (r <= 0)
    return r;
  for (size_t i = 0; i < a->u.array.len; i++)
    {
      size_t m2 = jp_index (p, i);
      long x = 0;
      if ((r = val_enum (p, a->u.array.values[i], t, n, &x, err)) < 0)
        return r;
      *out |= (uint64_t) x;
      jp_pop (p, m2);
    }
  jp_pop (p, m);
  return 0;
}

int
kist_idlist_parse (const char *s, unsigned long *bits, size_t nbits, const char **bad)
{
  const size_t word = 8 * sizeof (unsigned long);
  memset (bits, 0, (nbits + word - 1) / word * sizeof (unsigned long));
  *bad = s;
  if (*s == '\0')
    return 0;
  for (;;)
    {
      char *end;
      *bad = s;
      if (*s < '0' || *s > '9')
        return -EINVAL;
      errno = 0;
      unsigned long a = strtoul (s, &end, 10), b = a;
      if (errno == ERANGE || a >= nbits)
        return -ERANGE;
      s = end;
      if (*s == '-')
        {
          *bad = ++s;
          if (*s < '0' || *s > '9')
            return -EINVAL;
          errno = 0;
          b = strtoul (s, &end, 10);
          if (errno == ERANGE || b >= nbits)
            return -ERANGE;
          if (b < a)
            return -EINVAL;
          s = end;
        }
      for (unsigned long i = a; i <= b; i++)
        bits[i / word] |= 1UL << (i % word);
      *bad = s;
      if (*s == '\0')
        return 0;
      if (*s != ',')
        return -EINVAL;
      s++;
    }
}

char *
kist_idlist_format (const unsigned long *bits, size_t nbits)
{
  const size_t word = 8 * sizeof (unsigned long);
  char *out = xstrdup ("");
  for (size_t i = 0; i < nbits; i++)
    {
      if (!(bits[i / word] & (1UL << (i % word))))
        continue;
      size_t j = i;
      while (j + 1 < nbits && (bits[(j + 1) / word] & (1UL << ((j + 1) % word))))
        j++;
      char *n = j > i ? xasprintf ("%s%s%zu-%zu", out, *out ? "," : "", i, j)
                      : xasprintf ("%s%s%zu", out, *out ? "," : "", i);
      free (out);
      out = n;
      i = j;
    }
  return out;
}

/* An optional list of CPUs or nodes ("0-3,7") at obj[key]; "" -> NULL. */
static int
get_idlist (struct jpath *p, yajl_val obj, const char *key, const char *what, char **out,
            struct kist_error **err)
{
  yajl_val v;
  size_t m;
  *out = NULL;
  int r = find (p, obj, key, false, &v, &m, err);
  if (r <= 0)
    return r;
  _cleanup_free_ char *s = NULL;
  if ((r = val_str (p, v, S_EMPTY_NULL, &s, err)) < 0)
    return r;
  if (s != NULL)
    {
      unsigned long bits[KIST_IDLIST_MAX / (8 * sizeof (unsigned long))];
      const char *bad = NULL;
      r = kist_idlist_parse (s, bits, KIST_IDLIST_MAX, &bad);
      if (r == -ERANGE)
        return jp_err (p, err, "\"%s\": %s numbers above %d are not supported", s, what,
                       KIST_IDLIST_MAX - 1);
      if (r < 0)
        return jp_err (p, err,
                       "\"%s\" is not a list of %s numbers (at offset %zu; expected "
                       "comma-separated numbers and ranges such as \"0-3,7\")",
                       s, what, (size_t) (bad - s));
    }
  jp_pop (p, m);
  *out = steal_pointer (&s);
  return 0;
}

static int
parse_io_priority (struct jpath *p, yajl_val v, struct kist_io_priority *io,
                   struct kist_error **err)
{
  /* priority is REQUIRED by runtime-spec, but runc's decoder takes a missing
   * one as 0 (and IOPRIO_CLASS_IDLE has no levels): so does kist. */
  long klass = 0;
  int r;
  if ((r = get_enum (p, v, "class", ioprio_classes, KIST_ARRAY_SIZE (ioprio_classes), &klass,
                     err))
          < 0
      || (r = get_int_range (p, v, "priority", 0, 7, &io->priority, NULL, err)) < 0)
    return r;
  io->klass = (int) klass;
  return 0;
}

static int
parse_scheduler (struct jpath *p, yajl_val v, struct kist_scheduler *s, struct kist_error **err)
{
  long policy = 0;
  int nice = 0, prio = 0;
  int r;
  if ((r = get_enum (p, v, "policy", sched_policies, KIST_ARRAY_SIZE (sched_policies), &policy,
                     err))
          < 0
      || (r = get_int_range (p, v, "nice", -20, 19, &nice, NULL, err)) < 0
      || (r = get_int_range (p, v, "priority", INT32_MIN, INT32_MAX, &prio, NULL, err)) < 0
      || (r = get_enum_flags (p, v, "flags", sched_flag_names, KIST_ARRAY_SIZE (sched_flag_names),
                              &s->flags, err))
             < 0
      || (r = get_u64 (p, v, "runtime", false, &s->runtime, err)) < 0
      || (r = get_u64 (p, v, "deadline", false, &s->deadline, err)) < 0
      || (r = get_u64 (p, v, "period", false, &s->period, err)) < 0)
    return r;
  s->policy = (int) policy;
  s->nice = nice;
  s->priority = prio;
  return 0;
}

static int
parse_exec_cpu_affinity (struct jpath *p, yajl_val v, struct kist_exec_cpu_affinity *a,
                         struct kist_error **err)
{
  int r;
  if ((r = get_idlist (p, v, "initial", "CPU", &a->initial, err)) < 0
      || (r = get_idlist (p, v, "final", "CPU", &a->final, err)) < 0)
    return r;
  return 0;
}

static int
parse_personality (struct jpath *p, yajl_val v, struct kist_personality *pers,
                   struct kist_error **err)
{
  long domain = 0;
  int r = get_enum (p, v, "domain", personality_domains, KIST_ARRAY_SIZE (personality_domains),
                    &domain, err);
  if (r < 0)
    return r;
  yajl_val a;
  size_t m;
  r = enter (p, v, "flags", yajl_t_array, false, &a, &m, err);
  if (r < 0)
    return r;
  if (r > 0)
    {
      if (a->u.array.len > 0)
        {
          jp_index (p, 0);
          return jp_err (p, err,
                         "runtime-spec defines no personality flags (kist sets the domain "
                         "only): remove the flags");
        }
      jp_pop (p, m);
    }
  pers->domain = (unsigned long) domain;
  return 0;
}

static int
parse_memory_policy (struct jpath *p, yajl_val v, struct kist_memory_policy *mp,
                     struct kist_error **err)
{
  long mode = 0;
  uint64_t flags = 0;
  int r;
  if ((r = get_enum (p, v, "mode", mpol_modes, KIST_ARRAY_SIZE (mpol_modes), &mode, err)) < 0
      || (r = get_idlist (p, v, "nodes", "NUMA node", &mp->nodes, err)) < 0
      || (r = get_enum_flags (p, v, "flags", mpol_flag_names, KIST_ARRAY_SIZE (mpol_flag_names),
                              &flags, err))
             < 0)
    return r;
  if ((flags & (1 << 15)) && (flags & (1 << 14)))
    {
      jp_key (p, "flags");
      return jp_err (p, err,
                     "MPOL_F_STATIC_NODES and MPOL_F_RELATIVE_NODES exclude each other: keep one");
    }
  mp->mode = (int) mode;
  mp->flags = (unsigned) flags;
  return 0;
}

/* obj[key], an optional object, parsed by fn into out; *present set when found. */
#define PARSE_OBJECT(p, obj, key, present, fn, out, err)                                           \
  ({                                                                                               \
    yajl_val o_;                                                                                   \
    size_t m_;                                                                                     \
    int r_ = enter (p, obj, key, yajl_t_object, false, &o_, &m_, err);                             \
    if (r_ > 0)                                                                                    \
      {                                                                                            \
        *(present) = true;                                                                         \
        r_ = fn (p, o_, out, err);                                                                 \
        if (r_ == 0)                                                                               \
          jp_pop (p, m_);                                                                          \
      }                                                                                            \
    r_ < 0 ? r_ : 0;                                                                               \
  })

/* ---- process -------------------------------------------------------------- */

static void
process_freep (struct kist_process **p)
{
  kist_process_free (*p);
  *p = NULL;
}

static int
parse_user (struct jpath *p, yajl_val u, struct kist_user *user, struct kist_error **err)
{
  int r;
  if ((r = get_u32 (p, u, "uid", true, &user->uid, NULL, err)) < 0
      || (r = get_u32 (p, u, "gid", true, &user->gid, NULL, err)) < 0
      || (r = get_u32 (p, u, "umask", false, &user->umask, &user->has_umask, err)) < 0)
    return r;
  yajl_val a;
  size_t m;
  r = enter (p, u, "additionalGids", yajl_t_array, false, &a, &m, err);
  if (r < 0)
    return r;
  if (r > 0)
    {
      size_t n = a->u.array.len;
      user->additional_gids = xcalloc (n, sizeof (uint32_t));
      user->n_additional_gids = n;
      user->has_additional_gids = true;
      for (size_t i = 0; i < n; i++)
        {
          size_t m2 = jp_index (p, i);
          if ((r = val_u32 (p, a->u.array.values[i], &user->additional_gids[i], err)) < 0)
            return r;
          jp_pop (p, m2);
        }
      jp_pop (p, m);
    }
  return 0;
}

static int
parse_capabilities (struct jpath *p, yajl_val c, struct kist_capabilities *caps,
                    struct kist_error **err)
{
  int r;
  if ((r = get_strv (p, c, "bounding", 0, &caps->bounding, err)) < 0
      || (r = get_strv (p, c, "effective", 0, &caps->effective, err)) < 0
      || (r = get_strv (p, c, "inheritable", 0, &caps->inheritable, err)) < 0
      || (r = get_strv (p, c, "permitted", 0, &caps->permitted, err)) < 0
      || (r = get_strv (p, c, "ambient", 0, &caps->ambient, err)) < 0)
    return r;
  return 0;
}

static int
rlimit_idx_cmp (const void *a, const void *b, void *arg)
{
  const struct kist_rlimit *rl = arg;
  size_t ia = *(const size_t *) a, ib = *(const size_t *) b;
  int c = strcmp (rl[ia].type, rl[ib].type);
  if (c != 0)
    return c;
  return ia < ib ? -1 : ia > ib;
}

static int
parse_rlimits (struct jpath *p, yajl_val a, struct kist_process *proc, struct kist_error **err)
{
  size_t n = a->u.array.len;
  int r;
  proc->rlimits = xcalloc (n, sizeof (struct kist_rlimit));
  proc->n_rlimits = n;
  for (size_t i = 0; i < n; i++)
    {
      yajl_val o = a->u.array.values[i];
      struct kist_rlimit *rl = &proc->rlimits[i];
      size_t m = jp_index (p, i);
      if (!YAJL_IS_OBJECT (o))
        return jp_err (p, err, "expected object");
      if ((r = get_str (p, o, "type", S_REQUIRED | S_NONEMPTY, &rl->type, err)) < 0
          || (r = get_u64 (p, o, "soft", true, &rl->soft, err)) < 0
          || (r = get_u64 (p, o, "hard", true, &rl->hard, err)) < 0)
        return r;
      jp_pop (p, m);
    }
  if (n < 2)
    return 0;
  /* Duplicates: sort indices by (type, index), compare neighbours. */
  _cleanup_free_ size_t *idx = xcalloc (n, sizeof (size_t));
  for (size_t i = 0; i < n; i++)
    idx[i] = i;
  qsort_r (idx, n, sizeof (size_t), rlimit_idx_cmp, proc->rlimits);
  for (size_t i = 1; i < n; i++)
    if (strcmp (proc->rlimits[idx[i]].type, proc->rlimits[idx[i - 1]].type) == 0)
      {
        jp_index (p, idx[i]);
        jp_key (p, "type");
        return jp_err (p, err, "duplicate rlimit \"%s\" (already set by process.rlimits[%zu])",
                       proc->rlimits[idx[i]].type, idx[i - 1]);
      }
  return 0;
}

static int
parse_process (struct jpath *p, yajl_val v, struct kist_process **out, struct kist_error **err)
{
  __attribute__ ((cleanup (process_freep))) struct kist_process *proc = NULL;
  yajl_val o;
  size_t m;
  int r;

  if (!YAJL_IS_OBJECT (v))
    return jp_err (p, err, "expected object");
  proc = xcalloc (1, sizeof *proc);

  if ((r = get_bool (p, v, "terminal", &proc->terminal, err)) < 0)
    return r;

  r = enter (p, v, "consoleSize", yajl_t_object, false, &o, &m, err);
  if (r < 0)
    return r;
  if (r > 0)
    {
      uint32_t h = 0, w = 0;
      if ((r = get_u32 (p, o, "height", true, &h, NULL, err)) < 0
          || (r = get_u32 (p, o, "width", true, &w, NULL, err)) < 0)
        return r;
      proc->has_console_size = true;
      proc->console_height = h;
      proc->console_width = w;
      jp_pop (p, m);
    }

  r = enter (p, v, "user", yajl_t_object, false, &o, &m, err);
  if (r < 0)
    return r;
  if (r > 0)
    {
      if ((r = parse_user (p, o, &proc->user, err)) < 0)
        return r;
      jp_pop (p, m);
    }

  r = enter (p, v, "args", yajl_t_array, true, &o, &m, err);
  if (r < 0)
    return r;
  if (o->u.array.len == 0)
    return jp_err (p, err, "must contain at least one element (the command to run)");
  if ((r = val_strv (p, o, 0, &proc->args, err)) < 0)
    return r;
  jp_pop (p, m);

  if ((r = get_strv (p, v, "env", S_ENV, &proc->env, err)) < 0)
    return r;
  if (proc->env == NULL)
    proc->env = xcalloc (1, sizeof (char *));

  if ((r = get_str (p, v, "cwd", S_REQUIRED | S_ABSOLUTE, &proc->cwd, err)) < 0)
    return r;

  r = enter (p, v, "capabilities", yajl_t_object, false, &o, &m, err);
  if (r < 0)
    return r;
  if (r > 0)
    {
      proc->capabilities = xcalloc (1, sizeof (struct kist_capabilities));
      if ((r = parse_capabilities (p, o, proc->capabilities, err)) < 0)
        return r;
      jp_pop (p, m);
    }

  r = enter (p, v, "rlimits", yajl_t_array, false, &o, &m, err);
  if (r < 0)
    return r;
  if (r > 0)
    {
      if ((r = parse_rlimits (p, o, proc, err)) < 0)
        return r;
      jp_pop (p, m);
    }

  if ((r = get_bool (p, v, "noNewPrivileges", &proc->no_new_privileges, err)) < 0
      || (r = get_int_range (p, v, "oomScoreAdj", -1000, 1000, &proc->oom_score_adj,
                             &proc->has_oom_score_adj, err))
             < 0
      || (r = get_str (p, v, "apparmorProfile", S_EMPTY_NULL, &proc->apparmor_profile, err)) < 0
      || (r = get_str (p, v, "selinuxLabel", S_EMPTY_NULL, &proc->selinux_label, err)) < 0)
    return r;

  if ((r = PARSE_OBJECT (p, v, "ioPriority", &proc->has_io_priority, parse_io_priority,
                         &proc->io_priority, err))
          < 0
      || (r = PARSE_OBJECT (p, v, "scheduler", &proc->has_scheduler, parse_scheduler,
                            &proc->scheduler, err))
             < 0
      || (r = PARSE_OBJECT (p, v, "execCPUAffinity", &proc->has_exec_cpu_affinity,
                            parse_exec_cpu_affinity, &proc->exec_cpu_affinity, err))
             < 0)
    return r;

  *out = steal_pointer (&proc);
  return 0;
}

/* ---- mounts --------------------------------------------------------------- */

static int
parse_mounts (struct jpath *p, yajl_val a, struct kist_spec *s, struct kist_error **err)
{
  size_t n = a->u.array.len;
  int r;
  s->mounts = xcalloc (n, sizeof (struct kist_mount));
  s->n_mounts = n;
  for (size_t i = 0; i < n; i++)
    {
      yajl_val o = a->u.array.values[i];
      struct kist_mount *mt = &s->mounts[i];
      size_t m = jp_index (p, i);
      if (!YAJL_IS_OBJECT (o))
        return jp_err (p, err, "expected object");
      if ((r = get_str (p, o, "destination", S_REQUIRED | S_ABSOLUTE, &mt->destination, err)) < 0
          || (r = get_str (p, o, "type", 0, &mt->type, err)) < 0
          || (r = get_str (p, o, "source", 0, &mt->source, err)) < 0
          || (r = get_strv (p, o, "options", 0, &mt->options, err)) < 0)
        return r;
      yajl_val uids, gids;
      if ((r = get_opt (p, o, "uidMappings", yajl_t_array, &uids, err)) < 0
          || (r = get_opt (p, o, "gidMappings", yajl_t_array, &gids, err)) < 0)
        return r;
      mt->n_uid_mappings = uids ? uids->u.array.len : 0;
      mt->n_gid_mappings = gids ? gids->u.array.len : 0;
      jp_pop (p, m);
    }
  return 0;
}

/* ---- linux ------------------------------------------------------------------ */

static const char *const ns_names[KIST_NS_COUNT] = {
  [KIST_NS_USER] = "user", [KIST_NS_MOUNT] = "mount", [KIST_NS_PID] = "pid",
  [KIST_NS_NET] = "net",   [KIST_NS_UTS] = "uts",     [KIST_NS_IPC] = "ipc",
  [KIST_NS_CGROUP] = "cgroup", [KIST_NS_TIME] = "time",
};

/* The names linux.namespaces[].type uses (OCI): "network", not "net". */
static const char *const ns_oci_names[KIST_NS_COUNT] = {
  [KIST_NS_USER] = "user", [KIST_NS_MOUNT] = "mount",   [KIST_NS_PID] = "pid",
  [KIST_NS_NET] = "network", [KIST_NS_UTS] = "uts",     [KIST_NS_IPC] = "ipc",
  [KIST_NS_CGROUP] = "cgroup", [KIST_NS_TIME] = "time",
};

static int
parse_namespaces (struct jpath *p, yajl_val a, struct kist_linux *l, struct kist_error **err)
{
  size_t first[KIST_NS_COUNT] = { 0 };
  int r;
  for (size_t i = 0; i < a->u.array.len; i++)
    {
      yajl_val o = a->u.array.values[i];
      size_t m = jp_index (p, i);
      if (!YAJL_IS_OBJECT (o))
        return jp_err (p, err, "expected object");
      _cleanup_free_ char *type = NULL;
      if ((r = get_str (p, o, "type", S_REQUIRED, &type, err)) < 0)
        return r;
      int t = -1;
      for (int k = 0; k < KIST_NS_COUNT; k++)
        if (strcmp (type, ns_oci_names[k]) == 0)
          t = k;
      if (t < 0)
        {
          jp_key (p, "type");
          return jp_err (p, err,
                         "unknown namespace type \"%s\" (expected one of pid, network, mount, "
                         "ipc, uts, user, cgroup, time)",
                         type);
        }
      if (l->ns[t].present)
        {
          jp_key (p, "type");
          return jp_err (p, err, "duplicate namespace type \"%s\" (already listed at "
                         "linux.namespaces[%zu])", type, first[t]);
        }
      l->ns[t].present = true;
      first[t] = i;
      if ((r = get_str (p, o, "path", S_EMPTY_NULL | S_ABSOLUTE, &l->ns[t].path, err)) < 0)
        return r;
      jp_pop (p, m);
    }
  return 0;
}

static int
parse_idmaps (struct jpath *p, yajl_val a, struct kist_idmap **out, size_t *n_out,
              struct kist_error **err)
{
  size_t n = a->u.array.len;
  int r;
  *out = xcalloc (n, sizeof (struct kist_idmap));
  *n_out = n;
  for (size_t i = 0; i < n; i++)
    {
      yajl_val o = a->u.array.values[i];
      struct kist_idmap *im = &(*out)[i];
      size_t m = jp_index (p, i);
      if (!YAJL_IS_OBJECT (o))
        return jp_err (p, err, "expected object");
      if ((r = get_u32 (p, o, "containerID", true, &im->container_id, NULL, err)) < 0
          || (r = get_u32 (p, o, "hostID", true, &im->host_id, NULL, err)) < 0
          || (r = get_u32 (p, o, "size", true, &im->size, NULL, err)) < 0)
        return r;
      if (im->size == 0)
        {
          jp_key (p, "size");
          return jp_err (p, err, "must be greater than 0");
        }
      jp_pop (p, m);
    }
  return 0;
}

static int
parse_time_offsets (struct jpath *p, yajl_val o, struct kist_linux *l, struct kist_error **err)
{
  int r;
  for (size_t i = 0; i < o->u.object.len; i++)
    {
      const char *clock = o->u.object.keys[i];
      yajl_val v = o->u.object.values[i];
      struct kist_time_offset *t;
      size_t m = jp_key (p, clock);
      if (strcmp (clock, "monotonic") == 0)
        t = &l->time_monotonic;
      else if (strcmp (clock, "boottime") == 0)
        t = &l->time_boottime;
      else
        return jp_err (p, err, "unknown clock (expected monotonic or boottime)");
      if (v->type == yajl_t_null)
        {
          jp_pop (p, m);
          continue;
        }
      if (!YAJL_IS_OBJECT (v))
        return jp_err (p, err, "expected object");
      *t = (struct kist_time_offset){ 0 };
      if ((r = get_i64 (p, v, "secs", false, &t->secs, err)) < 0
          || (r = get_u32 (p, v, "nanosecs", false, &t->nanosecs, NULL, err)) < 0)
        return r;
      if (t->nanosecs >= 1000000000u)
        {
          jp_key (p, "nanosecs");
          return jp_err (p, err, "must be less than 1000000000, got %" PRIu32, t->nanosecs);
        }
      t->present = true;
      jp_pop (p, m);
    }
  return 0;
}

static int
parse_devices (struct jpath *p, yajl_val a, struct kist_linux *l, struct kist_error **err)
{
  size_t n = a->u.array.len;
  int r;
  l->devices = xcalloc (n, sizeof (struct kist_device));
  l->n_devices = n;
  for (size_t i = 0; i < n; i++)
    {
      yajl_val o = a->u.array.values[i];
      struct kist_device *d = &l->devices[i];
      size_t m = jp_index (p, i);
      if (!YAJL_IS_OBJECT (o))
        return jp_err (p, err, "expected object");
      _cleanup_free_ char *type = NULL;
      if ((r = get_str (p, o, "type", S_REQUIRED, &type, err)) < 0)
        return r;
      if (strlen (type) != 1 || strchr ("cbup", type[0]) == NULL)
        {
          jp_key (p, "type");
          return jp_err (p, err, "unknown device type \"%s\" (expected c, b, u or p)", type);
        }
      d->type = type[0];
      bool need_nums = d->type != 'p';
      if ((r = get_str (p, o, "path", S_REQUIRED | S_ABSOLUTE, &d->path, err)) < 0
          || (r = get_i64 (p, o, "major", need_nums, &d->major, err)) < 0
          || (r = get_i64 (p, o, "minor", need_nums, &d->minor, err)) < 0
          || (r = get_u32 (p, o, "fileMode", false, &d->file_mode, &d->has_file_mode, err)) < 0
          || (r = get_u32 (p, o, "uid", false, &d->uid, &d->has_uid, err)) < 0
          || (r = get_u32 (p, o, "gid", false, &d->gid, &d->has_gid, err)) < 0)
        return r;
      jp_pop (p, m);
    }
  return 0;
}

static const char *const propagations[] = { "private", "rprivate", "slave",      "rslave",
                                            "shared",  "rshared",  "unbindable", "runbindable" };

static int
parse_linux (struct jpath *p, yajl_val v, struct kist_linux *l, struct kist_error **err)
{
  yajl_val o;
  size_t m;
  int r;

  r = enter (p, v, "namespaces", yajl_t_array, false, &o, &m, err);
  if (r < 0)
    return r;
  if (r > 0)
    {
      if ((r = parse_namespaces (p, o, l, err)) < 0)
        return r;
      jp_pop (p, m);
    }

  r = enter (p, v, "uidMappings", yajl_t_array, false, &o, &m, err);
  if (r < 0)
    return r;
  if (r > 0)
    {
      if ((r = parse_idmaps (p, o, &l->uid_mappings, &l->n_uid_mappings, err)) < 0)
        return r;
      jp_pop (p, m);
    }

  r = enter (p, v, "gidMappings", yajl_t_array, false, &o, &m, err);
  if (r < 0)
    return r;
  if (r > 0)
    {
      if ((r = parse_idmaps (p, o, &l->gid_mappings, &l->n_gid_mappings, err)) < 0)
        return r;
      jp_pop (p, m);
    }

  r = enter (p, v, "timeOffsets", yajl_t_object, false, &o, &m, err);
  if (r < 0)
    return r;
  if (r > 0)
    {
      if ((r = parse_time_offsets (p, o, l, err)) < 0)
        return r;
      jp_pop (p, m);
    }

  r = enter (p, v, "devices", yajl_t_array, false, &o, &m, err);
  if (r < 0)
    return r;
  if (r > 0)
    {
      if ((r = parse_devices (p, o, l, err)) < 0)
        return r;
      jp_pop (p, m);
    }

  _cleanup_free_ char **kv = NULL;
  size_t n;
  if ((r = get_map (p, v, "sysctl", &kv, &n, err)) < 0)
    return r;
  if (kv)
    {
      l->sysctl = xcalloc (n, sizeof (struct kist_sysctl));
      l->n_sysctl = n;
      for (size_t i = 0; i < n; i++)
        l->sysctl[i] = (struct kist_sysctl){ .key = kv[2 * i], .value = kv[2 * i + 1] };
    }

  if ((r = get_str (p, v, "cgroupsPath", S_EMPTY_NULL, &l->cgroups_path, err)) < 0)
    return r;

  if ((r = get_opt (p, v, "resources", yajl_t_object, &l->resources, err)) < 0
      || (r = get_opt (p, v, "seccomp", yajl_t_object, &l->seccomp, err)) < 0)
    return r;

  if ((r = get_str (p, v, "rootfsPropagation", S_EMPTY_NULL, &l->rootfs_propagation, err)) < 0)
    return r;
  if (l->rootfs_propagation)
    {
      bool ok = false;
      for (size_t i = 0; i < KIST_ARRAY_SIZE (propagations); i++)
        ok = ok || strcmp (l->rootfs_propagation, propagations[i]) == 0;
      if (!ok)
        {
          jp_key (p, "rootfsPropagation");
          return jp_err (p, err,
                         "unknown propagation \"%s\" (expected one of private, rprivate, slave, "
                         "rslave, shared, rshared, unbindable, runbindable)",
                         l->rootfs_propagation);
        }
    }

  if ((r = get_strv (p, v, "maskedPaths", S_ABSOLUTE, &l->masked_paths, err)) < 0
      || (r = get_strv (p, v, "readonlyPaths", S_ABSOLUTE, &l->readonly_paths, err)) < 0
      || (r = get_str (p, v, "mountLabel", S_EMPTY_NULL, &l->mount_label, err)) < 0)
    return r;

  if ((r = get_present (p, v, "intelRdt", &l->has_intel_rdt, err)) < 0
      || (r = get_present (p, v, "netDevices", &l->has_net_devices, err)) < 0
      || (r = PARSE_OBJECT (p, v, "personality", &l->has_personality, parse_personality,
                            &l->personality, err))
             < 0
      || (r = PARSE_OBJECT (p, v, "memoryPolicy", &l->has_memory_policy, parse_memory_policy,
                            &l->memory_policy, err))
             < 0)
    return r;
  return 0;
}

/* ---- hooks ------------------------------------------------------------------ */

static int
parse_hook_list (struct jpath *p, yajl_val a, struct kist_hook **out, size_t *n_out,
                 struct kist_error **err)
{
  size_t n = a->u.array.len;
  int r;
  *out = xcalloc (n, sizeof (struct kist_hook));
  *n_out = n;
  for (size_t i = 0; i < n; i++)
    {
      yajl_val o = a->u.array.values[i];
      struct kist_hook *h = &(*out)[i];
      size_t m = jp_index (p, i);
      if (!YAJL_IS_OBJECT (o))
        return jp_err (p, err, "expected object");
      if ((r = get_str (p, o, "path", S_REQUIRED | S_ABSOLUTE, &h->path, err)) < 0
          || (r = get_strv (p, o, "args", 0, &h->args, err)) < 0
          || (r = get_strv (p, o, "env", S_ENV, &h->env, err)) < 0
          || (r = get_int_range (p, o, "timeout", 1, INT32_MAX, &h->timeout, &h->has_timeout,
                                 err))
                 < 0)
        return r;
      jp_pop (p, m);
    }
  return 0;
}

static int
parse_hooks (struct jpath *p, yajl_val v, struct kist_hooks *h, struct kist_error **err)
{
  struct
  {
    const char *name;
    struct kist_hook **list;
    size_t *n;
  } kinds[] = {
    { "prestart", &h->prestart, &h->n_prestart },
    { "createRuntime", &h->create_runtime, &h->n_create_runtime },
    { "createContainer", &h->create_container, &h->n_create_container },
    { "startContainer", &h->start_container, &h->n_start_container },
    { "poststart", &h->poststart, &h->n_poststart },
    { "poststop", &h->poststop, &h->n_poststop },
  };
  for (size_t i = 0; i < KIST_ARRAY_SIZE (kinds); i++)
    {
      yajl_val a;
      size_t m;
      int r = enter (p, v, kinds[i].name, yajl_t_array, false, &a, &m, err);
      if (r < 0)
        return r;
      if (r > 0)
        {
          if ((r = parse_hook_list (p, a, kinds[i].list, kinds[i].n, err)) < 0)
            return r;
          jp_pop (p, m);
        }
    }
  return 0;
}

/* ---- top level ---------------------------------------------------------------- */

/* ociVersion must be 1.x ("1", "1.2.0", "1.0.2-dev"). */
static bool
oci_version_supported (const char *v)
{
  if (v[0] != '1')
    return false;
  return v[1] == '\0' || v[1] == '.' || v[1] == '-' || v[1] == '+';
}

static int
parse_spec (struct jpath *p, yajl_val tree, struct kist_spec *s, struct kist_error **err)
{
  yajl_val o;
  size_t m;
  int r;

  if ((r = get_str (p, tree, "ociVersion", S_REQUIRED | S_NONEMPTY, &s->oci_version, err)) < 0)
    return r;
  if (!oci_version_supported (s->oci_version))
    {
      jp_key (p, "ociVersion");
      return jp_err (p, err, "version \"%s\" is not supported (kist implements runtime-spec 1.x)",
                     s->oci_version);
    }

  r = enter (p, tree, "root", yajl_t_object, true, &o, &m, err);
  if (r < 0)
    return r;
  if ((r = get_str (p, o, "path", S_REQUIRED | S_NONEMPTY, &s->root_path, err)) < 0
      || (r = get_bool (p, o, "readonly", &s->root_readonly, err)) < 0)
    return r;
  jp_pop (p, m);

  if ((r = get_str (p, tree, "hostname", S_EMPTY_NULL, &s->hostname, err)) < 0
      || (r = get_str (p, tree, "domainname", S_EMPTY_NULL, &s->domainname, err)) < 0)
    return r;

  r = enter (p, tree, "mounts", yajl_t_array, false, &o, &m, err);
  if (r < 0)
    return r;
  if (r > 0)
    {
      if ((r = parse_mounts (p, o, s, err)) < 0)
        return r;
      jp_pop (p, m);
    }

  r = enter (p, tree, "process", yajl_t_object, false, &o, &m, err);
  if (r < 0)
    return r;
  if (r > 0)
    {
      if ((r = parse_process (p, o, &s->process, err)) < 0)
        return r;
      jp_pop (p, m);
    }

  r = enter (p, tree, "linux", yajl_t_object, false, &o, &m, err);
  if (r < 0)
    return r;
  if (r > 0)
    {
      s->linux_ = xcalloc (1, sizeof (struct kist_linux));
      if ((r = parse_linux (p, o, s->linux_, err)) < 0)
        return r;
      jp_pop (p, m);
    }

  r = enter (p, tree, "hooks", yajl_t_object, false, &o, &m, err);
  if (r < 0)
    return r;
  if (r > 0)
    {
      s->hooks = xcalloc (1, sizeof (struct kist_hooks));
      if ((r = parse_hooks (p, o, s->hooks, err)) < 0)
        return r;
      jp_pop (p, m);
    }

  _cleanup_free_ char **kv = NULL;
  size_t n;
  if ((r = get_map (p, tree, "annotations", &kv, &n, err)) < 0)
    return r;
  if (kv)
    {
      s->annotations = xcalloc (n, sizeof (struct kist_annotation));
      s->n_annotations = n;
      for (size_t i = 0; i < n; i++)
        s->annotations[i] = (struct kist_annotation){ .key = kv[2 * i], .value = kv[2 * i + 1] };
    }
  return 0;
}

/* ---- raw document checks and yajl --------------------------------------------- */

/* doc: message prefix ("config.json: " or "process: "). */
static int
parse_tree (const char *json, size_t len, const char *doc, yajl_val *out, struct kist_error **err)
{
  return kist_json_parse (json, len, doc, out, err);
}

/* ---- public API ----------------------------------------------------------------- */

int
kist_spec_parse (const char *json, size_t len, struct kist_spec **out, struct kist_error **err)
{
  _cleanup_spec_ struct kist_spec *s = xcalloc (1, sizeof *s);
  int r = parse_tree (json, len, "config.json: ", &s->tree, err);
  if (r < 0)
    return r;
  if (!YAJL_IS_OBJECT (s->tree))
    return kist_error_make (err, 0, "config.json: expected a JSON object at the top level");
  struct jpath p = { .doc = "config.json: " };
  r = parse_spec (&p, s->tree, s, err);
  free (p.buf);
  if (r < 0)
    return r;
  *out = steal_pointer (&s);
  return 0;
}

/* The hooks object alone (the state dir's hooks.json, written at create for
 * start and delete): the same checks as config.json's hooks, the same paths
 * in messages ("DOC: hooks.poststop[0].path: ..."). */
int
kist_hooks_parse (const char *json, size_t len, const char *doc, struct kist_hooks **out,
                  struct kist_error **err)
{
  _cleanup_yajl_ yajl_val tree = NULL;
  _cleanup_free_ char *prefix = xasprintf ("%s: ", doc);
  int r = parse_tree (json, len, prefix, &tree, err);
  if (r < 0)
    return r;
  if (!YAJL_IS_OBJECT (tree))
    return kist_error_make (err, 0, "%s: expected a JSON object (the hooks of config.json)", doc);
  struct kist_hooks *h = xcalloc (1, sizeof *h);
  struct jpath p = { .doc = prefix };
  size_t m = jp_key (&p, "hooks");
  r = parse_hooks (&p, tree, h, err);
  jp_pop (&p, m);
  free (p.buf);
  if (r < 0)
    {
      kist_hooks_free (h);
      return r;
    }
  *out = h;
  return 0;
}

int
kist_spec_load (int bundle_dirfd, struct kist_spec **out, struct kist_error **err)
{
  /* O_NONBLOCK: a FIFO named config.json must not hang us before fstat. */
  _cleanup_close_ int fd
      = openat (bundle_dirfd, "config.json", O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0)
    {
      int e = errno;
      if (e == ENOENT)
        {
          kist_error_make (err, 0, "config.json not found in the bundle directory (create one "
                                   "with `kist spec`)");
          if (err && *err)
            (*err)->errnum = ENOENT;
          return -ENOENT;
        }
      return kist_error_make (err, e, "open config.json in the bundle directory");
    }
  struct stat st;
  if (fstat (fd, &st) < 0)
    return kist_error_make (err, errno, "stat config.json in the bundle directory");
  if (!S_ISREG (st.st_mode))
    return kist_error_make (err, 0,
                            "config.json in the bundle directory is not a regular file (%s)",
                            S_ISDIR (st.st_mode)    ? "it is a directory"
                            : S_ISFIFO (st.st_mode) ? "it is a FIFO"
                            : S_ISLNK (st.st_mode)  ? "it is a symlink"
                                                    : "it is a special file");
  if ((uint64_t) st.st_size > KIST_SPEC_MAX_SIZE)
    {
      kist_error_make (err, 0, "config.json is %jd bytes, larger than the %u MiB kist accepts",
                       (intmax_t) st.st_size, KIST_SPEC_MAX_SIZE / (1024 * 1024));
      if (err && *err)
        (*err)->errnum = EFBIG;
      return -EFBIG;
    }
  _cleanup_free_ char *buf = NULL;
  size_t len = 0;
  int r = kist_read_fd (fd, KIST_SPEC_MAX_SIZE, &buf, &len, err);
  if (r < 0)
    return kist_error_wrap (err, "read config.json in the bundle directory");
  return kist_spec_parse (buf, len, out, err);
}

int
kist_process_parse (const char *json, size_t len, struct kist_process **out,
                    struct kist_error **err)
{
  _cleanup_yajl_ yajl_val tree = NULL;
  int r = parse_tree (json, len, "process: ", &tree, err);
  if (r < 0)
    return r;
  struct jpath p = { .doc = "" };
  jp_key (&p, "process");
  r = parse_process (&p, tree, out, err);
  free (p.buf);
  return r < 0 ? r : 0;
}

void
kist_process_free (struct kist_process *p)
{
  if (p == NULL)
    return;
  free (p->user.additional_gids);
  kist_strv_free (p->args);
  kist_strv_free (p->env);
  free (p->cwd);
  if (p->capabilities)
    {
      kist_strv_free (p->capabilities->bounding);
      kist_strv_free (p->capabilities->effective);
      kist_strv_free (p->capabilities->inheritable);
      kist_strv_free (p->capabilities->permitted);
      kist_strv_free (p->capabilities->ambient);
      free (p->capabilities);
    }
  for (size_t i = 0; i < p->n_rlimits; i++)
    free (p->rlimits[i].type);
  free (p->rlimits);
  free (p->apparmor_profile);
  free (p->selinux_label);
  free (p->exec_cpu_affinity.initial);
  free (p->exec_cpu_affinity.final);
  free (p);
}

static void
hooks_free (struct kist_hook *h, size_t n)
{
  for (size_t i = 0; i < n; i++)
    {
      free (h[i].path);
      kist_strv_free (h[i].args);
      kist_strv_free (h[i].env);
    }
  free (h);
}

void
kist_hooks_free (struct kist_hooks *h)
{
  if (h == NULL)
    return;
  hooks_free (h->prestart, h->n_prestart);
  hooks_free (h->create_runtime, h->n_create_runtime);
  hooks_free (h->create_container, h->n_create_container);
  hooks_free (h->start_container, h->n_start_container);
  hooks_free (h->poststart, h->n_poststart);
  hooks_free (h->poststop, h->n_poststop);
  free (h);
}

static void
linux_free (struct kist_linux *l)
{
  if (l == NULL)
    return;
  for (int i = 0; i < KIST_NS_COUNT; i++)
    free (l->ns[i].path);
  free (l->uid_mappings);
  free (l->gid_mappings);
  for (size_t i = 0; i < l->n_devices; i++)
    free (l->devices[i].path);
  free (l->devices);
  for (size_t i = 0; i < l->n_sysctl; i++)
    {
      free (l->sysctl[i].key);
      free (l->sysctl[i].value);
    }
  free (l->sysctl);
  free (l->cgroups_path);
  free (l->rootfs_propagation);
  kist_strv_free (l->masked_paths);
  kist_strv_free (l->readonly_paths);
  free (l->mount_label);
  free (l->memory_policy.nodes);
  free (l);
}

void
kist_spec_free (struct kist_spec *s)
{
  if (s == NULL)
    return;
  free (s->oci_version);
  free (s->root_path);
  free (s->hostname);
  free (s->domainname);
  for (size_t i = 0; i < s->n_mounts; i++)
    {
      free (s->mounts[i].destination);
      free (s->mounts[i].type);
      free (s->mounts[i].source);
      kist_strv_free (s->mounts[i].options);
    }
  free (s->mounts);
  kist_process_free (s->process);
  linux_free (s->linux_);
  kist_hooks_free (s->hooks);
  for (size_t i = 0; i < s->n_annotations; i++)
    {
      free (s->annotations[i].key);
      free (s->annotations[i].value);
    }
  free (s->annotations);
  if (s->tree)
    yajl_tree_free (s->tree);
  free (s);
}

const char *
kist_ns_name (enum kist_ns_type t)
{
  if ((unsigned) t >= KIST_NS_COUNT)
    return "unknown";
  return ns_names[t];
}

unsigned long
kist_ns_clone_flag (enum kist_ns_type t)
{
  switch (t)
    {
    case KIST_NS_USER:
      return CLONE_NEWUSER;
    case KIST_NS_MOUNT:
      return CLONE_NEWNS;
    case KIST_NS_PID:
      return CLONE_NEWPID;
    case KIST_NS_NET:
      return CLONE_NEWNET;
    case KIST_NS_UTS:
      return CLONE_NEWUTS;
    case KIST_NS_IPC:
      return CLONE_NEWIPC;
    case KIST_NS_CGROUP:
      return CLONE_NEWCGROUP;
    case KIST_NS_TIME:
      return CLONE_NEWTIME;
    default:
      return 0;
    }
}

const char *
kist_spec_annotation (const struct kist_spec *s, const char *key)
{
  if (s == NULL || key == NULL)
    return NULL;
  /* The last one wins, like the JSON object it came from. */
  for (size_t i = s->n_annotations; i > 0; i--)
    if (strcmp (s->annotations[i - 1].key, key) == 0)
      return s->annotations[i - 1].value;
  return NULL;
}
