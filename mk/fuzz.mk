# Fuzzing with libFuzzer (clang).  `make fuzz` builds the targets; `make fuzz-run FUZZ_SECONDS=30` runs each
# for that long (CI: 30 s each):
#   fuzz_load        any bytes as a trace file: load, info, every analysis of the report
#   fuzz_rule        any text as a what-if rule, applied to a graph whose times span the whole range
#   fuzz_graph_load  any bytes as a saved critical-path graph (--graph): load, report, what-if
#   fuzz_rewrite     any trace through every rewriter (augment, merge, overlay, what-if trace), reloaded
# All run under ASan + UBSan (signed-integer-overflow and float-cast-overflow included) with
# -fno-sanitize-recover: an overflow stops the run like a crash.
FUZZ_CC ?= clang
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 30
FUZZ_SAN := -fsanitize=address,undefined,signed-integer-overflow,float-cast-overflow -fno-sanitize-recover=all
FUZZ_TARGETS := fuzz_load fuzz_rule fuzz_graph_load fuzz_rewrite
FUZZ_BINS := $(FUZZ_TARGETS:%=$(FUZZ_BUILD)/%)
FUZZ_OBJ := $(LIB_SRC:%.c=$(FUZZ_BUILD)/obj/%.o)

# the library once, instrumented for coverage, then one program per target
$(FUZZ_BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(CPPFLAGS) -g -O1 -fsanitize=fuzzer-no-link $(FUZZ_SAN) -MMD -MP -c $< -o $@

$(FUZZ_BUILD)/libhta-fuzz.a: $(FUZZ_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(FUZZ_BUILD)/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz_graph.h tests/fuzz/fuzz_input.h $(FUZZ_BUILD)/libhta-fuzz.a
	$(FUZZ_CC) $(CPPFLAGS) -g -O1 -fsanitize=fuzzer $(FUZZ_SAN) -o $@ $< $(FUZZ_BUILD)/libhta-fuzz.a $(LDLIBS)

fuzz: $(FUZZ_BINS)

# the headers each object read: a struct's layout changed in a header rebuilds what reads it (an object left
# from before reads its fields at the old offsets)
-include $(FUZZ_OBJ:.o=.d)

FUZZ_RUN = -max_total_time=$(FUZZ_SECONDS) -max_len=4096 -timeout=10 -print_final_stats=0

# Seed graphs for fuzz_graph_load: saved by hta itself from two small traces.
$(FUZZ_BUILD)/seed_graphs/.stamp: $(BUILD)/hta tests/cpath/small_trace.py
	@mkdir -p $(dir $@)
	python3 tests/cpath/small_trace.py $(FUZZ_BUILD)/small.json
	$(BUILD)/hta critical-path $(FUZZ_BUILD)/small.json --quiet --save $(dir $@)small.cpg >/dev/null
	$(BUILD)/hta critical-path tests/data/hta/critical_path/cuda_event_sync --quiet \
	  --save $(dir $@)event_sync.cpg >/dev/null
	@touch $@

fuzz-run: $(FUZZ_BINS) $(FUZZ_BUILD)/seed_graphs/.stamp
	@mkdir -p $(FUZZ_TARGETS:%=$(FUZZ_BUILD)/corpus_%)
	$(FUZZ_BUILD)/fuzz_load $(FUZZ_RUN) -dict=tests/fuzz/trace.dict $(FUZZ_BUILD)/corpus_fuzz_load tests/fuzz/corpus
	$(FUZZ_BUILD)/fuzz_rule $(FUZZ_RUN) -max_len=256 -dict=tests/fuzz/rule.dict $(FUZZ_BUILD)/corpus_fuzz_rule \
	  tests/fuzz/rules
	$(FUZZ_BUILD)/fuzz_graph_load $(FUZZ_RUN) -max_len=8192 $(FUZZ_BUILD)/corpus_fuzz_graph_load $(FUZZ_BUILD)/seed_graphs
	$(FUZZ_BUILD)/fuzz_rewrite $(FUZZ_RUN) -dict=tests/fuzz/trace.dict $(FUZZ_BUILD)/corpus_fuzz_rewrite \
	  tests/fuzz/corpus

.PHONY: fuzz fuzz-run
