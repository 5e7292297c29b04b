# Unit tests of the error and memory conventions (tests/errors/test_errors.c),
# run by tests/run.py (errors.test_errors).
$(BUILD)/test_errors: tests/errors/test_errors.c $(BUILD)/libhta.a
	$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) $(LDFLAGS) -o $@ $< $(BUILD)/libhta.a $(LDLIBS)

TEST_TARGETS += $(BUILD)/test_errors
