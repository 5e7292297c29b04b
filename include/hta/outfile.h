/* Output files of libhta (src/core/outfile.c): the one writer under every file the library writes
 * (derived traces through hta/rawjson.h, saved critical-path graphs), and the checks that keep an
 * output off its inputs.  docs/loading.md, "Output files", says what a user sees.
 *
 * What a path names decides how it is written:
 *   - a regular file, or nothing: the bytes go to a temporary file created exclusively (O_EXCL, an
 *     unpredictable hidden name ".NAME.tmp-XXXXXXXXXX" in the same folder, mode 0666 & ~umask), which
 *     is renamed over the path only when complete, so a failure or a signal never leaves a half-written
 *     file and two writers of one path never mix their bytes (the last rename wins);
 *   - a symbolic link: followed; the file it leads to is replaced as above and the link stays;
 *   - a FIFO, a character device (/dev/null, a terminal), or anything reached through /proc's fd links
 *     (/dev/stdout, /dev/fd/N, /proc/self/fd/N): written through, opened O_WRONLY and streamed, never
 *     renamed over (a regular file reached through /proc is appended to, as the shell's >> does);
 *   - a folder, a socket, a block device: refused.
 * Errors name the path as given (never the temporary name) and say what happened
 * ("No space left on device", "Permission denied"). */
#ifndef HTA_OUTFILE_H
#define HTA_OUTFILE_H

#include <stddef.h>

#include "hta/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hta_outfile hta_outfile;

/* Opens path for writing as above.  Blocks while a FIFO has no reader (as the shell's > does). */
hta_status hta_outfile_open(const char *path, hta_outfile **out, hta_error *err);
/* Writes len bytes (buffered: small writes are cheap). */
hta_status hta_outfile_write(hta_outfile *o, const void *data, size_t len, hta_error *err);
/* commit: flushes and puts the file in place (the rename); otherwise removes the temporary file.
 * Frees o in every case; err may be NULL when commit is 0. */
hta_status hta_outfile_close(hta_outfile *o, int commit, hta_error *err);

/* The path as given to hta_outfile_open. */
const char *hta_outfile_path(const hta_outfile *o);
/* Whether path names the file o writes or will replace (same device and inode): an input that is the
 * output is refused by the callers that know their inputs. */
int hta_outfile_is(const hta_outfile *o, const char *path);

/* Refuses (HTA_EINVAL, a message naming both paths) an output file out that is the input in (same
 * device and inode), or that lies in the input folder in under a name the loader reads as a rank
 * file (hta_rank_file_name), so that the next load of the folder would take it for one more rank. */
hta_status hta_output_check(const char *out, const char *in, hta_error *err);
/* The same for an output folder (--augment, --overlay): refused when it is the input folder, where
 * the traces written would be read as ranks. */
hta_status hta_output_dir_check(const char *outdir, const char *in, hta_error *err);

/* The loader's rule for a folder's trace files (src/trace/load.c): names ending in .json or .gz, not
 * hidden (a leading '.').  Name only, no folder part. */
int hta_rank_file_name(const char *name);

/* Removes every temporary file an open hta_outfile holds.  Async-signal-safe (unlink only, over a
 * fixed table): for a program's SIGINT/SIGTERM handler, before it re-raises the signal.  The library
 * installs no handlers itself. */
void hta_outfile_remove_temps(void);

#ifdef __cplusplus
}
#endif
#endif
