# Benchmark programs (not run by `make test`; see bench/README.md).
$(BUILD)/load_bench: bench/load_bench.c $(BUILD)/libhta.a
	$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) $(LDFLAGS) -o $@ $< $(BUILD)/libhta.a $(LDLIBS)

bench: $(BUILD)/load_bench
.PHONY: bench
# built by `make test` too, so a library change cannot leave a benchmark uncompilable
TEST_TARGETS += $(BUILD)/load_bench $(BUILD)/breakdown_bench $(BUILD)/launch_bench

# What-if engine: graph build and re-evaluation per million events (bench/README.md)
$(BUILD)/whatif_bench: bench/whatif_bench.c $(BUILD)/libhta.a
	$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) $(LDFLAGS) -o $@ $< $(BUILD)/libhta.a $(LDLIBS)
TEST_TARGETS += $(BUILD)/whatif_bench
