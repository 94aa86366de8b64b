/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: small yajl helpers (see json.h). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "util.h"

void
kist_json_tree_freep (yajl_val *v)
{
  if (*v)
    yajl_tree_free (*v);
  *v = NULL;
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

void
kist_json_gen_str_lossy (yajl_gen g, const char *s)
{
  if (s == NULL)
    s = "";
  if (yajl_gen_string (g, (const unsigned char *) s, strlen (s)) == yajl_gen_invalid_string)
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
  kist_jgen_check (j, yajl_gen_string (j->g, (const unsigned char *) s, strlen (s)));
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
  kist_jgen_check (j, yajl_gen_integer (j->g, v));
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
  yajl_val tree = yajl_tree_parse (buf, ebuf, sizeof ebuf);
  if (tree == NULL)
    {
      _cleanup_free_ char *m = format_yajl_error (ebuf);
      return kist_error_make (err, 0, "%smalformed JSON: %s", doc, m);
    }
  *out = tree;
  return 0;
}

