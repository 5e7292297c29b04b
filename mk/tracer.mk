# libhtatrace: the scope tracer for training code (docs/tracer.md).
# Builds $(BUILD)/libhtatrace.so and .a from src/tracer (position-independent
# objects under $(BUILD)/obj-pic, apart from the generic $(BUILD)/obj rule),
# the tests, the fake CUDA runtime the tests load, and $(BUILD)/bench-tracer.

TRACER_SRC := $(sort $(wildcard src/tracer/*.c))
TRACER_OBJ := $(TRACER_SRC:%.c=$(BUILD)/obj-pic/%.o)
TRACER_LIBS := -ldl -lpthread -lm
# A real CUDA header, when installed, checks our hand-written prototypes.
TRACER_CUDA_INC := $(firstword $(wildcard /usr/include/cuda_runtime_api.h /usr/local/cuda/include/cuda_runtime_api.h))

$(BUILD)/obj-pic/%.o: %.c | $(INC_STAMPS)
	@mkdir -p $(dir $@)
	$(CC) $(call src_cppflags,$<) $(CFLAGS) $(WARN) -fPIC -fvisibility=hidden -MMD -MP -c $< -o $@

$(BUILD)/libhtatrace.so: $(TRACER_OBJ)
	$(CC) -shared -Wl,-soname,libhtatrace.so $(LDFLAGS) -o $@ $(TRACER_OBJ) $(TRACER_LIBS)

$(BUILD)/libhtatrace.a: $(TRACER_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/test-tracer: $(BUILD)/obj/tests/tracer/test_tracer.o $(BUILD)/libhtatrace.a
	$(CC) $(LDFLAGS) -o $@ $< $(BUILD)/libhtatrace.a $(TRACER_LIBS)

$(BUILD)/libfakecudart.so: $(BUILD)/obj-pic/tests/tracer/fake_cudart.o
	$(CC) -shared $(LDFLAGS) -o $@ $< -lpthread

$(BUILD)/bench-tracer: $(BUILD)/obj/bench/tracer_overhead.o $(BUILD)/libhtatrace.a
	$(CC) $(LDFLAGS) -o $@ $< $(BUILD)/libhtatrace.a $(TRACER_LIBS)

TRACER_TARGETS := $(BUILD)/libhtatrace.so $(BUILD)/libhtatrace.a $(BUILD)/test-tracer \
                  $(BUILD)/libfakecudart.so $(BUILD)/bench-tracer

ifneq ($(TRACER_CUDA_INC),)
$(BUILD)/tracer-cuda-header-check.o: tests/tracer/cuda_header_check.c src/tracer/cuda_api.h
	$(CC) $(CPPFLAGS) -I$(dir $(TRACER_CUDA_INC)) $(CFLAGS) -std=c17 -Wall -Wextra -Werror -c $< -o $@
TRACER_TARGETS += $(BUILD)/tracer-cuda-header-check.o
endif

# `make` builds the library the README's C and Python examples use (PYTHONPATH=python,
# HTATRACE_LIB=build/libhtatrace.so)
all: $(BUILD)/libhtatrace.so $(BUILD)/libhtatrace.a

tracer: $(TRACER_TARGETS)
TEST_TARGETS += $(TRACER_TARGETS)

-include $(TRACER_OBJ:.o=.d) $(BUILD)/obj/tests/tracer/test_tracer.d $(BUILD)/obj/bench/tracer_overhead.d \
         $(BUILD)/obj-pic/tests/tracer/fake_cudart.d

.PHONY: tracer
