/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist sandbox --probe: its rows and what is printed of them (the table,
 * the JSON, the summary and the exit status); no I/O, no probing
 * (sandbox_probe.c does that). */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "report.h"
#include "sandbox_probe.h"
#include "util.h"

void
kist_probe_clear (struct kist_probe *p)
{
  for (size_t i = 0; i < p->n; i++)
    {
      free (p->rows[i].layer);
      free (p->rows[i].text);
      free (p->rows[i].fix);
    }
  free (p->rows);
  free (p->user);
  memset (p, 0, sizeof *p);
}

void
kist_probe_add (struct kist_probe *p, const char *layer, bool requested, bool available,
                const char *fix, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  p->rows = xrealloc (p->rows, (p->n + 1) * sizeof *p->rows);
  p->rows[p->n++] = (struct kist_probe_row){ .layer = xstrdup (layer), .requested = requested,
                                             .available = available, .text = xvasprintf (fmt, ap),
                                             .fix = xstrdup (fix) };
  va_end (ap);
}

const char *
kist_probe_can (const struct kist_probe_row *row)
{
  if (!row->requested)
    return "-";
  if (!row->available)
    return "no";
  return row->degraded ? "degraded" : "yes";
}

int
kist_probe_status (const struct kist_probe *p)
{
  for (size_t i = 0; i < p->n; i++)
    if (p->rows[i].requested && !p->rows[i].available)
      return 1;
  return 0;
}

char *
kist_probe_summary (const struct kist_probe *p)
{
  _cleanup_report_ struct kist_report *r = kist_report_new ("probe", "sandbox", p->policy);
  _cleanup_free_ char *names = xstrdup ("");
  size_t n = 0, allowed = 0;
  for (size_t i = 0; i < p->n; i++)
    {
      const struct kist_probe_row *row = &p->rows[i];
      if (!row->requested || row->available)
        continue;
      char *more = xasprintf ("%s%s%s", names, n ? ", " : "", row->layer);
      free (names);
      names = more;
      n++;
      allowed += kist_report_may_degrade (r, row->layer);
    }
  if (n == 0)
    return xstrdup ("every requested layer can be applied");
  if (allowed == n)
    return xasprintf ("cannot be applied: %s; --allow-degraded lets a sandbox with these options "
                      "run without %s",
                      names, n > 1 ? "them" : "it");
  return xasprintf ("cannot be applied: %s; a sandbox with these options would refuse to run "
                    "(--allow-degraded LAYER lets it run without a layer)",
                    names);
}

char *
kist_probe_json (const struct kist_probe *p)
{
  struct kist_jgen g = { .g = kist_json_gen_new (true, false) };
  _cleanup_free_ char *summary = kist_probe_summary (p);
  kist_jgen_map_open (&g);
  kist_jgen_kint (&g, "probeVersion", KIST_PROBE_VERSION);
  kist_jgen_str (&g, "user");
  kist_jgen_map_open (&g);
  kist_jgen_kint (&g, "uid", (long long) p->uid);
  kist_jgen_kint (&g, "gid", (long long) p->gid);
  kist_jgen_kstr (&g, "name", p->user);
  kist_jgen_map_close (&g);
  kist_jgen_str (&g, "layers");
  kist_jgen_array_open (&g);
  for (size_t i = 0; i < p->n; i++)
    {
      const struct kist_probe_row *row = &p->rows[i];
      kist_jgen_map_open (&g);
      kist_jgen_kstr (&g, "layer", row->layer);
      kist_jgen_kbool (&g, "requested", row->requested);
      kist_jgen_kbool (&g, "available", row->available);
      if (row->degraded)
        kist_jgen_kbool (&g, "degraded", true);
      kist_jgen_kstr (&g, row->available ? "detail" : "reason", row->text);
      if (row->fix)
        kist_jgen_kstr (&g, "fix", row->fix);
      kist_jgen_map_close (&g);
    }
  kist_jgen_array_close (&g);
  kist_jgen_kstr (&g, "summary", summary);
  kist_jgen_kint (&g, "status", kist_probe_status (p));
  kist_jgen_map_close (&g);
  char *json = kist_json_gen_take (g.g);
  yajl_gen_free (g.g);
  size_t len = strlen (json);
  if (len == 0 || json[len - 1] != '\n')
    {
      json = xrealloc (json, len + 2);
      memcpy (json + len, "\n", 2);
    }
  return json;
}

char *
kist_probe_table (const struct kist_probe *p)
{
  int w = (int) strlen ("LAYER");
  for (size_t i = 0; i < p->n; i++)
    if ((int) strlen (p->rows[i].layer) > w)
      w = (int) strlen (p->rows[i].layer);
  _cleanup_free_ char *summary = kist_probe_summary (p);
  char *out = xasprintf ("%-*s  %-8s  %s\n", w, "LAYER", "APPLY", "DETAIL OR REASON");
  for (size_t i = 0; i < p->n; i++)
    {
      const struct kist_probe_row *row = &p->rows[i];
      char *more = xasprintf ("%s%-*s  %-8s  %s%s\n", out, w, row->layer, kist_probe_can (row),
                              row->requested ? "" : "not requested: ", row->text);
      free (out);
      out = more;
      if (row->fix)
        {
          more = xasprintf ("%s%-*s  %-8s  fix: %s\n", out, w, "", "", row->fix);
          free (out);
          out = more;
        }
    }
  char *all = xasprintf ("%s\nuser: uid %u (%s), gid %u\nsummary: %s\n", out, (unsigned) p->uid,
                         p->user, (unsigned) p->gid, summary);
  free (out);
  return all;
}

void
kist_probe_split_hint (const char *hint, char **reason, char **fix)
{
  const char *colon = strstr (hint, ": ");
  if (colon == NULL)
    {
      *reason = xstrdup (hint);
      *fix = NULL;
      return;
    }
  *reason = xasprintf ("%.*s", (int) (colon - hint), hint);
  *fix = xstrdup (colon + 2);
}

bool
kist_probe_word_in (const char *list, const char *word)
{
  if (list == NULL)
    return false;
  _cleanup_free_ char *copy = xstrdup (list);
  char *save = NULL;
  for (char *t = strtok_r (copy, " \n", &save); t; t = strtok_r (NULL, " \n", &save))
    if (strcmp (t, word) == 0)
      return true;
  return false;
}

