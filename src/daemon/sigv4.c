/* AWS Signature Version 4 for htad's S3 store (s3.c): SHA-256 (FIPS 180-4), HMAC-SHA256 (RFC 2104)
 * and the signing steps of AWS's "Signature Version 4 signing process" for a request whose signed
 * headers are host, x-amz-content-sha256 and x-amz-date. */
#include <stdio.h>
#include <string.h>

#include "daemon/htad.h"

static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

#define ROR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void block(uint32_t h[8], const unsigned char *p) {
    uint32_t w[64];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = ROR(w[i - 15], 7) ^ ROR(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = ROR(w[i - 2], 17) ^ ROR(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
    for (int i = 0; i < 64; i++) {
        uint32_t t1 = hh + (ROR(e, 6) ^ ROR(e, 11) ^ ROR(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + w[i];
        uint32_t t2 = (ROR(a, 2) ^ ROR(a, 13) ^ ROR(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        hh = g, g = f, f = e, e = d + t1, d = c, c = b, b = a, a = t1 + t2;
    }
    h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e, h[5] += f, h[6] += g, h[7] += hh;
}

void htad_sha256_init(htad_sha *s) {
    static const uint32_t h0[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    memcpy(s->h, h0, sizeof h0);
    s->n = 0;
    s->total = 0;
}

void htad_sha256_add(htad_sha *s, const void *data, size_t n) {
    const unsigned char *p = data;
    s->total += n;
    while (n) {
        size_t k = 64 - s->n < n ? 64 - s->n : n;
        memcpy(s->buf + s->n, p, k);
        s->n += k, p += k, n -= k;
        if (s->n == 64) block(s->h, s->buf), s->n = 0;
    }
}

void htad_sha256_end(htad_sha *s, unsigned char out[32]) {
    uint64_t bits = s->total * 8;
    unsigned char pad = 0x80, z = 0;
    htad_sha256_add(s, &pad, 1);
    while (s->n != 56) htad_sha256_add(s, &z, 1);
    unsigned char len[8];
    for (int i = 0; i < 8; i++) len[i] = (unsigned char)(bits >> (56 - 8 * i));
    htad_sha256_add(s, len, 8);
    for (int i = 0; i < 8; i++)
        out[4 * i] = (unsigned char)(s->h[i] >> 24), out[4 * i + 1] = (unsigned char)(s->h[i] >> 16),
                out[4 * i + 2] = (unsigned char)(s->h[i] >> 8), out[4 * i + 3] = (unsigned char)s->h[i];
}

void htad_sha256(const void *data, size_t n, unsigned char out[32]) {
    htad_sha s;
    htad_sha256_init(&s);
    htad_sha256_add(&s, data, n);
    htad_sha256_end(&s, out);
}

void htad_hmac_sha256(const void *key, size_t kn, const void *data, size_t n, unsigned char out[32]) {
    unsigned char k[64] = {0}, ip[64], op[64], inner[32];
    if (kn > 64) htad_sha256(key, kn, k);
    else memcpy(k, key, kn);
    for (int i = 0; i < 64; i++) ip[i] = k[i] ^ 0x36, op[i] = k[i] ^ 0x5c;
    htad_sha s;
    htad_sha256_init(&s);
    htad_sha256_add(&s, ip, 64);
    htad_sha256_add(&s, data, n);
    htad_sha256_end(&s, inner);
    htad_sha256_init(&s);
    htad_sha256_add(&s, op, 64);
    htad_sha256_add(&s, inner, 32);
    htad_sha256_end(&s, out);
}

void htad_hex(const unsigned char *d, size_t n, char *out) {
    for (size_t i = 0; i < n; i++) snprintf(out + 2 * i, 3, "%02x", d[i]);
}

void htad_sigv4(const char *method, const char *host, const char *path_enc, const char *query,
                const char *payload_hash, const char *amz_date, const char *region, const char *access_key,
                const char *secret, char *auth, size_t cap) {
    char canon[4096], scope[128], sts[512], h[65];
    unsigned char d[32], k[32];
    snprintf(canon, sizeof canon,
             "%s\n%s\n%s\nhost:%s\nx-amz-content-sha256:%s\nx-amz-date:%s\n\nhost;x-amz-content-sha256;x-amz-date\n%s",
             method, path_enc, query, host, payload_hash, amz_date, payload_hash);
    snprintf(scope, sizeof scope, "%.8s/%s/s3/aws4_request", amz_date, region);
    htad_sha256(canon, strlen(canon), d);
    htad_hex(d, 32, h);
    snprintf(sts, sizeof sts, "AWS4-HMAC-SHA256\n%s\n%s\n%s", amz_date, scope, h);
    char k0[300];
    snprintf(k0, sizeof k0, "AWS4%s", secret);
    htad_hmac_sha256(k0, strlen(k0), amz_date, 8, k);
    htad_hmac_sha256(k, 32, region, strlen(region), k);
    htad_hmac_sha256(k, 32, "s3", 2, k);
    htad_hmac_sha256(k, 32, "aws4_request", 12, k);
    htad_hmac_sha256(k, 32, sts, strlen(sts), d);
    htad_hex(d, 32, h);
    snprintf(auth, cap, "AWS4-HMAC-SHA256 Credential=%s/%s, SignedHeaders=host;x-amz-content-sha256;x-amz-date, "
                        "Signature=%s", access_key, scope, h);
}
