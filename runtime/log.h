/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: logging.  Errors go to stderr as text and, with --log FILE, to that
 * file as text or as JSON lines {"level":"error","msg":"...","time":"..."}
 * (what engines read; the last error line must name the cause). */
#ifndef KIST_LOG_H
#define KIST_LOG_H

#include <stdbool.h>

void kist_log_init (const char *path, bool json, bool debug);
/* The --log file's fd, -1 if none (kept open by a container's init). */
int kist_log_fd (void);
void kist_log_error (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));
void kist_log_warn (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));
void kist_log_debug (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));

/* --debug: one debug line for a report entry, called by report.c where an
 * entry is recorded (requested NULL: not requested; "" : requested).  Only
 * the process that called kist_log_init logs: an entry recorded in a
 * container's init (whose stderr may be the container's) is logged by the
 * parent when it receives it.  In JSON the line also has "layer" and
 * "applied" fields. */
void kist_log_layer (const char *name, const char *requested, bool applied, int errnum,
                     const char *reason, const char *detail);

#endif
