# C unit tests: each tests/unit/NAME.c is a program $(BUILD)/unit_NAME (harness: tests/unit/unit.h),
# run by tests/run.py as the tests unit.NAME.<function>.
UNIT_SRC := $(sort $(wildcard tests/unit/*.c))
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/unit_%)

$(BUILD)/unit_%: tests/unit/%.c tests/unit/unit.h $(BUILD)/libhta.a
	$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) $(LDFLAGS) -o $@ $< $(BUILD)/libhta.a $(LDLIBS)

TEST_TARGETS += $(UNIT_BIN)
