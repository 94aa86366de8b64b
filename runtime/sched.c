/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: process.ioPriority (layer "io_priority"), process.scheduler
 * ("scheduler") and process.execCPUAffinity ("exec_cpu_affinity").
 *
 * Each is applied by the process that is about to execve (the container
 * init, or the process of kist exec) to itself, while it still has kist's
 * credentials and before any seccomp filter, and read back with the
 * matching get call: ioprio_get, sched_getattr, sched_getaffinity.  All
 * three are inherited over fork and kept over execve.
 *
 * The I/O priority is set for the process (IOPRIO_WHO_PROCESS), not for its
 * process group: before the exec the process still shares kist's caller's
 * group, and every process of the container inherits it from the init
 * anyway. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "layer.h"
#include "util.h"
#include "verify_int.h"

/* ---- io_priority ------------------------------------------------------ */

#define KIST_IOPRIO_WHO_PROCESS 1
#define KIST_IOPRIO_CLASS_SHIFT 13
#define KIST_IOPRIO_PRIO_MASK ((1 << KIST_IOPRIO_CLASS_SHIFT) - 1)

/* The I/O priority of pid (0: the caller): the one read of the layer, inside
 * and from outside. */
static long
ioprio_of (pid_t pid)
{
  return syscall (SYS_ioprio_get, KIST_IOPRIO_WHO_PROCESS, (int) pid);
}

int
kist_io_priority_apply (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err)
{
  const struct kist_process *p = ctx->spec->process;
  if (p == NULL || !p->has_io_priority)
    {
      kist_report_skip (r, "io_priority",
                        "process.ioPriority not set: the I/O priority is inherited from kist");
      return 0;
    }
  const struct kist_io_priority *io = &p->io_priority;
  const char *cls = kist_ioprio_class_name (io->klass);
  _cleanup_free_ char *req = xasprintf ("%s priority %d", cls, io->priority);
  int want = (io->klass << KIST_IOPRIO_CLASS_SHIFT) | io->priority;

  if (syscall (SYS_ioprio_set, KIST_IOPRIO_WHO_PROCESS, 0, want) < 0)
    {
      int e = errno;
      return kist_report_failed (
          r, "io_priority", req, e, err,
          "process.ioPriority: ioprio_set(IOPRIO_WHO_PROCESS, %s, %d): %s%s", cls, io->priority,
          strerror (e),
          e == EPERM ? " (IOPRIO_CLASS_RT needs CAP_SYS_ADMIN or CAP_SYS_NICE in the initial "
                       "user namespace: run kist as root, or use IOPRIO_CLASS_BE or "
                       "IOPRIO_CLASS_IDLE)"
                     : "");
    }
  long got = ioprio_of (0);
  if (got < 0)
    {
      int e = errno;
      return kist_report_failed (r, "io_priority", req, e, err,
                                 "process.ioPriority: read back with ioprio_get: %s",
                                 strerror (e));
    }
  int got_class = (int) (got >> KIST_IOPRIO_CLASS_SHIFT);
  int got_prio = (int) (got & KIST_IOPRIO_PRIO_MASK);
  if (got_class != io->klass || got_prio != io->priority)
    return kist_report_failed (r, "io_priority", req, EPROTO, err,
                               "process.ioPriority: ioprio_get says class %d priority %d after "
                               "setting %s priority %d",
                               got_class, got_prio, cls, io->priority);
  kist_report_applied (r, "io_priority", req, "ioprio_get: %s, priority %d (0x%lx)", cls,
                       got_prio, got);
  kist_report_expect (r, "io_priority", "ioprio=%ld", got); /* and from outside */
  return 0;
}

/* ---- scheduler -------------------------------------------------------- */

/* struct sched_attr of sched_setattr(2), version 0 (48 bytes). */
struct kist_sched_attr
{
  uint32_t size;
  uint32_t sched_policy;
  uint64_t sched_flags;
  int32_t sched_nice;
  uint32_t sched_priority;
  uint64_t sched_runtime;
  uint64_t sched_deadline;
  uint64_t sched_period;
};

/* The scheduling attributes of pid (0: the caller), and their one-word
 * summary: what the layer reads back inside and the parent from outside. */
static int
sched_attr_of (pid_t pid, struct kist_sched_attr *g)
{
  *g = (struct kist_sched_attr){ 0 };
  return (int) syscall (SYS_sched_getattr, (int) pid, g, (unsigned) sizeof *g, 0U);
}

static char *
sched_summary (const struct kist_sched_attr *g)
{
  return xasprintf ("policy:%u,nice:%d,priority:%u,flags:0x%" PRIx64 ",runtime:%" PRIu64
                    ",deadline:%" PRIu64 ",period:%" PRIu64,
                    g->sched_policy, (int) g->sched_nice, g->sched_priority,
                    (uint64_t) g->sched_flags, (uint64_t) g->sched_runtime,
                    (uint64_t) g->sched_deadline, (uint64_t) g->sched_period);
}

#define KIST_SCHED_FIFO 1
#define KIST_SCHED_RR 2
#define KIST_SCHED_BATCH 3
#define KIST_SCHED_ISO 4
#define KIST_SCHED_DEADLINE 6
#define KIST_SCHED_FLAG_RESET_ON_FORK 0x01
#define KIST_SCHED_FLAG_KEEP_POLICY 0x08
#define KIST_SCHED_FLAG_KEEP_PARAMS 0x10
#define KIST_SCHED_FLAG_UTIL_CLAMP 0x60

static char *
sched_requested (const struct kist_scheduler *s)
{
  char *out = xasprintf ("%s", kist_sched_policy_name (s->policy));
#define ADD(fmt, ...)                                                                              \
  do                                                                                               \
    {                                                                                              \
      char *n_ = xasprintf ("%s " fmt, out, __VA_ARGS__);                                          \
      free (out);                                                                                  \
      out = n_;                                                                                    \
    }                                                                                              \
  while (0)
  if (s->nice)
    ADD ("nice %d", (int) s->nice);
  if (s->priority)
    ADD ("priority %d", (int) s->priority);
  if (s->flags)
    ADD ("flags 0x%" PRIx64, s->flags);
  if (s->runtime || s->deadline || s->period)
    ADD ("runtime %" PRIu64 " deadline %" PRIu64 " period %" PRIu64, s->runtime, s->deadline,
         s->period);
#undef ADD
  return out;
}

static const char *
sched_hint (int e, const struct kist_scheduler *s)
{
  if (s->policy == KIST_SCHED_ISO)
    return " (SCHED_ISO is not in the mainline Linux kernel: choose another policy)";
  if (e == EPERM)
    return " (SCHED_FIFO, SCHED_RR, SCHED_DEADLINE and a negative nice need CAP_SYS_NICE in "
           "the initial user namespace: run kist as root, or use SCHED_OTHER, SCHED_BATCH or "
           "SCHED_IDLE with a nice of 0 or more)";
  if (e == EINVAL && s->policy == KIST_SCHED_DEADLINE)
    return " (SCHED_DEADLINE needs 1024 <= runtime <= deadline <= period, in nanoseconds)";
  if (e == EINVAL && (s->policy == KIST_SCHED_FIFO || s->policy == KIST_SCHED_RR))
    return " (SCHED_FIFO and SCHED_RR need a priority from 1 to 99)";
  if (e == EINVAL)
    return " (SCHED_OTHER, SCHED_BATCH and SCHED_IDLE need priority 0)";
  return "";
}

int
kist_scheduler_apply (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err)
{
  const struct kist_process *p = ctx->spec->process;
  if (p == NULL || !p->has_scheduler)
    {
      kist_report_skip (r, "scheduler",
                        "process.scheduler not set: the scheduling policy is inherited from kist");
      return 0;
    }
  const struct kist_scheduler *s = &p->scheduler;
  _cleanup_free_ char *req = sched_requested (s);
  if (s->flags & KIST_SCHED_FLAG_UTIL_CLAMP)
    return kist_report_failed (r, "scheduler", req, EINVAL, err,
                               "process.scheduler.flags: SCHED_FLAG_UTIL_CLAMP_MIN/MAX need "
                               "utilization values that runtime-spec has no field for: remove "
                               "them");

  struct kist_sched_attr a = {
    .size = sizeof a,
    .sched_policy = (uint32_t) s->policy,
    .sched_flags = s->flags,
    .sched_nice = s->nice,
    .sched_priority = (uint32_t) s->priority,
    .sched_runtime = s->runtime,
    .sched_deadline = s->deadline,
    .sched_period = s->period,
  };
  if (syscall (SYS_sched_setattr, 0, &a, 0U) < 0)
    {
      int e = errno;
      return kist_report_failed (r, "scheduler", req, e, err,
                                 "process.scheduler: sched_setattr(%s): %s%s",
                                 kist_sched_policy_name (s->policy), strerror (e),
                                 sched_hint (e, s));
    }

  struct kist_sched_attr g = { 0 };
  if (sched_attr_of (0, &g) < 0)
    {
      int e = errno;
      return kist_report_failed (r, "scheduler", req, e, err,
                                 "process.scheduler: read back with sched_getattr: %s",
                                 strerror (e));
    }
  bool keep_policy = s->flags & KIST_SCHED_FLAG_KEEP_POLICY;
  bool keep_params = s->flags & KIST_SCHED_FLAG_KEEP_PARAMS;
  bool rt = s->policy == KIST_SCHED_FIFO || s->policy == KIST_SCHED_RR;
  bool fair = s->policy == 0 || s->policy == KIST_SCHED_BATCH;
  const char *bad = NULL;
  if (!keep_policy && g.sched_policy != (uint32_t) s->policy)
    bad = "policy";
  else if (!keep_params && rt && g.sched_priority != (uint32_t) s->priority)
    bad = "priority";
  else if (!keep_params && fair && g.sched_nice != s->nice)
    bad = "nice";
  else if (!keep_params && s->policy == KIST_SCHED_DEADLINE
           && (g.sched_runtime != s->runtime || g.sched_deadline != s->deadline
               || g.sched_period != (s->period ? s->period : s->deadline)))
    bad = "runtime/deadline/period";
  else if ((s->flags & KIST_SCHED_FLAG_RESET_ON_FORK)
           && !(g.sched_flags & KIST_SCHED_FLAG_RESET_ON_FORK))
    bad = "SCHED_FLAG_RESET_ON_FORK";
  if (bad)
    return kist_report_failed (r, "scheduler", req, EPROTO, err,
                               "process.scheduler: sched_getattr disagrees on the %s: policy %u "
                               "nice %d priority %u flags 0x%" PRIx64,
                               bad, g.sched_policy, (int) g.sched_nice, g.sched_priority,
                               (uint64_t) g.sched_flags);
  const char *name = kist_sched_policy_name ((int) g.sched_policy);
  kist_report_applied (r, "scheduler", req,
                       "sched_getattr: %s (%u), nice %d, priority %u, flags 0x%" PRIx64,
                       name ? name : "?", g.sched_policy, (int) g.sched_nice, g.sched_priority,
                       (uint64_t) g.sched_flags);
  _cleanup_free_ char *summary = sched_summary (&g);
  kist_report_expect (r, "scheduler", "attr=%s", summary); /* and from outside */
  return 0;
}

/* ---- exec_cpu_affinity ------------------------------------------------- */

#define KIST_CPUSET_SIZE CPU_ALLOC_SIZE (KIST_IDLIST_MAX)

/* What the initial step did, for the one entry the final step records. */
static struct
{
  bool recorded;        /* the initial step already recorded a failure */
  char *initial;        /* the initial affinity read back, NULL if none set */
} affinity_state;

/* The CPUs pid (0: the caller) may run on, as a list ("0-3,7") in a new
 * string, the set in have; NULL with errno on failure. */
static char *
affinity_of (pid_t pid, cpu_set_t *have)
{
  CPU_ZERO_S (KIST_CPUSET_SIZE, have);
  if (sched_getaffinity (pid, KIST_CPUSET_SIZE, have) < 0)
    return NULL;
  return kist_idlist_format ((unsigned long *) have, KIST_IDLIST_MAX);
}

/* Set the affinity to the CPUs of list (NULL: every CPU the cpuset allows,
 * the container's default) and read it back as a list in *got. */
static int
set_affinity (const char *list, char **got, int *errnum, const char **step)
{
  _cleanup_free_ cpu_set_t *want = CPU_ALLOC (KIST_IDLIST_MAX);
  _cleanup_free_ cpu_set_t *have = CPU_ALLOC (KIST_IDLIST_MAX);
  const char *bad = NULL;
  if (want == NULL || have == NULL)
    abort ();
  if (list != NULL)
    kist_idlist_parse (list, (unsigned long *) want, KIST_IDLIST_MAX, &bad);
  else
    memset (want, 0xff, KIST_CPUSET_SIZE);
  *step = "sched_setaffinity";
  if (sched_setaffinity (0, KIST_CPUSET_SIZE, want) < 0)
    {
      *errnum = errno;
      return -1;
    }
  *step = "sched_getaffinity";
  if ((*got = affinity_of (0, have)) == NULL)
    {
      *errnum = errno;
      return -1;
    }
  *errnum = 0;
  if (list != NULL && !CPU_EQUAL_S (KIST_CPUSET_SIZE, want, have))
    {
      *errnum = EINVAL;
      return -1;
    }
  return 0;
}

static char *
affinity_requested (const struct kist_exec_cpu_affinity *a)
{
  return xasprintf ("initial %s final %s", a->initial ? a->initial : "-",
                    a->final ? a->final : "-");
}

static int
affinity_failed (struct kist_report *r, const struct kist_exec_cpu_affinity *a, const char *key,
                 const char *list, const char *got, int e, const char *step,
                 struct kist_error **err)
{
  _cleanup_free_ char *req = affinity_requested (a);
  if (got != NULL)
    return kist_report_failed (r, "exec_cpu_affinity", req, e, err,
                               "process.execCPUAffinity.%s `%s`: the kernel set CPUs `%s` instead "
                               "(a CPU that does not exist, is offline or outside the "
                               "container's cpuset was dropped): name CPUs of "
                               "/sys/devices/system/cpu/online",
                               key, list, got);
  return kist_report_failed (r, "exec_cpu_affinity", req, e, err,
                             "process.execCPUAffinity.%s `%s`: %s: %s%s", key, list ? list : "",
                             step, strerror (e),
                             e == EINVAL ? " (none of these CPUs exists, is online and in the "
                                           "container's cpuset: name CPUs of "
                                           "/sys/devices/system/cpu/online)"
                                         : "");
}

int
kist_exec_cpu_affinity_initial (struct kist_ctx *ctx, struct kist_report *r,
                                struct kist_error **err)
{
  const struct kist_process *p = ctx->spec->process;
  if (p == NULL || !p->has_exec_cpu_affinity || p->exec_cpu_affinity.initial == NULL)
    return 0;
  const struct kist_exec_cpu_affinity *a = &p->exec_cpu_affinity;
  _cleanup_free_ char *got = NULL;
  int e = 0;
  const char *step = NULL;
  if (set_affinity (a->initial, &got, &e, &step) < 0)
    {
      affinity_state.recorded = true;
      return affinity_failed (r, a, "initial", a->initial, got, e, step, err);
    }
  free (affinity_state.initial);
  affinity_state.initial = steal_pointer (&got);
  return 0;
}

int
kist_exec_cpu_affinity_apply (struct kist_ctx *ctx, struct kist_report *r,
                              struct kist_error **err)
{
  const struct kist_process *p = ctx->spec->process;
  if (p == NULL || !p->has_exec_cpu_affinity)
    {
      kist_report_skip (r, "exec_cpu_affinity",
                        "process.execCPUAffinity not set: the CPU affinity is inherited");
      return 0;
    }
  const struct kist_exec_cpu_affinity *a = &p->exec_cpu_affinity;
  if (strcmp (r->operation, "exec") != 0)
    {
      kist_report_skip (r, "exec_cpu_affinity",
                        "process.execCPUAffinity does not apply to the container's init "
                        "(runtime-spec config.md); kist exec applies it to the processes it "
                        "starts");
      return 0;
    }
  if (affinity_state.recorded)
    return 0;
  if (a->initial == NULL && a->final == NULL)
    {
      kist_report_skip (r, "exec_cpu_affinity",
                        "process.execCPUAffinity names neither initial nor final CPUs");
      return 0;
    }
  /* final omitted or empty: the container's default, every CPU its cpuset
   * allows (the kernel cuts the full mask down to those). */
  _cleanup_free_ char *got = NULL;
  _cleanup_free_ char *req = affinity_requested (a);
  int e = 0;
  const char *step = NULL;
  if (set_affinity (a->final, &got, &e, &step) < 0)
    return affinity_failed (r, a, "final", a->final ? a->final : "(the cpuset's CPUs)", got, e,
                            step, err);
  kist_report_applied (r, "exec_cpu_affinity", req,
                       "sched_getaffinity: %s%s%sCPUs %s before execve%s",
                       affinity_state.initial ? "CPUs " : "",
                       affinity_state.initial ? affinity_state.initial : "",
                       affinity_state.initial ? " while kist set the process up in the container, "
                                              : "",
                       got, a->final ? "" : " (final omitted: the container's default)");
  kist_report_expect (r, "exec_cpu_affinity", "cpus=%s", got); /* and from outside */
  return 0;
}

/* ---- verified from outside (the registry's verify column) ------------- */

static char *
io_check (struct kist_ctx *ctx, const struct kist_layer *l, char **note)
{
  _cleanup_free_ char *want = vf_expect_word (l->expect, "ioprio");
  long got = ioprio_of (ctx->pid);
  if (got < 0)
    return xasprintf ("ioprio_get of pid %d from outside: %s", (int) ctx->pid, strerror (errno));
  _cleanup_free_ char *g = xasprintf ("%ld", got);
  if (want == NULL || strcmp (want, g) != 0)
    return xasprintf ("from outside, ioprio_get of pid %d says 0x%lx, not %s", (int) ctx->pid,
                      got, want ? want : "?");
  *note = xasprintf ("verified from outside (ioprio_get of pid %d)", (int) ctx->pid);
  return NULL;
}

VERIFIER (kist_io_priority_verify, io_check, "io_priority")

static char *
sched_check (struct kist_ctx *ctx, const struct kist_layer *l, char **note)
{
  _cleanup_free_ char *want = vf_expect_word (l->expect, "attr");
  struct kist_sched_attr g;
  if (sched_attr_of (ctx->pid, &g) < 0)
    return xasprintf ("sched_getattr of pid %d from outside: %s", (int) ctx->pid,
                      strerror (errno));
  _cleanup_free_ char *got = sched_summary (&g);
  if (want == NULL || strcmp (want, got) != 0)
    return xasprintf ("from outside, sched_getattr of pid %d says %s, not %s", (int) ctx->pid,
                      got, want ? want : "?");
  *note = xasprintf ("verified from outside (sched_getattr of pid %d)", (int) ctx->pid);
  return NULL;
}

VERIFIER (kist_scheduler_verify, sched_check, "scheduler")

static char *
affinity_check (struct kist_ctx *ctx, const struct kist_layer *l, char **note)
{
  _cleanup_free_ char *want = vf_expect_word (l->expect, "cpus");
  _cleanup_free_ cpu_set_t *have = CPU_ALLOC (KIST_IDLIST_MAX);
  if (have == NULL)
    abort ();
  _cleanup_free_ char *got = affinity_of (ctx->pid, have);
  if (got == NULL)
    return xasprintf ("sched_getaffinity of pid %d from outside: %s", (int) ctx->pid,
                      strerror (errno));
  if (want == NULL || strcmp (want, got) != 0)
    return xasprintf ("from outside, sched_getaffinity of pid %d says CPUs %s, not %s",
                      (int) ctx->pid, got, want ? want : "?");
  *note = xasprintf ("verified from outside (sched_getaffinity of pid %d)", (int) ctx->pid);
  return NULL;
}

VERIFIER (kist_exec_cpu_affinity_verify, affinity_check, "exec_cpu_affinity")
