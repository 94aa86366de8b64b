/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for runtime/landlock.c and kist_sandbox_landlock (sandbox.c):
 * the rights masked down to each Landlock ABI, the names the detail uses,
 * the sandbox's rules, and (where the kernel has Landlock) the layer itself
 * in a child process: applied with its probes, and failed when its
 * filesystem probe shows the domain does not deny what it should. */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "landlock.h"
#include "layer.h"
#include "report.h"
#include "sandbox.h"
#include "util.h"
#include "unit.h"

#define ABI1_ALL ((1ULL << 13) - 1)

START_TEST (test_fs_rights_by_abi)
{
  ck_assert_uint_eq (kist_landlock_fs_rights (0), 0);
  ck_assert_uint_eq (kist_landlock_fs_rights (-38), 0);
  ck_assert_uint_eq (kist_landlock_fs_rights (1), ABI1_ALL);
  ck_assert_uint_eq (kist_landlock_fs_rights (2), ABI1_ALL | KIST_LL_FS_REFER);
  ck_assert_uint_eq (kist_landlock_fs_rights (3),
                     ABI1_ALL | KIST_LL_FS_REFER | KIST_LL_FS_TRUNCATE);
  /* ABI 4 adds network rights only. */
  ck_assert_uint_eq (kist_landlock_fs_rights (4), kist_landlock_fs_rights (3));
  ck_assert_uint_eq (kist_landlock_fs_rights (5),
                     ABI1_ALL | KIST_LL_FS_REFER | KIST_LL_FS_TRUNCATE | KIST_LL_FS_IOCTL_DEV);
  ck_assert_uint_eq (kist_landlock_fs_rights (7), kist_landlock_fs_rights (5));
}
END_TEST

START_TEST (test_access_for)
{
  struct kist_landlock_path ro = { .path = (char *) "/" };
  struct kist_landlock_path rw = { .path = (char *) "/work", .write = true };
  struct kist_landlock_path dev = { .path = (char *) "/dev/pts",
                                    .access = KIST_LL_FS_READ | KIST_LL_FS_WRITE_FILE
                                              | KIST_LL_FS_IOCTL_DEV };
  ck_assert_uint_eq (kist_landlock_access_for (&ro, 7, true), KIST_LL_FS_READ);
  /* A file carries no read_dir. */
  ck_assert_uint_eq (kist_landlock_access_for (&ro, 7, false),
                     KIST_LL_FS_EXECUTE | KIST_LL_FS_READ_FILE);
  ck_assert_uint_eq (kist_landlock_access_for (&rw, 7, true), kist_landlock_fs_rights (7));
  ck_assert_uint_eq (kist_landlock_access_for (&rw, 2, true), ABI1_ALL | KIST_LL_FS_REFER);
  ck_assert_uint_eq (kist_landlock_access_for (&rw, 7, false),
                     KIST_LL_FS_EXECUTE | KIST_LL_FS_READ_FILE | KIST_LL_FS_WRITE_FILE
                         | KIST_LL_FS_TRUNCATE | KIST_LL_FS_IOCTL_DEV);
  ck_assert_uint_eq (kist_landlock_access_for (&rw, 1, false),
                     KIST_LL_FS_EXECUTE | KIST_LL_FS_READ_FILE | KIST_LL_FS_WRITE_FILE);
  /* An explicit access wins over write, masked by the ABI. */
  ck_assert_uint_eq (kist_landlock_access_for (&dev, 7, true),
                     KIST_LL_FS_READ | KIST_LL_FS_WRITE_FILE | KIST_LL_FS_IOCTL_DEV);
  ck_assert_uint_eq (kist_landlock_access_for (&dev, 4, true),
                     KIST_LL_FS_READ | KIST_LL_FS_WRITE_FILE);
  ck_assert_uint_eq (kist_landlock_access_for (&ro, 0, true), 0);
}
END_TEST

START_TEST (test_net_and_scopes)
{
  struct kist_landlock_rules r = { .deny_tcp = true, .scope = true };
  ck_assert_uint_eq (kist_landlock_net_rights (&r, 3), 0);
  ck_assert_uint_eq (kist_landlock_net_rights (&r, 4), 3); /* BIND_TCP | CONNECT_TCP */
  ck_assert_uint_eq (kist_landlock_net_rights (&r, 7), 3);
  ck_assert_uint_eq (kist_landlock_scopes (&r, 5), 0);
  ck_assert_uint_eq (kist_landlock_scopes (&r, 6), 3); /* ABSTRACT_UNIX_SOCKET | SIGNAL */
  r.deny_tcp = r.scope = false;
  ck_assert_uint_eq (kist_landlock_net_rights (&r, 7), 0);
  ck_assert_uint_eq (kist_landlock_scopes (&r, 7), 0);
}
END_TEST

static void
name_is (uint64_t access, int abi, const char *want)
{
  _cleanup_free_ char *n = kist_landlock_access_name (access, abi);
  ck_assert_str_eq (n, want);
}

START_TEST (test_access_names)
{
  name_is (KIST_LL_FS_READ, 7, "ro");
  name_is (KIST_LL_FS_EXECUTE | KIST_LL_FS_READ_FILE, 7, "ro");
  name_is (kist_landlock_fs_rights (7), 7, "rw");
  name_is (kist_landlock_fs_rights (3), 3, "rw");
  name_is (KIST_LL_FS_EXECUTE | KIST_LL_FS_READ_FILE | KIST_LL_FS_WRITE_FILE
               | KIST_LL_FS_TRUNCATE | KIST_LL_FS_IOCTL_DEV,
           7, "rw");
  name_is (KIST_LL_FS_READ | KIST_LL_FS_WRITE_FILE | KIST_LL_FS_IOCTL_DEV, 7,
           "ro+write_file+ioctl_dev");
  /* What the ABI does not know is not named. */
  name_is (KIST_LL_FS_READ | KIST_LL_FS_WRITE_FILE | KIST_LL_FS_IOCTL_DEV, 4, "ro+write_file");
  name_is (KIST_LL_FS_WRITE_FILE, 7, "write_file");
  name_is (0, 7, "none");
}
END_TEST

static const struct kist_landlock_path *
rule_of (const struct kist_landlock_rules *r, const char *path)
{
  const struct kist_landlock_path *found = NULL;
  for (size_t i = 0; i < r->n_paths; i++)
    if (strcmp (r->paths[i].path, path) == 0)
      {
        ck_assert_msg (found == NULL, "two rules for %s", path);
        found = &r->paths[i];
      }
  return found;
}

START_TEST (test_sandbox_rules)
{
  struct kist_sandbox_opts o;
  kist_sandbox_opts_init (&o);
  struct kist_error *err = NULL;
  ck_assert_int_eq (kist_sandbox_add_bind (&o, "/usr", false, false, &err), 0);
  ck_assert_int_eq (kist_sandbox_add_bind (&o, "/tmp:/data", true, false, &err), 0);
  struct kist_sandbox_dir d = { 0 };
  struct kist_landlock_rules *r = kist_sandbox_landlock (&o, &d, &err);
  ck_assert_ptr_nonnull (r);
  ck_assert (r->deny_tcp);
  ck_assert (r->scope);
  const struct kist_landlock_path *p;
  ck_assert ((p = rule_of (r, "/")) && !p->write && p->access == 0);
  ck_assert ((p = rule_of (r, "/usr")) && !p->write);
  ck_assert ((p = rule_of (r, "/data")) && p->write);
  ck_assert ((p = rule_of (r, "/work")) && p->write);
  ck_assert ((p = rule_of (r, "/tmp")) && p->write);
  ck_assert ((p = rule_of (r, "/proc")) && !(p->access & KIST_LL_FS_MAKE_REG)
             && (p->access & KIST_LL_FS_WRITE_FILE));
  ck_assert ((p = rule_of (r, "/dev")) && !(p->access & KIST_LL_FS_IOCTL_DEV));
  ck_assert ((p = rule_of (r, "/dev/pts")) && (p->access & KIST_LL_FS_IOCTL_DEV));
  ck_assert ((p = rule_of (r, "/dev/shm")) && p->probe && !(p->access & KIST_LL_FS_MAKE_DIR)
             && (p->access & KIST_LL_FS_MAKE_REG));
  for (size_t i = 0; i < r->n_paths; i++)
    ck_assert_msg (!r->paths[i].optional, "%s optional", r->paths[i].path);
  kist_landlock_rules_free (r);

  /* --net host shares TCP; a --tmpfs over /dev/shm replaces its rule and
   * the probe; --rw over /tmp replaces the /tmp rule. */
  o.net_host = true;
  ck_assert_int_eq (kist_sandbox_add_tmpfs (&o, "/dev/shm", &err), 0);
  ck_assert_int_eq (kist_sandbox_add_bind (&o, "/usr:/tmp", false, false, &err), 0);
  r = kist_sandbox_landlock (&o, &d, &err);
  ck_assert_ptr_nonnull (r);
  ck_assert (!r->deny_tcp);
  ck_assert ((p = rule_of (r, "/dev/shm")) && p->write && !p->probe);
  ck_assert ((p = rule_of (r, "/tmp")) && !p->write);
  kist_landlock_rules_free (r);
  kist_sandbox_opts_clear (&o);
  ck_assert_ptr_null (err);
}
END_TEST

/* ---- the layer, in a child (a domain cannot be left) */

static char tmp[64];

static void
tmp_setup (void)
{
  strcpy (tmp, "/tmp/test_landlock.XXXXXX");
  ck_assert_ptr_nonnull (mkdtemp (tmp));
  ck_assert_int_eq (chmod (tmp, 0777), 0);
}

static void
tmp_teardown (void)
{
  _cleanup_free_ char *sub = xasprintf ("%s/ro", tmp);
  rmdir (sub);
  rmdir (tmp);
}

/* Apply rules in a child; it writes the entry (applied, detail or reason)
 * to a pipe and, when applied, whether a mkdir in dir is denied after. */
static void
apply_in_child (struct kist_landlock_rules *rules, const char *dir, bool *applied,
                char *text, size_t len, int *mkdir_errno)
{
  int p[2];
  ck_assert_int_eq (pipe (p), 0);
  pid_t pid = fork ();
  ck_assert_int_ge (pid, 0);
  if (pid == 0)
    {
      close (p[0]);
      struct kist_ctx ctx = { .landlock = rules };
      struct kist_report *r = kist_report_new ("t", "sandbox", NULL);
      struct kist_error *err = NULL;
      if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
        _exit (2);
      int ret = kist_landlock_apply (&ctx, r, &err);
      const struct kist_layer *l = kist_report_find (r, "landlock");
      _cleanup_free_ char *sub = xasprintf ("%s/after", dir);
      int e = 0;
      if (ret == 0 && l && l->applied)
        e = mkdir (sub, 0700) < 0 ? errno : 0;
      dprintf (p[1], "%d %d %s", l && l->applied, e,
               l ? (l->applied ? l->detail : l->reason) : "no entry");
      if (e == 0)
        rmdir (sub);
      _exit (0);
    }
  close (p[1]);
  ssize_t n = read (p[0], text, len - 1);
  close (p[0]);
  int st;
  ck_assert_int_eq (waitpid (pid, &st, 0), pid);
  ck_assert_msg (WIFEXITED (st) && WEXITSTATUS (st) == 0, "child status %d", st);
  ck_assert_int_gt (n, 4);
  text[n] = '\0';
  *applied = text[0] == '1';
  *mkdir_errno = atoi (text + 2);
  memmove (text, strchr (text + 2, ' ') + 1, strlen (strchr (text + 2, ' ') + 1) + 1);
}

START_TEST (test_layer_applied)
{
  if (kist_landlock_abi () < 2)
    return; /* no Landlock here (or ABI 1): nothing to apply */
  struct kist_landlock_rules *rules = xcalloc (1, sizeof *rules);
  kist_landlock_rules_add (rules, "/", false, false);
  kist_landlock_rules_add (rules, tmp, false, false)->probe = true;
  kist_landlock_rules_add (rules, "/nonexistent/kist", true, true);
  rules->scope = true;
  bool applied;
  char text[4096];
  int e;
  apply_in_child (rules, tmp, &applied, text, sizeof text, &e);
  ck_assert_msg (applied, "%s", text);
  ck_assert_int_eq (e, EACCES);
  _cleanup_free_ char *probe = xasprintf ("mkdir in %s denied (EACCES; allowed before)", tmp);
  ck_assert_msg (strstr (text, probe), "%s", text);
  ck_assert_msg (strstr (text, "missing, skipped: /nonexistent/kist"), "%s", text);
  ck_assert_msg (strstr (text, "fs: 2 rules (ro / "), "%s", text);
  if (kist_landlock_abi () >= 6)
    ck_assert_msg (strstr (text, "connect to an abstract unix socket bound outside the domain "
                                 "denied (EPERM; allowed before)"),
                   "%s", text);
  kist_landlock_rules_free (rules);
}
END_TEST

/* The probe must be able to fail: a read-only probe dir under a writable
 * rule (rights add up down the tree) still lets mkdir through. */
START_TEST (test_layer_probe_fails)
{
  if (kist_landlock_abi () < 2)
    return;
  _cleanup_free_ char *sub = xasprintf ("%s/ro", tmp);
  ck_assert_int_eq (mkdir (sub, 0777), 0);
  struct kist_landlock_rules *rules = xcalloc (1, sizeof *rules);
  kist_landlock_rules_add (rules, "/", false, false);
  kist_landlock_rules_add (rules, tmp, true, false);
  kist_landlock_rules_add (rules, sub, false, false)->probe = true;
  bool applied;
  char text[4096];
  int e;
  apply_in_child (rules, sub, &applied, text, sizeof text, &e);
  ck_assert_msg (!applied, "%s", text);
  _cleanup_free_ char *want = xasprintf ("the domain is not shown in force: mkdir in %s still "
                                         "allowed after landlock_restrict_self",
                                         sub);
  ck_assert_msg (strstr (text, want), "%s", text);
  kist_landlock_rules_free (rules);

  /* No probe at all: not applied either. */
  rules = xcalloc (1, sizeof *rules);
  kist_landlock_rules_add (rules, "/", false, false);
  apply_in_child (rules, sub, &applied, text, sizeof text, &e);
  ck_assert_msg (!applied, "%s", text);
  ck_assert_msg (strstr (text, "no probe could run"), "%s", text);
  kist_landlock_rules_free (rules);
}
END_TEST

START_TEST (test_not_requested)
{
  struct kist_ctx ctx = { .landlock = NULL };
  struct kist_report *r = kist_report_new ("t", "run", NULL);
  struct kist_error *err = NULL;
  ck_assert_int_eq (kist_landlock_apply (&ctx, r, &err), 0);
  const struct kist_layer *l = kist_report_find (r, "landlock");
  ck_assert_ptr_nonnull (l);
  ck_assert_ptr_null (l->requested);
  ck_assert (!l->applied);
  kist_report_free (r);
}
END_TEST

int
main (void)
{
  Suite *s = suite_create ("landlock");
  TCase *tc = tcase_create ("rights");
  tcase_add_test (tc, test_fs_rights_by_abi);
  tcase_add_test (tc, test_access_for);
  tcase_add_test (tc, test_net_and_scopes);
  tcase_add_test (tc, test_access_names);
  tcase_add_test (tc, test_sandbox_rules);
  tcase_add_test (tc, test_not_requested);
  suite_add_tcase (s, tc);
  TCase *live = tcase_create ("layer");
  tcase_add_checked_fixture (live, tmp_setup, tmp_teardown);
  tcase_add_test (live, test_layer_applied);
  tcase_add_test (live, test_layer_probe_fails);
  suite_add_tcase (s, live);
  return kist_unit_run (s);
}
