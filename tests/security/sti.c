/* sti.c: push a command into the terminal on fd 0 with TIOCSTI (bubblewrap
 * CVE-2017-5226).  Prints "sti: ok" or "sti: <errno text>". */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>

int
main (void)
{
  const char *s = "INJECTED\n";
  for (const char *p = s; *p; p++)
    if (ioctl (0, TIOCSTI, p) < 0)
      {
        printf ("sti: %s\n", strerror (errno));
        return 1;
      }
  printf ("sti: ok\n");
  return 0;
}
