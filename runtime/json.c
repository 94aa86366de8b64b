/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: small yajl helpers (see json.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_parse.h>

#include "json.h"
#include "util.h"

/* ---- the tree of kist_json_parse --------------------------------------------
 * The nodes are yajl_tree's (struct yajl_val_s, read with its macros and
 * yajl_tree_get), built from yajl's callback parser into one arena: no
 * malloc per string, key and array element, no realloc per element, and one
 * free for the whole tree (yajl_tree_parse's handle_string and
 * context_add_value were half of the parse of a 27 KB config.json with an
 * inline seccomp profile; yajl_tree_free as much again).  The tree is the
 * same as yajl_tree_parse's (a unit test compares them on every document
 * the tests parse): numbers keep their text, INT_VALID and DOUBLE_VALID as
 * yajl_tree sets them; comments allowed; duplicate keys kept in order. */

struct arena_chunk
{
  struct arena_chunk *next;
  size_t used, size;
  max_align_t data[];
};

/* The root node is the first member: the tree is freed from it. */
struct json_tree
{
  struct yajl_val_s root;
  struct arena_chunk *chunks;
};

static void *
arena_alloc (struct json_tree *t, size_t n)
{
  n = (n + _Alignof (max_align_t) - 1) & ~(_Alignof (max_align_t) - 1);
  struct arena_chunk *c = t->chunks;
  if (c == NULL || c->size - c->used < n)
    {
      size_t size = n > 16384 ? n : 16384;
      c = xmalloc (sizeof *c + size);
      c->size = size;
      c->used = 0;
      c->next = t->chunks;
      t->chunks = c;
    }
  void *p = (char *) c->data + c->used;
  c->used += n;
  return p;
}

static char *
arena_strndup (struct json_tree *t, const unsigned char *s, size_t len)
{
  char *d = arena_alloc (t, len + 1);
  memcpy (d, s, len);
  d[len] = '\0';
  return d;
}

/* A container being built: its node and where its members start on the
 * builder's stacks of values and keys. */
struct build_frame
{
  yajl_val node;
  size_t first;
};

struct builder
{
  struct json_tree *t;
  struct build_frame frames[KIST_JSON_MAX_DEPTH + 2];
  size_t depth;
  yajl_val *vals;          /* the members of the open containers, innermost last */
  const char **keys;       /* the key of each member of an object (NULL in an array) */
  size_t n, cap;
  const char *key;         /* the key just read, for the next value */
  bool done;               /* the root value is complete */
};

static yajl_val
new_node (struct builder *b, yajl_type type)
{
  yajl_val v;
  if (b->depth == 0)
    {
      if (b->done)
        return NULL; /* a second top-level value (yajl refuses it first) */
      v = &b->t->root;
    }
  else
    {
      v = arena_alloc (b->t, sizeof *v);
      if (b->n == b->cap)
        {
          b->cap = b->cap ? 2 * b->cap : 64;
          b->vals = xrealloc (b->vals, b->cap * sizeof *b->vals);
          b->keys = xrealloc (b->keys, b->cap * sizeof *b->keys);
        }
      b->vals[b->n] = v;
      b->keys[b->n] = b->key;
      b->n++;
      b->key = NULL;
    }
  memset (v, 0, sizeof *v);
  v->type = type;
  return v;
}

static int
leaf_done (struct builder *b)
{
  if (b->depth == 0)
    b->done = true;
  return 1;
}

static int
cb_null (void *ctx)
{
  struct builder *b = ctx;
  return new_node (b, yajl_t_null) ? leaf_done (b) : 0;
}

static int
cb_boolean (void *ctx, int value)
{
  struct builder *b = ctx;
  return new_node (b, value ? yajl_t_true : yajl_t_false) ? leaf_done (b) : 0;
}

/* yajl's own integer conversion (yajl_parse_integer), as yajl_tree uses it:
 * ERANGE on overflow or on any character that is not a digit. */
static long long
parse_integer (const unsigned char *s, size_t len, bool *range)
{
  const long long max_mul = LLONG_MAX / 10;
  long long ret = 0;
  int sign = 1;
  const unsigned char *p = s, *end = s + len;
  *range = false;
  if (p < end && *p == '-')
    {
      p++;
      sign = -1;
    }
  if (p < end && *p == '+')
    p++;
  while (p < end)
    {
      if (ret > max_mul)
        {
          *range = true;
          return sign == 1 ? LLONG_MAX : LLONG_MIN;
        }
      ret *= 10;
      if (LLONG_MAX - ret < (*p - '0'))
        {
          *range = true;
          return sign == 1 ? LLONG_MAX : LLONG_MIN;
        }
      if (*p < '0' || *p > '9')
        {
          *range = true;
          return sign == 1 ? LLONG_MAX : LLONG_MIN;
        }
      ret += *p++ - '0';
    }
  return sign * ret;
}

static int
cb_number (void *ctx, const char *s, size_t len)
{
  struct builder *b = ctx;
  yajl_val v = new_node (b, yajl_t_number);
  if (v == NULL)
    return 0;
  v->u.number.r = arena_strndup (b->t, (const unsigned char *) s, len);
  bool range;
  v->u.number.i = parse_integer ((const unsigned char *) v->u.number.r,
                                 strlen (v->u.number.r), &range);
  if (!range)
    v->u.number.flags |= YAJL_NUMBER_INT_VALID;
  char *end = NULL;
  errno = 0;
  v->u.number.d = strtod (v->u.number.r, &end);
  if (errno == 0 && end != NULL && *end == '\0')
    v->u.number.flags |= YAJL_NUMBER_DOUBLE_VALID;
  return leaf_done (b);
}

static int
cb_string (void *ctx, const unsigned char *s, size_t len)
{
  struct builder *b = ctx;
  yajl_val v = new_node (b, yajl_t_string);
  if (v == NULL)
    return 0;
  v->u.string = arena_strndup (b->t, s, len);
  return leaf_done (b);
}

static int
open_container (struct builder *b, yajl_type type)
{
  if (b->depth == KIST_JSON_MAX_DEPTH + 1)
    return 0; /* (the prescan refuses deeper documents first) */
  yajl_val v = new_node (b, type);
  if (v == NULL)
    return 0;
  b->frames[b->depth++] = (struct build_frame){ .node = v, .first = b->n };
  return 1;
}

static int
close_container (struct builder *b)
{
  struct build_frame *f = &b->frames[--b->depth];
  size_t n = b->n - f->first;
  yajl_val *vals = n ? arena_alloc (b->t, n * sizeof *vals) : NULL;
  if (n)
    memcpy (vals, b->vals + f->first, n * sizeof *vals);
  if (f->node->type == yajl_t_object)
    {
      const char **keys = n ? arena_alloc (b->t, n * sizeof *keys) : NULL;
      if (n)
        memcpy (keys, b->keys + f->first, n * sizeof *keys);
      f->node->u.object.keys = keys;
      f->node->u.object.values = vals;
      f->node->u.object.len = n;
    }
  else
    {
      f->node->u.array.values = vals;
      f->node->u.array.len = n;
    }
  b->n = f->first;
  return leaf_done (b);
}

static int
cb_start_map (void *ctx)
{
  return open_container (ctx, yajl_t_object);
}

static int
cb_map_key (void *ctx, const unsigned char *s, size_t len)
{
  struct builder *b = ctx;
  b->key = arena_strndup (b->t, s, len);
  return 1;
}

static int
cb_end (void *ctx)
{
  return close_container (ctx);
}

static int
cb_start_array (void *ctx)
{
  return open_container (ctx, yajl_t_array);
}

static const yajl_callbacks tree_callbacks = {
  .yajl_null = cb_null,
  .yajl_boolean = cb_boolean,
  .yajl_number = cb_number,
  .yajl_string = cb_string,
  .yajl_start_map = cb_start_map,
  .yajl_map_key = cb_map_key,
  .yajl_end_map = cb_end,
  .yajl_start_array = cb_start_array,
  .yajl_end_array = cb_end,
};

void
kist_json_tree_free (yajl_val v)
{
  if (v == NULL)
    return;
  struct json_tree *t = (struct json_tree *) v; /* the root is the first member */
  struct arena_chunk *c = t->chunks;
  while (c)
    {
      struct arena_chunk *next = c->next;
      free (c);
      c = next;
    }
  free (t);
}

void
kist_json_tree_freep (yajl_val *v)
{
  kist_json_tree_free (*v);
  *v = NULL;
}

/* The tree of the NUL-terminated buf, or NULL with yajl's verbose error in
 * ebuf (as yajl_tree_parse writes it). */
static yajl_val
tree_parse (const char *buf, char *ebuf, size_t ebuf_size)
{
  struct json_tree *t = xcalloc (1, sizeof *t);
  struct builder b = { .t = t };
  yajl_handle h = yajl_alloc (&tree_callbacks, NULL, &b);
  if (h == NULL)
    abort ();
  yajl_config (h, yajl_allow_comments, 1);
  size_t len = strlen (buf);
  yajl_status st = yajl_parse (h, (const unsigned char *) buf, len);
  if (st == yajl_status_ok)
    st = yajl_complete_parse (h);
  free (b.vals);
  free (b.keys);
  if (st != yajl_status_ok || !b.done)
    {
      unsigned char *e = yajl_get_error (h, 1, (const unsigned char *) buf, len);
      snprintf (ebuf, ebuf_size, "%s", e ? (const char *) e : "parse error");
      if (e)
        yajl_free_error (h, e);
      yajl_free (h);
      kist_json_tree_free (&t->root);
      return NULL;
    }
  yajl_free (h);
  return &t->root;
}

void
kist_json_gen_freep (yajl_gen *g)
{
  if (*g)
    yajl_gen_free (*g);
  *g = NULL;
}

yajl_gen
kist_json_gen_new (bool pretty, bool validate_utf8)
{
  yajl_gen g = yajl_gen_alloc (NULL);
  if (g == NULL)
    abort ();
  if (pretty)
    {
      yajl_gen_config (g, yajl_gen_beautify, 1);
      yajl_gen_config (g, yajl_gen_indent_string, "  ");
    }
  if (validate_utf8)
    yajl_gen_config (g, yajl_gen_validate_utf8, 1);
  return g;
}

char *
kist_json_gen_take (yajl_gen g)
{
  const unsigned char *out = NULL;
  size_t len = 0;
  if (yajl_gen_get_buf (g, &out, &len) != yajl_gen_status_ok)
    abort ();
  while (len > 0 && out[len - 1] == '\n')
    len--;
  char *s = xmalloc (len + 1);
  size_t o = 0;
  /* The next '[' and '{' at or after i (len: none; SIZE_MAX: not looked
   * for yet), found with memchr. */
  size_t sq = SIZE_MAX, cu = SIZE_MAX;
  for (size_t i = 0; i < len; i++)
    {
      if (sq == SIZE_MAX || sq < i)
        {
          const unsigned char *p = memchr (out + i, '[', len - i);
          sq = p ? (size_t) (p - out) : len;
        }
      if (cu == SIZE_MAX || cu < i)
        {
          const unsigned char *p = memchr (out + i, '{', len - i);
          cu = p ? (size_t) (p - out) : len;
        }
      size_t next = sq < cu ? sq : cu; /* up to the next bracket in one copy */
      memcpy (s + o, out + i, next - i);
      o += next - i;
      i = next;
      if (i >= len)
        break;
      s[o++] = (char) out[i];
      /* yajl beautifies an empty array or object as "[\n\n  ]": write "[]".
       * A raw newline never occurs inside a JSON string, so this only ever
       * matches formatting. */
      if ((out[i] == '[' || out[i] == '{') && i + 2 < len && out[i + 1] == '\n'
          && out[i + 2] == '\n')
        {
          size_t j = i + 3;
          while (j < len && out[j] == ' ')
            j++;
          if (j < len && out[j] == (out[i] == '[' ? ']' : '}'))
            {
              s[o++] = (char) out[j];
              i = j;
            }
        }
    }
  s[o] = '\0';
  return s;
}

yajl_val
kist_json_obj_get (yajl_val obj, const char *key)
{
  if (!YAJL_IS_OBJECT (obj))
    return NULL;
  for (size_t i = 0; i < obj->u.object.len; i++)
    if (strcmp (obj->u.object.keys[i], key) == 0)
      return obj->u.object.values[i];
  return NULL;
}

/* The decimal digits of v, at the end of buf; returns where they start. */
static char *
digits (char buf[24], long long v) /* 24: "-9223372036854775808" and a spare */
{
  char *p = buf + 24;
  /* The magnitude as unsigned: -LLONG_MIN does not fit a long long. */
  unsigned long long u = v < 0 ? 0ULL - (unsigned long long) v : (unsigned long long) v;
  do
    *--p = (char) ('0' + u % 10);
  while ((u /= 10) != 0);
  if (v < 0)
    *--p = '-';
  return p;
}

yajl_gen_status
kist_json_gen_integer (yajl_gen g, long long v)
{
  char buf[24];
  char *p = digits (buf, v);
  return yajl_gen_number (g, p, (size_t) (buf + sizeof buf - p));
}

/* A byte yajl_gen_string writes as it is: printable ASCII but the quote and
 * the backslash ('/' too: kist never sets yajl_gen_escape_solidus). */
static inline bool
plain_byte (unsigned char c)
{
  return c >= 0x20 && c < 0x7f && c != '"' && c != '\\';
}

/* The same for eight bytes at once: no byte with the high bit, none below
 * 0x20, none equal to '"', '\\' or 0x7f (the has-zero-byte and has-less
 * tests, exact for "is there any"). */
static inline bool
plain_word (uint64_t x)
{
  const uint64_t ones = 0x0101010101010101ULL, high = 0x8080808080808080ULL;
  uint64_t q = x ^ (ones * '"'), b = x ^ (ones * '\\'), d = x ^ (ones * 0x7f);
  uint64_t bad = x | ((x - ones * 0x20) & ~x) | ((q - ones) & ~q) | ((b - ones) & ~b)
                 | ((d - ones) & ~d);
  return (bad & high) == 0;
}

size_t
kist_json_plain_prefix (const char *s, size_t len)
{
  const unsigned char *u = (const unsigned char *) s;
  size_t i = 0;
  for (uint64_t w; i + 8 <= len && (memcpy (&w, u + i, 8), plain_word (w));)
    i += 8;
  while (i < len && plain_byte (u[i]))
    i++;
  return i;
}

yajl_gen_status
kist_json_gen_string (yajl_gen g, const char *s, size_t len)
{
  char buf[1024];
  if (len + 2 <= sizeof buf)
    {
      if (kist_json_plain_prefix (s, len) == len)
        {
          buf[0] = '"';
          memcpy (buf + 1, s, len);
          buf[len + 1] = '"';
          yajl_gen_status st = yajl_gen_number (g, buf, len + 2);
          if (st != yajl_gen_keys_must_be_strings)
            return st;
        }
    }
  return yajl_gen_string (g, (const unsigned char *) s, len);
}

/* ---- objects written by hand (kist_json_raw) ---------------------------- */

/* Room for n more bytes (and a spare one). */
static void
raw_grow (struct kist_json_raw *b, size_t n)
{
  kist_grow (&b->p, &b->cap, b->n + n + 1, 1024);
}

static void
raw_add (struct kist_json_raw *b, const char *s, size_t n)
{
  raw_grow (b, n);
  memcpy (b->p + b->n, s, n);
  b->n += n;
}

/* depth levels of yajl's two-space indent. */
static void
raw_indent (struct kist_json_raw *b, unsigned depth)
{
  static const char spaces[] = "                                ";
  size_t n = 2 * (size_t) depth;
  raw_grow (b, n);
  for (size_t k; n > 0; n -= k)
    {
      k = n < sizeof spaces - 1 ? n : sizeof spaces - 1;
      memcpy (b->p + b->n, spaces, k);
      b->n += k;
    }
}

void
kist_json_raw_open (struct kist_json_raw *b, bool pretty, unsigned depth)
{
  b->n = 0; /* the text of the last object goes, its buffer stays */
  b->pretty = pretty;
  b->depth = depth;
  b->first = true;
  raw_add (b, pretty ? "{\n" : "{", pretty ? 2 : 1);
}

void
kist_json_raw_key (struct kist_json_raw *b, const char *key)
{
  if (!b->first)
    raw_add (b, b->pretty ? ",\n" : ",", b->pretty ? 2 : 1);
  b->first = false;
  if (b->pretty)
    raw_indent (b, b->depth + 1);
  size_t kl = strlen (key);
  raw_grow (b, kl + 4);
  char *p = b->p + b->n;
  *p++ = '"';
  memcpy (p, key, kl);
  p += kl;
  *p++ = '"';
  *p++ = ':';
  if (b->pretty)
    *p++ = ' ';
  b->n = (size_t) (p - b->p);
}

/* yajl_string_encode's escapes (without escape_solidus): the seven short
 * ones, \u00XX for the other control bytes, everything else as it is. */
void
kist_json_raw_str (struct kist_json_raw *b, const char *s, size_t len)
{
  static const char hex[] = "0123456789ABCDEF";
  const unsigned char *u = (const unsigned char *) s;
  size_t plain = kist_json_plain_prefix (s, len);
  raw_grow (b, plain + 2);
  b->p[b->n++] = '"';
  memcpy (b->p + b->n, s, plain);
  b->n += plain;
  if (plain == len)
    {
      b->p[b->n++] = '"';
      return;
    }
  size_t beg = plain;
  for (size_t i = plain; i < len; i++)
    {
      unsigned char c = u[i];
      if (c >= 0x20 && c != '"' && c != '\\')
        continue;
      raw_add (b, s + beg, i - beg);
      beg = i + 1;
      char e[7] = { '\\', 0 };
      size_t el = 2;
      switch (c)
        {
        case '"': e[1] = '"'; break;
        case '\\': e[1] = '\\'; break;
        case '\r': e[1] = 'r'; break;
        case '\n': e[1] = 'n'; break;
        case '\f': e[1] = 'f'; break;
        case '\b': e[1] = 'b'; break;
        case '\t': e[1] = 't'; break;
        default:
          memcpy (e + 1, "u00", 3);
          e[4] = hex[c >> 4];
          e[5] = hex[c & 0xf];
          el = 6;
        }
      raw_add (b, e, el);
    }
  raw_add (b, s + beg, len - beg);
  raw_add (b, "\"", 1);
}

void
kist_json_raw_bool (struct kist_json_raw *b, bool v)
{
  raw_add (b, v ? "true" : "false", v ? 4 : 5);
}

void
kist_json_raw_int (struct kist_json_raw *b, long long v)
{
  char buf[24];
  char *p = digits (buf, v);
  raw_add (b, p, (size_t) (buf + sizeof buf - p));
}

yajl_gen_status
kist_json_raw_end (struct kist_json_raw *b, yajl_gen g)
{
  if (b->pretty)
    {
      raw_add (b, "\n", 1);
      raw_indent (b, b->depth);
    }
  raw_add (b, "}", 1);
  return yajl_gen_number (g, b->p, b->n);
}

void
kist_json_raw_free (struct kist_json_raw *b)
{
  free (b->p);
  memset (b, 0, sizeof *b);
}

void
kist_json_gen_str_lossy (yajl_gen g, const char *s)
{
  if (s == NULL)
    s = "";
  if (kist_json_gen_string (g, s, strlen (s)) == yajl_gen_invalid_string)
    {
      _cleanup_free_ char *c = xstrdup (s);
      for (char *p = c; *p; p++)
        if ((unsigned char) *p >= 0x80)
          *p = '?';
      yajl_gen_string (g, (const unsigned char *) c, strlen (c));
    }
}

void
kist_jgen_check (struct kist_jgen *j, yajl_gen_status st)
{
  if (st != yajl_gen_status_ok)
    j->failed = true;
}

void
kist_jgen_str (struct kist_jgen *j, const char *s)
{
  kist_jgen_check (j, kist_json_gen_string (j->g, s, strlen (s)));
}

void
kist_jgen_map_open (struct kist_jgen *j)
{
  kist_jgen_check (j, yajl_gen_map_open (j->g));
}

void
kist_jgen_map_close (struct kist_jgen *j)
{
  kist_jgen_check (j, yajl_gen_map_close (j->g));
}

void
kist_jgen_array_open (struct kist_jgen *j)
{
  kist_jgen_check (j, yajl_gen_array_open (j->g));
}

void
kist_jgen_array_close (struct kist_jgen *j)
{
  kist_jgen_check (j, yajl_gen_array_close (j->g));
}

void
kist_jgen_kstr (struct kist_jgen *j, const char *key, const char *v)
{
  kist_jgen_str (j, key);
  kist_jgen_str (j, v);
}

void
kist_jgen_kint (struct kist_jgen *j, const char *key, long long v)
{
  kist_jgen_str (j, key);
  kist_jgen_check (j, kist_json_gen_integer (j->g, v));
}

void
kist_jgen_kbool (struct kist_jgen *j, const char *key, bool v)
{
  kist_jgen_str (j, key);
  kist_jgen_check (j, yajl_gen_bool (j->g, v));
}

void
kist_jgen_kstrv (struct kist_jgen *j, const char *key, const char *const *v)
{
  kist_jgen_str (j, key);
  kist_jgen_array_open (j);
  for (size_t i = 0; v && v[i]; i++)
    kist_jgen_str (j, v[i]);
  kist_jgen_array_close (j);
}

/* ---- parsing: one depth-checked entry for every document ---------------- */

/* One pass over the raw bytes: NUL bytes, the \u0000 escape, nesting depth.
 * Runs before yajl; on a malformed document what it reports is still true,
 * and yajl reports anything else.  json[len] must be '\0' (the caller's
 * copy): strcspn jumps over the bytes that cannot matter (it stops at a NUL
 * as well, so none is passed over), which is most of a document. */
static int
prescan (const char *json, size_t len, const char *doc, struct kist_error **err)
{
  size_t depth = 0;
  size_t i = 0;
  while (i < len && (i += strcspn (json + i, "\"/[]{}")) < len)
    {
      char c = json[i];
      if (c == '\0')
        return kist_error_make (err, 0, "%smalformed JSON: NUL byte at offset %zu", doc, i);
      if (c == '"')
        {
          /* A string: only '"', '\\' and NUL matter. */
          for (i++; (i += strcspn (json + i, "\"\\")) < len;)
            {
              if (json[i] == '\0')
                return kist_error_make (err, 0, "%smalformed JSON: NUL byte at offset %zu", doc,
                                        i);
              if (json[i] == '"')
                break;
              if (i + 1 < len)
                {
                  if (json[i + 1] == 'u' && i + 5 < len && memcmp (json + i + 2, "0000", 4) == 0)
                    return kist_error_make (err, 0,
                                            "%smalformed JSON: a string contains the escape "
                                            "\\u0000 at offset %zu (a NUL cannot be passed to "
                                            "the kernel)",
                                            doc, i);
                  i += 2; /* the escaped byte, whatever it is */
                }
              else
                i++;
            }
          if (i >= len)
            break;
        }
      else if (c == '/' && i + 1 < len && json[i + 1] == '/')
        {
          while (i < len && json[i] != '\n')
            i++;
        }
      else if (c == '/' && i + 1 < len && json[i + 1] == '*')
        {
          const char *end = memmem (json + i + 2, len - i - 2, "*/", 2);
          i = end ? (size_t) (end - json) + 1 : len;
        }
      else if (c == '[' || c == '{')
        {
          if (++depth > KIST_JSON_MAX_DEPTH)
            return kist_error_make (err, 0,
                                    "%smalformed JSON: nested deeper than %d levels at offset %zu",
                                    doc, KIST_JSON_MAX_DEPTH, i);
        }
      else if ((c == ']' || c == '}') && depth > 0)
        depth--;
      i++;
    }
  return 0;
}

/* yajl's verbose error is three lines: message, snippet, arrow.  Make it one:
 * "message near `snippet`", printable ASCII only. */
static char *
format_yajl_error (const char *e)
{
  char line0[512] = "", line1[512] = "";
  const char *nl = strchr (e, '\n');
  size_t l0 = nl ? (size_t) (nl - e) : strlen (e);
  snprintf (line0, sizeof line0, "%.*s", (int) l0, e);
  if (nl)
    {
      const char *s = nl + 1;
      while (*s == ' ')
        s++;
      const char *nl2 = strchr (s, '\n');
      size_t l1 = nl2 ? (size_t) (nl2 - s) : strlen (s);
      snprintf (line1, sizeof line1, "%.*s", (int) l1, s);
    }
  kist_rstrip (line0);
  kist_rstrip (line1);
  for (char *c = line1; *c; c++)
    if ((unsigned char) *c < 0x20 || (unsigned char) *c >= 0x7f)
      *c = '?';
  for (char *c = line0; *c; c++)
    if ((unsigned char) *c < 0x20 || (unsigned char) *c >= 0x7f)
      *c = '?';
  if (line0[0] == '\0')
    return xstrdup ("unknown parse error");
  if (line1[0] == '\0')
    return xstrdup (line0);
  return xasprintf ("%s near `%s`", line0, line1);
}

int
kist_json_parse (const char *json, size_t len, const char *doc, yajl_val *out,
                 struct kist_error **err)
{
  if (doc == NULL)
    doc = "";
  if (len == 0)
    return kist_error_make (err, 0, "%smalformed JSON: the document is empty", doc);
  _cleanup_free_ char *buf = xmalloc (len + 1);
  memcpy (buf, json, len);
  buf[len] = '\0';
  /* Before yajl: a deeply nested document would overflow the stack of the
   * recursive yajl_tree_free. */
  int r = prescan (buf, len, doc, err);
  if (r < 0)
    return r;
  char ebuf[1024] = "";
  yajl_val tree = tree_parse (buf, ebuf, sizeof ebuf);
  if (tree == NULL)
    {
      _cleanup_free_ char *m = format_yajl_error (ebuf);
      return kist_error_make (err, 0, "%smalformed JSON: %s", doc, m);
    }
  *out = tree;
  return 0;
}

