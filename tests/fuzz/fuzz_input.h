/* Shared by the fuzz targets that read a file: the input bytes written to a file of this process's own. */
#ifndef HTA_FUZZ_INPUT_H
#define HTA_FUZZ_INPUT_H

#include <stdint.h>
#include <stdio.h>

/* 0, or -1 when path cannot be opened (the target then skips the input). */
static inline int fuzz_to_file(const char *path, const uint8_t *data, size_t size) {
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    fwrite(data, 1, size, f);
    fclose(f);
    return 0;
}

#endif
