/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist fuzz targets: shared helpers (header-only, one copy per target). */
#ifndef KIST_FUZZ_H
#define KIST_FUZZ_H
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "error.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);
int LLVMFuzzerInitialize (int *argc, char ***argv);   /* optional */

/* A NUL-terminated copy of the input (the parsers' callers always hand them
 * a NUL-terminated buffer: kist_read_file_at and kist_sync_recv add one). */
static inline char *
fuzz_cstr (const uint8_t *data, size_t size)
{
  char *s = malloc (size + 1);
  if (s == NULL)
    abort ();
  if (size)
    memcpy (s, data, size);
  s[size] = '\0';
  return s;
}

/* An exact-size copy without a terminator, so that ASan catches a parser
 * that reads past len. */
static inline char *
fuzz_exact (const uint8_t *data, size_t size)
{
  char *s = malloc (size ? size : 1);
  if (s == NULL)
    abort ();
  if (size)
    memcpy (s, data, size);
  return s;
}

/* Every error must carry a message. */
static inline void
fuzz_error_check_free (struct kist_error **e)
{
  if (*e)
    {
      if ((*e)->msg == NULL)
        {
          fprintf (stderr, "kist_error without a message\n");
          abort ();
        }
      kist_error_free (*e);
    }
  *e = NULL;
}

/* A new private directory $TMPDIR/kist-fuzz-TAG.XXXXXX (path: its real
 * path, PATH_MAX bytes); returns an O_DIRECTORY fd of it, aborts on error. */
static inline int
fuzz_tempdir (const char *tag, char *path)
{
  const char *tmp = getenv ("TMPDIR");
  char templ[PATH_MAX];
  snprintf (templ, sizeof templ, "%s/kist-fuzz-%s.XXXXXX", tmp && *tmp ? tmp : "/tmp", tag);
  int fd = -1;
  if (mkdtemp (templ) == NULL || realpath (templ, path) == NULL
      || (fd = open (path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
    {
      perror ("fuzz: temp dir");
      abort ();
    }
  return fd;
}

#define FUZZ_ASSERT(cond)                                                                    \
  do                                                                                         \
    {                                                                                        \
      if (!(cond))                                                                           \
        {                                                                                    \
          fprintf (stderr, "%s:%d: fuzz invariant failed: %s\n", __FILE__, __LINE__, #cond); \
          abort ();                                                                          \
        }                                                                                    \
    }                                                                                        \
  while (0)

#endif
