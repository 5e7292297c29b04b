# Breakdown analyses: `make bench-breakdown` builds the in-process timing tool.
$(BUILD)/breakdown_bench: bench/breakdown_bench.c $(BUILD)/libhta.a
	$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) $(LDFLAGS) -o $@ $< $(BUILD)/libhta.a $(LDLIBS)

bench-breakdown: $(BUILD)/breakdown_bench
.PHONY: bench-breakdown
