/* A stand-alone driver for the LLVMFuzzerTestOneInput targets in this directory, so that every
 * fuzz target also runs in `make test` without libFuzzer: it feeds each file of the corpus
 * directories given, then -iterations=N random mutations of them (deterministic seed).
 * With clang, `make fuzz T=name` builds the same target against libFuzzer instead. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAXIN (64 * 1024)

static unsigned long long rng = 0x9e3779b97f4a7c15ULL;
static unsigned rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned)(rng >> 11);
}

static uint8_t *seeds[512];
static size_t seed_len[512];
static int nseeds;

static void load(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f || nseeds >= 512)
		return;
	uint8_t *p = malloc(MAXIN);
	size_t n = fread(p, 1, MAXIN, f);
	fclose(f);
	seeds[nseeds] = p;
	seed_len[nseeds++] = n;
	uint8_t *copy = malloc(n ? n : 1);
	memcpy(copy, p, n);
	LLVMFuzzerTestOneInput(copy, n);
	free(copy);
}

int main(int argc, char **argv)
{
	long iterations = 0;
	for (int i = 1; i < argc; i++) {
		if (strncmp(argv[i], "-iterations=", 12) == 0) {
			iterations = atol(argv[i] + 12);
			continue;
		}
		DIR *d = opendir(argv[i]);
		if (!d) {
			load(argv[i]);
			continue;
		}
		struct dirent *e;
		while ((e = readdir(d))) {
			if (e->d_name[0] == '.')
				continue;
			char path[4096];
			snprintf(path, sizeof path, "%s/%s", argv[i], e->d_name);
			load(path);
		}
		closedir(d);
	}
	static const char *tokens[] = {"\n", "\r\n", "\"", "\\", "=", "#", " ", "\t", "<", ">", "@", ":", ",", "\0", "\xff", "."};
	uint8_t *buf = malloc(MAXIN);
	for (long it = 0; it < iterations; it++) {
		size_t n = 0;
		if (nseeds) {
			int s = (int)(rnd() % (unsigned)nseeds);
			n = seed_len[s];
			memcpy(buf, seeds[s], n);
		}
		int muts = 1 + (int)(rnd() % 8);
		for (int m = 0; m < muts; m++) {
			unsigned op = rnd() % 5;
			if (op == 0 && n) {
				buf[rnd() % n] = (uint8_t)rnd();
			} else if (op == 1 && n) {
				size_t at = rnd() % n, len = 1 + rnd() % 16;
				if (at + len > n)
					len = n - at;
				memmove(buf + at, buf + at + len, n - at - len);
				n -= len;
			} else if (op == 2 && n + 64 < MAXIN) {
				const char *t = tokens[rnd() % (sizeof tokens / sizeof *tokens)];
				size_t tl = strlen(t) ? strlen(t) : 1, at = n ? rnd() % (n + 1) : 0;
				memmove(buf + at + tl, buf + at, n - at);
				memcpy(buf + at, t, tl);
				n += tl;
			} else if (op == 3 && n && n * 2 < MAXIN) {
				size_t at = rnd() % n, len = 1 + rnd() % (n - at);
				memmove(buf + at + len, buf + at, n - at);
				n += len;
			} else if (op == 4) {
				n = n ? rnd() % (n + 1) : 0;
			}
		}
		uint8_t *copy = malloc(n ? n : 1); /* exact size, so ASan sees overreads */
		memcpy(copy, buf, n);
		LLVMFuzzerTestOneInput(copy, n);
		free(copy);
	}
	free(buf);
	for (int i = 0; i < nseeds; i++)
		free(seeds[i]);
	printf("fuzz: %d seeds, %ld mutations: no crash\n", nseeds, iterations);
	return 0;
}
