/* Backend start-up, once per process: libsodium and libgcrypt need explicit initialisation. */
#include <pthread.h>

#include <gcrypt.h>
#include <sodium.h>

#include "core/internal.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int init_status = DSIG_OK;

static void do_init(void)
{
    if (sodium_init() < 0) {
        init_status = DSIG_E_CRYPTO;
        return;
    }
    if (!gcry_check_version(GCRYPT_VERSION)) {
        init_status = DSIG_E_CRYPTO;
        return;
    }
    /* No secure memory pool: key material is held in our own wiped buffers. */
    gcry_control(GCRYCTL_DISABLE_SECMEM, 0);
    gcry_control(GCRYCTL_INITIALIZATION_FINISHED, 0);
}

int dsig_backend_init(void)
{
    pthread_once(&once, do_init);
    if (init_status != DSIG_OK)
        return dsig_fail(init_status, "cannot initialise libsodium/libgcrypt");
    return DSIG_OK;
}

int dsig_init(void)
{
    return dsig_backend_init();
}

const char *dsig_version(void)
{
    return DSIG_VERSION_STRING;
}
