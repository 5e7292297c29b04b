# Fuzzing the loader with libFuzzer (clang).  `make fuzz` builds it;
# `make fuzz-run FUZZ_SECONDS=30` runs it over tests/fuzz/corpus.
FUZZ_CC ?= clang
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 30

$(FUZZ_BUILD)/fuzz_load: tests/fuzz/fuzz_load.c $(LIB_SRC)
	@mkdir -p $(FUZZ_BUILD)
	$(FUZZ_CC) $(CPPFLAGS) -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	  -o $@ tests/fuzz/fuzz_load.c $(LIB_SRC) $(LDLIBS)

fuzz: $(FUZZ_BUILD)/fuzz_load

fuzz-run: $(FUZZ_BUILD)/fuzz_load
	@mkdir -p $(FUZZ_BUILD)/corpus
	$(FUZZ_BUILD)/fuzz_load -max_total_time=$(FUZZ_SECONDS) -max_len=4096 -timeout=10 \
	  -dict=tests/fuzz/trace.dict $(FUZZ_BUILD)/corpus tests/fuzz/corpus

.PHONY: fuzz fuzz-run
