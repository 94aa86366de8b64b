/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: the compiled seccomp filter cache, STATE_ROOT/~seccomp-cache/.
 *
 * One file per program, named by the SHA-256 of the profile's canonical
 * form (seccomp_profile.c), which covers the rules, arches, default action,
 * flags, the ENOSYS bound and the kist and libseccomp versions.  A file:
 *
 *   struct entry_header   magic "KISTBPF\n", format version, insn count,
 *                         the full key, SHA-256 over key + program
 *   struct sock_filter[]  the program
 *
 * A hit needs: a regular file, owned by the euid, no group/other bits,
 * exactly the right size, magic, version, key and checksum.  Anything else
 * is a miss and the entry is rebuilt and replaced (temp file + rename).  The
 * directory is 0700 and must be owned by the euid, else the cache is not
 * used at all.  Entries are never trusted for more than what the checksum
 * proves: the loaded program is still the kernel-verified BPF of a profile
 * with that exact canonical form. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "seccomp.h"
#include "util.h"

#define ENTRY_MAGIC "KISTBPF\n"
#define ENTRY_VERSION 1

struct entry_header
{
  char magic[8];
  uint32_t version;
  uint32_t n_insns;
  uint8_t key[KIST_SHA256_LEN];
  uint8_t sum[KIST_SHA256_LEN];
};

_Static_assert (sizeof (struct entry_header) == 80, "cache entry header layout");
_Static_assert (sizeof (struct sock_filter) == 8, "sock_filter layout");

void
kist_seccomp_cache_name (const uint8_t key[KIST_SHA256_LEN], char name[69])
{
  kist_sha256_hex (key, name);
  memcpy (name + 2 * KIST_SHA256_LEN, ".bpf", 5);
}

static void
checksum (const uint8_t key[KIST_SHA256_LEN], const struct sock_filter *insns, size_t n,
          uint8_t out[KIST_SHA256_LEN])
{
  struct kist_sha256 s;
  kist_sha256_init (&s);
  kist_sha256_update (&s, key, KIST_SHA256_LEN);
  kist_sha256_update (&s, insns, n * sizeof *insns);
  kist_sha256_final (&s, out);
}

int
kist_seccomp_cache_open (int state_rootfd, struct kist_error **err)
{
  if (mkdirat (state_rootfd, KIST_SECCOMP_CACHE_DIR, 0700) < 0 && errno != EEXIST)
    return kist_error_make (err, errno, "seccomp cache: create `%s` in the state root",
                            KIST_SECCOMP_CACHE_DIR);
  _cleanup_close_ int fd = openat (state_rootfd, KIST_SECCOMP_CACHE_DIR,
                                   O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
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

int
kist_seccomp_cache_load (int cachefd, const uint8_t key[KIST_SHA256_LEN],
                         struct sock_filter **insns, size_t *n_insns, char **why)
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
  size_t max = sizeof (struct entry_header) + KIST_SECCOMP_MAX_INSNS * sizeof (struct sock_filter);
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
  if (memcmp (h.magic, ENTRY_MAGIC, sizeof h.magic) != 0)
    *why = xstrdup ("corrupt: bad magic");
  else if (h.version != ENTRY_VERSION)
    *why = xasprintf ("foreign: format version %u", h.version);
  else if (n == 0 || n > KIST_SECCOMP_MAX_INSNS
           || size != sizeof h + n * sizeof (struct sock_filter))
    *why = xstrdup ("corrupt: size does not match the instruction count");
  else if (memcmp (h.key, key, KIST_SHA256_LEN) != 0)
    *why = xstrdup ("foreign: the key in the file is another profile's");
  if (*why)
    return 0;
  struct sock_filter *prog = xcalloc (n, sizeof *prog);
  memcpy (prog, buf + sizeof h, n * sizeof *prog);
  uint8_t sum[KIST_SHA256_LEN];
  checksum (key, prog, n, sum);
  if (memcmp (sum, h.sum, sizeof sum) != 0)
    {
      free (prog);
      *why = xstrdup ("corrupt: checksum mismatch");
      return 0;
    }
  *insns = prog;
  *n_insns = n;
  return 1;
}

int
kist_seccomp_cache_store (int cachefd, const uint8_t key[KIST_SHA256_LEN],
                          const struct sock_filter *insns, size_t n_insns, struct kist_error **err)
{
  if (n_insns == 0 || n_insns > KIST_SECCOMP_MAX_INSNS)
    return kist_error_make (err, EINVAL, "seccomp cache: %zu instructions", n_insns);
  struct entry_header h = { .version = ENTRY_VERSION, .n_insns = (uint32_t) n_insns };
  memcpy (h.magic, ENTRY_MAGIC, sizeof h.magic);
  memcpy (h.key, key, KIST_SHA256_LEN);
  checksum (key, insns, n_insns, h.sum);
  size_t size = sizeof h + n_insns * sizeof *insns;
  _cleanup_free_ uint8_t *buf = xmalloc (size);
  memcpy (buf, &h, sizeof h);
  memcpy (buf + sizeof h, insns, n_insns * sizeof *insns);
  char name[69];
  kist_seccomp_cache_name (key, name);
  if (kist_write_file_atomic (cachefd, name, buf, size, 0600, err) < 0)
    return kist_error_wrap (err, "seccomp cache");
  return 0;
}
