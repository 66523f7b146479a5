/* The live query socket's entry points for a build without ENABLE_MAILQ_PROTO: the scheduler
 * listens on nothing, and mailq lists from the spool as it always can (lib/sched_mq.c has the
 * protocol; this file is the tls_none.c of it, so that the loop needs no #if). */
#include "config_default.h"
#if !ENABLE_MAILQ_PROTO
#include "sched_int.h"

int sched_mq_open(struct sched *s)
{
	return -1;
}

void sched_mq_close(struct sched *s)
{
}

size_t sched_mq_nfds(const struct sched *s)
{
	return 0;
}

size_t sched_mq_pollfds(struct sched *s, struct pollfd *p, size_t room)
{
	return 0;
}

void sched_mq_io(struct sched *s, struct pollfd *p, size_t n)
{
}
#endif
