/* JSON output helpers: strings (escaped, invalid UTF-8 replaced), times, numbers. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Length of the valid UTF-8 sequence at s (n bytes left), or 0. */
size_t htat_utf8_len(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    size_t len;
    unsigned min;
    if (c < 0x80)
        return 1;
    if ((c & 0xe0) == 0xc0) {
        len = 2;
        min = 0x80;
        c &= 0x1f;
    } else if ((c & 0xf0) == 0xe0) {
        len = 3;
        min = 0x800;
        c &= 0x0f;
    } else if ((c & 0xf8) == 0xf0) {
        len = 4;
        min = 0x10000;
        c &= 0x07;
    } else {
        return 0;
    }
    if (len > n)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        c = c << 6 | (s[i] & 0x3f);
    }
    if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
        return 0;
    return len;
}

void htat_json_str(FILE *f, const char *str, size_t len)
{
    const unsigned char *s = (const unsigned char *)str;
    putc('"', f);
    size_t i = 0;
    while (i < len) {
        unsigned char c = s[i];
        if (c == '"' || c == '\\') {
            putc('\\', f);
            putc(c, f);
            i++;
        } else if (c < 0x20) {
            switch (c) {
            case '\n': fputs("\\n", f); break;
            case '\t': fputs("\\t", f); break;
            case '\r': fputs("\\r", f); break;
            default: fprintf(f, "\\u%04x", c); break;
            }
            i++;
        } else if (c < 0x80) {
            putc(c, f);
            i++;
        } else {
            size_t n = htat_utf8_len(s + i, len - i);
            if (n) {
                fwrite(s + i, 1, n, f);
                i += n;
            } else {
                fputs("\\ufffd", f);
                i++;
            }
        }
    }
    putc('"', f);
}

void htat_json_cstr(FILE *f, const char *s)
{
    htat_json_str(f, s ? s : "", s ? strlen(s) : 0);
}

/* ns as microseconds with exactly three decimals. */
void htat_json_ts(FILE *f, int64_t ns)
{
    uint64_t a = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
    fprintf(f, "%s%llu.%03llu", ns < 0 ? "-" : "", (unsigned long long)(a / 1000), (unsigned long long)(a % 1000));
}

void htat_json_double(FILE *f, double d)
{
    if (!isfinite(d)) {
        fputs("null", f);
        return;
    }
    char buf[40];
    for (int prec = 15; prec <= 17; prec++) { /* shortest that reads back exactly */
        snprintf(buf, sizeof buf, "%.*g", prec, d);
        if (strtod(buf, NULL) == d)
            break;
    }
    /* keep it a JSON number that reads back as a float */
    if (!strpbrk(buf, ".eE"))
        strcat(buf, ".0");
    fputs(buf, f);
}
