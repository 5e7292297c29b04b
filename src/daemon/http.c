/* htad's HTTP side: GET /metrics in Prometheus' text format (version 0.0.4), nothing else.  The
 * request head is judged line by line as it arrives (hta_http_head, in conn.c): the method and path
 * on its first line, a scrape from another host by its "Authorization: Bearer TOKEN" line; here the
 * reply to a head that was accepted or refused. */
#include <stdio.h>
#include <string.h>

#include "daemon/htad.h"

static void respond(htad_reply *r, const char *status, const char *ctype, const char *body, size_t n) {
    hta_sb_printf(&r->out, "HTTP/1.0 %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n",
                  status, ctype, n);
    hta_sb_add(&r->out, body, n);
}

void htad_http_reply(int status, const char *why, htad_reply *r) {
    static const char txt[] = "text/plain; charset=utf-8";
    char body[256];
    int n = snprintf(body, sizeof body, "%s\n", why);
    if (status != 200) {
        const char *s = status == 400 ? "400 Bad Request" : status == 401 ? "401 Unauthorized" : status == 404 ? "404 Not Found"
                        : status == 405 ? "405 Method Not Allowed" : status == 408 ? "408 Request Timeout"
                        : status == 503 ? "503 Service Unavailable" : "431 Request Header Fields Too Large";
        respond(r, s, txt, body, (size_t)n);
        r->refused = 1;
        return;
    }
    hta_sbuf b = {0};
    htad_metrics_prometheus(&b);
    if (b.oom) respond(r, "500 Internal Server Error", txt, "out of memory\n", 14);
    else respond(r, "200 OK", "text/plain; version=0.0.4; charset=utf-8", b.p ? b.p : "", b.len);
    hta_sb_free(&b);
}
