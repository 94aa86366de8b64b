/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: `kist sandbox`: its options, the OCI config built in memory, and the
 * sandbox directory under the state root (see sandbox.h). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yajl/yajl_gen.h>

#include "fsremove.h"
#include "json.h"
#include "landlock.h"
#include "resolve.h"
#include "sandbox.h"
#include "spec.h"
#include "state.h"
#include "util.h"
#include "workspace.h"

#define MIB (1024ull * 1024)

/* ------------------------------------------------------------- options */

void
kist_sandbox_opts_init (struct kist_sandbox_opts *o)
{
  memset (o, 0, sizeof *o);
  o->workdir = xstrdup ("/work");
  o->scratch_size = 256 * MIB;
  o->scratch_inodes = 65536;
  o->uid = 65534;
  o->gid = 65534;
  o->hostname = xstrdup ("sandbox");
  o->seccomp = xstrdup ("strict");
  o->env = xcalloc (1, sizeof (char *));
}

void
kist_sandbox_opts_clear (struct kist_sandbox_opts *o)
{
  free (o->rootfs);
  for (size_t i = 0; i < o->n_binds; i++)
    free (o->binds[i].src), free (o->binds[i].dest);
  free (o->binds);
  for (size_t i = 0; i < o->n_tmpfs; i++)
    free (o->tmpfs[i].dest);
  free (o->tmpfs);
  for (size_t i = 0; i < 2 * o->n_links; i++)
    free (o->links[i]);
  free (o->links);
  for (size_t i = 0; i < o->n_dirs; i++)
    free (o->dirs[i]);
  free (o->dirs);
  for (size_t i = 0; i < o->n_files; i++)
    free (o->files[i].dest);   /* the fd is the caller's: extra_entries closes it */
  free (o->files);
  for (size_t i = 0; i < o->n_chmods; i++)
    free (o->chmods[i].path);
  free (o->chmods);
  free (o->workdir);
  free (o->workspace);
  kist_strv_free (o->env);
  free (o->cwd);
  free (o->hostname);
  free (o->seccomp);
  memset (o, 0, sizeof *o);
}

char *
kist_sandbox_new_id (void)
{
  uint32_t rnd = 0;
  if (getrandom (&rnd, sizeof rnd, 0) != (ssize_t) sizeof rnd)
    {
      struct timespec ts;
      clock_gettime (CLOCK_MONOTONIC, &ts);
      rnd = (uint32_t) (ts.tv_nsec ^ ts.tv_sec);
    }
  return xasprintf ("sandbox-%d-%08x", (int) getpid (), rnd);
}

int
kist_sandbox_parse_duration (const char *s, int64_t *ms)
{
  if (s == NULL || ((*s < '0' || *s > '9') && *s != '.'))
    return -EINVAL;
  errno = 0;
  char *end = NULL;
  double v = strtod (s, &end);
  if (errno != 0 || end == s || !__builtin_isfinite (v) || v <= 0)
    return -EINVAL;
  double mult;
  if (strcmp (end, "ms") == 0)
    mult = 1;
  else if (*end == '\0' || strcmp (end, "s") == 0)
    mult = 1000;
  else if (strcmp (end, "m") == 0)
    mult = 60 * 1000;
  else if (strcmp (end, "h") == 0)
    mult = 3600 * 1000;
  else
    return -EINVAL;
  double r = v * mult;
  if (r > (double) (INT64_MAX / 2))
    return -ERANGE;
  int64_t i = (int64_t) r;
  if ((double) i < r)
    i++;   /* round up: a timeout never expires early */
  if (i < 1)
    return -ERANGE;
  *ms = i;
  return 0;
}

int
kist_sandbox_env_add (struct kist_sandbox_opts *o, const char *kv, const char *what,
                      struct kist_error **err)
{
  const char *eq = strchr (kv, '=');
  if (eq == NULL || eq == kv)
    return kist_error_make (err, EINVAL, "%s `%s`: expected KEY=VALUE with a non-empty KEY", what,
                            kv);
  size_t klen = (size_t) (eq - kv) + 1;
  for (size_t i = 0; o->env[i]; i++)
    if (strncmp (o->env[i], kv, klen) == 0)
      {
        free (o->env[i]);
        o->env[i] = xstrdup (kv);
        return 0;
      }
  size_t n = kist_strv_len (o->env);
  o->env = xrealloc (o->env, (n + 2) * sizeof (char *));
  o->env[n] = xstrdup (kv);
  o->env[n + 1] = NULL;
  return 0;
}

int
kist_sandbox_env_file (struct kist_sandbox_opts *o, const char *file, struct kist_error **err)
{
  _cleanup_free_ char *text = NULL;
  size_t len = 0;
  if (kist_read_file_at (AT_FDCWD, file, 1u << 20, &text, &len, err) < 0)
    return kist_error_wrap (err, "--env-file `%s`", file);
  if (memchr (text, '\0', len) != NULL)
    return kist_error_make (err, EINVAL, "--env-file `%s`: contains a NUL byte", file);
  char *save = NULL;
  unsigned lineno = 0;
  for (char *p = text, *line; p != NULL; p = save)
    {
      line = p;
      save = strchr (p, '\n');
      if (save)
        *save++ = '\0';
      lineno++;
      kist_rstrip (line);
      while (*line == ' ' || *line == '\t')
        line++;
      if (*line == '\0' || *line == '#')
        continue;
      _cleanup_free_ char *what = xasprintf ("--env-file %s:%u", file, lineno);
      if (kist_sandbox_env_add (o, line, what, err) < 0)
        return -1;
    }
  return 0;
}

static bool
valid_dest (const char *d)
{
  if (d[0] != '/' || d[1] == '\0')
    return false;
  for (const char *p = d; *p; p++)
    if (p[0] == '/' && p[1] == '.' && p[2] == '.' && (p[3] == '/' || p[3] == '\0'))
      return false;
  return true;
}

int
kist_sandbox_add_bind (struct kist_sandbox_opts *o, const char *arg, bool rw, bool try,
                       struct kist_error **err)
{
  const char *flag = try ? (rw ? "--rw-try" : "--ro-try") : (rw ? "--rw" : "--ro");
  _cleanup_free_ char *src = xstrdup (arg);
  char *dest = NULL;
  /* SRC:DEST, split at the last ':' followed by an absolute path. */
  char *colon = strrchr (src, ':');
  if (colon && colon[1] == '/')
    {
      *colon = '\0';
      dest = colon + 1;
    }
  if (src[0] == '\0')
    return kist_error_make (err, EINVAL, "%s `%s`: empty source path", flag, arg);
  char *real = realpath (src, NULL);
  if (real == NULL && try && (errno == ENOENT || errno == ENOTDIR))
    return 0;
  if (real == NULL)
    return kist_error_make (err, errno, "%s `%s`: source `%s`", flag, arg, src);
  const char *d = dest ? dest : (src[0] == '/' ? src : real);
  if (!valid_dest (d))
    {
      free (real);
      return kist_error_make (err, EINVAL,
                              "%s `%s`: destination `%s` must be an absolute path other than / "
                              "without `..` (for a whole image root use --rootfs)",
                              flag, arg, d);
    }
  o->binds = xrealloc (o->binds, (o->n_binds + 1) * sizeof *o->binds);
  o->binds[o->n_binds++] = (struct kist_sandbox_bind){ .src = real, .dest = xstrdup (d), .rw = rw };
  return 0;
}

int
kist_sandbox_add_tmpfs (struct kist_sandbox_opts *o, const char *arg, struct kist_error **err)
{
  _cleanup_free_ char *dest = xstrdup (arg);
  uint64_t size = 64 * MIB;
  char *colon = strrchr (dest, ':');
  if (colon)
    {
      *colon = '\0';
      if (kist_parse_size (colon + 1, false, &size) < 0 || size == 0)
        return kist_error_make (err, EINVAL,
                                "--tmpfs `%s`: size `%s`: expected bytes with an optional k, m or "
                                "g suffix",
                                arg, colon + 1);
    }
  if (!valid_dest (dest))
    return kist_error_make (err, EINVAL,
                            "--tmpfs `%s`: destination must be an absolute path other than / "
                            "without `..`",
                            arg);
  o->tmpfs = xrealloc (o->tmpfs, (o->n_tmpfs + 1) * sizeof *o->tmpfs);
  o->tmpfs[o->n_tmpfs++] = (struct kist_sandbox_tmpfs){ .dest = steal_pointer (&dest), .size = size };
  return 0;
}

static int
check_dest (const char *flag, const char *dest, struct kist_error **err)
{
  if (!valid_dest (dest))
    return kist_error_make (err, EINVAL,
                            "%s `%s`: expected an absolute path other than / without `..`", flag,
                            dest);
  return 0;
}

int
kist_sandbox_add_link (struct kist_sandbox_opts *o, const char *target, const char *dest,
                       struct kist_error **err)
{
  if (target[0] == '\0')
    return kist_error_make (err, EINVAL, "--symlink: empty target for `%s`", dest);
  if (check_dest ("--symlink", dest, err) < 0)
    return -1;
  o->links = xrealloc (o->links, (o->n_links + 1) * 2 * sizeof *o->links);
  o->links[2 * o->n_links] = xstrdup (target);
  o->links[2 * o->n_links + 1] = xstrdup (dest);
  o->n_links++;
  return 0;
}

int
kist_sandbox_add_dir (struct kist_sandbox_opts *o, const char *dest, struct kist_error **err)
{
  if (check_dest ("--dir", dest, err) < 0)
    return -1;
  o->dirs = xrealloc (o->dirs, (o->n_dirs + 1) * sizeof *o->dirs);
  o->dirs[o->n_dirs++] = xstrdup (dest);
  return 0;
}

/* ----------------------------------------------------------- directory */

void
kist_sandbox_dir_clear (struct kist_sandbox_dir *d)
{
  free (d->path);
  free (d->rootfs);
  free (d->work);
  free (d->upper);
  free (d->ovl_work);
  free (d->layers);
  if (d->shared && d->shared_fd >= 0)
    close (d->shared_fd);
  memset (d, 0, sizeof *d);
}

/* Open (creating it if missing) a directory owned by us, mode as given, not
 * a symlink. */
int
kist_sandbox_open_own_dir (int dirfd, const char *name, mode_t mode, const char *what, struct kist_error **err)
{
  if (mkdirat (dirfd, name, mode) < 0 && errno != EEXIST)
    return kist_error_make (err, errno, "create %s", what);
  _cleanup_close_ int fd = openat (dirfd, name, O_DIRECTORY | O_NOFOLLOW | O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return kist_error_make (err, errno == ELOOP ? ENOTDIR : errno,
                            "open %s (it must be a directory, not a symlink)", what);
  struct stat st;
  if (fstat (fd, &st) < 0)
    return kist_error_make (err, errno, "stat %s", what);
  if (st.st_uid != geteuid ())
    return kist_error_make (err, EPERM,
                            "%s is owned by uid %u, not by us (uid %u); remove it or use another "
                            "--root",
                            what, (unsigned) st.st_uid, (unsigned) geteuid ());
  if ((st.st_mode & 07777) != mode && fchmod (fd, mode) < 0)
    return kist_error_make (err, errno, "chmod %s to %04o", what, (unsigned) mode);
  return steal_fd (&fd);
}

/* Was dest bound (a --ro/--rw entry with exactly that destination)? */
static bool
bound (const struct kist_sandbox_opts *o, const char *dest)
{
  for (size_t i = 0; i < o->n_binds; i++)
    if (strcmp (o->binds[i].dest, dest) == 0)
      return true;
  return false;
}

bool
kist_sandbox_usr_link (const struct kist_sandbox_opts *o, const char *name, char *buf, size_t size)
{
  char host[32];
  if (!bound (o, "/usr"))
    return false;
  snprintf (host, sizeof host, "/%s", name);
  if (bound (o, host))
    return false;
  ssize_t n = readlink (host, buf, size - 1);
  if (n < 0)
    return false;   /* not a symlink here (or absent): not merged */
  buf[n] = '\0';
  return strncmp (buf, "usr/", 4) == 0 || strncmp (buf, "/usr/", 5) == 0;
}

/* Merged usr: the host's /bin, /lib, /lib64, /sbin are symlinks into usr/;
 * with /usr bound, the same symlinks in the empty root make /bin/sh work. */
static int
merged_usr_links (int rootfs_fd, const struct kist_sandbox_opts *o, struct kist_error **err)
{
  static const char *const names[] = { "bin", "lib", "lib32", "lib64", "libx32", "sbin" };
  for (size_t i = 0; i < KIST_ARRAY_SIZE (names); i++)
    {
      char target[PATH_MAX];
      if (!kist_sandbox_usr_link (o, names[i], target, sizeof target))
        continue;
      if (symlinkat (target, rootfs_fd, names[i]) < 0)
        return kist_error_make (err, errno, "merged /usr: symlink %s -> %s in the sandbox root",
                                names[i], target);
    }
  return 0;
}

/* The sandbox dir holds a few levels of mount points; deeper is not ours. */
#define SANDBOX_MAX_DEPTH 64

int
kist_sandbox_dir_remove (int rootfd, const char *root_path, const char *id, bool keep_work,
                         char **kept, struct kist_error **err)
{
  _cleanup_free_ char *top = xasprintf ("%s/%s", root_path, KIST_SANDBOX_DIR);
  _cleanup_free_ char *path = xasprintf ("%s/%s", top, id);
  struct stat st;

  if (kept)
    *kept = NULL;
  if (strlen (id) > NAME_MAX)
    return 0; /* kist sandbox ids are short: never a sandbox dir */
  if (kist_id_validate (id, err) < 0)
    return kist_error_wrap (err, "remove the sandbox dir under `%s`", top);
  _cleanup_close_ int topfd
      = openat (rootfd, KIST_SANDBOX_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (topfd < 0)
    {
      if (errno == ENOENT)
        return 0;
      return kist_error_make (err, errno, "open `%s` (not a directory or a symlink?)", top);
    }
  if (fstatat (topfd, id, &st, AT_SYMLINK_NOFOLLOW) < 0)
    {
      if (errno == ENOENT)
        return 0;
      return kist_error_make (err, errno, "stat `%s`", path);
    }
  if (!S_ISDIR (st.st_mode))
    return kist_error_make (err, ENOTDIR,
                            "`%s` is not a directory (kist sandbox makes one); refusing to "
                            "touch it: inspect and remove it by hand",
                            path);
  if (!kist_is_mount_root (topfd, id))
    {
      /* The overlay dirs of --workspace may be deeper than kist makes.  (A
       * mount point at ID itself is left to kist_remove_tree_at: refused.) */
      _cleanup_close_ int idfd
          = openat (topfd, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (idfd < 0)
        return kist_error_make (err, errno, "open `%s`", path);
      if (kist_workspace_remove (idfd, path, err) < 0)
        return kist_error_wrap (err, "remove `%s`", path);
    }
  /* Never across a mount point or another filesystem; ROOT/~sandbox itself
   * stays (other sandboxes may be using it). */
  const struct kist_remove_opts ro = {
    .path = path, .top = path, .max_depth = SANDBOX_MAX_DEPTH,
    .keep = keep_work ? "work" : NULL, .kept = kept,
    .chmod_own = true,   /* a --chmod without u+rwx on a directory of the empty root */
  };
  return kist_remove_tree_at (topfd, id, &ro, err);
}

/* --workspace: its overlay dirs (kist_workspace_prepare) and paths. */
static int
workspace_dirs (int idfd, const char *path, const struct kist_sandbox_opts *o,
                struct kist_sandbox_dir *out, struct kist_error **err)
{
  struct kist_workspace_plan *p = &out->ws;
  p->tmpfs = o->ws_size || o->ws_inodes;
  /* The sandbox user as the host sees it (rootless: the caller). */
  p->sb_uid = geteuid () == 0 ? o->uid + (o->userns ? 100000u : 0u) : (uint32_t) geteuid ();
  p->sb_gid = geteuid () == 0 ? o->gid + (o->userns ? 100000u : 0u) : (uint32_t) getegid ();
  if (kist_workspace_prepare (idfd, path, o->workspace, o->commit != KIST_COMMIT_NEVER, p, err)
      < 0)
    return -1;
  if (p->tmpfs)
    out->layers = xasprintf ("%s/%s", path, KIST_WORKSPACE_LAYERS);
  else
    {
      out->upper = xasprintf ("%s/%s", path, KIST_WORKSPACE_UPPER);
      out->ovl_work = xasprintf ("%s/%s", path, KIST_WORKSPACE_WORK);
    }
  return p->tmpfs || p->idmap ? kist_workspace_check_workdir (out->rootfs, o->workdir, err) : 0;
}

int
kist_sandbox_dir_create (int rootfd, const char *root_path, const char *id,
                         const struct kist_sandbox_opts *o, struct kist_sandbox_dir *out,
                         struct kist_error **err)
{
  memset (out, 0, sizeof *out);
  _cleanup_free_ char *sbwhat = xasprintf ("the sandbox directory %s/%s", root_path,
                                           KIST_SANDBOX_DIR);
  _cleanup_close_ int sbfd = kist_sandbox_open_own_dir (rootfd, KIST_SANDBOX_DIR, 0700, sbwhat, err);
  if (sbfd < 0)
    return -1;
  _cleanup_free_ char *path = xasprintf ("%s/%s/%s", root_path, KIST_SANDBOX_DIR, id);
  /* The common case needs no dir of its own (a mkdir and its removal cost
   * ~0.4 ms on this machine's ext4): the shared empty root or --rootfs, and
   * nothing kept or scratch.  The bundle is then ROOT/~sandbox, which holds
   * no bundle files either way (the config is passed in memory). */
  bool needs_dir = o->workspace || o->keep || o->fallback;
  if (o->rootfs == NULL
      && kist_sandbox_shared_root (rootfd, root_path, o, &out->rootfs, &out->shared_fd) > 0)
    out->shared = true;
  if (!needs_dir && (o->rootfs || out->shared))
    {
      if (o->rootfs)
        out->rootfs = xstrdup (o->rootfs);
      out->dirless = true;
      out->path = xasprintf ("%s/%s", root_path, KIST_SANDBOX_DIR);
      return 0;
    }
  if (mkdirat (sbfd, id, 0700) < 0)
    {
      kist_error_make (err, errno, "create %s", path);
      kist_sandbox_dir_clear (out); /* the shared root's lock, if taken */
      return -1;
    }
  _cleanup_close_ int idfd = openat (sbfd, id, O_DIRECTORY | O_NOFOLLOW | O_RDONLY | O_CLOEXEC);
  if (idfd < 0)
    {
      kist_error_make (err, errno, "open %s", path);
      goto fail;
    }
  if (o->rootfs)
    out->rootfs = xstrdup (o->rootfs);
  else if (!out->shared)
    {
      /* mkdir applies the umask: set the mode explicitly. */
      if (mkdirat (idfd, "rootfs", 0755) < 0)
        {
          kist_error_make (err, errno, "create %s/rootfs", path);
          goto fail;
        }
      _cleanup_close_ int rfd
          = openat (idfd, "rootfs", O_DIRECTORY | O_NOFOLLOW | O_RDONLY | O_CLOEXEC);
      if (rfd < 0 || fchmod (rfd, 0755) < 0)
        {
          kist_error_make (err, errno, "open %s/rootfs", path);
          goto fail;
        }
      if (merged_usr_links (rfd, o, err) < 0 || kist_sandbox_extra_entries (rfd, o, err) < 0)
        goto fail;
      out->rootfs = xasprintf ("%s/rootfs", path);
    }
  /* With --workspace the workdir is the overlay: no scratch dir to keep.
   * The Landlock fallback's scratch dir is this host dir too. */
  if ((o->keep || o->fallback) && !o->workspace)
    {
      /* Not `work` unless kept: kist gc keeps a `work` dir. */
      const char *wn = o->keep ? "work" : "scratch";
      if (mkdirat (idfd, wn, 0700) < 0)
        {
          kist_error_make (err, errno, "create %s/%s", path, wn);
          goto fail;
        }
      _cleanup_close_ int wfd = openat (idfd, wn, O_DIRECTORY | O_NOFOLLOW | O_RDONLY | O_CLOEXEC);
      if (wfd < 0)
        {
          kist_error_make (err, errno, "open %s/%s", path, wn);
          goto fail;
        }
      uid_t u;
      gid_t g;
      kist_sandbox_owner (o, &u, &g);   /* owned by the sandbox user */
      if (fchown (wfd, u, g) < 0)
        {
          kist_error_make (err, errno, "chown %s/%s to %d:%d", path, wn, (int) u, (int) g);
          goto fail;
        }
      if (fchmod (wfd, o->fallback ? 0700 : 0755) < 0)
        {
          kist_error_make (err, errno, "chmod %s/%s", path, wn);
          goto fail;
        }
      out->work = xasprintf ("%s/%s", path, wn);
    }
  if (o->workspace && workspace_dirs (idfd, path, o, out, err) < 0)
    goto fail;
  out->path = steal_pointer (&path);
  return 0;

fail:
  {
    _cleanup_error_ struct kist_error *rerr = NULL;
    kist_sandbox_dir_remove (rootfd, root_path, id, false, NULL, &rerr);
    kist_sandbox_dir_clear (out);
    return kist_error_wrap (err, "kist sandbox");
  }
}

/* ---------------------------------------------------------------- config */

static void
g_tmpfs (struct kist_jgen *g, const char *dest, const char *source, uint64_t size, uint64_t inodes,
         const char *mode)
{
  _cleanup_free_ char *sz = xasprintf ("size=%llu", (unsigned long long) size);
  _cleanup_free_ char *ino = inodes ? xasprintf ("nr_inodes=%llu", (unsigned long long) inodes)
                                    : NULL;
  _cleanup_free_ char *md = xasprintf ("mode=%s", mode);
  const char *opts[] = { "nosuid", "nodev", md, sz, ino, NULL };
  kist_spec_gen_mount (g, dest, "tmpfs", source, opts);
}

/* The first range of the caller (by name or by number) in FILE (/etc/subuid
 * or /etc/subgid: "name:start:count" lines).  Returns true when found. */
static bool
subid_range (const char *file, const char *name, uint32_t id, uint32_t *start, uint32_t *count)
{
  _cleanup_free_ char *text = NULL;
  _cleanup_error_ struct kist_error *e = NULL;
  if (kist_read_file_at (AT_FDCWD, file, 1u << 20, &text, NULL, &e) < 0)
    return false;
  char num[16];
  snprintf (num, sizeof num, "%" PRIu32, id);
  char *save = NULL;
  for (char *line = strtok_r (text, "\n", &save); line; line = strtok_r (NULL, "\n", &save))
    {
      char *c1 = strchr (line, ':');
      char *c2 = c1 ? strchr (c1 + 1, ':') : NULL;
      if (c2 == NULL || line[0] == '#')
        continue;
      *c1 = *c2 = '\0';
      if (!((name && strcmp (line, name) == 0) || strcmp (line, num) == 0))
        continue;
      uint64_t s, n;
      if (kist_parse_u64 (c1 + 1, &s) < 0 || kist_parse_u64 (kist_rstrip (c2 + 1), &n) < 0
          || n == 0 || s + n > (uint64_t) UINT32_MAX + 1 || n > UINT32_MAX)
        continue;
      *start = (uint32_t) s;
      *count = (uint32_t) n;
      return true;
    }
  return false;
}

static bool
have_helper (const char *name)
{
  static const char *const dirs[] = { "/usr/bin", "/bin" };
  for (size_t i = 0; i < KIST_ARRAY_SIZE (dirs); i++)
    {
      char p[32];
      snprintf (p, sizeof p, "%s/%s", dirs[i], name);
      struct stat st;
      if (stat (p, &st) == 0 && S_ISREG (st.st_mode))
        return true;
    }
  return false;
}

/* Map inside id `in` to the caller's `self`, and the ids around it to the
 * subordinate range [start, start+count): 0..in-1 from its start, in+1..
 * from the rest.  The sandbox user stays the caller on the host, so --rw,
 * --keep and --workspace keep working, and every other inside id exists.
 * Returns the number of entries (1..3) in m. */
static size_t
full_map (uint32_t in, uint32_t self, uint32_t start, uint32_t count, struct kist_idmap m[3])
{
  size_t n = 0;
  uint32_t below = in < count ? in : count;
  if (below > 0)
    m[n++] = (struct kist_idmap){ .container_id = 0, .host_id = start, .size = below };
  m[n++] = (struct kist_idmap){ .container_id = in, .host_id = self, .size = 1 };
  uint64_t rest = (uint64_t) count - below;
  if (rest > (uint64_t) UINT32_MAX - in)
    rest = (uint64_t) UINT32_MAX - in;
  if (rest > 0)
    m[n++] = (struct kist_idmap){ .container_id = in + 1, .host_id = start + below,
                                  .size = (uint32_t) rest };
  return n;
}

/* The rootless sandbox's maps: the full range when the caller has one in
 * both /etc/subuid and /etc/subgid and newuidmap/newgidmap are installed,
 * else only the caller.  *why (newly allocated) says which and why. */
static void
rootless_maps (const struct kist_sandbox_opts *o, uid_t euid, gid_t egid, struct kist_idmap um[3],
               size_t *nu, struct kist_idmap gm[3], size_t *ng, char **why)
{
  struct passwd *pw = getpwuid (euid);
  _cleanup_free_ char *name = pw && pw->pw_name ? xstrdup (pw->pw_name) : NULL;
  _cleanup_free_ char *who = name ? xstrdup (name) : xasprintf ("%u", (unsigned) euid);
  uint32_t us = 0, uc = 0, gs = 0, gc = 0;
  const char *miss = NULL;
  if (!subid_range ("/etc/subuid", name, (uint32_t) euid, &us, &uc))
    miss = "no range in /etc/subuid";
  else if (!subid_range ("/etc/subgid", name, (uint32_t) euid, &gs, &gc)) /* keyed by user */
    miss = "no range in /etc/subgid";
  else if (!have_helper ("newuidmap") || !have_helper ("newgidmap"))
    miss = "newuidmap/newgidmap not installed (uidmap package)";
  else if (((uint64_t) euid >= us && (uint64_t) euid < (uint64_t) us + uc)
           || ((uint64_t) egid >= gs && (uint64_t) egid < (uint64_t) gs + gc))
    miss = "the caller's own id lies inside its subordinate range";
  if (miss)
    {
      um[0] = (struct kist_idmap){ .container_id = o->uid, .host_id = (uint32_t) euid, .size = 1 };
      gm[0] = (struct kist_idmap){ .container_id = o->gid, .host_id = (uint32_t) egid, .size = 1 };
      *nu = *ng = 1;
      *why = xasprintf ("sandbox: only the caller is mapped (%s for %s)", miss, who);
      return;
    }
  *nu = full_map (o->uid, (uint32_t) euid, us, uc, um);
  *ng = full_map (o->gid, (uint32_t) egid, gs, gc, gm);
  *why = xasprintf ("sandbox: inside %u:%u is the caller, the other ids are %s's subordinate ids "
                    "(/etc/subuid %" PRIu32 ":%" PRIu32 ", /etc/subgid %" PRIu32 ":%" PRIu32 ")",
                    (unsigned) o->uid, (unsigned) o->gid, who, us, uc, gs, gc);
}

static const char *const rlimit_names[KIST_SB_RLIMIT_COUNT] = {
  [KIST_SB_RLIMIT_NOFILE] = "RLIMIT_NOFILE", [KIST_SB_RLIMIT_FSIZE] = "RLIMIT_FSIZE",
  [KIST_SB_RLIMIT_NPROC] = "RLIMIT_NPROC",   [KIST_SB_RLIMIT_CORE] = "RLIMIT_CORE",
  [KIST_SB_RLIMIT_CPU] = "RLIMIT_CPU",
};

void
kist_sandbox_gen_process (struct kist_jgen *g, const struct kist_sandbox_opts *o,
                          const char *cwd_override, const char *const *bounding)
{
  static const char *const none[] = { NULL };
  kist_jgen_str (g, "process");
  kist_jgen_map_open (g);
  kist_jgen_kbool (g, "terminal", false);
  kist_jgen_str (g, "user");
  kist_jgen_map_open (g);
  kist_jgen_kint (g, "uid", o->uid);
  kist_jgen_kint (g, "gid", o->gid);
  kist_jgen_map_close (g);
  kist_jgen_kstrv (g, "args", (const char *const *) o->args);
  kist_jgen_kstrv (g, "env", (const char *const *) o->env);
  kist_jgen_kstr (g, "cwd", cwd_override ? cwd_override : o->cwd ? o->cwd : o->workdir);
  /* No capabilities at all: every set present and empty. */
  kist_jgen_str (g, "capabilities");
  kist_jgen_map_open (g);
  kist_jgen_kstrv (g, "bounding", bounding ? bounding : none);
  kist_jgen_kstrv (g, "effective", none);
  kist_jgen_kstrv (g, "inheritable", none);
  kist_jgen_kstrv (g, "permitted", none);
  kist_jgen_kstrv (g, "ambient", none);
  kist_jgen_map_close (g);
  kist_jgen_str (g, "rlimits");
  kist_jgen_array_open (g);
  for (int i = 0; i < KIST_SB_RLIMIT_COUNT; i++)
    if (o->has_rlimit[i])
      {
        kist_jgen_map_open (g);
        kist_jgen_kstr (g, "type", rlimit_names[i]);
        /* --cpu-time: SIGXCPU at the soft limit (exit 152, as a shell's
         * ulimit -t gives), SIGKILL a second later for a program that
         * catches it. */
        uint64_t hard = o->rlimit[i];
        if (i == KIST_SB_RLIMIT_CPU && hard < UINT64_MAX / 2)
          hard++;
        kist_jgen_kint (g, "hard", (long long) hard);
        kist_jgen_kint (g, "soft", (long long) o->rlimit[i]);
        kist_jgen_map_close (g);
      }
  kist_jgen_array_close (g);
  kist_jgen_kbool (g, "noNewPrivileges", true);
  kist_jgen_map_close (g);
}

static void
g_mounts (struct kist_jgen *g, const struct kist_sandbox_opts *o, const struct kist_sandbox_dir *d,
          bool userns)
{
  static const char *const proc_opts[] = { "nosuid", "noexec", "nodev", NULL };
  static const char *const dev_opts[]
      = { "nosuid", "strictatime", "mode=755", "size=65536k", NULL };
  static const char *const pts_root[] = { "nosuid", "noexec", "newinstance", "ptmxmode=0666",
                                          "mode=0620", "gid=5", NULL };
  /* In a user namespace that maps only the caller, gid 5 does not exist. */
  static const char *const pts_userns[]
      = { "nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620", NULL };
  static const char *const shm_opts[]
      = { "nosuid", "noexec", "nodev", "mode=1777", "size=65536k", NULL };
  static const char *const ro_opts[] = { "rbind", "rro", "rnosuid", "rnodev", NULL };
  static const char *const rw_opts[] = { "rbind", "rnosuid", "rnodev", NULL };

  kist_jgen_str (g, "mounts");
  kist_jgen_array_open (g);
  kist_spec_gen_mount (g, "/proc", "proc", "proc", proc_opts);
  kist_spec_gen_mount (g, "/dev", "tmpfs", "tmpfs", dev_opts);
  kist_spec_gen_mount (g, "/dev/pts", "devpts", "devpts", userns ? pts_userns : pts_root);
  kist_spec_gen_mount (g, "/dev/shm", "tmpfs", "shm", shm_opts);
  g_tmpfs (g, "/tmp", "tmpfs", 64 * MIB, 0, "1777");
  for (size_t i = 0; i < o->n_binds; i++)
    kist_spec_gen_mount (g, o->binds[i].dest, "bind", o->binds[i].src,
                         o->binds[i].rw ? rw_opts : ro_opts);
  for (size_t i = 0; i < o->n_tmpfs; i++)
    g_tmpfs (g, o->tmpfs[i].dest, "tmpfs", o->tmpfs[i].size, 0, "1777");
  if (d->upper || d->layers)
    {
      const struct kist_workspace_mounts wm = {
        .dir = o->workspace, .workdir = o->workdir, .rootfs = d->rootfs, .upper = d->upper,
        .ovl_work = d->ovl_work, .layers = d->layers, .size = o->ws_size, .inodes = o->ws_inodes,
        .userns = userns, .plan = &d->ws,
      };
      kist_workspace_gen_mounts (g, &wm);
    }
  else if (d->work)
    kist_spec_gen_mount (g, o->workdir, "bind", d->work, rw_opts);
  else
    g_tmpfs (g, o->workdir, "scratch", o->scratch_size, o->scratch_inodes, "1777");
  kist_jgen_array_close (g);
}

struct kist_resources *
kist_sandbox_resources (const struct kist_sandbox_opts *o)
{
  if (!o->has_memory && !o->has_pids && !o->has_cpus)
    return NULL;
  struct kist_resources *res = xcalloc (1, sizeof *res);
  if (o->has_memory)
    res->memory.limit = (int64_t) o->memory;
  if (o->has_cpus)
    {
      int64_t quota = (int64_t) (o->cpus * 100000.0 + 0.5);
      res->cpu.quota = quota < 1000 ? 1000 : quota;
      res->cpu.period = 100000;
    }
  if (o->has_pids)
    res->pids_limit = o->pids;
  return res;
}

/* Is path the destination of a --ro, --rw or --tmpfs, or below one (other
 * than /)?  Then that mount's own rule covers it. */
static bool
mounted_over (const struct kist_sandbox_opts *o, const char *path)
{
  for (size_t i = 0; i < o->n_binds; i++)
    if (strcmp (o->binds[i].dest, "/") != 0 && kist_path_is_or_under (path, o->binds[i].dest))
      return true;
  for (size_t i = 0; i < o->n_tmpfs; i++)
    if (kist_path_is_or_under (path, o->tmpfs[i].dest))
      return true;
  return false;
}

struct kist_landlock_rules *
kist_sandbox_landlock (const struct kist_sandbox_opts *o, const struct kist_sandbox_dir *d,
                       struct kist_error **err)
{
  (void) d;
  (void) err;
  /* The mounts of g_mounts that are not the caller's.  /proc: writes to
   * /proc/self (`echo x > /proc/self/comm` truncates).  /dev: its nodes;
   * ioctls (ABI 5) only on the terminals (tcsetattr, job control, openpty
   * through /dev/ptmx -> pts/ptmx).  /dev/shm: shm_open and sem_open make,
   * write, truncate and remove files there, never a directory: mkdir
   * there is the filesystem probe (landlock.c). */
  static const struct
  {
    const char *path;
    uint64_t access; /* 0: writable */
    bool probe;
  } own[] = {
    { "/tmp", 0, false },
    { "/proc", KIST_LL_FS_READ | KIST_LL_FS_WRITE_FILE | KIST_LL_FS_TRUNCATE, false },
    { "/dev", KIST_LL_FS_READ | KIST_LL_FS_WRITE_FILE, false },
    { "/dev/tty", KIST_LL_FS_READ | KIST_LL_FS_WRITE_FILE | KIST_LL_FS_IOCTL_DEV, false },
    { "/dev/pts", KIST_LL_FS_READ | KIST_LL_FS_WRITE_FILE | KIST_LL_FS_IOCTL_DEV, false },
    { "/dev/shm",
      KIST_LL_FS_READ | KIST_LL_FS_WRITE_FILE | KIST_LL_FS_MAKE_REG | KIST_LL_FS_REMOVE_FILE
          | KIST_LL_FS_TRUNCATE,
      true },
  };
  struct kist_landlock_rules *r = xcalloc (1, sizeof *r);
  kist_landlock_rules_add (r, "/", false, false);
  for (size_t i = 0; i < o->n_binds; i++)
    kist_landlock_rules_add (r, o->binds[i].dest, o->binds[i].rw, false);
  for (size_t i = 0; i < o->n_tmpfs; i++)
    kist_landlock_rules_add (r, o->tmpfs[i].dest, true, false);
  kist_landlock_rules_add (r, o->workdir, true, false);
  for (size_t i = 0; i < KIST_ARRAY_SIZE (own); i++)
    if (!mounted_over (o, own[i].path))
      {
        struct kist_landlock_path *p = kist_landlock_rules_add (r, own[i].path, own[i].access == 0,
                                                                false);
        p->access = own[i].access;
        p->probe = own[i].probe;
      }
  r->deny_tcp = !o->net_host;
  r->scope = true;
  return r;
}

char *
kist_sandbox_config_json (const struct kist_sandbox_opts *o, const struct kist_sandbox_dir *d,
                          uid_t euid, gid_t egid, size_t *len, struct kist_error **err)
{
  static const char *const masked[]
      = { "/proc/acpi",         "/proc/asound",      "/proc/kcore",       "/proc/keys",
          "/proc/latency_stats", "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug",
          "/proc/scsi",         "/sys/firmware",     NULL };
  static const char *const readonly[]
      = { "/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger", NULL };
  bool rootless = euid != 0;
  bool userns = rootless || o->userns;

  if (o->args == NULL || o->args[0] == NULL)
    {
      kist_error_make (err, EINVAL, "kist sandbox: no COMMAND given (kist sandbox [OPTIONS] -- "
                                    "COMMAND [ARG...])");
      return NULL;
    }
  struct kist_idmap um[3], gm[3];
  size_t nu = 0, ng = 0;
  _cleanup_free_ char *idmap_why = NULL;
  if (rootless)
    rootless_maps (o, euid, egid, um, &nu, gm, &ng, &idmap_why);

  struct kist_jgen g = { .g = kist_json_gen_new (false, true) };
  kist_jgen_map_open (&g);
  kist_jgen_kstr (&g, "ociVersion", "1.2.0");
  kist_sandbox_gen_process (&g, o, NULL, NULL);
  kist_jgen_str (&g, "root");
  kist_jgen_map_open (&g);
  kist_jgen_kstr (&g, "path", d->rootfs);
  kist_jgen_kbool (&g, "readonly", true);
  kist_jgen_map_close (&g);
  kist_jgen_kstr (&g, "hostname", o->hostname);
  g_mounts (&g, o, d, userns);
  kist_jgen_str (&g, "annotations");
  kist_jgen_map_open (&g);
  kist_jgen_kstr (&g, "run.kist.seccomp.profile", o->seccomp);
  kist_jgen_kstr (&g, "run.kist.sandbox", "1");
  if (idmap_why)
    kist_jgen_kstr (&g, KIST_SANDBOX_IDMAP_ANNOTATION, idmap_why);
  kist_jgen_map_close (&g);

  kist_jgen_str (&g, "linux");
  kist_jgen_map_open (&g);
  kist_jgen_str (&g, "namespaces");
  kist_jgen_array_open (&g);
  const char *ns[] = { "pid", "mount", "ipc", "uts", "cgroup", o->net_host ? NULL : "network",
                       userns ? "user" : NULL };
  for (size_t i = 0; i < KIST_ARRAY_SIZE (ns); i++)
    if (ns[i])
      {
        kist_jgen_map_open (&g);
        kist_jgen_kstr (&g, "type", ns[i]);
        kist_jgen_map_close (&g);
      }
  kist_jgen_array_close (&g);
  if (rootless)
    {
      /* The caller, seen as the inside uid/gid, plus its subordinate ids
       * when it has them (rootless_maps). */
      kist_spec_gen_idmaps (&g, "uidMappings", um, nu);
      kist_spec_gen_idmaps (&g, "gidMappings", gm, ng);
    }
  else if (o->userns)
    {
      static const struct kist_idmap range = { .container_id = 0, .host_id = 100000,
                                               .size = 65536 };
      kist_spec_gen_idmaps (&g, "uidMappings", &range, 1);
      kist_spec_gen_idmaps (&g, "gidMappings", &range, 1);
    }
  kist_jgen_kstrv (&g, "maskedPaths", masked);
  kist_jgen_kstrv (&g, "readonlyPaths", readonly);
  kist_jgen_map_close (&g);
  kist_jgen_map_close (&g);
  return kist_sandbox_gen_take (&g, len, err);
}

char *
kist_sandbox_gen_take (struct kist_jgen *g, size_t *len, struct kist_error **err)
{
  if (g->failed)
    {
      yajl_gen_free (g->g);
      kist_error_make (err, EINVAL,
                       "kist sandbox: cannot build the config (an argument or variable is not "
                       "valid UTF-8)");
      return NULL;
    }
  char *json = kist_json_gen_take (g->g);
  yajl_gen_free (g->g);
  *len = strlen (json);
  return json;
}
