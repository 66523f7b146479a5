/* Message ids and spool paths (docs/spool.md 2). Ids are the only thing ever
 * joined into a spool path, so spool_id_valid() guards every path builder. */
#include "spool.h"
#include "util.h"
#include <string.h>

const char spool_b36[37] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";

/* v in base 36, at least width digits (zeros before): the higher digits first, by recursion (13
 * levels at most for 64 bits) */
static char *put_b36(char *p, unsigned long long v, int width)
{
	if (v >= 36 || width > 1)
		p = put_b36(p, v / 36, width - 1);
	*p = spool_b36[v % 36];
	return p + 1;
}

void spool_id_make(char out[SPOOL_ID_MAX], long long sec, long usec, unsigned long long ino)
{
	char *p = out;
	/* fixed widths keep ids sortable by creation time; 36^7 s reaches the year 4453 */
	p = put_b36(p, (unsigned long long)(sec < 0 ? 0 : sec) % 78364164096ULL, 7);
	p = put_b36(p, (unsigned long long)(usec < 0 ? 0 : usec) % 1679616, 4);
	p = put_b36(p, ino, 1);
	*p = 0;
}

int spool_id_valid(const char *s)
{
	size_t n = 0;
	for (; s[n]; n++)
		if (!((s[n] >= '0' && s[n] <= '9') || (s[n] >= 'A' && s[n] <= 'Z')))
			return 0;
	return n >= 12 && n < SPOOL_ID_MAX - 8;
}

long long spool_id_time(const char *id)
{
	if (!spool_id_valid(id))
		return -1;
	long long t = 0;
	for (int i = 0; i < 7; i++)
		t = t * 36 + (id[i] <= '9' ? id[i] - '0' : id[i] - 'A' + 10); /* a valid id: 0-9, A-Z */
	return t;
}

static char hash_of(const char *id)
{
	return id[strlen(id) - 1];
}

/* queue/<h>/<id>.<suffix> */
static int queue_path(const struct spool *sp, const char *id, char *out, size_t size, char suffix)
{
	if (!spool_id_valid(id))
		return -1;
	return str_fmt(out, size, "%s/queue/%c/%s.%c", sp->dir, hash_of(id), id, suffix);
}

int spool_path_ctl(const struct spool *sp, const char *id, char *out, size_t size)
{
	return queue_path(sp, id, out, size, 'c');
}

int spool_path_msg(const struct spool *sp, const char *id, char *out, size_t size)
{
	return queue_path(sp, id, out, size, 'd');
}

int spool_sub(const struct spool *sp, const char *sub, char *out)
{
	return str_fmt(out, SPOOL_PATH_MAX, "%s/%s", sp->dir, sub);
}

int spool_path_in(const struct spool *sp, const char *sub, const char *id, char *out, size_t size)
{
	if (!spool_id_valid(id))
		return -1;
	return str_fmt(out, size, "%s/%s/%s", sp->dir, sub, id);
}

int spool_path_incoming(const struct spool *sp, const char *id, char *out, size_t size)
{
	return spool_path_in(sp, "incoming", id, out, size);
}

int spool_path_due(const struct spool *sp, const char *id, long long t, char *out, size_t size)
{
	if (!spool_id_valid(id) || t < 0)
		return -1;
	return str_fmt(out, size, "%s/due/%lld/%s.%lld", sp->dir, t / SPOOL_BUCKET, id, t);
}
