/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: the five capability sets of the container process (layer
 * "capabilities").  Raw capget/capset and prctl, no libcap. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/capability.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "caps.h"
#include "layer.h"
#include "procfs.h"
#include "seccomp.h"
#include "util.h"

static const char *const cap_names[KIST_CAP_LAST_KNOWN + 1] = {
  [CAP_CHOWN] = "CAP_CHOWN",
  [CAP_DAC_OVERRIDE] = "CAP_DAC_OVERRIDE",
  [CAP_DAC_READ_SEARCH] = "CAP_DAC_READ_SEARCH",
  [CAP_FOWNER] = "CAP_FOWNER",
  [CAP_FSETID] = "CAP_FSETID",
  [CAP_KILL] = "CAP_KILL",
  [CAP_SETGID] = "CAP_SETGID",
  [CAP_SETUID] = "CAP_SETUID",
  [CAP_SETPCAP] = "CAP_SETPCAP",
  [CAP_LINUX_IMMUTABLE] = "CAP_LINUX_IMMUTABLE",
  [CAP_NET_BIND_SERVICE] = "CAP_NET_BIND_SERVICE",
  [CAP_NET_BROADCAST] = "CAP_NET_BROADCAST",
  [CAP_NET_ADMIN] = "CAP_NET_ADMIN",
  [CAP_NET_RAW] = "CAP_NET_RAW",
  [CAP_IPC_LOCK] = "CAP_IPC_LOCK",
  [CAP_IPC_OWNER] = "CAP_IPC_OWNER",
  [CAP_SYS_MODULE] = "CAP_SYS_MODULE",
  [CAP_SYS_RAWIO] = "CAP_SYS_RAWIO",
  [CAP_SYS_CHROOT] = "CAP_SYS_CHROOT",
  [CAP_SYS_PTRACE] = "CAP_SYS_PTRACE",
  [CAP_SYS_PACCT] = "CAP_SYS_PACCT",
  [CAP_SYS_ADMIN] = "CAP_SYS_ADMIN",
  [CAP_SYS_BOOT] = "CAP_SYS_BOOT",
  [CAP_SYS_NICE] = "CAP_SYS_NICE",
  [CAP_SYS_RESOURCE] = "CAP_SYS_RESOURCE",
  [CAP_SYS_TIME] = "CAP_SYS_TIME",
  [CAP_SYS_TTY_CONFIG] = "CAP_SYS_TTY_CONFIG",
  [CAP_MKNOD] = "CAP_MKNOD",
  [CAP_LEASE] = "CAP_LEASE",
  [CAP_AUDIT_WRITE] = "CAP_AUDIT_WRITE",
  [CAP_AUDIT_CONTROL] = "CAP_AUDIT_CONTROL",
  [CAP_SETFCAP] = "CAP_SETFCAP",
  [CAP_MAC_OVERRIDE] = "CAP_MAC_OVERRIDE",
  [CAP_MAC_ADMIN] = "CAP_MAC_ADMIN",
  [CAP_SYSLOG] = "CAP_SYSLOG",
  [CAP_WAKE_ALARM] = "CAP_WAKE_ALARM",
  [CAP_BLOCK_SUSPEND] = "CAP_BLOCK_SUSPEND",
  [CAP_AUDIT_READ] = "CAP_AUDIT_READ",
  [CAP_PERFMON] = "CAP_PERFMON",
  [CAP_BPF] = "CAP_BPF",
  [CAP_CHECKPOINT_RESTORE] = "CAP_CHECKPOINT_RESTORE",
};

int
kist_cap_from_name (const char *name)
{
  if (name == NULL)
    return -1;
  const char *bare = strncasecmp (name, "CAP_", 4) == 0 ? name + 4 : name;
  if (*bare == '\0')
    return -1;
  for (int i = 0; i <= KIST_CAP_LAST_KNOWN; i++)
    if (strcasecmp (cap_names[i] + 4, bare) == 0)
      return i;
  return -1;
}

const char *
kist_cap_name (int cap)
{
  if (cap < 0 || cap > KIST_CAP_LAST_KNOWN)
    return NULL;
  return cap_names[cap];
}

int
kist_cap_last_cap (void)
{
  static int cached = -1;
  if (cached >= 0)
    return cached;

  int last = -1;
  _cleanup_close_ int fd = open ("/proc/sys/kernel/cap_last_cap", O_RDONLY | O_CLOEXEC);
  struct statfs sfs;
  if (fd >= 0 && fstatfs (fd, &sfs) == 0 && sfs.f_type == PROC_SUPER_MAGIC)
    {
      char buf[32];
      ssize_t n = read (fd, buf, sizeof buf - 1);
      if (n > 0)
        {
          buf[n] = '\0';
          int v;
          if (kist_parse_int (kist_rstrip (buf), &v) == 0 && v >= 0 && v < 64)
            last = v;
        }
    }
  if (last < 0 && prctl (PR_CAPBSET_READ, 0, 0, 0, 0) < 0)
    last = KIST_CAP_LAST_KNOWN;
  /* The kernel has the last word: PR_CAPBSET_READ fails with EINVAL past the
   * last cap (and this also covers running without procfs).  Never report
   * fewer caps than exist, or some would stay in the bounding set. */
  if (last < 0)
    last = 0;
  while (last < 63 && prctl (PR_CAPBSET_READ, last + 1, 0, 0, 0) >= 0)
    last++;
  cached = last;
  return cached;
}

uint64_t
kist_caps_mask (char *const *names, int last_cap, uint64_t *above, const char **unknown)
{
  uint64_t mask = 0;
  if (unknown)
    *unknown = NULL;
  for (size_t i = 0; names && names[i]; i++)
    {
      int c = kist_cap_from_name (names[i]);
      if (c < 0)
        {
          if (unknown && *unknown == NULL)
            *unknown = names[i];
          continue;
        }
      if (c > last_cap)
        {
          if (above)
            *above |= UINT64_C (1) << c;
          continue;
        }
      mask |= UINT64_C (1) << c;
    }
  return mask;
}

/* ---- the layer */

enum
{
  SET_BND,
  SET_EFF,
  SET_PRM,
  SET_INH,
  SET_AMB,
  SET_COUNT
};

static const char *const set_field[SET_COUNT]
    = { "bounding", "effective", "permitted", "inheritable", "ambient" };
static const char *const set_status[SET_COUNT]
    = { "CapBnd", "CapEff", "CapPrm", "CapInh", "CapAmb" };

static int
raw_capget (uint64_t *eff, uint64_t *prm, uint64_t *inh)
{
  struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
  struct __user_cap_data_struct data[2];
  memset (data, 0, sizeof data);
  if (syscall (SYS_capget, &hdr, data) < 0)
    return -errno;
  *eff = (uint64_t) data[0].effective | ((uint64_t) data[1].effective << 32);
  *prm = (uint64_t) data[0].permitted | ((uint64_t) data[1].permitted << 32);
  *inh = (uint64_t) data[0].inheritable | ((uint64_t) data[1].inheritable << 32);
  return 0;
}

static int
raw_capset (uint64_t eff, uint64_t prm, uint64_t inh)
{
  struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
  struct __user_cap_data_struct data[2];
  data[0].effective = (uint32_t) eff;
  data[1].effective = (uint32_t) (eff >> 32);
  data[0].permitted = (uint32_t) prm;
  data[1].permitted = (uint32_t) (prm >> 32);
  data[0].inheritable = (uint32_t) inh;
  data[1].inheritable = (uint32_t) (inh >> 32);
  if (syscall (SYS_capset, &hdr, data) < 0)
    return -errno;
  return 0;
}

/* Names of the caps in mask, comma-separated ("" when empty). */
static char *
mask_names (uint64_t mask)
{
  size_t cap = 64, len = 0;
  char *s = xmalloc (cap);
  s[0] = '\0';
  for (int c = 0; c < 64; c++)
    {
      if (!(mask & (UINT64_C (1) << c)))
        continue;
      char num[16];
      const char *n = kist_cap_name (c);
      if (n == NULL)
        {
          snprintf (num, sizeof num, "%d", c);
          n = num;
        }
      size_t l = strlen (n);
      if (len + l + 2 > cap)
        {
          cap = (len + l + 2) * 2;
          s = xrealloc (s, cap);
        }
      if (len)
        s[len++] = ',';
      memcpy (s + len, n, l + 1);
      len += l;
    }
  return s;
}

/* A hexadecimal Cap* line of /proc/self/status. */
static int
status_hex (const char *status, const char *field, uint64_t *out)
{
  _cleanup_free_ char *v = kist_proc_status_field (status, field);
  if (v == NULL)
    return -ENOENT;
  char *end = NULL;
  errno = 0;
  unsigned long long n = strtoull (v, &end, 16);
  if (errno || end == v)
    return -EINVAL;
  *out = n;
  return 0;
}

/* Steps 1-5.  Returns 0, or -errno with *why set. */
static int
apply_sets (const uint64_t want[SET_COUNT], int last, char **why)
{
  /* 1. Effective = permitted, so that we hold CAP_SETPCAP for the bounding set. */
  uint64_t eff = 0, prm = 0, inh = 0;
  int ret = raw_capget (&eff, &prm, &inh);
  if (ret < 0)
    {
      *why = xasprintf ("capget: %s", strerror (-ret));
      return ret;
    }
  /* (No capset when effective is permitted already: root's usual case.) */
  ret = eff == prm ? 0 : raw_capset (prm, prm, inh);
  if (ret < 0)
    {
      *why = xasprintf ("capset (raise effective to permitted 0x%016" PRIx64 "): %s", prm,
                        strerror (-ret));
      return ret;
    }

  /* 2. Bounding set: drop everything not requested.  Dropping a capability
   * the set no longer has is a no-op, so the set is read only where a drop
   * fails: a capability already out of it is then no error.  (The sets are
   * read back in verify_sets.) */
  for (int c = 0; c <= last; c++)
    {
      if (want[SET_BND] & (UINT64_C (1) << c))
        continue;
      if (prctl (PR_CAPBSET_DROP, c, 0, 0, 0) < 0)
        {
          int e = errno;
          if (prctl (PR_CAPBSET_READ, c, 0, 0, 0) == 0)
            continue;
          const char *n = kist_cap_name (c);
          *why = xasprintf ("dropping %s (%d) from the bounding set: %s%s", n ? n : "cap", c,
                            strerror (e),
                            e == EPERM ? " (CAP_SETPCAP is not in kist's permitted set)" : "");
          return -e;
        }
    }

  /* 3. Effective, permitted, inheritable. */
  ret = raw_capset (want[SET_EFF], want[SET_PRM], want[SET_INH]);
  if (ret < 0)
    {
      _cleanup_free_ char *hint = NULL;
      uint64_t not_prm = want[SET_EFF] & ~want[SET_PRM];
      uint64_t not_held = want[SET_PRM] & ~prm;
      uint64_t bnd_now = 0;
      for (int c = 0; c <= last; c++)
        if (prctl (PR_CAPBSET_READ, c, 0, 0, 0) == 1)
          bnd_now |= UINT64_C (1) << c;
      uint64_t inh_out = want[SET_INH] & ~(bnd_now | inh);
      if (ret == -EPERM && not_prm)
        {
          _cleanup_free_ char *n = mask_names (not_prm);
          hint = xasprintf ("; process.capabilities.effective has %s, which .permitted lacks "
                            "(effective must be a subset of permitted)",
                            n);
        }
      else if (ret == -EPERM && not_held)
        {
          _cleanup_free_ char *n = mask_names (not_held);
          hint = xasprintf ("; kist does not hold %s, and can only keep capabilities it has", n);
        }
      else if (ret == -EPERM && inh_out)
        {
          _cleanup_free_ char *n = mask_names (inh_out);
          hint = xasprintf ("; process.capabilities.inheritable has %s, which is not in the "
                            "bounding set",
                            n);
        }
      *why = xasprintf (
          "capset eff=0x%016" PRIx64 " prm=0x%016" PRIx64 " inh=0x%016" PRIx64 ": %s%s",
          want[SET_EFF], want[SET_PRM], want[SET_INH], strerror (-ret), hint ? hint : "");
      return ret;
    }

  /* 4. Ambient: clear, then raise each. */
  if (prctl (PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0)
    {
      int e = errno;
      *why = xasprintf ("clearing the ambient set: %s", strerror (e));
      return -e;
    }
  for (int c = 0; c <= last; c++)
    {
      if (!(want[SET_AMB] & (UINT64_C (1) << c)))
        continue;
      if (prctl (PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, c, 0, 0) < 0)
        {
          int e = errno;
          *why = xasprintf ("raising %s in the ambient set: %s%s", kist_cap_name (c), strerror (e),
                            e == EPERM ? " (an ambient capability must also be in "
                                         "process.capabilities.permitted and .inheritable)"
                                       : "");
          return -e;
        }
    }

  /* 5. Capabilities are no longer kept across a uid change. */
  if (prctl (PR_SET_KEEPCAPS, 0, 0, 0, 0) < 0)
    {
      int e = errno;
      *why = xasprintf ("prctl (PR_SET_KEEPCAPS, 0): %s", strerror (e));
      return -e;
    }
  return 0;
}

/* Read CapBnd/Eff/Prm/Inh/Amb back inside and compare: from /proc/self/status
 * through the fd opened before any filter (seccomp.h kist_inside_status), else
 * with capget and prctl where the filter lets them through, else not at all
 * (*source says which; the parent verifies from outside in any case). */
static int
verify_sets (struct kist_ctx *ctx, const uint64_t want[SET_COUNT], uint64_t got[SET_COUNT],
             const char **source, char **why)
{
  char buf[16384];
  int how = 0;
  const char *status = kist_inside_status (ctx, buf, sizeof buf, &how);
  *source = "/proc/self/status";
  if (status == NULL)
    {
      const uint64_t bnd_arg[6] = { PR_CAPBSET_READ, 0, 0, 0, 0, 0 };
      const uint64_t amb_arg[6] = { PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, 0, 0, 0, 0 };
      if (!kist_inside_allows (ctx, SYS_capget, NULL) || !kist_inside_allows (ctx, SYS_prctl, bnd_arg)
          || !kist_inside_allows (ctx, SYS_prctl, amb_arg))
        {
          *source = NULL; /* not read back inside: the filter denies it */
          return 0;
        }
      /* The container has no procfs at /proc (or the filter denies reading
       * it): ask the kernel directly. */
      *source = how == ENOENT || how == EXDEV ? "capget and prctl (no procfs at /proc)"
                                              : "capget and prctl";
      int ret = raw_capget (&got[SET_EFF], &got[SET_PRM], &got[SET_INH]);
      if (ret < 0)
        {
          *why = xasprintf ("capget (read back): %s", strerror (-ret));
          return ret;
        }
      got[SET_BND] = got[SET_AMB] = 0;
      for (int c = 0; c < 64; c++)
        {
          int b = prctl (PR_CAPBSET_READ, c, 0, 0, 0);
          if (b < 0)
            break;
          if (b == 1)
            got[SET_BND] |= UINT64_C (1) << c;
          if (prctl (PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, c, 0, 0) == 1)
            got[SET_AMB] |= UINT64_C (1) << c;
        }
    }
  else
    {
      for (int s = 0; s < SET_COUNT; s++)
        if (status_hex (status, set_status[s], &got[s]) < 0)
          {
            *why = xasprintf ("no readable %s line in /proc/self/status", set_status[s]);
            return -EPROTO;
          }
    }
  for (int s = 0; s < SET_COUNT; s++)
    if (got[s] != want[s])
      {
        _cleanup_free_ char *extra = mask_names (got[s] & ~want[s]);
        _cleanup_free_ char *missing = mask_names (want[s] & ~got[s]);
        *why = xasprintf ("%s says %s=0x%016" PRIx64 ", expected 0x%016" PRIx64
                          " (extra: %s; missing: %s)",
                          *source, set_status[s], got[s], want[s], *extra ? extra : "none",
                          *missing ? missing : "none");
        return -EPROTO;
      }
  return 0;
}

/* The sets the execve leaves the process (capabilities(7)), for an
 * executable without file capabilities that is not set-id: uid 0 (without
 * SECBIT_NOROOT) gets inheritable | bounding as permitted and effective,
 * cut to what it had when no_new_privileges forbids a gain; any other uid
 * keeps only its ambient set.  kist sets the sets before the execve; this is
 * what is in force once the program runs. */
static const char *
after_execve (const uint64_t set[SET_COUNT], bool root, bool nnp, uint64_t out[SET_COUNT])
{
  out[SET_BND] = set[SET_BND];
  out[SET_INH] = set[SET_INH];
  out[SET_AMB] = set[SET_AMB];
  if (root)
    {
      uint64_t p = set[SET_INH] | set[SET_BND] | set[SET_AMB];
      if (nnp)
        p &= set[SET_PRM];
      out[SET_PRM] = out[SET_EFF] = p;
      return nnp ? "uid 0: permitted and effective = inheritable | bounding, no more than before "
                   "(no_new_privileges)"
                 : "uid 0: permitted and effective = inheritable | bounding";
    }
  out[SET_PRM] = out[SET_EFF] = set[SET_AMB];
  return "not uid 0: permitted and effective = ambient";
}

int
kist_caps_apply (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err)
{
  const char *layer = "capabilities";
  const struct kist_capabilities *caps
      = ctx->spec->process ? ctx->spec->process->capabilities : NULL;
  int last = kist_cap_last_cap ();
  uint64_t want[SET_COUNT] = { 0 }, got[SET_COUNT] = { 0 };
  uint64_t above = 0; /* known names this kernel lacks: in kist_caps_unknown_text */
  if (caps)
    {
      char *const *sets[SET_COUNT]
          = { caps->bounding, caps->effective, caps->permitted, caps->inheritable, caps->ambient };
      for (int s = 0; s < SET_COUNT; s++)
        want[s] = kist_caps_mask (sets[s], last, &above, NULL);
    }

  _cleanup_free_ char *requested
      = caps == NULL
            ? xstrdup ("none (no process.capabilities: every set empty)")
            : xasprintf ("bnd=0x%" PRIx64 " eff=0x%" PRIx64 " prm=0x%" PRIx64 " inh=0x%" PRIx64
                         " amb=0x%" PRIx64,
                         want[SET_BND], want[SET_EFF], want[SET_PRM], want[SET_INH], want[SET_AMB]);

  /* A name neither kist nor this kernel knows is a grant that cannot be
   * given: left out, which leaves the process more confined, and said (here
   * and in the creating kist's log, kist_caps_unknown_text). */
  _cleanup_free_ char *why = NULL, *unknown = kist_caps_unknown_text (caps);
  const char *source = NULL;
  int ret = apply_sets (want, last, &why);
  if (ret == 0)
    ret = verify_sets (ctx, want, got, &source, &why);
  if (ret < 0)
    return kist_report_failed (r, layer, requested, -ret, err, "%s", why);

  const char *not_granted = unknown ? "; not granted (a grant that cannot be given leaves "
                                      "the process more confined): "
                                    : "";
  /* First what is in force once the program runs, then what kist set. */
  int secbits = prctl (PR_GET_SECUREBITS, 0, 0, 0, 0);
  /* The uid the user layer set (process.user.uid), not getuid (): a filter
   * loaded early may deny that. */
  bool root = ctx->spec->process && ctx->spec->process->user.uid == 0
              && !(secbits > 0 && (secbits & (1 << 0 /* SECBIT_NOROOT */)));
  bool nnp = ctx->spec->process && ctx->spec->process->no_new_privileges;
  uint64_t after[SET_COUNT];
  const char *rule = after_execve (want, root, nnp, after);
  _cleanup_free_ char *in_force
      = xasprintf ("bnd=0x%" PRIx64 " eff=0x%" PRIx64 " prm=0x%" PRIx64 " inh=0x%" PRIx64
                   " amb=0x%" PRIx64 " after the execve (capabilities(7), an executable without "
                   "file capabilities: %s); set before it: ",
                   after[SET_BND], after[SET_EFF], after[SET_PRM], after[SET_INH],
                   after[SET_AMB], rule);
  if (source == NULL)
    kist_report_applied (r, layer, requested,
                         "%sbnd=0x%" PRIx64 " eff=0x%" PRIx64 " prm=0x%" PRIx64 " inh=0x%" PRIx64
                         " amb=0x%" PRIx64 " (set; not read back inside: the container's "
                         "seccomp filter denies it)%s%s",
                         in_force, want[SET_BND], want[SET_EFF], want[SET_PRM], want[SET_INH],
                         want[SET_AMB], not_granted, unknown ? unknown : "");
  else
    kist_report_applied (r, layer, requested,
                         "%sbnd=0x%" PRIx64 " eff=0x%" PRIx64 " prm=0x%" PRIx64 " inh=0x%" PRIx64
                         " amb=0x%" PRIx64 " (read back%s%s)%s%s",
                         in_force, got[SET_BND], got[SET_EFF], got[SET_PRM], got[SET_INH],
                         got[SET_AMB], strcmp (source, "/proc/self/status") == 0 ? "" : " with ",
                         strcmp (source, "/proc/self/status") == 0 ? "" : source, not_granted,
                         unknown ? unknown : "");
  /* The parent reads the same five sets from outside (verify.c). */
  kist_report_expect (r, layer,
                      "bnd=%016" PRIx64 " eff=%016" PRIx64 " prm=%016" PRIx64 " inh=%016" PRIx64
                      " amb=%016" PRIx64,
                      want[SET_BND], want[SET_EFF], want[SET_PRM], want[SET_INH], want[SET_AMB]);
  return 0;
}

char *
kist_caps_unknown_text (const struct kist_capabilities *caps)
{
  if (caps == NULL)
    return NULL;
  int last = kist_cap_last_cap ();
  char *const *sets[SET_COUNT]
      = { caps->bounding, caps->effective, caps->permitted, caps->inheritable, caps->ambient };
  char *out = NULL;
  for (int s = 0; s < SET_COUNT; s++)
    for (size_t i = 0; sets[s] && sets[s][i]; i++)
      {
        const char *name = sets[s][i];
        int c = kist_cap_from_name (name);
        if (c >= 0 && c <= last)
          continue;
        _cleanup_free_ char *item
            = xasprintf ("%s in process.capabilities.%s (%s)", name, set_field[s],
                         c < 0 ? "unknown to kist"
                               : "above this kernel's cap_last_cap");
        char *joined = out ? xasprintf ("%s, %s", out, item) : xstrdup (item);
        free (out);
        out = joined;
      }
  return out;
}
