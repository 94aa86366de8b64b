/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: the JSON side of the config.json parser: the path of the value being
 * read (every error names it: "config.json: process.rlimits[0].hard: ..."),
 * and typed accessors that apply the conventions of spec.c (null is absent,
 * the last duplicate key wins, integers taken from the number's text). */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spec.h"
#include "spec_json.h"
#include "util.h"

/* ---- JSON paths for error messages --------------------------------------- */

static void
jp_reserve (struct jpath *p, size_t extra)
{
  kist_grow (&p->buf, &p->cap, p->len + extra + 1, 64);
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

size_t
spec_jp_key (struct jpath *p, const char *key)
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

size_t
spec_jp_index (struct jpath *p, size_t i)
{
  size_t old = p->len;
  jp_reserve (p, 24);
  /* By hand, not sprintf: array walks push an index per element (a
   * seccomp profile some thousand), and printf's machinery was half the
   * cost of reading one. */
  char digits[20];
  size_t n = 0;
  do
    digits[n++] = (char) ('0' + i % 10);
  while ((i /= 10) != 0);
  char *w = p->buf + p->len;
  *w++ = '[';
  while (n > 0)
    *w++ = digits[--n];
  *w++ = ']';
  *w = '\0';
  p->len = (size_t) (w - p->buf);
  return old;
}

void
spec_jp_pop (struct jpath *p, size_t old)
{
  p->len = old;
  if (p->buf)
    p->buf[old] = '\0';
}

int
spec_jp_err (struct jpath *p, struct kist_error **err, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  _cleanup_free_ char *msg = xvasprintf (fmt, ap);
  va_end (ap);
  return kist_error_make (err, 0, "%s%s: %s", p->doc, p->len ? p->buf : "top level", msg);
}

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
  *mark = spec_jp_key (p, key);
  if (*out == NULL)
    return spec_jp_err (p, err, "required field is missing");
  return 1;
}

int
spec_enter (struct jpath *p, yajl_val obj, const char *key, yajl_type t, bool required,
            yajl_val *out, size_t *mark, struct kist_error **err)
{
  int r = find (p, obj, key, required, out, mark, err);
  if (r > 0 && (*out)->type != t)
    {
      *out = NULL;
      return spec_jp_err (p, err, "expected %s", type_word (t));
    }
  return r;
}

int
spec_get_opt (struct jpath *p, yajl_val obj, const char *key, yajl_type t, yajl_val *out,
              struct kist_error **err)
{
  size_t m;
  int r = spec_enter (p, obj, key, t, false, out, &m, err);
  if (r > 0)
    spec_jp_pop (p, m);
  return r < 0 ? r : 0;
}

int
spec_get_present (struct jpath *p, yajl_val obj, const char *key, bool *present,
                  struct kist_error **err)
{
  yajl_val v;
  int r = spec_get_opt (p, obj, key, yajl_t_object, &v, err);
  if (v != NULL)
    *present = true;
  return r;
}

static int
val_str (struct jpath *p, yajl_val v, int flags, char **out, struct kist_error **err)
{
  if (!YAJL_IS_STRING (v))
    return spec_jp_err (p, err, "expected string");
  const char *s = v->u.string;
  if (*s == '\0' && (flags & S_EMPTY_NULL))
    {
      *out = NULL;
      return 0;
    }
  if (*s == '\0' && (flags & S_NONEMPTY))
    return spec_jp_err (p, err, "must not be empty");
  if ((flags & S_ABSOLUTE) && s[0] != '/')
    return spec_jp_err (p, err, "must be an absolute path, got \"%s\"", s);
  if ((flags & S_ENV) && strchr (s, '=') == NULL)
    return spec_jp_err (p, err, "\"%s\" is not of the form KEY=VALUE", s);
  *out = xstrdup (s);
  return 0;
}

/* What a converter may need besides the value: string flags, an enum
 * table, a range, the word idlist errors use. */
struct conv
{
  int flags;
  const struct name_num *t;
  size_t n;
  int64_t min, max;
  const char *what;
};

typedef int (*conv_fn) (struct jpath *p, yajl_val v, const struct conv *c, void *out,
                        struct kist_error **err);

/* The one body of the spec_get_* accessors: find obj[key], convert it with
 * fn into out under its path, pop.  1 when found, 0 when absent, negative
 * when missing though required or when fn refuses it (the path stays
 * pushed, as the message named it). */
static int
get_conv (struct jpath *p, yajl_val obj, const char *key, bool required, conv_fn fn,
          const struct conv *c, void *out, struct kist_error **err)
{
  yajl_val v;
  size_t m;
  int r = find (p, obj, key, required, &v, &m, err);
  if (r <= 0)
    return r;
  if ((r = fn (p, v, c, out, err)) < 0)
    return r;
  spec_jp_pop (p, m);
  return 1;
}

static int
conv_str (struct jpath *p, yajl_val v, const struct conv *c, void *out, struct kist_error **err)
{
  return val_str (p, v, c->flags, out, err);
}

int
spec_get_str (struct jpath *p, yajl_val obj, const char *key, int flags, char **out,
              struct kist_error **err)
{
  *out = NULL;
  int r = get_conv (p, obj, key, flags & S_REQUIRED, conv_str, &(struct conv){ .flags = flags },
                    out, err);
  return r < 0 ? r : 0;
}

static int
conv_bool (struct jpath *p, yajl_val v, const struct conv *c, void *out, struct kist_error **err)
{
  if (v->type != yajl_t_true && v->type != yajl_t_false)
    return spec_jp_err (p, err, "expected boolean");
  *(bool *) out = v->type == yajl_t_true;
  return 0;
}

int
spec_get_bool (struct jpath *p, yajl_val obj, const char *key, bool *out, struct kist_error **err)
{
  int r = get_conv (p, obj, key, false, conv_bool, NULL, out, err);
  return r < 0 ? r : 0;
}

int
spec_get_bool_req (struct jpath *p, yajl_val obj, const char *key, bool *out,
                   struct kist_error **err)
{
  int r = get_conv (p, obj, key, true, conv_bool, NULL, out, err);
  return r < 0 ? r : 0;
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
conv_u64 (struct jpath *p, yajl_val v, const struct conv *c, void *out, struct kist_error **err)
{
  if (!num_u64 (v, out))
    return spec_jp_err (p, err, "expected unsigned 64-bit integer");
  return 0;
}

int
spec_val_u32 (struct jpath *p, yajl_val v, uint32_t *out, struct kist_error **err)
{
  uint64_t x;
  if (!num_u64 (v, &x) || x > UINT32_MAX)
    return spec_jp_err (p, err, "expected unsigned 32-bit integer");
  *out = (uint32_t) x;
  return 0;
}

static int
conv_u32 (struct jpath *p, yajl_val v, const struct conv *c, void *out, struct kist_error **err)
{
  return spec_val_u32 (p, v, out, err);
}

static int
conv_i64 (struct jpath *p, yajl_val v, const struct conv *c, void *out, struct kist_error **err)
{
  if (!num_i64 (v, out))
    return spec_jp_err (p, err, "expected 64-bit integer");
  return 0;
}

/* An integer in [c->min, c->max], into an int64_t. */
static int
conv_i64_range (struct jpath *p, yajl_val v, const struct conv *c, void *out,
                struct kist_error **err)
{
  int64_t x;
  if (!num_i64 (v, &x))
    return spec_jp_err (p, err, "expected integer");
  if (x < c->min || x > c->max)
    {
      if (c->max == INT32_MAX)
        return spec_jp_err (p, err, "must be greater than %" PRId64 " and fit in an int, got %s",
                            c->min - 1, v->u.number.r);
      return spec_jp_err (p, err, "must be between %" PRId64 " and %" PRId64 ", got %" PRId64,
                          c->min, c->max, x);
    }
  *(int64_t *) out = x;
  return 0;
}

/* The same, into an int (the range is within int). */
static int
conv_int_range (struct jpath *p, yajl_val v, const struct conv *c, void *out,
                struct kist_error **err)
{
  int64_t x;
  int r = conv_i64_range (p, v, c, &x, err);
  if (r == 0)
    *(int *) out = (int) x;
  return r;
}

int
spec_get_u32 (struct jpath *p, yajl_val obj, const char *key, bool required, uint32_t *out,
              bool *present, struct kist_error **err)
{
  int r = get_conv (p, obj, key, required, conv_u32, NULL, out, err);
  if (r > 0 && present)
    *present = true;
  return r < 0 ? r : 0;
}

int
spec_get_u64 (struct jpath *p, yajl_val obj, const char *key, bool required, uint64_t *out,
              struct kist_error **err)
{
  int r = get_conv (p, obj, key, required, conv_u64, NULL, out, err);
  return r < 0 ? r : 0;
}

int
spec_get_i64 (struct jpath *p, yajl_val obj, const char *key, bool required, int64_t *out,
              struct kist_error **err)
{
  int r = get_conv (p, obj, key, required, conv_i64, NULL, out, err);
  return r < 0 ? r : 0;
}

/* An integer literal as int64; above INT64_MAX kept as INT64_MAX. */
static int
conv_i64_sat (struct jpath *p, yajl_val v, const struct conv *c, void *out,
              struct kist_error **err)
{
  (void) c;
  bool neg;
  const char *d;
  if (!int_text (v, &neg, &d))
    return spec_jp_err (p, err, "expected an integer");
  if (num_i64 (v, out))
    return 0;
  if (neg)
    return spec_jp_err (p, err, "%s is below the smallest 64-bit integer", v->u.number.r);
  *(int64_t *) out = INT64_MAX;
  return 0;
}

int
spec_get_i64_sat (struct jpath *p, yajl_val obj, const char *key, int64_t *out, bool *present,
                  struct kist_error **err)
{
  int r = get_conv (p, obj, key, false, conv_i64_sat, NULL, out, err);
  if (r > 0 && present)
    *present = true;
  return r < 0 ? r : 0;
}

int
spec_get_int_range (struct jpath *p, yajl_val obj, const char *key, int64_t min, int64_t max,
                    int *out, bool *present, struct kist_error **err)
{
  int r = get_conv (p, obj, key, false, conv_int_range, &(struct conv){ .min = min, .max = max },
                    out, err);
  if (r > 0 && present)
    *present = true;
  return r < 0 ? r : 0;
}

int
spec_val_strv (struct jpath *p, yajl_val a, int flags, char ***out, struct kist_error **err)
{
  if (!YAJL_IS_ARRAY (a))
    return spec_jp_err (p, err, "expected array");
  size_t n = a->u.array.len;
  _cleanup_strv_ char **v = xcalloc (n + 1, sizeof (char *));
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    {
      size_t m = spec_jp_index (p, i);
      char *s = NULL;
      int r = val_str (p, a->u.array.values[i], flags & ~(S_EMPTY_NULL | S_REQUIRED), &s, err);
      if (r < 0)
        return r;
      v[k++] = s;
      spec_jp_pop (p, m);
    }
  *out = steal_pointer (&v);
  return 0;
}

static int
conv_strv (struct jpath *p, yajl_val v, const struct conv *c, void *out, struct kist_error **err)
{
  return spec_val_strv (p, v, c->flags, out, err);
}

int
spec_get_strv (struct jpath *p, yajl_val obj, const char *key, int flags, char ***out,
               struct kist_error **err)
{
  *out = NULL;
  int r = get_conv (p, obj, key, false, conv_strv, &(struct conv){ .flags = flags }, out, err);
  return r < 0 ? r : 0;
}

struct flat_map
{
  char **kv;
  size_t n;
};

static int
conv_map (struct jpath *p, yajl_val v, const struct conv *c, void *out, struct kist_error **err)
{
  if (!YAJL_IS_OBJECT (v))
    return spec_jp_err (p, err, "expected object");
  size_t len = v->u.object.len;
  _cleanup_strv_ char **kv = xcalloc (2 * len + 1, sizeof (char *));
  for (size_t i = 0; i < len; i++)
    {
      size_t m = spec_jp_key (p, v->u.object.keys[i]);
      char *val = NULL;
      int r = val_str (p, v->u.object.values[i], 0, &val, err);
      if (r < 0)
        return r;
      kv[2 * i] = xstrdup (v->u.object.keys[i]);
      kv[2 * i + 1] = val;
      spec_jp_pop (p, m);
    }
  struct flat_map *f = out;
  f->kv = steal_pointer (&kv);
  f->n = len;
  return 0;
}

int
spec_get_map (struct jpath *p, yajl_val obj, const char *key, char ***flat, size_t *n,
              struct kist_error **err)
{
  struct flat_map f = { NULL, 0 };
  int r = get_conv (p, obj, key, false, conv_map, NULL, &f, err);
  *flat = f.kv;
  *n = f.n;
  return r < 0 ? r : 0;
}

const char *
spec_name_of (const struct name_num *t, size_t n, long value)
{
  for (size_t i = 0; i < n; i++)
    if (t[i].value == value)
      return t[i].name;
  return NULL;
}

/* The string v is one of the names in c->t: its value, else an error listing them. */
static int
conv_enum (struct jpath *p, yajl_val v, const struct conv *c, void *out, struct kist_error **err)
{
  if (!YAJL_IS_STRING (v))
    return spec_jp_err (p, err, "expected string");
  for (size_t i = 0; i < c->n; i++)
    if (strcmp (v->u.string, c->t[i].name) == 0)
      {
        *(long *) out = c->t[i].value;
        return 0;
      }
  _cleanup_free_ char *list = xstrdup ("");
  for (size_t i = 0; i < c->n; i++)
    {
      char *l = xasprintf ("%s%s%s", list, i ? ", " : "", c->t[i].name);
      free (list);
      list = l;
    }
  return spec_jp_err (p, err, "unknown value \"%s\" (expected one of %s)", v->u.string, list);
}

/* An array of names from c->t -> the OR of their values. */
static int
conv_enum_flags (struct jpath *p, yajl_val a, const struct conv *c, void *out,
                 struct kist_error **err)
{
  if (!YAJL_IS_ARRAY (a))
    return spec_jp_err (p, err, "expected array");
  for (size_t i = 0; i < a->u.array.len; i++)
    {
      size_t m = spec_jp_index (p, i);
      long x = 0;
      int r = conv_enum (p, a->u.array.values[i], c, &x, err);
      if (r < 0)
        return r;
      *(uint64_t *) out |= (uint64_t) x;
      spec_jp_pop (p, m);
    }
  return 0;
}

int
spec_get_enum (struct jpath *p, yajl_val obj, const char *key, const struct name_num *t, size_t n,
               long *out, struct kist_error **err)
{
  int r = get_conv (p, obj, key, true, conv_enum, &(struct conv){ .t = t, .n = n }, out, err);
  return r < 0 ? r : 0;
}

int
spec_get_enum_flags (struct jpath *p, yajl_val obj, const char *key, const struct name_num *t,
                     size_t n, uint64_t *out, struct kist_error **err)
{
  *out = 0;
  int r = get_conv (p, obj, key, false, conv_enum_flags, &(struct conv){ .t = t, .n = n }, out,
                    err);
  return r < 0 ? r : 0;
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

/* A list of CPUs or nodes ("0-3,7"); "" -> NULL. */
static int
conv_idlist (struct jpath *p, yajl_val v, const struct conv *c, void *out,
             struct kist_error **err)
{
  _cleanup_free_ char *s = NULL;
  int r = val_str (p, v, S_EMPTY_NULL, &s, err);
  if (r < 0)
    return r;
  if (s != NULL)
    {
      unsigned long bits[KIST_IDLIST_MAX / (8 * sizeof (unsigned long))];
      const char *bad = NULL;
      r = kist_idlist_parse (s, bits, KIST_IDLIST_MAX, &bad);
      if (r == -ERANGE)
        return spec_jp_err (p, err, "\"%s\": %s numbers above %d are not supported", s, c->what,
                            KIST_IDLIST_MAX - 1);
      if (r < 0)
        return spec_jp_err (p, err,
                            "\"%s\" is not a list of %s numbers (at offset %zu; expected "
                            "comma-separated numbers and ranges such as \"0-3,7\")",
                            s, c->what, (size_t) (bad - s));
    }
  *(char **) out = steal_pointer (&s);
  return 0;
}

/* ---- additions (seccomp helper) ------------------------------------------ */

int
spec_enter_str (struct jpath *p, yajl_val obj, const char *key, bool required, const char **out,
                size_t *mark, struct kist_error **err)
{
  yajl_val v;
  *out = NULL;
  int r = find (p, obj, key, required, &v, mark, err);
  if (r <= 0)
    return r;
  if (!YAJL_IS_STRING (v))
    return spec_jp_err (p, err, "expected string");
  *out = v->u.string;
  return 1;
}

int
spec_val_cstr (struct jpath *p, yajl_val v, const char **out, struct kist_error **err)
{
  if (!YAJL_IS_STRING (v))
    return spec_jp_err (p, err, "expected string");
  *out = v->u.string;
  return 0;
}

int
spec_val_obj (struct jpath *p, yajl_val v, struct kist_error **err)
{
  if (!YAJL_IS_OBJECT (v))
    return spec_jp_err (p, err, "expected object");
  return 0;
}

int
spec_get_idlist (struct jpath *p, yajl_val obj, const char *key, const char *what, char **out,
                 struct kist_error **err)
{
  *out = NULL;
  int r = get_conv (p, obj, key, false, conv_idlist, &(struct conv){ .what = what }, out, err);
  return r < 0 ? r : 0;
}

int
spec_get_i64_range (struct jpath *p, yajl_val obj, const char *key, int64_t min, int64_t max,
                    int64_t *out, struct kist_error **err)
{
  int r = get_conv (p, obj, key, false, conv_i64_range, &(struct conv){ .min = min, .max = max },
                    out, err);
  return r < 0 ? r : 0;
}

int
spec_parse_object (const char *json, size_t len, const char *doc, yajl_val *out,
                   struct kist_error **err)
{
  int r = kist_json_parse (json, len, doc, out, err);
  if (r < 0)
    return r;
  if (!YAJL_IS_OBJECT (*out))
    {
      kist_json_tree_free (*out);
      *out = NULL;
      return kist_error_make (err, 0, "%sexpected a JSON object at the top level", doc);
    }
  return 0;
}

yajl_val
spec_peek (yajl_val obj, const char *key)
{
  return YAJL_IS_OBJECT (obj) ? obj_get (obj, key) : NULL;
}

const char *
spec_peek_str (yajl_val obj, const char *key)
{
  yajl_val v = spec_peek (obj, key);
  return YAJL_IS_STRING (v) ? v->u.string : NULL;
}

yajl_val
spec_elem_object (struct jpath *p, yajl_val a, size_t i, size_t *mark, struct kist_error **err)
{
  yajl_val o = a->u.array.values[i];
  *mark = spec_jp_index (p, i);
  if (!YAJL_IS_OBJECT (o))
    {
      spec_jp_err (p, err, "expected object");
      return NULL;
    }
  return o;
}
