# The fuzz target of the capture layer (tests/fuzz/fuzz_request.c: what htad reads from the network), built
# and run with the others by `make fuzz` / `make fuzz-run` (mk/fuzz.mk's rules).
FUZZ_CAPTURE_BIN := $(FUZZ_BUILD)/fuzz_request

fuzz: $(FUZZ_CAPTURE_BIN)

fuzz-run-capture: $(FUZZ_CAPTURE_BIN)
	@mkdir -p $(FUZZ_BUILD)/corpus_fuzz_request
	$(FUZZ_CAPTURE_BIN) $(FUZZ_RUN) $(FUZZ_BUILD)/corpus_fuzz_request

fuzz-run: fuzz-run-capture

.PHONY: fuzz-run-capture
