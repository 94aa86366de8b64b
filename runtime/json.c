/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: small yajl helpers (see json.h). */
#define _GNU_SOURCE
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
  for (size_t i = 0; i < len; i++)
    {
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
