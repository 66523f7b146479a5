/* The scheduler's decisions that depend only on their arguments: report outcomes, the retries
 * sequence with the seed's random re-entry, retryat, expiry and the TA limits. Kept pure so that
 * unit tests (and a later simulator) can drive them with any clock. */
#include "sched_int.h"
#include <limits.h>
#include <stdlib.h>
#include <string.h>

enum sched_outcome sched_outcome_of(const char *status)
{
	/* a table, not a chain of strcmp calls: each name after its outcome + 1 */
	static const char tab[] = "\1ok\0\1ok2\0\1ok3\0\2error\0\2error2\0\3deferred\0\4deferall\0\5retryat\0";
	_Static_assert(SO_DELIVERED == 0 && SO_FAILED == 1 && SO_DEFERRED == 2 && SO_DEFERALL == 3 && SO_RETRYAT == 4,
	               "tab[] has the outcomes + 1");
	for (const char *p = tab; *p; p += strlen(p) + 1)
		if (!strcmp(status, p + 1))
			return (enum sched_outcome)(*p - 1);
	return SO_UNKNOWN;
}

unsigned sched_fnv(unsigned h, const char *p)
{
	while (*p)
		h = (h ^ (unsigned char)*p++) * 16777619u;
	return h;
}

/* FNV-1a of the id and the lap number: the "random" spot is spread over messages (so that they
 * do not retry in lockstep) but the same for the same message, so it can be tested. */
static unsigned spot(const char *id, unsigned lap, unsigned n)
{
	unsigned h = sched_fnv(SCHED_FNV_INIT, id);
	for (int i = 0; i < 4; i++)
		h = (h ^ ((lap >> (8 * i)) & 0xff)) * 16777619u;
	return h % n;
}

unsigned sched_retry_index(unsigned nretries, unsigned tries, const char *id)
{
	if (nretries == 0)
		return 0;
	if (tries < nretries)
		return tries;
	/* past the end: laps that each start at a random spot and run to the end */
	unsigned pos = nretries;
	for (unsigned lap = 0;; lap++) {
		unsigned s = spot(id, lap, nretries);
		unsigned len = nretries - s;
		if (tries < pos + len)
			return s + (tries - pos);
		pos += len;
	}
}

long long sched_retry_next(const struct sc_params *p, unsigned tries, const char *id, long long now)
{
	long long mul = p->nretries ? p->retries[sched_retry_index(p->nretries, tries, id)] : 1;
	long long d = p->interval * mul;
	if (d < 1)
		d = 1;
	return now + d;
}

long long sched_retryat(const char *message, long long now)
{
	const char *p = message;
	while (*p == ' ')
		p++;
	int rel = *p == '+';
	if (rel)
		p++;
	if (*p < '0' || *p > '9')
		return -1;
	long long v = 0;
	while (*p >= '0' && *p <= '9') {
		if (v > (LLONG_MAX / 10) - 10)
			return -1;
		v = v * 10 + (*p++ - '0');
	}
	if (*p && *p != ' ')
		return -1;
	if (rel) {
		if (v > 100LL * 365 * 86400)
			return -1;
		v += now;
	}
	return v;
}

long long sched_retry_cap(const struct sc_params *p)
{
	long long mul = 1;
	for (unsigned i = 0; i < p->nretries; i++)
		if (p->retries[i] > mul)
			mul = p->retries[i];
	long long iv = p->interval > 0 ? p->interval : 1;
	return iv * mul + iv;
}

long long sched_tried_add(long long tried, long long last, long long now, long long cap)
{
	long long gap = now - last;
	if (gap < 0 || last <= 0)
		gap = 0; /* a clock that went back, or nothing seen yet: no time passed for us */
	if (gap > cap)
		gap = cap; /* a clock that jumped ahead, or a queue that was not running */
	return tried + gap;
}

int sched_expired(const struct sc_params *p, long long arrival, long long tried, long long now, int attempted)
{
	if (attempted && tried >= p->expiry)
		return 1;
	return p->expiry2 > 0 && now >= arrival + p->expiry + p->expiry2;
}

/* noinline: one copy, not one per caller (docs/size.md) */
__attribute__((noinline)) int sched_maxta(const struct sc_params *p, int fd_budget)
{
	return p->maxta > 0 ? p->maxta : (fd_budget > 0 ? fd_budget : 1);
}

int sched_maxchannel(const struct sc_params *p, int fd_budget)
{
	return p->maxchannel > 0 ? p->maxchannel : sched_maxta(p, fd_budget);
}

int sched_maxring(const struct sc_params *p, int fd_budget)
{
	return p->maxring > 0 ? p->maxring : sched_maxta(p, fd_budget);
}

long long sched_idlemax(const struct sc_params *p)
{
	return p->idlemax > 0 ? p->idlemax : 3 * (p->interval > 0 ? p->interval : 1);
}

int sched_may_start(const struct sc_params *p, int fd_budget, int tas, int ring_tas, int chan_running, int thr_running)
{
	return tas < sched_maxta(p, fd_budget) && ring_tas < sched_maxring(p, fd_budget) &&
	       chan_running < sched_maxchannel(p, fd_budget) && (p->maxthr <= 0 || thr_running < p->maxthr);
}
