/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fuzz target: compiled-filter cache entries (kist_seccomp_cache_load):
 * files under STATE_ROOT/~seccomp-cache/ that a later run trusts once the
 * header and checksum match.  The input is written as the entry of the key
 * found in its own header (bytes 16..47), so the fuzzer gets past the key
 * check, and the harness fixes the checksum (bytes 48..79) unless its first
 * byte is 0, so the accepted-entry path is reached too (format 2: a 64-bit
 * checksum, then zeros).  A hit must hold exactly the instructions and the
 * meta part (flags, bits, listener texts, skipped list) of the file; every
 * entry is stored again (kist_seccomp_cache_store) and must then load
 * unchanged. */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/filter.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"
#include "seccomp.h"
#include "sha256.h"
#include "util.h"

#define HEADER 80
#define KEY_OFF 16
#define SUM_OFF 48
#define META 32 /* struct entry_meta, after the program */

static int rootfd_ = -1, cachefd_ = -1;
static char dir_[PATH_MAX];

static void
clear_cache (void)
{
  DIR *d = fdopendir (dup (cachefd_));
  FUZZ_ASSERT (d != NULL);
  rewinddir (d);
  struct dirent *de;
  while ((de = readdir (d)) != NULL)
    if (de->d_name[0] != '.')
      unlinkat (cachefd_, de->d_name, 0);
  closedir (d);
}

static void
cleanup (void)
{
  if (cachefd_ < 0)
    return;
  clear_cache ();
  close (cachefd_);
  unlinkat (rootfd_, KIST_SECCOMP_CACHE_DIR, AT_REMOVEDIR);
  close (rootfd_);
  rmdir (dir_);
  cachefd_ = rootfd_ = -1;
}

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  struct kist_error *e = NULL;
  rootfd_ = fuzz_tempdir ("cache", dir_);
  cachefd_ = kist_seccomp_cache_open (rootfd_, &e);
  if (cachefd_ < 0)
    {
      fprintf (stderr, "fuzz_seccomp_cache: %s\n", e->msg);
      abort ();
    }
  atexit (cleanup);
  return 0;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  if (size > HEADER + KIST_SECCOMP_MAX_INSNS * 8 + META + 4096)
    return 0;
  uint8_t *buf = (uint8_t *) fuzz_exact (data, size);
  uint8_t key[KIST_SHA256_LEN] = { 0 };
  if (size >= HEADER)
    {
      memcpy (key, buf + KEY_OFF, sizeof key);
      if (buf[SUM_OFF] != 0)
        {
          uint64_t sum = kist_seccomp_cache_checksum (key, buf + HEADER, size - HEADER);
          memcpy (buf + SUM_OFF, &sum, sizeof sum);
          memset (buf + SUM_OFF + sizeof sum, 0, HEADER - SUM_OFF - sizeof sum);
        }
    }
  char name[69];
  kist_seccomp_cache_name (key, name);
  int fd = openat (cachefd_, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  FUZZ_ASSERT (fd >= 0);
  FUZZ_ASSERT (kist_write_all (fd, buf, size) == 0);
  close (fd);

  struct sock_filter *insns = NULL;
  size_t n = 0;
  char *why = NULL;
  struct kist_seccomp_meta meta = { 0 };
  int hit = kist_seccomp_cache_load (cachefd_, key, &insns, &n, &meta, &why);
  if (hit == 1)
    {
      FUZZ_ASSERT (why == NULL && insns != NULL && meta.skipped != NULL);
      FUZZ_ASSERT (n > 0 && n <= KIST_SECCOMP_MAX_INSNS);
      size_t texts = (meta.listener_path ? strlen (meta.listener_path) : 0)
                     + (meta.listener_metadata ? strlen (meta.listener_metadata) : 0)
                     + strlen (meta.skipped);
      FUZZ_ASSERT (size == HEADER + n * 8 + META + texts);
      FUZZ_ASSERT (memcmp (insns, buf + HEADER, n * 8) == 0);
      FUZZ_ASSERT (!meta.notify || meta.listener_path != NULL);

      struct kist_error *e = NULL;
      FUZZ_ASSERT (kist_seccomp_cache_store (cachefd_, key, insns, n, &meta, &e) == 0);
      struct sock_filter *again = NULL;
      size_t m = 0;
      char *why2 = NULL;
      struct kist_seccomp_meta meta2 = { 0 };
      FUZZ_ASSERT (kist_seccomp_cache_load (cachefd_, key, &again, &m, &meta2, &why2) == 1);
      FUZZ_ASSERT (m == n && memcmp (again, insns, n * 8) == 0);
      FUZZ_ASSERT (meta2.flags == meta.flags && meta2.max_nr == meta.max_nr
                   && meta2.n_gated == meta.n_gated && meta2.enosys == meta.enosys
                   && meta2.notify == meta.notify && strcmp (meta2.skipped, meta.skipped) == 0);
      FUZZ_ASSERT ((meta2.listener_path == NULL) == (meta.listener_path == NULL));
      FUZZ_ASSERT (meta.listener_path == NULL
                   || strcmp (meta2.listener_path, meta.listener_path) == 0);
      FUZZ_ASSERT ((meta2.listener_metadata == NULL) == (meta.listener_metadata == NULL));
      kist_seccomp_meta_clear (&meta2);
      kist_seccomp_meta_clear (&meta);
      free (again);
      free (insns);
    }
  else
    {
      FUZZ_ASSERT (hit == 0 && why != NULL && insns == NULL);
      free (why);
    }
  clear_cache ();
  free (buf);
  return 0;
}
