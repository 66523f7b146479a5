/* The scheduling simulator (lib/sched_sim.c, issue 14 point 1) running the real scheduler:
 * byte-identical output for the same workload; seed 004's defer rates against a server that
 * answers 421 above 5 connections, for 1/N, 1/sqrt(N) and 1 feedback (issue 14 point 2); a dead
 * destination that is suspended and probed (point 3); a host with a non-stop stream does not
 * starve the others (point 6); the workload parser's errors. */
#include "log.h"
#include "sched_sim.h"
#include "unit.h"
#include <stdlib.h>
#include <unistd.h>

/* Runs text; the output in a malloc'd string (NULL on failure). */
static char *simulate(const char *text)
{
	static struct sim_work w;
	char err[300];
	if (sim_parse(text, strlen(text), &w, err, sizeof err) < 0) {
		fprintf(stderr, "parse: %s\n", err);
		return NULL;
	}
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	/* tmpfs when there is one: the spool's fsyncs cost nothing there */
	int rc = sim_run(&w, access("/dev/shm", W_OK) == 0 ? "/dev/shm" : unit_tmpdir(), f, err, sizeof err);
	fclose(f);
	if (rc) {
		fprintf(stderr, "sim_run: %s\n", err);
		free(buf);
		return NULL;
	}
	return buf;
}

/* first_deferred=A/B of destination dest, as a fraction; -1 when absent. */
static double first_deferred(const char *out, const char *dest)
{
	char key[100];
	snprintf(key, sizeof key, "\ndest %s ", dest);
	const char *p = strstr(out, key);
	p = p ? strstr(p, "first_deferred=") : NULL;
	long a, b;
	if (!p || sscanf(p, "first_deferred=%ld/%ld", &a, &b) != 2 || !b)
		return -1;
	return (double)a / (double)b;
}

static const char limited[] =
    "seed 7\nsample 30\n"
    "conf smtp/* initial_destination_concurrency=5 destination_concurrency_limit=20 "
    "destination_concurrency_positive_feedback=%s destination_concurrency_negative_feedback=%s\n"
    "dest limited.example latency=1000 jitter=200 connect=5 limit=5\n"
    "mail at=0 count=600 dest=limited.example class=bulk\n";

TEST(sim_feedback_defer_rates_follow_the_seed)
{
	log_init("unit", 0, LOG_ERR);
	/* seed 004: the theoretical defer rate is 1/(1 + roundup(1/feedback)) at N = 5 */
	static const struct {
		const char *fb;
		double want;
	} c[] = {{"1/concurrency", 1.0 / 6}, {"1/sqrt_concurrency", 1.0 / 4}, {"1", 1.0 / 2}};
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		char text[1024];
		snprintf(text, sizeof text, limited, c[i].fb, c[i].fb);
		char *out = simulate(text);
		CHECK(out != NULL);
		if (!out)
			continue;
		double got = first_deferred(out, "limited.example");
		if (got < c[i].want - 0.03 || got > c[i].want + 0.03)
			fprintf(stderr, "feedback %s: deferred %.3f, the seed's %.3f\n%s", c[i].fb, got, c[i].want, out);
		CHECK(got >= c[i].want - 0.03 && got <= c[i].want + 0.03);
		CHECK(strstr(out, "total messages=600 delivered=600 undelivered=0") != NULL);
		free(out);
	}
}

TEST(sim_same_workload_same_bytes)
{
	char text[1024];
	snprintf(text, sizeof text, limited, "1/sqrt_concurrency", "1/concurrency");
	strcat(text, "dest b.example latency=50 jitter=40 fail=10\nmail at=500 count=200 every=300 dest=b.example class=alert\n");
	char *a = simulate(text), *b = simulate(text);
	/* another seed: other jitter and failures, other figures */
	text[5] = '8';
	char *c = simulate(text);
	CHECK(a != NULL && b != NULL && c != NULL);
	if (a && b && c) {
		CHECK_STR(a, b);
		CHECK(strcmp(a, c) != 0);
		CHECK(strstr(a, "class alert delivered=200 p50=") != NULL);
		CHECK(strstr(a, "\nconc t=30 limited.example=") != NULL);
	}
	free(a);
	free(b);
	free(c);
}

TEST(sim_dead_destination_is_suspended_then_probed)
{
	/* down for the first 10 minutes: without the dead rule every message would cost a
	 * connection on each of its tries; with it, one pseudo-cohort per retry time, and a
	 * probe reopens it when it is back */
	char *out = simulate("seed 3\nsample 600\nconf smtp/* initial_destination_concurrency=1\n"
	                     "dest dead.example latency=20 down=0-600\n"
	                     "mail at=0 count=100 dest=dead.example\n");
	CHECK(out != NULL);
	if (!out)
		return;
	CHECK(strstr(out, "total messages=100 delivered=100 undelivered=0") != NULL);
	const char *p = strstr(out, "dest dead.example connections=");
	long conns = -1, refused = -1;
	CHECK(p && sscanf(p, "dest dead.example connections=%ld refused=%ld", &conns, &refused) == 2);
	/* retries at 1m, 2m, 4m, 7m, 12m (interval 1m x 1 1 2 3 5): a handful of probes */
	if (refused < 1 || refused > 10)
		fprintf(stderr, "%s", out);
	CHECK(refused >= 1 && refused <= 10);
	free(out);
}

/* max=MS of latency class cls; -1 when absent. */
static long class_max(const char *out, const char *cls)
{
	char key[100];
	snprintf(key, sizeof key, "\nclass %s ", cls);
	const char *p = strstr(out, key);
	p = p ? strstr(p, " max=") : NULL;
	long v;
	return p && sscanf(p, " max=%ldms", &v) == 1 ? v : -1;
}

static const char stream[] =
    "seed 5\nsample 600\nconf smtp maxchannel=4 overfeed=%d\n"
    "dest stream.example latency=200 jitter=100\n"
    "dest a.example latency=50\ndest b.example latency=50\ndest c.example latency=50\n"
    "mail at=0 count=3000 every=20 dest=stream.example class=stream\n"
    "mail at=5000 count=20 every=3000 dest=a.example class=others\n"
    "mail at=6000 count=20 every=3000 dest=b.example class=others\n"
    "mail at=7000 count=20 every=3000 dest=c.example class=others\n";

TEST(sim_a_busy_host_does_not_starve_the_others)
{
	/* issue 14 point 6: every agent is busy with the stream for minutes, yet a message to
	 * another host waits at most overfeed stream jobs (300 ms at most each), its own delivery
	 * (2 connects of 10 ms and 50 ms) and the scheduler's one-second tick: the bound of
	 * docs/simulate.md. Without the rule the others wait for the stream's backlog (minutes);
	 * a huge overfeed shows it. */
	static const int of[] = {1, 2, 5, 20};
	for (size_t i = 0; i < sizeof of / sizeof of[0]; i++) {
		char text[1024];
		snprintf(text, sizeof text, stream, of[i]);
		char *out = simulate(text);
		CHECK(out != NULL);
		if (!out)
			continue;
		long bound = of[i] * 300L + 70 + 1000, got = class_max(out, "others");
		if (got < 0 || got > bound)
			fprintf(stderr, "overfeed %d: others waited up to %ldms, bound %ldms\n%s", of[i], got, bound, out);
		CHECK(got >= 0 && got <= bound);
		CHECK(strstr(out, "total messages=3060 delivered=3060 undelivered=0") != NULL);
		free(out);
	}
	char text[1024];
	snprintf(text, sizeof text, stream, 1000);
	char *out = simulate(text);
	CHECK(out != NULL);
	if (out)
		CHECK(class_max(out, "others") > 20 * 300L + 70 + 1000);
	free(out);
}

TEST(sim_workload_errors)
{
	static struct sim_work w;
	char err[300];
	static const struct {
		const char *text, *want;
	} bad[] = {
		{"mail at=0 count=1 dest=x\n", "line 1: mail: bad key or value"},
		{"dest a\ndest a\nmail dest=a\n", "line 2: dest: defined twice"},
		{"dest a latency=x\n", "line 1: dest: bad key or value: latency=x"},
		{"dest a down=5-1\n", "line 1: dest: bad key or value: down=5-1"},
		{"seed\n", "line 1: expected one number: seed"},
		{"dest a\n", "no mail line"},
		{"frob 1\n", "line 1: unknown word"},
		{"dest a\nmail dest=a count=200001\n", "line 2: mail: bad key or value"},
		{"dest a\x01\n", "line 1: control character"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		CHECK_INT(sim_parse(bad[i].text, strlen(bad[i].text), &w, err, sizeof err), -1);
		if (!strstr(err, bad[i].want))
			fprintf(stderr, "%s -> %s\n", bad[i].text, err);
		CHECK(strstr(err, bad[i].want) != NULL);
	}
	const char ok[] = "# c\nseed 5\nsample 1\nuntil 99\nconf smtp/* maxthr=3\ndest a.b latency=1 jitter=2 connect=3 "
	                  "limit=4 fail=5 confail=6 down=1-2 down=3-4\nmail at=1 count=2 every=3 dest=a.b class=x\n";
	CHECK_INT(sim_parse(ok, strlen(ok), &w, err, sizeof err), 0);
	CHECK_INT(w.dest[0].limit, 4);
	CHECK_INT(w.dest[0].ndown, 2);
	CHECK_INT(w.mail[0].every_ms, 3);
	CHECK_INT(w.total, 2);
	CHECK_STR(w.conf[0], "smtp/* maxthr=3");
}
