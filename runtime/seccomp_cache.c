/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: the compiled seccomp filter cache, STATE_ROOT/~seccomp-cache/.
 *
 * One file per program, named by its key: the SHA-256 of the profile's
 * canonical form (seccomp_profile.c), which covers the rules, arches,
 * default action, flags, the ENOSYS bound and the kist and libseccomp
 * versions; or, for a built-in profile, its source key
 * (kist_seccomp_builtin_key), which covers everything the parse of the
 * built-in text depends on, so that a hit needs no parse at all.  A file
 * (format 2):
 *
 *   struct entry_header   magic "KISTBPF\n", format version, insn count,
 *                         the full key, the checksum (64 bits, then 24
 *                         zero bytes) over key + everything after the header
 *   struct sock_filter[]  the program
 *   struct entry_meta     load flags, ENOSYS bound, gated entries, enosys
 *                         and notify bits, the lengths of the three texts
 *   texts                 listenerPath, listenerMetadata, the detail's
 *                         list of skipped syscalls (no NULs)
 *
 * A hit needs: a regular file, owned by the euid, no group/other bits,
 * exactly the right size, magic, version, key, checksum and a consistent
 * meta part.  Anything else is a miss and the entry is rebuilt and replaced
 * (temp file + rename).  The directory is 0700 and must be owned by the
 * euid, else the cache is not used at all.
 *
 * The checksum is not SHA-256 (format 1 used it; it was 10% of a `kist
 * run`).  What it is for: telling a torn, truncated or bit-flipped file
 * from a good one.  The cache is trusted state, writable only by the euid;
 * whoever can write an entry can also write any checksum, SHA-256 or not
 * (there is no secret), so no checksum proves more than "this file is the
 * one kist wrote".  A 64-bit multiply-xor checksum misses an accidental
 * corruption with probability about 2^-64, as good for that purpose.  The
 * keys stay SHA-256: they name entries of profiles a user may choose, and
 * two profiles must not be made to share an entry. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "caps.h"
#include "seccomp.h"
#include "util.h"

#ifndef KIST_VERSION
#define KIST_VERSION "unknown"
#endif

#define ENTRY_MAGIC "KISTBPF\n"
#define ENTRY_VERSION 2
/* Bump when what the source key covers, or the parse it stands for, changes. */
#define SOURCE_FORMAT 2 /* 2: the dispatch shrunk (seccomp_shrink.c) */
/* Longest text kept in an entry's meta part. */
#define META_TEXT_MAX 65536u

struct entry_header
{
  char magic[8];
  uint32_t version;
  uint32_t n_insns;
  uint8_t key[KIST_SHA256_LEN];
  uint64_t sum;
  uint8_t sum_zero[24];
};

struct entry_meta
{
  uint32_t flags;
  int32_t max_nr;
  uint32_t n_gated;
  uint32_t bits; /* META_ENOSYS | META_NOTIFY */
  uint32_t len_path, len_metadata, len_skipped;
  uint32_t zero;
};
#define META_ENOSYS 1u
#define META_NOTIFY 2u

_Static_assert (sizeof (struct entry_header) == 80, "cache entry header layout");
_Static_assert (sizeof (struct entry_meta) == 32, "cache entry meta layout");
_Static_assert (sizeof (struct sock_filter) == 8, "sock_filter layout");

void
kist_seccomp_cache_name (const uint8_t key[KIST_SHA256_LEN], char name[69])
{
  kist_sha256_hex (key, name);
  memcpy (name + 2 * KIST_SHA256_LEN, ".bpf", 5);
}

void
kist_seccomp_meta_clear (struct kist_seccomp_meta *m)
{
  free (m->listener_path);
  free (m->listener_metadata);
  free (m->skipped);
  memset (m, 0, sizeof *m);
}

/* 64 bits of p[0..len), 8 bytes a step (multiply-xor, splitmix64's mixer
 * at the end): for telling files and texts apart, not against an adversary. */
static uint64_t
fingerprint (uint64_t h, const void *p, size_t len)
{
  const uint8_t *b = p;
  h ^= (uint64_t) len * 0x9e3779b97f4a7c15ULL;
  for (; len >= 8; b += 8, len -= 8)
    {
      uint64_t w;
      memcpy (&w, b, 8);
      h = (h ^ (w * 0xbf58476d1ce4e5b9ULL)) * 0x94d049bb133111ebULL;
      h ^= h >> 29;
    }
  uint64_t t = 0;
  memcpy (&t, b, len);
  h = (h ^ (t * 0xbf58476d1ce4e5b9ULL) ^ len) * 0x94d049bb133111ebULL;
  h ^= h >> 31;
  h *= 0xbf58476d1ce4e5b9ULL;
  return h ^ (h >> 32);
}

uint64_t
kist_seccomp_cache_checksum (const uint8_t key[KIST_SHA256_LEN], const void *body, size_t len)
{
  return fingerprint (fingerprint (0x4b495354425046ULL, key, KIST_SHA256_LEN), body, len);
}

void
kist_seccomp_builtin_key (const char *name, const void *json, size_t len,
                          const struct kist_seccomp_env *env, uint8_t key[KIST_SHA256_LEN])
{
  /* The bounding set exactly as the parser reads it: known names only. */
  uint64_t bounding = 0;
  if (env && env->bounding)
    for (char *const *c = env->bounding; *c; c++)
      {
        int n = kist_cap_from_name (*c);
        if (n >= 0 && n < 64)
          bounding |= 1ULL << n;
      }
  struct utsname u;
  const char *kernel = env && env->kernel ? env->kernel : uname (&u) == 0 ? u.release : "?";
  uint32_t native = env && env->arch ? env->arch : seccomp_arch_native ();
  const struct scmp_version *v = seccomp_version ();
  char buf[512];
  int n = snprintf (buf, sizeof buf,
                    "kist-seccomp-source %d entry %d\nkist %s\nlibseccomp %u.%u.%u\n"
                    "native 0x%08" PRIx32 "\nkernel %s\nbounding 0x%016" PRIx64
                    "\nbuiltin %s %zu %016" PRIx64 "\n",
                    SOURCE_FORMAT, ENTRY_VERSION, KIST_VERSION, v->major, v->minor, v->micro,
                    native, kernel, bounding, name, len, fingerprint (0, json, len));
  struct kist_sha256 s;
  kist_sha256_init (&s);
  /* A name too long for buf: the rest of it is hashed too. */
  kist_sha256_update (&s, buf, n < (int) sizeof buf ? (size_t) n : sizeof buf - 1);
  if (n >= (int) sizeof buf)
    kist_sha256_update (&s, name, strlen (name));
  kist_sha256_final (&s, key);
}

int
kist_seccomp_cache_open (int state_rootfd, struct kist_error **err)
{
  /* Open first: the dir exists on every run but the first (a mkdir would
   * fail with EEXIST each time). */
  _cleanup_close_ int fd = openat (state_rootfd, KIST_SECCOMP_CACHE_DIR,
                                   O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT)
    {
      if (mkdirat (state_rootfd, KIST_SECCOMP_CACHE_DIR, 0700) < 0 && errno != EEXIST)
        return kist_error_make (err, errno, "seccomp cache: create `%s` in the state root",
                                KIST_SECCOMP_CACHE_DIR);
      fd = openat (state_rootfd, KIST_SECCOMP_CACHE_DIR,
                   O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    }
  if (fd < 0)
    return kist_error_make (err, errno, "seccomp cache: open `%s` in the state root (it must be a "
                            "directory, not a symlink)", KIST_SECCOMP_CACHE_DIR);
  struct stat st;
  if (fstat (fd, &st) < 0)
    return kist_error_make (err, errno, "seccomp cache: fstat");
  if (st.st_uid != geteuid ())
    return kist_error_make (err, EPERM,
                            "seccomp cache: `%s` in the state root is owned by uid %u, not by "
                            "uid %u; remove it",
                            KIST_SECCOMP_CACHE_DIR, (unsigned) st.st_uid, (unsigned) geteuid ());
  if ((st.st_mode & 07777) != 0700 && fchmod (fd, 0700) < 0)
    return kist_error_make (err, errno, "seccomp cache: chmod 0700");
  return steal_fd (&fd);
}

/* A copy of n bytes of t, NUL-terminated. */
static char *
text_dup (const uint8_t *t, size_t n)
{
  char *s = xmalloc (n + 1);
  memcpy (s, t, n);
  s[n] = '\0';
  return s;
}

/* The meta part m of an entry (its texts at t, avail bytes) into *out. */
static const char *
read_meta (const struct entry_meta *m, const uint8_t *t, size_t avail,
           struct kist_seccomp_meta *out)
{
  size_t lens[3] = { m->len_path, m->len_metadata, m->len_skipped };
  if (m->zero != 0 || (m->bits & ~(META_ENOSYS | META_NOTIFY)) != 0)
    return "corrupt: unknown bits in the meta part";
  if (lens[0] > META_TEXT_MAX || lens[1] > META_TEXT_MAX || lens[2] > META_TEXT_MAX
      || avail != lens[0] + lens[1] + lens[2])
    return "corrupt: size does not match the instruction count";
  if (memchr (t, '\0', avail) != NULL)
    return "corrupt: a NUL in the meta part";
  if ((m->bits & META_NOTIFY) && lens[0] == 0)
    return "corrupt: notify without a listener path";
  if (lens[1] && !lens[0])
    return "corrupt: listener metadata without a listener path";
  if (out == NULL)
    return NULL;
  out->flags = m->flags;
  out->max_nr = m->max_nr;
  out->n_gated = m->n_gated;
  out->enosys = m->bits & META_ENOSYS;
  out->notify = m->bits & META_NOTIFY;
  out->listener_path = lens[0] ? text_dup (t, lens[0]) : NULL;
  out->listener_metadata = lens[1] ? text_dup (t + lens[0], lens[1]) : NULL;
  out->skipped = text_dup (t + lens[0] + lens[1], lens[2]);
  return NULL;
}

int
kist_seccomp_cache_load (int cachefd, const uint8_t key[KIST_SHA256_LEN],
                         struct sock_filter **insns, size_t *n_insns,
                         struct kist_seccomp_meta *meta, char **why)
{
  char name[69];
  kist_seccomp_cache_name (key, name);
  *why = NULL;
  _cleanup_close_ int fd = openat (cachefd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    {
      *why = errno == ENOENT ? xstrdup ("absent") : xasprintf ("unreadable: %s", strerror (errno));
      return 0;
    }
  struct stat st;
  if (fstat (fd, &st) < 0)
    {
      *why = xasprintf ("unreadable: %s", strerror (errno));
      return 0;
    }
  if (!S_ISREG (st.st_mode) || st.st_uid != geteuid () || (st.st_mode & 077))
    {
      *why = xasprintf ("foreign: not a regular file of uid %u with mode 0600",
                        (unsigned) geteuid ());
      return 0;
    }
  size_t max = sizeof (struct entry_header) + KIST_SECCOMP_MAX_INSNS * sizeof (struct sock_filter)
               + sizeof (struct entry_meta) + 3 * META_TEXT_MAX;
  if (st.st_size < (off_t) sizeof (struct entry_header) || st.st_size > (off_t) max)
    {
      *why = xasprintf ("corrupt: %lld bytes", (long long) st.st_size);
      return 0;
    }
  size_t size = (size_t) st.st_size;
  _cleanup_free_ uint8_t *buf = xmalloc (size);
  ssize_t got = kist_read_all (fd, buf, size);
  if (got != (ssize_t) size)
    {
      *why = xstrdup ("corrupt: short read");
      return 0;
    }
  struct entry_header h;
  memcpy (&h, buf, sizeof h);
  size_t n = h.n_insns;
  size_t fixed = sizeof h + n * sizeof (struct sock_filter) + sizeof (struct entry_meta);
  static const uint8_t zero[sizeof h.sum_zero];
  if (memcmp (h.magic, ENTRY_MAGIC, sizeof h.magic) != 0)
    *why = xstrdup ("corrupt: bad magic");
  else if (h.version != ENTRY_VERSION)
    *why = xasprintf ("foreign: format version %u", h.version);
  else if (n == 0 || n > KIST_SECCOMP_MAX_INSNS || size < fixed)
    *why = xstrdup ("corrupt: size does not match the instruction count");
  else if (memcmp (h.key, key, KIST_SHA256_LEN) != 0)
    *why = xstrdup ("foreign: the key in the file is another profile's");
  else if (memcmp (h.sum_zero, zero, sizeof zero) != 0
           || kist_seccomp_cache_checksum (key, buf + sizeof h, size - sizeof h) != h.sum)
    *why = xstrdup ("corrupt: checksum mismatch");
  if (*why)
    return 0;
  struct entry_meta m;
  memcpy (&m, buf + fixed - sizeof m, sizeof m);
  struct kist_seccomp_meta got_meta = { 0 };
  const char *bad = read_meta (&m, buf + fixed, size - fixed, meta ? &got_meta : NULL);
  if (bad)
    {
      *why = xstrdup (bad);
      return 0;
    }
  struct sock_filter *prog = xcalloc (n, sizeof *prog);
  memcpy (prog, buf + sizeof h, n * sizeof *prog);
  if (meta)
    *meta = got_meta;
  *insns = prog;
  *n_insns = n;
  return 1;
}

static size_t
text_len (const char *s)
{
  return s ? strlen (s) : 0;
}

int
kist_seccomp_cache_store (int cachefd, const uint8_t key[KIST_SHA256_LEN],
                          const struct sock_filter *insns, size_t n_insns,
                          const struct kist_seccomp_meta *meta, struct kist_error **err)
{
  if (n_insns == 0 || n_insns > KIST_SECCOMP_MAX_INSNS)
    return kist_error_make (err, EINVAL, "seccomp cache: %zu instructions", n_insns);
  static const struct kist_seccomp_meta none = { 0 };
  if (meta == NULL)
    meta = &none;
  const char *texts[3] = { meta->listener_path, meta->listener_metadata, meta->skipped };
  struct entry_meta m = { .flags = meta->flags,
                          .max_nr = meta->max_nr,
                          .n_gated = meta->n_gated,
                          .bits = (meta->enosys ? META_ENOSYS : 0)
                                  | (meta->notify ? META_NOTIFY : 0),
                          .len_path = (uint32_t) text_len (texts[0]),
                          .len_metadata = (uint32_t) text_len (texts[1]),
                          .len_skipped = (uint32_t) text_len (texts[2]) };
  if (m.len_path > META_TEXT_MAX || m.len_metadata > META_TEXT_MAX
      || m.len_skipped > META_TEXT_MAX)
    return kist_error_make (err, E2BIG, "seccomp cache: listener path, metadata or skipped "
                            "list longer than %u bytes; not cached", META_TEXT_MAX);
  struct entry_header h = { .version = ENTRY_VERSION, .n_insns = (uint32_t) n_insns };
  memcpy (h.magic, ENTRY_MAGIC, sizeof h.magic);
  memcpy (h.key, key, KIST_SHA256_LEN);
  size_t size = sizeof h + n_insns * sizeof *insns + sizeof m + m.len_path + m.len_metadata
                + m.len_skipped;
  _cleanup_free_ uint8_t *buf = xmalloc (size);
  uint8_t *w = buf + sizeof h;
  memcpy (w, insns, n_insns * sizeof *insns);
  w += n_insns * sizeof *insns;
  memcpy (w, &m, sizeof m);
  w += sizeof m;
  for (int i = 0; i < 3; i++)
    if (texts[i])
      w = mempcpy (w, texts[i], strlen (texts[i]));
  h.sum = kist_seccomp_cache_checksum (key, buf + sizeof h, size - sizeof h);
  memcpy (buf, &h, sizeof h);
  char name[69];
  kist_seccomp_cache_name (key, name);
  if (kist_write_file_atomic (cachefd, name, buf, size, 0600, err) < 0)
    return kist_error_wrap (err, "seccomp cache");
  return 0;
}
