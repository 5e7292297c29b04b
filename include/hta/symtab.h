/* Interned strings.  Each distinct string gets a dense id (0, 1, 2, ...) in
 * first-seen order; the text stays valid, NUL-terminated, until the table is
 * freed.  Not thread safe: the loader gives each rank its own table and
 * merges them afterwards. */
#ifndef HTA_SYMTAB_H
#define HTA_SYMTAB_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hta_symtab hta_symtab;

hta_symtab *hta_symtab_new(void);
void hta_symtab_free(hta_symtab *s);

/* Id of s[0..n), adding it if new.  Returns UINT32_MAX when out of memory. */
uint32_t hta_symtab_intern(hta_symtab *s, const char *str, size_t n);
/* Id of s[0..n) or -1 when absent. */
int64_t hta_symtab_find(const hta_symtab *s, const char *str, size_t n);
/* sel[id] = 1 for each of the NULL-terminated names that is in s; returns how many are. */
size_t hta_symtab_mark(const hta_symtab *s, const char *const *names, unsigned char *sel);

uint32_t hta_symtab_count(const hta_symtab *s);
const char *hta_sym(const hta_symtab *s, uint32_t id);
size_t hta_sym_len(const hta_symtab *s, uint32_t id);

#ifdef __cplusplus
}
#endif
#endif
