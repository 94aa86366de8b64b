/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for the seccomp layer: runtime/sha256.c, seccomp_profile.c,
 * seccomp_compile.c, seccomp_cache.c, seccomp_notify.c, seccomp.c and the fd
 * passing in sync.c.  Filters are only ever loaded in forked children (that
 * set no_new_privileges first), never in the test process itself. */
#define _GNU_SOURCE
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "report.h"
#include "seccomp.h"
#include "spec.h"
#include "sync.h"
#include "util.h"
#include "unit.h"

/* Children that loaded a filter leave with a raw exit_group: _exit() is
 * noreturn, and under ASan that makes the runtime call sigaltstack first,
 * which a test filter may deny. */
static void
raw_exit (int code)
{
  syscall (SYS_exit_group, code);
}

#define ACT_ALLOW 0x7fff0000U
#define ACT_ERRNO(e) (0x00050000U | (e))
#define ACT_KILL_PROCESS 0x80000000U
#define ACT_NOTIFY 0x7fc00000U

/* Documents are written with ' for " to stay readable. */
static char *
q (const char *s)
{
  char *r = xstrdup (s);
  for (char *c = r; *c; c++)
    if (*c == '\'')
      *c = '"';
  return r;
}

static char *bounding_none[] = { NULL };

static struct kist_seccomp_profile *
parse_ok_env (const char *doc, const struct kist_seccomp_env *env)
{
  _cleanup_free_ char *json = q (doc);
  struct kist_seccomp_profile *p = NULL;
  struct kist_error *err = NULL;
  int r = kist_seccomp_profile_parse_json (json, strlen (json), "test: ", env, &p, &err);
  ck_assert_msg (r == 0, "parse failed: %s", err ? err->msg : "?");
  ck_assert_ptr_null (err);
  ck_assert_ptr_nonnull (p);
  return p;
}

static struct kist_seccomp_profile *
parse_ok (const char *doc)
{
  struct kist_seccomp_env env = { .bounding = bounding_none };
  return parse_ok_env (doc, &env);
}

/* Parse; returns the error message (the parse must fail). */
static char *
parse_err (const char *doc)
{
  _cleanup_free_ char *json = q (doc);
  struct kist_seccomp_profile *p = NULL;
  struct kist_error *err = NULL;
  struct kist_seccomp_env env = { .bounding = bounding_none };
  int r = kist_seccomp_profile_parse_json (json, strlen (json), "test: ", &env, &p, &err);
  ck_assert_msg (r < 0, "parse of %s succeeded", doc);
  ck_assert_ptr_null (p);
  ck_assert_ptr_nonnull (err);
  char *m = xstrdup (err->msg);
  kist_error_free (err);
  return m;
}

#define assert_err_has(doc, needle)                                                               \
  do                                                                                              \
    {                                                                                             \
      _cleanup_free_ char *m_ = parse_err (doc);                                                  \
      ck_assert_msg (strstr (m_, needle) != NULL, "`%s` not in `%s`", needle, m_);                \
    }                                                                                             \
  while (0)

static const struct kist_seccomp_rule *
find_rule (const struct kist_seccomp_profile *p, const char *name)
{
  for (size_t i = 0; i < p->n_rules; i++)
    if (strcmp (p->rules[i].name, name) == 0)
      return &p->rules[i];
  return NULL;
}

/* ---- SHA-256 ---- */

static void
hex_of (const void *data, size_t len, char hex[65])
{
  uint8_t d[KIST_SHA256_LEN];
  kist_sha256 (data, len, d);
  kist_sha256_hex (d, hex);
}

START_TEST (test_sha256_vectors)
{
  char hex[65];
  hex_of ("", 0, hex);
  ck_assert_str_eq (hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  hex_of ("abc", 3, hex);
  ck_assert_str_eq (hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  const char *m448 = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  hex_of (m448, strlen (m448), hex);
  ck_assert_str_eq (hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  const char *m896 = "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmn"
                     "hijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu";
  hex_of (m896, strlen (m896), hex);
  ck_assert_str_eq (hex, "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");

  /* One million 'a', fed in uneven pieces. */
  struct kist_sha256 s;
  kist_sha256_init (&s);
  char a[1000];
  memset (a, 'a', sizeof a);
  size_t done = 0, step = 1;
  while (done < 1000000)
    {
      size_t n = step < 1000000 - done ? step : 1000000 - done;
      n = n > sizeof a ? sizeof a : n;
      kist_sha256_update (&s, a, n);
      done += n;
      step = step * 7 % 997 + 1;
    }
  uint8_t d[KIST_SHA256_LEN];
  kist_sha256_final (&s, d);
  kist_sha256_hex (d, hex);
  ck_assert_str_eq (hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");

  /* Block-boundary lengths agree between one-shot and byte-wise. */
  for (size_t len = 54; len <= 130; len++)
    {
      char buf[130];
      memset (buf, 'x', len);
      uint8_t one[KIST_SHA256_LEN], two[KIST_SHA256_LEN];
      kist_sha256 (buf, len, one);
      kist_sha256_init (&s);
      for (size_t i = 0; i < len; i++)
        kist_sha256_update (&s, buf + i, 1);
      kist_sha256_final (&s, two);
      ck_assert_mem_eq (one, two, sizeof one);
    }
}
END_TEST

/* ---- parsing ---- */

START_TEST (test_parse_basic)
{
  struct kist_seccomp_profile *p
      = parse_ok ("{'defaultAction':'SCMP_ACT_ERRNO','defaultErrnoRet':1,"
                  "'architectures':['SCMP_ARCH_X86','SCMP_ARCH_X86_64','SCMP_ARCH_X86'],"
                  "'futureKey':{'ignored':true},"
                  "'syscalls':["
                  " {'names':['read','write','kist_no_such_call'],'action':'SCMP_ACT_ALLOW',"
                  "  'comment':'io'},"
                  " {'names':['getppid'],'action':'SCMP_ACT_ERRNO','errnoRet':42},"
                  " {'names':['personality'],'action':'SCMP_ACT_ALLOW',"
                  "  'args':[{'index':0,'value':4294967295,'op':'SCMP_CMP_EQ'}]},"
                  " {'names':['mkdirat'],'action':'SCMP_ACT_ERRNO'},"
                  " {'names':['ptrace'],'action':'SCMP_ACT_TRACE'},"
                  " {'names':['kill'],'action':'SCMP_ACT_KILL'},"
                  " {'names':['tkill'],'action':'SCMP_ACT_KILL_THREAD'},"
                  " {'names':['tgkill'],'action':'SCMP_ACT_KILL_PROCESS'},"
                  " {'names':['uname'],'action':'SCMP_ACT_LOG'},"
                  " {'names':['getuid'],'action':'SCMP_ACT_TRAP'},"
                  " {'names':['kist_no_such_call','another_unknown_call'],'action':'SCMP_ACT_LOG'},"
                  " {'name':'getgid','action':'SCMP_ACT_ALLOW'},"
                  " {'names':['ioctl'],'action':'SCMP_ACT_ALLOW','args':["
                  "   {'index':1,'value':18446744073709551615,'valueTwo':21522,"
                  "    'op':'SCMP_CMP_MASKED_EQ'}]}"
                  "]}");
  ck_assert_uint_eq (p->default_action, ACT_ERRNO (1));
  ck_assert_uint_eq (p->n_arches, 2); /* sorted, unique */
  ck_assert_uint_lt (p->arches[0], p->arches[1]);
  ck_assert_ptr_nonnull (find_rule (p, "read"));
  ck_assert_ptr_nonnull (find_rule (p, "getgid"));
  ck_assert_uint_eq (find_rule (p, "getppid")->action, ACT_ERRNO (42));
  /* Repeats the default action: dropped. */
  ck_assert_ptr_null (find_rule (p, "mkdirat"));
  ck_assert_uint_eq (find_rule (p, "ptrace")->action, 0x7ff00000U | EPERM);
  ck_assert_uint_eq (find_rule (p, "kill")->action, 0);
  ck_assert_uint_eq (find_rule (p, "tkill")->action, 0);
  ck_assert_uint_eq (find_rule (p, "tgkill")->action, ACT_KILL_PROCESS);
  ck_assert_uint_eq (find_rule (p, "uname")->action, 0x7ffc0000U);
  ck_assert_uint_eq (find_rule (p, "getuid")->action, 0x00030000U);
  const struct kist_seccomp_rule *pers = find_rule (p, "personality");
  ck_assert_uint_eq (pers->n_args, 1);
  ck_assert_uint_eq (pers->args[0].value, 4294967295ULL);
  const struct kist_seccomp_rule *io = find_rule (p, "ioctl");
  ck_assert_uint_eq (io->args[0].index, 1);
  ck_assert_uint_eq (io->args[0].value, UINT64_MAX);
  ck_assert_uint_eq (io->args[0].value_two, 21522);
  ck_assert_uint_eq (io->args[0].op, 7);
  /* Unknown names: skipped, listed once, sorted. */
  ck_assert_uint_eq (p->n_skipped, 2);
  ck_assert_str_eq (p->skipped[0], "another_unknown_call");
  ck_assert_str_eq (p->skipped[1], "kist_no_such_call");
  ck_assert_ptr_null (p->skipped[2]);
  /* ERRNO(EPERM) default: the ENOSYS rule is on, above the highest named. */
  ck_assert (p->enosys);
  ck_assert_int_eq (p->max_nr, SYS_mkdirat > SYS_tgkill ? SYS_mkdirat : SYS_tgkill);
  ck_assert (!p->notify);
  ck_assert_uint_eq (p->flags, 0);
  kist_seccomp_profile_free (p);

  /* ENOSYS only for ERRNO(EPERM) and kill defaults. */
  p = parse_ok ("{'defaultAction':'SCMP_ACT_ERRNO','defaultErrnoRet':38,'syscalls':["
                "{'names':['read'],'action':'SCMP_ACT_ALLOW'}]}");
  ck_assert (!p->enosys);
  kist_seccomp_profile_free (p);
  p = parse_ok ("{'defaultAction':'SCMP_ACT_KILL_PROCESS','syscalls':[{'names':['read'],"
                "'action':'SCMP_ACT_ALLOW'}]}");
  ck_assert (p->enosys);
  kist_seccomp_profile_free (p);
  p = parse_ok ("{'defaultAction':'SCMP_ACT_ALLOW','syscalls':[{'names':['read'],"
                "'action':'SCMP_ACT_ERRNO'}]}");
  ck_assert (!p->enosys);
  kist_seccomp_profile_free (p);
  p = parse_ok ("{'defaultAction':'SCMP_ACT_ERRNO'}");
  ck_assert (!p->enosys);
  ck_assert_int_eq (p->max_nr, -1);
  ck_assert_uint_eq (p->n_rules, 0);
  kist_seccomp_profile_free (p);
}
END_TEST

START_TEST (test_parse_gating)
{
  const char *doc
      = "{'defaultAction':'SCMP_ACT_ERRNO','syscalls':["
        " {'names':['mount'],'action':'SCMP_ACT_ALLOW','includes':{'caps':['CAP_SYS_ADMIN']}},"
        " {'names':['reboot'],'action':'SCMP_ACT_ALLOW','includes':{'caps':['CAP_SYS_BOOT',"
        "  'CAP_SYS_ADMIN']}},"
        " {'names':['clone'],'action':'SCMP_ACT_ALLOW','excludes':{'caps':['CAP_SYS_ADMIN']},"
        "  'args':[{'index':0,'value':2114060288,'valueTwo':0,'op':'SCMP_CMP_MASKED_EQ'}]},"
        " {'names':['clone'],'action':'SCMP_ACT_ALLOW','includes':{'caps':['CAP_SYS_ADMIN']}},"
        " {'names':['arch_prctl'],'action':'SCMP_ACT_ALLOW','includes':{'arches':['amd64','x32']}},"
        " {'names':['sync_file_range2'],'action':'SCMP_ACT_ALLOW',"
        "  'includes':{'arches':['ppc64le']}},"
        " {'names':['modify_ldt'],'action':'SCMP_ACT_ALLOW',"
        "  'excludes':{'arches':['SCMP_ARCH_X86_64','aarch64']}},"
        " {'names':['getcpu'],'action':'SCMP_ACT_ALLOW','includes':{'minKernel':'4.8'}},"
        " {'names':['getpid'],'action':'SCMP_ACT_ALLOW','includes':{'minKernel':'999.0'}}"
        "]}";
  char *admin[] = { "CAP_SYS_ADMIN", "CAP_KILL", NULL };
  struct kist_seccomp_env env = { .bounding = admin, .arch = 0xc000003eU /* x86_64 */,
                                  .kernel = "6.18.44-test" };
  struct kist_seccomp_profile *p = parse_ok_env (doc, &env);
  ck_assert_ptr_nonnull (find_rule (p, "mount"));
  ck_assert_ptr_null (find_rule (p, "reboot")); /* CAP_SYS_BOOT missing */
  const struct kist_seccomp_rule *c = find_rule (p, "clone");
  ck_assert_ptr_nonnull (c);
  ck_assert_uint_eq (c->n_args, 0); /* the admin variant */
  ck_assert_ptr_nonnull (find_rule (p, "arch_prctl"));
  ck_assert_ptr_null (find_rule (p, "sync_file_range2"));
  ck_assert_ptr_null (find_rule (p, "modify_ldt"));
  ck_assert_ptr_nonnull (find_rule (p, "getcpu"));
  ck_assert_ptr_null (find_rule (p, "getpid"));
  ck_assert_uint_eq (p->n_gated, 5);
  kist_seccomp_profile_free (p);

  env.bounding = NULL; /* no capabilities at all */
  p = parse_ok_env (doc, &env);
  ck_assert_ptr_null (find_rule (p, "mount"));
  c = find_rule (p, "clone");
  ck_assert_ptr_nonnull (c);
  ck_assert_uint_eq (c->n_args, 1);
  kist_seccomp_profile_free (p);

  env.arch = 0xc00000b7U; /* aarch64 */
  p = parse_ok_env (doc, &env);
  ck_assert_ptr_null (find_rule (p, "arch_prctl"));
  kist_seccomp_profile_free (p);

  /* Only the arches the kernel can run stay in the filter. */
  const char *multi = "{'defaultAction':'SCMP_ACT_ERRNO','architectures':['SCMP_ARCH_X86_64',"
                      "'SCMP_ARCH_X86','SCMP_ARCH_X32','SCMP_ARCH_AARCH64','SCMP_ARCH_ARM']}";
  env.arch = 0xc000003eU;
  p = parse_ok_env (multi, &env);
  ck_assert_uint_eq (p->n_arches, 3);
  for (size_t i = 0; i < p->n_arches; i++)
    ck_assert (p->arches[i] != 0xc00000b7U && p->arches[i] != 0x40000028U);
  kist_seccomp_profile_free (p);
  env.arch = 0xc00000b7U;
  p = parse_ok_env (multi, &env);
  ck_assert_uint_eq (p->n_arches, 2); /* aarch64 + arm */
  kist_seccomp_profile_free (p);

  /* docker's archMap, when architectures is absent: the native entry. */
  env.arch = 0xc000003eU;
  p = parse_ok_env ("{'defaultAction':'SCMP_ACT_ERRNO','archMap':[{'architecture':"
                    "'SCMP_ARCH_AARCH64','subArchitectures':['SCMP_ARCH_ARM']},{'architecture':"
                    "'SCMP_ARCH_X86_64','subArchitectures':['SCMP_ARCH_X86','SCMP_ARCH_X32']}]}",
                    &env);
  ck_assert_uint_eq (p->n_arches, 3);
  kist_seccomp_profile_free (p);
}
END_TEST

START_TEST (test_parse_malformed)
{
  /* Not JSON / not an object. */
  assert_err_has ("{'defaultAction':", "malformed JSON");
  assert_err_has ("[1,2]", "test: top level: expected object");
  /* Wrong types, with the JSON path. */
  assert_err_has ("{}", "test: defaultAction: required");
  assert_err_has ("{'defaultAction':7}", "defaultAction: expected string");
  assert_err_has ("{'defaultAction':'SCMP_ACT_ERRNO','defaultErrnoRet':'1'}",
                  "defaultErrnoRet: expected integer");
  assert_err_has ("{'defaultAction':'SCMP_ACT_ERRNO','defaultErrnoRet':-1}",
                  "defaultErrnoRet: must be between 0 and 4095, got -1");
  assert_err_has ("{'defaultAction':'SCMP_ACT_ERRNO','defaultErrnoRet':1.5}",
                  "defaultErrnoRet: expected integer");
  assert_err_has ("{'defaultAction':'SCMP_ACT_ERRNO','defaultErrnoRet':5000}",
                  "defaultErrnoRet: must be between 0 and 4095, got 5000");
  assert_err_has ("{'defaultAction':'SCMP_ACT_ALLOW','defaultErrnoRet':1}",
                  "defaultErrnoRet: only SCMP_ACT_ERRNO and SCMP_ACT_TRACE take an errno");
  /* config.md: a per-rule errnoRet with an action that takes none MUST fail
   * (ERRNO and TRACE, the ones that take it, are the control). */
  static const char *const no_errno[]
      = { "SCMP_ACT_ALLOW", "SCMP_ACT_KILL", "SCMP_ACT_KILL_PROCESS", "SCMP_ACT_KILL_THREAD",
          "SCMP_ACT_TRAP", "SCMP_ACT_LOG" };
  for (size_t i = 0; i < sizeof no_errno / sizeof *no_errno; i++)
    {
      char prof[256];
      snprintf (prof, sizeof prof,
                "{'defaultAction':'SCMP_ACT_ALLOW','syscalls':[{'names':['read'],"
                "'action':'SCMP_ACT_ERRNO'},{'names':['mkdir'],'action':'%s','errnoRet':1}]}",
                no_errno[i]);
      assert_err_has (prof,
                      "syscalls[1].errnoRet: only SCMP_ACT_ERRNO and SCMP_ACT_TRACE take an errno");
    }
  {
    struct kist_seccomp_profile *p
        = parse_ok ("{'defaultAction':'SCMP_ACT_ALLOW','syscalls':[{'names':['mkdir'],"
                    "'action':'SCMP_ACT_ERRNO','errnoRet':1},{'names':['rmdir'],"
                    "'action':'SCMP_ACT_TRACE','errnoRet':2}]}");
    ck_assert_uint_eq (find_rule (p, "mkdir")->action, ACT_ERRNO (1));
    ck_assert_uint_eq (find_rule (p, "rmdir")->action, 0x7ff00000U | 2); /* SECCOMP_RET_TRACE */
    kist_seccomp_profile_free (p);
  }
  assert_err_has ("{'defaultAction':'SCMP_ACT_ERRNO','syscalls':{}}",
                  "syscalls: expected array");
  assert_err_has ("{'defaultAction':'SCMP_ACT_ERRNO','syscalls':[3]}",
                  "syscalls[0]: expected object");
  assert_err_has ("{'defaultAction':'SCMP_ACT_ERRNO','syscalls':[{'names':['read',1],"
                  "'action':'SCMP_ACT_ALLOW'}]}",
                  "syscalls[0].names[1]: expected string");
  assert_err_has ("{'defaultAction':'SCMP_ACT_ERRNO','syscalls':[{'names':'read',"
                  "'action':'SCMP_ACT_ALLOW'}]}",
                  "syscalls[0].names: expected array");
  assert_err_has ("{'defaultAction':'SCMP_ACT_ERRNO','syscalls':[{'action':'SCMP_ACT_ALLOW'}]}",
                  "syscalls[0].names: required");
  assert_err_has ("{'defaultAction':'SCMP_ACT_ERRNO','syscalls':[{'names':['']"
                  ",'action':'SCMP_ACT_ALLOW'}]}",
                  "syscalls[0].names[0]: empty syscall name");
  /* config.md: names MUST have at least one entry. */
  assert_err_has ("{'defaultAction':'SCMP_ACT_ERRNO','syscalls':[{'names':[],"
                  "'action':'SCMP_ACT_ALLOW'}]}",
                  "syscalls[0].names: must contain at least one syscall name");
  /* config.md: listenerMetadata MUST NOT be set without listenerPath. */
  assert_err_has ("{'defaultAction':'SCMP_ACT_ALLOW','listenerMetadata':'m=1'}",
                  "listenerMetadata: must not be set without listenerPath");
  assert_err_has ("{'defaultAction':'SCMP_ACT_ALLOW','listenerPath':'','listenerMetadata':'m'}",
                  "listenerMetadata: must not be set without listenerPath");
  assert_err_has ("{'defaultAction':'SCMP_ACT_ERRNO','syscalls':[{'names':['read']}]}",
                  "syscalls[0].action: required");
  assert_err_has ("{'defaultAction':'SCMP_ACT_ERRNO','syscalls':[{'names':['read'],"
                  "'action':'SCMP_ACT_ALLOW','comment':5}]}",
                  "syscalls[0].comment: expected string");
  /* Unknown action, operator, arch, flag, capability: errors naming the path. */
  assert_err_has ("{'defaultAction':'SCMP_ACT_DENY'}",
                  "defaultAction: unknown action `SCMP_ACT_DENY`");
  assert_err_has ("{'defaultAction':'SCMP_ACT_ERRNO','syscalls':[{},{'names':['read'],"
                  "'action':'ALLOW'}]}",
                  "syscalls[0].action: required");
  assert_err_has ("{'defaultAction':'SCMP_ACT_ERRNO','syscalls':[{'names':['read'],"
                  "'action':'SCMP_ACT_ALLOW'},{'names':['read'],'action':'ALLOW'}]}",
                  "syscalls[1].action: unknown action `ALLOW`");
  assert_err_has ("{'defaultAction':'SCMP_ACT_ERRNO','syscalls':[{'names':['read'],"
                  "'action':'SCMP_ACT_ALLOW','args':[{'index':0,'value':1,"
                  "'op':'SCMP_CMP_BETWEEN'}]}]}",
                  "syscalls[0].args[0].op: unknown operator `SCMP_CMP_BETWEEN`");
  assert_err_has ("{'defaultAction':'SCMP_ACT_ERRNO','architectures':['SCMP_ARCH_X86_64',"
                  "'SCMP_ARCH_Z80']}",
                  "architectures[1]: unknown architecture `SCMP_ARCH_Z80`");
  assert_err_has ("{'defaultAction':'SCMP_ACT_ERRNO','flags':['SECCOMP_FILTER_FLAG_MAGIC']}",
                  "flags[0]: unknown seccomp flag `SECCOMP_FILTER_FLAG_MAGIC`");
  assert_err_has ("{'defaultAction':'SCMP_ACT_ERRNO','syscalls':[{'names':['read'],"
                  "'action':'SCMP_ACT_ALLOW','includes':{'caps':['CAP_MAGIC']}}]}",
                  "syscalls[0].includes.caps[0]: unknown capability `CAP_MAGIC`");
  assert_err_has ("{'defaultAction':'SCMP_ACT_ERRNO','syscalls':[{'names':['read'],"
                  "'action':'SCMP_ACT_ALLOW','includes':{'minKernel':'new'}}]}",
                  "syscalls[0].includes.minKernel: `new` is not a kernel version");
  /* Arguments. */
  assert_err_has ("{'defaultAction':'SCMP_ACT_ERRNO','syscalls':[{'names':['read'],"
                  "'action':'SCMP_ACT_ALLOW','args':[{'index':6,'value':1,'op':'SCMP_CMP_EQ'}]}]}",
                  "syscalls[0].args[0].index: must be between 0 and 5, got 6");
  assert_err_has ("{'defaultAction':'SCMP_ACT_ERRNO','syscalls':[{'names':['read'],"
                  "'action':'SCMP_ACT_ALLOW','args':[{'index':0,'op':'SCMP_CMP_EQ'}]}]}",
                  "syscalls[0].args[0].value: required");
  assert_err_has ("{'defaultAction':'SCMP_ACT_ERRNO','syscalls':[{'names':['read'],"
                  "'action':'SCMP_ACT_ALLOW','args':[{'index':0,'value':18446744073709551616,"
                  "'op':'SCMP_CMP_EQ'}]}]}",
                  "syscalls[0].args[0].value: expected unsigned 64-bit integer");
  /* NOTIFY. */
  assert_err_has ("{'defaultAction':'SCMP_ACT_NOTIFY'}",
                  "defaultAction: SCMP_ACT_NOTIFY cannot be the default action");
  assert_err_has ("{'defaultAction':'SCMP_ACT_ALLOW','syscalls':[{'names':['mkdir'],"
                  "'action':'SCMP_ACT_NOTIFY'}]}",
                  "test: listenerPath: required with SCMP_ACT_NOTIFY");
  assert_err_has ("{'defaultAction':'SCMP_ACT_ALLOW','listenerPath':'/x','syscalls':[{'names':"
                  "['sendmsg'],'action':'SCMP_ACT_NOTIFY'}]}",
                  "SCMP_ACT_NOTIFY on `sendmsg` would deadlock");
  assert_err_has ("{'defaultAction':'SCMP_ACT_ALLOW','flags':"
                  "['SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV']}",
                  "flags: SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV needs SCMP_ACT_NOTIFY rules");
  assert_err_has ("{'defaultAction':'SCMP_ACT_ALLOW','listenerPath':3}",
                  "listenerPath: expected string");
}
END_TEST

START_TEST (test_parse_flags_notify)
{
  struct kist_seccomp_profile *p
      = parse_ok ("{'defaultAction':'SCMP_ACT_ALLOW','flags':['SECCOMP_FILTER_FLAG_LOG',"
                  "'SECCOMP_FILTER_FLAG_SPEC_ALLOW','SECCOMP_FILTER_FLAG_TSYNC'],"
                  "'listenerPath':'/run/agent.sock','listenerMetadata':'m=1',"
                  "'syscalls':[{'names':['mkdir','mkdirat'],'action':'SCMP_ACT_NOTIFY'}]}");
  ck_assert (p->notify);
  ck_assert_str_eq (p->listener_path, "/run/agent.sock");
  ck_assert_str_eq (p->listener_metadata, "m=1");
  ck_assert_uint_eq (p->flags, SECCOMP_FILTER_FLAG_LOG | SECCOMP_FILTER_FLAG_SPEC_ALLOW
                                   | SECCOMP_FILTER_FLAG_TSYNC | SECCOMP_FILTER_FLAG_NEW_LISTENER
                                   | SECCOMP_FILTER_FLAG_TSYNC_ESRCH);
  ck_assert_uint_eq (find_rule (p, "mkdirat")->action, ACT_NOTIFY);
  kist_seccomp_profile_free (p);

  /* The kernel here knows every OCI flag. */
  ck_assert (kist_seccomp_flags_supported (SECCOMP_FILTER_FLAG_LOG));
  ck_assert (!kist_seccomp_flags_supported (1U << 30));
}
END_TEST

START_TEST (test_parse_10k)
{
  /* 10000 entries: known names repeated, unknown ones all different. */
  size_t cap = 1 << 20, len = 0;
  char *doc = xmalloc (cap);
  len += (size_t) sprintf (doc, "{\"defaultAction\":\"SCMP_ACT_ERRNO\",\"syscalls\":[");
  for (int i = 0; i < 10000; i++)
    {
      if (len + 256 > cap)
        doc = xrealloc (doc, cap *= 2);
      len += (size_t) sprintf (doc + len,
                               "%s{\"names\":[\"read\",\"kist_unknown_%d\",\"getpid\"],"
                               "\"action\":\"SCMP_ACT_ALLOW\",\"comment\":\"entry %d\","
                               "\"args\":[]}",
                               i ? "," : "", i, i);
    }
  len += (size_t) sprintf (doc + len, "]}");
  struct timespec t0, t1;
  clock_gettime (CLOCK_MONOTONIC, &t0);
  struct kist_seccomp_profile *p = NULL;
  struct kist_error *err = NULL;
  struct kist_seccomp_env env = { 0 };
  ck_assert_int_eq (kist_seccomp_profile_parse_json (doc, len, "", &env, &p, &err), 0);
  clock_gettime (CLOCK_MONOTONIC, &t1);
  double secs = (double) (t1.tv_sec - t0.tv_sec) + (double) (t1.tv_nsec - t0.tv_nsec) / 1e9;
  /* How long it took is a benchmark matter, not a pass/fail criterion. */
  (void) secs;
  ck_assert_uint_eq (p->n_rules, 20000);
  ck_assert_uint_eq (p->n_skipped, 10000);
  uint8_t k[KIST_SHA256_LEN];
  kist_seccomp_key (p, k);
  kist_seccomp_profile_free (p);
  free (doc);
}
END_TEST

/* ---- canonical form ---- */

START_TEST (test_canonical_stable)
{
  const char *a = "{'defaultAction':'SCMP_ACT_ERRNO','architectures':['SCMP_ARCH_X86',"
                  "'SCMP_ARCH_X86_64'],"
                  "'syscalls':[{'names':['read','write'],'action':'SCMP_ACT_ALLOW'},"
                  "{'names':['personality'],'action':'SCMP_ACT_ALLOW','args':[{'index':0,'value':8,"
                  "'op':'SCMP_CMP_EQ'}]}]}";
  /* Same content: other key order, whitespace, a comment, arches repeated. */
  const char *b = "{ 'syscalls' : [ {'action':'SCMP_ACT_ALLOW','names':['read','write'],"
                  "'comment':'x'},{'args':[{'op':'SCMP_CMP_EQ','value':8,'index':0,'valueTwo':0}],"
                  "'names':['personality'],'action':'SCMP_ACT_ALLOW'}],"
                  "'architectures':['SCMP_ARCH_X86_64','SCMP_ARCH_X86','SCMP_ARCH_X86'], "
                  "'defaultErrnoRet': 1, 'defaultAction':'SCMP_ACT_ERRNO'}";
  const char *c = "{'defaultAction':'SCMP_ACT_ERRNO','defaultErrnoRet':13,'architectures':["
                  "'SCMP_ARCH_X86','SCMP_ARCH_X86_64'],'syscalls':[{'names':['read','write'],"
                  "'action':'SCMP_ACT_ALLOW'},{'names':['personality'],'action':'SCMP_ACT_ALLOW',"
                  "'args':[{'index':0,'value':8,'op':'SCMP_CMP_EQ'}]}]}";
  struct kist_seccomp_profile *pa = parse_ok (a), *pb = parse_ok (b), *pc = parse_ok (c);
  uint8_t ka[KIST_SHA256_LEN], ka2[KIST_SHA256_LEN], kb[KIST_SHA256_LEN], kc[KIST_SHA256_LEN];
  kist_seccomp_key (pa, ka);
  kist_seccomp_key (pa, ka2);
  kist_seccomp_key (pb, kb);
  kist_seccomp_key (pc, kc);
  ck_assert_mem_eq (ka, ka2, sizeof ka);
  ck_assert_mem_eq (ka, kb, sizeof ka);
  ck_assert (memcmp (ka, kc, sizeof ka) != 0);

  size_t len = 0;
  _cleanup_free_ char *text = kist_seccomp_canonical (pa, &len);
  ck_assert_uint_eq (strlen (text), len);
  ck_assert_ptr_nonnull (strstr (text, "kist-seccomp-canonical 1\nkist "));
  ck_assert_ptr_nonnull (strstr (text, "\nlibseccomp 2."));
  ck_assert_ptr_nonnull (strstr (text, "\ndefault 0x00050001\n"));
  ck_assert_ptr_nonnull (strstr (text, " personality 0x7fff0000 1 0:4:0x8:0x0\n"));
  kist_seccomp_profile_free (pa);
  kist_seccomp_profile_free (pb);
  kist_seccomp_profile_free (pc);
}
END_TEST

/* The key changes with any one field of the resolved profile: every
 * variant below differs from the base in one place, and all keys differ
 * pairwise.  Among them: one name moved across entries with different
 * actions (the key writes an action once per run of equal ones), the
 * errno of one entry, an argument's index, operator, value and valueTwo. */
START_TEST (test_key_flips)
{
  const char *v[] = {
    /* 0: base */
    "{'defaultAction':'SCMP_ACT_ERRNO','architectures':['SCMP_ARCH_X86_64'],'syscalls':["
    "{'names':['read','write'],'action':'SCMP_ACT_ALLOW'},"
    "{'names':['getpid'],'action':'SCMP_ACT_ERRNO','errnoRet':38},"
    "{'names':['personality'],'action':'SCMP_ACT_ALLOW','args':[{'index':0,'value':8,"
    "'valueTwo':0,'op':'SCMP_CMP_EQ'}]}]}",
    /* 1: write moved to the ERRNO entry */
    "{'defaultAction':'SCMP_ACT_ERRNO','architectures':['SCMP_ARCH_X86_64'],'syscalls':["
    "{'names':['read'],'action':'SCMP_ACT_ALLOW'},"
    "{'names':['write','getpid'],'action':'SCMP_ACT_ERRNO','errnoRet':38},"
    "{'names':['personality'],'action':'SCMP_ACT_ALLOW','args':[{'index':0,'value':8,"
    "'valueTwo':0,'op':'SCMP_CMP_EQ'}]}]}",
    /* 2: errnoRet 38 -> 39 */
    "{'defaultAction':'SCMP_ACT_ERRNO','architectures':['SCMP_ARCH_X86_64'],'syscalls':["
    "{'names':['read','write'],'action':'SCMP_ACT_ALLOW'},"
    "{'names':['getpid'],'action':'SCMP_ACT_ERRNO','errnoRet':39},"
    "{'names':['personality'],'action':'SCMP_ACT_ALLOW','args':[{'index':0,'value':8,"
    "'valueTwo':0,'op':'SCMP_CMP_EQ'}]}]}",
    /* 3: arg index 0 -> 1 */
    "{'defaultAction':'SCMP_ACT_ERRNO','architectures':['SCMP_ARCH_X86_64'],'syscalls':["
    "{'names':['read','write'],'action':'SCMP_ACT_ALLOW'},"
    "{'names':['getpid'],'action':'SCMP_ACT_ERRNO','errnoRet':38},"
    "{'names':['personality'],'action':'SCMP_ACT_ALLOW','args':[{'index':1,'value':8,"
    "'valueTwo':0,'op':'SCMP_CMP_EQ'}]}]}",
    /* 4: op EQ -> NE */
    "{'defaultAction':'SCMP_ACT_ERRNO','architectures':['SCMP_ARCH_X86_64'],'syscalls':["
    "{'names':['read','write'],'action':'SCMP_ACT_ALLOW'},"
    "{'names':['getpid'],'action':'SCMP_ACT_ERRNO','errnoRet':38},"
    "{'names':['personality'],'action':'SCMP_ACT_ALLOW','args':[{'index':0,'value':8,"
    "'valueTwo':0,'op':'SCMP_CMP_NE'}]}]}",
    /* 5: value 8 -> 9 */
    "{'defaultAction':'SCMP_ACT_ERRNO','architectures':['SCMP_ARCH_X86_64'],'syscalls':["
    "{'names':['read','write'],'action':'SCMP_ACT_ALLOW'},"
    "{'names':['getpid'],'action':'SCMP_ACT_ERRNO','errnoRet':38},"
    "{'names':['personality'],'action':'SCMP_ACT_ALLOW','args':[{'index':0,'value':9,"
    "'valueTwo':0,'op':'SCMP_CMP_EQ'}]}]}",
    /* 6: valueTwo 0 -> 1 */
    "{'defaultAction':'SCMP_ACT_ERRNO','architectures':['SCMP_ARCH_X86_64'],'syscalls':["
    "{'names':['read','write'],'action':'SCMP_ACT_ALLOW'},"
    "{'names':['getpid'],'action':'SCMP_ACT_ERRNO','errnoRet':38},"
    "{'names':['personality'],'action':'SCMP_ACT_ALLOW','args':[{'index':0,'value':8,"
    "'valueTwo':1,'op':'SCMP_CMP_EQ'}]}]}",
    /* 7: read -> pread64 */
    "{'defaultAction':'SCMP_ACT_ERRNO','architectures':['SCMP_ARCH_X86_64'],'syscalls':["
    "{'names':['pread64','write'],'action':'SCMP_ACT_ALLOW'},"
    "{'names':['getpid'],'action':'SCMP_ACT_ERRNO','errnoRet':38},"
    "{'names':['personality'],'action':'SCMP_ACT_ALLOW','args':[{'index':0,'value':8,"
    "'valueTwo':0,'op':'SCMP_CMP_EQ'}]}]}",
    /* 8: defaultAction ERRNO -> KILL_PROCESS */
    "{'defaultAction':'SCMP_ACT_KILL_PROCESS','architectures':['SCMP_ARCH_X86_64'],'syscalls':["
    "{'names':['read','write'],'action':'SCMP_ACT_ALLOW'},"
    "{'names':['getpid'],'action':'SCMP_ACT_ERRNO','errnoRet':38},"
    "{'names':['personality'],'action':'SCMP_ACT_ALLOW','args':[{'index':0,'value':8,"
    "'valueTwo':0,'op':'SCMP_CMP_EQ'}]}]}",
    /* 9: the last entry's action ALLOW -> LOG */
    "{'defaultAction':'SCMP_ACT_ERRNO','architectures':['SCMP_ARCH_X86_64'],'syscalls':["
    "{'names':['read','write'],'action':'SCMP_ACT_ALLOW'},"
    "{'names':['getpid'],'action':'SCMP_ACT_ERRNO','errnoRet':38},"
    "{'names':['personality'],'action':'SCMP_ACT_LOG','args':[{'index':0,'value':8,"
    "'valueTwo':0,'op':'SCMP_CMP_EQ'}]}]}",
  };
  enum { N = sizeof v / sizeof v[0] };
  uint8_t k[N][KIST_SHA256_LEN];
  for (size_t i = 0; i < N; i++)
    {
      struct kist_seccomp_profile *p = parse_ok (v[i]);
      kist_seccomp_key (p, k[i]);
      kist_seccomp_profile_free (p);
    }
  for (size_t i = 0; i < N; i++)
    for (size_t j = i + 1; j < N; j++)
      ck_assert_msg (memcmp (k[i], k[j], KIST_SHA256_LEN) != 0, "variants %zu and %zu share a key",
                     i, j);
  /* And the base again gives its key. */
  struct kist_seccomp_profile *p = parse_ok (v[0]);
  uint8_t again[KIST_SHA256_LEN];
  kist_seccomp_key (p, again);
  kist_seccomp_profile_free (p);
  ck_assert_mem_eq (again, k[0], KIST_SHA256_LEN);
}
END_TEST

/* ---- temp dirs ---- */

static char tmpdir[PATH_MAX];
static int tmpfd = -1;

static void
rm_rf_at (int dfd, const char *name)
{
  int fd = openat (dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd >= 0)
    {
      DIR *d = fdopendir (fd);
      struct dirent *de;
      while (d && (de = readdir (d)))
        if (strcmp (de->d_name, ".") && strcmp (de->d_name, ".."))
          rm_rf_at (dirfd (d), de->d_name);
      if (d)
        closedir (d);
      unlinkat (dfd, name, AT_REMOVEDIR);
    }
  else
    unlinkat (dfd, name, 0);
}

static void
setup (void)
{
  strcpy (tmpdir, "/tmp/kist-test-seccomp.XXXXXX");
  ck_assert_ptr_nonnull (mkdtemp (tmpdir));
  tmpfd = open (tmpdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ck_assert_int_ge (tmpfd, 0);
}

static void
teardown (void)
{
  close (tmpfd);
  rm_rf_at (AT_FDCWD, tmpdir);
}

/* ---- cache ---- */

START_TEST (test_cache)
{
  struct kist_error *err = NULL;
  int cfd = kist_seccomp_cache_open (tmpfd, &err);
  ck_assert_msg (cfd >= 0, "%s", err ? err->msg : "?");
  struct stat st;
  ck_assert_int_eq (fstatat (tmpfd, KIST_SECCOMP_CACHE_DIR, &st, AT_SYMLINK_NOFOLLOW), 0);
  ck_assert (S_ISDIR (st.st_mode));
  ck_assert_uint_eq (st.st_mode & 07777, 0700);

  uint8_t key[KIST_SHA256_LEN], other[KIST_SHA256_LEN];
  kist_sha256 ("profile one", 11, key);
  kist_sha256 ("profile two", 11, other);
  struct sock_filter prog[3] = {
    BPF_STMT (BPF_LD | BPF_W | BPF_ABS, 0),
    BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, 39, 0, 1),
    BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_filter *got = NULL;
  size_t n = 0;
  char *why = NULL;

  ck_assert_int_eq (kist_seccomp_cache_load (cfd, key, &got, &n, NULL, &why), 0);
  ck_assert_str_eq (why, "absent");
  free (why);

  ck_assert_int_eq (kist_seccomp_cache_store (cfd, key, prog, 3, NULL, &err), 0);
  char name[69];
  kist_seccomp_cache_name (key, name);
  ck_assert_uint_eq (strlen (name), 68);
  ck_assert_int_eq (fstatat (cfd, name, &st, 0), 0);
  ck_assert_uint_eq (st.st_mode & 07777, 0600);
  ck_assert_int_eq (st.st_size, 80 + 3 * 8 + 32);

  ck_assert_int_eq (kist_seccomp_cache_load (cfd, key, &got, &n, NULL, &why), 1);
  ck_assert_ptr_null (why);
  ck_assert_uint_eq (n, 3);
  ck_assert_mem_eq (got, prog, sizeof prog);
  free (got);
  got = NULL;

  /* A flipped bit in the program: corrupt. */
  int fd = openat (cfd, name, O_RDWR | O_CLOEXEC);
  ck_assert_int_ge (fd, 0);
  unsigned char byte;
  ck_assert_int_eq (pread (fd, &byte, 1, 80 + 9), 1);
  byte ^= 0x40;
  ck_assert_int_eq (pwrite (fd, &byte, 1, 80 + 9), 1);
  ck_assert_int_eq (kist_seccomp_cache_load (cfd, key, &got, &n, NULL, &why), 0);
  ck_assert_str_eq (why, "corrupt: checksum mismatch");
  free (why);
  /* Truncated. */
  ck_assert_int_eq (ftruncate (fd, 80 + 8), 0);
  ck_assert_int_eq (kist_seccomp_cache_load (cfd, key, &got, &n, NULL, &why), 0);
  ck_assert_str_eq (why, "corrupt: size does not match the instruction count");
  free (why);
  /* Garbage. */
  ck_assert_int_eq (ftruncate (fd, 0), 0);
  ck_assert_int_eq (pwrite (fd, "garbage garbage garbage", 23, 0), 23);
  ck_assert_int_eq (kist_seccomp_cache_load (cfd, key, &got, &n, NULL, &why), 0);
  ck_assert_ptr_nonnull (strstr (why, "corrupt"));
  free (why);
  close (fd);

  /* Rebuilt: the store replaces it. */
  ck_assert_int_eq (kist_seccomp_cache_store (cfd, key, prog, 3, NULL, &err), 0);
  ck_assert_int_eq (kist_seccomp_cache_load (cfd, key, &got, &n, NULL, &why), 1);
  free (got);

  /* The meta part: what a hit gives back without the profile. */
  struct kist_seccomp_meta meta = { .flags = 8, .max_nr = 451, .n_gated = 3, .enosys = true,
                                    .notify = true, .listener_path = "/run/agent.sock",
                                    .listener_metadata = "meta", .skipped = "; skipped x" };
  ck_assert_int_eq (kist_seccomp_cache_store (cfd, key, prog, 3, &meta, &err), 0);
  struct kist_seccomp_meta back = { 0 };
  ck_assert_int_eq (kist_seccomp_cache_load (cfd, key, &got, &n, &back, &why), 1);
  ck_assert_uint_eq (back.flags, 8);
  ck_assert_int_eq (back.max_nr, 451);
  ck_assert_uint_eq (back.n_gated, 3);
  ck_assert (back.enosys && back.notify);
  ck_assert_str_eq (back.listener_path, "/run/agent.sock");
  ck_assert_str_eq (back.listener_metadata, "meta");
  ck_assert_str_eq (back.skipped, "; skipped x");
  kist_seccomp_meta_clear (&back);
  free (got);
  /* Without meta: no listener, nothing skipped. */
  ck_assert_int_eq (kist_seccomp_cache_store (cfd, key, prog, 3, NULL, &err), 0);
  ck_assert_int_eq (kist_seccomp_cache_load (cfd, key, &got, &n, &back, &why), 1);
  ck_assert (!back.notify && back.listener_path == NULL && back.listener_metadata == NULL);
  ck_assert_str_eq (back.skipped, "");
  kist_seccomp_meta_clear (&back);
  free (got);

  /* Another profile's entry under this name: foreign. */
  char oname[69];
  kist_seccomp_cache_name (other, oname);
  ck_assert_int_eq (linkat (cfd, name, cfd, oname, 0), 0);
  ck_assert_int_eq (kist_seccomp_cache_load (cfd, other, &got, &n, NULL, &why), 0);
  ck_assert_str_eq (why, "foreign: the key in the file is another profile's");
  free (why);
  /* Group/other-accessible: foreign. */
  ck_assert_int_eq (fchmodat (cfd, name, 0644, 0), 0);
  ck_assert_int_eq (kist_seccomp_cache_load (cfd, key, &got, &n, NULL, &why), 0);
  ck_assert_ptr_nonnull (strstr (why, "foreign"));
  free (why);
  ck_assert_int_eq (fchmodat (cfd, name, 0600, 0), 0);
  /* A symlink: not followed. */
  ck_assert_int_eq (unlinkat (cfd, oname, 0), 0);
  ck_assert_int_eq (symlinkat (name, cfd, oname), 0);
  ck_assert_int_eq (kist_seccomp_cache_load (cfd, other, &got, &n, NULL, &why), 0);
  ck_assert_ptr_nonnull (strstr (why, "unreadable"));
  free (why);
  close (cfd);

  /* A directory with loose permissions is tightened; a symlink is refused. */
  ck_assert_int_eq (fchmodat (tmpfd, KIST_SECCOMP_CACHE_DIR, 0755, 0), 0);
  cfd = kist_seccomp_cache_open (tmpfd, &err);
  ck_assert_int_ge (cfd, 0);
  close (cfd);
  ck_assert_int_eq (fstatat (tmpfd, KIST_SECCOMP_CACHE_DIR, &st, 0), 0);
  ck_assert_uint_eq (st.st_mode & 07777, 0700);
  ck_assert_int_eq (mkdirat (tmpfd, "sub", 0700), 0);
  int subfd = openat (tmpfd, "sub", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ck_assert_int_eq (symlinkat ("/tmp", subfd, KIST_SECCOMP_CACHE_DIR), 0);
  ck_assert_int_lt (kist_seccomp_cache_open (subfd, &err), 0);
  ck_assert_ptr_nonnull (strstr (err->msg, "not a symlink"));
  kist_error_freep (&err);
  close (subfd);
}
END_TEST

/* ---- compiling and loading, in forked children ---- */

/* Compile a profile (fails the test on error). */
static void
compile (const char *doc, struct sock_filter **insns, size_t *n, uint32_t *flags)
{
  struct kist_seccomp_profile *p = parse_ok (doc);
  struct kist_error *err = NULL;
  int r = kist_seccomp_compile (p, insns, n, &err);
  ck_assert_msg (r == 0, "compile: %s", err ? err->msg : "?");
  if (flags)
    *flags = p->flags;
  kist_seccomp_profile_free (p);
}

/* Run fn in a child that sets no_new_privileges and loads the program;
 * returns the wait status. */
static int
in_filtered_child (const struct sock_filter *insns, size_t n, int (*fn) (void))
{
  pid_t pid = fork ();
  ck_assert_int_ge (pid, 0);
  if (pid == 0)
    {
      alarm (20);
      if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
        raw_exit (100);
      if (kist_seccomp_load (insns, n, 0, NULL) < 0)
        raw_exit (101);
      raw_exit (fn ());
    }
  int status = 0;
  ck_assert_int_eq (waitpid (pid, &status, 0), pid);
  return status;
}

static const char *tiny
    = "{'defaultAction':'SCMP_ACT_ERRNO','defaultErrnoRet':1,'syscalls':["
      "{'names':['exit_group','exit','write','getpid','getrandom','rt_sigreturn'],"
      "'action':'SCMP_ACT_ALLOW'},"
      "{'names':['getppid'],'action':'SCMP_ACT_ERRNO','errnoRet':42},"
      "{'names':['personality'],'action':'SCMP_ACT_ALLOW','args':[{'index':0,'value':0,"
      "'op':'SCMP_CMP_EQ'}]},"
      "{'names':['personality'],'action':'SCMP_ACT_ALLOW','args':[{'index':0,'value':4294967295,"
      "'op':'SCMP_CMP_EQ'}]}]}";

static int
tiny_checks (void)
{
  /* Allowed. */
  if (syscall (SYS_getpid) <= 0)
    return 10;
  /* Not named, below the highest named (getrandom): the default, EPERM. */
  errno = 0;
  if (syscall (SYS_mkdirat, AT_FDCWD, "/nonexistent-kist/x", 0700) != -1 || errno != EPERM)
    return 11;
  /* errnoRet. */
  errno = 0;
  if (syscall (SYS_getppid) != -1 || errno != 42)
    return 12;
  /* Argument filter: query allowed, PER_BSD denied. */
  if (syscall (SYS_personality, 0xffffffffUL) < 0)
    return 13;
  errno = 0;
  if (syscall (SYS_personality, 0x0006UL) != -1 || errno != EPERM)
    return 14;
  /* Above the highest named syscall: ENOSYS (pidfd_open is newer than getrandom). */
  errno = 0;
  if (syscall (SYS_pidfd_open, (long) syscall (SYS_getpid), 0) != -1 || errno != ENOSYS)
    return 15;
  return 0;
}

START_TEST (test_compile_and_deny)
{
  struct sock_filter *insns = NULL;
  size_t n = 0;
  compile (tiny, &insns, &n, NULL);
  ck_assert_uint_gt (n, 6);
  /* The ENOSYS prefix comes first and ends in RET ERRNO(ENOSYS). */
  ck_assert_uint_eq (insns[5].code, BPF_RET | BPF_K);
  ck_assert_uint_eq (insns[5].k, SECCOMP_RET_ERRNO | ENOSYS);
  ck_assert_uint_eq (insns[4].k, SYS_getrandom);
  int st = in_filtered_child (insns, n, tiny_checks);
  ck_assert_msg (WIFEXITED (st) && WEXITSTATUS (st) == 0, "child status 0x%x", st);
  free (insns);
}
END_TEST

static int
call_getppid (void)
{
  syscall (SYS_getppid);
  return 0;
}

START_TEST (test_kill_action)
{
  struct sock_filter *insns = NULL;
  size_t n = 0;
  compile ("{'defaultAction':'SCMP_ACT_ALLOW','syscalls':[{'names':['getppid'],"
           "'action':'SCMP_ACT_KILL_PROCESS'}]}",
           &insns, &n, NULL);
  int st = in_filtered_child (insns, n, call_getppid);
  ck_assert_msg (WIFSIGNALED (st) && WTERMSIG (st) == SIGSYS, "child status 0x%x", st);
  free (insns);
}
END_TEST

/* The user-space interpreter answers what the kernel would: actions by
 * syscall, argument conditions, the default, and the ENOSYS prefix. */
START_TEST (test_simulate)
{
  struct sock_filter *insns = NULL;
  size_t n = 0;
  compile ("{'defaultAction':'SCMP_ACT_ERRNO','defaultErrnoRet':1,'syscalls':["
           "{'names':['getppid'],'action':'SCMP_ACT_KILL_PROCESS'},"
           "{'names':['getpid','execve'],'action':'SCMP_ACT_ALLOW'},"
           "{'names':['execveat'],'action':'SCMP_ACT_ALLOW',"
           " 'args':[{'index':4,'value':4096,'valueTwo':4096,'op':'SCMP_CMP_MASKED_EQ'}]},"
           "{'names':['personality'],'action':'SCMP_ACT_ALLOW',"
           " 'args':[{'index':0,'value':8,'op':'SCMP_CMP_EQ'}]},"
           "{'names':['getuid'],'action':'SCMP_ACT_ERRNO','errnoRet':13}]}",
           &insns, &n, NULL);
  const uint64_t empty_path[6] = { 3, 0, 0, 0, 0x1000, 0 }, other[6] = { 3, 0, 0, 0, 0, 0 };
  const uint64_t p8[6] = { 8 }, p9[6] = { 9 };
  ck_assert_uint_eq (kist_seccomp_simulate (insns, n, SYS_getppid, NULL) & SECCOMP_RET_ACTION_FULL,
                     SECCOMP_RET_KILL_PROCESS);
  ck_assert_uint_eq (kist_seccomp_simulate (insns, n, SYS_getpid, NULL), SECCOMP_RET_ALLOW);
  ck_assert_uint_eq (kist_seccomp_simulate (insns, n, SYS_getuid, NULL), SECCOMP_RET_ERRNO | 13);
  ck_assert_uint_eq (kist_seccomp_simulate (insns, n, SYS_getgid, NULL), SECCOMP_RET_ERRNO | 1);
  ck_assert (kist_seccomp_lets_through (insns, n, SYS_execve, NULL));
  ck_assert (kist_seccomp_lets_through (insns, n, SYS_execveat, empty_path));
  ck_assert (!kist_seccomp_lets_through (insns, n, SYS_execveat, other));
  ck_assert (kist_seccomp_lets_through (insns, n, SYS_personality, p8));
  ck_assert (!kist_seccomp_lets_through (insns, n, SYS_personality, p9));
  ck_assert (!kist_seccomp_lets_through (insns, n, SYS_getppid, NULL));
  /* An unknown instruction is never "allowed". */
  struct sock_filter bad[] = { { .code = 0xff, .k = 0 } };
  ck_assert_uint_eq (kist_seccomp_simulate (bad, 1, SYS_getpid, NULL), SECCOMP_RET_KILL_PROCESS);
  free (insns);
  /* The same answers as the kernel for the built-in profiles' ENOSYS prefix:
   * a syscall above the newest one named gets ENOSYS. */
  compile (tiny, &insns, &n, NULL);
  ck_assert_uint_eq (kist_seccomp_simulate (insns, n, SYS_pidfd_open, NULL),
                     SECCOMP_RET_ERRNO | ENOSYS);
  free (insns);
}
END_TEST

/* ---- the layer: prepare in the parent, apply in a child ---- */

static struct kist_spec *
spec_with (const char *linux_extra, const char *annotations, bool nnp)
{
  _cleanup_free_ char *doc = xasprintf (
      "{'ociVersion':'1.2.0','root':{'path':'rootfs'},'process':{'args':['sh'],'cwd':'/',"
      "'noNewPrivileges':%s,'capabilities':{'bounding':['CAP_KILL']}},"
      "'linux':{'namespaces':[{'type':'mount'}]%s%s}%s%s%s}",
      nnp ? "true" : "false", linux_extra ? "," : "", linux_extra ? linux_extra : "",
      annotations ? ",'annotations':{" : "", annotations ? annotations : "",
      annotations ? "}" : "");
  _cleanup_free_ char *json = q (doc);
  struct kist_spec *s = NULL;
  struct kist_error *err = NULL;
  int r = kist_spec_parse (json, strlen (json), &s, &err);
  ck_assert_msg (r == 0, "spec: %s", err ? err->msg : "?");
  return s;
}

static struct kist_ctx
ctx_for (struct kist_spec *s)
{
  struct kist_ctx c = { .id = "t1", .spec = s, .bundle = tmpdir, .bundle_fd = tmpfd,
                        .rootfs_fd = -1, .sync_fd = -1, .start_fd = -1, .state_dirfd = -1 };
  return c;
}

/* The load step (kist_seccomp_choose, with the config) and the PREPARE
 * layer (kist_seccomp_prepare), as create runs them. */
static int
choose_prepare (struct kist_ctx *ctx, int rootfd, struct kist_report *r, struct kist_error **err)
{
  ctx->seccomp = NULL;
  if (kist_seccomp_choose (ctx->spec, ctx->bundle_fd, &ctx->seccomp, err) < 0)
    return -1;
  return kist_seccomp_prepare (ctx, rootfd, r, err);
}

static const char *tiny_inline
    = "'seccomp':{'defaultAction':'SCMP_ACT_ERRNO','syscalls':[{'names':['exit_group','exit',"
      "'write','read','pread64','getpid','getrandom','prctl','close','openat','fstatfs','fstat',"
      "'newfstatat','rt_sigreturn','brk','mmap','munmap','mremap','madvise','rt_sigprocmask',"
      "'futex'],'action':'SCMP_ACT_ALLOW'},{'names':['kist_unknown_1'],"
      "'action':'SCMP_ACT_ALLOW'}]}";

/* In a child: apply the layer (early or late) and check what it recorded and
 * that the filter works.  Exit code 0 = all good. */
static int
child_apply (struct kist_ctx *ctx, bool early)
{
  struct kist_report *r = kist_report_new ("t1", "create", NULL);
  struct kist_error *err = NULL;
  if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
    return 20;
  int ret
      = early ? kist_seccomp_apply_early (ctx, r, &err) : kist_seccomp_apply_last (ctx, r, &err);
  if (ret < 0)
    return 21;
  if (r->n_layers != 1 || !r->layers[0].applied || strcmp (r->layers[0].name, "seccomp") != 0)
    return 22;
  if (strstr (r->layers[0].detail, "/proc/self/status Seccomp: 2, Seccomp_filters: ") == NULL)
    return 23;
  /* The second call does nothing. */
  if (kist_seccomp_apply_last (ctx, r, &err) < 0 || r->n_layers != 1)
    return 24;
  errno = 0;
  if (syscall (SYS_mkdirat, AT_FDCWD, "/nonexistent-kist/x", 0700) != -1 || errno != EPERM)
    return 25;
  return 0;
}

static int
wait_child (pid_t pid)
{
  int st = 0;
  ck_assert_int_eq (waitpid (pid, &st, 0), pid);
  ck_assert_msg (WIFEXITED (st), "child status 0x%x", st);
  return WEXITSTATUS (st);
}

START_TEST (test_layer_inline_cache)
{
  struct kist_spec *s = spec_with (tiny_inline, NULL, true);
  struct kist_ctx ctx = ctx_for (s);
  struct kist_report *r = kist_report_new ("t1", "create", NULL);
  struct kist_error *err = NULL;

  ck_assert (kist_seccomp_requested (s, NULL));
  ck_assert_int_eq (choose_prepare (&ctx, tmpfd, r, &err), 0);
  ck_assert_ptr_nonnull (ctx.seccomp);
  ck_assert_uint_eq (r->n_layers, 0); /* the init records it */
  ck_assert_str_eq (ctx.seccomp->requested, "linux.seccomp");
  ck_assert_msg (strstr (ctx.seccomp->detail, "linux.seccomp; ") == ctx.seccomp->detail, "%s",
                 ctx.seccomp->detail);
  ck_assert_msg (strstr (ctx.seccomp->detail, " BPF insns; cache miss; ENOSYS above syscall "),
                 "%s", ctx.seccomp->detail);
  ck_assert_ptr_nonnull (
      strstr (ctx.seccomp->detail, "; skipped unknown syscalls: kist_unknown_1"));
  size_t n1 = ctx.seccomp->n_insns;
  _cleanup_free_ struct sock_filter *first = xcalloc (n1, sizeof *first);
  memcpy (first, ctx.seccomp->insns, n1 * sizeof *first);

  /* Late load (noNewPrivileges true): early does nothing. */
  pid_t pid = fork ();
  if (pid == 0)
    {
      alarm (20);
      struct kist_report *r2 = kist_report_new ("t1", "create", NULL);
      struct kist_error *e2 = NULL;
      if (kist_seccomp_apply_early (&ctx, r2, &e2) != 0 || r2->n_layers != 0)
        raw_exit (30);
      raw_exit (child_apply (&ctx, false));
    }
  ck_assert_int_eq (wait_child (pid), 0);
  kist_seccomp_free (ctx.seccomp);

  /* Second prepare: a hit, the same program. */
  ck_assert_int_eq (choose_prepare (&ctx, tmpfd, r, &err), 0);
  ck_assert_msg (strstr (ctx.seccomp->detail, " BPF insns; cache hit; "), "%s",
                 ctx.seccomp->detail);
  ck_assert_uint_eq (ctx.seccomp->n_insns, n1);
  ck_assert_mem_eq (ctx.seccomp->insns, first, n1 * sizeof *first);
  kist_seccomp_free (ctx.seccomp);

  /* Corrupt every entry: detected, rebuilt, same program. */
  int cfd = openat (tmpfd, KIST_SECCOMP_CACHE_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR *d = fdopendir (dup (cfd));
  struct dirent *de;
  int corrupted = 0;
  while ((de = readdir (d)))
    if (strstr (de->d_name, ".bpf"))
      {
        int fd = openat (cfd, de->d_name, O_WRONLY | O_CLOEXEC);
        ck_assert_int_eq (pwrite (fd, "\xff\xff\xff\xff", 4, 100), 4);
        close (fd);
        corrupted++;
      }
  closedir (d);
  close (cfd);
  ck_assert_int_eq (corrupted, 1);
  ck_assert_int_eq (choose_prepare (&ctx, tmpfd, r, &err), 0);
  ck_assert_msg (
      strstr (ctx.seccomp->detail, "cache miss (entry corrupt: checksum mismatch; rebuilt)"), "%s",
      ctx.seccomp->detail);
  ck_assert_mem_eq (ctx.seccomp->insns, first, n1 * sizeof *first);
  kist_seccomp_free (ctx.seccomp);
  ck_assert_int_eq (choose_prepare (&ctx, tmpfd, r, &err), 0);
  ck_assert_ptr_nonnull (strstr (ctx.seccomp->detail, "cache hit"));
  kist_seccomp_free (ctx.seccomp);

  /* No cache at all. */
  ck_assert_int_eq (choose_prepare (&ctx, -1, r, &err), 0);
  ck_assert_ptr_nonnull (strstr (ctx.seccomp->detail, "cache miss (no cache)"));
  kist_seccomp_free (ctx.seccomp);
  kist_report_free (r);
  kist_spec_free (s);
}
END_TEST

/* A built-in profile with a bundle: chosen without parsing, parsed and
 * compiled on the first prepare (a miss), and on the next one loaded from
 * the entry with the same program, flags and detail, still unparsed. */
START_TEST (test_layer_builtin_deferred)
{
  struct kist_error *err = NULL;
  struct kist_report *r = kist_report_new ("t1", "create", NULL);
  struct kist_spec *s = spec_with (NULL, "'run.kist.seccomp.profile':'default'", true);
  struct kist_ctx ctx = ctx_for (s);

  ck_assert_int_eq (kist_seccomp_choose (s, tmpfd, &ctx.seccomp, &err), 0);
  ck_assert (ctx.seccomp->deferred);
  ck_assert_ptr_null (ctx.seccomp->profile);
  ck_assert_int_eq (kist_seccomp_prepare (&ctx, tmpfd, r, &err), 0);
  ck_assert_msg (strstr (ctx.seccomp->detail, "profile default; ") == ctx.seccomp->detail
                     && strstr (ctx.seccomp->detail, " BPF insns; cache miss; ENOSYS above "),
                 "%s", ctx.seccomp->detail);
  ck_assert_ptr_nonnull (strstr (ctx.seccomp->detail, " entries left out by includes/excludes"));
  size_t n1 = ctx.seccomp->n_insns;
  uint32_t flags1 = ctx.seccomp->flags;
  struct sock_filter *first = xcalloc (n1, sizeof *first);
  memcpy (first, ctx.seccomp->insns, n1 * sizeof *first);
  _cleanup_free_ char *miss = xstrdup (ctx.seccomp->detail);
  kist_seccomp_free (ctx.seccomp);

  /* The same as parsing and compiling it at once (no bundle). */
  struct kist_seccomp *eager = NULL;
  ck_assert_int_eq (kist_seccomp_choose (s, -1, &eager, &err), 0);
  ck_assert (!eager->deferred);
  ck_assert_ptr_nonnull (eager->profile);
  struct sock_filter *insns = NULL;
  size_t n = 0;
  ck_assert_int_eq (kist_seccomp_compile (eager->profile, &insns, &n, &err), 0);
  ck_assert_uint_eq (n, n1);
  ck_assert_mem_eq (insns, first, n1 * sizeof *first);
  ck_assert_uint_eq (eager->profile->flags, flags1);
  free (insns);
  kist_seccomp_free (eager);

  /* A hit: never parsed, the same program, flags and detail. */
  ck_assert_int_eq (choose_prepare (&ctx, tmpfd, r, &err), 0);
  ck_assert_ptr_null (ctx.seccomp->profile);
  ck_assert_uint_eq (ctx.seccomp->n_insns, n1);
  ck_assert_mem_eq (ctx.seccomp->insns, first, n1 * sizeof *first);
  ck_assert_uint_eq (ctx.seccomp->flags, flags1);
  char *at = strstr (miss, "cache miss");
  ck_assert_ptr_nonnull (at);
  memmove (at + strlen ("cache hit"), at + strlen ("cache miss"),
           strlen (at + strlen ("cache miss")) + 1);
  memcpy (at, "cache hit", strlen ("cache hit"));
  ck_assert_str_eq (ctx.seccomp->detail, miss);
  kist_seccomp_free (ctx.seccomp);

  /* The gated count in the entry's meta part flipped: a miss, rebuilt. */
  int cfd = openat (tmpfd, KIST_SECCOMP_CACHE_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ck_assert_int_ge (cfd, 0);
  uint8_t key[KIST_SHA256_LEN];
  struct kist_seccomp_env env = { .bounding = s->process->capabilities->bounding };
  kist_seccomp_builtin_key ("default", kist_seccomp_builtin_data[0], kist_seccomp_builtin_sizes[0],
                            &env, key);
  char name[69];
  kist_seccomp_cache_name (key, name);
  ck_assert_str_eq (kist_seccomp_builtin_names[0], "default");
  int fd = openat (cfd, name, O_RDWR | O_CLOEXEC);
  ck_assert_int_ge (fd, 0);
  struct stat st;
  ck_assert_int_eq (fstat (fd, &st), 0);
  ck_assert_int_ge (st.st_size, 80 + (off_t) n1 * 8 + 32);
  off_t gated = 80 + (off_t) n1 * 8 + 8;
  unsigned char byte;
  ck_assert_int_eq (pread (fd, &byte, 1, gated), 1);
  byte ^= 0x01;
  ck_assert_int_eq (pwrite (fd, &byte, 1, gated), 1);
  close (fd);
  close (cfd);
  ck_assert_int_eq (choose_prepare (&ctx, tmpfd, r, &err), 0);
  ck_assert_ptr_nonnull (strstr (ctx.seccomp->detail, "(entry corrupt: checksum mismatch; rebuilt)"));
  ck_assert_uint_eq (ctx.seccomp->n_insns, n1);
  ck_assert_mem_eq (ctx.seccomp->insns, first, n1 * sizeof *first);
  kist_seccomp_free (ctx.seccomp);

  /* What changes the parse changes the source key. */
  uint8_t k2[KIST_SHA256_LEN];
  char *const admin[] = { "CAP_KILL", "CAP_SYS_ADMIN", NULL };
  char *const unknown[] = { "CAP_KILL", "CAP_NO_SUCH_THING", NULL };
  struct kist_seccomp_env e2 = { .bounding = admin };
  kist_seccomp_builtin_key ("default", kist_seccomp_builtin_data[0], kist_seccomp_builtin_sizes[0],
                            &e2, k2);
  ck_assert (memcmp (key, k2, sizeof key) != 0);
  e2.bounding = unknown; /* the parser ignores unknown names: the same key */
  kist_seccomp_builtin_key ("default", kist_seccomp_builtin_data[0], kist_seccomp_builtin_sizes[0],
                            &e2, k2);
  ck_assert_mem_eq (key, k2, sizeof key);
  e2.kernel = "1.0";
  kist_seccomp_builtin_key ("default", kist_seccomp_builtin_data[0], kist_seccomp_builtin_sizes[0],
                            &e2, k2);
  ck_assert (memcmp (key, k2, sizeof key) != 0);
  e2.kernel = NULL;
  kist_seccomp_builtin_key ("default", kist_seccomp_builtin_data[0],
                            kist_seccomp_builtin_sizes[0] - 1, &e2, k2);
  ck_assert (memcmp (key, k2, sizeof key) != 0);

  free (first);
  kist_report_free (r);
  kist_spec_free (s);
}
END_TEST

/* A report holds each entry once (report.c checks): each case below that
 * records one starts from a new report. */
static void
renew (struct kist_report **r)
{
  kist_report_free (*r);
  *r = kist_report_new ("t1", "create", NULL);
}

START_TEST (test_layer_early_and_sources)
{
  /* A profile file named by a relative path (relative to the bundle). */
  _cleanup_free_ char *prof = q ("{'defaultAction':'SCMP_ACT_ERRNO','syscalls':[{'names':["
                                 "'exit_group','write','read','pread64','getpid','prctl',"
                                 "'close','getrandom','brk','mmap','munmap','mremap','madvise',"
                                 "'rt_sigprocmask','futex'],'action':'SCMP_ACT_ALLOW'}]}");
  struct kist_error *err = NULL;
  ck_assert_int_eq (mkdirat (tmpfd, "profiles", 0700), 0);
  int pfd = openat (tmpfd, "profiles/p.json", O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  ck_assert_int_ge (pfd, 0);
  ck_assert_int_eq (kist_write_all (pfd, prof, strlen (prof)), 0);
  close (pfd);

  struct kist_spec *s = spec_with (NULL, "'run.kist.seccomp.profile':'./profiles/p.json'", false);
  struct kist_ctx ctx = ctx_for (s);
  struct kist_report *r = kist_report_new ("t1", "create", NULL);
  const char *what = NULL;
  ck_assert (kist_seccomp_requested (s, &what));
  ck_assert_str_eq (what, "./profiles/p.json");
  ck_assert_int_eq (choose_prepare (&ctx, tmpfd, r, &err), 0);
  ck_assert_msg (strstr (ctx.seccomp->detail, "profile ./profiles/p.json; ") == ctx.seccomp->detail,
                 "%s", ctx.seccomp->detail);

  /* noNewPrivileges false: loaded early (the child still sets NNP itself so
   * that the test never depends on CAP_SYS_ADMIN); the late call is a no-op. */
  pid_t pid = fork ();
  if (pid == 0)
    {
      alarm (20);
      raw_exit (child_apply (&ctx, true));
    }
  ck_assert_int_eq (wait_child (pid), 0);
  kist_seccomp_free (ctx.seccomp);
  ctx.seccomp = NULL;
  kist_spec_free (s);

  /* The inline object wins over the annotation. */
  s = spec_with (tiny_inline, "'run.kist.seccomp.profile':'/nonexistent/p.json'", true);
  ctx = ctx_for (s);
  ck_assert (kist_seccomp_requested (s, &what));
  ck_assert_str_eq (what, "linux.seccomp");
  ck_assert_int_eq (choose_prepare (&ctx, tmpfd, r, &err), 0);
  kist_seccomp_free (ctx.seccomp);
  kist_spec_free (s);

  /* A missing file: a config error of the load step (nothing recorded, no
   * degrading: the config is wrong). */
  s = spec_with (NULL, "'run.kist.seccomp.profile':'/nonexistent/p.json'", true);
  ctx = ctx_for (s);
  renew (&r);
  r->allow_degraded = xstrdup ("seccomp");
  ck_assert_int_lt (choose_prepare (&ctx, tmpfd, r, &err), 0);
  ck_assert_ptr_null (ctx.seccomp);
  ck_assert_ptr_nonnull (strstr (err->msg, "annotation run.kist.seccomp.profile: seccomp profile"));
  ck_assert_ptr_nonnull (strstr (err->msg, "/nonexistent/p.json"));
  kist_error_freep (&err);
  ck_assert_uint_eq (r->n_layers, 0);
  kist_spec_free (s);

  /* What libseccomp refuses: the layer fails closed, recorded in the report. */
  s = spec_with ("'seccomp':{'defaultAction':'SCMP_ACT_ALLOW','syscalls':[{'names':['syslog'],"
                 "'action':'SCMP_ACT_ERRNO','errnoRet':13,'args':[{'index':0,'value':10,"
                 "'op':'SCMP_CMP_EQ'},{'index':1,'value':0,'op':'SCMP_CMP_EQ'}]},{'names':"
                 "['syslog'],'action':'SCMP_ACT_ERRNO','errnoRet':5,'args':[{'index':0,"
                 "'value':10,'op':'SCMP_CMP_EQ'}]}]}",
                 NULL, true);
  ctx = ctx_for (s);
  renew (&r);
  size_t before = r->n_layers;
  ck_assert_int_lt (choose_prepare (&ctx, tmpfd, r, &err), 0);
  ck_assert_ptr_nonnull (strstr (err->msg, "layer seccomp not applied"));
  ck_assert_ptr_nonnull (strstr (err->msg, "libseccomp refuses the conditional"));
  kist_error_freep (&err);
  ck_assert_uint_eq (r->n_layers, before + 1);
  ck_assert (!r->layers[before].applied);
  kist_seccomp_free (ctx.seccomp);
  /* ... and degrades when allowed: recorded once, the init loads nothing. */
  renew (&r);
  r->allow_degraded = xstrdup ("seccomp");
  ck_assert_int_eq (choose_prepare (&ctx, tmpfd, r, &err), 0);
  ck_assert_ptr_nonnull (ctx.seccomp);
  ck_assert (ctx.seccomp->done);
  ck_assert_ptr_null (ctx.seccomp->insns);
  before = r->n_layers;
  ck_assert_int_eq (kist_seccomp_apply (&ctx, r, &err), 0);
  ck_assert_uint_eq (r->n_layers, before);
  kist_seccomp_free (ctx.seccomp);
  ctx.seccomp = NULL;
  kist_spec_free (s);

  /* Unknown built-in name, empty name, a bad profile: errors naming them. */
  s = spec_with (NULL, "'run.kist.seccomp.profile':'nosuchprofile'", true);
  ctx = ctx_for (s);
  renew (&r);
  ck_assert_int_lt (choose_prepare (&ctx, tmpfd, r, &err), 0);
  ck_assert_ptr_nonnull (strstr (err->msg, "no built-in seccomp profile `nosuchprofile`"));
  kist_error_freep (&err);
  kist_spec_free (s);
  s = spec_with ("'seccomp':{'defaultAction':'SCMP_ACT_ERRNO','syscalls':[{'names':['read'],"
                 "'action':'SCMP_ACT_NOPE'}]}",
                 NULL, true);
  ctx = ctx_for (s);
  renew (&r);
  ck_assert_int_lt (choose_prepare (&ctx, tmpfd, r, &err), 0);
  ck_assert_ptr_nonnull (strstr (err->msg, "config.json: linux.seccomp.syscalls[0].action: "
                                           "unknown action `SCMP_ACT_NOPE`"));
  kist_error_freep (&err);
  kist_spec_free (s);

  /* Not requested: "none", or nothing at all. */
  s = spec_with (NULL, "'run.kist.seccomp.profile':'none'", true);
  ctx = ctx_for (s);
  ck_assert (!kist_seccomp_requested (s, NULL));
  renew (&r);
  ck_assert_int_eq (choose_prepare (&ctx, tmpfd, r, &err), 0);
  ck_assert_ptr_null (ctx.seccomp);
  before = r->n_layers;
  ck_assert_int_eq (kist_seccomp_apply (&ctx, r, &err), 0);
  ck_assert_uint_eq (r->n_layers, before + 1);
  ck_assert_ptr_null (r->layers[before].requested);
  ck_assert_ptr_nonnull (strstr (r->layers[before].detail, "=none"));
  kist_spec_free (s);

  /* Requested but never prepared: fails closed. */
  s = spec_with (tiny_inline, NULL, true);
  ctx = ctx_for (s);
  renew (&r);
  ck_assert_int_lt (kist_seccomp_apply (&ctx, r, &err), 0);
  ck_assert_ptr_nonnull (strstr (err->msg, "not prepared"));
  kist_error_freep (&err);
  /* Chosen, but the PREPARE layer never ran: the same, and nothing loads. */
  ck_assert_int_eq (kist_seccomp_choose (s, tmpfd, &ctx.seccomp, &err), 0);
  ck_assert_ptr_nonnull (ctx.seccomp);
  ck_assert_ptr_nonnull (ctx.seccomp->profile);
  renew (&r);
  ck_assert_int_eq (kist_seccomp_apply_early (&ctx, r, &err), 0);
  ck_assert_int_eq (kist_seccomp_apply_last (&ctx, r, &err), 0);
  ck_assert_uint_eq (r->n_layers, 0);
  ck_assert_int_lt (kist_seccomp_apply (&ctx, r, &err), 0);
  ck_assert_ptr_nonnull (strstr (err->msg, "not prepared"));
  kist_error_freep (&err);
  kist_seccomp_free (ctx.seccomp);
  kist_spec_free (s);
  kist_report_free (r);
}
END_TEST

/* A malformed profile is a config error of the load step, before any state:
 * the JSON path in the message, nothing recorded, no cache touched. */
START_TEST (test_choose_config_errors)
{
  static const struct
  {
    const char *linux_extra, *annotations, *needle;
  } cases[] = {
    { "'seccomp':{'defaultAction':'SCMP_ACT_ERRNO','syscalls':[{'names':['read'],"
      "'action':'SCMP_ACT_ALLOW'},{'names':['write'],'action':'SCMP_ACT_NOPE'}]}",
      NULL, "config.json: linux.seccomp.syscalls[1].action: unknown action `SCMP_ACT_NOPE`" },
    { "'seccomp':{'syscalls':[]}", NULL,
      "config.json: linux.seccomp.defaultAction: required field is missing" },
    { "'seccomp':{'defaultAction':'SCMP_ACT_ERRNO','syscalls':[{'names':['read'],"
      "'action':'SCMP_ACT_ALLOW','args':[{'index':9,'value':1,'op':'SCMP_CMP_EQ'}]}]}",
      NULL, "config.json: linux.seccomp.syscalls[0].args[0].index: must be between 0 and 5" },
    { "'seccomp':{'defaultAction':'SCMP_ACT_ERRNO','flags':['SECCOMP_FILTER_FLAG_NOPE']}",
      "'run.kist.seccomp.profile':'strict'",
      "config.json: linux.seccomp.flags[0]: unknown seccomp flag `SECCOMP_FILTER_FLAG_NOPE`" },
    { NULL, "'run.kist.seccomp.profile':'./bad-profile.json'",
      "seccomp profile `./bad-profile.json`: syscalls[0].names[0]: expected string" },
    { NULL, "'run.kist.seccomp.profile':''", "annotation run.kist.seccomp.profile is empty" },
  };
  _cleanup_free_ char *bad = q ("{'defaultAction':'SCMP_ACT_ERRNO','syscalls':[{'names':[7],"
                                "'action':'SCMP_ACT_ALLOW'}]}");
  int pfd = openat (tmpfd, "bad-profile.json", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  ck_assert_int_ge (pfd, 0);
  ck_assert_int_eq (kist_write_all (pfd, bad, strlen (bad)), 0);
  close (pfd);
  _cleanup_free_ char *root = xasprintf ("%s/choose-root", tmpdir);
  ck_assert_int_eq (mkdir (root, 0700), 0);
  int rootfd = open (root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ck_assert_int_ge (rootfd, 0);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    {
      struct kist_spec *s = spec_with (cases[i].linux_extra, cases[i].annotations, true);
      struct kist_ctx ctx = ctx_for (s);
      struct kist_report *r = kist_report_new ("t1", "create", NULL);
      struct kist_error *err = NULL;
      ck_assert_int_lt (choose_prepare (&ctx, rootfd, r, &err), 0);
      ck_assert_ptr_null (ctx.seccomp);
      ck_assert_msg (err && strstr (err->msg, cases[i].needle), "case %zu: `%s` not in `%s`", i,
                     cases[i].needle, err ? err->msg : "?");
      ck_assert_uint_eq (r->n_layers, 0);
      kist_error_free (err);
      kist_report_free (r);
      kist_spec_free (s);
    }
  /* The parse never reached the cache. */
  ck_assert_int_lt (faccessat (rootfd, KIST_SECCOMP_CACHE_DIR, F_OK, 0), 0);
  close (rootfd);
  ck_assert_int_eq (rmdir (root), 0);
  ck_assert_int_eq (unlinkat (tmpfd, "bad-profile.json", 0), 0);
}
END_TEST

START_TEST (test_builtin_profiles)
{
  ck_assert_ptr_nonnull (kist_seccomp_builtin_names[0]);
  for (size_t i = 0; kist_seccomp_builtin_names[i]; i++)
    {
      struct kist_seccomp_profile *p = NULL;
      struct kist_error *err = NULL;
      struct kist_seccomp_env env = { 0 };
      const char *json = (const char *) kist_seccomp_builtin_data[i];
      ck_assert_uint_eq (strlen (json), kist_seccomp_builtin_sizes[i]);
      int r = kist_seccomp_profile_parse_json (json, kist_seccomp_builtin_sizes[i], "builtin: ",
                                               &env, &p, &err);
      ck_assert_msg (r == 0, "%s: %s", kist_seccomp_builtin_names[i], err ? err->msg : "?");
      struct sock_filter *insns = NULL;
      size_t n = 0;
      r = kist_seccomp_compile (p, &insns, &n, &err);
      ck_assert_msg (r == 0, "%s: %s", kist_seccomp_builtin_names[i], err ? err->msg : "?");
      free (insns);
      kist_seccomp_profile_free (p);
    }
}
END_TEST

/* ---- shrink: the range tree gives every answer the old program gave ---- */

static uint64_t shrink_rng = 0x9e3779b97f4a7c15ULL;

static uint64_t
shrink_rand (void)
{
  shrink_rng ^= shrink_rng << 13;
  shrink_rng ^= shrink_rng >> 7;
  shrink_rng ^= shrink_rng << 17;
  return shrink_rng;
}

static void
add_value (uint32_t **v, size_t *n, size_t *cap, uint32_t x)
{
  if (*n == *cap)
    *v = xrealloc (*v, (*cap = *cap ? 2 * *cap : 1024) * sizeof **v);
  (*v)[(*n)++] = x;
}

/* Both programs answer the same for every architecture in archs, every
 * syscall number near a constant either compares (and 0..600, the x32
 * range's first 600), with zero, all-ones and random arguments (random
 * words and the programs' own constants). */
static void
assert_same_answers (const char *what, const struct sock_filter *a, size_t na,
                     const struct sock_filter *b, size_t nb)
{
  static const uint32_t archs[] = { AUDIT_ARCH_X86_64, AUDIT_ARCH_I386, AUDIT_ARCH_AARCH64,
                                    AUDIT_ARCH_ARM, 0 };
  _cleanup_free_ uint32_t *nrs = NULL, *ks = NULL;
  size_t n_nrs = 0, c_nrs = 0, n_ks = 0, c_ks = 0;
  for (uint32_t i = 0; i < 600; i++)
    {
      add_value (&nrs, &n_nrs, &c_nrs, i);
      add_value (&nrs, &n_nrs, &c_nrs, 0x40000000u + i);
    }
  for (int w = 0; w < 2; w++)
    for (size_t i = 0; i < (w ? nb : na); i++)
      {
        uint32_t k = (w ? b : a)[i].k;
        add_value (&nrs, &n_nrs, &c_nrs, k - 1);
        add_value (&nrs, &n_nrs, &c_nrs, k);
        add_value (&nrs, &n_nrs, &c_nrs, k + 1);
        add_value (&ks, &n_ks, &c_ks, k);
      }
  size_t checked = 0;
  for (size_t ai = 0; ai < KIST_ARRAY_SIZE (archs); ai++)
    for (size_t i = 0; i < n_nrs; i++)
      for (int t = 0; t < 6; t++)
        {
          struct seccomp_data d = { .nr = (int) nrs[i], .arch = archs[ai] };
          for (int j = 0; j < 6; j++)
            {
              uint64_t r = shrink_rand ();
              d.args[j] = t == 0   ? 0
                          : t == 1 ? ~0ULL
                          : (r & 3) == 0 ? r
                          : (r & 3) == 1 ? ((uint64_t) ks[(r >> 8) % n_ks] << 32 | ks[(r >> 40) % n_ks])
                                          : ks[(r >> 8) % n_ks];
            }
          uint32_t x = kist_seccomp_simulate_data (a, na, &d), y = kist_seccomp_simulate_data (b, nb, &d);
          ck_assert_msg (x == y,
                         "%s: arch 0x%08x nr %d args %#llx %#llx %#llx: 0x%08x before the shrink, "
                         "0x%08x after",
                         what, archs[ai], d.nr, (unsigned long long) d.args[0],
                         (unsigned long long) d.args[1], (unsigned long long) d.args[2], x, y);
          checked++;
        }
  ck_assert_uint_gt (checked, 10000);
}

/* p shrunk: a copy of it, with its new length in *n. */
static struct sock_filter *
shrunk (const struct sock_filter *p, size_t len, size_t *n)
{
  struct sock_filter *c = xcalloc (len, sizeof *c);
  memcpy (c, p, len * sizeof *c);
  *n = len;
  kist_seccomp_shrink (&c, n);
  return c;
}

START_TEST (test_shrink_profiles)
{
  /* The embedded profiles, and one with argument conditions on three
   * arches whose default kills. */
  const char *inline_doc
      = "{'defaultAction': 'SCMP_ACT_KILL_PROCESS', 'architectures': ['SCMP_ARCH_X86_64', "
        "'SCMP_ARCH_X86', 'SCMP_ARCH_X32', 'SCMP_ARCH_AARCH64'], 'syscalls': ["
        "{'names': ['read', 'write', 'close', 'openat', 'exit_group', 'mmap', 'brk'], "
        "'action': 'SCMP_ACT_ALLOW'},"
        "{'names': ['socket'], 'action': 'SCMP_ACT_ALLOW', 'args': [{'index': 0, 'value': 1, "
        "'op': 'SCMP_CMP_EQ'}]},"
        "{'names': ['personality'], 'action': 'SCMP_ACT_ALLOW', 'args': [{'index': 0, 'value': "
        "4294967295, 'op': 'SCMP_CMP_EQ'}]},"
        "{'names': ['clone'], 'action': 'SCMP_ACT_ALLOW', 'args': [{'index': 0, 'value': "
        "2114060288, 'valueTwo': 0, 'op': 'SCMP_CMP_MASKED_EQ'}]},"
        "{'names': ['kill', 'tgkill'], 'action': 'SCMP_ACT_ERRNO', 'errnoRet': 13},"
        "{'names': ['ptrace'], 'action': 'SCMP_ACT_TRACE'}]}";
  size_t n_profiles = 0;
  while (kist_seccomp_builtin_names[n_profiles])
    n_profiles++;
  for (size_t i = 0; i <= n_profiles; i++)
    {
      struct kist_seccomp_profile *p = NULL;
      struct kist_error *err = NULL;
      struct kist_seccomp_env env = { .bounding = bounding_none };
      const char *name = i < n_profiles ? kist_seccomp_builtin_names[i] : "inline";
      if (i < n_profiles)
        ck_assert_int_eq (kist_seccomp_profile_parse_json (
                              (const char *) kist_seccomp_builtin_data[i],
                              kist_seccomp_builtin_sizes[i], "builtin: ", &env, &p, &err),
                          0);
      else
        p = parse_ok (inline_doc);
      _cleanup_free_ struct sock_filter *raw = NULL, *small = NULL;
      size_t n_raw = 0, n_small = 0;
      ck_assert_msg (kist_seccomp_compile_unshrunk (p, &raw, &n_raw, &err) == 0, "%s: %s", name,
                     err ? err->msg : "?");
      ck_assert_msg (kist_seccomp_compile (p, &small, &n_small, &err) == 0, "%s: %s", name,
                     err ? err->msg : "?");
      /* What the cache keeps and the kernel gets is the shrunk program:
       * never longer, and much shorter for the long allowlists (a short
       * one, as the inline profile's, has no region worth a tree). */
      ck_assert_msg (n_small <= n_raw, "%s: %zu instructions, %zu before the shrink", name,
                     n_small, n_raw);
      if (strcmp (name, "strict") == 0)
        ck_assert_msg (n_small <= 300, "strict: %zu instructions (254 when written)", n_small);
      if (strcmp (name, "default") == 0)
        ck_assert_msg (n_small <= 500, "default: %zu instructions (436 when written)", n_small);
      assert_same_answers (name, raw, n_raw, small, n_small);
      /* Shrinking again changes nothing. */
      size_t n_again = 0;
      _cleanup_free_ struct sock_filter *again = shrunk (small, n_small, &n_again);
      ck_assert_uint_eq (n_again, n_small);
      ck_assert_int_eq (memcmp (again, small, n_small * sizeof *small), 0);
      kist_seccomp_profile_free (p);
    }
}
END_TEST

#define LD_NR BPF_STMT (BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, nr))
#define LD_ARCH BPF_STMT (BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, arch))
#define RET(v) BPF_STMT (BPF_RET | BPF_K, (v))
#define JEQ(k, t, f) BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, (k), (t), (f))

START_TEST (test_shrink_handmade)
{
  /* A linear list: 1..20 allowed, 30..39 EPERM, the rest killed: 5
   * intervals, 3 targets: ld, 4 nodes, 3 returns. */
  struct sock_filter list[34];
  size_t n = 0;
  list[n++] = (struct sock_filter) LD_NR;
  for (uint32_t nr = 1; nr <= 20; nr++, n++)
    list[n] = (struct sock_filter) JEQ (nr, (uint8_t) (32 - n - 1), 0);
  for (uint32_t nr = 30; nr <= 39; nr++, n++)
    list[n] = (struct sock_filter) JEQ (nr, (uint8_t) (33 - n - 1), 0);
  list[n++] = (struct sock_filter) RET (SECCOMP_RET_KILL_PROCESS);
  list[n++] = (struct sock_filter) RET (SECCOMP_RET_ALLOW);
  list[n++] = (struct sock_filter) RET (SECCOMP_RET_ERRNO | EPERM);
  ck_assert_uint_eq (n, 34);
  size_t m = 0;
  _cleanup_free_ struct sock_filter *s1 = shrunk (list, n, &m);
  ck_assert_uint_eq (m, 8);
  assert_same_answers ("list", list, n, s1, m);

  /* The same list entered in its middle from outside (after an arch test
   * whose false branch jumps to the 11th comparison): left as it is. */
  struct sock_filter entered[36];
  entered[0] = (struct sock_filter) LD_ARCH;
  entered[1] = (struct sock_filter) JEQ (AUDIT_ARCH_X86_64, 0, 11);
  memcpy (entered + 2, list, sizeof list);
  size_t m2 = 0;
  _cleanup_free_ struct sock_filter *s2 = shrunk (entered, 36, &m2);
  ck_assert_uint_eq (m2, 36);
  ck_assert_int_eq (memcmp (s2, entered, sizeof entered), 0);

  /* A JSET on the number is a target, not part of the tree: odd numbers
   * below 20 allowed, the rest of 1..20 EPERM, others killed. */
  struct sock_filter jset[26];
  n = 0;
  jset[n++] = (struct sock_filter) LD_NR;
  for (uint32_t nr = 1; nr <= 20; nr++, n++)
    jset[n] = (struct sock_filter) JEQ (nr, (uint8_t) (22 - n - 1), 0);
  jset[n++] = (struct sock_filter) RET (SECCOMP_RET_KILL_PROCESS); /* 21 */
  jset[n++] = (struct sock_filter) BPF_JUMP (BPF_JMP | BPF_JSET | BPF_K, 1, 0, 1); /* 22 */
  jset[n++] = (struct sock_filter) RET (SECCOMP_RET_ALLOW);
  jset[n++] = (struct sock_filter) RET (SECCOMP_RET_ERRNO | EPERM);
  jset[n++] = (struct sock_filter) RET (SECCOMP_RET_KILL_PROCESS); /* unreachable: dropped */
  ck_assert_uint_eq (n, 26);
  size_t m3 = 0;
  _cleanup_free_ struct sock_filter *s3 = shrunk (jset, n, &m3);
  ck_assert_uint_lt (m3, 12);
  assert_same_answers ("jset", jset, n, s3, m3);
  struct seccomp_data d = { .nr = 7, .arch = AUDIT_ARCH_X86_64 };
  ck_assert_uint_eq (kist_seccomp_simulate_data (s3, m3, &d), SECCOMP_RET_ALLOW);
  d.nr = 8;
  ck_assert_uint_eq (kist_seccomp_simulate_data (s3, m3, &d), SECCOMP_RET_ERRNO | EPERM);
  d.nr = 21;
  ck_assert_uint_eq (kist_seccomp_simulate_data (s3, m3, &d), SECCOMP_RET_KILL_PROCESS);
}
END_TEST

/* ---- notify ---- */

static int
agent_socket (const char *path)
{
  int s = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_un a = { .sun_family = AF_UNIX };
  ck_assert_uint_lt (strlen (path), sizeof a.sun_path);
  strcpy (a.sun_path, path);
  ck_assert_int_eq (bind (s, (struct sockaddr *) &a, sizeof a), 0);
  ck_assert_int_eq (listen (s, 1), 0);
  return s;
}

START_TEST (test_notify)
{
  _cleanup_free_ char *sock = xasprintf ("%s/agent.sock", tmpdir);
  _cleanup_free_ char *target = xasprintf ("%s/notified", tmpdir);
  _cleanup_free_ char *inl = xasprintf (
      "'seccomp':{'defaultAction':'SCMP_ACT_ALLOW','listenerPath':'%s','listenerMetadata':"
      "'hello','syscalls':[{'names':['mkdir','mkdirat'],'action':'SCMP_ACT_NOTIFY'}]}",
      sock);
  int agent = agent_socket (sock);
  struct kist_spec *s = spec_with (inl, "'a':'b'", true);
  struct kist_ctx ctx = ctx_for (s);
  struct kist_report *r = kist_report_new ("t1", "create", NULL);
  struct kist_error *err = NULL;
  ck_assert_int_eq (choose_prepare (&ctx, tmpfd, r, &err), 0);
  ck_assert_uint_ne (ctx.seccomp->flags & SECCOMP_FILTER_FLAG_NEW_LISTENER, 0);
  ck_assert_ptr_nonnull (strstr (ctx.seccomp->detail, "; notify listener"));

  int pair[2];
  ck_assert_int_eq (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair), 0);
  pid_t pid = fork ();
  if (pid == 0)
    {
      alarm (20);
      close (pair[0]);
      close (agent);
      ctx.sync_fd = pair[1];
      struct kist_report *r2 = kist_report_new ("t1", "create", NULL);
      if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || kist_seccomp_apply (&ctx, r2, &err) < 0)
        raw_exit (40);
      if (!r2->layers[0].applied)
        raw_exit (41);
      /* The agent answers "success" without doing it. */
      if (mkdir (target, 0700) != 0)
        raw_exit (42);
      struct stat st;
      if (stat (target, &st) == 0 || errno != ENOENT)
        raw_exit (43);
      raw_exit (0);
    }
  close (pair[1]);
  ctx.pid = pid;

  char type = 0;
  char *payload = NULL;
  int lfd = -1;
  ck_assert_int_eq (kist_sync_recv_fd (pair[0], &type, &payload, NULL, &lfd), 0);
  free (payload);
  ck_assert_int_eq (type, KIST_SYNC_SECCOMP_FD);
  ck_assert_int_ge (lfd, 0);
  ck_assert_int_eq (fcntl (lfd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
  int fret = kist_seccomp_notify_forward (&ctx, lfd, &err);
  ck_assert_msg (fret == 0, "%s", err ? err->msg : "?");
  close (lfd);

  /* The agent: the state JSON and the fd. */
  int conn = accept4 (agent, NULL, NULL, SOCK_CLOEXEC);
  ck_assert_int_ge (conn, 0);
  char buf[8192];
  union
  {
    char b[CMSG_SPACE (sizeof (int))];
    struct cmsghdr align;
  } ctl;
  struct iovec iov = { .iov_base = buf, .iov_len = sizeof buf - 1 };
  struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.b,
                        .msg_controllen = sizeof ctl.b };
  ssize_t got = recvmsg (conn, &msg, MSG_CMSG_CLOEXEC);
  ck_assert_int_gt (got, 0);
  buf[got] = '\0';
  struct cmsghdr *c = CMSG_FIRSTHDR (&msg);
  ck_assert_ptr_nonnull (c);
  ck_assert_int_eq (c->cmsg_type, SCM_RIGHTS);
  int nfd;
  memcpy (&nfd, CMSG_DATA (c), sizeof nfd);
  _cleanup_free_ char *pidtext = xasprintf ("\"pid\":%d,", (int) pid);
  ck_assert_msg (strstr (buf, "\"fds\":[\"seccompFd\"]") && strstr (buf, pidtext)
                     && strstr (buf, "\"metadata\":\"hello\"")
                     && strstr (buf, "\"status\":\"creating\"") && strstr (buf, "\"id\":\"t1\"")
                     && strstr (buf, "\"annotations\":{\"a\":\"b\"}"),
                 "state: %s", buf);

  struct seccomp_notif req;
  memset (&req, 0, sizeof req);
  ck_assert_int_eq (ioctl (nfd, SECCOMP_IOCTL_NOTIF_RECV, &req), 0);
  ck_assert_int_eq (req.pid, pid);
  struct seccomp_notif_resp resp = { .id = req.id, .val = 0, .error = 0, .flags = 0 };
  ck_assert_int_eq (ioctl (nfd, SECCOMP_IOCTL_NOTIF_SEND, &resp), 0);
  ck_assert_int_eq (wait_child (pid), 0);
  close (nfd);
  close (conn);
  close (agent);
  close (pair[0]);
  kist_seccomp_free (ctx.seccomp);
  kist_report_free (r);
  kist_spec_free (s);
}
END_TEST

START_TEST (test_sync_fd)
{
  int pair[2];
  ck_assert_int_eq (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair), 0);
  int devnull = open ("/dev/null", O_RDONLY | O_CLOEXEC);
  ck_assert_int_eq (kist_sync_send_fd (pair[0], 'F', "xy", 2, devnull), 0);
  ck_assert_int_eq (kist_sync_send (pair[0], 'L', "plain", 5), 0);
  char type;
  char *payload = NULL;
  size_t len = 0;
  int fd = -2;
  ck_assert_int_eq (kist_sync_recv_fd (pair[1], &type, &payload, &len, &fd), 0);
  ck_assert_int_eq (type, 'F');
  ck_assert_uint_eq (len, 2);
  ck_assert_str_eq (payload, "xy");
  free (payload);
  struct stat a, b;
  ck_assert_int_eq (fstat (fd, &a), 0);
  ck_assert_int_eq (fstat (devnull, &b), 0);
  ck_assert_uint_eq (a.st_rdev, b.st_rdev);
  close (fd);
  ck_assert_int_eq (kist_sync_recv_fd (pair[1], &type, &payload, &len, &fd), 0);
  ck_assert_int_eq (type, 'L');
  ck_assert_int_eq (fd, -1);
  ck_assert_str_eq (payload, "plain");
  free (payload);
  close (pair[0]);
  ck_assert_int_eq (kist_sync_recv_fd (pair[1], &type, &payload, &len, &fd), -ECONNRESET);
  close (pair[1]);
  close (devnull);
}
END_TEST

START_TEST (test_features)
{
  _cleanup_free_ char *j = kist_seccomp_features_json ();
  char errbuf[256];
  yajl_val v = yajl_tree_parse (j, errbuf, sizeof errbuf);
  ck_assert_ptr_nonnull (v);
  yajl_tree_free (v);
  ck_assert_ptr_nonnull (strstr (j, "\"enabled\":true"));
  ck_assert_ptr_nonnull (strstr (j, "\"SCMP_ACT_NOTIFY\""));
  ck_assert_ptr_nonnull (strstr (j, "\"SCMP_CMP_MASKED_EQ\""));
  ck_assert_ptr_nonnull (strstr (j, "\"SCMP_ARCH_X86_64\""));
  ck_assert_ptr_nonnull (strstr (j, "\"knownFlags\":[\"SECCOMP_FILTER_FLAG_TSYNC\""));
  ck_assert_ptr_nonnull (strstr (j, "\"supportedFlags\":[\"SECCOMP_FILTER_FLAG_TSYNC\""));
}
END_TEST

/* ---- several rules for one syscall, resolved as runc resolves them (issue #9) ---- */

/* Default ALLOW, so that the child can do anything else. */
static const char *dups
    = "{'defaultAction':'SCMP_ACT_ALLOW','syscalls':["
      /* 0, 1: two unconditional actions: the first one counts (podman's setns). */
      "{'names':['setns'],'action':'SCMP_ACT_LOG'},"
      "{'names':['setns'],'action':'SCMP_ACT_ERRNO','errnoRet':13},"
      "{'names':['unshare'],'action':'SCMP_ACT_ERRNO','errnoRet':13},"
      "{'names':['unshare'],'action':'SCMP_ACT_ERRNO','errnoRet':22},"
      /* 4, 5: the default action is left out, so it does not come first. */
      "{'names':['kcmp'],'action':'SCMP_ACT_ALLOW'},"
      "{'names':['kcmp'],'action':'SCMP_ACT_ERRNO','errnoRet':5},"
      /* 6: two conditions on one argument: alternatives. */
      "{'names':['personality'],'action':'SCMP_ACT_ERRNO','errnoRet':22,'args':["
      "{'index':0,'value':4294901760,'valueTwo':131072,'op':'SCMP_CMP_MASKED_EQ'},"
      "{'index':0,'value':255,'valueTwo':8,'op':'SCMP_CMP_MASKED_EQ'}]},"
      /* 7, 8: conditional, then unconditional: the unconditional one replaces it. */
      "{'names':['getpriority'],'action':'SCMP_ACT_ERRNO','errnoRet':13,'args':["
      "{'index':0,'value':1,'op':'SCMP_CMP_EQ'}]},"
      "{'names':['getpriority'],'action':'SCMP_ACT_ERRNO','errnoRet':22},"
      /* 9, 10: unconditional, then conditional: the conditional one is dropped. */
      "{'names':['chroot'],'action':'SCMP_ACT_ERRNO','errnoRet':5},"
      "{'names':['chroot'],'action':'SCMP_ACT_ERRNO','errnoRet':13,'args':["
      "{'index':0,'value':0,'op':'SCMP_CMP_EQ'}]}]}";

static int
errno_of (long r)
{
  return r < 0 ? errno : 0;
}

static int
dups_checks (void)
{
  if (errno_of (syscall (SYS_setns, -1, 0)) != EBADF)
    return 10;
  if (errno_of (syscall (SYS_unshare, 0)) != EACCES)
    return 11;
  if (errno_of (syscall (SYS_kcmp, 0, 0, 0, 0, 0)) != EIO)
    return 12;
  if (errno_of (syscall (SYS_personality, 8UL)) != EINVAL)
    return 13;
  if (errno_of (syscall (SYS_personality, 0x20000UL)) != EINVAL)
    return 14;
  if (errno_of (syscall (SYS_personality, 0xffffffffUL)) != 0)
    return 15;
  if (errno_of (syscall (SYS_getpriority, 1, 0)) != EINVAL)
    return 16;
  if (errno_of (syscall (SYS_getpriority, 0, 0)) != EINVAL)
    return 17;
  if (errno_of (syscall (SYS_chroot, NULL)) != EIO)
    return 18;
  return 0;
}

START_TEST (test_duplicates_like_runc)
{
  struct kist_seccomp_profile *p = parse_ok (dups);
  /* kcmp's ALLOW is gone; personality's entry became two one-condition rules. */
  size_t n_pers = 0, n_kcmp = 0;
  for (size_t i = 0; i < p->n_rules; i++)
    {
      const struct kist_seccomp_rule *r = &p->rules[i];
      if (strcmp (r->name, "personality") == 0)
        {
          n_pers++;
          ck_assert_uint_eq (r->n_args, 1);
          ck_assert_uint_eq (r->entry, 6);
          ck_assert_uint_eq (r->args[0].value, n_pers == 1 ? 0xffff0000U : 0xffU);
        }
      if (strcmp (r->name, "kcmp") == 0)
        {
          n_kcmp++;
          ck_assert_uint_eq (r->action, ACT_ERRNO (5));
        }
    }
  ck_assert_uint_eq (n_pers, 2);
  ck_assert_uint_eq (n_kcmp, 1);
  ck_assert_uint_eq (p->n_rules, 11);
  kist_seccomp_profile_free (p);

  struct sock_filter *insns = NULL;
  size_t n = 0;
  compile (dups, &insns, &n, NULL);
  int st = in_filtered_child (insns, n, dups_checks);
  ck_assert_msg (WIFEXITED (st) && WEXITSTATUS (st) == 0, "child status 0x%x", st);
  free (insns);
}
END_TEST

/* What libseccomp refuses (runc fails too) is an error naming both entries. */
START_TEST (test_duplicates_conflict)
{
  _cleanup_free_ char *json
      = q ("{'defaultAction':'SCMP_ACT_ALLOW','syscalls':["
           "{'names':['syslog'],'action':'SCMP_ACT_ERRNO','errnoRet':13,'args':["
           "{'index':0,'value':10,'op':'SCMP_CMP_EQ'},{'index':1,'value':0,'op':'SCMP_CMP_EQ'}]},"
           "{'names':['syslog'],'action':'SCMP_ACT_ERRNO','errnoRet':5,'args':["
           "{'index':0,'value':10,'op':'SCMP_CMP_EQ'}]}]}");
  struct kist_seccomp_env env = { .bounding = bounding_none };
  struct kist_seccomp_profile *p = NULL;
  struct kist_error *err = NULL;
  ck_assert_int_eq (kist_seccomp_profile_parse_json (json, strlen (json), "test: ", &env, &p, &err),
                    0);
  struct sock_filter *insns = NULL;
  size_t n = 0;
  ck_assert_int_lt (kist_seccomp_compile (p, &insns, &n, &err), 0);
  ck_assert_ptr_nonnull (err);
  ck_assert_int_eq (err->errnum, EEXIST);
  ck_assert_msg (strstr (err->msg, "syscalls[1]: libseccomp refuses the conditional "
                                   "SCMP_ACT_ERRNO(5) for `syslog`: its conditions overlap those "
                                   "of syscalls[0], which gives SCMP_ACT_ERRNO(13)")
                     && strstr (err->msg, "make their conditions disjoint"),
                 "%s", err->msg);
  kist_error_free (err);
  kist_seccomp_profile_free (p);
}
END_TEST

/* An architecture name kist does not know matches nothing in includes and
 * excludes, as in docker (whose default.json says "mips3l64n32"). */
START_TEST (test_gate_unknown_arch)
{
  struct kist_seccomp_profile *p
      = parse_ok ("{'defaultAction':'SCMP_ACT_ERRNO','syscalls':["
                  "{'names':['getpid'],'action':'SCMP_ACT_ALLOW',"
                  "'excludes':{'arches':['mips3l64n32']}},"
                  "{'names':['getppid'],'action':'SCMP_ACT_ALLOW',"
                  "'includes':{'arches':['mips3l64n32']}}]}");
  ck_assert_ptr_nonnull (find_rule (p, "getpid"));
  ck_assert_ptr_null (find_rule (p, "getppid"));
  ck_assert_uint_eq (p->n_gated, 1);
  kist_seccomp_profile_free (p);
}
END_TEST

static Suite *
seccomp_suite (void)
{
  Suite *s = suite_create ("seccomp");
  TCase *tc = tcase_create ("core");
  tcase_set_timeout (tc, 60);
  tcase_add_test (tc, test_sha256_vectors);
  tcase_add_test (tc, test_parse_basic);
  tcase_add_test (tc, test_parse_gating);
  tcase_add_test (tc, test_parse_malformed);
  tcase_add_test (tc, test_parse_flags_notify);
  tcase_add_test (tc, test_parse_10k);
  tcase_add_test (tc, test_canonical_stable);
  tcase_add_test (tc, test_key_flips);
  tcase_add_test (tc, test_compile_and_deny);
  tcase_add_test (tc, test_kill_action);
  tcase_add_test (tc, test_simulate);
  tcase_add_test (tc, test_builtin_profiles);
  tcase_add_test (tc, test_shrink_profiles);
  tcase_add_test (tc, test_shrink_handmade);
  tcase_add_test (tc, test_sync_fd);
  tcase_add_test (tc, test_features);
  tcase_add_test (tc, test_duplicates_like_runc);
  tcase_add_test (tc, test_duplicates_conflict);
  tcase_add_test (tc, test_gate_unknown_arch);
  suite_add_tcase (s, tc);

  TCase *fs = tcase_create ("fs");
  tcase_set_timeout (fs, 60);
  tcase_add_checked_fixture (fs, setup, teardown);
  tcase_add_test (fs, test_cache);
  tcase_add_test (fs, test_layer_inline_cache);
  tcase_add_test (fs, test_layer_early_and_sources);
  tcase_add_test (fs, test_layer_builtin_deferred);
  tcase_add_test (fs, test_choose_config_errors);
  tcase_add_test (fs, test_notify);
  suite_add_tcase (s, fs);
  return s;
}

int
main (void)
{
  return kist_unit_run (seccomp_suite ());
}
