/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: the per-layer report: record entries, apply the degrade policy,
 * serialise (JSON via yajl_gen, the child->parent wire format) and render
 * the stored JSON as a text table.  See design.md section 3. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "json.h"
#include "layer.h"
#include "log.h"
#include "report.h"
#include "report_int.h"
#include "spec_json.h"
#include "util.h"

#ifndef KIST_VERSION
#define KIST_VERSION "0.1.0"
#endif

#define KIST_REPORT_VERSION 1

/* ---- recording ---------------------------------------------------------- */

struct kist_report *
kist_report_new (const char *id, const char *operation, const char *allow_degraded)
{
  struct kist_report *r = xcalloc (1, sizeof *r);
  r->id = xstrdup (id);
  r->operation = xstrdup (operation);
  r->allow_degraded = xstrdup (allow_degraded);
  return r;
}

void
kist_layer_clear (struct kist_layer *l)
{
  if (l == NULL)
    return;
  free (l->name);
  free (l->requested);
  free (l->reason);
  free (l->detail);
  free (l->expect);
  memset (l, 0, sizeof *l);
}

void
kist_report_free (struct kist_report *r)
{
  if (r == NULL)
    return;
  for (size_t i = 0; i < r->n_layers; i++)
    kist_layer_clear (&r->layers[i]);
  free (r->layers);
  free (r->id);
  free (r->operation);
  free (r->allow_degraded);
  free (r);
}

/* One token of --allow-degraded against a layer name.  "all" matches
 * everything; "P.*" matches every name starting with "P." (not "P" itself:
 * the policy fails closed, name the base layer explicitly to let it degrade);
 * anything else must match exactly. */
static bool
policy_token_matches (const char *tok, size_t tl, const char *name)
{
  size_t nl = strlen (name);
  if (tl == 3 && memcmp (tok, "all", 3) == 0)
    return true;
  if (tl >= 3 && tok[tl - 1] == '*' && tok[tl - 2] == '.')
    return nl > tl - 1 && memcmp (name, tok, tl - 1) == 0;
  return tl == nl && memcmp (tok, name, nl) == 0;
}

bool
kist_report_may_degrade (const struct kist_report *r, const char *name)
{
  if (r == NULL || r->allow_degraded == NULL || name == NULL)
    return false;
  const char *p = r->allow_degraded;
  while (*p)
    {
      const char *c = strchr (p, ',');
      size_t l = c ? (size_t) (c - p) : strlen (p);
      /* Tolerate blanks around the commas ("seccomp, rlimit.*"). */
      const char *t = p;
      while (l > 0 && (*t == ' ' || *t == '\t'))
        t++, l--;
      while (l > 0 && (t[l - 1] == ' ' || t[l - 1] == '\t'))
        l--;
      if (l > 0 && policy_token_matches (t, l, name))
        return true;
      if (c == NULL)
        break;
      p = c + 1;
    }
  return false;
}

/* Every entry is one the registry declares (layer.c), and at most once per
 * report: a name outside it, or twice, is a bug in kist, never a state a
 * user could reach; it stops kist before a report could say it.  A report
 * read back from JSON (an older kist's, say) is not checked. */
static void
check_vocabulary (const struct kist_report *r, const char *name)
{
  if (!kist_layer_known (name))
    {
      fprintf (stderr, "kist: internal error: report entry `%s` is not in the layer registry "
                       "(runtime/layer.c)\n", name);
      abort ();
    }
  /* Every row against every earlier one: the first byte before strcmp
   * (~120 rows, most names differ there). */
  for (size_t i = 0; i < r->n_layers; i++)
    if (r->layers[i].name[0] == name[0] && strcmp (r->layers[i].name, name) == 0)
      {
        fprintf (stderr, "kist: internal error: report entry `%s` recorded twice in one "
                         "operation (%s)\n", name, r->operation ? r->operation : "?");
        abort ();
      }
}

static struct kist_layer *
report_append (struct kist_report *r)
{
  if (r->n_layers == r->cap_layers)
    {
      r->cap_layers = r->cap_layers ? r->cap_layers * 2 : 32;
      r->layers = xrealloc (r->layers, r->cap_layers * sizeof *r->layers);
    }
  struct kist_layer *l = &r->layers[r->n_layers++];
  memset (l, 0, sizeof *l);
  return l;
}

static void
note_exec (struct kist_report *r, const char *name)
{
  if (strcmp (name, "exec") == 0)
    r->exec_recorded = true;
}

/* --debug: one log line per entry, as it is recorded.  An entry recorded in
 * a container's init is not logged there (log.c only logs in the process
 * that called kist_log_init): the parent logs it when kist_report_add
 * receives it.  A report read back from JSON logs nothing. */
static void
debug_hook (const struct kist_layer *l)
{
  kist_log_layer (l->name, l->requested, l->applied, l->errnum, l->reason, l->detail);
}

static char *
vformat_or_null (const char *fmt, va_list ap)
{
  if (fmt == NULL || fmt[0] == '\0')
    return NULL;
  return xvasprintf (fmt, ap);
}

/* One of kist's own recordings (skip, applied, failed): checked against the
 * registry, appended, logged; detail is taken over. */
static void
record (struct kist_report *r, const char *name, const char *requested, bool applied,
        int errnum, const char *reason, char *detail)
{
  check_vocabulary (r, name);
  struct kist_layer *l = report_append (r);
  l->name = xstrdup (name);
  l->requested = xstrdup (requested);
  l->applied = applied;
  l->errnum = errnum;
  l->reason = xstrdup (reason);
  l->detail = detail;
  note_exec (r, name);
  debug_hook (l);
}

/* kist_report_skip and kist_report_applied: detail from fmt. */
static void
record_fmt (struct kist_report *r, const char *name, const char *requested, bool applied,
            const char *fmt, va_list ap)
{
  if (r != NULL && name != NULL)
    record (r, name, requested, applied, 0, NULL, vformat_or_null (fmt, ap));
}

void
kist_report_skip (struct kist_report *r, const char *name, const char *detail_fmt, ...)
{
  va_list ap;
  va_start (ap, detail_fmt);
  record_fmt (r, name, NULL, false, detail_fmt, ap);
  va_end (ap);
}

void
kist_report_applied (struct kist_report *r, const char *name, const char *requested,
                     const char *detail_fmt, ...)
{
  va_list ap;
  va_start (ap, detail_fmt);
  record_fmt (r, name, requested ? requested : "", true, detail_fmt, ap);
  va_end (ap);
}

/* The reason as shown to people: the recorded text, else strerror. */
static const char *
reason_text (const char *reason, int errnum)
{
  if (reason && reason[0])
    return reason;
  if (errnum > 0)
    return strerror (errnum);
  return "unknown reason";
}

/* A layer that was not applied: 0 when --allow-degraded names it, else fail
 * closed.  The message is built without errnum (so that strerror is not
 * appended after the hint), then errnum is kept in the error. */
static int
fail_closed (const struct kist_report *r, const char *name, const char *reason, int errnum,
             struct kist_error **err)
{
  if (kist_report_may_degrade (r, name))
    return 0;
  bool created = err != NULL && *err == NULL;
  kist_error_make (err, 0,
                   "layer %s not applied: %s (allow it to degrade with --allow-degraded %s)", name,
                   reason, name);
  if (created && *err)
    (*err)->errnum = errnum;
  return errnum > 0 ? -errnum : -1;
}

int
kist_report_failed (struct kist_report *r, const char *name, const char *requested, int errnum,
                    struct kist_error **err, const char *reason_fmt, ...)
{
  va_list ap;
  _cleanup_free_ char *reason = NULL;
  if (name == NULL)
    name = "?";
  if (errnum < 0)
    errnum = -errnum;

  va_start (ap, reason_fmt);
  reason = vformat_or_null (reason_fmt, ap);
  va_end (ap);

  if (r != NULL)
    record (r, name, requested ? requested : "", false, errnum, reason_text (reason, errnum),
            NULL);
  return fail_closed (r, name, reason_text (reason, errnum), errnum, err);
}

/* *src as the report's last row, its strings moved into the row (*src is
 * left cleared, also when there is no row to add). */
static struct kist_layer *
report_move (struct kist_report *r, struct kist_layer *src)
{
  if (r == NULL || src == NULL || src->name == NULL)
    {
      kist_layer_clear (src);
      return NULL;
    }
  struct kist_layer *l = report_append (r);
  *l = *src;
  memset (src, 0, sizeof *src);
  note_exec (r, l->name);
  return l;
}

/* report_move of a copy of *src. */
static struct kist_layer *
report_add (struct kist_report *r, const struct kist_layer *src)
{
  if (r == NULL || src == NULL || src->name == NULL)
    return NULL;
  struct kist_layer c = *src;
  c.name = xstrdup (src->name);
  c.requested = xstrdup (src->requested);
  c.reason = xstrdup (src->reason);
  c.detail = xstrdup (src->detail);
  c.expect = xstrdup (src->expect);
  return report_move (r, &c);
}

void
kist_report_add (struct kist_report *r, const struct kist_layer *src)
{
  /* Entries that come in (the sync socket: kist_sync_add_layer refuses a
   * name outside the registry or a second one) are not checked here. */
  struct kist_layer *l = report_add (r, src);
  if (l && l->expect == NULL) /* a pending one: logged once verified */
    debug_hook (l);
}

void
kist_report_add_moved (struct kist_report *r, struct kist_layer *src)
{
  struct kist_layer *l = report_move (r, src);
  if (l && l->expect == NULL) /* as kist_report_add */
    debug_hook (l);
}

void
kist_report_add_unfinished (struct kist_report *r, const struct kist_layer *src)
{
  if (r && src && src->name)
    check_vocabulary (r, src->name);
  report_add (r, src);
}

const struct kist_layer *
kist_report_find (const struct kist_report *r, const char *name)
{
  if (r == NULL || name == NULL)
    return NULL;
  /* The most recent entry of that name wins. */
  for (size_t i = r->n_layers; i > 0; i--)
    if (r->layers[i - 1].name[0] == name[0] && strcmp (r->layers[i - 1].name, name) == 0)
      return &r->layers[i - 1];
  return NULL;
}

/* ---- JSON --------------------------------------------------------------- */

/* Length of the valid UTF-8 sequence at s (at most n bytes), 0 if invalid. */
static size_t
utf8_seq_len (const unsigned char *s, size_t n)
{
  unsigned char c = s[0];
  size_t len;
  uint32_t cp;
  if (c < 0x80)
    return 1;
  if (c >= 0xc2 && c <= 0xdf)
    len = 2, cp = c & 0x1f;
  else if (c >= 0xe0 && c <= 0xef)
    len = 3, cp = c & 0x0f;
  else if (c >= 0xf0 && c <= 0xf4)
    len = 4, cp = c & 0x07;
  else
    return 0;
  if (n < len)
    return 0;
  for (size_t i = 1; i < len; i++)
    {
      if ((s[i] & 0xc0) != 0x80)
        return 0;
      cp = (cp << 6) | (s[i] & 0x3f);
    }
  if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff)))
      || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
    return 0;
  return len;
}

/* A copy of s where every invalid UTF-8 byte is replaced by U+FFFD, so that
 * whatever a layer (or the container side) wrote, the JSON stays parseable. */
static char *
utf8_sanitize (const char *s)
{
  size_t n = strlen (s);
  char *out = xmalloc (n * 3 + 1);
  size_t o = 0;
  for (size_t i = 0; i < n;)
    {
      size_t l = utf8_seq_len ((const unsigned char *) s + i, n - i);
      if (l == 0)
        {
          memcpy (out + o, "\xef\xbf\xbd", 3);
          o += 3;
          i++;
        }
      else
        {
          memcpy (out + o, s + i, l);
          o += l;
          i += l;
        }
    }
  out[o] = '\0';
  return out;
}

static void
gen_str (yajl_gen g, const char *s)
{
  if (s == NULL)
    s = "";
  /* Nearly every string is ASCII, which needs no sanitizing copy. */
  const unsigned char *u = (const unsigned char *) s;
  size_t n = 0;
  while (u[n] != '\0' && u[n] < 0x80)
    n++;
  if (u[n] == '\0')
    {
      kist_json_gen_string (g, s, n);
      return;
    }
  _cleanup_free_ char *clean = utf8_sanitize (s);
  yajl_gen_string (g, (const unsigned char *) clean, strlen (clean));
}

static void
gen_key_str (yajl_gen g, const char *key, const char *val)
{
  gen_str (g, key);
  gen_str (g, val);
}

static bool
layer_missing (const struct kist_layer *l)
{
  return l->requested != NULL && !l->applied;
}

/* Names of the requested, not applied layers of a group, for the summary:
 * "seccomp (not implemented), rlimit.RLIMIT_NOFILE (Operation not permitted)".
 * Returns NULL when nothing is missing; *n_requested counts requested ones.
 * groups[i] is the group of r->layers[i] (needed unless grp is -1: all). */
static char *
group_missing_text (const struct kist_report *r, const enum kist_group *groups, int grp,
                    size_t *n_requested)
{
  char *buf = NULL;
  size_t sz = 0;
  FILE *f = open_memstream (&buf, &sz);
  bool any = false;
  if (f == NULL)
    abort ();
  *n_requested = 0;
  for (size_t i = 0; i < r->n_layers; i++)
    {
      const struct kist_layer *l = &r->layers[i];
      if ((grp >= 0 && (int) groups[i] != grp) || l->requested == NULL)
        continue;
      (*n_requested)++;
      if (!layer_missing (l))
        continue;
      fprintf (f, "%s%s (%s)", any ? ", " : "", l->name, reason_text (l->reason, l->errnum));
      any = true;
    }
  fclose (f);
  if (!any)
    {
      free (buf);
      return NULL;
    }
  return buf;
}

char *
kist_report_missing_text (const struct kist_report *r)
{
  size_t n = 0;
  return r ? group_missing_text (r, NULL, -1, &n) : NULL;
}

static void
gen_group (yajl_gen g, const struct kist_report *r, const enum kist_group *groups,
           const char *key, enum kist_group grp)
{
  bool applied = true;
  gen_str (g, key);
  yajl_gen_map_open (g);
  for (size_t i = 0; i < r->n_layers; i++)
    if (groups[i] == grp && layer_missing (&r->layers[i]))
      applied = false;
  gen_str (g, "applied");
  yajl_gen_bool (g, applied);
  gen_str (g, "missing");
  yajl_gen_array_open (g);
  for (size_t i = 0; i < r->n_layers; i++)
    {
      const struct kist_layer *l = &r->layers[i];
      if (groups[i] != grp || !layer_missing (l))
        continue;
      /* Each name once, even if a layer was recorded twice. */
      bool seen = false;
      for (size_t j = 0; j < i && !seen; j++)
        seen = groups[j] == grp && layer_missing (&r->layers[j])
               && strcmp (r->layers[j].name, l->name) == 0;
      if (!seen)
        gen_str (g, l->name);
    }
  yajl_gen_array_close (g);
  yajl_gen_map_close (g);
}

static char *
report_summary (const struct kist_report *r, const enum kist_group *layer_groups)
{
  static const struct
  {
    enum kist_group grp;
    const char *name;
  } groups[] = { { KIST_GROUP_CONFINEMENT, "confinement" },
                 { KIST_GROUP_LIMITS, "limits" },
                 { KIST_GROUP_OTHER, "other" } };
  char *buf = NULL;
  size_t sz = 0;
  FILE *f = open_memstream (&buf, &sz);
  if (f == NULL)
    abort ();
  for (size_t i = 0; i < KIST_ARRAY_SIZE (groups); i++)
    {
      size_t n_req = 0;
      _cleanup_free_ char *missing = group_missing_text (r, layer_groups, groups[i].grp, &n_req);
      const char *sep = i ? "; " : "";
      if (groups[i].grp == KIST_GROUP_OTHER)
        {
          /* "other" is only mentioned when something in it failed. */
          if (missing)
            fprintf (f, "%sother NOT applied: %s", sep, missing);
        }
      else if (missing)
        fprintf (f, "%s%s NOT applied: %s", sep, groups[i].name, missing);
      else if (n_req == 0)
        fprintf (f, "%s%s none requested", sep, groups[i].name);
      else
        fprintf (f, "%s%s applied", sep, groups[i].name);
    }
  fclose (f);
  return buf;
}

/* gen_str's string in a hand-written object. */
static void
raw_str (struct kist_json_raw *b, const char *s)
{
  if (s == NULL)
    s = "";
  size_t n = strlen (s);
  const unsigned char *u = (const unsigned char *) s;
  size_t i = kist_json_plain_prefix (s, n);
  while (i < n && u[i] < 0x80)
    i++;
  if (i == n) /* ASCII: nothing to sanitize */
    {
      kist_json_raw_str (b, s, n);
      return;
    }
  _cleanup_free_ char *clean = utf8_sanitize (s);
  kist_json_raw_str (b, clean, strlen (clean));
}

/* One row, as gen_layer writes it, by hand: the same text (test_report
 * compares), a sixth of the time. */
static void
gen_layer_raw (yajl_gen g, struct kist_json_raw *b, const struct kist_layer *l, bool pretty,
               unsigned depth)
{
  kist_json_raw_open (b, pretty, depth);
  kist_json_raw_key (b, "layer");
  raw_str (b, l->name);
  kist_json_raw_key (b, "requested");
  if (l->requested == NULL || l->requested[0] == '\0')
    kist_json_raw_bool (b, l->requested != NULL);
  else
    raw_str (b, l->requested);
  kist_json_raw_key (b, "applied");
  kist_json_raw_bool (b, l->applied);
  if (l->detail)
    {
      kist_json_raw_key (b, "detail");
      raw_str (b, l->detail);
    }
  if (l->step > 0)
    {
      kist_json_raw_key (b, "step");
      kist_json_raw_int (b, l->step);
      kist_json_raw_key (b, "usec");
      kist_json_raw_int (b, l->usec);
    }
  if (layer_missing (l))
    {
      kist_json_raw_key (b, "errno");
      raw_str (b, kist_errno_name (l->errnum));
      kist_json_raw_key (b, "reason");
      raw_str (b, reason_text (l->reason, l->errnum));
    }
  kist_json_raw_end (b, g);
}

/* The row through yajl's calls: what gen_layer_raw must write
 * (kist_report_to_json_yajl, for the unit test). */
static void
gen_layer (yajl_gen g, const struct kist_layer *l)
{
  yajl_gen_map_open (g);
  gen_key_str (g, "layer", l->name);
  gen_str (g, "requested");
  if (l->requested == NULL)
    yajl_gen_bool (g, 0);
  else if (l->requested[0] == '\0')
    yajl_gen_bool (g, 1);
  else
    gen_str (g, l->requested);
  gen_str (g, "applied");
  yajl_gen_bool (g, l->applied);
  if (l->detail)
    gen_key_str (g, "detail", l->detail);
  if (l->step > 0)
    {
      gen_str (g, "step");
      kist_json_gen_integer (g, l->step);
      gen_str (g, "usec");
      kist_json_gen_integer (g, l->usec);
    }
  if (layer_missing (l))
    {
      gen_key_str (g, "errno", kist_errno_name (l->errnum));
      gen_key_str (g, "reason", reason_text (l->reason, l->errnum));
    }
  yajl_gen_map_close (g);
}

/* "timing": the sum of the rows' times (each row once) and, once the
 * execve was seen, the time from kist's start to it. */
static void
gen_timing (yajl_gen g, const struct kist_report *r)
{
  int64_t rows = 0;
  unsigned last = 0;
  size_t n = 0;
  for (size_t i = 0; i < r->n_layers; i++)
    if (r->layers[i].step > 0 && r->layers[i].step != last)
      {
        last = r->layers[i].step;
        rows += r->layers[i].usec;
        n++;
      }
  if (n == 0 && r->startup_usec <= 0)
    return;
  gen_str (g, "timing");
  yajl_gen_map_open (g);
  gen_str (g, "layersUsec");
  kist_json_gen_integer (g, rows);
  if (r->startup_usec > 0)
    {
      gen_str (g, "startupUsec");
      kist_json_gen_integer (g, r->startup_usec);
    }
  yajl_gen_map_close (g);
}

void
kist_report_time_step (struct kist_report *r, size_t from, unsigned step, int64_t usec)
{
  for (size_t i = from; r && i < r->n_layers; i++)
    if (r->layers[i].step == 0)
      {
        r->layers[i].step = step;
        r->layers[i].usec = usec;
      }
}

void
kist_report_time_startup (struct kist_report *r)
{
  if (r && kist_started_usec > 0)
    r->startup_usec = kist_monotonic_usec () - kist_started_usec;
}

static char *
report_to_json (const struct kist_report *r, bool pretty, bool rows_by_hand)
{
  if (r == NULL)
    return NULL;
  _cleanup_yajl_gen_ yajl_gen g = kist_json_gen_new (pretty, false);

  yajl_gen_map_open (g);
  gen_str (g, "reportVersion");
  kist_json_gen_integer (g, KIST_REPORT_VERSION);
  gen_key_str (g, "kist", KIST_VERSION);
  if (r->id)
    gen_key_str (g, "id", r->id);
  if (r->operation)
    gen_key_str (g, "operation", r->operation);
  if (r->pid > 0)
    {
      gen_str (g, "pid");
      kist_json_gen_integer (g, r->pid);
    }

  gen_str (g, "allowDegraded");
  yajl_gen_array_open (g);
  for (const char *p = r->allow_degraded; p && *p;)
    {
      const char *c = strchr (p, ',');
      size_t l = c ? (size_t) (c - p) : strlen (p);
      while (l > 0 && (*p == ' ' || *p == '\t'))
        p++, l--;
      while (l > 0 && (p[l - 1] == ' ' || p[l - 1] == '\t'))
        l--;
      if (l > 0)
        {
          _cleanup_free_ char *tok = strndup (p, l);
          if (tok == NULL)
            abort ();
          gen_str (g, tok);
        }
      if (c == NULL)
        break;
      p = c + 1;
    }
  yajl_gen_array_close (g);

  gen_str (g, "layers");
  yajl_gen_array_open (g);
  struct kist_json_raw rb = { 0 };
  for (size_t i = 0; i < r->n_layers; i++)
    if (rows_by_hand)
      gen_layer_raw (g, &rb, &r->layers[i], pretty, 2); /* in the layers array, in the report */
    else
      gen_layer (g, &r->layers[i]);
  kist_json_raw_free (&rb);
  yajl_gen_array_close (g);

  /* Each layer's group, looked up once for the groups and the summary. */
  _cleanup_free_ enum kist_group *groups = xcalloc (r->n_layers + 1, sizeof *groups);
  for (size_t i = 0; i < r->n_layers; i++)
    groups[i] = kist_layer_group (r->layers[i].name);
  gen_timing (g, r);
  gen_group (g, r, groups, "confinement", KIST_GROUP_CONFINEMENT);
  gen_group (g, r, groups, "limits", KIST_GROUP_LIMITS);

  _cleanup_free_ char *summary = report_summary (r, groups);
  gen_key_str (g, "summary", summary);
  yajl_gen_map_close (g);

  return kist_json_gen_take (g);
}

char *
kist_report_to_json (const struct kist_report *r, bool pretty)
{
  return report_to_json (r, pretty, true);
}

char *
kist_report_to_json_yajl (const struct kist_report *r, bool pretty)
{
  return report_to_json (r, pretty, false);
}

/* ---- writing ------------------------------------------------------------ */

/* The pretty JSON report and a final newline; *len is its length.  NULL
 * when r is NULL. */
static char *
report_json_line (const struct kist_report *r, size_t *len)
{
  char *json = kist_report_to_json (r, true);
  if (json == NULL)
    return NULL;
  size_t n = strlen (json);
  json = xrealloc (json, n + 2);
  json[n] = '\n';
  json[n + 1] = '\0';
  *len = n + 1;
  return json;
}

int
kist_report_write_fd (const struct kist_report *r, int fd, struct kist_error **err)
{
  size_t len = 0;
  _cleanup_free_ char *json = report_json_line (r, &len);
  if (json == NULL)
    return kist_error_make (err, EINVAL, "report: nothing to write");
  int ret = kist_write_all (fd, json, len);
  if (ret < 0)
    return kist_error_make (err, -ret, "write the report to fd %d", fd);
  return 0;
}

int
kist_report_write_at (const struct kist_report *r, int dirfd, const char *name, mode_t mode,
                      struct kist_error **err)
{
  size_t len = 0;
  _cleanup_free_ char *json = report_json_line (r, &len);
  if (json == NULL)
    return kist_error_make (err, EINVAL, "report: nothing to write");
  if (kist_write_file_atomic (dirfd, name, json, len, mode, err) < 0)
    return kist_error_wrap (err, "write the report");
  return 0;
}

int
kist_report_write_path (const struct kist_report *r, const char *path, struct kist_error **err)
{
  if (path == NULL || path[0] == '\0')
    return kist_error_make (err, EINVAL,
                            "--report: empty path (use a file name or `-` for stdout)");
  if (strcmp (path, "-") == 0)
    return kist_report_write_fd (r, STDOUT_FILENO, err);

  size_t len = 0;
  _cleanup_free_ char *json = report_json_line (r, &len);
  if (json == NULL)
    return kist_error_make (err, EINVAL, "report: nothing to write");
  if (kist_write_file_atomic_path (path, json, len, 0644, err) < 0)
    return kist_error_wrap (err, "--report `%s`: write the report", path);
  return 0;
}

/* One stored entry of "layers" (also report_text.c). */
struct layer_json
report_layer_json_get (yajl_val l)
{
  yajl_val req = spec_peek (l, "requested");
  yajl_val applied = spec_peek (l, "applied");
  return (struct layer_json){
    .name = spec_peek_str (l, "layer"),
    .req = spec_peek_str (l, "requested"),
    .detail = spec_peek_str (l, "detail"),
    .eno = spec_peek_str (l, "errno"),
    .reason = spec_peek_str (l, "reason"),
    .req_true = YAJL_IS_TRUE (req),
    .req_given = req != NULL && !YAJL_IS_FALSE (req),
    .applied = YAJL_IS_TRUE (applied),
    .step = YAJL_IS_INTEGER (spec_peek (l, "step")) ? YAJL_GET_INTEGER (spec_peek (l, "step")) : 0,
    .usec = YAJL_IS_INTEGER (spec_peek (l, "usec")) ? YAJL_GET_INTEGER (spec_peek (l, "usec")) : -1,
  };
}

/* Printable copy for a terminal: control characters become '?'. */

/* ---- JSON -> report (the stored report.json, for `kist start`) ---------- */

struct kist_report *
kist_report_from_json (const char *json, size_t len, struct kist_error **err)
{
  _cleanup_yajl_ yajl_val tree = NULL;
  if (spec_parse_object (json, len, "report.json: ", &tree, err) < 0)
    return NULL;
  const char *id = spec_peek_str (tree, "id"), *op = spec_peek_str (tree, "operation");
  yajl_val pid = spec_peek (tree, "pid");
  yajl_val layers = spec_peek (tree, "layers");
  yajl_val allow = spec_peek (tree, "allowDegraded");
  yajl_val startup = spec_peek (spec_peek (tree, "timing"), "startupUsec");
  if (id == NULL || op == NULL || !YAJL_IS_ARRAY (layers))
    {
      kist_error_make (err, EINVAL, "report.json: missing id, operation or layers");
      return NULL;
    }
  _cleanup_free_ char *csv = NULL;
  if (YAJL_IS_ARRAY (allow))
    for (size_t i = 0; i < allow->u.array.len; i++)
      if (YAJL_IS_STRING (allow->u.array.values[i]))
        {
          char *n = xasprintf ("%s%s%s", csv ? csv : "", csv ? "," : "",
                               YAJL_GET_STRING (allow->u.array.values[i]));
          free (csv);
          csv = n;
        }
  struct kist_report *r = kist_report_new (id, op, csv);
  if (YAJL_IS_INTEGER (pid))
    r->pid = (pid_t) YAJL_GET_INTEGER (pid);
  if (YAJL_IS_INTEGER (startup))
    r->startup_usec = YAJL_GET_INTEGER (startup);
  for (size_t i = 0; i < layers->u.array.len; i++)
    {
      struct layer_json v = report_layer_json_get (layers->u.array.values[i]);
      if (v.name == NULL)
        continue;
      struct kist_layer l = { .name = (char *) v.name };
      l.requested = (char *) (v.req ? v.req : v.req_true ? "" : NULL);
      l.applied = v.applied;
      l.detail = (char *) v.detail;
      l.reason = (char *) v.reason;
      if (v.step > 0 && v.usec >= 0)
        l.step = (unsigned) v.step, l.usec = v.usec;
      if (v.eno)
        for (int n = 1; n < 4096; n++)
          if (strcmp (kist_errno_name (n), v.eno) == 0)
            {
              l.errnum = n;
              break;
            }
      report_add (r, &l); /* read back: logged when it was recorded */
    }
  return r;
}

void
kist_report_note (struct kist_report *r, const char *name, const char *fmt, ...)
{
  if (r == NULL)
    return;
  for (size_t i = r->n_layers; i > 0; i--)
    {
      struct kist_layer *l = &r->layers[i - 1];
      if (strcmp (l->name, name) != 0)
        continue;
      va_list ap;
      va_start (ap, fmt);
      _cleanup_free_ char *more = vformat_or_null (fmt, ap);
      va_end (ap);
      char *d = xasprintf ("%s%s", l->detail ? l->detail : "", more ? more : "");
      free (l->detail);
      l->detail = d;
      return;
    }
}

/* ---- verification from outside (verify.c) ------------------------------ */

void
kist_report_expect (struct kist_report *r, const char *name, const char *fmt, ...)
{
  if (r == NULL || name == NULL)
    return;
  for (size_t i = r->n_layers; i > 0; i--)
    {
      struct kist_layer *l = &r->layers[i - 1];
      if (strcmp (l->name, name) != 0)
        continue;
      if (!l->applied)
        return; /* a failure is final */
      va_list ap;
      va_start (ap, fmt);
      char *e = vformat_or_null (fmt, ap);
      va_end (ap);
      free (l->expect);
      l->expect = e ? e : xstrdup ("");
      return;
    }
}

void
kist_layer_make_pending (struct kist_layer *l)
{
  if (l == NULL || l->expect == NULL)
    return;
  if (!l->applied)
    {
      /* Not applied in the child: final, nothing to verify. */
      free (l->expect);
      l->expect = NULL;
      return;
    }
  l->applied = false;
  free (l->reason);
  l->reason = xstrdup ("not verified from outside yet (the parent reads the process's "
                       "/proc/PID files when it is ready)");
}

void
kist_report_verified (struct kist_report *r, size_t i, const char *fmt, ...)
{
  if (r == NULL || i >= r->n_layers)
    return;
  struct kist_layer *l = &r->layers[i];
  va_list ap;
  va_start (ap, fmt);
  _cleanup_free_ char *note = fmt ? vformat_or_null (fmt, ap) : NULL;
  va_end (ap);
  bool was_pending = l->expect != NULL;
  if (was_pending)
    {
      l->applied = true;
      l->errnum = 0;
      free (l->reason);
      l->reason = NULL;
      free (l->expect);
      l->expect = NULL;
    }
  if (note)
    {
      char *d = l->detail && l->detail[0] ? xasprintf ("%s; %s", l->detail, note)
                                          : xstrdup (note);
      free (l->detail);
      l->detail = d;
    }
  if (was_pending)
    debug_hook (l);
}

int
kist_report_unverified (struct kist_report *r, size_t i, int errnum, struct kist_error **err,
                        const char *fmt, ...)
{
  if (r == NULL || i >= r->n_layers)
    return kist_error_make (err, EINVAL, "kist_report_unverified: no such entry");
  struct kist_layer *l = &r->layers[i];
  va_list ap;
  va_start (ap, fmt);
  _cleanup_free_ char *reason = vformat_or_null (fmt, ap);
  va_end (ap);
  if (errnum < 0)
    errnum = -errnum;
  l->applied = false;
  l->errnum = errnum;
  free (l->reason);
  l->reason = xstrdup (reason_text (reason, errnum));
  free (l->expect);
  l->expect = NULL;
  debug_hook (l);
  return fail_closed (r, l->name, l->reason, errnum, err);
}
