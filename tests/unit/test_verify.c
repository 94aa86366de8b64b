/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for runtime/verify.c's namespace verifier: an entry the child
 * recorded is applied only when /proc/PID/ns/NAME agrees from outside.  The
 * "waiting process" is this test itself. */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <net/if.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "layer.h"
#include "mountinfo.h"
#include "ns.h"
#include "report.h"
#include "resolve.h"
#include "spec.h"
#include "verify.h"
#include "unit.h"

struct fixture
{
  struct kist_spec spec;
  struct kist_linux lx;
  struct kist_ctx ctx;
  struct kist_report *r;
};

static ino_t
self_ino (const char *name)
{
  char p[64];
  struct stat st;
  snprintf (p, sizeof p, "/proc/self/ns/%s", name);
  ck_assert_int_eq (stat (p, &st), 0);
  return st.st_ino;
}

/* A report with one namespace.TYPE entry the child says it read back as
 * inode ino, pending the parent's word, for this process. */
static void
fixture_init (struct fixture *f, enum kist_ns_type t, const char *path, unsigned long ino)
{
  memset (f, 0, sizeof *f);
  f->spec.linux_ = &f->lx;
  f->lx.ns[t].present = true;
  f->lx.ns[t].path = (char *) path;
  f->ctx.spec = &f->spec;
  f->ctx.pid = getpid ();
  f->r = kist_report_new ("c1", "create", NULL);
  char layer[64];
  snprintf (layer, sizeof layer, "namespace.%s", kist_ns_name (t));
  kist_report_applied (f->r, layer, path, "read back inside");
  kist_report_expect (f->r, layer, "ino=%lu", ino);
  kist_layer_make_pending (&f->r->layers[0]);
  ck_assert (!f->r->layers[0].applied);
}

/* The verifier's verdict: 0 applied, else the error message in *msg. */
static int
verdict (struct fixture *f, char **msg)
{
  struct kist_error *e = NULL;
  int ret = kist_ns_verify (&f->ctx, f->r, &e);
  *msg = e ? strdup (e->msg) : NULL;
  kist_error_free (e);
  ck_assert_int_eq (ret == 0, f->r->layers[0].applied);
  kist_report_free (f->r);
  return ret;
}

/* kist_ns_ino reads the number a stat of the link gives, for every type
 * this kernel has, and refuses a link whose text is not NAME:[INODE]. */
START_TEST (test_ns_ino)
{
  static const char *const names[] = { "user", "mnt", "pid", "net", "uts", "ipc", "cgroup", "time" };
  int dir = open ("/proc/self/ns", O_PATH | O_DIRECTORY | O_CLOEXEC);
  ck_assert_int_ge (dir, 0);
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    {
      struct stat st;
      if (fstatat (dir, names[i], &st, 0) < 0)
        continue; /* a type this kernel lacks */
      uint64_t ino = 0;
      ck_assert_int_eq (kist_ns_ino (dir, names[i], &ino), 0);
      ck_assert_uint_eq (ino, (uint64_t) st.st_ino);
      char path[64];
      snprintf (path, sizeof path, "/proc/%d/ns/%s", (int) getpid (), names[i]);
      ino = 0;
      ck_assert_int_eq (kist_ns_ino (AT_FDCWD, path, &ino), 0);
      ck_assert_uint_eq (ino, (uint64_t) st.st_ino);
    }
  close (dir);

  char tmp[] = "/tmp/kist-test-nsino-XXXXXX";
  ck_assert_ptr_nonnull (mkdtemp (tmp));
  int t = open (tmp, O_PATH | O_DIRECTORY | O_CLOEXEC);
  ck_assert_int_ge (t, 0);
  static const char *const bad[] = { "net", "net:[", "net:[]", "net:[12", "net:[12]x", "net:[x1]",
                                     "net:[0]", "net:[-1]", "net:[99999999999999999999]" };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    {
      ck_assert_int_eq (symlinkat (bad[i], t, "l"), 0);
      uint64_t ino = 7;
      ck_assert_msg (kist_ns_ino (t, "l", &ino) == -EPROTO, "`%s` accepted", bad[i]);
      ck_assert_int_eq (unlinkat (t, "l", 0), 0);
    }
  ck_assert_int_eq (symlinkat ("pid:[4026531836]", t, "l"), 0);
  uint64_t ino = 0;
  ck_assert_int_eq (kist_ns_ino (t, "l", &ino), 0);
  ck_assert_uint_eq (ino, 4026531836u);
  ck_assert_int_eq (unlinkat (t, "l", 0), 0);
  uint64_t none = 0;
  ck_assert_int_eq (kist_ns_ino (t, "missing", &none), -ENOENT);
  close (t);
  ck_assert_int_eq (rmdir (tmp), 0);
}
END_TEST

START_TEST (test_new_namespace_agrees)
{
  struct fixture f;
  fixture_init (&f, KIST_NS_NET, NULL, (unsigned long) self_ino ("net"));
  f.ctx.host_ns_ino[KIST_NS_NET] = 1; /* kist's own is another one */
  char *msg = NULL;
  ck_assert_int_eq (verdict (&f, &msg), 0);
  free (msg);
}
END_TEST

START_TEST (test_inode_differs_from_inside)
{
  struct fixture f;
  fixture_init (&f, KIST_NS_NET, NULL, (unsigned long) self_ino ("net") + 1);
  f.ctx.host_ns_ino[KIST_NS_NET] = 1;
  char *msg = NULL;
  ck_assert_int_lt (verdict (&f, &msg), 0);
  ck_assert_msg (msg && strstr (msg, "the container read inside"), "%s", msg);
  free (msg);
}
END_TEST

START_TEST (test_still_kists_own)
{
  struct fixture f;
  ino_t ino = self_ino ("uts");
  fixture_init (&f, KIST_NS_UTS, NULL, (unsigned long) ino);
  struct stat st;
  ck_assert_int_eq (stat ("/proc/self/ns/uts", &st), 0);
  f.ctx.host_ns_ino[KIST_NS_UTS] = st.st_ino;
  char *msg = NULL;
  ck_assert_int_lt (verdict (&f, &msg), 0);
  ck_assert_msg (msg && strstr (msg, "kist's own namespace"), "%s", msg);
  free (msg);
}
END_TEST

START_TEST (test_joined_path)
{
  struct fixture f;
  fixture_init (&f, KIST_NS_IPC, "/proc/self/ns/ipc", (unsigned long) self_ino ("ipc"));
  char *msg = NULL;
  ck_assert_int_eq (verdict (&f, &msg), 0);
  free (msg);
  /* A path that names another namespace (here: another type). */
  fixture_init (&f, KIST_NS_IPC, "/proc/self/ns/uts", (unsigned long) self_ino ("ipc"));
  ck_assert_int_lt (verdict (&f, &msg), 0);
  ck_assert_msg (msg && strstr (msg, "not the joined"), "%s", msg);
  free (msg);
}
END_TEST

START_TEST (test_new_pid_namespace_needs_pid_1)
{
  struct fixture f;
  fixture_init (&f, KIST_NS_PID, NULL, (unsigned long) self_ino ("pid"));
  f.ctx.host_ns_ino[KIST_NS_PID] = 1;
  char *msg = NULL;
  /* This test is not pid 1 of a new pid namespace. */
  ck_assert_int_lt (verdict (&f, &msg), 0);
  ck_assert_msg (msg && strstr (msg, "NSpid"), "%s", msg);
  free (msg);
}
END_TEST

START_TEST (test_no_inode_named)
{
  struct fixture f;
  fixture_init (&f, KIST_NS_MOUNT, NULL, 0);
  free (f.r->layers[0].expect);
  f.r->layers[0].expect = strdup ("");
  f.ctx.host_ns_ino[KIST_NS_MOUNT] = 1;
  char *msg = NULL;
  ck_assert_int_lt (verdict (&f, &msg), 0);
  ck_assert_msg (msg && strstr (msg, "no inode"), "%s", msg);
  free (msg);
}
END_TEST

/* rootfs.pivot_root and rootfs.readonly against /proc/PID/root: this
 * process's root is the host's /, writable. */
static struct kist_report *
root_report (const char *layer, const char *expect)
{
  struct kist_report *r = kist_report_new ("c1", "create", NULL);
  kist_report_applied (r, layer, "", "read back inside");
  kist_report_expect (r, layer, "%s", expect);
  kist_layer_make_pending (&r->layers[0]);
  return r;
}

static int
root_verdict (const char *rootfs, struct kist_report *r, char **msg)
{
  struct kist_ctx ctx = { .pid = getpid (), .rootfs = (char *) rootfs };
  struct kist_error *e = NULL;
  int ret = kist_rootfs_verify (&ctx, r, &e);
  *msg = e ? strdup (e->msg) : NULL;
  kist_error_free (e);
  ck_assert_int_eq (ret == 0, r->layers[0].applied);
  kist_report_free (r);
  return ret;
}

START_TEST (test_root)
{
  uint64_t mnt = 0;
  ck_assert_int_eq (kist_mnt_id_at (AT_FDCWD, "/", 0, &mnt, NULL), 0);
  char want[64];
  snprintf (want, sizeof want, "mnt=%llu", (unsigned long long) mnt);
  char *msg = NULL;
  ck_assert_int_eq (root_verdict ("/", root_report ("rootfs.pivot_root", want), &msg), 0);
  free (msg);
  /* Another directory is not this process's root. */
  ck_assert_int_lt (root_verdict ("/proc", root_report ("rootfs.pivot_root", want), &msg), 0);
  ck_assert_msg (msg && strstr (msg, "is not the rootfs"), "%s", msg);
  free (msg);
  /* Another mount than the one the init found at /. */
  snprintf (want, sizeof want, "mnt=%llu", (unsigned long long) mnt + 100000);
  ck_assert_int_lt (root_verdict ("/", root_report ("rootfs.pivot_root", want), &msg), 0);
  ck_assert_msg (msg && strstr (msg, "the init found at /"), "%s", msg);
  free (msg);
  /* The host's / is not read-only. */
  ck_assert_int_lt (root_verdict ("/", root_report ("rootfs.readonly", "rdonly=1"), &msg), 0);
  ck_assert_msg (msg && strstr (msg, "not read-only"), "%s", msg);
  free (msg);
}
END_TEST

/* mounts against this process's /proc/PID/mountinfo: its / as fstatvfs
 * shows it agrees; the same mount with another flag does not. */
START_TEST (test_mounts)
{
  uint64_t mnt = 0;
  ck_assert_int_eq (kist_mnt_id_at (AT_FDCWD, "/", 0, &mnt, NULL), 0);
  struct statvfs sv;
  ck_assert_int_eq (statvfs ("/", &sv), 0);
  char *list = NULL;
  kist_mountinfo_expect_add (&list, mnt, sv.f_flag, false, NULL);
  char want[128];
  snprintf (want, sizeof want, "mnts=%s", list);
  char *msg = NULL;
  struct kist_ctx ctx = { .pid = getpid () };
  struct kist_report *r = root_report ("mounts", want);
  struct kist_error *e = NULL;
  ck_assert_int_eq (kist_mounts_verify (&ctx, r, &e), 0);
  ck_assert (r->layers[0].applied);
  ck_assert_ptr_nonnull (strstr (r->layers[0].detail, "verified from outside"));
  kist_report_free (r);
  free (list);
  list = NULL;
  kist_mountinfo_expect_add (&list, mnt, sv.f_flag ^ ST_NOEXEC, false, NULL);
  snprintf (want, sizeof want, "mnts=%s", list);
  r = root_report ("readonly_paths", want);
  ck_assert_int_lt (kist_mounts_verify (&ctx, r, &e), 0);
  ck_assert (!r->layers[0].applied);
  ck_assert_msg (e && strstr (e->msg, "noexec"), "%s", e ? e->msg : "");
  kist_error_free (e);
  kist_report_free (r);
  free (list);
  free (msg);
}
END_TEST

/* cwd: /proc/PID/cwd against process.cwd resolved in /proc/PID/root. */
START_TEST (test_cwd)
{
  struct kist_ctx ctx = { .pid = getpid () };
  struct kist_error *e = NULL;
  ck_assert_int_eq (chdir ("/proc"), 0);
  struct kist_report *r = kist_report_new ("c1", "create", NULL);
  kist_report_applied (r, "cwd", "/proc", "inside");
  kist_report_expect (r, "cwd", "in_root=1");
  kist_layer_make_pending (&r->layers[0]);
  ck_assert_int_eq (kist_cwd_verify (&ctx, r, &e), 0);
  ck_assert (r->layers[0].applied);
  kist_report_free (r);
  r = kist_report_new ("c1", "create", NULL);
  kist_report_applied (r, "cwd", "/sys", "inside");
  kist_report_expect (r, "cwd", "in_root=1");
  kist_layer_make_pending (&r->layers[0]);
  ck_assert_int_lt (kist_cwd_verify (&ctx, r, &e), 0);
  ck_assert_msg (e && strstr (e->msg, "is not process.cwd"), "%s", e ? e->msg : "");
  kist_error_free (e);
  kist_report_free (r);
}
END_TEST

static int
net_verdict (char **msg)
{
  struct kist_ctx ctx = { .pid = getpid () };
  struct kist_report *r = root_report ("network.loopback", "lo=up");
  struct kist_error *e = NULL;
  int ret = kist_net_verify (&ctx, r, &e);
  ck_assert_int_eq (ret == 0, r->layers[0].applied);
  *msg = e ? strdup (e->msg) : NULL;
  kist_error_free (e);
  kist_report_free (r);
  return ret;
}

/* network.loopback: a fresh network namespace (made by this test process)
 * has lo down: the check must say so. */
START_TEST (test_net)
{
  char *msg = NULL;
  if (unshare (CLONE_NEWNET) < 0)
    {
      fprintf (stderr, "test_net: skipped: unshare(CLONE_NEWNET): %m (not root)\n");
      return;
    }
  ck_assert_int_lt (net_verdict (&msg), 0);
  ck_assert_msg (msg && strstr (msg, "lo is not up"), "%s", msg);
  free (msg);
  /* lo up (in this test's own namespace): the check agrees. */
  int fd = socket (AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  ck_assert_int_ge (fd, 0);
  struct ifreq ifr = { 0 };
  strcpy (ifr.ifr_name, "lo");
  ck_assert_int_eq (ioctl (fd, SIOCGIFFLAGS, &ifr), 0);
  ifr.ifr_flags |= IFF_UP;
  ck_assert_int_eq (ioctl (fd, SIOCSIFFLAGS, &ifr), 0);
  close (fd);
  ck_assert_int_eq (net_verdict (&msg), 0);
  free (msg);
}
END_TEST

/* dev: the nodes /dev was to get, resolved in a root from outside; this
 * test uses the host's root, whose /dev has the default nodes. */
START_TEST (test_dev_nodes)
{
  struct kist_linux lx = { 0 };
  struct kist_spec spec = { .linux_ = &lx };
  int rootfd = open ("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  ck_assert_int_ge (rootfd, 0);
  size_t n = 0;
  char *why = kist_dev_disagrees (&spec, rootfd, &n);
  ck_assert_msg (why == NULL, "%s", why);
  ck_assert_uint_eq (n, 6);
  /* linux.devices says /dev/null is 1:5: it is not. */
  struct kist_device d = { .path = (char *) "/dev/null", .type = 'c', .major = 1, .minor = 5 };
  lx.devices = &d;
  lx.n_devices = 1;
  why = kist_dev_disagrees (&spec, rootfd, &n);
  ck_assert_msg (why && strstr (why, "/dev/null is not a character device 1:5"), "%s", why);
  free (why);
  /* A node that is missing. */
  d.path = (char *) "/dev/kist-no-such-node";
  why = kist_dev_disagrees (&spec, rootfd, &n);
  ck_assert_msg (why && strstr (why, "/dev/kist-no-such-node"), "%s", why);
  free (why);
  /* A symlink in /dev (the host's /dev/stdin) is not followed to a node. */
  d = (struct kist_device){ .path = (char *) "/dev/stdin", .type = 'c', .major = 1, .minor = 3 };
  why = kist_dev_disagrees (&spec, rootfd, &n);
  ck_assert_msg (why && strstr (why, "/dev/stdin is not a character device 1:3"), "%s", why);
  free (why);
  /* A node below a subdirectory of /dev is resolved on its own path. */
  d.path = (char *) "/dev/pts/kist-no-such-node";
  why = kist_dev_disagrees (&spec, rootfd, &n);
  ck_assert_msg (why && strstr (why, "/dev/pts/kist-no-such-node"), "%s", why);
  free (why);
  close (rootfd);
}
END_TEST

/* io_priority, scheduler, personality: applied by this process to itself
 * (as the layer does in the container), then verified from outside; a
 * changed expectation must fail. */
typedef int (*layer_fn) (struct kist_ctx *, struct kist_report *, struct kist_error **);

static void
apply_then_verify (layer_fn apply, layer_fn verify, const char *layer, const char *key)
{
  struct kist_process proc = { 0 };
  struct kist_linux lx = { 0 };
  struct kist_spec spec = { .process = &proc, .linux_ = &lx };
  proc.has_io_priority = true;
  proc.io_priority = (struct kist_io_priority){ .klass = 2, .priority = 4 };
  proc.has_scheduler = true; /* SCHED_OTHER, nice 0 */
  lx.has_personality = true; /* LINUX */
  struct kist_ctx ctx = { .spec = &spec, .pid = getpid () };
  struct kist_report *r = kist_report_new ("c1", "create", NULL);
  struct kist_error *e = NULL;
  ck_assert_msg (apply (&ctx, r, &e) == 0, "%s: %s", layer, e ? e->msg : "");
  ck_assert_uint_eq (r->n_layers, 1);
  ck_assert_ptr_nonnull (r->layers[0].expect);
  char *expect = strdup (r->layers[0].expect);
  kist_layer_make_pending (&r->layers[0]);
  ck_assert_int_eq (verify (&ctx, r, &e), 0);
  ck_assert_msg (r->layers[0].applied, "%s", layer);
  ck_assert_ptr_nonnull (strstr (r->layers[0].detail, "verified from outside"));
  kist_report_free (r);
  /* The same entry with another value read inside. */
  r = kist_report_new ("c1", "create", NULL);
  kist_report_applied (r, layer, "x", "inside");
  kist_report_expect (r, layer, "%s=%s9", key, expect + strlen (key) + 1);
  kist_layer_make_pending (&r->layers[0]);
  ck_assert_int_lt (verify (&ctx, r, &e), 0);
  ck_assert_msg (e && strstr (e->msg, "from outside"), "%s: %s", layer, e ? e->msg : "");
  kist_error_free (e);
  kist_report_free (r);
  free (expect);
}

START_TEST (test_process_attributes)
{
  apply_then_verify (kist_io_priority_apply, kist_io_priority_verify, "io_priority", "ioprio");
  apply_then_verify (kist_scheduler_apply, kist_scheduler_verify, "scheduler", "attr");
  apply_then_verify (kist_personality_apply, kist_personality_verify, "personality", "persona");
}
END_TEST

int
main (void)
{
  Suite *s = suite_create ("verify");
  TCase *tc = tcase_create ("namespaces");
  tcase_add_test (tc, test_ns_ino);
  tcase_add_test (tc, test_new_namespace_agrees);
  tcase_add_test (tc, test_inode_differs_from_inside);
  tcase_add_test (tc, test_still_kists_own);
  tcase_add_test (tc, test_joined_path);
  tcase_add_test (tc, test_new_pid_namespace_needs_pid_1);
  tcase_add_test (tc, test_no_inode_named);
  tcase_add_test (tc, test_root);
  tcase_add_test (tc, test_mounts);
  tcase_add_test (tc, test_cwd);
  tcase_add_test (tc, test_net);
  tcase_add_test (tc, test_dev_nodes);
  tcase_add_test (tc, test_process_attributes);
  suite_add_tcase (s, tc);
  return kist_unit_run (s);
}
