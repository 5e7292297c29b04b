# htad, the per-host profiling daemon (docs/capture.md): src/daemon/ on libhta (its capture layer),
# libcurl for the S3 store, dlopen for NVML and DCGM.  The tests' fake NVML and DCGM libraries, and
# the libkineto client the tests run when ../shared/third_party/kineto is there (built once, into
# build-kineto/, which `make clean` keeps: it takes minutes).
DAEMON_SRC := $(sort $(wildcard src/daemon/*.c))
DAEMON_OBJ := $(DAEMON_SRC:%.c=$(BUILD)/obj/%.o)

$(BUILD)/htad: $(DAEMON_OBJ) $(BUILD)/libhta.a
	$(CC) $(LDFLAGS) -o $@ $(DAEMON_OBJ) $(BUILD)/libhta.a -lcurl -ldl $(LDLIBS)

all: $(BUILD)/htad

$(BUILD)/libfakenvml.so: $(BUILD)/obj-pic/tests/daemon/fake_nvml.o
	$(CC) -shared $(LDFLAGS) -o $@ $<

$(BUILD)/libfakedcgm.so: $(BUILD)/obj-pic/tests/daemon/fake_dcgm.o
	$(CC) -shared $(LDFLAGS) -o $@ $<

DAEMON_TEST_TARGETS := $(BUILD)/htad $(BUILD)/libfakenvml.so $(BUILD)/libfakedcgm.so

KINETO_SRC := ../shared/third_party/kineto
ifneq ($(wildcard $(KINETO_SRC)/build.sh),)
build-kineto/lib/libkineto.a:
	$(KINETO_SRC)/build.sh build-kineto/lib >/dev/null

# built without the sanitizers: it runs as a separate process, and libkineto is built without them
build-kineto/kineto_client: tests/daemon/kineto_client.cpp build-kineto/lib/libkineto.a
	g++ -std=c++20 -O1 -o $@ $< -I$(KINETO_SRC)/libkineto/include -Ibuild-kineto/lib -Lbuild-kineto/lib \
	    -lkineto -lfmt -lpthread

DAEMON_TEST_TARGETS += build-kineto/kineto_client
endif

# htad's S3 tests run npm's s3rver (pinned by tests/daemon/package-lock.json): `make test` installs it
# where npm is there, once per lock file (npm ci writes node_modules/.package-lock.json).  Without npm,
# or when the install fails (no registry), test_s3 says how to install it.
NPM := $(shell command -v npm 2>/dev/null)
ifneq ($(NPM),)
tests/daemon/node_modules/.package-lock.json: tests/daemon/package-lock.json tests/daemon/package.json
	@echo "npm ci in tests/daemon (the S3 test server)"
	@cd tests/daemon && $(NPM) ci --no-audit --no-fund --loglevel=error >/dev/null || \
	    echo "warning: npm ci in tests/daemon failed: htad's S3 tests will fail" >&2

DAEMON_TEST_TARGETS += tests/daemon/node_modules/.package-lock.json
endif

TEST_TARGETS += $(DAEMON_TEST_TARGETS)
daemon: $(DAEMON_TEST_TARGETS)

-include $(DAEMON_OBJ:.o=.d) $(BUILD)/obj-pic/tests/daemon/fake_nvml.d $(BUILD)/obj-pic/tests/daemon/fake_dcgm.d

.PHONY: daemon
