/* tls.h for the TLS=0 build: the same API, every TLS operation failing with "TLS not built
 * in", so the smtp transport needs no #if: policies none and may deliver in clear text,
 * encrypt and verify defer with this reason. */
#include "config_default.h"
#if !ENABLE_TLS
#include "tls.h"
#include "util.h"

static const char not_built[] = "TLS not built in (spoolbox was built with TLS=0)";

struct tls_anchors *tls_anchors_load(const char *cafile, char *err, size_t errsize)
{
	str_lcpy(err, not_built, errsize);
	return NULL;
}

struct tls_anchors *tls_anchors_parse(const void *pem, size_t len, const char *name, char *err, size_t errsize)
{
	str_lcpy(err, not_built, errsize);
	return NULL;
}

size_t tls_anchors_count(const struct tls_anchors *ta)
{
	return 0;
}

const char *tls_anchors_file(const struct tls_anchors *ta)
{
	return "";
}

void tls_anchors_free(struct tls_anchors *ta)
{
}

enum tls_status tls_start(struct io *io, const struct tls_params *p, char *reason, size_t reasonsize)
{
	str_lcpy(reason, not_built, reasonsize);
	return TLS_E_UNAVAILABLE;
}

int tls_active(const struct io *io)
{
	return 0;
}

int tls_peer_authenticated(const struct io *io)
{
	return 0;
}

int tls_app_data_arrived(struct io *io)
{
	return 0;
}

void tls_describe(const struct io *io, char *out, size_t size)
{
	if (size)
		out[0] = 0;
}
#endif
