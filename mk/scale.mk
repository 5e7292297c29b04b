# The per-rank tests' peak-memory probe (tests/scale/peak_rss.c): built without the sanitizers, so that what
# it measures is the program it runs.
$(BUILD)/peak_rss: tests/scale/peak_rss.c
	$(CC) -O2 -o $@ $<

TEST_TARGETS += $(BUILD)/peak_rss
