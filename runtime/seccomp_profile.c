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
#include "spec_json.h"
#include "util.h"

#ifndef KIST_VERSION
#define KIST_VERSION "unknown"
#endif

/* Bump when the canonical form or the program kist builds from it changes. */
#define CANONICAL_FORMAT 1

/* ------------------------------------------------------------- parsing */

/* Every JSON value is read through spec_json.h, the accessors of
 * config.json: the same conventions (null is absent, the last of repeated
 * keys wins) and the same path-aware messages ("config.json:
 * linux.seccomp.syscalls[3].action: unknown action `X` ..."). */
struct parser
{
  struct jpath *jp;            /* the path of the value being read */
  uint32_t native;
  uint64_t bounding;           /* capability bit mask */
  unsigned kmajor, kminor;     /* running kernel */
  struct kist_error **err;
  struct kist_seccomp_profile *p;
  size_t cap_rules;
  size_t cap_skipped;
};

/* An error at the current path; PERR_AT at its member key. */
#define PERR(ps, ...) spec_jp_err ((ps)->jp, (ps)->err, __VA_ARGS__)
#define PERR_AT(ps, key, ...) (spec_jp_key ((ps)->jp, key), PERR (ps, __VA_ARGS__))

/* obj[key], a name of table t: 1 and its value in *out, 0 when absent.
 * what ("action", ...) and, for architectures, the libseccomp version name
 * the kind in the error. */
static int
get_named (struct parser *ps, yajl_val obj, const char *key, bool required, const struct named *t,
           size_t n_t, const char *what, uint32_t *out)
{
  const char *s = NULL;
  size_t m = 0;
  int r = spec_enter_str (ps->jp, obj, key, required, &s, &m, ps->err);
  if (r <= 0)
    return r;
  const struct named *n = vocab_lookup (t, n_t, s);
  if (n == NULL)
    {
      _cleanup_free_ char *known = vocab_names_list (t, n_t);
      return PERR (ps, "unknown %s `%s` (known: %s)", what, s, known);
    }
  *out = n->value;
  spec_jp_pop (ps->jp, m);
  return 1;
}

/* errnoRet (key) for the action base: ERRNO and TRACE only (runtime-spec:
 * the runtime MUST fail for other actions); the default is EPERM. */
static int
with_errno (struct parser *ps, yajl_val obj, const char *key, uint32_t base, uint32_t *action)
{
  bool present = false;
  int e = 0;
  if (spec_get_int_range (ps->jp, obj, key, 0, base == SCMP_ACT_ERRNO (0) ? 4095 : 0xffff, &e,
                          &present, ps->err)
      < 0)
    return -EINVAL;
  if (!present)
    {
      *action = vocab_takes_data (base) ? (base | EPERM) : base;
      return 0;
    }
  if (!vocab_takes_data (base))
    return PERR_AT (ps, key,
                    "only SCMP_ACT_ERRNO and SCMP_ACT_TRACE take an errno; remove it or change "
                    "the action");
  *action = base | (uint32_t) e;
  return 0;
}

/* Add the architectures of the array a (the path names it). */
static int
parse_arches (struct parser *ps, yajl_val a)
{
  struct kist_seccomp_profile *p = ps->p;
  for (size_t i = 0; i < a->u.array.len; i++)
    {
      size_t m = spec_jp_index (ps->jp, i);
      const char *s = NULL;
      if (spec_val_cstr (ps->jp, a->u.array.values[i], &s, ps->err) < 0)
        return -EINVAL;
      const struct named *n = vocab_lookup (vocab_archs, vocab_n_archs, s);
      if (n == NULL)
        {
          _cleanup_free_ char *known = vocab_names_list (vocab_archs, vocab_n_archs);
          return PERR (ps, "unknown architecture `%s` (libseccomp %u.%u knows: %s)", s,
                       seccomp_version ()->major, seccomp_version ()->minor, known);
        }
      p->arches = xrealloc (p->arches, (p->n_arches + 1) * sizeof *p->arches);
      p->arches[p->n_arches++] = n->value;
      spec_jp_pop (ps->jp, m);
    }
  return 0;
}

/* docker's archMap (the array a): [{"architecture": A, "subArchitectures":
 * [...]}]; the entry of the native arch gives the arches. */
static int
parse_arch_map (struct parser *ps, yajl_val a)
{
  for (size_t i = 0; i < a->u.array.len; i++)
    {
      yajl_val e = a->u.array.values[i], sub;
      size_t m = spec_jp_index (ps->jp, i), m2;
      uint32_t tok = 0;
      if (spec_val_obj (ps->jp, e, ps->err) < 0
          || get_named (ps, e, "architecture", true, vocab_archs, vocab_n_archs, "architecture",
                        &tok)
                 < 0)
        return -EINVAL;
      if (tok == ps->native)
        {
          ps->p->arches = xrealloc (ps->p->arches, (ps->p->n_arches + 1) * sizeof (uint32_t));
          ps->p->arches[ps->p->n_arches++] = tok;
          int r = spec_enter (ps->jp, e, "subArchitectures", yajl_t_array, false, &sub, &m2,
                              ps->err);
          if (r < 0 || (r > 0 && parse_arches (ps, sub) < 0))
            return -EINVAL;
        }
      spec_jp_pop (ps->jp, m);
    }
  return 0;
}

static int
cmp_u32 (const void *a, const void *b)
{
  uint32_t x = *(const uint32_t *) a, y = *(const uint32_t *) b;
  return x < y ? -1 : x > y;
}

/* The array a of flag names (the path names it). */
static int
parse_flags (struct parser *ps, yajl_val a, uint32_t *requested)
{
  for (size_t i = 0; i < a->u.array.len; i++)
    {
      size_t m = spec_jp_index (ps->jp, i);
      const char *s = NULL;
      if (spec_val_cstr (ps->jp, a->u.array.values[i], &s, ps->err) < 0)
        return -EINVAL;
      const struct named *n = vocab_lookup (vocab_flag_names, vocab_n_flag_names, s);
      if (n == NULL)
        {
          _cleanup_free_ char *known = vocab_names_list (vocab_flag_names, vocab_n_flag_names);
          return PERR (ps, "unknown seccomp flag `%s` (known: %s)", s, known);
        }
      /* WAIT_KILLABLE_RECV only exists together with a listener. */
      uint32_t probe = n->value;
      if (probe == SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV)
        probe |= SECCOMP_FILTER_FLAG_NEW_LISTENER;
      if (!kist_seccomp_flags_supported (probe))
        return PERR (ps, "%s is not supported by this kernel (seccomp() refuses it); remove the "
                     "flag", s);
      *requested |= n->value;
      spec_jp_pop (ps->jp, m);
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

/* The array member key of g (the gate object), or 0 when absent. */
static int
gate_array (struct parser *ps, yajl_val g, const char *key, yajl_val *a, size_t *m)
{
  return spec_enter (ps->jp, g, key, yajl_t_array, false, a, m, ps->err);
}

static int
parse_gate_caps (struct parser *ps, yajl_val caps, struct gate *g)
{
  g->has_caps = caps->u.array.len > 0;
  g->all_caps = true;
  for (size_t i = 0; i < caps->u.array.len; i++)
    {
      size_t m = spec_jp_index (ps->jp, i);
      const char *s = NULL;
      if (spec_val_cstr (ps->jp, caps->u.array.values[i], &s, ps->err) < 0)
        return -EINVAL;
      int c = kist_cap_from_name (s);
      if (c < 0)
        return PERR (ps, "unknown capability `%s`", s);
      bool in = c < 64 && (ps->bounding & (1ULL << c));
      g->all_caps = g->all_caps && in;
      g->any_caps = g->any_caps || in;
      spec_jp_pop (ps->jp, m);
    }
  return 0;
}

/* e[key], an optional includes/excludes object. */
static int
parse_gate (struct parser *ps, yajl_val e, const char *key, struct gate *g)
{
  memset (g, 0, sizeof *g);
  yajl_val v, a;
  size_t mv, m;
  int r = spec_enter (ps->jp, e, key, yajl_t_object, false, &v, &mv, ps->err);
  if (r <= 0)
    return r;
  if ((r = gate_array (ps, v, "caps", &a, &m)) < 0 || (r > 0 && parse_gate_caps (ps, a, g) < 0))
    return -EINVAL;
  if (r > 0)
    spec_jp_pop (ps->jp, m);
  if ((r = gate_array (ps, v, "arches", &a, &m)) < 0)
    return -EINVAL;
  if (r > 0)
    {
      g->has_arches = a->u.array.len > 0;
      for (size_t i = 0; i < a->u.array.len; i++)
        {
          size_t mi = spec_jp_index (ps->jp, i);
          const char *s = NULL;
          uint32_t tok;
          if (spec_val_cstr (ps->jp, a->u.array.values[i], &s, ps->err) < 0)
            return -EINVAL;
          /* An unknown name matches no architecture, as in docker and
           * podman, which compare the names as strings: docker's own
           * default.json says "mips3l64n32". */
          if (vocab_arch_from_any_name (s, &tok) && tok == ps->native)
            g->arch_match = true;
          spec_jp_pop (ps->jp, mi);
        }
      spec_jp_pop (ps->jp, m);
    }
  const char *s = NULL;
  if ((r = spec_enter_str (ps->jp, v, "minKernel", false, &s, &m, ps->err)) < 0)
    return -EINVAL;
  if (r > 0)
    {
      unsigned ka, kb;
      if (!parse_kernel_version (s, &ka, &kb))
        return PERR (ps, "`%s` is not a kernel version like \"5.8\"", s);
      g->has_kernel = true;
      g->kernel_ok = ps->kmajor > ka || (ps->kmajor == ka && ps->kminor >= kb);
      spec_jp_pop (ps->jp, m);
    }
  spec_jp_pop (ps->jp, mv);
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

/* One element of args[] (an object, the path names it). */
static int
parse_arg (struct parser *ps, yajl_val a, struct kist_seccomp_arg *c, unsigned *seen,
           bool *same_arg)
{
  int idx = 0;
  bool present = false;
  uint32_t op = 0;
  if (spec_val_obj (ps->jp, a, ps->err) < 0
      || spec_get_int_range (ps->jp, a, "index", 0, 5, &idx, &present, ps->err) < 0)
    return -EINVAL;
  if (!present)
    return PERR_AT (ps, "index", "required field is missing");
  c->value_two = 0;
  if (spec_get_u64 (ps->jp, a, "value", true, &c->value, ps->err) < 0
      || spec_get_u64 (ps->jp, a, "valueTwo", false, &c->value_two, ps->err) < 0
      || get_named (ps, a, "op", true, vocab_operators, vocab_n_operators, "operator", &op) < 0)
    return -EINVAL;
  if (*seen & (1u << idx))
    *same_arg = true;
  *seen |= 1u << idx;
  c->index = (unsigned) idx;
  c->op = op;
  return 0;
}

/* e.args; *same_arg: some argument has more than one condition (runc then
 * makes one rule per condition). */
static int
parse_args (struct parser *ps, yajl_val e, struct kist_seccomp_arg *args, unsigned *n_args,
            bool *same_arg)
{
  yajl_val v;
  size_t m;
  int r = spec_enter (ps->jp, e, "args", yajl_t_array, false, &v, &m, ps->err);
  if (r <= 0)
    return r;
  if (v->u.array.len > 6)
    return PERR (ps, "%zu conditions; a syscall has at most 6 arguments", v->u.array.len);
  unsigned seen = 0;
  for (size_t i = 0; i < v->u.array.len; i++)
    {
      size_t mi = spec_jp_index (ps->jp, i);
      if (parse_arg (ps, v->u.array.values[i], &args[i], &seen, same_arg) < 0)
        return -EINVAL;
      spec_jp_pop (ps->jp, mi);
    }
  *n_args = (unsigned) v->u.array.len;
  spec_jp_pop (ps->jp, m);
  return 0;
}

/* Add the rules of one name (its path pushed) of syscalls[i]. */
static int
add_name (struct parser *ps, const char *s, size_t i, bool included, uint32_t action,
          const struct kist_seccomp_arg *args, unsigned n_args, bool same_arg)
{
  struct kist_seccomp_profile *p = ps->p;
  if (*s == '\0')
    return PERR (ps, "empty syscall name");
  int nr = seccomp_syscall_resolve_name (s);
  if (nr == __NR_SCMP_ERROR)
    {
      add_skipped (ps, s);
      return 0;
    }
  /* Gated-out entries still count for the ENOSYS bound: the profile knows
   * those syscalls. */
  if (nr > p->max_nr)
    p->max_nr = nr;
  if (!included)
    return 0;
  /* Two conditions on one argument: one rule per condition, in order, all
   * of them (runc's matchCall). */
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
  return 0;
}

/* syscalls[i], the object e (the path names it). */
static int
parse_syscall (struct parser *ps, yajl_val e, size_t i)
{
  struct kist_seccomp_profile *p = ps->p;
  if (spec_val_obj (ps->jp, e, ps->err) < 0)
    return -EINVAL;
  uint32_t base = 0, action;
  if (get_named (ps, e, "action", true, vocab_actions, vocab_n_actions, "action", &base) < 0
      || with_errno (ps, e, "errnoRet", base, &action) < 0)
    return -EINVAL;

  struct kist_seccomp_arg args[6];
  unsigned n_args = 0;
  bool same_arg = false;
  const char *comment = NULL;
  size_t m;
  int r = 0;
  if (parse_args (ps, e, args, &n_args, &same_arg) < 0
      || (r = spec_enter_str (ps->jp, e, "comment", false, &comment, &m, ps->err)) < 0)
    return -EINVAL;
  if (r > 0)
    spec_jp_pop (ps->jp, m);

  /* docker's gating: included when every includes.caps is in the bounding
   * set, the native arch is in includes.arches and the kernel is at least
   * includes.minKernel; excluded when any excludes.caps is in the bounding
   * set, the native arch is in excludes.arches or the kernel is at least
   * excludes.minKernel. */
  struct gate inc, exc;
  if (parse_gate (ps, e, "includes", &inc) < 0 || parse_gate (ps, e, "excludes", &exc) < 0)
    return -EINVAL;
  bool included = (!inc.has_caps || inc.all_caps) && (!inc.has_arches || inc.arch_match)
                  && (!inc.has_kernel || inc.kernel_ok) && !(exc.has_caps && exc.any_caps)
                  && !(exc.has_arches && exc.arch_match) && !(exc.has_kernel && exc.kernel_ok);

  yajl_val names;
  const char *one = NULL; /* docker's older single-name form */
  if ((r = spec_enter (ps->jp, e, "names", yajl_t_array, false, &names, &m, ps->err)) < 0)
    return -EINVAL;
  if (r > 0 && names->u.array.len == 0)
    return PERR (ps, "must contain at least one syscall name (config.md: a syscall entry's "
                 "names MUST have at least one entry)");
  if (r == 0)
    {
      if ((r = spec_enter_str (ps->jp, e, "name", false, &one, &m, ps->err)) < 0)
        return -EINVAL;
      if (r == 0)
        return PERR_AT (ps, "names", "required field is missing");
    }
  if (!included)
    p->n_gated++;
  if (one)
    return add_name (ps, one, i, included, action, args, n_args, same_arg);
  for (size_t k = 0; k < names->u.array.len; k++)
    {
      const char *s = NULL;
      size_t mk = spec_jp_index (ps->jp, k);
      if (spec_val_cstr (ps->jp, names->u.array.values[k], &s, ps->err) < 0
          || add_name (ps, s, i, included, action, args, n_args, same_arg) < 0)
        return -EINVAL;
      spec_jp_pop (ps->jp, mk);
    }
  spec_jp_pop (ps->jp, m);
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

/* defaultAction, defaultErrnoRet, architectures or archMap. */
static int
parse_default_and_arches (struct parser *ps, yajl_val v)
{
  struct kist_seccomp_profile *p = ps->p;
  uint32_t base = 0;
  if (get_named (ps, v, "defaultAction", true, vocab_actions, vocab_n_actions, "action", &base)
      < 0)
    return -EINVAL;
  if (base == SCMP_ACT_NOTIFY)
    return PERR_AT (ps, "defaultAction",
                    "SCMP_ACT_NOTIFY cannot be the default action (libseccomp refuses it)");
  if (with_errno (ps, v, "defaultErrnoRet", base, &p->default_action) < 0)
    return -EINVAL;

  yajl_val a;
  size_t m;
  /* archMap only when there is no architectures. */
  int r = spec_enter (ps->jp, v, "architectures", yajl_t_array, false, &a, &m, ps->err);
  bool map = false;
  if (r == 0)
    {
      r = spec_enter (ps->jp, v, "archMap", yajl_t_array, false, &a, &m, ps->err);
      map = true;
    }
  if (r < 0 || (r > 0 && (map ? parse_arch_map (ps, a) : parse_arches (ps, a)) < 0))
    return -EINVAL;
  if (r > 0)
    spec_jp_pop (ps->jp, m);
  if (p->n_arches > 1)
    qsort (p->arches, p->n_arches, sizeof *p->arches, cmp_u32);
  size_t w = 0;
  for (size_t i = 0; i < p->n_arches; i++)
    if ((w == 0 || p->arches[i] != p->arches[w - 1])
        && vocab_arch_possible (ps->native, p->arches[i]))
      p->arches[w++] = p->arches[i];
  p->n_arches = w;
  return 0;
}

/* listenerPath, listenerMetadata. */
static int
parse_listener (struct parser *ps, yajl_val v)
{
  struct kist_seccomp_profile *p = ps->p;
  const char *s = NULL;
  size_t m;
  int r = spec_enter_str (ps->jp, v, "listenerPath", false, &s, &m, ps->err);
  if (r < 0)
    return -EINVAL;
  if (r > 0)
    {
      if (*s)
        p->listener_path = xstrdup (s);
      spec_jp_pop (ps->jp, m);
    }
  if ((r = spec_enter_str (ps->jp, v, "listenerMetadata", false, &s, &m, ps->err)) < 0)
    return -EINVAL;
  if (r > 0)
    {
      if (p->listener_path == NULL)
        return PERR (ps, "must not be set without listenerPath (the metadata is sent to the "
                     "agent listening there; set listenerPath or drop listenerMetadata)");
      p->listener_metadata = xstrdup (s);
      spec_jp_pop (ps->jp, m);
    }
  return 0;
}

/* What the rules imply: NOTIFY (listener, flags), the flags the kernel
 * must accept, the ENOSYS bound. */
static int
finish_profile (struct parser *ps, uint32_t flags)
{
  struct kist_seccomp_profile *p = ps->p;
  for (size_t i = 0; i < p->n_rules; i++)
    if (p->rules[i].action == SCMP_ACT_NOTIFY)
      {
        p->notify = true;
        /* The init hands the listener to the parent with sendmsg right
         * after loading: notifying sendmsg would wait for itself. */
        if (strcmp (p->rules[i].name, "sendmsg") == 0)
          {
            spec_jp_key (ps->jp, "syscalls");
            spec_jp_index (ps->jp, p->rules[i].entry);
            return PERR (ps, "SCMP_ACT_NOTIFY on `sendmsg` would deadlock: kist's init sends "
                         "the listener fd with sendmsg after loading the filter");
          }
      }
  if (p->notify && p->listener_path == NULL)
    return PERR_AT (ps, "listenerPath",
                    "required with SCMP_ACT_NOTIFY rules (the unix socket of the agent that "
                    "gets the listener fd)");
  if ((flags & SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV) && !p->notify)
    return PERR_AT (ps, "flags",
                    "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV needs SCMP_ACT_NOTIFY rules (the "
                    "kernel refuses it for a filter without a listener)");
  if (p->notify)
    {
      flags |= SECCOMP_FILTER_FLAG_NEW_LISTENER;
      if (flags & SECCOMP_FILTER_FLAG_TSYNC)
        flags |= SECCOMP_FILTER_FLAG_TSYNC_ESRCH;
    }
  if (flags && !kist_seccomp_flags_supported (flags))
    return PERR_AT (ps, "flags",
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

static int
parse_profile (struct parser *ps, yajl_val v)
{
  if (spec_val_obj (ps->jp, v, ps->err) < 0 || parse_default_and_arches (ps, v) < 0)
    return -EINVAL;

  uint32_t flags = 0;
  yajl_val a;
  size_t m;
  int r = spec_enter (ps->jp, v, "flags", yajl_t_array, false, &a, &m, ps->err);
  if (r < 0 || (r > 0 && parse_flags (ps, a, &flags) < 0))
    return -EINVAL;
  if (r > 0)
    spec_jp_pop (ps->jp, m);
  if (parse_listener (ps, v) < 0)
    return -EINVAL;

  if ((r = spec_enter (ps->jp, v, "syscalls", yajl_t_array, false, &a, &m, ps->err)) < 0)
    return -EINVAL;
  if (r > 0)
    {
      for (size_t i = 0; i < a->u.array.len; i++)
        {
          size_t mi = spec_jp_index (ps->jp, i);
          if (parse_syscall (ps, a->u.array.values[i], i) < 0)
            return -EINVAL;
          spec_jp_pop (ps->jp, mi);
        }
      spec_jp_pop (ps->jp, m);
    }
  unique_skipped (ps->p);
  drop_default_rules (ps->p);
  return finish_profile (ps, flags);
}

int
kist_seccomp_profile_parse_at (struct jpath *jp, yajl_val v, const struct kist_seccomp_env *env,
                               struct kist_seccomp_profile **out, struct kist_error **err)
{
  struct kist_seccomp_profile *p = xcalloc (1, sizeof *p);
  struct parser ps = { .jp = jp, .err = err, .p = p };
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

  size_t mark = jp->len;
  if (parse_profile (&ps, v) < 0)
    {
      kist_seccomp_profile_free (p);
      return -1;
    }
  spec_jp_pop (jp, mark);
  *out = p;
  return 0;
}

int
kist_seccomp_profile_parse (yajl_val v, const char *where, const struct kist_seccomp_env *env,
                            struct kist_seccomp_profile **out, struct kist_error **err)
{
  struct jpath jp = { .doc = where ? where : "" };
  int ret = kist_seccomp_profile_parse_at (&jp, v, env, out, err);
  free (jp.buf);
  return ret;
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
  kist_json_tree_free (v);
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

/* The key: SHA-256 of the same fields as the canonical form, in a fixed
 * binary layout (no text formatting: it is computed on every run with an
 * inline profile): little-endian words of fixed width, each rule as its
 * number (4 bytes), a byte holding its argument count (0..6) with bit 7
 * set when its action differs from the previous rule's (the first rule's
 * always does), then that action (4 bytes) only when bit 7 is set, its name
 * with a terminating NUL (names never contain one), then per argument its
 * index and operator (1 byte each) and both values (8 bytes each).  A count
 * precedes every list and every field's presence is marked before it, so no
 * two profiles give one byte stream.  (Rules of one entry share their
 * action: writing it once per run keeps a fifth of the bytes, and of the
 * SHA-256 work, out of the key.)  KEY_FORMAT names this layout, and what
 * the key stands for: 3 since the program is shrunk (seccomp_shrink.c). */
#define KEY_FORMAT 3
struct key_stream
{
  struct kist_sha256 sha;
  uint8_t buf[1024];
  size_t used;
};

static void
key_put (struct key_stream *k, const void *p, size_t n)
{
  if (k->used + n > sizeof k->buf)
    {
      kist_sha256_update (&k->sha, k->buf, k->used);
      k->used = 0;
    }
  if (n > sizeof k->buf)
    {
      kist_sha256_update (&k->sha, p, n);
      return;
    }
  memcpy (k->buf + k->used, p, n);
  k->used += n;
}

static void
key_u64 (struct key_stream *k, uint64_t v)
{
  key_put (k, &v, sizeof v);
}

void
kist_seccomp_key (const struct kist_seccomp_profile *p, uint8_t key[KIST_SHA256_LEN])
{
  struct key_stream k = { .used = 0 };
  kist_sha256_init (&k.sha);
  const struct scmp_version *v = seccomp_version ();
  char head[128];
  int n = snprintf (head, sizeof head, "kist-seccomp-key %d\nkist %s\nlibseccomp %u.%u.%u\n",
                    KEY_FORMAT, KIST_VERSION, v->major, v->minor, v->micro);
  key_put (&k, head, n < (int) sizeof head ? (size_t) n : sizeof head - 1);
  key_u64 (&k, p->native);
  key_u64 (&k, p->n_arches);
  for (size_t i = 0; i < p->n_arches; i++)
    key_u64 (&k, p->arches[i]);
  key_u64 (&k, p->default_action);
  key_u64 (&k, p->flags);
  key_u64 (&k, (uint64_t) (int64_t) (p->enosys ? p->max_nr : -1));
  key_u64 (&k, p->n_rules);
  for (size_t i = 0; i < p->n_rules; i++)
    {
      const struct kist_seccomp_rule *r = &p->rules[i];
      /* One rule's bytes, at most 4 + 1 + 4 + 6 * 18 before the name, put
       * in one piece (names are short; a long one goes on its own). */
      uint8_t b[4 + 1 + 4 + 6 * 18 + 64];
      size_t o = 0, nl = strlen (r->name) + 1;
      uint32_t nr = (uint32_t) r->nr;
      bool new_action = i == 0 || r->action != p->rules[i - 1].action;
      memcpy (b + o, &nr, 4), o += 4;
      b[o++] = (uint8_t) ((r->n_args & 0x7f) | (new_action ? 0x80 : 0)); /* n_args <= 6 */
      if (new_action)
        memcpy (b + o, &r->action, 4), o += 4;
      bool name_inline = nl <= 64;
      if (name_inline)
        memcpy (b + o, r->name, nl), o += nl;
      else
        {
          key_put (&k, b, o);
          key_put (&k, r->name, nl);
          o = 0;
        }
      for (unsigned a = 0; a < r->n_args && a < 6; a++)
        {
          b[o++] = (uint8_t) r->args[a].index; /* 0..5 */
          b[o++] = (uint8_t) r->args[a].op;    /* enum scmp_compare, < 256 */
          memcpy (b + o, &r->args[a].value, 8), o += 8;
          memcpy (b + o, &r->args[a].value_two, 8), o += 8;
        }
      key_put (&k, b, o);
    }
  kist_sha256_update (&k.sha, k.buf, k.used);
  kist_sha256_final (&k.sha, key);
}
