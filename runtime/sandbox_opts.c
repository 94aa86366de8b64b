/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: `kist sandbox`: bwrap's --file, --chmod and --dev, and the --help
 * text (see sandbox.h).  The entries themselves are made in sandbox.c
 * (extra_entries), with the empty root. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox.h"
#include "util.h"

/* ------------------------------------------------------------- paths */

/* The next component of *p ("//" and "." skipped); its length, 0 at the end. */
static size_t
next_component (const char **p, const char **name)
{
  for (;;)
    {
      while (**p == '/')
        (*p)++;
      const char *s = *p;
      while (**p && **p != '/')
        (*p)++;
      size_t n = (size_t) (*p - s);
      if (n == 1 && s[0] == '.')
        continue;
      *name = s;
      return n;
    }
}

bool
kist_sandbox_path_under (const char *path, const char *top)
{
  const char *p = path, *t = top, *pn, *tn;
  for (;;)
    {
      size_t tl = next_component (&t, &tn);
      if (tl == 0)
        return true;
      size_t pl = next_component (&p, &pn);
      if (pl != tl || memcmp (pn, tn, tl) != 0)
        return false;
    }
}

static bool
same_path (const char *a, const char *b)
{
  return kist_sandbox_path_under (a, b) && kist_sandbox_path_under (b, a);
}

static bool
valid_entry_path (const char *d)
{
  if (d[0] != '/')
    return false;
  const char *p = d, *name;
  size_t n, count = 0;
  while ((n = next_component (&p, &name)) != 0)
    {
      if (n == 2 && name[0] == '.' && name[1] == '.')
        return false;
      count++;
    }
  return count > 0;
}

/* ------------------------------------------------------------ options */

int
kist_sandbox_add_file (struct kist_sandbox_opts *o, const char *fdarg, const char *dest,
                       struct kist_error **err)
{
  int fd;
  if (kist_parse_int (fdarg, &fd) < 0 || fd < 0)
    return kist_error_make (err, EINVAL, "--file `%s` `%s`: expected FD DEST, FD a file "
                                         "descriptor number",
                            fdarg, dest);
  if (fd == 1 || fd == 2)
    return kist_error_make (err, EINVAL,
                            "--file %d `%s`: fd %d is the sandbox's standard %s, not data to "
                            "read: give the data on another fd (e.g. `3< FILE`)",
                            fd, dest, fd, fd == 1 ? "output" : "error");
  int fl = fcntl (fd, F_GETFD);
  if (fl < 0)
    return kist_error_make (err, EBADF,
                            "--file %d `%s`: fd %d is not open (open it for kist, e.g. `%d< FILE`)",
                            fd, dest, fd, fd);
  /* What kist opens itself (--log FILE, ...) is close-on-exec; an fd it was
   * given survived an exec. */
  if (fl & FD_CLOEXEC)
    return kist_error_make (err, EBADF,
                            "--file %d `%s`: fd %d is one kist opened itself, not one it was given",
                            fd, dest, fd);
  if (!valid_entry_path (dest))
    return kist_error_make (err, EINVAL,
                            "--file %d `%s`: expected an absolute path other than / without `..`",
                            fd, dest);
  for (size_t i = 0; i < o->n_files; i++)
    if (o->files[i].fd == fd)
      return kist_error_make (err, EINVAL,
                              "--file %d `%s`: fd %d is already the data of --file %d `%s` (it is "
                              "read until EOF once)",
                              fd, dest, fd, fd, o->files[i].dest);
  o->files = xrealloc (o->files, (o->n_files + 1) * sizeof *o->files);
  o->files[o->n_files++] = (struct kist_sandbox_file){ .fd = fd, .dest = xstrdup (dest) };
  return 0;
}

/* Did an earlier --dir or --file make path, or is it a directory kist made
 * above an earlier --dir, --file or --symlink? */
static bool
made_entry (const struct kist_sandbox_opts *o, const char *path)
{
  for (size_t i = 0; i < o->n_dirs; i++)
    if (kist_sandbox_path_under (o->dirs[i], path))
      return true;
  for (size_t i = 0; i < o->n_files; i++)
    if (kist_sandbox_path_under (o->files[i].dest, path))
      return true;
  for (size_t i = 0; i < o->n_links; i++)
    if (kist_sandbox_path_under (o->links[2 * i + 1], path)
        && !same_path (o->links[2 * i + 1], path))
      return true;
  return false;
}

int
kist_sandbox_add_chmod (struct kist_sandbox_opts *o, const char *octal, const char *path,
                        struct kist_error **err)
{
  char *end = NULL;
  errno = 0;
  unsigned long mode = strtoul (octal, &end, 8);
  if (octal[0] < '0' || octal[0] > '7' || errno || *end || mode > 07777)
    return kist_error_make (err, EINVAL, "--chmod `%s` `%s`: expected OCTAL PATH, OCTAL such as "
                                         "0755 (at most 07777)",
                            octal, path);
  if (mode & (S_ISUID | S_ISGID))
    return kist_error_make (err, EINVAL,
                            "--chmod %s `%s`: no setuid or setgid bit (the sandbox runs with "
                            "no_new_privileges, which ignores them)",
                            octal, path);
  if (!valid_entry_path (path))
    return kist_error_make (err, EINVAL,
                            "--chmod %s `%s`: expected an absolute path other than / without `..`",
                            octal, path);
  for (size_t i = 0; i < o->n_links; i++)
    if (same_path (o->links[2 * i + 1], path))
      return kist_error_make (err, EINVAL,
                              "--chmod %s `%s`: a --symlink made it, and kist never follows a "
                              "symlink: --chmod its target's entry instead",
                              octal, path);
  if (!made_entry (o, path))
    return kist_error_make (err, ENOENT,
                            "--chmod %s `%s`: only on an entry kist made in the empty root, by an "
                            "earlier --dir or --file (or a directory above one, or above a "
                            "--symlink); put --chmod after the option that makes `%s`",
                            octal, path, path);
  o->chmods = xrealloc (o->chmods, (o->n_chmods + 1) * sizeof *o->chmods);
  o->chmods[o->n_chmods++] = (struct kist_sandbox_chmod){ .mode = (mode_t) mode,
                                                          .path = xstrdup (path) };
  return 0;
}

int
kist_sandbox_add_dev (struct kist_sandbox_opts *o, const char *dest, struct kist_error **err)
{
  (void) o;
  if (dest[0] == '/' && same_path (dest, "/dev"))
    return 0;   /* every sandbox has it (sandbox.c, g_mounts, and dev.c's nodes) */
  return kist_error_make (err, EINVAL,
                          "--dev `%s`: only /dev: every sandbox has bwrap's minimal /dev there "
                          "(null, zero, full, random, urandom, tty, pts, ptmx, shm, fd, stdin, "
                          "stdout, stderr); a second one elsewhere is not supported",
                          dest);
}

/* The mount points of the sandbox that --file and --chmod must stay out of
 * (the mounts of g_mounts in sandbox.c: keep both in step).  NULL when path
 * is under none; else the mount's destination and, in *what, its option. */
static const char *
covering_mount (const struct kist_sandbox_opts *o, const char *path, bool ancestor_too,
                const char **what)
{
  static const char *const fixed[] = { "/proc", "/dev", "/tmp" };
  for (size_t i = 0; i < KIST_ARRAY_SIZE (fixed); i++)
    if (kist_sandbox_path_under (path, fixed[i])
        || (ancestor_too && kist_sandbox_path_under (fixed[i], path)))
      return *what = "a mount every sandbox has", fixed[i];
  for (size_t i = 0; i < o->n_binds; i++)
    if (kist_sandbox_path_under (path, o->binds[i].dest)
        || (ancestor_too && kist_sandbox_path_under (o->binds[i].dest, path)))
      return *what = o->binds[i].rw ? "--rw" : "--ro", o->binds[i].dest;
  for (size_t i = 0; i < o->n_tmpfs; i++)
    if (kist_sandbox_path_under (path, o->tmpfs[i].dest)
        || (ancestor_too && kist_sandbox_path_under (o->tmpfs[i].dest, path)))
      return *what = "--tmpfs", o->tmpfs[i].dest;
  if (kist_sandbox_path_under (path, o->workdir)
      || (ancestor_too && kist_sandbox_path_under (o->workdir, path)))
    return *what = "the workdir", o->workdir;
  return NULL;
}

int
kist_sandbox_check_entries (const struct kist_sandbox_opts *o, struct kist_error **err)
{
  const char *what = NULL, *m;
  if (o->rootfs && (o->n_links || o->n_dirs || o->n_files || o->n_chmods))
    return kist_error_make (err, EINVAL,
                            "--symlink, --dir, --file and --chmod make entries in the empty root "
                            "kist makes: not with --rootfs (make them in that directory instead)");
  for (size_t i = 0; i < o->n_files; i++)
    if ((m = covering_mount (o, o->files[i].dest, true, &what)) != NULL)
      return kist_error_make (err, EINVAL,
                              "--file %d `%s`: the mount at `%s` (%s) %s: put the file outside "
                              "every mount of the sandbox",
                              o->files[i].fd, o->files[i].dest, m, what,
                              kist_sandbox_path_under (o->files[i].dest, m)
                                  ? "would hide it"
                                  : "needs a directory there");
  for (size_t i = 0; i < o->n_chmods; i++)
    if ((m = covering_mount (o, o->chmods[i].path, false, &what)) != NULL)
      return kist_error_make (err, EINVAL,
                              "--chmod %04o `%s`: the mount at `%s` (%s) hides the entry kist "
                              "made there: kist changes only entries of the empty root",
                              (unsigned) o->chmods[i].mode, o->chmods[i].path, m, what);
  return 0;
}

/* ------------------------------------------- entries of the empty root */

/* The owner on the host of what kist makes for the sandbox user: as root
 * the inside uid (shifted by 100000 with --userns); rootless the caller,
 * to whom the inside uid is mapped: nothing to change (-1). */
void
kist_sandbox_owner (const struct kist_sandbox_opts *o, uid_t *u, gid_t *g)
{
  bool root = geteuid () == 0;
  *u = root ? o->uid + (o->userns ? 100000u : 0u) : (uid_t) -1;
  *g = root ? o->gid + (o->userns ? 100000u : 0u) : (gid_t) -1;
}

/* mkdir dirfd/name for the empty root: mode 0755 whatever the umask, owned
 * by the sandbox user (as bwrap's); an existing entry is left as it is.
 * -1 with errno on failure. */
static int
make_dir (int dirfd, const char *name, const struct kist_sandbox_opts *o)
{
  uid_t u;
  gid_t g;
  if (mkdirat (dirfd, name, 0755) < 0)
    return errno == EEXIST ? 0 : -1;
  kist_sandbox_owner (o, &u, &g);
  if (fchmodat (dirfd, name, 0755, 0) < 0 || fchownat (dirfd, name, u, g, AT_SYMLINK_NOFOLLOW) < 0)
    return -1;
  return 0;
}

/* The parent of path in the empty root (every component made as a
 * directory of mode 0755, never followed if it is a symlink: an earlier
 * --symlink must not lead out of the root); *leaf is path's last name. */
static int
open_parent (int rootfs_fd, const char *path, const char **leaf, const char *flag,
             const struct kist_sandbox_opts *o, struct kist_error **err)
{
  _cleanup_free_ char *copy = xstrdup (path);
  int fd = fcntl (rootfs_fd, F_DUPFD_CLOEXEC, 0);
  if (fd < 0)
    return kist_error_make (err, errno, "dup the sandbox root fd");
  char *save = NULL, *next = NULL;
  char *name = strtok_r (copy, "/", &save);
  while (name && (next = strtok_r (NULL, "/", &save)) != NULL)
    {
      if (make_dir (fd, name, o) < 0)
        {
          int e = errno;
          close (fd);
          return kist_error_make (err, e, "%s `%s`: create `%s` in the sandbox root", flag, path,
                                  name);
        }
      int sub = openat (fd, name, O_DIRECTORY | O_NOFOLLOW | O_RDONLY | O_CLOEXEC);
      int e = errno;
      close (fd);
      if (sub < 0)
        return kist_error_make (err, e == ELOOP ? ENOTDIR : e,
                                "%s `%s`: `%s` in the sandbox root is not a directory (a "
                                "--symlink is never followed)",
                                flag, path, name);
      fd = sub;
      name = next;
    }
  *leaf = path + (name ? (size_t) (name - copy) : 0);
  return fd;
}

/* --file: the data of the fd until EOF as a new file (0644, the sandbox
 * user's), then the fd is closed (fd 0 becomes /dev/null, so that nothing
 * opened later is fd 0 and the command's stdin is not that data). */
static int
make_file (int rootfs_fd, const struct kist_sandbox_file *f, const struct kist_sandbox_opts *o,
           struct kist_error **err)
{
  const char *leaf;
  uid_t u;
  gid_t g;
  _cleanup_free_ char *flag = xasprintf ("--file %d", f->fd);
  _cleanup_close_ int pfd = open_parent (rootfs_fd, f->dest, &leaf, flag, o, err);
  if (pfd < 0)
    return -1;
  _cleanup_close_ int out
      = openat (pfd, leaf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (out < 0)
    return kist_error_make (err, errno, "--file %d `%s`: create it in the sandbox root%s", f->fd,
                            f->dest, errno == EEXIST ? " (an earlier option made it)" : "");
  kist_sandbox_owner (o, &u, &g);
  if (fchmod (out, 0644) < 0 || fchown (out, u, g) < 0)
    return kist_error_make (err, errno, "--file %d `%s`: chmod/chown it", f->fd, f->dest);
  char buf[65536];
  for (;;)
    {
      ssize_t n = read (f->fd, buf, sizeof buf);
      if (n < 0 && errno == EAGAIN)
        {
          struct pollfd p = { .fd = f->fd, .events = POLLIN };
          poll (&p, 1, -1);
          continue;
        }
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return kist_error_make (err, errno, "--file %d `%s`: read fd %d", f->fd, f->dest, f->fd);
      if (n == 0)
        break;
      if (kist_write_all (out, buf, (size_t) n) < 0)
        return kist_error_make (err, errno, "--file %d `%s`: write it in the sandbox root", f->fd,
                                f->dest);
    }
  if (f->fd == STDIN_FILENO)
    {
      _cleanup_close_ int null = open ("/dev/null", O_RDONLY | O_CLOEXEC);
      if (null < 0 || dup2 (null, STDIN_FILENO) < 0)
        return kist_error_make (err, errno, "--file 0 `%s`: /dev/null as the new stdin", f->dest);
    }
  else
    close (f->fd);
  return 0;
}

/* --chmod, once every entry is made: only a directory or a regular file
 * (kist_sandbox_add_chmod checked that an earlier option made it). */
static int
chmod_entry (int rootfs_fd, const struct kist_sandbox_chmod *c, const struct kist_sandbox_opts *o,
             struct kist_error **err)
{
  const char *leaf;
  struct stat st;
  _cleanup_free_ char *flag = xasprintf ("--chmod %04o", (unsigned) c->mode);
  _cleanup_close_ int pfd = open_parent (rootfs_fd, c->path, &leaf, flag, o, err);
  if (pfd < 0)
    return -1;
  if (fstatat (pfd, leaf, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return kist_error_make (err, errno, "--chmod %04o `%s`", (unsigned) c->mode, c->path);
  if (!S_ISDIR (st.st_mode) && !S_ISREG (st.st_mode))
    return kist_error_make (err, EINVAL, "--chmod %04o `%s`: not a directory or a file (a symlink "
                                         "is never followed)",
                            (unsigned) c->mode, c->path);
  if (fchmodat (pfd, leaf, c->mode, 0) < 0)
    return kist_error_make (err, errno, "--chmod %04o `%s`", (unsigned) c->mode, c->path);
  return 0;
}

/* --dir, --symlink, --file, then --chmod: dirs first, then links, files
 * (a --symlink above one is never followed) and the modes. */
int
kist_sandbox_extra_entries (int rootfs_fd, const struct kist_sandbox_opts *o, struct kist_error **err)
{
  for (size_t i = 0; i < o->n_dirs; i++)
    {
      const char *leaf;
      _cleanup_close_ int pfd = open_parent (rootfs_fd, o->dirs[i], &leaf, "--dir", o, err);
      if (pfd < 0)
        return -1;
      if (make_dir (pfd, leaf, o) < 0)
        return kist_error_make (err, errno, "--dir `%s`", o->dirs[i]);
    }
  for (size_t i = 0; i < o->n_links; i++)
    {
      const char *target = o->links[2 * i], *dest = o->links[2 * i + 1], *leaf;
      _cleanup_close_ int pfd = open_parent (rootfs_fd, dest, &leaf, "--symlink", o, err);
      if (pfd < 0)
        return -1;
      if (symlinkat (target, pfd, leaf) < 0)
        return kist_error_make (err, errno, "--symlink `%s` `%s`", target, dest);
    }
  for (size_t i = 0; i < o->n_files; i++)
    if (make_file (rootfs_fd, &o->files[i], o, err) < 0)
      return -1;
  for (size_t i = 0; i < o->n_chmods; i++)
    if (chmod_entry (rootfs_fd, &o->chmods[i], o, err) < 0)
      return -1;
  return 0;
}

/* -------------------------------------------------------------- --help */

/* kist sandbox --help: every option, under the headings of the OPTIONS
 * section of kist-sandbox(8), in its order and with its words.
 * A NEW OPTION: one row under its heading, at the place its .It has in the
 * man page (t_sbvocab.sh checks that this table, the option table of
 * cmd_sandbox.c and the man page list the same options in the same order).
 * { heading, NULL } starts a group; "\n" in a text continues it on the next
 * line, under the text column. */
struct sb_help
{
  const char *opt, *text;
};
static const struct sb_help sb_help[] = {
  { "Filesystem", NULL },
  { "--rootfs DIR", "read-only root from DIR (default: an empty directory)" },
  { "--ro SRC[:DEST]", "bind host path SRC read-only (repeatable)" },
  { "--rw SRC[:DEST]", "bind host path SRC writable (repeatable)" },
  { "--ro-try SRC[:DEST]", "as --ro, skipped when SRC does not exist" },
  { "--rw-try SRC[:DEST]", "as --rw, skipped when SRC does not exist" },
  { "--symlink TARGET DEST", "a symlink at DEST in the empty root (repeatable)" },
  { "--dir DEST", "a directory at DEST in the empty root (repeatable)" },
  { "--file FD DEST", "the data read from fd FD (until EOF) as the file DEST in the\n"
                      "empty root, mode 0644, read-only (repeatable)" },
  { "--chmod OCTAL PATH", "the mode of an entry made by an earlier --dir or --file\n"
                          "(or a directory above one)" },
  { "--dev DEST", "only /dev: the minimal /dev every sandbox has (as bwrap's)" },
  { "--tmpfs DEST[:SIZE]", "a tmpfs at DEST (repeatable)" },
  { "--workdir DIR", "where the scratch directory is mounted (default: /work)" },
  { "--scratch-size SIZE", "size of the scratch tmpfs (default: 256m)" },
  { "--scratch-inodes N", "inodes of the scratch tmpfs (default: 65536)" },
  { "--keep", "a kept host directory as the workdir instead of a tmpfs" },
  { "--workspace DIR", "an overlay on DIR as the workdir" },
  { "--commit on-success|always|never", "when to merge the --workspace changes" },
  { "--workspace-size SIZE", "bound the --workspace changes: a tmpfs of SIZE" },
  { "--workspace-inodes N", "bound the --workspace changes to N inodes" },
  { "--max-file-size SIZE", "= --fsize; a file that reaches it is never committed" },
  /* new Filesystem options here */
  { "Process", NULL },
  { "--setenv KEY=VALUE", "set an environment variable (repeatable)" },
  { "--env-file FILE", "KEY=VALUE lines to set" },
  { "--cwd DIR", "the working directory (default: the workdir)" },
  { "--uid N", "the user inside (default: 65534)" },
  { "--gid N", "the group inside (default: 65534)" },
  { "--hostname NAME", "default: sandbox" },
  { "--seccomp default|strict|none|PATH", "the seccomp profile (default: strict)" },
  { "--net none|host", "an empty network namespace with lo (default) or the host's" },
  { "--userns", "refused (exit 125): no user namespace as root yet; an\n"
                "unprivileged caller always gets one" },
  /* new Process options here */
  { "Limits", NULL },
  { "--memory SIZE", "memory.max" },
  { "--pids N", "pids.max" },
  { "--cpus F", "cpu.max: F CPUs" },
  { "--nofile N", "RLIMIT_NOFILE" },
  { "--nproc N", "RLIMIT_NPROC" },
  { "--fsize SIZE", "RLIMIT_FSIZE (also --max-file-size)" },
  { "--core SIZE", "RLIMIT_CORE" },
  { "--cpu-time SECONDS", "RLIMIT_CPU (SIGXCPU, exit 152)" },
  { "--timeout DURATION", "kill the whole sandbox after DURATION (exit 124)" },
  { "--grace DURATION", "after SIGINT, SIGTERM, SIGHUP or SIGQUIT (passed on to the\n"
                        "command), kill the whole sandbox DURATION later (default: 3s)" },
  /* new Limits options here */
  { "Report and policy", NULL },
  { "--report FILE|-", "write the report to FILE, or to stdout" },
  { "--report-fd N", "write the report to file descriptor N" },
  { "--status-fd N", "one JSON object per line on fd N: when the command started\n"
                     "(pids, namespaces) and when it ended (how, status, usage)" },
  { "--report-format json|text", "format of --report and --report-fd (default: json)" },
  { "--allow-degraded LIST", "layers that may fail: comma-separated layer names, P.*\n"
                             "prefixes or all (added to the global --allow-degraded)" },
  { "--probe[=table|json]", "run nothing: which layers this host can apply for a sandbox\n"
                            "with the other options, why not and the fix (exit 0 or 1)" },
  { "--fallback landlock|none", "where no user namespace can be made: run without\n"
                                "namespaces, confined by Landlock (weaker; default: none)" },
  /* new Report and policy options here, before --help */
  { "-h, --help", "print this help and exit" },
};

#define HELP_COLUMN 30

int
kist_sandbox_help (void)
{
  printf ("Usage: kist [GLOBAL OPTIONS] sandbox [OPTIONS] -- COMMAND [ARG...]\n\n"
          "Run COMMAND once in a fresh, disposable sandbox and remove the sandbox afterwards.\n");
  for (size_t i = 0; i < KIST_ARRAY_SIZE (sb_help); i++)
    {
      const struct sb_help *h = &sb_help[i];
      if (h->text == NULL)
        {
          printf ("\n%s:\n", h->opt);
          continue;
        }
      /* "  -h, --help", "      --name ARG": the column of kist's other helps. */
      int n = printf ("%s%s", h->opt[1] == '-' ? "      " : "  ", h->opt);
      printf ("%*s", n < HELP_COLUMN - 2 ? HELP_COLUMN - n : 2, "");
      for (const char *t = h->text; *t; t++)
        if (*t == '\n')
          printf ("\n%*s", HELP_COLUMN, "");
        else
          putchar (*t);
      putchar ('\n');
    }
  printf ("\nGlobal options (before sandbox): see kist --help.  See kist-sandbox(8).\n");
  return 0;
}
