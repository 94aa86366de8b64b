/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: config.json `process` (also the --process file of `kist exec`):
 * user, args, env, cwd, capabilities, rlimits, scheduling and I/O priority. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spec.h"
#include "spec_int.h"
#include "util.h"

static const struct name_num ioprio_classes[] = {
  { "IOPRIO_CLASS_RT", 1 }, { "IOPRIO_CLASS_BE", 2 }, { "IOPRIO_CLASS_IDLE", 3 },
};
static const struct name_num sched_policies[] = {
  { "SCHED_OTHER", 0 }, { "SCHED_FIFO", 1 }, { "SCHED_RR", 2 },       { "SCHED_BATCH", 3 },
  { "SCHED_ISO", 4 },   { "SCHED_IDLE", 5 }, { "SCHED_DEADLINE", 6 },
};
static const struct name_num sched_flag_names[] = {
  { "SCHED_FLAG_RESET_ON_FORK", 0x01 }, { "SCHED_FLAG_RECLAIM", 0x02 },
  { "SCHED_FLAG_DL_OVERRUN", 0x04 },    { "SCHED_FLAG_KEEP_POLICY", 0x08 },
  { "SCHED_FLAG_KEEP_PARAMS", 0x10 },   { "SCHED_FLAG_UTIL_CLAMP_MIN", 0x20 },
  { "SCHED_FLAG_UTIL_CLAMP_MAX", 0x40 },
};

const char *
kist_sched_policy_name (int policy)
{
  return spec_name_of (sched_policies, KIST_ARRAY_SIZE (sched_policies), policy);
}

const char *
kist_ioprio_class_name (int klass)
{
  return spec_name_of (ioprio_classes, KIST_ARRAY_SIZE (ioprio_classes), klass);
}

/* ---- process.ioPriority, scheduler, execCPUAffinity (the layer: sched.c) ---- */

static int
parse_io_priority (struct jpath *p, yajl_val v, struct kist_io_priority *io,
                   struct kist_error **err)
{
  /* priority is REQUIRED by runtime-spec, but runc's decoder takes a missing
   * one as 0 (and IOPRIO_CLASS_IDLE has no levels): so does kist. */
  long klass = 0;
  int r;
  if ((r = spec_get_enum (p, v, "class", ioprio_classes, KIST_ARRAY_SIZE (ioprio_classes), &klass,
                          err))
          < 0
      || (r = spec_get_int_range (p, v, "priority", 0, 7, &io->priority, NULL, err)) < 0)
    return r;
  io->klass = (int) klass;
  return 0;
}

static int
parse_scheduler (struct jpath *p, yajl_val v, struct kist_scheduler *s, struct kist_error **err)
{
  long policy = 0;
  int nice = 0, prio = 0;
  int r;
  if ((r = spec_get_enum (p, v, "policy", sched_policies, KIST_ARRAY_SIZE (sched_policies), &policy,
                          err))
          < 0
      || (r = spec_get_int_range (p, v, "nice", -20, 19, &nice, NULL, err)) < 0
      || (r = spec_get_int_range (p, v, "priority", INT32_MIN, INT32_MAX, &prio, NULL, err)) < 0
      || (r = spec_get_enum_flags (p, v, "flags", sched_flag_names,
                                        KIST_ARRAY_SIZE (sched_flag_names),
                                   &s->flags, err))
             < 0
      || (r = spec_get_u64 (p, v, "runtime", false, &s->runtime, err)) < 0
      || (r = spec_get_u64 (p, v, "deadline", false, &s->deadline, err)) < 0
      || (r = spec_get_u64 (p, v, "period", false, &s->period, err)) < 0)
    return r;
  s->policy = (int) policy;
  s->nice = nice;
  s->priority = prio;
  return 0;
}

static int
parse_exec_cpu_affinity (struct jpath *p, yajl_val v, struct kist_exec_cpu_affinity *a,
                         struct kist_error **err)
{
  int r;
  if ((r = spec_get_idlist (p, v, "initial", "CPU", &a->initial, err)) < 0
      || (r = spec_get_idlist (p, v, "final", "CPU", &a->final, err)) < 0)
    return r;
  return 0;
}

/* ---- process ------------------------------------------------------------- */

static void
process_freep (struct kist_process **p)
{
  kist_process_free (*p);
  *p = NULL;
}

static int
parse_user (struct jpath *p, yajl_val u, struct kist_user *user, struct kist_error **err)
{
  int r;
  if ((r = spec_get_u32 (p, u, "uid", true, &user->uid, NULL, err)) < 0
      || (r = spec_get_u32 (p, u, "gid", true, &user->gid, NULL, err)) < 0
      || (r = spec_get_u32 (p, u, "umask", false, &user->umask, &user->has_umask, err)) < 0)
    return r;
  yajl_val a;
  size_t m;
  r = spec_enter (p, u, "additionalGids", yajl_t_array, false, &a, &m, err);
  if (r < 0)
    return r;
  if (r > 0)
    {
      size_t n = a->u.array.len;
      user->additional_gids = xcalloc (n, sizeof (uint32_t));
      user->n_additional_gids = n;
      user->has_additional_gids = true;
      for (size_t i = 0; i < n; i++)
        {
          size_t m2 = spec_jp_index (p, i);
          if ((r = spec_val_u32 (p, a->u.array.values[i], &user->additional_gids[i], err)) < 0)
            return r;
          spec_jp_pop (p, m2);
        }
      spec_jp_pop (p, m);
    }
  return 0;
}

static int
parse_capabilities (struct jpath *p, yajl_val c, struct kist_capabilities *caps,
                    struct kist_error **err)
{
  int r;
  if ((r = spec_get_strv (p, c, "bounding", 0, &caps->bounding, err)) < 0
      || (r = spec_get_strv (p, c, "effective", 0, &caps->effective, err)) < 0
      || (r = spec_get_strv (p, c, "inheritable", 0, &caps->inheritable, err)) < 0
      || (r = spec_get_strv (p, c, "permitted", 0, &caps->permitted, err)) < 0
      || (r = spec_get_strv (p, c, "ambient", 0, &caps->ambient, err)) < 0)
    return r;
  return 0;
}

static int
rlimit_idx_cmp (const void *a, const void *b, void *arg)
{
  const struct kist_rlimit *rl = arg;
  size_t ia = *(const size_t *) a, ib = *(const size_t *) b;
  int c = strcmp (rl[ia].type, rl[ib].type);
  if (c != 0)
    return c;
  return ia < ib ? -1 : ia > ib;
}

static int
parse_rlimits (struct jpath *p, yajl_val a, struct kist_process *proc, struct kist_error **err)
{
  size_t n = a->u.array.len;
  int r;
  proc->rlimits = xcalloc (n, sizeof (struct kist_rlimit));
  proc->n_rlimits = n;
  for (size_t i = 0; i < n; i++)
    {
      struct kist_rlimit *rl = &proc->rlimits[i];
      size_t m;
      yajl_val o = spec_elem_object (p, a, i, &m, err);
      if (o == NULL)
        return -1;
      if ((r = spec_get_str (p, o, "type", S_REQUIRED | S_NONEMPTY, &rl->type, err)) < 0
          || (r = spec_get_u64 (p, o, "soft", true, &rl->soft, err)) < 0
          || (r = spec_get_u64 (p, o, "hard", true, &rl->hard, err)) < 0)
        return r;
      spec_jp_pop (p, m);
    }
  if (n < 2)
    return 0;
  /* Duplicates: sort indices by (type, index), compare neighbours. */
  _cleanup_free_ size_t *idx = xcalloc (n, sizeof (size_t));
  for (size_t i = 0; i < n; i++)
    idx[i] = i;
  qsort_r (idx, n, sizeof (size_t), rlimit_idx_cmp, proc->rlimits);
  for (size_t i = 1; i < n; i++)
    if (strcmp (proc->rlimits[idx[i]].type, proc->rlimits[idx[i - 1]].type) == 0)
      {
        spec_jp_index (p, idx[i]);
        spec_jp_key (p, "type");
        return spec_jp_err (p, err, "duplicate rlimit \"%s\" (already set by process.rlimits[%zu])",
                            proc->rlimits[idx[i]].type, idx[i - 1]);
      }
  return 0;
}

int
spec_parse_process (struct jpath *p, yajl_val v, struct kist_process **out, struct kist_error **err)
{
  __attribute__ ((cleanup (process_freep))) struct kist_process *proc = NULL;
  yajl_val o;
  size_t m;
  int r;

  if (!YAJL_IS_OBJECT (v))
    return spec_jp_err (p, err, "expected object");
  proc = xcalloc (1, sizeof *proc);

  if ((r = spec_get_bool (p, v, "terminal", &proc->terminal, err)) < 0)
    return r;

  r = spec_enter (p, v, "consoleSize", yajl_t_object, false, &o, &m, err);
  if (r < 0)
    return r;
  if (r > 0)
    {
      uint32_t h = 0, w = 0;
      if ((r = spec_get_u32 (p, o, "height", true, &h, NULL, err)) < 0
          || (r = spec_get_u32 (p, o, "width", true, &w, NULL, err)) < 0)
        return r;
      proc->has_console_size = true;
      proc->console_height = h;
      proc->console_width = w;
      spec_jp_pop (p, m);
    }

  if ((r = SPEC_PARSE_AT (p, v, "user", yajl_t_object, u, parse_user (p, u, &proc->user, err), err))
      < 0)
    return r;

  r = spec_enter (p, v, "args", yajl_t_array, true, &o, &m, err);
  if (r < 0)
    return r;
  if (o->u.array.len == 0)
    return spec_jp_err (p, err, "must contain at least one element (the command to run)");
  if ((r = spec_val_strv (p, o, 0, &proc->args, err)) < 0)
    return r;
  spec_jp_pop (p, m);

  if ((r = spec_get_strv (p, v, "env", S_ENV, &proc->env, err)) < 0)
    return r;
  if (proc->env == NULL)
    proc->env = xcalloc (1, sizeof (char *));

  if ((r = spec_get_str (p, v, "cwd", S_REQUIRED | S_ABSOLUTE, &proc->cwd, err)) < 0)
    return r;

  if ((r = SPEC_PARSE_AT (p, v, "capabilities", yajl_t_object, c,
                          parse_capabilities (p, c,
                                              proc->capabilities
                                              = xcalloc (1, sizeof *proc->capabilities),
                                              err),
                          err))
          < 0
      || (r = SPEC_PARSE_AT (p, v, "rlimits", yajl_t_array, a, parse_rlimits (p, a, proc, err),
                             err))
             < 0)
    return r;

  if ((r = spec_get_bool (p, v, "noNewPrivileges", &proc->no_new_privileges, err)) < 0
      || (r = spec_get_int_range (p, v, "oomScoreAdj", -1000, 1000, &proc->oom_score_adj,
                                  &proc->has_oom_score_adj, err))
             < 0
      || (r = spec_get_str (p, v, "apparmorProfile", S_EMPTY_NULL, &proc->apparmor_profile, err))
             < 0
      || (r = spec_get_str (p, v, "selinuxLabel", S_EMPTY_NULL, &proc->selinux_label, err)) < 0)
    return r;

  if ((r = PARSE_OBJECT (p, v, "ioPriority", &proc->has_io_priority, parse_io_priority,
                         &proc->io_priority, err))
          < 0
      || (r = PARSE_OBJECT (p, v, "scheduler", &proc->has_scheduler, parse_scheduler,
                            &proc->scheduler, err))
             < 0
      || (r = PARSE_OBJECT (p, v, "execCPUAffinity", &proc->has_exec_cpu_affinity,
                            parse_exec_cpu_affinity, &proc->exec_cpu_affinity, err))
             < 0)
    return r;

  *out = steal_pointer (&proc);
  return 0;
}

/* ---- public API ---------------------------------------------------------- */

int
kist_process_parse (const char *json, size_t len, struct kist_process **out,
                    struct kist_error **err)
{
  _cleanup_yajl_ yajl_val tree = NULL;
  int r = spec_parse_tree (json, len, "process: ", &tree, err);
  if (r < 0)
    return r;
  struct jpath p = { .doc = "" };
  spec_jp_key (&p, "process");
  r = spec_parse_process (&p, tree, out, err);
  free (p.buf);
  return r < 0 ? r : 0;
}

void
kist_process_free (struct kist_process *p)
{
  if (p == NULL)
    return;
  free (p->user.additional_gids);
  kist_strv_free (p->args);
  kist_strv_free (p->env);
  free (p->cwd);
  if (p->capabilities)
    {
      kist_strv_free (p->capabilities->bounding);
      kist_strv_free (p->capabilities->effective);
      kist_strv_free (p->capabilities->inheritable);
      kist_strv_free (p->capabilities->permitted);
      kist_strv_free (p->capabilities->ambient);
      free (p->capabilities);
    }
  for (size_t i = 0; i < p->n_rlimits; i++)
    free (p->rlimits[i].type);
  free (p->rlimits);
  free (p->apparmor_profile);
  free (p->selinux_label);
  free (p->exec_cpu_affinity.initial);
  free (p->exec_cpu_affinity.final);
  free (p);
}
