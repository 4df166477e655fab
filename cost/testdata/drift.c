#include <stdio.h>
#include <stdlib.h>
/* Like alloc.c, but it counts its runs in the file argv[2], and from the
   seventh run on (Measure's run of 4N, after the runs of 1, N and 2N;
   each under callgrind, then DHAT) an operation does LATER_WORK steps of
   work and allocates LATER_BLOCKS blocks of LATER_SIZE bytes instead of
   20000 steps and three 64-byte blocks. So the two slopes of one figure
   (N to 2N, 2N to 4N) disagree, and the others agree. Blocks are not freed: freeing blocks of
   another size takes another path through malloc. */
#ifndef LATER_WORK
#define LATER_WORK 20000
#endif
#ifndef LATER_BLOCKS
#define LATER_BLOCKS 3
#endif
#ifndef LATER_SIZE
#define LATER_SIZE 64
#endif
int main(int argc, char **argv) {
	if (argc < 3) return 2;
	int n = atoi(argv[1]), runs = 0;
	FILE *f = fopen(argv[2], "r");
	if (f) {
		if (fscanf(f, "%d", &runs) != 1) runs = 0;
		fclose(f);
	}
	if (!(f = fopen(argv[2], "w"))) return 1;
	fprintf(f, "%d\n", runs + 1);
	fclose(f);
	int later = runs >= 6;
	int work = later ? LATER_WORK : 20000, blocks = later ? LATER_BLOCKS : 3;
	size_t size = later ? LATER_SIZE : 64;
	/* Room for four pointers an operation whatever the run: 32 bytes. */
	void **keep = malloc(sizeof(void *) * 4 * (size_t)n);
	volatile long s = 0;
	for (int i = 0; i < n; i++) {
		for (int j = 0; j < blocks; j++) {
			char *p = malloc(size);
			p[0] = (char)i;
			keep[4 * i + j] = p;
		}
		for (int k = 0; k < work; k++) s += k ^ i;
	}
	printf("%ld %p\n", (long)s, (void *)keep);
	return 0;
}
