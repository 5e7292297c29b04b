# Table-layer unit tests in C (declarations, dynamic columns, checked readers).
$(BUILD)/test_table: tests/table/test_table.c $(BUILD)/libhta.a
	$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) $(LDFLAGS) -o $@ $< $(BUILD)/libhta.a $(LDLIBS)

TEST_TARGETS += $(BUILD)/test_table
