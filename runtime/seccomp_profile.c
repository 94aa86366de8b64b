/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: the OCI linux.seccomp object -> resolved rules, their canonical form
 * and hash, and the seccomp vocabulary (actions, operators, archs, flags).
 *
 * Format (runtime-spec config-linux.md "Seccomp", plus docker's gating):
 *   defaultAction, defaultErrnoRet, architectures, archMap (docker; used only
 *   when architectures is absent), flags, listenerPath, listenerMetadata,
 *   syscalls[] {names[] (or name), action, errnoRet, args[] {index, value,
 *   valueTwo, op}, comment, includes/excludes {caps[], arches[], minKernel}}.
 * Unknown keys are ignored (runtime-spec: implementations MUST NOT fail on
 * unknown properties); wrong types and unknown names of actions, operators,
 * archs, flags and capabilities are errors naming the JSON path.
 *
 * Choices (documented in kist-seccomp-profile(5)):
 *   - a syscall name libseccomp does not know is skipped and listed;
 *   - everything else is resolved exactly as runc (libcontainer/seccomp)
 *     resolves it, so that a profile an engine sends gives the same filter
 *     under kist as under runc:
 *       . one rule per syscall name, in profile order (entry by entry, name
 *         by name), handed to libseccomp in that order;
 *       . a rule whose action (with its errno) is the default action is
 *         left out, conditional or not (libseccomp refuses it; it changes
 *         nothing);
 *       . an entry with several conditions on the SAME argument becomes one
 *         rule per condition (libseccomp cannot AND two conditions on one
 *         argument; runc ORs them, so two SCMP_CMP_NE match everything);
 *       . several rules for one syscall are left to libseccomp, which keeps
 *         the FIRST unconditional rule (a later unconditional one is
 *         dropped), lets an unconditional rule replace the conditional rules
 *         added before it and drops conditional rules added after it, merges
 *         conditional rules into one decision tree, and refuses (EEXIST) a
 *         conditional rule it cannot merge, typically one that repeats or
 *         widens the conditions of an earlier one with another action: runc
 *         fails on that, and so does kist (seccomp_compile.c names both
 *         entries).
 *
 * The vocabulary (the names of actions, operators, archs and flags, what
 * this kernel supports, `kist features`) is in seccomp_vocab.c. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "caps.h"
#include "json.h"
#include "seccomp.h"
#include "seccomp_vocab.h"
#include "util.h"

#ifndef KIST_VERSION
#define KIST_VERSION "unknown"
#endif

/* Bump when the canonical form or the program kist builds from it changes. */
#define CANONICAL_FORMAT 1

/* ------------------------------------------------------------- parsing */

struct parser
{
  const char *where;
  uint32_t native;
  uint64_t bounding;           /* capability bit mask */
  unsigned kmajor, kminor;     /* running kernel */
  struct kist_error **err;
  struct kist_seccomp_profile *p;
  size_t cap_rules;
  size_t cap_skipped;
};

static int __attribute__ ((format (printf, 4, 5)))
perr (struct parser *ps, int errnum, const char *path, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  _cleanup_free_ char *msg = NULL;
  if (vasprintf (&msg, fmt, ap) < 0)
    msg = NULL;
  va_end (ap);
  return kist_error_make (ps->err, errnum, "%s%s: %s", ps->where, path, msg ? msg : "?");
}

static const char *
json_type (yajl_val v)
{
  if (YAJL_IS_STRING (v))
    return "a string";
  if (YAJL_IS_NUMBER (v))
    return "a number";
  if (YAJL_IS_OBJECT (v))
    return "an object";
  if (YAJL_IS_ARRAY (v))
    return "an array";
  if (YAJL_IS_TRUE (v) || YAJL_IS_FALSE (v))
    return "a boolean";
  return "null";
}

static int
want_string (struct parser *ps, yajl_val v, const char *path, const char **out)
{
  if (!YAJL_IS_STRING (v))
    return perr (ps, EINVAL, path, "expected a string, got %s", json_type (v));
  *out = v->u.string;
  return 0;
}

static int
want_array (struct parser *ps, yajl_val v, const char *path)
{
  if (!YAJL_IS_ARRAY (v))
    return perr (ps, EINVAL, path, "expected an array, got %s", json_type (v));
  return 0;
}

static int
want_u64 (struct parser *ps, yajl_val v, const char *path, uint64_t max, uint64_t *out)
{
  uint64_t x;
  if (!YAJL_IS_NUMBER (v) || v->u.number.r == NULL || kist_parse_u64 (v->u.number.r, &x) < 0)
    return perr (ps, EINVAL, path, "expected a non-negative integer, got %s%s%s",
                 YAJL_IS_NUMBER (v) ? "`" : json_type (v),
                 YAJL_IS_NUMBER (v) && v->u.number.r ? v->u.number.r : "",
                 YAJL_IS_NUMBER (v) ? "`" : "");
  if (x > max)
    return perr (ps, ERANGE, path, "%" PRIu64 " is out of range (at most %" PRIu64 ")", x, max);
  *out = x;
  return 0;
}

static int
parse_action (struct parser *ps, yajl_val v, const char *path, uint32_t *base)
{
  const char *s = NULL;
  if (want_string (ps, v, path, &s) < 0)
    return -EINVAL;
  const struct named *n = vocab_lookup (vocab_actions, vocab_n_actions, s);
  if (n == NULL)
    {
      _cleanup_free_ char *known = vocab_names_list (vocab_actions, vocab_n_actions);
      return perr (ps, EINVAL, path, "unknown action `%s` (known: %s)", s, known);
    }
  *base = n->value;
  return 0;
}

/* errnoRet applies to ERRNO and TRACE only (runtime-spec: the runtime MUST
 * fail for other actions); the default is EPERM. */
static int
with_errno (struct parser *ps, uint32_t base, yajl_val ret, const char *path, uint32_t *action)
{
  if (ret == NULL)
    {
      *action = vocab_takes_data (base) ? (base | EPERM) : base;
      return 0;
    }
  if (!vocab_takes_data (base))
    return perr (ps, EINVAL, path,
                 "only SCMP_ACT_ERRNO and SCMP_ACT_TRACE take an errno; remove it or change the "
                 "action");
  uint64_t e;
  if (want_u64 (ps, ret, path, base == SCMP_ACT_ERRNO (0) ? 4095 : 0xffff, &e) < 0)
    return -EINVAL;
  *action = base | (uint32_t) e;
  return 0;
}

static int
parse_arches (struct parser *ps, yajl_val v, const char *path)
{
  if (want_array (ps, v, path) < 0)
    return -EINVAL;
  struct kist_seccomp_profile *p = ps->p;
  for (size_t i = 0; i < v->u.array.len; i++)
    {
      _cleanup_free_ char *ip = xasprintf ("%s[%zu]", path, i);
      const char *s = NULL;
      if (want_string (ps, v->u.array.values[i], ip, &s) < 0)
        return -EINVAL;
      const struct named *n = vocab_lookup (vocab_archs, vocab_n_archs, s);
      if (n == NULL)
        {
          _cleanup_free_ char *known = vocab_names_list (vocab_archs, vocab_n_archs);
          return perr (ps, EINVAL, ip, "unknown architecture `%s` (libseccomp %u.%u knows: %s)", s,
                       seccomp_version ()->major, seccomp_version ()->minor, known);
        }
      p->arches = xrealloc (p->arches, (p->n_arches + 1) * sizeof *p->arches);
      p->arches[p->n_arches++] = n->value;
    }
  return 0;
}

/* docker's archMap: [{"architecture": A, "subArchitectures": [...]}]; the
 * entry of the native arch gives the arches. */
static int
parse_arch_map (struct parser *ps, yajl_val v)
{
  if (want_array (ps, v, "archMap") < 0)
    return -EINVAL;
  for (size_t i = 0; i < v->u.array.len; i++)
    {
      yajl_val e = v->u.array.values[i];
      _cleanup_free_ char *ip = xasprintf ("archMap[%zu]", i);
      if (!YAJL_IS_OBJECT (e))
        return perr (ps, EINVAL, ip, "expected an object, got %s", json_type (e));
      _cleanup_free_ char *ap = xasprintf ("%s.architecture", ip);
      yajl_val a = kist_json_obj_get (e, "architecture");
      const char *s = NULL;
      if (a == NULL)
        return perr (ps, EINVAL, ap, "required");
      if (want_string (ps, a, ap, &s) < 0)
        return -EINVAL;
      const struct named *n = vocab_lookup (vocab_archs, vocab_n_archs, s);
      if (n == NULL)
        return perr (ps, EINVAL, ap, "unknown architecture `%s`", s);
      if (n->value != ps->native)
        continue;
      ps->p->arches = xrealloc (ps->p->arches, (ps->p->n_arches + 1) * sizeof (uint32_t));
      ps->p->arches[ps->p->n_arches++] = n->value;
      yajl_val sub = kist_json_obj_get (e, "subArchitectures");
      if (sub && !YAJL_IS_NULL (sub))
        {
          _cleanup_free_ char *sp = xasprintf ("%s.subArchitectures", ip);
          if (parse_arches (ps, sub, sp) < 0)
            return -EINVAL;
        }
    }
  return 0;
}

static int
cmp_u32 (const void *a, const void *b)
{
  uint32_t x = *(const uint32_t *) a, y = *(const uint32_t *) b;
  return x < y ? -1 : x > y;
}

static int
parse_flags (struct parser *ps, yajl_val v, uint32_t *requested)
{
  if (want_array (ps, v, "flags") < 0)
    return -EINVAL;
  for (size_t i = 0; i < v->u.array.len; i++)
    {
      _cleanup_free_ char *ip = xasprintf ("flags[%zu]", i);
      const char *s = NULL;
      if (want_string (ps, v->u.array.values[i], ip, &s) < 0)
        return -EINVAL;
      const struct named *n = vocab_lookup (vocab_flag_names, vocab_n_flag_names, s);
      if (n == NULL)
        {
          _cleanup_free_ char *known = vocab_names_list (vocab_flag_names, vocab_n_flag_names);
          return perr (ps, EINVAL, ip, "unknown seccomp flag `%s` (known: %s)", s, known);
        }
      /* WAIT_KILLABLE_RECV only exists together with a listener. */
      uint32_t probe = n->value;
      if (probe == SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV)
        probe |= SECCOMP_FILTER_FLAG_NEW_LISTENER;
      if (!kist_seccomp_flags_supported (probe))
        return perr (ps, EOPNOTSUPP, ip,
                     "%s is not supported by this kernel (seccomp() refuses it); remove the flag",
                     s);
      *requested |= n->value;
    }
  return 0;
}

/* "6.18.44-fc" -> 6, 18.  Returns false when it does not start with N.N. */
static bool
parse_kernel_version (const char *s, unsigned *major, unsigned *minor)
{
  char *end;
  errno = 0;
  unsigned long a = strtoul (s, &end, 10);
  if (errno || end == s || *end != '.')
    return false;
  const char *m = end + 1;
  unsigned long b = strtoul (m, &end, 10);
  if (errno || end == m || (*end != '\0' && *end != '.' && *end != '-' && *end != '+'))
    return false;
  if (a > 100000 || b > 100000)
    return false;
  *major = (unsigned) a;
  *minor = (unsigned) b;
  return true;
}

/* Evaluate one includes/excludes object.  *all: every listed cap is in the
 * bounding set; *any: at least one is; arch / kernel likewise. */
struct gate
{
  bool has_caps, all_caps, any_caps;
  bool has_arches, arch_match;
  bool has_kernel, kernel_ok;
};

static int
parse_gate (struct parser *ps, yajl_val v, const char *path, struct gate *g)
{
  memset (g, 0, sizeof *g);
  if (v == NULL || YAJL_IS_NULL (v))
    return 0;
  if (!YAJL_IS_OBJECT (v))
    return perr (ps, EINVAL, path, "expected an object, got %s", json_type (v));
  yajl_val caps = kist_json_obj_get (v, "caps");
  if (caps && !YAJL_IS_NULL (caps))
    {
      _cleanup_free_ char *cp = xasprintf ("%s.caps", path);
      if (want_array (ps, caps, cp) < 0)
        return -EINVAL;
      g->has_caps = caps->u.array.len > 0;
      g->all_caps = true;
      for (size_t i = 0; i < caps->u.array.len; i++)
        {
          _cleanup_free_ char *ip = xasprintf ("%s[%zu]", cp, i);
          const char *s = NULL;
          if (want_string (ps, caps->u.array.values[i], ip, &s) < 0)
            return -EINVAL;
          int c = kist_cap_from_name (s);
          if (c < 0)
            return perr (ps, EINVAL, ip, "unknown capability `%s`", s);
          bool in = c < 64 && (ps->bounding & (1ULL << c));
          g->all_caps = g->all_caps && in;
          g->any_caps = g->any_caps || in;
        }
    }
  yajl_val arches = kist_json_obj_get (v, "arches");
  if (arches && !YAJL_IS_NULL (arches))
    {
      _cleanup_free_ char *ap = xasprintf ("%s.arches", path);
      if (want_array (ps, arches, ap) < 0)
        return -EINVAL;
      g->has_arches = arches->u.array.len > 0;
      for (size_t i = 0; i < arches->u.array.len; i++)
        {
          _cleanup_free_ char *ip = xasprintf ("%s[%zu]", ap, i);
          const char *s = NULL;
          uint32_t tok;
          if (want_string (ps, arches->u.array.values[i], ip, &s) < 0)
            return -EINVAL;
          /* An unknown name matches no architecture, as in docker and
           * podman, which compare the names as strings: docker's own
           * default.json says "mips3l64n32". */
          if (!vocab_arch_from_any_name (s, &tok))
            continue;
          if (tok == ps->native)
            g->arch_match = true;
        }
    }
  yajl_val mk = kist_json_obj_get (v, "minKernel");
  if (mk && !YAJL_IS_NULL (mk))
    {
      _cleanup_free_ char *kp = xasprintf ("%s.minKernel", path);
      const char *s = NULL;
      unsigned a, b;
      if (want_string (ps, mk, kp, &s) < 0)
        return -EINVAL;
      if (!parse_kernel_version (s, &a, &b))
        return perr (ps, EINVAL, kp, "`%s` is not a kernel version like \"5.8\"", s);
      g->has_kernel = true;
      g->kernel_ok = ps->kmajor > a || (ps->kmajor == a && ps->kminor >= b);
    }
  return 0;
}

static void
add_skipped (struct parser *ps, const char *name)
{
  struct kist_seccomp_profile *p = ps->p;
  if (p->n_skipped + 1 >= ps->cap_skipped)
    {
      ps->cap_skipped = ps->cap_skipped ? ps->cap_skipped * 2 : 8;
      p->skipped = xrealloc (p->skipped, ps->cap_skipped * sizeof (char *));
    }
  p->skipped[p->n_skipped++] = xstrdup (name);
  p->skipped[p->n_skipped] = NULL;
}

static struct kist_seccomp_rule *
add_rule (struct parser *ps)
{
  struct kist_seccomp_profile *p = ps->p;
  if (p->n_rules == ps->cap_rules)
    {
      ps->cap_rules = ps->cap_rules ? ps->cap_rules * 2 : 64;
      p->rules = xrealloc (p->rules, ps->cap_rules * sizeof *p->rules);
    }
  struct kist_seccomp_rule *r = &p->rules[p->n_rules++];
  memset (r, 0, sizeof *r);
  return r;
}

/* *same_arg: some argument has more than one condition (runc then makes one
 * rule per condition). */
static int
parse_args (struct parser *ps, yajl_val v, const char *path, struct kist_seccomp_arg *args,
            unsigned *n_args, bool *same_arg)
{
  if (want_array (ps, v, path) < 0)
    return -EINVAL;
  if (v->u.array.len > 6)
    return perr (ps, EINVAL, path, "%zu conditions; a syscall has at most 6 arguments",
                 v->u.array.len);
  unsigned seen = 0;
  for (size_t i = 0; i < v->u.array.len; i++)
    {
      yajl_val a = v->u.array.values[i];
      _cleanup_free_ char *ip = xasprintf ("%s[%zu]", path, i);
      if (!YAJL_IS_OBJECT (a))
        return perr (ps, EINVAL, ip, "expected an object, got %s", json_type (a));
      struct kist_seccomp_arg *c = &args[i];
      uint64_t idx;
      _cleanup_free_ char *xp = xasprintf ("%s.index", ip);
      _cleanup_free_ char *vp = xasprintf ("%s.value", ip);
      _cleanup_free_ char *wp = xasprintf ("%s.valueTwo", ip);
      _cleanup_free_ char *op = xasprintf ("%s.op", ip);
      yajl_val x = kist_json_obj_get (a, "index"), val = kist_json_obj_get (a, "value");
      yajl_val two = kist_json_obj_get (a, "valueTwo"), o = kist_json_obj_get (a, "op");
      if (x == NULL)
        return perr (ps, EINVAL, xp, "required");
      if (want_u64 (ps, x, xp, 5, &idx) < 0)
        return -EINVAL;
      if (val == NULL)
        return perr (ps, EINVAL, vp, "required");
      if (want_u64 (ps, val, vp, UINT64_MAX, &c->value) < 0)
        return -EINVAL;
      c->value_two = 0;
      if (two && !YAJL_IS_NULL (two) && want_u64 (ps, two, wp, UINT64_MAX, &c->value_two) < 0)
        return -EINVAL;
      const char *s = NULL;
      if (o == NULL)
        return perr (ps, EINVAL, op, "required");
      if (want_string (ps, o, op, &s) < 0)
        return -EINVAL;
      const struct named *n = vocab_lookup (vocab_operators, vocab_n_operators, s);
      if (n == NULL)
        {
          _cleanup_free_ char *known = vocab_names_list (vocab_operators, vocab_n_operators);
          return perr (ps, EINVAL, op, "unknown operator `%s` (known: %s)", s, known);
        }
      if (seen & (1u << idx))
        *same_arg = true;
      seen |= 1u << idx;
      c->index = (unsigned) idx;
      c->op = n->value;
    }
  *n_args = (unsigned) v->u.array.len;
  return 0;
}

static int
parse_syscall (struct parser *ps, yajl_val e, size_t i)
{
  struct kist_seccomp_profile *p = ps->p;
  _cleanup_free_ char *path = xasprintf ("syscalls[%zu]", i);
  if (!YAJL_IS_OBJECT (e))
    return perr (ps, EINVAL, path, "expected an object, got %s", json_type (e));

  _cleanup_free_ char *ap = xasprintf ("%s.action", path);
  _cleanup_free_ char *ep = xasprintf ("%s.errnoRet", path);
  _cleanup_free_ char *gp = xasprintf ("%s.args", path);
  _cleanup_free_ char *np = xasprintf ("%s.names", path);
  _cleanup_free_ char *ip = xasprintf ("%s.includes", path);
  _cleanup_free_ char *xp = xasprintf ("%s.excludes", path);

  yajl_val act = kist_json_obj_get (e, "action");
  if (act == NULL)
    return perr (ps, EINVAL, ap, "required");
  uint32_t base, action;
  if (parse_action (ps, act, ap, &base) < 0)
    return -EINVAL;
  yajl_val er = kist_json_obj_get (e, "errnoRet");
  if (er && YAJL_IS_NULL (er))
    er = NULL;
  if (with_errno (ps, base, er, ep, &action) < 0)
    return -EINVAL;

  struct kist_seccomp_arg args[6];
  unsigned n_args = 0;
  bool same_arg = false;
  yajl_val a = kist_json_obj_get (e, "args");
  if (a && !YAJL_IS_NULL (a) && parse_args (ps, a, gp, args, &n_args, &same_arg) < 0)
    return -EINVAL;

  yajl_val comment = kist_json_obj_get (e, "comment");
  if (comment && !YAJL_IS_NULL (comment) && !YAJL_IS_STRING (comment))
    {
      _cleanup_free_ char *cp = xasprintf ("%s.comment", path);
      return perr (ps, EINVAL, cp, "expected a string, got %s", json_type (comment));
    }

  /* docker's gating: included when every includes.caps is in the bounding
   * set, the native arch is in includes.arches and the kernel is at least
   * includes.minKernel; excluded when any excludes.caps is in the bounding
   * set, the native arch is in excludes.arches or the kernel is at least
   * excludes.minKernel. */
  struct gate inc, exc;
  if (parse_gate (ps, kist_json_obj_get (e, "includes"), ip, &inc) < 0
      || parse_gate (ps, kist_json_obj_get (e, "excludes"), xp, &exc) < 0)
    return -EINVAL;
  bool included = (!inc.has_caps || inc.all_caps) && (!inc.has_arches || inc.arch_match)
                  && (!inc.has_kernel || inc.kernel_ok) && !(exc.has_caps && exc.any_caps)
                  && !(exc.has_arches && exc.arch_match) && !(exc.has_kernel && exc.kernel_ok);

  yajl_val names = kist_json_obj_get (e, "names");
  yajl_val one = kist_json_obj_get (e, "name"); /* docker's older single-name form */
  if ((names == NULL || YAJL_IS_NULL (names)) && one && !YAJL_IS_NULL (one))
    {
      _cleanup_free_ char *op = xasprintf ("%s.name", path);
      const char *s = NULL;
      if (want_string (ps, one, op, &s) < 0)
        return -EINVAL;
      names = NULL;
    }
  else if (names == NULL || YAJL_IS_NULL (names))
    return perr (ps, EINVAL, np, "required");
  else if (want_array (ps, names, np) < 0)
    return -EINVAL;

  size_t n = names ? names->u.array.len : 1;
  if (!included)
    p->n_gated++;
  for (size_t k = 0; k < n; k++)
    {
      const char *s = NULL;
      _cleanup_free_ char *kp = names ? xasprintf ("%s[%zu]", np, k) : xasprintf ("%s.name", path);
      if (want_string (ps, names ? names->u.array.values[k] : one, kp, &s) < 0)
        return -EINVAL;
      if (*s == '\0')
        return perr (ps, EINVAL, kp, "empty syscall name");
      int nr = seccomp_syscall_resolve_name (s);
      if (nr == __NR_SCMP_ERROR)
        {
          add_skipped (ps, s);
          continue;
        }
      /* Gated-out entries still count for the ENOSYS bound: the profile
       * knows those syscalls. */
      if (nr > p->max_nr)
        p->max_nr = nr;
      if (!included)
        continue;
      /* Two conditions on one argument: one rule per condition, in order,
       * all of them (runc's matchCall). */
      unsigned n_rules = same_arg ? n_args : 1;
      for (unsigned c = 0; c < n_rules; c++)
        {
          struct kist_seccomp_rule *r = add_rule (ps);
          r->name = xstrdup (s);
          r->nr = nr;
          r->action = action;
          r->n_args = same_arg ? 1 : n_args;
          memcpy (r->args, same_arg ? &args[c] : args, r->n_args * sizeof args[0]);
          r->entry = i;
        }
    }
  return 0;
}

static int
cmp_str (const void *a, const void *b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

static void
unique_skipped (struct kist_seccomp_profile *p)
{
  if (p->n_skipped < 2)
    return;
  qsort (p->skipped, p->n_skipped, sizeof (char *), cmp_str);
  size_t w = 1;
  for (size_t i = 1; i < p->n_skipped; i++)
    {
      if (strcmp (p->skipped[i], p->skipped[w - 1]) == 0)
        free (p->skipped[i]);
      else
        p->skipped[w++] = p->skipped[i];
    }
  p->n_skipped = w;
  p->skipped[w] = NULL;
}

/* Leave out the rules that repeat the default action, as runc does
 * (libseccomp refuses them with EACCES); every other rule goes to libseccomp
 * in profile order, which resolves several rules for one syscall (see the
 * top of this file). */
static void
drop_default_rules (struct kist_seccomp_profile *p)
{
  size_t w = 0;
  for (size_t i = 0; i < p->n_rules; i++)
    {
      if (p->rules[i].action == p->default_action)
        {
          free (p->rules[i].name);
          continue;
        }
      p->rules[w++] = p->rules[i];
    }
  p->n_rules = w;
}

static int
parse_profile (struct parser *ps, yajl_val v)
{
  struct kist_seccomp_profile *p = ps->p;
  if (!YAJL_IS_OBJECT (v))
    return kist_error_make (ps->err, EINVAL, "%s expected an object, got %s", ps->where,
                            json_type (v));

  yajl_val da = kist_json_obj_get (v, "defaultAction");
  if (da == NULL)
    return perr (ps, EINVAL, "defaultAction", "required");
  uint32_t base;
  if (parse_action (ps, da, "defaultAction", &base) < 0)
    return -EINVAL;
  if (base == SCMP_ACT_NOTIFY)
    return perr (ps, EINVAL, "defaultAction",
                 "SCMP_ACT_NOTIFY cannot be the default action (libseccomp refuses it)");
  yajl_val der = kist_json_obj_get (v, "defaultErrnoRet");
  if (der && YAJL_IS_NULL (der))
    der = NULL;
  if (with_errno (ps, base, der, "defaultErrnoRet", &p->default_action) < 0)
    return -EINVAL;

  yajl_val a = kist_json_obj_get (v, "architectures");
  if (a && !YAJL_IS_NULL (a))
    {
      if (parse_arches (ps, a, "architectures") < 0)
        return -EINVAL;
    }
  else
    {
      yajl_val am = kist_json_obj_get (v, "archMap");
      if (am && !YAJL_IS_NULL (am) && parse_arch_map (ps, am) < 0)
        return -EINVAL;
    }
  if (p->n_arches > 1)
    qsort (p->arches, p->n_arches, sizeof *p->arches, cmp_u32);
  size_t w = 0;
  for (size_t i = 0; i < p->n_arches; i++)
    if ((w == 0 || p->arches[i] != p->arches[w - 1])
        && vocab_arch_possible (ps->native, p->arches[i]))
      p->arches[w++] = p->arches[i];
  p->n_arches = w;

  uint32_t flags = 0;
  yajl_val f = kist_json_obj_get (v, "flags");
  if (f && !YAJL_IS_NULL (f) && parse_flags (ps, f, &flags) < 0)
    return -EINVAL;

  const char *s = NULL;
  yajl_val lp = kist_json_obj_get (v, "listenerPath");
  if (lp && !YAJL_IS_NULL (lp))
    {
      if (want_string (ps, lp, "listenerPath", &s) < 0)
        return -EINVAL;
      if (*s)
        p->listener_path = xstrdup (s);
    }
  yajl_val lm = kist_json_obj_get (v, "listenerMetadata");
  if (lm && !YAJL_IS_NULL (lm))
    {
      if (want_string (ps, lm, "listenerMetadata", &s) < 0)
        return -EINVAL;
      p->listener_metadata = xstrdup (s);
    }

  yajl_val sc = kist_json_obj_get (v, "syscalls");
  if (sc && !YAJL_IS_NULL (sc))
    {
      if (want_array (ps, sc, "syscalls") < 0)
        return -EINVAL;
      for (size_t i = 0; i < sc->u.array.len; i++)
        if (parse_syscall (ps, sc->u.array.values[i], i) < 0)
          return -EINVAL;
    }
  unique_skipped (p);
  drop_default_rules (p);

  for (size_t i = 0; i < p->n_rules; i++)
    if (p->rules[i].action == SCMP_ACT_NOTIFY)
      {
        p->notify = true;
        /* The init hands the listener to the parent with sendmsg right
         * after loading: notifying sendmsg would wait for itself. */
        if (strcmp (p->rules[i].name, "sendmsg") == 0)
          {
            _cleanup_free_ char *path = xasprintf ("syscalls[%zu]", p->rules[i].entry);
            return perr (ps, EINVAL, path,
                         "SCMP_ACT_NOTIFY on `sendmsg` would deadlock: kist's init sends the "
                         "listener fd with sendmsg after loading the filter");
          }
      }
  if (p->notify && p->listener_path == NULL)
    return perr (ps, EINVAL, "listenerPath",
                 "required with SCMP_ACT_NOTIFY rules (the unix socket of the agent that gets "
                 "the listener fd)");
  if ((flags & SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV) && !p->notify)
    return perr (ps, EINVAL, "flags",
                 "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV needs SCMP_ACT_NOTIFY rules (the kernel "
                 "refuses it for a filter without a listener)");
  if (p->notify)
    {
      flags |= SECCOMP_FILTER_FLAG_NEW_LISTENER;
      if (flags & SECCOMP_FILTER_FLAG_TSYNC)
        flags |= SECCOMP_FILTER_FLAG_TSYNC_ESRCH;
    }
  if (flags && !kist_seccomp_flags_supported (flags))
    return perr (ps, EOPNOTSUPP, "flags",
                 "this kernel refuses the combination 0x%" PRIx32 " of seccomp filter flags",
                 flags);
  p->flags = flags;

  /* The ENOSYS rule (see seccomp_compile.c): only for an allowlist whose
   * default is ERRNO(EPERM) or a kill. */
  uint32_t d = p->default_action;
  p->enosys = p->max_nr >= 0
              && (d == SCMP_ACT_ERRNO (EPERM) || d == SCMP_ACT_KILL_THREAD
                  || d == SCMP_ACT_KILL_PROCESS);
  return 0;
}

int
kist_seccomp_profile_parse (yajl_val v, const char *where, const struct kist_seccomp_env *env,
                            struct kist_seccomp_profile **out, struct kist_error **err)
{
  struct kist_seccomp_profile *p = xcalloc (1, sizeof *p);
  struct parser ps = { .where = where ? where : "", .err = err, .p = p };
  p->max_nr = -1;
  p->native = env && env->arch ? env->arch : seccomp_arch_native ();
  ps.native = p->native;

  const char *kernel = env ? env->kernel : NULL;
  struct utsname u;
  if (kernel == NULL && uname (&u) == 0)
    kernel = u.release;
  if (kernel == NULL || !parse_kernel_version (kernel, &ps.kmajor, &ps.kminor))
    ps.kmajor = ps.kminor = 0;

  if (env && env->bounding)
    for (char *const *c = env->bounding; *c; c++)
      {
        int n = kist_cap_from_name (*c);
        if (n >= 0 && n < 64)
          ps.bounding |= 1ULL << n;
      }

  if (parse_profile (&ps, v) < 0)
    {
      kist_seccomp_profile_free (p);
      return -1;
    }
  *out = p;
  return 0;
}

int
kist_seccomp_profile_parse_json (const char *json, size_t len, const char *where,
                                 const struct kist_seccomp_env *env,
                                 struct kist_seccomp_profile **out, struct kist_error **err)
{
  yajl_val v = NULL;
  if (kist_json_parse (json, len, where, &v, err) < 0)
    return -1;
  int ret = kist_seccomp_profile_parse (v, where, env, out, err);
  yajl_tree_free (v);
  return ret;
}

void
kist_seccomp_profile_free (struct kist_seccomp_profile *p)
{
  if (p == NULL)
    return;
  for (size_t i = 0; i < p->n_rules; i++)
    free (p->rules[i].name);
  free (p->rules);
  for (size_t i = 0; i < p->n_skipped; i++)
    free (p->skipped[i]);
  free (p->skipped);
  free (p->arches);
  free (p->listener_path);
  free (p->listener_metadata);
  free (p);
}

/* ------------------------------------------------------- canonical form */

char *
kist_seccomp_canonical (const struct kist_seccomp_profile *p, size_t *len)
{
  char *buf = NULL;
  size_t size = 0;
  FILE *f = open_memstream (&buf, &size);
  if (f == NULL)
    abort ();
  const struct scmp_version *v = seccomp_version ();
  fprintf (f, "kist-seccomp-canonical %d\nkist %s\nlibseccomp %u.%u.%u\n", CANONICAL_FORMAT,
           KIST_VERSION, v->major, v->minor, v->micro);
  fprintf (f, "native 0x%08" PRIx32 "\narches", p->native);
  for (size_t i = 0; i < p->n_arches; i++)
    fprintf (f, " 0x%08" PRIx32, p->arches[i]);
  fprintf (f, "\ndefault 0x%08" PRIx32 "\nflags 0x%08" PRIx32 "\nenosys %d\n",
           p->default_action, p->flags, p->enosys ? p->max_nr : -1);
  for (size_t i = 0; i < p->n_rules; i++)
    {
      const struct kist_seccomp_rule *r = &p->rules[i];
      fprintf (f, "rule %d %s 0x%08" PRIx32 " %u", r->nr, r->name, r->action, r->n_args);
      for (unsigned k = 0; k < r->n_args; k++)
        fprintf (f, " %u:%u:0x%" PRIx64 ":0x%" PRIx64, r->args[k].index, r->args[k].op,
                 r->args[k].value, r->args[k].value_two);
      fputc ('\n', f);
    }
  if (fclose (f) != 0)
    abort ();
  if (len)
    *len = size;
  return buf;
}

void
kist_seccomp_key (const struct kist_seccomp_profile *p, uint8_t key[KIST_SHA256_LEN])
{
  size_t len = 0;
  _cleanup_free_ char *c = kist_seccomp_canonical (p, &len);
  kist_sha256 (c, len, key);
}
