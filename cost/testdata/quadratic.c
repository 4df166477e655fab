#include <stdio.h>
#include <stdlib.h>
/* Operation i does STEP * i steps of work, as a list scanned from its
   head to append does: N operations cost about STEP * N^2 / 2 steps, so
   the cost per operation doubles when N doubles. No allocation. */
#ifndef STEP
#define STEP 10
#endif
int main(int argc, char **argv) {
	if (argc < 2) return 2;
	int n = atoi(argv[1]);
	volatile long s = 0;
	for (int i = 0; i < n; i++)
		for (long k = 0; k < (long)STEP * i; k++) s += k ^ i;
	printf("%ld\n", (long)s);
	return 0;
}
