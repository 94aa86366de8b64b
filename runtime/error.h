/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: errors. Every fallible function returns a negative value and fills a
 * struct kist_error whose message names the cause (file, layer, config path)
 * and, where we know it, the fix. */
#ifndef KIST_ERROR_H
#define KIST_ERROR_H

#include <stdarg.h>
#include <stddef.h>

/* Exit codes (design.md section 4). */
#define KIST_EXIT_FAILURE 125   /* kist itself failed before the container ran */
#define KIST_EXIT_NOEXEC 126    /* command found but not executable */
#define KIST_EXIT_NOTFOUND 127  /* command not found */
#define KIST_EXIT_TIMEOUT 124   /* sandbox timeout */

struct kist_error
{
  int errnum;   /* errno value, 0 when not an OS error */
  int status;   /* suggested exit status (0 = KIST_EXIT_FAILURE) */
  char *msg;    /* full message, without a trailing newline */
};

/* Set *err (if err != NULL and *err == NULL) to a new error.  The message is
 * fmt, followed by ": strerror(errnum)" when errnum != 0.  Returns -errnum, or
 * -1 when errnum is 0.  If *err is already set it is left alone (the first
 * error wins) and the return value is the same. */
int kist_error_make (struct kist_error **err, int errnum, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));
int kist_error_makev (struct kist_error **err, int errnum, const char *fmt, va_list ap);

/* Prefix the existing message with context: "context: old message".
 * If *err is NULL, behaves like kist_error_make(err, 0, ...).  Returns the
 * same kind of value as kist_error_make for the existing error. */
int kist_error_wrap (struct kist_error **err, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

void kist_error_free (struct kist_error *e);
static inline void
kist_error_freep (struct kist_error **e)
{
  if (*e)
    kist_error_free (*e);
  *e = NULL;
}
#define _cleanup_error_ __attribute__ ((cleanup (kist_error_freep)))

/* Exit status for an error: e->status if set, else KIST_EXIT_FAILURE. */
int kist_error_exit_status (const struct kist_error *e);

/* errno name ("ENOENT"), "E?" for 0/unknown.  Never NULL. */
const char *kist_errno_name (int errnum);

#endif
