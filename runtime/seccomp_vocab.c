/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: the seccomp vocabulary of OCI profiles: the names of actions,
 * operators, architectures (also Go's) and filter flags, which arches a
 * kernel can show a filter, which flags this kernel takes, and the seccomp
 * part of `kist features`.  The profile parser is seccomp_profile.c. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <yajl/yajl_gen.h>

#include "json.h"
#include "seccomp.h"
#include "seccomp_vocab.h"
#include "util.h"

const struct named vocab_actions[] = {
  { "SCMP_ACT_KILL", SCMP_ACT_KILL },
  { "SCMP_ACT_KILL_PROCESS", SCMP_ACT_KILL_PROCESS },
  { "SCMP_ACT_KILL_THREAD", SCMP_ACT_KILL_THREAD },
  { "SCMP_ACT_TRAP", SCMP_ACT_TRAP },
  { "SCMP_ACT_ERRNO", SCMP_ACT_ERRNO (0) },
  { "SCMP_ACT_TRACE", SCMP_ACT_TRACE (0) },
  { "SCMP_ACT_ALLOW", SCMP_ACT_ALLOW },
  { "SCMP_ACT_LOG", SCMP_ACT_LOG },
  { "SCMP_ACT_NOTIFY", SCMP_ACT_NOTIFY },
};
const size_t vocab_n_actions = KIST_ARRAY_SIZE (vocab_actions);

const struct named vocab_operators[] = {
  { "SCMP_CMP_NE", SCMP_CMP_NE }, { "SCMP_CMP_LT", SCMP_CMP_LT },
  { "SCMP_CMP_LE", SCMP_CMP_LE }, { "SCMP_CMP_EQ", SCMP_CMP_EQ },
  { "SCMP_CMP_GE", SCMP_CMP_GE }, { "SCMP_CMP_GT", SCMP_CMP_GT },
  { "SCMP_CMP_MASKED_EQ", SCMP_CMP_MASKED_EQ },
};
const size_t vocab_n_operators = KIST_ARRAY_SIZE (vocab_operators);

const struct named vocab_archs[] = {
  { "SCMP_ARCH_X86", SCMP_ARCH_X86 },
  { "SCMP_ARCH_X86_64", SCMP_ARCH_X86_64 },
  { "SCMP_ARCH_X32", SCMP_ARCH_X32 },
  { "SCMP_ARCH_ARM", SCMP_ARCH_ARM },
  { "SCMP_ARCH_AARCH64", SCMP_ARCH_AARCH64 },
  { "SCMP_ARCH_MIPS", SCMP_ARCH_MIPS },
  { "SCMP_ARCH_MIPS64", SCMP_ARCH_MIPS64 },
  { "SCMP_ARCH_MIPS64N32", SCMP_ARCH_MIPS64N32 },
  { "SCMP_ARCH_MIPSEL", SCMP_ARCH_MIPSEL },
  { "SCMP_ARCH_MIPSEL64", SCMP_ARCH_MIPSEL64 },
  { "SCMP_ARCH_MIPSEL64N32", SCMP_ARCH_MIPSEL64N32 },
  { "SCMP_ARCH_PPC", SCMP_ARCH_PPC },
  { "SCMP_ARCH_PPC64", SCMP_ARCH_PPC64 },
  { "SCMP_ARCH_PPC64LE", SCMP_ARCH_PPC64LE },
  { "SCMP_ARCH_S390", SCMP_ARCH_S390 },
  { "SCMP_ARCH_S390X", SCMP_ARCH_S390X },
  { "SCMP_ARCH_PARISC", SCMP_ARCH_PARISC },
  { "SCMP_ARCH_PARISC64", SCMP_ARCH_PARISC64 },
  { "SCMP_ARCH_RISCV64", SCMP_ARCH_RISCV64 },
};
const size_t vocab_n_archs = KIST_ARRAY_SIZE (vocab_archs);

/* Go's GOARCH names, as docker profiles use them in includes/excludes. */
static const struct named go_archs[] = {
  { "386", SCMP_ARCH_X86 },         { "amd64", SCMP_ARCH_X86_64 },
  { "arm64", SCMP_ARCH_AARCH64 },   { "mipsle", SCMP_ARCH_MIPSEL },
  { "mips64le", SCMP_ARCH_MIPSEL64 }, { "mips64p32", SCMP_ARCH_MIPS64N32 },
  { "mips64p32le", SCMP_ARCH_MIPSEL64N32 },
};

const struct named vocab_flag_names[] = {
  { "SECCOMP_FILTER_FLAG_TSYNC", SECCOMP_FILTER_FLAG_TSYNC },
  { "SECCOMP_FILTER_FLAG_LOG", SECCOMP_FILTER_FLAG_LOG },
  { "SECCOMP_FILTER_FLAG_SPEC_ALLOW", SECCOMP_FILTER_FLAG_SPEC_ALLOW },
  { "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV", SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV },
};
const size_t vocab_n_flag_names = KIST_ARRAY_SIZE (vocab_flag_names);

/* The arches a kernel of a native arch can show a filter (seccomp_data.arch):
 * the native one and its compat ABIs.  Others in a profile's architectures
 * (e.g. SCMP_ARCH_AARCH64 on x86_64) can never match, so kist leaves them
 * out of the program instead of compiling a dead copy of every rule for
 * them (for a multi-arch default profile that halves size and compile time). */
static const struct
{
  uint32_t native;
  uint32_t compat[3];
} arch_families[] = {
  { SCMP_ARCH_X86_64, { SCMP_ARCH_X86, SCMP_ARCH_X32 } },
  { SCMP_ARCH_X32, { SCMP_ARCH_X86_64, SCMP_ARCH_X86 } },
  { SCMP_ARCH_X86, { 0 } },
  { SCMP_ARCH_AARCH64, { SCMP_ARCH_ARM } },
  { SCMP_ARCH_ARM, { 0 } },
  { SCMP_ARCH_PPC64, { SCMP_ARCH_PPC } },
  { SCMP_ARCH_PPC64LE, { 0 } },
  { SCMP_ARCH_PPC, { 0 } },
  { SCMP_ARCH_S390X, { SCMP_ARCH_S390 } },
  { SCMP_ARCH_S390, { 0 } },
  { SCMP_ARCH_MIPS64, { SCMP_ARCH_MIPS64N32, SCMP_ARCH_MIPS } },
  { SCMP_ARCH_MIPSEL64, { SCMP_ARCH_MIPSEL64N32, SCMP_ARCH_MIPSEL } },
  { SCMP_ARCH_MIPS, { 0 } },
  { SCMP_ARCH_MIPSEL, { 0 } },
  { SCMP_ARCH_PARISC64, { SCMP_ARCH_PARISC } },
  { SCMP_ARCH_PARISC, { 0 } },
  { SCMP_ARCH_RISCV64, { 0 } },
};

bool
vocab_arch_possible (uint32_t native, uint32_t a)
{
  if (a == native)
    return true;
  for (size_t i = 0; i < KIST_ARRAY_SIZE (arch_families); i++)
    if (arch_families[i].native == native)
      {
        for (size_t k = 0; k < KIST_ARRAY_SIZE (arch_families[i].compat); k++)
          if (arch_families[i].compat[k] == a)
            return true;
        return false;
      }
  return true;
}

const struct named *
vocab_lookup (const struct named *t, size_t n, const char *name)
{
  for (size_t i = 0; i < n; i++)
    if (strcmp (t[i].name, name) == 0)
      return &t[i];
  return NULL;
}

char *
vocab_names_list (const struct named *t, size_t n)
{
  size_t len = 1;
  for (size_t i = 0; i < n; i++)
    len += strlen (t[i].name) + 2;
  char *s = xmalloc (len), *p = s;
  for (size_t i = 0; i < n; i++)
    p += sprintf (p, "%s%s", i ? ", " : "", t[i].name);
  *p = '\0';
  return s;
}

bool
vocab_takes_data (uint32_t base)
{
  return base == SCMP_ACT_ERRNO (0) || base == SCMP_ACT_TRACE (0);
}

const char *
kist_seccomp_action_str (uint32_t action, char buf[32])
{
  uint32_t base = action & 0xffff0000U;
  if (base == (SCMP_ACT_ERRNO (0) & 0xffff0000U))
    snprintf (buf, 32, "SCMP_ACT_ERRNO(%u)", action & 0xffffU);
  else if (base == (SCMP_ACT_TRACE (0) & 0xffff0000U))
    snprintf (buf, 32, "SCMP_ACT_TRACE(%u)", action & 0xffffU);
  else
    {
      snprintf (buf, 32, "0x%08" PRIx32, action);
      for (size_t i = 1; i < KIST_ARRAY_SIZE (vocab_actions); i++) /* [0] is the KILL alias */
        if (vocab_actions[i].value == action)
          snprintf (buf, 32, "%s", vocab_actions[i].name);
    }
  return buf;
}

bool
vocab_arch_from_any_name (const char *s, uint32_t *tok)
{
  const struct named *n = vocab_lookup (vocab_archs, KIST_ARRAY_SIZE (vocab_archs), s);
  if (n == NULL)
    n = vocab_lookup (go_archs, KIST_ARRAY_SIZE (go_archs), s);
  if (n)
    {
      *tok = n->value;
      return true;
    }
  /* libseccomp's own names: "x86_64", "aarch64", "x32", ... */
  uint32_t t = seccomp_arch_resolve_name (s);
  if (t == 0)
    return false;
  *tok = t;
  return true;
}

bool
kist_seccomp_flags_supported (uint32_t flags)
{
  /* A NULL program: the kernel checks the flags first (EINVAL), then copies
   * the program (EFAULT).  Nothing is installed either way. */
  long r = syscall (SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, NULL);
  return r < 0 && errno == EFAULT;
}

/* ------------------------------------------------------------ features */

static void
gen_str (yajl_gen g, const char *s)
{
  yajl_gen_string (g, (const unsigned char *) s, strlen (s));
}

static void
gen_names (yajl_gen g, const char *key, const struct named *t, size_t n, uint32_t only_mask,
           bool use_mask)
{
  gen_str (g, key);
  yajl_gen_array_open (g);
  for (size_t i = 0; i < n; i++)
    if (!use_mask || (t[i].value & only_mask) == t[i].value)
      gen_str (g, t[i].name);
  yajl_gen_array_close (g);
}

char *
kist_seccomp_features_json (void)
{
  _cleanup_yajl_gen_ yajl_gen g = kist_json_gen_new (false, false);
  yajl_gen_map_open (g);
  gen_str (g, "enabled");
  yajl_gen_bool (g, 1);
  gen_names (g, "actions", vocab_actions, KIST_ARRAY_SIZE (vocab_actions), 0, false);
  gen_names (g, "operators", vocab_operators, KIST_ARRAY_SIZE (vocab_operators), 0, false);
  gen_names (g, "archs", vocab_archs, KIST_ARRAY_SIZE (vocab_archs), 0, false);
  gen_names (g, "knownFlags", vocab_flag_names, KIST_ARRAY_SIZE (vocab_flag_names), 0, false);
  uint32_t supported = 0;
  for (size_t i = 0; i < KIST_ARRAY_SIZE (vocab_flag_names); i++)
    {
      uint32_t probe = vocab_flag_names[i].value;
      if (probe == SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV)
        probe |= SECCOMP_FILTER_FLAG_NEW_LISTENER;
      if (kist_seccomp_flags_supported (probe))
        supported |= vocab_flag_names[i].value;
    }
  gen_names (g, "supportedFlags", vocab_flag_names, KIST_ARRAY_SIZE (vocab_flag_names), supported,
             true);
  yajl_gen_map_close (g);
  return kist_json_gen_take (g);
}
