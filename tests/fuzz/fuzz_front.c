/* libFuzzer target: any bytes as what htad's two front ends receive (src/capture/front.c), fed as a slow
 * peer would, in two pieces split where the input's first byte says: the HTTP head (hta_http_head,
 * resumable: the pieces must give the answer the whole gives), the RPC message head with and without a
 * token (hta_rpc_head: a complete message is never longer than what arrived, a refusal always says why
 * and stays a refusal as more bytes come); the same bytes as a dyno config (hta_config_check: a refusal
 * says why) and as text to log (hta_escape_text: no control character survives). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hta/capture.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char TOKEN[] = "s3cret-token-0123456789";

static int http(const char *b, size_t split, size_t n, const char *token, int *status) {
    hta_http_in h = {0};
    char why[300];
    int v = 0;
    if (split < n) {
        v = hta_http_head(&h, b, split, token, status, why, sizeof why);
        if (v) return v;
    }
    return hta_http_head(&h, b, n, token, status, why, sizeof why);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!size) return 0;
    size_t split = data[0] % (size + 1);
    const uint8_t *d = data + 1;
    size_t n = size - 1;
    char *b = malloc(n + 1);
    if (!b) return 0;
    memcpy(b, d, n);
    b[n] = 0;
    for (int t = 0; t < 2; t++) {
        const char *token = t ? TOKEN : NULL;
        int s1 = 0, s2 = 0;
        int whole = http(b, n, n, token, &s1), pieces = http(b, split, n, token, &s2);
        /* a refusal in the first piece is final; otherwise the pieces read as the whole */
        if (pieces != whole && !(pieces < 0 && split < n)) abort();
        if (whole < 0 && !(s1 == 400 || s1 == 401 || s1 == 404 || s1 == 405 || s1 == 431)) abort();
        if (whole > 0 && (s1 != 200 || (token && !memmem(b, n, TOKEN, sizeof TOKEN - 1)))) abort();

        size_t total = 0, total2 = 0;
        int authed = 0, authed2 = 0;
        char why[300] = "";
        int r = hta_rpc_head(d, n, HTA_RPC_MAX_REQUEST, token, &total, &authed, why, sizeof why);
        if (r > 0 && (total > n || total < 4)) abort();
        if (r < 0 && !why[0]) abort();
        if (token && r > 0 && !authed) abort();
        int r2 = hta_rpc_head(d, split < n ? split : n, HTA_RPC_MAX_REQUEST, token, &total2, &authed2, why,
                              sizeof why);
        if (r2 < 0 && r >= 0) abort(); /* refused on fewer bytes, accepted on more: never */
    }
    hta_config_info ci;
    hta_error err = {0};
    if (hta_config_check(b, n, 1700000000000, &ci, &err) != HTA_OK && !err.msg[0]) abort();
    char out[4096];
    hta_escape_text(b, n, out, sizeof out);
    for (const char *c = out; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f) abort();
    free(b);
    return 0;
}
