/* Fuzz target: one hosts-file line (lib/dns.h dns_hosts_line), the name to look for being the
 * input's first line and the hosts line the rest, cut at DNS_HOSTS_LINE_MAX as the reader does. */
#include "dns.h"
#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char name[256], line[DNS_HOSTS_LINE_MAX];
	const uint8_t *nl = memchr(data, '\n', size);
	size_t nlen = nl ? (size_t)(nl - data) : 0;
	if (nlen >= sizeof name)
		return 0;
	memcpy(name, data, nlen);
	name[nlen] = 0;
	size_t l = size - (nl ? nlen + 1 : 0);
	if (l >= sizeof line)
		l = sizeof line - 1;
	memcpy(line, data + (nl ? nlen + 1 : 0), l);
	line[l] = 0;
	struct dns_addr a[2];
	size_t n = 0;
	dns_hosts_line(line, name, a, 2, &n);
	dns_hosts_line(line, name, a, 2, &n);
	if (n > 1) /* the same line twice is one address */
		__builtin_trap();
	return 0;
}
