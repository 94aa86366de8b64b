/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for the pure parts of the process layers: capability names and
 * masks (caps.c), rlimit names and formatting (rlimits.c), sysctl key
 * validation and value comparison (sysctl.c), id map formatting and parsing
 * (idmap.c), and the not-requested / fail-closed paths that make no syscall. */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "caps.h"
#include "container.h"
#include "error.h"
#include "report.h"
#include "util.h"
#include "unit.h"

START_TEST (test_cap_names)
{
  ck_assert_int_eq (kist_cap_from_name ("CAP_CHOWN"), 0);
  ck_assert_int_eq (kist_cap_from_name ("CAP_SYS_ADMIN"), 21);
  ck_assert_int_eq (kist_cap_from_name ("SYS_ADMIN"), 21);
  ck_assert_int_eq (kist_cap_from_name ("cap_net_raw"), 13);
  ck_assert_int_eq (kist_cap_from_name ("CAP_CHECKPOINT_RESTORE"), 40);
  ck_assert_int_eq (kist_cap_from_name ("CAP_FOO"), -1);
  ck_assert_int_eq (kist_cap_from_name ("CAP_"), -1);
  ck_assert_int_eq (kist_cap_from_name (""), -1);
  ck_assert_int_eq (kist_cap_from_name (NULL), -1);
  ck_assert_str_eq (kist_cap_name (0), "CAP_CHOWN");
  ck_assert_str_eq (kist_cap_name (29), "CAP_AUDIT_WRITE");
  ck_assert_str_eq (kist_cap_name (40), "CAP_CHECKPOINT_RESTORE");
  ck_assert_ptr_null (kist_cap_name (41));
  ck_assert_ptr_null (kist_cap_name (-1));
  /* Every name round-trips. */
  for (int c = 0; c <= KIST_CAP_LAST_KNOWN; c++)
    {
      ck_assert_ptr_nonnull (kist_cap_name (c));
      ck_assert_int_eq (kist_cap_from_name (kist_cap_name (c)), c);
    }
  int last = kist_cap_last_cap ();
  ck_assert_int_ge (last, 36);
  ck_assert_int_lt (last, 64);
  ck_assert_int_eq (kist_cap_last_cap (), last); /* cached */
}
END_TEST

START_TEST (test_cap_mask)
{
  char *names[] = { "CAP_KILL", "CAP_AUDIT_WRITE", "NET_BIND_SERVICE",
                    "CAP_FOO",  "CAP_BAR",         "CAP_CHECKPOINT_RESTORE",
                    NULL };
  uint64_t above = 0;
  const char *unknown = NULL;
  uint64_t m = kist_caps_mask (names, 40, &above, &unknown);
  ck_assert_uint_eq (m, (UINT64_C (1) << 5) | (UINT64_C (1) << 29) | (UINT64_C (1) << 10)
                            | (UINT64_C (1) << 40));
  ck_assert_uint_eq (above, 0);
  ck_assert_str_eq (unknown, "CAP_FOO");

  /* A kernel that stops at 38: the two newest are "above" and left out. */
  char *newer[] = { "CAP_BPF", "CAP_CHECKPOINT_RESTORE", "CAP_PERFMON", NULL };
  above = 0;
  m = kist_caps_mask (newer, 38, &above, &unknown);
  ck_assert_uint_eq (m, UINT64_C (1) << 38);
  ck_assert_uint_eq (above, (UINT64_C (1) << 39) | (UINT64_C (1) << 40));
  ck_assert_ptr_null (unknown);

  ck_assert_uint_eq (kist_caps_mask (NULL, 40, NULL, NULL), 0);
}
END_TEST

START_TEST (test_rlimit_names)
{
  ck_assert_int_eq (kist_rlimit_from_name ("RLIMIT_CPU"), RLIMIT_CPU);
  ck_assert_int_eq (kist_rlimit_from_name ("RLIMIT_NOFILE"), RLIMIT_NOFILE);
  ck_assert_int_eq (kist_rlimit_from_name ("RLIMIT_RTTIME"), RLIMIT_RTTIME);
  ck_assert_int_eq (kist_rlimit_from_name ("RLIMIT_FOO"), -1);
  ck_assert_int_eq (kist_rlimit_from_name ("NOFILE"), -1);
  ck_assert_int_eq (kist_rlimit_from_name ("rlimit_nofile"), -1);
  ck_assert_int_eq (kist_rlimit_from_name (NULL), -1);
  for (int res = 0; res < RLIMIT_NLIMITS; res++)
    {
      const char *n = kist_rlimit_name (res);
      ck_assert_ptr_nonnull (n);
      ck_assert_int_eq (kist_rlimit_from_name (n), res);
    }
  ck_assert_ptr_null (kist_rlimit_name (RLIMIT_NLIMITS));

  char *s = kist_rlimit_format (1024, 1024);
  ck_assert_str_eq (s, "1024:1024");
  free (s);
  s = kist_rlimit_format (0, RLIM_INFINITY);
  ck_assert_str_eq (s, "0:unlimited");
  free (s);
  s = kist_rlimit_format (RLIM_INFINITY, RLIM_INFINITY);
  ck_assert_str_eq (s, "unlimited:unlimited");
  free (s);
}
END_TEST

START_TEST (test_sysctl_keys)
{
  char *path = NULL;
  struct kist_error *e = NULL;
  ck_assert_int_eq (kist_sysctl_key_path ("net.ipv4.ip_forward", &path, &e), 0);
  ck_assert_str_eq (path, "/proc/sys/net/ipv4/ip_forward");
  free (path);
  ck_assert_int_eq (kist_sysctl_key_path ("kernel.shm_rmid_forced", &path, &e), 0);
  ck_assert_str_eq (path, "/proc/sys/kernel/shm_rmid_forced");
  free (path);

  static const char *bad[] = { "",
                               ".",
                               "..",
                               "net..ipv4",
                               ".net.ipv4",
                               "net.ipv4.",
                               "net/ipv4/ip_forward",
                               "net.ipv4.../x",
                               "net.ipv4 .x",
                               "net.ipv4\n.x" };
  for (size_t i = 0; i < KIST_ARRAY_SIZE (bad); i++)
    {
      path = NULL;
      ck_assert_int_lt (kist_sysctl_key_path (bad[i], &path, &e), 0);
      ck_assert_ptr_null (path);
      ck_assert_ptr_nonnull (e);
      ck_assert_int_eq (e->errnum, EINVAL);
      kist_error_freep (&e);
    }
  ck_assert_int_lt (kist_sysctl_key_path (NULL, &path, &e), 0);
  kist_error_freep (&e);

  ck_assert_int_eq (kist_sysctl_key_namespace ("kernel.msgmax"), KIST_NS_IPC);
  ck_assert_int_eq (kist_sysctl_key_namespace ("kernel.msgmnb"), KIST_NS_IPC);
  ck_assert_int_eq (kist_sysctl_key_namespace ("kernel.msgmni"), KIST_NS_IPC);
  ck_assert_int_eq (kist_sysctl_key_namespace ("kernel.sem"), KIST_NS_IPC);
  ck_assert_int_eq (kist_sysctl_key_namespace ("kernel.shmall"), KIST_NS_IPC);
  ck_assert_int_eq (kist_sysctl_key_namespace ("kernel.shmmax"), KIST_NS_IPC);
  ck_assert_int_eq (kist_sysctl_key_namespace ("kernel.shmmni"), KIST_NS_IPC);
  ck_assert_int_eq (kist_sysctl_key_namespace ("kernel.shm_rmid_forced"), KIST_NS_IPC);
  ck_assert_int_eq (kist_sysctl_key_namespace ("fs.mqueue.msg_max"), KIST_NS_IPC);
  ck_assert_int_eq (kist_sysctl_key_namespace ("net.ipv4.ip_forward"), KIST_NS_NET);
  ck_assert_int_eq (kist_sysctl_key_namespace ("kernel.hostname"), KIST_NS_UTS);
  ck_assert_int_eq (kist_sysctl_key_namespace ("kernel.domainname"), KIST_NS_UTS);
  ck_assert_int_eq (kist_sysctl_key_namespace ("kernel.pid_max"), -1);
  ck_assert_int_eq (kist_sysctl_key_namespace ("kernel.shmmax2"), -1);
  ck_assert_int_eq (kist_sysctl_key_namespace ("vm.swappiness"), -1);
  ck_assert_int_eq (kist_sysctl_key_namespace ("fs.mqueue"), -1);
  ck_assert_int_eq (kist_sysctl_key_namespace ("network.x"), -1);
  ck_assert_int_eq (kist_sysctl_key_namespace (NULL), -1);
}
END_TEST

START_TEST (test_sysctl_values)
{
  ck_assert (kist_sysctl_value_equal ("1", "1\n"));
  ck_assert (kist_sysctl_value_equal ("250 32000 32 128", "250\t32000\t32\t128\n"));
  ck_assert (kist_sysctl_value_equal ("  2000    60000 ", "2000\t60000\n"));
  ck_assert (kist_sysctl_value_equal ("01", "1\n"));
  ck_assert (kist_sysctl_value_equal ("", "\n"));
  ck_assert (kist_sysctl_value_equal ("cubic", "cubic\n"));
  ck_assert (!kist_sysctl_value_equal ("1", "0\n"));
  ck_assert (!kist_sysctl_value_equal ("1 2", "1\n"));
  ck_assert (!kist_sysctl_value_equal ("1", "1 2\n"));
  ck_assert (!kist_sysctl_value_equal ("banana", "0\n"));
  ck_assert (!kist_sysctl_value_equal ("Cubic", "cubic\n"));
}
END_TEST

START_TEST (test_idmap_text)
{
  struct kist_idmap m[] = { { 0, 1000, 1 }, { 1, 100000, 65536 } };
  char *s = kist_idmap_format (m, 2);
  ck_assert_str_eq (s, "0 1000 1\n1 100000 65536\n");
  free (s);
  s = kist_idmap_requested (m, 2);
  ck_assert_str_eq (s, "0:1000:1,1:100000:65536");
  free (s);
  s = kist_idmap_requested (m, 0);
  ck_assert_str_eq (s, "");
  free (s);

  struct kist_idmap *got = NULL;
  size_t n = 0;
  ck_assert_int_eq (kist_idmap_parse ("         0       1000          1\n"
                                      "         1     100000      65536\n",
                                      &got, &n),
                    0);
  ck_assert_uint_eq (n, 2);
  ck_assert (kist_idmap_same (m, 2, got, n));
  free (got);

  /* The kernel sorts maps of more than 5 entries: order does not matter. */
  struct kist_idmap rev[] = { { 1, 100000, 65536 }, { 0, 1000, 1 } };
  ck_assert (kist_idmap_same (m, 2, rev, 2));
  struct kist_idmap other[] = { { 0, 1000, 1 }, { 1, 100000, 65535 } };
  ck_assert (!kist_idmap_same (m, 2, other, 2));
  struct kist_idmap dup[] = { { 0, 1000, 1 }, { 0, 1000, 1 } };
  ck_assert (!kist_idmap_same (m, 2, dup, 2));
  ck_assert (!kist_idmap_same (m, 2, m, 1));

  ck_assert_int_eq (kist_idmap_parse ("", &got, &n), 0);
  ck_assert_uint_eq (n, 0);
  free (got);
  ck_assert_int_eq (kist_idmap_parse ("0 1000\n", &got, &n), -EINVAL);
  ck_assert_int_eq (kist_idmap_parse ("0 1000 1 7\n", &got, &n), -EINVAL);
  ck_assert_int_eq (kist_idmap_parse ("0 1000 x\n", &got, &n), -EINVAL);
  ck_assert_int_eq (kist_idmap_parse ("0 99999999999 1\n", &got, &n), -EINVAL);
}
END_TEST

/* Layers that record "not requested" or fail closed without a syscall. */
/* A report holds each entry once (report.c checks): each case that records
 * one again starts from a new report. */
static void
renew (struct kist_report **r)
{
  kist_report_free (*r);
  *r = kist_report_new ("t", "create", NULL);
}

START_TEST (test_layers_without_syscalls)
{
  struct kist_linux lx;
  struct kist_process proc;
  struct kist_spec spec;
  struct kist_ctx ctx;
  memset (&lx, 0, sizeof lx);
  memset (&proc, 0, sizeof proc);
  memset (&spec, 0, sizeof spec);
  memset (&ctx, 0, sizeof ctx);
  spec.process = &proc;
  ctx.spec = &spec;
  ctx.rootfs_fd = -1;
  struct kist_error *e = NULL;
  struct kist_report *r = kist_report_new ("t", "create", NULL);

  /* No linux section: network shared, no idmap, no sysctl, no rlimits. */
  ck_assert_int_eq (kist_net_apply (&ctx, r, &e), 0);
  ck_assert_int_eq (kist_idmap_apply (&ctx, r, &e), 0);
  ck_assert_int_eq (kist_sysctl_apply (&ctx, r, &e), 0);
  ck_assert_int_eq (kist_rlimits_apply (&ctx, r, &e), 0);
  ck_assert_int_eq (kist_uts_apply (&ctx, r, &e), 0);
  ck_assert_int_eq (kist_nnp_apply (&ctx, r, &e), 0);
  ck_assert_ptr_null (e);
  const struct kist_layer *l = kist_report_find (r, "network.loopback");
  ck_assert_ptr_nonnull (l);
  ck_assert_ptr_null (l->requested);
  ck_assert_str_eq (l->detail, "shared with the host");
  ck_assert_ptr_nonnull (kist_report_find (r, "idmap.uid"));
  ck_assert_ptr_nonnull (kist_report_find (r, "idmap.gid"));
  ck_assert_ptr_null (kist_report_find (r, "sysctl")->requested);
  ck_assert_ptr_null (kist_report_find (r, "rlimit")->requested);
  ck_assert_ptr_null (kist_report_find (r, "hostname")->requested);
  ck_assert_ptr_null (kist_report_find (r, "no_new_privileges")->requested);

  /* Hostname without a UTS namespace: refused, never set. */
  spec.hostname = "nope";
  renew (&r);
  ck_assert_int_lt (kist_uts_apply (&ctx, r, &e), 0);
  ck_assert_ptr_nonnull (e);
  ck_assert_ptr_nonnull (strstr (e->msg, "UTS namespace"));
  kist_error_freep (&e);
  spec.hostname = NULL;

  /* A non-namespaced sysctl: refused before anything is opened. */
  spec.linux_ = &lx;
  struct kist_sysctl sc[] = { { "kernel.pid_max", "4096" } };
  lx.sysctl = sc;
  lx.n_sysctl = 1;
  renew (&r);
  ck_assert_int_lt (kist_sysctl_apply (&ctx, r, &e), 0);
  ck_assert_ptr_nonnull (strstr (e->msg, "kernel.pid_max"));
  kist_error_freep (&e);

  /* Joined netns: left alone. */
  lx.ns[KIST_NS_NET].present = true;
  lx.ns[KIST_NS_NET].path = "/run/netns/x";
  renew (&r);
  size_t before = r->n_layers;
  ck_assert_int_eq (kist_net_apply (&ctx, r, &e), 0);
  ck_assert_str_eq (r->layers[before].detail, "joined by path: left as it is");

  /* New user namespace without mappings: an error. */
  lx.ns[KIST_NS_USER].present = true;
  ctx.pid = getpid ();
  renew (&r);
  ck_assert_int_lt (kist_idmap_apply (&ctx, r, &e), 0);
  ck_assert_ptr_nonnull (strstr (e->msg, "linux.uidMappings"));
  kist_error_freep (&e);

  /* Unknown rlimit: fails that layer, and degrades when allowed. */
  struct kist_rlimit rl[] = { { "RLIMIT_FOO", 1, 1 } };
  proc.rlimits = rl;
  proc.n_rlimits = 1;
  renew (&r);
  ck_assert_int_lt (kist_rlimits_apply (&ctx, r, &e), 0);
  ck_assert_ptr_nonnull (strstr (e->msg, "unknown rlimit type"));
  kist_error_freep (&e);
  renew (&r);
  r->allow_degraded = xstrdup ("rlimit.*");
  ck_assert_int_eq (kist_rlimits_apply (&ctx, r, &e), 0);
  ck_assert_ptr_null (e);

  /* An unknown capability is a grant that cannot be given: named, not a failure. */
  char *bnd[] = { "CAP_KILL", "CAP_FOO", NULL };
  char *eff[] = { "CAP_FOO", NULL };
  struct kist_capabilities caps = { .bounding = bnd, .effective = eff };
  char *t = kist_caps_unknown_text (&caps);
  ck_assert_str_eq (t, "CAP_FOO in process.capabilities.bounding (unknown to kist), CAP_FOO in "
                       "process.capabilities.effective (unknown to kist)");
  free (t);
  char *known[] = { "CAP_KILL", NULL };
  struct kist_capabilities kcaps = { .bounding = known };
  ck_assert_ptr_null (kist_caps_unknown_text (&kcaps));
  ck_assert_ptr_null (kist_caps_unknown_text (NULL));

  kist_report_free (r);
}
END_TEST

static Suite *
proc_suite (void)
{
  Suite *s = suite_create ("proc");
  TCase *tc = tcase_create ("core");
  tcase_add_test (tc, test_cap_names);
  tcase_add_test (tc, test_cap_mask);
  tcase_add_test (tc, test_rlimit_names);
  tcase_add_test (tc, test_sysctl_keys);
  tcase_add_test (tc, test_sysctl_values);
  tcase_add_test (tc, test_idmap_text);
  tcase_add_test (tc, test_layers_without_syscalls);
  suite_add_tcase (s, tc);
  return s;
}

int
main (void)
{
  return kist_unit_run (proc_suite ());
}
