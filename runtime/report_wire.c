/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: the child -> parent wire format of a report entry (split from report.c). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "report.h"
#include "util.h"

/* ---- child -> parent wire format --------------------------------------- */
/* Seven NUL-terminated fields (eight with an expectation), nothing after the last NUL:
 *   name                 1..KIST_LAYER_NAME_MAX printable ASCII bytes, no space
 *   requested            "0" (NULL) or "1" followed by the value
 *   applied              "0" or "1"
 *   errnum               decimal, 0..4095
 *   reason               "0" (NULL) or "1" followed by the text
 *   detail               "0" (NULL) or "1" followed by the text
 *   timing               "STEP USEC", both decimal ("0 0": not timed)
 * and an eighth only for an entry to be verified from outside:
 *   expect               "1" followed by the text */

#define KIST_LAYER_NAME_MAX 255

static bool
layer_name_ok (const char *s, size_t n)
{
  if (n == 0 || n > KIST_LAYER_NAME_MAX)
    return false;
  for (size_t i = 0; i < n; i++)
    if ((unsigned char) s[i] <= 0x20 || (unsigned char) s[i] >= 0x7f)
      return false;
  return true;
}

static void
put_field (char **p, const char *s, size_t n)
{
  memcpy (*p, s, n);
  (*p)[n] = '\0';
  *p += n + 1;
}

static void
put_opt_field (char **p, const char *s)
{
  if (s == NULL)
    put_field (p, "0", 1);
  else
    {
      **p = '1';
      (*p)++;
      put_field (p, s, strlen (s));
    }
}

int
kist_layer_encode (const struct kist_layer *l, char **buf, size_t *len)
{
  char num[16];
  if (l == NULL || buf == NULL || len == NULL || l->name == NULL)
    return -EINVAL;
  size_t nl = strlen (l->name);
  if (!layer_name_ok (l->name, nl))
    return -EINVAL;
  if (l->errnum < 0 || l->errnum > 4095)
    return -EINVAL;
  int numlen = snprintf (num, sizeof num, "%d", l->errnum);
  if (l->usec < 0 || l->usec > KIST_LAYER_USEC_MAX || (l->step == 0 && l->usec != 0))
    return -EINVAL;
  char timing[48];
  int tlen = snprintf (timing, sizeof timing, "%u %lld", l->step, (long long) l->usec);

  size_t total = nl + 1;
  total += 1 + (l->requested ? strlen (l->requested) : 0) + 1;
  total += 2;
  total += (size_t) numlen + 1;
  total += 1 + (l->reason ? strlen (l->reason) : 0) + 1;
  total += 1 + (l->detail ? strlen (l->detail) : 0) + 1;
  total += (size_t) tlen + 1;
  if (l->expect)
    total += 1 + strlen (l->expect) + 1;
  if (total > KIST_LAYER_ENCODED_MAX)
    return -EMSGSIZE;

  char *out = xmalloc (total);
  char *p = out;
  put_field (&p, l->name, nl);
  put_opt_field (&p, l->requested);
  put_field (&p, l->applied ? "1" : "0", 1);
  put_field (&p, num, (size_t) numlen);
  put_opt_field (&p, l->reason);
  put_opt_field (&p, l->detail);
  put_field (&p, timing, (size_t) tlen);
  if (l->expect)
    put_opt_field (&p, l->expect);
  if ((size_t) (p - out) != total)
    abort ();
  *buf = out;
  *len = total;
  return 0;
}

/* Take the next NUL-terminated field of [*p, end); NULL if there is none. */
static const char *
take_field (const char **p, const char *end, size_t *n)
{
  if (*p >= end)
    return NULL;
  const char *nul = memchr (*p, '\0', (size_t) (end - *p));
  if (nul == NULL)
    return NULL;
  const char *f = *p;
  *n = (size_t) (nul - f);
  *p = nul + 1;
  return f;
}

static int
take_opt_field (const char **p, const char *end, char **out)
{
  size_t n;
  const char *f = take_field (p, end, &n);
  if (f == NULL || n == 0)
    return -EINVAL;
  if (f[0] == '0')
    {
      if (n != 1)
        return -EINVAL;
      *out = NULL;
      return 0;
    }
  if (f[0] != '1')
    return -EINVAL;
  *out = strndup (f + 1, n - 1);
  if (*out == NULL)
    abort ();
  return 0;
}

/* A decimal number of at most 12 digits, no leading zero. */
static int
take_decimal (const char **s, const char *end, uint64_t *out)
{
  const char *p = *s;
  uint64_t v = 0;
  while (p < end && *p >= '0' && *p <= '9' && p - *s < 12)
    v = v * 10 + (uint64_t) (*p++ - '0');
  if (p == *s || (p - *s > 1 && **s == '0') || (p < end && *p >= '0' && *p <= '9'))
    return -EINVAL;
  *s = p;
  *out = v;
  return 0;
}

/* "STEP USEC": the one encoding kist_layer_encode writes. */
static int
take_timing (const char *f, size_t n, struct kist_layer *l)
{
  const char *p = f, *end = f + n;
  uint64_t step, usec;
  if (take_decimal (&p, end, &step) < 0 || p >= end || *p++ != ' '
      || take_decimal (&p, end, &usec) < 0 || p != end || step > UINT32_MAX
      || usec > KIST_LAYER_USEC_MAX || (step == 0 && usec != 0))
    return -EINVAL;
  l->step = (unsigned) step;
  l->usec = (int64_t) usec;
  return 0;
}

int
kist_layer_decode (const char *buf, size_t len, struct kist_layer *out)
{
  struct kist_layer l = { 0 };
  const char *p = buf, *end;
  const char *f;
  size_t n;
  int ret = -EINVAL;

  if (out == NULL)
    return -EINVAL;
  memset (out, 0, sizeof *out);
  if (buf == NULL || len == 0)
    return -EINVAL;
  if (len > KIST_LAYER_ENCODED_MAX)
    return -EMSGSIZE;
  end = buf + len;

  f = take_field (&p, end, &n);
  if (f == NULL || !layer_name_ok (f, n))
    goto fail;
  l.name = strndup (f, n);
  if (l.name == NULL)
    abort ();

  if (take_opt_field (&p, end, &l.requested) < 0)
    goto fail;

  f = take_field (&p, end, &n);
  if (f == NULL || n != 1 || (f[0] != '0' && f[0] != '1'))
    goto fail;
  l.applied = f[0] == '1';

  f = take_field (&p, end, &n);
  if (f == NULL || n == 0 || n > 4)
    goto fail;
  l.errnum = 0;
  for (size_t i = 0; i < n; i++)
    {
      if (f[i] < '0' || f[i] > '9' || (n > 1 && i == 0 && f[i] == '0'))
        goto fail;
      l.errnum = l.errnum * 10 + (f[i] - '0');
    }
  if (l.errnum > 4095)
    goto fail;

  if (take_opt_field (&p, end, &l.reason) < 0)
    goto fail;
  if (take_opt_field (&p, end, &l.detail) < 0)
    goto fail;
  f = take_field (&p, end, &n);
  if (f == NULL || take_timing (f, n, &l) < 0)
    goto fail;
  /* An expectation, only as a present field ("1..."): "0" there would be a
   * second encoding of the same entry. */
  if (p != end && (*p != '1' || take_opt_field (&p, end, &l.expect) < 0 || l.expect == NULL))
    goto fail;
  if (p != end)
    goto fail;

  *out = l;
  return 0;

fail:
  kist_layer_clear (&l);
  return ret;
}

