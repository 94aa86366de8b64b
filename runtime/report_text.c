/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: the stored report JSON rendered as a text table (split from report.c). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "report.h"
#include "report_int.h"
#include "util.h"

/* ---- JSON -> text ------------------------------------------------------- */

static char *
cell_text (const char *s)
{
  char *c = xstrdup (s ? s : "");
  for (char *p = c; *p; p++)
    if ((unsigned char) *p < 0x20 || *p == 0x7f)
      *p = '?';
  return c;
}

/* Display width: UTF-8 code points, not bytes. */
static size_t
text_width (const char *s)
{
  size_t w = 0;
  for (; *s; s++)
    if (((unsigned char) *s & 0xc0) != 0x80)
      w++;
  return w;
}

#define N_COLS 4

char *
kist_report_json_to_text (const char *json, size_t len, struct kist_error **err)
{
  _cleanup_yajl_ yajl_val root = NULL;

  if (json == NULL)
    {
      kist_error_make (err, EINVAL, "report: no JSON given");
      return NULL;
    }
  if (kist_json_parse (json, len, "report: ", &root, err) < 0)
    return NULL;
  if (!YAJL_IS_OBJECT (root))
    {
      kist_error_make (err, EINVAL, "report: expected a JSON object at the top level");
      return NULL;
    }
  yajl_val layers = kist_json_obj_get (root, "layers");
  if (!YAJL_IS_ARRAY (layers))
    {
      kist_error_make (err, EINVAL, "report: `layers` is missing or not an array");
      return NULL;
    }
  yajl_val summary = kist_json_obj_get (root, "summary");
  if (summary != NULL && !YAJL_IS_STRING (summary))
    {
      kist_error_make (err, EINVAL, "report: `summary` is not a string");
      return NULL;
    }

  size_t nrows = layers->u.array.len + 1;
  char **cells = xcalloc (nrows * N_COLS, sizeof (char *));
  size_t width[N_COLS] = { 0 };
  char *out = NULL;
  cells[0] = xstrdup ("LAYER");
  cells[1] = xstrdup ("REQUESTED");
  cells[2] = xstrdup ("APPLIED");
  cells[3] = xstrdup ("DETAIL");

  for (size_t i = 0; i < layers->u.array.len; i++)
    {
      yajl_val l = layers->u.array.values[i];
      char **row = &cells[(i + 1) * N_COLS];
      struct layer_json v = report_layer_json_get (l);
      if (!YAJL_IS_OBJECT (l) || !YAJL_IS_STRING (v.name))
        {
          kist_error_make (err, EINVAL,
                           "report: layers[%zu]: expected an object with a string `layer`", i);
          goto out;
        }
      bool is_req = !YAJL_IS_FALSE (v.req) && v.req != NULL && !YAJL_IS_NULL (v.req);
      bool is_applied = YAJL_IS_TRUE (v.applied);
      row[0] = cell_text (YAJL_GET_STRING (v.name));
      if (YAJL_IS_STRING (v.req))
        row[1] = cell_text (YAJL_GET_STRING (v.req));
      else
        row[1] = xstrdup (is_req ? "yes" : "no");
      row[2] = xstrdup (!is_req ? "-" : is_applied ? "yes" : "no");
      if (is_req && !is_applied && (YAJL_IS_STRING (v.eno) || YAJL_IS_STRING (v.reason)))
        {
          _cleanup_free_ char *t = NULL;
          if (YAJL_IS_STRING (v.eno) && YAJL_IS_STRING (v.reason))
            t = xasprintf ("%s: %s", YAJL_GET_STRING (v.eno), YAJL_GET_STRING (v.reason));
          else
            t = xstrdup (YAJL_IS_STRING (v.eno) ? YAJL_GET_STRING (v.eno)
                                                : YAJL_GET_STRING (v.reason));
          row[3] = cell_text (t);
        }
      else
        row[3] = cell_text (YAJL_IS_STRING (v.detail) ? YAJL_GET_STRING (v.detail) : "");
    }

  for (size_t i = 0; i < nrows; i++)
    for (size_t c = 0; c < N_COLS; c++)
      {
        size_t w = text_width (cells[i * N_COLS + c]);
        if (w > width[c])
          width[c] = w;
      }

  {
    size_t sz = 0;
    FILE *f = open_memstream (&out, &sz);
    if (f == NULL)
      abort ();
    for (size_t i = 0; i < nrows; i++)
      {
        /* Pad every column but the last; no trailing blanks. */
        size_t last = N_COLS - 1;
        while (last > 0 && cells[i * N_COLS + last][0] == '\0')
          last--;
        for (size_t c = 0; c <= last; c++)
          {
            const char *s = cells[i * N_COLS + c];
            fputs (s, f);
            if (c < last)
              fprintf (f, "%*s", (int) (width[c] - text_width (s) + 2), "");
          }
        fputc ('\n', f);
      }
    _cleanup_free_ char *sum = cell_text (summary ? YAJL_GET_STRING (summary) : "");
    fprintf (f, "\nsummary: %s\n", sum);
    fclose (f);
  }

out:
  for (size_t i = 0; i < nrows * N_COLS; i++)
    free (cells[i]);
  free (cells);
  return out;
}

