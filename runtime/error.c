/* SPDX-License-Identifier: GPL-2.0-or-later */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"

int
kist_error_makev (struct kist_error **err, int errnum, const char *fmt, va_list ap)
{
  int ret = errnum > 0 ? -errnum : -1;
  if (err == NULL || *err != NULL)
    return ret;
  struct kist_error *e = calloc (1, sizeof *e);
  if (e == NULL)
    abort ();
  char *base = NULL;
  if (vasprintf (&base, fmt, ap) < 0)
    abort ();
  if (errnum > 0)
    {
      if (asprintf (&e->msg, "%s: %s", base, strerror (errnum)) < 0)
        abort ();
      free (base);
    }
  else
    e->msg = base;
  e->errnum = errnum;
  *err = e;
  return ret;
}

int
kist_error_make (struct kist_error **err, int errnum, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  int ret = kist_error_makev (err, errnum, fmt, ap);
  va_end (ap);
  return ret;
}

int
kist_error_wrap (struct kist_error **err, const char *fmt, ...)
{
  va_list ap;
  if (err == NULL)
    return -1;
  if (*err == NULL)
    {
      va_start (ap, fmt);
      int ret = kist_error_makev (err, 0, fmt, ap);
      va_end (ap);
      return ret;
    }
  char *prefix = NULL, *msg = NULL;
  va_start (ap, fmt);
  if (vasprintf (&prefix, fmt, ap) < 0)
    abort ();
  va_end (ap);
  if (asprintf (&msg, "%s: %s", prefix, (*err)->msg) < 0)
    abort ();
  free (prefix);
  free ((*err)->msg);
  (*err)->msg = msg;
  return (*err)->errnum > 0 ? -(*err)->errnum : -1;
}

void
kist_error_free (struct kist_error *e)
{
  if (e == NULL)
    return;
  free (e->msg);
  free (e);
}

int
kist_error_exit_status (const struct kist_error *e)
{
  if (e && e->status)
    return e->status;
  return KIST_EXIT_FAILURE;
}

const char *
kist_errno_name (int errnum)
{
  const char *n = errnum > 0 ? strerrorname_np (errnum) : NULL;
  return n ? n : "E?";
}
