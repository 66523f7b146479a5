/* Unit tests of the scheduler.conf parser: every construct of seed 000, the seed's complete
 * example file, resolution order, empty clauses, PARAM lines, errors with their line numbers,
 * and command expansion. */
#include "schedconf.h"
#include "sched_int.h"
#include "unit.h"
#include "util.h"
#include <stdlib.h>

static int parse(struct schedconf *c, const char *text, struct unit_findings *r)
{
	memset(r, 0, sizeof *r);
	schedconf_init(c);
	return schedconf_parse(c, "t.conf", text, strlen(text), unit_collect, r);
}

/* The complete example of seed 000, verbatim. */
static const char seed_example[] =
    "# Default values\n"
    "*/*\n"
    "        interval=1m expiry=3d retries=\"1 1 2 3 5 8 13 21 34\"\n"
    "        maxring=0 maxta=0 skew=5 user=root group=daemon\n"
    "# Boilerplate parameters for local delivery and service channels\n"
    "local/*\n"
    "        interval=10s expiry=3h maxchannel=2 command=mailbox\n"
    "error\n"
    "        interval=5m maxchannel=10 command=errormail\n"
    "hold/*\n"
    "        interval=5m maxchannel=1 command=hold\n"
    "# Miscellaneous channels supported by router configuration\n"
    "smtp/*.toronto.edu\n"
    "smtp/*.utoronto.ca\n"
    "        maxchannel=10 maxring=2\n"
    "        command=\"smtp -srl $LOGDIR/smtp\"\n"
    "smtp\n"
    "        maxchannel=10 maxring=5\n"
    "        command=\"smtp -esrl $LOGDIR/smtp\"\n"
    "uucp/*\n"
    "        maxchannel=5 command=\"sm -c $channel uucp\"\n";

TEST(schedconf_seed_example)
{
	struct schedconf c;
	struct unit_findings r;
	CHECK_INT(parse(&c, seed_example, &r), 0);
	CHECK_INT(c.n, 8);
	struct sc_params p;
	/* local: the defaults of the first clause, then its own values */
	int ring = schedconf_resolve(&c, "local", "-", &p);
	CHECK_INT(ring, 1);
	CHECK_INT(p.interval, 10);
	CHECK_INT(p.expiry, 3 * 3600);
	CHECK_INT(p.maxchannel, 2);
	CHECK_STR(p.command, "mailbox");
	CHECK_STR(p.user, "root");
	CHECK_STR(p.group, "daemon");
	CHECK_INT(p.nretries, 9);
	CHECK_INT(p.retries[8], 34);
	/* "error" has an implicit host wildcard */
	CHECK_INT(schedconf_resolve(&c, "error", "anything.example", &p), 2);
	CHECK_STR(p.command, "errormail");
	CHECK_INT(p.interval, 300);
	/* the empty toronto.edu clause takes the next one's contents: one ring for both */
	CHECK_INT(schedconf_resolve(&c, "smtp", "cs.toronto.edu", &p), 5);
	CHECK_INT(p.maxring, 2);
	CHECK_STR(p.command, "smtp -srl $LOGDIR/smtp");
	CHECK_INT(schedconf_resolve(&c, "smtp", "ecf.utoronto.ca", &p), 5);
	CHECK_INT(c.cl[4].body, 5);
	CHECK_INT(c.cl[5].body, 5);
	/* any other smtp host: the smtp clause */
	CHECK_INT(schedconf_resolve(&c, "smtp", "funet.fi", &p), 6);
	CHECK_INT(p.maxring, 5);
	CHECK_INT(p.interval, 60);
	CHECK_INT(p.expiry, 3 * 86400);
	CHECK_INT(schedconf_resolve(&c, "uucp", "host", &p), 7);
	CHECK_STR(p.command, "sm -c $channel uucp");
	/* a channel no clause with a command matches */
	CHECK_INT(schedconf_resolve(&c, "usenet", "-", &p), -1);
	CHECK(p.command == NULL);
	CHECK_INT(p.interval, 60);
	schedconf_free(&c);
}

/* The clause parameters a resolution is checked on. */
enum sc_field { F_END, F_INTERVAL, F_EXPIRY, F_IDLEMAX, F_MAXTHR, F_QUEUEONLY, F_TIMELIMIT, F_OVERFEED, F_INIT_CONC,
	F_CONC_LIMIT, F_COHORT_LIMIT, F_SLOT_COST, F_SLOT_DISCOUNT, F_SLOT_LOAN, F_MIN_SLOTS, F_RCPT_LIMIT,
	F_EXTRA_RCPT_LIMIT, F_REFILL_LIMIT, F_REFILL_DELAY };

static long long sc_field(const struct sc_params *p, enum sc_field f)
{
	switch (f) {
	case F_INTERVAL: return p->interval;
	case F_EXPIRY: return p->expiry;
	case F_IDLEMAX: return p->idlemax;
	case F_MAXTHR: return p->maxthr;
	case F_QUEUEONLY: return p->queueonly;
	case F_TIMELIMIT: return p->timelimit;
	case F_OVERFEED: return p->overfeed;
	case F_INIT_CONC: return p->init_conc;
	case F_CONC_LIMIT: return p->conc_limit;
	case F_COHORT_LIMIT: return p->cohort_limit;
	case F_SLOT_COST: return p->slots.cost;
	case F_SLOT_DISCOUNT: return p->slots.discount;
	case F_SLOT_LOAN: return p->slots.loan;
	case F_MIN_SLOTS: return p->slots.min_slots;
	case F_RCPT_LIMIT: return p->rcpt_limit;
	case F_EXTRA_RCPT_LIMIT: return p->extra_rcpt_limit;
	case F_REFILL_LIMIT: return p->refill_limit;
	case F_REFILL_DELAY: return p->refill_delay;
	default: return -1;
	}
}

static const char compact_spread[] =
	"a/* interval=5s maxthr=3 queueonly timelimit=10m command=\"X=1 Y=2 prog -a $host\" # comment\n"
	"b\n\tinterval=7s\n\t# comment\n\n\tqueueonly\n\tcommand=prog2\n";
static const char continues[] = "*/* interval=1h\nsmtp/slow.example interval=2h idlemax=9s\n"
                                "smtp/*.example expiry=1d\nsmtp command=smtp\nsmtp/never command=x\n";
static const char shell_patterns[] = "smtp/[ab]?.example command=one\nsm*/* command=two\n";
/* issue 14 point 4: the preemption keys (seed 004: cost 5, discount 50, loan 3, minimum 3),
 * merged over the matched clauses */
static const char slot_keys[] = "*/* delivery_slot_loan=0\n"
                                "a/* delivery_slot_cost=2 delivery_slot_discount=100 minimum_delivery_slots=0 command=x\n"
                                "b/* command=y\n";
/* issue 14 point 5: the in-core recipient keys (seed 004: default_recipient_limit 20000,
 * default_extra_recipient_limit 1000, refill limit 100 and delay 5s) */
static const char pool_keys[] = "PARAMmessage_recipient_limit = 500\nPARAMmessage_recipient_minimum = 5\n"
                                "*/* extra_recipient_limit=0\n"
                                "a/* recipient_limit=300 recipient_refill_limit=7 recipient_refill_delay=1m command=x\n"
                                "b/* command=y\n";

/* A configuration (NULL: the built-in one), a channel and host, the ring (clause) it resolves
 * to (-1: none, -2: any), its command (NULL: not checked) and parameters. */
static const struct {
	const char *name, *conf, *channel, *host;
	int ring;
	const char *command;
	struct {
		enum sc_field f;
		long long v;
	} want[10];
} resolutions[] = {
	/* the built-in configuration is valid and routes each channel to its applet */
	{"builtin_local", NULL, "local", "-", -2, "local"},
	{"builtin_smtp", NULL, "smtp", "example.com", -2, "smtp"},
	{"builtin_hold", NULL, "hold", "x", -2, "hold"},
	{"builtin_error", NULL, "error", "-", -2, "errormail"},
	/* the compact (one line) and spread (indented lines) forms; the defaults */
	{"compact", compact_spread, "a", "h", 0, NULL,
	 {{F_INTERVAL, 5}, {F_MAXTHR, 3}, {F_QUEUEONLY, 1}, {F_TIMELIMIT, 600}}},
	/* maxthr 0: no cap, the destination concurrency decides (issue 13 point 2) */
	{"spread", compact_spread, "b", "h", 1, NULL,
	 {{F_INTERVAL, 7}, {F_QUEUEONLY, 1}, {F_OVERFEED, 2}, {F_TIMELIMIT, 18000}, {F_MAXTHR, 0}, {F_INIT_CONC, 5},
	  {F_CONC_LIMIT, 20}, {F_COHORT_LIMIT, 1}}},
	/* matching goes on through the clauses until one has a command */
	{"continues_slow", continues, "smtp", "slow.example", 3, "smtp",
	 {{F_INTERVAL, 7200}, {F_IDLEMAX, 9}, {F_EXPIRY, 86400}}},
	{"continues_never", continues, "smtp", "never", 3, "smtp", {{F_INTERVAL, 3600}, {F_EXPIRY, 3 * 86400}}},
	/* shell patterns, on the host part and on the channel */
	{"pattern_class", shell_patterns, "smtp", "a1.example", 0, "one"},
	{"pattern_class_miss", shell_patterns, "smtp", "c1.example", 1, "two"},
	{"pattern_star", shell_patterns, "smtpx", "a1.example", 1, "two"},
	{"pattern_none", shell_patterns, "local", "a1.example", -1},
	{"slots_set", slot_keys, "a", "h", 1, "x",
	 {{F_SLOT_COST, 2}, {F_SLOT_DISCOUNT, 100}, {F_SLOT_LOAN, 0}, {F_MIN_SLOTS, 0}}},
	{"slots_default", slot_keys, "b", "h", 2, "y",
	 {{F_SLOT_COST, 5}, {F_SLOT_DISCOUNT, 50}, {F_SLOT_LOAN, 0}, {F_MIN_SLOTS, 3}}},
	{"pool_set", pool_keys, "a", "h", 1, "x",
	 {{F_RCPT_LIMIT, 300}, {F_EXTRA_RCPT_LIMIT, 0}, {F_REFILL_LIMIT, 7}, {F_REFILL_DELAY, 60}}},
	{"pool_default", pool_keys, "b", "h", 2, "y",
	 {{F_RCPT_LIMIT, 20000}, {F_EXTRA_RCPT_LIMIT, 0}, {F_REFILL_LIMIT, 100}, {F_REFILL_DELAY, 5}}},
};

TEST(schedconf_resolutions)
{
	for (size_t i = 0; i < ARRAY_LEN(resolutions); i++) {
		struct schedconf c;
		struct unit_findings r;
		struct sc_params p;
		unit_case(resolutions[i].name);
		CHECK_INT(parse(&c, resolutions[i].conf ? resolutions[i].conf : schedconf_builtin, &r), 0);
		int ring = schedconf_resolve(&c, resolutions[i].channel, resolutions[i].host, &p);
		if (resolutions[i].ring < -1)
			CHECK(ring >= 0);
		else
			CHECK_INT(ring, resolutions[i].ring);
		if (resolutions[i].command)
			CHECK_STR(p.command, resolutions[i].command);
		for (size_t k = 0; k < ARRAY_LEN(resolutions[i].want) && resolutions[i].want[k].f; k++)
			if (sc_field(&p, resolutions[i].want[k].f) != resolutions[i].want[k].v)
				unit_fail(__FILE__, __LINE__, "field %d is %lld, expected %lld", (int)resolutions[i].want[k].f,
				          sc_field(&p, resolutions[i].want[k].f), resolutions[i].want[k].v);
		schedconf_free(&c);
	}
}

TEST(schedconf_destination_concurrency_keys)
{
	struct schedconf c;
	struct unit_findings r;
	CHECK_INT(parse(&c, "a/* initial_destination_concurrency=2 destination_concurrency_limit=8\n"
	                    "\tdestination_concurrency_positive_feedback=1/concurrency\n"
	                    "\tdestination_concurrency_negative_feedback=0.5/sqrt_concurrency\n"
	                    "\tdestination_concurrency_failed_cohort_limit=3 command=x\n"
	                    "b/* destination_concurrency_positive_feedback=1/4 command=y\n", &r), 0);
	struct sc_params p;
	CHECK_INT(schedconf_resolve(&c, "a", "h", &p), 0);
	CHECK_INT(p.init_conc, 2);
	CHECK_INT(p.conc_limit, 8);
	CHECK_INT(p.pos_style, SFB_PER_N);
	CHECK(p.pos_x == 1);
	CHECK_INT(p.neg_style, SFB_PER_SQRT_N);
	CHECK(p.neg_x == 0.5);
	CHECK_INT(p.cohort_limit, 3);
	CHECK_INT(schedconf_resolve(&c, "b", "h", &p), 1);
	CHECK_INT(p.pos_style, SFB_FIXED);
	CHECK(p.pos_x == 0.25);
	CHECK_INT(p.neg_style, SFB_FIXED);
	CHECK(p.neg_x == 1);
	schedconf_free(&c);
	static const char *const badv[] = {"2", "-1", "nan", "1/x", "1/0", "1/concurrencyx", "", "0x1p-1/inf"};
	for (size_t i = 0; i < sizeof badv / sizeof badv[0]; i++) {
		int st;
		double x;
		CHECK_INT(sc_feedback_parse(badv[i], &st, &x), -1);
	}
	CHECK_INT(parse(&c, "a initial_destination_concurrency=0 destination_concurrency_negative_feedback=3 command=x\n", &r), 2);
	CHECK(strstr(r.first, "initial_destination_concurrency") != NULL);
	schedconf_free(&c);
}

/* The preemption and recipient-pool keys' resolutions are rows of the table above, their
 * errors rows of schedconf_errors_name_the_line; what is left: the defaults without a file, and
 * the global recipient limits. */
TEST(schedconf_slot_and_pool_defaults)
{
	struct sc_params p;
	sc_params_default(&p);
	CHECK_INT(p.slots.loan, 3);
	CHECK_INT(p.slots.cost, 5);
	CHECK_INT(p.slots.discount, 50);
	CHECK_INT(p.slots.min_slots, 3);
	struct schedconf c;
	struct unit_findings r;
	CHECK_INT(parse(&c, pool_keys, &r), 0);
	CHECK_INT(c.rcpt_limit, 500);
	CHECK_INT(c.rcpt_minimum, 5);
	schedconf_free(&c);
	CHECK_INT(parse(&c, "a command=x\n", &r), 0);
	CHECK_INT(c.rcpt_limit, 20000);
	CHECK_INT(c.rcpt_minimum, 10);
	schedconf_free(&c);
}

TEST(schedconf_params)
{
	struct schedconf c;
	struct unit_findings r;
	CHECK_INT(parse(&c, "PARAMmailqpath = \"UNIX:/run/mailq\"\nPARAMauthfile=\"/etc/auth\"\n"
	                    "PARAMglobal-report-interval = 15m\nPARAMmsgwriteasync = 1\n"
	                    "PARAMstore-error-on-error = 1\n*/* command=x\n", &r), 0);
	CHECK_STR(c.mailqpath, "UNIX:/run/mailq");
	CHECK_STR(c.authfile, "/etc/auth");
	CHECK_INT(c.report_interval, 900);
	CHECK_INT(c.msgwriteasync, 1);
	CHECK_INT(c.store_error_on_error, 1);
	schedconf_free(&c);
}

TEST(schedconf_errors_name_the_line)
{
	static const struct {
		const char *text;
		int line;
		const char *reason;
	} cases[] = {
		{"*/*\n\tbogus=1\n", 2, "unknown variable 'bogus'"},
		{"\tinterval=1m\n", 1, "indented line before the first clause pattern"},
		{"a interval=xx command=c\n", 1, "interval: 'xx' is not an interval"},
		{"a retries=\"1 x\" command=c\n", 1, "retries: 'x' is not a number"},
		{"a retries=\"\" command=c\n", 1, "missing value"},
		{"a\n\tinterval=1m\n\tinterval=2m\n", 3, "set twice"},
		{"a command=\"unterminated\n", 1, "unterminated quoted value"},
		{"a command=\"X=1\"\n", 1, "command: no program"},
		{"x\ny\n", 2, "is empty and no non-empty clause follows"},
		{"PARAMbogus = 1\n", 1, "unknown parameter PARAMbogus"},
		{"PARAMglobal-report-interval = soon\n", 1, "not an interval"},
		{"interval=1m\n", 1, "a pattern cannot hold '='"},
		{"a maxthr=0 command=c\n", 1, "maxthr: must be at least 1"},
		{"a maxta=-1 command=c\n", 1, "not a number"},
		{"a user=\"ro ot\" command=c\n", 1, "not a user or group name"},
		{"a/* interval=1m\x01\n", 1, "control character"},
		{"a queueonly=maybe command=c\n", 1, "a keyword takes no value"},
		{"a/ command=c\n", 1, "empty channel or host part"},
		{"*/* @\n", 1, "unexpected '@'"},
		/* host classes (issue 14 point 7) */
		{"PARAMhostclass = \"* 2\"\nPARAMhostclass = \"a.example 1\"\n", 2, "the class '*' of line 1 comes first"},
		{"PARAMhostclass = \"a.example 2\"\nPARAMhostclass = \"A.example 1\"\n", 2, "already the class of line 1"},
		{"PARAMhostclass = \"a*.example 2\"\n", 1, "is not a host, *.domain or *"},
		{"PARAMhostclass = \"*. 2\"\n", 1, "is not a host, *.domain or *"},
		{"PARAMhostclass = \"a.example 0\"\n", 1, "not a session limit from 1"},
		{"PARAMhostclass = \"a.example x\"\n", 1, "not a session limit"},
		{"PARAMhostclass = a.example\n", 1, "expected \"PATTERN SESSIONS\""},
		{"PARAMhostclass = \"a.example 1 2\"\n", 1, "expected \"PATTERN SESSIONS\""},
		/* preemption and in-core recipients (issue 14 points 4, 5) */
		{"a delivery_slot_discount=101 command=x\n", 1, "delivery_slot_discount: '101' is not a number from 0 to 100"},
		{"a delivery_slot_cost=-1 command=x\n", 1, "delivery_slot_cost"},
		{"a delivery_slot_loan=x command=x\n", 1, "delivery_slot_loan"},
		{"a recipient_limit=0 command=x\n", 1, "recipient_limit: must be at least 1"},
		{"a recipient_refill_limit=0 command=x\n", 1, "recipient_refill_limit"},
		{"a extra_recipient_limit=x command=x\n", 1, "extra_recipient_limit"},
		{"PARAMmessage_recipient_limit = 0\na command=x\n", 1,
		 "PARAMmessage_recipient_limit: '0' is not a number from 1 to 10000000"},
		/* a check of the whole file: line 0 */
		{"PARAMmessage_recipient_limit = 5\nPARAMmessage_recipient_minimum = 6\na command=x\n", 0,
		 "PARAMmessage_recipient_minimum (6) is above PARAMmessage_recipient_limit (5)"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct schedconf c;
		struct unit_findings r;
		int n = parse(&c, cases[i].text, &r);
		if (n < 1 || r.first_line != cases[i].line || !strstr(r.first, cases[i].reason))
			unit_fail(__FILE__, __LINE__, "case %zu: %d errors, last \"%s\"", i, n, r.first);
		CHECK(strncmp(r.first, "t.conf:", 7) == 0);
		schedconf_free(&c);
	}
}

/* Host classes (issue 14 point 7, seed 002): exact host, *.domain (the domain itself too) and
 * *, first match, case-insensitive; a host no class matches has none. */
TEST(schedconf_hostclass_first_match)
{
	struct schedconf c;
	struct unit_findings r;
	CHECK_INT(parse(&c, "PARAMhostclass = \"mx.Example.COM 1\"\n"
	                    "PARAMhostclass = \"*.example.com 3\"\n"
	                    "PARAMhostclass = \"*.com 5\"\n*/* command=x\n", &r), 0);
	CHECK_INT(r.n, 0);
	CHECK_INT(c.nhc, 3);
	CHECK_STR(c.hc[0].pat, "mx.example.com");
	CHECK_INT(c.hc[1].limit, 3);
	CHECK_INT(c.hc[2].line, 3);
	CHECK_INT(schedconf_hostclass(&c, "mx.example.com"), 0);
	CHECK_INT(schedconf_hostclass(&c, "MX.EXAMPLE.COM"), 0);
	CHECK_INT(schedconf_hostclass(&c, "a.mx.example.com"), 1);
	CHECK_INT(schedconf_hostclass(&c, "example.com"), 1);
	CHECK_INT(schedconf_hostclass(&c, "xexample.com"), 2);
	CHECK_INT(schedconf_hostclass(&c, "other.org"), -1);
	schedconf_free(&c);
	CHECK_INT(parse(&c, "PARAMhostclass = \"[192.0.2.1] 2\"\nPARAMhostclass = \"* 4\"\n*/* command=x\n", &r), 0);
	CHECK_INT(schedconf_hostclass(&c, "[192.0.2.1]"), 0);
	CHECK_INT(schedconf_hostclass(&c, "other.org"), 1);
	schedconf_free(&c);
}

TEST(schedconf_maxrcpt)
{
	struct schedconf c;
	struct unit_findings r;
	struct sc_params p;
	CHECK_INT(parse(&c, "*/* maxrcpt=5\nsmtp/* command=smtp\nlocal/* maxrcpt=1 command=local\n", &r), 0);
	CHECK(schedconf_resolve(&c, "smtp", "a.example", &p) >= 0);
	CHECK_INT(p.maxrcpt, 5);
	CHECK(schedconf_resolve(&c, "local", "u", &p) >= 0);
	CHECK_INT(p.maxrcpt, 1);
	schedconf_free(&c);
	sc_params_default(&p);
	CHECK_INT(p.maxrcpt, 0);
}

/* Keys that are accepted and do nothing are said, as warnings (issue 14 point 8). */
TEST(schedconf_warns_about_keys_without_effect)
{
	struct schedconf c;
	struct unit_findings r;
	CHECK_INT(parse(&c, "*/*\n\tskew=5 command=x\n", &r), 0);
	CHECK_INT(r.n, 1);
	CHECK_INT(r.first_line, 2);
	CHECK(strstr(r.first, "t.conf:2: warning: skew: not implemented"));
	schedconf_free(&c);
	CHECK_INT(parse(&c, "*/* command=x\nPARAMstore-error-on-error = 1\n", &r), 0);
	CHECK_INT(r.n, 1);
	CHECK(strstr(r.first, "t.conf:2: warning: PARAMstore-error-on-error: not implemented"));
	schedconf_free(&c);
	/* the built-in configuration says nothing */
	CHECK_INT(parse(&c, schedconf_builtin, &r), 0);
	CHECK_INT(r.n, 0);
	schedconf_free(&c);
}

TEST(schedconf_limits)
{
	struct schedconf c;
	struct unit_findings r;
	char *big = unit_long_line("", SC_LINE_MAX + 10);
	CHECK_INT(parse(&c, big, &r), 1);
	CHECK(strstr(r.first, "line longer than"));
	schedconf_free(&c);
	free(big);
	/* retries longer than the limit */
	char text[1024] = "a command=c retries=\"";
	for (int i = 0; i <= SC_RETRIES_MAX; i++)
		strcat(text, "1 ");
	strcat(text, "\"\n");
	CHECK_INT(parse(&c, text, &r), 1);
	CHECK(strstr(r.first, "more than 64"));
	schedconf_free(&c);
}

TEST(schedconf_command_split)
{
	char buf[512];
	char *argv[SC_ARGV_MAX + 1], *env[SC_ARGV_MAX + 1];
	int n = sc_command_split("MALLOC_DEBUG_=1 OTHER=var smtp -srl ${LOGDIR}/smtp $host $channel",
	                         "smtp", "example.com", "/var/log", buf, sizeof buf, argv, env);
	CHECK_INT(n, 5);
	CHECK_STR(env[0], "MALLOC_DEBUG_=1");
	CHECK_STR(env[1], "OTHER=var");
	CHECK(env[2] == NULL);
	CHECK_STR(argv[0], "smtp");
	CHECK_STR(argv[2], "/var/log/smtp");
	CHECK_STR(argv[3], "example.com");
	CHECK_STR(argv[4], "smtp");
	CHECK(argv[5] == NULL);
	/* an option-like host is refused; the "-" host is fine */
	CHECK_INT(sc_command_split("smtp $host", "smtp", "-x", "/l", buf, sizeof buf, argv, env), -1);
	CHECK_INT(sc_command_split("local $host", "local", "-", "/l", buf, sizeof buf, argv, env), 2);
	CHECK_INT(sc_command_split("A=1", "c", "h", "/l", buf, sizeof buf, argv, env), -1);
	CHECK_INT(sc_command_split("x $host", "c", "h", "/l", buf, 4, argv, env), -1);
}
