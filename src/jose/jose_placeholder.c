/* PLACEHOLDER — replaced by the JOSE layer (jwk.c, jws.c). */
#include "core/internal.h"
