# hta: `make` builds build/hta and build/libhta.a; `make test` runs the suite.
# `make SAN=1 BUILD=build-san test` runs it under AddressSanitizer + UBSan.

CC      ?= cc
BUILD   ?= build
OPT     ?= -O3
CFLAGS  ?= $(OPT) -g
WARN     = -std=c17 -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
           -Wpointer-arith -Wformat=2 -Wno-unused-parameter
DEFS     = -D_GNU_SOURCE
# Tests and benches see every header; library folders only their layer's (below).
CPPFLAGS += -Iinclude -Isrc $(DEFS)
LDLIBS  += -lm -lpthread

ifeq ($(SAN),1)
  CFLAGS += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
  LDFLAGS += -fsanitize=address,undefined
endif

# gzip: ISA-L's igzip when installed (fastest inflate Debian has), zlib otherwise.
HAVE_ISAL := $(shell $(CC) -E -include isa-l/igzip_lib.h -x c /dev/null >/dev/null 2>&1 && echo 1)
ifeq ($(HAVE_ISAL),1)
  DEFS += -DHTA_HAVE_ISAL=1
  LDLIBS += -lisal
endif
LDLIBS += -lz

# The library's layers, lowest first (src/layers.txt, docs/architecture.md).
LIB_LAYERS := core trace table rawjson ctx analysis cpath job merge report capture
LIB_SRC := $(sort $(foreach l,$(LIB_LAYERS),$(wildcard src/$(l)/*.c)))
CLI_SRC := $(sort $(wildcard src/cli/*.c))
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/obj/%.o)
CLI_OBJ := $(CLI_SRC:%.c=$(BUILD)/obj/%.o)

all: $(BUILD)/hta

# A file under src/LAYER/ sees only the folders and public headers its layer
# may use (an include folder of links made by mk/incfarm.sh); tests and
# benches see everything.
layer_of = $(word 2,$(subst /, ,$(1)))
src_cppflags = $(if $(filter src/%,$(1)),-I$(BUILD)/inc/$(call layer_of,$(1)) $(DEFS),$(CPPFLAGS))

$(BUILD)/inc/%/.stamp: src/layers.txt mk/incfarm.sh
	@sh mk/incfarm.sh $(BUILD)/inc $*

INC_STAMPS = $(foreach l,$(LIB_LAYERS) cli tracer daemon,$(BUILD)/inc/$(l)/.stamp)
$(BUILD)/obj/%.o: %.c | $(INC_STAMPS)
	@mkdir -p $(dir $@)
	$(CC) $(call src_cppflags,$<) $(CFLAGS) $(WARN) -MMD -MP -c $< -o $@

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
