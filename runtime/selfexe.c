/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: protecting kist's own executable (CVE-2019-5736 class) and refusing
 * to run setuid (bubblewrap CVE-2020-5291 class).
 *
 * Every process that enters a container is a clone of kist, so until its
 * execve its /proc/self/exe is kist's binary.  An image can make the
 * container's program a script starting `#!/proc/self/exe`: the kernel then
 * executes kist's own binary inside the container (with the image's loader
 * and libraries, so the image's code runs in it), and that code can keep an
 * fd to /proc/self/exe and reopen it for writing once kist has exited.
 *
 * So before a command that enters a container does anything, kist
 * re-executes itself from a copy that cannot be written through any path:
 *   - as root: a detached, read-only bind mount of the binary (open_tree
 *     OPEN_TREE_CLONE + mount_setattr MOUNT_ATTR_RDONLY).  No copy; the mount
 *     is in no mount namespace, so nothing inside a container can reach it
 *     to remount it (mount_setattr and open_tree on it need CAP_SYS_ADMIN
 *     over the mount's owning namespace, the host's);
 *   - otherwise (no CAP_SYS_ADMIN), a sealed memfd copy (F_SEAL_WRITE |
 *     SHRINK | GROW | SEAL), which nobody can write.
 * A caller that cannot write the binary (a rootless kist installed by root)
 * needs neither: the container's processes have at most the caller's
 * credentials on the host.  Whether the running image is protected is
 * decided by asking the kernel about /proc/self/exe, never by an
 * environment variable.  bench/startup.sh measures the cost. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/mount.h>

#include "resolve.h"
#include "selfexe.h"
#include "util.h"

#define SEALS (F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE)

int
kist_self_refuse_setuid (struct kist_error **err)
{
  /* AT_SECURE: setuid, setgid or file capabilities gave this process more
   * than its caller has.  kist trusts its caller and its environment
   * (--root, XDG_RUNTIME_DIR, the log file): it must never run with
   * privileges the caller does not have. */
  if (getauxval (AT_SECURE) != 0 || getuid () != geteuid () || getgid () != getegid ())
    return kist_error_make (err, EPERM,
                            "kist is installed setuid, setgid or with file capabilities "
                            "(uid %u euid %u gid %u egid %u); it refuses to run that way: "
                            "remove the bits (chmod u-s,g-s; setcap -r) and run it as root or "
                            "rootless",
                            (unsigned) getuid (), (unsigned) geteuid (), (unsigned) getgid (),
                            (unsigned) getegid ());
  return 0;
}

/* Is the running image one nobody can write: a sealed memfd, or a file on a
 * read-only mount? */
static bool
exe_is_protected (int exe)
{
  int seals = fcntl (exe, F_GET_SEALS);
  if (seals >= 0 && (seals & F_SEAL_WRITE) && (seals & F_SEAL_SEAL))
    return true;
  struct statvfs sv;
  return fstatvfs (exe, &sv) == 0 && (sv.f_flag & ST_RDONLY);
}

/* Can anyone the container might run as write the image?  Root (no user
 * namespace in the config yet known) always could; another caller only when
 * the binary is writable by it (a build in its own home). */
static bool
exe_needs_protection (int exe)
{
  if (geteuid () == 0)
    return true;
  char p[32];
  return access (kist_fd_path (exe, p), W_OK) == 0;
}

/* A detached read-only bind mount of the image: an O_PATH fd on it. */
static int
readonly_clone (void)
{
  int tree = (int) syscall (SYS_open_tree, AT_FDCWD, "/proc/self/exe",
                            OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
  if (tree < 0)
    return -1;
  struct mount_attr attr = { .attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV };
  if (syscall (SYS_mount_setattr, tree, "", AT_EMPTY_PATH, &attr, sizeof attr) < 0)
    {
      close (tree);
      return -1;
    }
  return tree;
}

/* A sealed memfd copy of the image. */
static int
sealed_copy (int exe, struct kist_error **err)
{
  struct stat st;
  if (fstat (exe, &st) < 0)
    return kist_error_make (err, errno, "fstat /proc/self/exe");
  _cleanup_close_ int m = memfd_create ("kist", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (m < 0)
    return kist_error_make (err, errno, "memfd_create for a sealed copy of kist");
  off_t off = 0;
  while (off < st.st_size)
    {
      ssize_t n = sendfile (m, exe, &off, (size_t) (st.st_size - off));
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return kist_error_make (err, n < 0 ? errno : EIO, "copy kist's binary into a memfd");
    }
  if (fcntl (m, F_ADD_SEALS, SEALS) < 0)
    return kist_error_make (err, errno, "seal the memfd copy of kist");
  return steal_fd (&m);
}

int
kist_self_protect (char **argv, struct kist_error **err)
{
  _cleanup_close_ int exe = open ("/proc/self/exe", O_RDONLY | O_CLOEXEC);
  if (exe < 0)
    return kist_error_make (err, errno,
                            "open /proc/self/exe (kist must re-execute itself from a protected "
                            "copy before it enters a container; is /proc mounted?)");
  if (exe_is_protected (exe) || !exe_needs_protection (exe))
    return 0;
  _cleanup_close_ int copy = readonly_clone ();
  if (copy < 0 && (copy = sealed_copy (exe, err)) < 0)
    return -1;
  extern char **environ;
  char started[32];
  snprintf (started, sizeof started, "%lld", (long long) kist_started_usec);
  setenv (KIST_STARTED_ENV, started, 1); /* report timing only (util.h) */
  syscall (SYS_execveat, copy, "", argv, environ, AT_EMPTY_PATH);
  return kist_error_make (err, errno,
                          "re-execute kist from a protected copy of its binary (execveat)");
}
