/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: the same decisions in fewer instructions: libseccomp's syscall
 * dispatch rewritten as a balanced tree of ranges.
 *
 * libseccomp's binary-tree layout (SCMP_FLTATR_CTL_OPTIMIZE 2) still tests
 * every syscall of an allowlist with its own JEQ: kist's strict profile
 * spends 361 of its 524 instructions finding which block a syscall number
 * goes to, though the 457 numbers of x86_64 fall into 80 runs of neighbours
 * that go to the same block (allowed, EPERM, ENOSYS, or one of 10 argument
 * checks).  The kernel JIT-compiles every instruction at each load and
 * frees the image at each exit (with text patching and TLB flushes on every
 * CPU), so the length of the program is paid by every container.
 *
 * What is rewritten: a dispatch region, the instructions after an `ld nr`
 * that compare the syscall number with constants (JEQ, JGT, JGE with K) or
 * jump unconditionally, up to the first instruction that is neither (a
 * target: a return, an argument load, anything else).  Which target a
 * number reaches depends only on which side of each constant it lies, so
 * the numbers 0, k and k + 1 for every constant k of the program partition
 * the 32-bit range exactly; neighbouring intervals with the same target are
 * merged.  The region is replaced by one JGE per boundary, as a balanced
 * tree, and one leaf per target: a copy of the target when it returns, a
 * jump to it otherwise.  Every other instruction is kept as it was, in the
 * same order, with its jumps recomputed.  A is never written in the tree,
 * so a target that reads it still sees the syscall number.
 *
 * A region is left as it is when anything outside it jumps or falls into
 * it, when a jump would not fit in its 8 bits, or when the tree is not
 * shorter.  Before a rewrite is kept, every boundary number is followed
 * through the new program and must reach the same target as in the old one
 * (the same return, or the kept instruction it jumped to), so what the
 * kernel decides never changes; tests/unit/test_seccomp.c also runs both
 * programs on the embedded profiles with many arguments. */
#define _GNU_SOURCE
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "seccomp.h"
#include "util.h"

#define NONE SIZE_MAX

static size_t
at_most (size_t a, size_t b)
{
  return a < b ? a : b;
}

static bool
is_ld_nr (const struct sock_filter *f)
{
  return f->code == (BPF_LD | BPF_W | BPF_ABS) && f->k == offsetof (struct seccomp_data, nr);
}

static bool
is_ja (const struct sock_filter *f)
{
  return f->code == (BPF_JMP | BPF_JA);
}

/* A comparison of A with a constant that the walk can decide. */
static bool
is_cmp (const struct sock_filter *f)
{
  return f->code == (BPF_JMP | BPF_JEQ | BPF_K) || f->code == (BPF_JMP | BPF_JGT | BPF_K)
         || f->code == (BPF_JMP | BPF_JGE | BPF_K);
}

static bool
cmp_true (const struct sock_filter *f, uint32_t a)
{
  switch (BPF_OP (f->code))
    {
    case BPF_JEQ: return a == f->k;
    case BPF_JGT: return a > f->k;
    default: return a >= f->k;
    }
}

/* Instructions the walks of one shrink may step through in all: a profile
 * of 4096 instructions reloading the number after every argument check
 * must not make a cache miss take seconds (kist's profiles need ~10^5). */
#define WALK_BUDGET (1u << 22)

/* From the instruction after `from`, with A = nr: the first instruction
 * that is no comparison or JA (the target); marks those passed in in_d
 * (when given).  NONE when a jump leaves the program or *budget runs out. */
static size_t
walk (const struct sock_filter *p, size_t n, size_t from, uint32_t nr, bool *in_d,
      size_t *budget)
{
  size_t pc = from + 1;
  while (pc < n)
    {
      if (*budget == 0)
        return NONE;
      --*budget;
      const struct sock_filter *f = &p[pc];
      size_t next;
      if (is_ja (f))
        next = pc + 1 + f->k;
      else if (is_cmp (f))
        next = pc + 1 + (cmp_true (f, nr) ? f->jt : f->jf);
      else
        return pc;
      if (in_d)
        in_d[pc] = true;
      if (next <= pc) /* cannot happen in classic BPF: k is unsigned; guards overflow */
        return NONE;
      pc = next;
    }
  return NONE;
}

static int
cmp_u64 (const void *a, const void *b)
{
  uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
  return x < y ? -1 : x > y;
}

struct interval
{
  uint32_t lo;
  size_t target; /* old pc */
};

struct shrink
{
  struct interval *iv;
  size_t n_iv;
  size_t *targets; /* distinct old target pcs, in order of first use */
  size_t n_targets;
  size_t *newpos;  /* old pc -> new pc (kept instructions) */
  size_t *leafpos; /* index in targets -> new pc of its leaf */
  struct sock_filter *out;
  size_t next; /* next free tree slot */
};

static size_t
target_index (const struct shrink *sh, size_t t)
{
  for (size_t i = 0; i < sh->n_targets; i++)
    if (sh->targets[i] == t)
      return i;
  return NONE;
}

/* The subtree for intervals lo..hi: its first instruction's new pc (a
 * leaf's when lo == hi).  Pre-order: the node, then its lower half (so the
 * false branch falls through when that half has a node), then its upper. */
static size_t
emit (struct shrink *sh, size_t lo, size_t hi, bool *ok)
{
  if (lo == hi)
    return sh->leafpos[target_index (sh, sh->iv[lo].target)];
  size_t m = lo + (hi - lo + 1) / 2;
  size_t at = sh->next++;
  size_t below = emit (sh, lo, m - 1, ok);
  size_t above = emit (sh, m, hi, ok);
  if (above - at - 1 > 255 || below - at - 1 > 255)
    *ok = false;
  sh->out[at] = (struct sock_filter) BPF_JUMP (BPF_JMP | BPF_JGE | BPF_K, sh->iv[m].lo,
                                               (uint8_t) (above - at - 1),
                                               (uint8_t) (below - at - 1));
  return at;
}

/* Rewrites the region after p[s] (an `ld nr`) into *out (n_out
 * instructions); false when it is left as it is. */
static bool
shrink_region (const struct sock_filter *p, size_t n, size_t s, const uint64_t *pts, size_t n_pts,
               size_t *budget, struct sock_filter **out, size_t *n_out)
{
  if (s + 1 >= n || !(is_cmp (&p[s + 1]) || is_ja (&p[s + 1])))
    return false; /* no comparison follows: no region */
  bool done = false;
  _cleanup_free_ bool *in_d = xcalloc (n, sizeof *in_d);
  struct shrink sh = { 0 };
  sh.iv = xcalloc (n_pts, sizeof *sh.iv);
  sh.targets = xcalloc (n_pts, sizeof *sh.targets);
  sh.newpos = xcalloc (n, sizeof *sh.newpos);
  sh.leafpos = xcalloc (n_pts, sizeof *sh.leafpos);

  /* The intervals and their targets. */
  for (size_t i = 0; i < n_pts; i++)
    {
      size_t t = walk (p, n, s, (uint32_t) pts[i], in_d, budget);
      if (t == NONE)
        goto out;
      if (sh.n_iv && sh.iv[sh.n_iv - 1].target == t)
        continue;
      sh.iv[sh.n_iv++] = (struct interval){ .lo = (uint32_t) pts[i], .target = t };
      if (target_index (&sh, t) == NONE)
        sh.targets[sh.n_targets++] = t;
    }
  size_t n_d = 0;
  for (size_t i = 0; i < n; i++)
    n_d += in_d[i];
  /* Nothing outside the region may enter it but p[s]'s fall-through. */
  for (size_t i = 0; i < n; i++)
    {
      if (in_d[i])
        continue;
      const struct sock_filter *f = &p[i];
      if (BPF_CLASS (f->code) == BPF_JMP)
        {
          size_t a = is_ja (f) ? i + 1 + f->k : i + 1 + f->jt, b = is_ja (f) ? a : i + 1 + f->jf;
          if ((a < n && in_d[a]) || (b < n && in_d[b]))
            goto out;
        }
      else if (BPF_CLASS (f->code) != BPF_RET && i != s && i + 1 < n && in_d[i + 1])
        goto out;
    }
  size_t nodes = sh.n_iv - 1, tree = nodes + sh.n_targets;
  if (tree >= n_d || tree > 256)
    goto out;

  /* Layout: p[0..s], the tree, the leaves, the rest of what is kept. */
  size_t len = n - n_d + tree, leaf0 = s + 1 + nodes, pos = leaf0 + sh.n_targets;
  for (size_t i = 0; i < n; i++)
    sh.newpos[i] = NONE;
  for (size_t i = 0; i <= s; i++)
    sh.newpos[i] = i;
  for (size_t i = s + 1; i < n; i++)
    if (!in_d[i])
      sh.newpos[i] = pos++;
  sh.out = xcalloc (len, sizeof *sh.out);
  for (size_t i = 0; i < n; i++)
    {
      if (sh.newpos[i] == NONE)
        continue;
      struct sock_filter f = p[i];
      size_t at = sh.newpos[i];
      if (is_ja (&f))
        f.k = (uint32_t) (sh.newpos[i + 1 + f.k] - at - 1);
      else if (BPF_CLASS (f.code) == BPF_JMP)
        {
          size_t a = sh.newpos[i + 1 + f.jt] - at - 1, b = sh.newpos[i + 1 + f.jf] - at - 1;
          if (a > 255 || b > 255)
            goto out;
          f.jt = (uint8_t) a;
          f.jf = (uint8_t) b;
        }
      sh.out[at] = f;
    }
  for (size_t j = 0; j < sh.n_targets; j++)
    {
      size_t t = sh.targets[j], at = leaf0 + j;
      sh.leafpos[j] = at;
      sh.out[at] = BPF_CLASS (p[t].code) == BPF_RET
                       ? p[t]
                       : (struct sock_filter) BPF_JUMP (BPF_JMP | BPF_JA,
                                                        (uint32_t) (sh.newpos[t] - at - 1), 0, 0);
    }
  bool ok = true;
  sh.next = s + 1;
  emit (&sh, 0, sh.n_iv - 1, &ok);
  if (!ok || sh.next != leaf0)
    goto out;

  /* The proof: every boundary number reaches the same target. */
  for (size_t i = 0; i < n_pts; i++)
    {
      size_t t_old = walk (p, n, s, (uint32_t) pts[i], NULL, budget);
      size_t t_new = walk (sh.out, len, s, (uint32_t) pts[i], NULL, budget);
      if (t_old == NONE || t_new == NONE)
        goto out;
      bool same = t_new == sh.newpos[t_old]
                  || (BPF_CLASS (p[t_old].code) == BPF_RET && t_new >= leaf0
                      && t_new < leaf0 + sh.n_targets
                      && memcmp (&sh.out[t_new], &p[t_old], sizeof p[t_old]) == 0);
      if (!same)
        goto out;
    }
  *out = steal_pointer (&sh.out);
  *n_out = len;
  done = true;
out:
  free (sh.iv);
  free (sh.targets);
  free (sh.newpos);
  free (sh.leafpos);
  free (sh.out);
  return done;
}

/* Drops what no path from the first instruction reaches (a return only the
 * old dispatch jumped to), with the jumps recomputed (they only get
 * shorter). */
static void
drop_unreachable (struct sock_filter **prog, size_t *n_insns)
{
  struct sock_filter *p = *prog;
  size_t n = *n_insns, kept = 0;
  _cleanup_free_ bool *reach = xcalloc (n + 1, sizeof *reach);
  _cleanup_free_ size_t *newpos = xcalloc (n + 1, sizeof *newpos);
  reach[0] = true;
  for (size_t i = 0; i < n; i++)
    {
      if (!reach[i])
        continue;
      newpos[i] = kept++;
      const struct sock_filter *f = &p[i];
      if (is_ja (f))
        reach[at_most (i + 1 + f->k, n)] = true;
      else if (BPF_CLASS (f->code) == BPF_JMP)
        reach[at_most (i + 1 + f->jt, n)] = reach[at_most (i + 1 + f->jf, n)] = true;
      else if (BPF_CLASS (f->code) != BPF_RET)
        reach[i + 1] = true;
    }
  if (kept == n || reach[n]) /* nothing to drop, or a path falls off (not a valid program) */
    return;
  struct sock_filter *out = xcalloc (kept, sizeof *out);
  for (size_t i = 0; i < n; i++)
    {
      if (!reach[i])
        continue;
      struct sock_filter f = p[i];
      size_t at = newpos[i];
      if (is_ja (&f))
        f.k = (uint32_t) (newpos[i + 1 + f.k] - at - 1);
      else if (BPF_CLASS (f.code) == BPF_JMP)
        {
          f.jt = (uint8_t) (newpos[i + 1 + f.jt] - at - 1);
          f.jf = (uint8_t) (newpos[i + 1 + f.jf] - at - 1);
        }
      out[at] = f;
    }
  free (p);
  *prog = out;
  *n_insns = kept;
}

/* Every jump lands inside the program and no path falls off its end (what
 * the kernel checks too): the only programs rewritten. */
static bool
well_formed (const struct sock_filter *p, size_t n)
{
  if (n == 0 || BPF_CLASS (p[n - 1].code) != BPF_RET)
    return false;
  for (size_t i = 0; i < n; i++)
    if (is_ja (&p[i]) ? (uint64_t) i + 1 + p[i].k >= n
                      : BPF_CLASS (p[i].code) == BPF_JMP
                            && (i + 1 + p[i].jt >= n || i + 1 + p[i].jf >= n))
      return false;
  return true;
}

void
kist_seccomp_shrink (struct sock_filter **prog, size_t *n_insns)
{
  if (!well_formed (*prog, *n_insns))
    return;
  size_t budget = WALK_BUDGET;
  /* The boundary numbers: 0, and k and k + 1 for every constant compared
   * (a superset of what any region needs; merged intervals absorb the
   * rest). */
  for (bool again = true; again;)
    {
      again = false;
      const struct sock_filter *p = *prog;
      size_t n = *n_insns, n_pts = 0;
      _cleanup_free_ uint64_t *pts = xcalloc (2 * n + 1, sizeof *pts);
      pts[n_pts++] = 0;
      for (size_t i = 0; i < n; i++)
        if (is_cmp (&p[i]))
          {
            pts[n_pts++] = p[i].k;
            if (p[i].k < UINT32_MAX)
              pts[n_pts++] = (uint64_t) p[i].k + 1;
          }
      qsort (pts, n_pts, sizeof *pts, cmp_u64);
      size_t u = 0;
      for (size_t i = 0; i < n_pts; i++)
        if (u == 0 || pts[u - 1] != pts[i])
          pts[u++] = pts[i];
      for (size_t s = 0; s < n && !again; s++)
        {
          struct sock_filter *out = NULL;
          size_t n_out = 0;
          if (is_ld_nr (&p[s]) && shrink_region (p, n, s, pts, u, &budget, &out, &n_out))
            {
              free (*prog);
              *prog = out;
              *n_insns = n_out;
              again = true;
            }
        }
    }
  drop_unreachable (prog, n_insns);
}
