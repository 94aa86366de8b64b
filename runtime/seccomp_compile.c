/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: resolved seccomp rules -> a classic BPF program, and loading one.
 *
 * libseccomp builds the program (seccomp_init, seccomp_arch_add,
 * seccomp_rule_add_array) and exports it with seccomp_export_bpf into a
 * memfd; kist never calls seccomp_load: it loads the program itself with
 * seccomp(2), so the filter flags (TSYNC, LOG, SPEC_ALLOW, NEW_LISTENER,
 * WAIT_KILLABLE_RECV) are passed at load time and are not part of the
 * program (they are part of the cache key all the same).
 *
 * The ENOSYS rule.  An allowlist profile is written against the syscalls of
 * its time.  A syscall added to the kernel later gets the default action,
 * and EPERM (or death) makes libc give up where ENOSYS would make it fall
 * back (clone3 -> clone, faccessat2 -> faccessat, statx -> fstatat, ...).
 * So when the default action is SCMP_ACT_ERRNO(EPERM) or a kill, kist puts
 * a short prefix in front of libseccomp's program:
 *
 *     native arch and  highest < nr < 0x40000000  ->  ERRNO(ENOSYS)
 *
 * where "highest" is the highest native syscall number that the profile
 * names anywhere (in any entry, with any action, gated out or not).  Only
 * the native arch is covered (compat arches keep the default action), and
 * the x32 range (bit 30) is left to libseccomp's own handling.  A syscall
 * the profile names keeps exactly the profile's action; an unnamed syscall
 * at or below "highest" keeps the default action.  (runc 1.1 patches the
 * program for each arch listed in architectures with the highest syscall
 * the profile names for it, unless the default is ALLOW, LOG or TRACE or
 * defaultErrnoRet is ENOSYS; crun returns ENOSYS only for syscalls listed
 * with it; kist's rule needs no knowledge of syscall tables beyond the
 * profile and does not change with the libseccomp version.)
 *
 * Rules go to libseccomp one by one in profile order, as runc adds them, so
 * that libseccomp resolves several rules for one syscall as it does under
 * runc (see seccomp_profile.c); what it refuses, kist refuses. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "seccomp.h"
#include "util.h"

#define X32_SYSCALL_BIT 0x40000000U
#define ENOSYS_PREFIX_LEN 6

static void
release_ctx (scmp_filter_ctx *c)
{
  if (*c)
    seccomp_release (*c);
}

static void
enosys_prefix (struct sock_filter out[ENOSYS_PREFIX_LEN], uint32_t native, uint32_t highest)
{
  const struct sock_filter prefix[ENOSYS_PREFIX_LEN] = {
    /* 0 */ BPF_STMT (BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, arch)),
    /* 1 */ BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, native, 0, 4),            /* else -> 6 */
    /* 2 */ BPF_STMT (BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, nr)),
    /* 3 */ BPF_JUMP (BPF_JMP | BPF_JGE | BPF_K, X32_SYSCALL_BIT, 2, 0),   /* x32 -> 6 */
    /* 4 */ BPF_JUMP (BPF_JMP | BPF_JGT | BPF_K, highest, 0, 1),           /* known -> 6 */
    /* 5 */ BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA)),
    /* 6: libseccomp's program */
  };
  memcpy (out, prefix, sizeof prefix);
}

/* libseccomp refused p->rules[i]; runc fails then, and so does kist.
 * EEXIST: libseccomp cannot merge a conditional rule into the decision tree
 * of the syscall's earlier rules, typically the same or wider conditions
 * than an earlier conditional rule with another action (the reverse order is
 * accepted: the narrower, later rule is dropped). */
static int
rule_error (const struct kist_seccomp_profile *p, size_t i, int errnum, struct kist_error **err)
{
  const struct kist_seccomp_rule *rule = &p->rules[i], *prev = NULL;
  char b1[32], b2[32];
  for (size_t k = i; k-- > 0;)
    if (p->rules[k].nr == rule->nr && p->rules[k].n_args
        && (prev == NULL || p->rules[k].action != rule->action))
      {
        prev = &p->rules[k];
        if (prev->action != rule->action)
          break;
      }
  if (errnum == EEXIST && prev)
    return kist_error_make (
        err, errnum,
        "seccomp: syscalls[%zu]: libseccomp refuses the conditional %s for `%s`: its conditions "
        "overlap those of syscalls[%zu], which gives %s, and libseccomp cannot give one argument "
        "value two actions (runc refuses this profile too); remove one of the two entries or make "
        "their conditions disjoint",
        rule->entry, kist_seccomp_action_str (rule->action, b1), rule->name, prev->entry,
        kist_seccomp_action_str (prev->action, b2));
  return kist_error_make (err, errnum,
                          "seccomp: syscalls[%zu] (`%s`, %s, %u condition%s): libseccomp refused "
                          "the rule; runc refuses such a profile too: fix or remove the entry",
                          rule->entry, rule->name, kist_seccomp_action_str (rule->action, b1),
                          rule->n_args, rule->n_args == 1 ? "" : "s");
}

int
kist_seccomp_compile (const struct kist_seccomp_profile *p, struct sock_filter **insns,
                      size_t *n_insns, struct kist_error **err)
{
  if (kist_seccomp_compile_unshrunk (p, insns, n_insns, err) < 0)
    return -1;
  kist_seccomp_shrink (insns, n_insns);
  return 0;
}

int
kist_seccomp_compile_unshrunk (const struct kist_seccomp_profile *p, struct sock_filter **insns,
                               size_t *n_insns, struct kist_error **err)
{
  char b[32];
  __attribute__ ((cleanup (release_ctx))) scmp_filter_ctx c = seccomp_init (p->default_action);
  if (c == NULL)
    return kist_error_make (err, EINVAL,
                            "seccomp: libseccomp cannot start a filter with default action %s "
                            "(not supported by this kernel or libseccomp)",
                            kist_seccomp_action_str (p->default_action, b));
  int r;
  /* Raw kernel error codes from libseccomp, and the binary-tree layout for
   * long allowlists (a lookup in O(log n) instead of a linear scan). */
  if ((r = seccomp_attr_set (c, SCMP_FLTATR_API_SYSRAWRC, 1)) < 0
      || (r = seccomp_attr_set (c, SCMP_FLTATR_CTL_OPTIMIZE, 2)) < 0)
    return kist_error_make (err, -r, "seccomp: libseccomp seccomp_attr_set");
  for (size_t i = 0; i < p->n_arches; i++)
    {
      if (p->arches[i] == p->native)
        continue;
      r = seccomp_arch_add (c, p->arches[i]);
      if (r < 0 && r != -EEXIST)
        return kist_error_make (err, -r, "seccomp: libseccomp cannot add architecture 0x%08" PRIx32,
                                p->arches[i]);
    }
  for (size_t i = 0; i < p->n_rules; i++)
    {
      const struct kist_seccomp_rule *rule = &p->rules[i];
      struct scmp_arg_cmp cmp[6];
      for (unsigned k = 0; k < rule->n_args; k++)
        cmp[k] = (struct scmp_arg_cmp){ .arg = rule->args[k].index,
                                        .op = (enum scmp_compare) rule->args[k].op,
                                        .datum_a = rule->args[k].value,
                                        .datum_b = rule->args[k].value_two };
      r = seccomp_rule_add_array (c, rule->action, rule->nr, rule->n_args, cmp);
      if (r < 0)
        return rule_error (p, i, -r, err);
    }

  _cleanup_close_ int fd = memfd_create ("kist-seccomp-bpf", MFD_CLOEXEC);
  if (fd < 0)
    return kist_error_make (err, errno, "seccomp: memfd_create");
  r = seccomp_export_bpf (c, fd);
  if (r < 0)
    return kist_error_make (err, -r, "seccomp: libseccomp seccomp_export_bpf");
  struct stat st;
  if (fstat (fd, &st) < 0)
    return kist_error_make (err, errno, "seccomp: fstat of the exported program");
  size_t size = (size_t) st.st_size;
  if (size == 0 || size % sizeof (struct sock_filter) != 0)
    return kist_error_make (err, EPROTO, "seccomp: libseccomp exported %zu bytes, not a program",
                            size);
  size_t n = size / sizeof (struct sock_filter);
  size_t pre = p->enosys ? ENOSYS_PREFIX_LEN : 0;
  if (n + pre > KIST_SECCOMP_MAX_INSNS)
    return kist_error_make (err, E2BIG,
                            "seccomp: the program has %zu instructions, more than the kernel's "
                            "limit of %d; shorten the profile (fewer argument conditions)",
                            n + pre, KIST_SECCOMP_MAX_INSNS);
  _cleanup_free_ struct sock_filter *prog = xcalloc (n + pre, sizeof *prog);
  if (pread (fd, prog + pre, size, 0) != (ssize_t) size)
    return kist_error_make (err, errno ? errno : EIO, "seccomp: read the exported program");
  if (pre)
    enosys_prefix (prog, p->native, (uint32_t) p->max_nr);
  *insns = steal_pointer (&prog);
  *n_insns = n + pre;
  return 0;
}

int
kist_seccomp_load (const struct sock_filter *insns, size_t n_insns, uint32_t flags, int *listener)
{
  struct sock_fprog prog = { .len = (unsigned short) n_insns,
                             .filter = (struct sock_filter *) insns };
  if (listener)
    *listener = -1;
  if (n_insns == 0 || n_insns > KIST_SECCOMP_MAX_INSNS)
    return -EINVAL;
  long r = syscall (SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &prog);
  if (r < 0)
    return -errno;
  if ((flags & SECCOMP_FILTER_FLAG_NEW_LISTENER) && listener)
    *listener = (int) r;
  return 0;
}

/* A classic-BPF interpreter for seccomp programs, run on a seccomp_data of
 * this architecture: what the kernel would answer for that syscall.  kist
 * uses it to know, before loading a filter, whether the execve it will make
 * afterwards is allowed (a filter that kills on execveat must not look like
 * a successful start).  An instruction it does not know is answered with
 * SECCOMP_RET_KILL_PROCESS: never a false "allowed". */
uint32_t
kist_seccomp_simulate (const struct sock_filter *insns, size_t n, int nr, const uint64_t args[6])
{
  struct seccomp_data d = { .nr = nr, .arch = seccomp_arch_native () };
  for (int i = 0; i < 6; i++)
    d.args[i] = args ? args[i] : 0;
  return kist_seccomp_simulate_data (insns, n, &d);
}

uint32_t
kist_seccomp_simulate_data (const struct sock_filter *insns, size_t n,
                            const struct seccomp_data *dp)
{
  const struct seccomp_data d = *dp;
  uint32_t a = 0, x = 0, mem[BPF_MEMWORDS] = { 0 };
  for (size_t pc = 0; pc < n; pc++)
    {
      const struct sock_filter *f = &insns[pc];
      uint32_t src = BPF_SRC (f->code) == BPF_X ? x : f->k;
      switch (BPF_CLASS (f->code))
        {
        case BPF_LD:
        case BPF_LDX:
          {
            uint32_t v;
            if (BPF_CLASS (f->code) == BPF_LD && BPF_MODE (f->code) == BPF_ABS
                && BPF_SIZE (f->code) == BPF_W && f->k % 4 == 0 && f->k + 4 <= sizeof d)
              memcpy (&v, (const char *) &d + f->k, 4);
            else if (BPF_MODE (f->code) == BPF_IMM)
              v = f->k;
            else if (BPF_MODE (f->code) == BPF_MEM && f->k < BPF_MEMWORDS)
              v = mem[f->k];
            else if (BPF_MODE (f->code) == BPF_LEN)
              v = sizeof d;
            else
              return SECCOMP_RET_KILL_PROCESS;
            if (BPF_CLASS (f->code) == BPF_LD)
              a = v;
            else
              x = v;
            break;
          }
        case BPF_ST:
        case BPF_STX:
          if (f->k >= BPF_MEMWORDS)
            return SECCOMP_RET_KILL_PROCESS;
          mem[f->k] = BPF_CLASS (f->code) == BPF_ST ? a : x;
          break;
        case BPF_ALU:
          switch (BPF_OP (f->code))
            {
            case BPF_ADD: a += src; break;
            case BPF_SUB: a -= src; break;
            case BPF_MUL: a *= src; break;
            case BPF_DIV: if (src == 0) return SECCOMP_RET_KILL_PROCESS; a /= src; break;
            case BPF_MOD: if (src == 0) return SECCOMP_RET_KILL_PROCESS; a %= src; break;
            case BPF_AND: a &= src; break;
            case BPF_OR: a |= src; break;
            case BPF_XOR: a ^= src; break;
            case BPF_LSH: a = src < 32 ? a << src : 0; break;
            case BPF_RSH: a = src < 32 ? a >> src : 0; break;
            case BPF_NEG: a = -a; break;
            default: return SECCOMP_RET_KILL_PROCESS;
            }
          break;
        case BPF_JMP:
          {
            bool t;
            switch (BPF_OP (f->code))
              {
              case BPF_JA:
                pc += f->k;
                continue;
              case BPF_JEQ: t = a == src; break;
              case BPF_JGT: t = a > src; break;
              case BPF_JGE: t = a >= src; break;
              case BPF_JSET: t = (a & src) != 0; break;
              default: return SECCOMP_RET_KILL_PROCESS;
              }
            pc += t ? f->jt : f->jf;
            break;
          }
        case BPF_RET:
          return BPF_RVAL (f->code) == BPF_A ? a : f->k;
        case BPF_MISC:
          if (BPF_MISCOP (f->code) == BPF_TAX)
            x = a;
          else
            a = x;
          break;
        default:
          return SECCOMP_RET_KILL_PROCESS;
        }
    }
  return SECCOMP_RET_KILL_PROCESS; /* fell off the end: the kernel refuses such programs */
}

bool
kist_seccomp_lets_through (const struct sock_filter *insns, size_t n, int nr,
                           const uint64_t args[6])
{
  uint32_t act = kist_seccomp_simulate (insns, n, nr, args) & SECCOMP_RET_ACTION_FULL;
  return act == SECCOMP_RET_ALLOW || act == SECCOMP_RET_LOG || act == SECCOMP_RET_TRACE
         || act == SECCOMP_RET_USER_NOTIF;
}
