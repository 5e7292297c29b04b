# Name-rule unit tests (src/core/vocab.c).
$(BUILD)/test_vocab: tests/vocab/test_vocab.c $(BUILD)/libhta.a
	$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) $(LDFLAGS) -o $@ $< $(BUILD)/libhta.a $(LDLIBS)

TEST_TARGETS += $(BUILD)/test_vocab
