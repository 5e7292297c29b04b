/* Byte source for one trace file: plain JSON, or gzip (one or more members,
 * as pigz writes), decompressed as a stream so memory stays bounded. */
#ifndef HTA_TRACE_INPUT_H
#define HTA_TRACE_INPUT_H

#include <stddef.h>
#include <stdint.h>

#include "hta/error.h"

typedef struct hta_input hta_input;

/* Refuses an archive (.tar.gz, .tgz, .tar, .zip, by name) with an error naming it, as it would otherwise
 * fail as a JSON parse error; HTA_OK for any other name.  hta_input_open and the folder listing ask. */
hta_status hta_input_refuse_archive(const char *path, hta_error *err);
hta_status hta_input_open(const char *path, hta_input **out, hta_error *err);
/* Reads up to cap bytes of JSON text into buf; *got = 0 at end of input.
 * Errors name the file and the compressed byte offset. */
hta_status hta_input_read(hta_input *in, char *buf, size_t cap, size_t *got, hta_error *err);
void hta_input_close(hta_input *in);
/* Moves a plain (not gzip) input to byte off of the file: the next read starts there (a split load's
 * later chunk, split.c).  HTA_EINVAL for a gzip input. */
hta_status hta_input_seek(hta_input *in, uint64_t off, hta_error *err);
/* A gzip file cut short (a crashed writer's): the data inflated up to the cut is read as the whole
 * input, and this says where the compressed bytes ended (0: not cut).  The JSON reader decides whether
 * what came through is usable. */
uint64_t hta_input_cut_at(const hta_input *in);

int hta_input_is_gzip(const hta_input *in);
uint64_t hta_input_bytes_in(const hta_input *in);   /* file bytes consumed */
uint64_t hta_input_file_size(const hta_input *in);
const char *hta_input_path(const hta_input *in);

#endif
