# Launch-area benchmark program (bench/launch.sh; not run by `make test`).
$(BUILD)/launch_bench: bench/launch_bench.c $(BUILD)/libhta.a
	$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) $(LDFLAGS) -o $@ $< $(BUILD)/libhta.a $(LDLIBS)

bench-launch: $(BUILD)/launch_bench
.PHONY: bench-launch
