/* Unit test of the scheduler core on a real spool with a manual clock: pick-up, a job handed to a
 * (fake) transport agent over a socket, its report line and #hungry, the result written to the control file, the retry time
 * and due link from the retries sequence, the timer that makes it due again, and expiry — all
 * without sleeping. */
#include "log.h"
#include "sched_int.h"
#include "unit.h"
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#define T0 1800000000LL

static void write_incoming(const char *spool, char id[SPOOL_ID_MAX], long long arrival)
{
	char path[512], text[1024];
	snprintf(path, sizeof path, "%s/incoming/tmp", spool);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0640);
	struct stat st;
	fstat(fd, &st);
	spool_id_make(id, arrival, 1, (unsigned long long)st.st_ino);
	int env = snprintf(text, sizeof text,
	                   "@ spoolbox 1\ni %s\nt %lld\no %016d\nz %016d\nb 7\nu 0 root\ns root@box.example\n"
	                   "r N 0000000000 0000 0000000000 smtp example.com a@example.com 0\n.\n",
	                   id, arrival, 0, 6);
	/* the body offset is the envelope's length: patch it in (same width) */
	char o[17];
	snprintf(o, sizeof o, "%016d", env);
	memcpy(strstr(text, "\no ") + 3, o, 16);
	strcat(text, "hello\n");
	CHECK_INT(write(fd, text, strlen(text)), (long long)strlen(text));
	close(fd);
	char to[512];
	snprintf(to, sizeof to, "%s/incoming/%s", spool, id);
	CHECK_INT(rename(path, to), 0);
}

static struct qrcpt *rcpt0(struct sched *s, const char *id)
{
	struct qmsg *m = sq_find(s, id);
	return m ? &m->r[0] : NULL;
}

TEST(sched_core_defer_retry_expire_with_manual_clock)
{
	log_init("unit", 0, LOG_ERR);
	char spool[300];
	snprintf(spool, sizeof spool, "%s/schedspool", unit_tmpdir());
	struct sched *s = calloc(1, sizeof *s);
	struct sched_opts o = {0};
	o.conf_path = "/nonexistent/scheduler.conf";
	o.conf_missing_ok = 1;
	o.queuelo = 10;
	o.queuehi = 20;
	o.logdir = "/tmp";
	o.readyfd = -1;
	CHECK_INT(sched_init(s, &o, spool), 0);
	s->clock.manual = 1;
	s->clock.manual_ms = T0 * 1000;
	s->now = T0;

	char id[SPOOL_ID_MAX];
	write_incoming(spool, id, T0);
	CHECK_INT(sq_pickup(s), 1);
	sq_flush(s);
	CHECK_INT(s->count, 1);
	struct qrcpt *r = rcpt0(s, id);
	CHECK(r != NULL);
	if (!r)
		return;
	struct thread *thr = r->thr;
	CHECK_STR(thr->name, "smtp");
	CHECK_INT(thr->nready, 1);
	CHECK(thr->ring != NULL);

	/* a fake TA: our end of a socket pair */
	int sv[2];
	CHECK_INT(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	struct sta t;
	memset(&t, 0, sizeof t);
	t.fd = sv[0];
	t.pid = getpid();
	t.state = STA_BUSY;
	t.ring = thr->ring;
	t.thr = thr;
	t.argv0 = "fake";
	thr->running++;
	struct job *j = st_pop(thr);
	CHECK_INT(sta_handout(s, &t, j), 1);
	free(j);
	sq_flush(s);
	char line[128];
	ssize_t n = read(sv[1], line, sizeof line - 1);
	line[n > 0 ? n : 0] = 0;
	char want[128];
	/* the job line names the recipient it carries by its offset (docs/spool.md 11) */
	snprintf(want, sizeof want, "%s\texample.com\t%lu\n", id, (unsigned long)r->off);
	CHECK_STR(line, want);
	CHECK_INT(r->tag, RT_TRANSIT);
	CHECK_INT(r->pid, getpid());

	/* the TA defers: A record, Q, next = now + interval (1m) x retries[0] (1) */
	char rep[256], hungry[] = "#hungry";
	int len = snprintf(rep, sizeof rep, "%s/%u\trfc822;a@example.com\001delayed\0014.4.1\001try later\001\tdeferred try later",
	                   id, (unsigned)r->off);
	sta_line(s, &t, rep, (size_t)len);
	sta_line(s, &t, hungry, 7);
	sq_flush(s);
	r = rcpt0(s, id);
	CHECK(r != NULL);
	if (!r)
		goto out;
	CHECK_INT(r->tag, RT_DEFERRED);
	CHECK_INT(r->tries, 1);
	CHECK_INT(r->next, T0 + 60);
	CHECK_INT(sq_find(s, id)->due, T0 + 60);
	char due[512];
	snprintf(due, sizeof due, "%s/due/%lld/%s.%lld", spool, (T0 + 60) / SPOOL_BUCKET, id, T0 + 60);
	CHECK_INT(access(due, F_OK), 0);
	CHECK_INT(s->mem_wake, T0 + 60);
	CHECK_INT(thr->nready, 0);

	/* 59 s later nothing happens; 60 s later it is ready again */
	s->clock.manual_ms += 59000;
	s->now = sclock_now(&s->clock);
	sq_timer_pass(s);
	sq_flush(s);
	CHECK_INT(thr->nready, 0);
	s->clock.manual_ms += 1000;
	s->now = sclock_now(&s->clock);
	sq_timer_pass(s);
	sq_flush(s);
	CHECK_INT(thr->nready, 1);

	/* four days of clock in one step (an NTP step): expiry counts tried time, so the next
	 * deferral is just one more (docs/scheduler.md "Clock jumps") */
	s->clock.manual_ms += 4LL * 86400 * 1000;
	s->now = sclock_now(&s->clock);
	int rounds = 0;
	while (rounds < 400) {
		j = st_pop(thr);
		if (!j) {
			/* the next retry, as the scheduler's timer would find it */
			s->clock.manual_ms += (r->next - s->now) * 1000;
			s->now = sclock_now(&s->clock);
			sq_timer_pass(s);
			sq_flush(s);
			j = st_pop(thr);
			if (!j)
				break;
		}
		CHECK_INT(sta_handout(s, &t, j), 1);
		free(j);
		sq_flush(s);
		n = read(sv[1], line, sizeof line - 1);
		sta_line(s, &t, rep, (size_t)len);
		sta_line(s, &t, hungry, 7);
		sq_flush(s);
		rounds++;
		r = rcpt0(s, id);
		if (!r || r->tag != RT_DEFERRED)
			break;
		if (rounds == 1)
			CHECK_INT(s->failed, 0); /* not expired by the step */
	}
	/* tried on schedule for three days (retries up to 34 minutes apart), it expires */
	r = rcpt0(s, id);
	CHECK(r != NULL);
	if (r)
		CHECK_INT(r->tag, RT_FAILED);
	CHECK_INT(s->failed, 1);
	CHECK(rounds > 100);
	CHECK(sq_find(s, id) && sq_find(s, id)->tried >= 3 * 86400);
out:
	free(t.acks);
	close(sv[0]);
	close(sv[1]);
	sched_free(s);
	free(s);
}

TEST(sta_report_parse_accepts_and_rejects)
{
	struct sta_report r;
	const char *ok = "T4G2KQ80A1F3Z7K/123\trfc822;a@b\001delivered\0012.0.0\001250 ok\001mx[1.2.3.4]\tok 250 ok\n";
	CHECK_INT(sta_report_parse(ok, strlen(ok), &r), 0);
	CHECK_STR(r.id, "T4G2KQ80A1F3Z7K");
	CHECK_INT(r.offset, 123);
	CHECK_STR(r.final, "rfc822;a@b");
	CHECK_STR(r.action, "delivered");
	CHECK_STR(r.enh, "2.0.0");
	CHECK_STR(r.remote, "mx[1.2.3.4]");
	CHECK_STR(r.status, "ok");
	CHECK_STR(r.message, "250 ok");
	const char *retry = "T4G2KQ80A1F3Z7K/9\trfc822;a@b\001delayed\0014.0.0\001held\001\tretryat +3600 held";
	CHECK_INT(sta_report_parse(retry, strlen(retry), &r), 0);
	CHECK_STR(r.status, "retryat");
	CHECK_STR(r.message, "+3600 held");
	CHECK_INT(sta_report_parse("#hungry", 7, &r), -1);
	const char *bad = "T4G2KQ80A1F3Z7K/12x\ta\001b\001c\001d\001e\tok x";
	CHECK_INT(sta_report_parse(bad, strlen(bad), &r), -1);
	const char *badst = "T4G2KQ80A1F3Z7K/12\ta\001b\001c\001d\001e\tfine x";
	CHECK_INT(sta_report_parse(badst, strlen(badst), &r), -1);
	const char *few = "T4G2KQ80A1F3Z7K/12\ta\001b\001c\tok x";
	CHECK_INT(sta_report_parse(few, strlen(few), &r), -1);
}
