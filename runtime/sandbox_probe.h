/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist sandbox --probe (issue 12): every layer a sandbox with the given
 * options would get on this host as this user, whether each can be applied,
 * and the reason and the fix where not.  Nothing is created on the host: no
 * state root, no sandbox dir, no cgroup dir, no mount.  The namespaces (and
 * the mounts and the loopback link in them) are tried by a child process in
 * namespaces of its own, which then exits (sandbox_probe.c); the rows and
 * their output are sandbox_probe_out.c. */
#ifndef KIST_SANDBOX_PROBE_H
#define KIST_SANDBOX_PROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "error.h"
#include "sandbox.h"

#define KIST_PROBE_VERSION 1

/* One layer.  requested: the sandbox would ask for it (not requested: shown
 * for what it would be, never counted); available: it can be applied here;
 * degraded: it can, but only in a weaker form than the host could give (the
 * fix says how to get the full one); text: the detail (available) or the
 * reason (not); fix: NULL or what to do. */
struct kist_probe_row
{
  char *layer;
  bool requested, available, degraded;
  char *text;
  char *fix;
};

struct kist_probe
{
  uid_t uid;
  gid_t gid;
  char *user;                 /* the caller's name, or its uid */
  const char *policy;         /* --allow-degraded (borrowed), NULL: none */
  struct kist_probe_row *rows;
  size_t n;
};

void kist_probe_clear (struct kist_probe *p);
/* Append a row (fix may be NULL). */
void kist_probe_add (struct kist_probe *p, const char *layer, bool requested, bool available,
                     const char *fix, const char *fmt, ...) __attribute__ ((format (printf, 6, 7)));
/* "yes", "no", "degraded", or "-" (not requested). */
const char *kist_probe_can (const struct kist_probe_row *row);
/* 0 when every requested layer can be applied, else 1. */
int kist_probe_status (const struct kist_probe *p);
/* One sentence: what cannot be applied, and whether a sandbox with these
 * options would refuse to run or (--allow-degraded) run without it.
 * Newly allocated. */
char *kist_probe_summary (const struct kist_probe *p);
/* {"probeVersion":1,"user":{...},"layers":[...],"summary":...,"status":N}
 * (pretty), or the table (LAYER, APPLY, DETAIL OR REASON, the fix on a
 * line of its own below).  Newly allocated, ending in a newline. */
char *kist_probe_json (const struct kist_probe *p);
char *kist_probe_table (const struct kist_probe *p);

/* Split a restriction hint "CAUSE: FIX" (kist_ns_userns_hint) at its first
 * ": " into *reason and *fix (newly allocated; *fix NULL without one). */
void kist_probe_split_hint (const char *hint, char **reason, char **fix);

/* Does the space- or newline-separated list hold word? */
bool kist_probe_word_in (const char *list, const char *word);

/* Probe the sandbox o describes (o->args may be NULL) for the caller, print
 * the table or (json) the JSON on stdout.  policy: the --allow-degraded
 * list or NULL.  root: --root or NULL (never created or opened).  Returns
 * the exit status (kist_probe_status), or -1 with *err when the probe
 * itself failed. */
int kist_sandbox_probe (const struct kist_sandbox_opts *o, const char *root, const char *policy,
                        bool json, struct kist_error **err);

#endif
