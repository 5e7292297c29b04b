/* Who sent a datagram, as the kernel says (docs/capture.md, "Security model"): the IPC socket has
 * SO_PASSCRED, so every datagram comes with its sender's pid (in htad's pid namespace) and uid, which
 * an unprivileged sender cannot forge.  From /proc, the pids that process and its ancestors have in
 * its own pid namespace (NSpid), the list libkineto sends: a poll is believed only when its first pid
 * is the sender's own, and the ancestors htad matches requests against are these, never the claimed
 * ones (a claimed launcher pid would otherwise get another job's config).  A process is named to
 * everything else by what makes it unique on the host: its pid in htad's namespace (the same processes'
 * htad-namespace pids are what requests match: a pid number another namespace also uses names one
 * process only) and its start time (a pid the kernel gave again names another process). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/htad.h"

/* PPid and the NSpid list of /proc/PID/status (outermost first); 0, or -1 when the process is gone */
static int proc_status(int32_t pid, int32_t *ppid, int32_t *ns, int *nns) {
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "re");
    if (!f) return -1;
    *ppid = -1;
    *nns = 0;
    while (fgets(line, sizeof line, f)) {
        if (!strncmp(line, "PPid:", 5)) *ppid = (int32_t)strtol(line + 5, NULL, 10);
        else if (!strncmp(line, "NSpid:", 6)) {
            char *p = line + 6, *e;
            for (long v; *nns < 32 && (v = strtol(p, &e, 10), e != p); p = e) ns[(*nns)++] = (int32_t)v;
        }
    }
    fclose(f);
    if (!*nns) ns[(*nns)++] = pid; /* kernels before 4.1 have no NSpid: one namespace */
    return *ppid < 0 ? -1 : 0;
}

int64_t htad_proc_start(int32_t pid) {
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "re");
    if (!f) return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    /* after the command's ')' (which may hold anything, so the last one): state is field 3, starttime 22 */
    const char *p = strrchr(buf, ')');
    if (!p) return -1;
    p++;
    for (int field = 3; field < 22 && p; field++) p = strchr(p + 1, ' '); /* p: the space before field 22 */
    if (!p) return -1;
    char *e;
    long long v = strtoll(p + 1, &e, 10);
    return e == p + 1 ? -1 : v;
}

int htad_peer_lookup(int32_t pid, htad_peer *p) {
    int32_t ppid, ns[32];
    int nns;
    if (pid <= 0 || proc_status(pid, &ppid, ns, &nns)) return -1;
    int level = nns - 1; /* the sender's own namespace */
    p->pid = pid;
    if ((p->start = htad_proc_start(pid)) < 0) return -1;
    p->npids = 0;
    p->kpids[p->npids] = pid;
    p->pids[p->npids++] = ns[level];
    /* libkineto's list: itself, then up to 10 ancestors, stopping before its namespace's pid 1; each also
     * by its pid in htad's namespace (/proc's) */
    for (int32_t cur = ppid, own = ns[level]; p->npids < 11 && own > 1 && cur > 0;) {
        int32_t up;
        if (proc_status(cur, &up, ns, &nns) || nns <= level) break; /* outside the sender's namespace */
        own = ns[level];
        if (own <= 1) break;
        p->kpids[p->npids] = cur;
        p->pids[p->npids++] = own;
        cur = up;
    }
    return 0;
}
