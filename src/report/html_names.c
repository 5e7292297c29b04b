/* Kernel names as the page's bar labels: short (templates and arguments dropped, as `hta kernels` shortens
 * them) and yet one label per kernel.  Shortened, several kernels often read the same
 * ("at::native::elementwise_kernel" for an add, a multiply and a copy); those get the words of their full
 * names that tell them apart ("(BinaryFunctor, BFloat16)"), and a number where no word does ("[2]"); where
 * cutting a label to its room makes two alike again, their rows in the table ("[#7]").  The full name
 * goes in the bar's tooltip (svg_hbars). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hta/vocab.h"
#include "report/internal.h"
#include "report/svg.h"

#define HINT_MAX 96 /* bytes of distinguishing words a label gets */
#define ROUNDS 3    /* words added to a label at most */
#define WORDS_RUN 16 /* kernels of one short name that words tell apart; more are numbered */

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
 * from the full name of some other kernel of its run (fulls[run[0..nrun)]); its length, 0 when none. */
static size_t telling_word(const char *full, const char *label, const char *const *fulls, const size_t *run,
                           size_t nrun, const char **out) {
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
                for (size_t j = 0; j < nrun; j++)
                    if (fulls[run[j]] != full && !has_word(fulls[run[j]], w, l)) {
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
    if (num > 0) snprintf(tail + tl, sizeof tail - tl, " [%d]", num);
    if (num < 0) snprintf(tail + tl, sizeof tail - tl, " [#%d]", -num); /* its row in the table */
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

/* Labels in order, with the table's order among equal ones: runs of equal labels lie together. */
typedef struct key {
    const char *lab;
    size_t i;
} key;

static int by_label(const void *a, const void *b) {
    const key *x = a, *y = b;
    int c = strcmp(x->lab, y->lab);
    return c ? c : (x->i > y->i) - (x->i < y->i);
}

/* The kernels' indices by label into ord (n), runs of equal labels together. */
static void sort_labels(char *const *lab, size_t n, key *k, size_t *ord) {
    for (size_t i = 0; i < n; i++) k[i].lab = lab[i], k[i].i = i;
    qsort(k, n, sizeof *k, by_label);
    for (size_t i = 0; i < n; i++) ord[i] = k[i].i;
}

/* The end of the run of labels equal to ord[a]'s. */
static size_t run_end(char *const *lab, const size_t *ord, size_t a, size_t n) {
    size_t b = a + 1;
    while (b < n && !strcmp(lab[ord[a]], lab[ord[b]])) b++;
    return b;
}

/* Recomposes lab[i] (freeing the old one); 0 when out of memory. */
static int relabel(char **lab, const char *base, const char *hint, int num, int maxc, size_t i) {
    char *s = compose(base, hint, num, maxc);
    if (!s) return 0;
    free(lab[i]);
    lab[i] = s;
    return 1;
}

/* Numbers for the kernels of each run of equal labels, whether any got one: 1, 2, ... in the table's
 * order, or with rows, each kernel's row in the table as -(row) (unique over all kernels). */
static int number(char *const *lab, size_t n, key *k, size_t *ord, int *num, int rows) {
    int any = 0;
    sort_labels(lab, n, k, ord);
    for (size_t a = 0, b; a < n; a = b) {
        b = run_end(lab, ord, a, n);
        for (size_t j = a; b - a > 1 && j < b; j++) num[ord[j]] = rows ? -(int)(ord[j] + 1) : (int)(j - a + 1), any = 1;
    }
    return any;
}

char **rp_kernel_labels(const char *const *full, size_t n, int maxc) {
    char **base = calloc(n + 1, sizeof *base), **lab = calloc(n + 1, sizeof *lab);
    char(*hint)[HINT_MAX] = calloc(n + 1, sizeof *hint), (*add)[HINT_MAX] = calloc(n + 1, sizeof *add);
    key *k = calloc(n + 1, sizeof *k);
    size_t *ord = calloc(n + 1, sizeof *ord);
    int *num = calloc(n + 1, sizeof *num), ok = base && lab && hint && add && k && ord && num;
    for (size_t i = 0; ok && i < n; i++) {
        char *sn = hta_shorten_name(full[i]);
        base[i] = sn ? sn : strdup(full[i]);
        ok = base[i] && (lab[i] = compose(base[i], "", 0, 1 << 20)) != NULL;
    }
    /* rounds of words, each chosen against the labels as the round found them; only in runs of up to
     * WORDS_RUN kernels (a word per kernel tells few apart, and it keeps the work near linear in n) */
    for (int round = 0; ok && round < ROUNDS; round++) {
        int any = 0;
        sort_labels(lab, n, k, ord);
        for (size_t a = 0, b; a < n; a = b) {
            b = run_end(lab, ord, a, n);
            for (size_t j = a; b - a > 1 && b - a <= WORDS_RUN && j < b; j++) {
                size_t i = ord[j];
                const char *w = NULL;
                size_t l = telling_word(full[i], lab[i], full, ord + a, b - a, &w);
                add[i][0] = 0;
                if (l && strlen(hint[i]) + l + 3 < HINT_MAX) snprintf(add[i], HINT_MAX, "%.*s", (int)l, w), any = 1;
            }
        }
        for (size_t i = 0; ok && i < n; i++)
            if (add[i][0]) {
                size_t hl = strlen(hint[i]);
                snprintf(hint[i] + hl, HINT_MAX - hl, "%s%s", hl ? ", " : "", add[i]);
                add[i][0] = 0;
                ok = relabel(lab, base[i], hint[i], 0, 1 << 20, i);
            }
        if (!any) break;
    }
    /* no word tells them apart (the same kernel template, other numbers): numbered in the table's order */
    if (ok && number(lab, n, k, ord, num, 0))
        for (size_t i = 0; ok && i < n; i++) ok = relabel(lab, base[i], hint[i], num[i], 1 << 20, i);
    for (size_t i = 0; ok && i < n; i++) ok = relabel(lab, base[i], hint[i], num[i], maxc, i);
    /* where cutting to maxc made two alike, their rows in the table (at the end, which the cut keeps) */
    if (ok && number(lab, n, k, ord, num, 1))
        for (size_t i = 0; ok && i < n; i++) ok = relabel(lab, base[i], hint[i], num[i], maxc, i);
    for (size_t i = 0; base && i < n; i++) free(base[i]);
    free(base);
    free(hint);
    free(add);
    free(k);
    free(ord);
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
