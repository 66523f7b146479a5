/* Contradictions between build-time options stop the build here (dropbear's sysoptions.h). */
#ifndef SPOOLBOX_CHECK_H
#define SPOOLBOX_CHECK_H
#if ENABLE_TLS != 0 && ENABLE_TLS != 1
#error "ENABLE_TLS must be 0 or 1"
#endif
#endif
