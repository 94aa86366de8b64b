/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: logging.  Errors go to stderr as text and, with --log FILE, to that
 * file as text or as JSON lines {"level":"error","msg":"...","time":"..."}
 * (what engines read; the last error line must name the cause). */
#ifndef KIST_LOG_H
#define KIST_LOG_H

#include <stdbool.h>

void kist_log_init (const char *path, bool json, bool debug);
void kist_log_error (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));
void kist_log_warn (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));
void kist_log_debug (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));

#endif
