/* dynolog's IPC datagrams, as libkineto sends and expects them (shared/design/dynolog-ipc.md §1-§2):
 * a 40-byte header (size_t payload size, char type[32]) and the payload, host byte order, over
 * AF_UNIX datagram sockets with abstract names "\0name\0" (the trailing NUL is part of the name) or
 * paths under KINETO_IPC_SOCKET_DIR.  Every length is checked: a datagram is untrusted input. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "hta/capture.h"

hta_status hta_ipc_parse(const void *buf, size_t len, hta_ipc_msg *m, hta_error *err) {
    if (len < HTA_IPC_HEADER) return hta_fail(err, HTA_EFORMAT, "datagram of %zu bytes: shorter than the header", len);
    uint64_t size;
    memcpy(&size, buf, 8);
    if (size != len - HTA_IPC_HEADER)
        return hta_fail(err, HTA_EFORMAT, "datagram of %zu bytes says its payload has %llu", len,
                        (unsigned long long)size);
    memcpy(m->type, (const char *)buf + 8, 32);
    m->type[32] = 0;
    m->payload = (const unsigned char *)buf + HTA_IPC_HEADER;
    m->size = (size_t)size;
    return HTA_OK;
}

size_t hta_ipc_build(void *buf, size_t cap, const char *type, const void *payload, size_t size) {
    if (cap < HTA_IPC_HEADER || size > cap - HTA_IPC_HEADER || strlen(type) > 31) return 0;
    uint64_t sz = size;
    memset(buf, 0, HTA_IPC_HEADER);
    memcpy(buf, &sz, 8);
    memcpy((char *)buf + 8, type, strlen(type));
    if (size) memcpy((char *)buf + HTA_IPC_HEADER, payload, size);
    return HTA_IPC_HEADER + size;
}

hta_status hta_ipc_parse_req(const hta_ipc_msg *m, hta_ipc_req *r, hta_error *err) {
    if (m->size < 16) return hta_fail(err, HTA_EFORMAT, "req of %zu bytes: shorter than 16", m->size);
    int32_t n;
    memcpy(&r->type, m->payload, 4);
    memcpy(&n, m->payload + 4, 4);
    memcpy(&r->job_id, m->payload + 8, 8);
    if (n <= 0) return hta_fail(err, HTA_EFORMAT, "req without pids (n = %d)", n);
    if (n > HTA_IPC_MAX_PIDS) return hta_fail(err, HTA_EFORMAT, "req with %d pids (at most %d)", n, HTA_IPC_MAX_PIDS);
    if (m->size != 16 + 4 * (size_t)n)
        return hta_fail(err, HTA_EFORMAT, "req of %zu bytes for %d pids (expected %zu)", m->size, n, 16 + 4 * (size_t)n);
    r->npids = n;
    memcpy(r->pids, m->payload + 16, 4 * (size_t)n);
    return HTA_OK;
}

hta_status hta_ipc_addr(const char *dir, const char *name, struct sockaddr_un *a, unsigned *len, hta_error *err) {
    memset(a, 0, sizeof *a);
    a->sun_family = AF_UNIX;
    if (dir && *dir) {
        int n = snprintf(a->sun_path, sizeof a->sun_path, "%s/%s", dir, name);
        if (n < 0 || (size_t)n >= sizeof a->sun_path)
            return hta_fail(err, HTA_EINVAL, "%s/%s: socket path too long", dir, name);
        *len = (unsigned)(offsetof(struct sockaddr_un, sun_path) + (size_t)n + 1);
        return HTA_OK;
    }
    size_t n = strlen(name);
    if (n + 2 > sizeof a->sun_path) return hta_fail(err, HTA_EINVAL, "%s: socket name too long", name);
    memcpy(a->sun_path + 1, name, n); /* "\0name\0": both NULs belong to the abstract name */
    *len = (unsigned)(offsetof(struct sockaddr_un, sun_path) + n + 2);
    return HTA_OK;
}
