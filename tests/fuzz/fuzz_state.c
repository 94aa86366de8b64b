/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fuzz target: state.json (kist_state_read; state.c has no public parser of
 * state text, so the input is written as state.json into a private temp dir
 * and read back the way every command reads it).  A state that reads is
 * then turned into the OCI state JSON (`kist state`), and must write with
 * kist_state_write and read again to the same state. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <unistd.h>

#include "fuzz.h"
#include "state.h"
#include "util.h"

static int dirfd_ = -1;
static char dir_[PATH_MAX];

static void
cleanup (void)
{
  if (dirfd_ < 0)
    return;
  unlinkat (dirfd_, "state.json", 0);
  close (dirfd_);
  dirfd_ = -1;
  rmdir (dir_);
}

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  dirfd_ = fuzz_tempdir ("state", dir_);
  atexit (cleanup);
  return 0;
}

static bool
str_eq (const char *a, const char *b)
{
  return (a == NULL && b == NULL) || (a && b && strcmp (a, b) == 0);
}

static void
put (const uint8_t *data, size_t size)
{
  int fd = openat (dirfd_, "state.json", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  FUZZ_ASSERT (fd >= 0);
  FUZZ_ASSERT (kist_write_all (fd, data, size) == 0);
  close (fd);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  if (size > 8u * 1024 * 1024)
    return 0;
  put (data, size);
  struct kist_state s;
  struct kist_error *e = NULL;
  if (kist_state_read (dirfd_, &s, &e) < 0)
    {
      FUZZ_ASSERT (e != NULL);
      FUZZ_ASSERT (s.id == NULL && s.bundle == NULL && s.annotations_json == NULL);
      fuzz_error_check_free (&e);
      return 0;
    }
  FUZZ_ASSERT (s.id != NULL && s.pid >= 0 && s.kist_pid >= 0);
  char *oci = kist_state_oci_json (&s, KIST_STATUS_STOPPED);
  FUZZ_ASSERT (oci != NULL);
  free (oci);

  /* A state that reads can be written again: its strings are UTF-8 (yajl
   * checked) and its annotations came from a JSON object. */
  if (kist_state_write (dirfd_, &s, &e) < 0)
    {
      fprintf (stderr, "a state that reads does not write: %s\n", e && e->msg ? e->msg : "?");
      abort ();
    }
  struct kist_state t;
  if (kist_state_read (dirfd_, &t, &e) < 0)
    {
      fprintf (stderr, "state written by kist_state_write does not read back: %s\n",
               e && e->msg ? e->msg : "?");
      abort ();
    }
  FUZZ_ASSERT (str_eq (s.id, t.id) && str_eq (s.bundle, t.bundle)
               && str_eq (s.rootfs, t.rootfs) && str_eq (s.created, t.created)
               && str_eq (s.owner, t.owner) && str_eq (s.cgroup_path, t.cgroup_path)
               && str_eq (s.cgroup_created, t.cgroup_created)
               && str_eq (s.oci_version, t.oci_version));
  FUZZ_ASSERT (s.pid == t.pid && s.pid_start_time == t.pid_start_time
               && s.started == t.started && s.deadline == t.deadline
               && s.kist_pid == t.kist_pid && s.kist_pid_start_time == t.kist_pid_start_time);
  FUZZ_ASSERT (str_eq (s.annotations_json, t.annotations_json));
  kist_state_clear (&t);
  fuzz_error_check_free (&e);
  kist_state_clear (&s);
  return 0;
}
