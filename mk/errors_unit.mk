# Unit tests of the error and memory conventions (tests/unit/test_errors.c),
# run by tests/suites/errors_unit.sh.
$(BUILD)/test_errors: tests/unit/test_errors.c $(BUILD)/libhta.a
	$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) $(LDFLAGS) -o $@ $< $(BUILD)/libhta.a $(LDLIBS)

TEST_TARGETS += $(BUILD)/test_errors
