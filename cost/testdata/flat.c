#include <stdio.h>
#include <stdlib.h>
/* Ignores its operation count: its cost does not scale. */
int main(int argc, char **argv) {
	(void)argv;
	volatile long s = 0;
	for (int k = 0; k < 100000; k++) s += k;
	printf("%ld\n", (long)s);
	return argc > 5;
}
