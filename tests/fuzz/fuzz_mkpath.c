/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fuzz target: resolving and creating paths inside a container root with
 * symlinks the image controls (kist_resolve_mkpath, used for every mount
 * target, masked path and device node).
 *
 * The input is text, one command per line, that builds a root in a private
 * temp dir and then asks for one path:
 *   d NAME          mkdir NAME        (NAME: relative, no empty/./.. part)
 *   f NAME          create an empty file NAME
 *   l NAME TARGET   symlink NAME -> TARGET (TARGET anything: absolute, ..)
 *   p PATH          kist_resolve_mkpath (root, PATH, KIST_MKPATH_DIR, 0755)
 *   P PATH          the same with KIST_MKPATH_FILE, 0644
 * The last p/P line is used (default: p /).  Checked: the fd returned is
 * the root or below it, and nothing appeared outside the root (a sibling
 * directory "outside" stays empty).  Each run starts from an empty root. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"
#include "resolve.h"
#include "util.h"

static char base_[PATH_MAX], root_[PATH_MAX + 8];
static int basefd_ = -1;

static void
rm_tree_at (int dirfd, const char *name)
{
  int fd = openat (dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    {
      unlinkat (dirfd, name, 0);
      return;
    }
  DIR *d = fdopendir (fd);
  FUZZ_ASSERT (d != NULL);
  struct dirent *de;
  while ((de = readdir (d)) != NULL)
    {
      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
        continue;
      if (unlinkat (fd, de->d_name, 0) < 0)
        rm_tree_at (fd, de->d_name);
    }
  closedir (d);
  FUZZ_ASSERT (unlinkat (dirfd, name, AT_REMOVEDIR) == 0);
}

static void
cleanup (void)
{
  if (basefd_ < 0)
    return;
  rm_tree_at (basefd_, "root");
  rm_tree_at (basefd_, "outside");
  close (basefd_);
  basefd_ = -1;
  rmdir (base_);
}

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  basefd_ = fuzz_tempdir ("mkpath", base_);
  snprintf (root_, sizeof root_, "%s/root", base_);
  FUZZ_ASSERT (mkdirat (basefd_, "outside", 0755) == 0);
  atexit (cleanup);
  return 0;
}

/* Open the parent of NAME below rootfd with plain O_NOFOLLOW steps (only
 * this harness made the directories); *last gets the final component. */
static int
open_parent (int rootfd, char *name, char **last)
{
  int fd = dup (rootfd);
  char *save = NULL, *comp = strtok_r (name, "/", &save);
  if (comp == NULL)
    {
      close (fd);
      return -1;
    }
  for (;;)
    {
      if (strcmp (comp, ".") == 0 || strcmp (comp, "..") == 0)
        {
          close (fd);
          return -1;
        }
      char *next = strtok_r (NULL, "/", &save);
      if (next == NULL)
        {
          *last = comp;
          return fd;
        }
      int sub = openat (fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      close (fd);
      if (sub < 0)
        return -1;
      fd = sub;
      comp = next;
    }
}

static bool
dir_is_empty (int dirfd, const char *name, int *n_expected)
{
  int fd = openat (dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  FUZZ_ASSERT (fd >= 0);
  DIR *d = fdopendir (fd);
  FUZZ_ASSERT (d != NULL);
  int n = 0;
  struct dirent *de;
  while ((de = readdir (d)) != NULL)
    if (strcmp (de->d_name, ".") != 0 && strcmp (de->d_name, "..") != 0)
      n++;
  closedir (d);
  if (n_expected)
    return n == *n_expected;
  return n == 0;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  if (size > 4096)
    return 0;
  char *text = fuzz_cstr (data, size);
  FUZZ_ASSERT (mkdirat (basefd_, "root", 0755) == 0);
  int rootfd = openat (basefd_, "root", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  FUZZ_ASSERT (rootfd >= 0);

  const char *want = "/";
  enum kist_mkpath_kind kind = KIST_MKPATH_DIR;
  char *save = NULL;
  for (char *line = strtok_r (text, "\n", &save); line; line = strtok_r (NULL, "\n", &save))
    {
      if (line[0] == '\0' || line[1] != ' ')
        continue;
      char *arg = line + 2, *last = NULL;
      int pfd;
      switch (line[0])
        {
        case 'p':
        case 'P':
          want = arg;
          kind = line[0] == 'p' ? KIST_MKPATH_DIR : KIST_MKPATH_FILE;
          break;
        case 'd':
        case 'f':
          if ((pfd = open_parent (rootfd, arg, &last)) < 0)
            break;
          if (line[0] == 'd')
            mkdirat (pfd, last, 0755);
          else
            {
              int fd = openat (pfd, last, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                               0644);
              if (fd >= 0)
                close (fd);
            }
          close (pfd);
          break;
        case 'l':
          {
            char *target = strchr (arg, ' ');
            if (target == NULL)
              break;
            *target++ = '\0';
            if ((pfd = open_parent (rootfd, arg, &last)) < 0)
              break;
            symlinkat (target, pfd, last);
            close (pfd);
            break;
          }
        default:
          break;
        }
    }

  struct kist_error *e = NULL;
  int fd = kist_resolve_mkpath (rootfd, want, kind, kind == KIST_MKPATH_DIR ? 0755 : 0644, &e);
  if (fd >= 0)
    {
      FUZZ_ASSERT (e == NULL);
      char link[64], got[PATH_MAX + 1];
      snprintf (link, sizeof link, "/proc/self/fd/%d", fd);
      ssize_t n = readlink (link, got, sizeof got - 1);
      FUZZ_ASSERT (n > 0);
      got[n] = '\0';
      size_t rl = strlen (root_);
      if (!(strncmp (got, root_, rl) == 0 && (got[rl] == '\0' || got[rl] == '/')))
        {
          fprintf (stderr, "kist_resolve_mkpath(`%s`) returned an fd outside the root: %s\n",
                   want, got);
          abort ();
        }
      struct stat st;
      FUZZ_ASSERT (fstat (fd, &st) == 0);
      FUZZ_ASSERT (kind == KIST_MKPATH_DIR ? S_ISDIR (st.st_mode) : !S_ISDIR (st.st_mode));
      close (fd);
    }
  else
    FUZZ_ASSERT (e != NULL);
  fuzz_error_check_free (&e);

  if (!dir_is_empty (basefd_, "outside", NULL))
    {
      fprintf (stderr, "kist_resolve_mkpath(`%s`) created something outside the root\n", want);
      abort ();
    }
  int two = 2;
  FUZZ_ASSERT (dir_is_empty (AT_FDCWD, base_, &two));
  close (rootfd);
  rm_tree_at (basefd_, "root");
  free (text);
  return 0;
}
