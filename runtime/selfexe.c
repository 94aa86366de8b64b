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
 * So before a command that enters a container does anything, kist makes
 * its running image a copy that cannot be written through any path:
 *   - as root: a detached, read-only bind mount of the binary (open_tree
 *     OPEN_TREE_CLONE + mount_setattr MOUNT_ATTR_RDONLY).  No copy; the mount
 *     is in no mount namespace, so nothing inside a container can reach it
 *     to remount it (mount_setattr and open_tree on it need CAP_SYS_ADMIN
 *     over the mount's owning namespace, the host's);
 *   - otherwise (no CAP_SYS_ADMIN), a sealed memfd copy (F_SEAL_WRITE |
 *     SHRINK | GROW | SEAL), which nobody can write.
 * With the read-only bind mount, kist moves its running image onto it
 * without an exec (rebind_image below): every mapping of its binary is
 * replaced, at the same address, by the same bytes mapped from the copy, and
 * mm->exe_file is switched with PR_SET_MM_MAP, which the kernel refuses while
 * any mapping of the old file is left.  That costs about 0.1 ms; a second
 * exec of kist costs about 1.3 ms here (the dynamic load, and glibc's CPU
 * cache probe, whose cpuid traps to the hypervisor).  Where the rebind is
 * refused (no CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE, a kernel without
 * CONFIG_CHECKPOINT_RESTORE), and for the memfd, kist re-executes itself
 * from the copy (execveat).
 * A caller that cannot write the binary (a rootless kist installed by root)
 * needs neither: the container's processes have at most the caller's
 * credentials on the host.  Nor does a caller that knows, before anything
 * enters the container, that the processes inside hold no capability and
 * are not the binary's owner, with no group or other write bit and no ACL
 * on it (kist_self_protect_for: sandbox as root, whose users are uid 65534
 * with an empty bounding set): opening /proc/PID/exe for writing checks the
 * file's permissions, as any open does.  Whether the running image is protected is
 * decided by asking the kernel about /proc/self/exe, never by an
 * environment variable.  bench/startup.sh measures the cost. */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/mount.h>
#include <linux/prctl.h>

#include "log.h"
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

/* File systems whose permission checks are the kernel's, on the mode bits
 * and ACLs of the inode (not a FUSE daemon's or an NFS server's). */
static bool
fs_checks_modes (int fd)
{
  struct statfs sf;
  if (fstatfs (fd, &sf) < 0)
    return false;
  switch ((unsigned long) sf.f_type)
    {
    case 0xEF53:     /* ext2, ext3, ext4 */
    case 0x58465342: /* xfs */
    case 0x9123683E: /* btrfs */
    case 0x01021994: /* tmpfs */
    case 0x794C7630: /* overlayfs */
    case 0xF2F52010: /* f2fs */
      return true;
    default:
      return false;
    }
}

/* Why the container's processes (in) cannot write the image through any
 * path, or NULL when they might.  Writing needs DAC write permission on the
 * inode: they are not its owner (who could chmod it), no group or other
 * write bit is set, no ACL can grant more (none is set), and without any
 * capability nothing overrides that (CAP_DAC_OVERRIDE, CAP_FOWNER) or makes
 * them the owner (CAP_SETUID, CAP_CHOWN).  Through /proc/PID/exe of kist's
 * processes they get nothing more: the file's permissions are checked on
 * open, and the init that stays root is not theirs to ptrace. */
static char *
exe_unwritable_by (int exe, const struct kist_inside_creds *in)
{
  struct stat st;
  if (fstat (exe, &st) < 0 || !S_ISREG (st.st_mode) || st.st_uid == in->uid
      || (st.st_mode & (S_IWGRP | S_IWOTH)) != 0 || !fs_checks_modes (exe))
    return NULL;
  if (fgetxattr (exe, "system.posix_acl_access", NULL, 0) >= 0
      || (errno != ENODATA && errno != ENOTSUP))
    return NULL;
  return xasprintf ("the container's processes (uid %u gid %u, no capabilities) cannot write "
                    "kist's binary (owner %u, mode %04o, no ACL)",
                    (unsigned) in->uid, (unsigned) in->gid, (unsigned) st.st_uid,
                    (unsigned) (st.st_mode & 07777));
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

/* The kernel's view of the image's layout (/proc/self/stat fields 26-28 and
 * 45-51, the current brk), for PR_SET_MM_MAP, which sets them all: the
 * values it is given are the ones it has. */
static int
mm_map_now (struct prctl_mm_map *m)
{
  char buf[1024];
  int fd = open ("/proc/self/stat", O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  ssize_t n = read (fd, buf, sizeof buf - 1);
  close (fd);
  if (n <= 0)
    return -1;
  buf[n] = '\0';
  char *p = strrchr (buf, ')'); /* the name may hold ") " itself */
  if (p == NULL)
    return -1;
  unsigned long long f[52] = { 0 };
  p++;
  for (int i = 3; i <= 51; i++)
    {
      while (*p == ' ')
        p++;
      if (*p == '\0' || *p == '\n')
        return -1;
      char *end;
      f[i] = strtoull (p, &end, 10);
      if (end == p) /* field 3, the state letter */
        while (*end != ' ' && *end != '\0')
          end++;
      p = end;
    }
  long brk = syscall (SYS_brk, 0);
  *m = (struct prctl_mm_map) {
    .start_code = f[26], .end_code = f[27], .start_stack = f[28],
    .start_data = f[45], .end_data = f[46], .start_brk = f[47], .brk = (unsigned long) brk,
    .arg_start = f[48], .arg_end = f[49], .env_start = f[50], .env_end = f[51],
    .auxv = NULL, .auxv_size = 0, /* 0: the saved auxv stays */
  };
  return m->start_code != 0 && m->arg_start != 0 ? 0 : -1;
}

/* Replace the mapping of one PT_LOAD segment's file pages by the same pages
 * mapped from COPY (readable fd on the protected copy): mapped elsewhere,
 * the bytes a writable segment holds now (relocations, data) copied in, then
 * moved over the old mapping by mremap, so the old bytes stay in place until
 * the new ones replace them in one step (the code and GOT in use are never
 * missing).  The RELRO part is made read-only again, as ld.so left it. */
static int
rebind_segment (int copy, const ElfW (Phdr) * ph, ElfW (Addr) bias, ElfW (Addr) relro,
                ElfW (Addr) relro_end, size_t pg)
{
  ElfW (Addr) start = (bias + ph->p_vaddr) & ~(pg - 1);
  ElfW (Addr) end = (bias + ph->p_vaddr + ph->p_filesz + pg - 1) & ~(pg - 1);
  size_t len = end - start;
  bool writable = (ph->p_flags & PF_W) != 0;
  int prot = (ph->p_flags & PF_R ? PROT_READ : 0) | (writable ? PROT_WRITE : 0)
             | (ph->p_flags & PF_X ? PROT_EXEC : 0);
  void *tmp = mmap (NULL, len, prot, MAP_PRIVATE, copy, (off_t) (ph->p_offset & ~(pg - 1)));
  if (tmp == MAP_FAILED)
    return -1;
  if (writable)
    memcpy (tmp, (const void *) start, len);
  if (mremap (tmp, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, (void *) start) == MAP_FAILED)
    {
      munmap (tmp, len);
      return -1;
    }
  if (writable && relro_end > relro && relro >= start && relro < end)
    {
      ElfW (Addr) rs = relro & ~(pg - 1), re = relro_end & ~(pg - 1);
      if (re > rs && mprotect ((void *) rs, re - rs, PROT_READ) < 0)
        return -1;
    }
  return 0;
}

/* Make COPY (an O_PATH fd on the protected copy of the running binary) the
 * running image without an exec: its mappings, then mm->exe_file.  Returns
 * 0, or -1 with errno when the kernel refused a step: the caller then
 * re-executes, which replaces whatever was done here (every step leaves the
 * same bytes at the same addresses, so kist runs on either way). */
static int
rebind_image (int copy)
{
  char p[32];
  _cleanup_close_ int fd = open (kist_fd_path (copy, p), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  const ElfW (Phdr) *phdr = (const ElfW (Phdr) *) getauxval (AT_PHDR);
  size_t phnum = getauxval (AT_PHNUM);
  size_t pg = (size_t) getauxval (AT_PAGESZ);
  if (phdr == NULL || phnum == 0 || pg == 0)
    return errno = ENOEXEC, -1;
  ElfW (Addr) bias = 0, relro = 0, relro_end = 0;
  bool have_bias = false;
  for (size_t i = 0; i < phnum; i++)
    if (phdr[i].p_type == PT_PHDR)
      {
        bias = (ElfW (Addr)) phdr - phdr[i].p_vaddr;
        have_bias = true;
      }
  if (!have_bias)
    return errno = ENOEXEC, -1;
  for (size_t i = 0; i < phnum; i++)
    if (phdr[i].p_type == PT_GNU_RELRO)
      {
        relro = bias + phdr[i].p_vaddr;
        relro_end = relro + phdr[i].p_memsz;
      }
  struct prctl_mm_map m;
  if (mm_map_now (&m) < 0)
    return errno = errno ? errno : EINVAL, -1;
  for (size_t i = 0; i < phnum; i++)
    if (phdr[i].p_type == PT_LOAD && phdr[i].p_filesz > 0
        && rebind_segment (fd, &phdr[i], bias, relro, relro_end, pg) < 0)
      return -1;
  /* The kernel checks that no mapping of the old file is left (EBUSY). */
  m.exe_fd = (__u32) fd;
  if (prctl (PR_SET_MM, PR_SET_MM_MAP, (unsigned long) &m, sizeof m, 0) < 0)
    return -1;
  return 0;
}

/* The fd of the read-only clone the image was rebound onto: kept until
 * kist_self_protect_settle.  Its last close dissolves the detached mount
 * (umount_tree), and the kernel then waits for an expedited RCU grace
 * period (namespace_unlock), 50-200 us asleep here.  Closed before the
 * clone, that wait delayed every container's start; `run`, `exec` and
 * `sandbox` now close it once the container's process runs (when they wait
 * for it), a detached create at its exit.  The clones of kist inherit the fd and
 * close it among their first steps, long before that: the last close,
 * which waits, stays kist's.  The image's mappings and exe_file keep the
 * mount alive either way. */
static int rebound_copy = -1;

void
kist_self_protect_settle (void)
{
  if (rebound_copy >= 0)
    close (steal_fd (&rebound_copy));
}

int
kist_self_protect (char **argv, struct kist_error **err)
{
  return kist_self_protect_for (argv, NULL, err);
}

int
kist_self_protect_for (char **argv, const struct kist_inside_creds *in, struct kist_error **err)
{
  _cleanup_close_ int exe = open ("/proc/self/exe", O_RDONLY | O_CLOEXEC);
  if (exe < 0)
    return kist_error_make (err, errno,
                            "open /proc/self/exe (kist must re-execute itself from a protected "
                            "copy before it enters a container; is /proc mounted?)");
  if (exe_is_protected (exe) || !exe_needs_protection (exe))
    return 0;
  _cleanup_free_ char *unwritable = in ? exe_unwritable_by (exe, in) : NULL;
  if (unwritable)
    {
      kist_log_debug ("kist's image left as it is: %s", unwritable);
      return 0;
    }
  _cleanup_close_ int copy = readonly_clone ();
  if (copy >= 0)
    {
      if (rebind_image (copy) == 0)
        {
          /* Read back: the image the kernel now names is the copy, on its
           * read-only mount, and the same file kist was started from. */
          struct stat before, now;
          _cleanup_close_ int exe2 = open ("/proc/self/exe", O_RDONLY | O_CLOEXEC);
          if (exe2 >= 0 && exe_is_protected (exe2) && fstat (exe, &before) == 0
              && fstat (exe2, &now) == 0 && before.st_ino == now.st_ino
              && before.st_dev == now.st_dev)
            {
              kist_log_debug ("kist's image moved onto a read-only bind mount of its binary "
                              "(mappings and exe_file; no re-exec)");
              kist_self_protect_settle ();
              rebound_copy = steal_fd (&copy);
              return 0;
            }
          kist_log_debug ("the rebound image does not read back as the protected copy; "
                          "re-executing instead");
        }
      else
        kist_log_debug ("rebinding kist's image onto its read-only copy: %s; "
                        "re-executing instead",
                        strerror (errno));
    }
  else if ((copy = sealed_copy (exe, err)) < 0)
    return -1;
  extern char **environ;
  char started[32];
  snprintf (started, sizeof started, "%lld", (long long) kist_started_usec);
  setenv (KIST_STARTED_ENV, started, 1); /* report timing only (util.h) */
  syscall (SYS_execveat, copy, "", argv, environ, AT_EMPTY_PATH);
  return kist_error_make (err, errno,
                          "re-execute kist from a protected copy of its binary (execveat)");
}
