/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: linux.personality (layer "personality") and linux.memoryPolicy
 * ("memory_policy").
 *
 * Both are set by the process about to execve (the container init, the
 * process of kist exec) for itself, before any seccomp filter, and read back
 * with the query form of the same call: personality(0xffffffff) and
 * get_mempolicy.  Both are inherited over fork and kept over execve.
 *
 * The personality is set to the domain alone (PER_LINUX 0, PER_LINUX32 8),
 * as runc does: no flag kist's caller ran with (ADDR_NO_RANDOMIZE of
 * `setarch -R`, say) reaches the container. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "layer.h"
#include "util.h"
#include "verify_int.h"

int
kist_personality_apply (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err)
{
  const struct kist_linux *l = ctx->spec->linux_;
  if (l == NULL || !l->has_personality)
    {
      kist_report_skip (r, "personality",
                        "linux.personality not set: the execution domain is inherited");
      return 0;
    }
  unsigned long want = l->personality.domain;
  const char *req = want == PER_LINUX32 ? "LINUX32" : "LINUX";
  if (personality (want) < 0)
    {
      int e = errno;
      return kist_report_failed (r, "personality", req, e, err,
                                 "linux.personality.domain %s: personality(0x%lx): %s%s", req,
                                 want, strerror (e),
                                 want == PER_LINUX32 ? " (this kernel or architecture has no "
                                                       "32-bit domain: use LINUX)"
                                                     : "");
    }
  int got = personality (0xffffffff);
  if (got < 0)
    {
      int e = errno;
      return kist_report_failed (r, "personality", req, e, err,
                                 "linux.personality: read back with personality(0xffffffff): %s",
                                 strerror (e));
    }
  if ((unsigned long) got != want)
    return kist_report_failed (r, "personality", req, EPROTO, err,
                               "linux.personality.domain %s: personality(0xffffffff) says 0x%x, "
                               "not 0x%lx",
                               req, (unsigned) got, want);
  kist_report_applied (r, "personality", req, "personality(0xffffffff): 0x%x (%s)",
                       (unsigned) got, req);
  kist_report_expect (r, "personality", "persona=%x", (unsigned) got); /* and from outside */
  return 0;
}

/* ---- memory_policy ---------------------------------------------------- */

#define KIST_MPOL_PREFERRED 1
#define KIST_MPOL_LOCAL 4
#define KIST_MPOL_DEFAULT 0
#define KIST_MPOL_MODE_FLAGS 0xe000
#define KIST_NODE_WORDS (KIST_IDLIST_MAX / (8 * sizeof (unsigned long)))

static const char *
mempolicy_hint (int e, const struct kist_memory_policy *mp)
{
  if (e == ENOSYS)
    return " (this kernel has no NUMA support, CONFIG_NUMA: remove linux.memoryPolicy)";
  if (e == EPERM)
    return " (MPOL_F_NUMA_BALANCING needs NUMA balancing in the kernel)";
  if (e != EINVAL)
    return "";
  if ((mp->mode == KIST_MPOL_DEFAULT || mp->mode == KIST_MPOL_LOCAL) && mp->nodes)
    return " (MPOL_DEFAULT and MPOL_LOCAL take no nodes: remove linux.memoryPolicy.nodes)";
  if (mp->nodes == NULL && mp->mode != KIST_MPOL_DEFAULT && mp->mode != KIST_MPOL_LOCAL
      && mp->mode != KIST_MPOL_PREFERRED)
    return " (this mode needs linux.memoryPolicy.nodes)";
  return " (no node of linux.memoryPolicy.nodes has memory and is in the container's cpuset "
         "(see /sys/devices/system/node/has_memory), the mode is unknown to this kernel, or the "
         "flags do not fit the mode)";
}

int
kist_memory_policy_apply (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err)
{
  const struct kist_linux *l = ctx->spec->linux_;
  if (l == NULL || !l->has_memory_policy)
    {
      kist_report_skip (r, "memory_policy",
                        "linux.memoryPolicy not set: the NUMA memory policy is inherited");
      return 0;
    }
  const struct kist_memory_policy *mp = &l->memory_policy;
  const char *mode = kist_mempolicy_mode_name (mp->mode);
  _cleanup_free_ char *req = xasprintf ("%s nodes %s flags 0x%x", mode,
                                        mp->nodes ? mp->nodes : "-", mp->flags);
  unsigned long want[KIST_NODE_WORDS], got[KIST_NODE_WORDS];
  const char *bad = NULL;
  kist_idlist_parse (mp->nodes ? mp->nodes : "", want, KIST_IDLIST_MAX, &bad);

  if (syscall (SYS_set_mempolicy, mp->mode | (int) mp->flags, mp->nodes ? want : NULL,
               mp->nodes ? (unsigned long) KIST_IDLIST_MAX : 0UL)
      < 0)
    {
      int e = errno;
      return kist_report_failed (r, "memory_policy", req, e, err,
                                 "linux.memoryPolicy: set_mempolicy(%s, nodes %s): %s%s", mode,
                                 mp->nodes ? mp->nodes : "none", strerror (e),
                                 mempolicy_hint (e, mp));
    }
  int m = -1;
  memset (got, 0, sizeof got);
  if (syscall (SYS_get_mempolicy, &m, got, (unsigned long) KIST_IDLIST_MAX, NULL, 0UL) < 0)
    {
      int e = errno;
      return kist_report_failed (r, "memory_policy", req, e, err,
                                 "linux.memoryPolicy: read back with get_mempolicy: %s",
                                 strerror (e));
    }
  int got_mode = m & ~KIST_MPOL_MODE_FLAGS;
  unsigned got_flags = (unsigned) m & KIST_MPOL_MODE_FLAGS;
  /* What the kernel keeps: no nodes for DEFAULT and LOCAL (and PREFERRED
   * without nodes, which it turns into LOCAL); the first node for PREFERRED
   * unless the flags make it keep the nodes as given. */
  int want_mode = mp->mode == KIST_MPOL_PREFERRED && mp->nodes == NULL ? KIST_MPOL_LOCAL
                                                                       : mp->mode;
  if (want_mode == KIST_MPOL_DEFAULT || want_mode == KIST_MPOL_LOCAL)
    memset (want, 0, sizeof want);
  else if (want_mode == KIST_MPOL_PREFERRED && !(mp->flags & 0xc000))
    {
      bool seen = false;
      for (size_t i = 0; i < KIST_NODE_WORDS; i++)
        for (size_t b = 0; b < 8 * sizeof (unsigned long); b++)
          if (want[i] & (1UL << b))
            {
              if (seen)
                want[i] &= ~(1UL << b);
              seen = true;
            }
    }
  _cleanup_free_ char *have = kist_idlist_format (got, KIST_IDLIST_MAX);
  _cleanup_free_ char *expect = kist_idlist_format (want, KIST_IDLIST_MAX);
  const char *got_name = kist_mempolicy_mode_name (got_mode);
  if (got_mode != want_mode || got_flags != mp->flags || memcmp (got, want, sizeof want) != 0)
    return kist_report_failed (
        r, "memory_policy", req, EPROTO, err,
        "linux.memoryPolicy: get_mempolicy says %s flags 0x%x nodes `%s`, expected %s flags "
        "0x%x nodes `%s`%s",
        got_name ? got_name : "?", got_flags, have, kist_mempolicy_mode_name (want_mode),
        mp->flags, expect,
        strcmp (have, expect) != 0 ? " (a node that does not exist or has no memory was "
                                     "dropped: name nodes of /sys/devices/system/node/has_memory)"
                                   : "");
  kist_report_applied (r, "memory_policy", req, "get_mempolicy: %s flags 0x%x nodes %s",
                       got_name ? got_name : "?", got_flags, *have ? have : "none");
  return 0;
}

/* ---- verified from outside (the registry's verify column) ------------- */

/* /proc/PID/personality (hex): the domain the process read back. */
static char *
persona_check (struct kist_ctx *ctx, const struct kist_layer *l, char **note)
{
  char path[64];
  snprintf (path, sizeof path, "/proc/%d/personality", (int) ctx->pid);
  _cleanup_free_ char *text = NULL, *want = vf_expect_word (l->expect, "persona");
  _cleanup_error_ struct kist_error *e = NULL;
  if (kist_read_file_at (AT_FDCWD, path, 64, &text, NULL, &e) < 0)
    {
      if (e->errnum == EACCES || e->errnum == EPERM)
        {
          *note = vf_unreadable_note (path, "");
          return NULL;
        }
      return xasprintf ("cannot read %s from outside: %s", path, e->msg);
    }
  unsigned long got = strtoul (text, NULL, 16), w = want ? strtoul (want, NULL, 16) : ~0UL;
  if (got != w)
    return xasprintf ("from outside, %s says %lx, not %s", path, got, want ? want : "?");
  *note = xasprintf ("verified from outside (%s)", path);
  return NULL;
}

VERIFIER (kist_personality_verify, persona_check, "personality")
