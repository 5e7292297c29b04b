# The fuzz targets of the capture layer, what htad reads from the network: tests/fuzz/fuzz_request.c (a
# request's JSON, datagrams, a config's trace path) and tests/fuzz/fuzz_front.c (the HTTP and RPC front ends
# fed in pieces, dyno configs as libkineto reads them, text to log); built and run with the others by
# `make fuzz` / `make fuzz-run` (mk/fuzz.mk's rules).
FUZZ_CAPTURE_BIN := $(FUZZ_BUILD)/fuzz_request $(FUZZ_BUILD)/fuzz_front

fuzz: $(FUZZ_CAPTURE_BIN)

fuzz-run-capture: $(FUZZ_CAPTURE_BIN)
	@mkdir -p $(FUZZ_BUILD)/corpus_fuzz_request $(FUZZ_BUILD)/corpus_fuzz_front
	$(FUZZ_BUILD)/fuzz_request $(FUZZ_RUN) $(FUZZ_BUILD)/corpus_fuzz_request
	$(FUZZ_BUILD)/fuzz_front $(FUZZ_RUN) -dict=tests/fuzz/front.dict $(FUZZ_BUILD)/corpus_fuzz_front \
	  tests/fuzz/front

fuzz-run: fuzz-run-capture

.PHONY: fuzz-run-capture
