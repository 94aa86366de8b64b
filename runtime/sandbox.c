/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: `kist sandbox`: its options, the OCI config built in memory, and the
 * sandbox directory under the state root (see sandbox.h). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yajl/yajl_gen.h>

#include "json.h"
#include "sandbox.h"
#include "util.h"

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
  free (o->workdir);
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
kist_sandbox_parse_size (const char *s, uint64_t *out)
{
  if (s == NULL || *s < '0' || *s > '9')
    return -EINVAL;
  errno = 0;
  char *end = NULL;
  unsigned long long v = strtoull (s, &end, 10);
  if (errno != 0 || end == s)
    return -EINVAL;
  unsigned shift = 0;
  switch (*end)
    {
    case 'k': case 'K': shift = 10; end++; break;
    case 'm': case 'M': shift = 20; end++; break;
    case 'g': case 'G': shift = 30; end++; break;
    case 't': case 'T': shift = 40; end++; break;
    default: break;
    }
  if ((*end == 'b' || *end == 'B') && (shift > 0 || end[1] == '\0'))
    end++;
  if (*end != '\0')
    return -EINVAL;
  if (shift && v > (UINT64_MAX >> shift))
    return -ERANGE;
  *out = (uint64_t) v << shift;
  return 0;
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
kist_sandbox_add_bind (struct kist_sandbox_opts *o, const char *arg, bool rw,
                       struct kist_error **err)
{
  const char *flag = rw ? "--rw" : "--ro";
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
      if (kist_sandbox_parse_size (colon + 1, &size) < 0 || size == 0)
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

/* ----------------------------------------------------------- directory */

void
kist_sandbox_dir_clear (struct kist_sandbox_dir *d)
{
  free (d->path);
  free (d->rootfs);
  free (d->work);
  memset (d, 0, sizeof *d);
}

/* Open (creating it if missing) a directory owned by us, mode as given, not
 * a symlink. */
static int
open_own_dir (int dirfd, const char *name, mode_t mode, const char *what, struct kist_error **err)
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

/* Merged usr: the host's /bin, /lib, /lib64, /sbin are symlinks into usr/;
 * with /usr bound, the same symlinks in the empty root make /bin/sh work. */
static int
merged_usr_links (int rootfs_fd, const struct kist_sandbox_opts *o, struct kist_error **err)
{
  static const char *const names[] = { "bin", "lib", "lib32", "lib64", "libx32", "sbin" };
  if (!bound (o, "/usr"))
    return 0;
  for (size_t i = 0; i < KIST_ARRAY_SIZE (names); i++)
    {
      char host[32], target[PATH_MAX];
      snprintf (host, sizeof host, "/%s", names[i]);
      if (bound (o, host))
        continue;
      ssize_t n = readlink (host, target, sizeof target - 1);
      if (n < 0)
        continue;   /* not a symlink here (or absent): not merged */
      target[n] = '\0';
      if (strncmp (target, "usr/", 4) != 0 && strncmp (target, "/usr/", 5) != 0)
        continue;
      if (symlinkat (target, rootfs_fd, names[i]) < 0)
        return kist_error_make (err, errno, "merged /usr: symlink %s -> %s in the sandbox root",
                                names[i], target);
    }
  return 0;
}

/* Remove dirfd/name recursively.  Never follows symlinks and never crosses
 * into another filesystem (dev: the sandbox dir's). */
static int
remove_tree (int dirfd, const char *name, dev_t dev, const char *where, struct kist_error **err)
{
  struct stat st;
  if (fstatat (dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return errno == ENOENT ? 0 : kist_error_make (err, errno, "stat %s/%s", where, name);
  if (!S_ISDIR (st.st_mode))
    {
      if (unlinkat (dirfd, name, 0) < 0 && errno != ENOENT)
        return kist_error_make (err, errno, "remove %s/%s", where, name);
      return 0;
    }
  _cleanup_free_ char *path = xasprintf ("%s/%s", where, name);
  if (st.st_dev != dev)
    return kist_error_make (err, EXDEV,
                            "%s is on another filesystem (a mount on the host?); kist does not "
                            "remove across mounts: unmount it, then run `kist gc`",
                            path);
  int fd = openat (dirfd, name, O_DIRECTORY | O_NOFOLLOW | O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return kist_error_make (err, errno, "open %s", path);
  DIR *d = fdopendir (fd);
  if (d == NULL)
    {
      close (fd);
      return kist_error_make (err, errno, "read %s", path);
    }
  struct dirent *de;
  int ret = 0;
  errno = 0;
  while ((de = readdir (d)) != NULL)
    {
      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
        continue;
      if ((ret = remove_tree (fd, de->d_name, dev, path, err)) < 0)
        break;
      errno = 0;
    }
  closedir (d);
  if (ret < 0)
    return ret;
  if (unlinkat (dirfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
    return kist_error_make (err, errno, "remove %s", path);
  return 0;
}

int
kist_sandbox_dir_remove (int rootfd, const char *id, bool keep_work, struct kist_error **err)
{
  _cleanup_close_ int sbfd
      = openat (rootfd, KIST_SANDBOX_DIR, O_DIRECTORY | O_NOFOLLOW | O_RDONLY | O_CLOEXEC);
  if (sbfd < 0)
    return errno == ENOENT ? 0
                           : kist_error_make (err, errno, "sandbox teardown: open ROOT/%s",
                                              KIST_SANDBOX_DIR);
  struct stat st;
  if (fstat (sbfd, &st) < 0)
    return kist_error_make (err, errno, "sandbox teardown: stat ROOT/%s", KIST_SANDBOX_DIR);
  _cleanup_free_ char *where = xasprintf ("ROOT/%s", KIST_SANDBOX_DIR);
  if (keep_work)
    {
      _cleanup_close_ int idfd = openat (sbfd, id, O_DIRECTORY | O_NOFOLLOW | O_RDONLY | O_CLOEXEC);
      if (idfd < 0)
        return errno == ENOENT ? 0
                               : kist_error_make (err, errno, "sandbox teardown: open %s/%s",
                                                  where, id);
      _cleanup_free_ char *idwhere = xasprintf ("%s/%s", where, id);
      if (remove_tree (idfd, "rootfs", st.st_dev, idwhere, err) < 0)
        return kist_error_wrap (err, "sandbox teardown");
      if (faccessat (idfd, "rootfs", F_OK, AT_SYMLINK_NOFOLLOW) == 0)
        return kist_error_make (err, EEXIST, "sandbox teardown: %s/rootfs is still there",
                                idwhere);
      return 0;
    }
  if (remove_tree (sbfd, id, st.st_dev, where, err) < 0)
    return kist_error_wrap (err, "sandbox teardown");
  if (faccessat (sbfd, id, F_OK, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT)
    return kist_error_make (err, EEXIST, "sandbox teardown: %s/%s is still there", where, id);
  /* ROOT/~sandbox itself stays (other sandboxes may be using it). */
  return 0;
}

int
kist_sandbox_dir_create (int rootfd, const char *root_path, const char *id,
                         const struct kist_sandbox_opts *o, struct kist_sandbox_dir *out,
                         struct kist_error **err)
{
  memset (out, 0, sizeof *out);
  _cleanup_free_ char *sbwhat = xasprintf ("the sandbox directory %s/%s", root_path,
                                           KIST_SANDBOX_DIR);
  _cleanup_close_ int sbfd = open_own_dir (rootfd, KIST_SANDBOX_DIR, 0700, sbwhat, err);
  if (sbfd < 0)
    return -1;
  _cleanup_free_ char *path = xasprintf ("%s/%s/%s", root_path, KIST_SANDBOX_DIR, id);
  if (mkdirat (sbfd, id, 0700) < 0)
    return kist_error_make (err, errno, "create %s", path);
  _cleanup_close_ int idfd = openat (sbfd, id, O_DIRECTORY | O_NOFOLLOW | O_RDONLY | O_CLOEXEC);
  if (idfd < 0)
    {
      kist_error_make (err, errno, "open %s", path);
      goto fail;
    }
  if (o->rootfs)
    out->rootfs = xstrdup (o->rootfs);
  else
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
      if (merged_usr_links (rfd, o, err) < 0)
        goto fail;
      out->rootfs = xasprintf ("%s/rootfs", path);
    }
  if (o->keep)
    {
      if (mkdirat (idfd, "work", 0700) < 0)
        {
          kist_error_make (err, errno, "create %s/work", path);
          goto fail;
        }
      _cleanup_close_ int wfd = openat (idfd, "work", O_DIRECTORY | O_NOFOLLOW | O_RDONLY | O_CLOEXEC);
      if (wfd < 0)
        {
          kist_error_make (err, errno, "open %s/work", path);
          goto fail;
        }
      /* Owned by the sandbox user on the host: as root that is the inside
       * uid (shifted by 100000 with --userns); rootless it is the caller
       * (the inside uid is mapped to it), so nothing to change. */
      if (geteuid () == 0)
        {
          uid_t u = o->uid + (o->userns ? 100000u : 0u);
          gid_t g = o->gid + (o->userns ? 100000u : 0u);
          if (fchown (wfd, u, g) < 0)
            {
              kist_error_make (err, errno, "chown %s/work to %u:%u", path, (unsigned) u,
                               (unsigned) g);
              goto fail;
            }
        }
      if (fchmod (wfd, 0755) < 0)
        {
          kist_error_make (err, errno, "chmod %s/work", path);
          goto fail;
        }
      out->work = xasprintf ("%s/work", path);
    }
  out->path = steal_pointer (&path);
  return 0;

fail:
  {
    struct stat st;
    _cleanup_error_ struct kist_error *rerr = NULL;
    if (fstat (sbfd, &st) == 0)
      remove_tree (sbfd, id, st.st_dev, "ROOT/" KIST_SANDBOX_DIR, &rerr);
    kist_sandbox_dir_clear (out);
    return kist_error_wrap (err, "kist sandbox");
  }
}

/* ---------------------------------------------------------------- config */

struct gen
{
  yajl_gen g;
  bool failed;
};

static void
g_ok (struct gen *g, yajl_gen_status st)
{
  if (st != yajl_gen_status_ok)
    g->failed = true;
}

static void
g_str (struct gen *g, const char *s)
{
  g_ok (g, yajl_gen_string (g->g, (const unsigned char *) s, strlen (s)));
}

static void
g_key (struct gen *g, const char *k)
{
  g_str (g, k);
}

static void
g_kstr (struct gen *g, const char *k, const char *v)
{
  g_str (g, k);
  g_str (g, v);
}

static void
g_kint (struct gen *g, const char *k, long long v)
{
  g_str (g, k);
  g_ok (g, yajl_gen_integer (g->g, v));
}

static void
g_kbool (struct gen *g, const char *k, bool v)
{
  g_str (g, k);
  g_ok (g, yajl_gen_bool (g->g, v));
}

static void
g_map (struct gen *g, bool open)
{
  g_ok (g, open ? yajl_gen_map_open (g->g) : yajl_gen_map_close (g->g));
}

static void
g_arr (struct gen *g, bool open)
{
  g_ok (g, open ? yajl_gen_array_open (g->g) : yajl_gen_array_close (g->g));
}

static void
g_strv (struct gen *g, const char *key, const char *const *v)
{
  g_key (g, key);
  g_arr (g, true);
  for (size_t i = 0; v && v[i]; i++)
    g_str (g, v[i]);
  g_arr (g, false);
}

/* One mount entry; options NULL-terminated. */
static void
g_mount (struct gen *g, const char *dest, const char *type, const char *source,
         const char *const *options)
{
  g_map (g, true);
  g_kstr (g, "destination", dest);
  g_kstr (g, "type", type);
  g_kstr (g, "source", source);
  g_strv (g, "options", options);
  g_map (g, false);
}

static void
g_tmpfs (struct gen *g, const char *dest, const char *source, uint64_t size, uint64_t inodes,
         const char *mode)
{
  _cleanup_free_ char *sz = xasprintf ("size=%llu", (unsigned long long) size);
  _cleanup_free_ char *ino = inodes ? xasprintf ("nr_inodes=%llu", (unsigned long long) inodes)
                                    : NULL;
  _cleanup_free_ char *md = xasprintf ("mode=%s", mode);
  const char *opts[] = { "nosuid", "nodev", md, sz, ino, NULL };
  g_mount (g, dest, "tmpfs", source, opts);
}

static void
g_idmap (struct gen *g, const char *key, uint32_t cid, uint32_t hid, uint32_t size)
{
  g_key (g, key);
  g_arr (g, true);
  g_map (g, true);
  g_kint (g, "containerID", cid);
  g_kint (g, "hostID", hid);
  g_kint (g, "size", size);
  g_map (g, false);
  g_arr (g, false);
}

static const char *const rlimit_names[KIST_SB_RLIMIT_COUNT] = {
  [KIST_SB_RLIMIT_NOFILE] = "RLIMIT_NOFILE", [KIST_SB_RLIMIT_FSIZE] = "RLIMIT_FSIZE",
  [KIST_SB_RLIMIT_NPROC] = "RLIMIT_NPROC",   [KIST_SB_RLIMIT_CORE] = "RLIMIT_CORE",
  [KIST_SB_RLIMIT_CPU] = "RLIMIT_CPU",
};

static void
g_process (struct gen *g, const struct kist_sandbox_opts *o)
{
  static const char *const none[] = { NULL };
  g_key (g, "process");
  g_map (g, true);
  g_kbool (g, "terminal", false);
  g_key (g, "user");
  g_map (g, true);
  g_kint (g, "uid", o->uid);
  g_kint (g, "gid", o->gid);
  g_map (g, false);
  g_strv (g, "args", (const char *const *) o->args);
  g_strv (g, "env", (const char *const *) o->env);
  g_kstr (g, "cwd", o->cwd ? o->cwd : o->workdir);
  /* No capabilities at all: every set present and empty. */
  g_key (g, "capabilities");
  g_map (g, true);
  g_strv (g, "bounding", none);
  g_strv (g, "effective", none);
  g_strv (g, "inheritable", none);
  g_strv (g, "permitted", none);
  g_strv (g, "ambient", none);
  g_map (g, false);
  g_key (g, "rlimits");
  g_arr (g, true);
  for (int i = 0; i < KIST_SB_RLIMIT_COUNT; i++)
    if (o->has_rlimit[i])
      {
        g_map (g, true);
        g_kstr (g, "type", rlimit_names[i]);
        g_kint (g, "hard", (long long) o->rlimit[i]);
        g_kint (g, "soft", (long long) o->rlimit[i]);
        g_map (g, false);
      }
  g_arr (g, false);
  g_kbool (g, "noNewPrivileges", true);
  g_map (g, false);
}

static void
g_mounts (struct gen *g, const struct kist_sandbox_opts *o, const struct kist_sandbox_dir *d,
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

  g_key (g, "mounts");
  g_arr (g, true);
  g_mount (g, "/proc", "proc", "proc", proc_opts);
  g_mount (g, "/dev", "tmpfs", "tmpfs", dev_opts);
  g_mount (g, "/dev/pts", "devpts", "devpts", userns ? pts_userns : pts_root);
  g_mount (g, "/dev/shm", "tmpfs", "shm", shm_opts);
  g_tmpfs (g, "/tmp", "tmpfs", 64 * MIB, 0, "1777");
  for (size_t i = 0; i < o->n_binds; i++)
    g_mount (g, o->binds[i].dest, "bind", o->binds[i].src, o->binds[i].rw ? rw_opts : ro_opts);
  for (size_t i = 0; i < o->n_tmpfs; i++)
    g_tmpfs (g, o->tmpfs[i].dest, "tmpfs", o->tmpfs[i].size, 0, "1777");
  if (d->work)
    g_mount (g, o->workdir, "bind", d->work, rw_opts);
  else
    g_tmpfs (g, o->workdir, "scratch", o->scratch_size, o->scratch_inodes, "1777");
  g_arr (g, false);
}

static void
g_resources (struct gen *g, const struct kist_sandbox_opts *o)
{
  if (!o->has_memory && !o->has_pids && !o->has_cpus)
    return;
  g_key (g, "resources");
  g_map (g, true);
  if (o->has_memory)
    {
      g_key (g, "memory");
      g_map (g, true);
      g_kint (g, "limit", (long long) o->memory);
      g_map (g, false);
    }
  if (o->has_cpus)
    {
      g_key (g, "cpu");
      g_map (g, true);
      long long quota = (long long) (o->cpus * 100000.0 + 0.5);
      g_kint (g, "quota", quota < 1000 ? 1000 : quota);
      g_kint (g, "period", 100000);
      g_map (g, false);
    }
  if (o->has_pids)
    {
      g_key (g, "pids");
      g_map (g, true);
      g_kint (g, "limit", o->pids);
      g_map (g, false);
    }
  g_map (g, false);
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
  struct gen g = { .g = kist_json_gen_new (false, true) };
  g_map (&g, true);
  g_kstr (&g, "ociVersion", "1.2.0");
  g_process (&g, o);
  g_key (&g, "root");
  g_map (&g, true);
  g_kstr (&g, "path", d->rootfs);
  g_kbool (&g, "readonly", true);
  g_map (&g, false);
  g_kstr (&g, "hostname", o->hostname);
  g_mounts (&g, o, d, userns);
  g_key (&g, "annotations");
  g_map (&g, true);
  g_kstr (&g, "run.kist.seccomp.profile", o->seccomp);
  g_kstr (&g, "run.kist.sandbox", "1");
  g_map (&g, false);

  g_key (&g, "linux");
  g_map (&g, true);
  g_key (&g, "namespaces");
  g_arr (&g, true);
  const char *ns[] = { "pid", "mount", "ipc", "uts", "cgroup", o->net_host ? NULL : "network",
                       userns ? "user" : NULL };
  for (size_t i = 0; i < KIST_ARRAY_SIZE (ns); i++)
    if (ns[i])
      {
        g_map (&g, true);
        g_kstr (&g, "type", ns[i]);
        g_map (&g, false);
      }
  g_arr (&g, false);
  if (rootless)
    {
      /* Only the caller exists in the namespace, seen as the inside uid/gid. */
      g_idmap (&g, "uidMappings", o->uid, (uint32_t) euid, 1);
      g_idmap (&g, "gidMappings", o->gid, (uint32_t) egid, 1);
    }
  else if (o->userns)
    {
      g_idmap (&g, "uidMappings", 0, 100000, 65536);
      g_idmap (&g, "gidMappings", 0, 100000, 65536);
    }
  g_resources (&g, o);
  g_strv (&g, "maskedPaths", masked);
  g_strv (&g, "readonlyPaths", readonly);
  g_map (&g, false);
  g_map (&g, false);

  if (g.failed)
    {
      yajl_gen_free (g.g);
      kist_error_make (err, EINVAL,
                       "kist sandbox: cannot build the config (an argument or variable is not "
                       "valid UTF-8)");
      return NULL;
    }
  char *json = kist_json_gen_take (g.g);
  yajl_gen_free (g.g);
  *len = strlen (json);
  return json;
}
