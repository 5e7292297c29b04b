/* Kernel names as the page's bar labels: short (templates and arguments dropped, as `hta kernels` shortens
 * them) and yet one label per kernel.  Shortened, several kernels often read the same
 * ("at::native::elementwise_kernel" for an add, a multiply and a copy); those get the words of their full
 * names that tell them apart ("(BinaryFunctor, BFloat16)"), and a number where no word does.  The full
 * name goes in the bar's tooltip (svg_hbars). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hta/vocab.h"
#include "report/internal.h"
#include "report/svg.h"

#define HINT_MAX 96 /* bytes of distinguishing words a label gets */
#define ROUNDS 3    /* words added to a label at most */

static int ident(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* Whether s holds the word w (l bytes) as a whole identifier. */
static int has_word(const char *s, const char *w, size_t l) {
    for (const char *p = s; (p = strstr(p, w)) != NULL; p++) {
        /* a match is whole when no identifier character touches it */
        int before = p > s && ident(p[-1]), after = ident(p[l]);
        if (!before && !after) return 1;
    }
    return 0;
}

/* Words that name nothing particular to a kernel (C++ keywords and types, the profiler's lambdas). */
static int dull(const char *w, size_t l) {
    static const char *const stop[] = {"void", "const", "unsigned", "signed", "char", "int", "long", "short", "bool",
                                       "auto", "operator", "lambda", "anonymous", "namespace", "std", "array",
                                       "struct", "class", "typename", "true", "false", "float", "double", "half"};
    if (l < 3 || (w[0] >= '0' && w[0] <= '9')) return 1;
    for (size_t i = 0; i < sizeof stop / sizeof *stop; i++)
        if (strlen(stop[i]) == l && !strncmp(stop[i], w, l)) return 1;
    return 0;
}

/* The first word of full that is not dull, no namespace (followed by "::"), not yet in label, and absent
 * from the full name of some other kernel j with the same label (same[j]); its length, 0 when none. */
static size_t telling_word(const char *full, const char *label, const char *const *fulls, const unsigned char *same,
                           size_t n, const char **out) {
    char w[HINT_MAX];
    for (const char *p = full; *p;) {
        if (!ident(*p)) {
            p++;
            continue;
        }
        const char *q = p;
        while (ident(*q)) q++;
        size_t l = (size_t)(q - p);
        if (!dull(p, l) && strncmp(q, "::", 2) && l < sizeof w) {
            memcpy(w, p, l), w[l] = 0;
            if (!has_word(label, w, l))
                for (size_t j = 0; j < n; j++)
                    if (same[j] && fulls[j] != full && !has_word(fulls[j], w, l)) {
                        *out = p;
                        return l;
                    }
        }
        p = q;
    }
    return 0;
}

/* The label of kernel i: its short name, its words in parentheses and its number, cut to maxc characters
 * in the name where it can (the words and the number are what tell it apart). */
static char *compose(const char *base, const char *hint, int num, int maxc) {
    char tail[HINT_MAX + 32] = "", *s = NULL;
    size_t tl = 0;
    if (*hint) tl += (size_t)snprintf(tail + tl, sizeof tail - tl, " (%s)", hint);
    if (num) snprintf(tail + tl, sizeof tail - tl, " [%d]", num);
    /* with words that tell it apart, the name goes without its namespaces (the tooltip has them) */
    const char *lt = strchr(base, '<'), *name = base, *p;
    for (p = base; *hint && (p = strstr(p, "::")) != NULL && (!lt || p < lt); p += 2) name = p + 2;
    int room = maxc - (int)strlen(tail);
    char *cut = malloc((size_t)maxc + 1);
    if (!cut) return NULL;
    if (room >= 12) name = svg_fit(name, room, cut);
    if (asprintf(&s, "%s%s", name, tail) < 0) s = NULL;
    if (s && (int)strlen(s) > maxc) { /* the words alone are too long: cut the whole */
        svg_fit(s, maxc, cut);
        free(s);
        return cut;
    }
    free(cut);
    return s;
}

/* Numbers for the labels that are alike (1, 2, ... in order, none for a unique one); whether any changed. */
static int number(char *const *lab, int *num, size_t n) {
    int changed = 0;
    for (size_t i = 0; i < n; i++) {
        int k = num[i] ? num[i] : 1;
        for (size_t j = i + 1; j < n; j++)
            if (!strcmp(lab[i], lab[j]) && num[j] <= k) num[j] = ++k, changed = 1;
        if (k > 1 && !num[i]) num[i] = 1, changed = 1;
    }
    return changed;
}

char **rp_kernel_labels(const char *const *full, size_t n, int maxc) {
    char **base = calloc(n + 1, sizeof *base), **lab = calloc(n + 1, sizeof *lab);
    char(*hint)[HINT_MAX] = calloc(n + 1, sizeof *hint);
    unsigned char *same = calloc(n + 1, 1);
    int *num = calloc(n + 1, sizeof *num), ok = base && lab && hint && same && num;
    for (size_t i = 0; ok && i < n; i++) {
        char *sn = hta_shorten_name(full[i]);
        base[i] = sn ? sn : strdup(full[i]);
        ok = base[i] != NULL;
    }
    for (int round = 0; ok && round <= ROUNDS; round++) {
        for (size_t i = 0; ok && i < n; i++) {
            free(lab[i]);
            ok = (lab[i] = compose(base[i], hint[i], 0, 1 << 20)) != NULL;
        }
        if (round == ROUNDS) break;
        /* this round's words, chosen against the labels as the round found them */
        char(*add)[HINT_MAX] = calloc(n + 1, sizeof *add);
        int any = 0;
        for (size_t i = 0; ok && add && i < n; i++) {
            int dup = 0;
            for (size_t j = 0; j < n; j++) dup |= same[j] = j != i && !strcmp(lab[i], lab[j]);
            const char *w = NULL;
            size_t l = dup ? telling_word(full[i], lab[i], full, same, n, &w) : 0;
            if (l && strlen(hint[i]) + l + 3 < HINT_MAX) snprintf(add[i], HINT_MAX, "%.*s", (int)l, w), any = 1;
        }
        if (!add) ok = 0;
        for (size_t i = 0; ok && i < n; i++)
            if (add[i][0]) {
                size_t hl = strlen(hint[i]);
                snprintf(hint[i] + hl, HINT_MAX - hl, "%s%s", hl ? ", " : "", add[i]);
            }
        free(add);
        if (!any) break;
    }
    /* no word tells them apart (the same kernel template, other numbers): numbered in the table's order;
     * and again where cutting to maxc made two alike (the number is at the end, which the cut keeps) */
    for (int pass = 0; ok && pass < 2; pass++) {
        if (number(lab, num, n))
            for (size_t i = 0; ok && i < n; i++) {
                free(lab[i]);
                ok = (lab[i] = compose(base[i], hint[i], num[i], pass ? maxc : 1 << 20)) != NULL;
            }
        for (size_t i = 0; ok && !pass && i < n; i++) {
            free(lab[i]);
            ok = (lab[i] = compose(base[i], hint[i], num[i], maxc)) != NULL;
        }
    }
    for (size_t i = 0; base && i < n; i++) free(base[i]);
    free(base);
    free(hint);
    free(same);
    free(num);
    if (!ok) {
        rp_labels_free(lab, n);
        return NULL;
    }
    return lab;
}

void rp_labels_free(char **lab, size_t n) {
    for (size_t i = 0; lab && i < n; i++) free(lab[i]);
    free(lab);
}
