# Benchmark programs (not run by `make test`; see bench/README.md).
$(BUILD)/load_bench: bench/load_bench.c $(BUILD)/libhta.a
	$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) $(LDFLAGS) -o $@ $< $(BUILD)/libhta.a $(LDLIBS)

bench: $(BUILD)/load_bench
.PHONY: bench
