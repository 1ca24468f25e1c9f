/*
 * src/core/backend.h — start the third-party crypto back-ends once per process (init.c). Not
 * installed.
 */
#ifndef DSIG_CORE_BACKEND_H
#define DSIG_CORE_BACKEND_H

/*
 * Initialise libsodium and libgcrypt on the first call (thread-safe, pthread_once); later calls return
 * the first call's result. Every public entry point that may reach a back-end calls it first.
 * @retval DSIG_OK       the back-ends are ready
 * @retval DSIG_E_CRYPTO libsodium or libgcrypt could not be initialised
 */
int dsig_backend_init(void);

#endif
