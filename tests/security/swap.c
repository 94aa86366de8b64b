/* swap SECONDS A B [A B ...]: exchange each pair with renameat2
 * RENAME_EXCHANGE, over and over, for SECONDS; prints the exchange count. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
int
main (int argc, char **argv)
{
  if (argc < 4 || argc % 2)
    return 2;
  time_t end = time (NULL) + atoi (argv[1]);
  unsigned long n = 0;
  while (time (NULL) < end)
    for (int i = 2; i + 1 < argc; i += 2)
      if (renameat2 (AT_FDCWD, argv[i], AT_FDCWD, argv[i + 1], RENAME_EXCHANGE) == 0)
        n++;
  printf ("%lu\n", n);
  return 0;
}
