# Loader unit tests in C (the Python ones are in tests/loader/).
$(BUILD)/test_raw: tests/loader/test_raw.c $(BUILD)/libhta.a
	$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) $(LDFLAGS) -o $@ $< $(BUILD)/libhta.a $(LDLIBS)

TEST_TARGETS += $(BUILD)/test_raw

$(BUILD)/test_rawobj: tests/loader/test_rawobj.c $(BUILD)/libhta.a
	$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) $(LDFLAGS) -o $@ $< $(BUILD)/libhta.a $(LDLIBS)

TEST_TARGETS += $(BUILD)/test_rawobj

# the whole model as text, for the split load's test (test_split.py)
$(BUILD)/dump_model: tests/loader/dump_model.c $(BUILD)/libhta.a
	$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) $(LDFLAGS) -o $@ $< $(BUILD)/libhta.a $(LDLIBS)

TEST_TARGETS += $(BUILD)/dump_model
