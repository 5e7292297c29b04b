# hta-mpi (src/mpi/, docs/scaling.md): built when OpenMPI's compiler wrapper works.  The `hta` program's
# objects, its main() compiled as hta_cli_main, and src/mpi/mpi_main.c (an explicit rule: the pattern
# rule of the Makefile would compile it with $(CC), without MPI's headers).
MPICC ?= mpicc
HAVE_MPI := $(shell echo 'int main(void){return 0;}' | $(MPICC) -include mpi.h -x c - -o /dev/null >/dev/null 2>&1 && echo 1)
ifeq ($(HAVE_MPI),1)
CLI_OBJ_NOMAIN := $(filter-out $(BUILD)/obj/src/cli/main.o,$(CLI_OBJ))
$(BUILD)/obj/mpi-cli-main.o: src/cli/main.c | $(INC_STAMPS)
	@mkdir -p $(dir $@)
	$(CC) -I$(BUILD)/inc/cli $(DEFS) -Dmain=hta_cli_main $(CFLAGS) $(WARN) -Wno-missing-prototypes -c $< -o $@
$(BUILD)/obj/src/mpi/mpi_main.o: src/mpi/mpi_main.c | $(INC_STAMPS) $(BUILD)/inc/mpi/.stamp
	@mkdir -p $(dir $@)
	$(MPICC) -I$(BUILD)/inc/mpi $(DEFS) $(CFLAGS) $(WARN) -MMD -MP -c $< -o $@
$(BUILD)/hta-mpi: $(BUILD)/obj/src/mpi/mpi_main.o $(BUILD)/obj/mpi-cli-main.o $(CLI_OBJ_NOMAIN) $(BUILD)/libhta.a
	$(MPICC) $(LDFLAGS) -o $@ $^ $(LDLIBS)
-include $(BUILD)/obj/src/mpi/mpi_main.d
all: $(BUILD)/hta-mpi
TEST_TARGETS += $(BUILD)/hta-mpi
endif
