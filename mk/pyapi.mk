# build/libhta.so: libhta as a shared library for the Python package (python/htac, docs/python.md).
# Every library layer compiled position-independent (under $(BUILD)/obj-pic, the tracer's rule), plus
# src/pyapi, the small C API it exports (hta/pyapi.h); every other symbol stays hidden.  The pyapi
# objects are built under $(BUILD)/obj too, so that the layer check (tests/layers/check.py) sees them.
# `make python` installs the package with the machine's own pip, offline.

PYAPI_SRC := $(sort $(wildcard src/pyapi/*.c))
PYAPI_OBJ := $(PYAPI_SRC:%.c=$(BUILD)/obj/%.o)
LIBSO_OBJ := $(LIB_SRC:%.c=$(BUILD)/obj-pic/%.o) $(PYAPI_SRC:%.c=$(BUILD)/obj-pic/%.o)

$(PYAPI_OBJ) $(PYAPI_SRC:%.c=$(BUILD)/obj-pic/%.o): | $(BUILD)/inc/pyapi/.stamp

$(BUILD)/libhta.so: $(LIBSO_OBJ)
	$(CC) -shared -Wl,-soname,libhta.so -Wl,--no-undefined $(LDFLAGS) -o $@ $(LIBSO_OBJ) $(LDLIBS)

all: $(BUILD)/libhta.so $(PYAPI_OBJ)
TEST_TARGETS += $(BUILD)/libhta.so

# PIP_FLAGS: e.g. --user, or --break-system-packages for Debian's system Python (PEP 668)
# PYTHON: the first with pandas (the package needs it) of python3 on PATH, Debian's /usr/bin/python3 and
# python3.N on PATH (pyenv's or a venv's python3 often comes first and has none); evaluated only here.
PY_CANDIDATES := python3 /usr/bin/python3 python3.13 python3.12 python3.11 python3.10 python3.9
PYTHON ?= $(shell for p in $(PY_CANDIDATES); do $$p -c 'import pandas' >/dev/null 2>&1 && { command -v $$p; break; }; done)
python: $(BUILD)/libhta.so
	@if [ -z "$(PYTHON)" ]; then \
	    echo "make python: no Python with pandas (tried $(PY_CANDIDATES)): apt-get install python3-pandas" \
	         "(or give PYTHON=/path/to/python3)" >&2; exit 1; fi
	@echo "make python: $(PYTHON)"
	BUILD=$(BUILD) $(PYTHON) -m pip install --no-build-isolation --no-deps --no-index $(PIP_FLAGS) ./python

-include $(LIBSO_OBJ:.o=.d) $(PYAPI_OBJ:.o=.d)

.PHONY: python
