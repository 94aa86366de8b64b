/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: the per-layer report (design.md sections 2 and 3).
 *
 * A layer function records exactly one entry per layer name:
 *   - kist_report_skip():    not requested (e.g. network shared with the host);
 *   - kist_report_applied(): the syscall succeeded AND the read-back agreed;
 *   - kist_report_failed():  requested but not applied.  Returns 0 when the
 *     policy lets this layer degrade (the caller goes on), otherwise fills
 *     *err with "LAYER: reason" and returns a negative value (fail closed).
 *
 * Layer names form a fixed vocabulary documented in man/kist-report.5.  The
 * group (confinement / limits / other) is derived from the name. */
#ifndef KIST_REPORT_H
#define KIST_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"

enum kist_group
{
  KIST_GROUP_CONFINEMENT,
  KIST_GROUP_LIMITS,
  KIST_GROUP_OTHER
};

struct kist_layer
{
  char *name;          /* "namespace.net" */
  char *requested;     /* NULL: not requested (false); "" : requested (true);
                          otherwise the requested value as a string */
  bool applied;
  int errnum;          /* 0 when applied or not an OS error */
  char *reason;        /* why not applied (NULL when applied) */
  char *detail;        /* what was verified (may be NULL) */
  char *expect;        /* non-NULL: pending, to be verified from outside (verify.c):
                          what the kernel must show, "key=value ..." as the layer
                          wrote it.  The parent holds such an entry as not applied
                          until kist_report_verified; no written report has one. */
  unsigned step;       /* the registry row that recorded it, 1-based (layer.c); 0: recorded
                          outside the registry's loop (no time) */
  int64_t usec;        /* with step: how long that row took, in microseconds (every entry
                          of one row carries the row's time) */
};

struct kist_report
{
  char *id;
  char *operation;     /* "create", "run", "exec", "sandbox" */
  pid_t pid;
  char *allow_degraded;  /* comma-separated layer names or "all"; may be NULL */
  struct kist_layer *layers;
  size_t n_layers, cap_layers;
  bool exec_recorded;
  int64_t startup_usec;  /* from kist's start to the execve seen (0: not yet) */
};

struct kist_report *kist_report_new (const char *id, const char *operation,
                                     const char *allow_degraded);
void kist_report_free (struct kist_report *r);
static inline void
kist_report_freep (struct kist_report **r)
{
  kist_report_free (*r);
  *r = NULL;
}
#define _cleanup_report_ __attribute__ ((cleanup (kist_report_freep)))

/* Group of a layer name: namespace.*, idmap.*, rootfs.*, mounts, dev,
 * masked_paths, readonly_paths, capabilities, no_new_privileges, seccomp,
 * environment, user, hostname, domainname, sysctl, network.* -> confinement;
 * cgroup, cgroup.*, rlimit.* -> limits; everything else -> other. */
enum kist_group kist_layer_group (const char *name);

/* May this layer degrade under the report's policy?  Matches exact names,
 * "all", and a prefix written "cgroup.*" or "rlimit.*". */
bool kist_report_may_degrade (const struct kist_report *r, const char *name);

/* requested: NULL or "" means boolean true; a string is shown as the value. */
void kist_report_skip (struct kist_report *r, const char *name, const char *detail_fmt, ...)
    __attribute__ ((format (printf, 3, 4)));
void kist_report_applied (struct kist_report *r, const char *name, const char *requested,
                          const char *detail_fmt, ...) __attribute__ ((format (printf, 4, 5)));
int kist_report_failed (struct kist_report *r, const char *name, const char *requested,
                        int errnum, struct kist_error **err, const char *reason_fmt, ...)
    __attribute__ ((format (printf, 6, 7)));

/* Append a fully-formed entry (used by the parent for entries received from
 * the child).  Takes copies. */
void kist_report_add (struct kist_report *r, const struct kist_layer *l);
/* kist_report_add that moves the strings of *l into the new row instead of
 * copying them (the entries decoded from the sync socket, each a copy of
 * its own): *l is left cleared, and is cleared when r is NULL too. */
void kist_report_add_moved (struct kist_report *r, struct kist_layer *l);

/* Find an entry by name (NULL if none). */
/* As kist_report_add, for an entry its layer completes later (the cgroup
 * scope, joined after clone): not logged with --debug now; the layer logs it
 * once it is final. */
void kist_report_add_unfinished (struct kist_report *r, const struct kist_layer *src);
const struct kist_layer *kist_report_find (const struct kist_report *r, const char *name);

/* Give the entries recorded since the first `from` (the ones one registry
 * row recorded) that row's number and time (layer.c). */
void kist_report_time_step (struct kist_report *r, size_t from, unsigned step, int64_t usec);
/* The time of the execve, seen by the parent: startup_usec from kist's
 * start (kist_started_usec, util.h). */
void kist_report_time_startup (struct kist_report *r);

/* Serialise for the child->parent channel: one entry <-> a flat byte buffer.
 * Format: name\0requested-flag+value\0applied\0errnum\0reason\0detail\0step usec\0,
 * then 1expect\0 only for an entry with an expectation (report_wire.c). */
int kist_layer_encode (const struct kist_layer *l, char **buf, size_t *len);
int kist_layer_decode (const char *buf, size_t len, struct kist_layer *out);  /* out owns copies */
void kist_layer_clear (struct kist_layer *l);

/* Whole report -> JSON (design.md section 3), pretty when pretty is true.
 * Includes confinement / limits summaries and the summary sentence. */
char *kist_report_to_json (const struct kist_report *r, bool pretty);
/* The same text with every row written through yajl's own calls (the rows
 * of kist_report_to_json are written by hand: test_report compares). */
char *kist_report_to_json_yajl (const struct kist_report *r, bool pretty);
/* JSON report (as written by kist_report_to_json) -> aligned text table with
 * the summary line.  Returns NULL and fills err on malformed input. */
char *kist_report_json_to_text (const char *json, size_t len, struct kist_error **err);

/* Write the report: path "-" means stdout; otherwise atomically (temp+rename). */
int kist_report_write_path (const struct kist_report *r, const char *path, struct kist_error **err);
int kist_report_write_fd (const struct kist_report *r, int fd, struct kist_error **err);

/* ---- additions (report helper) ---- */

/* Largest buffer kist_layer_encode produces / kist_layer_decode accepts
 * (encode returns -EMSGSIZE beyond it: keep details short).  Well below
 * KIST_SYNC_MAX so that an entry always fits one sync message. */
#define KIST_LAYER_ENCODED_MAX 32768
/* The largest time one row may carry: 10^12 us (about 11.6 days). */
#define KIST_LAYER_USEC_MAX 1000000000000LL

/* Write the report (pretty JSON + newline) atomically as dirfd/name, e.g. the
 * state dir's report.json with mode 0600. */
int kist_report_write_at (const struct kist_report *r, int dirfd, const char *name, mode_t mode,
                          struct kist_error **err);

/* Parse a report written by kist_report_to_json back (the stored
 * report.json), so that `kist start` can add the exec entry.  NULL + *err on
 * malformed input. */
struct kist_report *kist_report_from_json (const char *json, size_t len, struct kist_error **err);

/* Every requested layer that was not applied, "name (reason), name
 * (reason)"; NULL when none (the container runs as configured). */
char *kist_report_missing_text (const struct kist_report *r);

/* Append text to the detail of the latest entry called name (no-op if none). */
void kist_report_note (struct kist_report *r, const char *name, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

/* ---- additions (verification from outside, verify.c) ---- */

/* Child side: the latest entry called name, if applied, is also to be
 * verified from outside: expect is what the kernel must show (the layer's
 * own "key=value ..." words, read by its verifier in verify.c).  It goes
 * over the sync socket with the entry. */
void kist_report_expect (struct kist_report *r, const char *name, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));
/* Parent side, on receipt: an applied entry with an expectation becomes
 * pending (not applied, reason "not verified from outside yet"). */
void kist_layer_make_pending (struct kist_layer *l);
/* Parent side: entry i agreed with what the parent read from outside: it is
 * applied; fmt (NULL: nothing) is appended to its detail ("; " first). */
void kist_report_verified (struct kist_report *r, size_t i, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));
/* Parent side: entry i could not be verified or disagreed: not applied, with
 * errnum and the reason; returns 0 when the policy lets it degrade, else a
 * negative value with *err filled, as kist_report_failed. */
int kist_report_unverified (struct kist_report *r, size_t i, int errnum, struct kist_error **err,
                            const char *fmt, ...) __attribute__ ((format (printf, 5, 6)));

#endif
