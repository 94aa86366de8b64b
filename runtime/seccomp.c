/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: the seccomp layer ("seccomp" in the report).
 *
 * Load step of create and exec, before any state exists (kist_seccomp_choose):
 * the profile is the inline linux.seccomp if there is one, else the one the
 * annotation run.kist.seccomp.profile names (a built-in name, a path, or
 * "none"); it is parsed and resolved then, so that a bad profile is a
 * config error.  Parent, before clone (kist_seccomp_prepare): its canonical
 * form is hashed, and the BPF program read from the cache or compiled with
 * libseccomp and stored (seccomp_cache.c).
 *
 * Container init: the ready program is loaded with seccomp(2) and checked
 * through /proc/self/status opened before loading (Seccomp: 2,
 * Seccomp_filters one more than before) where the filter lets that read
 * through; the entry is applied only once the parent read the same from
 * outside, in /proc/PID/status of the waiting process (verify.c).
 * The kernel loads a filter only under no_new_privileges or with
 * CAP_SYS_ADMIN (in the container's user namespace): with
 * process.noNewPrivileges true the filter is loaded last, right before
 * execve (kist_seccomp_apply_last, from kist_process_exec: for the init that
 * is after `start` arrived, so that the filter cannot deny what kist still
 * needs to do), or at the end of the layers when its notify listener fd must
 * reach the waiting parent (kist_seccomp_apply); without it,
 * early, before kist_user_apply drops CAP_SYS_ADMIN (kist_seccomp_apply_early)
 * - the order runc uses too.  The profile then also filters the syscalls of
 * the user and capabilities layers (setgroups, setresuid, capset, prctl). */
#define _GNU_SOURCE
#include <errno.h>
#include <sys/syscall.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "procfs.h"
#include "seccomp.h"
#include "spec_json.h"
#include "sync.h"
#include "util.h"

#define LAYER "seccomp"
/* Longest list of skipped syscall names kept in the report detail. */
#define SKIPPED_DETAIL_MAX 2048

void
kist_seccomp_free (struct kist_seccomp *s)
{
  if (s == NULL)
    return;
  free (s->insns);
  free (s->requested);
  free (s->detail);
  free (s->listener_path);
  free (s->listener_metadata);
  free (s->label);
  free (s->where);
  kist_seccomp_profile_free (s->profile);
  free (s);
}

bool
kist_seccomp_requested (const struct kist_spec *s, const char **what)
{
  if (s->linux_ && s->linux_->seccomp && !YAJL_IS_NULL (s->linux_->seccomp))
    {
      if (what)
        *what = "linux.seccomp";
      return true;
    }
  const char *a = kist_spec_annotation (s, KIST_SECCOMP_ANNOTATION);
  if (a == NULL || strcmp (a, "none") == 0)
    return false;
  if (what)
    *what = a;
  return true;
}

/* ------------------------------------------------------------- parent */

static int
builtin_profile (const char *name, const char **json, size_t *len)
{
  for (size_t i = 0; kist_seccomp_builtin_names[i]; i++)
    if (strcmp (kist_seccomp_builtin_names[i], name) == 0)
      {
        *json = (const char *) kist_seccomp_builtin_data[i];
        *len = kist_seccomp_builtin_sizes[i];
        return 0;
      }
  return -ENOENT;
}

static char *
builtin_list (void)
{
  size_t len = 1;
  for (size_t i = 0; kist_seccomp_builtin_names[i]; i++)
    len += strlen (kist_seccomp_builtin_names[i]) + 2;
  char *s = xmalloc (len), *p = s;
  for (size_t i = 0; kist_seccomp_builtin_names[i]; i++)
    p += sprintf (p, "%s%s", i ? ", " : "", kist_seccomp_builtin_names[i]);
  *p = '\0';
  return s;
}

/* Parse the chosen profile into sc->profile; sc->label is "profile NAME"
 * or "linux.seccomp".  A built-in profile with a bundle is only looked up
 * (sc->deferred, see seccomp.h). */
static int
load_profile (const struct kist_spec *s, int bundle_fd, struct kist_seccomp *sc,
              struct kist_error **err)
{
  struct kist_seccomp_profile **p = &sc->profile;
  char **label = &sc->label;
  struct kist_seccomp_env env = { 0 };
  if (s->process && s->process->capabilities)
    env.bounding = s->process->capabilities->bounding;

  if (s->linux_ && s->linux_->seccomp && !YAJL_IS_NULL (s->linux_->seccomp))
    {
      *label = xstrdup ("linux.seccomp");
      struct jpath jp = { .doc = "config.json: " };
      spec_jp_key (&jp, "linux");
      spec_jp_key (&jp, "seccomp");
      int r = kist_seccomp_profile_parse_at (&jp, s->linux_->seccomp, &env, p, err);
      free (jp.buf);
      return r;
    }

  const char *name = kist_spec_annotation (s, KIST_SECCOMP_ANNOTATION);
  if (name == NULL || *name == '\0')
    return kist_error_make (err, EINVAL,
                            "annotation %s is empty: give a built-in profile name, a path "
                            "(containing '/') or none",
                            KIST_SECCOMP_ANNOTATION);
  *label = xasprintf ("profile %s", name);
  if (strchr (name, '/'))
    {
      _cleanup_free_ char *json = NULL, *where = xasprintf ("seccomp profile `%s`: ", name);
      size_t len = 0;
      int dirfd = bundle_fd >= 0 ? bundle_fd : AT_FDCWD;
      if (kist_read_file_at (dirfd, name, KIST_SECCOMP_PROFILE_MAX, &json, &len, err) < 0)
        return kist_error_wrap (err, "annotation %s: seccomp profile (relative paths are "
                                "relative to the bundle)", KIST_SECCOMP_ANNOTATION);
      return kist_seccomp_profile_parse_json (json, len, where, &env, p, err);
    }
  const char *json;
  size_t len;
  if (builtin_profile (name, &json, &len) < 0)
    {
      _cleanup_free_ char *known = builtin_list ();
      return kist_error_make (err, ENOENT,
                              "annotation %s: no built-in seccomp profile `%s` (built in: %s; "
                              "a path must contain '/')",
                              KIST_SECCOMP_ANNOTATION, name, known[0] ? known : "none");
    }
  sc->where = xasprintf ("built-in seccomp profile `%s`: ", name);
  if (bundle_fd >= 0)
    {
      sc->deferred = true;
      sc->builtin_json = json;
      sc->builtin_len = len;
      sc->env = env;
      kist_seccomp_builtin_key (name, json, len, &env, sc->source_key);
      return 0;
    }
  return kist_seccomp_profile_parse_json (json, len, sc->where, &env, p, err);
}

int
kist_seccomp_choose (const struct kist_spec *s, int bundle_fd, struct kist_seccomp **out,
                     struct kist_error **err)
{
  const char *what = NULL;
  *out = NULL;
  if (!kist_seccomp_requested (s, &what))
    return 0;
  _cleanup_seccomp_ struct kist_seccomp *sc = xcalloc (1, sizeof *sc);
  sc->requested = xstrdup (what);
  if (load_profile (s, bundle_fd, sc, err) < 0)
    return -1;
  *out = steal_pointer (&sc);
  return 0;
}

static char *
skipped_text (const struct kist_seccomp_profile *p)
{
  if (p->n_skipped == 0)
    return xstrdup ("");
  size_t len = 0, i;
  for (i = 0; i < p->n_skipped; i++)
    {
      size_t add = strlen (p->skipped[i]) + 2;
      if (len + add > SKIPPED_DETAIL_MAX)
        break;
      len += add;
    }
  char *s = xmalloc (len + 64 + sizeof "; skipped unknown syscalls: "), *w = s;
  w += sprintf (w, "; skipped unknown syscalls: ");
  for (size_t k = 0; k < i; k++)
    w += sprintf (w, "%s%s", k ? ", " : "", p->skipped[k]);
  if (i < p->n_skipped)
    sprintf (w, " and %zu more", p->n_skipped - i);
  return s;
}

/* What the detail and the load need of the parsed profile p. */
static void
meta_of (const struct kist_seccomp_profile *p, struct kist_seccomp_meta *m)
{
  kist_seccomp_meta_clear (m);
  m->flags = p->flags;
  m->max_nr = p->max_nr;
  m->n_gated = (uint32_t) p->n_gated;
  m->enosys = p->enosys;
  m->notify = p->notify;
  m->listener_path = xstrdup (p->listener_path);
  m->listener_metadata = xstrdup (p->listener_metadata);
  m->skipped = skipped_text (p);
}

/* The program: from the cache or compiled.  -2: the deferred built-in
 * profile does not parse (a config error, in *err). */
static int
build (int state_rootfd, struct kist_seccomp *sc, struct kist_error **err)
{
  const char *label = sc->label;

  uint8_t key[KIST_SHA256_LEN];
  if (sc->profile)
    kist_seccomp_key (sc->profile, key);
  else
    memcpy (key, sc->source_key, sizeof key);

  _cleanup_free_ char *cache_note = NULL;
  _cleanup_close_ int cachefd = -1;
  bool hit = false;
  if (state_rootfd >= 0)
    {
      _cleanup_error_ struct kist_error *e = NULL;
      cachefd = kist_seccomp_cache_open (state_rootfd, &e);
      if (cachefd < 0)
        cache_note = xasprintf (" (cache not used: %s)", e->msg);
    }
  else
    cache_note = xstrdup (" (no cache)");

  struct kist_seccomp_meta m = { 0 };
  if (cachefd >= 0)
    {
      _cleanup_free_ char *why = NULL;
      hit = kist_seccomp_cache_load (cachefd, key, &sc->insns, &sc->n_insns, &m, &why) == 1;
      if (!hit && why && strcmp (why, "absent") != 0)
        cache_note = xasprintf (" (entry %s; rebuilt)", why);
    }
  if (!hit && sc->profile == NULL
      && kist_seccomp_profile_parse_json (sc->builtin_json, sc->builtin_len, sc->where, &sc->env,
                                          &sc->profile, err)
             < 0)
    return -2;
  /* The parsed profile, when there is one, says what the entry says. */
  if (sc->profile)
    meta_of (sc->profile, &m);
  if (!hit)
    {
      if (kist_seccomp_compile (sc->profile, &sc->insns, &sc->n_insns, err) < 0)
        {
          kist_seccomp_meta_clear (&m);
          return kist_error_wrap (err, "%s", label);
        }
      if (cachefd >= 0)
        {
          _cleanup_error_ struct kist_error *e = NULL;
          if (kist_seccomp_cache_store (cachefd, key, sc->insns, sc->n_insns, &m, &e) < 0)
            {
              _cleanup_free_ char *old = steal_pointer (&cache_note);
              cache_note = xasprintf ("%s (not stored: %s)", old ? old : "", e->msg);
            }
        }
    }

  sc->flags = m.flags;
  sc->listener_path = steal_pointer (&m.listener_path);
  sc->listener_metadata = steal_pointer (&m.listener_metadata);
  _cleanup_free_ char *enosys
      = m.enosys ? xasprintf ("; ENOSYS above syscall %d", m.max_nr) : xstrdup ("");
  _cleanup_free_ char *gated
      = m.n_gated ? xasprintf ("; %u entries left out by includes/excludes", (unsigned) m.n_gated)
                  : xstrdup ("");
  sc->detail = xasprintf ("%s; %zu BPF insns; cache %s%s%s%s%s%s", label, sc->n_insns,
                          hit ? "hit" : "miss", cache_note ? cache_note : "", enosys, gated,
                          m.notify ? "; notify listener" : "", m.skipped ? m.skipped : "");
  kist_seccomp_meta_clear (&m);
  return 0;
}

int
kist_seccomp_prepare (struct kist_ctx *ctx, int state_rootfd, struct kist_report *r,
                      struct kist_error **err)
{
  struct kist_seccomp *sc = ctx->seccomp;
  if (sc == NULL || sc->prepared)
    return 0;
  _cleanup_error_ struct kist_error *e = NULL;
  int b = build (state_rootfd, sc, &e);
  /* The rules are in the program now. */
  kist_seccomp_profile_freep (&sc->profile);
  if (b == -2)
    {
      /* The built-in profile does not parse here: the config error
       * kist_seccomp_choose would have given. */
      if (err)
        *err = steal_pointer (&e);
      return -1;
    }
  if (b < 0)
    {
      free (sc->insns);
      sc->insns = NULL;
      sc->n_insns = 0;
      int ret = kist_report_failed (r, LAYER, sc->requested, e ? e->errnum : 0, err, "%s",
                                    e ? e->msg : "unknown error");
      if (ret < 0)
        return ret;
      /* Degraded: recorded here, the init loads nothing. */
      sc->done = true;
    }
  sc->prepared = true;
  return 0;
}

/* --------------------------------------------------------------- init */

bool
kist_inside_allows (const struct kist_ctx *ctx, int nr, const uint64_t args[6])
{
  static const uint64_t zero[6] = { 0 };
  const struct kist_seccomp *sc = ctx->seccomp;
  if (sc == NULL || !sc->done || sc->insns == NULL)
    return true; /* nothing loaded by kist yet */
  return kist_seccomp_lets_through (sc->insns, sc->n_insns, nr, args ? args : zero);
}

void
kist_inside_status_open (struct kist_ctx *ctx)
{
  if (ctx->inside_status.tried)
    return;
  ctx->inside_status.tried = true;
  ctx->inside_status.fd = -1;
  const struct kist_seccomp *sc = ctx->seccomp;
  if (sc && sc->done && sc->insns)
    {
      /* Too late: the open could be denied, or kill the process. */
      ctx->inside_status.errnum = EPERM;
      return;
    }
  _cleanup_error_ struct kist_error *e = NULL;
  int fd = kist_proc_open (ctx, "/proc/self/status", O_RDONLY, &e);
  if (fd < 0)
    ctx->inside_status.errnum = e && e->errnum ? e->errnum : -fd;
  else
    ctx->inside_status.fd = fd;
  /* The user layer asks whether setgroups is denied in this user namespace. */
  _cleanup_error_ struct kist_error *e2 = NULL;
  _cleanup_free_ char *sg = NULL;
  if (kist_proc_read (ctx, "/proc/self/setgroups", 0, &sg, &e2) == 0)
    ctx->inside_status.setgroups = strcmp (kist_rstrip (sg), "deny") == 0 ? 2 : 1;
}

const char *
kist_inside_status (struct kist_ctx *ctx, char *buf, size_t size, int *why)
{
  kist_inside_status_open (ctx);
  int fd = ctx->inside_status.fd;
  if (fd < 0)
    {
      *why = ctx->inside_status.errnum ? ctx->inside_status.errnum : EBADF;
      return NULL;
    }
  const uint64_t a[6] = { (uint64_t) fd, 0, 0, 0, 0, 0 };
  if (!kist_inside_allows (ctx, SYS_pread64, a))
    {
      *why = EPERM;
      return NULL;
    }
  /* Each read from offset 0 makes the kernel generate the file again. */
  ssize_t n = pread (fd, buf, size - 1, 0);
  if (n <= 0)
    {
      *why = n < 0 ? errno : EIO;
      return NULL;
    }
  buf[n] = '\0';
  return buf;
}

const char *
kist_inside_why (int why)
{
  switch (why)
    {
    case ENOENT:
    case EXDEV:
      return "no procfs at /proc";
    case EPERM:
      return "the container's seccomp filter denies it";
    default:
      return strerror (why);
    }
}

static const char *
load_hint (int e)
{
  switch (e)
    {
    case EACCES:
      return " (the kernel loads a filter only under no_new_privileges or with CAP_SYS_ADMIN: "
             "set process.noNewPrivileges to true)";
    case EINVAL:
      return " (the kernel refused the program or its flags)";
    case ENOMEM:
      return " (out of memory, or this process's filters exceed the kernel's total of 32768 "
             "instructions)";
    case ESRCH:
      return " (SECCOMP_FILTER_FLAG_TSYNC: another thread could not be synchronised)";
    default:
      return "";
    }
}

/* The number after "Field:" in status text, -1 if absent. */
static long
status_number (const char *status, const char *field)
{
  _cleanup_free_ char *v = status ? kist_proc_status_field (status, field) : NULL;
  if (v == NULL)
    return -1;
  char *end;
  errno = 0;
  long x = strtol (v, &end, 10);
  return errno || end == v || *end != '\0' ? -1 : x;
}

/* Load the filter and check inside what can be checked without anything
 * the filter may deny (the status fd was opened before it); the entry then
 * waits for the parent, which reads Seccomp and Seccomp_filters of
 * /proc/PID/status from outside (verify.c kist_seccomp_verify). */
static int
load_and_verify (struct kist_ctx *ctx, struct kist_seccomp *sc, struct kist_report *r,
                 struct kist_error **err)
{
  char buf[16384];
  int why = 0;
  long before = status_number (kist_inside_status (ctx, buf, sizeof buf, &why), "Seccomp_filters");

  int listener = -1;
  int ret = kist_seccomp_load (sc->insns, sc->n_insns, sc->flags, &listener);
  if (ret < 0)
    return kist_report_failed (r, LAYER, sc->requested, -ret, err,
                               "seccomp(SECCOMP_SET_MODE_FILTER, 0x%x) of %zu insns: %s%s",
                               (unsigned) sc->flags, sc->n_insns, strerror (-ret),
                               load_hint (-ret));
  sc->done = true;
  if (listener >= 0)
    {
      int s = ctx->sync_fd >= 0
                  ? kist_sync_send_fd (ctx->sync_fd, KIST_SYNC_SECCOMP_FD, NULL, 0, listener)
                  : -EBADF;
      close (listener);
      if (s < 0)
        return kist_report_failed (r, LAYER, sc->requested, -s, err,
                                   "the filter is loaded, but its notify listener fd could not "
                                   "be sent to the parent: %s",
                                   strerror (-s));
    }

  const char *status = kist_inside_status (ctx, buf, sizeof buf, &why);
  if (status)
    {
      long mode = status_number (status, "Seccomp");
      long after = status_number (status, "Seccomp_filters");
      if (mode != 2)
        return kist_report_failed (r, LAYER, sc->requested, EPROTO, err,
                                   "after loading, /proc/self/status says Seccomp: %ld, not 2",
                                   mode);
      if (before >= 0 && after != before + 1)
        return kist_report_failed (r, LAYER, sc->requested, EPROTO, err,
                                   "after loading, /proc/self/status says Seccomp_filters: %ld, "
                                   "expected %ld",
                                   after, before + 1);
      if (before >= 0)
        kist_report_applied (r, LAYER, sc->requested,
                             "%s; /proc/self/status Seccomp: 2, Seccomp_filters: %ld -> %ld",
                             sc->detail, before, after);
      else
        kist_report_applied (r, LAYER, sc->requested, "%s; /proc/self/status Seccomp: 2",
                             sc->detail);
    }
  else if (kist_inside_allows (ctx, SYS_prctl, (const uint64_t[6]){ PR_GET_SECCOMP }))
    {
      /* No procfs in the container, or the filter denies reading it: ask
       * the kernel directly. */
      int mode = prctl (PR_GET_SECCOMP, 0, 0, 0, 0);
      if (mode != 2)
        return kist_report_failed (r, LAYER, sc->requested, mode < 0 ? errno : EPROTO, err,
                                   "after loading, PR_GET_SECCOMP says %d, not 2 (and "
                                   "/proc/self/status cannot be read: %s)",
                                   mode, kist_inside_why (why));
      kist_report_applied (r, LAYER, sc->requested, "%s; PR_GET_SECCOMP 2 (%s%s)", sc->detail,
                           why == ENOENT || why == EXDEV ? "" : "/proc/self/status not read: ",
                           kist_inside_why (why));
    }
  else
    kist_report_applied (r, LAYER, sc->requested,
                         "%s; not read back inside (/proc/self/status: %s; the filter denies "
                         "prctl)",
                         sc->detail, kist_inside_why (why));
  if (before >= 0)
    kist_report_expect (r, LAYER, "mode=2 filters=%ld", before + 1);
  else
    kist_report_expect (r, LAYER, "mode=2");
  return 0;
}

int
kist_seccomp_apply_early (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err)
{
  struct kist_seccomp *sc = ctx->seccomp;
  if (sc == NULL || sc->done || !sc->prepared) /* not prepared: kist_seccomp_apply fails */
    return 0;
  if (ctx->spec->process && ctx->spec->process->no_new_privileges)
    return 0; /* loaded last, by kist_seccomp_apply */
  /* Loaded this early, the filter also judges what kist still does until
   * the exec: its report and errors go over the sync socket (sendmsg), the
   * create's commit and the start come back over it (recvmsg, accept4,
   * recvfrom).  A filter that denies one of them would kill every message,
   * the error included: say so now, while it can still be said. */
  if (sc->insns && ctx->sync_fd >= 0)
    {
      static const struct
      {
        int nr;
        const char *name;
      } needed[] = { { SYS_sendmsg, "sendmsg" },
                     { SYS_recvmsg, "recvmsg" },
                     { SYS_accept4, "accept4" },
                     { SYS_recvfrom, "recvfrom" } };
      for (size_t i = 0; i < KIST_ARRAY_SIZE (needed); i++)
        {
          const uint64_t a[6] = { (uint64_t) ctx->sync_fd, 0, 0, 0, 0, 0 };
          if (!kist_seccomp_lets_through (sc->insns, sc->n_insns, needed[i].nr, a))
            return kist_report_failed (
                r, LAYER, sc->requested, EPERM, err,
                "the filter denies %s, which kist still needs after loading it: with "
                "process.noNewPrivileges false the filter is loaded before the user switch (it "
                "needs CAP_SYS_ADMIN, as in runc), and kist reports to its parent and waits for "
                "`start` over a socket until the exec; allow %s in the profile, or set "
                "process.noNewPrivileges true (then the filter is loaded right before the exec)",
                needed[i].name, needed[i].name);
        }
    }
  return load_and_verify (ctx, sc, r, err);
}

int
kist_seccomp_apply (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err)
{
  struct kist_seccomp *sc = ctx->seccomp;
  const char *what = NULL;
  if (sc == NULL || !sc->prepared)
    {
      if (kist_seccomp_requested (ctx->spec, &what))
        return kist_report_failed (r, LAYER, what, EPROTO, err,
                                   "the filter was not prepared before the container process "
                                   "was created (kist_seccomp_choose or kist_seccomp_prepare "
                                   "was not run)");
      if (kist_spec_annotation (ctx->spec, KIST_SECCOMP_ANNOTATION))
        kist_report_skip (r, LAYER, "not requested: %s=none", KIST_SECCOMP_ANNOTATION);
      else
        kist_report_skip (r, LAYER, "not requested: no linux.seccomp and no %s annotation",
                          KIST_SECCOMP_ANNOTATION);
      return 0;
    }
  /* A notify listener must reach the parent that is still waiting (create,
   * exec): load it now.  Every other filter waits for the very end. */
  if (sc->done || sc->listener_path == NULL)
    return 0;
  return load_and_verify (ctx, sc, r, err);
}

int
kist_seccomp_apply_last (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err)
{
  struct kist_seccomp *sc = ctx->seccomp;
  if (sc == NULL || sc->done || !sc->prepared)
    return 0;
  return load_and_verify (ctx, sc, r, err);
}
