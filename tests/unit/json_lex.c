/* Unit tests of the trace parser's JSON lexer (src/trace/json_lex.h): numbers
 * to exact int64 ns, strings (escapes, UTF-8), skipping values, and input that
 * ends early (LEX_MORE: the parser reads on, or reports truncated JSON). */
#include "trace/json_lex.h"
#include "unit.h"

/* The lexer's buffer: the text, then the NUL sentinel and HTA_LEX_PAD readable bytes. */
typedef struct buf {
    char b[2048];
    lex L;
} buf;

static const char *load(buf *B, const char *text, size_t n) {
    memset(B->b, 0, sizeof B->b);
    memcpy(B->b, text, n);
    B->L = (lex){.end = B->b + n};
    return B->b;
}

/* ---- numbers ---- */

enum { NUM_OK, NUM_MORE, NUM_ERR, NUM_RANGE };

/* Lexes the number at the start of text (followed by the rest of text), then
 * scales it by 10^scale: 3 turns a trace's us into ns, as the parser does. */
static int num(const char *text, int scale, int64_t *v) {
    buf B;
    const char *p = load(&B, text, strlen(text)), *q = NULL;
    lex_num n;
    lex_rc rc = lex_number(&B.L, p, &q, &n);
    if (rc) return rc == LEX_MORE ? NUM_MORE : NUM_ERR;
    if (*q != ',') return NUM_ERR; /* every case below puts a ',' after the number */
    return lex_num_scaled(&n, scale, v) ? NUM_RANGE : NUM_OK;
}

#define CHECK_NS(text, want)                      \
    do {                                          \
        int64_t v_ = -42;                         \
        CHECK_EQ_I64(num(text ",", 3, &v_), NUM_OK); \
        CHECK_EQ_I64(v_, want);                   \
    } while (0)

static void number_us_to_ns(void) {
    CHECK_NS("0", 0);
    CHECK_NS("2", 2000);
    CHECK_NS("1.5", 1500);
    CHECK_NS("-1.5", -1500);
    CHECK_NS("0.001", 1);
    CHECK_NS("123456789012.345", 123456789012345);
    /* beyond a double's precision: HTA's float64 cannot hold it */
    CHECK_NS("1712195495519689.047", 1712195495519689047);
    CHECK_NS("9223372036854775.807", INT64_MAX);
    CHECK_NS("1234567890123456.789", 1234567890123456789); /* 19 digits: the fast path's last */
    CHECK_NS("1e3", 1000000);
    CHECK_NS("1E+2", 100000);
    CHECK_NS("12e-1", 1200);
    CHECK_NS("0.5e1", 5000);
    CHECK_NS("1e-30", 0);
    CHECK_NS("0.000000000000000000000000001e27", 1000);
    CHECK_NS("-0", 0);
    CHECK_NS("-0.0", 0);
}

/* Fractions of a ns round half to even, like an exact decimal would. */
static void number_rounding(void) {
    CHECK_NS("0.0005", 0);
    CHECK_NS("0.0015", 2);
    CHECK_NS("0.0025", 2);
    CHECK_NS("0.0035", 4);
    CHECK_NS("0.00049", 0);
    CHECK_NS("0.00051", 1);
    CHECK_NS("-0.0015", -2);
    CHECK_NS("-0.0004", 0);
    CHECK_NS("1.5e-3", 2);
    CHECK_NS("2.5E-3", 2);
    /* more than 19 significant digits: the dropped ones still decide a tie */
    CHECK_NS("0.00050000000000000000001", 1);
    CHECK_NS("0.00050000000000000000000", 0);
    CHECK_NS("1234567890.1234567891", 1234567890123);
    CHECK_NS("1234567890.1234565000001", 1234567890123);
}

static void number_integers(void) {
    int64_t v = 0;
    CHECK_EQ_I64(num("9223372036854775807,", 0, &v), NUM_OK);
    CHECK_EQ_I64(v, INT64_MAX);
    CHECK_EQ_I64(num("-9223372036854775807,", 0, &v), NUM_OK);
    CHECK_EQ_I64(v, -INT64_MAX);
    /* 20 digits: the slow path keeps 19 and counts the rest in the exponent */
    CHECK_EQ_I64(num("10000000000000000000e-1,", 0, &v), NUM_OK);
    CHECK_EQ_I64(v, 1000000000000000000);
    /* Known gap, not tested: "-9223372036854775808" (INT64_MIN) is rejected as out of range,
     * since lex_num_scaled checks the magnitude against INT64_MAX before the sign. */
    CHECK_EQ_I64(num("9223372036854775808,", 0, &v), NUM_RANGE);
    CHECK_EQ_I64(num("99999999999999999999,", 0, &v), NUM_RANGE);
    CHECK_EQ_I64(num("9223372036854775.808,", 3, &v), NUM_RANGE);
    CHECK_EQ_I64(num("1e30,", 3, &v), NUM_RANGE);
    CHECK_EQ_I64(num("-1e30,", 3, &v), NUM_RANGE);
}

static void number_grammar(void) {
    int64_t v;
    static const char *bad[] = {"01,", "-01,", "-,", "1.,", ".5,", "1e,", "1e+,", "+1,", "-a,", "1.e5,"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (num(bad[i], 3, &v) != NUM_ERR) UNIT_FAIL("\"%s\" accepted as a number", bad[i]);
    buf B;
    const char *p = load(&B, "01,", 3), *q;
    lex_num n;
    CHECK_EQ_I64(lex_number(&B.L, p, &q, &n), LEX_ERR);
    CHECK_EQ_STR(B.L.err, "leading zero in number");
    CHECK(B.L.err_at == p + 1);
    /* the value as a double, for args that are not times */
    CHECK_EQ_DBL(lex_num_double("1.5e3,", strchr("1.5e3,", ',')), 1500.0);
}

/* A number at the very end of the data may go on in the next block. */
static void number_truncated(void) {
    int64_t v;
    static const char *cut[] = {"1", "1.5", "1.5e", "1.5e-", "-", "123456789012.345", "0"};
    for (size_t i = 0; i < sizeof cut / sizeof cut[0]; i++)
        if (num(cut[i], 3, &v) != NUM_MORE) UNIT_FAIL("\"%s\" at the end of the data: not LEX_MORE", cut[i]);
}

/* ---- strings ---- */

/* Lexes the string body at text (after the opening quote). */
static lex_rc str(buf *B, const char *text, size_t n, const char **close, int *esc) {
    const char *p = load(B, text, n);
    *close = NULL;
    return lex_string(&B->L, p, close, esc);
}
#define STR(B, lit, close, esc) str(B, lit, sizeof(lit) - 1, close, esc)

static void string_plain_and_utf8(void) {
    buf B;
    const char *q;
    int esc = -1;
    CHECK_EQ_I64(STR(&B, "abc\", 1", &q, &esc), LEX_OK);
    CHECK(q == B.b + 3);
    CHECK_EQ_I64(esc, 0);
    CHECK_EQ_I64(STR(&B, "\"", &q, &esc), LEX_OK); /* empty */
    CHECK(q == B.b);
    /* a long plain string crosses the 16-byte scans */
    CHECK_EQ_I64(STR(&B, "0123456789abcdef0123456789abcdef01\"", &q, &esc), LEX_OK);
    CHECK(q == B.b + 34);
    /* valid UTF-8 of 2, 3 and 4 bytes, no escapes */
    CHECK_EQ_I64(STR(&B, "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf\"", &q, &esc), LEX_OK);
    CHECK_EQ_I64(esc, 0);
    CHECK(q == B.b + 19);
}

static void string_escapes(void) {
    buf B;
    const char *q;
    int esc = 0;
    static const char in[] = "a\\nb\\t\\\"\\\\\\/\\b\\f\\r\\u00e9\\u20AC\\ud83d\\ude00z\"";
    CHECK_EQ_I64(STR(&B, in, &q, &esc), LEX_OK);
    CHECK_EQ_I64(esc, 1);
    char out[64];
    size_t n = lex_unescape(B.b, q, out);
    static const char want[] = "a\nb\t\"\\/\b\f\r\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80z";
    CHECK_EQ_MEM(out, n, want, sizeof want - 1);
}

/* Lone or misordered surrogates become U+FFFD. */
static void string_surrogates(void) {
    static const struct { const char *in, *want; } c[] = {
        {"\\ud800x\"", "\xef\xbf\xbdx"},
        {"\\udc00\"", "\xef\xbf\xbd"},
        {"\\ud83d\\u0041\"", "\xef\xbf\xbd" "A"},
        {"\\ude00\\ud83d\"", "\xef\xbf\xbd\xef\xbf\xbd"},
        {"\\uDBFF\\uDFFF\"", "\xf4\x8f\xbf\xbf"},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        buf B;
        const char *q;
        int esc;
        CHECK_EQ_I64(str(&B, c[i].in, strlen(c[i].in), &q, &esc), LEX_OK);
        if (!q) continue;
        char out[64];
        size_t n = lex_unescape(B.b, q, out);
        CHECK_EQ_MEM(out, n, c[i].want, strlen(c[i].want));
    }
}

static void string_errors(void) {
    static const struct { const char *in; size_t at; const char *err; } c[] = {
        {"a\xff\"", 1, "invalid UTF-8 in string"},
        {"\xc0\x80\"", 0, "invalid UTF-8 in string"},         /* overlong NUL */
        {"\xe0\x80\xaf\"", 0, "invalid UTF-8 in string"},     /* overlong '/' */
        {"ab\xed\xa0\x80\"", 2, "invalid UTF-8 in string"},   /* a surrogate, encoded */
        {"\xf4\x90\x80\x80\"", 0, "invalid UTF-8 in string"}, /* beyond U+10FFFF */
        {"\x80\"", 0, "invalid UTF-8 in string"},             /* a lone continuation byte */
        {"\xe2\x28\xa1\"", 0, "invalid UTF-8 in string"},
        {"a\x01" "b\"", 1, "control character in string"},
        {"tab\there\"", 3, "control character in string"},
        {"x\\q\"", 1, "invalid escape in string"},
        {"\\u12g4\"", 0, "invalid \\u escape"},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        buf B;
        const char *q;
        int esc;
        lex_rc rc = str(&B, c[i].in, strlen(c[i].in), &q, &esc);
        if (rc != LEX_ERR) {
            UNIT_FAIL("case %zu: rc %d, expected an error", i, (int)rc);
            continue;
        }
        CHECK_EQ_STR(B.L.err, c[i].err);
        CHECK_EQ_I64(B.L.err_at - B.b, (int64_t)c[i].at);
    }
    /* a NUL byte inside the data (not the sentinel) is a control character */
    buf B;
    const char *q;
    int esc;
    CHECK_EQ_I64(STR(&B, "a\0b\"", &q, &esc), LEX_ERR);
    CHECK_EQ_STR(B.L.err, "control character in string");
}

/* A string cut by the end of the data, anywhere, asks for more. */
static void string_truncated(void) {
    static const char *cut[] = {"abc", "abc\\", "\\u12", "\\u", "caf\xc3", "\xe2\x82", "\xf0\x9f\x98", ""};
    for (size_t i = 0; i < sizeof cut / sizeof cut[0]; i++) {
        buf B;
        const char *q;
        int esc;
        if (str(&B, cut[i], strlen(cut[i]), &q, &esc) != LEX_MORE) UNIT_FAIL("case %zu: not LEX_MORE", i);
    }
}

/* ---- whole values ---- */

static lex_rc skip(buf *B, const char *text, const char **out) {
    const char *p = load(B, text, strlen(text));
    *out = NULL;
    return lex_skip_value(&B->L, p, out);
}

static void values_whole(void) {
    buf B;
    const char *q;
    static const char *ok[] = {
        "{\"a\": [1, 2.5e3, -0, true, false, null, \"x\\u0041\"], \"b\": {}, \"c\": []}",
        "[]", "{}", "0", "-1.5E-7", "\"s\"", "true", "null",
        " \n\t\r [ 1 , { \"k\" : \"v\" } ] ",
        "[[[[[[[[[[]]]]]]]]]]",
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        char text[256];
        snprintf(text, sizeof text, "%s,", ok[i]);
        if (skip(&B, text, &q) != LEX_OK) {
            UNIT_FAIL("case %zu: %s", i, B.L.err ? B.L.err : "LEX_MORE");
            continue;
        }
        /* stops right after the value (trailing whitespace is the caller's) */
        size_t len = strlen(ok[i]);
        while (len && ok[i][len - 1] == ' ') len--;
        CHECK_EQ_I64(q - B.b, (int64_t)len);
    }
}

static void values_bad(void) {
    static const struct { const char *in, *err; } c[] = {
        {"[1 2],", "expected ',' or ']'"},
        {"{\"a\": 1 \"b\": 2},", "expected ',' or '}'"},
        {"{\"a\" 1},", "expected ':' after an object key"},
        {"{1: 2},", "expected an object key"},
        {"[tru],", "invalid literal"},
        {"[01],", "leading zero in number"},
        {"[1.],", "invalid number"},
        {"[\"a\xff\"],", "invalid UTF-8 in string"},
        {"[,],", "invalid number"},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        buf B;
        const char *q;
        if (skip(&B, c[i].in, &q) != LEX_ERR) {
            UNIT_FAIL("case %zu (%s): accepted", i, c[i].in);
            continue;
        }
        CHECK_EQ_STR(B.L.err, c[i].err);
    }
}

/* 256 levels of nesting are fine, 257 are not. */
static void values_depth(void) {
    char text[1100];
    buf B;
    const char *q;
    for (int depth = 256; depth <= 257; depth++) {
        size_t o = 0;
        for (int i = 0; i < depth; i++) text[o++] = '[';
        for (int i = 0; i < depth; i++) text[o++] = ']';
        text[o++] = ',';
        text[o] = 0;
        lex_rc rc = skip(&B, text, &q);
        if (depth == 256) CHECK_EQ_I64(rc, LEX_OK);
        else {
            CHECK_EQ_I64(rc, LEX_ERR);
            CHECK_EQ_STR(B.L.err, "JSON nested too deeply");
        }
    }
}

static void values_truncated(void) {
    static const char *cut[] = {"{\"a\": [1, 2", "{\"a\": tr", "[", "{", "{\"a\"", "{\"a\":", "[\"ab", "[1,", "-", "nul"};
    for (size_t i = 0; i < sizeof cut / sizeof cut[0]; i++) {
        buf B;
        const char *q;
        if (skip(&B, cut[i], &q) != LEX_MORE) UNIT_FAIL("\"%s\": not LEX_MORE", cut[i]);
    }
}

static void whitespace(void) {
    buf B;
    static const char ws[] = " \n\t\r  \n                                x";
    const char *p = load(&B, ws, sizeof ws - 1);
    CHECK(lex_ws(p) == B.b + sizeof ws - 2);
    p = load(&B, "x", 1);
    CHECK(lex_ws(p) == p);
    p = load(&B, "   ", 3);
    CHECK(lex_ws(p) == B.b + 3); /* stops at the sentinel */
}

/* lex_key_short, the parser's fast path for short plain keys, agrees with lex_key wherever it takes a
 * key, and leaves to lex_key every key it must not take (escapes, a quote byte 0x23 that a borrow would
 * fake as a quote, non-ASCII, control bytes, white space before ':', a key cut by the end of the bytes). */
static void short_keys(void) {
    static const char *take[] = {"\"ph\": \"X\"", "\"ts\":1", "\"name\": 1", "\"args\": {}", "\"\": 1",
                                 "\"abcdef\":1", "\"id\":\n  2", "\"#:ab\": 1"};
    static const char *leave[] = {"\"a\\\"b\": 1", "\"#:abcdefgh\": 1", "\"\xc3\xa9\": 1", "\"a\x01\": 1",
                                  "\"ph\" : 1", "\"abcdefg\": 1", "\"ph\"", "\"p", "x\"ab\":1", "\"\\u0061\": 1"};
    for (size_t i = 0; i < sizeof take / sizeof *take; i++) {
        buf B;
        const char *p = load(&B, take[i], strlen(take[i])), *k, *k2 = NULL, *o, *o2 = NULL;
        size_t kn, kn2 = 0;
        int esc;
        if (!lex_key_short(p, &k, &kn, &o)) {
            UNIT_FAIL("%s: not taken", take[i]);
            continue;
        }
        CHECK(lex_key(&B.L, p, &k2, &kn2, &esc, &o2) == LEX_OK);
        CHECK(k == k2 && kn == kn2 && o == o2 && !esc);
    }
    for (size_t i = 0; i < sizeof leave / sizeof *leave; i++) {
        buf B;
        const char *p = load(&B, leave[i], strlen(leave[i])), *k, *o;
        size_t kn;
        if (lex_key_short(p, &k, &kn, &o)) UNIT_FAIL("%s: taken", leave[i]);
    }
}

/* lex_num_int: exactly an integer, or refused (distributedInfo.rank, baseTimeNanoseconds) */
static int exact_int(const char *text, int64_t *v) {
    buf B;
    const char *p = load(&B, text, strlen(text)), *q = NULL;
    lex_num n;
    if (lex_number(&B.L, p, &q, &n) || *q != ',') return -2;
    return lex_num_int(&n, v);
}

static void number_exact_integers(void) {
    static const struct { const char *t; int64_t v; } ok[] = {
        {"0,", 0}, {"7,", 7}, {"-7,", -7}, {"2.0,", 2}, {"2.000,", 2}, {"3e0,", 3}, {"1e3,", 1000},
        {"1.5e1,", 15}, {"9223372036854775807,", INT64_MAX}, {"-9223372036854775807,", -INT64_MAX},
        {"1234567890123456789.0,", 1234567890123456789}, {"0.0,", 0}, {"1e-0,", 1},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        int64_t v = -42;
        if (exact_int(ok[i].t, &v) || v != ok[i].v) UNIT_FAIL("\"%s\": not the integer %lld", ok[i].t, (long long)ok[i].v);
    }
    /* a fraction, a dropped non-zero digit, or beyond int64: never truncated to an integer */
    static const char *bad[] = {"1.5,", "-1.5,", "0.1,", "1e-1,", "15e-1,", "1e30,", "9223372036854775808,",
                                "1234567890123456789.5,", "12345678901234567891,", "1.00000000000000000001,"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int64_t v = -42;
        if (exact_int(bad[i], &v) != -1) UNIT_FAIL("\"%s\": taken as an integer", bad[i]);
        if (v != -42) UNIT_FAIL("\"%s\": value written on failure", bad[i]);
    }
}

/* lex_utf8_valid: what a saved graph's strings must be (the lexer's own rules, and no NUL) */
static void utf8_validity(void) {
    CHECK(lex_utf8_valid("", 0));
    CHECK(lex_utf8_valid("aten::mm", 8));
    CHECK(lex_utf8_valid("\xc3\xa9t\xc3\xa9", 5));          /* été */
    CHECK(lex_utf8_valid("\xf0\x9f\x98\x80", 4));          /* U+1F600 */
    CHECK(!lex_utf8_valid("a\0b", 3));                     /* NUL */
    CHECK(!lex_utf8_valid("\xff", 1));
    CHECK(!lex_utf8_valid("\xc3", 1));                     /* cut short */
    CHECK(!lex_utf8_valid("\xc0\x80", 2));                 /* overlong */
    CHECK(!lex_utf8_valid("\xed\xa0\x80", 3));             /* a surrogate */
    CHECK(!lex_utf8_valid("\xf4\x90\x80\x80", 4));         /* past U+10FFFF */
    CHECK(!lex_utf8_valid("ok\x80", 3));                   /* a lone continuation byte */
}

UNIT_MAIN(T(number_us_to_ns), T(number_rounding), T(number_integers), T(number_grammar), T(number_truncated),
          T(string_plain_and_utf8), T(string_escapes), T(string_surrogates), T(string_errors),
          T(string_truncated), T(values_whole), T(values_bad), T(values_depth), T(values_truncated), T(whitespace),
          T(number_exact_integers), T(utf8_validity), T(short_keys))
