# hta: `make` builds build/hta and build/libhta.a; `make test` runs the suite.
# `make SAN=1 BUILD=build-san test` runs it under AddressSanitizer + UBSan.

CC      ?= cc
BUILD   ?= build
OPT     ?= -O3
CFLAGS  ?= $(OPT) -g
WARN     = -std=c17 -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
           -Wpointer-arith -Wformat=2 -Wno-unused-parameter
CPPFLAGS += -Iinclude -Isrc -D_GNU_SOURCE
LDLIBS  += -lm -lpthread

ifeq ($(SAN),1)
  CFLAGS += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
  LDFLAGS += -fsanitize=address,undefined
endif

# gzip: ISA-L's igzip when installed (fastest inflate Debian has), zlib otherwise.
HAVE_ISAL := $(shell printf '\#include <isa-l/igzip_lib.h>\n' | $(CC) -E -x c - >/dev/null 2>&1 && echo 1)
ifeq ($(HAVE_ISAL),1)
  CPPFLAGS += -DHTA_HAVE_ISAL=1
  LDLIBS += -lisal
endif
LDLIBS += -lz

LIB_SRC := $(sort $(wildcard src/util/*.c src/trace/*.c src/analysis/*.c src/cpath/*.c src/output/*.c))
CLI_SRC := $(sort $(wildcard src/cli/*.c))
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/obj/%.o)
CLI_OBJ := $(CLI_SRC:%.c=$(BUILD)/obj/%.o)

all: $(BUILD)/hta

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) -MMD -MP -c $< -o $@

$(BUILD)/libhta.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/hta: $(CLI_OBJ) $(BUILD)/libhta.a
	$(CC) $(LDFLAGS) -o $@ $(CLI_OBJ) $(BUILD)/libhta.a $(LDLIBS)

-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d)

# Each part of the project adds its own targets (tests, benches, libraries) here.
TEST_TARGETS :=
-include $(sort $(wildcard mk/*.mk))

test: all $(TEST_TARGETS)
	@HTA=$(BUILD)/hta BUILD=$(BUILD) tests/run.sh

clean:
	rm -rf build build-san

.PHONY: all test clean
