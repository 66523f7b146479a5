/* The MAILQv2 authentication file (lib/mqauth.c): first matching line, address lists,
 * attributes, malformed lines, the file's mode and owner, and the seed's digest. */
#include "mqauth.h"
#include "unit.h"
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

static const char file[] =
    "# the seed's example\n"
    "nobody:nobody:SNMP QQ TT ETRN: [127.0.0.0]/8 [ipv6.0::1]/128\n"
    "nobody:nobody:SNMP ETRN: [0.0.0.0]/0 [ipv6.0::0]/0\n"
    "watcher:zz:SNMP SMTPIP:[192.168.0.1]/32\n"
    "root:pw:ALL: [127.0.0.0]/8\n";

TEST(mqauth_first_matching_line)
{
	char pass[64], err[160];
	unsigned a = 0;
	CHECK_INT(mqauth_lookup(file, sizeof file - 1, "nobody", 0x7f000001, pass, sizeof pass, &a, err, sizeof err), 1);
	CHECK_INT(a, MQA_SNMP | MQA_QQ | MQA_TT | MQA_ETRN);
	CHECK_STR(pass, "nobody");
	/* from elsewhere the second nobody line */
	CHECK_INT(mqauth_lookup(file, sizeof file - 1, "nobody", 0x0a000001, pass, sizeof pass, &a, err, sizeof err), 1);
	CHECK_INT(a, MQA_SNMP | MQA_ETRN);
	/* an unknown attribute (the seed's SMTPIP) is ignored; the address must match exactly */
	CHECK_INT(mqauth_lookup(file, sizeof file - 1, "watcher", 0xc0a80001, pass, sizeof pass, &a, err, sizeof err), 1);
	CHECK_INT(a, MQA_SNMP);
	CHECK_INT(mqauth_lookup(file, sizeof file - 1, "watcher", 0xc0a80002, pass, sizeof pass, &a, err, sizeof err), 0);
	CHECK_INT(mqauth_lookup(file, sizeof file - 1, "root", 0x7f000001, pass, sizeof pass, &a, err, sizeof err), 1);
	CHECK_INT(a, MQA_ALL);
	CHECK_INT(mqauth_lookup(file, sizeof file - 1, "roo", 0x7f000001, pass, sizeof pass, &a, err, sizeof err), 0);
}

TEST(mqauth_malformed_lines_are_errors)
{
	char pass[64], err[160];
	unsigned a;
	static const char *const bad[] = {"x:y:ALL\n", "x:y:ALL:127.0.0.1\n", "x:y:ALL:[1.2.3]\n",
	                                  "x:y:ALL:[1.2.3.4]/33\n", "x:y:ALL:[256.0.0.1]\n"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		CHECK_INT(mqauth_lookup(bad[i], strlen(bad[i]), "x", 0x7f000001, pass, sizeof pass, &a, err, sizeof err), -1);
		CHECK(strstr(err, "line 1: ") == err);
	}
}

TEST(mqauth_file_must_be_0600_and_ours)
{
	char path[300], buf[MQAUTH_FILE_MAX], err[300];
	size_t len;
	snprintf(path, sizeof path, "%s/mailq.auth", unit_tmpdir());
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0 && write(fd, file, sizeof file - 1) == (ssize_t)(sizeof file - 1));
	close(fd);
	chmod(path, 0600);
	CHECK_INT(mqauth_read(path, geteuid(), buf, sizeof buf, &len, err, sizeof err), 0);
	CHECK_INT(len, sizeof file - 1);
	CHECK_INT(mqauth_read(path, geteuid() + 1, buf, sizeof buf, &len, err, sizeof err), -1);
	CHECK(strstr(err, "not owned by the scheduler's user") != NULL);
	chmod(path, 0640);
	CHECK_INT(mqauth_read(path, geteuid(), buf, sizeof buf, &len, err, sizeof err), -1);
	CHECK(strstr(err, "not mode 0600") != NULL);
	CHECK_INT(mqauth_read(path, geteuid(), buf, 10, &len, err, sizeof err), -1);
}

TEST(mqauth_digest_is_the_seeds)
{
	char d[33];
	mqauth_digest("MAILQ-V2-CHALLENGE: 942665308.906504.3", "my-passwd", d);
	CHECK_STR(d, "bd4baf7e175c6457f092a4d8a72be539");
}
