/* The max profile (`make PROFILE=max`, build/musl-max/spoolbox): every option of
 * config_default.h on. These are the four that the default build leaves off (client
 * certificates, ChaCha20, the verbose usage texts, local time); the rest are on there already,
 * and tests/integration/test_options.py checks that this list names every option that is 0 by
 * default. The sanitizer build (`make CC=gcc SANITIZE=1`) is this profile, so the tests of every
 * option run in `make test`. An option given with OPTIONS= still wins. Read before
 * config_default.h. */
#ifndef ENABLE_TLS_CLIENT_CERT
#define ENABLE_TLS_CLIENT_CERT 1
#endif
#ifndef ENABLE_CHACHA20
#define ENABLE_CHACHA20 1
#endif
#ifndef ENABLE_VERBOSE_USAGE
#define ENABLE_VERBOSE_USAGE 1
#endif
#ifndef ENABLE_LOCALTIME
#define ENABLE_LOCALTIME 1
#endif
