/*
 * Fuzz target: the `dsig serve` configuration (dsig_serve_config_parse, src/serve/config.c: listen,
 * tls, key_dir, audit, limits, tenants with bearer-token hashes and rate limits). The input is the
 * JSON text; relative paths resolve against a fixed base directory (nothing is opened at parse time).
 *
 * Invariants (abort on violation): a refused configuration says why (the member, in the detail);
 * parsing is deterministic: the same text is accepted or refused the same way twice.
 */
#include <string.h>

#include "dsig/serve.h"
#include "fuzz_common.h"

#define FSC_MAX_INPUT 65536u

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > FSC_MAX_INPUT)
        return 0;
    char *text = (char *)fuzz_dup(data, size);
    dsig_serve_config *cfg = NULL, *cfg2 = NULL;
    int rc = dsig_serve_config_parse(&cfg, text, size, "/nonexistent/dsig-fuzz");
    fuzz_check_detail(rc, "dsig_serve_config_parse");
    int rc2 = dsig_serve_config_parse(&cfg2, text, size, NULL);
    FUZZ_CHECK(rc == rc2, "the same configuration parsed %d then %d", rc, rc2);
    dsig_serve_config_free(cfg);
    dsig_serve_config_free(cfg2);
    free(text);
    return 0;
}

static void seeds(void)
{
    static const char *const texts[] = {
        "{\"key_dir\":\"keys\",\"tenants\":[]}",
        ("{\"listen\":{\"address\":\"::1\",\"port\":0},\"key_dir\":\"/srv/keys\",\"state_registry_dir\":\"\","
         "\"include_kid\":false,\"audit\":{\"path\":\"audit.log\",\"sync\":\"interval\",\"interval_ms\":50,"
         "\"payload_digest\":\"sha256\",\"digest_threads\":2},\"limits\":{\"max_header_bytes\":4096,"
         "\"request_timeout_s\":5,\"max_connections\":8,\"max_connections_per_address\":2,\"max_body_bytes\":1048576,"
         "\"threads\":2,\"upload_buffer_bytes\":65536,\"auth_failures\":{\"per_second\":1.5,\"burst\":10}},"
         "\"tenants\":[{\"name\":\"ci\",\"tokens\":[{\"sha256\":"
         "\"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08\",\"rate\":{\"per_second\":2,"
         "\"burst\":3}}],\"keys\":[\"release\",\"a.b-c_d\"],\"operations\":[\"sign\",\"verify\"]},{\"name\":\"ro\","
         "\"tokens\":[{\"sha256\":\"60303ae22b998861bce3b28f33eec1be758a213c86c93c076dbe9f558c11c752\"}],\"keys\":[\"*\"],"
         "\"operations\":[\"verify\"]}]}"),
        ("{\"key_dir\":\"k\",\"tls\":{\"cert\":\"c.pem\",\"key\":\"k.pem\",\"min_version\":\"1.3\"},\"audit\":"
         "{\"path\":\"/var/log/a\",\"sync\":\"group\",\"payload_digest\":\"none\"},\"tenants\":[]}"),
    };
    fuzz_seed_texts(texts, sizeof texts / sizeof texts[0]);
}

FUZZ_SEED_GENERATOR(seeds)
