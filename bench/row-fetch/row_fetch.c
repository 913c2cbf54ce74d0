// bench/row-fetch: how a big list's rows can come out of libpq in bounded batches, measured outside the
// server so that only the fetching differs (bench/README.md, "Rows in batches").
//
// Two ways to bound a statement's rows in memory, each driven the way one of our drivers drives libpq:
//   single-row  PQsetSingleRowMode: one PGresult per row; the batch ends at `batch_bytes` of values.
//   cursor      BEGIN; DECLARE … NO SCROLL CURSOR; FETCH n …; COMMIT, n chosen so a batch is about
//               `batch_bytes` (from the previous batch's bytes per row).
//   pool        a blocking connection on a thread of its own that hands each batch to the consumer thread
//               and waits for it to ask for the next (the topology of ConnectionPool's workers).
//   loop        a non-blocking connection driven by the consumer's own epoll_wait (the topology of the
//               event loops' LoopConnections): no second thread.
// The consumer only counts bytes, so the figures are the fetching's own.
//
//   row_fetch CONNINFO big  SQL            one list, e.g. 100,000 posts: time to the first batch, total,
//                                          CPU of the process, peak RSS
//   row_fetch CONNINFO small SQL PARAM-MAX N  N lists of one small statement ($1 random in 1…PARAM-MAX):
//                                          CPU and wall time per list, beside normal mode (the whole result)
#include <libpq-fe.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static const long batch_bytes = 64 * 1024;
static const char *conninfo;

static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec / 1e9; }
static double cpu(void) {
    struct rusage r; getrusage(RUSAGE_SELF, &r);
    return r.ru_utime.tv_sec + r.ru_utime.tv_usec / 1e6 + r.ru_stime.tv_sec + r.ru_stime.tv_usec / 1e6;
}
static long peak_rss_kib(void) {
    FILE *f = fopen("/proc/self/status", "r"); char line[256]; long kib = 0;
    while (fgets(line, sizeof line, f)) if (!strncmp(line, "VmHWM:", 6)) kib = atol(line + 6);
    fclose(f); return kib;
}
static void die(PGconn *c, const char *what) { fprintf(stderr, "%s: %s", what, PQerrorMessage(c)); exit(1); }
static PGconn *connect_db(void) {
    PGconn *c = PQconnectdb(conninfo);
    if (PQstatus(c) != CONNECTION_OK) die(c, "connect");
    PQclear(PQexec(c, "SET jit = off"));
    // ROW_FETCH_SETUP: e.g. "SET enable_sort = off", to give single-row mode the cursor's fast-start plan.
    if (getenv("ROW_FETCH_SETUP")) PQclear(PQexec(c, getenv("ROW_FETCH_SETUP")));
    return c;
}
static long result_bytes(PGresult *r) {
    long bytes = 0; int rows = PQntuples(r), cols = PQnfields(r);
    for (int i = 0; i < rows; i++) for (int j = 0; j < cols; j++) bytes += PQgetlength(r, i, j);
    return bytes;
}
static int fetch_count(long bytes, long rows) {
    long n = rows > 0 && bytes > 0 ? batch_bytes * rows / bytes : 64;
    return n < 1 ? 1 : n > 10000 ? 10000 : (int)n;
}

// ---- a batch: what the producer hands to the consumer --------------------------------------------------
typedef struct { PGresult **results; int count, capacity; long bytes, rows; int done; } Batch;
static void batch_add(Batch *b, PGresult *r) {
    if (b->count == b->capacity) { b->capacity = b->capacity ? b->capacity * 2 : 64; b->results = realloc(b->results, b->capacity * sizeof *b->results); }
    b->results[b->count++] = r; b->bytes += result_bytes(r); b->rows += PQntuples(r);
}
static long batch_consume(Batch *b) {  // the consumer's "send": count and free
    long bytes = b->bytes;
    for (int i = 0; i < b->count; i++) PQclear(b->results[i]);
    b->count = 0; b->bytes = 0; b->rows = 0;
    return bytes;
}

// ---- one fetcher per strategy, as a state machine the drivers step -------------------------------------
typedef enum { SINGLE_ROW, CURSOR } Strategy;
typedef struct {
    Strategy strategy; PGconn *conn; const char *sql; const char *param;
    int step;        // cursor: 0 = BEGIN+DECLARE sent, 1 = FETCH sent, 2 = COMMIT sent
    long last_bytes, last_rows;
} Fetcher;

// Blocking: fills `b` with the next batch; returns 0 at the end.
static int blocking_next(Fetcher *f, Batch *b) {
    const char *params[1] = { f->param };
    if (f->strategy == SINGLE_ROW) {
        if (f->step == 0) {
            if (!PQsendQueryParams(f->conn, f->sql, f->param ? 1 : 0, NULL, params, NULL, NULL, 0)) die(f->conn, "send");
            PQsetSingleRowMode(f->conn); f->step = 1;
        }
        PGresult *r;
        while (b->bytes < batch_bytes && (r = PQgetResult(f->conn))) {
            if (PQresultStatus(r) == PGRES_SINGLE_TUPLE) batch_add(b, r);
            else if (PQresultStatus(r) == PGRES_TUPLES_OK) { PQclear(r); while ((r = PQgetResult(f->conn))) PQclear(r); b->done = 1; return b->count > 0; }
            else die(f->conn, "row");
        }
        return 1;
    }
    if (f->step == 0) {
        PQclear(PQexec(f->conn, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"));
        char declare[4096]; snprintf(declare, sizeof declare, "DECLARE c NO SCROLL CURSOR FOR %s", f->sql);
        PGresult *r = PQexecParams(f->conn, declare, f->param ? 1 : 0, NULL, params, NULL, NULL, 0);
        if (PQresultStatus(r) != PGRES_COMMAND_OK) die(f->conn, "declare");
        PQclear(r); f->step = 1;
    }
    int n = fetch_count(f->last_bytes, f->last_rows);
    char fetch[64]; snprintf(fetch, sizeof fetch, "FETCH %d FROM c", n);
    PGresult *r = PQexec(f->conn, fetch);
    if (PQresultStatus(r) != PGRES_TUPLES_OK) die(f->conn, "fetch");
    int rows = PQntuples(r);
    batch_add(b, r); f->last_bytes = b->bytes; f->last_rows = b->rows;
    if (rows < n) { PQclear(PQexec(f->conn, "COMMIT")); b->done = 1; }
    return 1;
}

// ---- pool topology: a producer thread per list, a hand-off per batch ------------------------------------
typedef struct { pthread_mutex_t lock; pthread_cond_t cond; Batch batch; int full, wanted, finished; Fetcher *f; } Handoff;
static void *producer(void *arg) {
    Handoff *h = arg;
    for (;;) {
        pthread_mutex_lock(&h->lock);
        while (!h->wanted) pthread_cond_wait(&h->cond, &h->lock);
        h->wanted = 0;
        pthread_mutex_unlock(&h->lock);
        Batch b = {0};
        int more = blocking_next(h->f, &b);
        pthread_mutex_lock(&h->lock);
        free(h->batch.results); h->batch = b; h->full = 1; h->finished = !more || b.done;
        pthread_cond_broadcast(&h->cond);
        int finished = h->finished;
        pthread_mutex_unlock(&h->lock);
        if (finished) return NULL;
    }
}
// Consumes one whole list through a producer thread; returns bytes; `first` gets the time to the first batch.
static long run_pool(Fetcher *f, double *first) {
    Handoff h = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, {0}, 0, 1, 0, f };
    pthread_t thread; pthread_create(&thread, NULL, producer, &h);
    double start = now(); long bytes = 0; int batches = 0;
    for (;;) {
        pthread_mutex_lock(&h.lock);
        while (!h.full) pthread_cond_wait(&h.cond, &h.lock);
        Batch b = h.batch; h.batch = (Batch){0}; h.full = 0;
        int finished = h.finished;
        if (!finished) { h.wanted = 1; pthread_cond_broadcast(&h.cond); }  // ask for the next while sending this one
        pthread_mutex_unlock(&h.lock);
        if (batches++ == 0 && first) *first = now() - start;
        bytes += batch_consume(&b); free(b.results);
        if (finished) break;
    }
    pthread_join(thread, NULL);
    return bytes;
}

// ---- loop topology: non-blocking, on the consumer's own epoll ------------------------------------------
// Reads from the socket only when libpq has no complete message left: reading ahead would grow its buffer.
static void wait_readable(int ep, PGconn *c) {
    while (PQisBusy(c)) {
        struct epoll_event e; epoll_wait(ep, &e, 1, -1);
        if (!PQconsumeInput(c)) die(c, "consume");
    }
}
static PGresult *next_result(int ep, PGconn *c) { wait_readable(ep, c); return PQgetResult(c); }
static void send_and_wait(int ep, PGconn *c, const char *sql, int nparams, const char *const *params, ExecStatusType want, PGresult **out) {
    if (!PQsendQueryParams(c, sql, nparams, NULL, params, NULL, NULL, 0)) die(c, "send");
    while (PQflush(c) == 1) {}
    PGresult *r, *kept = NULL;
    while ((r = next_result(ep, c))) { if (PQresultStatus(r) != want) die(c, sql); if (kept) PQclear(kept); kept = r; }
    if (out) *out = kept; else PQclear(kept);
}
static long run_loop(Fetcher *f, double *first) {
    int ep = epoll_create1(0);
    struct epoll_event e = { .events = EPOLLIN, .data.fd = PQsocket(f->conn) };
    epoll_ctl(ep, EPOLL_CTL_ADD, PQsocket(f->conn), &e);
    PQsetnonblocking(f->conn, 1);
    const char *params[1] = { f->param };
    double start = now(); long bytes = 0; int batches = 0;
    if (f->strategy == SINGLE_ROW) {
        if (!PQsendQueryParams(f->conn, f->sql, f->param ? 1 : 0, NULL, params, NULL, NULL, 0)) die(f->conn, "send");
        PQsetSingleRowMode(f->conn);
        while (PQflush(f->conn) == 1) {}
        Batch b = {0}; PGresult *r; int done = 0;
        while (!done) {
            // Reads only while the batch has room: a full batch waits for the consumer, and so does libpq.
            while (b.bytes < batch_bytes) {
                r = next_result(ep, f->conn);
                if (!r) { done = 1; break; }
                if (PQresultStatus(r) == PGRES_SINGLE_TUPLE) batch_add(&b, r); else PQclear(r);
            }
            if (b.count) { if (batches++ == 0 && first) *first = now() - start; bytes += batch_consume(&b); }
        }
        free(b.results);
    } else {
        send_and_wait(ep, f->conn, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", 0, NULL, PGRES_COMMAND_OK, NULL);
        char declare[4096]; snprintf(declare, sizeof declare, "DECLARE c NO SCROLL CURSOR FOR %s", f->sql);
        send_and_wait(ep, f->conn, declare, f->param ? 1 : 0, params, PGRES_COMMAND_OK, NULL);
        for (;;) {
            int n = fetch_count(f->last_bytes, f->last_rows);
            char fetch[64]; snprintf(fetch, sizeof fetch, "FETCH %d FROM c", n);
            PGresult *r; send_and_wait(ep, f->conn, fetch, 0, NULL, PGRES_TUPLES_OK, &r);
            int rows = PQntuples(r); Batch b = {0}; batch_add(&b, r);
            f->last_bytes = b.bytes; f->last_rows = b.rows;
            if (batches++ == 0 && first) *first = now() - start;
            bytes += batch_consume(&b); free(b.results);
            if (rows < n) break;
        }
        send_and_wait(ep, f->conn, "COMMIT", 0, NULL, PGRES_COMMAND_OK, NULL);
    }
    PQsetnonblocking(f->conn, 0);
    close(ep);
    return bytes;
}

static long run(Strategy s, int loop, PGconn *c, const char *sql, const char *param, double *first) {
    Fetcher f = { s, c, sql, param, 0, 0, 0 };
    return loop ? run_loop(&f, first) : run_pool(&f, first);
}

int main(int argc, char **argv) {
    if (argc < 4) { fprintf(stderr, "usage: row_fetch CONNINFO big SQL | CONNINFO small SQL PARAM-MAX N\n"); return 2; }
    conninfo = argv[1];
    const char *names[2][2] = { { "single-row, pool", "single-row, loop" }, { "cursor, pool", "cursor, loop" } };
    if (!strcmp(argv[2], "big")) {
        // One process per variant (the caller runs each in turn), so peak RSS is that variant's alone.
        Strategy s = !strcmp(getenv("VARIANT_STRATEGY") ? getenv("VARIANT_STRATEGY") : "", "cursor") ? CURSOR : SINGLE_ROW;
        int loop = getenv("VARIANT_LOOP") && !strcmp(getenv("VARIANT_LOOP"), "1");
        PGconn *c = connect_db();
        long idle = peak_rss_kib();
        double t0 = now(), c0 = cpu(), first = 0;
        long bytes = run(s, loop, c, argv[3], NULL, &first);
        double total = now() - t0, used = cpu() - c0;
        printf("| %s | %.1f | %.0f | %.2f | %.2f | +%.1f | %.1f |\n", names[s][loop], bytes / 1e6, first * 1e3, total, used,
               (peak_rss_kib() - idle) / 1024.0, bytes / 1e6 / total);
        PQfinish(c);
        return 0;
    }
    int max = atoi(argv[4]), n = atoi(argv[5]);
    PGconn *c = connect_db();
    char param[16];
    // The mechanisms alone, on one blocking connection in this thread: what each costs a small list on
    // top of normal mode (the whole result at once, what a small list does today). A hand-off to a
    // thread or a turn of epoll per statement comes on top of either, as it does today.
    const char *small_names[3] = { "normal mode (today)", "single-row", "cursor (BEGIN, DECLARE, FETCH, COMMIT)" };
    for (int variant = 0; variant < 3; variant++) {
        srand(1);
        double t0 = now(), c0 = cpu(); long bytes = 0;
        for (int i = 0; i < n; i++) {
            snprintf(param, sizeof param, "%d", 1 + rand() % max);
            if (variant == 0) {
                const char *p[1] = { param };
                PGresult *r = PQexecParams(c, argv[3], 1, NULL, p, NULL, NULL, 0);
                bytes += result_bytes(r); PQclear(r);
            } else {
                Fetcher f = { variant == 1 ? SINGLE_ROW : CURSOR, c, argv[3], param, 0, 0, 0 };
                Batch b = {0};
                while (blocking_next(&f, &b)) { bytes += batch_consume(&b); if (b.done) break; }
                free(b.results);
            }
        }
        printf("| %s | %.1f | %.1f | %ld |\n", small_names[variant], (cpu() - c0) / n * 1e6, (now() - t0) / n * 1e6, bytes / n);
    }
    PQfinish(c);
    return 0;
}
