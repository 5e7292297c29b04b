/* Open-addressing hash of interned strings; text lives in large blocks so
 * interning never mallocs per string. */
#include "hta/symtab.h"

#include <stdlib.h>
#include <string.h>

#include "core/hash.h"
#include "core/vec.h"

#define BLOCK_SIZE (1u << 20)

typedef struct sym_entry {
    const char *str;
    uint32_t len;
    uint32_t hash32;
} sym_entry;

struct hta_symtab {
    sym_entry *ent; /* by id */
    size_t n, cap;
    uint32_t *slot; /* id + 1, 0 = empty */
    size_t nslot;   /* power of two */
    char **blocks;
    size_t nblocks, blocks_cap;
    char *cur;
    size_t left;
};

hta_symtab *hta_symtab_new(void) {
    hta_symtab *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->nslot = 1024;
    s->slot = calloc(s->nslot, sizeof *s->slot);
    if (!s->slot) {
        free(s);
        return NULL;
    }
    return s;
}

void hta_symtab_free(hta_symtab *s) {
    if (!s) return;
    for (size_t i = 0; i < s->nblocks; i++) free(s->blocks[i]);
    free(s->blocks);
    free(s->ent);
    free(s->slot);
    free(s);
}

static char *store(hta_symtab *s, const char *str, size_t n) {
    if (n + 1 > s->left) {
        size_t sz = n + 1 > BLOCK_SIZE ? n + 1 : BLOCK_SIZE;
        char *b = malloc(sz);
        if (!b) return NULL;
        if (HTA_GROW(s->blocks, s->blocks_cap, s->nblocks + 1)) {
            free(b);
            return NULL;
        }
        s->blocks[s->nblocks++] = b;
        s->cur = b;
        s->left = sz;
    }
    char *d = s->cur;
    memcpy(d, str, n);
    d[n] = 0;
    s->cur += n + 1;
    s->left -= n + 1;
    return d;
}

static uint64_t ent_hash(const void *ctx, size_t id) { return ((const hta_symtab *)ctx)->ent[id].hash32; }

static hta_status rehash(hta_symtab *s) {
    return hta_slots_rebuild(&s->slot, &s->nslot, s->nslot * 2, s->n, ent_hash, s) ? HTA_ENOMEM : HTA_OK;
}

size_t hta_symtab_mark(const hta_symtab *s, const char *const *names, unsigned char *sel) {
    size_t n = 0;
    for (; *names; names++) {
        int64_t id = hta_symtab_find(s, *names, strlen(*names));
        if (id >= 0) sel[id] = 1, n++;
    }
    return n;
}

int64_t hta_symtab_find(const hta_symtab *s, const char *str, size_t n) {
    uint32_t h = (uint32_t)hta_hash_key(str, n);
    size_t j = h & (s->nslot - 1);
    for (;;) {
        uint32_t v = s->slot[j];
        if (!v) return -1;
        const sym_entry *e = &s->ent[v - 1];
        if (e->hash32 == h && e->len == n && memcmp(e->str, str, n) == 0) return v - 1;
        j = (j + 1) & (s->nslot - 1);
    }
}

uint32_t hta_symtab_intern(hta_symtab *s, const char *str, size_t n) {
    if (n >= UINT32_MAX) return UINT32_MAX;
    uint32_t h = (uint32_t)hta_hash_key(str, n);
    size_t j = h & (s->nslot - 1);
    for (;;) {
        uint32_t v = s->slot[j];
        if (!v) break;
        const sym_entry *e = &s->ent[v - 1];
        if (e->hash32 == h && e->len == n && memcmp(e->str, str, n) == 0) return v - 1;
        j = (j + 1) & (s->nslot - 1);
    }
    if (s->n >= UINT32_MAX - 1 || HTA_GROW(s->ent, s->cap, s->n + 1)) return UINT32_MAX;
    const char *d = store(s, str, n);
    if (!d) return UINT32_MAX;
    uint32_t id = (uint32_t)s->n++;
    s->ent[id] = (sym_entry){d, (uint32_t)n, h};
    s->slot[j] = id + 1;
    if (s->n * 2 > s->nslot && rehash(s)) {
        s->n--;
        s->slot[j] = 0;
        return UINT32_MAX;
    }
    return id;
}

uint32_t hta_symtab_count(const hta_symtab *s) { return (uint32_t)s->n; }
const char *hta_sym(const hta_symtab *s, uint32_t id) { return id < s->n ? s->ent[id].str : ""; }
size_t hta_sym_len(const hta_symtab *s, uint32_t id) { return id < s->n ? s->ent[id].len : 0; }
