// The reference for the loader's speed (bench/load.sh): simdjson's on-demand parser reading a Kineto
// trace the way hta's loader must, every event of traceEvents and its fields touched (name, ph, cat,
// ts, dur, pid, tid, id and every args value).  Built only by bench/load.sh (g++ and
// libsimdjson-dev), never by make or CI.
//   simdjson_bench FILE [RUNS]
// reads FILE into memory once, then parses it RUNS times (default 1) with the same parser, and prints
// the events, a checksum of what was read, the seconds of the read and of the first and the fastest
// parse.  With RUNS 1 the whole process is one read and one parse: load.sh takes its CPU time; the
// fastest of several parses is simdjson at its best (buffers warm, no page faults), also printed there.
#include <simdjson.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

using namespace simdjson;

// A value read as the loader reads an arg: a number as a number, a string unescaped, anything else (an
// array of shapes, an object) as its JSON text, which the loader keeps as written.
static uint64_t touch(ondemand::value v) {
    switch (v.type()) {
    case ondemand::json_type::number: return (uint64_t)(int64_t)double(v.get_double());
    case ondemand::json_type::string: return std::string_view(v.get_string()).size();
    case ondemand::json_type::array: { ondemand::array a = v.get_array(); return std::string_view(a.raw_json()).size(); }
    case ondemand::json_type::object: { ondemand::object o = v.get_object(); return std::string_view(o.raw_json()).size(); }
    default: return v.raw_json_token().size();
    }
}

static uint64_t parse(ondemand::parser &parser, const padded_string &json, uint64_t *events) {
    ondemand::document doc = parser.iterate(json);
    uint64_t sum = 0;
    *events = 0;
    for (auto top : doc.get_object()) {
        std::string_view key = top.unescaped_key();
        if (key != "traceEvents") {
            sum += touch(top.value());
            continue;
        }
        for (auto ev : top.value().get_array()) {
            ++*events;
            for (auto f : ev.get_object()) {
                std::string_view k = f.unescaped_key();
                ondemand::value v = f.value();
                if (k == "name" || k == "ph" || k == "cat") {
                    sum += std::string_view(v.get_string()).size();
                } else if (k == "ts" || k == "dur") {
                    sum += (uint64_t)(double(v.get_double()) * 1000.0);
                } else if (k == "pid" || k == "tid" || k == "id") {
                    if (v.type() == ondemand::json_type::number) sum += (uint64_t)int64_t(v.get_int64());
                    else sum += touch(v);
                } else {
                    sum += touch(v); // args and anything else: every value read
                }
            }
        }
    }
    return sum;
}

static double since(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

int main(int argc, char **argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: simdjson_bench FILE [RUNS]\n");
        return 2;
    }
    int runs = argc > 2 ? std::atoi(argv[2]) : 1;
    if (runs < 1) runs = 1;
    auto t0 = std::chrono::steady_clock::now();
    padded_string json;
    if (padded_string::load(argv[1]).get(json)) {
        std::fprintf(stderr, "simdjson_bench: cannot read %s\n", argv[1]);
        return 1;
    }
    double read_s = since(t0), first_s = 0, best_s = 0;
    ondemand::parser parser;
    uint64_t events = 0, sum = 0;
    try {
        for (int i = 0; i < runs; i++) {
            auto t1 = std::chrono::steady_clock::now();
            sum = parse(parser, json, &events);
            double s = since(t1);
            if (i == 0) first_s = best_s = s;
            if (s < best_s) best_s = s;
        }
    } catch (simdjson_error &e) {
        std::fprintf(stderr, "simdjson_bench: %s: %s\n", argv[1], e.what());
        return 1;
    }
    std::printf("simdjson events=%llu sum=%llu read_s=%.3f first_parse_s=%.3f best_parse_s=%.3f "
                "best_mb_per_s=%.0f implementation=%s\n",
                (unsigned long long)events, (unsigned long long)sum, read_s, first_s, best_s,
                json.size() / 1e6 / best_s, get_active_implementation()->name().data());
    return 0;
}
