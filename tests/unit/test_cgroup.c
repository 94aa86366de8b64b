/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for runtime/cgroup.c and runtime/cgroup_devices.c.
 *
 * The pure parts (paths, conversions, read-back comparison, the plan, the
 * device program) run everywhere.  The scope tests need root and a cgroup2
 * mount; they work only below MOUNT/kist-test-<pid> and remove it. */
#define _GNU_SOURCE
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/bpf.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yajl/yajl_tree.h>

#include "cgroup.h"
#include "report.h"
#include "util.h"
#include "unit.h"

static yajl_val
parse (const char *json)
{
  char errbuf[256];
  yajl_val v = yajl_tree_parse (json, errbuf, sizeof errbuf);
  ck_assert_msg (v != NULL, "bad test JSON: %s", errbuf);
  return v;
}

/* linux.resources JSON -> the struct (it must parse). */
static struct kist_resources *
res_of (const char *json)
{
  struct kist_error *err = NULL;
  struct kist_resources *r = NULL;
  ck_assert_msg (kist_resources_parse_json (json, strlen (json), "", "linux.resources", &r, &err)
                     == 0,
                 "%s", err ? err->msg : "");
  return r;
}

/* Parse, then plan: the error of either. */
static int
plan_json (const char *json, struct kist_cgroup_plan **p, struct kist_error **err)
{
  _cleanup_resources_ struct kist_resources *r = NULL;
  *p = NULL;
  if (kist_resources_parse_json (json, strlen (json), "", "linux.resources", &r, err) < 0)
    return -1;
  return kist_cgroup_plan_build (r, p, err);
}

/* ---------------------------------------------------------------- paths */

START_TEST (test_resolve_path)
{
  struct kist_error *err = NULL;
  char *rel = NULL;

  ck_assert_int_eq (kist_cgroup_resolve_path (NULL, "", "c1", &rel, &err), 0);
  ck_assert_str_eq (rel, "kist/c1");
  free (rel);
  ck_assert_int_eq (kist_cgroup_resolve_path (NULL, "/user.slice/x", "c1", &rel, &err), 0);
  ck_assert_str_eq (rel, "user.slice/x/kist/c1");
  free (rel);
  ck_assert_int_eq (kist_cgroup_resolve_path ("/a/b", "own", "c1", &rel, &err), 0);
  ck_assert_str_eq (rel, "a/b");
  free (rel);
  ck_assert_int_eq (kist_cgroup_resolve_path ("a/b", "own", "c1", &rel, &err), 0);
  ck_assert_str_eq (rel, "own/a/b");
  free (rel);
  ck_assert_int_eq (kist_cgroup_resolve_path ("a", "", "c1", &rel, &err), 0);
  ck_assert_str_eq (rel, "a");
  free (rel);
  ck_assert_ptr_null (err);

  const char *bad[] = { "/a/../b", "/a//b", "..", "/a/./b", "/", "a/", "/a/b/.." };
  for (size_t i = 0; i < KIST_ARRAY_SIZE (bad); i++)
    {
      rel = NULL;
      ck_assert_msg (kist_cgroup_resolve_path (bad[i], "", "c1", &rel, &err) < 0, "%s accepted",
                     bad[i]);
      ck_assert_ptr_null (rel);
      ck_assert_ptr_nonnull (err);
      kist_error_free (err);
      err = NULL;
    }

  ck_assert_int_eq (kist_cgroup_resolve_path ("system.slice:kist:c1", "", "c1", &rel, &err),
                    -ENOTSUP);
  ck_assert_ptr_nonnull (strstr (err->msg, "the systemd cgroup driver is not implemented; use a path"));
  kist_error_free (err);
}
END_TEST

START_TEST (test_own_path)
{
  struct kist_error *err = NULL;
  char *own = NULL;
  if (access ("/proc/self/cgroup", R_OK) != 0)
    return;
  int rc = kist_cgroup_own_path (&own, &err);
  if (rc == 0)
    {
      ck_assert_ptr_nonnull (own);
      ck_assert (own[0] != '/');
      free (own);
    }
  else
    kist_error_free (err);
}
END_TEST

/* The cgroup2 mount kist finds (listmount + statmount where the kernel has
 * them, else mountinfo) is the first one of /proc/self/mountinfo that its
 * mount point shows now.  In a child with a mount namespace of its own: as
 * the host is, with a second cgroup2 mount, and with the first one hidden
 * under a tmpfs. */
static char *
mountinfo_first_visible_cgroup2 (void)
{
  FILE *f = fopen ("/proc/self/mountinfo", "re");
  char line[4096], *found = NULL;
  while (f && found == NULL && fgets (line, sizeof line, f))
    {
      unsigned id;
      char point[PATH_MAX];
      const char *dash = strstr (line, " - ");
      if (dash == NULL || strncmp (dash, " - cgroup2 ", 11) != 0
          || sscanf (line, "%u %*u %*s %*s %4095s", &id, point) != 2)
        continue;
      struct statx stx;
      if (statx (AT_FDCWD, point, AT_NO_AUTOMOUNT, STATX_MNT_ID, &stx) == 0
          && (stx.stx_mask & STATX_MNT_ID) && stx.stx_mnt_id == id)
        found = strdup (point);
    }
  if (f)
    fclose (f);
  return found;
}

/* kist_cgroup_mount in a new process (it keeps what it found per process):
 * is it want? */
static bool
lookup_is (const char *want)
{
  pid_t pid = fork ();
  if (pid == 0)
    {
      struct kist_error *err = NULL;
      char *m = NULL;
      _exit (want && kist_cgroup_mount (&m, &err) == 0 && strcmp (m, want) == 0 ? 0 : 1);
    }
  int st = 0;
  return pid > 0 && waitpid (pid, &st, 0) == pid && WIFEXITED (st) && WEXITSTATUS (st) == 0;
}

static int
mount_lookup_child (const char *tmp)
{
  if (unshare (CLONE_NEWNS) < 0 || mount (NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
    return 77;
  /* 1: as inherited. */
  char *want = mountinfo_first_visible_cgroup2 ();
  if (!lookup_is (want))
    return 1;
  /* 2: a second cgroup2 mount, later: still the first. */
  char second[PATH_MAX];
  snprintf (second, sizeof second, "%s/cg2", tmp);
  if (mkdir (second, 0700) < 0 || mount ("none", second, "cgroup2", 0, NULL) < 0)
    return 2;
  if (!lookup_is (want))
    return 3;
  /* 3: the first one hidden under a tmpfs: the second. */
  if (mount ("none", want, "tmpfs", 0, "size=4k") < 0)
    return 4;
  if (!lookup_is (second))
    return 5;
  free (want);
  return 0;
}

START_TEST (test_mount_lookup)
{
  if (geteuid () != 0 || access ("/proc/self/mountinfo", R_OK) != 0)
    {
      printf ("test_cgroup: mount lookup skipped: not root\n");
      return;
    }
  char tmp[] = "/tmp/kist-test-cgmount-XXXXXX";
  ck_assert_ptr_nonnull (mkdtemp (tmp));
  pid_t pid = fork ();
  ck_assert_int_ge (pid, 0);
  if (pid == 0)
    _exit (mount_lookup_child (tmp));
  int st = 0;
  ck_assert_int_eq (waitpid (pid, &st, 0), pid);
  char sub[PATH_MAX];
  snprintf (sub, sizeof sub, "%s/cg2", tmp);
  rmdir (sub);
  rmdir (tmp);
  ck_assert (WIFEXITED (st));
  if (WEXITSTATUS (st) == 77)
    {
      printf ("test_cgroup: mount lookup skipped: no mount namespace here\n");
      return;
    }
  ck_assert_msg (WEXITSTATUS (st) == 0, "mount lookup step %d failed", WEXITSTATUS (st));
}
END_TEST

/* ---------------------------------------------------------------- values */

START_TEST (test_conversions)
{
  ck_assert_uint_eq (kist_cgroup_shares_to_weight (0), 0);
  ck_assert_uint_eq (kist_cgroup_shares_to_weight (2), 1);
  ck_assert_uint_eq (kist_cgroup_shares_to_weight (1024), 39);
  ck_assert_uint_eq (kist_cgroup_shares_to_weight (262144), 10000);
  ck_assert_uint_eq (kist_cgroup_blkio_to_io_weight (0), 0);
  ck_assert_uint_eq (kist_cgroup_blkio_to_io_weight (10), 1);
  ck_assert_uint_eq (kist_cgroup_blkio_to_io_weight (500), 4950);
  ck_assert_uint_eq (kist_cgroup_blkio_to_io_weight (1000), 10000);
}
END_TEST

START_TEST (test_swap)
{
  struct kist_error *err = NULL;
  int64_t v;
  bool set;
  ck_assert_int_eq (kist_cgroup_swap_max (100, 200, &v, &set, &err), 0);
  ck_assert (set);
  ck_assert_int_eq (v, 100);
  ck_assert_int_eq (kist_cgroup_swap_max (100, 100, &v, &set, &err), 0);
  ck_assert (set);
  ck_assert_int_eq (v, 0);
  ck_assert_int_eq (kist_cgroup_swap_max (100, -1, &v, &set, &err), 0);
  ck_assert (set);
  ck_assert_int_eq (v, -1);
  ck_assert_int_eq (kist_cgroup_swap_max (100, 0, &v, &set, &err), 0);
  ck_assert (!set);
  ck_assert_int_eq (kist_cgroup_swap_max (-1, 0, &v, &set, &err), 0);
  ck_assert (set);
  ck_assert_int_eq (v, -1);
  ck_assert_ptr_null (err);

  ck_assert_int_lt (kist_cgroup_swap_max (100, 50, &v, &set, &err), 0);
  ck_assert_ptr_nonnull (strstr (err->msg, "must be >="));
  kist_error_free (err);
  err = NULL;
  ck_assert_int_lt (kist_cgroup_swap_max (0, 200, &v, &set, &err), 0);
  ck_assert_ptr_nonnull (strstr (err->msg, "memory.limit"));
  kist_error_free (err);
}
END_TEST

START_TEST (test_value_matches)
{
  bool rounded;
  ck_assert (kist_cgroup_value_matches ("max", "max\n", 0, &rounded));
  ck_assert (!rounded);
  ck_assert (kist_cgroup_value_matches ("10", " 10 \n", 0, NULL));
  ck_assert (kist_cgroup_value_matches ("50000 100000", "50000  100000\n", 0, NULL));
  ck_assert (!kist_cgroup_value_matches ("max", "100\n", 0, NULL));
  ck_assert (!kist_cgroup_value_matches ("100", "max\n", 4096, NULL));
  ck_assert (kist_cgroup_value_matches ("33554433", "33554432\n", 4096, &rounded));
  ck_assert (rounded);
  ck_assert (!kist_cgroup_value_matches ("33554433", "33554432\n", 0, NULL));
  ck_assert (!kist_cgroup_value_matches ("33554432", "33550336\n", 4096, NULL));
  ck_assert (kist_cgroup_value_matches ("1G", "1073741824\n", 0, &rounded));
  ck_assert (!rounded);
  ck_assert (kist_cgroup_value_matches ("3M", "3145728", 4096, NULL));
  ck_assert (kist_cgroup_cpulist_equal ("0-3", "0,1,2,3\n"));
  ck_assert (kist_cgroup_cpulist_equal ("", "\n"));
  ck_assert (kist_cgroup_cpulist_equal ("0,2-3", "0,2,3"));
  ck_assert (!kist_cgroup_cpulist_equal ("0-1", "0-2"));
  ck_assert (!kist_cgroup_cpulist_equal ("x", "x"));
}
END_TEST

/* ---------------------------------------------------------------- plan */

static const struct kist_cgroup_write *
find (const struct kist_cgroup_plan *p, const char *file)
{
  for (size_t i = 0; i < p->n; i++)
    if (strcmp (p->w[i].file, file) == 0)
      return &p->w[i];
  return NULL;
}

START_TEST (test_plan)
{
  struct kist_error *err = NULL;
  struct kist_cgroup_plan *p = NULL;
  const char *v = (
      "{\"memory\":{\"limit\":33554432,\"reservation\":0,\"swap\":67108864,\"kernel\":0,"
      "\"useHierarchy\":true,\"checkBeforeUpdate\":true},"
      "\"cpu\":{\"shares\":1024,\"quota\":50000,\"period\":100000,\"cpus\":\"0-1\",\"mems\":\"\","
      "\"burst\":1000,\"idle\":1},"
      "\"pids\":{\"limit\":0},"
      "\"blockIO\":{\"weight\":500,\"weightDevice\":[{\"major\":8,\"minor\":0,\"weight\":1000}],"
      "\"throttleReadBpsDevice\":[{\"major\":8,\"minor\":0,\"rate\":1048576}],"
      "\"throttleWriteIOPSDevice\":[{\"major\":8,\"minor\":16,\"rate\":0}]},"
      "\"hugepageLimits\":[{\"pageSize\":\"2MB\",\"limit\":4194304}],"
      "\"unified\":{\"memory.high\":\"1G\",\"pids.max\":\"20\"},"
      "\"devices\":[{\"allow\":false,\"access\":\"rwm\"},{\"allow\":true,\"type\":\"c\","
      "\"major\":1,\"minor\":3,\"access\":\"rw\"}]}");
  ck_assert_int_eq (plan_json (v, &p, &err), 0);
  ck_assert_ptr_null (err);

  const struct kist_cgroup_write *w;
  ck_assert_ptr_nonnull (w = find (p, "memory.max"));
  ck_assert_str_eq (w->lines[0], "33554432");
  ck_assert_str_eq (w->controller, "memory");
  ck_assert_str_eq (w->config, "linux.resources.memory.limit");
  ck_assert_uint_gt (w->unit, 0);
  ck_assert_ptr_null (find (p, "memory.low")); /* reservation 0 = unset */
  ck_assert_ptr_null (find (p, "memory.kernel"));
  ck_assert_ptr_nonnull (w = find (p, "memory.swap.max"));
  ck_assert_str_eq (w->lines[0], "33554432");
  ck_assert_ptr_nonnull (w = find (p, "cpu.weight"));
  ck_assert_str_eq (w->lines[0], "39");
  ck_assert_ptr_nonnull (w = find (p, "cpu.max"));
  ck_assert_str_eq (w->lines[0], "50000 100000");
  ck_assert_ptr_nonnull (w = find (p, "cpu.max.burst"));
  ck_assert_str_eq (w->lines[0], "1000");
  ck_assert_ptr_nonnull (w = find (p, "cpu.idle"));
  ck_assert_ptr_nonnull (w = find (p, "cpuset.cpus"));
  ck_assert_str_eq (w->controller, "cpuset");
  ck_assert_ptr_null (find (p, "cpuset.mems"));
  ck_assert_ptr_nonnull (w = find (p, "io.weight"));
  ck_assert_str_eq (w->lines[0], "default 4950");
  ck_assert_str_eq (w->lines[1], "8:0 10000");
  ck_assert_str_eq (w->requested, "default 4950; 8:0 10000");
  ck_assert_ptr_nonnull (w = find (p, "io.max"));
  ck_assert_str_eq (w->lines[0], "8:0 rbps=1048576");
  ck_assert_str_eq (w->lines[1], "8:16 wiops=max");
  ck_assert_ptr_nonnull (w = find (p, "hugetlb.2MB.max"));
  ck_assert_str_eq (w->lines[0], "4194304");
  ck_assert_uint_eq (w->unit, 2u << 20);
  ck_assert_ptr_nonnull (w = find (p, "memory.high"));
  ck_assert_str_eq (w->lines[0], "1G");
  /* unified overrides pids.limit for the same file */
  ck_assert_ptr_nonnull (w = find (p, "pids.max"));
  ck_assert_str_eq (w->lines[0], "20");
  ck_assert_ptr_null (w->lines[1]);
  ck_assert_str_eq (w->config, "linux.resources.unified.pids.max");
  ck_assert (p->has_devices);
  ck_assert_uint_eq (p->n_dev, 2);
  ck_assert (!p->dev[0].allow);
  ck_assert_int_eq (p->dev[0].type, 'a');
  ck_assert_int_eq (p->dev[0].major, -1);
  ck_assert_int_eq (p->dev[1].type, 'c');
  ck_assert_uint_eq (p->dev[1].access, BPF_DEVCG_ACC_READ | BPF_DEVCG_ACC_WRITE);
  kist_cgroup_plan_free (p);

  /* pids.limit <= 0 is "max"; Docker's zeros are unset; quota -1 is max */
  v = ("{\"pids\":{\"limit\":-1},\"memory\":{\"limit\":0,\"swap\":0},"
             "\"cpu\":{\"shares\":0,\"quota\":-1,\"period\":0},\"blockIO\":{\"weight\":0}}");
  ck_assert_int_eq (plan_json (v, &p, &err), 0);
  ck_assert_uint_eq (p->n, 2);
  ck_assert_str_eq (find (p, "pids.max")->lines[0], "max");
  ck_assert_str_eq (find (p, "cpu.max")->lines[0], "max");
  ck_assert (!p->has_devices);
  kist_cgroup_plan_free (p);

  /* what v2 cannot do is planned as unsupported (reported, never ignored) */
  v = ("{\"memory\":{\"disableOOMKiller\":true,\"kernel\":1024}}");
  ck_assert_int_eq (plan_json (v, &p, &err), 0);
  ck_assert_int_eq (find (p, "memory.disableOOMKiller")->unsupported, ENOTSUP);
  ck_assert_int_eq (find (p, "memory.kernel")->unsupported, ENOTSUP);
  kist_cgroup_plan_free (p);

  /* errors name the config path */
  const struct
  {
    const char *json, *msg;
  } bad[] = {
    { "{\"memory\":{\"limit\":100,\"swap\":50}}", "linux.resources.memory.swap" },
    { "{\"memory\":{\"limit\":\"x\"}}", "linux.resources.memory.limit" },
    { "{\"unified\":{\"../x.y\":\"1\"}}", "not a cgroup file name" },
    { "{\"unified\":{\"a/b.c\":\"1\"}}", "not a cgroup file name" },
    { "{\"unified\":{\"nodot\":\"1\"}}", "not a cgroup file name" },
    { "{\"unified\":{\"cgroup.procs\":\"1\"}}", "managed by kist" },
    { "{\"hugepageLimits\":[{\"pageSize\":\"2XB\",\"limit\":1}]}", "pageSize" },
    { "{\"devices\":[{\"allow\":true,\"access\":\"rwx\"}]}", "access" },
    { "{\"devices\":[{\"type\":\"c\"}]}", "allow" },
    { "{\"blockIO\":{\"throttleReadBpsDevice\":[{\"major\":8}]}}", "throttleReadBpsDevice[0]" },
  };
  for (size_t i = 0; i < KIST_ARRAY_SIZE (bad); i++)
    {
      v = bad[i].json;
      p = NULL;
      ck_assert_msg (plan_json (v, &p, &err) < 0, "%s accepted", bad[i].json);
      ck_assert_ptr_null (p);
      ck_assert_msg (strstr (err->msg, bad[i].msg) != NULL, "%s: %s", bad[i].json, err->msg);
      kist_error_free (err);
      err = NULL;
        }
}
END_TEST

/* ---------------------------------------------------------------- devices */

/* Every jump lands inside the program and the program ends with exit;
 * r1 (the context) is never written and every load reads the context. */
static void
check_prog (const struct bpf_insn *insns, size_t n)
{
  ck_assert_uint_gt (n, 0);
  ck_assert_uint_eq (insns[n - 1].code, BPF_JMP | BPF_EXIT);
  for (size_t i = 0; i < n; i++)
    {
      uint8_t c = BPF_CLASS (insns[i].code);
      if (c == BPF_ALU || c == BPF_ALU64 || c == BPF_LDX)
        ck_assert_msg (insns[i].dst_reg != 1, "insn %zu writes r1", i);
      if (c == BPF_LDX)
        ck_assert_msg (insns[i].src_reg == 1, "insn %zu loads from r%d", i, insns[i].src_reg);
      uint8_t cls = BPF_CLASS (insns[i].code);
      if ((cls == BPF_JMP || cls == BPF_JMP32) && BPF_OP (insns[i].code) != BPF_EXIT)
        {
          long t = (long) i + 1 + insns[i].off;
          ck_assert_msg (t > (long) i && t < (long) n, "insn %zu jumps to %ld of %zu", i, t, n);
        }
    }
}

/* The device program run on requests, against the rules read directly:
 * tested from the last (runc's defaults after the configured ones) to the
 * first, the first that matches decides (an allow rule matches when it
 * grants every access asked for, a deny rule when it denies any), none:
 * deny.  A small interpreter of the instructions kist emits. */
static int
run_dev_program (const struct bpf_insn *p, size_t n, uint32_t type, uint32_t access,
                 uint32_t major, uint32_t minor)
{
  uint32_t ctx[3] = { access << 16 | type, major, minor };
  uint64_t r[11] = { 0 };
  for (size_t pc = 0; pc < n; pc++)
    {
      const struct bpf_insn *i = &p[pc];
      uint8_t cls = BPF_CLASS (i->code), op = BPF_OP (i->code);
      if (cls == BPF_LDX)
        {
          ck_assert_uint_eq (i->src_reg, 1);
          ck_assert (i->off >= 0 && i->off <= 8 && i->off % 4 == 0);
          r[i->dst_reg] = ctx[i->off / 4];
        }
      else if (cls == BPF_ALU || cls == BPF_ALU64)
        {
          ck_assert_uint_eq (BPF_SRC (i->code), BPF_K);
          uint64_t k = (uint64_t) (int64_t) i->imm;
          if (op == BPF_AND)
            r[i->dst_reg] &= k;
          else if (op == BPF_RSH)
            r[i->dst_reg] >>= k;
          else if (op == BPF_MOV)
            r[i->dst_reg] = k;
          else
            ck_abort_msg ("insn %zu: ALU op 0x%x", pc, op);
          if (cls == BPF_ALU)
            r[i->dst_reg] &= 0xffffffffu;
        }
      else if (cls == BPF_JMP || cls == BPF_JMP32)
        {
          if (op == BPF_EXIT)
            return (int) r[0];
          uint64_t v = cls == BPF_JMP32 ? (uint32_t) r[i->dst_reg] : r[i->dst_reg];
          uint64_t k = cls == BPF_JMP32 ? (uint32_t) i->imm : (uint64_t) (int64_t) i->imm;
          bool taken = op == BPF_JA ? true : op == BPF_JEQ ? v == k : op == BPF_JNE ? v != k : false;
          if (op != BPF_JA && op != BPF_JEQ && op != BPF_JNE)
            ck_abort_msg ("insn %zu: jump op 0x%x", pc, op);
          if (taken)
            pc += (size_t) (int64_t) i->off;
        }
      else
        ck_abort_msg ("insn %zu: class 0x%x", pc, cls);
    }
  ck_abort_msg ("the program ran off its end");
  return -1;
}

static const struct kist_cgroup_dev_rule runc_defaults[] = {
  { true, 'c', -1, -1, BPF_DEVCG_ACC_MKNOD }, { true, 'b', -1, -1, BPF_DEVCG_ACC_MKNOD },
  { true, 'c', 1, 3, 7 },   { true, 'c', 1, 8, 7 }, { true, 'c', 1, 7, 7 },
  { true, 'c', 5, 0, 7 },   { true, 'c', 1, 5, 7 }, { true, 'c', 1, 9, 7 },
  { true, 'c', 136, -1, 7 }, { true, 'c', 5, 2, 7 },
};

static int
rules_decide (const struct kist_cgroup_dev_rule *rules, size_t n, uint32_t type, uint32_t access,
              uint32_t major, uint32_t minor)
{
  size_t nd = KIST_ARRAY_SIZE (runc_defaults);
  for (size_t k = n + nd; k-- > 0;)
    {
      const struct kist_cgroup_dev_rule *rl = k >= n ? &runc_defaults[k - n] : &rules[k];
      uint32_t t = rl->type == 'c' ? BPF_DEVCG_DEV_CHAR : rl->type == 'b' ? BPF_DEVCG_DEV_BLOCK : 0;
      if ((t && t != type) || (rl->major >= 0 && (uint32_t) rl->major != major)
          || (rl->minor >= 0 && (uint32_t) rl->minor != minor))
        continue;
      bool match = rl->allow ? (access & ~rl->access & 7) == 0 : (access & rl->access) != 0;
      if (match)
        return rl->allow ? 1 : 0;
    }
  return 0;
}

START_TEST (test_dev_program_decides)
{
  static const uint32_t majors[] = { 0, 1, 4, 5, 8, 136, 254, 4294967295u };
  static const uint32_t minors[] = { 0, 1, 2, 3, 5, 7, 8, 9, 16, 4294967295u };
  const unsigned R = BPF_DEVCG_ACC_READ, W = BPF_DEVCG_ACC_WRITE, M = BPF_DEVCG_ACC_MKNOD;
  /* Fixed rule sets (podman's deny-all, docker's --device, overlapping
   * allows and denies), then random ones. */
  struct kist_cgroup_dev_rule sets[24][8];
  size_t lens[24];
  size_t ns = 0;
  lens[ns] = 0, ns++;
  sets[ns][0] = (struct kist_cgroup_dev_rule){ false, 'a', -1, -1, R | W | M }, lens[ns++] = 1;
  sets[ns][0] = (struct kist_cgroup_dev_rule){ false, 'a', -1, -1, R | W | M };
  sets[ns][1] = (struct kist_cgroup_dev_rule){ true, 'b', 8, 0, R | W };
  sets[ns][2] = (struct kist_cgroup_dev_rule){ true, 'c', 4, -1, R };
  sets[ns][3] = (struct kist_cgroup_dev_rule){ true, 'c', -1, 7, W };
  lens[ns++] = 4;
  sets[ns][0] = (struct kist_cgroup_dev_rule){ true, 'a', -1, -1, R | W | M };
  sets[ns][1] = (struct kist_cgroup_dev_rule){ false, 'b', 8, -1, W };
  sets[ns][2] = (struct kist_cgroup_dev_rule){ false, 'b', 8, 1, W };
  sets[ns][3] = (struct kist_cgroup_dev_rule){ false, 'c', 5, -1, R | M };
  lens[ns++] = 4;
  uint64_t x = 0x9e3779b97f4a7c15ull;
  while (ns < 24)
    {
      size_t len = 1 + ns % 8;
      for (size_t i = 0; i < len; i++)
        {
          x ^= x << 13, x ^= x >> 7, x ^= x << 17;
          static const char types[] = "acb";
          sets[ns][i] = (struct kist_cgroup_dev_rule){
            .allow = x & 1, .type = types[(x >> 1) % 3],
            .major = (x >> 3) % 3 == 0 ? -1 : (int64_t) majors[(x >> 5) % 6],
            .minor = (x >> 8) % 3 == 0 ? -1 : (int64_t) minors[(x >> 10) % 8],
            .access = 1 + (unsigned) ((x >> 13) % 7),
          };
        }
      lens[ns++] = len;
    }
  for (size_t s = 0; s < ns; s++)
    {
      struct bpf_insn *insns = NULL;
      size_t n = 0;
      struct kist_error *err = NULL;
      ck_assert_int_eq (kist_cgroup_dev_program (sets[s], lens[s], &insns, &n, &err), 0);
      check_prog (insns, n);
      for (uint32_t type = 1; type <= 2; type++)
        for (uint32_t access = 1; access <= 7; access++)
          for (size_t a = 0; a < KIST_ARRAY_SIZE (majors); a++)
            for (size_t b = 0; b < KIST_ARRAY_SIZE (minors); b++)
              {
                int want = rules_decide (sets[s], lens[s], type, access, majors[a], minors[b]);
                int got = run_dev_program (insns, n, type, access, majors[a], minors[b]);
                ck_assert_msg (got == want,
                               "rule set %zu: type %u access %u %u:%u: program says %d, the "
                               "rules %d",
                               s, type, access, majors[a], minors[b], got, want);
              }
      free (insns);
    }
}
END_TEST

START_TEST (test_dev_program)
{
  struct kist_error *err = NULL;
  struct bpf_insn *insns = NULL;
  size_t n = 0;

  /* runc's default rules are appended after the configured ones: being
   * last they are tested first, from the first instruction, in three
   * blocks: the eight rwm char devices, mknod of any block device, mknod
   * of any char device */
  ck_assert_int_eq (kist_cgroup_dev_program (NULL, 0, &insns, &n, &err), 0);
  const size_t defaults = n - 2; /* final deny */
  ck_assert_uint_eq (defaults, 36);
  check_prog (insns, n);
  ck_assert_int_eq (insns[2].imm, BPF_DEVCG_DEV_CHAR); /* the eight char devices */
  ck_assert_uint_eq (insns[5].code, BPF_JMP32 | BPF_JNE | BPF_K); /* major 5 (ptmx's) */
  ck_assert_int_eq (insns[5].imm, 5);
  ck_assert_int_eq (insns[6].imm, 2);                              /* then minor 2 */
  ck_assert_int_eq (insns[7].imm, 0);                              /* or 0 (tty) */
  ck_assert_uint_eq (insns[8].code, BPF_JMP32 | BPF_JEQ | BPF_K);  /* 136:* */
  ck_assert_int_eq (insns[8].imm, 136);
  free (insns);

  /* deny all, allow c 1:3 rwm, allow c *:* m */
  struct kist_cgroup_dev_rule rules[] = {
    { false, 'a', -1, -1, BPF_DEVCG_ACC_MKNOD | BPF_DEVCG_ACC_READ | BPF_DEVCG_ACC_WRITE },
    { true, 'c', 1, 3, BPF_DEVCG_ACC_MKNOD | BPF_DEVCG_ACC_READ | BPF_DEVCG_ACC_WRITE },
    { true, 'c', -1, -1, BPF_DEVCG_ACC_MKNOD },
  };
  ck_assert_int_eq (kist_cgroup_dev_program (rules, 3, &insns, &n, &err), 0);
  /* defaults + (c *:* m: the same block as the default c *:* m, tested
   * right before it) 0 + (c 1:3) 10 + (deny all, terminal) 2 */
  ck_assert_uint_eq (n, 12 + defaults);
  check_prog (insns, n);
  ck_assert_int_eq (insns[n - 2].imm, 0); /* last reached: deny */
  ck_assert_int_eq (insns[2 + defaults].imm, BPF_DEVCG_DEV_CHAR);
  ck_assert_int_eq (insns[5 + defaults].imm, 1); /* major 1 */
  ck_assert_int_eq (insns[6 + defaults].imm, 3); /* minor 3 */
  free (insns);

  /* only an allow: default deny appended */
  ck_assert_int_eq (kist_cgroup_dev_program (&rules[1], 1, &insns, &n, &err), 0);
  ck_assert_uint_eq (n, 12 + defaults);
  check_prog (insns, n);
  ck_assert_int_eq (insns[n - 2].imm, 0);
  ck_assert_int_eq (insns[n - 4].imm, 1);
  free (insns);

  /* allow all, then deny b 8:* w: the deny (last) is tested first */
  struct kist_cgroup_dev_rule r2[] = {
    { true, 'a', -1, -1, BPF_DEVCG_ACC_MKNOD | BPF_DEVCG_ACC_READ | BPF_DEVCG_ACC_WRITE },
    { false, 'b', 8, -1, BPF_DEVCG_ACC_WRITE },
  };
  ck_assert_int_eq (kist_cgroup_dev_program (r2, 2, &insns, &n, &err), 0);
  ck_assert_uint_eq (n, defaults + 12 + 2);
  check_prog (insns, n);
  ck_assert_uint_eq (insns[6 + defaults].code, BPF_JMP | BPF_JEQ | BPF_K); /* deny: no overlap -> next */
  free (insns);

  ck_assert_ptr_null (err);
}
END_TEST

/* ---------------------------------------------------------------- scopes */

static char *mount_point;
static char base_abs[PATH_MAX];
static char base_rel[64];

/* rmdir a cgroup tree bottom-up (only directories: cgroupfs files vanish with them). */
static void
rmdir_tree (const char *path)
{
  /* A failed test may leave its child behind: kill it first (only ours). */
  char *kill_file = xasprintf ("%s/cgroup.kill", path);
  int kfd = open (kill_file, O_WRONLY | O_CLOEXEC);
  free (kill_file);
  if (kfd >= 0)
    {
      if (write (kfd, "1", 1) == 1)
        usleep (50000);
      close (kfd);
    }
  DIR *d = opendir (path);
  if (d == NULL)
    return;
  struct dirent *de;
  while ((de = readdir (d)) != NULL)
    if (de->d_type == DT_DIR && strcmp (de->d_name, ".") != 0 && strcmp (de->d_name, "..") != 0)
      {
        char *sub = xasprintf ("%s/%s", path, de->d_name);
        rmdir_tree (sub);
        free (sub);
      }
  closedir (d);
  rmdir (path);
}

static bool
scope_tests_possible (void)
{
  struct kist_error *err = NULL;
  if (geteuid () != 0)
    {
      printf ("test_cgroup: scope tests skipped: not root\n");
      return false;
    }
  free (mount_point);
  mount_point = NULL;
  if (kist_cgroup_mount (&mount_point, &err) < 0)
    {
      printf ("test_cgroup: scope tests skipped: %s\n", err->msg);
      kist_error_free (err);
      return false;
    }
  char *own = NULL;
  if (kist_cgroup_own_path (&own, &err) < 0)
    {
      printf ("test_cgroup: scope tests skipped: %s\n", err->msg);
      kist_error_free (err);
      return false;
    }
  free (own);
  snprintf (base_rel, sizeof base_rel, "kist-test-%d", (int) getpid ());
  snprintf (base_abs, sizeof base_abs, "%s/%s", mount_point, base_rel);
  return true;
}

static void
scope_teardown (void)
{
  if (base_abs[0])
    rmdir_tree (base_abs);
}

static struct kist_spec *
make_spec (const char *cgroups_path, struct kist_resources *resources)
{
  struct kist_spec *s = xcalloc (1, sizeof *s);
  s->linux_ = xcalloc (1, sizeof *s->linux_);
  s->linux_->cgroups_path = xstrdup (cgroups_path);
  s->linux_->resources = resources;
  return s;
}

static void
free_spec (struct kist_spec *s)
{
  free (s->linux_->cgroups_path);
  free (s->linux_);
  free (s);
}

static bool
events_frozen (const char *abs, int want)
{
  char *path = xasprintf ("%s/cgroup.events", abs);
  char *text = NULL;
  struct kist_error *err = NULL;
  int rc = kist_read_file_at (AT_FDCWD, path, 4096, &text, NULL, &err);
  free (path);
  kist_error_free (err);
  if (rc < 0)
    return false;
  char key[16];
  snprintf (key, sizeof key, "frozen %d", want);
  bool ok = strstr (text, key) != NULL;
  free (text);
  return ok;
}

/* Fork a child that waits for a byte on a pipe, then runs fn. */
static pid_t
fork_waiting (int *wfd, int (*fn) (void))
{
  int p[2];
  ck_assert_int_eq (pipe2 (p, O_CLOEXEC), 0);
  pid_t pid = fork ();
  ck_assert_int_ge (pid, 0);
  if (pid == 0)
    {
      char c;
      close (p[1]);
      if (read (p[0], &c, 1) != 1)
        _exit (90);
      _exit (fn ? fn () : 0);
    }
  close (p[0]);
  *wfd = p[1];
  return pid;
}

static int
sleeper (void)
{
  for (;;)
    pause ();
  return 0;
}

/* kist_cgroup_plan_check: the config error before anything exists, with
 * its config path; nothing for a valid or absent linux.resources. */
START_TEST (test_plan_check)
{
  struct kist_error *err = NULL;
  struct kist_spec *spec = make_spec (NULL, NULL);
  ck_assert_int_eq (kist_cgroup_plan_check (spec, &err), 0);
  ck_assert_int_eq (kist_cgroup_plan_check (NULL, &err), 0);
  struct kist_resources *ok = res_of ("{\"memory\":{\"limit\":33554432},\"pids\":{\"limit\":10}}");
  spec->linux_->resources = ok;
  ck_assert_int_eq (kist_cgroup_plan_check (spec, &err), 0);
  struct kist_resources *bad = res_of ("{\"memory\":{\"limit\":33554432,\"swap\":1024}}");
  spec->linux_->resources = bad;
  ck_assert_int_lt (kist_cgroup_plan_check (spec, &err), 0);
  ck_assert_msg (strstr (err->msg, "config.json: linux.resources.memory.swap") != NULL, "%s",
                 err->msg);
  kist_error_free (err);
  err = NULL;
  kist_resources_free (ok);
  kist_resources_free (bad);
  spec->linux_->resources = NULL;
  free_spec (spec);
}
END_TEST

START_TEST (test_scope_lifecycle)
{
  if (!scope_tests_possible ())
    return;
  struct kist_error *err = NULL;
  char *cgp = xasprintf ("/%s/c1", base_rel);
  struct kist_spec *spec = make_spec (cgp, NULL);
  struct kist_ctx ctx;
  memset (&ctx, 0, sizeof ctx);
  ctx.id = "c1";
  ctx.spec = spec;
  struct kist_report *r = kist_report_new ("c1", "create", NULL);
  struct kist_cgroup *cg = NULL;

  ck_assert_msg (kist_cgroup_apply (&ctx, r, &cg, &err) == 0, "%s", err ? err->msg : "");
  ck_assert_ptr_nonnull (cg);
  ck_assert_str_eq (cg->mount, mount_point);
  ck_assert_str_eq (cg->created_from, base_rel);
  ck_assert_int_ge (cg->dirfd, 0);
  const struct kist_layer *l = kist_report_find (r, "cgroup");
  ck_assert_ptr_nonnull (l);
  ck_assert (!l->applied); /* until kist_cgroup_join finds the process in it */
  ck_assert_ptr_nonnull (strstr (l->reason, "not joined"));
  ck_assert_str_eq (l->requested, cgp);

  char *abs = xasprintf ("%s/%s", cg->mount, cg->path);
  char *created = xasprintf ("%s/%s", cg->mount, cg->created_from);
  struct stat st;
  ck_assert_int_eq (stat (abs, &st), 0);

  int wfd;
  pid_t pid = fork_waiting (&wfd, sleeper);
  ck_assert_msg (kist_cgroup_join (r, cg, pid, false, &err) == 0, "%s", err ? err->msg : "");
  l = kist_report_find (r, "cgroup");
  ck_assert (l->applied);
  ck_assert_ptr_null (l->reason);
  ck_assert_ptr_nonnull (strstr (l->detail, "moved in via cgroup.procs (no clone3)"));
  char *line = xasprintf ("/proc/%d/cgroup: 0::/%s", (int) pid, cg->path);
  ck_assert_msg (strstr (l->detail, line) != NULL, "%s", l->detail);
  free (line);
  ck_assert_msg (kist_cgroup_enter (cg, pid, &err) == 0, "%s", err ? err->msg : "");
  ck_assert_int_eq (write (wfd, "x", 1), 1);
  close (wfd);

  pid_t *pids = NULL;
  size_t n = 0;
  ck_assert_int_eq (kist_cgroup_pids (abs, &pids, &n, &err), 0);
  ck_assert_uint_eq (n, 1);
  ck_assert_int_eq (pids[0], pid);
  free (pids);

  ck_assert_int_eq (kist_cgroup_is_frozen (abs), 0);
  ck_assert_msg (kist_cgroup_freeze (abs, true, &err) == 0, "%s", err ? err->msg : "");
  ck_assert (events_frozen (abs, 1));
  ck_assert_int_eq (kist_cgroup_is_frozen (abs), 1);
  ck_assert_msg (kist_cgroup_freeze (abs, false, &err) == 0, "%s", err ? err->msg : "");
  ck_assert (events_frozen (abs, 0));
  ck_assert_int_eq (kist_cgroup_is_frozen (abs), 0);

  /* not empty: remove refuses (after its 2 s wait) */
  ck_assert_int_lt (kist_cgroup_remove (abs, created, &err), 0);
  ck_assert_ptr_nonnull (strstr (err->msg, "not empty"));
  kist_error_free (err);
  err = NULL;

  ck_assert_int_eq (kist_cgroup_kill_all (abs, &err), 0);
  int status;
  ck_assert_int_eq (waitpid (pid, &status, 0), pid);
  ck_assert (WIFSIGNALED (status) && WTERMSIG (status) == SIGKILL);

  char *json = kist_cgroup_stats_json (abs, &err);
  ck_assert_ptr_nonnull (json);
  ck_assert_ptr_nonnull (strstr (json, "\"cpu\""));
  yajl_val stats = parse (json);
  const char *usage_path[] = { "cpu", "usage", "total", NULL };
  ck_assert_ptr_nonnull (yajl_tree_get (stats, usage_path, yajl_t_number));
  yajl_tree_free (stats);
  free (json);
  ck_assert_int_eq (kist_cgroup_oom_kills (abs), -1); /* no memory controller here */

  ck_assert_msg (kist_cgroup_remove (abs, created, &err) == 0, "%s", err ? err->msg : "");
  ck_assert_int_eq (stat (abs, &st), -1);
  ck_assert_int_eq (stat (created, &st), -1);
  ck_assert_int_eq (errno, ENOENT);
  /* removing again is fine */
  ck_assert_int_eq (kist_cgroup_remove (abs, created, &err), 0);

  free (abs);
  free (created);
  kist_cgroup_free (cg);
  kist_report_free (r);
  free_spec (spec);
  free (cgp);
}
END_TEST

static bool
controller_available (const char *name)
{
  char *path = xasprintf ("%s/cgroup.controllers", mount_point);
  char *text = NULL;
  struct kist_error *err = NULL;
  bool yes = false;
  if (kist_read_file_at (AT_FDCWD, path, 4096, &text, NULL, &err) == 0)
    {
      for (char *save = NULL, *t = strtok_r (text, " \n", &save); t; t = strtok_r (NULL, " \n", &save))
        if (strcmp (t, name) == 0)
          yes = true;
    }
  kist_error_free (err);
  free (text);
  free (path);
  return yes;
}

START_TEST (test_scope_missing_controller)
{
  if (!scope_tests_possible ())
    return;
  if (controller_available ("memory"))
    {
      printf ("test_cgroup: missing-controller test skipped: memory is available here\n");
      return;
    }
  struct kist_error *err = NULL;
  char *cgp = xasprintf ("/%s/c2", base_rel);
  struct kist_resources *res = res_of ("{\"memory\":{\"limit\":33554432}}");
  struct kist_spec *spec = make_spec (cgp, res);
  struct kist_ctx ctx;
  memset (&ctx, 0, sizeof ctx);
  ctx.id = "c2";
  ctx.spec = spec;
  struct stat st;

  /* fail closed: error names the controller; nothing is left behind */
  struct kist_report *r = kist_report_new ("c2", "create", NULL);
  struct kist_cgroup *cg = NULL;
  ck_assert_int_lt (kist_cgroup_apply (&ctx, r, &cg, &err), 0);
  ck_assert_ptr_null (cg);
  ck_assert_msg (strstr (err->msg, "memory controller not available in the cgroup2 hierarchy at")
                     != NULL,
                 "%s", err->msg);
  const struct kist_layer *l = kist_report_find (r, "cgroup.memory.max");
  ck_assert_ptr_nonnull (l);
  ck_assert (!l->applied);
  ck_assert_int_eq (l->errnum, ENOTSUP);
  ck_assert_str_eq (l->requested, "33554432");
  ck_assert_int_eq (stat (base_abs, &st), -1);
  kist_error_free (err);
  err = NULL;
  kist_report_free (r);

  /* A unified key of a controller kist does not know: looked for like
   * any other (it would be enabled where the kernel has it); absent, the
   * error names it, and nothing is left behind. */
  {
    struct kist_resources *ures = res_of ("{\"unified\":{\"nosuch.max\":\"1\"}}");
    struct kist_spec *uspec = make_spec (cgp, ures);
    ctx.spec = uspec;
    r = kist_report_new ("c2", "create", NULL);
    ck_assert_int_lt (kist_cgroup_apply (&ctx, r, &cg, &err), 0);
    ck_assert_ptr_null (cg);
    ck_assert_msg (strstr (err->msg, "linux.resources.unified.nosuch.max: nosuch controller not "
                                     "available in the cgroup2 hierarchy at")
                       != NULL,
                   "%s", err->msg);
    l = kist_report_find (r, "cgroup.nosuch.max");
    ck_assert (l != NULL && !l->applied && l->errnum == ENOTSUP);
    ck_assert_int_eq (stat (base_abs, &st), -1);
    kist_error_free (err);
    err = NULL;
    kist_report_free (r);
    ctx.spec = spec;
    uspec->linux_->resources = NULL;
    free_spec (uspec);
    kist_resources_free (ures);
  }

  /* allowed to degrade: applied=false, the scope exists */
  r = kist_report_new ("c2", "create", "cgroup.memory.max");
  ck_assert_msg (kist_cgroup_apply (&ctx, r, &cg, &err) == 0, "%s", err ? err->msg : "");
  ck_assert_ptr_nonnull (cg);
  l = kist_report_find (r, "cgroup.memory.max");
  ck_assert_ptr_nonnull (l);
  ck_assert (!l->applied);
  ck_assert_ptr_nonnull (strstr (l->reason, "cgroup.controllers:"));
  ck_assert_str_eq (kist_report_find (r, "cgroup")->requested, cgp); /* the scope was made */

  /* update of a live scope: same reason, fails closed */
  char *abs = xasprintf ("%s/%s", cg->mount, cg->path);
  struct kist_report *ru = kist_report_new ("c2", "update", NULL);
  struct kist_resources *upd = res_of ("{\"pids\":{\"limit\":10}}");
  int rc = kist_cgroup_update (abs, upd, ru, &err);
  if (controller_available ("pids"))
    ck_assert_int_eq (rc, 0);
  else
    {
      ck_assert_int_lt (rc, 0);
      ck_assert_ptr_nonnull (strstr (err->msg, "pids controller not available"));
      kist_error_free (err);
      err = NULL;
    }
  kist_resources_free (upd);
  kist_report_free (ru);

  /* checkBeforeUpdate without a memory controller: no memory.current to
   * compare with, so no refusal of its own; the memory.max write fails
   * with its reason, as without the check. */
  ru = kist_report_new ("c2", "update", NULL);
  upd = res_of ("{\"memory\":{\"limit\":4096,\"checkBeforeUpdate\":true}}");
  ck_assert_int_lt (kist_cgroup_update (abs, upd, ru, &err), 0);
  ck_assert_msg (strstr (err->msg, "memory controller not available") != NULL
                     && strstr (err->msg, "checkBeforeUpdate") == NULL,
                 "%s", err->msg);
  kist_error_free (err);
  err = NULL;
  kist_resources_free (upd);
  kist_report_free (ru);

  char *created = xasprintf ("%s/%s", cg->mount, cg->created_from);
  ck_assert_int_eq (kist_cgroup_remove (abs, created, &err), 0);
  ck_assert_int_eq (stat (base_abs, &st), -1);
  free (abs);
  free (created);
  kist_cgroup_free (cg);
  kist_report_free (r);
  free_spec (spec);
  kist_resources_free (res);
  free (cgp);
}
END_TEST

START_TEST (test_scope_hugetlb)
{
  if (!scope_tests_possible ())
    return;
  if (!controller_available ("hugetlb") || access ("/sys/kernel/mm/hugepages/hugepages-2048kB", F_OK) != 0)
    {
      printf ("test_cgroup: hugetlb test skipped: no hugetlb controller or 2MB pages\n");
      return;
    }
  struct kist_error *err = NULL;
  char *cgp = xasprintf ("/%s/c3", base_rel);
  /* 4 MiB + 1: the kernel rounds down to the huge page size */
  struct kist_resources *res = res_of ("{\"hugepageLimits\":[{\"pageSize\":\"2MB\",\"limit\":4194305}]}");
  struct kist_spec *spec = make_spec (cgp, res);
  struct kist_ctx ctx;
  memset (&ctx, 0, sizeof ctx);
  ctx.id = "c3";
  ctx.spec = spec;
  struct kist_report *r = kist_report_new ("c3", "create", NULL);
  struct kist_cgroup *cg = NULL;
  ck_assert_msg (kist_cgroup_apply (&ctx, r, &cg, &err) == 0, "%s", err ? err->msg : "");
  const struct kist_layer *l = kist_report_find (r, "cgroup.hugetlb.2MB.max");
  ck_assert_ptr_nonnull (l);
  ck_assert (l->applied);
  ck_assert_msg (strstr (l->detail, "read back 4194304") && strstr (l->detail, "rounded"), "%s",
                 l->detail);

  /* update with the same code: a new value, read back */
  char *abs = xasprintf ("%s/%s", cg->mount, cg->path);
  struct kist_resources *upd = res_of ("{\"hugepageLimits\":[{\"pageSize\":\"2MB\",\"limit\":2097152}]}");
  struct kist_report *ru = kist_report_new ("c3", "update", NULL);
  ck_assert_msg (kist_cgroup_update (abs, upd, ru, &err) == 0, "%s", err ? err->msg : "");
  l = kist_report_find (ru, "cgroup.hugetlb.2MB.max");
  ck_assert (l && l->applied);
  ck_assert_str_eq (l->detail, "read back 2097152");
  kist_report_free (ru);
  kist_resources_free (upd);

  char *created = xasprintf ("%s/%s", cg->mount, cg->created_from);
  ck_assert_int_eq (kist_cgroup_remove (abs, created, &err), 0);
  free (abs);
  free (created);
  kist_cgroup_free (cg);
  kist_report_free (r);
  free_spec (spec);
  kist_resources_free (res);
  free (cgp);
}
END_TEST

/* In the device-limited cgroup: /dev/null (1:3) and /dev/zero (1:5) open
 * (runc's defaults win over the deny rules), /dev/kmsg (1:11) does not open
 * for writing (the last matching rule denies w; write-only needs no
 * CAP_SYSLOG and writes nothing). */
static int
try_devices (void)
{
  int fd = open ("/dev/null", O_RDWR | O_CLOEXEC);
  if (fd < 0)
    return 10;
  close (fd);
  fd = open ("/dev/zero", O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return 13;
  close (fd);
  fd = open ("/dev/kmsg", O_WRONLY | O_CLOEXEC);
  if (fd >= 0)
    return 11;
  return errno == EPERM ? 0 : 12;
}

START_TEST (test_scope_devices)
{
  if (!scope_tests_possible ())
    return;
  struct kist_error *err = NULL;
  char *cgp = xasprintf ("/%s/c4", base_rel);
  struct kist_resources *res = res_of ("{\"devices\":[{\"allow\":false,\"access\":\"rwm\"},"
                        "{\"allow\":false,\"type\":\"c\",\"major\":1,\"minor\":3,\"access\":\"rwm\"},"
                        "{\"allow\":false,\"type\":\"c\",\"major\":1,\"minor\":5,\"access\":\"r\"},"
                        "{\"allow\":true,\"type\":\"c\",\"major\":1,\"minor\":11,\"access\":\"rwm\"},"
                        "{\"allow\":false,\"type\":\"c\",\"major\":1,\"minor\":11,\"access\":\"w\"}]}");
  struct kist_spec *spec = make_spec (cgp, res);
  struct kist_ctx ctx;
  memset (&ctx, 0, sizeof ctx);
  ctx.id = "c4";
  ctx.spec = spec;
  struct kist_report *r = kist_report_new ("c4", "create", NULL);
  struct kist_cgroup *cg = NULL;
  ck_assert_msg (kist_cgroup_apply (&ctx, r, &cg, &err) == 0, "%s", err ? err->msg : "");
  const struct kist_layer *l = kist_report_find (r, "cgroup.devices");
  ck_assert (l && l->applied);
  ck_assert_ptr_nonnull (strstr (l->detail, "attached"));

  int wfd;
  pid_t pid = fork_waiting (&wfd, try_devices);
  ck_assert_msg (kist_cgroup_enter (cg, pid, &err) == 0, "%s", err ? err->msg : "");
  ck_assert_int_eq (write (wfd, "x", 1), 1);
  close (wfd);
  int status;
  ck_assert_int_eq (waitpid (pid, &status, 0), pid);
  ck_assert_msg (WIFEXITED (status) && WEXITSTATUS (status) == 0, "device check status %d",
                 WEXITSTATUS (status));

  /* update replaces the program: still exactly one attached */
  char *abs = xasprintf ("%s/%s", cg->mount, cg->path);
  struct kist_resources *upd = res_of ("{\"devices\":[{\"allow\":true,\"access\":\"rwm\"}]}");
  struct kist_report *ru = kist_report_new ("c4", "update", NULL);
  ck_assert_msg (kist_cgroup_update (abs, upd, ru, &err) == 0, "%s", err ? err->msg : "");
  l = kist_report_find (ru, "cgroup.devices");
  ck_assert (l && l->applied);
  ck_assert_ptr_nonnull (strstr (l->detail, "replaced"));
  kist_report_free (ru);
  kist_resources_free (upd);

  char *created = xasprintf ("%s/%s", cg->mount, cg->created_from);
  ck_assert_int_eq (kist_cgroup_remove (abs, created, &err), 0);
  free (abs);
  free (created);
  kist_cgroup_free (cg);
  kist_report_free (r);
  free_spec (spec);
  kist_resources_free (res);
  free (cgp);
}
END_TEST

/* Rootless without delegation: the scope cannot be made; recorded as not
 * applied, fatal unless "cgroup" may degrade. */
static int
rootless_apply (void)
{
  struct kist_error *err = NULL;
  char *cgp = xasprintf ("/%s/c5", base_rel);
  struct kist_spec *spec = make_spec (cgp, NULL);
  struct kist_ctx ctx;
  memset (&ctx, 0, sizeof ctx);
  ctx.id = "c5";
  ctx.spec = spec;
  struct kist_cgroup *cg = NULL;
  if (setgid (65534) < 0 || setuid (65534) < 0)
    return 20;
  struct kist_report *r = kist_report_new ("c5", "create", NULL);
  if (kist_cgroup_apply (&ctx, r, &cg, &err) >= 0 || cg != NULL)
    return 21;
  if (strstr (err->msg, "not writable") == NULL)
    return 22;
  kist_error_free (err);
  err = NULL;
  kist_report_free (r);
  r = kist_report_new ("c5", "create", "cgroup");
  if (kist_cgroup_apply (&ctx, r, &cg, &err) != 0 || cg != NULL)
    return 23;
  const struct kist_layer *l = kist_report_find (r, "cgroup");
  if (l == NULL || l->applied || l->errnum != EACCES)
    return 24;
  kist_report_free (r);
  free_spec (spec);
  free (cgp);
  return 0;
}

START_TEST (test_scope_rootless)
{
  if (!scope_tests_possible ())
    return;
  pid_t pid = fork ();
  ck_assert_int_ge (pid, 0);
  if (pid == 0)
    _exit (rootless_apply ());
  int status;
  ck_assert_int_eq (waitpid (pid, &status, 0), pid);
  ck_assert_msg (WIFEXITED (status) && WEXITSTATUS (status) == 0, "rootless check status %d",
                 WEXITSTATUS (status));
  struct stat st;
  ck_assert_int_eq (stat (base_abs, &st), -1);
}
END_TEST

static Suite *
cgroup_suite (void)
{
  Suite *s = suite_create ("cgroup");
  TCase *tc = tcase_create ("pure");
  tcase_add_test (tc, test_resolve_path);
  tcase_add_test (tc, test_own_path);
  tcase_add_test (tc, test_mount_lookup);
  tcase_add_test (tc, test_conversions);
  tcase_add_test (tc, test_swap);
  tcase_add_test (tc, test_value_matches);
  tcase_add_test (tc, test_plan);
  tcase_add_test (tc, test_dev_program);
  tcase_add_test (tc, test_dev_program_decides);
  tcase_add_test (tc, test_plan_check);
  suite_add_tcase (s, tc);

  TCase *ts = tcase_create ("scope");
  tcase_add_checked_fixture (ts, NULL, scope_teardown);
  tcase_set_timeout (ts, 30);
  tcase_add_test (ts, test_scope_lifecycle);
  tcase_add_test (ts, test_scope_missing_controller);
  tcase_add_test (ts, test_scope_hugetlb);
  tcase_add_test (ts, test_scope_devices);
  tcase_add_test (ts, test_scope_rootless);
  suite_add_tcase (s, ts);
  return s;
}

int
main (void)
{
  return kist_unit_run (cgroup_suite ());
}
