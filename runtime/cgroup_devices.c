/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: the cgroup v2 device allowlist (layer "cgroup.devices").
 *
 * cgroup v2 has no devices.allow file: the kernel asks a
 * BPF_PROG_TYPE_CGROUP_DEVICE program attached to the cgroup.  kist builds
 * that program by hand from linux.resources.devices: default deny, and the
 * rules are tested from the last to the first so that the last matching rule
 * wins (as in runc).  An allow rule matches when it grants every access
 * asked for; a deny rule matches when it denies any of them.
 *
 * After the configured rules come the default rules runc appends (its
 * specconv AllowedDevices, in its order): mknod of any char and any block
 * device, then rwm of null 1:3, random 1:8, full 1:7, tty 5:0, zero 1:5,
 * urandom 1:9, the pty slaves 136:* and ptmx 5:2.  Being last they win over
 * anything configured, so a container keeps /dev/null and the others even
 * under podman's deny-all list [{"allow": false, "access": "rwm"}].
 * linux.devices entries get no rule of their own: runc does not allow them
 * either (its test "device cgroup deny" expects EPERM for such a node), a
 * config that wants one usable allows it in linux.resources.devices as
 * docker and podman do for --device.
 *
 * Context (struct bpf_cgroup_dev_ctx, in r1): u32 access_type = access << 16
 * | type, u32 major, u32 minor.  Rules next to each other in the order they
 * are tested, with the same outcome (allow or deny), type and access, are
 * one block: whichever of them matches, the answer is the same, so the block
 * tests the type and the access once (into r2), loads major and minor (r4,
 * r5) and tests the pairs, the pairs of one major under one test of it.
 * Every block loads what it tests from the context: no register carries
 * anything from one block to the next, every path to a block's first
 * instruction has the same state, and the verifier checks each block once.
 * runc's default rules are three blocks: 38 instructions (59 as one block
 * per rule on registers split once; BPF_PROG_LOAD about half the time).
 *
 * A live program is shared.  The load is most of the layer's cost (the
 * verifier: ~100 us for those 38 instructions in a loop of loads here, about
 * twice that in a sandbox), for a program that is the same for every
 * container with the same rules, and a program lives while a cgroup has it
 * attached.  So kist notes the id of the program it loaded last in
 * STATE_ROOT/~device-program, and the next container takes that program by
 * its id (BPF_PROG_GET_FD_BY_ID: CAP_SYS_ADMIN) while another container
 * still holds it, if it is a device program and its translated
 * instructions, read back, are exactly the ones built for this container.
 * The note is only a hint: a program that is gone, of another config, or
 * whose instructions the kernel withholds (kernel.kptr_restrict) means a
 * load, as without the note.  The note is one fixed-width line rewritten in
 * place (no new inode per load); a torn read gives a wrong id, refused by
 * the read back. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <linux/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cgroup.h"
#include "util.h"

#define ACC_ALL (BPF_DEVCG_ACC_MKNOD | BPF_DEVCG_ACC_READ | BPF_DEVCG_ACC_WRITE)

static struct bpf_insn
insn (uint8_t code, uint8_t dst, uint8_t src, int16_t off, int32_t imm)
{
  struct bpf_insn i;
  memset (&i, 0, sizeof i);
  i.code = code;
  i.dst_reg = dst & 0xf;
  i.src_reg = src & 0xf;
  i.off = off;
  i.imm = imm;
  return i;
}

struct prog
{
  struct bpf_insn *v;
  size_t n, cap;
};

static void
emit (struct prog *p, struct bpf_insn i)
{
  if (p->n == p->cap)
    {
      p->cap = p->cap ? p->cap * 2 : 64;
      p->v = xrealloc (p->v, p->cap * sizeof *p->v);
    }
  p->v[p->n++] = i;
}

/* runc's default rules, appended after the configured ones. */
static const struct kist_cgroup_dev_rule default_rules[] = {
  { true, 'c', -1, -1, BPF_DEVCG_ACC_MKNOD }, /* mknod of any char device */
  { true, 'b', -1, -1, BPF_DEVCG_ACC_MKNOD }, /* mknod of any block device */
  { true, 'c', 1, 3, ACC_ALL },               /* /dev/null */
  { true, 'c', 1, 8, ACC_ALL },               /* /dev/random */
  { true, 'c', 1, 7, ACC_ALL },               /* /dev/full */
  { true, 'c', 5, 0, ACC_ALL },               /* /dev/tty */
  { true, 'c', 1, 5, ACC_ALL },               /* /dev/zero */
  { true, 'c', 1, 9, ACC_ALL },               /* /dev/urandom */
  { true, 'c', 136, -1, ACC_ALL },            /* /dev/pts/N */
  { true, 'c', 5, 2, ACC_ALL },               /* /dev/ptmx (pts/ptmx) */
};

/* What kist_cgroup_dev_program built last, for the detail and the read back
 * of kist_cgroup_dev_attach (which is given only the instructions). */
static struct
{
  const struct bpf_insn *insns;
  size_t n_insns, n_rules;
} last_built;

/* Emit the block of a group: rules g[0..n-1], consecutive in the order they
 * are tested, with the same outcome, type and access, so that whichever of
 * them matches, the answer is the same and one block tests them all: the
 * type and the access once, then the (major, minor) pairs, the pairs of one
 * major under one test of it.  Returns true when the block matches every
 * request (the program ends there). */
static bool
emit_group (struct prog *p, const struct kist_cgroup_dev_rule *const *g, size_t n)
{
  const struct kist_cgroup_dev_rule *rl = g[0];
  size_t next[3];                                           /* jumps: no match */
  _cleanup_free_ size_t *out = xcalloc (n + 1, sizeof *out); /* jumps: the outcome, one per rule */
  size_t n_next = 0, n_out = 0;

  if (rl->type == 'c' || rl->type == 'b')
    {
      /* r2 = access_type & 0xffff: the device type */
      emit (p, insn (BPF_LDX | BPF_MEM | BPF_W, 2, 1, 0, 0));
      emit (p, insn (BPF_ALU | BPF_AND | BPF_K, 2, 0, 0, 0xffff));
      next[n_next++] = p->n;
      emit (p, insn (BPF_JMP | BPF_JNE | BPF_K, 2, 0, 0,
                     rl->type == 'c' ? BPF_DEVCG_DEV_CHAR : BPF_DEVCG_DEV_BLOCK));
    }
  if ((rl->access & ACC_ALL) != ACC_ALL)
    {
      /* r2 = access_type >> 16: the access asked for */
      emit (p, insn (BPF_LDX | BPF_MEM | BPF_W, 2, 1, 0, 0));
      emit (p, insn (BPF_ALU | BPF_RSH | BPF_K, 2, 0, 0, 16));
      if (rl->allow)
        {
          /* Anything asked for that the rule does not grant: no match. */
          emit (p, insn (BPF_ALU | BPF_AND | BPF_K, 2, 0, 0, (int32_t) (~rl->access & ACC_ALL)));
          next[n_next++] = p->n;
          emit (p, insn (BPF_JMP | BPF_JNE | BPF_K, 2, 0, 0, 0));
        }
      else
        {
          /* Nothing asked for that the rule denies: no match. */
          emit (p, insn (BPF_ALU | BPF_AND | BPF_K, 2, 0, 0, (int32_t) rl->access));
          next[n_next++] = p->n;
          emit (p, insn (BPF_JMP | BPF_JEQ | BPF_K, 2, 0, 0, 0));
        }
    }
  bool any_device = false, major = false, minor = false;
  for (size_t i = 0; i < n; i++)
    {
      any_device = any_device || (g[i]->major < 0 && g[i]->minor < 0);
      major = major || g[i]->major >= 0;
      minor = minor || g[i]->minor >= 0;
    }
  if (!any_device)
    {
      /* r4 = major, r5 = minor (loaded here: nothing carries over). */
      if (major)
        emit (p, insn (BPF_LDX | BPF_MEM | BPF_W, 4, 1, 4, 0));
      if (minor)
        emit (p, insn (BPF_LDX | BPF_MEM | BPF_W, 5, 1, 8, 0));
      for (size_t i = 0; i < n; i++)
        {
          int64_t m = g[i]->major;
          if (m < 0)
            continue;
          bool first = true, all_minors = false;
          for (size_t k = 0; k < i && first; k++)
            first = g[k]->major != m;
          if (!first)
            continue; /* this major was tested with its first rule */
          for (size_t k = i; k < n; k++)
            all_minors = all_minors || (g[k]->major == m && g[k]->minor < 0);
          if (all_minors)
            {
              out[n_out++] = p->n;
              emit (p, insn (BPF_JMP32 | BPF_JEQ | BPF_K, 4, 0, 0, (int32_t) (uint32_t) m));
              continue;
            }
          size_t skip = p->n;
          emit (p, insn (BPF_JMP32 | BPF_JNE | BPF_K, 4, 0, 0, (int32_t) (uint32_t) m));
          for (size_t k = i; k < n; k++)
            if (g[k]->major == m)
              {
                out[n_out++] = p->n;
                emit (p, insn (BPF_JMP32 | BPF_JEQ | BPF_K, 5, 0, 0,
                               (int32_t) (uint32_t) g[k]->minor));
              }
          p->v[skip].off = (int16_t) (p->n - skip - 1);
        }
      for (size_t i = 0; i < n; i++)
        if (g[i]->major < 0)
          {
            out[n_out++] = p->n;
            emit (p, insn (BPF_JMP32 | BPF_JEQ | BPF_K, 5, 0, 0,
                           (int32_t) (uint32_t) g[i]->minor));
          }
      next[n_next++] = p->n; /* no pair matched */
      emit (p, insn (BPF_JMP | BPF_JA, 0, 0, 0, 0));
    }
  for (size_t j = 0; j < n_out; j++)
    p->v[out[j]].off = (int16_t) (p->n - out[j] - 1);
  emit (p, insn (BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, rl->allow ? 1 : 0));
  emit (p, insn (BPF_JMP | BPF_EXIT, 0, 0, 0, 0));

  /* "No match" jumps go to the first insn after this block. */
  for (size_t j = 0; j < n_next; j++)
    p->v[next[j]].off = (int16_t) (p->n - next[j] - 1);
  /* A block that matches everything ends the program: the verifier refuses
   * unreachable instructions after it. */
  return n_next == 0;
}

/* Can b join the group whose first rule is a? */
static bool
same_group (const struct kist_cgroup_dev_rule *a, const struct kist_cgroup_dev_rule *b)
{
  return a->allow == b->allow && a->type == b->type
         && (a->access & ACC_ALL) == (b->access & ACC_ALL);
}

int
kist_cgroup_dev_program (const struct kist_cgroup_dev_rule *rules, size_t n,
                         struct bpf_insn **insns, size_t *n_insns, struct kist_error **err)
{
  struct prog p = { 0 };
  bool terminal = false;
  size_t n_def = KIST_ARRAY_SIZE (default_rules);

  memset (&last_built, 0, sizeof last_built);

  /* The rule list is the configured rules followed by the defaults; the
   * last one is tested first.  Rules next to each other in that order with
   * the same outcome, type and access form one block. */
  size_t total = n + n_def;
  _cleanup_free_ const struct kist_cgroup_dev_rule **order = xcalloc (total + 1, sizeof *order);
  for (size_t k = 0; k < total; k++)
    {
      size_t r = total - 1 - k;
      order[k] = r >= n ? &default_rules[r - n] : &rules[r];
    }
  for (size_t k = 0; k < total && !terminal;)
    {
      size_t e = k + 1;
      while (e < total && same_group (order[k], order[e]))
        e++;
      terminal = emit_group (&p, order + k, e - k);
      k = e;
    }

  if (!terminal)
    {
      emit (&p, insn (BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 0));
      emit (&p, insn (BPF_JMP | BPF_EXIT, 0, 0, 0, 0));
    }
  if (p.n > 4096)
    {
      free (p.v);
      return kist_error_make (err, E2BIG,
                              "linux.resources.devices: %zu rules (and the %zu default rules) make "
                              "a device program of %zu instructions (limit 4096): merge rules, "
                              "e.g. one rule per major number with minor -1",
                              n, n_def, p.n);
    }
  last_built.insns = p.v;
  last_built.n_insns = p.n;
  last_built.n_rules = n;
  *insns = p.v;
  *n_insns = p.n;
  return 0;
}

static int
sys_bpf (int cmd, union bpf_attr *attr)
{
  return (int) syscall (SYS_bpf, cmd, attr, sizeof *attr);
}

/* Program ids attached directly to the scope for BPF_CGROUP_DEVICE. */
static int
query_ids (int scope_fd, uint32_t *ids, uint32_t cap, uint32_t *n, struct kist_error **err)
{
  union bpf_attr a;
  memset (&a, 0, sizeof a);
  a.query.target_fd = scope_fd;
  a.query.attach_type = BPF_CGROUP_DEVICE;
  a.query.prog_ids = (uint64_t) (uintptr_t) ids;
  a.query.prog_cnt = cap;
  if (sys_bpf (BPF_PROG_QUERY, &a) < 0)
    return kist_error_make (err, errno, "BPF_PROG_QUERY on the cgroup (BPF_CGROUP_DEVICE)");
  *n = a.query.prog_cnt < cap ? a.query.prog_cnt : cap;
  return 0;
}

/* BPF_OBJ_GET_INFO_BY_FD into *info (which may ask for the instructions). */
static int
prog_info (int prog_fd, struct bpf_prog_info *info, const char *what, struct kist_error **err)
{
  union bpf_attr a;
  memset (&a, 0, sizeof a);
  a.info.bpf_fd = (uint32_t) prog_fd;
  a.info.info_len = sizeof *info;
  a.info.info = (uint64_t) (uintptr_t) info;
  if (sys_bpf (BPF_OBJ_GET_INFO_BY_FD, &a) < 0)
    return kist_error_make (err, errno, "read the %s of the device program (BPF_OBJ_GET_INFO_BY_FD)",
                            what);
  return 0;
}

/* The program's info and the kernel's copy of its instructions, in one
 * BPF_OBJ_GET_INFO_BY_FD: the buffer has room for n instructions and a zero
 * extension after each (a second call only if the kernel's copy is longer
 * still).  *got is NULL when the kernel withholds the instructions
 * (kernel.kptr_restrict, no CAP_SYSLOG) or the program has none. */
static int
prog_read (int prog_fd, size_t n, struct bpf_prog_info *info, struct bpf_insn **got,
           size_t *n_got, struct kist_error **err)
{
  uint32_t cap = (uint32_t) ((2 * n + 2) * sizeof (struct bpf_insn));
  _cleanup_free_ struct bpf_insn *buf = NULL;
  *got = NULL;
  *n_got = 0;
  for (int round = 0; round < 2; round++)
    {
      free (buf);
      buf = xcalloc (cap / sizeof *buf, sizeof *buf);
      memset (info, 0, sizeof *info);
      info->xlated_prog_len = cap;
      info->xlated_prog_insns = (uint64_t) (uintptr_t) buf;
      if (prog_info (prog_fd, info, "instructions", err) < 0)
        return -1;
      if (info->xlated_prog_len <= cap)
        break;
      if (round == 1)
        return kist_error_make (err, EIO, "the kernel's copy of the device program grew while "
                                          "kist read it");
      cap = info->xlated_prog_len;
    }
  if (info->xlated_prog_len == 0 || info->xlated_prog_insns == 0)
    return 0; /* nothing to compare, or the kernel withheld them */
  *n_got = info->xlated_prog_len / sizeof (struct bpf_insn);
  *got = steal_pointer (&buf);
  return 0;
}

/* The kernel's zero extension after a 32-bit ALU insn on JITs that need it
 * (mov32 rX, rX with imm 1); kist itself never emits a mov32 of a register
 * to itself. */
static bool
is_zext (const struct bpf_insn *i)
{
  return i->code == (BPF_ALU | BPF_MOV | BPF_X) && i->dst_reg == i->src_reg && i->imm == 1
         && i->off == 0;
}

static bool
is_jump (const struct bpf_insn *i)
{
  uint8_t cls = BPF_CLASS (i->code);
  return (cls == BPF_JMP || cls == BPF_JMP32) && BPF_OP (i->code) != BPF_EXIT
         && BPF_OP (i->code) != BPF_CALL;
}

/* Compare the kernel's copy of the program (its translated instructions,
 * prog_read) with the one built, instruction by instruction; jumps must
 * land on the same instruction.  Zero extensions the kernel inserted are
 * skipped. */
static int
readback_compare (const struct bpf_insn *got, size_t n_got, const struct bpf_insn *want, size_t n,
                  struct kist_error **err)
{
  _cleanup_free_ size_t *pos = xcalloc (n + 1, sizeof *pos);
  size_t k = 0;
  for (size_t j = 0; j < n; j++)
    {
      while (k < n_got && is_zext (&got[k]))
        k++;
      pos[j] = k;
      if (k >= n_got)
        return kist_error_make (err, EIO,
                                "the kernel's copy of the device program has %zu instructions, "
                                "kist loaded %zu: the kernel changed the program",
                                n_got, n);
      const struct bpf_insn *w = &want[j], *g = &got[k];
      if (w->code != g->code || w->dst_reg != g->dst_reg || w->src_reg != g->src_reg
          || w->imm != g->imm || (!is_jump (w) && w->off != g->off))
        return kist_error_make (err, EIO,
                                "the kernel's copy of the device program differs at instruction "
                                "%zu (code 0x%02x imm %d, loaded 0x%02x imm %d): the kernel "
                                "changed the program",
                                k, g->code, g->imm, w->code, w->imm);
      k++;
    }
  while (k < n_got && is_zext (&got[k]))
    k++;
  if (k != n_got)
    return kist_error_make (err, EIO,
                            "the kernel's copy of the device program has %zu instructions more "
                            "than the %zu kist loaded",
                            n_got - k, n);
  pos[n] = n_got;
  for (size_t j = 0; j < n; j++)
    if (is_jump (&want[j]))
      {
        long target = (long) j + 1 + want[j].off;
        if (target < 0 || (size_t) target > n
            || (long) pos[target] != (long) pos[j] + 1 + got[pos[j]].off)
          return kist_error_make (err, EIO,
                                  "the kernel's copy of the device program jumps elsewhere at "
                                  "instruction %zu",
                                  pos[j]);
      }
  return 0;
}

/* "1 configured rule, then the 10 default rules (c *:* m, ...)". */
static char *
describe_rules (size_t n_rules)
{
  _cleanup_free_ char *list = NULL;
  for (size_t i = 0; i < KIST_ARRAY_SIZE (default_rules); i++)
    {
      const struct kist_cgroup_dev_rule *rl = &default_rules[i];
      char num[48];
      if (rl->major < 0)
        snprintf (num, sizeof num, "*:*");
      else if (rl->minor < 0)
        snprintf (num, sizeof num, "%" PRId64 ":*", rl->major);
      else
        snprintf (num, sizeof num, "%" PRId64 ":%" PRId64, rl->major, rl->minor);
      char *next = xasprintf ("%s%s%c %s %s", list ? list : "", list ? ", " : "", rl->type, num,
                              rl->access == ACC_ALL ? "rwm" : "m");
      free (list);
      list = next;
    }
  return xasprintf ("%zu configured rule%s, then runc's %zu default rules (%s)", n_rules,
                    n_rules == 1 ? "" : "s", KIST_ARRAY_SIZE (default_rules), list);
}

/* The id in STATE_ROOT/~device-program, 0 if none can be read. */
static uint32_t
hint_read (int state_rootfd)
{
  _cleanup_close_ int fd
      = openat (state_rootfd, KIST_DEVICE_PROGRAM_HINT, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  struct stat st;
  char buf[16];
  if (fd < 0 || fstat (fd, &st) < 0 || !S_ISREG (st.st_mode) || st.st_uid != geteuid ())
    return 0;
  ssize_t n = pread (fd, buf, sizeof buf - 1, 0);
  if (n <= 0)
    return 0;
  buf[n] = '\0';
  uint64_t id = 0;
  return kist_parse_u64 (kist_rstrip (buf), &id) == 0 && id <= UINT32_MAX ? (uint32_t) id : 0;
}

static void
hint_write (int state_rootfd, uint32_t id)
{
  char line[16];
  int len = snprintf (line, sizeof line, "%010" PRIu32 "\n", id);
  _cleanup_close_ int fd = openat (state_rootfd, KIST_DEVICE_PROGRAM_HINT,
                                   O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  struct stat st;
  if (fd < 0 || fstat (fd, &st) < 0 || !S_ISREG (st.st_mode) || st.st_uid != geteuid ())
    return;
  if (pwrite (fd, line, (size_t) len, 0) != len)
    {
      if (st.st_size == 0) /* made by this open (a full disk): no empty note left */
        unlinkat (state_rootfd, KIST_DEVICE_PROGRAM_HINT, 0);
      return;
    }
  if (st.st_size > len)
    (void) ftruncate (fd, len);
}

/* The live program the note names, if it is this very program: an fd on it
 * (*id its id), else -1 (and the caller loads its own). */
static int
shared_program (int state_rootfd, const struct bpf_insn *insns, size_t n, uint32_t *id)
{
  uint32_t hint = state_rootfd >= 0 ? hint_read (state_rootfd) : 0;
  if (hint == 0)
    return -1;
  union bpf_attr g;
  memset (&g, 0, sizeof g);
  g.prog_id = hint;
  _cleanup_close_ int fd = sys_bpf (BPF_PROG_GET_FD_BY_ID, &g);
  if (fd < 0)
    return -1; /* gone (its last container ended), or not root */
  struct bpf_prog_info info;
  _cleanup_free_ struct bpf_insn *got = NULL;
  size_t n_got = 0;
  _cleanup_error_ struct kist_error *e = NULL;
  if (prog_read (fd, n, &info, &got, &n_got, &e) < 0 || info.type != BPF_PROG_TYPE_CGROUP_DEVICE)
    return -1;
  if (got == NULL || readback_compare (got, n_got, insns, n, &e) < 0)
    return -1; /* nothing to compare, or another program */
  *id = info.id;
  return steal_fd (&fd);
}

int
kist_cgroup_dev_attach (int state_rootfd, int scope_fd, bool fresh_scope, const struct bpf_insn *insns,
                        size_t n, char **detail, struct kist_error **err)
{
  uint32_t old[64], now[64], n_old = 0, n_now = 0, id = 0;
  char log[4096] = "";
  union bpf_attr a;

  /* Programs to replace: none in a scope kist has just made (the query
   * after the attach still proves that this one is the only one). */
  if (!fresh_scope && query_ids (scope_fd, old, KIST_ARRAY_SIZE (old), &n_old, err) < 0)
    return -1;

  _cleanup_close_ int prog_fd = shared_program (state_rootfd, insns, n, &id);
  bool shared = prog_fd >= 0;
  memset (&a, 0, sizeof a);
  a.prog_type = BPF_PROG_TYPE_CGROUP_DEVICE;
  a.insns = (uint64_t) (uintptr_t) insns;
  a.insn_cnt = (uint32_t) n;
  a.license = (uint64_t) (uintptr_t) "GPL";
  /* Without a verifier log: printing it costs about 2 ms per load (the
   * log of a valid program fills the buffer too).  Only a program the
   * verifier refuses is loaded again, with the log, to say why. */
  if (!shared)
    prog_fd = sys_bpf (BPF_PROG_LOAD, &a);
  if (prog_fd < 0)
    {
      int e = errno;
      a.log_buf = (uint64_t) (uintptr_t) log;
      a.log_size = sizeof log;
      a.log_level = 1;
      prog_fd = sys_bpf (BPF_PROG_LOAD, &a); /* the log did not fit: ENOSPC, log[] partial */
      if (prog_fd >= 0)
        close (steal_fd (&prog_fd)); /* refused once: never attach a second try */
      errno = e;
    }
  if (prog_fd < 0)
    return kist_error_make (err, errno,
                            "load the device program (BPF_PROG_TYPE_CGROUP_DEVICE, %zu insns)%s%s%s",
                            n, log[0] ? " (verifier: " : "", kist_rstrip (log), log[0] ? ")" : "");

  /* Its id and the kernel's copy before it goes live: a program that is
   * not the one built is never attached.  A shared one was read back by
   * shared_program. */
  bool dumped = shared;
  if (!shared)
    {
      struct bpf_prog_info info;
      _cleanup_free_ struct bpf_insn *got = NULL;
      size_t n_got = 0;
      if (prog_read (prog_fd, n, &info, &got, &n_got, err) < 0)
        return -1;
      id = info.id;
      dumped = got != NULL;
      if (dumped && readback_compare (got, n_got, insns, n, err) < 0)
        return kist_error_wrap (err, "device program %" PRIu32 " loaded but not attached", id);
    }

  memset (&a, 0, sizeof a);
  a.target_fd = (uint32_t) scope_fd;
  a.attach_bpf_fd = (uint32_t) prog_fd;
  a.attach_type = BPF_CGROUP_DEVICE;
  a.attach_flags = BPF_F_ALLOW_MULTI;
  if (sys_bpf (BPF_PROG_ATTACH, &a) < 0)
    return kist_error_make (err, errno, "attach the device program to the cgroup (BPF_PROG_ATTACH)");

  /* Replace: detach what was there before (an earlier allowlist). */
  for (uint32_t i = 0; i < n_old; i++)
    {
      union bpf_attr g;
      memset (&g, 0, sizeof g);
      g.prog_id = old[i];
      _cleanup_close_ int fd = sys_bpf (BPF_PROG_GET_FD_BY_ID, &g);
      if (fd < 0)
        return kist_error_make (err, errno, "get the old device program %" PRIu32, old[i]);
      memset (&a, 0, sizeof a);
      a.target_fd = (uint32_t) scope_fd;
      a.attach_bpf_fd = (uint32_t) fd;
      a.attach_type = BPF_CGROUP_DEVICE;
      if (sys_bpf (BPF_PROG_DETACH, &a) < 0)
        return kist_error_make (err, errno, "detach the old device program %" PRIu32, old[i]);
    }

  if (query_ids (scope_fd, now, KIST_ARRAY_SIZE (now), &n_now, err) < 0)
    return -1;
  if (n_now != 1 || now[0] != id)
    return kist_error_make (err, EIO,
                            "device program %" PRIu32 " is not the only one attached to the "
                            "cgroup after BPF_PROG_ATTACH (%" PRIu32 " attached)",
                            id, n_now);

  /* The next container may share it (its own read back decides). */
  if (!shared && state_rootfd >= 0)
    hint_write (state_rootfd, id);

  if (detail)
    {
      bool ours = last_built.insns == insns && last_built.n_insns == n;
      _cleanup_free_ char *rules = ours ? describe_rules (last_built.n_rules) : NULL;
      *detail = xasprintf ("bpf program %" PRIu32 " (%zu insns%s%s) attached%s%s; %s", id, n,
                           rules ? ": " : "", rules ? rules : "",
                           shared ? ", shared: loaded for another container, found alive by the "
                                    "id in " KIST_DEVICE_PROGRAM_HINT
                                  : "",
                           n_old ? ", replaced the previous one" : "",
                           dumped ? "read back: the kernel's copy is this program"
                                  : "the kernel does not show its instructions "
                                    "(kernel.kptr_restrict, no CAP_SYSLOG): only its id verified");
    }
  return 0;
}
