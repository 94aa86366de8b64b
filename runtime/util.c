/* SPDX-License-Identifier: GPL-2.0-or-later */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <inttypes.h>
#include <time.h>
#include <sys/un.h>
#include <unistd.h>

#include "util.h"

void
kist_freep (void *p)
{
  void **pp = (void **) p;
  free (*pp);
  *pp = NULL;
}

void
kist_closep (int *fd)
{
  if (*fd >= 0)
    {
      int saved = errno;
      close (*fd);
      errno = saved;
    }
  *fd = -1;
}

void
kist_fclosep (FILE **f)
{
  if (*f)
    fclose (*f);
  *f = NULL;
}

void
kist_closedirp (DIR **d)
{
  if (*d)
    closedir (*d);
  *d = NULL;
}

struct dirent *
kist_readdir (DIR *d)
{
  for (;;)
    {
      errno = 0;
      struct dirent *de = readdir (d);
      if (de == NULL || (strcmp (de->d_name, ".") != 0 && strcmp (de->d_name, "..") != 0))
        return de;
    }
}

void
kist_strv_free (char **v)
{
  if (v == NULL)
    return;
  for (char **p = v; *p; p++)
    free (*p);
  free (v);
}

void
kist_strvfreep (char ***v)
{
  kist_strv_free (*v);
  *v = NULL;
}

size_t
kist_strv_len (char *const *v)
{
  size_t n = 0;
  while (v && v[n])
    n++;
  return n;
}

void *
xmalloc (size_t n)
{
  void *p = malloc (n ? n : 1);
  if (p == NULL)
    abort ();
  return p;
}

void *
xcalloc (size_t n, size_t m)
{
  void *p = calloc (n ? n : 1, m ? m : 1);
  if (p == NULL)
    abort ();
  return p;
}

void *
xrealloc (void *p, size_t n)
{
  p = realloc (p, n ? n : 1);
  if (p == NULL)
    abort ();
  return p;
}

void
kist_grow (char **buf, size_t *cap, size_t need, size_t min_cap)
{
  if (need <= *cap)
    return;
  size_t c = *cap ? *cap : min_cap;
  while (c < need)
    c *= 2;
  *buf = xrealloc (*buf, c);
  *cap = c;
}

char *
xstrdup (const char *s)
{
  if (s == NULL)
    return NULL;
  char *r = strdup (s);
  if (r == NULL)
    abort ();
  return r;
}

char *
xvasprintf (const char *fmt, va_list ap)
{
  char *r = NULL;
  if (vasprintf (&r, fmt, ap) < 0)
    abort ();
  return r;
}

char *
xasprintf (const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  char *r = xvasprintf (fmt, ap);
  va_end (ap);
  return r;
}

int
kist_write_all (int fd, const void *buf, size_t len)
{
  const char *p = buf;
  while (len > 0)
    {
      ssize_t w = write (fd, p, len);
      if (w < 0)
        {
          if (errno == EINTR)
            continue;
          return -errno;
        }
      p += w;
      len -= (size_t) w;
    }
  return 0;
}

ssize_t
kist_read_all (int fd, void *buf, size_t len)
{
  size_t got = 0;
  while (got < len)
    {
      ssize_t r = read (fd, (char *) buf + got, len - got);
      if (r < 0)
        {
          if (errno == EINTR)
            continue;
          return -errno;
        }
      if (r == 0)
        break;
      got += (size_t) r;
    }
  return (ssize_t) got;
}

int
kist_read_fd (int fd, size_t max, char **out, size_t *len, struct kist_error **err)
{
  size_t cap = 4096, used = 0;
  _cleanup_free_ char *buf = xmalloc (cap + 1);
  for (;;)
    {
      if (used == cap)
        {
          if (cap > max)
            return kist_error_make (err, EFBIG, "file is larger than %zu bytes", max);
          cap *= 2;
          buf = xrealloc (buf, cap + 1);
        }
      ssize_t r = read (fd, buf + used, cap - used);
      if (r < 0)
        {
          if (errno == EINTR)
            continue;
          return kist_error_make (err, errno, "read");
        }
      if (r == 0)
        break;
      used += (size_t) r;
      if (used > max)
        return kist_error_make (err, EFBIG, "file is larger than %zu bytes", max);
    }
  buf[used] = '\0';
  if (len)
    *len = used;
  *out = steal_pointer (&buf);
  return 0;
}

int
kist_read_file_at (int dirfd, const char *path, size_t max, char **out, size_t *len,
                   struct kist_error **err)
{
  _cleanup_close_ int fd = openat (dirfd, path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return kist_error_make (err, errno, "open `%s`", path);
  int ret = kist_read_fd (fd, max, out, len, err);
  if (ret < 0)
    return kist_error_wrap (err, "`%s`", path);
  return 0;
}

int
kist_write_file_at (int dirfd, const char *path, const void *data, size_t len,
                    struct kist_error **err)
{
  _cleanup_close_ int fd = openat (dirfd, path, O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0)
    return kist_error_make (err, errno, "open `%s` for writing", path);
  int r = kist_write_all (fd, data, len);
  if (r < 0)
    return kist_error_make (err, -r, "write `%s`", path);
  return 0;
}

/* Create name in dirfd (O_CREAT | extra: O_TRUNC or O_EXCL), write data
 * and set mode; on a failed write the file is unlinked. */
static int
create_write (int dirfd, const char *name, int extra, const void *data, size_t len, mode_t mode,
              struct kist_error **err)
{
  _cleanup_close_ int fd
      = openat (dirfd, name, O_WRONLY | O_CREAT | extra | O_CLOEXEC | O_NOFOLLOW, mode);
  if (fd < 0)
    return kist_error_make (err, errno, "create `%s`", name);
  int r = kist_write_all (fd, data, len);
  if (r == 0 && fchmod (fd, mode) < 0)
    r = -errno;
  if (r < 0)
    {
      unlinkat (dirfd, name, 0);
      return kist_error_make (err, -r, "write `%s`", name);
    }
  return 0;
}

/* The replacement is atomic for readers (they open the old file or the new
 * one, never a torn or half-written one) but not durable: no fsync.  What
 * kist replaces this way is runtime state (the state root is normally on
 * /run, a tmpfs that does not survive a reboot) or a report, so power-loss
 * durability is no goal.  An existing target is therefore swapped with
 * renameat2 (RENAME_EXCHANGE) and the old file (now under the temporary
 * name) unlinked: rename over an existing file makes ext4 (auto_da_alloc)
 * push the new file's data to disk first, 0.6-1.1 ms per rename on this
 * kind of machine, against ~0.02 ms for the exchange and the unlink.  A
 * missing target (ENOENT) or a file system or kernel without the exchange
 * (EINVAL, ENOSYS) falls back to a plain rename. */
int
kist_write_file_atomic (int dirfd, const char *name, const void *data, size_t len, mode_t mode,
                        struct kist_error **err)
{
  _cleanup_free_ char *tmp = xasprintf (".%s.tmp.%d", name, (int) getpid ());
  if (create_write (dirfd, tmp, O_TRUNC, data, len, mode, err) < 0)
    return -1;
  if (renameat2 (dirfd, tmp, dirfd, name, RENAME_EXCHANGE) == 0)
    {
      /* tmp now names the old file.  A kist killed before this unlink
       * leaves it in the directory, where delete and gc remove it with the
       * rest of the state dir. */
      if (unlinkat (dirfd, tmp, 0) == 0 || errno != EISDIR)
        return 0;
      /* name was a directory, which a rename would not have replaced: swap
       * it back and fail as that rename does. */
      renameat2 (dirfd, tmp, dirfd, name, RENAME_EXCHANGE);
      unlinkat (dirfd, tmp, 0);
      return kist_error_make (err, EISDIR, "rename `%s` to `%s`", tmp, name);
    }
  if (errno != EINVAL && errno != ENOENT && errno != ENOSYS)
    {
      int e = errno;
      unlinkat (dirfd, tmp, 0);
      return kist_error_make (err, e, "exchange `%s` with `%s`", tmp, name);
    }
  if (renameat (dirfd, tmp, dirfd, name) < 0)
    {
      int e = errno;
      unlinkat (dirfd, tmp, 0);
      return kist_error_make (err, e, "rename `%s` to `%s`", tmp, name);
    }
  return 0;
}

int
kist_write_file_new (int dirfd, const char *name, const void *data, size_t len, mode_t mode,
                     struct kist_error **err)
{
  return create_write (dirfd, name, O_EXCL, data, len, mode, err);
}

int
kist_write_file_atomic_path (const char *path, const void *data, size_t len, mode_t mode,
                             struct kist_error **err)
{
  const char *slash = strrchr (path, '/');
  const char *base = slash ? slash + 1 : path;
  _cleanup_free_ char *dir = slash == NULL    ? xstrdup (".")
                             : slash == path ? xstrdup ("/")
                                             : xasprintf ("%.*s", (int) (slash - path), path);
  if (base[0] == '\0' || strcmp (base, ".") == 0 || strcmp (base, "..") == 0)
    return kist_error_make (err, EISDIR, "`%s` names a directory, not a file", path);
  _cleanup_close_ int dfd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0)
    return kist_error_make (err, errno, "open the directory `%s`", dir);
  return kist_write_file_atomic (dfd, base, data, len, mode, err);
}

int
kist_parse_u64 (const char *s, uint64_t *out)
{
  if (s == NULL || *s < '0' || *s > '9')
    return -EINVAL;
  errno = 0;
  char *end = NULL;
  unsigned long long v = strtoull (s, &end, 10);
  if (errno || end == s || *end != '\0')
    return -EINVAL;
  *out = v;
  return 0;
}

int
kist_parse_size (const char *s, bool runc_syntax, uint64_t *out)
{
  if (s == NULL || *s < '0' || *s > '9')
    return -EINVAL;
  const char *p = s;
  uint64_t whole = 0, frac = 0, frac_div = 1;
  for (; *p >= '0' && *p <= '9'; p++)
    {
      unsigned digit = (unsigned) (*p - '0');
      if (whole > (UINT64_MAX - digit) / 10)
        return -ERANGE;
      whole = whole * 10 + digit;
    }
  if (runc_syntax && *p == '.')
    {
      p++;
      if (*p < '0' || *p > '9')
        return -EINVAL;
      for (; *p >= '0' && *p <= '9'; p++)
        if (frac_div < 1000000000000ULL)
          {
            frac = frac * 10 + (uint64_t) (*p - '0');
            frac_div *= 10;
          }
    }
  unsigned shift = 0;
  switch (*p)
    {
    case 'k': case 'K': shift = 10; break;
    case 'm': case 'M': shift = 20; break;
    case 'g': case 'G': shift = 30; break;
    case 't': case 'T': shift = 40; break;
    case 'p': case 'P': shift = runc_syntax ? 50 : 0; break;
    default: break;
    }
  if (shift)
    p++;
  if (shift && runc_syntax && (*p == 'i' || *p == 'I'))
    p++;
  if (*p == 'b' || *p == 'B')
    p++;
  if (*p != '\0')
    return -EINVAL;
  if (whole > (UINT64_MAX >> shift))
    return -ERANGE;
  unsigned __int128 v = ((unsigned __int128) whole << shift)
                        + (((unsigned __int128) frac << shift) / frac_div);
  if (v > UINT64_MAX)
    return -ERANGE;
  *out = (uint64_t) v;
  return 0;
}

int
kist_parse_int (const char *s, int *out)
{
  if (s == NULL || !((*s >= '0' && *s <= '9') || (*s == '-' && s[1] >= '0' && s[1] <= '9')))
    return -EINVAL;
  errno = 0;
  char *end = NULL;
  long v = strtol (s, &end, 10);
  if (errno || *end != '\0' || v < INT_MIN || v > INT_MAX)
    return -EINVAL;
  *out = (int) v;
  return 0;
}

char *
kist_rstrip (char *s)
{
  size_t n = strlen (s);
  while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
    s[--n] = '\0';
  return s;
}

bool
kist_list_contains (const char *csv, const char *item)
{
  if (csv == NULL || item == NULL)
    return false;
  size_t il = strlen (item);
  const char *p = csv;
  while (*p)
    {
      const char *c = strchr (p, ',');
      size_t l = c ? (size_t) (c - p) : strlen (p);
      if ((l == 3 && strncmp (p, "all", 3) == 0) || (l == il && strncmp (p, item, l) == 0))
        return true;
      if (c == NULL)
        break;
      p = c + 1;
    }
  return false;
}

char *
kist_fd_link (int fd)
{
  char link[32], buf[PATH_MAX];
  snprintf (link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t n = readlink (link, buf, sizeof buf - 1);
  if (n <= 0 || n >= (ssize_t) sizeof buf - 1)
    return NULL;
  buf[n] = '\0';
  return xstrdup (buf);
}

char *
kist_fd_realpath (int fd)
{
  char *p = kist_fd_link (fd);
  if (p == NULL)
    return NULL;
  size_t n = strlen (p);
  /* Not a path ("anon_inode:..."), or a removed directory, which reads
   * "PATH (deleted)": no path to give. */
  if (p[0] != '/' || (n > 10 && strcmp (p + n - 10, " (deleted)") == 0))
    {
      free (p);
      return NULL;
    }
  return p;
}

char *
kist_realpath (const char *path)
{
  int fd = open (path, O_PATH | O_CLOEXEC);
  if (fd < 0)
    return NULL;
  char *p = kist_fd_realpath (fd);
  close (fd);
  return p ? p : realpath (path, NULL);
}

/* The UTC date of a day count since 1970-01-01 (the proleptic Gregorian
 * calendar, H. Hinnant's days_from_civil inverted): gmtime_r would do, but
 * glibc's first call of it reads the time zone (/etc/localtime: an open,
 * two fstats, two reads, an lseek and a close) that a UTC time never uses. */
static void
civil_from_days (int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
  z += 719468;
  int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  unsigned doe = (unsigned) (z - era * 146097);
  unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  unsigned mp = (5 * doy + 2) / 153;
  *d = doy - (153 * mp + 2) / 5 + 1;
  *m = mp < 10 ? mp + 3 : mp - 9;
  *y = (int64_t) yoe + era * 400 + (*m <= 2);
}

char *
kist_time_rfc3339 (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_REALTIME, &ts);
  return kist_time_rfc3339_at (&ts);
}

char *
kist_time_rfc3339_at (const struct timespec *t)
{
  struct timespec ts = *t;
  int64_t secs = (int64_t) ts.tv_sec, days = secs / 86400, rem = secs % 86400;
  if (rem < 0)
    rem += 86400, days--;
  int64_t y;
  unsigned mo, d;
  civil_from_days (days, &y, &mo, &d);
  return xasprintf ("%04" PRId64 "-%02u-%02uT%02u:%02u:%02u.%09ldZ", y, mo, d,
                    (unsigned) (rem / 3600), (unsigned) (rem / 60 % 60), (unsigned) (rem % 60),
                    ts.tv_nsec);
}

bool
kist_is_mount_root (int dirfd, const char *name)
{
  struct statx stx;
  if (statx (dirfd, name, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT, STATX_TYPE, &stx) < 0)
    return false;
  return (stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT)
         && (stx.stx_attributes & STATX_ATTR_MOUNT_ROOT);
}

int
kist_unix_connect (const char *path, const char *what, const char *hint, struct kist_error **err)
{
  struct sockaddr_un addr = { .sun_family = AF_UNIX };
  _cleanup_close_ int dirfd = -1;
  if (strlen (path) < sizeof addr.sun_path)
    memcpy (addr.sun_path, path, strlen (path) + 1);
  else
    {
      _cleanup_free_ char *d = xstrdup (path), *b = xstrdup (path);
      const char *dir = dirname (d), *base = basename (b);
      dirfd = open (dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
      if (dirfd < 0)
        return kist_error_make (err, errno, "%s `%s`: open its directory", what, path);
      if ((size_t) snprintf (addr.sun_path, sizeof addr.sun_path, "/proc/self/fd/%d/%s", dirfd,
                             base)
          >= sizeof addr.sun_path)
        return kist_error_make (err, ENAMETOOLONG, "%s `%s`", what, path);
    }
  _cleanup_close_ int s = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0)
    return kist_error_make (err, errno, "socket(AF_UNIX)");
  int r;
  do
    r = connect (s, (struct sockaddr *) &addr, sizeof addr);
  while (r < 0 && errno == EINTR);
  if (r < 0)
    return kist_error_make (err, errno, "%s `%s`: connect (%s)", what, path, hint);
  return steal_fd (&s);
}

ssize_t
kist_send_with_fd (int sock, const void *data, size_t len, int fd)
{
  union
  {
    char buf[CMSG_SPACE (sizeof (int))];
    struct cmsghdr align;
  } ctl;
  memset (&ctl, 0, sizeof ctl);
  struct iovec iov = { .iov_base = (void *) data, .iov_len = len };
  struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
                        .msg_controllen = sizeof ctl.buf };
  struct cmsghdr *c = CMSG_FIRSTHDR (&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN (sizeof (int));
  memcpy (CMSG_DATA (c), &fd, sizeof (int));
  ssize_t w;
  do
    w = sendmsg (sock, &msg, MSG_NOSIGNAL);
  while (w < 0 && errno == EINTR);
  return w < 0 ? -errno : w;
}

int64_t kist_started_usec;

int64_t
kist_monotonic_usec (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (int64_t) ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

void
kist_started_init (void)
{
  int64_t now = kist_monotonic_usec ();
  const char *env = getenv (KIST_STARTED_ENV);
  uint64_t v = 0;
  kist_started_usec = now;
  if (env && kist_parse_u64 (env, &v) == 0 && (int64_t) v <= now && now - (int64_t) v < 10000000)
    kist_started_usec = (int64_t) v;
  unsetenv (KIST_STARTED_ENV);
}
