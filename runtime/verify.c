/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: the parent verifies from outside what the layers in the container
 * set (see verify.h).  Everything here runs in kist's own process, reading
 * the host's /proc of a process that waits for kist's word: the container's
 * configuration can take nothing away from it.  This file: the files of the
 * waiting process, read once each, the helpers every verifier shares
 * (verify_int.h), and the entry point; the verifiers are in
 * verify_view.c (what the container sees: namespaces, root, mounts, cwd,
 * network) and verify_process.c (the process's own attributes). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "procfs.h"
#include "verify_int.h"
#include "util.h"

static const char *const vfile_name[VF_COUNT]
    = { "status", "stat", "limits", "oom_score_adj", "uid_map", "gid_map" };


static void
cache_clear (struct kist_verify_cache *c)
{
  for (int i = 0; i < VF_COUNT; i++)
    {
      free (c->text[i]);
      c->text[i] = NULL;
      c->errnum[i] = 0;
    }
  kist_mountinfo_free (&c->mi);
  c->mi_read = false;
  c->mi_errnum = 0;
}

/* A verifier called on its own (not through kist_verify_outside) brings
 * its own cache. */
bool
vf_cache_begin (struct kist_ctx *ctx)
{
  if (ctx->verify_cache && ctx->verify_cache->pid == ctx->pid)
    return false;
  struct kist_verify_cache *c = xcalloc (1, sizeof *c);
  c->pid = ctx->pid;
  ctx->verify_cache = c;
  return true;
}

void
vf_cache_end (struct kist_ctx *ctx, struct kist_verify_cache *saved, bool owned)
{
  if (!owned)
    return;
  cache_clear (ctx->verify_cache);
  free (ctx->verify_cache);
  ctx->verify_cache = saved;
}

/* /proc/PID/FILE of the waiting process (borrowed), or NULL with *why. */
const char *
vf_proc_text (struct kist_ctx *ctx, enum vfile f, char **why)
{
  struct kist_verify_cache *c = ctx->verify_cache;
  if (c->text[f] == NULL && c->errnum[f] == 0)
    {
      if (c->pid <= 0)
        c->errnum[f] = ESRCH;
      else
        {
          char path[64];
          snprintf (path, sizeof path, "/proc/%d/%s", (int) c->pid, vfile_name[f]);
          _cleanup_error_ struct kist_error *e = NULL;
          if (kist_read_file_at (AT_FDCWD, path, 1u << 20, &c->text[f], NULL, &e) < 0)
            c->errnum[f] = e && e->errnum ? e->errnum : EIO;
        }
    }
  if (c->text[f] == NULL)
    {
      *why = xasprintf ("cannot read /proc/%d/%s of the waiting process from outside: %s",
                        (int) c->pid, vfile_name[f], strerror (c->errnum[f]));
      return NULL;
    }
  return c->text[f];
}

/* The value of key in "key=value key=value" (newly allocated), or NULL. */
char *
vf_expect_word (const char *expect, const char *key)
{
  size_t kl = strlen (key);
  for (const char *p = expect; p && *p;)
    {
      while (*p == ' ')
        p++;
      const char *end = p + strcspn (p, " ");
      if ((size_t) (end - p) > kl && strncmp (p, key, kl) == 0 && p[kl] == '=')
        return strndup (p + kl + 1, (size_t) (end - p) - kl - 1);
      p = end;
    }
  return NULL;
}

/* A status field (newly allocated) or NULL with *why. */
char *
vf_status_field (struct kist_ctx *ctx, const char *field, char **why)
{
  const char *status = vf_proc_text (ctx, VF_STATUS, why);
  if (status == NULL)
    return NULL;
  char *v = kist_proc_status_field (status, field);
  if (v == NULL)
    *why = xasprintf ("/proc/%d/status has no %s line", (int) ctx->pid, field);
  return v;
}

/* Resolve entry i: applied when why is NULL (with note), else failed. */
int
vf_settle (struct kist_report *r, size_t i, int errnum, char *why, const char *note,
        struct kist_error **err)
{
  _cleanup_free_ char *w = why;
  if (w == NULL)
    {
      if (note)
        kist_report_verified (r, i, "%s", note);
      else
        kist_report_verified (r, i, NULL);
      return 0;
    }
  return kist_report_unverified (r, i, errnum, err, "%s", w);
}

bool
vf_is_pending (const struct kist_layer *l, const char *name)
{
  if (l->expect == NULL)
    return false;
  size_t nl = strlen (name);
  if (nl >= 2 && name[nl - 1] == '*' && name[nl - 2] == '.')
    return strncmp (l->name, name, nl - 1) == 0 && l->name[nl - 1] != '\0';
  return strcmp (l->name, name) == 0;
}

/* Split whitespace-separated numbers; at most max. */
size_t
vf_numbers (const char *s, uint64_t *out, size_t max)
{
  size_t n = 0;
  char *copy = xstrdup (s ? s : ""), *save = NULL;
  for (char *t = strtok_r (copy, " \t", &save); t && n < max; t = strtok_r (NULL, " \t", &save))
    if (kist_parse_u64 (t, &out[n]) == 0)
      n++;
  free (copy);
  return n;
}

/* What a rootless kist says of a /proc/PID link it may not follow: the
 * links of its non-dumpable child need ptrace access, and the child's mm
 * still belongs to kist's user namespace.  The read-back inside, made
 * before any filter or privilege drop, stands. */
char *
vf_unreadable_note (const char *link, const char *more)
{
  return xasprintf ("%s is not readable from outside (a non-dumpable child of a rootless kist): "
                    "the read-back inside stands%s",
                    link, more);
}

/* /proc/PID/mountinfo of the waiting process, parsed once (borrowed), or
 * NULL with its errno in *errnum. */
const struct kist_mountinfo *
vf_mountinfo (struct kist_ctx *ctx, int *errnum)
{
  struct kist_verify_cache *c = ctx->verify_cache;
  if (!c->mi_read)
    {
      char path[64];
      snprintf (path, sizeof path, "/proc/%d/mountinfo", (int) c->pid);
      _cleanup_error_ struct kist_error *e = NULL;
      c->mi_read = true;
      if (kist_mountinfo_read (AT_FDCWD, path, &c->mi, &e) < 0)
        {
          kist_mountinfo_free (&c->mi);
          c->mi_errnum = e && e->errnum ? e->errnum : EIO;
        }
    }
  *errnum = c->mi_errnum;
  return c->mi_errnum ? NULL : &c->mi;
}


int
vf_each (struct kist_ctx *ctx, struct kist_report *r, const char *const *names,
         vf_check_fn check, struct kist_error **err)
{
  struct kist_verify_cache *saved = ctx->verify_cache;
  bool owned = vf_cache_begin (ctx);
  int ret = 0;
  for (size_t i = 0; ret == 0 && i < r->n_layers; i++)
    {
      const struct kist_layer *l = &r->layers[i];
      if (l->expect == NULL)
        continue; /* not pending (most rows, for each of ~25 verifiers) */
      bool mine = false;
      for (const char *const *n = names; *n && !mine; n++)
        mine = vf_is_pending (l, *n);
      if (!mine)
        continue;
      _cleanup_free_ char *note = NULL;
      char *why = check (ctx, l, &note);
      ret = vf_settle (r, i, why ? EPROTO : 0, why, note, err);
    }
  vf_cache_end (ctx, saved, owned);
  return ret;
}

/* ------------------------------------------------------------------- entry */

/* Each verifier the registry names (layer.c, its entries' verify column),
 * in table order, until one fails. */
struct verify_run
{
  struct kist_ctx *ctx;
  struct kist_report *r;
  struct kist_error **err;
  int ret;
};

static void
verify_one (kist_layer_fn verify, const char *name, void *arg)
{
  (void) name;
  struct verify_run *v = arg;
  if (v->ret == 0)
    v->ret = verify (v->ctx, v->r, v->err);
}

void
kist_verify_received (struct kist_layer *l)
{
  if (l->expect == NULL && l->applied && l->requested && strncmp (l->name, "rlimit.", 7) == 0
      && strchr (l->requested, ' ') == NULL)
    l->expect = xasprintf ("limit=%s", l->requested);
  kist_layer_make_pending (l);
}

void
kist_verify_abandon (struct kist_report *r, const char *why)
{
  if (r == NULL)
    return;
  for (size_t i = 0; i < r->n_layers; i++)
    if (r->layers[i].expect != NULL)
      {
        _cleanup_error_ struct kist_error *ignored = NULL;
        kist_report_unverified (r, i, 0, &ignored, "%s", why);
      }
}

int
kist_verify_outside (struct kist_ctx *ctx, pid_t pid, struct kist_report *r,
                     struct kist_error **err)
{
  if (r == NULL)
    return 0;
  pid_t saved_pid = ctx->pid;
  ctx->pid = pid;
  struct kist_verify_cache *saved_cache = ctx->verify_cache;
  bool owned = vf_cache_begin (ctx);
  struct verify_run run = { ctx, r, err, 0 };
  kist_layer_verifiers (verify_one, &run);
  int ret = run.ret;
  for (size_t i = 0; ret == 0 && i < r->n_layers; i++)
    if (r->layers[i].expect != NULL)
      ret = kist_report_unverified (r, i, ENOSYS, err,
                                    "kist cannot verify this entry from outside (no verifier "
                                    "for `%s`)",
                                    r->layers[i].name);
  if (ret < 0)
    kist_verify_abandon (r, "not verified from outside: the verification of an earlier entry "
                            "failed");
  vf_cache_end (ctx, saved_cache, owned);
  ctx->pid = saved_pid;
  return ret;
}
