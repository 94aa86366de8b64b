/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: what the verifiers (verify.c, verify_view.c, verify_process.c)
 * share: the files of the waiting process, each read at most once, and the
 * helpers that settle an entry.  For the verifiers only: verify*.c, and a
 * layer's own file where the verifier shares its read with the read-back
 * inside (sched.c, personality.c). */
#ifndef KIST_VERIFY_INT_H
#define KIST_VERIFY_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mountinfo.h"
#include "report.h"
#include "verify.h"

/* The files of one waiting process, each read at most once. */
enum vfile
{
  VF_STATUS,
  VF_STAT,
  VF_LIMITS,
  VF_OOM,
  VF_UID_MAP,
  VF_GID_MAP,
  VF_COUNT
};
struct kist_verify_cache
{
  pid_t pid;
  char *text[VF_COUNT];
  int errnum[VF_COUNT]; /* the read failed with this (text NULL) */
  struct kist_mountinfo mi;
  bool mi_read;
  int mi_errnum;
};

/* A verifier called on its own (not through kist_verify_outside) brings
 * its own cache: owned is what vf_cache_end needs. */
bool vf_cache_begin (struct kist_ctx *ctx);
void vf_cache_end (struct kist_ctx *ctx, struct kist_verify_cache *saved, bool owned);

/* /proc/PID/FILE of the waiting process (borrowed), or NULL with *why. */
const char *vf_proc_text (struct kist_ctx *ctx, enum vfile f, char **why);

/* /proc/PID/mountinfo of the waiting process, parsed once (borrowed), or
 * NULL with its errno in *errnum. */
const struct kist_mountinfo *vf_mountinfo (struct kist_ctx *ctx, int *errnum);

/* The value of key in "key=value key=value" (newly allocated), or NULL. */
char *vf_expect_word (const char *expect, const char *key);

/* A status field (newly allocated) or NULL with *why. */
char *vf_status_field (struct kist_ctx *ctx, const char *field, char **why);

/* Resolve entry i: applied when why is NULL (with note), else failed.
 * Takes why. */
int vf_settle (struct kist_report *r, size_t i, int errnum, char *why, const char *note,
               struct kist_error **err);

/* Does entry l wait to be verified, and is it name, or (a family "P.*",
 * as in layer.c) "P." and more? */
bool vf_is_pending (const struct kist_layer *l, const char *name);

/* Split whitespace-separated numbers; at most max. */
size_t vf_numbers (const char *s, uint64_t *out, size_t max);

/* What a rootless kist says of a /proc/PID link it may not follow (newly
 * allocated): the links of its non-dumpable child need ptrace access, and
 * the child's mm still belongs to kist's user namespace; the read-back
 * inside, made before any filter or privilege drop, stands. */
char *vf_unreadable_note (const char *link, const char *more);

/* Every pending entry whose name is one of names (NULL-terminated; a
 * family "P.*" matches by prefix, see vf_is_pending):
 * check gives why it disagrees (newly allocated; NULL: it agrees, with
 * *note), and the entry is settled.  Stops at the first failure that may
 * not degrade. */
typedef char *(*vf_check_fn) (struct kist_ctx *ctx, const struct kist_layer *l, char **note);
int vf_each (struct kist_ctx *ctx, struct kist_report *r, const char *const *names,
             vf_check_fn check, struct kist_error **err);

/* The entry point of a verifier (its signature in verify.h): vf_each over
 * the entries named (a name "x.*" is the family of every "x.NAME"). */
#define VERIFIER(fn, check, ...)                                                                   \
  int fn (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err)                    \
  {                                                                                                \
    static const char *const names[] = { __VA_ARGS__, NULL };                                      \
    return vf_each (ctx, r, names, check, err);                                                    \
  }

#endif
