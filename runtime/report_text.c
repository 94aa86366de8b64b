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
#include "spec_json.h"
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

#define N_COLS 5

char *
kist_report_json_to_text (const char *json, size_t len, struct kist_error **err)
{
  _cleanup_yajl_ yajl_val root = NULL;

  if (json == NULL)
    {
      kist_error_make (err, EINVAL, "report: no JSON given");
      return NULL;
    }
  if (spec_parse_object (json, len, "report: ", &root, err) < 0)
    return NULL;
  struct jpath p = { .doc = "report: " };
  yajl_val layers;
  _cleanup_free_ char *summary = NULL;
  size_t m;
  int r = spec_enter (&p, root, "layers", yajl_t_array, true, &layers, &m, err);
  if (r >= 0)
    {
      spec_jp_pop (&p, m);
      r = spec_get_str (&p, root, "summary", 0, &summary, err);
    }
  free (p.buf);
  if (r < 0)
    return NULL;

  size_t nrows = layers->u.array.len + 1;
  char **cells = xcalloc (nrows * N_COLS, sizeof (char *));
  size_t width[N_COLS] = { 0 };
  char *out = NULL;
  cells[0] = xstrdup ("LAYER");
  cells[1] = xstrdup ("REQUESTED");
  cells[2] = xstrdup ("APPLIED");
  cells[3] = xstrdup ("USEC");
  cells[4] = xstrdup ("DETAIL");
  long long last_step = 0;

  for (size_t i = 0; i < layers->u.array.len; i++)
    {
      char **row = &cells[(i + 1) * N_COLS];
      struct layer_json v = report_layer_json_get (layers->u.array.values[i]);
      if (v.name == NULL)
        {
          kist_error_make (err, EINVAL,
                           "report: layers[%zu]: expected an object with a string `layer`", i);
          goto out;
        }
      bool is_req = v.req_given, is_applied = v.applied;
      row[0] = cell_text (v.name);
      row[1] = v.req ? cell_text (v.req) : xstrdup (is_req ? "yes" : "no");
      row[2] = xstrdup (!is_req ? "-" : is_applied ? "yes" : "no");
      /* The row's time once, "^" on the other entries the same row recorded. */
      row[3] = v.step <= 0 || v.usec < 0 ? xstrdup ("-")
               : v.step == last_step     ? xstrdup ("^")
                                         : xasprintf ("%lld", v.usec);
      if (v.step > 0)
        last_step = v.step;
      if (is_req && !is_applied && (v.eno || v.reason))
        {
          _cleanup_free_ char *t = v.eno && v.reason ? xasprintf ("%s: %s", v.eno, v.reason)
                                                     : xstrdup (v.eno ? v.eno : v.reason);
          row[4] = cell_text (t);
        }
      else
        row[4] = cell_text (v.detail ? v.detail : "");
    }

  /* No entry timed (a report of an older kist): no USEC column. */
  if (last_step == 0)
    for (size_t i = 0; i < nrows; i++)
      {
        free (cells[i * N_COLS + 3]);
        cells[i * N_COLS + 3] = cells[i * N_COLS + 4];
        cells[i * N_COLS + 4] = xstrdup ("");
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
    _cleanup_free_ char *sum = cell_text (summary ? summary : "");
    fprintf (f, "\nsummary: %s\n", sum);
    yajl_val timing = spec_peek (root, "timing");
    yajl_val rows = spec_peek (timing, "layersUsec"), all = spec_peek (timing, "startupUsec");
    if (YAJL_IS_INTEGER (rows))
      fprintf (f, "timing: layers %lld us", (long long) YAJL_GET_INTEGER (rows));
    if (YAJL_IS_INTEGER (rows) && YAJL_IS_INTEGER (all))
      fprintf (f, ", kist's start to the execve %lld us", (long long) YAJL_GET_INTEGER (all));
    if (YAJL_IS_INTEGER (rows))
      fputc ('\n', f);
    fclose (f);
  }

out:
  for (size_t i = 0; i < nrows * N_COLS; i++)
    free (cells[i]);
  free (cells);
  return out;
}

