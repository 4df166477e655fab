#include <stdlib.h>
#include <stdio.h>
/* Each operation allocates three 64-byte blocks and does a fixed amount
   of work; the blocks are kept until the end, so no allocation is elided. */
int main(int argc, char **argv) {
	int n = atoi(argv[1]);
	void **keep = malloc(sizeof(void *) * 3 * (size_t)n);
	volatile long s = 0;
	for (int i = 0; i < n; i++) {
		for (int j = 0; j < 3; j++) {
			char *p = malloc(64);
			p[0] = (char)i;
			keep[3 * i + j] = p;
		}
		for (int k = 0; k < WORK; k++) s += k ^ i;
	}
	for (int i = 0; i < 3 * n; i++) free(keep[i]);
	free(keep);
	printf("%ld\n", (long)s);
	return 0;
}
