/*
 * DSIG_LAYER_API marks an internal function of libdsig that the libraries above it (libdsig-net,
 * libdsig-serve; CMakeLists.txt) call. The libraries are built with -fvisibility=hidden so that
 * libdsig.so exports its public API (DSIG_EXPORT, include/dsig/) only; a function marked here is
 * exported too, so that libdsig-net.so links against libdsig.so. It is not public API: no installed
 * header declares it, and it may change with any release. Mark the definition, not the declaration.
 * A shared upper library calling an unmarked internal function fails to link (-Wl,--no-undefined).
 */
#ifndef DSIG_CORE_LAYER_API_H
#define DSIG_CORE_LAYER_API_H

#if defined(__GNUC__)
#define DSIG_LAYER_API __attribute__((visibility("default")))
#else
#define DSIG_LAYER_API
#endif

#endif
